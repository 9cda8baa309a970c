// tyche/autodiff/matrix_ops.hpp — value and vector–Jacobian rules of K × K matrices as vector_op
// nodes: a matrix is a vector of its K² entries in row-major order (entry (i, j) at i·K + j,
// 0-based), computed whole by an op with a hand-written vector–Jacobian product (the contract
// of an op: autodiff/vector_ops.hpp; docs/design/vector-ops.md). These are the pieces of the
// matrix transforms (transforms/matrix.hpp), lkj_corr_cholesky and multi_normal /
// multi_normal_cholesky with a matrix that depends on parameters:
//
//   corr_cholesky_map      K(K−1)/2 unconstrained values → Cholesky factor of a correlation matrix
//   cov_cholesky_map       K(K+1)/2 unconstrained values → Cholesky factor with positive diagonal
//   cpc_log_jacobian_map   the log-Jacobian of the two correlation transforms (one value)
//   diagonal_sum_map       Σᵢ (w₀ + s·i) f(diagonal entry i), f = identity or log (one value)
//   multiply_lower_tri_self_transpose_map   L Lᵀ
//   cholesky_decompose_map the lower Cholesky factor of a symmetric positive-definite matrix
//   diag_pre_multiply_map  diag(v) M
//   cholesky_residual_map  L⁻¹(yₙ − μₙ) for N rows yₙ (multi_normal_cholesky)
//   lkj_log_normaliser_map log c_K(η), the LKJ normalising constant (one value)
//   data_matvec_map        X v for a data matrix X and a vector expression v
//   sparse_matvec_map      S v for a sparse data matrix S (compressed rows) and a vector expression v
//   matmul_map             A B for a K × K matrix A and a K × J matrix B
//   transpose_map          Aᵀ
//   diagonal_map           the K diagonal entries
//   diag_post_multiply_map M diag(v)
//   tri_low_solve_map      L⁻¹ B or L⁻ᵀ B for a lower-triangular L, by columns of B or by rows
//                          (Stan's mdivide_left_tri_low, mdivide_right_tri_low, mdivide_left_spd)
//   matvec_map             M v for a K × K matrix M given as an expression
//   rows_dot_product_map   the dot products of the rows (or columns) of two matrices
//
// The functions users call with such K²-vectors are in operations/matrices.hpp.
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/vector_ops.hpp>
#include <tyche/backends/simd/batch.hpp>
#include <tyche/core/expr.hpp>
#include <tyche/scalar/math.hpp>
#include <tyche/scalar/traits.hpp>

#include <cstddef>

namespace tyche {

namespace detail {
/// sech y = 1 / cosh y, 0 (not NaN) when cosh overflows.
template <class T>
TYCHE_HD T sech(const T& y) {
  return lift<T>(2.0) / (math::exp(y) + math::exp(-y));
}
/// log sech² y = −2 log cosh y, without overflow: 2 log 2 − 2|y| − 2 log1p(e^{−2|y|}).
template <class T>
TYCHE_HD T log_sech_squared(const T& y) {
  const T a = math::abs(y);
  return lift<T>(1.38629436111989061883) - lift<T>(2.0) * a -
         lift<T>(2.0) * math::log1p(math::exp(lift<T>(-2.0) * a));
}
}  // namespace detail

namespace ops {

/// The Cholesky factor L of a K × K correlation matrix from K(K−1)/2 unconstrained values
/// (Stan's cholesky_factor_corr): u fills the strictly lower triangle row by row, zᵢⱼ = tanh uᵢⱼ
/// are canonical partial correlations, and row i is
///   Lᵢⱼ = zᵢⱼ sᵢⱼ (j < i),  Lᵢᵢ = sᵢᵢ,  sᵢⱼ = Π_{j'<j} sech uᵢⱼ'  (= √(1 − Σ_{j'<j} Lᵢⱼ'²)),
/// so every row has norm 1 and a positive diagonal; zeros above the diagonal. Reverse (row i):
///   ∂/∂uᵢⱼ = L̄ᵢⱼ sech²(uᵢⱼ) sᵢⱼ − tanh(uᵢⱼ) Σ_{m=j+1..i} L̄ᵢₘ Lᵢₘ.
struct corr_cholesky_map {
  static constexpr const char* name = "corr_cholesky";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t k = 0;
  template <class U>
  static constexpr std::size_t extent = dynamic_extent;
  bool operator==(const corr_cholesky_map&) const = default;
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*) const {
    const T* u = in[0];
    std::size_t p = 0;
    for (std::size_t i = 0; i < k; ++i) {
      T s = lift<T>(1.0);
      for (std::size_t j = 0; j < i; ++j, ++p) {
        out[i * k + j] = math::tanh(u[p]) * s;
        s = s * detail::sech(u[p]);
      }
      out[i * k + i] = s;
      for (std::size_t j = i + 1; j < k; ++j) out[i * k + j] = lift<T>(0.0);
    }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T* out, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj) const {
    const T* u = in[0];
    T* ub = in_adj[0];
    std::size_t row = 0;  // position of uᵢ₀
    for (std::size_t i = 1; i < k; row += i, ++i) {
      T s = lift<T>(1.0);
      for (std::size_t j = 0; j < i; ++j) {  // the direct term L̄ᵢⱼ sech² sᵢⱼ
        const T c = detail::sech(u[row + j]);
        ub[row + j] += adj[i * k + j] * c * c * s;
        s = s * c;
      }
      T g = adj[i * k + i] * out[i * k + i];  // Σ_{m > j} L̄ᵢₘ Lᵢₘ
      for (std::size_t j = i; j-- > 0;) {
        ub[row + j] += -math::tanh(u[row + j]) * g;
        g = g + adj[i * k + j] * out[i * k + j];
      }
    }
  }
};

/// The Cholesky factor L of a K × K covariance matrix from K(K+1)/2 unconstrained values
/// (Stan's cholesky_factor_cov, square): u fills the lower triangle row by row (row i: Lᵢ₀ …
/// Lᵢᵢ), the diagonal exponentiated: Lᵢⱼ = uₚ (j < i), Lᵢᵢ = e^uₚ; zeros above.
struct cov_cholesky_map {
  static constexpr const char* name = "cov_cholesky";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t k = 0;
  template <class U>
  static constexpr std::size_t extent = dynamic_extent;
  bool operator==(const cov_cholesky_map&) const = default;
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*) const {
    const T* u = in[0];
    std::size_t p = 0;
    for (std::size_t i = 0; i < k; ++i) {
      for (std::size_t j = 0; j < i; ++j) out[i * k + j] = u[p++];
      out[i * k + i] = math::exp(u[p++]);
      for (std::size_t j = i + 1; j < k; ++j) out[i * k + j] = lift<T>(0.0);
    }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T* out, const T* adj, const T* const*, const std::size_t*,
                        T* const* in_adj) const {
    std::size_t p = 0;
    for (std::size_t i = 0; i < k; ++i) {
      for (std::size_t j = 0; j < i; ++j) in_adj[0][p++] += adj[i * k + j];
      in_adj[0][p++] += adj[i * k + i] * out[i * k + i];
    }
  }
};

