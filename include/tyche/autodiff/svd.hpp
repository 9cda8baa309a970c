// tyche/autodiff/svd.hpp — the singular value decomposition A = U Σ Vᵀ of an R × K matrix, the
// Moore–Penrose inverse from it (pinv_map, at the end), and their vector–Jacobian products (the
// op contract: autodiff/vector_ops.hpp; docs/design/vector-ops.md):
//
//   svd_map<svd_part::values>  the min(R, K) singular values, descending (Stan's singular_values)
//   svd_map<svd_part::u>       U, R × min(R, K), row major (Stan's svd_U)
//   svd_map<svd_part::v>       V, K × min(R, K), row major (Stan's svd_V)
//
// Forward: one-sided Jacobi (Hestenes 1958; Demmel and Veselić, "Jacobi's method is more accurate
// than QR", 1992) on the tall one of A and Aᵀ: plane rotations of pairs of columns until every
// pair is orthogonal to 1e-15 (float: 1e-6) of the product of their norms; the singular values are the columns'
// norms, U the normalised columns, V the product of the rotations (each pair's Gram matrix from
// the columns divided by their largest entries: no underflow for columns of very different
// scales). Unlike the eigenvalues of AᵀA, a small singular value keeps its absolute accuracy
// (about 1e-16 of the largest, where AᵀA gives 1e-16 σ_max²/σ). Each lane of a SIMD batch rotates only
// where its own pair is not yet orthogonal (elsewhere the rotation is the identity), so a lane's
// result is the one computed alone. The signs of a pair (uⱼ, vⱼ) are the algorithm's (Stan's,
// from Eigen's JacobiSVD, may differ by a sign per pair).
//
// Reverse (Townsend, "Differentiating the singular value decomposition", 2016), with S = diag(σ),
// Fᵢⱼ = 1/(σⱼ² − σᵢ²) (i ≠ j), Fᵢᵢ = 0:
//   σ̄:  Ā = U diag(σ̄) Vᵀ
//   Ū:  Ā = U [F ∘ (UᵀŪ − ŪᵀU)] S Vᵀ + (I − U Uᵀ) Ū S⁻¹ Vᵀ
//   V̄:  Ā = U S [F ∘ (VᵀV̄ − V̄ᵀV)] Vᵀ + U S⁻¹ V̄ᵀ (I − V Vᵀ)
// (infinite where singular values repeat, or for U and V where one is zero: their vectors are not
// unique there, as in Stan). O(R K min(R, K)) per sweep forward, O(R K min(R, K)) reverse.
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

