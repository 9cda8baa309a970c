// tyche/core/nodes.hpp — the operation nodes (unary and binary, elementwise with scalar
// broadcasting; sum, log_sum_exp, matvec, residual_squares, vector_op, element) and the plain
// builders that make them as written. A node is generic over its rule (autodiff/) or op: this
// header names none. The functions and operators users call, with the rewrites applied as
// nodes are built, are in operations/.
#pragma once
#include <tyche/config.hpp>
#include <tyche/core/expr.hpp>
#include <tyche/core/leaves.hpp>

#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace tyche {

/// f(a) elementwise, for a rule f from tyche/autodiff/.
template <class Rule, class A>
struct unary_node : expr<unary_node<Rule, A>> {
  static constexpr node_kind kind = node_kind::unary;
  static constexpr bool is_vector = A::is_vector;
  static constexpr std::size_t extent = A::extent;
  static constexpr bool has_payload = Rule::has_payload;
  using children = meta::list<A>;
  using rule_type = Rule;
  [[no_unique_address]] Rule rule;
  A a;
  template <std::size_t I>
  TYCHE_HD constexpr const A& child() const { return a; }
  TYCHE_HD constexpr std::size_t size() const {
    if constexpr (extent != dynamic_extent) return extent; else return a.size();
  }
};

/// f(a, b) elementwise; a scalar operand is broadcast against a vector one.
template <class Rule, class A, class B>
struct binary_node : expr<binary_node<Rule, A, B>> {
  static constexpr node_kind kind = node_kind::binary;
  static constexpr bool is_vector = A::is_vector || B::is_vector;
  static constexpr std::size_t extent =
      !A::is_vector   ? (B::is_vector ? B::extent : 1)
      : !B::is_vector ? A::extent
                      : (A::extent != dynamic_extent ? A::extent : B::extent);
  static constexpr bool has_payload = Rule::has_payload;
  using children = meta::list<A, B>;
  using rule_type = Rule;
  [[no_unique_address]] Rule rule;
  A a;
  B b;
  template <std::size_t I>
  TYCHE_HD constexpr const auto& child() const {
    if constexpr (I == 0) return a; else return b;
  }
  TYCHE_HD constexpr std::size_t size() const {  // static when either operand's size is
    if constexpr (extent != dynamic_extent) return extent;
    else if constexpr (A::is_vector) return a.size();
    else return b.size();
  }
};

/// Σᵢ aᵢ over a vector expression.
template <class A>
struct sum_node : expr<sum_node<A>> {
  static constexpr node_kind kind = node_kind::sum;
  static constexpr bool is_vector = false;
  static constexpr std::size_t extent = 1;
  static constexpr bool has_payload = false;
  using children = meta::list<A>;
  A a;
  template <std::size_t I>
  TYCHE_HD constexpr const A& child() const { return a; }
};

/// log Σᵢ exp(aᵢ) over a vector expression, computed in one stable pass.
template <class A>
struct log_sum_exp_node : expr<log_sum_exp_node<A>> {
  static constexpr node_kind kind = node_kind::log_sum_exp;
  static constexpr bool is_vector = false;
  static constexpr std::size_t extent = 1;
  static constexpr bool has_payload = false;
  using children = meta::list<A>;
  A a;
  template <std::size_t I>
  TYCHE_HD constexpr const A& child() const { return a; }
};

