// tyche/distributions/exp_mod_normal.hpp — exp_mod_normal(mu, sigma, lambda), as in Stan.
// The sum of a normal(μ, σ) and an independent exponential(λ) variable.
//   log p(x | μ, σ, λ) = log λ + λ (μ − x) + (λσ)²/2 + log Φ((x − μ)/σ − λσ),
//   x ∈ ℝ, σ > 0, λ > 0 (Stan's log(λ/2) + λ(μ + λσ²/2 − x) + log erfc((μ + λσ² − x)/(√2 σ)),
//   with erfc(−t/√2)/2 = Φ(t)), and log Φ = log_Phi, finite where Φ underflows.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <random>
#include <tuple>

namespace tyche {

template <class Mu, class Sigma, class Lambda>
struct exp_mod_normal_distribution : distribution<exp_mod_normal_distribution<Mu, Sigma, Lambda>> {
  static constexpr const char* family = "exp_mod_normal";
  Mu mu;
  Sigma sigma;
  Lambda lambda;
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    const auto lambda_sigma = lambda * sigma;
    return detail::total(log(lambda) + lambda * (mu - x) + lit<1, 2> * square(lambda_sigma) +
                         log_Phi((x - mu) / sigma - lambda_sigma));
  }
  /// log P(X ≤ x) and log P(X > x), summed over x: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored observations.
  /// P(X ≤ x) = Φ(z) − e^v with v = λ(μ − x) + (λσ)²/2 + log Φ(z − λσ), z = (x − μ)/σ: in log form
  /// log Φ(z) + log(1 − e^(v − log Φ(z))) (the difference clamped at 0 against rounding), and
  /// P(X > x) = Φ(−z) + e^v as log_sum_exp.
  template <class X>
  auto log_cdf(const X& x) const {
    const auto z = (x - mu) / sigma;
    const auto lambda_sigma = lambda * sigma;
    const auto log_phi_z = log_Phi(z);
    return detail::total(log_phi_z + log1m_exp(fmin(lambda * (mu - x) + lit<1, 2> * square(lambda_sigma) +
                                                         log_Phi(z - lambda_sigma) - log_phi_z,
                                                     lit<0>)));
  }
  template <class X>
  auto log_ccdf(const X& x) const {
    const auto z = (x - mu) / sigma;
    const auto lambda_sigma = lambda * sigma;
    return detail::total(
        log_sum_exp(log_Phi(-z), lambda * (mu - x) + lit<1, 2> * square(lambda_sigma) + log_Phi(z - lambda_sigma)));
  }
  auto arguments() const { return std::tuple{mu, sigma, lambda}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<Sigma, domains::positive>::ok,
                  "tyche::exp_mod_normal(mu, sigma, lambda): sigma must be > 0, but its support "
                  "(spelled out in tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    static_assert(argument_support_t<Lambda, domains::positive>::ok,
                  "tyche::exp_mod_normal(mu, sigma, lambda): lambda must be > 0, but its support "
                  "(spelled out in tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("exp_mod_normal(mu, sigma, lambda)", "sigma", sigma);
    detail::check_argument<domains::positive>("exp_mod_normal(mu, sigma, lambda)", "lambda", lambda);
  }
  /// μ + σ z + e, z ~ normal(0, 1), e ~ exponential(λ).
  template <class G>
  static double draw(G& rng, double m, double s, double l) {
    const double z = std::normal_distribution<double>(0.0, 1.0)(rng);
    return m + s * z + std::exponential_distribution<double>(l)(rng);
  }
  static double mean(double m, double, double l) { return m + 1 / l; }
  static double variance(double, double s, double l) { return s * s + 1 / (l * l); }
};

/// Name ~ exp_mod_normal(mu, sigma, lambda), support ℝ.
template <fixed_string Name, detail::operand Mu, detail::operand Sigma, detail::operand Lambda,
          shape_tag Shape = scalar_shape>
auto exp_mod_normal(const Mu& mu, const Sigma& sigma, const Lambda& lambda, Shape shape = {}) {
  return detail::make_named<Name, exp_mod_normal_distribution>(shape, mu, sigma, lambda);
}
template <detail::operand Mu, detail::operand Sigma, detail::operand Lambda>
auto exp_mod_normal(const Mu& mu, const Sigma& sigma, const Lambda& lambda) {
  return detail::make_distribution<exp_mod_normal_distribution>(mu, sigma, lambda);
}

}  // namespace tyche