/// The log-Jacobian of the correlation transforms, as a function of their K(K−1)/2
/// unconstrained values u (position (i, j), j < i, row by row): Σ wᵢⱼ log sech² uᵢⱼ, where
/// log sech² u = log(1 − tanh² u) is tanh's and
///   cholesky_factor_corr (CorrMatrix = false): wᵢⱼ = 1 + (i − 1 − j)/2  (the map z → L has
///     ∂Lᵢⱼ/∂zᵢⱼ = sᵢⱼ, and log sᵢⱼ = ½ Σ_{j'<j} log(1 − zᵢⱼ'²));
///   corr_matrix (CorrMatrix = true): wᵢⱼ = 1 + (K − 2 − j)/2  (the Jacobian of canonical
///     partial correlations → correlation matrix, Lewandowski, Kurowicka & Joe 2009, eq. 11 of
///     Joe 2006; Stan's reference manual, "Correlation matrices").
/// One value. Reverse: ∂/∂uᵢⱼ = −2 wᵢⱼ tanh uᵢⱼ.
template <bool CorrMatrix>
struct cpc_log_jacobian_map {
  static constexpr const char* name = CorrMatrix ? "corr_matrix_log_jacobian" : "corr_cholesky_log_jacobian";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t k = 0;
  template <class U>
  static constexpr std::size_t extent = 1;
  bool operator==(const cpc_log_jacobian_map&) const = default;
  TYCHE_HD double weight(std::size_t i, std::size_t j) const {
    return CorrMatrix ? 1.0 + 0.5 * (double(k) - 2.0 - double(j)) : 1.0 + 0.5 * (double(i) - 1.0 - double(j));
  }
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*) const {
    T acc = lift<T>(0.0);
    std::size_t p = 0;
    for (std::size_t i = 1; i < k; ++i)
      for (std::size_t j = 0; j < i; ++j, ++p) acc = acc + lift<T>(weight(i, j)) * detail::log_sech_squared(in[0][p]);
    out[0] = acc;
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj) const {
    std::size_t p = 0;
    for (std::size_t i = 1; i < k; ++i)
      for (std::size_t j = 0; j < i; ++j, ++p)
        in_adj[0][p] += lift<T>(-2.0 * weight(i, j)) * math::tanh(in[0][p]) * adj[0];
  }
};

/// Σᵢ (w0 + step·i) f(xᵢᵢ) over the K diagonal entries of x, with f the identity or log (Log).
/// x is a full K × K matrix (K² values, row major) or, when Packed, the K(K+1)/2 values of a
/// lower triangle row by row (the unconstrained values of cov_cholesky_map, whose diagonal
/// entry i is at i(i+1)/2 + i). One value. multi_normal_cholesky's Σ log Lᵢᵢ, lkj's
/// Σ (K − k + 2η − 2) log Lₖₖ, and the log-Jacobians of cholesky_factor_cov and cov_matrix.
template <bool Packed, bool Log>
struct diagonal_sum_map {
  static constexpr const char* name = Log ? "diagonal_log_sum" : "diagonal_sum";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t k = 0;
  double w0 = 1.0;
  double step = 0.0;
  template <class X>
  static constexpr std::size_t extent = 1;
  bool operator==(const diagonal_sum_map&) const = default;
  TYCHE_HD std::size_t position(std::size_t i) const { return Packed ? i * (i + 1) / 2 + i : i * k + i; }
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*) const {
    T acc = lift<T>(0.0);
    for (std::size_t i = 0; i < k; ++i) {
      const double w = w0 + step * double(i);
      if (w == 0.0) continue;  // 0 · log 0 is 0 here, as in the formulas these sums come from
      const T x = in[0][position(i)];
      acc = acc + lift<T>(w) * (Log ? math::log(x) : x);
    }
    out[0] = acc;
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj) const {
    for (std::size_t i = 0; i < k; ++i) {
      const double w = w0 + step * double(i);
      if (w == 0.0) continue;
      const std::size_t p = position(i);
      in_adj[0][p] += Log ? lift<T>(w) * adj[0] / in[0][p] : lift<T>(w) * adj[0];
    }
  }
};

/// S = L Lᵀ for a lower-triangular K × K L (K² values; the part above the diagonal is not
/// read): Sᵢⱼ = Σ_{p ≤ min(i, j)} Lᵢₚ Lⱼₚ, all K² entries. Reverse: L̄ᵢₚ = Σ_{j ≥ p} (S̄ᵢⱼ + S̄ⱼᵢ) Lⱼₚ
/// for p ≤ i. O(K³).
struct multiply_lower_tri_self_transpose_map {
  static constexpr const char* name = "multiply_lower_tri_self_transpose";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t k = 0;
  template <class L>
  static constexpr std::size_t extent = extent_v<L>;
  bool operator==(const multiply_lower_tri_self_transpose_map&) const = default;
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*) const {
    const T* l = in[0];
    for (std::size_t i = 0; i < k; ++i) {
      for (std::size_t j = 0; j <= i; ++j) {
        T acc = lift<T>(0.0);
        for (std::size_t p = 0; p <= j; ++p) acc = acc + l[i * k + p] * l[j * k + p];
        out[i * k + j] = acc;
        out[j * k + i] = acc;
      }
    }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj) const {
    const T* l = in[0];
    for (std::size_t i = 0; i < k; ++i) {
      for (std::size_t p = 0; p <= i; ++p) {
        T acc = lift<T>(0.0);
        for (std::size_t j = p; j < k; ++j) acc = acc + (adj[i * k + j] + adj[j * k + i]) * l[j * k + p];
        in_adj[0][i * k + p] += acc;
      }
    }
  }
};

/// The lower Cholesky factor L of a symmetric positive-definite K × K matrix C (K² values; only
/// the lower triangle is read, as Stan's cholesky_decompose does after checking symmetry):
/// detail::cholesky_forward, zeros above the diagonal; NaN when C is not positive definite (a
/// rejected point). Reverse: detail::cholesky_reverse on a copy of L̄ (scratch, K²). O(K³).
struct cholesky_decompose_map {
  static constexpr const char* name = "cholesky_decompose";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t k = 0;
  template <class C>
  static constexpr std::size_t extent = extent_v<C>;
  bool operator==(const cholesky_decompose_map&) const = default;
  std::size_t scratch_size(std::size_t m, const std::size_t*) const { return m; }
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*, T*) const {
    detail::cholesky_forward(k, in[0], out);
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T* out, const T* adj, const T* const*, const std::size_t*,
                        T* const* in_adj, T* lb) const {
    for (std::size_t i = 0; i < m; ++i) lb[i] = adj[i];
    detail::cholesky_reverse(k, out, lb, in_adj[0]);
  }
};

