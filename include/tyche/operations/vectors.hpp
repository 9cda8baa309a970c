// tyche/operations/vectors.hpp — the functions that make vectors that are not elementwise:
// cumulative_sum, linear_recurrence, cholesky_multiply and gather. Each makes a vector_op node
// (core/nodes.hpp) whose op, with its forward step and vector–Jacobian product, is in
// autodiff/vector_ops.hpp; the evaluator materialises the operands, runs the op into a buffer of
// the workspace and, in the reverse pass, its vector–Jacobian product. gather through
// elementwise operations reads the parameter in the loop instead. See docs/design/vector-ops.md.
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/vector_ops.hpp>
#include <tyche/core/leaves.hpp>
#include <tyche/core/nodes.hpp>

#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace tyche {

namespace detail {
/// gather through elementwise operations down to the leaves, as at() does for one element:
/// gather(exp(u), idx) = exp(gather(u, idx)), so a gathered parameter is read in the loop.
/// The indices must have been checked.
template <std::size_t Shift = 0, class Index, class N>
auto gather_node(const N& n, const Index* idx, std::size_t len) {
  if constexpr (kind_of<N> == node_kind::vector_param) {
    return param_gather<N, Index, Shift>{{}, n, idx, len};
  } else if constexpr (kind_of<N> == node_kind::unary) {
    auto a = gather_node<Shift>(n.a, idx, len);
    return unary_node<typename N::rule_type, decltype(a)>{{}, n.rule, a};
  } else if constexpr (kind_of<N> == node_kind::binary) {
    auto pick = [&](const auto& x) {
      if constexpr (is_vector_v<std::remove_cvref_t<decltype(x)>>) return gather_node<Shift>(x, idx, len);
      else return x;
    };
    auto a = pick(n.a);
    auto b = pick(n.b);
    return binary_node<typename N::rule_type, decltype(a), decltype(b)>{{}, n.rule, a, b};
  } else {
    return make_vector_op(ops::gather_map<Index, Shift>{idx, len}, len, n);
  }
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
/// group effect of each observation: `normal(alpha + gather(a, group), sigma).observe(y)`.
/// Every index is checked against v's size now. The indices are viewed, not copied: like data,
/// they must outlive the model and must not change after it is compiled.
template <expression V>
auto gather(const V& v, std::span<const int> idx) {
  using N = detail::node_t<V>;
  static_assert(is_vector_v<N>, "tyche::gather(v, idx) requires 'v' to be a vector expression");
  const N n = detail::as_node(v);
  for (std::size_t i = 0; i < idx.size(); ++i) {
    if (idx[i] < 0 || static_cast<std::size_t>(idx[i]) >= n.size())
      throw std::out_of_range("tyche::gather(v, idx): idx[" + std::to_string(i + 1) + "] = " +
                              std::to_string(idx[i]) + " is outside 0 … " +
                              std::to_string(n.size()) + " − 1 (indices are 0-based; v has size " +
                              std::to_string(n.size()) + ")");
  }
  return detail::gather_node(n, idx.data(), idx.size());
}
template <expression V>
auto gather(const V& v, const std::vector<int>& idx) {
  return gather(v, std::span<const int>(idx));
}
/// A temporary index vector would dangle: keep the indices alive beside the data.
template <expression V>
auto gather(const V& v, std::vector<int>&& idx) = delete;

}  // namespace tyche
