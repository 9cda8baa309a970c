// tyche/operations/linear.hpp — the Line and LogLine normal forms of partial evaluation (Rainier,
// seed 002, "Line" and "LogLine"), applied as nodes are built:
//
//   Line     a + Σᵢ bᵢ·xᵢ   for constants a, bᵢ (literals or run-time constants) and nodes xᵢ,
//            read from any tree of +, −, unary −, × and ÷ by a constant;
//   LogLine  k · Πᵢ xᵢ^pᵢ   for a constant k, literal exponents pᵢ and nodes xᵢ, read from any
//            tree of ×, ÷, square, sqrt, inverse and pow(x, literal).
//
// When an operation combines two Lines (two LogLines), the terms over the same node merge
// their coefficients (exponents), the constants fold into one, and the result is emitted
// again as a tree whenever that tree is cheaper than the one written, or as cheap and with
// fewer terms: x + x is 2·x, (x + 1) + (y + 2) is (x + y) + 3, 2·(3·x) is 6·x, x·x is
// square(x), sqrt(x)·sqrt(x) is x for x ≥ 0. A tree that would not get cheaper is left as the
// user wrote it (2·(x + y) stays: distributing would add a multiply). "Same node" means the same
// type with no run-time payload below it (shareable_v): such a type is one value.
//
// Terms are emitted scalars first (computed once per evaluation, outside any loop), then the
// constant, then vector terms, so a vector Line costs one elementwise operation per vector term.
//
// The rewrites here need no data. Those that need a support (log of a LogLine, exp(log x)) are
// in operations/functions.hpp, next to the functions they rewrite. See
// docs/design/partial-evaluation.md.
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/arithmetic.hpp>
#include <tyche/autodiff/exp_log.hpp>
#include <tyche/core/nodes.hpp>
#include <tyche/interval/support.hpp>
#include <tyche/operations/identities.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>

namespace tyche::detail {

/// The node Rule(a, b) or Rule(a) for nodes a and b, as written: no rewrite, no size check (what
/// emitting a form builds, its operands already checked).
template <class Rule, class A, class B>
auto plain_binary(const A& a, const B& b) {
  return binary_node<Rule, A, B>{{}, {}, a, b};
}
template <class Rule, class A>
auto plain_unary(const A& a) {
  return unary_node<Rule, A>{{}, {}, a};
}

template <class N, class Rule>
inline constexpr bool is_binary_rule_v = [] {
  if constexpr (kind_of<N> == node_kind::binary) return std::is_same_v<typename N::rule_type, Rule>;
  else return false;
}();
template <class N, class Rule>
inline constexpr bool is_unary_rule_v = [] {
  if constexpr (kind_of<N> == node_kind::unary) return std::is_same_v<typename N::rule_type, Rule>;
  else return false;
}();

/// The Line and LogLine forms: a tree read into a form (decompose_line, decompose_product), the
/// terms over the same node merged (merge_line, merge_product), the cost of the tree as written
/// and as the form would emit it (line_plan, product_plan), and the form emitted as a tree again
/// (emit_line, emit_product).
namespace forms {

// ---- coefficients: literals (exact) and run-time constants -----------------------------------

template <class N>
inline constexpr bool is_coef_v = kind_of<N> == node_kind::literal || kind_of<N> == node_kind::constant;

template <class C>
constexpr double coef_value(const C& c) {
  if constexpr (kind_of<C> == node_kind::literal) return C::value;
  else return c.value;
}

/// −1, 0, +1 for a literal; 2 for a run-time constant (sign unknown in the type).
template <class C>
inline constexpr int coef_sign_v = [] {
  if constexpr (literal_parts<C>::is_literal)
    return literal_parts<C>::num < 0 ? -1 : (literal_parts<C>::num == 0 ? 0 : 1);
  else
    return 2;
}();

template <class A, class B>
auto coef_add(const A& a, const B& b) {
  if constexpr (literal_parts<A>::is_literal && literal_parts<B>::is_literal)
    return fold_literal_pair<rules::add, A, B>();
  else if constexpr (is_literal_equal_v<A, 0>) return b;
  else if constexpr (is_literal_equal_v<B, 0>) return a;
  else return constant{coef_value(a) + coef_value(b)};
}
template <class A, class B>
auto coef_mul(const A& a, const B& b) {
  if constexpr (literal_parts<A>::is_literal && literal_parts<B>::is_literal)
    return fold_literal_pair<rules::multiply, A, B>();
  else if constexpr (is_literal_equal_v<A, 1>) return b;
  else if constexpr (is_literal_equal_v<B, 1>) return a;
  else return constant{coef_value(a) * coef_value(b)};
}
template <class L>
constexpr auto literal_reciprocal() {
  return reduced_literal<literal_parts<L>::den, literal_parts<L>::num>();
}

/// The cost of one operation on node X: elementwise operations on vectors weigh as many scalar
/// ones (a vector of unknown length is taken to be long).
template <class X>
inline constexpr int weight_v = is_vector_v<X> ? 64 : 1;

// ---- a light tuple for the forms (std::tuple's constraints cost compile time here) ----------

template <std::size_t I, class T>
struct light_tuple_slot {
  T value;
};
template <class Seq, class... Ts>
struct light_tuple_base;
template <std::size_t... I, class... Ts>
struct light_tuple_base<std::index_sequence<I...>, Ts...> : light_tuple_slot<I, Ts>... {};

template <class... Ts>
struct light_tuple : light_tuple_base<std::index_sequence_for<Ts...>, Ts...> {
  static constexpr std::size_t size = sizeof...(Ts);
  constexpr light_tuple(const Ts&... ts) : light_tuple_base<std::index_sequence_for<Ts...>, Ts...>{{ts}...} {}
};
template <class... Ts>
light_tuple(Ts...) -> light_tuple<Ts...>;

template <std::size_t I, class T>
constexpr const T& light_get(const light_tuple_slot<I, T>& s) {
  return s.value;
}
template <class... A, class... B>
auto light_concat_two(const light_tuple<A...>& a, const light_tuple<B...>& b) {
  return [&]<std::size_t... I, std::size_t... J>(std::index_sequence<I...>, std::index_sequence<J...>) {
    return light_tuple<A..., B...>(light_get<I>(a)..., light_get<J>(b)...);
  }(std::index_sequence_for<A...>{}, std::index_sequence_for<B...>{});
}
inline auto light_concat() { return light_tuple<>(); }
template <class T, class... R>
auto light_concat(const T& t, const R&... r) {
  if constexpr (sizeof...(R) == 0) return t;
  else return light_concat_two(t, light_concat(r...));
}
template <class F, class T>
decltype(auto) light_apply(F&& f, const T& t) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) -> decltype(auto) {
    return f(light_get<I>(t)...);
  }(std::make_index_sequence<T::size>{});
}