/// diag(v) M: row i of the K × K matrix M (K² values) times vᵢ (v: K values). Reverse, with
/// adj the result's adjoint: v̄ᵢ += Σⱼ adjᵢⱼ Mᵢⱼ, M̄ᵢⱼ += adjᵢⱼ vᵢ.
struct diag_pre_multiply_map {
  static constexpr const char* name = "diag_pre_multiply";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t k = 0;
  template <class V, class M>
  static constexpr std::size_t extent = extent_v<M>;
  bool operator==(const diag_pre_multiply_map&) const = default;
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*) const {
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) out[i * k + j] = in[0][i] * in[1][i * k + j];
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj) const {
    for (std::size_t i = 0; i < k; ++i) {
      T acc = lift<T>(0.0);
      for (std::size_t j = 0; j < k; ++j) {
        acc = acc + adj[i * k + j] * in[1][i * k + j];
        in_adj[1][i * k + j] += adj[i * k + j] * in[0][i];
      }
      in_adj[0][i] += acc;
    }
  }
};

/// A B for an R × K matrix A (R·K values, row major; R = K unless `rows` says otherwise) and a
/// K × J matrix B (K·J values, row major: J = 1 is a column vector): the R·J entries of the
/// product, row major. Reverse: Ā += adj Bᵀ, B̄ += Aᵀ adj. O(R K J) each way. With `right`,
/// B A for a K × K matrix A and a J × K matrix B (row major: J = 1 is a row vector), the J·K
/// entries of the product: Ā += Bᵀ adj, B̄ += adj Aᵀ. Rectangular: A may have R ≠ K rows (the
/// product's size is then not B's, so its extent is dynamic); otherwise rows is 0 and the
/// product has B's size and static extent.
template <bool Rectangular = false>
struct matmul_map {
  static constexpr const char* name = "matmul";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t k = 0;
  bool right = false;
  std::size_t rows = 0;  // A's rows (0: K, a square A)
  template <class A, class B>
  static constexpr std::size_t extent = Rectangular ? dynamic_extent : extent_v<B>;
  bool operator==(const matmul_map&) const = default;
  TYCHE_HD std::size_t a_rows() const { return rows == 0 ? k : rows; }
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t*) const {
    if (right) {
      for (std::size_t j = 0; j < m / k; ++j)
        for (std::size_t c = 0; c < k; ++c) {
          T acc = lift<T>(0.0);
          for (std::size_t p = 0; p < k; ++p) acc = acc + in[1][j * k + p] * in[0][p * k + c];
          out[j * k + c] = acc;
        }
      return;
    }
    const std::size_t r_rows = a_rows(), j_cols = m / r_rows;
    for (std::size_t i = 0; i < r_rows; ++i)
      for (std::size_t j = 0; j < j_cols; ++j) {
        T acc = lift<T>(0.0);
        for (std::size_t p = 0; p < k; ++p) acc = acc + in[0][i * k + p] * in[1][p * j_cols + j];
        out[i * j_cols + j] = acc;
      }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj) const {
    if (right) {
      for (std::size_t j = 0; j < m / k; ++j)
        for (std::size_t p = 0; p < k; ++p) {
          T acc = lift<T>(0.0);
          for (std::size_t c = 0; c < k; ++c) {
            acc = acc + adj[j * k + c] * in[0][p * k + c];
            in_adj[0][p * k + c] += in[1][j * k + p] * adj[j * k + c];
          }
          in_adj[1][j * k + p] += acc;
        }
      return;
    }
    const std::size_t r_rows = a_rows(), j_cols = m / r_rows;
    for (std::size_t i = 0; i < r_rows; ++i)
      for (std::size_t p = 0; p < k; ++p) {
        T acc = lift<T>(0.0);
        for (std::size_t j = 0; j < j_cols; ++j) {
          acc = acc + adj[i * j_cols + j] * in[1][p * j_cols + j];
          in_adj[1][p * j_cols + j] += in[0][i * k + p] * adj[i * j_cols + j];
        }
        in_adj[0][i * k + p] += acc;
      }
  }
};

/// Aᵀ of an R × K matrix (R·K values, row major; R = K unless `rows` says otherwise): K·R values.
/// Reverse: Ā_ij += adj_ji.
struct transpose_map {
  static constexpr const char* name = "transpose";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t k = 0;
  std::size_t rows = 0;  // A's rows (0: K)
  template <class A>
  static constexpr std::size_t extent = extent_v<A>;
  bool operator==(const transpose_map&) const = default;
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*) const {
    const std::size_t r_rows = rows == 0 ? k : rows;
    for (std::size_t i = 0; i < r_rows; ++i)
      for (std::size_t j = 0; j < k; ++j) out[j * r_rows + i] = in[0][i * k + j];
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const*, const std::size_t*,
                        T* const* in_adj) const {
    const std::size_t r_rows = rows == 0 ? k : rows;
    for (std::size_t i = 0; i < r_rows; ++i)
      for (std::size_t j = 0; j < k; ++j) in_adj[0][i * k + j] += adj[j * r_rows + i];
  }
};

/// The symmetric K × K matrix a K × K matrix's lower triangle defines (Stan's
/// symmetrize_from_lower_tri): entry (i, j) is A[max(i, j), min(i, j)]. Reverse: the lower
/// triangle's entry (i, j), j < i, takes the adjoints of (i, j) and (j, i).
struct symmetrize_lower_map {
  static constexpr const char* name = "symmetrize_from_lower_tri";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t k = 0;
  template <class A>
  static constexpr std::size_t extent = extent_v<A>;
  bool operator==(const symmetrize_lower_map&) const = default;
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*) const {
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) out[i * k + j] = i >= j ? in[0][i * k + j] : in[0][j * k + i];
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const*, const std::size_t*,
                        T* const* in_adj) const {
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) in_adj[0][i >= j ? i * k + j : j * k + i] += adj[i * k + j];
  }
};

/// The K diagonal entries of a K × K matrix. Reverse: Ā_ii += adj_i.
struct diagonal_map {
  static constexpr const char* name = "diagonal";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t k = 0;
  template <class A>
  static constexpr std::size_t extent = dynamic_extent;
  bool operator==(const diagonal_map&) const = default;
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*) const {
    for (std::size_t i = 0; i < k; ++i) out[i] = in[0][i * k + i];
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const*, const std::size_t*,
                        T* const* in_adj) const {
    for (std::size_t i = 0; i < k; ++i) in_adj[0][i * k + i] += adj[i];
  }
};

