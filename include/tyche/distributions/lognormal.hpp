// tyche/distributions/lognormal.hpp — lognormal(mu, sigma): log x ~ normal(mu, sigma).
//   log p(x | μ, σ) = −½ ((log x − μ)/σ)² − log σ − log x − ½ log 2π,   x > 0, σ > 0.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <cmath>
#include <random>
#include <tuple>

namespace tyche {

template <class Mu, class Sigma>
struct lognormal_distribution : distribution<lognormal_distribution<Mu, Sigma>> {
  static constexpr const char* family = "lognormal";
  Mu mu;
  Sigma sigma;
  auto transform() const { return transforms::lower_bound<literal<0>>{}; }
  template <class X>
  auto log_prob(const X& x) const {
    const auto log_x = log(x);
    return detail::total(lit<-1, 2> * square((log_x - mu) / sigma) - log(sigma) - log_x -
                         detail::half_log_two_pi);
  }
  /// log P(X ≤ x) and log P(X > x), summed over x: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored observations.
  template <class X>
  auto log_cdf(const X& x) const {
    return detail::total(log_Phi((log(x) - mu) / sigma));
  }
  template <class X>
  auto log_ccdf(const X& x) const {
    return detail::total(log_Phi((mu - log(x)) / sigma));
  }
  auto arguments() const { return std::tuple{mu, sigma}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<Sigma, domains::positive>::ok,
                  "tyche::lognormal(mu, sigma): sigma must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("lognormal(mu, sigma)", "sigma", sigma);
  }
  template <class G>
  static double draw(G& rng, double m, double s) { return std::lognormal_distribution<double>(m, s)(rng); }
  static double mean(double m, double s) { return std::exp(m + s * s / 2); }
  static double variance(double m, double s) { return std::expm1(s * s) * std::exp(2 * m + s * s); }
  static const char* observation_problem(double v) { return detail::positive_problem(v); }
};

/// Name ~ lognormal(mu, sigma), support (0, ∞), sampled as log Name.
template <fixed_string Name, detail::operand Mu, detail::operand Sigma, shape_tag Shape = scalar_shape>
auto lognormal(const Mu& mu, const Sigma& sigma, Shape shape = {}) {
  return detail::make_named<Name, lognormal_distribution>(shape, mu, sigma);
}
template <detail::operand Mu, detail::operand Sigma>
auto lognormal(const Mu& mu, const Sigma& sigma) {
  return detail::make_distribution<lognormal_distribution>(mu, sigma);
}

}  // namespace tyche
