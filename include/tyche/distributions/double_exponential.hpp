// tyche/distributions/double_exponential.hpp — double_exponential(mu, sigma) (Laplace).
//   log p(x | μ, σ) = −log 2 − log σ − |x − μ|/σ,   x ∈ ℝ, σ > 0.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <cmath>
#include <random>
#include <tuple>

namespace tyche {

template <class Mu, class Sigma>
struct double_exponential_distribution : distribution<double_exponential_distribution<Mu, Sigma>> {
  static constexpr const char* family = "double_exponential";
  Mu mu;
  Sigma sigma;
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(-abs(x - mu) / sigma - log(sigma) - detail::log_two);
  }
  /// log P(X ≤ x) and log P(X > x), summed over x: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored observations.
  /// z − log 2 below μ, log(1 − e^(−z)/2) above, z = (x − μ)/σ (rules::laplace_lcdf).
  template <class X>
  auto log_cdf(const X& x) const {
    return detail::total(detail::laplace_lcdf((x - mu) / sigma));
  }
  template <class X>
  auto log_ccdf(const X& x) const {
    return detail::total(detail::laplace_lcdf((mu - x) / sigma));
  }
  auto arguments() const { return std::tuple{mu, sigma}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<Sigma, domains::positive>::ok,
                  "tyche::double_exponential(mu, sigma): sigma must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("double_exponential(mu, sigma)", "sigma", sigma);
  }
  /// By inversion of u ~ uniform(0, 1): μ + σ log 2u below ½, μ − σ log 2(1 − u) above.
  template <class G>
  static double draw(G& rng, double m, double s) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    double u = unit(rng);
    while (u <= 0.0 || u >= 1.0) u = unit(rng);
    return u < 0.5 ? m + s * std::log(2 * u) : m - s * std::log(2 * (1 - u));
  }
  static double mean(double m, double) { return m; }
  static double variance(double, double s) { return 2 * s * s; }
};

/// Name ~ double_exponential(mu, sigma) (Laplace).
template <fixed_string Name, detail::operand Mu, detail::operand Sigma, shape_tag Shape = scalar_shape>
auto double_exponential(const Mu& mu, const Sigma& sigma, Shape shape = {}) {
  return detail::make_named<Name, double_exponential_distribution>(shape, mu, sigma);
}
template <detail::operand Mu, detail::operand Sigma>
auto double_exponential(const Mu& mu, const Sigma& sigma) {
  return detail::make_distribution<double_exponential_distribution>(mu, sigma);
}

}  // namespace tyche