/// The thin SVD of the tall mr × mc matrix M (mr ≥ mc): M = a (R × K = mr × mc, row major) or,
/// transposed, M = aᵀ (a is mc × mr). work: mr·mc; sigma: mc (descending); u: mr·mc (column j the
/// left vector of sigma[j]); v: mc·mc (column j the right vector). A non-finite entry makes
/// everything NaN. A zero singular value has no left vector: its column of u is NaN, or 0 with
/// zero_null (for the singular values' gradient, U diag(σ̄) Vᵀ, where any choice is a subgradient).
template <class T>
TYCHE_HD void jacobi_svd(std::size_t mr, std::size_t mc, const T* a, bool transposed, bool zero_null, T* work,
                         T* sigma, T* u, T* v) {
  // M divided by its largest magnitude (1 for a zero matrix): the squared norms neither overflow
  // nor underflow; σ scaled back at the end.
  T big = lift<T>(0.0);
  for (std::size_t e = 0; e < mr * mc; ++e) big = math::max(big, math::abs(a[e]));
  big = math::select(big == lift<T>(0.0), lift<T>(1.0), big);
  for (std::size_t i = 0; i < mr; ++i)
    for (std::size_t j = 0; j < mc; ++j) work[i * mc + j] = (transposed ? a[j * mr + i] : a[i * mc + j]) / big;
  for (std::size_t i = 0; i < mc; ++i)
    for (std::size_t j = 0; j < mc; ++j) v[i * mc + j] = lift<T>(i == j ? 1.0 : 0.0);
  // Orthogonal enough: 1e-15 in double, 1e-6 in float (whose rounding is about 6e-8: 1e-15 would
  // never be reached, and every sweep would run).
  constexpr double orthogonal = sizeof(element_type_t<T>) < sizeof(double) ? 1e-6 : 1e-15;
  for (int sweep = 0; sweep < 60; ++sweep) {
    T rotated = lift<T>(0.0);  // 1 in the lanes that rotated a pair in this sweep
    for (std::size_t p = 0; p < mc; ++p)
      for (std::size_t q = p + 1; q < mc; ++q) {
        // The pair's Gram matrix [[α, γ], [γ, β]] from the columns each divided by its largest
        // magnitude (sp, sq): α = sp² α', β = sq² β', γ = sp sq γ', so that columns of very
        // different scales neither underflow nor overflow when squared.
        T sp = lift<T>(0.0), sq = lift<T>(0.0);
        for (std::size_t i = 0; i < mr; ++i) {
          sp = math::max(sp, math::abs(work[i * mc + p]));
          sq = math::max(sq, math::abs(work[i * mc + q]));
        }
        sp = math::select(sp == lift<T>(0.0), lift<T>(1.0), sp);
        sq = math::select(sq == lift<T>(0.0), lift<T>(1.0), sq);
        const T ip = lift<T>(1.0) / sp, iq = lift<T>(1.0) / sq;
        T alpha = lift<T>(0.0), beta = lift<T>(0.0), gamma = lift<T>(0.0);
        for (std::size_t i = 0; i < mr; ++i) {
          const T xp = work[i * mc + p] * ip, xq = work[i * mc + q] * iq;
          alpha = alpha + xp * xp;
          beta = beta + xq * xq;
          gamma = gamma + xp * xq;
        }
        const auto rotate = math::abs(gamma) > lift<T>(orthogonal) * math::sqrt(alpha * beta);
        rotated = math::select(rotate, lift<T>(1.0), rotated);
        // The rotation that diagonalises the Gram matrix: ζ = (β − α)/(2γ) = (sq/sp β' − sp/sq α')/(2γ'),
        // t = sgn(ζ)/(|ζ| + √(ζ² + 1)) (1/(2ζ) where ζ² overflows).
        const T zeta = (sq * ip * beta - sp * iq * alpha) / (lift<T>(2.0) * math::select(rotate, gamma, lift<T>(1.0)));
        const T az = math::abs(zeta);
        const T mag = math::select(az > lift<T>(1e150), lift<T>(0.5) / math::select(az > lift<T>(1e150), az, lift<T>(1.0)),
                                   lift<T>(1.0) / (az + math::sqrt(zeta * zeta + lift<T>(1.0))));
        const T t = math::select(rotate, math::select(zeta < lift<T>(0.0), -mag, mag), lift<T>(0.0));
        const T c = lift<T>(1.0) / math::sqrt(t * t + lift<T>(1.0));
        const T s = t * c;
        for (std::size_t i = 0; i < mr; ++i) {
          const T wp = work[i * mc + p], wq = work[i * mc + q];
          work[i * mc + p] = c * wp - s * wq;
          work[i * mc + q] = s * wp + c * wq;
        }
        for (std::size_t i = 0; i < mc; ++i) {
          const T vp = v[i * mc + p], vq = v[i * mc + q];
          v[i * mc + p] = c * vp - s * vq;
          v[i * mc + q] = s * vp + c * vq;
        }
      }
    if (!(math::lane_max(rotated) > 0.0)) break;
  }
  for (std::size_t j = 0; j < mc; ++j) {
    T scale = lift<T>(0.0);  // the norm as scale · ‖column / scale‖ (no underflow of the squares)
    for (std::size_t i = 0; i < mr; ++i) scale = math::max(scale, math::abs(work[i * mc + j]));
    const T inv_scale = lift<T>(1.0) / math::select(scale == lift<T>(0.0), lift<T>(1.0), scale);
    T norm2 = lift<T>(0.0);
    for (std::size_t i = 0; i < mr; ++i) norm2 = norm2 + (work[i * mc + j] * inv_scale) * (work[i * mc + j] * inv_scale);
    const T norm = scale * math::sqrt(norm2);
    if (zero_null) {
      const auto null = norm == lift<T>(0.0);
      const T divisor = math::select(null, lift<T>(1.0), norm);
      for (std::size_t i = 0; i < mr; ++i) u[i * mc + j] = math::select(null, lift<T>(0.0), work[i * mc + j] / divisor);
    } else {
      for (std::size_t i = 0; i < mr; ++i) u[i * mc + j] = work[i * mc + j] / norm;
    }
    sigma[j] = norm * big;
  }
  for (std::size_t i = 0; i < mc; ++i)  // descending: a bubble network of compare-exchanges
    for (std::size_t j = 0; j + 1 + i < mc; ++j) {
      const auto swap = sigma[j] < sigma[j + 1];
      const T hi = sigma[j];
      sigma[j] = math::select(swap, sigma[j + 1], hi);
      sigma[j + 1] = math::select(swap, hi, sigma[j + 1]);
      swap_columns_where(swap, mr, mc, u, j);
      swap_columns_where(swap, mc, mc, v, j);
    }
}
}  // namespace detail

