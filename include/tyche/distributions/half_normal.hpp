// tyche/distributions/half_normal.hpp — half_normal(sigma): the normal(0, sigma) folded onto x ≥ 0.
//   log p(x | σ) = log 2 − ½ log 2π − log σ − ½ (x/σ)²,   x ≥ 0, σ > 0.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <cmath>
#include <numbers>
#include <random>
#include <tuple>

namespace tyche {

template <class Sigma>
struct half_normal_distribution : distribution<half_normal_distribution<Sigma>> {
  static constexpr const char* family = "half_normal";
  Sigma sigma;
  auto transform() const { return transforms::lower_bound<literal<0>>{}; }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(lit<-1, 2> * square(x / sigma) - log(sigma) +
                         (detail::log_two - detail::half_log_two_pi));
  }
  /// log P(X ≤ x) and log P(X > x), summed over x: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored observations.
  /// (P(X ≤ x) = erf(x / (σ√2)); P(X > x) = 2 Φ(−x/σ).)
  template <class X>
  auto log_cdf(const X& x) const {
    return detail::total(log(erf(x / sigma * std::numbers::sqrt2 * 0.5)));
  }
  template <class X>
  auto log_ccdf(const X& x) const {
    return detail::total(log_Phi(-(x / sigma)) + std::numbers::ln2);
  }
  auto arguments() const { return std::tuple{sigma}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<Sigma, domains::positive>::ok,
                  "tyche::half_normal(sigma): sigma must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("half_normal(sigma)", "sigma", sigma);
  }
  template <class G>
  static double draw(G& rng, double s) { return std::fabs(std::normal_distribution<double>(0.0, s)(rng)); }
  static double mean(double s) { return s * std::sqrt(2.0 / std::numbers::pi); }
  static double variance(double s) { return s * s * (1.0 - 2.0 / std::numbers::pi); }
  static const char* observation_problem(double v) { return detail::nonnegative_problem(v); }
  /// P(X ≤ 0) = 0: a left-censored observation at 0 has no probability (log_densities.hpp's lcdf).
  static const char* lcdf_problem(double v) {
    return v == 0 ? "is 0, the lower bound of the support, where P(Y <= y) = 0 for every parameter value" : nullptr;
  }
};

/// Name ~ half-normal(sigma), support (0, ∞), sampled as log Name.
template <fixed_string Name, detail::operand Sigma, shape_tag Shape = scalar_shape>
auto half_normal(const Sigma& sigma, Shape shape = {}) {
  return detail::make_named<Name, half_normal_distribution>(shape, sigma);
}
template <detail::operand Sigma>
auto half_normal(const Sigma& sigma) {
  return detail::make_distribution<half_normal_distribution>(sigma);
}

}  // namespace tyche
