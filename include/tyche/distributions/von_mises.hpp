// tyche/distributions/von_mises.hpp — von_mises(mu, kappa): location μ, concentration κ.
// The circular normal distribution, as in Stan.
//   log p(x | μ, κ) = κ cos(x − μ) − log(2π) − log I₀(κ),   μ ∈ ℝ, κ > 0,
// with log I₀ = log_bessel_i0 (no overflow for large κ). The density has period 2π: a named
// variable lives on the interval (μ − π, μ + π) of one period centred on μ (so its mode is μ),
// sampled as logit((x − μ + π)/(2π)); observed values may be any real numbers (angles are not
// reduced).
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <tuple>

namespace tyche {

template <class Mu, class Kappa>
struct von_mises_distribution : distribution<von_mises_distribution<Mu, Kappa>> {
  static constexpr const char* family = "von_mises";
  Mu mu;
  Kappa kappa;
  /// (μ − π, μ + π), bounds that depend on μ, as uniform(a, b)'s on a and b.
  auto transform() const {
    const auto lower = mu - std::numbers::pi;
    const auto upper = mu + std::numbers::pi;
    return transforms::interval<decltype(lower), decltype(upper)>{lower, upper};
  }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(kappa * cos(x - mu) - log_bessel_i0(kappa) - 2 * detail::half_log_two_pi);
  }
  auto arguments() const { return std::tuple{mu, kappa}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<Kappa, domains::positive>::ok,
                  "tyche::von_mises(mu, kappa): kappa must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("von_mises(mu, kappa)", "kappa", kappa);
  }
  /// μ + θ, θ ∈ (−π, π), by Best & Fisher (1979), "Efficient simulation of the von Mises
  /// distribution", Appl. Statist. 28(2), 152–157: a wrapped Cauchy envelope with
  /// ρ = (τ − √(2τ))/(2κ), τ = 1 + √(1 + 4κ²) (written 2κ/(τ + √(2τ)), which does not cancel for
  /// small κ), r = (1 + ρ²)/(2ρ); propose f = (1 + r z)/(r + z), z = cos(π u₁); accept when
  /// c(2 − c) > u₂ (the squeeze) or log(c/u₂) + 1 − c ≥ 0, c = κ(r − f); θ = ±arccos f by u₃.
  template <class G>
  static double draw(G& rng, double m, double k) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const double tau = 1 + std::sqrt(1 + 4 * k * k);
    const double rho = 2 * k / (tau + std::sqrt(2 * tau));
    const double r = (1 + rho * rho) / (2 * rho);
    for (;;) {
      const double u1 = unit(rng), u2 = unit(rng), u3 = unit(rng);
      const double z = std::cos(std::numbers::pi * u1);
      const double f = (1 + r * z) / (r + z);
      const double c = k * (r - f);
      if (c * (2 - c) - u2 > 0 || std::log(c / u2) + 1 - c >= 0) {
        const double theta = std::acos(std::clamp(f, -1.0, 1.0));
        if (theta >= std::numbers::pi) continue;  // z rounded to −1: keep inside (−π, π)
        return m + (u3 > 0.5 ? theta : -theta);
      }
    }
  }
  static double mean(double m, double) { return m; }
  /// E[(x − μ)²] on (μ − π, μ + π) (the variance of draw(); the circular variance is
  /// 1 − I₁(κ)/I₀(κ)): from θ² = π²/3 + 4 Σₙ (−1)ⁿ cos(nθ)/n² on [−π, π] and E cos(nθ) =
  /// Aₙ = Iₙ(κ)/I₀(κ) = r₁⋯rₙ, rₙ = Iₙ/Iₙ₋₁ by the backward recurrence rₙ = 1/(2n/κ + rₙ₊₁)
  /// (from A&S 9.6.26, Iₙ₋₁ − Iₙ₊₁ = (2n/κ) Iₙ) started at r_{N+1} = 0 past where Aₙ ≈
  /// e^{−n²/(2κ)} is negligible, the sum nested as r₁(c₁ + r₂(c₂ + …)). O(√κ) steps; the
  /// cancellation in π²/3 − … leaves about 1e-15·κ relative error for large κ.
  static double variance(double, double k) {
    const long n_max = 30 + static_cast<long>(10 * std::sqrt(k));
    double r = 0.0, nested = 0.0;
    for (long n = n_max; n >= 1; --n) {
      r = 1 / (2 * static_cast<double>(n) / k + r);
      const double c = (n % 2 == 1 ? -1.0 : 1.0) / (static_cast<double>(n) * static_cast<double>(n));
      nested = r * (c + nested);
    }
    return std::numbers::pi * std::numbers::pi / 3 + 4 * nested;
  }
};

/// Name ~ von_mises(mu, kappa), support (mu − π, mu + π) (mu may be an expression of other
/// variables).
template <fixed_string Name, detail::operand Mu, detail::operand Kappa, shape_tag Shape = scalar_shape>
auto von_mises(const Mu& mu, const Kappa& kappa, Shape shape = {}) {
  return detail::make_named<Name, von_mises_distribution>(shape, mu, kappa);
}
template <detail::operand Mu, detail::operand Kappa>
auto von_mises(const Mu& mu, const Kappa& kappa) {
  return detail::make_distribution<von_mises_distribution>(mu, kappa);
}

}  // namespace tyche
