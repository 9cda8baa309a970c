// tyche/operations/vectors.hpp — the functions that make vectors that are not elementwise:
// cumulative_sum, linear_recurrence, cholesky_multiply, gather, rep_vector, append_row,
// to_vector, head, tail, segment, reverse, sort_asc, sort_desc and diag_matrix; and the reductions
// max, min and prod (element 0 of an op of one value). Each makes a vector_op node (core/nodes.hpp) whose op, with
// its forward step and vector–Jacobian product, is in autodiff/vector_ops.hpp; the evaluator
// materialises the operands, runs the op into a buffer of the workspace and, in the reverse pass,
// its vector–Jacobian product. gather and segment go through elementwise operations down to
// the leaves (a gathered parameter is read in the loop, a segment of data is a view). softmax
// and log_softmax are written with log_sum_exp, so that their gradients are generated and they
// fuse into the loops that consume them. See docs/design/vector-ops.md.
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/vector_ops.hpp>
#include <tyche/core/leaves.hpp>
#include <tyche/core/nodes.hpp>
#include <tyche/operations/functions.hpp>

#include <concepts>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace tyche {

namespace detail {
/// gather through elementwise operations down to the leaves, as at() does for one element:
/// gather(exp(u), idx) = exp(gather(u, idx)), so a gathered parameter is read in the loop.
/// The indices must have been checked.
/// index_name (or null): the name of the indices, for messages (data(...)'s names' role).
template <std::size_t Shift = 0, class Index, class N>
auto gather_node(const N& n, const Index* idx, std::size_t len, const char* index_name = nullptr) {
  if constexpr (kind_of<N> == node_kind::vector_param) {
    return param_gather<N, Index, Shift>{{}, n, idx, len, index_name};
  } else if constexpr (kind_of<N> == node_kind::unary) {
    auto a = gather_node<Shift>(n.a, idx, len, index_name);
    return unary_node<typename N::rule_type, decltype(a)>{{}, n.rule, a};
  } else if constexpr (kind_of<N> == node_kind::binary) {
    auto pick = [&](const auto& x) {
      if constexpr (is_vector_v<std::remove_cvref_t<decltype(x)>>) return gather_node<Shift>(x, idx, len, index_name);
      else return x;
    };
    auto a = pick(n.a);
    auto b = pick(n.b);
    return binary_node<typename N::rule_type, decltype(a), decltype(b)>{{}, n.rule, a, b};
  } else {
    return make_vector_op(ops::gather_map<Index, Shift>{idx, len, index_name}, len, n);
  }
}

/// What gather's messages call v: a parameter vector's name, else "v".
template <class N>
std::string gathered_name(const N&) {
  if constexpr (kind_of<N> == node_kind::vector_param) return std::string(N::name.str());
  else return "v";
}
}  // namespace detail

/// xₖ = Σ_{j ≤ k} aⱼ.
template <expression A>
auto cumulative_sum(const A& a) {
  using N = detail::node_t<A>;
  static_assert(is_vector_v<N>, "tyche::cumulative_sum(a) requires 'a' to be a vector expression");
  const N n = detail::as_node(a);
  return make_vector_op(ops::cumulative_sum_map{}, n.size(), n);
}

namespace detail {
/// max(v) or min(v) of a vector node: refused when v is empty (Stan gives ∓∞ there; the value's
/// support is then its elements' hull, which ∓∞ is not in).
template <bool Max, class N>
auto extremum(const N& n) {
  if (n.size() == 0)
    throw std::invalid_argument(std::string("tyche::") + (Max ? "max" : "min") +
                                "(v): v is empty (Stan's " + (Max ? "max" : "min") + " gives " +
                                (Max ? "-inf" : "inf") + " there; tyche refuses it)");
  return at(make_vector_op(ops::extremum_map<Max>{}, 1, n), 0);
}
}  // namespace detail

/// The largest element of a vector expression (Stan's max(v)): a scalar expression, NaN where an
/// element is NaN; an empty v is refused (std::invalid_argument). Its derivative goes to the
/// element that is largest (the first of equal ones). The larger of two scalars is fmax(a, b).
template <expression A>
auto max(const A& a) {
  using N = detail::node_t<A>;
  static_assert(is_vector_v<N>,
                "tyche::max(v) requires 'v' to be a vector expression; the larger of two scalars is fmax(a, b)");
  return detail::extremum<true>(detail::as_node(a));
}

