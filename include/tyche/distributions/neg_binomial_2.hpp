// tyche/distributions/neg_binomial_2.hpp — neg_binomial_2(mu, phi), the negative binomial with
// mean μ and precision φ (variance μ + μ²/φ), for observations only.
//   log p(y | μ, φ) = log C(y + φ − 1, y) + y log(μ / (μ + φ)) + φ log(φ / (μ + φ))
//                   = lgamma(y + φ) − lgamma(φ) − y log1p(φ/μ) − φ log1p(μ/φ) − lgamma(y + 1),
//   y ∈ {0, 1, 2, …}, μ > 0, φ > 0.
// The log1p forms keep full precision when φ ≪ μ or μ ≪ φ; lgamma(y + 1) is folded when the model
// is built. log C(y + φ − 1, y) is a difference of lgammas (the core has no lbeta or lchoose), so
// its absolute error is about ε (y + φ) log(y + φ): relative error ~10⁻¹¹ of log p for y or φ
// around 10⁴, worse beyond (where, for large φ, the distribution is practically poisson(μ)).
// The data must be non-negative integer counts: observe throws "... y[i] = v is not a
// non-negative integer count" otherwise.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <cmath>
#include <random>
#include <tuple>

namespace tyche {

template <class Mu, class Phi>
struct neg_binomial_2_distribution : distribution<neg_binomial_2_distribution<Mu, Phi>> {
  static constexpr const char* family = "neg_binomial_2";
  Mu mu;
  Phi phi;
  template <class X>
  auto log_prob(const X& y) const {
    return detail::total(lgamma(y + phi) - lgamma(phi) - y * log1p(phi / mu) -
                         phi * log1p(mu / phi) - lgamma(y + lit<1>));
  }
  /// log P(Y ≤ y) and log P(Y > y) for counts y, summed over y: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored counts.
  /// (P(Y ≤ y) = I_{φ/(μ+φ)}(φ, y + 1).)
  template <class X>
  auto log_cdf(const X& y) const {
    return detail::total(detail::log_inc_beta_of<false>(phi, y + lit<1>, phi / (mu + phi), mu / (mu + phi), "neg_binomial_2_lcdf"));
  }
  template <class X>
  auto log_ccdf(const X& y) const {
    return detail::total(detail::log_inc_beta_of<true>(phi, y + lit<1>, phi / (mu + phi), mu / (mu + phi), "neg_binomial_2_lccdf"));
  }
  auto arguments() const { return std::tuple{mu, phi}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<Mu, domains::positive>::ok,
                  "tyche::neg_binomial_2(mu, phi): mu must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    static_assert(argument_support_t<Phi, domains::positive>::ok,
                  "tyche::neg_binomial_2(mu, phi): phi must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("neg_binomial_2(mu, phi)", "mu", mu);
    detail::check_argument<domains::positive>("neg_binomial_2(mu, phi)", "phi", phi);
  }
  /// The gamma–Poisson mixture: λ ~ gamma(shape φ, scale μ/φ), y ~ poisson(λ).
  template <class G>
  static double draw(G& rng, double m, double f) {
    const double lambda = std::gamma_distribution<double>(f, m / f)(rng);
    if (!(lambda > 0)) return 0.0;
    return static_cast<double>(std::poisson_distribution<long long>(lambda)(rng));
  }
  static double mean(double m, double) { return m; }
  static double variance(double m, double f) { return m + m * m / f; }
  static const char* observation_problem(double v) { return detail::count_problem(v); }
};

/// The distribution neg_binomial_2(mu, phi), to observe counts: `neg_binomial_2(mu, phi).observe(data(y))`.
template <detail::operand Mu, detail::operand Phi>
auto neg_binomial_2(const Mu& mu, const Phi& phi) {
  return detail::make_distribution<neg_binomial_2_distribution>(mu, phi);
}

TYCHE_OBSERVED_ONLY_FAMILY(neg_binomial_2)

}  // namespace tyche