// ---- Line: a + Σ bᵢ·xᵢ --------------------------------------------------------------------------

template <class C, class X>
struct term {
  using coef_type = C;
  using node_type = X;
  C c;
  X x;
};
template <class C, class X>
term(C, X) -> term<C, X>;

template <class Off, class... Ts>
struct line_form {
  using offset_type = Off;
  static constexpr std::size_t size = sizeof...(Ts);
  Off off;
  light_tuple<Ts...> ts;
};

template <class Off, class... Ts>
auto make_line_form(const Off& off, const light_tuple<Ts...>& ts) {
  return line_form<Off, Ts...>{off, ts};
}

/// N is an operation a Line is read through (+, −, unary −, × or ÷ by a constant).
template <class N>
inline constexpr bool is_line_op_v = [] {
  if constexpr (is_binary_rule_v<N, rules::add> || is_binary_rule_v<N, rules::subtract> ||
                is_unary_rule_v<N, rules::negate>) {
    return true;
  } else if constexpr (is_binary_rule_v<N, rules::multiply>) {
    return is_coef_v<meta::at<0, children_t<N>>> || is_coef_v<meta::at<1, children_t<N>>>;
  } else if constexpr (is_binary_rule_v<N, rules::divide>) {
    using B = meta::at<1, children_t<N>>;
    return literal_parts<B>::is_literal && !is_literal_equal_v<B, 0>;
  } else {
    return false;
  }
}();

template <class F, class C>
auto scale_line(const F& f, const C& c) {
  return light_apply(
      [&](const auto&... t) {
        // A missing constant stays missing (a scaled lit<0> would become a run-time 0).
        auto off = [&] {
          if constexpr (is_literal_equal_v<decltype(f.off), 0>) return lit<0>;
          else return coef_mul(f.off, c);
        }();
        return make_line_form(off, light_tuple{term{coef_mul(t.c, c), t.x}...});
      },
      f.ts);
}
template <class F, class G>
auto add_lines(const F& f, const G& g) {
  return make_line_form(coef_add(f.off, g.off), light_concat(f.ts, g.ts));
}

/// n read as a Line, term by term, without merging.
template <class N>
auto decompose_line(const N& n) {
  if constexpr (is_coef_v<N>) {
    return make_line_form(n, light_tuple<>{});
  } else if constexpr (is_binary_rule_v<N, rules::add>) {
    return add_lines(decompose_line(n.a), decompose_line(n.b));
  } else if constexpr (is_binary_rule_v<N, rules::subtract>) {
    return add_lines(decompose_line(n.a), scale_line(decompose_line(n.b), lit<-1>));
  } else if constexpr (is_unary_rule_v<N, rules::negate>) {
    return scale_line(decompose_line(n.a), lit<-1>);
  } else if constexpr (is_line_op_v<N> && is_binary_rule_v<N, rules::multiply>) {
    if constexpr (is_coef_v<decltype(n.a)>) return scale_line(decompose_line(n.b), n.a);
    else return scale_line(decompose_line(n.a), n.b);
  } else if constexpr (is_line_op_v<N> && is_binary_rule_v<N, rules::divide>) {
    return scale_line(decompose_line(n.a), literal_reciprocal<decltype(n.b)>());
  } else {
    return make_line_form(lit<0>, light_tuple{term{lit<1>, n}});
  }
}