/// M diag(v) for a K × K matrix M (K² values) and v of K values: (M diag(v))ᵢⱼ = Mᵢⱼ vⱼ.
/// Reverse: M̄ᵢⱼ += adjᵢⱼ vⱼ, v̄ⱼ += Σᵢ adjᵢⱼ Mᵢⱼ.
struct diag_post_multiply_map {
  static constexpr const char* name = "diag_post_multiply";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t k = 0;
  template <class M, class V>
  static constexpr std::size_t extent = extent_v<M>;
  bool operator==(const diag_post_multiply_map&) const = default;
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*) const {
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) out[i * k + j] = in[0][i * k + j] * in[1][j];
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj) const {
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) {
        in_adj[0][i * k + j] += adj[i * k + j] * in[1][j];
        in_adj[1][j] += adj[i * k + j] * in[0][i * k + j];
      }
  }
};

/// X = L⁻¹ B (Transposed = false: forward substitution, xᵢ = (bᵢ − Σ_{p<i} Lᵢₚ xₚ)/Lᵢᵢ) or
/// X = L⁻ᵀ B (Transposed = true: back substitution, xᵢ = (bᵢ − Σ_{p>i} Lₚᵢ xₚ)/Lᵢᵢ) for a
/// lower-triangular K × K matrix L (K² values; the part above the diagonal is not read), each
/// vector of B solved: with Columns, B is K × J row major (Stan's L \ B: its columns, at stride
/// J); without, B is J × K row major and its rows are solved (Stan's B / L = (L⁻ᵀ Bᵀ)ᵀ for the
/// transposed solve). Reverse, with w = L⁻ᵀ x̄ (L⁻¹ x̄ when transposed): b̄ += w, and on L's lower
/// triangle L̄ᵢₚ −= wᵢ xₚ (xᵢ wₚ when transposed). Scratch: w (K). O(K² J) each way.
template <bool Transposed = false, bool Columns = true>
struct tri_low_solve_map {
  static constexpr const char* name = Transposed ? "tri_low_solve_transposed" : "tri_low_solve";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t k = 0;
  template <class L, class B>
  static constexpr std::size_t extent = extent_v<B>;
  bool operator==(const tri_low_solve_map&) const = default;
  std::size_t scratch_size(std::size_t, const std::size_t*) const { return k; }
  /// x = L⁻¹ b (Back = false) or L⁻ᵀ b (Back = true) of one vector of K, its values at stride s
  /// (b and x; w, the scratch vector, at stride 1 is the same call with sx = 1).
  template <bool Back, class T>
  TYCHE_HD void solve(const T* l, const T* b, std::size_t sb, T* x, std::size_t sx) const {
    if constexpr (!Back) {
      for (std::size_t i = 0; i < k; ++i) {
        T acc = b[i * sb];
        for (std::size_t p = 0; p < i; ++p) acc = acc - l[i * k + p] * x[p * sx];
        x[i * sx] = acc / l[i * k + i];
      }
    } else {
      for (std::size_t i = k; i-- > 0;) {
        T acc = b[i * sb];
        for (std::size_t p = i + 1; p < k; ++p) acc = acc - l[p * k + i] * x[p * sx];
        x[i * sx] = acc / l[i * k + i];
      }
    }
  }
  /// Vector j of J: its first value and the stride between its values.
  TYCHE_HD std::size_t first(std::size_t j) const { return Columns ? j : j * k; }
  TYCHE_HD std::size_t stride(std::size_t m) const { return Columns ? m / k : 1; }
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t*, T*) const {
    const std::size_t s = stride(m);
    for (std::size_t j = 0; j < m / k; ++j) solve<Transposed>(in[0], in[1] + first(j), s, out + first(j), s);
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T* out, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj, T* w) const {
    const T* l = in[0];
    const std::size_t s = stride(m);
    for (std::size_t j = 0; j < m / k; ++j) {
      const T* x = out + first(j);
      solve<!Transposed>(l, adj + first(j), s, w, 1);
      for (std::size_t i = 0; i < k; ++i) {
        in_adj[1][first(j) + i * s] += w[i];
        for (std::size_t p = 0; p <= i; ++p) in_adj[0][i * k + p] += -(Transposed ? x[i * s] * w[p] : w[i] * x[p * s]);
      }
    }
  }
};

/// X v for a rows × cols data matrix X (row major, viewed: it must outlive the model) and a
/// vector operand v of cols values that is not a bare vector parameter (those make the streamed
/// matvec node of core/nodes.hpp): an elementwise expression, another vector_op, data. Reverse:
/// v̄ += Xᵀ adj. O(rows · cols) each way; X is read where it is, never copied.
/// E: X's values, double or float (each converted exactly to the scalar type as it is read).
template <class E = double>
struct basic_data_matvec_map {
  static constexpr const char* name = "matvec";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = true;
  static constexpr bool reads_data_matrix = true;  // X (compile/relocate.hpp, matrix_values_read)
  const E* x = nullptr;
  std::size_t rows = 0;
  std::size_t cols = 0;
  template <class V>
  static constexpr std::size_t extent = dynamic_extent;
  bool operator==(const basic_data_matvec_map&) const = default;
  /// f(x, rows · cols) (compile/relocate.hpp).
  template <class F>
  void for_each_data_buffer(std::size_t, F&& f) {
    if (x != nullptr) f(x, rows * cols);
  }
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*) const {
    const T* v = in[0];
    for (std::size_t r = 0; r < rows; ++r) {
      T acc = lift<T>(0.0);
      for (std::size_t c = 0; c < cols; ++c) acc = acc + lift<T>(x[r * cols + c]) * v[c];
      out[r] = acc;
    }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const*, const std::size_t*,
                        T* const* in_adj) const {
    T* vb = in_adj[0];
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c) vb[c] += lift<T>(x[r * cols + c]) * adj[r];
  }
};

using data_matvec_map = basic_data_matvec_map<double>;

/// S v for a sparse data matrix S of `rows` rows in compressed sparse row (CSR) form: the
/// non-zero values w, their column indices c and the row starts u (rows + 1 of them; row r's
/// entries are w[u[r] − base … u[r + 1] − base), column c[k] − base; base 1 for Stan's
/// csr_matrix_times_vector). Viewed: they must outlive the model (operations/sparse.hpp checks
/// them when the product is made). out_r = Σ_k w_k v[c_k]; reverse: ∂/∂v[c_k] += w_k adj_r.
/// O(non-zeros) each way.
struct sparse_matvec_map {
  static constexpr const char* name = "sparse_matvec";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = true;
  static constexpr bool reads_data_matrix = true;  // each output value reduces a row (relocate.hpp)
  const double* w = nullptr;
  const int* c = nullptr;
  const int* u = nullptr;
  std::size_t rows = 0;
  std::size_t nonzeros = 0;
  std::size_t base = 0;
  template <class V>
  static constexpr std::size_t extent = dynamic_extent;
  bool operator==(const sparse_matvec_map&) const = default;
  /// f(w, non-zeros), f(c, non-zeros), f(u, rows + 1) (compile/relocate.hpp).
  template <class F>
  void for_each_data_buffer(std::size_t, F&& f) {
    if (w != nullptr) f(w, nonzeros);
    if (c != nullptr) f(c, nonzeros);
    if (u != nullptr) f(u, rows + 1);
  }
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*) const {
    const T* v = in[0];
    for (std::size_t r = 0; r < rows; ++r) {
      T acc = lift<T>(0.0);
      const std::size_t end = static_cast<std::size_t>(u[r + 1]) - base;
      for (std::size_t k = static_cast<std::size_t>(u[r]) - base; k < end; ++k)
        acc = acc + lift<T>(w[k]) * v[static_cast<std::size_t>(c[k]) - base];
      out[r] = acc;
    }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const*, const std::size_t*,
                        T* const* in_adj) const {
    T* vb = in_adj[0];
    for (std::size_t r = 0; r < rows; ++r) {
      const std::size_t end = static_cast<std::size_t>(u[r + 1]) - base;
      for (std::size_t k = static_cast<std::size_t>(u[r]) - base; k < end; ++k)
        vb[static_cast<std::size_t>(c[k]) - base] += lift<T>(w[k]) * adj[r];
    }
  }
};