/// X v for a data matrix X and a vector parameter v: a vector node whose values are held in a
/// buffer (the workspace), because every element needs all of v. Streamed (made only by
/// compile(), compile/stream.hpp, for a matvec used once, inside a reduction's loop): no buffer;
/// element i is row i of X times v, computed in the loop, and its adjoint goes to v while the
/// row is in cache, so one evaluation reads X once.
template <class V, bool Streamed = false, class X = data_matrix>
struct matvec_node : expr<matvec_node<V, Streamed, X>> {
  static constexpr node_kind kind = node_kind::matvec;
  static constexpr bool streamed = Streamed;
  static constexpr bool is_vector = true;
  static constexpr std::size_t extent = dynamic_extent;
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;  // X is its child, a data_matrix (or _f)
  using children = meta::list<X, V>;
  using matrix_type = X;
  X x;
  V v;
  template <std::size_t I>
  TYCHE_HD constexpr const auto& child() const {
    if constexpr (I == 0) return x; else return v;
  }
  TYCHE_HD constexpr std::size_t size() const { return x.rows; }
};

/// Σᵢ (yᵢ − s − xᵢᵀv)² over n rows of data (y, X), for a scalar node S (the intercept; lit<0>
/// when there is none) and a vector parameter v of size k, evaluated in O(k²) from sufficient
/// statistics computed once when the model is built (compile/reduce_sum.hpp). With centred
/// data, x̄ and ȳ the column and data means and m = s + x̄ᵀv − ȳ:
///   Σᵢ (yᵢ − s − xᵢᵀv)² = S_yy − 2 vᵀS_xy + vᵀS_xx v + n m²,
/// S_yy = Σ(yᵢ − ȳ)², S_xy = Σ(xᵢ − x̄)(yᵢ − ȳ), S_xx = Σ(xᵢ − x̄)(xᵢ − x̄)ᵀ. Centring keeps the
/// cancellation down to a factor 1/(1 − R²) instead of Σyᵢ² / Σ residual².
/// stats: [S_yy, ȳ, n, x̄ (k), S_xy (k), S_xx (k × k, row-major)].
template <class S, class V>
struct residual_squares_node : expr<residual_squares_node<S, V>> {
  static constexpr node_kind kind = node_kind::residual_squares;
  static constexpr bool is_vector = false;
  static constexpr std::size_t extent = 1;
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = true;
  using children = meta::list<S, V>;
  S s;
  V v;
  const double* stats = nullptr;
  std::size_t k = 0;
  template <std::size_t I>
  TYCHE_HD constexpr const auto& child() const {
    if constexpr (I == 0) return s; else return v;
  }
  /// f(stats, 3 + 2k + k²) (compile/relocate.hpp).
  template <class F>
  void for_each_data_buffer(F&& f) {
    if (stats != nullptr) f(stats, 3 + 2 * k + k * k);
  }
};

/// The operands of a vector_op, child I at index I (a flat struct: no std::tuple, so that it is
/// usable in device code and trivially copyable).
template <std::size_t I, class C>
struct operand_holder {
  C c;
};
template <class Seq, class... Cs>
struct operand_pack;
template <std::size_t... I, class... Cs>
struct operand_pack<std::index_sequence<I...>, Cs...> : operand_holder<I, Cs>... {};

template <std::size_t I, class C>
TYCHE_HD constexpr const C& operand_at(const operand_holder<I, C>& h) {
  return h.c;
}

/// A vector of m values computed from whole operands (scalars or vectors) by Op: the ordered
/// transform, a cumulative sum, a linear recurrence, a gather (autodiff/vector_ops.hpp). Its values
/// live in a buffer of the workspace, like matvec's; its gradient is Op's vector–Jacobian
/// product. Op provides name, has_payload, forward and reverse (see autodiff/vector_ops.hpp).
template <class Op, class... Cs>
struct vector_op_node : expr<vector_op_node<Op, Cs...>> {
  static constexpr node_kind kind = node_kind::vector_op;
  static constexpr bool is_vector = true;
  static constexpr std::size_t extent = Op::template extent<Cs...>;
  static constexpr bool has_payload = Op::has_payload;
  using children = meta::list<Cs...>;
  using op_type = Op;
  [[no_unique_address]] Op op;
  operand_pack<std::index_sequence_for<Cs...>, Cs...> operands;
  std::size_t m = 0;  // the number of values
  template <std::size_t I>
  TYCHE_HD constexpr const auto& child() const {
    return operand_at<I>(operands);
  }
  TYCHE_HD constexpr std::size_t size() const {
    if constexpr (extent != dynamic_extent) return extent; else return m;
  }
};

