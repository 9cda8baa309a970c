// tyche/distributions/frechet.hpp — frechet(alpha, sigma): shape α, scale σ (as in Stan).
//   log p(x | α, σ) = log α − log σ − (1 + α) log(x/σ) − (x/σ)^{−α},   x > 0, α > 0, σ > 0.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <tuple>

namespace tyche {

template <class Alpha, class Sigma>
struct frechet_distribution : distribution<frechet_distribution<Alpha, Sigma>> {
  static constexpr const char* family = "frechet";
  Alpha alpha;
  Sigma sigma;
  auto transform() const { return transforms::lower_bound<literal<0>>{}; }
  template <class X>
  auto log_prob(const X& x) const {
    const auto log_z = log(x / sigma);  // (x/σ)^{−α} = exp(−α log(x/σ)), log(x/σ) computed once
    return detail::total(log(alpha) - log(sigma) - (lit<1> + alpha) * log_z - exp(-(alpha * log_z)));
  }
  /// log P(X ≤ x) and log P(X > x), summed over x: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored observations.
  /// (The CDF is exp(−(x/σ)^{−α}).)
  template <class X>
  auto log_cdf(const X& x) const {
    return detail::total(-exp(-(alpha * log(x / sigma))));
  }
  template <class X>
  auto log_ccdf(const X& x) const {
    return detail::total(detail::log1m_exp_neg_exp(-(alpha * log(x / sigma))));
  }
  auto arguments() const { return std::tuple{alpha, sigma}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<Alpha, domains::positive>::ok,
                  "tyche::frechet(alpha, sigma): alpha must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    static_assert(argument_support_t<Sigma, domains::positive>::ok,
                  "tyche::frechet(alpha, sigma): sigma must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("frechet(alpha, sigma)", "alpha", alpha);
    detail::check_argument<domains::positive>("frechet(alpha, sigma)", "sigma", sigma);
  }
  /// By inversion of the cdf exp(−(x/σ)^{−α}): σ (−log u)^{−1/α}, u ~ uniform(0, 1).
  template <class G>
  static double draw(G& rng, double a, double s) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    double u = unit(rng);
    while (u <= 0.0 || u >= 1.0) u = unit(rng);
    return s * std::exp(-std::log(-std::log(u)) / a);
  }
  /// σ Γ(1 − 1/α) for α > 1, infinite otherwise.
  static double mean(double a, double s) {
    return a > 1 ? s * std::tgamma(1 - 1 / a) : std::numeric_limits<double>::infinity();
  }
  /// σ² (Γ(1 − 2/α) − Γ(1 − 1/α)²) for α > 2, infinite otherwise.
  static double variance(double a, double s) {
    if (!(a > 2)) return std::numeric_limits<double>::infinity();
    const double g1 = std::tgamma(1 - 1 / a);
    return s * s * (std::tgamma(1 - 2 / a) - g1 * g1);
  }
  // 0 is rejected too: log(x/σ) = −∞ there, and −(x/σ)^{−α} − (1 + α)·log(x/σ) is −∞ + ∞.
  static const char* observation_problem(double v) { return detail::positive_problem(v); }
};

/// Name ~ frechet(alpha, sigma) (shape alpha, scale sigma), support (0, ∞), sampled as log Name.
template <fixed_string Name, detail::operand Alpha, detail::operand Sigma, shape_tag Shape = scalar_shape>
auto frechet(const Alpha& alpha, const Sigma& sigma, Shape shape = {}) {
  return detail::make_named<Name, frechet_distribution>(shape, alpha, sigma);
}
template <detail::operand Alpha, detail::operand Sigma>
auto frechet(const Alpha& alpha, const Sigma& sigma) {
  return detail::make_distribution<frechet_distribution>(alpha, sigma);
}

}  // namespace tyche
