// tyche/distributions/glm.hpp — Stan's generalised linear model likelihoods, for observations only:
//   normal_id_glm(X, alpha, beta, sigma)          y ~ normal(α + Xβ, σ)
//   bernoulli_logit_glm(X, alpha, beta)           y ~ bernoulli_logit(α + Xβ)
//   binomial_logit_glm(trials, X, alpha, beta)    y ~ binomial_logit(trials, α + Xβ)
//   poisson_log_glm(X, alpha, beta)               y ~ poisson_log(α + Xβ)
//   neg_binomial_2_log_glm(X, alpha, beta, phi)   y ~ neg_binomial_2_log(α + Xβ, φ)
// (Stan's normal_id_glm_lpdf(y | x, alpha, beta, sigma), bernoulli_logit_glm_lpmf, …;
// `bernoulli_logit_glm(X, alpha, beta).observe(data(y))`, or as functions
// `bernoulli_logit_glm_lpmf(y, X, alpha, beta)` for free terms). X is an N × P data matrix,
// `matrix(values, N, P, "X")` (row major, viewed: it must outlive the model; doubles, or floats
// when beta is a vector parameter); alpha a scalar or N values (one intercept per row); beta P
// values; sigma, phi > 0, a scalar or N values; trials (data or a number) a count ≥ 0 or N
// of them; y N values, each row's observation.
// Each is its family with the linear predictor η = alpha + matvec(X, beta): the same expression
// as writing that out, so the same simplifications (a vector parameter beta streamed through the
// likelihood's loop, X read once per evaluation; the normal's sufficient statistics Xᵀy and
// XᵀX where sigma is a scalar, O(P²) per evaluation instead of O(N·P); the negative binomial's
// Σ y·η folded to alpha·Σy + (Xᵀy)·β; the Bernoulli, binomial and Poisson terms one fused node
// per row) and the same code. What the GLM adds: its checks name it, X's rows, beta's size and
// those of alpha, sigma and phi.
//
// Data checks (std::invalid_argument naming the GLM, the index and the value):
//   y has n values but X has m rows
//   X has p columns but beta has k values;  alpha (sigma, phi, trials) has k values but X has m rows
//   y[i] = v is not 0 or 1 / not a non-negative integer count / not finite / more than the trials
// Argument checks: sigma and phi must be > 0 (at compile time where their types decide).
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/bernoulli_logit.hpp>
#include <tyche/distributions/binomial_logit.hpp>
#include <tyche/distributions/detail/family.hpp>
#include <tyche/distributions/neg_binomial_2_log.hpp>
#include <tyche/distributions/normal.hpp>
#include <tyche/distributions/poisson_log.hpp>
#include <tyche/operations/functions.hpp>

#include <stdexcept>
#include <string>
#include <tuple>

