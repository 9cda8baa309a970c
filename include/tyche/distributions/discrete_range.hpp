// tyche/distributions/discrete_range.hpp — discrete_range(lower, upper), for observations only.
// The discrete uniform distribution on the integers lower, …, upper (Stan Functions Reference,
// "Discrete range distribution"):
//   log p(y | lower, upper) = −log(upper − lower + 1),   y ∈ {lower, …, upper},
// lower ≤ upper integers, numbers or data (a vector of bounds: one pair per observation); the
// log density depends on the data only. observe throws, naming the index and the value, for a y
// that is not an integer or lies outside its bounds, and for bounds that are not integers or
// cross (lower > upper). Draws: uniform on the integers of the bounds.
// `discrete_range_lpmf(y, lower, upper)` for free terms.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/binomial.hpp>
#include <tyche/distributions/detail/family.hpp>
#include <tyche/scalar/format.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>

namespace tyche {

namespace detail {
inline const char* integer_problem(double v) {
  return !std::isfinite(v) || v != std::floor(v) ? "is not an integer" : nullptr;
}
}  // namespace detail

template <class Lower, class Upper>
struct discrete_range_distribution : distribution<discrete_range_distribution<Lower, Upper>> {
  static constexpr const char* family = "discrete_range";
  Lower lower;
  Upper upper;
  template <class X>
  auto log_prob(const X& y) const {
    // 0·y: the density does not depend on y, but a vector y counts the term once per element.
    return detail::total(lit<0> * y - log(upper - lower + lit<1>));
  }
  auto arguments() const { return std::tuple{lower, upper}; }
  auto check_supports() const {
    static_assert(detail::known_values_v<Lower> && detail::known_values_v<Upper>,
                  "tyche::discrete_range(lower, upper): lower and upper must be integers given as numbers or data "
                  "(data(v)), not expressions of parameters");
    const std::size_t nl = detail::known_size(lower), nu = detail::known_size(upper);
    const std::size_t count = detail::check_argument_sizes("discrete_range(lower, upper)", {"lower", "upper"}, {nl, nu});
    for (std::size_t i = 0; i < count; ++i) {
      const double l = detail::known_value(lower, nl == 1 ? 0 : i), u = detail::known_value(upper, nu == 1 ? 0 : i);
      const std::string at = "[" + std::to_string(i + 1) + "]";
      if (detail::integer_problem(l) != nullptr)
        throw std::invalid_argument("tyche::discrete_range(lower, upper): lower" + at + " = " +
                                    detail::format_number(l) + " is not an integer");
      if (detail::integer_problem(u) != nullptr)
        throw std::invalid_argument("tyche::discrete_range(lower, upper): upper" + at + " = " +
                                    detail::format_number(u) + " is not an integer");
      if (l > u)
        throw std::invalid_argument("tyche::discrete_range(lower, upper): lower" + at + " = " +
                                    detail::format_number(l) + " exceeds upper" + at + " = " + detail::format_number(u));
    }
  }
  /// Each y (an integer, see distribution::observe) inside its bounds.
  template <class Y>
  void check_observed(const Y& y) const {
    if constexpr (detail::known_values_v<Y>) {
      const std::size_t ny = detail::known_size(y), nl = detail::known_size(lower), nu = detail::known_size(upper);
      detail::check_argument_sizes("discrete_range(lower, upper).observe(y)", {"lower", "upper"}, {nl, nu}, ny);
      for (std::size_t i = 0; i < ny; ++i) {
        const double v = detail::known_value(y, i);
        const double l = detail::known_value(lower, nl == 1 ? 0 : i), u = detail::known_value(upper, nu == 1 ? 0 : i);
        if (v < l || v > u)
          throw std::invalid_argument("tyche::discrete_range(...).observe(y): y[" + std::to_string(i + 1) + "] = " +
                                      detail::format_number(v) + " is outside [" + detail::format_number(l) + ", " +
                                      detail::format_number(u) + "]");
      }
    }
  }
  template <class G>
  static double draw(G& rng, double l, double u) {
    return static_cast<double>(std::uniform_int_distribution<long long>(std::llround(l), std::llround(u))(rng));
  }
  static double mean(double l, double u) { return 0.5 * (l + u); }
  static double variance(double l, double u) { return ((u - l + 1) * (u - l + 1) - 1) / 12.0; }
  static const char* observation_problem(double v) { return detail::integer_problem(v); }
};

/// The distribution discrete_range(lower, upper), to observe integers between the bounds:
/// `discrete_range(1, 6).observe(data(rolls))`.
template <detail::operand Lower, detail::operand Upper>
auto discrete_range(const Lower& lower, const Upper& upper) {
  return detail::make_distribution<discrete_range_distribution>(lower, upper);
}

TYCHE_OBSERVED_ONLY_FAMILY(discrete_range)

}  // namespace tyche
