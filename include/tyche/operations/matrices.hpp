// tyche/operations/matrices.hpp — the functions users call with K × K matrices given as vectors
// of their K² entries in row-major order (entry (i, j) at i·K + j, 0-based):
// diag_pre_multiply, multiply_lower_tri_self_transpose, cholesky_decompose, matvec(M, v),
// rows_dot_product and columns_dot_product (which take data matrices too), gp_exp_quad_cov, gp_dot_prod_cov,
// gp_exponential_cov, gp_matern32_cov, gp_matern52_cov, gp_periodic_cov (of data points) and
// add_diag, and the linear algebra of square matrices: matmul, transpose, diagonal, trace,
// diag_post_multiply, quad_form_diag, quad_form, tcrossprod, crossprod, mdivide_left_tri_low,
// mdivide_right_tri_low, mdivide_left_spd, inverse_spd, log_determinant_spd, and of general square
// matrices inverse, log_determinant, determinant, mdivide_left, mdivide_right, matrix_exp,
// matrix_exp_multiply, scale_matrix_exp_multiply, matrix_power, eigenvalues_sym, eigenvectors_sym,
// and of any R × K matrix singular_values, svd_U, svd_V, generalized_inverse, qr_thin_Q, qr_thin_R,
// qr_Q, qr_R —
// Stan's functions of
// the same names (`diag_pre_multiply(tau, L_Omega)`; Stan's `A * B` is matmul(A, B)). Each makes a vector_op node whose op is in
// autodiff/matrix_ops.hpp. (matvec(X, v) for a data matrix X is in operations/functions.hpp.)
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/matrix_ops.hpp>
#include <tyche/autodiff/multivariate_ops.hpp>
#include <tyche/autodiff/qr.hpp>
#include <tyche/autodiff/svd.hpp>
#include <tyche/core/leaves.hpp>
#include <tyche/core/nodes.hpp>
#include <tyche/interval/support.hpp>
#include <tyche/operations/functions.hpp>
#include <tyche/scalar/format.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

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

/// Throws unless the n values of the matrix argument b are a positive multiple of K, the order of
/// the square argument a (b a K × J matrix, or J × K as shape says; row major).
inline void check_multiple_of_order(std::size_t n, std::size_t k, const char* fn, const char* a, const char* b,
                                    const char* shape) {
  if (n % k != 0 || n == 0)
    throw std::invalid_argument(std::string("tyche::") + fn + ": '" + a + "' is " + std::to_string(k) + " x " +
                                std::to_string(k) + " but '" + b + "' has " + std::to_string(n) + " values (" + shape +
                                ")");
}

/// True when n is K² for some K ≥ 1, or not known at compile time.
constexpr bool static_square(std::size_t n) {
  if (n == dynamic_extent) return true;
  for (std::size_t k = 1; k * k <= n; ++k)
    if (k * k == n) return true;
  return false;
}

template <class N>
inline constexpr bool is_data_matrix_v = kind_of<N> == node_kind::data_matrix;

/// A matrix argument of rows_dot_product: a data matrix (of doubles: a float matrix is for
/// matvec only), or a vector expression of entries.
template <class N>
inline constexpr bool matrix_argument_v = std::is_same_v<N, data_matrix> || is_vector_v<N>;

/// Static sizes of two vector-expression matrices that cannot be one square shape.
template <class NA, class NB>
inline constexpr bool static_shapes_agree_v = [] {
  if constexpr (is_data_matrix_v<NA> || is_data_matrix_v<NB>) {
    return true;  // a data matrix's shape is known at run time
  } else {
    constexpr std::size_t a = extent_v<NA>, b = extent_v<NB>;
    return (a == dynamic_extent || b == dynamic_extent || a == b) && static_square(a) && static_square(b);
  }
}();

/// rows_dot_product / columns_dot_product of A and B (data matrices or K*K vector expressions).
template <bool Columns, class A, class B>
auto dot_products(const A& a, const B& b, const char* fn) {
  using NA = node_t<A>;
  using NB = node_t<B>;
  const NA na = as_node(a);
  const NB nb = as_node(b);
  auto entries = [](const auto& n) {
    if constexpr (is_data_matrix_v<std::remove_cvref_t<decltype(n)>>) return n.rows * n.cols;
    else return n.size();
  };
  auto shape = [](const auto& n) {
    if constexpr (is_data_matrix_v<std::remove_cvref_t<decltype(n)>>)
      return std::to_string(n.rows) + " x " + std::to_string(n.cols);
    else
      return "a vector of " + std::to_string(n.size()) + " entries";
  };
  if (entries(na) != entries(nb) ||
      (is_data_matrix_v<NA> && is_data_matrix_v<NB> && shape(na) != shape(nb)))
    throw std::invalid_argument(std::string("tyche::") + fn + ": 'A' is " + shape(na) + " but 'B' is " + shape(nb));
  using map = ops::rows_dot_product_map<Columns>;
  if constexpr (is_data_matrix_v<NA>) {
    check_matrix_finite(na, fn, "A");
    if constexpr (is_data_matrix_v<NB>) check_matrix_finite(nb, fn, "B");
    const std::size_t m = Columns ? na.cols : na.rows;
    if constexpr (is_data_matrix_v<NB>)  // data only: computed once, when the model is built
      return make_vector_op(map{na.rows, na.cols, na.ptr}, m, data_vector<>{{}, nb.ptr, nb.rows * nb.cols});
    else
      return make_vector_op(map{na.rows, na.cols, na.ptr}, m, nb);
  } else if constexpr (is_data_matrix_v<NB>) {
    return dot_products<Columns>(nb, na, fn);  // Σ aᵢⱼ bᵢⱼ is symmetric in A and B
  } else {
    const std::size_t k = matrix_order(na.size(), fn, "A");
    return make_vector_op(map{k, k, nullptr}, k, na, nb);
  }
}
}  // namespace detail

/// (Σⱼ Aᵢⱼ Bᵢⱼ)ᵢ, the dot products of the rows of A and B: Stan's rows_dot_product. A and B are
/// data matrices (`matrix(x, rows, cols)`) or vector expressions of the K² entries of a K × K
/// matrix (row major); with one of each, the data matrix gives the shape.
template <expression A, expression B>
auto rows_dot_product(const A& a, const B& b) {
  using NA = detail::node_t<A>;
  using NB = detail::node_t<B>;
  static_assert(detail::matrix_argument_v<NA> && detail::matrix_argument_v<NB> &&
                    detail::static_shapes_agree_v<NA, NB>,
                "tyche::rows_dot_product(A, B) requires 'A' and 'B' to be matrices of one shape: data "
                "matrices of doubles, or vector expressions of the K*K entries of a square matrix (row major)");
  return detail::dot_products<false>(a, b, "rows_dot_product(A, B)");
}

/// (Σᵢ Aᵢⱼ Bᵢⱼ)ⱼ, the dot products of the columns of A and B: Stan's columns_dot_product; the
/// arguments as for rows_dot_product.
template <expression A, expression B>
auto columns_dot_product(const A& a, const B& b) {
  using NA = detail::node_t<A>;
  using NB = detail::node_t<B>;
  static_assert(detail::matrix_argument_v<NA> && detail::matrix_argument_v<NB> &&
                    detail::static_shapes_agree_v<NA, NB>,
                "tyche::columns_dot_product(A, B) requires 'A' and 'B' to be matrices of one shape: "
                "data matrices of doubles, or vector expressions of the K*K entries of a square matrix (row major)");
  return detail::dot_products<true>(a, b, "columns_dot_product(A, B)");
}

namespace detail {
/// Whether a vector of nv values is J ≥ 1 vectors of the order of a square matrix of nm entries,
/// or a size is not known at compile time.
constexpr bool static_matvec_blocks(std::size_t nm, std::size_t nv) {
  if (nm == dynamic_extent || nv == dynamic_extent) return true;
  for (std::size_t k = 1; k * k <= nm; ++k)
    if (k * k == nm) return nv % k == 0 && nv > 0;
  return false;
}
}  // namespace detail

