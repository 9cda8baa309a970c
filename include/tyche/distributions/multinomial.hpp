// tyche/distributions/multinomial.hpp — multinomial(theta), multinomial_logit(gamma), dirichlet_multinomial(alpha): observed only.
//   log p(y | θ) = log Γ(N + 1) − Σₖ log Γ(yₖ + 1) + Σₖ yₖ log θₖ,   N = Σₖ yₖ,
//   y ∈ {0, 1, …}ᴷ, θ a simplex (θₖ ≥ 0, Σₖ θₖ = 1);
//   log p(y | γ) = log Γ(N + 1) − Σₖ log Γ(yₖ + 1) + Σₖ yₖ γₖ − N log Σₖ exp γₖ,   γ ∈ ℝᴷ,
//   log p(y | α) = log Γ(A) + log Γ(N + 1) − log Γ(N + A) + Σₖ [log Γ(yₖ + αₖ) − log Γ(αₖ) − log Γ(yₖ + 1)],
//   A = Σₖ αₖ, αₖ > 0 (dirichlet_multinomial: θ ~ dirichlet(α) integrated out),
// the second being the first at θ = softmax(γ) (Stan Functions Reference, "Multinomial
// distribution" and "Multinomial distribution, logit parameterization"). y is one vector of K
// counts (data): the multinomial coefficient is a constant computed when the model is built,
// and N log Σ exp γ takes one log-sum-exp. Or y is N rows of K counts, a data matrix
// (`observe(matrix(y, N, K))`, Stan's `for (n) y[n] ~ multinomial_logit(gamma[n])`): each row is
// its own multinomial, with θ or γ of K values (the same for every row) or of N·K values (row
// after row); a flat vector of N·K counts would be one multinomial over N·K categories. theta is typically a simplex parameter,
// `auto theta = dirichlet<"theta">(data(alpha)); multinomial(theta).observe(data(y))`; a θₖ of
// exactly 0 gives NaN (0 · log 0), as bernoulli's p = 0 does. Predictive draws keep the
// observed total N (each row's, for N rows).
//
// Data checks (std::invalid_argument naming the index and the value):
//   y[i] = v is not a non-negative integer count
//   y has size n but theta has size K                  (gamma for multinomial_logit)
//   theta has size s but y is N rows of K counts: it needs K values or N·K
//   y[n, k] = v is not a non-negative integer count
//   theta must be >= 0, but theta[k] = v (data)        theta sums to s, not 1   (theta data)
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>
#include <tyche/interval/support.hpp>
#include <tyche/scalar/format.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace tyche {

