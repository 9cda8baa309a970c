// tyche/compile/substitute.hpp — substitute<Target>(e, r): e with every subtree of type Target
// replaced by r. Used by do_ (an intervened variable's value becomes a constant); a general
// tree rewrite over the core's node kinds.
#pragma once
#include <tyche/config.hpp>
#include <tyche/operations/functions.hpp>
#include <tyche/operations/vectors.hpp>

#include <type_traits>

namespace tyche {

/// Replaces every subtree of type Target in e by r (leaves e unchanged where Target is absent).
template <class Target, class E, class R>
auto substitute(const E& wrapped, const R& r) {
  using N = detail::node_t<E>;
  const N n = detail::as_node(wrapped);
  if constexpr (std::is_same_v<N, Target>) {
    // A vector fixed to one number (do_<"v">(m, 0.5)): that number in each of its elements, so
    // that what reads the vector by element, gather or matvec finds as many values as before.
    if constexpr (is_vector_v<N> && !is_vector_v<detail::node_t<R>>) {
      if constexpr (extent_v<N> != dynamic_extent) return rep_vector<extent_v<N>>(r);
      else return rep_vector(r, n.size());
    } else {
      return detail::as_node(r);
    }
  } else if constexpr (kind_of<N> == node_kind::unary) {
    auto a = substitute<Target>(n.a, r);
    return unary_node<typename N::rule_type, decltype(a)>{{}, n.rule, a};
  } else if constexpr (kind_of<N> == node_kind::binary) {
    auto a = substitute<Target>(n.a, r);
    auto b = substitute<Target>(n.b, r);
    return binary_node<typename N::rule_type, decltype(a), decltype(b)>{{}, n.rule, a, b};
  } else if constexpr (kind_of<N> == node_kind::sum) {
    auto a = substitute<Target>(n.a, r);
    return sum_node<decltype(a)>{{}, a};
  } else if constexpr (kind_of<N> == node_kind::log_sum_exp) {
    auto a = substitute<Target>(n.a, r);
    return log_sum_exp_node<decltype(a)>{{}, a};
  } else if constexpr (kind_of<N> == node_kind::vector_op) {
    return rebuild_vector_op(n, [&](const auto& c) { return substitute<Target>(c, r); });
  } else if constexpr (kind_of<N> == node_kind::element) {
    auto v = substitute<Target>(n.v, r);
    using V = decltype(v);
    if constexpr (is_buffered_v<V>) return element_node<V>{{}, v, n.index};
    else return at(v, n.index);  // the vector became something else: take its element
  } else if constexpr (kind_of<N> == node_kind::matvec) {
    // X v with v replaced: the matvec node again where v is still a vector parameter, else the
    // product of X and the new vector (matvec decides, as when the model was written).
    auto v = substitute<Target>(n.v, r);
    if constexpr (std::is_same_v<decltype(v), std::remove_cvref_t<decltype(n.v)>>) return n;
    else return matvec(n.x, v);
  } else if constexpr (kind_of<N> == node_kind::param_element) {
    // Element k of a vector parameter that is replaced: element k of what replaces it.
    auto v = substitute<Target>(n.vector, r);
    if constexpr (std::is_same_v<decltype(v), typename N::vector_type>) return n;
    else return at(v, n.index);
  } else if constexpr (kind_of<N> == node_kind::param_gather) {
    // v[idx[i]] of a vector parameter that is replaced: the same indices into what replaces it.
    auto v = substitute<Target>(n.vector, r);
    if constexpr (std::is_same_v<decltype(v), typename N::vector_type>) return n;
    else return detail::gather_node<N::shift>(v, n.index, n.n, n.index_name);
  } else {
    return n;  // leaves
  }
}

}  // namespace tyche
