// tyche/autodiff/multivariate_ops.hpp — value and vector–Jacobian rules of two pieces of the
// multivariate families that the matrix ops of autodiff/matrix_ops.hpp do not cover (the op
// contract: autodiff/vector_ops.hpp; docs/design/vector-ops.md):
//
//   row_sums_of_squares_map  (Σⱼ zₙⱼ²)ₙ for the N rows of an N × K matrix (multi_student_t's
//                            quadratic forms from cholesky_residual_map's L⁻¹(yₙ − μₙ))
//   wishart_map<Inverse>     the log density of the Wishart (inverse Wishart) distribution of
//                            a K × K matrix W given ν and S (one value)
//   wishart_cholesky_map<Inverse>  the same for the Cholesky factor L_W of W given ν and the
//                            Cholesky factor L_S of S, with the Jacobian of W = L_W L_Wᵀ (one value)
//   inverse_spd_map          A⁻¹ of a symmetric positive-definite K × K matrix (Stan's inverse_spd)
//   inverse_map              A⁻¹ of a general K × K matrix (Stan's inverse), pivoting per lane
//   lu_solve_map<Right>      A⁻¹ B or B A⁻¹ for a general K × K matrix (Stan's mdivide_left,
//                            mdivide_right), by elimination with partial pivoting per lane
//   determinant_map<Log>     log |det A| (Stan's log_determinant) or det A of a general K × K matrix
//   matrix_exp_map           e^A of a general K × K matrix (Stan's matrix_exp)
//   matrix_power_map         Aⁿ of a general K × K matrix, n ≥ 0 an integer (Stan's matrix_power)
//   eigen_sym_map<Vectors>   the eigenvalues (ascending) or eigenvectors of a symmetric K × K
//                            matrix (Stan's eigenvalues_sym, eigenvectors_sym)
//   poisson_binomial_map<Mode>  Σᵢ log P(Y = yᵢ) (or ≤ yᵢ, > yᵢ), Y the number of successes of N
//                            independent trials with probabilities θ (one value)
//   precision_quadratic_map  Σₙ (yₙ − μₙ)ᵀ Ω (yₙ − μₙ) over N rows of K (one value):
//                            multi_normal_prec's quadratic form
//
// Matrices are vectors of their K² entries in row-major order; as in matrix_ops.hpp, W and S
// are read through their lower triangles (the symmetric matrices those define), and their
// adjoints go to the lower triangles.
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
/// M⁻¹ = L⁻ᵀ L⁻¹ (all K² entries) from the lower Cholesky factor l of M; linv (K², scratch)
/// receives L⁻¹ by forward substitution, column by column: (L⁻¹)ⱼⱼ = 1/Lⱼⱼ,
/// (L⁻¹)ᵢⱼ = −(Σ_{p=j..i−1} Lᵢₚ (L⁻¹)ₚⱼ)/Lᵢᵢ for i > j. O(K³).
template <class T>
TYCHE_HD void inverse_from_cholesky(std::size_t k, const T* l, T* linv, T* inv) {
  for (std::size_t j = 0; j < k; ++j) {
    for (std::size_t i = 0; i < j; ++i) linv[i * k + j] = lift<T>(0.0);
    linv[j * k + j] = lift<T>(1.0) / l[j * k + j];
    for (std::size_t i = j + 1; i < k; ++i) {
      T acc = lift<T>(0.0);
      for (std::size_t p = j; p < i; ++p) acc = acc + l[i * k + p] * linv[p * k + j];
      linv[i * k + j] = -acc / l[i * k + i];
    }
  }
  for (std::size_t i = 0; i < k; ++i) {
    for (std::size_t j = 0; j <= i; ++j) {
      T acc = lift<T>(0.0);
      for (std::size_t p = i; p < k; ++p) acc = acc + linv[p * k + i] * linv[p * k + j];
      inv[i * k + j] = acc;
      inv[j * k + i] = acc;
    }
  }
}

