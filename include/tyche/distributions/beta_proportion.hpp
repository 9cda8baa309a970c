// tyche/distributions/beta_proportion.hpp — beta_proportion(mu, kappa) = beta(μκ, (1 − μ)κ).
// The beta distribution by its mean μ and precision κ, as in Stan.
//   log p(x | μ, κ) = log Γ(κ) − log Γ(μκ) − log Γ((1 − μ)κ) + (μκ − 1) log x
//                     + ((1 − μ)κ − 1) log(1 − x),   x ∈ (0, 1), 0 < μ < 1, κ > 0.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <random>
#include <tuple>

namespace tyche {

template <class Mu, class Kappa>
struct beta_proportion_distribution : distribution<beta_proportion_distribution<Mu, Kappa>> {
  static constexpr const char* family = "beta_proportion";
  Mu mu;
  Kappa kappa;
  auto transform() const { return transforms::interval<literal<0>, literal<1>>{}; }
  template <class X>
  auto log_prob(const X& x) const {
    const auto a = mu * kappa;
    const auto b = (lit<1> - mu) * kappa;
    return detail::total(lgamma(kappa) - lgamma(a) - lgamma(b) + (a - lit<1>) * log(x) +
                         (b - lit<1>) * log1p(-x));
  }
  /// log P(X ≤ x) and log P(X > x), summed over x: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored observations.
  /// I_x(μκ, (1 − μ)κ), the beta family's (log_inc_beta).
  template <class X>
  auto log_cdf(const X& x) const {
    return detail::total(
        detail::log_inc_beta_of<false>(mu * kappa, (lit<1> - mu) * kappa, x, lit<1> - x, "beta_proportion_lcdf"));
  }
  template <class X>
  auto log_ccdf(const X& x) const {
    return detail::total(
        detail::log_inc_beta_of<true>(mu * kappa, (lit<1> - mu) * kappa, x, lit<1> - x, "beta_proportion_lccdf"));
  }
  auto arguments() const { return std::tuple{mu, kappa}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<Mu, domains::open_unit_interval>::ok,
                  "tyche::beta_proportion(mu, kappa): mu must be in (0, 1), but its support (spelled "
                  "out in tyche::support_is<...> in this diagnostic) is not inside (0, 1)" TYCHE_SUPPORT_HINT);
    static_assert(argument_support_t<Kappa, domains::positive>::ok,
                  "tyche::beta_proportion(mu, kappa): kappa must be > 0, but its support (spelled out "
                  "in tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::open_unit_interval>("beta_proportion(mu, kappa)", "mu", mu);
    detail::check_argument<domains::positive>("beta_proportion(mu, kappa)", "kappa", kappa);
  }
  /// x / (x + y) for x ~ gamma(μκ, 1), y ~ gamma((1 − μ)κ, 1).
  template <class G>
  static double draw(G& rng, double m, double k) {
    const double x = std::gamma_distribution<double>(m * k, 1.0)(rng);
    const double y = std::gamma_distribution<double>((1 - m) * k, 1.0)(rng);
    return x / (x + y);
  }
  static double mean(double m, double) { return m; }
  static double variance(double m, double k) { return m * (1 - m) / (1 + k); }
  static const char* observation_problem(double v) {
    return v <= 0 || v >= 1 ? "is outside (0, 1) (support 0 < x < 1)" : nullptr;
  }
};

/// Name ~ beta_proportion(mu, kappa), support (0, 1), sampled as logit Name.
template <fixed_string Name, detail::operand Mu, detail::operand Kappa, shape_tag Shape = scalar_shape>
auto beta_proportion(const Mu& mu, const Kappa& kappa, Shape shape = {}) {
  return detail::make_named<Name, beta_proportion_distribution>(shape, mu, kappa);
}
template <detail::operand Mu, detail::operand Kappa>
auto beta_proportion(const Mu& mu, const Kappa& kappa) {
  return detail::make_distribution<beta_proportion_distribution>(mu, kappa);
}

}  // namespace tyche