/// The cost of the tree as written: the Line operations in it.
template <class N>
constexpr int line_tree_cost() {
  if constexpr (!is_line_op_v<N>) {
    return 0;
  } else if constexpr (kind_of<N> == node_kind::unary) {
    return weight_v<N> + line_tree_cost<meta::at<0, children_t<N>>>();
  } else {
    using A = meta::at<0, children_t<N>>;
    using B = meta::at<1, children_t<N>>;
    return weight_v<N> + line_tree_cost<A>() + line_tree_cost<B>();
  }
}

/// Index of the first of Ts whose node_type is X (sizeof...(Ts) when none).
template <class X, class... Ts>
constexpr std::size_t find_node_index() {
  constexpr bool hit[] = {std::is_same_v<typename Ts::node_type, X>..., true};
  std::size_t i = 0;
  while (!hit[i]) ++i;
  return i;
}

/// Index of the term over node X in Ts (sizeof...(Ts) when there is none, or when X carries a
/// payload: two such nodes of one type may hold different values).
template <class X, class... Ts>
constexpr std::size_t find_node() {
  if constexpr (!shareable_v<X>) {
    return sizeof...(Ts);
  } else {
    return find_node_index<X, Ts...>();
  }
}

template <std::size_t I, class Tuple, class T>
auto replace_at(const Tuple& ts, const T& t) {
  return [&]<std::size_t... J>(std::index_sequence<J...>) {
    auto pick = [&]<std::size_t K>(std::integral_constant<std::size_t, K>) {
      if constexpr (K == I) return t; else return light_get<K>(ts);
    };
    return light_tuple{pick(std::integral_constant<std::size_t, J>{})...};
  }(std::make_index_sequence<Tuple::size>{});
}

/// Two nodes of one type about to be merged: the same value, unless a vector parameter below
/// them was given two sizes (vector_param<"v">(3) and vector_param<"v">(4)), which compile()
/// would report if the merge did not make one of them vanish. Reported here, the same way.
template <class X>
void check_same_sizes(const X& a, const X& b) {
  if constexpr (kind_of<X> == node_kind::vector_param) {
    if (a.size() != b.size())
      throw std::invalid_argument("tyche: vector parameter '" + X::name.str() +
                                  "' is used with sizes " + std::to_string(a.size()) + " and " +
                                  std::to_string(b.size()));
  } else if constexpr (!is_leaf_v<X> && children_t<X>::size > 0) {
    meta::static_for<children_t<X>::size>([&](auto c) {
      check_same_sizes(a.template child<decltype(c)::value>(), b.template child<decltype(c)::value>());
    });
  }
}

template <class Off, class... Ts, class C, class X>
auto add_term(const line_form<Off, Ts...>& acc, const term<C, X>& t) {
  constexpr std::size_t i = find_node<X, Ts...>();
  if constexpr (i == sizeof...(Ts)) {
    return make_line_form(acc.off, light_concat(acc.ts, light_tuple{t}));
  } else {
    const auto& old = light_get<i>(acc.ts);
    check_same_sizes(old.x, t.x);
    return make_line_form(acc.off, replace_at<i>(acc.ts, term{coef_add(old.c, t.c), t.x}));
  }
}

template <std::size_t I, class Acc, class F>
auto merge_line_from(const Acc& acc, const F& f) {
  if constexpr (I == F::size) return acc;
  else return merge_line_from<I + 1>(add_term(acc, light_get<I>(f.ts)), f);
}
/// f with the terms over the same node merged (first appearance keeps its place).
template <class F>
auto merge_line(const F& f) {
  return merge_line_from<0>(make_line_form(f.off, light_tuple<>{}), f);
}

/// The order in which a merged form's items are emitted: scalar terms, the constant, vector
/// terms; a term with a coefficient that is not a negative literal goes first in its group when
/// the group comes first (so no negation is needed). Index F::size stands for the constant.
template <std::size_t N>
struct order_t {
  std::array<std::size_t, N + 1> item{};
  std::size_t count = 0;
};

/// The order in which a merged form's items are emitted: scalar terms, the constant, vector
/// terms; a term with a coefficient that is not a negative literal goes first in its group when
/// the group comes first (so no negation is needed). Index N stands for the constant.
template <std::size_t N>
constexpr order_t<N> plan_order(const std::array<bool, N + 1>& vec, const std::array<int, N + 1>& sign,
                                bool has_offset) {
  order_t<N> o;
  for (int vectors = 0; vectors < 2; ++vectors) {
    const std::size_t first = o.count;
    for (std::size_t i = 0; i != N; ++i)  // (not i < N: nvcc warns of i < 0 when N = 0)
      if (vec[i] == (vectors == 1)) o.item[o.count++] = i;
    if (first == 0 && o.count > 0 && sign[o.item[0]] < 0) {  // lead with a non-negative term
      for (std::size_t j = 1; j < o.count; ++j) {
        if (sign[o.item[j]] >= 0) {
          const std::size_t lead = o.item[j];
          for (std::size_t k = j; k > 0; --k) o.item[k] = o.item[k - 1];
          o.item[0] = lead;
          break;
        }
      }
    }
    if (vectors == 0 && has_offset) o.item[o.count++] = N;
  }
  return o;
}

