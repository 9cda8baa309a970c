// tyche/distributions/loglogistic.hpp — loglogistic(alpha, beta): scale α, shape β (as in Stan).
// log x ~ logistic(log α, 1/β).
//   log p(x | α, β) = log β − log α + (β − 1) log(x/α) − 2 log(1 + (x/α)^β),
//   x > 0, α > 0, β > 0, with log(1 + (x/α)^β) = log1p_exp(β log(x/α)), which does not overflow.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <tuple>

namespace tyche {

template <class Alpha, class Beta>
struct loglogistic_distribution : distribution<loglogistic_distribution<Alpha, Beta>> {
  static constexpr const char* family = "loglogistic";
  Alpha alpha;
  Beta beta;
  auto transform() const { return transforms::lower_bound<literal<0>>{}; }
  template <class X>
  auto log_prob(const X& x) const {
    const auto log_z = log(x / alpha);
    return detail::total(log(beta) - log(alpha) + (beta - lit<1>) * log_z -
                         lit<2> * log1p_exp(beta * log_z));
  }
  /// log P(X ≤ x) and log P(X > x), summed over x: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored observations.
  /// (The CDF is the logistic function of β log(x/α).)
  template <class X>
  auto log_cdf(const X& x) const {
    return detail::total(log_logistic(beta * log(x / alpha)));
  }
  template <class X>
  auto log_ccdf(const X& x) const {
    return detail::total(log1m_logistic(beta * log(x / alpha)));
  }
  auto arguments() const { return std::tuple{alpha, beta}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<Alpha, domains::positive>::ok,
                  "tyche::loglogistic(alpha, beta): alpha must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    static_assert(argument_support_t<Beta, domains::positive>::ok,
                  "tyche::loglogistic(alpha, beta): beta must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("loglogistic(alpha, beta)", "alpha", alpha);
    detail::check_argument<domains::positive>("loglogistic(alpha, beta)", "beta", beta);
  }
  /// By inversion of the cdf 1/(1 + (x/α)^{−β}): α (u/(1 − u))^{1/β}, u ~ uniform(0, 1).
  template <class G>
  static double draw(G& rng, double a, double b) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    double u = unit(rng);
    while (u <= 0.0 || u >= 1.0) u = unit(rng);
    return a * std::exp((std::log(u) - std::log1p(-u)) / b);
  }
  /// α (π/β)/sin(π/β) for β > 1, infinite otherwise.
  static double mean(double a, double b) {
    if (!(b > 1)) return std::numeric_limits<double>::infinity();
    const double t = std::numbers::pi / b;
    return a * t / std::sin(t);
  }
  /// α² (2t/sin 2t − t²/sin² t), t = π/β, for β > 2, infinite otherwise.
  static double variance(double a, double b) {
    if (!(b > 2)) return std::numeric_limits<double>::infinity();
    const double t = std::numbers::pi / b, s = std::sin(t);
    return a * a * (2 * t / std::sin(2 * t) - t * t / (s * s));
  }
  // 0 is rejected too: log(x/α) = −∞ there, and (β − 1)·log(x/α) is NaN for β = 1.
  static const char* observation_problem(double v) { return detail::positive_problem(v); }
};

/// Name ~ loglogistic(alpha, beta) (scale alpha, shape beta), support (0, ∞), sampled as log Name.
template <fixed_string Name, detail::operand Alpha, detail::operand Beta, shape_tag Shape = scalar_shape>
auto loglogistic(const Alpha& alpha, const Beta& beta, Shape shape = {}) {
  return detail::make_named<Name, loglogistic_distribution>(shape, alpha, beta);
}
template <detail::operand Alpha, detail::operand Beta>
auto loglogistic(const Alpha& alpha, const Beta& beta) {
  return detail::make_distribution<loglogistic_distribution>(alpha, beta);
}

}  // namespace tyche
