// tyche/distributions/gumbel.hpp — gumbel(mu, beta): location μ, scale β (as in Stan).
//   log p(x | μ, β) = −log β − z − e^{−z},   z = (x − μ)/β,   x ∈ ℝ, β > 0.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <cmath>
#include <numbers>
#include <random>
#include <tuple>

namespace tyche {

template <class Mu, class Beta>
struct gumbel_distribution : distribution<gumbel_distribution<Mu, Beta>> {
  static constexpr const char* family = "gumbel";
  Mu mu;
  Beta beta;
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    const auto z = (x - mu) / beta;
    return detail::total(-log(beta) - z - exp(-z));
  }
  /// log P(X ≤ x) and log P(X > x), summed over x: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored observations.
  /// (The CDF is exp(−e^{−z}).)
  template <class X>
  auto log_cdf(const X& x) const {
    return detail::total(-exp((mu - x) / beta));
  }
  template <class X>
  auto log_ccdf(const X& x) const {
    return detail::total(detail::log1m_exp_neg_exp((mu - x) / beta));
  }
  auto arguments() const { return std::tuple{mu, beta}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<Beta, domains::positive>::ok,
                  "tyche::gumbel(mu, beta): beta must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("gumbel(mu, beta)", "beta", beta);
  }
  /// By inversion of the cdf exp(−e^{−z}): μ − β log(−log u), u ~ uniform(0, 1).
  template <class G>
  static double draw(G& rng, double m, double b) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    double u = unit(rng);
    while (u <= 0.0 || u >= 1.0) u = unit(rng);
    return m - b * std::log(-std::log(u));
  }
  /// μ + β γ, γ the Euler–Mascheroni constant.
  static double mean(double m, double b) { return m + b * std::numbers::egamma; }
  static double variance(double, double b) { return b * b * std::numbers::pi * std::numbers::pi / 6; }
};

/// Name ~ gumbel(mu, beta), support ℝ.
template <fixed_string Name, detail::operand Mu, detail::operand Beta, shape_tag Shape = scalar_shape>
auto gumbel(const Mu& mu, const Beta& beta, Shape shape = {}) {
  return detail::make_named<Name, gumbel_distribution>(shape, mu, beta);
}
template <detail::operand Mu, detail::operand Beta>
auto gumbel(const Mu& mu, const Beta& beta) {
  return detail::make_distribution<gumbel_distribution>(mu, beta);
}

}  // namespace tyche
