// tyche/distributions/student_t.hpp — student_t(nu, mu, sigma).
//   log p(x | ν, μ, σ) = log Γ((ν+1)/2) − log Γ(ν/2) − ½ log ν − ½ log π − log σ
//                        − (ν+1)/2 · log(1 + ((x − μ)/σ)²/ν),   x ∈ ℝ, ν > 0, σ > 0.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <limits>
#include <random>
#include <tuple>

namespace tyche {

template <class Nu, class Mu, class Sigma>
struct student_t_distribution : distribution<student_t_distribution<Nu, Mu, Sigma>> {
  static constexpr const char* family = "student_t";
  Nu nu;
  Mu mu;
  Sigma sigma;
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    const auto half_nu = lit<1, 2> * nu;
    const auto half_nu_plus_half = half_nu + lit<1, 2>;
    return detail::total(lgamma(half_nu_plus_half) - lgamma(half_nu) - lit<1, 2> * log(nu) -
                         log(sigma) - half_nu_plus_half * log1p(square((x - mu) / sigma) / nu) -
                         0.5 * detail::log_pi);
  }
  /// log P(X ≤ x) and log P(X > x), summed over x: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored observations.
  /// Through the regularised incomplete beta function (rules::student_t_lcdf).
  template <class X>
  auto log_cdf(const X& x) const {
    return detail::total(detail::student_t_lcdf<false>(nu, (x - mu) / sigma));
  }
  template <class X>
  auto log_ccdf(const X& x) const {
    return detail::total(detail::student_t_lcdf<true>(nu, (x - mu) / sigma));
  }
  auto arguments() const { return std::tuple{nu, mu, sigma}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<Nu, domains::positive>::ok,
                  "tyche::student_t(nu, mu, sigma): nu must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    static_assert(argument_support_t<Sigma, domains::positive>::ok,
                  "tyche::student_t(nu, mu, sigma): sigma must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("student_t(nu, mu, sigma)", "nu", nu);
    detail::check_argument<domains::positive>("student_t(nu, mu, sigma)", "sigma", sigma);
  }
  template <class G>
  static double draw(G& rng, double n, double m, double s) {
    return m + s * std::student_t_distribution<double>(n)(rng);
  }
  /// μ for ν > 1 (else undefined: NaN).
  static double mean(double n, double m, double) {
    return n > 1 ? m : std::numeric_limits<double>::quiet_NaN();
  }
  /// σ² ν/(ν − 2) for ν > 2, infinite for 1 < ν ≤ 2, undefined (NaN) for ν ≤ 1.
  static double variance(double n, double, double s) {
    if (n > 2) return s * s * n / (n - 2);
    return n > 1 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  }
};

/// Name ~ student_t(nu, mu, sigma).
template <fixed_string Name, detail::operand Nu, detail::operand Mu, detail::operand Sigma,
          shape_tag Shape = scalar_shape>
auto student_t(const Nu& nu, const Mu& mu, const Sigma& sigma, Shape shape = {}) {
  return detail::make_named<Name, student_t_distribution>(shape, nu, mu, sigma);
}
template <detail::operand Nu, detail::operand Mu, detail::operand Sigma>
auto student_t(const Nu& nu, const Mu& mu, const Sigma& sigma) {
  return detail::make_distribution<student_t_distribution>(nu, mu, sigma);
}

}  // namespace tyche
