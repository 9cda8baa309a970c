// tyche/distributions/chi_square.hpp — chi_square(nu).
//   log p(x | ν) = −(ν/2) log 2 − log Γ(ν/2) + (ν/2 − 1) log x − x/2,   x > 0, ν > 0.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <random>
#include <tuple>

namespace tyche {

template <class Nu>
struct chi_square_distribution : distribution<chi_square_distribution<Nu>> {
  static constexpr const char* family = "chi_square";
  Nu nu;
  auto transform() const { return transforms::lower_bound<literal<0>>{}; }
  template <class X>
  auto log_prob(const X& x) const {
    const auto half_nu = lit<1, 2> * nu;
    return detail::total((half_nu - lit<1>) * log(x) - lit<1, 2> * x - half_nu * detail::log_two -
                         lgamma(half_nu));
  }
  /// log P(X ≤ x) and log P(X > x), summed over x: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored observations.
  /// (P(ν/2, x/2).)
  template <class X>
  auto log_cdf(const X& x) const {
    return detail::total(log_gamma_p(lit<1, 2> * nu, lit<1, 2> * x));
  }
  template <class X>
  auto log_ccdf(const X& x) const {
    return detail::total(log_gamma_q(lit<1, 2> * nu, lit<1, 2> * x));
  }
  auto arguments() const { return std::tuple{nu}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<Nu, domains::positive>::ok,
                  "tyche::chi_square(nu): nu must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("chi_square(nu)", "nu", nu);
  }
  template <class G>
  static double draw(G& rng, double n) { return std::chi_squared_distribution<double>(n)(rng); }
  static double mean(double n) { return n; }
  static double variance(double n) { return 2 * n; }
  static const char* observation_problem(double v) { return detail::positive_problem(v); }
};

/// Name ~ chi_square(nu), support (0, ∞), sampled as log Name.
template <fixed_string Name, detail::operand Nu, shape_tag Shape = scalar_shape>
auto chi_square(const Nu& nu, Shape shape = {}) {
  return detail::make_named<Name, chi_square_distribution>(shape, nu);
}
template <detail::operand Nu>
auto chi_square(const Nu& nu) {
  return detail::make_distribution<chi_square_distribution>(nu);
}

}  // namespace tyche