/// M v for a K × K matrix M given as a vector expression of its K² entries (row major: a
/// Cholesky factor, `diag_pre_multiply(tau, L_Omega)`, a matrix built from parameters) and a
/// vector expression v of K values (parameters or data): Stan's `M * v`. With v of J·K values,
/// J vectors of K (vector j at j·K), M times each of them, J·K values: Stan's `(M * Z)'` for a
/// K × J matrix Z — the non-centred form of correlated group effects,
/// `matvec(diag_pre_multiply(tau, L_Omega), z)` with z ~ std_normal of J·K values. For the
/// Cholesky factor of a matrix C of parameters, cholesky_multiply(C, z) does the same without the
/// K² buffer of L.
template <expression M, expression V>
  requires(!std::is_same_v<std::remove_cvref_t<M>, data_matrix>)
auto matvec(const M& m, const V& v) {
  using NM = detail::node_t<M>;
  using NV = detail::node_t<V>;
  static_assert(is_vector_v<NM> && is_vector_v<NV> && detail::static_matvec_blocks(extent_v<NM>, extent_v<NV>),
                "tyche::matvec(M, v) requires 'M' to be a vector expression of the K*K entries of a square "
                "matrix (row major) and 'v' one of K values (or of J*K: J vectors of K)");
  const NM nm = detail::as_node(m);
  const NV nv = detail::as_node(v);
  const std::size_t k = detail::matrix_order(nm.size(), "matvec(M, v)", "M");
  if (nv.size() % k != 0 || nv.size() == 0)
    throw std::invalid_argument("tyche::matvec(M, v): 'M' is " + std::to_string(k) + " x " + std::to_string(k) +
                                " but 'v' has size " + std::to_string(nv.size()) + " (K values, or J*K: J vectors of K)");
  return make_vector_op(ops::matvec_map{k}, nv.size(), nm, nv);
}

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

