// tyche/distributions/skew_double_exponential.hpp — skew_double_exponential(mu, sigma, tau): the
// asymmetric Laplace distribution of Bayesian quantile regression (as in Stan): μ is its τ-quantile.
//   log p(x | μ, σ, τ) = log 2 + log τ + log(1 − τ) − log σ − (2/σ) ρ_τ(x − μ),
//   ρ_τ(d) = τ d + max(−d, 0) (the check loss: (1 − τ)|d| below μ, τ d above),
//   x ∈ ℝ, σ > 0, 0 < τ < 1; τ = ½ is double_exponential(μ, σ).
// CDF τ e^{2(1−τ)d/σ} below μ, 1 − (1 − τ) e^{−2τd/σ} above (d = x − μ), taken in logs so that
// the small probability of either tail keeps its relative precision (the side near 1, log(1 − ε),
// is accurate in absolute terms): with d₋ = min(d, 0) and d₊ = d − d₋ = max(d, 0),
//   log P(X ≤ x) = 2(1 − τ) d₋/σ + log1m_exp(log(1 − τ) − 2τ d₊/σ),
//   log P(X > x) = −2τ d₊/σ + log1m_exp(log τ + 2(1 − τ) d₋/σ).
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <cmath>
#include <random>
#include <tuple>

namespace tyche {

template <class Mu, class Sigma, class Tau>
struct skew_double_exponential_distribution : distribution<skew_double_exponential_distribution<Mu, Sigma, Tau>> {
  static constexpr const char* family = "skew_double_exponential";
  Mu mu;
  Sigma sigma;
  Tau tau;
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    const auto d = x - mu;
    return detail::total(detail::log_two + log(tau) + log1m(tau) - log(sigma) -
                         lit<2> * (tau * d + fmax(-d, lit<0>)) / sigma);
  }
  /// log P(X ≤ x) and log P(X > x), summed over x: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored observations.
  // d₊ = d − d₋ rather than max(d, 0): at d = 0 fmin passes d's derivative to d₋, and d₊ must
  // then pass none (the CDF is continuously differentiable at μ; with both, its slope there doubled).
  template <class X>
  auto log_cdf(const X& x) const {
    const auto d = x - mu;
    const auto below = fmin(d, lit<0>);
    return detail::total(lit<2> * (lit<1> - tau) * below / sigma +
                         log1m_exp(log1m(tau) - lit<2> * tau * (d - below) / sigma));
  }
  template <class X>
  auto log_ccdf(const X& x) const {
    const auto d = x - mu;
    const auto below = fmin(d, lit<0>);
    return detail::total(-(lit<2> * tau * (d - below) / sigma) +
                         log1m_exp(log(tau) + lit<2> * (lit<1> - tau) * below / sigma));
  }
  auto arguments() const { return std::tuple{mu, sigma, tau}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<Sigma, domains::positive>::ok,
                  "tyche::skew_double_exponential(mu, sigma, tau): sigma must be > 0, but its support (spelled "
                  "out in tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    static_assert(argument_support_t<Tau, domains::open_unit_interval>::ok,
                  "tyche::skew_double_exponential(mu, sigma, tau): tau must be in (0, 1), but its support "
                  "(spelled out in tyche::support_is<...> in this diagnostic) is not inside (0, 1)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("skew_double_exponential(mu, sigma, tau)", "sigma", sigma);
    detail::check_argument<domains::open_unit_interval>("skew_double_exponential(mu, sigma, tau)", "tau", tau);
  }
  /// By inversion of u ~ uniform(0, 1): μ + σ log(u/τ)/(2(1 − τ)) below τ,
  /// μ − σ log((1 − u)/(1 − τ))/(2τ) above.
  template <class G>
  static double draw(G& rng, double m, double s, double t) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    double u = unit(rng);
    while (u <= 0.0 || u >= 1.0) u = unit(rng);
    return u < t ? m + s * std::log(u / t) / (2 * (1 - t)) : m - s * std::log((1 - u) / (1 - t)) / (2 * t);
  }
  /// μ + σ(1 − 2τ)/(2τ(1 − τ)).
  static double mean(double m, double s, double t) { return m + s * (1 - 2 * t) / (2 * t * (1 - t)); }
  /// σ²(1 − 2τ + 2τ²)/(4τ²(1 − τ)²).
  static double variance(double, double s, double t) {
    return s * s * (1 - 2 * t + 2 * t * t) / (4 * t * t * (1 - t) * (1 - t));
  }
};

/// Name ~ skew_double_exponential(mu, sigma, tau) (asymmetric Laplace; μ the τ-quantile).
template <fixed_string Name, detail::operand Mu, detail::operand Sigma, detail::operand Tau,
          shape_tag Shape = scalar_shape>
auto skew_double_exponential(const Mu& mu, const Sigma& sigma, const Tau& tau, Shape shape = {}) {
  return detail::make_named<Name, skew_double_exponential_distribution>(shape, mu, sigma, tau);
}
template <detail::operand Mu, detail::operand Sigma, detail::operand Tau>
auto skew_double_exponential(const Mu& mu, const Sigma& sigma, const Tau& tau) {
  return detail::make_distribution<skew_double_exponential_distribution>(mu, sigma, tau);
}

}  // namespace tyche