namespace ops {

/// Which part of A = U Σ Vᵀ an svd_map computes.
enum class svd_part { values, u, v };

/// singular_values(A), svd_U(A) or svd_V(A) of an R × K matrix (R·K values, row major); see the
/// top of this file. Scratch: the decomposition (kept by the forward pass for the reverse pass)
/// and the reverse pass's matrices.
template <svd_part Part>
struct svd_map {
  static constexpr const char* name =
      Part == svd_part::values ? "singular_values" : (Part == svd_part::u ? "svd_U" : "svd_V");
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t rows = 1;  // R
  std::size_t cols = 1;  // K
  template <class A>
  static constexpr std::size_t extent = dynamic_extent;
  bool operator==(const svd_map&) const = default;
  TYCHE_HD std::size_t tall() const { return rows >= cols ? rows : cols; }
  TYCHE_HD std::size_t thin() const { return rows >= cols ? cols : rows; }
  // work (R·K), σ (k), the tall matrix's left vectors (R·K), its right vectors (k²), H (k²), Y (K·k).
  std::size_t scratch_size(std::size_t, const std::size_t*) const {
    const std::size_t k = thin();
    return 2 * rows * cols + k + 2 * k * k + cols * k;
  }
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*, T* scratch) const {
    const std::size_t k = thin(), rk = rows * cols;
    T* sigma = scratch + rk;
    T* lu = sigma + k;
    T* rv = lu + rk;
    detail::jacobi_svd(tall(), k, in[0], rows < cols, Part == svd_part::values, scratch, sigma, lu, rv);
    if constexpr (Part == svd_part::values) {
      for (std::size_t j = 0; j < k; ++j) out[j] = sigma[j];
    } else {
      // U = the tall matrix's left vectors when R ≥ K, else its right vectors (A = (Aᵀ)ᵀ); V the other.
      const bool left = (Part == svd_part::u) == (rows >= cols);
      const T* src = left ? lu : rv;
      const std::size_t n = (Part == svd_part::u ? rows : cols) * k;
      for (std::size_t e = 0; e < n; ++e) out[e] = src[e];
    }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const*, const std::size_t*,
                        T* const* in_adj, T* scratch) const {
    const std::size_t k = thin(), rk = rows * cols, R = rows, K = cols;
    T* g = scratch;  // U H + X, R × k (the work matrix is not needed any more)
    const T* sigma = scratch + rk;
    const T* lu = sigma + k;
    const T* rv = lu + rk;
    const T* u = rows >= cols ? lu : rv;  // R × k
    const T* v = rows >= cols ? rv : lu;  // K × k
    T* h = scratch + 2 * rk + k + k * k;  // k × k
    T* y = h + k * k;                     // K × k
    for (std::size_t e = 0; e < K * k; ++e) y[e] = lift<T>(0.0);
    if constexpr (Part == svd_part::values) {
      for (std::size_t i = 0; i < k; ++i)
        for (std::size_t j = 0; j < k; ++j) h[i * k + j] = i == j ? adj[i] : lift<T>(0.0);
      for (std::size_t e = 0; e < R * k; ++e) g[e] = lift<T>(0.0);
    } else {
      // J = Pᵀ P̄ for the part P (U or V) given: H = F ∘ (J − Jᵀ), then its columns (U) or rows (V)
      // times σ; the term outside the span of P into X (U: R × k, in g) or Y (V: K × k).
      constexpr bool is_u = Part == svd_part::u;
      const T* p = is_u ? u : v;
      const std::size_t np = is_u ? R : K;
      T* j = h;  // J, then H in place (each pair (i, l) read before it is written)
      for (std::size_t i = 0; i < k; ++i)
        for (std::size_t l = 0; l < k; ++l) {
          T acc = lift<T>(0.0);
          for (std::size_t a = 0; a < np; ++a) acc = acc + p[a * k + i] * adj[a * k + l];
          j[i * k + l] = acc;
        }
      T* outside = is_u ? g : y;  // (I − P Pᵀ) P̄ S⁻¹ = (P̄ − P J) S⁻¹
      for (std::size_t a = 0; a < np; ++a)
        for (std::size_t l = 0; l < k; ++l) {
          T acc = adj[a * k + l];
          for (std::size_t i = 0; i < k; ++i) acc = acc - p[a * k + i] * j[i * k + l];
          // Zero when P is square (P Pᵀ = I): computed, it would be rounding noise over σₗ.
          outside[a * k + l] = np == k ? lift<T>(0.0) : acc / sigma[l];
        }
      if (!is_u)
        for (std::size_t e = 0; e < R * k; ++e) g[e] = lift<T>(0.0);
      for (std::size_t i = 0; i < k; ++i) {
        j[i * k + i] = lift<T>(0.0);
        for (std::size_t l = i + 1; l < k; ++l) {
          const T d = j[i * k + l] - j[l * k + i];  // (J − Jᵀ)ᵢₗ; (J − Jᵀ)ₗᵢ = −d
          const T f = lift<T>(1.0) / (sigma[l] * sigma[l] - sigma[i] * sigma[i]);  // Fᵢₗ; Fₗᵢ = −f
          j[i * k + l] = f * d * (is_u ? sigma[l] : sigma[i]);
          j[l * k + i] = f * d * (is_u ? sigma[i] : sigma[l]);
        }
      }
    }
    // g += U H; Ā += g Vᵀ + U Yᵀ.
    for (std::size_t a = 0; a < R; ++a)
      for (std::size_t l = 0; l < k; ++l) {
        T acc = g[a * k + l];
        for (std::size_t i = 0; i < k; ++i) acc = acc + u[a * k + i] * h[i * k + l];
        g[a * k + l] = acc;
      }
    for (std::size_t a = 0; a < R; ++a)
      for (std::size_t b = 0; b < K; ++b) {
        T acc = lift<T>(0.0);
        for (std::size_t l = 0; l < k; ++l) acc = acc + g[a * k + l] * v[b * k + l] + u[a * k + l] * y[b * k + l];
        in_adj[0][a * K + b] += acc;
      }
  }
};