/// The smallest element of a vector expression (Stan's min(v)), as max(v) with the order turned.
/// The smaller of two scalars is fmin(a, b).
template <expression A>
auto min(const A& a) {
  using N = detail::node_t<A>;
  static_assert(is_vector_v<N>,
                "tyche::min(v) requires 'v' to be a vector expression; the smaller of two scalars is fmin(a, b)");
  return detail::extremum<false>(detail::as_node(a));
}

/// Πₖ vₖ of a vector expression (Stan's prod(v)): a scalar expression, 1 for an empty vector; its
/// gradient Π_{j≠k} vⱼ without a division (exact where an element is 0).
template <expression A>
auto prod(const A& a) {
  using N = detail::node_t<A>;
  static_assert(is_vector_v<N>, "tyche::prod(v) requires 'v' to be a vector expression; it is a scalar");
  return at(make_vector_op(ops::prod_map{}, 1, detail::as_node(a)), 0);
}

/// The elements of a vector expression in reverse order (Stan's reverse(v)).
template <expression A>
auto reverse(const A& a) {
  using N = detail::node_t<A>;
  static_assert(is_vector_v<N>, "tyche::reverse(v) requires 'v' to be a vector expression; it is a scalar");
  const N n = detail::as_node(a);
  return make_vector_op(ops::reverse_map{}, n.size(), n);
}

/// The elements of a vector expression in ascending order (Stan's sort_asc(v)), NaN last; each
/// chain sorts its own values. Its derivative follows each value to its place.
template <expression A>
auto sort_asc(const A& a) {
  using N = detail::node_t<A>;
  static_assert(is_vector_v<N>, "tyche::sort_asc(v) requires 'v' to be a vector expression; it is a scalar");
  const N n = detail::as_node(a);
  return make_vector_op(ops::sort_map<true>{}, n.size(), n);
}

/// The elements of a vector expression in descending order (Stan's sort_desc(v)), NaN last.
template <expression A>
auto sort_desc(const A& a) {
  using N = detail::node_t<A>;
  static_assert(is_vector_v<N>, "tyche::sort_desc(v) requires 'v' to be a vector expression; it is a scalar");
  const N n = detail::as_node(a);
  return make_vector_op(ops::sort_map<false>{}, n.size(), n);
}

/// The K × K diagonal matrix of the K values of v (Stan's diag_matrix(v)), as tyche's matrix
/// expressions are: its K² entries, row major (an argument of matvec, add_diag, cholesky_decompose,
/// multi_normal). A covariance diag_matrix(square(sigma)) is cheaper as independent normals.
template <expression A>
auto diag_matrix(const A& a) {
  using N = detail::node_t<A>;
  static_assert(is_vector_v<N>, "tyche::diag_matrix(v) requires 'v' to be a vector expression; it is a scalar");
  const N n = detail::as_node(a);
  return make_vector_op(ops::diag_matrix_map{}, n.size() * n.size(), n);
}

/// The first-order linear recurrence sₜ = aₜ + b·sₜ₋₁ (t = 0 … n−1), s₋₁ = s0: a vector of the
/// size of a. b is a scalar or a vector of a's size (then sₜ = aₜ + bₜ sₜ₋₁). Written once,
/// it covers AR(1) filters, exponential smoothing and GARCH variances:
///   σ²ₜ = α₀ + α₁ r²ₜ₋₁ + β₁ σ²ₜ₋₁  is  linear_recurrence(alpha0 + alpha1 * square(r_prev), beta1, s0).
template <detail::operand A, detail::operand B, detail::operand S0>
  requires(expression<A> || expression<B> || expression<S0>)
