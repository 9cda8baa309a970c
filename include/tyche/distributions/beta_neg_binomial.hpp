// tyche/distributions/beta_neg_binomial.hpp — beta_neg_binomial(r, alpha, beta): the number of
// failures before the r-th success when the success probability is beta(α, β) (as in Stan 2.36),
// for observations only.
//   log p(y | r, α, β) = log Γ(y + r) − log y! − log Γ(r) + log B(r + α, y + β) − log B(α, β),
//   y ∈ {0, 1, 2, …}, r > 0, α > 0, β > 0; mean rβ/(α − 1) (α > 1), variance
//   rβ(r + α − 1)(α + β − 1)/((α − 2)(α − 1)²) (α > 2): heavier-tailed counts than the
//   negative binomial (a power-law tail of index α).
// A sum of lgammas, each element's terms in the parameters alone folded into one per model
// (log y! folded when the model is built); accurate to about ε·(y + r + α + β) log(y + r + α + β)
// in absolute terms, as neg_binomial_2's. No CDF (Stan's needs the generalised hypergeometric
// function ₃F₂). The data must be non-negative integer counts: observe throws "... y[i] = v is
// not a non-negative integer count" otherwise.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <tuple>

namespace tyche {

template <class R, class Alpha, class Beta>
struct beta_neg_binomial_distribution : distribution<beta_neg_binomial_distribution<R, Alpha, Beta>> {
  static constexpr const char* family = "beta_neg_binomial";
  R r;
  Alpha alpha;
  Beta beta;
  template <class X>
  auto log_prob(const X& y) const {
    return detail::total(lgamma(y + r) + lgamma(y + beta) - lgamma(y + r + alpha + beta) +
                         (lgamma(r + alpha) + lgamma(alpha + beta) - lgamma(r) - lgamma(alpha) - lgamma(beta)) -
                         lgamma(y + lit<1>));
  }
  auto arguments() const { return std::tuple{r, alpha, beta}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<R, domains::positive>::ok,
                  "tyche::beta_neg_binomial(r, alpha, beta): r must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    static_assert(argument_support_t<Alpha, domains::positive>::ok,
                  "tyche::beta_neg_binomial(r, alpha, beta): alpha must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    static_assert(argument_support_t<Beta, domains::positive>::ok,
                  "tyche::beta_neg_binomial(r, alpha, beta): beta must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("beta_neg_binomial(r, alpha, beta)", "r", r);
    detail::check_argument<domains::positive>("beta_neg_binomial(r, alpha, beta)", "alpha", alpha);
    detail::check_argument<domains::positive>("beta_neg_binomial(r, alpha, beta)", "beta", beta);
  }
  /// p ~ beta(α, β) (two gammas), then the negative binomial's gamma–Poisson mixture:
  /// λ ~ gamma(shape r, scale (1 − p)/p), y ~ poisson(λ); (1 − p)/p = g_β/g_α.
  template <class G>
  static double draw(G& rng, double rv, double a, double b) {
    const double ga = std::gamma_distribution<double>(a, 1.0)(rng);
    const double gb = std::gamma_distribution<double>(b, 1.0)(rng);
    if (!(ga > 0)) return std::numeric_limits<double>::infinity();  // p underflowed to 0
    const double odds = gb / ga;
    if (!(odds > 0)) return 0.0;
    const double lambda = std::gamma_distribution<double>(rv, odds)(rng);
    if (!(lambda > 0)) return 0.0;
    return static_cast<double>(std::poisson_distribution<long long>(lambda)(rng));
  }
  /// rβ/(α − 1) for α > 1 (else infinite).
  static double mean(double rv, double a, double b) {
    return a > 1 ? rv * b / (a - 1) : std::numeric_limits<double>::infinity();
  }
  /// rβ(r + α − 1)(α + β − 1)/((α − 2)(α − 1)²) for α > 2 (else infinite).
  static double variance(double rv, double a, double b) {
    return a > 2 ? rv * b * (rv + a - 1) * (a + b - 1) / ((a - 2) * (a - 1) * (a - 1))
                 : std::numeric_limits<double>::infinity();
  }
  static const char* observation_problem(double v) { return detail::count_problem(v); }
};

/// The distribution beta_neg_binomial(r, alpha, beta), to observe counts:
/// `beta_neg_binomial(r, alpha, beta).observe(data(y))`.
template <detail::operand R, detail::operand Alpha, detail::operand Beta>
auto beta_neg_binomial(const R& r, const Alpha& alpha, const Beta& beta) {
  return detail::make_distribution<beta_neg_binomial_distribution>(r, alpha, beta);
}

TYCHE_OBSERVED_ONLY_FAMILY(beta_neg_binomial)

}  // namespace tyche