/// generalized_inverse(A): the Moore–Penrose inverse A⁺ (K × R, row major) of an R × K matrix, as
/// V Σ⁺ Uᵀ from the thin SVD above, Σ⁺ inverting the singular values above max(R, K)·ε·σ_max (ε
/// of T's elements) and zeroing the others (the rank is decided per lane). For A of full rank it
/// is A⁻¹, (AᵀA)⁻¹Aᵀ or Aᵀ(AAᵀ)⁻¹ (Stan computes the last two by the normal equations, an LDLT
/// solve of AᵀA or AAᵀ: the same values up to that method's error, which grows as κ(A)²);
/// rank deficient, the pseudo-inverse (as Stan's for a square data A). Reverse (Golub and Pereyra 1973, the derivative of A⁺ where
/// the rank is locally constant), with G = A⁺:
///   Ā = −Gᵀ Ḡ Gᵀ + (I − A G) Ḡᵀ G Gᵀ + Gᵀ G Ḡᵀ (I − G A)
/// (the second term vanishes for A of full row rank, the third for full column rank).
/// O(R K min(R, K)) per sweep forward, O(R K max(R, K)) reverse.
struct pinv_map {
  static constexpr const char* name = "generalized_inverse";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t rows = 1;  // R
  std::size_t cols = 1;  // K
  template <class A>
  static constexpr std::size_t extent = dynamic_extent;
  bool operator==(const pinv_map&) const = default;
  TYCHE_HD std::size_t tall() const { return rows >= cols ? rows : cols; }
  TYCHE_HD std::size_t thin() const { return rows >= cols ? cols : rows; }
  // The forward pass's work (R·K), σ (k), left vectors (R·K), right vectors (k²); the reverse
  // pass's H = Ḡ Gᵀ and N = G Gᵀ (K² each), S = Gᵀ G and a product (R² each), M₂, M₃ (R·K each).
  std::size_t scratch_size(std::size_t, const std::size_t*) const {
    const std::size_t k = thin();
    return 2 * rows * cols + k + k * k + 2 * cols * cols + 2 * rows * rows + 2 * rows * cols;
  }
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*, T* scratch) const {
    const std::size_t k = thin(), rk = rows * cols, R = rows, K = cols;
    T* sigma = scratch + rk;
    T* lu = sigma + k;
    T* rv = lu + rk;
    detail::jacobi_svd(tall(), k, in[0], rows < cols, true, scratch, sigma, lu, rv);
    const T* u = rows >= cols ? lu : rv;  // R × k
    const T* v = rows >= cols ? rv : lu;  // K × k
    // The rank: singular values above max(R, K)·ε·σ_max, ε the machine epsilon of T's elements.
    constexpr double eps = sizeof(element_type_t<T>) < sizeof(double) ? 1.1920928955078125e-7 : 2.220446049250313e-16;
    const T tol = lift<T>(static_cast<double>(tall()) * eps) * sigma[0];
    for (std::size_t l = 0; l < k; ++l) {  // σ⁺ in place of σ
      const auto kept = sigma[l] > tol;
      sigma[l] = math::select(kept, lift<T>(1.0) / math::select(kept, sigma[l], lift<T>(1.0)), lift<T>(0.0));
    }
    for (std::size_t a = 0; a < K; ++a)
      for (std::size_t b = 0; b < R; ++b) {
        T acc = lift<T>(0.0);
        for (std::size_t l = 0; l < k; ++l) acc = acc + v[a * k + l] * sigma[l] * u[b * k + l];
        out[a * R + b] = acc;
      }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T* g, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj, T* scratch) const {
    const std::size_t k = thin(), R = rows, K = cols;
    const T* a = in[0];
    T* h = scratch + 2 * R * K + k + k * k;  // Ḡ Gᵀ, K × K
    T* n = h + K * K;                       // G Gᵀ, K × K
    T* s = n + K * K;                       // Gᵀ G, R × R
    T* t = s + R * R;                       // M₃ G, R × R
    T* m2 = t + R * R;                      // Ḡᵀ N, R × K
    T* m3 = m2 + R * K;                     // S Ḡᵀ, R × K
    // G is K × R (g[i·R + j]), Ḡ likewise, A is R × K.
    for (std::size_t i = 0; i < K; ++i)
      for (std::size_t j = 0; j < K; ++j) {
        T hij = lift<T>(0.0), nij = lift<T>(0.0);
        for (std::size_t c = 0; c < R; ++c) {
          hij = hij + adj[i * R + c] * g[j * R + c];
          nij = nij + g[i * R + c] * g[j * R + c];
        }
        h[i * K + j] = hij;
        n[i * K + j] = nij;
      }
    for (std::size_t i = 0; i < R; ++i)
      for (std::size_t j = 0; j < R; ++j) {
        T acc = lift<T>(0.0);
        for (std::size_t c = 0; c < K; ++c) acc = acc + g[c * R + i] * g[c * R + j];
        s[i * R + j] = acc;
      }
    for (std::size_t i = 0; i < R; ++i)
      for (std::size_t j = 0; j < K; ++j) {
        T acc2 = lift<T>(0.0), acc3 = lift<T>(0.0);
        for (std::size_t c = 0; c < K; ++c) acc2 = acc2 + adj[c * R + i] * n[c * K + j];
        for (std::size_t c = 0; c < R; ++c) acc3 = acc3 + s[i * R + c] * adj[j * R + c];
        m2[i * K + j] = acc2;
        m3[i * K + j] = acc3;
      }
    // Ā = −Gᵀ H + M₂ + M₃ − A (G M₂) − (M₃ G) A.
    for (std::size_t i = 0; i < K; ++i)  // G M₂, K × K, into n
      for (std::size_t j = 0; j < K; ++j) {
        T acc = lift<T>(0.0);
        for (std::size_t c = 0; c < R; ++c) acc = acc + g[i * R + c] * m2[c * K + j];
        n[i * K + j] = acc;  // N is not needed any more: G M₂ in its place
      }
    for (std::size_t i = 0; i < R; ++i)  // t = M₃ G, R × R
      for (std::size_t j = 0; j < R; ++j) {
        T acc = lift<T>(0.0);
        for (std::size_t c = 0; c < K; ++c) acc = acc + m3[i * K + c] * g[c * R + j];
        t[i * R + j] = acc;
      }
    for (std::size_t i = 0; i < R; ++i)
      for (std::size_t j = 0; j < K; ++j) {
        T acc = m2[i * K + j] + m3[i * K + j];
        for (std::size_t c = 0; c < K; ++c) acc = acc - g[c * R + i] * h[c * K + j] - a[i * K + c] * n[c * K + j];
        for (std::size_t c = 0; c < R; ++c) acc = acc - t[i * R + c] * a[c * K + j];
        in_adj[0][i * K + j] += acc;
      }
  }
};
}  // namespace ops

}  // namespace tyche