/// Entry (i, j) of the symmetric matrix whose lower triangle m holds (row major, K × K).
template <class T>
TYCHE_HD const T& symmetric_at(const T* m, std::size_t k, std::size_t i, std::size_t j) {
  return i >= j ? m[i * k + j] : m[j * k + i];
}
/// Elimination with partial pivoting of a general K × K matrix a (overwritten), in every lane of
/// a SIMD batch at once although each lane may pivot on another row: column c's pivot is brought
/// to row c by a sweep of conditional swaps (row r and row c exchange, as a select per entry, in
/// the lanes where |a_rc| > |a_cc|), so row c ends holding the entry of largest magnitude — the
/// pivot partial pivoting would choose, with the other rows in another order, which changes
/// neither the determinant's magnitude nor the inverse. sign receives the determinant's sign
/// (±1), log_abs_det log |det a| (−∞ for a singular matrix). With inv non-null, Gauss–Jordan:
/// every other row is eliminated, and inv receives a⁻¹ (non-finite for a singular matrix);
/// otherwise only the rows below (LU). O(K³).
template <class T>
TYCHE_HD void pivoted_elimination(std::size_t k, T* a, T* inv, T& log_abs_det, T& sign) {
  if (inv != nullptr)
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) inv[i * k + j] = lift<T>(i == j ? 1.0 : 0.0);
  log_abs_det = lift<T>(0.0);
  sign = lift<T>(1.0);
  for (std::size_t c = 0; c < k; ++c) {
    for (std::size_t r = c + 1; r < k; ++r) {
      const auto swap = math::abs(a[r * k + c]) > math::abs(a[c * k + c]);
      swap_rows_where(swap, k, a, r, c, c, k);
      if (inv != nullptr) swap_rows_where(swap, k, inv, r, c, 0, k);
      sign = math::select(swap, -sign, sign);
    }
    const T pivot = a[c * k + c];
    log_abs_det = log_abs_det + math::log(math::abs(pivot));
    sign = math::select(pivot < lift<T>(0.0), -sign, sign);
    // A zero pivot (the column below is zero too: it is the largest): LU goes on with a zero
    // multiplier, so the determinant is 0 and its log −∞ rather than NaN; Gauss–Jordan's inverse
    // is non-finite as it must be.
    const T scale = inv != nullptr ? lift<T>(1.0) / pivot
                                   : lift<T>(1.0) / math::select(pivot == lift<T>(0.0), lift<T>(1.0), pivot);
    if (inv != nullptr) {
      for (std::size_t j = c + 1; j < k; ++j) a[c * k + j] = a[c * k + j] * scale;
      for (std::size_t j = 0; j < k; ++j) inv[c * k + j] = inv[c * k + j] * scale;
      for (std::size_t r = 0; r < k; ++r) {
        if (r == c) continue;
        const T f = a[r * k + c];
        for (std::size_t j = c + 1; j < k; ++j) a[r * k + j] = a[r * k + j] - f * a[c * k + j];
        for (std::size_t j = 0; j < k; ++j) inv[r * k + j] = inv[r * k + j] - f * inv[c * k + j];
      }
    } else {
      for (std::size_t r = c + 1; r < k; ++r) {
        const T f = a[r * k + c] * scale;
        for (std::size_t j = c + 1; j < k; ++j) a[r * k + j] = a[r * k + j] - f * a[c * k + j];
      }
    }
  }
}
/// X = M⁻¹ B for a general K × K matrix M (a, or aᵀ with a_transposed) and B K × J (b, or the
/// transpose of a J × K row-major b with b_transposed; X K × J, row major), by Gaussian
/// elimination with partial pivoting on [M | B] — the sweep of conditional swaps of
/// pivoted_elimination, so each SIMD lane pivots on its own rows — then back substitution. lu
/// (K²) receives the factors of P M = L U (U on and above the diagonal, L's multipliers below it,
/// its unit diagonal implied) and perm (K) the permutation as values of T (row i of P M is row
/// perm[i] of M), for lu_transposed_solve. A singular M gives non-finite values (a rejected
/// point). O(K³/3 + K² J).
template <class T>
TYCHE_HD void pivoted_solve(std::size_t k, std::size_t nj, const T* a, bool a_transposed, const T* b,
                            bool b_transposed, T* lu, T* perm, T* x) {
  for (std::size_t r = 0; r < k; ++r) {
    for (std::size_t c = 0; c < k; ++c) lu[r * k + c] = a_transposed ? a[c * k + r] : a[r * k + c];
    for (std::size_t q = 0; q < nj; ++q) x[r * nj + q] = b_transposed ? b[q * k + r] : b[r * nj + q];
    perm[r] = lift<T>(static_cast<double>(r));
  }
  for (std::size_t c = 0; c < k; ++c) {
    for (std::size_t r = c + 1; r < k; ++r) {
      const auto swap = math::abs(lu[r * k + c]) > math::abs(lu[c * k + c]);
      swap_rows_where(swap, k, lu, r, c, 0, k);  // whole rows: the multipliers move with them
      swap_rows_where(swap, nj, x, r, c, 0, nj);
      swap_rows_where(swap, 1, perm, r, c, 0, 1);
    }
    for (std::size_t r = c + 1; r < k; ++r) {
      const T f = lu[r * k + c] / lu[c * k + c];
      lu[r * k + c] = f;
      for (std::size_t j = c + 1; j < k; ++j) lu[r * k + j] = lu[r * k + j] - f * lu[c * k + j];
      for (std::size_t q = 0; q < nj; ++q) x[r * nj + q] = x[r * nj + q] - f * x[c * nj + q];
    }
  }
  for (std::size_t c = k; c-- > 0;)
    for (std::size_t q = 0; q < nj; ++q) {
      T acc = x[c * nj + q];
      for (std::size_t j = c + 1; j < k; ++j) acc = acc - lu[c * k + j] * x[j * nj + q];
      x[c * nj + q] = acc / lu[c * k + c];
    }
}
/// X = M⁻ᵀ B from pivoted_solve's factors of P M = L U (Mᵀ = Uᵀ Lᵀ P): Uᵀ z = B by forward
/// substitution, Lᵀ w = z by back substitution, X = Pᵀ w (row perm[i] of X is row i of w, a
/// select per entry: each lane its own permutation). B as pivoted_solve's; w: K·J. O(K² J).
template <class T>
TYCHE_HD void lu_transposed_solve(std::size_t k, std::size_t nj, const T* lu, const T* perm, const T* b,
                                  bool b_transposed, T* w, T* x) {
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t q = 0; q < nj; ++q) {
      T acc = b_transposed ? b[q * k + i] : b[i * nj + q];
      for (std::size_t j = 0; j < i; ++j) acc = acc - lu[j * k + i] * w[j * nj + q];
      w[i * nj + q] = acc / lu[i * k + i];
    }
  for (std::size_t i = k; i-- > 0;)
    for (std::size_t q = 0; q < nj; ++q) {
      T acc = w[i * nj + q];
      for (std::size_t j = i + 1; j < k; ++j) acc = acc - lu[j * k + i] * w[j * nj + q];
      w[i * nj + q] = acc;
    }
  for (std::size_t row = 0; row < k; ++row) {
    const T target = lift<T>(static_cast<double>(row));
    for (std::size_t i = 0; i < k; ++i) {
      const auto here = perm[i] == target;
      for (std::size_t q = 0; q < nj; ++q)
        x[row * nj + q] = i == 0 ? math::select(here, w[q], lift<T>(0.0))
                                 : math::select(here, w[i * nj + q], x[row * nj + q]);
    }
  }
}
/// C = A B for K × K matrices (row major; C distinct from A and B).
template <class T>
TYCHE_HD void square_product(std::size_t k, const T* a, const T* b, T* c) {
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j) {
      T acc = lift<T>(0.0);
      for (std::size_t p = 0; p < k; ++p) acc = acc + a[i * k + p] * b[p * k + j];
      c[i * k + j] = acc;
    }
}
/// e^A of a general K × K matrix a into out, by scaling and squaring (Higham, "The scaling and
/// squaring method for the matrix exponential revisited", SIAM J. Matrix Anal. Appl. 26, 2005,
/// with a Taylor polynomial as Al-Mohy and Higham's later methods): X = A/2ˢ with s the least
/// integer ≥ 0 for which ‖X‖₁ ≤ ½ (the scale a power of two: exact), e^X by the degree-14
/// Taylor polynomial in Horner form (truncation ≤ 0.5¹⁵/15! ≈ 2.3e-17), then s squarings. Each
/// lane of a SIMD batch takes its own s; the loops run to the lanes' largest and leave a lane
/// unchanged past its own (selects), so a lane's result is the one computed alone. work: 2K²
/// values. A non-finite A gives a non-finite result.
template <class T>
TYCHE_HD void matrix_exp_into(std::size_t k, const T* a, T* out, T* work) {
  T* x = work;
  T* tmp = work + k * k;
  // ‖A‖₁ · 2⁻⁶⁴ (a power of two: exact), so that the column sums of finite entries cannot
  // overflow; the threshold ½ scaled alike.
  const T shrink = lift<T>(5.421010862427522e-20);  // 2⁻⁶⁴
  T norm = lift<T>(0.0);
  for (std::size_t j = 0; j < k; ++j) {
    T col = lift<T>(0.0);
    for (std::size_t i = 0; i < k; ++i) col = col + math::abs(a[i * k + j]) * shrink;
    norm = math::max(norm, col);
  }
  const double half = 0.5 * 5.421010862427522e-20;
  T scale = lift<T>(1.0), squarings = lift<T>(0.0);
  for (int it = 0; it < 1100 && math::lane_max(norm) > half; ++it) {  // a finite norm needs ≤ 1,089
    const auto halve = norm > lift<T>(half);
    norm = math::select(halve, norm * lift<T>(0.5), norm);
    scale = math::select(halve, scale * lift<T>(0.5), scale);
    squarings = math::select(halve, squarings + lift<T>(1.0), squarings);
  }
  for (std::size_t e = 0; e < k * k; ++e) x[e] = a[e] * scale;
  for (std::size_t e = 0; e < k * k; ++e) out[e] = lift<T>(0.0);
  for (std::size_t i = 0; i < k; ++i) out[i * k + i] = lift<T>(1.0);
  for (int j = 14; j >= 1; --j) {  // E ← I + X E / j
    square_product(k, x, out, tmp);
    const T inv_j = lift<T>(1.0 / j);
    for (std::size_t e = 0; e < k * k; ++e) out[e] = tmp[e] * inv_j;
    for (std::size_t i = 0; i < k; ++i) out[i * k + i] = out[i * k + i] + lift<T>(1.0);
  }
  const double rounds = math::lane_max(squarings);
  for (int r = 0; r < rounds; ++r) {
    square_product(k, out, out, tmp);
    const auto more = lift<T>(double(r)) < squarings;
    for (std::size_t e = 0; e < k * k; ++e) out[e] = math::select(more, tmp[e], out[e]);
  }
}
/// The eigen-decomposition A = V diag(λ) Vᵀ of a symmetric K × K matrix a (its lower triangle
/// read) by the cyclic Jacobi method (Golub and Van Loan, "Matrix Computations", §8.5): sweeps of
/// plane rotations, each zeroing one off-diagonal entry, until the off-diagonal part's squared
/// Frobenius norm is ≤ 1e-30 times the whole's (at most 60 sweeps; quadratic convergence makes it
/// 5–10), then the eigenvalues sorted ascending with their vectors (a network of compare-exchanges).
/// Each lane of a SIMD batch converges on its own: a converged lane's rotations are the identity
/// (t = 0: exact no-ops), and the sweeps run to the slowest lane, so a lane's result is the one
/// computed alone. work: K² (the rotated matrix); values: K; vectors: K², row major, column m the
/// unit eigenvector of values[m]. A non-finite entry makes everything NaN.
template <class T>
TYCHE_HD void jacobi_eigen_sym(std::size_t k, const T* a, T* work, T* values, T* vectors) {
  // The matrix divided by its largest magnitude (1 for a zero matrix), so that the squared norms
  // of the stopping test neither overflow nor underflow; the eigenvalues scaled back at the end.
  T big = lift<T>(0.0);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j <= i; ++j) big = math::max(big, math::abs(a[i * k + j]));
  big = math::select(big == lift<T>(0.0), lift<T>(1.0), big);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j) {
      work[i * k + j] = (i >= j ? a[i * k + j] : a[j * k + i]) / big;
      vectors[i * k + j] = lift<T>(i == j ? 1.0 : 0.0);
    }
  T total = lift<T>(0.0);
  for (std::size_t e = 0; e < k * k; ++e) total = total + work[e] * work[e];
  for (int sweep = 0; sweep < 60; ++sweep) {
    T off = lift<T>(0.0);
    for (std::size_t p = 0; p < k; ++p)
      for (std::size_t q = p + 1; q < k; ++q) off = off + work[p * k + q] * work[p * k + q];
    const auto done = off <= lift<T>(1e-30) * total;
    if (!(math::lane_max(math::select(done, lift<T>(0.0), lift<T>(1.0))) > 0.0)) break;
    for (std::size_t p = 0; p < k; ++p)
      for (std::size_t q = p + 1; q < k; ++q) {
        const T apq = math::select(done, lift<T>(0.0), work[p * k + q]);  // a converged lane: no rotation
        const auto rotate = apq != lift<T>(0.0);
        const T theta = (work[q * k + q] - work[p * k + p]) / (lift<T>(2.0) * math::select(rotate, apq, lift<T>(1.0)));
        const T at = math::abs(theta);
        // t = sgn(θ)/(|θ| + √(θ² + 1)): the smaller root of t² + 2θt − 1 = 0; 1/(2θ) where θ² overflows.
        const T mag = math::select(at > lift<T>(1e150), lift<T>(0.5) / math::select(at > lift<T>(1e150), at, lift<T>(1.0)),
                                   lift<T>(1.0) / (at + math::sqrt(theta * theta + lift<T>(1.0))));
        const T t = math::select(rotate, math::select(theta < lift<T>(0.0), -mag, mag), lift<T>(0.0));
        const T c = lift<T>(1.0) / math::sqrt(t * t + lift<T>(1.0));
        const T sn = t * c;
        for (std::size_t r = 0; r < k; ++r) {  // columns p, q of A J and of V J
          const T arp = work[r * k + p], arq = work[r * k + q];
          work[r * k + p] = c * arp - sn * arq;
          work[r * k + q] = sn * arp + c * arq;
          const T vrp = vectors[r * k + p], vrq = vectors[r * k + q];
          vectors[r * k + p] = c * vrp - sn * vrq;
          vectors[r * k + q] = sn * vrp + c * vrq;
        }
        for (std::size_t r = 0; r < k; ++r) {  // rows p, q of Jᵀ (A J)
          const T apr = work[p * k + r], aqr = work[q * k + r];
          work[p * k + r] = c * apr - sn * aqr;
          work[q * k + r] = sn * apr + c * aqr;
        }
      }
  }
  for (std::size_t i = 0; i < k; ++i) values[i] = work[i * k + i] * big;
  for (std::size_t i = 0; i < k; ++i)  // ascending: a bubble network of compare-exchanges
    for (std::size_t j = 0; j + 1 + i < k; ++j) {
      const auto swap = values[j] > values[j + 1];
      const T lo = values[j];
      values[j] = math::select(swap, values[j + 1], lo);
      values[j + 1] = math::select(swap, lo, values[j + 1]);
      swap_columns_where(swap, k, k, vectors, j);
    }
}
}  // namespace detail

