// tyche/distributions/inv_gamma.hpp — inv_gamma(alpha, beta): 1/x ~ gamma(alpha, beta); shape α,
// scale β.
//   log p(x | α, β) = α log β − log Γ(α) − (α + 1) log x − β / x,   x > 0, α > 0, β > 0.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <limits>
#include <random>
#include <tuple>

namespace tyche {

template <class Alpha, class Beta>
struct inv_gamma_distribution : distribution<inv_gamma_distribution<Alpha, Beta>> {
  static constexpr const char* family = "inv_gamma";
  Alpha alpha;
  Beta beta;
  auto transform() const { return transforms::lower_bound<literal<0>>{}; }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(alpha * log(beta) - lgamma(alpha) - (alpha + lit<1>) * log(x) - beta / x);
  }
  /// log P(X ≤ x) and log P(X > x), summed over x: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored observations.
  /// (1/X ~ gamma(α, β): P(X ≤ x) = Q(α, β/x).)
  template <class X>
  auto log_cdf(const X& x) const {
    return detail::total(log_gamma_q(alpha, beta / x));
  }
  template <class X>
  auto log_ccdf(const X& x) const {
    return detail::total(log_gamma_p(alpha, beta / x));
  }
  auto arguments() const { return std::tuple{alpha, beta}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<Alpha, domains::positive>::ok,
                  "tyche::inv_gamma(alpha, beta): alpha must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    static_assert(argument_support_t<Beta, domains::positive>::ok,
                  "tyche::inv_gamma(alpha, beta): beta must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("inv_gamma(alpha, beta)", "alpha", alpha);
    detail::check_argument<domains::positive>("inv_gamma(alpha, beta)", "beta", beta);
  }
  template <class G>
  static double draw(G& rng, double a, double b) { return b / std::gamma_distribution<double>(a, 1.0)(rng); }
  /// β / (α − 1) for α > 1 (else infinite).
  static double mean(double a, double b) {
    return a > 1 ? b / (a - 1) : std::numeric_limits<double>::infinity();
  }
  /// β² / ((α − 1)² (α − 2)) for α > 2 (else infinite).
  static double variance(double a, double b) {
    return a > 2 ? b * b / ((a - 1) * (a - 1) * (a - 2)) : std::numeric_limits<double>::infinity();
  }
  static const char* observation_problem(double v) { return detail::positive_problem(v); }
};

/// Name ~ inv_gamma(alpha, beta) (shape alpha, scale beta), support (0, ∞), sampled as log Name.
template <fixed_string Name, detail::operand Alpha, detail::operand Beta, shape_tag Shape = scalar_shape>
auto inv_gamma(const Alpha& alpha, const Beta& beta, Shape shape = {}) {
  return detail::make_named<Name, inv_gamma_distribution>(shape, alpha, beta);
}
template <detail::operand Alpha, detail::operand Beta>
auto inv_gamma(const Alpha& alpha, const Beta& beta) {
  return detail::make_distribution<inv_gamma_distribution>(alpha, beta);
}

}  // namespace tyche
