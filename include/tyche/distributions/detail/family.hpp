// tyche/distributions/detail/family.hpp — what every distribution header uses: the base class
// (distributions/distribution.hpp), the transforms from the unconstrained line to a support
// given by bounds, building a named random variable (distributions/random_variable.hpp) or an
// unnamed distribution from user arguments, constants, and the checks of observed values that
// families with the same support share. (The sum over the elements of an elementwise log
// density, detail::total, is in operations/functions.hpp, shared with the transforms'
// log-Jacobians.)
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/distribution.hpp>
#include <tyche/distributions/random_variable.hpp>
#include <tyche/operations/functions.hpp>
#include <tyche/transforms/bounds.hpp>

#include <cmath>
#include <cstddef>
#include <type_traits>

namespace tyche::detail {

inline constexpr double log_two = 0.69314718055994530942;
inline constexpr double log_pi = 1.14472988584940017414;
inline constexpr double half_log_two_pi = 0.91893853320467274178;  // ½ log(2π)

// What observe(y) says of a value y outside a family's support (nullptr when y is inside): each
// family's observation_problem, for the supports several families share.
inline const char* count_problem(double v) {
  return v < 0 || v != std::floor(v) ? "is not a non-negative integer count" : nullptr;
}
inline const char* category_problem(double v) {
  return v < 1 || v != std::floor(v) ? "is not a category (an integer >= 1)" : nullptr;
}
inline const char* binary_problem(double v) { return v == 0.0 || v == 1.0 ? nullptr : "is not 0 or 1"; }
inline const char* nonnegative_problem(double v) { return v < 0 ? "is negative (support x ≥ 0)" : nullptr; }
inline const char* positive_problem(double v) { return v <= 0 ? "is not positive (support x > 0)" : nullptr; }

/// The shape a random variable takes from its arguments when none is given: the size of its
/// vector arguments (static if one of them has a static size), or a scalar.
template <class... Nodes>
auto shape_from(const Nodes&... nodes) {
  constexpr bool any_vector = (is_vector_v<Nodes> || ...);
  if constexpr (!any_vector) {
    return scalar_shape{};
  } else {
    constexpr std::size_t e = [] {
      std::size_t found = dynamic_extent;
      ((is_vector_v<Nodes> && extent_v<Nodes> != dynamic_extent ? (found = extent_v<Nodes>, 0) : 0), ...);
      return found;
    }();
    if constexpr (e != dynamic_extent) {
      return static_shape<e>{};
    } else {
      std::size_t n = 0;
      auto take = [&](const auto& node) {
        if constexpr (is_vector_v<std::remove_cvref_t<decltype(node)>>) n = node.size();
      };
      (take(nodes), ...);
      return dynamic_shape{n};
    }
  }
}

/// Dist<node_t<Args>...> from user arguments (numbers, expressions, random variables).
template <template <class...> class Dist, class... Args>
auto make_distribution(const Args&... args) {
  return Dist<node_t<Args>...>{{}, as_node(args)...};
}

/// The named random variable Name ~ Dist(args...), of the given shape (or of the arguments').
template <fixed_string Name, template <class...> class Dist, class Shape, class... Args>
auto make_named(Shape shape, const Args&... args) {
  auto d = make_distribution<Dist>(args...);
  if constexpr (std::is_same_v<Shape, scalar_shape>) {
    return make_random_variable<Name>(d, shape_from(as_node(args)...));
  } else {
    return make_random_variable<Name>(d, shape);
  }
}

}  // namespace tyche::detail
