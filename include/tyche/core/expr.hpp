// tyche/core/expr.hpp — the expression base class, the node kinds and the compile-time
// properties every node has: its shape, the parameters it depends on, and whether it can be
// shared (see docs/design/expression-core.md).
#pragma once
#include <tyche/config.hpp>
#include <tyche/core/meta.hpp>

#include <concepts>
#include <cstddef>
#include <span>
#include <type_traits>

namespace tyche {

/// CRTP base of every expression node. A node is an ordinary value type: it owns its operands
/// by value and holds no evaluation state, so one model can be evaluated by many threads.
template <class Derived>
struct expr {
  TYCHE_HD constexpr const Derived& derived() const { return static_cast<const Derived&>(*this); }
  /// Element k (0-based) of a vector expression, as a scalar expression: at(*this, k)
  /// (operations/functions.hpp, found when the call is instantiated), so that `mu[0]` works on
  /// any vector expression as on a random variable. A data view keeps its own operator[] (the
  /// value, for the evaluator).
  template <class K>
    requires std::integral<K>
  auto operator[](K k) const {
    return at(derived(), static_cast<std::size_t>(k));
  }
};

/// The kinds of node; the evaluator dispatches on them at compile time.
enum class node_kind {
  literal,       // a rational constant in the type: lit<1, 2>
  constant,      // a run-time constant (a double in the node)
  param,         // a scalar parameter, by name
  vector_param,  // a vector parameter, by name, static or run-time size
  param_element, // element k of a vector parameter: a scalar
  data_vector,   // a view of a vector of data
  data_matrix,   // a view of a row-major matrix of data (only as the left operand of matvec)
  unary,         // an elementwise function of one operand
  binary,        // an elementwise function of two operands (with scalar broadcasting)
  sum,           // sum over the elements of a vector expression
  log_sum_exp,   // log Σ exp over the elements of a vector expression
  matvec,        // data matrix × parameter vector: a vector held in a buffer
  residual_squares, // Σᵢ (yᵢ − s − xᵢᵀv)² from sufficient statistics (partial evaluation)
  vector_op,     // a vector computed from whole operands by an op (ordered transform, scan, …),
                 // held in a buffer (the workspace), like matvec
  element,       // element k of a buffered vector (matvec or vector_op): a scalar
  param_gather   // v[idx[i]] for a vector parameter v and a data index vector: a vector leaf
};

inline constexpr std::size_t dynamic_extent = std::dynamic_extent;

template <class T>
concept expression = std::derived_from<std::remove_cvref_t<T>, expr<std::remove_cvref_t<T>>>;

/// A wrapper stands for an expression without being a node: a random variable is used as its
/// value. Every operation unwraps it (detail::as_node), so wrappers never sit in a tree.
template <class T>
concept wraps_expression = requires(const std::remove_cvref_t<T>& x) { x.value_expression(); };

/// Plain numbers a user may write next to expressions (they become run-time constants).
template <class T>
concept arithmetic = std::is_arithmetic_v<std::remove_cvref_t<T>> &&
                     !std::is_same_v<std::remove_cvref_t<T>, bool>;

template <class N>
inline constexpr node_kind kind_of = std::remove_cvref_t<N>::kind;

/// True for nodes whose value is a vector (elementwise expressions and vector leaves).
template <class N>
inline constexpr bool is_vector_v = std::remove_cvref_t<N>::is_vector;

/// Compile-time size of a vector node, or dynamic_extent when known only at run time.
template <class N>
inline constexpr std::size_t extent_v = std::remove_cvref_t<N>::extent;

template <class N>
inline constexpr bool is_leaf_v =
    kind_of<N> == node_kind::literal || kind_of<N> == node_kind::constant ||
    kind_of<N> == node_kind::param || kind_of<N> == node_kind::vector_param ||
    kind_of<N> == node_kind::param_element || kind_of<N> == node_kind::data_vector ||
    kind_of<N> == node_kind::data_matrix || kind_of<N> == node_kind::param_gather;

/// A matvec computed row by row inside a reduction's loop (compile/stream.hpp), not buffered.
template <class N>
inline constexpr bool is_streamed_v = [] {
  if constexpr (requires { std::remove_cvref_t<N>::streamed; }) return std::remove_cvref_t<N>::streamed;
  else return false;
}();

/// Vector nodes whose values are computed whole into a buffer of the workspace (not fused into
/// a reduction's loop): matvec (unless streamed) and vector_op.
template <class N>
inline constexpr bool is_buffered_v =
    (kind_of<N> == node_kind::matvec && !is_streamed_v<N>) || kind_of<N> == node_kind::vector_op;

/// Elementwise vector nodes are fused into the loop of the reduction that consumes them.
template <class N>
inline constexpr bool is_elementwise_v =
    ((kind_of<N> == node_kind::unary || kind_of<N> == node_kind::binary) && is_vector_v<N>) ||
    is_streamed_v<N>;

namespace detail {
template <class N>
struct children_of {
  using type = typename N::children;
};
}  // namespace detail
template <class N>
using children_t = typename std::remove_cvref_t<N>::children;

// ---- parameter dependencies ---------------------------------------------------------------

namespace detail {
/// Two parameters (leaf types) with the same name: the same parameter, whatever their types.
template <class A, class B>
struct same_param_name : std::bool_constant<A::name == B::name> {};

template <class N>
struct params_of_impl;
template <class... Cs>
struct params_of_list {
  using type = meta::unique<same_param_name, meta::concat<typename params_of_impl<Cs>::type...>>;
};
template <class N>
struct params_of_impl {
  template <class L>
  struct from;
  template <class... Cs>
  struct from<meta::list<Cs...>> {
    using type = typename params_of_list<Cs...>::type;
  };
  template <class M, bool Element = kind_of<M> == node_kind::param_element ||
                                    kind_of<M> == node_kind::param_gather>
  struct self {
    using type = meta::list<M>;
  };
  template <class M>
  struct self<M, true> {
    using type = meta::list<typename M::vector_type>;
  };
  using type = typename std::conditional_t<
      kind_of<N> == node_kind::param || kind_of<N> == node_kind::vector_param ||
          kind_of<N> == node_kind::param_element || kind_of<N> == node_kind::param_gather,
      self<N>, from<children_t<N>>>::type;
};
}  // namespace detail

/// The parameters (leaf types) that node N depends on, each once, in order of first appearance.
template <class N>
using params_of = typename detail::params_of_impl<std::remove_cvref_t<N>>::type;

/// True when N's value changes with some parameter.
template <class N>
inline constexpr bool depends_on_params_v = params_of<N>::size > 0;

/// True when N's value depends on the parameter called Name.
template <class N, fixed_string Name>
inline constexpr bool depends_on_v = [] {
  return []<class... Ps>(meta::list<Ps...>) { return ((Ps::name == Name) || ...); }(params_of<N>{});
}();

// ---- sharing --------------------------------------------------------------------------------

namespace detail {
template <class N>
struct shareable_impl {
  template <class L>
  struct all;
  template <class... Cs>
  struct all<meta::list<Cs...>> : std::bool_constant<(shareable_impl<Cs>::value && ...)> {};
  static constexpr bool value = !std::remove_cvref_t<N>::has_payload && all<children_t<N>>::value;
};
}  // namespace detail

/// A node is shareable when its type alone determines its value: no run-time payload
/// (constants, data views, non-type operation arguments) anywhere below it. Two occurrences of
/// a shareable type in one model are the same value and are evaluated once.
template <class N>
inline constexpr bool shareable_v = detail::shareable_impl<std::remove_cvref_t<N>>::value;

}  // namespace tyche