namespace ops {

/// qₙ = Σⱼ zₙⱼ² for the m rows of z (m·K values, row n at n·K). Reverse: z̄ₙⱼ += 2 zₙⱼ q̄ₙ.
struct row_sums_of_squares_map {
  static constexpr const char* name = "row_sums_of_squares";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t k = 1;
  template <class Z>
  static constexpr std::size_t extent = dynamic_extent;
  bool operator==(const row_sums_of_squares_map&) const = default;
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t*) const {
    for (std::size_t n = 0; n < m; ++n) {
      T acc = lift<T>(0.0);
      for (std::size_t j = 0; j < k; ++j) acc = acc + in[0][n * k + j] * in[0][n * k + j];
      out[n] = acc;
    }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj) const {
    for (std::size_t n = 0; n < m; ++n) {
      const T g = lift<T>(2.0) * adj[n];
      for (std::size_t j = 0; j < k; ++j) in_adj[0][n * k + j] += g * in[0][n * k + j];
    }
  }
};

/// The log density of a K × K symmetric positive-definite W given ν and S (operands ν: one
/// value; W, S: K² values each, lower triangles read), with log Γ_K(a) = K(K−1)/4 log π +
/// Σ_{j=0..K−1} log Γ(a − j/2) the multivariate log-gamma function (Stan Functions Reference,
/// "Wishart distribution", "Inverse Wishart distribution"):
///   Wishart:          (ν − K − 1)/2 log|W| − ½ tr(S⁻¹W) − (νK/2) log 2 − (ν/2) log|S| − log Γ_K(ν/2),
///   inverse Wishart:  (ν/2) log|S| − (νK/2) log 2 − log Γ_K(ν/2) − (ν + K + 1)/2 log|W| − ½ tr(S W⁻¹).
/// Forward: the Cholesky factors of W and S (log-determinants 2 Σ log Lᵢᵢ), the inverses
/// L⁻ᵀL⁻¹, the trace Σᵢⱼ (S⁻¹)ᵢⱼ Wᵢⱼ (or Σ Sᵢⱼ (W⁻¹)ᵢⱼ). A W or S that is not positive definite
/// gives NaN (a rejected point). Reverse, with G the gradient in the symmetric matrix (from
/// d log|M| = tr(M⁻¹ dM), d tr(S⁻¹W) = tr(S⁻¹ dW) − tr(S⁻¹ W S⁻¹ dS), d M⁻¹ = −M⁻¹ dM M⁻¹):
///   Wishart:          G_W = (ν − K − 1)/2 W⁻¹ − ½ S⁻¹,     G_S = −(ν/2) S⁻¹ + ½ S⁻¹ W S⁻¹,
///   inverse Wishart:  G_W = −(ν + K + 1)/2 W⁻¹ + ½ W⁻¹ S W⁻¹,   G_S = (ν/2) S⁻¹ − ½ W⁻¹,
///   ∂/∂ν = ½ log|W| − (K/2) log 2 − ½ log|S| − ½ Σⱼ ψ(ν/2 − j/2)  (inverse: ½ log|S| − … − ½ log|W|),
/// and the lower-triangle entry (i, j) of a matrix takes Gᵢᵢ on the diagonal, 2 Gᵢⱼ below it
/// (it stands for both (i, j) and (j, i)). Scratch: the two factors, the two inverses and one
/// K² work matrix, then log|W| and log|S|: 5K² + 2. O(K³) each way.
template <bool Inverse>
struct wishart_map {
  static constexpr const char* name = Inverse ? "inv_wishart" : "wishart";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t k = 1;
  template <class Nu, class W, class S>
  static constexpr std::size_t extent = 1;
  bool operator==(const wishart_map&) const = default;
  std::size_t scratch_size(std::size_t, const std::size_t*) const { return 5 * k * k + 2; }

