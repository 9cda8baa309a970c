// tyche/distributions/flat.hpp — flat<"x">(...): an improper uniform prior (no prior term) on
// the real line or on a support given by bounds, e.g. for regression coefficients with "no
// prior" or a scale with a flat prior on (0, ∞) (Stan: a parameter with no sampling statement).
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>
#include <tyche/transforms/matrix.hpp>
#include <tyche/transforms/simplex.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>

namespace tyche {

namespace detail {
inline void check_matrix_order(std::size_t k, std::size_t least, const char* what) {
  if (k < least)
    throw std::invalid_argument(std::string("tyche::") + what + "(K): K = " + std::to_string(k) +
                                " must be at least " + std::to_string(least));
}
}  // namespace detail

/// Supports for flat(): the real line, (lower, ∞), (−∞, upper), (lower, upper), the simplex,
/// the unit sphere, and the matrix supports below. Bounds may be
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
/// K × K matrices (a variable's value is its K·K entries, row major; θ holds the free
/// coordinates, transforms/matrix.hpp): Cholesky factors of correlation matrices (K ≥ 2) and
/// of covariance matrices, covariance matrices, correlation matrices (K ≥ 2).
inline transforms::cholesky_factor_corr cholesky_factor_corr(std::size_t k) {
  detail::check_matrix_order(k, 2, "cholesky_factor_corr");
  return {k};
}
inline transforms::cholesky_factor_cov cholesky_factor_cov(std::size_t k) {
  detail::check_matrix_order(k, 1, "cholesky_factor_cov");
  return {k};
}
inline transforms::cov_matrix cov_matrix(std::size_t k) {
  detail::check_matrix_order(k, 1, "cov_matrix");
  return {k};
}
inline transforms::corr_matrix corr_matrix(std::size_t k) {
  detail::check_matrix_order(k, 2, "corr_matrix");
  return {k};
}
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
/// A matrix support takes no shape: `flat<"Sigma">(cov_matrix(3))` has 6 coordinates in θ and
/// the 9 entries of Sigma as its value.
template <fixed_string Name, class Support = transforms::identity, shape_tag Shape = scalar_shape>
  requires(!shape_tag<Support>)
auto flat(Support support = {}, Shape shape = {}) {
  if constexpr (requires { Support::matrix_valued; }) {
    static_assert(std::is_same_v<Shape, scalar_shape>,
                  "tyche::flat<\"name\">(support, shape): a matrix support (cholesky_factor_corr(K), "
                  "cov_matrix(K), ...) has its size already; give no shape");
    return detail::make_random_variable<Name>(flat_distribution<Support>{{}, support},
                                              dynamic_shape{support.parameter_size()});
  } else {
    return detail::make_random_variable<Name>(flat_distribution<Support>{{}, support}, shape);
  }
}
template <fixed_string Name, shape_tag Shape>
auto flat(Shape shape) {
  return detail::make_random_variable<Name>(flat_distribution<transforms::identity>{{}, {}}, shape);
}

}  // namespace tyche