/// The squared-exponential covariance of n points x₁ … xₙ in d dimensions (a data matrix of n
/// rows, row major, viewed: it must outlive the model), operands α (a scalar) and ρ (a scalar, or
/// d length-scales, one per dimension: Stan's automatic relevance determination form):
/// Kᵢⱼ = α² exp(−½ Σ_c (x_ic − x_jc)² / ρ_c²), the n² entries row major (Stan's gp_exp_quad_cov).
/// Reverse: ᾱ = Σ adjᵢⱼ 2α eᵢⱼ, ρ̄_c = Σ adjᵢⱼ α² eᵢⱼ (x_ic − x_jc)² / ρ_c³, eᵢⱼ = exp(…)
/// computed again. O(n² d) each way. Scratch (d length-scales only): −½/ρ_c² and the ρ̄_c sums.
struct gp_exp_quad_cov_map {
  static constexpr const char* name = "gp_exp_quad_cov";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = true;
  const double* x = nullptr;
  std::size_t n = 0;
  std::size_t d = 1;
  template <class A, class R>
  static constexpr std::size_t extent = dynamic_extent;
  bool operator==(const gp_exp_quad_cov_map&) const = default;
  static std::size_t scratch_size(std::size_t, const std::size_t* in_n) { return in_n[1] != 1 ? 2 * in_n[1] : 0; }
  /// f(x, n · d) (compile/relocate.hpp).
  template <class F>
  void for_each_data_buffer(std::size_t, F&& f) {
    if (x != nullptr) f(x, n * d);
  }
  TYCHE_HD double squared_distance(std::size_t i, std::size_t j) const {
    double s = 0.0;
    for (std::size_t c = 0; c < d; ++c) {
      const double t = x[i * d + c] - x[j * d + c];
      s += t * t;
    }
    return s;
  }
  /// −½ Σ_c (x_ic − x_jc)² / ρ_c², with w_c = −½/ρ_c².
  template <class T>
  TYCHE_HD T scaled_distance(std::size_t i, std::size_t j, const T* w) const {
    T s = lift<T>(0.0);
    for (std::size_t c = 0; c < d; ++c) {
      const double t = x[i * d + c] - x[j * d + c];
      s = s + w[c] * lift<T>(t * t);
    }
    return s;
  }
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t* in_n, T* w) const {
    const T a2 = in[0][0] * in[0][0];
    if (in_n[1] != 1) {
      for (std::size_t c = 0; c < d; ++c) w[c] = lift<T>(-0.5) / (in[1][c] * in[1][c]);
      for (std::size_t i = 0; i < n; ++i) {
        out[i * n + i] = a2;
        for (std::size_t j = 0; j < i; ++j) out[i * n + j] = out[j * n + i] = a2 * math::exp(scaled_distance(i, j, w));
      }
      return;
    }
    const T scale = lift<T>(-0.5) / (in[1][0] * in[1][0]);
    for (std::size_t i = 0; i < n; ++i) {
      out[i * n + i] = a2;
      for (std::size_t j = 0; j < i; ++j) out[i * n + j] = out[j * n + i] = a2 * math::exp(scale * lift<T>(squared_distance(i, j)));
    }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const* in, const std::size_t* in_n,
                        T* const* in_adj, T* w) const {
    const T alpha = in[0][0];
    T ga = lift<T>(0.0);
    if (in_n[1] != 1) {
      T* g = w + d;  // Σ adjᵢⱼ eᵢⱼ (x_ic − x_jc)², per dimension
      for (std::size_t c = 0; c < d; ++c) {
        w[c] = lift<T>(-0.5) / (in[1][c] * in[1][c]);
        g[c] = lift<T>(0.0);
      }
      for (std::size_t i = 0; i < n; ++i) {
        ga = ga + adj[i * n + i];
        for (std::size_t j = 0; j < i; ++j) {
          const T ae = (adj[i * n + j] + adj[j * n + i]) * math::exp(scaled_distance(i, j, w));
          ga = ga + ae;
          for (std::size_t c = 0; c < d; ++c) {
            const double t = x[i * d + c] - x[j * d + c];
            g[c] = g[c] + ae * lift<T>(t * t);
          }
        }
      }
      in_adj[0][0] += lift<T>(2.0) * alpha * ga;
      for (std::size_t c = 0; c < d; ++c) {
        const T rho = in[1][c];
        in_adj[1][c] += alpha * alpha * g[c] / (rho * rho * rho);
      }
      return;
    }
    const T rho = in[1][0];
    const T scale = lift<T>(-0.5) / (rho * rho);
    T gr = lift<T>(0.0);
    for (std::size_t i = 0; i < n; ++i) {
      ga = ga + adj[i * n + i];
      for (std::size_t j = 0; j < i; ++j) {
        const T d2 = lift<T>(squared_distance(i, j));
        const T e = math::exp(scale * d2);
        const T a = adj[i * n + j] + adj[j * n + i];
        ga = ga + a * e;
        gr = gr + a * e * d2;
      }
    }
    in_adj[0][0] += lift<T>(2.0) * alpha * ga;
    in_adj[1][0] += alpha * alpha * gr / (rho * rho * rho);
  }
};

/// The dot-product covariance of n points x₁ … xₙ in d dimensions (a data matrix of n rows, row
/// major, viewed), operand σ (a scalar): Kᵢⱼ = σ² + xᵢ·xⱼ, the n² entries row major (Stan's
/// gp_dot_prod_cov). Reverse: σ̄ = 2σ Σᵢⱼ adjᵢⱼ. O(n² d) forwards, O(n²) backwards.
struct gp_dot_prod_cov_map {
  static constexpr const char* name = "gp_dot_prod_cov";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = true;
  const double* x = nullptr;
  std::size_t n = 0;
  std::size_t d = 1;
  template <class S>
  static constexpr std::size_t extent = dynamic_extent;
  bool operator==(const gp_dot_prod_cov_map&) const = default;
  /// f(x, n · d) (compile/relocate.hpp).
  template <class F>
  void for_each_data_buffer(std::size_t, F&& f) {
    if (x != nullptr) f(x, n * d);
  }
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*) const {
    const T s2 = in[0][0] * in[0][0];
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j <= i; ++j) {
        double dot = 0.0;
        for (std::size_t c = 0; c < d; ++c) dot += x[i * d + c] * x[j * d + c];
        out[i * n + j] = out[j * n + i] = s2 + lift<T>(dot);
      }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj) const {
    T g = lift<T>(0.0);
    for (std::size_t k = 0; k < m; ++k) g = g + adj[k];
    in_adj[0][0] += lift<T>(2.0) * in[0][0] * g;
  }
};