  template <class T>
  TYCHE_HD T log_multi_gamma_half(const T& nu) const {  // log Γ_K(ν/2)
    T acc = lift<T>(0.25 * double(k) * (double(k) - 1.0) * 1.14472988584940017414);
    for (std::size_t j = 0; j < k; ++j) acc = acc + math::lgamma(lift<T>(0.5) * nu - lift<T>(0.5 * double(j)));
    return acc;
  }

  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*, T* scratch) const {
    const std::size_t kk = k * k;
    const T nu = in[0][0];
    const T* w = in[1];
    const T* s = in[2];
    T* lw = scratch;
    T* ls = scratch + kk;
    T* wi = scratch + 2 * kk;
    T* si = scratch + 3 * kk;
    T* work = scratch + 4 * kk;
    detail::cholesky_forward(k, w, lw);
    detail::cholesky_forward(k, s, ls);
    T log_det_w = lift<T>(0.0), log_det_s = lift<T>(0.0);
    for (std::size_t i = 0; i < k; ++i) {
      log_det_w = log_det_w + lift<T>(2.0) * math::log(lw[i * k + i]);
      log_det_s = log_det_s + lift<T>(2.0) * math::log(ls[i * k + i]);
    }
    scratch[5 * kk] = log_det_w;
    scratch[5 * kk + 1] = log_det_s;
    detail::inverse_from_cholesky(k, lw, work, wi);
    detail::inverse_from_cholesky(k, ls, work, si);
    T trace = lift<T>(0.0);  // tr(S⁻¹W), or tr(S W⁻¹)
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j)
        trace = trace + (Inverse ? wi[i * k + j] * detail::symmetric_at(s, k, i, j)
                                 : si[i * k + j] * detail::symmetric_at(w, k, i, j));
    const T half = lift<T>(0.5);
    const T common = -half * nu * lift<T>(double(k) * 0.69314718055994530942) - log_multi_gamma_half(nu) - half * trace;
    T value;
    if constexpr (Inverse)
      value = common + half * nu * log_det_s - half * (nu + lift<T>(double(k) + 1.0)) * log_det_w;
    else
      value = common + half * (nu - lift<T>(double(k) + 1.0)) * log_det_w - half * nu * log_det_s;
    // ν ≤ K − 1 (a parameter ν that wandered there) is outside the family: NaN, not the finite
    // value lgamma gives at negative non-integers.
    out[0] = math::select(nu > lift<T>(double(k) - 1.0), value, lift<T>(NAN));
  }

  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj, T* scratch) const {
    const std::size_t kk = k * k;
    const T g = adj[0];
    const T nu = in[0][0];
    const T* w = in[1];
    const T* s = in[2];
    const T* wi = scratch + 2 * kk;
    const T* si = scratch + 3 * kk;
    T* work = scratch + 4 * kk;
    const T log_det_w = scratch[5 * kk], log_det_s = scratch[5 * kk + 1];
    const T half = lift<T>(0.5);
    // ν.
    T psi = lift<T>(0.0);
    for (std::size_t j = 0; j < k; ++j) psi = psi + math::digamma(half * nu - lift<T>(0.5 * double(j)));
    const T dnu_common = -lift<T>(0.5 * double(k) * 0.69314718055994530942) - half * psi;
    in_adj[0][0] += g * (Inverse ? dnu_common + half * log_det_s - half * log_det_w
                                 : dnu_common + half * log_det_w - half * log_det_s);
    // The sandwich A M A (A = S⁻¹, M = W for Wishart; A = W⁻¹, M = S for the inverse) into
    // work, then the lower-triangle adjoints of W and S.
    const T* a = Inverse ? wi : si;
    const T* mid = Inverse ? s : w;
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) {
        T acc = lift<T>(0.0);
        for (std::size_t p = 0; p < k; ++p) acc = acc + a[i * k + p] * detail::symmetric_at(mid, k, p, j);
        work[i * k + j] = acc;  // A M
      }
    const T cw = Inverse ? -half * (nu + lift<T>(double(k) + 1.0)) : half * (nu - lift<T>(double(k) + 1.0));
    const T cs = Inverse ? half * nu : -half * nu;
    for (std::size_t i = 0; i < k; ++i) {
      for (std::size_t j = 0; j <= i; ++j) {
        T sandwich = lift<T>(0.0);  // (A M A)ᵢⱼ
        for (std::size_t p = 0; p < k; ++p) sandwich = sandwich + work[i * k + p] * a[p * k + j];
        T gw, gs;
        if constexpr (Inverse) {
          gw = cw * wi[i * k + j] + half * sandwich;
          gs = cs * si[i * k + j] - half * wi[i * k + j];
        } else {
          gw = cw * wi[i * k + j] - half * si[i * k + j];
          gs = cs * si[i * k + j] + half * sandwich;
        }
        const T weight = lift<T>(i == j ? 1.0 : 2.0) * g;
        in_adj[1][i * k + j] += weight * gw;
        in_adj[2][i * k + j] += weight * gs;
      }
    }
  }
};