auto linear_recurrence(const A& a, const B& b, const S0& s0) {
  using NA = detail::node_t<A>;
  using NB = detail::node_t<B>;
  using NS = detail::node_t<S0>;
  static_assert(is_vector_v<NA>,
                "tyche::linear_recurrence(a, b, s0) requires 'a' to be a vector expression");
  static_assert(!is_vector_v<NS>,
                "tyche::linear_recurrence(a, b, s0) requires 's0' (the value before the first) to "
                "be a scalar");
  const NA na = detail::as_node(a);
  const NB nb = detail::as_node(b);
  if constexpr (is_vector_v<NB>) {
    if (nb.size() != na.size())
      throw std::invalid_argument("tyche::linear_recurrence(a, b, s0): 'b' has size " +
                                  std::to_string(nb.size()) + " but 'a' has size " +
                                  std::to_string(na.size()));
  }
  return make_vector_op(ops::linear_recurrence_map{}, na.size(), na, nb, detail::as_node(s0));
}

/// L z with L the lower Cholesky factor of the K × K matrix whose K² entries (row major) are
/// the vector expression c; z a vector of K. Stan's `cholesky_decompose(C) * z`: the latent
/// values of a Gaussian process in non-centred form, f = cholesky_multiply(C, f_tilde) with
/// f_tilde ~ std_normal, C = α² exp(−d²/(2ρ²)) + jitter·I built elementwise from data.
/// Gradients flow to the entries of C (lower triangle) and to z.
template <expression C, expression Z>
auto cholesky_multiply(const C& c, const Z& z) {
  using NC = detail::node_t<C>;
  using NZ = detail::node_t<Z>;
  static_assert(is_vector_v<NC> && is_vector_v<NZ>,
                "tyche::cholesky_multiply(c, z) requires 'c' (the K*K entries of the matrix, row "
                "major) and 'z' (K values) to be vector expressions");
  const NC nc = detail::as_node(c);
  const NZ nz = detail::as_node(z);
  if (nc.size() != nz.size() * nz.size())
    throw std::invalid_argument("tyche::cholesky_multiply(c, z): 'c' has " + std::to_string(nc.size()) +
                                " entries but 'z' has size " + std::to_string(nz.size()) +
                                " (c must hold the " + std::to_string(nz.size() * nz.size()) +
                                " entries of a square matrix, row major)");
  return make_vector_op(ops::cholesky_multiply_map{}, nz.size(), nc, nz);
}

/// (v[idx[0]], v[idx[1]], …): v indexed by data, 0-based (Stan's v[idx] with idx − 1), e.g. the
/// group effect of each observation: `normal(alpha + gather(a, group, "group"), sigma).observe(y)`.
/// Every index is checked against v's size now; `name` (optional, as data(x, "x")'s) names the
/// indices in that check's message and in the size messages of expressions that read them. The
/// indices are viewed, not copied: like data, they must outlive the model and must not change
/// after it is compiled.
template <expression V>
auto gather(const V& v, std::span<const int> idx, const char* name = nullptr) {
  using N = detail::node_t<V>;
  static_assert(is_vector_v<N>, "tyche::gather(v, idx) requires 'v' to be a vector expression");
  const N n = detail::as_node(v);
  for (std::size_t i = 0; i < idx.size(); ++i) {
    if (idx[i] < 0 || static_cast<std::size_t>(idx[i]) >= n.size()) {
      const std::string vname = detail::gathered_name(n), iname = name != nullptr ? name : "idx";
      throw std::out_of_range("tyche::gather(" + vname + ", " + iname + "): " + iname + "[" + std::to_string(i) +
                              "] = " + std::to_string(idx[i]) + " is outside " +
                              (n.size() > 0 ? "0 … " + std::to_string(n.size() - 1) : std::string("an empty vector")) +
                              " (" + vname + " has " + std::to_string(n.size()) +
                              " values; the indices, and the position in brackets, count from 0: Stan's 1-based "
                              "indices need - 1)");
    }
  }
  return detail::gather_node(n, idx.data(), idx.size(), name);
}
template <expression V>
auto gather(const V& v, const std::vector<int>& idx, const char* name = nullptr) {
  return gather(v, std::span<const int>(idx), name);
}
/// A temporary index vector would dangle (the model keeps a view of the indices): one message
/// that says so, not a "use of deleted function".
template <expression V>
auto gather(const V& v, std::vector<int>&& idx, const char* name = nullptr) {
  static_assert(sizeof(V) == 0,
                "tyche::gather(v, idx, name): idx is a temporary std::vector<int> (a function's result, "
                "such as data_file::indices(...)), and the model keeps a view of it, which would dangle: "
                "keep the indices in a variable that outlives the model, e.g. "
                "const std::vector<int> g = f.indices(\"g\", N, J); ... gather(a, g, \"g\")");
  return gather(v, std::span<const int>(idx), name);  // the same type as a valid call: no second error
}
/// Indices of another type (std::size_t, long, double, data(...)): one message instead of
/// "no matching function" and three candidates.
template <expression V, class Idx>
  requires(!std::is_convertible_v<const Idx&, std::span<const int>>)
