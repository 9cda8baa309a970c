// tyche/compile/stream.hpp — stream_matvecs(e): every matvec X·v whose type occurs once in e, and
// which is not read as whole buffer (at(Xv, k)), becomes a streamed matvec: computed row by row
// in the loop of the reduction that consumes it, with its adjoint added to v's gradient while the
// row is in cache. A buffered matvec reads X twice per gradient (Xv forward, Xᵀ·adjoint in
// reverse) and stores two vectors of its length; a streamed one reads X once and stores nothing.
// Applied by compile() last (docs/design/expression-core.md, "Streamed matvec").
#pragma once
#include <tyche/config.hpp>
#include <tyche/compile/graph.hpp>
#include <tyche/operations/functions.hpp>

#include <cstddef>
#include <type_traits>

namespace tyche::detail {

template <class M, class Root>
inline constexpr std::size_t occurrences_v = []<class... Es>(meta::list<Es...>) {
  return (std::size_t{0} + ... + (std::is_same_v<typename Es::node, M> ? 1 : 0));
}(outer_occurrences_t<Root>{});

template <class Root>
inline constexpr bool has_matvec_v = []<class... Es>(meta::list<Es...>) {
  return ((kind_of<typename Es::node> == node_kind::matvec) || ...);
}(outer_occurrences_t<Root>{});

template <class Root, class N>
auto stream_node(const N& n) {
  if constexpr (kind_of<N> == node_kind::matvec) {
    using V = std::remove_cvref_t<decltype(n.v)>;
    using X = typename N::matrix_type;
    if constexpr (!is_streamed_v<N> && occurrences_v<N, Root> == 1) return matvec_node<V, true, X>{{}, n.x, n.v};
    else return n;
  } else if constexpr (kind_of<N> == node_kind::unary) {
    auto a = stream_node<Root>(n.a);
    return unary_node<typename N::rule_type, decltype(a)>{{}, n.rule, a};
  } else if constexpr (kind_of<N> == node_kind::binary) {
    auto a = stream_node<Root>(n.a);
    auto b = stream_node<Root>(n.b);
    return binary_node<typename N::rule_type, decltype(a), decltype(b)>{{}, n.rule, a, b};
  } else if constexpr (kind_of<N> == node_kind::sum) {
    auto a = stream_node<Root>(n.a);
    return sum_node<decltype(a)>{{}, a};
  } else if constexpr (kind_of<N> == node_kind::log_sum_exp) {
    auto a = stream_node<Root>(n.a);
    return log_sum_exp_node<decltype(a)>{{}, a};
  } else if constexpr (kind_of<N> == node_kind::vector_op) {
    return rebuild_vector_op(n, [&](const auto& c) { return stream_node<Root>(c); });
  } else {
    return n;  // leaves, residual_squares, and element (at(Xv, k) reads the buffer)
  }
}

/// e with its matvecs streamed where that is exact (see the top of this file).
template <class E>
auto stream_matvecs(const E& e) {
  if constexpr (has_matvec_v<E>) return stream_node<E>(e);
  else return e;
}

}  // namespace tyche::detail
