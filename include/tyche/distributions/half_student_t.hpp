// tyche/distributions/half_student_t.hpp — half_student_t(nu, sigma): student_t(nu, 0, sigma)
// folded onto x ≥ 0.
//   log p(x | ν, σ) = log 2 + log Γ((ν+1)/2) − log Γ(ν/2) − ½ log ν − ½ log π − log σ
//                     − (ν+1)/2 · log(1 + (x/σ)²/ν),   x ≥ 0, ν > 0, σ > 0.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <tuple>

namespace tyche {

template <class Nu, class Sigma>
struct half_student_t_distribution : distribution<half_student_t_distribution<Nu, Sigma>> {
  static constexpr const char* family = "half_student_t";
  Nu nu;
  Sigma sigma;
  auto transform() const { return transforms::lower_bound<literal<0>>{}; }
  template <class X>
  auto log_prob(const X& x) const {
    const auto half_nu = lit<1, 2> * nu;
    const auto half_nu_plus_half = half_nu + lit<1, 2>;
    return detail::total(lgamma(half_nu_plus_half) - lgamma(half_nu) - lit<1, 2> * log(nu) -
                         log(sigma) - half_nu_plus_half * log1p(square(x / sigma) / nu) +
                         (detail::log_two - 0.5 * detail::log_pi));
  }
  /// log P(X ≤ x) and log P(X > x), summed over x: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored observations.
  /// P(X > x) = I_u(ν/2, 1/2) with u = ν/(ν + z²), z = x/σ, and 1 − u = z²/(ν + z²) given
  /// beside it (a small z keeps its digits).
  template <class X>
  auto log_cdf(const X& x) const {
    return detail::total(tail<true>(x));
  }
  template <class X>
  auto log_ccdf(const X& x) const {
    return detail::total(tail<false>(x));
  }
  template <bool Upper, class X>
  auto tail(const X& x) const {
    const auto z2 = square(x / sigma);
    return detail::log_inc_beta_of<Upper>(lit<1, 2> * nu, lit<1, 2>, nu / (nu + z2), z2 / (nu + z2),
                                          Upper ? "half_student_t_lcdf" : "half_student_t_lccdf");
  }
  auto arguments() const { return std::tuple{nu, sigma}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<Nu, domains::positive>::ok,
                  "tyche::half_student_t(nu, sigma): nu must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    static_assert(argument_support_t<Sigma, domains::positive>::ok,
                  "tyche::half_student_t(nu, sigma): sigma must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("half_student_t(nu, sigma)", "nu", nu);
    detail::check_argument<domains::positive>("half_student_t(nu, sigma)", "sigma", sigma);
  }
  template <class G>
  static double draw(G& rng, double n, double s) {
    return s * std::fabs(std::student_t_distribution<double>(n)(rng));
  }
  /// 2σ √(ν/π) Γ((ν+1)/2) / (Γ(ν/2) (ν − 1)) for ν > 1 (else infinite).
  static double mean(double n, double s) {
    if (n <= 1) return std::numeric_limits<double>::infinity();
    return 2 * s * std::sqrt(n / std::numbers::pi) *
           std::exp(std::lgamma((n + 1) / 2) - std::lgamma(n / 2)) / (n - 1);
  }
  /// σ² ν/(ν − 2) − mean² for ν > 2 (else infinite; undefined, NaN, for ν ≤ 1).
  static double variance(double n, double s) {
    if (n > 2) {
      const double m = mean(n, s);
      return s * s * n / (n - 2) - m * m;
    }
    return n > 1 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  }
  static const char* observation_problem(double v) { return detail::nonnegative_problem(v); }
  /// P(X ≤ 0) = 0: a left-censored observation at 0 has no probability (log_densities.hpp's lcdf).
  static const char* lcdf_problem(double v) {
    return v == 0 ? "is 0, the lower bound of the support, where P(Y <= y) = 0 for every parameter value" : nullptr;
  }
};

/// Name ~ half-Student-t(nu, sigma), support (0, ∞), sampled as log Name.
template <fixed_string Name, detail::operand Nu, detail::operand Sigma, shape_tag Shape = scalar_shape>
auto half_student_t(const Nu& nu, const Sigma& sigma, Shape shape = {}) {
  return detail::make_named<Name, half_student_t_distribution>(shape, nu, sigma);
}
template <detail::operand Nu, detail::operand Sigma>
auto half_student_t(const Nu& nu, const Sigma& sigma) {
  return detail::make_distribution<half_student_t_distribution>(nu, sigma);
}

}  // namespace tyche
