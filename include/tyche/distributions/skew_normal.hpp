// tyche/distributions/skew_normal.hpp — skew_normal(xi, omega, alpha), as in Stan.
// Location ξ, scale ω, shape α (Azzalini 1985).
//   log p(x | ξ, ω, α) = log 2 − ½ log 2π − log ω − z²/2 + log Φ(α z),   z = (x − ξ)/ω,
//   x ∈ ℝ, ω > 0, α ∈ ℝ, with log Φ = log_Phi, finite where Φ(α z) underflows (α z < −38).
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <cmath>
#include <numbers>
#include <random>
#include <tuple>

namespace tyche {

template <class Xi, class Omega, class Alpha>
struct skew_normal_distribution : distribution<skew_normal_distribution<Xi, Omega, Alpha>> {
  static constexpr const char* family = "skew_normal";
  Xi xi;
  Omega omega;
  Alpha alpha;
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    const auto z = (x - xi) / omega;
    return detail::total(log_Phi(alpha * z) - lit<1, 2> * square(z) - log(omega) +
                         (detail::log_two - detail::half_log_two_pi));
  }
  /// log P(X ≤ x) and log P(X > x), summed over x: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored observations. F(z; α) = Φ(z) − 2T(z, α), T Owen's
  /// function, and 1 − F(z; α) = F(−z; −α) (rules::skew_normal_lcdf, scalar/owens_t.hpp).
  template <class X>
  auto log_cdf(const X& x) const {
    return detail::total(detail::skew_normal_lcdf((x - xi) / omega, alpha));
  }
  template <class X>
  auto log_ccdf(const X& x) const {
    return detail::total(detail::skew_normal_lcdf((xi - x) / omega, -detail::as_node(alpha)));
  }
  auto arguments() const { return std::tuple{xi, omega, alpha}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<Omega, domains::positive>::ok,
                  "tyche::skew_normal(xi, omega, alpha): omega must be > 0, but its support (spelled "
                  "out in tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("skew_normal(xi, omega, alpha)", "omega", omega);
  }
  /// ξ + ω z with z = δ|u₀| + √(1 − δ²) u₁ for u₀, u₁ ~ normal(0, 1) independent,
  /// δ = α/√(1 + α²) (Azzalini & Dalla Valle 1996; Azzalini 2014, §2.1.3): z = u₁' if u₀ ≥ 0
  /// else −u₁', u₁' = δ u₀ + √(1 − δ²) u₁.
  template <class G>
  static double draw(G& rng, double xi_, double omega_, double alpha_) {
    std::normal_distribution<double> n(0.0, 1.0);
    const double d = alpha_ / std::sqrt(1 + alpha_ * alpha_);
    const double u0 = n(rng), u1 = n(rng);
    const double v = d * u0 + std::sqrt(1 - d * d) * u1;
    return xi_ + omega_ * (u0 >= 0 ? v : -v);
  }
  /// ξ + ω δ √(2/π), δ = α/√(1 + α²).
  static double mean(double xi_, double omega_, double alpha_) {
    const double d = alpha_ / std::sqrt(1 + alpha_ * alpha_);
    return xi_ + omega_ * d * std::sqrt(2 / std::numbers::pi);
  }
  /// ω² (1 − 2δ²/π).
  static double variance(double, double omega_, double alpha_) {
    const double d2 = alpha_ * alpha_ / (1 + alpha_ * alpha_);
    return omega_ * omega_ * (1 - 2 * d2 / std::numbers::pi);
  }
};

/// Name ~ skew_normal(xi, omega, alpha), support ℝ.
template <fixed_string Name, detail::operand Xi, detail::operand Omega, detail::operand Alpha,
          shape_tag Shape = scalar_shape>
auto skew_normal(const Xi& xi, const Omega& omega, const Alpha& alpha, Shape shape = {}) {
  return detail::make_named<Name, skew_normal_distribution>(shape, xi, omega, alpha);
}
template <detail::operand Xi, detail::operand Omega, detail::operand Alpha>
auto skew_normal(const Xi& xi, const Omega& omega, const Alpha& alpha) {
  return detail::make_distribution<skew_normal_distribution>(xi, omega, alpha);
}

}  // namespace tyche
