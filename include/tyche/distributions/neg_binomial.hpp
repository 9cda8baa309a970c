// tyche/distributions/neg_binomial.hpp — neg_binomial(alpha, beta), the negative binomial with
// shape α and inverse scale β (as in Stan: mean α/β, variance α(β + 1)/β²), for observations only.
//   log p(y | α, β) = log C(y + α − 1, y) + α log(β/(1 + β)) − y log(1 + β)
//                   = lgamma(y + α) − lgamma(α) − lgamma(y + 1) − α log1p(1/β) − y log1p(β),
//   y ∈ {0, 1, 2, …}, α > 0, β > 0: neg_binomial_2(α/β, α), a gamma(α, β) mixture of Poissons.
// P(Y ≤ y) = I_{β/(1+β)}(α, y + 1) (log_inc_beta). lgamma(y + 1) is folded when the model is
// built; log C(y + α − 1, y) is a difference of lgammas, accurate to about ε (y + α) log(y + α)
// in absolute terms (as neg_binomial_2's). The data must be non-negative integer counts: observe
// throws "... y[i] = v is not a non-negative integer count" otherwise.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <cmath>
#include <random>
#include <tuple>

namespace tyche {

template <class Alpha, class Beta>
struct neg_binomial_distribution : distribution<neg_binomial_distribution<Alpha, Beta>> {
  static constexpr const char* family = "neg_binomial";
  Alpha alpha;
  Beta beta;
  template <class X>
  auto log_prob(const X& y) const {
    return detail::total(lgamma(y + alpha) - lgamma(alpha) - alpha * log1p(lit<1> / beta) - y * log1p(beta) -
                         lgamma(y + lit<1>));
  }
  /// log P(Y ≤ y) and log P(Y > y) for counts y, summed over y: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored counts.
  template <class X>
  auto log_cdf(const X& y) const {
    return detail::total(detail::log_inc_beta_of<false>(alpha, y + lit<1>, beta / (lit<1> + beta),
                                                        lit<1> / (lit<1> + beta), "neg_binomial_lcdf"));
  }
  template <class X>
  auto log_ccdf(const X& y) const {
    return detail::total(detail::log_inc_beta_of<true>(alpha, y + lit<1>, beta / (lit<1> + beta),
                                                       lit<1> / (lit<1> + beta), "neg_binomial_lccdf"));
  }
  auto arguments() const { return std::tuple{alpha, beta}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<Alpha, domains::positive>::ok,
                  "tyche::neg_binomial(alpha, beta): alpha must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    static_assert(argument_support_t<Beta, domains::positive>::ok,
                  "tyche::neg_binomial(alpha, beta): beta must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("neg_binomial(alpha, beta)", "alpha", alpha);
    detail::check_argument<domains::positive>("neg_binomial(alpha, beta)", "beta", beta);
  }
  /// The gamma–Poisson mixture: λ ~ gamma(shape α, scale 1/β), y ~ poisson(λ).
  template <class G>
  static double draw(G& rng, double a, double b) {
    const double lambda = std::gamma_distribution<double>(a, 1 / b)(rng);
    if (!(lambda > 0)) return 0.0;
    return static_cast<double>(std::poisson_distribution<long long>(lambda)(rng));
  }
  static double mean(double a, double b) { return a / b; }
  static double variance(double a, double b) { return a * (b + 1) / (b * b); }
  static const char* observation_problem(double v) { return detail::count_problem(v); }
};

/// The distribution neg_binomial(alpha, beta), to observe counts: `neg_binomial(alpha, beta).observe(data(y))`.
template <detail::operand Alpha, detail::operand Beta>
auto neg_binomial(const Alpha& alpha, const Beta& beta) {
  return detail::make_distribution<neg_binomial_distribution>(alpha, beta);
}

TYCHE_OBSERVED_ONLY_FAMILY(neg_binomial)

}  // namespace tyche