/// The cost of the emitted tree (same units as tree_cost).
template <std::size_t N>
constexpr int plan_cost(const order_t<N>& o, const std::array<int, N + 1>& sign,
                        const std::array<int, N + 1>& weight, const std::array<bool, N + 1>& unit) {
  int c = 0;
  for (std::size_t j = 0; j < o.count; ++j) {
    const std::size_t i = o.item[j];
    if (i == N) c += j == 0 ? 0 : 1;
    else if (j == 0) c += unit[i] && sign[i] > 0 ? 0 : weight[i];
    else c += unit[i] ? weight[i] : 2 * weight[i];
  }
  return c;
}

template <class F>
struct line_plan;
template <class Off, class... Ts>
struct line_plan<line_form<Off, Ts...>> {
  static constexpr std::size_t n = sizeof...(Ts);
  static constexpr std::array<int, n + 1> sign{coef_sign_v<typename Ts::coef_type>..., 0};
  static constexpr order_t<n> order = plan_order<n>(
      std::array<bool, n + 1>{is_vector_v<typename Ts::node_type>..., false}, sign,
      !is_literal_equal_v<Off, 0>);
  static constexpr int cost = plan_cost<n>(
      order, sign, std::array<int, n + 1>{weight_v<typename Ts::node_type>..., 0},
      std::array<bool, n + 1>{(is_literal_equal_v<typename Ts::coef_type, 1> ||
                               is_literal_equal_v<typename Ts::coef_type, -1>)...,
                              false});
};

/// acc followed by one more item of the Line (acc is none for the first).
struct none {};

template <class Acc, class C, class X>
auto append(const Acc& acc, const term<C, X>& t) {
  if constexpr (std::is_same_v<Acc, none>) {
    if constexpr (is_literal_equal_v<C, 1>) return t.x;
    else if constexpr (is_literal_equal_v<C, -1>) return plain_unary<rules::negate>(t.x);
    else return plain_binary<rules::multiply>(t.c, t.x);
  } else if constexpr (is_literal_equal_v<C, 1>) {
    return plain_binary<rules::add>(acc, t.x);
  } else if constexpr (is_literal_equal_v<C, -1>) {
    return plain_binary<rules::subtract>(acc, t.x);
  } else if constexpr (coef_sign_v<C> == -1) {
    return plain_binary<rules::subtract>(acc, plain_binary<rules::multiply>(coef_mul(t.c, lit<-1>), t.x));
  } else {
    return plain_binary<rules::add>(acc, plain_binary<rules::multiply>(t.c, t.x));
  }
}
template <class Acc, class Off>
auto append_offset(const Acc& acc, const Off& off) {
  if constexpr (std::is_same_v<Acc, none>) return off;
  else if constexpr (coef_sign_v<Off> == -1) return plain_binary<rules::subtract>(acc, coef_mul(off, lit<-1>));
  else return plain_binary<rules::add>(acc, off);
}

template <std::size_t J, class Acc, class F>
auto emit_line_from(const Acc& acc, const F& f) {
  using P = line_plan<F>;
  if constexpr (J == P::order.count) {
    if constexpr (std::is_same_v<Acc, none>) return lit<0>;
    else return acc;
  } else {
    constexpr std::size_t i = P::order.item[J];
    if constexpr (i == F::size) return emit_line_from<J + 1>(append_offset(acc, f.off), f);
    else return emit_line_from<J + 1>(append(acc, light_get<i>(f.ts)), f);
  }
}
/// A merged form as a tree.
template <class F>
auto emit_line(const F& f) {
  return emit_line_from<0>(none{}, f);
}

// The same reading on types alone: what decides whether to rewrite, for every operation built,
// without instantiating the value-level functions above (they run only to rewrite).

template <class A, class B>
using coef_add_t = decltype(coef_add(std::declval<const A&>(), std::declval<const B&>()));
template <class A, class B>
using coef_mul_t = decltype(coef_mul(std::declval<const A&>(), std::declval<const B&>()));

template <class F, class G>
struct add_lines_t;
template <class O1, class... T1, class O2, class... T2>
struct add_lines_t<line_form<O1, T1...>, line_form<O2, T2...>> {
  using type = line_form<coef_add_t<O1, O2>, T1..., T2...>;
};
template <class F, class C>
struct scale_line_t;
template <class O, class... Ts, class C>
struct scale_line_t<line_form<O, Ts...>, C> {
  using offset = std::conditional_t<is_literal_equal_v<O, 0>, literal<0>, coef_mul_t<O, C>>;
  using type = line_form<offset, term<coef_mul_t<typename Ts::coef_type, C>, typename Ts::node_type>...>;
};

