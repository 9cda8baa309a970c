// tyche/distributions/multinomial.hpp — multinomial(theta) and multinomial_logit(gamma), for observations only.
//   log p(y | θ) = log Γ(N + 1) − Σₖ log Γ(yₖ + 1) + Σₖ yₖ log θₖ,   N = Σₖ yₖ,
//   y ∈ {0, 1, …}ᴷ, θ a simplex (θₖ ≥ 0, Σₖ θₖ = 1);
//   log p(y | γ) = log Γ(N + 1) − Σₖ log Γ(yₖ + 1) + Σₖ yₖ γₖ − N log Σₖ exp γₖ,   γ ∈ ℝᴷ,
// the second being the first at θ = softmax(γ) (Stan Functions Reference, "Multinomial
// distribution" and "Multinomial distribution, logit parameterization"). y is one vector of K
// counts (data): the multinomial coefficient is a constant computed when the model is built,
// and N log Σ exp γ takes one log-sum-exp. theta is typically a simplex parameter,
// `auto theta = dirichlet<"theta">(data(alpha)); multinomial(theta).observe(data(y))`; a θₖ of
// exactly 0 gives NaN (0 · log 0), as bernoulli's p = 0 does. Predictive draws keep the
// observed total N.
//
// Data checks (std::invalid_argument naming the index and the value):
//   y[i] = v is not a non-negative integer count
//   y has size n but theta has size K                  (gamma for multinomial_logit)
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
}  // namespace detail

template <class Theta>
struct multinomial_distribution : distribution<multinomial_distribution<Theta>> {
  static constexpr const char* family = "multinomial";
  Theta theta;
  double trials = 0;  // N of the observed counts (set by observe), for predictive draws
  template <class X>
  auto log_prob(const X& x) const {
    const auto y = detail::as_node(x);
    double total = 0;
    const double log_c = detail::multinomial_log_coefficient(family, "theta", theta, y, total);
    if constexpr (is_vector_v<Theta>) return constant{log_c} + sum(y * log(theta));
    else return constant{log_c};  // a static_assert has said why
  }
  /// The distribution as it observes y (counts, checked by distribution::observe): y's size
  /// checked, its total N kept for predictive draws.
  template <class Y>
  auto observing(const Y& y) const {
    auto d = *this;
    (void)detail::multinomial_log_coefficient(family, "theta", theta, y, d.trials);
    return d;
  }
  auto arguments() const { return std::tuple{theta}; }
  template <class T2>
  auto with_arguments(const T2& t) const {
    return multinomial_distribution<T2>{{}, t, trials};
  }
  /// theta ≥ 0 (at compile time where the types decide); for data, also Σ θₖ = 1.
  auto check_supports() const {
    static_assert(argument_support_t<Theta, domains::nonnegative>::ok,
                  "tyche::multinomial(theta): theta must be >= 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside [0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::nonnegative>("multinomial(theta)", "theta", theta);
    if constexpr (kind_of<Theta> == node_kind::data_vector) {
      double s = 0;
      for (std::size_t k = 0; k < theta.size(); ++k) s += theta.ptr[k];
      if (!(std::fabs(s - 1) <= 1e-8 * double(theta.size())))
        throw std::invalid_argument("tyche::multinomial(theta): theta sums to " + tyche::detail::format_number(s) +
                                    ", not 1 (theta must be a simplex)");
    }
  }
  static constexpr bool whole_arguments = true;
  /// K counts with the observed total N.
  template <class G>
  std::vector<double> draw_all(G& rng, std::size_t n, const std::vector<double>& t) const {
    return detail::draw_counts(rng, n, trials, t);
  }
  static const char* observation_problem(double v) { return detail::count_problem(v); }
};

template <class Gamma>
struct multinomial_logit_distribution : distribution<multinomial_logit_distribution<Gamma>> {
  static constexpr const char* family = "multinomial_logit";
  Gamma gamma;
  double trials = 0;
  template <class X>
  auto log_prob(const X& x) const {
    const auto y = detail::as_node(x);
    double total = 0;
    const double log_c = detail::multinomial_log_coefficient(family, "gamma", gamma, y, total);
    if constexpr (is_vector_v<Gamma>) return constant{log_c} + sum(y * gamma) - constant{total} * log_sum_exp(gamma);
    else return constant{log_c};  // a static_assert has said why
  }
  template <class Y>
  auto observing(const Y& y) const {
    auto d = *this;
    (void)detail::multinomial_log_coefficient(family, "gamma", gamma, y, d.trials);
    return d;
  }
  auto arguments() const { return std::tuple{gamma}; }
  template <class G2>
  auto with_arguments(const G2& g) const {
    return multinomial_logit_distribution<G2>{{}, g, trials};
  }
  static constexpr bool whole_arguments = true;
  template <class G>
  std::vector<double> draw_all(G& rng, std::size_t n, const std::vector<double>& g) const {
    double top = -HUGE_VAL;
    for (double v : g) top = std::max(top, v);
    std::vector<double> p(g.size());
    for (std::size_t k = 0; k < g.size(); ++k) p[k] = std::exp(g[k] - top);
    return detail::draw_counts(rng, n, trials, p);
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

TYCHE_OBSERVED_ONLY_FAMILY(multinomial)
TYCHE_OBSERVED_ONLY_FAMILY(multinomial_logit)

}  // namespace tyche
