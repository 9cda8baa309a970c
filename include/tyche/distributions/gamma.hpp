// tyche/distributions/gamma.hpp — gamma(alpha, beta): shape α, rate β (as in Stan).
//   log p(x | α, β) = α log β − log Γ(α) + (α − 1) log x − β x,   x > 0, α > 0, β > 0.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <random>
#include <tuple>

namespace tyche {

template <class Alpha, class Beta>
struct gamma_distribution : distribution<gamma_distribution<Alpha, Beta>> {
  static constexpr const char* family = "gamma";
  Alpha alpha;
  Beta beta;
  auto transform() const { return transforms::lower_bound<literal<0>>{}; }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(alpha * log(beta) - lgamma(alpha) + (alpha - lit<1>) * log(x) - beta * x);
  }
  /// log P(X ≤ x) and log P(X > x), summed over x: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored observations.
  /// (P(α, βx), the regularised incomplete gamma function, and Q.)
  template <class X>
  auto log_cdf(const X& x) const {
    return detail::total(log_gamma_p(alpha, beta * x));
  }
  template <class X>
  auto log_ccdf(const X& x) const {
    return detail::total(log_gamma_q(alpha, beta * x));
  }
  auto arguments() const { return std::tuple{alpha, beta}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<Alpha, domains::positive>::ok,
                  "tyche::gamma(alpha, beta): alpha must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    static_assert(argument_support_t<Beta, domains::positive>::ok,
                  "tyche::gamma(alpha, beta): beta must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("gamma(alpha, beta)", "alpha", alpha);
    detail::check_argument<domains::positive>("gamma(alpha, beta)", "beta", beta);
  }
  template <class G>
  static double draw(G& rng, double a, double b) { return std::gamma_distribution<double>(a, 1.0 / b)(rng); }
  static double mean(double a, double b) { return a / b; }
  static double variance(double a, double b) { return a / (b * b); }
  static const char* observation_problem(double v) { return detail::positive_problem(v); }
};

/// Name ~ gamma(alpha, beta) (shape alpha, rate beta), support (0, ∞), sampled as log Name.
template <fixed_string Name, detail::operand Alpha, detail::operand Beta, shape_tag Shape = scalar_shape>
auto gamma(const Alpha& alpha, const Beta& beta, Shape shape = {}) {
  return detail::make_named<Name, gamma_distribution>(shape, alpha, beta);
}
template <detail::operand Alpha, detail::operand Beta>
auto gamma(const Alpha& alpha, const Beta& beta) {
  return detail::make_distribution<gamma_distribution>(alpha, beta);
}

}  // namespace tyche