template <class N>
constexpr int line_case() {
  if constexpr (is_coef_v<N>) return 1;
  else if constexpr (is_binary_rule_v<N, rules::add>) return 2;
  else if constexpr (is_binary_rule_v<N, rules::subtract>) return 3;
  else if constexpr (is_unary_rule_v<N, rules::negate>) return 4;
  else if constexpr (is_line_op_v<N> && is_binary_rule_v<N, rules::multiply>)
    return is_coef_v<meta::at<0, children_t<N>>> ? 5 : 6;
  else if constexpr (is_line_op_v<N> && is_binary_rule_v<N, rules::divide>) return 7;
  else return 0;
}
template <class N, int Case = line_case<N>()>
struct line_of {
  using type = line_form<literal<0>, term<literal<1>, N>>;
};
template <class N>
struct line_of<N, 1> {
  using type = line_form<N>;
};
template <class N>
struct line_of<N, 2> {
  using type = typename add_lines_t<typename line_of<meta::at<0, children_t<N>>>::type,
                                 typename line_of<meta::at<1, children_t<N>>>::type>::type;
};
template <class N>
struct line_of<N, 3> {
  using type = typename add_lines_t<
      typename line_of<meta::at<0, children_t<N>>>::type,
      typename scale_line_t<typename line_of<meta::at<1, children_t<N>>>::type, literal<-1>>::type>::type;
};
template <class N>
struct line_of<N, 4> {
  using type = typename scale_line_t<typename line_of<meta::at<0, children_t<N>>>::type, literal<-1>>::type;
};
template <class N>
struct line_of<N, 5> {
  using type =
      typename scale_line_t<typename line_of<meta::at<1, children_t<N>>>::type, meta::at<0, children_t<N>>>::type;
};
template <class N>
struct line_of<N, 6> {
  using type =
      typename scale_line_t<typename line_of<meta::at<0, children_t<N>>>::type, meta::at<1, children_t<N>>>::type;
};
template <class N>
struct line_of<N, 7> {
  using type = typename scale_line_t<typename line_of<meta::at<0, children_t<N>>>::type,
                                decltype(literal_reciprocal<meta::at<1, children_t<N>>>())>::type;
};

template <bool Hit, class S, class C, class X>
struct merged_term {
  using type = S;
};
template <class S, class C, class X>
struct merged_term<true, S, C, X> {
  using type = term<coef_add_t<typename S::coef_type, C>, X>;
};
template <class F, class T>
struct add_term_t;
template <class O, class... Ts, class C, class X>
struct add_term_t<line_form<O, Ts...>, term<C, X>> {
  static constexpr std::size_t i = find_node<X, Ts...>();
  template <std::size_t... J>
  static auto replaced(std::index_sequence<J...>) -> line_form<O, typename merged_term<J == i, Ts, C, X>::type...>;
  using type = std::conditional_t<i == sizeof...(Ts), line_form<O, Ts..., term<C, X>>,
                                  decltype(replaced(std::index_sequence_for<Ts...>{}))>;
};
template <class Acc, class... Ts>
struct merge_all {
  using type = Acc;
};
template <class Acc, class T, class... Ts>
struct merge_all<Acc, T, Ts...> : merge_all<typename add_term_t<Acc, T>::type, Ts...> {};
template <class F>
struct merged;
template <class O, class... Ts>
struct merged<line_form<O, Ts...>> {
  using type = typename merge_all<line_form<O>, Ts...>::type;
};

template <class N>
using raw_line_form_t = typename line_of<N>::type;
template <class N>
using merged_line_form_t = typename merged<raw_line_form_t<N>>::type;

/// The number of constants (literals and run-time numbers) the Line of N is read from.
template <class N>
constexpr int offset_pieces() {
  constexpr int c = line_case<N>();
  if constexpr (c == 1) return 1;
  else if constexpr (c == 2 || c == 3)
    return offset_pieces<meta::at<0, children_t<N>>>() + offset_pieces<meta::at<1, children_t<N>>>();
  else if constexpr (c == 4 || c == 6 || c == 7) return offset_pieces<meta::at<0, children_t<N>>>();
  else if constexpr (c == 5) return offset_pieces<meta::at<1, children_t<N>>>();
  else return 0;
}

/// True when N, read as a Line, is emitted cheaper (or as cheap, with fewer terms). AtRoot:
/// N is a whole Line (compile() folds each once, at its root); else N is being built by an
/// operator, inside a Line that may still grow, and merging run-time constants alone is left
/// to compile(): rewriting a growing sum at every + would cost compile time quadratic in its
/// length for one addition saved per constant.
template <class N, bool AtRoot = false>
inline constexpr bool line_rewrites_v = [] {
  if constexpr (!is_line_op_v<N>) {
    return false;
  } else {
    using M = merged_line_form_t<N>;
    using P = line_plan<M>;
    constexpr int pieces = offset_pieces<N>();
    constexpr int deferred =
        !AtRoot && kind_of<typename M::offset_type> == node_kind::constant && pieces > 1 ? pieces - 1 : 0;
    constexpr int before = line_tree_cost<N>();
    constexpr int after = P::cost + deferred;
    return after < before || (after <= before && M::size < raw_line_form_t<N>::size);
  }
}();

// ---- LogLine: k · Π xᵢ^pᵢ (scalar products) ---------------------------------------------------

template <class P, class X>
struct factor {
  using power_type = P;
  using node_type = X;
  X x;
};

template <class K, class... Fs>
struct product_form {
  using coef_type = K;
  static constexpr std::size_t size = sizeof...(Fs);
  K k;
  light_tuple<Fs...> fs;
};
template <class K, class... Fs>
auto make_product_form(const K& k, const light_tuple<Fs...>& fs) {
  return product_form<K, Fs...>{k, fs};
}

