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
#include <tyche/scalar/format.hpp>
#include <tyche/transforms/bounds.hpp>

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace tyche::detail {

inline constexpr double log_two = 0.69314718055994530942;
inline constexpr double log_pi = 1.14472988584940017414;
inline constexpr double log_two_over_pi = -0.45158270528945486473;  // log(2/π)
inline constexpr double half_log_two_pi = 0.91893853320467274178;  // ½ log(2π)

// What observe(y) says of a value y outside a family's support (nullptr when y is inside): each
// family's observation_problem, for the supports several families share.
inline const char* count_problem(double v) {
  return v < 0 || v != std::floor(v) ? "is not a non-negative integer count" : nullptr;
}
inline const char* category_problem(double v) {
  return v < 1 || v != std::floor(v) ? "is not a category (an integer >= 1: categories count from 1, as in Stan)"
                                      : nullptr;
}
inline const char* binary_problem(double v) { return v == 0.0 || v == 1.0 ? nullptr : "is not 0 or 1"; }
inline const char* nonnegative_problem(double v) { return v < 0 ? "is negative (support x ≥ 0)" : nullptr; }
inline const char* positive_problem(double v) { return v <= 0 ? "is not positive (support x > 0)" : nullptr; }

/// Value i of a node whose values are known when a model is built (a number, a constant, data;
/// a scalar for every i), in *out; false for any other node (an expression of parameters).
template <class N>
bool known_value(const N& n, std::size_t i, double* out) {
  if constexpr (kind_of<N> == node_kind::literal) {
    *out = N::value;
    return true;
  } else if constexpr (kind_of<N> == node_kind::constant) {
    *out = n.value;
    return true;
  } else if constexpr (kind_of<N> == node_kind::data_vector) {
    if (i >= n.size()) return false;
    *out = n.ptr[i];
    return true;
  } else {
    (void)n, (void)i, (void)out;
    return false;
  }
}

/// observe(y) of a family whose support is bounded by an argument (uniform's a and b, pareto's
/// y_min): where y and the bound are known when the model is built, every y[i] is checked now,
/// and one outside throws std::invalid_argument naming the family, the index, the value and the
/// bound. (Where either depends on parameters the family's observed_log_prob is −∞ outside
/// instead: support_guard.)
template <class Y, class B>
void check_observed_bound(const char* family, const Y& y, const B& bound, const char* bound_name, bool lower,
                          bool censored_there = false) {
  const std::size_t ny = operand_size(y), nb = operand_size(bound);
  const std::size_t n = ny > nb ? ny : nb;
  for (std::size_t i = 0; i < n; ++i) {
    double yi = 0, bi = 0;
    if (!known_value(y, is_vector_v<Y> ? i : 0, &yi) || !known_value(bound, is_vector_v<B> ? i : 0, &bi)) return;
    if (lower ? !(yi >= bi) : !(yi <= bi)) {
      std::string text = "tyche::";
      text += family;
      text += "(...).observe(y): y[" + std::to_string(i + 1) + "] = " + format_number(yi) + (lower ? " is below " : " is above ");
      text += bound_name;
      if constexpr (is_vector_v<B>) text += "[" + std::to_string(i + 1) + "]";
      text += " = " + format_number(bi) + ", outside the family's support";
      throw std::invalid_argument(text);
    }
    if (censored_there && yi == bi) {  // P(Y ≤ lower bound) = 0, P(Y > upper bound) = 0
      std::string text = "tyche::";
      text += family;
      text += "(...).observe(y): y[" + std::to_string(i + 1) + "] = " + format_number(yi) + " is the support's " +
              (lower ? "lower bound " : "upper bound ") + bound_name;
      if constexpr (is_vector_v<B>) text += "[" + std::to_string(i + 1) + "]";
      text += lower ? ": left-censored there, P(Y <= y) = 0 for every parameter value"
                    : ": right-censored there, P(Y > y) = 0 for every parameter value";
      throw std::invalid_argument(text);
    }
  }
}

/// A node whose values check_observed_bound can read when the model is built.
template <class N>
inline constexpr bool known_leaf_v = kind_of<N> == node_kind::literal || kind_of<N> == node_kind::constant ||
                                     kind_of<N> == node_kind::data_vector;

/// The log density lp of observation y with its guard for the support bound B: + Σ log_step(d)
/// (0 where every d ≥ 0, −∞ elsewhere) with d = y − lower bound or upper bound − y, so that a
/// parameter value that leaves an observation outside the support has density 0 (Stan's
/// uniform_lpdf, pareto_lpdf). lp itself where y and the bound are numbers or data, which
/// check_observed_bound checked when the model was built — unless Always (a mixture's component,
/// whose observations may lie outside it). A sum over y's elements stays one
/// (pointwise_log_density takes its elements apart).
template <class Y, class B, bool Always = false, class Lp, class D>
auto support_guard(const Lp& lp, const D& d) {
  using L = node_t<Lp>;
  if constexpr (!Always && known_leaf_v<node_t<Y>> && known_leaf_v<node_t<B>>) return as_node(lp);
  else if constexpr (kind_of<L> == node_kind::sum && is_vector_v<node_t<D>>) return sum(as_node(lp).a + log_step(d));
  else return as_node(lp) + total(log_step(d));
}

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