/// The squared-exponential (exponentiated quadratic) covariance matrix of the points x with
/// marginal standard deviation alpha and length-scale rho: Kᵢⱼ = α² exp(−‖xᵢ − xⱼ‖² / (2ρ²)),
/// Stan's gp_exp_quad_cov(x, alpha, rho). x is data: `data(x)` for n points on a line, or
/// `matrix(x, n, d)` for n points in d dimensions (one per row; viewed, so it must outlive the
/// model). The n² entries, row major: an argument of cholesky_decompose, multi_normal, add_diag.
/// alpha and rho must be positive (their supports, or their values where they are numbers or data).
/// rho may be a vector of d length-scales, one per dimension of the points (Stan's
/// gp_exp_quad_cov(x, alpha, array[] real rho), automatic relevance determination):
/// Kᵢⱼ = α² exp(−½ Σ_c (x_ic − x_jc)² / ρ_c²).
template <detail::operand A, detail::operand R>
auto gp_exp_quad_cov(const data_matrix& x, const A& alpha, const R& rho) {
  using NA = detail::node_t<A>;
  using NR = detail::node_t<R>;
  static_assert(!is_vector_v<NA>, "tyche::gp_exp_quad_cov(x, alpha, rho): alpha must be a scalar");
  if constexpr (is_vector_v<NR>) {
    const std::size_t k = detail::as_node(rho).size();
    if (k != x.cols)
      throw std::invalid_argument("tyche::gp_exp_quad_cov(x, alpha, rho): rho has " + std::to_string(k) +
                                  " length-scales but the points of " + std::string(x.name ? x.name : "x") +
                                  " have " + std::to_string(x.cols) + " dimensions (one per column)");
  }
  static_assert(argument_support_t<NA, domains::positive>::ok,
                "tyche::gp_exp_quad_cov(x, alpha, rho): alpha must be > 0, but its support (spelled out in "
                "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
  static_assert(argument_support_t<NR, domains::positive>::ok,
                "tyche::gp_exp_quad_cov(x, alpha, rho): rho must be > 0, but its support (spelled out in "
                "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
  detail::check_matrix_finite(x, "gp_exp_quad_cov(x, alpha, rho)", "x");
  detail::check_argument<domains::positive>("gp_exp_quad_cov(x, alpha, rho)", "alpha", detail::as_node(alpha));
  detail::check_argument<domains::positive>("gp_exp_quad_cov(x, alpha, rho)", "rho", detail::as_node(rho));
  return make_vector_op(ops::gp_exp_quad_cov_map{x.ptr, x.rows, x.cols}, x.rows * x.rows, detail::as_node(alpha),
                        detail::as_node(rho));
}
template <detail::operand A, detail::operand R>
auto gp_exp_quad_cov(const data_vector<>& x, const A& alpha, const R& rho) {
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!std::isfinite(x.ptr[i]))
      throw std::invalid_argument("tyche::gp_exp_quad_cov(x, alpha, rho): " + std::string(x.name ? x.name : "x") +
                                  "[" + std::to_string(i + 1) + "] = " + detail::format_number(x.ptr[i]) +
                                  "; data must be finite");
  return gp_exp_quad_cov(matrix(x.ptr, x.size(), 1, x.name), alpha, rho);
}
/// The same under Stan's older name.
template <class X, detail::operand A, detail::operand R>
auto cov_exp_quad(const X& x, const A& alpha, const R& rho) -> decltype(gp_exp_quad_cov(x, alpha, rho)) {
  return gp_exp_quad_cov(x, alpha, rho);
}

namespace detail {
/// A data vector's points as a matrix of one column (each value checked finite, named fn).
inline data_matrix gp_points(const data_vector<>& x, const char* fn) {
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!std::isfinite(x.ptr[i]))
      throw std::invalid_argument(std::string("tyche::") + fn + ": " + std::string(x.name ? x.name : "x") + "[" +
                                  std::to_string(i + 1) + "] = " + format_number(x.ptr[i]) + "; data must be finite");
  return matrix(x.ptr, x.size(), 1, x.name);
}
inline data_matrix gp_points(const data_matrix& x, const char* fn) {
  check_matrix_finite(x, fn, "x");
  return x;
}
/// gp_exponential_cov, gp_matern32_cov, gp_matern52_cov and gp_periodic_cov: the parameters'
/// supports checked (at compile time from their types, at run time where they are numbers or
/// data), then the op of kernel Kind.
template <ops::gp_kernel Kind, class X, class A, class R, class... P>
auto gp_kernel_cov(const X& x, const char* fn, const A& alpha, const R& rho, const P&... period) {
  using NA = node_t<A>;
  using NR = node_t<R>;
  static_assert(!is_vector_v<NA> && (!is_vector_v<node_t<P>> && ...),
                "tyche::gp_exponential_cov, gp_matern32_cov, gp_matern52_cov, gp_periodic_cov(x, alpha, rho[, "
                "period]): alpha and period must be scalars");
  static_assert(Kind != ops::gp_kernel::periodic || !is_vector_v<NR>,
                "tyche::gp_periodic_cov(x, alpha, rho, period): rho must be a scalar (one length-scale per "
                "dimension is for gp_exp_quad_cov, gp_exponential_cov, gp_matern32_cov and gp_matern52_cov)");
  static_assert(argument_support_t<NA, domains::positive>::ok,
                "tyche::gp_exponential_cov, gp_matern32_cov, gp_matern52_cov, gp_periodic_cov(x, alpha, rho[, "
                "period]): alpha (the marginal standard deviation) must be > 0, but its support (spelled out in "
                "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
  static_assert(argument_support_t<NR, domains::positive>::ok,
                "tyche::gp_exponential_cov, gp_matern32_cov, gp_matern52_cov, gp_periodic_cov(x, alpha, rho[, "
                "period]): rho (the length-scale) must be > 0, but its support (spelled out in "
                "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
  static_assert((argument_support_t<node_t<P>, domains::positive>::ok && ...),
                "tyche::gp_periodic_cov(x, alpha, rho, period): period must be > 0, but its support (spelled out "
                "in tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
  const data_matrix pts = gp_points(x, fn);
  if constexpr (is_vector_v<NR>) {
    const std::size_t k = as_node(rho).size();
    if (k != pts.cols)
      throw std::invalid_argument(std::string("tyche::") + fn + ": rho has " + std::to_string(k) +
                                  " length-scales but the points of " + std::string(pts.name ? pts.name : "x") +
                                  " have " + std::to_string(pts.cols) + " dimensions (one per column)");
  }
  check_argument<domains::positive>(fn, "alpha", as_node(alpha));
  check_argument<domains::positive>(fn, "rho", as_node(rho));
  (check_argument<domains::positive>(fn, "period", as_node(period)), ...);
  return make_vector_op(ops::gp_cov_map<Kind>{pts.ptr, pts.rows, pts.cols}, pts.rows * pts.rows, as_node(alpha),
                        as_node(rho), as_node(period)...);
}
}  // namespace detail

/// The dot-product (linear-regression) covariance of the points x: Kᵢⱼ = σ² + xᵢ·xⱼ, Stan's
/// gp_dot_prod_cov(x, sigma). x as for gp_exp_quad_cov: `data(x)` for points on a line,
/// `matrix(x, n, d)` in d dimensions (viewed). σ a scalar ≥ 0. The n² entries, row major (positive
/// semi-definite only: add_diag a noise variance or a jitter before a Cholesky factor).
template <class X, detail::operand S>
auto gp_dot_prod_cov(const X& x, const S& sigma) {
  using NS = detail::node_t<S>;
  static_assert(!is_vector_v<NS>, "tyche::gp_dot_prod_cov(x, sigma): sigma must be a scalar");
  static_assert(argument_support_t<NS, domains::nonnegative>::ok,
                "tyche::gp_dot_prod_cov(x, sigma): sigma must be >= 0, but its support (spelled out in "
                "tyche::support_is<...> in this diagnostic) is not inside [0, inf)" TYCHE_SUPPORT_HINT);
  const data_matrix pts = detail::gp_points(x, "gp_dot_prod_cov(x, sigma)");
  detail::check_argument<domains::nonnegative>("gp_dot_prod_cov(x, sigma)", "sigma", detail::as_node(sigma));
  return make_vector_op(ops::gp_dot_prod_cov_map{pts.ptr, pts.rows, pts.cols}, pts.rows * pts.rows,
                        detail::as_node(sigma));
}

/// The exponential (Matérn 1/2) covariance matrix of the points x: Kᵢⱼ = α² exp(−‖xᵢ − xⱼ‖/ρ),
/// Stan's gp_exponential_cov(x, alpha, rho). x as for gp_exp_quad_cov: `data(x)` for points on a
/// line, `matrix(x, n, d)` in d dimensions (viewed). The n² entries, row major.
template <class X, detail::operand A, detail::operand R>
auto gp_exponential_cov(const X& x, const A& alpha, const R& rho) {
  return detail::gp_kernel_cov<ops::gp_kernel::exponential>(x, "gp_exponential_cov(x, alpha, rho)", alpha, rho);
}
/// The Matérn 3/2 covariance: Kᵢⱼ = α² (1 + √3 r/ρ) exp(−√3 r/ρ), r = ‖xᵢ − xⱼ‖ (Stan's
/// gp_matern32_cov). As gp_exponential_cov otherwise.
template <class X, detail::operand A, detail::operand R>
auto gp_matern32_cov(const X& x, const A& alpha, const R& rho) {
  return detail::gp_kernel_cov<ops::gp_kernel::matern32>(x, "gp_matern32_cov(x, alpha, rho)", alpha, rho);
}
/// The Matérn 5/2 covariance: Kᵢⱼ = α² (1 + √5 r/ρ + 5r²/(3ρ²)) exp(−√5 r/ρ) (Stan's
/// gp_matern52_cov). As gp_exponential_cov otherwise.
template <class X, detail::operand A, detail::operand R>
auto gp_matern52_cov(const X& x, const A& alpha, const R& rho) {
  return detail::gp_kernel_cov<ops::gp_kernel::matern52>(x, "gp_matern52_cov(x, alpha, rho)", alpha, rho);
}
/// The periodic covariance: Kᵢⱼ = α² exp(−2 sin²(π ‖xᵢ − xⱼ‖/p) / ρ²) with period p (Stan's
/// gp_periodic_cov(x, sigma, l, p)). As gp_exponential_cov otherwise; p must be > 0.
template <class X, detail::operand A, detail::operand R, detail::operand P>
auto gp_periodic_cov(const X& x, const A& alpha, const R& rho, const P& period) {
  return detail::gp_kernel_cov<ops::gp_kernel::periodic>(x, "gp_periodic_cov(x, alpha, rho, period)", alpha, rho,
                                                         period);
}

/// K + diag(v) for a K × K matrix given as its K² entries (row major) and v a scalar (added to
/// each diagonal entry: a noise variance, a jitter) or a vector of K values: Stan's add_diag.
template <expression M, detail::operand V>
auto add_diag(const M& m, const V& v) {
  using NM = detail::node_t<M>;
  using NV = detail::node_t<V>;
  static_assert(is_vector_v<NM>, "tyche::add_diag(M, v) requires 'M' (the K*K entries of a matrix, row major) to be "
                                 "a vector expression");
  const NM nm = detail::as_node(m);
  const NV nv = detail::as_node(v);
  const std::size_t k = detail::matrix_order(nm.size(), "add_diag(M, v)", "M");
  if constexpr (is_vector_v<NV>) {
    if (nv.size() != k)
      throw std::invalid_argument("tyche::add_diag(M, v): 'M' is " + std::to_string(k) + " x " + std::to_string(k) +
                                  " but 'v' has size " + std::to_string(nv.size()) + " (a scalar or K values)");
  }
  return make_vector_op(ops::add_diag_map{k}, nm.size(), nm, nv);
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

namespace detail {
/// A matrix argument as a vector node of its entries: a data matrix (checked finite, and square
/// unless rows is given: then it must have that many rows) becomes the data vector of its rows ×
/// cols values.
template <class M>
auto matrix_entries(const M& m, const char* fn, const char* arg, std::size_t rows = 0) {
  using N = node_t<M>;
  if constexpr (is_data_matrix_v<N>) {
    const N n = as_node(m);
    check_matrix_finite(n, fn, arg);
    if (rows == 0 ? n.rows != n.cols : n.rows != rows)
      throw std::invalid_argument(std::string("tyche::") + fn + ": '" + arg + "' is " + std::to_string(n.rows) + " x " +
                                  std::to_string(n.cols) + " but must be " +
                                  (rows == 0 ? std::string("square") : std::to_string(rows) + " x J"));
    return data_vector<>{{}, n.ptr, n.rows * n.cols};
  } else {
    static_assert(is_vector_v<N>, "tyche: a matrix argument must be a data matrix (matrix(x, K, K)) or a vector "
                                  "expression of the K*K entries of a square matrix (row major)");
    return as_node(m);
  }
}
/// The values of a node when they are data (a data vector), else null.
template <class N>
const double* data_values(const N& n) {
  if constexpr (kind_of<N> == node_kind::data_vector) return n.ptr;
  else return nullptr;
}
/// A data triangular factor: its diagonal non-zero (the upper triangle is not read).
inline void check_triangular_data(const double* l, std::size_t k, const char* fn, const char* arg) {
  if (l == nullptr) return;
  for (std::size_t i = 0; i < k; ++i)
    if (!(l[i * k + i] != 0.0))
      throw std::invalid_argument(std::string("tyche::") + fn + ": " + arg + "[" + std::to_string(i + 1) + ", " +
                                  std::to_string(i + 1) + "] = " + format_number(l[i * k + i]) +
                                  ": a triangular matrix to solve with needs a non-zero diagonal");
}
/// Data A (k × k) of a symmetric-matrix function: symmetric to within 1e-8 relative, or throws
/// naming the first pair of entries that differ (null: an expression, nothing to check).
inline void check_symmetric_data(const double* a, std::size_t k, const char* fn, const char* arg) {
  if (a == nullptr) return;
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (!(std::fabs(a[i * k + j] - a[j * k + i]) <= 1e-8 * (std::fabs(a[i * k + j]) + std::fabs(a[j * k + i])) + 1e-300))
        throw std::invalid_argument(std::string("tyche::") + fn + ": " + arg + " is not symmetric: " + arg + "[" +
                                    std::to_string(i + 1) + ", " + std::to_string(j + 1) + "] = " +
                                    format_number(a[i * k + j]) + " but " + arg + "[" + std::to_string(j + 1) + ", " +
                                    std::to_string(i + 1) + "] = " + format_number(a[j * k + i]));
}
/// Data A of an SPD function: symmetric and positive definite (the Cholesky pivots), or throws
/// naming the entry.
inline void check_spd_data(const double* a, std::size_t k, const char* fn, const char* arg) {
  if (a == nullptr) return;
  check_symmetric_data(a, k, fn, arg);
  std::vector<double> l(k * k, 0.0);
  for (std::size_t i = 0; i < k; ++i) {
    for (std::size_t j = 0; j <= i; ++j) {
      double v = a[i * k + j];
      for (std::size_t p = 0; p < j; ++p) v -= l[i * k + p] * l[j * k + p];
      if (i == j) {
        if (!(v > 0))
          throw std::invalid_argument(std::string("tyche::") + fn + ": " + arg + " is not positive definite (pivot " +
                                      std::to_string(i + 1) + " is " + format_number(v) + ")");
        l[i * k + i] = std::sqrt(v);
      } else {
        l[i * k + j] = v / l[j * k + j];
      }
    }
  }
}
/// Data A of a general solve or inverse: not singular to working precision, or throws naming the
/// pivot. The pivots of elimination with partial pivoting (LU) are compared with A's largest
/// entry (a pivot ≤ 1e-13 of it: singular in double arithmetic), and the inverse the op will
/// compute (Gauss–Jordan, which rounds differently) must be finite.
inline void check_nonsingular_data(const double* a, std::size_t k, const char* fn, const char* arg) {
  if (a == nullptr) return;
  double big = 0;
  for (std::size_t e = 0; e < k * k; ++e) big = std::max(big, std::fabs(a[e]));
  std::vector<double> work(a, a + k * k), inv(k * k);
  double log_abs_det = 0, sign = 1;
  pivoted_elimination(k, work.data(), static_cast<double*>(nullptr), log_abs_det, sign);
  for (std::size_t c = 0; c < k; ++c)
    if (!(std::fabs(work[c * k + c]) > 1e-13 * big))
      throw std::invalid_argument(std::string("tyche::") + fn + ": " + arg + " is singular (pivot " +
                                  std::to_string(c + 1) + " of elimination with partial pivoting is " +
                                  format_number(work[c * k + c]) + ", against " + format_number(big) +
                                  " for the largest entry)");
  work.assign(a, a + k * k);
  pivoted_elimination(k, work.data(), inv.data(), log_abs_det, sign);
  for (std::size_t e = 0; e < k * k; ++e)
    if (!std::isfinite(inv[e]))
      throw std::invalid_argument(std::string("tyche::") + fn + ": " + arg + " is singular (its inverse has " +
                                  format_number(inv[e]) + " at [" + std::to_string(e / k + 1) + ", " +
                                  std::to_string(e % k + 1) + "])");
}
}  // namespace detail

/// A B for a K × K matrix A and B of K·J values, a K × J matrix row major (J = K: a square
/// matrix; J = 1: a column vector): Stan's `A * B`, the K·J entries of the product, row major.
/// A and B are data matrices or vector expressions of their entries.
template <expression A, expression B>
auto matmul(const A& a, const B& b) {
  const auto na = detail::matrix_entries(a, "matmul(A, B)", "A");
  const std::size_t k = detail::matrix_order(na.size(), "matmul(A, B)", "A");
  const auto nb = detail::matrix_entries(b, "matmul(A, B)", "B", k);
  detail::check_multiple_of_order(nb.size(), k, "matmul(A, B)", "A", "B", "K*J: a K x J matrix, row major");
  return make_vector_op(ops::matmul_map<>{k, false}, nb.size(), na, nb);
}

/// Aᵀ of a K × K matrix (its K² entries, row major).
template <expression A>
auto transpose(const A& a) {
  const auto na = detail::matrix_entries(a, "transpose(A)", "A");
  const std::size_t k = detail::matrix_order(na.size(), "transpose(A)", "A");
  return make_vector_op(ops::transpose_map{k}, na.size(), na);
}

namespace detail {
/// A rectangular matrix argument (a data matrix of any shape, or a vector expression of its
/// entries) as a vector node, with its number of columns checked against cols: its rows.
template <class M>
auto rectangular_entries(const M& m, std::size_t cols, const char* fn, const char* arg, std::size_t& rows) {
  using N = node_t<M>;
  if (cols == 0) throw std::invalid_argument(std::string("tyche::") + fn + ": the inner dimension K must be >= 1");
  if constexpr (is_data_matrix_v<N>) {
    const N n = as_node(m);
    check_matrix_finite(n, fn, arg);
    if (n.cols != cols)
      throw std::invalid_argument(std::string("tyche::") + fn + ": '" + arg + "' is " + std::to_string(n.rows) + " x " +
                                  std::to_string(n.cols) + " but K = " + std::to_string(cols));
    rows = n.rows;
    return data_vector<>{{}, n.ptr, n.rows * n.cols};
  } else {
    static_assert(is_vector_v<N>, "tyche: a matrix argument must be a data matrix (matrix(x, R, C)) or a vector "
                                  "expression of its entries (row major)");
    const N n = as_node(m);
    if (n.size() % cols != 0 || n.size() == 0)
      throw std::invalid_argument(std::string("tyche::") + fn + ": '" + arg + "' has " + std::to_string(n.size()) +
                                  " values, which is not a multiple of K = " + std::to_string(cols) +
                                  " (an R x K matrix, row major)");
    rows = n.size() / cols;
    return n;
  }
}
}  // namespace detail

/// A B for an R × K matrix A (R·K values row major, or a data matrix of K columns) and a K × J
/// matrix B (K·J values): the R·J entries of the product, row major, K given (the inner
/// dimension, which the sizes alone do not decide). Stan's `A * B` for matrices that are not
/// square: a multivariate regression's `matmul(matrix(x, N, K), beta, K)` with beta K·J
/// coefficients, a factor model's loadings.
template <expression A, expression B>
auto matmul(const A& a, const B& b, std::size_t k) {
  std::size_t rows = 0;
  const auto na = detail::rectangular_entries(a, k, "matmul(A, B, K)", "A", rows);
  const auto nb = detail::matrix_entries(b, "matmul(A, B, K)", "B", k);
  if (nb.size() % k != 0 || nb.size() == 0)
    throw std::invalid_argument("tyche::matmul(A, B, K): 'B' has " + std::to_string(nb.size()) +
                                " values, which is not a multiple of K = " + std::to_string(k) +
                                " (a K x J matrix, row major)");
  return make_vector_op(ops::matmul_map<true>{k, false, rows}, rows * (nb.size() / k), na, nb);
}

/// Aᵀ of an R × C matrix (R·C values row major, R given): the C·R entries of the transpose.
template <expression A>
auto transpose(const A& a, std::size_t rows) {
  if (rows == 0) throw std::invalid_argument("tyche::transpose(A, R): the number of rows R must be >= 1");
  std::size_t r = 0, size = detail::operand_size(a);
  if constexpr (detail::is_data_matrix_v<detail::node_t<A>>) size = detail::as_node(a).rows * detail::as_node(a).cols;
  if (size % rows != 0 || size == 0)
    throw std::invalid_argument("tyche::transpose(A, R): 'A' has " + std::to_string(size) +
                                " values, which is not R = " + std::to_string(rows) + " rows of equal length");
  const auto na = detail::rectangular_entries(a, size / rows, "transpose(A, R)", "A", r);
  if (r != rows)
    throw std::invalid_argument("tyche::transpose(A, R): 'A' has " + std::to_string(size) +
                                " values, which is not R = " + std::to_string(rows) + " rows of equal length");
  return make_vector_op(ops::transpose_map{na.size() / rows, rows}, na.size(), na);
}

/// The K diagonal entries of a K × K matrix (Stan's diagonal).
template <expression A>
auto diagonal(const A& a) {
  const auto na = detail::matrix_entries(a, "diagonal(A)", "A");
  const std::size_t k = detail::matrix_order(na.size(), "diagonal(A)", "A");
  return make_vector_op(ops::diagonal_map{k}, k, na);
}

/// The trace Σᵢ Aᵢᵢ of a K × K matrix.
template <expression A>
auto trace(const A& a) {
  return sum(diagonal(a));
}

/// M diag(v) for a K × K matrix M and v of K values: Stan's diag_post_multiply(M, v).
template <expression M, expression V>
auto diag_post_multiply(const M& m, const V& v) {
  const auto nm = detail::matrix_entries(m, "diag_post_multiply(M, v)", "M");
  using NV = detail::node_t<V>;
  static_assert(is_vector_v<NV>, "tyche::diag_post_multiply(M, v) requires 'v' to be a vector expression of K values");
  const NV nv = detail::as_node(v);
  if (nm.size() != nv.size() * nv.size())
    throw std::invalid_argument("tyche::diag_post_multiply(M, v): 'M' has " + std::to_string(nm.size()) +
                                " entries but 'v' has size " + std::to_string(nv.size()) + " (M must be " +
                                std::to_string(nv.size()) + " x " + std::to_string(nv.size()) + ", row major)");
  return make_vector_op(ops::diag_post_multiply_map{nv.size()}, nm.size(), nm, nv);
}

/// diag(v) M diag(v): Stan's quad_form_diag(M, v), e.g. a covariance matrix from a correlation
/// matrix and scales, `quad_form_diag(Omega, tau)`.
template <expression M, expression V>
auto quad_form_diag(const M& m, const V& v) {
  return diag_post_multiply(diag_pre_multiply(v, detail::matrix_entries(m, "quad_form_diag(M, v)", "M")), v);
}

namespace detail {
/// Bᵀ A B for a K × K matrix A and a K × J matrix B (K·J values row major, or a data matrix of K
/// rows): the J·J entries, row major.
template <class NA, class NB>
auto quad_form_matrix(const NA& na, const NB& nb, std::size_t k) {
  return matmul(transpose(nb, k), matmul(na, nb), k);
}
}  // namespace detail

/// vᵀ A v for a K × K matrix A and a vector v of K values (a scalar): Stan's quad_form(A, v) with
/// a vector; with a data matrix B (K rows), Stan's quad_form(A, B) = Bᵀ A B (J × J, row major).
/// For B an expression of a K × J matrix's entries, quad_form(A, B, J).
template <expression A, expression V>
auto quad_form(const A& a, const V& v) {
  const auto na = detail::matrix_entries(a, "quad_form(A, v)", "A");
  const std::size_t k = detail::matrix_order(na.size(), "quad_form(A, v)", "A");
  using NV = detail::node_t<V>;
  if constexpr (detail::is_data_matrix_v<NV>) {
    return detail::quad_form_matrix(na, detail::matrix_entries(v, "quad_form(A, B)", "B", k), k);
  } else {
    static_assert(is_vector_v<NV>, "tyche::quad_form(A, v) requires 'v' to be a vector expression of K values");
    const NV nv = detail::as_node(v);
    if (nv.size() != k)
      throw std::invalid_argument("tyche::quad_form(A, v): 'A' is " + std::to_string(k) + " x " + std::to_string(k) +
                                  " but 'v' has size " + std::to_string(nv.size()) +
                                  " (a vector of K; for a K x J matrix B, B' A B is quad_form(A, B, J))");
    return dot(nv, matmul(na, nv));
  }
}
/// Bᵀ A B (J × J, row major) for a K × K matrix A and a K × J matrix B (K·J values row major, or a
/// data matrix of K rows and J columns), J given: Stan's quad_form(A, B) with a matrix B (J given
/// because with J = 1 Stan's vector form is a scalar: the sizes alone do not decide).
template <expression A, expression B>
auto quad_form(const A& a, const B& b, std::size_t j) {
  const auto na = detail::matrix_entries(a, "quad_form(A, B, J)", "A");
  const std::size_t k = detail::matrix_order(na.size(), "quad_form(A, B, J)", "A");
  const auto nb = detail::matrix_entries(b, "quad_form(A, B, J)", "B", k);
  if (nb.size() != k * j || j == 0)
    throw std::invalid_argument("tyche::quad_form(A, B, J): 'A' is " + std::to_string(k) + " x " + std::to_string(k) +
                                " but 'B' has " + std::to_string(nb.size()) + " values, not K*J = " +
                                std::to_string(k) + "*" + std::to_string(j) + " (a K x J matrix, row major)");
  return detail::quad_form_matrix(na, nb, k);
}
/// Stan's quad_form_sym: quad_form for a symmetric A (a data A is checked symmetric); the matrix
/// forms' result symmetrised, ½(M + Mᵀ), as Stan's.
template <expression A, expression V>
auto quad_form_sym(const A& a, const V& v) {
  const auto na = detail::matrix_entries(a, "quad_form_sym(A, v)", "A");
  const std::size_t k = detail::matrix_order(na.size(), "quad_form_sym(A, v)", "A");
  detail::check_symmetric_data(detail::data_values(na), k, "quad_form_sym(A, v)", "A");
  if constexpr (detail::is_data_matrix_v<detail::node_t<V>>) {
    const auto m = quad_form(na, v);
    return lit<1, 2> * (m + transpose(m));
  } else {
    return quad_form(na, v);
  }
}
template <expression A, expression B>
auto quad_form_sym(const A& a, const B& b, std::size_t j) {
  const auto na = detail::matrix_entries(a, "quad_form_sym(A, B, J)", "A");
  detail::check_symmetric_data(detail::data_values(na), detail::matrix_order(na.size(), "quad_form_sym(A, B, J)", "A"),
                               "quad_form_sym(A, B, J)", "A");
  const auto m = quad_form(na, b, j);
  return lit<1, 2> * (m + transpose(m));
}
/// trace(Bᵀ A B) = Σᵢⱼ Bᵢⱼ (A B)ᵢⱼ for a K × K matrix A and B of K values or a K × J matrix (K·J
/// values row major, or a data matrix of K rows): Stan's trace_quad_form.
template <expression A, expression B>
auto trace_quad_form(const A& a, const B& b) {
  const auto na = detail::matrix_entries(a, "trace_quad_form(A, B)", "A");
  const std::size_t k = detail::matrix_order(na.size(), "trace_quad_form(A, B)", "A");
  const auto nb = detail::matrix_entries(b, "trace_quad_form(A, B)", "B", k);
  detail::check_multiple_of_order(nb.size(), k, "trace_quad_form(A, B)", "A", "B", "K*J: a K x J matrix, row major");
  return dot(nb, matmul(na, nb));
}
/// trace(D Bᵀ A B) = Σᵢⱼ Dᵢⱼ (Bᵀ A B)ⱼᵢ for a J × J matrix D, a K × K matrix A and a K × J matrix B:
/// Stan's trace_gen_quad_form.
template <expression D, expression A, expression B>
auto trace_gen_quad_form(const D& d, const A& a, const B& b) {
  const char* fn = "trace_gen_quad_form(D, A, B)";
  const auto nd = detail::matrix_entries(d, fn, "D");
  const std::size_t j = detail::matrix_order(nd.size(), fn, "D");
  const auto na = detail::matrix_entries(a, fn, "A");
  const std::size_t k = detail::matrix_order(na.size(), fn, "A");
  const auto nb = detail::matrix_entries(b, fn, "B", k);
  if (nb.size() != k * j)
    throw std::invalid_argument(std::string("tyche::") + fn + ": 'D' is " + std::to_string(j) + " x " +
                                std::to_string(j) + " and 'A' " + std::to_string(k) + " x " + std::to_string(k) +
                                " but 'B' has " + std::to_string(nb.size()) + " values, not K*J (a K x J matrix)");
  return dot(transpose(nd), detail::quad_form_matrix(na, nb, k));
}

/// A Aᵀ and Aᵀ A of a K × K matrix (Stan's tcrossprod, crossprod).
template <expression A>
auto tcrossprod(const A& a) {
  const auto na = detail::matrix_entries(a, "tcrossprod(A)", "A");
  return matmul(na, transpose(na));
}
template <expression A>
auto crossprod(const A& a) {
  const auto na = detail::matrix_entries(a, "crossprod(A)", "A");
  return matmul(transpose(na), na);
}
/// A Aᵀ (R × R) and Aᵀ A (K × K) of an R × K matrix A (R·K values row major), K given.
template <expression A>
auto tcrossprod(const A& a, std::size_t k) {
  std::size_t rows = 0;
  const auto na = detail::rectangular_entries(a, k, "tcrossprod(A, K)", "A", rows);
  return matmul(na, transpose(na, rows), k);
}
template <expression A>
auto crossprod(const A& a, std::size_t k) {
  std::size_t rows = 0;
  const auto na = detail::rectangular_entries(a, k, "crossprod(A, K)", "A", rows);
  return matmul(transpose(na, rows), na, rows);
}

namespace detail {
template <bool Transposed, bool Columns, class L, class B>
auto tri_low_solve(const L& l, const B& b, const char* fn) {
  const auto nl = matrix_entries(l, fn, "L");
  const std::size_t k = matrix_order(nl.size(), fn, "L");
  check_triangular_data(data_values(nl), k, fn, "L");
  const auto nb = matrix_entries(b, fn, "B", Columns ? k : 0);
  check_multiple_of_order(nb.size(), k, fn, "L", "B",
                          Columns ? "K*J: a K x J matrix, row major" : "J*K: a J x K matrix, row major");
  return make_vector_op(ops::tri_low_solve_map<Transposed, Columns>{k}, nb.size(), nl, nb);
}
}  // namespace detail

/// L⁻¹ B for a lower-triangular K × K matrix L (the part above the diagonal is not read; data L
/// is checked for a zero diagonal) and B a vector of K values or a K × J matrix row major (K·J
/// values, as matmul's B): Stan's mdivide_left_tri_low(L, B), each column by forward substitution.
template <expression L, expression B>
auto mdivide_left_tri_low(const L& l, const B& b) {
  return detail::tri_low_solve<false, true>(l, b, "mdivide_left_tri_low(L, B)");
}
/// B L⁻¹ for B a row vector of K values or a J × K matrix row major and a lower-triangular L:
/// Stan's mdivide_right_tri_low(B, L), each row as L⁻ᵀ bᵀ by back substitution.
template <expression B, expression L>
auto mdivide_right_tri_low(const B& b, const L& l) {
  return detail::tri_low_solve<true, false>(l, b, "mdivide_right_tri_low(B, L)");
}
/// A⁻¹ B for a symmetric positive-definite K × K matrix A (lower triangle read; data A is checked
/// symmetric and positive definite) and B of K values or K × J row major: Stan's
/// mdivide_left_spd(A, B), as L⁻ᵀ(L⁻¹ B) with L the Cholesky factor of A.
template <expression A, expression B>
auto mdivide_left_spd(const A& a, const B& b) {
  const auto na = detail::matrix_entries(a, "mdivide_left_spd(A, B)", "A");
  detail::check_spd_data(detail::data_values(na), detail::matrix_order(na.size(), "mdivide_left_spd(A, B)", "A"),
                         "mdivide_left_spd(A, B)", "A");
  const auto l = cholesky_decompose(na);
  return detail::tri_low_solve<true, true>(l, mdivide_left_tri_low(l, b), "mdivide_left_spd(A, B)");
}

/// A⁻¹ of a symmetric positive-definite K × K matrix (lower triangle read; all K² entries of
/// the inverse): Stan's inverse_spd. NaN where A is not positive definite (a rejected point);
/// data A is checked symmetric and positive definite.
template <expression A>
auto inverse_spd(const A& a) {
  const auto na = detail::matrix_entries(a, "inverse_spd(A)", "A");
  const std::size_t k = detail::matrix_order(na.size(), "inverse_spd(A)", "A");
  detail::check_spd_data(detail::data_values(na), k, "inverse_spd(A)", "A");
  return make_vector_op(ops::inverse_spd_map{k}, na.size(), na);
}

/// log det A of a symmetric positive-definite K × K matrix (lower triangle read): Stan's
/// log_determinant_spd, 2 Σᵢ log Lᵢᵢ with L the Cholesky factor. NaN where A is not positive
/// definite; data A is checked symmetric and positive definite.
template <expression A>
auto log_determinant_spd(const A& a) {
  const auto na = detail::matrix_entries(a, "log_determinant_spd(A)", "A");
  detail::check_spd_data(detail::data_values(na), detail::matrix_order(na.size(), "log_determinant_spd(A)", "A"),
                         "log_determinant_spd(A)", "A");
  const auto l = cholesky_decompose(na);
  return 2.0 * sum(log(assume_positive(diagonal(l))));
}

/// B A⁻¹ for a symmetric positive-definite K × K matrix A (lower triangle read; data A checked)
/// and B a row vector of K values or a J × K matrix row major: Stan's mdivide_right_spd, as
/// (B L⁻ᵀ) L⁻¹ with L the Cholesky factor of A.
template <expression B, expression A>
auto mdivide_right_spd(const B& b, const A& a) {
  const char* fn = "mdivide_right_spd(B, A)";
  const auto na = detail::matrix_entries(a, fn, "A");
  detail::check_spd_data(detail::data_values(na), detail::matrix_order(na.size(), fn, "A"), fn, "A");
  const auto l = cholesky_decompose(na);
  return detail::tri_low_solve<true, false>(l, detail::tri_low_solve<false, false>(l, b, fn), fn);
}

/// (L Lᵀ)⁻¹ from a lower-triangular K × K factor L (the part above the diagonal is not read):
/// Stan's chol2inv, as inverse_spd of L Lᵀ.
template <expression L>
auto chol2inv(const L& l) {
  const auto nl = detail::matrix_entries(l, "chol2inv(L)", "L");
  const std::size_t k = detail::matrix_order(nl.size(), "chol2inv(L)", "L");
  detail::check_triangular_data(detail::data_values(nl), k, "chol2inv(L)", "L");
  return make_vector_op(ops::inverse_spd_map{k}, nl.size(), multiply_lower_tri_self_transpose(nl));
}

/// The symmetric K × K matrix that A's lower triangle defines: Stan's symmetrize_from_lower_tri.
template <expression A>
auto symmetrize_from_lower_tri(const A& a) {
  const auto na = detail::matrix_entries(a, "symmetrize_from_lower_tri(A)", "A");
  const std::size_t k = detail::matrix_order(na.size(), "symmetrize_from_lower_tri(A)", "A");
  return make_vector_op(ops::symmetrize_lower_map{k}, na.size(), na);
}

/// (Σⱼ Mᵢⱼ²)ᵢ and (Σᵢ Mᵢⱼ²)ⱼ of a K × K matrix (or a data matrix of any shape): Stan's
/// rows_dot_self and columns_dot_self; of an R × K matrix expression with K given, the R (rows)
/// or K (columns) sums.
template <expression M>
auto rows_dot_self(const M& m) {
  return rows_dot_product(m, m);
}
template <expression M>
auto columns_dot_self(const M& m) {
  return columns_dot_product(m, m);
}
template <expression M>
auto rows_dot_self(const M& m, std::size_t k) {
  std::size_t rows = 0;
  const auto nm = detail::rectangular_entries(m, k, "rows_dot_self(M, K)", "M", rows);
  return make_vector_op(ops::row_sums_of_squares_map{k}, rows, nm);
}
template <expression M>
auto columns_dot_self(const M& m, std::size_t k) {
  std::size_t rows = 0;
  const auto nm = detail::rectangular_entries(m, k, "columns_dot_self(M, K)", "M", rows);
  return make_vector_op(ops::row_sums_of_squares_map{rows}, k, transpose(nm, rows));
}

/// A⁻¹ of a general K × K matrix A (all K² entries read, row major): Stan's inverse, by Gauss–Jordan
/// elimination with partial pivoting (each chain of a SIMD batch pivots on its own rows).
/// Non-finite where A is singular (a rejected point); data A is checked not singular. (inverse
/// of a scalar expression is 1/x, operations/functions.hpp; 1/x elementwise on a vector is inv.)
template <expression A>
  requires(is_vector_v<detail::node_t<A>> || detail::is_data_matrix_v<detail::node_t<A>>)
auto inverse(const A& a) {
  const auto na = detail::matrix_entries(a, "inverse(A)", "A");
  const std::size_t n = na.size(), root = static_cast<std::size_t>(std::llround(std::sqrt(double(n))));
  if (root * root != n || n == 0)
    throw std::invalid_argument("tyche::inverse(A): 'A' has " + std::to_string(n) +
                                " values, which is not the number of entries of a square matrix (K*K, row major): "
                                "inverse of a vector is Stan's matrix inverse; 1/x elementwise is inv(v)");
  const std::size_t k = detail::matrix_order(n, "inverse(A)", "A");
  detail::check_nonsingular_data(detail::data_values(na), k, "inverse(A)", "A");
  return make_vector_op(ops::inverse_map{k}, na.size(), na);
}

/// log |det A| of a general K × K matrix: Stan's log_determinant (−∞ where A is singular), by
/// elimination with partial pivoting. For a symmetric positive-definite A, log_determinant_spd
/// is cheaper (a Cholesky factorisation).
template <expression A>
auto log_determinant(const A& a) {
  const auto na = detail::matrix_entries(a, "log_determinant(A)", "A");
  const std::size_t k = detail::matrix_order(na.size(), "log_determinant(A)", "A");
  return at(make_vector_op(ops::determinant_map<true>{k}, 1, na), 0);
}

/// det A of a general K × K matrix: Stan's determinant.
template <expression A>
auto determinant(const A& a) {
  const auto na = detail::matrix_entries(a, "determinant(A)", "A");
  const std::size_t k = detail::matrix_order(na.size(), "determinant(A)", "A");
  return at(make_vector_op(ops::determinant_map<false>{k}, 1, na), 0);
}

/// A⁻¹ B for a general K × K matrix A and B of K values or K × J row major: Stan's
/// mdivide_left(A, B) (`A \ B`), by elimination with partial pivoting on [A | B] (an LU solve, as
/// Stan's; op lu_solve_map). Non-finite where A is singular; data A is checked not singular.
template <expression A, expression B>
auto mdivide_left(const A& a, const B& b) {
  const auto na = detail::matrix_entries(a, "mdivide_left(A, B)", "A");
  const std::size_t k = detail::matrix_order(na.size(), "mdivide_left(A, B)", "A");
  detail::check_nonsingular_data(detail::data_values(na), k, "mdivide_left(A, B)", "A");
  const auto nb = detail::matrix_entries(b, "mdivide_left(A, B)", "B", k);
  detail::check_multiple_of_order(nb.size(), k, "mdivide_left(A, B)", "A", "B", "K*J: a K x J matrix, row major");
  return make_vector_op(ops::lu_solve_map<false>{k, nb.size() / k}, nb.size(), na, nb);
}

/// B A⁻¹ for a general K × K matrix A and B a row vector of K values or a J × K matrix row major:
/// Stan's mdivide_right(B, A) (`B / A`), as Xᵀ = A⁻ᵀ Bᵀ by the same elimination. Non-finite where
/// A is singular; data A is checked not singular.
template <expression B, expression A>
auto mdivide_right(const B& b, const A& a) {
  const auto na = detail::matrix_entries(a, "mdivide_right(B, A)", "A");
  const std::size_t k = detail::matrix_order(na.size(), "mdivide_right(B, A)", "A");
  detail::check_nonsingular_data(detail::data_values(na), k, "mdivide_right(B, A)", "A");
  std::size_t b_rows = 0;
  const auto nb = detail::rectangular_entries(b, k, "mdivide_right(B, A)", "B", b_rows);
  detail::check_multiple_of_order(nb.size(), k, "mdivide_right(B, A)", "A", "B", "J*K: a J x K matrix, row major");
  return make_vector_op(ops::lu_solve_map<true>{k, nb.size() / k}, nb.size(), na, nb);
}

/// e^A of a general K × K matrix (all K² entries read, row major): Stan's matrix_exp, by scaling
/// and squaring with a Taylor polynomial (autodiff/multivariate_ops.hpp); the gradient through
/// the Fréchet derivative. E.g. a continuous-time Markov chain's transition probabilities
/// P(t) = e^{Qt} for a rate matrix Q of parameters.
template <expression A>
auto matrix_exp(const A& a) {
  const auto na = detail::matrix_entries(a, "matrix_exp(A)", "A");
  const std::size_t k = detail::matrix_order(na.size(), "matrix_exp(A)", "A");
  return make_vector_op(ops::matrix_exp_map{k}, na.size(), na);
}

/// e^A B for a K × K matrix A and B of K values or K × J row major: Stan's matrix_exp_multiply
/// (here the exponential and then the product; Stan avoids forming e^A).
template <expression A, expression B>
auto matrix_exp_multiply(const A& a, const B& b) {
  const auto na = detail::matrix_entries(a, "matrix_exp_multiply(A, B)", "A");
  const std::size_t k = detail::matrix_order(na.size(), "matrix_exp_multiply(A, B)", "A");
  const auto nb = detail::matrix_entries(b, "matrix_exp_multiply(A, B)", "B", k);
  detail::check_multiple_of_order(nb.size(), k, "matrix_exp_multiply(A, B)", "A", "B",
                                  "K*J: a K x J matrix, row major");
  return make_vector_op(ops::matmul_map<>{k, false}, nb.size(), make_vector_op(ops::matrix_exp_map{k}, na.size(), na),
                        nb);
}

/// e^{tA} B: Stan's scale_matrix_exp_multiply(t, A, B), t a scalar (a time: parameter or data).
template <detail::operand Tm, expression A, expression B>
auto scale_matrix_exp_multiply(const Tm& t, const A& a, const B& b) {
  static_assert(!is_vector_v<detail::node_t<Tm>>, "tyche::scale_matrix_exp_multiply(t, A, B): t must be a scalar");
  const auto na = detail::matrix_entries(a, "scale_matrix_exp_multiply(t, A, B)", "A");
  detail::matrix_order(na.size(), "scale_matrix_exp_multiply(t, A, B)", "A");
  return matrix_exp_multiply(t * na, b);
}

/// Aⁿ of a general K × K matrix, n ≥ 0 (A⁰ = I): Stan's matrix_power; n − 1 products.
template <expression A>
auto matrix_power(const A& a, int n) {
  const auto na = detail::matrix_entries(a, "matrix_power(A, n)", "A");
  const std::size_t k = detail::matrix_order(na.size(), "matrix_power(A, n)", "A");
  if (n < 0)
    throw std::invalid_argument("tyche::matrix_power(A, n): n = " + std::to_string(n) + " must be >= 0");
  return make_vector_op(ops::matrix_power_map{k, static_cast<std::size_t>(n)}, na.size(), na);
}

/// The K eigenvalues of a symmetric K × K matrix, ascending (its lower triangle read; a data A is
/// checked symmetric): Stan's eigenvalues_sym, by the cyclic Jacobi method.
template <expression A>
auto eigenvalues_sym(const A& a) {
  const auto na = detail::matrix_entries(a, "eigenvalues_sym(A)", "A");
  const std::size_t k = detail::matrix_order(na.size(), "eigenvalues_sym(A)", "A");
  detail::check_symmetric_data(detail::data_values(na), k, "eigenvalues_sym(A)", "A");
  return make_vector_op(ops::eigen_sym_map<false>{k}, k, na);
}

/// The unit eigenvectors of a symmetric K × K matrix, K² values row major, column m the vector
/// of the m-th smallest eigenvalue (each column's sign is arbitrary, as Stan's): Stan's
/// eigenvectors_sym. Its gradient is infinite where eigenvalues repeat.
template <expression A>
auto eigenvectors_sym(const A& a) {
  const auto na = detail::matrix_entries(a, "eigenvectors_sym(A)", "A");
  const std::size_t k = detail::matrix_order(na.size(), "eigenvectors_sym(A)", "A");
  detail::check_symmetric_data(detail::data_values(na), k, "eigenvectors_sym(A)", "A");
  return make_vector_op(ops::eigen_sym_map<true>{k}, na.size(), na);
}

namespace detail {
/// The argument A of a decomposition of any shape (singular_values, qr_*) as a vector node, its
/// shape into rows and cols: a data matrix's own (cols 0), R × K entries with K = cols given, or
/// a square matrix's K² entries (cols 0). Throws for an A of no rows.
template <class A>
auto shaped_entries(const A& a, std::size_t& rows, std::size_t& cols, const char* fn) {
  if constexpr (is_data_matrix_v<node_t<A>>)
    if (cols == 0) cols = as_node(a).cols;  // a data matrix has its own shape
  const auto na = [&] {
    if (cols != 0) return rectangular_entries(a, cols, fn, "A", rows);
    const auto sq = matrix_entries(a, fn, "A");
    rows = cols = matrix_order(sq.size(), fn, "A");
    return sq;
  }();
  if (rows == 0) throw std::invalid_argument(std::string("tyche::") + fn + ": A has no rows");
  return na;
}

/// svd_map<Part> of A: a data matrix of any shape, a square matrix's entries (cols 0: K from A's
/// K² entries) or R × K (cols = K given). A data A must have full rank where U of a tall A (R ≥
/// K) or V of a wide one is asked for (those columns are A's normalised: a zero singular value's
/// would be NaN), checked to 1e-13 of its largest singular value.
template <ops::svd_part Part, class A>
auto make_svd(const A& a, std::size_t cols, const char* fn) {
  std::size_t rows = 0;
  const auto na = shaped_entries(a, rows, cols, fn);
  const ops::svd_map<Part> op{rows, cols};
  const std::size_t k = op.thin();
  // The part made of the normalised columns (U of a tall A, V of a wide one) is not unique where
  // a singular value is zero; the other is a product of rotations, always orthonormal.
  const bool from_columns = (Part == ops::svd_part::u) == (rows >= cols);
  if (const double* d = data_values(na); d != nullptr && Part != ops::svd_part::values && from_columns) {
    std::vector<double> work(rows * cols), sigma(k), u(rows * cols), v(k * k);
    jacobi_svd(op.tall(), k, d, rows < cols, true, work.data(), sigma.data(), u.data(), v.data());
    if (!(sigma[k - 1] > 1e-13 * sigma[0]))
      throw std::invalid_argument(std::string("tyche::") + fn + ": A is rank deficient (singular value " +
                                  std::to_string(k) + " is " + format_number(sigma[k - 1]) + " against " +
                                  format_number(sigma[0]) + " for the largest): its singular vectors are not unique");
  }
  const std::size_t m = Part == ops::svd_part::values ? k : (Part == ops::svd_part::u ? rows : cols) * k;
  return make_vector_op(op, m, na);
}
}  // namespace detail

/// The min(R, K) singular values of a matrix A, descending: Stan's singular_values. A is a data
/// matrix of any shape, the K² values of a square matrix (row major), or R × K with K given
/// (`singular_values(A, K)`; R·K values). One-sided Jacobi (autodiff/svd.hpp): a small singular
/// value keeps its absolute accuracy. The gradient is infinite where two values are equal.
template <expression A>
auto singular_values(const A& a) {
  return detail::make_svd<ops::svd_part::values>(a, 0, "singular_values(A)");
}
template <expression A>
auto singular_values(const A& a, std::size_t k) {
  return detail::make_svd<ops::svd_part::values>(a, k, "singular_values(A, K)");
}
/// U of A = U Σ Vᵀ (R × min(R, K), row major; column j the left vector of the j-th largest
/// singular value; the sign of each pair (uⱼ, vⱼ) the algorithm's, Stan's may differ): Stan's
/// svd_U. A as for singular_values; its gradient is infinite where singular values repeat or one
/// is zero.
template <expression A>
auto svd_U(const A& a) {
  return detail::make_svd<ops::svd_part::u>(a, 0, "svd_U(A)");
}
template <expression A>
auto svd_U(const A& a, std::size_t k) {
  return detail::make_svd<ops::svd_part::u>(a, k, "svd_U(A, K)");
}
/// V of A = U Σ Vᵀ (K × min(R, K), row major, column j the right vector of the j-th largest
/// singular value): Stan's svd_V. As svd_U.
template <expression A>
auto svd_V(const A& a) {
  return detail::make_svd<ops::svd_part::v>(a, 0, "svd_V(A)");
}
template <expression A>
auto svd_V(const A& a, std::size_t k) {
  return detail::make_svd<ops::svd_part::v>(a, k, "svd_V(A, K)");
}

/// The Moore–Penrose inverse A⁺ of an R × K matrix A (K × R, row major): Stan's
/// generalized_inverse. A as for singular_values (a data matrix of any shape, a square A's K²
/// entries, or R·K entries with K given). From the SVD (autodiff/svd.hpp, pinv_map): singular
/// values at most max(R, K)·ε·σ_max count as zero, so a rank-deficient A gets its pseudo-inverse
/// (as Stan's for a square data A; Stan solves the normal equations of a non-square A, AᵀA or
/// AAᵀ by LDLT, whose answer for a rank-deficient A was not compared); the gradient is the
/// derivative where the rank does not change.
template <expression A>
auto generalized_inverse(const A& a) {
  std::size_t rows = 0, cols = 0;
  const auto na = detail::shaped_entries(a, rows, cols, "generalized_inverse(A)");
  return make_vector_op(ops::pinv_map{rows, cols}, rows * cols, na);
}
template <expression A>
auto generalized_inverse(const A& a, std::size_t k) {
  std::size_t rows = 0;
  const auto na = detail::shaped_entries(a, rows, k, "generalized_inverse(A, K)");
  return make_vector_op(ops::pinv_map{rows, k}, rows * k, na);
}

namespace detail {
/// qr_map<Part> of A (shapes as shaped_entries). The last R − K columns of qr_Q of a tall A
/// complete the thin Q to an orthonormal basis: any completion is one, so they have no
/// derivative, and a tall A that depends on parameters is refused for qr_Q.
template <ops::qr_part Part, class A>
auto make_qr(const A& a, std::size_t cols, const char* fn) {
  std::size_t rows = 0;
  const auto na = shaped_entries(a, rows, cols, fn);
  if constexpr (Part == ops::qr_part::q && depends_on_params_v<node_t<A>>)
    if (rows > cols)
      throw std::invalid_argument(std::string("tyche::") + fn + ": A is " + std::to_string(rows) + " x " +
                                  std::to_string(cols) + " and depends on parameters: the last " +
                                  std::to_string(rows - cols) +
                                  " columns of its full Q are any orthonormal completion of the thin Q, with no "
                                  "derivative; use qr_thin_Q (the first " + std::to_string(cols) + " columns)");
  const ops::qr_map<Part> op{rows, cols};
  return make_vector_op(op, op.size(), na);
}
}  // namespace detail

/// Q of the thin QR decomposition A = Q R of an R × K matrix (R × min(R, K), row major,
/// orthonormal columns), with R's diagonal non-negative: Stan's qr_thin_Q. A as for
/// singular_values: a data matrix of any shape, a square matrix's K² entries, or R·K entries with
/// K given. Householder reflections (autodiff/qr.hpp); for A of full rank the factors are unique
/// and agree with Stan's to rounding. The gradient is infinite where A is rank deficient. Of data,
/// computed once when the model is made: Stan's QR reparameterisation of a regression.
template <expression A>
auto qr_thin_Q(const A& a) {
  return detail::make_qr<ops::qr_part::thin_q>(a, 0, "qr_thin_Q(A)");
}
template <expression A>
auto qr_thin_Q(const A& a, std::size_t k) {
  return detail::make_qr<ops::qr_part::thin_q>(a, k, "qr_thin_Q(A, K)");
}
/// R of the thin QR decomposition (min(R, K) × K, row major, upper trapezoidal, its diagonal
/// non-negative): Stan's qr_thin_R. As qr_thin_Q.
template <expression A>
auto qr_thin_R(const A& a) {
  return detail::make_qr<ops::qr_part::thin_r>(a, 0, "qr_thin_R(A)");
}
template <expression A>
auto qr_thin_R(const A& a, std::size_t k) {
  return detail::make_qr<ops::qr_part::thin_r>(a, k, "qr_thin_R(A, K)");
}
/// Q of the full QR decomposition (R × R, row major): Stan's qr_Q. For R > K its first K columns
/// are qr_thin_Q's and the others the reflections' completion (Stan's, Eigen's Householder QR, to
/// rounding); such an A must be data (the completion has no derivative).
template <expression A>
auto qr_Q(const A& a) {
  return detail::make_qr<ops::qr_part::q>(a, 0, "qr_Q(A)");
}
template <expression A>
auto qr_Q(const A& a, std::size_t k) {
  return detail::make_qr<ops::qr_part::q>(a, k, "qr_Q(A, K)");
}
/// R of the full QR decomposition (R × K, row major): qr_thin_R and, for R > K, R − K rows of
/// zeros: Stan's qr_R.
template <expression A>
auto qr_R(const A& a) {
  return detail::make_qr<ops::qr_part::r>(a, 0, "qr_R(A)");
}
template <expression A>
auto qr_R(const A& a, std::size_t k) {
  return detail::make_qr<ops::qr_part::r>(a, k, "qr_R(A, K)");
}

}  // namespace tyche