template <class N>
inline constexpr bool is_literal_power_v = [] {
  if constexpr (kind_of<N> == node_kind::binary) {
    return std::is_same_v<typename N::rule_type, rules::pow> &&
           literal_parts<meta::at<1, children_t<N>>>::is_literal;
  } else {
    return false;
  }
}();

/// N is a scalar operation a LogLine is read through (×, ÷, square, sqrt, inverse, pow by a
/// literal). A constant times a node is also a Line term: the Line form is tried first.
template <class N>
inline constexpr bool is_product_op_v = [] {
  if constexpr (is_vector_v<N>) return false;
  else
    return is_binary_rule_v<N, rules::multiply> || is_binary_rule_v<N, rules::divide> ||
           is_unary_rule_v<N, rules::square> || is_unary_rule_v<N, rules::sqrt> ||
           is_unary_rule_v<N, rules::inverse> || is_literal_power_v<N>;
}();

/// The exponent the operation N raises its operand to (square 2, sqrt 1/2, …).
template <class N>
constexpr auto power_of_op() {
  if constexpr (is_unary_rule_v<N, rules::square>) return lit<2>;
  else if constexpr (is_unary_rule_v<N, rules::sqrt>) return lit<1, 2>;
  else if constexpr (is_unary_rule_v<N, rules::inverse>) return lit<-1>;
  else return meta::at<1, children_t<N>>{};
}

/// k^p for a coefficient k and a literal p.
template <class K, class P>
auto coef_pow(const K& k, P) {
  if constexpr (is_literal_equal_v<K, 1>) {
    return lit<1>;
  } else if constexpr (literal_parts<K>::is_literal && literal_parts<P>::den == 1 &&
                       literal_parts<P>::num >= 0 && literal_parts<P>::num <= 4) {
    if constexpr (literal_parts<P>::num == 0) return lit<1>;
    else return coef_mul(k, coef_pow(k, reduced_literal<literal_parts<P>::num - 1, 1>()));
  } else if constexpr (literal_parts<K>::is_literal && !is_literal_equal_v<K, 0> &&
                       literal_parts<P>::den == 1 && literal_parts<P>::num < 0 &&
                       literal_parts<P>::num >= -4) {
    return coef_pow(literal_reciprocal<K>(), reduced_literal<-literal_parts<P>::num, 1>());
  } else {
    return constant{std::pow(coef_value(k), P::value)};
  }
}

template <class F, class P>
auto raise_product(const F& f, P p) {
  return light_apply(
      [&](const auto&... g) {
        return make_product_form(
            coef_pow(f.k, p),
            light_tuple{factor<decltype(coef_mul(typename std::remove_cvref_t<decltype(g)>::power_type{}, p)),
                               typename std::remove_cvref_t<decltype(g)>::node_type>{g.x}...});
      },
      f.fs);
}
template <class F, class G>
auto multiply_products(const F& f, const G& g) {
  return make_product_form(coef_mul(f.k, g.k), light_concat(f.fs, g.fs));
}

/// n read as a LogLine, factor by factor, without merging.
template <class N>
auto decompose_product(const N& n) {
  if constexpr (is_coef_v<N>) {
    return make_product_form(n, light_tuple<>{});
  } else if constexpr (!is_product_op_v<N>) {
    return make_product_form(lit<1>, light_tuple{factor<literal<1>, N>{n}});
  } else if constexpr (is_binary_rule_v<N, rules::multiply>) {
    return multiply_products(decompose_product(n.a), decompose_product(n.b));
  } else if constexpr (is_binary_rule_v<N, rules::divide>) {
    return multiply_products(decompose_product(n.a), raise_product(decompose_product(n.b), lit<-1>));
  } else if constexpr (kind_of<N> == node_kind::unary) {
    return raise_product(decompose_product(n.a), power_of_op<N>());
  } else {
    return raise_product(decompose_product(n.a), power_of_op<N>());
  }
}

/// The scalar cost of raising to the literal power P: 0 for 1; one operation for 2, 1/2, −1
/// (square, sqrt, inverse); four for any other (pow is exp(p·log x)).
template <class P>
inline constexpr int power_cost_v =
    (is_literal_equal_v<P, 1> || is_literal_equal_v<P, 0>) ? 0
    : (is_literal_equal_v<P, 2> || is_literal_equal_v<P, 1, 2> || is_literal_equal_v<P, -1>) ? 1
                                                                                           : 4;

template <class N>
constexpr int product_tree_cost() {
  if constexpr (!is_product_op_v<N>) {
    return 0;
  } else if constexpr (kind_of<N> == node_kind::unary) {
    return 1 + product_tree_cost<meta::at<0, children_t<N>>>();
  } else if constexpr (is_literal_power_v<N>) {
    return power_cost_v<decltype(power_of_op<N>())> + product_tree_cost<meta::at<0, children_t<N>>>();
  } else {
    return 1 + product_tree_cost<meta::at<0, children_t<N>>>() + product_tree_cost<meta::at<1, children_t<N>>>();
  }
}

