// tyche/compile/graph.hpp — the compile-time shape of an evaluation: which nodes get a slot, in
// which order they are evaluated, which occurrences are shared, and which reductions can fold
// their reverse pass into the forward pass. All of it is computed from the expression's type.
// See docs/design/expression-core.md.
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/arithmetic.hpp>
#include <tyche/core/expr.hpp>
#include <tyche/core/meta.hpp>

#include <cmath>
#include <type_traits>
#include <utility>

namespace tyche::detail {

/// One occurrence of node type N at path P in the expression tree.
template <class N, class P>
struct entry {
  using node = N;
  using path = P;
};

/// Two occurrences share one slot when they are the same node: the same type, and either the
/// type is shareable (no run-time payload below it) or it is the very same occurrence.
template <class E1, class E2>
struct same_slot
    : std::bool_constant<std::is_same_v<typename E1::node, typename E2::node> &&
                         (shareable_v<typename E1::node> ||
                          std::is_same_v<typename E1::path, typename E2::path>)> {};

/// Nodes evaluated once per evaluation: scalar operations, reductions, matvec. Leaves need no
/// slot (they are read in place) and elementwise nodes live in their reduction's loop.
template <class N>
inline constexpr bool has_outer_slot_v = !is_leaf_v<N> && !is_elementwise_v<N>;

template <class N, class P, class Seq = std::make_index_sequence<children_t<N>::size>>
struct outer_occurrences;
template <class N, class P, std::size_t... I>
struct outer_occurrences<N, P, std::index_sequence<I...>> {
  using below =
      meta::concat<typename outer_occurrences<meta::at<I, children_t<N>>, meta::push<P, I>>::type...>;
  using type = std::conditional_t<has_outer_slot_v<N>, meta::concat<below, meta::list<entry<N, P>>>,
                                  below>;
};

/// Every occurrence of a slot-owning node, children before parents (post-order).
template <class Root>
using outer_occurrences_t = typename outer_occurrences<Root, path<>>::type;
/// The outer slots: occurrences with shared ones merged, in evaluation order.
template <class Root>
using outer_entries_t = meta::unique<same_slot, outer_occurrences_t<Root>>;

template <class N, class P, bool Elementwise = is_elementwise_v<N>,
          class Seq = std::make_index_sequence<children_t<N>::size>>
struct kernel_occurrences {
  using type = meta::list<>;  // a boundary: scalar node, materialised vector or leaf
};
template <class N, class P, std::size_t... I>
struct kernel_occurrences<N, P, true, std::index_sequence<I...>> {
  using type = meta::concat<
      typename kernel_occurrences<meta::at<I, children_t<N>>, meta::push<P, I>>::type...,
      meta::list<entry<N, P>>>;
};

/// The slots of the loop body of a reduction whose operand A sits at path P: the elementwise
/// nodes of A, children first, shared ones merged.
template <class A, class P>
using kernel_entries_t = meta::unique<same_slot, typename kernel_occurrences<A, P>::type>;

// ---- reductions whose adjoint is known before the reverse pass ---------------------------------

template <class E, int Sign>
struct signed_entry {
  using type = E;
  static constexpr int sign = Sign;
};

/// Reductions reached from the root through +, − and negation only: their adjoint is ±1 before
/// anything is evaluated, so their loop can propagate adjoints while it computes values.
template <class N, class P, int S>
struct signed_sums {
  using type = meta::list<>;
};
template <class N, class P, int S>
  requires(kind_of<N> == node_kind::sum)
struct signed_sums<N, P, S> {
  using type = meta::list<signed_entry<entry<N, P>, S>>;
};
template <class N, class P, int S>
  requires(kind_of<N> == node_kind::binary && !is_vector_v<N> &&
           (std::is_same_v<typename N::rule_type, rules::add> ||
            std::is_same_v<typename N::rule_type, rules::subtract>))
struct signed_sums<N, P, S> {
  static constexpr int sb = std::is_same_v<typename N::rule_type, rules::add> ? S : -S;
  using type = meta::concat<typename signed_sums<meta::at<0, children_t<N>>, meta::push<P, 0>, S>::type,
                            typename signed_sums<meta::at<1, children_t<N>>, meta::push<P, 1>, sb>::type>;
};
template <class N, class P, int S>
  requires(kind_of<N> == node_kind::unary && !is_vector_v<N> &&
           std::is_same_v<typename N::rule_type, rules::negate>)
struct signed_sums<N, P, S> {
  using type = typename signed_sums<meta::at<0, children_t<N>>, meta::push<P, 0>, -S>::type;
};

template <class A, class B>
struct same_signed_slot : same_slot<typename A::type, typename B::type> {};

// ---- run-time-verified sharing of nodes with payloads ----------------------------------------

template <class E1, class E2>
struct same_node_type : std::is_same<typename E1::node, typename E2::node> {};

/// For outer slot K: the first slot whose node has the same type. When that is another slot
/// (the type has a payload, so the types alone could not merge them), the program compares the
/// two nodes' payloads at construction and, when they are equal, slot K aliases that slot.
template <class Entries, std::size_t K>
inline constexpr std::size_t alias_candidate_v =
    meta::find_if_equal<same_node_type, meta::at<K, Entries>, Entries>::value;

/// Number of outer slots whose node has the same type as E's.
template <class Entries, class E>
inline constexpr std::size_t same_type_slots_v = meta::count_equal<same_node_type, E, Entries>::value;

/// Equal payloads everywhere below: the same data views, constants and operation arguments.
template <class N>
bool same_value(const N& a, const N& b) {
  constexpr node_kind k = kind_of<N>;
  if constexpr (k == node_kind::constant) {
    return a.value == b.value && std::signbit(a.value) == std::signbit(b.value);  // 0.0 ≠ −0.0
  } else if constexpr (k == node_kind::data_vector) {
    return a.ptr == b.ptr && a.size() == b.size();
  } else if constexpr (k == node_kind::data_matrix) {
    return a.ptr == b.ptr && a.rows == b.rows && a.cols == b.cols;
  } else if constexpr (k == node_kind::vector_param) {
    return a.size() == b.size();
  } else if constexpr (k == node_kind::param_element) {
    return a.index == b.index && a.vector.size() == b.vector.size();
  } else if constexpr (k == node_kind::param_gather) {
    return a.index == b.index && a.n == b.n && a.vector.size() == b.vector.size();
  } else if constexpr (is_leaf_v<N>) {
    return true;
  } else {
    bool equal = true;
    if constexpr (requires { a.rule; }) {
      if constexpr (N::rule_type::has_payload) equal = a.rule == b.rule;
    }
    if constexpr (k == node_kind::residual_squares) equal = a.stats == b.stats && a.k == b.k;
    if constexpr (k == node_kind::element) equal = a.index == b.index;
    if constexpr (k == node_kind::vector_op) {
      if constexpr (N::op_type::has_payload) equal = a.op == b.op;
      equal = equal && a.m == b.m;
    }
    meta::static_for<children_t<N>::size>([&](auto i) {
      equal = equal && same_value(a.template child<decltype(i)::value>(),
                                  b.template child<decltype(i)::value>());
    });
    return equal;
  }
}

/// +1 or −1 when the reduction occurrence E is used once and reached from the root by sums
/// only; 0 otherwise (its adjoint is then known only in the reverse pass).
template <class Root, class E>
inline constexpr int fused_sign_v = [] {
  using occurrences = outer_occurrences_t<Root>;
  using signed_list = typename signed_sums<Root, path<>, 1>::type;
  if constexpr (meta::count_equal<same_slot, E, occurrences>::value != 1 ||
                same_type_slots_v<outer_entries_t<Root>, E> != 1) {
    return 0;  // used twice, or possibly aliased at run time: adjoint known only in reverse
  } else {
    constexpr std::size_t i =
        meta::find_if_equal<same_signed_slot, signed_entry<E, 0>, signed_list>::value;
    if constexpr (i == signed_list::size) return 0;
    else return meta::at<i, signed_list>::sign;
  }
}();

// ---- navigating the tree ------------------------------------------------------------------------

template <class N>
TYCHE_HD TYCHE_INLINE constexpr const N& at_path(const N& n, path<>) {
  return n;
}
template <class N, std::size_t I, std::size_t... Rest>
TYCHE_HD TYCHE_INLINE constexpr const auto& at_path(const N& n, path<I, Rest...>) {
  return at_path(n.template child<I>(), path<Rest...>{});
}

}  // namespace tyche::detail
