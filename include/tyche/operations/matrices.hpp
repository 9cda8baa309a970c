// tyche/operations/matrices.hpp — the functions users call with K × K matrices given as vectors
// of their K² entries in row-major order (entry (i, j) at i·K + j, 0-based):
// diag_pre_multiply, multiply_lower_tri_self_transpose and cholesky_decompose, Stan's functions
// of the same names (`diag_pre_multiply(tau, L_Omega)`). Each makes a vector_op node whose op is
// in autodiff/matrix_ops.hpp.
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/matrix_ops.hpp>
#include <tyche/core/nodes.hpp>

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace tyche {

namespace detail {
/// K for a vector of K² entries; throws (naming fn and the argument) when n is not a square.
inline std::size_t matrix_order(std::size_t n, const char* fn, const char* arg) {
  std::size_t k = static_cast<std::size_t>(std::llround(std::sqrt(static_cast<double>(n))));
  if (k * k != n || n == 0)
    throw std::invalid_argument(std::string("tyche::") + fn + ": '" + arg + "' has " + std::to_string(n) +
                                " values, which is not the number of entries of a square matrix "
                                "(K*K, row major)");
  return k;
}
}  // namespace detail

/// diag(v) M for a vector v of K values and a K × K matrix M given as its K² entries (row
/// major): Stan's diag_pre_multiply(v, M), e.g. the Cholesky factor of a covariance matrix
/// from scales and a correlation Cholesky factor, `diag_pre_multiply(tau, L_Omega)`.
template <expression V, expression M>
auto diag_pre_multiply(const V& v, const M& m) {
  using NV = detail::node_t<V>;
  using NM = detail::node_t<M>;
  static_assert(is_vector_v<NV> && is_vector_v<NM>,
                "tyche::diag_pre_multiply(v, M) requires 'v' (K values) and 'M' (the K*K entries of "
                "a matrix, row major) to be vector expressions");
  const NV nv = detail::as_node(v);
  const NM nm = detail::as_node(m);
  if (nm.size() != nv.size() * nv.size())
    throw std::invalid_argument("tyche::diag_pre_multiply(v, M): 'M' has " + std::to_string(nm.size()) +
                                " entries but 'v' has size " + std::to_string(nv.size()) + " (M must be " +
                                std::to_string(nv.size()) + " x " + std::to_string(nv.size()) + ", row major)");
  return make_vector_op(ops::diag_pre_multiply_map{nv.size()}, nm.size(), nv, nm);
}

/// L Lᵀ for a lower-triangular K × K matrix L given as its K² entries (row major; the part above
/// the diagonal is not read): Stan's multiply_lower_tri_self_transpose(L), e.g. a covariance
/// matrix from its Cholesky factor. K² values.
template <expression L>
auto multiply_lower_tri_self_transpose(const L& l) {
  using N = detail::node_t<L>;
  static_assert(is_vector_v<N>, "tyche::multiply_lower_tri_self_transpose(L) requires 'L' (the K*K "
                                "entries of a matrix, row major) to be a vector expression");
  const N n = detail::as_node(l);
  const std::size_t k = detail::matrix_order(n.size(), "multiply_lower_tri_self_transpose(L)", "L");
  return make_vector_op(ops::multiply_lower_tri_self_transpose_map{k}, n.size(), n);
}

/// The lower Cholesky factor of a symmetric positive-definite K × K matrix given as its K²
/// entries (row major; only the lower triangle is read): Stan's cholesky_decompose. A matrix
/// that is not positive definite gives NaN, which the sampler rejects.
template <expression C>
auto cholesky_decompose(const C& c) {
  using N = detail::node_t<C>;
  static_assert(is_vector_v<N>, "tyche::cholesky_decompose(C) requires 'C' (the K*K entries of a "
                                "matrix, row major) to be a vector expression");
  const N n = detail::as_node(c);
  const std::size_t k = detail::matrix_order(n.size(), "cholesky_decompose(C)", "C");
  return make_vector_op(ops::cholesky_decompose_map{k}, n.size(), n);
}

}  // namespace tyche
