// tyche/distributions/weibull.hpp — weibull(alpha, sigma): shape α, scale σ (as in Stan).
//   log p(x | α, σ) = log α − log σ + (α − 1) log(x/σ) − (x/σ)^α,   x > 0, α > 0, σ > 0.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <cmath>
#include <random>
#include <tuple>

namespace tyche {

template <class Alpha, class Sigma>
struct weibull_distribution : distribution<weibull_distribution<Alpha, Sigma>> {
  static constexpr const char* family = "weibull";
  Alpha alpha;
  Sigma sigma;
  auto transform() const { return transforms::lower_bound<literal<0>>{}; }
  template <class X>
  auto log_prob(const X& x) const {
    const auto log_z = log(x / sigma);  // (x/σ)^α = exp(α log(x/σ)), log(x/σ) computed once
    return detail::total(log(alpha) - log(sigma) + (alpha - lit<1>) * log_z - exp(alpha * log_z));
  }
  /// log P(X ≤ x) and log P(X > x), summed over x: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored observations.
  /// (With t = (x/σ)^α: log(1 − e^{−t}) and −t.)
  template <class X>
  auto log_cdf(const X& x) const {
    return detail::total(detail::log1m_exp_neg_exp(alpha * log(x / sigma)));
  }
  template <class X>
  auto log_ccdf(const X& x) const {
    return detail::total(-exp(alpha * log(x / sigma)));
  }
  auto arguments() const { return std::tuple{alpha, sigma}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<Alpha, domains::positive>::ok,
                  "tyche::weibull(alpha, sigma): alpha must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    static_assert(argument_support_t<Sigma, domains::positive>::ok,
                  "tyche::weibull(alpha, sigma): sigma must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("weibull(alpha, sigma)", "alpha", alpha);
    detail::check_argument<domains::positive>("weibull(alpha, sigma)", "sigma", sigma);
  }
  template <class G>
  static double draw(G& rng, double a, double s) { return std::weibull_distribution<double>(a, s)(rng); }
  static double mean(double a, double s) { return s * std::tgamma(1 + 1 / a); }
  static double variance(double a, double s) {
    const double g1 = std::tgamma(1 + 1 / a);
    return s * s * (std::tgamma(1 + 2 / a) - g1 * g1);
  }
  // 0 is rejected too: log(x/σ) = −∞ there, and (α − 1)·log(x/σ) is NaN for α = 1.
  static const char* observation_problem(double v) { return detail::positive_problem(v); }
};

/// Name ~ weibull(alpha, sigma) (shape alpha, scale sigma), support (0, ∞), sampled as log Name.
template <fixed_string Name, detail::operand Alpha, detail::operand Sigma, shape_tag Shape = scalar_shape>
auto weibull(const Alpha& alpha, const Sigma& sigma, Shape shape = {}) {
  return detail::make_named<Name, weibull_distribution>(shape, alpha, sigma);
}
template <detail::operand Alpha, detail::operand Sigma>
auto weibull(const Alpha& alpha, const Sigma& sigma) {
  return detail::make_distribution<weibull_distribution>(alpha, sigma);
}

}  // namespace tyche