/// log WishartCholesky(L_W | ν, L_S) (Inverse = false) or log InvWishartCholesky(L_W | ν, L_S)
/// (Inverse = true): Stan's densities of the lower Cholesky factor L_W of W = L_W L_Wᵀ, where
/// W ~ Wishart(ν, L_S L_Sᵀ) (inverse Wishart), times the Jacobian of W ↦ L_W,
/// |J| = 2^K Π_{i=1..K} L_W,ii^(K−i+1) (Stan Functions Reference, "Wishart distribution, Cholesky
/// parameterization"). With the determinants and traces written through the factors
/// (log|W| = 2 Σ log L_W,ii, tr(S⁻¹W) = ‖L_S⁻¹ L_W‖², tr(S W⁻¹) = ‖L_W⁻¹ L_S‖²), and 0-based i:
///   Wishart:  Σᵢ (ν − i − 1) log L_W,ii − ν Σᵢ log L_S,ii − ½ ‖L_S⁻¹ L_W‖² + c(ν),
///   inverse:  −Σᵢ (ν + i + 1) log L_W,ii + ν Σᵢ log L_S,ii − ½ ‖L_W⁻¹ L_S‖² + c(ν),
///   c(ν) = K log 2 − (νK/2) log 2 − log Γ_K(ν/2).
/// Operands ν (one value), L_W and L_S (K² values each, lower triangles read). Write A for the
/// factor inverted (L_S, or L_W for the inverse) and B for the other, M = A⁻¹B (lower
/// triangular): ½‖M‖² has gradient A⁻ᵀM in B and −A⁻ᵀMMᵀ in A (from dM = A⁻¹dB − A⁻¹dA M),
/// both lower triangles, so −½‖M‖² adds −(A⁻ᵀM) to B̄ and (A⁻ᵀM)Mᵀ to Ā, the latter from the
/// lower triangle of A⁻ᵀM only; ∂/∂ν = ±(Σ log L_W,ii − Σ log L_S,ii) − (K/2) log 2 −
/// ½ Σⱼ ψ(ν/2 − j/2). Scratch: A⁻¹, M and A⁻ᵀM (K² each), Σ log L_W,ii and Σ log L_S,ii. O(K³).
template <bool Inverse>
struct wishart_cholesky_map {
  static constexpr const char* name = Inverse ? "inv_wishart_cholesky" : "wishart_cholesky";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t k = 1;
  template <class Nu, class W, class S>
  static constexpr std::size_t extent = 1;
  bool operator==(const wishart_cholesky_map&) const = default;
  std::size_t scratch_size(std::size_t, const std::size_t*) const { return 3 * k * k + 2; }

  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*, T* scratch) const {
    const std::size_t kk = k * k;
    const T nu = in[0][0];
    const T* lw = in[1];
    const T* ls = in[2];
    const T* a = Inverse ? lw : ls;
    const T* b = Inverse ? ls : lw;
    T* ainv = scratch;
    T* m = scratch + kk;
    for (std::size_t j = 0; j < k; ++j) {  // A⁻¹ by forward substitution, column by column
      ainv[j * k + j] = lift<T>(1.0) / a[j * k + j];
      for (std::size_t i = j + 1; i < k; ++i) {
        T acc = lift<T>(0.0);
        for (std::size_t p = j; p < i; ++p) acc = acc + a[i * k + p] * ainv[p * k + j];
        ainv[i * k + j] = -acc / a[i * k + i];
      }
    }
    T q = lift<T>(0.0);
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j <= i; ++j) {
        T acc = lift<T>(0.0);
        for (std::size_t p = j; p <= i; ++p) acc = acc + ainv[i * k + p] * b[p * k + j];
        m[i * k + j] = acc;
        q = q + acc * acc;
      }
    T slw = lift<T>(0.0), sls = lift<T>(0.0), weighted = lift<T>(0.0);  // weighted: Σ (i + 1) log L_W,ii
    for (std::size_t i = 0; i < k; ++i) {
      const T l = math::log(lw[i * k + i]);
      slw = slw + l;
      weighted = weighted + lift<T>(double(i) + 1.0) * l;
      sls = sls + math::log(ls[i * k + i]);
    }
    scratch[3 * kk] = slw;
    scratch[3 * kk + 1] = sls;
    const T half = lift<T>(0.5);
    T lmg = lift<T>(0.25 * double(k) * (double(k) - 1.0) * 1.14472988584940017414);  // log Γ_K(ν/2)
    for (std::size_t j = 0; j < k; ++j) lmg = lmg + math::lgamma(half * nu - lift<T>(0.5 * double(j)));
    const T c = lift<T>(double(k) * 0.69314718055994530942) - half * nu * lift<T>(double(k) * 0.69314718055994530942) - lmg;
    const T value = Inverse ? c - nu * slw - weighted + nu * sls - half * q : c + nu * slw - weighted - nu * sls - half * q;
    out[0] = math::select(nu > lift<T>(double(k) - 1.0), value, lift<T>(NAN));  // ν ≤ K − 1: outside the family
  }

  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj, T* scratch) const {
    const std::size_t kk = k * k;
    const T g = adj[0];
    const T nu = in[0][0];
    const T* lw = in[1];
    const T* ls = in[2];
    const T* ainv = scratch;
    const T* m = scratch + kk;
    T* am = scratch + 2 * kk;  // A⁻ᵀM, lower triangle
    const T slw = scratch[3 * kk], sls = scratch[3 * kk + 1];
    const T half = lift<T>(0.5);
    T psi = lift<T>(0.0);
    for (std::size_t j = 0; j < k; ++j) psi = psi + math::digamma(half * nu - lift<T>(0.5 * double(j)));
    const T dnu = -lift<T>(0.5 * double(k) * 0.69314718055994530942) - half * psi;
    in_adj[0][0] += g * (Inverse ? dnu + sls - slw : dnu + slw - sls);
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j <= i; ++j) {
        T acc = lift<T>(0.0);  // Σ_{p ≥ i} (A⁻¹)ₚᵢ Mₚⱼ
        for (std::size_t p = i; p < k; ++p) acc = acc + ainv[p * k + i] * m[p * k + j];
        am[i * k + j] = acc;
      }
    T* a_adj = Inverse ? in_adj[1] : in_adj[2];
    T* b_adj = Inverse ? in_adj[2] : in_adj[1];
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j <= i; ++j) {
        T amm = lift<T>(0.0);  // (A⁻ᵀM Mᵀ)ᵢⱼ = Σ_{p ≤ j} (A⁻ᵀM)ᵢₚ Mⱼₚ
        for (std::size_t p = 0; p <= j; ++p) amm = amm + am[i * k + p] * m[j * k + p];
        a_adj[i * k + j] += g * amm;
        b_adj[i * k + j] += -(g * am[i * k + j]);
      }
    for (std::size_t i = 0; i < k; ++i) {
      const T cw = Inverse ? -(nu + lift<T>(double(i) + 1.0)) : nu - lift<T>(double(i) + 1.0);
      in_adj[1][i * k + i] += g * cw / lw[i * k + i];
      in_adj[2][i * k + i] += g * (Inverse ? nu : -nu) / ls[i * k + i];
    }
  }
};

/// A⁻¹ of a symmetric positive-definite K × K matrix A (K² values; its lower triangle read as the
/// symmetric matrix it defines), all K² entries: through the Cholesky factor (inverse_from_cholesky);
/// NaN where A is not positive definite. Reverse: with G = −A⁻¹ adj A⁻¹, the lower-triangle entry
/// (i, j) of A takes Gᵢⱼ + Gⱼᵢ (it stands for both), the diagonal Gᵢᵢ. Scratch: L, L⁻¹ and one
/// K² work matrix. O(K³) each way.
struct inverse_spd_map {
  static constexpr const char* name = "inverse_spd";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t k = 1;
  template <class A>
  static constexpr std::size_t extent = extent_v<A>;
  bool operator==(const inverse_spd_map&) const = default;
  std::size_t scratch_size(std::size_t, const std::size_t*) const { return 3 * k * k; }
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*, T* scratch) const {
    detail::cholesky_forward(k, in[0], scratch);
    detail::inverse_from_cholesky(k, scratch, scratch + k * k, out);
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T* out, const T* adj, const T* const*, const std::size_t*,
                        T* const* in_adj, T* scratch) const {
    T* work = scratch + 2 * k * k;  // A⁻¹ adj
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) {
        T acc = lift<T>(0.0);
        for (std::size_t p = 0; p < k; ++p) acc = acc + out[i * k + p] * adj[p * k + j];
        work[i * k + j] = acc;
      }
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j <= i; ++j) {
        T gij = lift<T>(0.0), gji = lift<T>(0.0);  // (A⁻¹ adj A⁻¹)ᵢⱼ and ⱼᵢ
        for (std::size_t p = 0; p < k; ++p) {
          gij = gij + work[i * k + p] * out[p * k + j];
          gji = gji + work[j * k + p] * out[p * k + i];
        }
        in_adj[0][i * k + j] += i == j ? -gij : -(gij + gji);
      }
  }
};

/// A⁻¹ of a general K × K matrix (K² values, row major: all read), by Gauss–Jordan elimination
/// with partial pivoting per lane (detail::pivoted_elimination): Stan's inverse. A singular A
/// gives non-finite entries (a rejected point). Reverse: with B = A⁻¹, Ā −= Bᵀ adj Bᵀ. O(K³)
/// each way.
struct inverse_map {
  static constexpr const char* name = "inverse";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t k = 1;
  template <class A>
  static constexpr std::size_t extent = extent_v<A>;
  bool operator==(const inverse_map&) const = default;
  std::size_t scratch_size(std::size_t, const std::size_t*) const { return k * k; }
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*, T* scratch) const {
    for (std::size_t e = 0; e < k * k; ++e) scratch[e] = in[0][e];
    T log_abs_det, sign;
    detail::pivoted_elimination(k, scratch, out, log_abs_det, sign);
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T* out, const T* adj, const T* const*, const std::size_t*,
                        T* const* in_adj, T* scratch) const {
    for (std::size_t i = 0; i < k; ++i)  // W = Bᵀ adj
      for (std::size_t q = 0; q < k; ++q) {
        T acc = lift<T>(0.0);
        for (std::size_t p = 0; p < k; ++p) acc = acc + out[p * k + i] * adj[p * k + q];
        scratch[i * k + q] = acc;
      }
    for (std::size_t i = 0; i < k; ++i)  // Ā −= W Bᵀ
      for (std::size_t j = 0; j < k; ++j) {
        T acc = lift<T>(0.0);
        for (std::size_t q = 0; q < k; ++q) acc = acc + scratch[i * k + q] * out[j * k + q];
        in_adj[0][i * k + j] -= acc;
      }
  }
};