/// The stationary covariance kernels besides the squared exponential (Stan's gp_*_cov), as
/// functions of the distance r = ‖xᵢ − xⱼ‖: exponential α² e^(−r/ρ); Matérn 3/2
/// α² (1 + s) e^(−s), s = √3 r/ρ; Matérn 5/2 α² (1 + s + s²/3) e^(−s), s = √5 r/ρ; periodic
/// α² exp(−2 sin²(π r/p) / ρ²) with the period p a third operand.
enum class gp_kernel { exponential, matern32, matern52, periodic };

/// The covariance of n points x₁ … xₙ in d dimensions (a data matrix of n rows, row major,
/// viewed) under kernel Kind, operands α, ρ (and p for the periodic kernel), the n² entries row
/// major. Reverse, with e = k/α² at each pair: ᾱ = Σ adj 2α e; ρ̄ from ∂e/∂ρ — exponential
/// e r/ρ², Matérn 3/2 s² e^(−s)/ρ, Matérn 5/2 s² (1 + s) e^(−s)/(3ρ), periodic 4 e sin²(u)/ρ³ (u =
/// π r/p), and p̄ from ∂e/∂p = 2π r e sin(2u)/(ρ² p²). O(n² d) each way. The exponential and
/// Matérn kernels also take d length-scales, one per dimension (Stan's ARD forms): r/ρ becomes
/// s = √(Σ_c (x_ic − x_jc)²/ρ_c²) (unit_scaled, reverse_scaled; scratch 2d values).
template <gp_kernel Kind>
struct gp_cov_map {
  static constexpr const char* name = Kind == gp_kernel::exponential ? "gp_exponential_cov"
                                      : Kind == gp_kernel::matern32  ? "gp_matern32_cov"
                                      : Kind == gp_kernel::matern52  ? "gp_matern52_cov"
                                                                     : "gp_periodic_cov";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = true;
  const double* x = nullptr;
  std::size_t n = 0;
  std::size_t d = 1;
  template <class... Operands>
  static constexpr std::size_t extent = dynamic_extent;
  bool operator==(const gp_cov_map&) const = default;
  /// With d length-scales (not the periodic kernel's): 1/ρ_c and the ρ̄_c sums.
  static std::size_t scratch_size(std::size_t, const std::size_t* in_n) { return in_n[1] != 1 ? 2 * in_n[1] : 0; }
  /// f(x, n · d) (compile/relocate.hpp).
  template <class F>
  void for_each_data_buffer(std::size_t, F&& f) {
    if (x != nullptr) f(x, n * d);
  }
  TYCHE_HD double distance(std::size_t i, std::size_t j) const {
    double s = 0.0;
    for (std::size_t c = 0; c < d; ++c) {
      const double t = x[i * d + c] - x[j * d + c];
      s += t * t;
    }
    return ::sqrt(s);
  }
  /// e = k/α² at distance r, and (with Grad) the pieces of its derivatives: gr (ρ's, up to the
  /// factor applied once in reverse) and gp (p's, periodic only).
  template <class T>
  TYCHE_HD T unit(double r, const T& rho, const T* p, T* gr = nullptr, T* gp = nullptr) const {
    if constexpr (Kind == gp_kernel::exponential) {
      const T e = math::exp(lift<T>(-r) / rho);
      if (gr) *gr = e * lift<T>(r);
      return e;
    } else if constexpr (Kind == gp_kernel::matern32 || Kind == gp_kernel::matern52) {
      constexpr double root = Kind == gp_kernel::matern32 ? 1.7320508075688772 : 2.2360679774997897;
      const T s = lift<T>(root * r) / rho;
      const T ex = math::exp(-s);
      // e^(−s) first: at a length-scale so small that s³ overflows a float, e^(−s) is already 0
      // and the product must be 0, not inf · 0 (found by review).
      if constexpr (Kind == gp_kernel::matern32) {
        if (gr) *gr = ex * s * s;
        return (lift<T>(1.0) + s) * ex;
      } else {
        if (gr) *gr = ex * s * s * (lift<T>(1.0) + s);
        return ex * (lift<T>(1.0) + s + s * s * lift<T>(1.0 / 3));
      }
    } else {
      const T u = lift<T>(3.14159265358979323846 * r) / p[0];
      const T sn = math::sin(u);
      const T e = math::exp(lift<T>(-2.0) * sn * sn / (rho * rho));
      if (gr) *gr = e * sn * sn;
      if (gp) *gp = e * lift<T>(r) * math::sin(lift<T>(2.0) * u);
      return e;
    }
  }
  /// With a length-scale per dimension: e(s) at s = √(Σ_c (x_ic − x_jc)²/ρ_c²), and
  /// ds = −s e'(s) (what ∂e/∂ρ is at ρ = 1: ∂e/∂ρ_c = ds (x_ic − x_jc)² / (ρ_c³ s²)).
  template <class T>
  TYCHE_HD T unit_scaled(const T& s, T& ds) const {
    if constexpr (Kind == gp_kernel::exponential) {
      const T e = math::exp(-s);
      ds = e * s;
      return e;
    } else {
      constexpr double root = Kind == gp_kernel::matern32 ? 1.7320508075688772 : 2.2360679774997897;
      const T u = lift<T>(root) * s;
      const T ex = math::exp(-u);
      if constexpr (Kind == gp_kernel::matern32) {
        ds = ex * u * u;
        return (lift<T>(1.0) + u) * ex;
      } else {
        ds = ex * u * u * (lift<T>(1.0) + u) * lift<T>(1.0 / 3);
        return ex * (lift<T>(1.0) + u + u * u * lift<T>(1.0 / 3));
      }
    }
  }
  /// Σ_c ((x_ic − x_jc)/ρ_c)², with w_c = 1/ρ_c.
  template <class T>
  TYCHE_HD T scaled_square(std::size_t i, std::size_t j, const T* w) const {
    T s2 = lift<T>(0.0);
    for (std::size_t c = 0; c < d; ++c) {
      const T t = lift<T>(x[i * d + c] - x[j * d + c]) * w[c];
      s2 = s2 + t * t;
    }
    return s2;
  }
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, [[maybe_unused]] const std::size_t* in_n,
                        [[maybe_unused]] T* w) const {
    const T a2 = in[0][0] * in[0][0];
    if constexpr (Kind != gp_kernel::periodic) {
      if (in_n[1] != 1) {
        for (std::size_t c = 0; c < d; ++c) w[c] = lift<T>(1.0) / in[1][c];
        for (std::size_t i = 0; i < n; ++i) {
          out[i * n + i] = a2;
          for (std::size_t j = 0; j < i; ++j) {
            T ds;
            out[i * n + j] = out[j * n + i] = a2 * unit_scaled<T>(math::sqrt(scaled_square(i, j, w)), ds);
          }
        }
        return;
      }
    }
    const T* p = Kind == gp_kernel::periodic ? in[2] : nullptr;
    for (std::size_t i = 0; i < n; ++i) {
      out[i * n + i] = a2;
      for (std::size_t j = 0; j < i; ++j) out[i * n + j] = out[j * n + i] = a2 * unit<T>(distance(i, j), in[1][0], p);
    }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const* in,
                        [[maybe_unused]] const std::size_t* in_n, T* const* in_adj, [[maybe_unused]] T* w) const {
    if constexpr (Kind != gp_kernel::periodic) {
      if (in_n[1] != 1) {
        reverse_scaled(adj, in, in_adj, w);
        return;
      }
    }
    const T alpha = in[0][0], rho = in[1][0];
    const T* p = Kind == gp_kernel::periodic ? in[2] : nullptr;
    T ga = lift<T>(0.0), gr = lift<T>(0.0), gp = lift<T>(0.0);
    for (std::size_t i = 0; i < n; ++i) {
      ga = ga + adj[i * n + i];
      for (std::size_t j = 0; j < i; ++j) {
        T dr = lift<T>(0.0), dp = lift<T>(0.0);
        const T e = unit<T>(distance(i, j), rho, p, &dr, &dp);
        const T a = adj[i * n + j] + adj[j * n + i];
        ga = ga + a * e;
        gr = gr + a * dr;
        if constexpr (Kind == gp_kernel::periodic) gp = gp + a * dp;
      }
    }
    const T a2 = alpha * alpha;
    in_adj[0][0] += lift<T>(2.0) * alpha * ga;
    if constexpr (Kind == gp_kernel::exponential) in_adj[1][0] += a2 * gr / (rho * rho);
    else if constexpr (Kind == gp_kernel::matern32) in_adj[1][0] += a2 * gr / rho;
    else if constexpr (Kind == gp_kernel::matern52) in_adj[1][0] += a2 * gr / (lift<T>(3.0) * rho);
    else {
      in_adj[1][0] += lift<T>(4.0) * a2 * gr / (rho * rho * rho);
      in_adj[2][0] += lift<T>(2.0 * 3.14159265358979323846) * a2 * gp / (rho * rho * p[0] * p[0]);
    }
  }
  /// The reverse pass with a length-scale per dimension: ρ̄_c = α² Σ adjᵢⱼ ds (x_ic − x_jc)² / (ρ_c³ s²)
  /// (0 where two points coincide: every term of s is 0 there).
  template <class T>
  TYCHE_HD void reverse_scaled(const T* adj, const T* const* in, T* const* in_adj, T* w) const {
    const T alpha = in[0][0], zero = lift<T>(0.0);
    T* g = w + d;
    for (std::size_t c = 0; c < d; ++c) {
      w[c] = lift<T>(1.0) / in[1][c];
      g[c] = zero;
    }
    T ga = zero;
    for (std::size_t i = 0; i < n; ++i) {
      ga = ga + adj[i * n + i];
      for (std::size_t j = 0; j < i; ++j) {
        const T s2 = scaled_square(i, j, w);
        T ds;
        const T e = unit_scaled<T>(math::sqrt(s2), ds);
        const T a = adj[i * n + j] + adj[j * n + i];
        ga = ga + a * e;
        T q;
        if constexpr (std::is_arithmetic_v<T>) q = s2 > 0 ? a * ds / s2 : zero;
        else q = math::select(s2 > zero, a * ds / s2, zero);
        for (std::size_t c = 0; c < d; ++c) {
          const T t = lift<T>(x[i * d + c] - x[j * d + c]);
          g[c] = g[c] + q * t * t;
        }
      }
    }
    in_adj[0][0] += lift<T>(2.0) * alpha * ga;
    for (std::size_t c = 0; c < d; ++c) in_adj[1][c] += alpha * alpha * g[c] * w[c] * w[c] * w[c];
  }
};

