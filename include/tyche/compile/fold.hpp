// tyche/compile/fold.hpp — evaluates, once at model construction, every subexpression that
// depends on data and constants only (compile/constant.hpp), and replaces it by its value: a
// run-time constant for a scalar, a data vector (stored in a fold_storage owned by the program)
// for a vector. Evaluations then never recompute them. Sums are then rewritten to take work out
// of their loops (compile/reduce_sum.hpp).
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/arithmetic.hpp>
#include <tyche/compile/constant.hpp>
#include <tyche/compile/reduce_sum.hpp>
#include <tyche/core/leaves.hpp>
#include <tyche/core/nodes.hpp>
#include <tyche/operations/linear.hpp>

#include <type_traits>

namespace tyche::detail {

/// a / d where d depends on no parameter.
template <class N>
inline constexpr bool divides_by_constant_v = [] {
  if constexpr (kind_of<N> == node_kind::binary) {
    return std::is_same_v<typename N::rule_type, rules::divide> &&
           !depends_on_params_v<meta::at<1, children_t<N>>>;
  } else {
    return false;
  }
}();

/// a / s for a vector a and a scalar s that depends on parameters: a × (1/s) with 1/s a scalar
/// node, computed once per evaluation instead of one divide per element (normal(mu, sigma) over
/// a vector of data divides every residual by sigma).
template <class N>
inline constexpr bool divides_vector_by_scalar_v = [] {
  if constexpr (kind_of<N> == node_kind::binary) {
    return std::is_same_v<typename N::rule_type, rules::divide> && is_vector_v<N> &&
           !is_vector_v<meta::at<1, children_t<N>>>;
  } else {
    return false;
  }
}();

/// Folds n; with Reduce, also rewrites every sum (compile/reduce_sum.hpp) and puts every
/// Line in normal form once, at its root (InLine: n's parent reads n into its own Line).
template <bool Reduce = true, bool InLine = false, class N>
auto fold(const N& n, fold_storage& storage) {
  if constexpr (is_leaf_v<N>) {
    return n;
  } else if constexpr (!depends_on_params_v<N>) {
    if constexpr (is_vector_v<N>) {
      double* values = storage.allocate(n.size());
      evaluate_constant_vector(n, values);
      return data_vector<>{{}, values, n.size()};
    } else {
      return constant{evaluate_constant(n)};
    }
  } else if constexpr (kind_of<N> == node_kind::unary) {
    constexpr bool line = forms::is_line_op_v<N>;  // −a
    auto a = fold<Reduce, line>(n.a, storage);
    const unary_node<typename N::rule_type, decltype(a)> r{{}, n.rule, a};
    if constexpr (Reduce && line && !InLine) return line_normal_form<decltype(r), true>(r);
    else return r;
  } else if constexpr (divides_by_constant_v<N> || divides_vector_by_scalar_v<N>) {
    // a / d for d free of parameters: a × (1/d), with 1/d computed here, once; a / s for a
    // vector a: a × (1/s), one divide per evaluation. A multiply is several times cheaper than a
    // divide.
    auto a = fold<Reduce>(n.a, storage);
    auto inv = fold<Reduce>(detail::make_unary<rules::inverse>(n.b), storage);
    return binary_node<rules::multiply, decltype(a), decltype(inv)>{{}, {}, a, inv};
  } else if constexpr (kind_of<N> == node_kind::binary) {
    constexpr bool line = forms::is_line_op_v<N>;
    auto a = fold<Reduce, line>(n.a, storage);
    auto b = fold<Reduce, line>(n.b, storage);
    // Folding may have made constants of subtrees: merge them into the Line
    // (operations/linear.hpp), once per Line, at its root. (Part of the rewrites:
    // compile_without_rewrites keeps the tree as built.)
    using R = binary_node<typename N::rule_type, decltype(a), decltype(b)>;
    const R r{{}, n.rule, a, b};
    if constexpr (Reduce && !(InLine && forms::is_line_op_v<R>)) return line_normal_form<R, true>(r);
    else return r;
  } else if constexpr (kind_of<N> == node_kind::sum) {
    auto a = fold<Reduce>(n.a, storage);
    if constexpr (Reduce) return reduce_sum(a, storage);
    else return sum_node<decltype(a)>{{}, a};
  } else if constexpr (kind_of<N> == node_kind::log_sum_exp) {
    auto a = fold<Reduce>(n.a, storage);
    return log_sum_exp_node<decltype(a)>{{}, a};
  } else if constexpr (kind_of<N> == node_kind::vector_op) {
    // An op that owns what it points into (a scan's step program) hands it to the storage and
    // becomes a view of it.
    if constexpr (requires { n.op.release_into(storage); })
      return rebuild_vector_op_as(n.op.release_into(storage), n, [&](const auto& c) { return fold<Reduce>(c, storage); });
    else
      return rebuild_vector_op(n, [&](const auto& c) { return fold<Reduce>(c, storage); });
  } else if constexpr (kind_of<N> == node_kind::element) {
    auto v = fold<Reduce>(n.v, storage);
    return element_node<decltype(v)>{{}, v, n.index};
  } else {
    return n;  // matvec: a data matrix and a parameter vector, nothing to fold
  }
}

}  // namespace tyche::detail