/// X = A⁻¹ B (Stan's mdivide_left(A, B), `A \ B`; B K × J) or, Right, X = B A⁻¹ (Stan's
/// mdivide_right(B, A), `B / A`; B J × K) for a general K × K matrix A (all K² entries read, row
/// major), by elimination with partial pivoting per lane (detail::pivoted_solve; Right as
/// Xᵀ = A⁻ᵀ Bᵀ), the factors and the permutation kept in scratch. A singular A gives non-finite
/// values. Reverse, with G the solve of the adjoint against the transpose from those factors
/// (detail::lu_transposed_solve; left: G = A⁻ᵀ X̄, B̄ += G, Ā −= G Xᵀ; right: G = A⁻¹ X̄ᵀ,
/// B̄ += Gᵀ, Ā −= Xᵀ Gᵀ). O(K³/3 + K² J) forward, O(K² J) reverse (until stop 90 a second
/// elimination), against the explicit inverse's K³ + K² J forward and 2K³ + 2K² J reverse;
/// backward stable, as Stan's LU solve.
template <bool Right>
struct lu_solve_map {
  static constexpr const char* name = Right ? "mdivide_right" : "mdivide_left";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t k = 1;
  std::size_t j = 1;  // B's columns (left) or rows (right)
  template <class A, class B>
  static constexpr std::size_t extent = extent_v<B>;
  bool operator==(const lu_solve_map&) const = default;
  // The factors (K²), the permutation (K), G (K·J; the forward pass's Xᵀ for Right), W (K·J).
  std::size_t scratch_size(std::size_t, const std::size_t*) const { return k * k + k + 2 * k * j; }
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*, T* scratch) const {
    T* perm = scratch + k * k;
    if constexpr (Right) {
      T* xt = perm + k;  // Xᵀ, K × J
      detail::pivoted_solve(k, j, in[0], true, in[1], true, scratch, perm, xt);
      for (std::size_t r = 0; r < k; ++r)
        for (std::size_t q = 0; q < j; ++q) out[q * k + r] = xt[r * j + q];
    } else {
      detail::pivoted_solve(k, j, in[0], false, in[1], false, scratch, perm, out);
    }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T* out, const T* adj, const T* const*, const std::size_t*,
                        T* const* in_adj, T* scratch) const {
    const T* perm = scratch + k * k;
    T* g = scratch + k * k + k;  // K × J
    detail::lu_transposed_solve(k, j, scratch, perm, adj, Right, g + k * j, g);
    for (std::size_t r = 0; r < k; ++r)
      for (std::size_t q = 0; q < j; ++q) in_adj[1][Right ? q * k + r : r * j + q] += g[r * j + q];
    for (std::size_t a = 0; a < k; ++a)
      for (std::size_t b = 0; b < k; ++b) {
        T acc = lift<T>(0.0);
        for (std::size_t q = 0; q < j; ++q)
          acc = acc + (Right ? out[q * k + a] * g[b * j + q] : g[a * j + q] * out[b * j + q]);
        in_adj[0][a * k + b] -= acc;
      }
  }
};

/// log |det A| (Log: Stan's log_determinant; −∞ for a singular A) or det A (Stan's determinant)
/// of a general K × K matrix (K² values, row major), one value, by elimination with partial
/// pivoting per lane. Reverse: Ā += adj · A⁻ᵀ (Log) or adj · det A · A⁻ᵀ, A⁻¹ recomputed by
/// Gauss–Jordan. O(K³) each way.
template <bool Log>
struct determinant_map {
  static constexpr const char* name = Log ? "log_determinant" : "determinant";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t k = 1;
  template <class A>
  static constexpr std::size_t extent = 1;
  bool operator==(const determinant_map&) const = default;
  std::size_t scratch_size(std::size_t, const std::size_t*) const { return 2 * k * k; }
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*, T* scratch) const {
    for (std::size_t e = 0; e < k * k; ++e) scratch[e] = in[0][e];
    T log_abs_det, sign;
    detail::pivoted_elimination(k, scratch, static_cast<T*>(nullptr), log_abs_det, sign);
    if constexpr (Log) out[0] = log_abs_det;
    else out[0] = sign * math::exp(log_abs_det);
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T* out, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj, T* scratch) const {
    for (std::size_t e = 0; e < k * k; ++e) scratch[e] = in[0][e];
    T* inv = scratch + k * k;
    T log_abs_det, sign;
    detail::pivoted_elimination(k, scratch, inv, log_abs_det, sign);
    T g = adj[0];
    if constexpr (!Log) g = g * out[0];
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) in_adj[0][i * k + j] += g * inv[j * k + i];
  }
};

/// e^A of a general K × K matrix (K² values, row major), by scaling and squaring
/// (detail::matrix_exp_into): Stan's matrix_exp. Reverse: Ā += L(Aᵀ, adj), the Fréchet derivative
/// of the exponential at Aᵀ in the direction adj (Giles, "Collected matrix derivative results for
/// forward and reverse mode algorithmic differentiation", 2008), read from the upper right block
/// of e^M, M = [[Aᵀ, adj], [0, Aᵀ]] (Higham 2008, "Functions of Matrices", Theorem 3.6): O(8 K³)
/// and the squarings of M's norm. Scratch: 16 K².
struct matrix_exp_map {
  static constexpr const char* name = "matrix_exp";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t k = 1;
  template <class A>
  static constexpr std::size_t extent = extent_v<A>;
  bool operator==(const matrix_exp_map&) const = default;
  std::size_t scratch_size(std::size_t, const std::size_t*) const { return 16 * k * k; }
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*, T* scratch) const {
    detail::matrix_exp_into(k, in[0], out, scratch);
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj, T* scratch) const {
    const std::size_t k2 = 2 * k;
    T* m = scratch;               // M, 4K²
    T* em = scratch + k2 * k2;    // e^M, 4K²
    T* work = em + k2 * k2;       // 8K²
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) {
        m[i * k2 + j] = in[0][j * k + i];
        m[(k + i) * k2 + k + j] = in[0][j * k + i];
        m[i * k2 + k + j] = adj[i * k + j];
        m[(k + i) * k2 + j] = lift<T>(0.0);
      }
    detail::matrix_exp_into(k2, m, em, work);
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) in_adj[0][i * k + j] += em[i * k2 + k + j];
  }
};