/// True when the tree N reads through only integer powers (no sqrt, no fractional pow): then
/// (xᵃ)ᵇ = xᵃᵇ and (xy)ᵇ = xᵇyᵇ hold for every real x, y.
template <class N>
constexpr bool integer_powers() {
  if constexpr (!is_product_op_v<N>) {
    return true;
  } else if constexpr (is_unary_rule_v<N, rules::sqrt>) {
    return false;
  } else if constexpr (is_literal_power_v<N>) {
    return literal_parts<decltype(power_of_op<N>())>::den == 1 &&
           integer_powers<meta::at<0, children_t<N>>>();
  } else if constexpr (kind_of<N> == node_kind::unary) {
    return integer_powers<meta::at<0, children_t<N>>>();
  } else {
    return integer_powers<meta::at<0, children_t<N>>>() && integer_powers<meta::at<1, children_t<N>>>();
  }
}

template <class X>
inline constexpr bool positive_support_v =
    support_of<X>.lo > 0 || (support_of<X>.lo == 0 && !support_of<X>.lo_closed);
template <class X>
inline constexpr bool nonnegative_support_v = support_of<X>.lo >= 0;

template <class K, class... Fs, class P, class X>
auto add_factor(const product_form<K, Fs...>& acc, const factor<P, X>& f) {
  constexpr std::size_t i = find_node<X, Fs...>();
  if constexpr (i == sizeof...(Fs)) {
    return make_product_form(acc.k, light_concat(acc.fs, light_tuple{f}));
  } else {
    check_same_sizes(light_get<i>(acc.fs).x, f.x);
    using Old = std::remove_cvref_t<decltype(light_get<i>(acc.fs))>;
    using Sum = decltype(coef_add(typename Old::power_type{}, P{}));
    return make_product_form(acc.k, replace_at<i>(acc.fs, factor<Sum, X>{f.x}));
  }
}
template <std::size_t I, class Acc, class F>
auto merge_product_from(const Acc& acc, const F& f) {
  if constexpr (I == F::size) return acc;
  else return merge_product_from<I + 1>(add_factor(acc, light_get<I>(f.fs)), f);
}
template <class F>
auto merge_product(const F& f) {
  return merge_product_from<0>(make_product_form(f.k, light_tuple<>{}), f);
}

/// (A factor whose exponents cancel, x·x⁻¹, is dropped: the bases are positive then, see
/// merge_is_exact, and x⁰ = 1.)
/// Every factor of a raw form over the same node as another has exponents of one sign, or a
/// positive base: then merging them (xᵃ·xᵇ = xᵃ⁺ᵇ) is exact wherever the product is defined.
template <class F>
struct merge_is_exact;
template <class K, class... Fs>
struct merge_is_exact<product_form<K, Fs...>> {
  static constexpr bool value = [] {
    if constexpr (sizeof...(Fs) == 0) {
      return true;  // (a loop to 0 here is nvcc's "pointless comparison of unsigned integer with zero")
    } else {
      constexpr int sign[] = {(literal_parts<typename Fs::power_type>::num < 0 ? -1 : 1)...};
      constexpr bool positive[] = {positive_support_v<typename Fs::node_type>...};
      constexpr std::size_t n = sizeof...(Fs);
      constexpr std::size_t group[] = {find_node_index<typename Fs::node_type, Fs...>()...};
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j)
          if (group[i] == group[j] && i != j && sign[i] != sign[j] && !positive[i]) return false;
      return true;
    }
  }();
};

template <class F>
struct all_bases_positive;
template <class K, class... Fs>
struct all_bases_positive<product_form<K, Fs...>>
    : std::bool_constant<(positive_support_v<typename Fs::node_type> && ...)> {};

/// Emits x^P as its cheapest node (P > 0).
template <class P, class X>
auto power_node(const X& x) {
  if constexpr (is_literal_equal_v<P, 1>) return x;
  else if constexpr (is_literal_equal_v<P, 2>) return plain_unary<rules::square>(x);
  else if constexpr (is_literal_equal_v<P, 1, 2>) return plain_unary<rules::sqrt>(x);
  else return plain_binary<rules::pow>(x, P{});
}

template <class Acc, class X>
auto times(const Acc& acc, const X& x) {
  if constexpr (std::is_same_v<Acc, none>) return x;
  else return plain_binary<rules::multiply>(acc, x);
}

/// The product of the factors with exponents of sign S (+1: numerator; −1: denominator, with
/// the exponent negated), in order; none when there is none.
template <int S, std::size_t I, class Acc, class F>
auto product_from(const Acc& acc, const F& f) {
  if constexpr (I == F::size) {
    return acc;
  } else {
    using G = std::remove_cvref_t<decltype(light_get<I>(f.fs))>;
    using P = typename G::power_type;
    if constexpr (literal_parts<P>::num * S > 0) {
      using Q = decltype(coef_mul(P{}, literal<S>{}));
      return product_from<S, I + 1>(times(acc, power_node<Q>(light_get<I>(f.fs).x)), f);
    } else {
      return product_from<S, I + 1>(acc, f);
    }
  }
}

