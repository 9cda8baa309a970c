// tyche/distributions/cauchy.hpp — cauchy(mu, sigma) and half_cauchy(sigma).
//   log p(x | μ, σ) = −log π − log σ − log(1 + ((x − μ)/σ)²),   x ∈ ℝ;
//   half_cauchy: log 2 − log π − log σ − log(1 + (x/σ)²),        x > 0.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>
#include <tyche/operations/stan_functions.hpp>

#include <cmath>
#include <random>
#include <tuple>

namespace tyche {

template <class Mu, class Sigma>
struct cauchy_distribution : distribution<cauchy_distribution<Mu, Sigma>> {
  static constexpr const char* family = "cauchy";
  Mu mu;
  Sigma sigma;
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(-log1p(square((x - mu) / sigma)) - log(sigma) - detail::log_pi);
  }
  /// log P(X ≤ x) and log P(X > x), summed over x: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored observations.
  /// log(1/2 + atan(z)/π), z = (x − μ)/σ, without cancellation in either tail (rules::cauchy_lcdf).
  template <class X>
  auto log_cdf(const X& x) const {
    return detail::total(detail::cauchy_lcdf((x - mu) / sigma));
  }
  template <class X>
  auto log_ccdf(const X& x) const {
    return detail::total(detail::cauchy_lcdf((mu - x) / sigma));
  }
  auto arguments() const { return std::tuple{mu, sigma}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<Sigma, domains::positive>::ok,
                  "tyche::cauchy(mu, sigma): sigma must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("cauchy(mu, sigma)", "sigma", sigma);
  }
  template <class G>
  static double draw(G& rng, double m, double s) { return std::cauchy_distribution<double>(m, s)(rng); }
};

template <class Sigma>
struct half_cauchy_distribution : distribution<half_cauchy_distribution<Sigma>> {
  static constexpr const char* family = "half_cauchy";
  Sigma sigma;
  auto transform() const { return transforms::lower_bound<literal<0>>{}; }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(-log1p(square(x / sigma)) - log(sigma) + (detail::log_two - detail::log_pi));
  }
  /// log P(X ≤ x) and log P(X > x), summed over x: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored observations.
  /// P(X ≤ x) = (2/π) atan(x/σ) and P(X > x) = (2/π) atan(σ/x), the latter as atan2(σ, x) (finite
  /// with its gradient at x = 0).
  template <class X>
  auto log_cdf(const X& x) const {
    return detail::total(log(atan(x / sigma)) + detail::log_two_over_pi);
  }
  template <class X>
  auto log_ccdf(const X& x) const {
    return detail::total(log(atan2(sigma, x)) + detail::log_two_over_pi);
  }
  auto arguments() const { return std::tuple{sigma}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<Sigma, domains::positive>::ok,
                  "tyche::half_cauchy(sigma): sigma must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("half_cauchy(sigma)", "sigma", sigma);
  }
  template <class G>
  static double draw(G& rng, double s) { return std::fabs(std::cauchy_distribution<double>(0.0, s)(rng)); }
  static const char* observation_problem(double v) { return detail::nonnegative_problem(v); }
  /// P(X ≤ 0) = 0: a left-censored observation at 0 has no probability (log_densities.hpp's lcdf).
  static const char* lcdf_problem(double v) {
    return v == 0 ? "is 0, the lower bound of the support, where P(Y <= y) = 0 for every parameter value" : nullptr;
  }
};

template <fixed_string Name, detail::operand Mu, detail::operand Sigma, shape_tag Shape = scalar_shape>
auto cauchy(const Mu& mu, const Sigma& sigma, Shape shape = {}) {
  return detail::make_named<Name, cauchy_distribution>(shape, mu, sigma);
}
template <detail::operand Mu, detail::operand Sigma>
auto cauchy(const Mu& mu, const Sigma& sigma) {
  return detail::make_distribution<cauchy_distribution>(mu, sigma);
}

/// Name ~ half-Cauchy(0, sigma), support (0, ∞), sampled as log Name.
template <fixed_string Name, detail::operand Sigma, shape_tag Shape = scalar_shape>
auto half_cauchy(const Sigma& sigma, Shape shape = {}) {
  return detail::make_named<Name, half_cauchy_distribution>(shape, sigma);
}
template <detail::operand Sigma>
auto half_cauchy(const Sigma& sigma) {
  return detail::make_distribution<half_cauchy_distribution>(sigma);
}

}  // namespace tyche