/// Aⁿ of a general K × K matrix (K² values, row major), n ≥ 0 an integer (a member; A⁰ = I):
/// Stan's matrix_power, by n − 1 products (the powers A⁰ … Aⁿ⁻¹ kept in scratch for the
/// reverse pass). Reverse: Ā += Σⱼ (Aʲ)ᵀ adj (Aⁿ⁻¹⁻ʲ)ᵀ, j = 0 … n − 1. O(n K³) each way.
struct matrix_power_map {
  static constexpr const char* name = "matrix_power";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t k = 1;
  std::size_t n = 1;
  template <class A>
  static constexpr std::size_t extent = extent_v<A>;
  bool operator==(const matrix_power_map&) const = default;
  std::size_t scratch_size(std::size_t, const std::size_t*) const { return (n + 1) * k * k; }
  /// scratch: A⁰ … Aⁿ⁻¹ (n matrices); out: Aⁿ.
  template <class T>
  TYCHE_HD void powers(const T* a, T* out, T* scratch) const {
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) scratch[i * k + j] = lift<T>(i == j ? 1.0 : 0.0);
    for (std::size_t p = 1; p < n; ++p) detail::square_product(k, scratch + (p - 1) * k * k, a, scratch + p * k * k);
    if (n == 0)
      for (std::size_t e = 0; e < k * k; ++e) out[e] = scratch[e];
    else
      detail::square_product(k, scratch + (n - 1) * k * k, a, out);
  }
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*, T* scratch) const {
    powers(in[0], out, scratch);
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj, T* scratch) const {
    T* w = scratch + n * k * k;  // (Aʲ)ᵀ adj
    powers(in[0], w, scratch);   // the powers again (w receives Aⁿ, overwritten below)
    for (std::size_t j = 0; j < n; ++j) {
      const T* pj = scratch + j * k * k;
      const T* pr = scratch + (n - 1 - j) * k * k;
      for (std::size_t i = 0; i < k; ++i)
        for (std::size_t q = 0; q < k; ++q) {
          T acc = lift<T>(0.0);
          for (std::size_t p = 0; p < k; ++p) acc = acc + pj[p * k + i] * adj[p * k + q];
          w[i * k + q] = acc;
        }
      for (std::size_t i = 0; i < k; ++i)
        for (std::size_t c = 0; c < k; ++c) {
          T acc = lift<T>(0.0);
          for (std::size_t q = 0; q < k; ++q) acc = acc + w[i * k + q] * pr[c * k + q];
          in_adj[0][i * k + c] += acc;
        }
    }
  }
};

/// The eigenvalues λ (ascending; Vectors false, K values) or the unit eigenvectors V (Vectors:
/// K² values row major, column m for λₘ; each column's sign is the algorithm's) of a symmetric
/// K × K matrix (lower triangle read), by detail::jacobi_eigen_sym: Stan's eigenvalues_sym and
/// eigenvectors_sym. λ and V kept in scratch for the reverse pass (Giles 2008): Ā = V (diag(λ̄) +
/// F ∘ (Vᵀ V̄)) Vᵀ, Fₘₙ = 1/(λₙ − λₘ) off the diagonal, folded onto the lower triangle (Āᵢⱼ + Āⱼᵢ
/// below the diagonal). Repeated eigenvalues make the eigenvectors' gradient infinite (their
/// basis is not unique), as in Stan. O(K³) per sweep forward, O(K³) reverse. Scratch: 3K² + K.
template <bool Vectors>
struct eigen_sym_map {
  static constexpr const char* name = Vectors ? "eigenvectors_sym" : "eigenvalues_sym";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t k = 1;
  template <class A>
  static constexpr std::size_t extent = Vectors ? extent_v<A> : dynamic_extent;
  bool operator==(const eigen_sym_map&) const = default;
  std::size_t scratch_size(std::size_t, const std::size_t*) const { return 3 * k * k + k; }
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*, T* scratch) const {
    T* values = scratch + k * k;
    T* vectors = values + k;
    detail::jacobi_eigen_sym(k, in[0], scratch, values, vectors);
    if constexpr (Vectors)
      for (std::size_t e = 0; e < k * k; ++e) out[e] = vectors[e];
    else
      for (std::size_t i = 0; i < k; ++i) out[i] = values[i];
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const*, const std::size_t*,
                        T* const* in_adj, T* scratch) const {
    const T* values = scratch + k * k;
    const T* v = values + k;
    T* h = scratch;                  // the middle factor H, K² (the rotated matrix is not needed)
    T* g = scratch + 2 * k * k + k;  // V H, K²
    for (std::size_t m = 0; m < k; ++m)
      for (std::size_t n = 0; n < k; ++n) {
        if constexpr (Vectors) {
          if (m == n) {
            h[m * k + n] = lift<T>(0.0);
          } else {
            T acc = lift<T>(0.0);  // (Vᵀ V̄)ₘₙ
            for (std::size_t r = 0; r < k; ++r) acc = acc + v[r * k + m] * adj[r * k + n];
            h[m * k + n] = acc / (values[n] - values[m]);
          }
        } else {
          h[m * k + n] = m == n ? adj[m] : lift<T>(0.0);
        }
      }
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t n = 0; n < k; ++n) {
        T acc = lift<T>(0.0);
        for (std::size_t m = 0; m < k; ++m) acc = acc + v[i * k + m] * h[m * k + n];
        g[i * k + n] = acc;
      }
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j <= i; ++j) {
        T gij = lift<T>(0.0), gji = lift<T>(0.0);  // (V H Vᵀ)ᵢⱼ and ⱼᵢ
        for (std::size_t n = 0; n < k; ++n) {
          gij = gij + g[i * k + n] * v[j * k + n];
          gji = gji + g[j * k + n] * v[i * k + n];
        }
        in_adj[0][i * k + j] += i == j ? gij : gij + gji;
      }
  }
};

/// What poisson_binomial_map sums: log P(Y = y), log P(Y ≤ y) or log P(Y > y).
enum class count_event { equal, at_most, above };