auto gather(const V& v, const Idx&, const char* = nullptr) {
  static_assert(sizeof(Idx) == 0,
                "tyche::gather(v, idx, name): idx must hold int indices (0-based): a std::vector<int> or "
                "std::span<const int> that outlives the model; convert others once, beside the data: "
                "std::vector<int> group_idx(group.begin(), group.end())");
  return gather(v, std::span<const int>{});  // the same type as a valid call: no second error
}

// ---- softmax ----------------------------------------------------------------------------------

/// vₖ − log Σⱼ exp vⱼ: the log of softmax(v), stable (log_sum_exp shifts by the maximum) and
/// finite wherever v is. An elementwise expression of v and one scalar log_sum_exp node: its
/// gradient is generated, and it fuses into the loop that consumes it (no buffer).
/// `target(dot(data(counts), log_softmax(beta)))` is a multinomial-logit log likelihood.
template <expression V>
auto log_softmax(const V& v) {
  using N = detail::node_t<V>;
  static_assert(is_vector_v<N>, "tyche::log_softmax(v) requires 'v' to be a vector expression");
  const N n = detail::as_node(v);
  return n - log_sum_exp(n);
}

/// exp vₖ / Σⱼ exp vⱼ, computed as exp(vₖ − log_sum_exp(v)) (every exponent ≤ 0: no overflow),
/// with the support [0, 1]: a probability vector (categorical(theta)). Where only its log is
/// needed, log_softmax(v) is exact where this underflows.
template <expression V>
auto softmax(const V& v) {
  using N = detail::node_t<V>;
  static_assert(is_vector_v<N>, "tyche::softmax(v) requires 'v' to be a vector expression");
  const N n = detail::as_node(v);
  return assume_probability(exp(n - log_sum_exp(n)));
}

// ---- rep_vector, append_row, to_vector -------------------------------------------------------

/// N copies of the scalar x, N fixed at compile time: `rep_vector<3>(mu)`.
template <std::size_t N, detail::operand X>
auto rep_vector(const X& x) {
  static_assert(!is_vector_v<detail::node_t<X>>,
                "tyche::rep_vector(x, n) requires 'x' to be a scalar expression");
  return make_vector_op(ops::rep_map<N>{}, N, detail::as_node(x));
}
/// n copies of the scalar x, n given at run time: Stan's rep_vector(x, n).
template <detail::operand X>
auto rep_vector(const X& x, std::size_t n) {
  static_assert(!is_vector_v<detail::node_t<X>>,
                "tyche::rep_vector(x, n) requires 'x' to be a scalar expression");
  return make_vector_op(ops::rep_map<>{}, n, detail::as_node(x));
}
/// rep_vector(x, shape<N>) (static size) and rep_vector(x, shape_of(n)) (run-time size).
template <detail::operand X, class S>
  requires(!std::is_arithmetic_v<S> && requires(const S& s) {
    { s.size } -> std::convertible_to<std::size_t>;
  })
auto rep_vector(const X& x, const S& shape) {
  if constexpr (std::is_pointer_v<decltype(&S::size)>) return rep_vector<S::size>(x);  // a static member
  else return rep_vector(x, static_cast<std::size_t>(shape.size));
}

/// a then b, one vector (Stan's append_row for vectors): each is a vector or a scalar, at least
/// one a vector. Its size is static when both sizes are.
template <detail::operand A, detail::operand B>
  requires(expression<A> || expression<B>)