/// K + diag(v) for a K × K matrix given as its K² entries (row major) and v a scalar (added to
/// every diagonal entry) or K values: Stan's add_diag. Reverse: K̄ += adj, v̄ += adj's diagonal.
struct add_diag_map {
  static constexpr const char* name = "add_diag";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t k = 0;
  template <class M, class V>
  static constexpr std::size_t extent = extent_v<M>;
  bool operator==(const add_diag_map&) const = default;
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t* in_n) const {
    for (std::size_t i = 0; i < m; ++i) out[i] = in[0][i];
    for (std::size_t i = 0; i < k; ++i) out[i * k + i] = out[i * k + i] + in[1][in_n[1] == 1 ? 0 : i];
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const*, const std::size_t* in_n,
                        T* const* in_adj) const {
    for (std::size_t i = 0; i < m; ++i) in_adj[0][i] += adj[i];
    for (std::size_t i = 0; i < k; ++i) in_adj[1][in_n[1] == 1 ? 0 : i] += adj[i * k + i];
  }
};

/// M v for a K × K matrix M given as its K² entries (row major, any vector expression: a
/// Cholesky factor, diag_pre_multiply(tau, L), …) and a vector v of K values — or of J·K values,
/// J vectors of K, each multiplied by M (out block r = M v block r). Reverse:
/// M̄ᵢⱼ += Σ_r adj_{r,i} v_{r,j}, v̄ block r += Mᵀ adj block r. O(J K²) each way.
struct matvec_map {
  static constexpr const char* name = "matvec";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t k = 0;
  template <class M, class V>
  static constexpr std::size_t extent = extent_v<V>;
  bool operator==(const matvec_map&) const = default;
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t*) const {
    const T* mat = in[0];
    for (std::size_t r = 0; r * k < m; ++r) {
      const T* v = in[1] + r * k;
      for (std::size_t i = 0; i < k; ++i) {
        T acc = lift<T>(0.0);
        for (std::size_t j = 0; j < k; ++j) acc = acc + mat[i * k + j] * v[j];
        out[r * k + i] = acc;
      }
    }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj) const {
    const T* mat = in[0];
    for (std::size_t r = 0; r * k < m; ++r) {
      const T* v = in[1] + r * k;
      const T* a = adj + r * k;
      T* v_adj = in_adj[1] + r * k;
      for (std::size_t i = 0; i < k; ++i) {
        for (std::size_t j = 0; j < k; ++j) {
          in_adj[0][i * k + j] += a[i] * v[j];
          v_adj[j] += mat[i * k + j] * a[i];
        }
      }
    }
  }
};