/// Σᵢ log P(Y = yᵢ) (Mode equal; at_most: log P(Y ≤ yᵢ), above: log P(Y > yᵢ)) for Y the number
/// of successes in N independent trials with probabilities θ₁ … θ_N (the operand, N values): the
/// Poisson binomial distribution. The counts y (data, viewed; checked 0 … N when made) are a
/// payload. The log probabilities of all N + 1 counts by the recursion over trials in log space,
///   ℓⱼ(k) = log_sum_exp(ℓⱼ₋₁(k) + log(1 − θⱼ), ℓⱼ₋₁(k − 1) + log θⱼ),   ℓ₀(0) = 0,
/// kept (a triangle of (N + 1)(N + 2)/2 values) for the reverse pass, which runs the recursion
/// backwards: with rₐ = e^{ℓⱼ₋₁(a) − ℓⱼ(k)}, ℓ̄ⱼ₋₁(k) += ℓ̄ⱼ(k) r_k (1 − θⱼ), ℓ̄ⱼ₋₁(k − 1) +=
/// ℓ̄ⱼ(k) r_{k−1} θⱼ and θ̄ⱼ += ℓ̄ⱼ(k) (r_{k−1} − r_k). −∞ terms (θⱼ = 0 or 1, a count that cannot
/// happen) are exact. Scratch: the triangle, its adjoints (two rows) and the N + 1 final values'
/// adjoints. O(N²) each way.
template <count_event Mode = count_event::equal>
struct poisson_binomial_map {
  static constexpr const char* name = "poisson_binomial";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = true;
  const double* y = nullptr;  // the counts (null: one count, held in `one`)
  std::size_t n_obs = 0;
  double one = 0;
  template <class Theta>
  static constexpr std::size_t extent = 1;
  bool operator==(const poisson_binomial_map&) const = default;
  TYCHE_HD std::size_t count(std::size_t i) const { return static_cast<std::size_t>(y != nullptr ? y[i] : one); }
  /// f(y, n_obs) (compile/relocate.hpp).
  template <class F>
  void for_each_data_buffer(std::size_t, F&& f) {
    if (y != nullptr) f(y, n_obs);
  }
  static TYCHE_HD std::size_t triangle(std::size_t n) { return (n + 1) * (n + 2) / 2; }
  static TYCHE_HD std::size_t at(std::size_t j, std::size_t k) { return j * (j + 1) / 2 + k; }  // ℓⱼ(k)
  std::size_t scratch_size(std::size_t, const std::size_t* in_n) const {
    return triangle(in_n[0]) + 3 * (in_n[0] + 1);
  }
  /// log(eᵃ + eᵇ), −∞ when both are.
  template <class T>
  static TYCHE_HD T lse(const T& a, const T& b) {
    const T m = math::max(a, b);
    const T lo = math::min(a, b);
    const auto finite = m > lift<T>(-INFINITY);
    const T safe = math::select(finite, m, lift<T>(0.0));
    return math::select(finite, safe + math::log1p(math::exp(lo - safe)), lift<T>(-INFINITY));
  }
  /// eᵃ⁻ᵇ, 0 where b = −∞ (then a is too).
  template <class T>
  static TYCHE_HD T share(const T& a, const T& b) {
    const auto finite = b > lift<T>(-INFINITY);
    return math::select(finite, math::exp(a - math::select(finite, b, lift<T>(0.0))), lift<T>(0.0));
  }
  /// The observation's log probability from the final row ℓ_N (n + 1 values).
  template <class T>
  TYCHE_HD T observed(const T* last, std::size_t n, std::size_t yi) const {
    if constexpr (Mode == count_event::equal) {
      return last[yi];
    } else if constexpr (Mode == count_event::at_most) {
      T acc = last[0];
      for (std::size_t k = 1; k <= yi; ++k) acc = lse(acc, last[k]);
      return acc;
    } else {
      T acc = lift<T>(-INFINITY);
      for (std::size_t k = yi + 1; k <= n; ++k) acc = lse(acc, last[k]);
      return acc;
    }
  }
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t* in_n, T* scratch) const {
    const std::size_t n = in_n[0];
    const T* theta = in[0];
    T* l = scratch;
    l[0] = lift<T>(0.0);
    for (std::size_t j = 1; j <= n; ++j) {
      const T lp = math::log(theta[j - 1]);
      const T lq = math::log1p(-theta[j - 1]);
      l[at(j, 0)] = l[at(j - 1, 0)] + lq;
      for (std::size_t k = 1; k < j; ++k) l[at(j, k)] = lse(l[at(j - 1, k)] + lq, l[at(j - 1, k - 1)] + lp);
      l[at(j, j)] = l[at(j - 1, j - 1)] + lp;
    }
    T acc = lift<T>(0.0);
    for (std::size_t i = 0; i < n_obs; ++i) acc = acc + observed(l + at(n, 0), n, count(i));
    out[0] = acc;
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const* in, const std::size_t* in_n,
                        T* const* in_adj, T* scratch) const {
    const std::size_t n = in_n[0];
    const T* theta = in[0];
    const T* l = scratch;
    T* g = scratch + triangle(n);   // ℓ̄ⱼ (row j)
    T* gp = g + (n + 1);            // ℓ̄ⱼ₋₁
    T* fin = gp + (n + 1);          // the final row's adjoints
    const T* last = l + at(n, 0);
    for (std::size_t k = 0; k <= n; ++k) fin[k] = lift<T>(0.0);
    for (std::size_t i = 0; i < n_obs; ++i) {
      const std::size_t yi = count(i);
      if constexpr (Mode == count_event::equal) {
        fin[yi] = fin[yi] + adj[0];
      } else {
        const T total = observed(last, n, yi);
        const std::size_t from = Mode == count_event::at_most ? 0 : yi + 1;
        const std::size_t to = Mode == count_event::at_most ? yi : n;
        for (std::size_t k = from; k <= to && k <= n; ++k) fin[k] = fin[k] + adj[0] * share(last[k], total);
      }
    }
    for (std::size_t k = 0; k <= n; ++k) g[k] = fin[k];
    for (std::size_t j = n; j >= 1; --j) {
      // With rₐ = e^{ℓⱼ₋₁(a) − ℓⱼ(k)}: ℓⱼ(k) takes r_k (1 − θⱼ) + r_{k−1} θⱼ of its probability from
      // the two counts before, and ∂ℓⱼ(k)/∂θⱼ = r_{k−1} − r_k (no division by θⱼ: exact at 0 and 1).
      const T th = theta[j - 1];
      const T q = lift<T>(1.0) - th;
      for (std::size_t k = 0; k < j; ++k) gp[k] = lift<T>(0.0);
      T bar = lift<T>(0.0);
      for (std::size_t k = 0; k <= j; ++k) {
        const T here = l[at(j, k)];
        const T r_same = k < j ? share(l[at(j - 1, k)], here) : lift<T>(0.0);
        const T r_below = k > 0 ? share(l[at(j - 1, k - 1)], here) : lift<T>(0.0);
        if (k < j) gp[k] = gp[k] + g[k] * r_same * q;
        if (k > 0) gp[k - 1] = gp[k - 1] + g[k] * r_below * th;
        bar = bar + g[k] * (r_below - r_same);
      }
      in_adj[0][j - 1] += bar;
      for (std::size_t k = 0; k < j; ++k) g[k] = gp[k];
    }
  }
};

/// Q = Σₙ rₙᵀ Ω rₙ with rₙ = yₙ − μₙ, over the N rows of y (operands Ω: K² values, its lower
/// triangle read as the symmetric matrix it defines; y: N·K values, row n at n·K; μ: one value,
/// K values (every row) or N·K). One value: multi_normal_prec's quadratic form, O(N K²) each way
/// without a factorisation. Reverse: ȳₙ += 2 Q̄ (Ω rₙ), μ̄ₙ −= 2 Q̄ (Ω rₙ), and the lower-triangle
/// entry Ω̄ᵢᵢ += Q̄ Σₙ rₙᵢ², Ω̄ᵢⱼ += 2 Q̄ Σₙ rₙᵢ rₙⱼ (j < i: it stands for (i, j) and (j, i)).
/// Scratch: rₙ (K values).
struct precision_quadratic_map {
  static constexpr const char* name = "precision_quadratic";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t k = 1;
  template <class Omega, class Y, class Mu>
  static constexpr std::size_t extent = 1;
  bool operator==(const precision_quadratic_map&) const = default;
  std::size_t scratch_size(std::size_t, const std::size_t*) const { return k; }
  TYCHE_HD std::size_t index(std::size_t len, std::size_t n, std::size_t i) const {
    return len == 1 ? 0 : (len == k ? i : n * k + i);
  }
  template <class T>
  TYCHE_HD void residual(std::size_t n, const T* const* in, const std::size_t* in_n, T* r) const {
    for (std::size_t i = 0; i < k; ++i) r[i] = in[1][n * k + i] - in[2][index(in_n[2], n, i)];
  }
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t* in_n, T* r) const {
    const T* om = in[0];
    T acc = lift<T>(0.0);
    for (std::size_t n = 0; n * k < in_n[1]; ++n) {
      residual(n, in, in_n, r);
      for (std::size_t i = 0; i < k; ++i) {
        T below = lift<T>(0.0);
        for (std::size_t j = 0; j < i; ++j) below = below + om[i * k + j] * r[j];
        acc = acc + r[i] * (lift<T>(2.0) * below + om[i * k + i] * r[i]);
      }
    }
    out[0] = acc;
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const* in, const std::size_t* in_n,
                        T* const* in_adj, T* r) const {
    const T* om = in[0];
    const T a = adj[0];
    const T a2 = lift<T>(2.0) * a;
    for (std::size_t n = 0; n * k < in_n[1]; ++n) {
      residual(n, in, in_n, r);
      for (std::size_t i = 0; i < k; ++i) {
        T s = lift<T>(0.0);
        for (std::size_t j = 0; j < k; ++j) s = s + detail::symmetric_at(om, k, i, j) * r[j];
        in_adj[1][n * k + i] += a2 * s;
        in_adj[2][index(in_n[2], n, i)] += -(a2 * s);
        for (std::size_t j = 0; j < i; ++j) in_adj[0][i * k + j] += a2 * r[i] * r[j];
        in_adj[0][i * k + i] += a * r[i] * r[i];
      }
    }
  }
};

}  // namespace ops

}  // namespace tyche