auto append_row(const A& a, const B& b) {
  using NA = detail::node_t<A>;
  using NB = detail::node_t<B>;
  static_assert(is_vector_v<NA> || is_vector_v<NB>,
                "tyche::append_row(a, b) requires 'a' or 'b' to be a vector expression (to make a "
                "vector of scalars, use to_vector(x...))");
  const NA na = detail::as_node(a);
  const NB nb = detail::as_node(b);
  return make_vector_op(ops::stack_map{}, detail::operand_size(na) + detail::operand_size(nb), na, nb);
}
/// append_row(a, b).
template <detail::operand A, detail::operand B>
  requires(expression<A> || expression<B>)
auto append(const A& a, const B& b) {
  return append_row(a, b);
}

/// The vector (x₀, x₁, …) of K scalar expressions (plain numbers allowed beside them), K fixed
/// at compile time: `to_vector(mu, mu + delta, 0.0)`.
template <detail::operand... X>
  requires(sizeof...(X) > 0 && (expression<X> || ...))
auto to_vector(const X&... x) {
  static_assert((!is_vector_v<detail::node_t<X>> && ...),
                "tyche::to_vector(x...) requires every argument to be a scalar expression (to join "
                "vectors, use append_row(a, b))");
  return make_vector_op(ops::stack_map{}, sizeof...(X), detail::as_node(x)...);
}

// ---- head, tail, segment ---------------------------------------------------------------------

namespace detail {
template <class Op>
struct is_segment_map : std::false_type {};
template <std::size_t M>
struct is_segment_map<ops::segment_map<M>> : std::true_type {};

/// Elements offset … offset + len − 1 (0-based, checked) of n, with static size Len (or
/// dynamic_extent). Through elementwise operations down to the leaves, as gather_node: a data
/// vector becomes a view of its part, a gathered parameter a gather of part of its indices, a
/// matvec (dynamic sizes) the matvec of some of X's rows; a parameter vector or a vector_op
/// becomes a segment vector_op (two segments merge into one).
template <std::size_t Len, class N>
auto segment_node(const N& n, std::size_t offset, std::size_t len) {
  if constexpr (kind_of<N> == node_kind::data_vector) {
    return data_vector<Len>{{}, n.ptr + offset, len, n.name};
  } else if constexpr (kind_of<N> == node_kind::param_gather && Len == dynamic_extent) {
    return N{{}, n.vector, n.index + offset, len, n.index_name};
  } else if constexpr (kind_of<N> == node_kind::matvec && !is_streamed_v<N> && Len == dynamic_extent) {
    return N{{}, matrix(n.x.ptr + offset * n.x.cols, len, n.x.cols), n.v};
  } else if constexpr (kind_of<N> == node_kind::unary) {
    auto a = segment_node<Len>(n.a, offset, len);
    return unary_node<typename N::rule_type, decltype(a)>{{}, n.rule, a};
  } else if constexpr (kind_of<N> == node_kind::binary) {
    auto pick = [&](const auto& x) {
      if constexpr (is_vector_v<std::remove_cvref_t<decltype(x)>>) return segment_node<Len>(x, offset, len);
      else return x;
    };
    auto a = pick(n.a);
    auto b = pick(n.b);
    return binary_node<typename N::rule_type, decltype(a), decltype(b)>{{}, n.rule, a, b};
  } else if constexpr (kind_of<N> == node_kind::vector_op) {
    if constexpr (is_segment_map<typename N::op_type>::value)
      return make_vector_op(ops::segment_map<Len>{n.op.offset + offset}, len, n.template child<0>());
    else return make_vector_op(ops::segment_map<Len>{offset}, len, n);
  } else {
    return make_vector_op(ops::segment_map<Len>{offset}, len, n);
  }
}

/// Checks that elements first … first + len − 1 (1-based) are inside a vector of size; fn is how
/// the call is written.
inline void check_segment(const char* fn, std::size_t size, std::size_t first, std::size_t len) {
  if (first == 0)
    throw std::invalid_argument(std::string("tyche::") + fn + ": i = 0, but i is 1-based (the first "
                                "element is i = 1)");
  if (first - 1 + len > size)
    throw std::invalid_argument(std::string("tyche::") + fn + ": elements " + std::to_string(first) +
                                " ... " + std::to_string(first - 1 + len) + " (1-based; n = " +
                                std::to_string(len) + ") were asked for, but v has size " +
                                std::to_string(size));
}
inline void check_length(const char* fn, std::size_t size, std::size_t len) {
  if (len > size)
    throw std::invalid_argument(std::string("tyche::") + fn + ": n = " + std::to_string(len) +
                                " but v has size " + std::to_string(size));
}
}  // namespace detail

