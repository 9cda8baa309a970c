// tyche/distributions/rayleigh.hpp — rayleigh(sigma): the distance from the origin of a
// bivariate normal point with independent N(0, σ²) coordinates (as in Stan).
//   log p(x | σ) = log x − 2 log σ − x²/(2σ²),   x > 0, σ > 0.
// CDF 1 − exp(−x²/(2σ²)): log P(X > x) = −x²/(2σ²), log P(X ≤ x) = log1m_exp(−x²/(2σ²)).
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <cmath>
#include <numbers>
#include <random>
#include <tuple>

namespace tyche {

template <class Sigma>
struct rayleigh_distribution : distribution<rayleigh_distribution<Sigma>> {
  static constexpr const char* family = "rayleigh";
  Sigma sigma;
  auto transform() const { return transforms::lower_bound<literal<0>>{}; }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(log(x) - lit<2> * log(sigma) - lit<1, 2> * square(x / sigma));
  }
  /// log P(X ≤ x) and log P(X > x), summed over x: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored observations.
  template <class X>
  auto log_cdf(const X& x) const {
    return detail::total(log1m_exp(-(lit<1, 2> * square(x / sigma))));
  }
  template <class X>
  auto log_ccdf(const X& x) const {
    return detail::total(-(lit<1, 2> * square(x / sigma)));
  }
  auto arguments() const { return std::tuple{sigma}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<Sigma, domains::positive>::ok,
                  "tyche::rayleigh(sigma): sigma must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("rayleigh(sigma)", "sigma", sigma);
  }
  /// By inversion of the cdf: σ √(−2 log u), u ~ uniform(0, 1).
  template <class G>
  static double draw(G& rng, double s) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    double u = unit(rng);
    while (u <= 0.0 || u >= 1.0) u = unit(rng);
    return s * std::sqrt(-2 * std::log(u));
  }
  static double mean(double s) { return s * std::sqrt(std::numbers::pi / 2); }
  static double variance(double s) { return (4 - std::numbers::pi) / 2 * s * s; }
  // 0 is rejected too: log x = −∞ there.
  static const char* observation_problem(double v) { return detail::positive_problem(v); }
};

/// Name ~ rayleigh(sigma), support (0, ∞), sampled as log Name.
template <fixed_string Name, detail::operand Sigma, shape_tag Shape = scalar_shape>
auto rayleigh(const Sigma& sigma, Shape shape = {}) {
  return detail::make_named<Name, rayleigh_distribution>(shape, sigma);
}
template <detail::operand Sigma>
auto rayleigh(const Sigma& sigma) {
  return detail::make_distribution<rayleigh_distribution>(sigma);
}

}  // namespace tyche
