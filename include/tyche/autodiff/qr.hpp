// tyche/autodiff/qr.hpp — the QR decomposition A = Q R of an R × K matrix and its vector–Jacobian
// products (the op contract: autodiff/vector_ops.hpp; docs/design/vector-ops.md). With k = min(R, K):
//
//   qr_map<qr_part::thin_q>  Q, R × k, orthonormal columns (Stan's qr_thin_Q)
//   qr_map<qr_part::thin_r>  R, k × K, upper trapezoidal (Stan's qr_thin_R)
//   qr_map<qr_part::q>       Q, R × R (Stan's qr_Q: for R > K the thin Q and R − K columns completing it)
//   qr_map<qr_part::r>       R, R × K (Stan's qr_R: the thin R and R − k rows of zeros)
//
// all row major. Forward: Householder reflections (Golub and Van Loan, "Matrix Computations", 4th
// ed., 5.2.2) with Eigen's convention for each reflector (β = −sign(x₀)‖x‖, no reflection where
// the column below the diagonal is zero, as Eigen's makeHouseholder decides it), then, as Stan's
// qr_* do, each row of R whose diagonal entry is negative and the same column of Q negated: R's
// diagonal is non-negative, so for A of full rank the thin factors are unique and agree with
// Stan's to rounding; so do the completing columns of a full Q, which are the reflections'. A is
// divided by its largest magnitude first and each column's norm taken as s·‖x/s‖, s the column's
// largest magnitude (the squares neither overflow nor underflow, also for a column far smaller
// than the others, where Eigen's squares would underflow and Stan's factors differ). No branch
// depends on the values: each lane of a SIMD batch gets the decomposition computed alone.
//
// Reverse, for the thin factors (Walter and Lehmann 2018, "Algorithmic differentiation of linear
// algebra functions with application in optimum experimental design"; Liao, Liu, Wang and Xiang
// 2019, "Differentiable programming tensor networks", their copyltu form), with
// M = R̄ Rᵀ − Qᵀ Q̄ (k × k) and sym(M) the symmetric matrix with M's upper triangle:
//   R ≥ K:                    Ā = (Q̄ + Q sym(M)) R⁻ᵀ
//   R < K, A = [X Y], R = [U V]: Ā_Y = Q V̄;  Ā_X as above with Q̄ + Y V̄ᵀ for Q̄, Ū for R̄, U for R
// (R⁻ᵀ by back substitution; infinite where A is rank deficient — a rejected point, where Q is
// not unique). The completing columns of a full Q of a tall A have no derivative (any orthonormal
// completion is one): qr_Q of such a matrix of parameters is refused when the expression is made
// (operations/matrices.hpp), and their adjoints are not read here. O(R K k) each way.
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/vector_ops.hpp>
#include <tyche/core/expr.hpp>
#include <tyche/scalar/math.hpp>
#include <tyche/scalar/traits.hpp>

#include <cstddef>