/// Element k (0-based) of a buffered vector V (matvec or vector_op): a scalar. Made by at(v, k).
template <class V>
struct element_node : expr<element_node<V>> {
  static constexpr node_kind kind = node_kind::element;
  static constexpr bool is_vector = false;
  static constexpr std::size_t extent = 1;
  static constexpr bool has_payload = true;  // the index
  static constexpr bool reads_data_buffers = false;
  using children = meta::list<V>;
  V v;
  std::size_t index = 0;
  template <std::size_t I>
  TYCHE_HD constexpr const V& child() const { return v; }
};

/// vector_op_node<Op, Cs...> with m values from operands cs.
template <class Op, class... Cs>
auto make_vector_op(const Op& op, std::size_t m, const Cs&... cs) {
  return vector_op_node<Op, Cs...>{{}, op, {{cs}...}, m};
}

/// The vector_op n with op `op` and f applied to each operand (fold).
template <class Op, class N, class F>
auto rebuild_vector_op_as(const Op& op, const N& n, F&& f) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return make_vector_op(op, n.m, f(n.template child<I>())...);
  }(std::make_index_sequence<children_t<N>::size>{});
}

/// The vector_op n with f applied to each operand (fold, substitute).
template <class N, class F>
auto rebuild_vector_op(const N& n, F&& f) {
  return rebuild_vector_op_as(n.op, n, f);
}

// ---- building nodes ------------------------------------------------------------------------