namespace detail {
/// The checks of observed counts y (a node) against the argument's size K; returns
/// log Γ(N + 1) − Σₖ log Γ(yₖ + 1) and sets total to N.
template <class V, class Y>
auto multinomial_log_coefficient(const char* family, const char* argument, const V& v, const Y& y,
                                 double& total) {
  static_assert(is_vector_v<V>, "tyche::multinomial(theta) / multinomial_logit(gamma): the argument must "
                                "be a vector of K values");
  static_assert(kind_of<Y> == node_kind::data_vector,
                "tyche::multinomial / multinomial_logit: y must be data, a vector of K counts");
  if constexpr (!is_vector_v<V> || kind_of<Y> != node_kind::data_vector) {
    return 0.0;  // the static_asserts above have said why
  } else {
    const std::string head = std::string("tyche::") + family + "(...).observe(y): ";
    if (y.size() != v.size())
      throw std::invalid_argument(head + "y has size " + std::to_string(y.size()) + " but " + argument +
                                  " has size " + std::to_string(v.size()) + " (y is one vector of K counts)");
    double log_c = 0;
    total = 0;
    for (std::size_t i = 0; i < y.size(); ++i) {
      const double c = y.ptr[i];
      if (const char* problem = count_problem(c); problem || !std::isfinite(c))
        throw std::invalid_argument(head + "y[" + std::to_string(i + 1) + "] = " + tyche::detail::format_number(c) + " " +
                                    (problem ? problem : "is not finite"));
      total += c;
      log_c -= std::lgamma(c + 1);
    }
    return log_c + std::lgamma(total + 1);
  }
}

/// The same for y = N rows of K counts (a data matrix): the argument has K values (shared by the
/// rows) or N·K; returns Σₙ [log Γ(Nₙ + 1) − Σₖ log Γ(yₙₖ + 1)] and sets total to Σₙ Nₙ.
template <class V, class E>
double multinomial_rows_log_coefficient(const char* family, const char* argument, const V& v,
                                        const basic_data_matrix<E>& y, double& total) {
  static_assert(std::is_same_v<E, double>, "tyche: observed counts y must be a matrix of doubles, matrix(y, N, K)");
  const std::string head = std::string("tyche::") + family + "(...).observe(y): ";
  const std::size_t rows = y.rows, k = y.cols;
  if (v.size() != k && v.size() != rows * k)
    throw std::invalid_argument(head + argument + " has size " + std::to_string(v.size()) + " but y is " +
                                std::to_string(rows) + " rows of " + std::to_string(k) + " counts: it needs " +
                                std::to_string(k) + " values (shared by the rows) or " + std::to_string(rows * k) +
                                " (row after row)");
  double log_c = 0;
  total = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    double row_total = 0;
    for (std::size_t c = 0; c < k; ++c) {
      const double x = y.ptr[r * k + c];
      if (const char* problem = count_problem(x); problem || !std::isfinite(x))
        throw std::invalid_argument(head + "y[" + std::to_string(r + 1) + ", " + std::to_string(c + 1) + "] = " +
                                    tyche::detail::format_number(x) + " " + (problem ? problem : "is not finite"));
      row_total += x;
      log_c -= std::lgamma(x + 1);
    }
    log_c += std::lgamma(row_total + 1);
    total += row_total;
  }
  return log_c;
}

/// K counts summing to `total`, drawn with probabilities p (not necessarily normalised) as
/// successive binomials: yₖ ~ binomial(N − Σ_{j<k} yⱼ, pₖ / Σ_{j≥k} pⱼ).
template <class G>
std::vector<double> draw_counts(G& rng, std::size_t k, double total, const std::vector<double>& p) {
  std::vector<double> y(k, 0.0);
  double rest = 0;
  for (double v : p) rest += v;
  auto remaining = static_cast<long long>(std::llround(total));
  for (std::size_t i = 0; i + 1 < k && remaining > 0; ++i) {
    const double q = rest > 0 ? std::min(1.0, std::max(0.0, p[i] / rest)) : 0.0;
    const long long c = std::binomial_distribution<long long>(remaining, q)(rng);
    y[i] = static_cast<double>(c);
    remaining -= c;
    rest -= p[i];
  }
  if (k > 0) y[k - 1] += static_cast<double>(remaining);
  return y;
}

/// Predictive draws for N rows of K counts (rows_k = K, y the observed counts): each row keeps
/// its observed total; p holds K probabilities (or log-odds, logit) for every row, or N·K.
template <class G>
std::vector<double> draw_count_rows(G& rng, std::size_t rows_k, const double* y, std::size_t n,
                                    const std::vector<double>& p, bool logit) {
  std::vector<double> out;
  out.reserve(n);
  for (std::size_t r = 0; r * rows_k < n; ++r) {
    double total = 0;
    for (std::size_t c = 0; c < rows_k; ++c) total += y[r * rows_k + c];
    const std::size_t at = p.size() == rows_k ? 0 : r * rows_k;
    std::vector<double> q(p.begin() + static_cast<std::ptrdiff_t>(at),
                          p.begin() + static_cast<std::ptrdiff_t>(at + rows_k));
    if (logit) {
      double top = -HUGE_VAL;
      for (double v : q) top = std::max(top, v);
      for (double& v : q) v = std::exp(v - top);
    }
    const std::vector<double> row = draw_counts(rng, rows_k, total, q);
    out.insert(out.end(), row.begin(), row.end());
  }
  return out;
}