namespace tyche {

namespace detail {

/// Householder QR of the rows × cols matrix a (row major) into w (rows · cols): on and above the
/// diagonal R̃ (of a divided by its largest magnitude, returned in big), below it each reflector's
/// essential part (vⱼ = 1 implied); tau: the min(rows, cols) reflectors' τ (H = I − τ v vᵀ;
/// τ = 0: no reflection).
template <class T>
TYCHE_HD void householder_qr(std::size_t rows, std::size_t cols, const T* a, T* w, T* tau, T& big) {
  const std::size_t k = rows < cols ? rows : cols;
  big = lift<T>(0.0);
  for (std::size_t e = 0; e < rows * cols; ++e) big = math::max(big, math::abs(a[e]));
  big = math::select(big == lift<T>(0.0), lift<T>(1.0), big);
  const T inv_big = lift<T>(1.0) / big;
  for (std::size_t e = 0; e < rows * cols; ++e) w[e] = a[e] * inv_big;
  for (std::size_t j = 0; j < k; ++j) {
    const T c0 = w[j * cols + j];
    // The column's norm as s·‖x/s‖, s its largest magnitude from the diagonal down: a column
    // far smaller than the matrix's largest entry does not underflow when squared.
    T s = math::abs(c0);
    for (std::size_t i = j + 1; i < rows; ++i) s = math::max(s, math::abs(w[i * cols + j]));
    const T inv_s = lift<T>(1.0) / math::select(s == lift<T>(0.0), lift<T>(1.0), s);
    T tail = lift<T>(0.0);  // of x/s
    for (std::size_t i = j + 1; i < rows; ++i) tail = tail + (w[i * cols + j] * inv_s) * (w[i * cols + j] * inv_s);
    // Eigen's test (on the scaled tail): a squared norm at most the smallest normal double is no tail.
    const auto none = tail <= lift<T>(2.2250738585072014e-308);
    const T c0s = c0 * inv_s;
    const T norm = s * math::sqrt(c0s * c0s + tail);
    const T beta = math::select(none, c0, math::select(c0 >= lift<T>(0.0), -norm, norm));
    const T scale = lift<T>(1.0) / math::select(none, lift<T>(1.0), c0 - beta);
    for (std::size_t i = j + 1; i < rows; ++i) w[i * cols + j] = math::select(none, lift<T>(0.0), w[i * cols + j] * scale);
    const T t = math::select(none, lift<T>(0.0), (beta - c0) / math::select(none, lift<T>(1.0), beta));
    tau[j] = t;
    w[j * cols + j] = beta;
    for (std::size_t c = j + 1; c < cols; ++c) {  // the columns right of j: H w
      T s = w[j * cols + c];
      for (std::size_t i = j + 1; i < rows; ++i) s = s + w[i * cols + j] * w[i * cols + c];
      s = s * t;
      w[j * cols + c] = w[j * cols + c] - s;
      for (std::size_t i = j + 1; i < rows; ++i) w[i * cols + c] = w[i * cols + c] - s * w[i * cols + j];
    }
  }
}

/// The first m columns of H₀ H₁ … H_{k−1} (rows × m, row major, into q) from householder_qr's w
/// and tau, column j < k negated where R̃ⱼⱼ < 0 (Stan's signs).
template <class T>
TYCHE_HD void householder_q(std::size_t rows, std::size_t cols, const T* w, const T* tau, std::size_t m, T* q) {
  const std::size_t k = rows < cols ? rows : cols;
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t c = 0; c < m; ++c) q[i * m + c] = lift<T>(i == c ? 1.0 : 0.0);
  for (std::size_t jj = k; jj-- > 0;)  // Hⱼ applied last-first; columns c < j are still eⱼ there
    for (std::size_t c = jj; c < m; ++c) {
      T s = q[jj * m + c];
      for (std::size_t i = jj + 1; i < rows; ++i) s = s + w[i * cols + jj] * q[i * m + c];
      s = s * tau[jj];
      q[jj * m + c] = q[jj * m + c] - s;
      for (std::size_t i = jj + 1; i < rows; ++i) q[i * m + c] = q[i * m + c] - s * w[i * cols + jj];
    }
  for (std::size_t j = 0; j < k && j < m; ++j) {
    const auto negative = w[j * cols + j] < lift<T>(0.0);
    for (std::size_t i = 0; i < rows; ++i) q[i * m + j] = math::select(negative, -q[i * m + j], q[i * m + j]);
  }
}

}  // namespace detail