namespace tyche {

namespace detail {

/// The likelihood of a GLM: Dist (its family with η = alpha + Xβ) under the GLM's name, with the
/// check of y against X's rows. Tag: the name, the call's spelling for messages, and the checks
/// of the arguments beside η (sigma, phi).
template <class Tag, class Dist>
struct glm_distribution : distribution<glm_distribution<Tag, Dist>> {
  static constexpr const char* family = Tag::name;
  Dist base;
  std::size_t rows = 0;
  template <class Y>
  auto log_prob(const Y& y) const {
    return base.log_prob(y);
  }
  auto arguments() const { return base.arguments(); }
  /// The same GLM with other arguments (do_ substitutes into them).
  template <class... A>
  auto with_arguments(const A&... a) const {
    auto b = detail::with_arguments(base, a...);
    return glm_distribution<Tag, decltype(b)>{{}, b, rows};
  }
  template <class G, class... A>
  static double draw(G& rng, A... a) {
    return Dist::draw(rng, a...);
  }
  template <class... A>
  static double mean(A... a) {
    return Dist::mean(a...);
  }
  template <class... A>
  static double variance(A... a) {
    return Dist::variance(a...);
  }
  auto check_supports() const {
    if constexpr (requires { Tag::check(base); }) Tag::check(base);
  }
  /// y holds one value per row of X; then the family's own checks of y (a binomial's trials).
  template <class Y>
  void check_observed(const Y& y) const {
    const std::size_t n = is_vector_v<Y> ? operand_size(y) : 1;
    if (n != rows)
      throw std::invalid_argument(std::string("tyche::") + Tag::call + ".observe(y): y has " + std::to_string(n) +
                                  (n == 1 ? " value" : " values") + " but X has " + std::to_string(rows) +
                                  " rows (one observation per row of X)");
    if constexpr (requires { Tag::check_observed(base, y); }) Tag::check_observed(base, y);
    else if constexpr (requires { base.check_observed(y); }) base.check_observed(y);
  }
  static const char* observation_problem(double v) {
    if constexpr (requires { Dist::observation_problem(v); }) return Dist::observation_problem(v);
    else return nullptr;
  }
};

/// η = alpha + X·beta, after the GLM's checks of the sizes (call: the GLM's spelling).
template <class E, class Alpha, class Beta>
auto glm_predictor(const char* call, const basic_data_matrix<E>& x, const Alpha& alpha, const Beta& beta) {
  using B = node_t<Beta>;
  using A = node_t<Alpha>;
  const std::string head = std::string("tyche::") + call + ": ";
  if constexpr (is_vector_v<B>) {
    const std::size_t k = as_node(beta).size();
    if (k != x.cols)
      throw std::invalid_argument(head + (x.name ? x.name : "X") + " has " + std::to_string(x.cols) +
                                  " columns but beta has " + std::to_string(k) + " values (one per column)");
  }
  if constexpr (is_vector_v<A>) {
    const std::size_t k = as_node(alpha).size();
    if (k != x.rows)
      throw std::invalid_argument(head + "alpha has " + std::to_string(k) + " values but " + (x.name ? x.name : "X") +
                                  " has " + std::to_string(x.rows) +
                                  " rows (alpha is one intercept, or one per row)");
  }
  return alpha + matvec(x, beta);
}

/// A scale or precision (name) beside η: one value, or one per row of X.
template <class E, class S>
void check_glm_rows(const char* call, const char* name, const basic_data_matrix<E>& x, const S& s) {
  if constexpr (is_vector_v<node_t<S>>) {
    const std::size_t k = as_node(s).size();
    if (k != x.rows)
      throw std::invalid_argument(std::string("tyche::") + call + ": " + name + " has " + std::to_string(k) +
                                  " values but " + (x.name ? x.name : "X") + " has " + std::to_string(x.rows) +
                                  " rows (one value, or one per row)");
  }
}

template <class Tag, class Dist>
auto make_glm(const Dist& d, std::size_t rows) {
  return glm_distribution<Tag, Dist>{{}, d, rows};
}

struct normal_id_glm_tag {
  static constexpr const char* name = "normal_id_glm";
  static constexpr const char* call = "normal_id_glm(X, alpha, beta, sigma)";
  template <class D>
  static void check(const D& d) {
    using S = std::remove_cvref_t<decltype(d.sigma)>;
    static_assert(argument_support_t<S, domains::positive>::ok,
                  "tyche::normal_id_glm(X, alpha, beta, sigma): sigma must be > 0, but its support (spelled out "
                  "in tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    check_argument<domains::positive>(call, "sigma", d.sigma);
  }
};
struct bernoulli_logit_glm_tag {
  static constexpr const char* name = "bernoulli_logit_glm";
  static constexpr const char* call = "bernoulli_logit_glm(X, alpha, beta)";
};
struct binomial_logit_glm_tag {
  static constexpr const char* name = "binomial_logit_glm";
  static constexpr const char* call = "binomial_logit_glm(trials, X, alpha, beta)";
  template <class D>
  static void check(const D& d) {
    d.check_supports();  // the trials' domain, in binomial_logit's words
  }
  /// y against the trials (binomial.hpp's check, under the GLM's name).
  template <class D, class Y>
  static void check_observed(const D& d, const Y& y) {
    check_trials(name, y, d.n);
  }
};
struct poisson_log_glm_tag {
  static constexpr const char* name = "poisson_log_glm";
  static constexpr const char* call = "poisson_log_glm(X, alpha, beta)";
};
struct neg_binomial_2_log_glm_tag {
  static constexpr const char* name = "neg_binomial_2_log_glm";
  static constexpr const char* call = "neg_binomial_2_log_glm(X, alpha, beta, phi)";
  template <class D>
  static void check(const D& d) {
    using P = std::remove_cvref_t<decltype(d.phi)>;
    static_assert(argument_support_t<P, domains::positive>::ok,
                  "tyche::neg_binomial_2_log_glm(X, alpha, beta, phi): phi must be > 0, but its support (spelled "
                  "out in tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    check_argument<domains::positive>(call, "phi", d.phi);
  }
};

}  // namespace detail

/// y ~ normal(alpha + X·beta, sigma), to observe y: `normal_id_glm(X, alpha, beta, sigma).observe(data(y))`.
template <class E, detail::operand Alpha, detail::operand Beta, detail::operand Sigma>
auto normal_id_glm(const basic_data_matrix<E>& x, const Alpha& alpha, const Beta& beta, const Sigma& sigma) {
  using T = detail::normal_id_glm_tag;
  detail::check_glm_rows(T::call, "sigma", x, sigma);
  return detail::make_glm<T>(normal(detail::glm_predictor(T::call, x, alpha, beta), sigma), x.rows);
}
/// y ~ bernoulli_logit(alpha + X·beta), to observe y ∈ {0, 1}.
template <class E, detail::operand Alpha, detail::operand Beta>
auto bernoulli_logit_glm(const basic_data_matrix<E>& x, const Alpha& alpha, const Beta& beta) {
  using T = detail::bernoulli_logit_glm_tag;
  return detail::make_glm<T>(bernoulli_logit(detail::glm_predictor(T::call, x, alpha, beta)), x.rows);
}
/// y ~ binomial_logit(trials, alpha + X·beta), to observe counts y of trials (Stan 2.34's
/// binomial_logit_glm(n | N, x, alpha, beta)).
template <detail::operand N, class E, detail::operand Alpha, detail::operand Beta>
auto binomial_logit_glm(const N& trials, const basic_data_matrix<E>& x, const Alpha& alpha, const Beta& beta) {
  using T = detail::binomial_logit_glm_tag;
  detail::check_glm_rows(T::call, "trials", x, trials);
  return detail::make_glm<T>(binomial_logit(trials, detail::glm_predictor(T::call, x, alpha, beta)), x.rows);
}
/// y ~ poisson_log(alpha + X·beta), to observe counts y.
template <class E, detail::operand Alpha, detail::operand Beta>
auto poisson_log_glm(const basic_data_matrix<E>& x, const Alpha& alpha, const Beta& beta) {
  using T = detail::poisson_log_glm_tag;
  return detail::make_glm<T>(poisson_log(detail::glm_predictor(T::call, x, alpha, beta)), x.rows);
}
/// y ~ neg_binomial_2_log(alpha + X·beta, phi), to observe counts y.
template <class E, detail::operand Alpha, detail::operand Beta, detail::operand Phi>
auto neg_binomial_2_log_glm(const basic_data_matrix<E>& x, const Alpha& alpha, const Beta& beta, const Phi& phi) {
  using T = detail::neg_binomial_2_log_glm_tag;
  detail::check_glm_rows(T::call, "phi", x, phi);
  return detail::make_glm<T>(neg_binomial_2_log(detail::glm_predictor(T::call, x, alpha, beta), phi), x.rows);
}

/// normal_id_glm<"name">(...): refused with a message (a GLM is a likelihood of observed y).
template <fixed_string Name, class... Arguments>
auto normal_id_glm(const Arguments&...) {
  static_assert(!detail::is_named_v<decltype(Name)>,
                "tyche: normal_id_glm<\"name\">(...): a GLM is the likelihood of observations y given the "
                "data X, not a random variable: normal_id_glm(X, alpha, beta, sigma).observe(data(y))");
  return 0;
}
TYCHE_OBSERVED_ONLY_FAMILY(bernoulli_logit_glm)
TYCHE_OBSERVED_ONLY_FAMILY(binomial_logit_glm)
TYCHE_OBSERVED_ONLY_FAMILY(poisson_log_glm)
TYCHE_OBSERVED_ONLY_FAMILY(neg_binomial_2_log_glm)

}  // namespace tyche
