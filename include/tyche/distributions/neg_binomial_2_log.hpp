// tyche/distributions/neg_binomial_2_log.hpp — neg_binomial_2_log(eta, phi) =
// neg_binomial_2(exp(eta), phi), for observations only.
//   log p(y | η, φ) = lgamma(y + φ) − lgamma(φ) − y log(1 + φ e^−η) − φ log(1 + e^η / φ) − lgamma(y + 1)
//                   = lgamma(y + φ) − lgamma(φ) − y log1p_exp(log φ − η) − φ log1p_exp(η − log φ)
//                     − lgamma(y + 1)
//                   = y η − y log φ − (y + φ) log1p_exp(η − log φ) + lgamma(y + φ) − lgamma(φ)
//                     − lgamma(y + 1),
//   y ∈ {0, 1, 2, …}, η ∈ ℝ, φ > 0; log1p_exp does not overflow for large |η|. The last form (the
//   one computed) adds y η and subtracts about y (η − log φ) for η ≫ log φ: an absolute error of
//   about ε·y·|η| in the log density, far below what sampling resolves.
// lgamma(y + 1) is folded when the model is built. log C(y + φ − 1, y) is a difference of lgammas,
// as in neg_binomial_2 (absolute error about ε (y + φ) log(y + φ)). The data must be non-negative
// integer counts: observe throws "... y[i] = v is not a non-negative integer count" otherwise.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <cmath>
#include <random>
#include <tuple>

namespace tyche {

template <class Eta, class Phi>
struct neg_binomial_2_log_distribution : distribution<neg_binomial_2_log_distribution<Eta, Phi>> {
  static constexpr const char* family = "neg_binomial_2_log";
  Eta eta;
  Phi phi;
  template <class X>
  auto log_prob(const X& y) const {
    // log1p_exp(−u) = log1p_exp(u) − u with u = η − log φ: one log1p_exp per element, and y·η
    // linear in η, so that Σ y·(s + Xv) becomes s·Σy + (Xᵀy)·v (compile/reduce_sum.hpp) and the
    // loop reads a linear predictor's matvec once (streamed: one read of X per gradient).
    return detail::total(y * eta - y * log(phi) - (y + phi) * log1p_exp(eta - log(phi)) + lgamma(y + phi) -
                         lgamma(phi) - lgamma(y + lit<1>));
  }
  /// log P(Y ≤ y) and log P(Y > y) for counts y, summed over y: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored counts.
  /// (P(Y ≤ y) = I_{φ/(e^η+φ)}(φ, y + 1), φ/(e^η + φ) = logistic(log φ − η).)
  template <class X>
  auto log_cdf(const X& y) const {
    return detail::total(detail::log_inc_beta_of<false>(phi, y + lit<1>, logistic(log(phi) - eta), logistic(eta - log(phi)), "neg_binomial_2_log_lcdf"));
  }
  template <class X>
  auto log_ccdf(const X& y) const {
    return detail::total(detail::log_inc_beta_of<true>(phi, y + lit<1>, logistic(log(phi) - eta), logistic(eta - log(phi)), "neg_binomial_2_log_lccdf"));
  }
  auto arguments() const { return std::tuple{eta, phi}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<Phi, domains::positive>::ok,
                  "tyche::neg_binomial_2_log(eta, phi): phi must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("neg_binomial_2_log(eta, phi)", "phi", phi);
  }
  /// The gamma–Poisson mixture: λ ~ gamma(shape φ, scale e^η/φ), y ~ poisson(λ).
  template <class G>
  static double draw(G& rng, double e, double f) {
    const double lambda = std::gamma_distribution<double>(f, std::exp(e) / f)(rng);
    if (!(lambda > 0)) return 0.0;
    return static_cast<double>(std::poisson_distribution<long long>(lambda)(rng));
  }
  static double mean(double e, double) { return std::exp(e); }
  static double variance(double e, double f) { return std::exp(e) + std::exp(2.0 * e) / f; }
  static const char* observation_problem(double v) { return detail::count_problem(v); }
};

/// The distribution neg_binomial_2_log(eta, phi): `neg_binomial_2_log(a + b * x, phi).observe(data(y))`.
template <detail::operand Eta, detail::operand Phi>
auto neg_binomial_2_log(const Eta& eta, const Phi& phi) {
  return detail::make_distribution<neg_binomial_2_log_distribution>(eta, phi);
}

TYCHE_OBSERVED_ONLY_FAMILY(neg_binomial_2_log)

}  // namespace tyche