/// The first Len elements of v, Len fixed at compile time: `head<3>(v)`.
template <std::size_t Len, expression V>
auto head(const V& v) {
  using N = detail::node_t<V>;
  static_assert(is_vector_v<N> && (extent_v<N> == dynamic_extent || Len <= extent_v<N>),
                "tyche::head(v, n) requires 'v' to be a vector expression of at least n elements");
  const N n = detail::as_node(v);
  detail::check_length("head<n>(v)", n.size(), Len);
  if constexpr (Len == extent_v<N>) return n;
  else return detail::segment_node<Len>(n, 0, Len);
}
/// The first len elements of v (Stan's head(v, n)).
template <expression V>
auto head(const V& v, std::size_t len) {
  using N = detail::node_t<V>;
  static_assert(is_vector_v<N>,
                "tyche::head(v, n) requires 'v' to be a vector expression of at least n elements");
  const N n = detail::as_node(v);
  detail::check_length("head(v, n)", n.size(), len);
  return detail::segment_node<dynamic_extent>(n, 0, len);
}

/// The last Len elements of v, Len fixed at compile time: `tail<3>(v)`.
template <std::size_t Len, expression V>
auto tail(const V& v) {
  using N = detail::node_t<V>;
  static_assert(is_vector_v<N> && (extent_v<N> == dynamic_extent || Len <= extent_v<N>),
                "tyche::tail(v, n) requires 'v' to be a vector expression of at least n elements");
  const N n = detail::as_node(v);
  detail::check_length("tail<n>(v)", n.size(), Len);
  if constexpr (Len == extent_v<N>) return n;
  else return detail::segment_node<Len>(n, n.size() - Len, Len);
}
/// The last len elements of v (Stan's tail(v, n)).
template <expression V>
auto tail(const V& v, std::size_t len) {
  using N = detail::node_t<V>;
  static_assert(is_vector_v<N>,
                "tyche::tail(v, n) requires 'v' to be a vector expression of at least n elements");
  const N n = detail::as_node(v);
  detail::check_length("tail(v, n)", n.size(), len);
  return detail::segment_node<dynamic_extent>(n, n.size() - len, len);
}

/// Elements I … I + Len − 1 of v, 1-based as in Stan, I and Len fixed at compile time:
/// `segment<2, 3>(v)` is v[2:4] (at(v, 1) … at(v, 3)).
template <std::size_t I, std::size_t Len, expression V>
auto segment(const V& v) {
  using N = detail::node_t<V>;
  static_assert(is_vector_v<N> && I >= 1 && (extent_v<N> == dynamic_extent || I - 1 + Len <= extent_v<N>),
                "tyche::segment(v, i, n) requires 'v' to be a vector expression with elements "
                "i ... i + n - 1 (i is 1-based: at least 1)");
  const N n = detail::as_node(v);
  detail::check_segment("segment<i, n>(v)", n.size(), I, Len);
  if constexpr (I == 1 && Len == extent_v<N>) return n;
  else return detail::segment_node<Len>(n, I - 1, Len);
}
/// Elements i … i + len − 1 of v, i 1-based as in Stan: segment(v, 2, 3) is v[2:4].
template <expression V>
auto segment(const V& v, std::size_t i, std::size_t len) {
  using N = detail::node_t<V>;
  static_assert(is_vector_v<N>,
                "tyche::segment(v, i, n) requires 'v' to be a vector expression with elements "
                "i ... i + n - 1 (i is 1-based: at least 1)");
  const N n = detail::as_node(v);
  detail::check_segment("segment(v, i, n)", n.size(), i, len);
  return detail::segment_node<dynamic_extent>(n, i - 1, len);
}

}  // namespace tyche