template <class F>
auto emit_product(const F& f) {
  auto num = product_from<1, 0>(none{}, f);
  auto den = product_from<-1, 0>(none{}, f);
  using Num = decltype(num);
  using Den = decltype(den);
  using K = typename F::coef_type;
  auto with_k = [&](const auto& x) {  // k · x
    if constexpr (is_literal_equal_v<K, 1>) return x;
    else if constexpr (is_literal_equal_v<K, -1>) return plain_unary<rules::negate>(x);
    else return plain_binary<rules::multiply>(f.k, x);
  };
  if constexpr (std::is_same_v<Num, none> && std::is_same_v<Den, none>) {
    return f.k;
  } else if constexpr (std::is_same_v<Den, none>) {
    return with_k(num);
  } else if constexpr (std::is_same_v<Num, none>) {
    if constexpr (is_literal_equal_v<K, 1>) return plain_unary<rules::inverse>(den);
    else return plain_binary<rules::divide>(f.k, den);
  } else {
    return plain_binary<rules::divide>(with_k(num), den);
  }
}

template <class F>
struct product_plan;
template <class K, class... Fs>
struct product_plan<product_form<K, Fs...>> {
  static constexpr int num = ((literal_parts<typename Fs::power_type>::num > 0 ? 1 : 0) + ... + 0);
  static constexpr int den = ((literal_parts<typename Fs::power_type>::num < 0 ? 1 : 0) + ... + 0);
  static constexpr int powers =
      (power_cost_v<std::conditional_t<(literal_parts<typename Fs::power_type>::num < 0),
                                       decltype(coef_mul(typename Fs::power_type{}, lit<-1>)),
                                       typename Fs::power_type>> + ... + 0);
  static constexpr bool unit_k = is_literal_equal_v<K, 1> || is_literal_equal_v<K, -1>;
  static constexpr int cost =
      powers + (num > 1 ? num - 1 : 0) + (den > 1 ? den - 1 : 0) +
      (num > 0 && den > 0 ? 1 : 0) + (num == 0 && den > 0 ? 1 : 0) + (num > 0 && !is_literal_equal_v<K, 1> ? 1 : 0);
};

template <class N>
using raw_product_form_t = decltype(decompose_product(std::declval<const N&>()));
template <class N>
using merged_product_form_t = decltype(merge_product(std::declval<const raw_product_form_t<N>&>()));

/// True when N, read as a LogLine, is emitted cheaper (or as cheap, with fewer factors) and
/// the rewrite is exact: integer powers only, or positive bases.
template <class N>
inline constexpr bool logline_rewrites_v = [] {
  if constexpr (!is_product_op_v<N>) {
    return false;
  } else {
    using R = raw_product_form_t<N>;
    using M = merged_product_form_t<N>;
    constexpr bool exact = (integer_powers<N>() || all_bases_positive<R>::value) && merge_is_exact<R>::value;
    constexpr int before = product_tree_cost<N>();
    return exact && (product_plan<M>::cost < before || (product_plan<M>::cost <= before && M::size < R::size));
  }
}();

template <class F>
struct logs_needed;
template <class K, class... Fs>
struct logs_needed<product_form<K, Fs...>>
    : std::integral_constant<int, ((is_unary_rule_v<typename Fs::node_type, rules::exp> ||
                                    literal_parts<typename Fs::power_type>::num == 0
                                        ? 0
                                        : 1) +
                                   ... + 0)> {};

template <std::size_t I, class Acc, class F>
auto sum_of_logs(const Acc& acc, const F& f) {
  if constexpr (I == F::size) {
    return acc;
  } else {
    const auto& g = light_get<I>(f.fs);
    using P = typename std::remove_cvref_t<decltype(g)>::power_type;
    return sum_of_logs<I + 1>(acc + P{} * log(g.x), f);  // tyche::log, found by ADL
  }
}

}  // namespace forms

template <class N>
constexpr bool log_splits() {
  if constexpr (!forms::is_product_op_v<N>) {
    return false;
  } else {
    using M = forms::merged_product_form_t<N>;
    using K = typename M::coef_type;
    return forms::all_bases_positive<forms::raw_product_form_t<N>>::value && forms::coef_sign_v<K> == 1 &&
           forms::logs_needed<M>::value <= 1;
  }
}
template <class N>
auto log_of_product(const N& n) {
  const auto m = forms::merge_product(forms::decompose_product(n));
  using K = typename decltype(m)::coef_type;
  if constexpr (is_literal_equal_v<K, 1>) return forms::sum_of_logs<0>(lit<0>, m);
  else return forms::sum_of_logs<0>(constant{std::log(forms::coef_value(m.k))}, m);
}
template <class N>
constexpr bool is_unary_log_of_nonnegative() {
  if constexpr (is_unary_rule_v<N, rules::log>) return forms::nonnegative_support_v<meta::at<0, children_t<N>>>;
  else return false;
}

/// The node of a Line operation, in normal form (the hook of make_binary and operator-).
template <class N, bool AtRoot = false>
auto line_normal_form(const N& n) {
  if constexpr (forms::line_rewrites_v<N, AtRoot>) return forms::emit_line(forms::merge_line(forms::decompose_line(n)));
  else if constexpr (forms::logline_rewrites_v<N>)
    return forms::emit_product(forms::merge_product(forms::decompose_product(n)));
  else return n;
}

}  // namespace tyche::detail
