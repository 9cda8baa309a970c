// tyche/distributions/scaled_inv_chi_square.hpp — scaled_inv_chi_square(nu, s): ν s²/x ~
// chi_square(ν) (as in Stan; the inverse gamma with shape ν/2 and scale ν s²/2).
//   log p(x | ν, s) = (ν/2) log(ν/2) − log Γ(ν/2) + ν log s − (ν/2 + 1) log x − ν s²/(2x),
//   x > 0, ν > 0, s > 0.
// P(X ≤ x) = Q(ν/2, ν s²/(2x)) and P(X > x) = P(ν/2, ν s²/(2x)) (the regularised incomplete
// gamma functions, log_gamma_q / log_gamma_p).
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <limits>
#include <random>
#include <tuple>

namespace tyche {

template <class Nu, class S>
struct scaled_inv_chi_square_distribution : distribution<scaled_inv_chi_square_distribution<Nu, S>> {
  static constexpr const char* family = "scaled_inv_chi_square";
  Nu nu;
  S s;
  auto transform() const { return transforms::lower_bound<literal<0>>{}; }
  template <class X>
  auto log_prob(const X& x) const {
    const auto half_nu = lit<1, 2> * nu;
    return detail::total(half_nu * log(half_nu) - lgamma(half_nu) + nu * log(s) - (half_nu + lit<1>) * log(x) -
                         half_nu * square(s) / x);
  }
  /// log P(X ≤ x) and log P(X > x), summed over x: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored observations.
  template <class X>
  auto log_cdf(const X& x) const {
    return detail::total(log_gamma_q(lit<1, 2> * nu, lit<1, 2> * nu * square(s) / x));
  }
  template <class X>
  auto log_ccdf(const X& x) const {
    return detail::total(log_gamma_p(lit<1, 2> * nu, lit<1, 2> * nu * square(s) / x));
  }
  auto arguments() const { return std::tuple{nu, s}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<Nu, domains::positive>::ok,
                  "tyche::scaled_inv_chi_square(nu, s): nu must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    static_assert(argument_support_t<S, domains::positive>::ok,
                  "tyche::scaled_inv_chi_square(nu, s): s must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("scaled_inv_chi_square(nu, s)", "nu", nu);
    detail::check_argument<domains::positive>("scaled_inv_chi_square(nu, s)", "s", s);
  }
  /// ν s² / c, c ~ chi_square(ν).
  template <class G>
  static double draw(G& rng, double n, double sc) {
    return n * sc * sc / std::chi_squared_distribution<double>(n)(rng);
  }
  /// ν s²/(ν − 2) for ν > 2 (else infinite).
  static double mean(double n, double sc) {
    return n > 2 ? n * sc * sc / (n - 2) : std::numeric_limits<double>::infinity();
  }
  /// 2 ν² s⁴/((ν − 2)² (ν − 4)) for ν > 4 (else infinite).
  static double variance(double n, double sc) {
    return n > 4 ? 2 * n * n * sc * sc * sc * sc / ((n - 2) * (n - 2) * (n - 4))
                 : std::numeric_limits<double>::infinity();
  }
  static const char* observation_problem(double v) { return detail::positive_problem(v); }
};

/// Name ~ scaled_inv_chi_square(nu, s), support (0, ∞), sampled as log Name.
template <fixed_string Name, detail::operand Nu, detail::operand S, shape_tag Shape = scalar_shape>
auto scaled_inv_chi_square(const Nu& nu, const S& s, Shape shape = {}) {
  return detail::make_named<Name, scaled_inv_chi_square_distribution>(shape, nu, s);
}
template <detail::operand Nu, detail::operand S>
auto scaled_inv_chi_square(const Nu& nu, const S& s) {
  return detail::make_distribution<scaled_inv_chi_square_distribution>(nu, s);
}

}  // namespace tyche