namespace ops {

/// Which factor of A = Q R a qr_map computes.
enum class qr_part { thin_q, thin_r, q, r };

/// qr_thin_Q(A), qr_thin_R(A), qr_Q(A) or qr_R(A) of an R × K matrix (R·K values, row major); see
/// the top of this file. Scratch: the reflections, the thin factors (kept by the forward pass for
/// the reverse pass) and the reverse pass's matrices.
template <qr_part Part>
struct qr_map {
  static constexpr const char* name = Part == qr_part::thin_q   ? "qr_thin_Q"
                                      : Part == qr_part::thin_r ? "qr_thin_R"
                                      : Part == qr_part::q      ? "qr_Q"
                                                                : "qr_R";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t rows = 1;  // R
  std::size_t cols = 1;  // K
  template <class A>
  static constexpr std::size_t extent = dynamic_extent;
  bool operator==(const qr_map&) const = default;
  TYCHE_HD std::size_t thin() const { return rows < cols ? rows : cols; }
  /// The number of values the factor has.
  TYCHE_HD std::size_t size() const {
    switch (Part) {
      case qr_part::thin_q: return rows * thin();
      case qr_part::thin_r: return thin() * cols;
      case qr_part::q: return rows * rows;
      default: return rows * cols;
    }
  }
  // w (R·K; the reverse pass's B), τ (k), Q (R·k), R (k·K), Q̄ (R·k), M (k²).
  std::size_t scratch_size(std::size_t, const std::size_t*) const {
    const std::size_t k = thin();
    return rows * cols + k + 2 * rows * k + k * cols + k * k;
  }
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*, T* scratch) const {
    const std::size_t k = thin(), R = rows, K = cols;
    T* w = scratch;
    T* tau = w + R * K;
    T* q = tau + k;
    T* r = q + R * k;
    T big;
    detail::householder_qr(R, K, in[0], w, tau, big);
    detail::householder_q(R, K, w, tau, k, q);
    for (std::size_t i = 0; i < k; ++i) {
      const T sign = math::select(w[i * K + i] < lift<T>(0.0), -big, big);
      for (std::size_t c = 0; c < K; ++c) r[i * K + c] = c < i ? lift<T>(0.0) : w[i * K + c] * sign;
    }
    if constexpr (Part == qr_part::thin_q) {
      for (std::size_t e = 0; e < R * k; ++e) out[e] = q[e];
    } else if constexpr (Part == qr_part::q) {
      if (R <= K)
        for (std::size_t e = 0; e < R * R; ++e) out[e] = q[e];
      else
        detail::householder_q(R, K, w, tau, R, out);
    } else {
      for (std::size_t e = 0; e < k * K; ++e) out[e] = r[e];
      if constexpr (Part == qr_part::r)
        for (std::size_t e = k * K; e < R * K; ++e) out[e] = lift<T>(0.0);
    }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj, T* scratch) const {
    const std::size_t k = thin(), R = rows, K = cols;
    constexpr bool of_q = Part == qr_part::thin_q || Part == qr_part::q;
    T* b = scratch;  // B = Q̄ + Q sym(M), R × k
    const T* q = scratch + R * K + k;
    const T* r = q + R * k;
    T* qb = scratch + R * K + k + R * k + k * K;  // Q̄ (+ Y V̄ᵀ), R × k
    T* m = qb + R * k;                            // M, k × k
    // Q̄: the adjoint's first k columns (a full Q's are R wide; the completing ones not read).
    const std::size_t q_stride = Part == qr_part::q ? R : k;
    for (std::size_t a = 0; a < R; ++a)
      for (std::size_t l = 0; l < k; ++l) qb[a * k + l] = of_q ? adj[a * q_stride + l] : lift<T>(0.0);
    // Where the part is R, R̄ (k × K) is the adjoint's first k rows (a full R's others are zeros).
    if (!of_q && K > k) {  // wide: Q̄ += Y V̄ᵀ, Ā_Y += Q V̄
      for (std::size_t a = 0; a < R; ++a)
        for (std::size_t l = 0; l < k; ++l) {
          T acc = qb[a * k + l];
          for (std::size_t c = k; c < K; ++c) acc = acc + in[0][a * K + c] * adj[l * K + c];
          qb[a * k + l] = acc;
        }
      for (std::size_t a = 0; a < R; ++a)
        for (std::size_t c = k; c < K; ++c) {
          T acc = lift<T>(0.0);
          for (std::size_t l = 0; l < k; ++l) acc = acc + q[a * k + l] * adj[l * K + c];
          in_adj[0][a * K + c] += acc;
        }
    }
    // M = Ū Uᵀ − Qᵀ Q̄ (U = R's first k columns, upper triangular).
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) {
        T acc = lift<T>(0.0);
        if (!of_q)
          for (std::size_t l = j; l < k; ++l) acc = acc + adj[i * K + l] * r[j * K + l];
        for (std::size_t a = 0; a < R; ++a) acc = acc - q[a * k + i] * qb[a * k + j];
        m[i * k + j] = acc;
      }
    // B = Q̄ + Q sym(M); then each row x of Ā_X from U xᵀ = Bᵀ's column (back substitution).
    for (std::size_t a = 0; a < R; ++a) {
      for (std::size_t l = 0; l < k; ++l) {
        T acc = qb[a * k + l];
        for (std::size_t i = 0; i < k; ++i) acc = acc + q[a * k + i] * (i <= l ? m[i * k + l] : m[l * k + i]);
        b[a * k + l] = acc;
      }
      for (std::size_t i = k; i-- > 0;) {
        T acc = b[a * k + i];
        for (std::size_t j = i + 1; j < k; ++j) acc = acc - r[i * K + j] * b[a * k + j];
        b[a * k + i] = acc / r[i * K + i];
        in_adj[0][a * K + i] += b[a * k + i];
      }
    }
  }
};

}  // namespace ops

}  // namespace tyche
