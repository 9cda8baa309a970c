// tyche/distributions/flat.hpp — flat<"x">(...): an improper uniform prior (no prior term) on
// the real line or on a support given by bounds, e.g. for regression coefficients with "no
// prior" or a scale with a flat prior on (0, ∞) (Stan: a parameter with no sampling statement).
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>
#include <tyche/transforms/simplex.hpp>

#include <tuple>

namespace tyche {

/// Supports for flat(): the real line, (lower, ∞), (−∞, upper), (lower, upper), the simplex and
/// the unit sphere. Bounds may be
/// numbers or expressions of other parameters.
inline transforms::identity real_line() { return {}; }
template <detail::operand L>
auto greater_than(const L& lower) {
  return transforms::lower_bound<detail::node_t<L>>{detail::as_node(lower)};
}
inline transforms::lower_bound<literal<0>> positive() { return {}; }
/// Vectors of positive values summing to 1 (give the variable a shape).
inline transforms::simplex probability_simplex() { return {}; }
/// Vectors of Euclidean norm 1 (give the variable a shape).
inline transforms::unit_vector unit_sphere() { return {}; }
template <detail::operand U>
auto less_than(const U& upper) {
  return transforms::upper_bound<detail::node_t<U>>{detail::as_node(upper)};
}
template <detail::operand L, detail::operand U>
auto between(const L& lower, const U& upper) {
  return transforms::interval<detail::node_t<L>, detail::node_t<U>>{detail::as_node(lower),
                                                                    detail::as_node(upper)};
}

template <class Transform>
struct flat_distribution : distribution<flat_distribution<Transform>> {
  static constexpr const char* family = "flat";
  Transform support;
  auto transform() const { return support; }
  template <class X>
  auto log_prob(const X&) const { return lit<0>; }
  auto arguments() const { return std::tuple{}; }
};

/// An improper flat prior on the given support (default: the real line):
/// `flat<"beta">(shape<7>)`, `flat<"sigma">(positive())`, `flat<"p">(between(0.0, 1.0))`.
template <fixed_string Name, class Support = transforms::identity, shape_tag Shape = scalar_shape>
  requires(!shape_tag<Support>)
auto flat(Support support = {}, Shape shape = {}) {
  return detail::make_random_variable<Name>(flat_distribution<Support>{{}, support}, shape);
}
template <fixed_string Name, shape_tag Shape>
auto flat(Shape shape) {
  return detail::make_random_variable<Name>(flat_distribution<transforms::identity>{{}, {}}, shape);
}

}  // namespace tyche