namespace detail {

/// The number of values of a node: its size for a vector, 1 for a scalar.
template <class C>
TYCHE_HD constexpr std::size_t operand_size(const C& c) {
  if constexpr (is_vector_v<C>) return c.size();
  else return 1;
}

/// What may stand as an operand of an elementwise operation: an expression other than a
/// matrix, or a plain number.
template <class T>
concept operand = (expression<T> && (wraps_expression<T> || kind_of<T> != node_kind::data_matrix)) ||
                  arithmetic<T>;

/// The core node an operand stands for: a number becomes a constant; a wrapper (a random
/// variable, see tyche/model) becomes the expression of its value; a node is itself. Wrappers
/// exist on the host only (models are built there), so their overload is host code.
template <class T>
  requires(!wraps_expression<T>)
TYCHE_HD constexpr auto as_node(const T& x) {
  if constexpr (arithmetic<T>) return constant{static_cast<double>(x)};
  else return x;
}
template <class T>
  requires wraps_expression<T>
constexpr auto as_node(const T& x) {
  return as_node(x.value_expression());
}
template <class T>
using node_t = decltype(as_node(std::declval<T>()));

inline void check_same_size(const char* op, std::size_t a, std::size_t b) {
  if (a != b)
    throw std::invalid_argument(std::string("tyche::") + op + ": vector operands have sizes " +
                                std::to_string(a) + " and " + std::to_string(b));
}

/// The named data below node n ("'x'", "'X'" for data(x, "x") and matrix(…, "X")), each once,
/// appended to out (", " between them).
template <class N>
TYCHE_COLD void named_data_below(const N& n, std::string& out) {
  auto add = [&out](const char* name) {
    if (name == nullptr) return;
    const std::string label = std::string("'") + name + "'";
    if (out.find(label) != std::string::npos) return;
    if (!out.empty()) out += ", ";
    out += label;
  };
  if constexpr (kind_of<N> == node_kind::data_vector || kind_of<N> == node_kind::data_matrix) {
    add(n.name);
  } else if constexpr (requires { n.index_name; }) {  // a gather's named indices (param_gather)
    add(n.index_name);
  } else if constexpr (children_t<N>::size > 0 && requires { n.template child<0>(); }) {
    if constexpr (requires { n.op.index_name; }) add(n.op.index_name);  // gather of an expression
    meta::static_for<children_t<N>::size>([&](auto c) { named_data_below(n.template child<decltype(c)::value>(), out); });
  } else {
    (void)n;
  }
}

/// For size messages: what an operand reads — "data 'x'" (its named data: data(x, "x"),
/// matrix(…, "X")), "uses theta, tau" (its random variables), "data 'x' with theta" (both),
/// else "data".
template <class N>
TYCHE_COLD std::string operand_reads(const N& n) {
  std::string data, uses;
  named_data_below(n, data);
  [&]<class... Ps>(meta::list<Ps...>) {
    ((uses += (uses.empty() ? "uses " : ", ") + Ps::name.str()), ...);
  }(params_of<N>{});
  if (data.empty()) return uses.empty() ? std::string("data") : uses;
  return "data " + data + (uses.empty() ? std::string() : " with " + uses.substr(5));
}

/// check_operand_sizes' message, thrown.
template <class NA, class NB>
[[noreturn]] TYCHE_COLD void throw_operand_sizes(const char* op, const NA& a, const NB& b) {
  std::string text = "tyche::";
  text += op;
  text += ": vector operands have sizes " + std::to_string(a.size()) + " and " + std::to_string(b.size());
  text += " (the first: " + operand_reads(a) + "; the second: " + operand_reads(b) + ")";
  throw std::invalid_argument(text);
}
/// check_same_size for an elementwise node's operands, saying what each reads: "tyche::add:
/// vector operands have sizes 10 and 9 (the first: uses beta; the second: data 'x')".
template <class NA, class NB>
void check_operand_sizes(const char* op, const NA& a, const NB& b) {
  if (a.size() != b.size()) throw_operand_sizes(op, a, b);
}

template <class Rule, class A>
auto make_unary(const A& a, Rule rule = {}) {
  using N = node_t<A>;
  return unary_node<Rule, N>{{}, rule, as_node(a)};
}

/// The parts of a literal type (is_literal false for any other node).
template <class N>
struct literal_parts {
  static constexpr bool is_literal = false;
};
template <std::intmax_t N, std::intmax_t D>
struct literal_parts<literal<N, D>> {
  static constexpr bool is_literal = true;
  static constexpr std::intmax_t num = N, den = D;
};
template <class N, std::intmax_t Num, std::intmax_t Den = 1>
inline constexpr bool is_literal_equal_v = [] {
  if constexpr (literal_parts<N>::is_literal)
    return literal_parts<N>::num * Den == Num * literal_parts<N>::den;
  else
    return false;
}();

/// literal<N, D> in lowest terms with a positive denominator.
template <std::intmax_t N, std::intmax_t D>
constexpr auto reduced_literal() {
  constexpr std::intmax_t an = N < 0 ? -N : N, ad = D < 0 ? -D : D;
  constexpr std::intmax_t g = std::gcd(an, ad) == 0 ? 1 : std::gcd(an, ad);
  constexpr std::intmax_t sign = (N < 0) != (D < 0) ? -1 : 1;
  return literal<sign * an / g, ad / g>{};
}

template <class Rule, class A, class B>
auto make_binary_node(const A& a, const B& b) {
  using NA = node_t<A>;
  using NB = node_t<B>;
  if constexpr (NA::is_vector && NB::is_vector) {
    static_assert(NA::extent == dynamic_extent || NB::extent == dynamic_extent ||
                      NA::extent == NB::extent,
                  "tyche: an elementwise operation on two vectors requires equal sizes");
  }
  binary_node<Rule, NA, NB> n{{}, {}, as_node(a), as_node(b)};
  if constexpr (NA::is_vector && NB::is_vector) check_operand_sizes(Rule::name, n.a, n.b);
  return n;
}

}  // namespace detail

}  // namespace tyche