/// What a family of counts reads from the counts it observes (observing): the total N, for
/// predictive draws, and for N rows of K (a data matrix) K, N and the counts themselves (a view
/// of the observed data, which outlives the model); y's checks against the argument's size.
struct observed_counts {
  double trials = 0;
  std::size_t rows_k = 0;  // K when y is N rows of K counts, else 0
  std::size_t rows_n = 0;  // N
  const double* rows_y = nullptr;
  template <class V, class Y>
  void read(const char* family, const char* argument, const V& v, const Y& y) {
    if constexpr (kind_of<Y> == node_kind::data_matrix) {
      (void)multinomial_rows_log_coefficient(family, argument, v, y, trials);
      rows_k = y.cols;
      rows_n = y.rows;
      rows_y = y.ptr;
    } else {
      (void)multinomial_log_coefficient(family, argument, v, y, trials);
    }
  }
};
}  // namespace detail

template <class Theta>
struct multinomial_distribution : distribution<multinomial_distribution<Theta>> {
  static constexpr const char* family = "multinomial";
  Theta theta;
  detail::observed_counts counts = {};  // set by observe
  template <class X>
  auto log_prob(const X& x) const {
    const auto y = detail::as_node(x);
    double total = 0;
    if constexpr (kind_of<decltype(y)> == node_kind::data_matrix) {  // N rows of K counts
      static_assert(is_vector_v<Theta>, "tyche::multinomial(theta): theta must be a vector of K values");
      const double log_c = detail::multinomial_rows_log_coefficient(family, "theta", theta, y, total);
      return constant{log_c} + sum(make_vector_op(ops::multinomial_rows_map{y.cols, ops::multinomial_rows_map::probabilities}, y.rows,
                                                  data(y.ptr, y.rows * y.cols), theta));
    } else {
      const double log_c = detail::multinomial_log_coefficient(family, "theta", theta, y, total);
      if constexpr (is_vector_v<Theta>) return constant{log_c} + sum(y * log(theta));
      else return constant{log_c};  // a static_assert has said why
    }
  }
  /// The distribution as it observes y (counts, checked by distribution::observe): y's size
  /// checked, its total N kept for predictive draws (for N rows, the rows themselves).
  template <class Y>
  auto observing(const Y& y) const {
    auto d = *this;
    d.counts.read(family, "theta", theta, y);
    if (d.counts.rows_k != 0) d.check_rows();
    return d;
  }
  auto arguments() const { return std::tuple{theta}; }
  template <class T2>
  auto with_arguments(const T2& t) const {
    return multinomial_distribution<T2>{{}, t, counts};
  }
  /// theta ≥ 0 (at compile time where the types decide); for data, also Σ θₖ = 1.
  auto check_supports() const {
    static_assert(argument_support_t<Theta, domains::nonnegative>::ok,
                  "tyche::multinomial(theta): theta must be >= 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside [0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::nonnegative>("multinomial(theta)", "theta", theta);
    if (counts.rows_k == 0) check_rows();
  }
  /// A data theta sums to 1 (each row of K where y is N rows and theta N·K values).
  void check_rows() const {
    if constexpr (kind_of<Theta> == node_kind::data_vector) {
      const std::size_t k = counts.rows_k != 0 && theta.size() != counts.rows_k ? counts.rows_k : theta.size();
      for (std::size_t r = 0; r * k < theta.size(); ++r) {
        double s = 0;
        for (std::size_t j = 0; j < k; ++j) s += theta.ptr[r * k + j];
        if (!(std::fabs(s - 1) <= 1e-8 * double(k)))
          throw std::invalid_argument("tyche::multinomial(theta): theta" +
                                      (k == theta.size() ? std::string() : " row " + std::to_string(r + 1)) +
                                      " sums to " + tyche::detail::format_number(s) + ", not 1 (theta must be a simplex)");
      }
    }
  }
  static constexpr bool whole_arguments = true;
  /// K counts with the observed total N; for N rows (rows_k > 0), N·K counts, each row with its
  /// observed total (n, the observation's size as a matrix, is not N·K).
  template <class G>
  std::vector<double> draw_all(G& rng, std::size_t n, const std::vector<double>& t) const {
    if (counts.rows_k != 0)
      return detail::draw_count_rows(rng, counts.rows_k, counts.rows_y, counts.rows_n * counts.rows_k, t, false);
    return detail::draw_counts(rng, n, counts.trials, t);
  }
  static const char* observation_problem(double v) { return detail::count_problem(v); }
};

template <class Gamma>
struct multinomial_logit_distribution : distribution<multinomial_logit_distribution<Gamma>> {
  static constexpr const char* family = "multinomial_logit";
  Gamma gamma;
  detail::observed_counts counts = {};  // set by observe
  template <class X>
  auto log_prob(const X& x) const {
    const auto y = detail::as_node(x);
    double total = 0;
    if constexpr (kind_of<decltype(y)> == node_kind::data_matrix) {  // N rows of K counts
      static_assert(is_vector_v<Gamma>, "tyche::multinomial_logit(gamma): gamma must be a vector of K values");
      const double log_c = detail::multinomial_rows_log_coefficient(family, "gamma", gamma, y, total);
      return constant{log_c} + sum(make_vector_op(ops::multinomial_rows_map{y.cols, ops::multinomial_rows_map::logit}, y.rows,
                                                  data(y.ptr, y.rows * y.cols), gamma));
    } else {
      const double log_c = detail::multinomial_log_coefficient(family, "gamma", gamma, y, total);
      if constexpr (is_vector_v<Gamma>) return constant{log_c} + sum(y * gamma) - constant{total} * log_sum_exp(gamma);
      else return constant{log_c};  // a static_assert has said why
    }
  }
  template <class Y>
  auto observing(const Y& y) const {
    auto d = *this;
    d.counts.read(family, "gamma", gamma, y);
    return d;
  }
  auto arguments() const { return std::tuple{gamma}; }
  template <class G2>
  auto with_arguments(const G2& g) const {
    return multinomial_logit_distribution<G2>{{}, g, counts};
  }
  static constexpr bool whole_arguments = true;
  template <class G>
  std::vector<double> draw_all(G& rng, std::size_t n, const std::vector<double>& g) const {
    if (counts.rows_k != 0)
      return detail::draw_count_rows(rng, counts.rows_k, counts.rows_y, counts.rows_n * counts.rows_k, g, true);
    double top = -HUGE_VAL;
    for (double v : g) top = std::max(top, v);
    std::vector<double> p(g.size());
    for (std::size_t k = 0; k < g.size(); ++k) p[k] = std::exp(g[k] - top);
    return detail::draw_counts(rng, n, counts.trials, p);
  }
  static const char* observation_problem(double v) { return detail::count_problem(v); }
};

/// dirichlet_multinomial(alpha): counts whose probabilities are drawn from dirichlet(alpha), for
/// observations only (Stan's dirichlet_multinomial):
///   log p(y | α) = log Γ(A) + log Γ(N + 1) − log Γ(N + A) + Σₖ [log Γ(yₖ + αₖ) − log Γ(αₖ) − log Γ(yₖ + 1)],
/// A = Σₖ αₖ, αₖ > 0; y one vector of K counts or N rows of K (a data matrix, α of K or N·K
/// values) as for multinomial.
template <class Alpha>
struct dirichlet_multinomial_distribution : distribution<dirichlet_multinomial_distribution<Alpha>> {
  static constexpr const char* family = "dirichlet_multinomial";
  Alpha alpha;
  detail::observed_counts counts = {};  // set by observe
  template <class X>
  auto log_prob(const X& x) const {
    static_assert(is_vector_v<Alpha>, "tyche::dirichlet_multinomial(alpha): alpha must be a vector of K values");
    const auto y = detail::as_node(x);
    double total = 0;
    if constexpr (kind_of<decltype(y)> == node_kind::data_matrix) {
      const double log_c = detail::multinomial_rows_log_coefficient(family, "alpha", alpha, y, total);
      return constant{log_c} + sum(make_vector_op(ops::multinomial_rows_map{y.cols, ops::multinomial_rows_map::dirichlet},
                                                  y.rows, data(y.ptr, y.rows * y.cols), alpha));
    } else {
      const double log_c = detail::multinomial_log_coefficient(family, "alpha", alpha, y, total);
      if constexpr (kind_of<decltype(y)> == node_kind::data_vector && is_vector_v<Alpha>)
        return constant{log_c} + sum(make_vector_op(ops::multinomial_rows_map{y.size(), ops::multinomial_rows_map::dirichlet},
                                                    1, y, alpha));
      else return constant{log_c};  // a static_assert has said why
    }
  }
  template <class Y>
  auto observing(const Y& y) const {
    auto d = *this;
    d.counts.read(family, "alpha", alpha, y);
    return d;
  }
  auto arguments() const { return std::tuple{alpha}; }
  template <class A2>
  auto with_arguments(const A2& a) const {
    return dirichlet_multinomial_distribution<A2>{{}, a, counts};
  }
  auto check_supports() const {
    static_assert(argument_support_t<Alpha, domains::positive>::ok,
                  "tyche::dirichlet_multinomial(alpha): alpha must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("dirichlet_multinomial(alpha)", "alpha", alpha);
  }
  static constexpr bool whole_arguments = true;
  /// Probabilities from dirichlet(α) (normalised gammas), then counts with the observed total
  /// (each row's, for N rows).
  template <class G>
  std::vector<double> draw_all(G& rng, std::size_t n, const std::vector<double>& a) const {
    // Gamma(αⱼ) draws in log form, log G(αⱼ + 1) + log(U)/αⱼ (Marsaglia & Tsang 2000, §6), then
    // normalised from their largest: a small α makes draws that underflow to 0 as plain gammas.
    auto probabilities = [&](std::size_t at, std::size_t k) {
      std::vector<double> p(k);
      double top = -HUGE_VAL;
      std::uniform_real_distribution<double> u(0.0, 1.0);
      for (std::size_t j = 0; j < k; ++j) {
        const double aj = a[at + j];
        p[j] = std::log(std::gamma_distribution<double>(aj + 1.0, 1.0)(rng)) + std::log(1.0 - u(rng)) / aj;
        top = std::max(top, p[j]);
      }
      for (double& v : p) v = std::exp(v - top);
      return p;
    };
    const std::size_t k = counts.rows_k;
    if (k == 0) return detail::draw_counts(rng, n, counts.trials, probabilities(0, a.size()));
    std::vector<double> out;
    for (std::size_t r = 0; r < counts.rows_n; ++r) {
      double total = 0;
      for (std::size_t c = 0; c < k; ++c) total += counts.rows_y[r * k + c];
      const std::vector<double> row = detail::draw_counts(rng, k, total, probabilities(a.size() == k ? 0 : r * k, k));
      out.insert(out.end(), row.begin(), row.end());
    }
    return out;
  }
  static const char* observation_problem(double v) { return detail::count_problem(v); }
};

/// The distribution multinomial(theta), to observe one vector of K counts:
/// `multinomial(theta).observe(data(y))`.
template <detail::operand Theta>
auto multinomial(const Theta& theta) {
  return detail::make_distribution<multinomial_distribution>(theta);
}
/// The distribution multinomial_logit(gamma) (θ = softmax(γ)): `multinomial_logit(gamma).observe(data(y))`.
template <detail::operand Gamma>
auto multinomial_logit(const Gamma& gamma) {
  return detail::make_distribution<multinomial_logit_distribution>(gamma);
}

/// The distribution dirichlet_multinomial(alpha): `dirichlet_multinomial(alpha).observe(data(y))`.
template <detail::operand Alpha>
auto dirichlet_multinomial(const Alpha& alpha) {
  return detail::make_distribution<dirichlet_multinomial_distribution>(alpha);
}

TYCHE_OBSERVED_ONLY_FAMILY(multinomial)
TYCHE_OBSERVED_ONLY_FAMILY(dirichlet_multinomial)
TYCHE_OBSERVED_ONLY_FAMILY(multinomial_logit)

}  // namespace tyche