/// The dot products of the rows (Columns = false: rows values) or of the columns (Columns = true:
/// cols values) of two rows × cols matrices A and B given as their entries (row major): Stan's
/// rows_dot_product and columns_dot_product. With x null the operands are A and B; with x
/// set, A is that data matrix (viewed, not copied) and the one operand is B. Reverse:
/// Āᵢⱼ += adjᵢ Bᵢⱼ and B̄ᵢⱼ += adjᵢ Aᵢⱼ (adjⱼ for columns).
template <bool Columns>
struct rows_dot_product_map {
  static constexpr const char* name = Columns ? "columns_dot_product" : "rows_dot_product";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = true;
  static constexpr bool reads_data_matrix = true;  // A when it is data (compile/relocate.hpp)
  std::size_t rows = 0;
  std::size_t cols = 0;
  const double* x = nullptr;
  template <class... Cs>
  static constexpr std::size_t extent = dynamic_extent;
  bool operator==(const rows_dot_product_map&) const = default;
  /// f(x, rows · cols) when A is data (compile/relocate.hpp).
  template <class F>
  void for_each_data_buffer(std::size_t, F&& f) {
    if (x != nullptr) f(x, rows * cols);
  }
  template <class T>
  TYCHE_HD T a_at(const T* const* in, std::size_t p) const {
    return x != nullptr ? lift<T>(x[p]) : in[0][p];
  }
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t*) const {
    const T* b = in[x != nullptr ? 0 : 1];
    for (std::size_t r = 0; r < m; ++r) out[r] = lift<T>(0.0);
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < cols; ++j) {
        T& o = out[Columns ? j : i];
        o = o + a_at(in, i * cols + j) * b[i * cols + j];
      }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj) const {
    const std::size_t ib = x != nullptr ? 0 : 1;
    const T* b = in[ib];
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < cols; ++j) {
        const std::size_t p = i * cols + j;
        const T a = adj[Columns ? j : i];
        if (x == nullptr) in_adj[0][p] += a * b[p];
        in_adj[ib][p] += a * a_at(in, p);
      }
  }
};

/// zₙ = L⁻¹(yₙ − μₙ) for the N rows yₙ of y and a lower-triangular K × K L (K² values; the
/// part above the diagonal is not read), all N·K values. y and μ each hold one value (for
/// every entry), K values (one vector, for every row) or N·K values (row n at n·K). Forward
/// substitution. Reverse, per row: w = L⁻ᵀ z̄ₙ by back substitution (scratch: K values), then
/// ȳₙ += w, μ̄ₙ −= w and L̄ᵢⱼ −= wᵢ zₙⱼ (j ≤ i), from dz = −L⁻¹ dL z. O(N K²) each way.
struct cholesky_residual_map {
  static constexpr const char* name = "cholesky_residual";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t k = 0;
  template <class L, class Y, class Mu>
  static constexpr std::size_t extent = dynamic_extent;
  bool operator==(const cholesky_residual_map&) const = default;
  std::size_t scratch_size(std::size_t, const std::size_t*) const { return k; }
  TYCHE_HD std::size_t index(std::size_t len, std::size_t n, std::size_t i) const {
    return len == 1 ? 0 : (len == k ? i : n * k + i);
  }
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t* in_n, T*) const {
    const T* l = in[0];
    for (std::size_t n = 0; n * k < m; ++n) {
      T* z = out + n * k;
      for (std::size_t i = 0; i < k; ++i) {
        const T r = in[1][index(in_n[1], n, i)] - in[2][index(in_n[2], n, i)];
        z[i] = (r - detail::triangular_dot(l + i * k, z, i)) / l[i * k + i];
      }
    }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T* out, const T* adj, const T* const* in, const std::size_t* in_n,
                        T* const* in_adj, T* w) const {
    const T* l = in[0];
    for (std::size_t n = 0; n * k < m; ++n) {
      const T* z = out + n * k;
      const T* zb = adj + n * k;
      // w = L⁻ᵀ z̄, column by column from the last (lower_triangular_solve_view's reverse).
      for (std::size_t i = 0; i < k; ++i) w[i] = zb[i];
      for (std::size_t i = k; i-- > 0;) {
        w[i] = w[i] / l[i * k + i];
        detail::triangular_axpy(l + i * k, w[i], w, i);
      }
      for (std::size_t i = 0; i < k; ++i) {
        in_adj[1][index(in_n[1], n, i)] += w[i];
        in_adj[2][index(in_n[2], n, i)] += -w[i];
        for (std::size_t j = 0; j <= i; ++j) in_adj[0][i * k + j] += -w[i] * z[j];
      }
    }
  }
};

/// log c_K(η), the normalising constant of the LKJ density det(Ω)^{η−1} / c_K(η) on K × K
/// correlation matrices (Lewandowski, Kurowicka & Joe 2009, section 3.2), written through the
/// canonical partial correlations, which are independent with density ∝ (1 − z²)^{aⱼ−1} on
/// (−1, 1), aⱼ = η + (K − 2 − j)/2 for the K − 1 − j of them in column j:
///   log c_K(η) = Σ_{j=0..K−2} (K − 1 − j) [(2aⱼ − 1) log 2 + 2 log Γ(aⱼ) − log Γ(2aⱼ)].
/// η is one value; so is the result. Reverse: ∂/∂η = Σ (K − 1 − j) [2 log 2 + 2ψ(aⱼ) − 2ψ(2aⱼ)].
struct lkj_log_normaliser_map {
  static constexpr const char* name = "lkj_log_normaliser";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t k = 0;
  template <class Eta>
  static constexpr std::size_t extent = 1;
  bool operator==(const lkj_log_normaliser_map&) const = default;
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*) const {
    const T eta = in[0][0];
    T acc = lift<T>(0.0);
    for (std::size_t j = 0; j + 1 < k; ++j) {
      const T a = eta + lift<T>(0.5 * (double(k) - 2.0 - double(j)));
      acc = acc + lift<T>(double(k - 1 - j)) *
                      ((lift<T>(2.0) * a - lift<T>(1.0)) * lift<T>(0.69314718055994530942) +
                       lift<T>(2.0) * math::lgamma(a) - math::lgamma(lift<T>(2.0) * a));
    }
    out[0] = acc;
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj) const {
    const T eta = in[0][0];
    T acc = lift<T>(0.0);
    for (std::size_t j = 0; j + 1 < k; ++j) {
      const T a = eta + lift<T>(0.5 * (double(k) - 2.0 - double(j)));
      acc = acc + lift<T>(2.0 * double(k - 1 - j)) *
                      (lift<T>(0.69314718055994530942) + math::digamma(a) - math::digamma(lift<T>(2.0) * a));
    }
    in_adj[0][0] += acc * adj[0];
  }
};

}  // namespace ops

}  // namespace tyche
