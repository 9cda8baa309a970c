// tyche/distributions/logistic.hpp — the distribution logistic(mu, sigma). (With one argument,
// tyche::logistic(e) is the inverse-logit function of tyche/operations/functions.hpp; the overloads
// differ by arity.)
//   log p(x | μ, σ) = −z − log σ − 2 log(1 + e^{−z}) = log σ(z) + log(1 − σ(z)) − log σ,
//   z = (x − μ)/σ,   x ∈ ℝ, σ > 0.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <cmath>
#include <numbers>
#include <random>
#include <tuple>

namespace tyche {

template <class Mu, class Sigma>
struct logistic_distribution : distribution<logistic_distribution<Mu, Sigma>> {
  static constexpr const char* family = "logistic";
  Mu mu;
  Sigma sigma;
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    const auto z = (x - mu) / sigma;
    return detail::total(log_logistic(z) + log1m_logistic(z) - log(sigma));
  }
  /// log P(X ≤ x) and log P(X > x), summed over x: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored observations.
  template <class X>
  auto log_cdf(const X& x) const {
    return detail::total(log_logistic((x - mu) / sigma));
  }
  template <class X>
  auto log_ccdf(const X& x) const {
    return detail::total(log1m_logistic((x - mu) / sigma));
  }
  auto arguments() const { return std::tuple{mu, sigma}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<Sigma, domains::positive>::ok,
                  "tyche::logistic(mu, sigma): sigma must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("logistic(mu, sigma)", "sigma", sigma);
  }
  /// By inversion of u ~ uniform(0, 1): μ + σ log(u / (1 − u)).
  template <class G>
  static double draw(G& rng, double m, double s) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    double u = unit(rng);
    while (u <= 0.0 || u >= 1.0) u = unit(rng);
    return m + s * (std::log(u) - std::log1p(-u));
  }
  static double mean(double m, double) { return m; }
  static double variance(double, double s) { return s * s * std::numbers::pi * std::numbers::pi / 3; }
};

/// Name ~ logistic(mu, sigma) (the distribution).
template <fixed_string Name, detail::operand Mu, detail::operand Sigma, shape_tag Shape = scalar_shape>
auto logistic(const Mu& mu, const Sigma& sigma, Shape shape = {}) {
  return detail::make_named<Name, logistic_distribution>(shape, mu, sigma);
}
/// The distribution logistic(mu, sigma); logistic(e), one argument, is the inverse logit.
template <detail::operand Mu, detail::operand Sigma>
auto logistic(const Mu& mu, const Sigma& sigma) {
  return detail::make_distribution<logistic_distribution>(mu, sigma);
}

}  // namespace tyche
