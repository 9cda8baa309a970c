// tyche/samplers/nuts/low_rank.hpp — the low-rank + diagonal inverse metric of nutpie
// (Seyboldt, Carlson & Carpenter, "Preconditioning Hamiltonian Monte Carlo by minimizing Fisher
// divergence", arXiv 2603.18845, Algorithm 1), from a window's draws and gradients:
//
//   1. per coordinate, σᵢ² = √(var θᵢ / var ∂ᵢ log p) (the diagonal that minimises the Fisher
//      divergence); draws and gradients centred and scaled, xᵢ = (θᵢ − θ̄ᵢ)/σᵢ, gᵢ = (∂ᵢ − ∂̄ᵢ)·σᵢ;
//   2. Q: an orthonormal basis of the span of the scaled draws and gradients (m ≤ min(d, 2n)
//      directions; the identity when 2n ≥ d);
//   3. in that subspace, Cx = PxPxᵀ/(n²γ) + I and Cg = PgPgᵀ/(n²γ) + I (P: the projections,
//      γ = 10⁻⁵; the n² as nuts-rs scales draws and gradients by 1/n),
//      and their SPD mean Σ, the solution of Σ·Cg·Σ = Cx (the Gaussian's covariance that
//      minimises the Fisher divergence): with Cg = LLᵀ, Σ = L⁻ᵀ(LᵀCxL)^½L⁻¹;
//   4. Σ = WΩWᵀ; the eigenvalues outside [1/c, c] (c = 2) and their vectors u = Qw are kept,
//      the others set to 1: M⁻¹ = S(I + U(Ω − I)Uᵀ)S, S = diag(σ).
//
// Kept as factors — σ, Ω − I and the directions U, at most kmax of them (the largest |log ω|
// where more fall outside the band) — which the kernel applies in O(dk) per leapfrog and a chain
// stores in O(d·kmax) (docs/design/low-rank-memory.md); low_rank_dense writes the d × d matrix
// where it is wanted. Kernel code: no allocation,
// no exception, TYCHE_HD; the eigen-decompositions are Householder tridiagonalisation and the
// implicit QL algorithm (Wilkinson & Reinsch, Handbook for Automatic Computation II, tred2 and
// tql2), O(m³).
#pragma once
#include <tyche/config.hpp>

#include <cstddef>
#include <math.h>

namespace tyche::samplers {

/// The settings of the low-rank estimate, nutpie's defaults.
struct low_rank_settings {
  double gamma = 1e-5;  // regularisation of the projected sums of squares: PPᵀ/(n²γ) + I
  double cutoff = 2;    // eigenvalues in [1/cutoff, cutoff] are set to 1
  /// The most directions kept (the factors' kmax): 0 = the subspace's bound, min(d, 2n) for
  /// windows of n draws (low_rank_max_rank); a smaller cap keeps the directions with the largest
  /// |log λ| and bounds a chain's memory to O(d·max_rank).
  std::size_t max_rank = 0;
};

namespace detail {

template <class R>
TYCHE_HD inline R lr_abs(R x) {
  return x < 0 ? -x : x;
}
TYCHE_HD inline double lr_sqrt(double x) { return ::sqrt(x); }
TYCHE_HD inline float lr_sqrt(float x) { return ::sqrtf(x); }
template <class R>
TYCHE_HD inline R lr_hypot(R a, R b) {  // without overflow or underflow
  a = lr_abs(a);
  b = lr_abs(b);
  if (a < b) {
    const R t = a;
    a = b;
    b = t;
  }
  if (a == R(0)) return R(0);
  const R r = b / a;
  return a * lr_sqrt(R(1) + r * r);
}

/// Eigen-decomposition of the symmetric m × m matrix in v (row-major, overwritten by the
/// eigenvectors, one per column) with the eigenvalues in w (ascending) and m values of scratch
/// in e: Householder reduction to tridiagonal form, then the QL algorithm with implicit shifts.
/// Returns false when an eigenvalue needs more than 60 iterations (never seen for a finite
/// symmetric matrix) or the input is not finite.
template <class R>
TYCHE_HD bool symmetric_eigen(R* v, R* w, R* e, std::size_t m) {
  if (m == 0) return true;
  const std::size_t n = m;
  for (std::size_t k = 0; k < n * n; ++k)
    if (!(v[k] - v[k] == R(0))) return false;
  // The algorithm below indexes V(row, column) with its O(n³) loops running down columns, so V is
  // kept column-major (V(i, j) = v[j·n + i]: those loops walk contiguous memory) and transposed
  // back at the end. It reads the lower triangle as before: copied to the upper first, so that
  // the arithmetic, and every number, is the row-major version's (checked bit for bit).
  for (std::size_t i = 1; i < n; ++i)
    for (std::size_t j = 0; j < i; ++j) v[j * n + i] = v[i * n + j];
  auto V = [&](std::size_t i, std::size_t j) -> R& { return v[j * n + i]; };
  // Householder tridiagonalisation, accumulating the transformation in V.
  for (std::size_t j = 0; j < n; ++j) w[j] = V(n - 1, j);
  for (std::size_t i = n - 1; i > 0; --i) {
    R scale = 0, h = 0;
    for (std::size_t k = 0; k < i; ++k) scale += lr_abs(w[k]);
    if (scale == R(0)) {
      e[i] = w[i - 1];
      for (std::size_t j = 0; j < i; ++j) {
        w[j] = V(i - 1, j);
        V(i, j) = 0;
        V(j, i) = 0;
      }
    } else {
      for (std::size_t k = 0; k < i; ++k) {
        w[k] /= scale;
        h += w[k] * w[k];
      }
      R f = w[i - 1];
      R g = lr_sqrt(h);
      if (f > 0) g = -g;
      e[i] = scale * g;
      h -= f * g;
      w[i - 1] = f - g;
      for (std::size_t j = 0; j < i; ++j) e[j] = 0;
      for (std::size_t j = 0; j < i; ++j) {
        f = w[j];
        V(j, i) = f;
        g = e[j] + V(j, j) * f;
        for (std::size_t k = j + 1; k < i; ++k) {
          g += V(k, j) * w[k];
          e[k] += V(k, j) * f;
        }
        e[j] = g;
      }
      f = 0;
      for (std::size_t j = 0; j < i; ++j) {
        e[j] /= h;
        f += e[j] * w[j];
      }
      const R hh = f / (h + h);
      for (std::size_t j = 0; j < i; ++j) e[j] -= hh * w[j];
      for (std::size_t j = 0; j < i; ++j) {
        f = w[j];
        g = e[j];
        for (std::size_t k = j; k < i; ++k) V(k, j) -= f * e[k] + g * w[k];
        w[j] = V(i - 1, j);
        V(i, j) = 0;
      }
    }
    w[i] = h;
  }
  for (std::size_t i = 0; i + 1 < n; ++i) {
    V(n - 1, i) = V(i, i);
    V(i, i) = 1;
    const R h = w[i + 1];
    if (h != R(0)) {
      for (std::size_t k = 0; k <= i; ++k) w[k] = V(k, i + 1) / h;
      for (std::size_t j = 0; j <= i; ++j) {
        R g = 0;
        for (std::size_t k = 0; k <= i; ++k) g += V(k, i + 1) * V(k, j);
        for (std::size_t k = 0; k <= i; ++k) V(k, j) -= g * w[k];
      }
    }
    for (std::size_t k = 0; k <= i; ++k) V(k, i + 1) = 0;
  }
  for (std::size_t j = 0; j < n; ++j) {
    w[j] = V(n - 1, j);
    V(n - 1, j) = 0;
  }
  V(n - 1, n - 1) = 1;
  e[0] = 0;

  // QL with implicit shifts on the tridiagonal (w: diagonal, e: sub-diagonal).
  for (std::size_t i = 1; i < n; ++i) e[i - 1] = e[i];
  e[n - 1] = 0;
  const R eps = sizeof(R) == 4 ? R(1.1920929e-7) : R(2.220446049250313e-16);
  R f = 0, tst1 = 0;
  for (std::size_t l = 0; l < n; ++l) {
    const R here = lr_abs(w[l]) + lr_abs(e[l]);
    if (here > tst1) tst1 = here;
    std::size_t mm = l;
    while (mm < n - 1 && lr_abs(e[mm]) > eps * tst1) ++mm;
    if (mm > l) {
      int iterations = 0;
      do {
        if (++iterations > 60) return false;
        R g = w[l];
        R p = (w[l + 1] - g) / (R(2) * e[l]);
        R r = lr_hypot(p, R(1));
        if (p < 0) r = -r;
        w[l] = e[l] / (p + r);
        w[l + 1] = e[l] * (p + r);
        const R dl1 = w[l + 1];
        R h = g - w[l];
        for (std::size_t i = l + 2; i < n; ++i) w[i] -= h;
        f += h;
        p = w[mm];
        R c = 1, c2 = 1, c3 = 1, s = 0, s2 = 0;
        const R el1 = e[l + 1];
        for (std::size_t ii = mm; ii-- > l;) {
          c3 = c2;
          c2 = c;
          s2 = s;
          g = c * e[ii];
          h = c * p;
          r = lr_hypot(p, e[ii]);
          e[ii + 1] = s * r;
          s = e[ii] / r;
          c = p / r;
          p = c * w[ii] - s * g;
          w[ii + 1] = h + s * (c * g + s * w[ii]);
          for (std::size_t k = 0; k < n; ++k) {
            h = V(k, ii + 1);
            V(k, ii + 1) = s * V(k, ii) + c * h;
            V(k, ii) = c * V(k, ii) - s * h;
          }
        }
        p = -s * s2 * c3 * el1 * e[l] / dl1;
        e[l] = s * p;
        w[l] = c * p;
      } while (lr_abs(e[l]) > eps * tst1);
    }
    w[l] += f;
    e[l] = 0;
  }
  // Ascending order (selection sort: m is small).
  for (std::size_t i = 0; i + 1 < n; ++i) {
    std::size_t k = i;
    for (std::size_t j = i + 1; j < n; ++j)
      if (w[j] < w[k]) k = j;
    if (k != i) {
      const R t = w[i];
      w[i] = w[k];
      w[k] = t;
      for (std::size_t r = 0; r < n; ++r) {
        const R u = V(r, i);
        V(r, i) = V(r, k);
        V(r, k) = u;
      }
    }
  }
  for (std::size_t i = 1; i < n; ++i)  // to row-major: eigenvector p in column p
    for (std::size_t j = 0; j < i; ++j) {
      const R t = v[i * n + j];
      v[i * n + j] = v[j * n + i];
      v[j * n + i] = t;
    }
  return true;
}

/// The number of directions of the subspace for n draws in d dimensions.
TYCHE_HD inline std::size_t low_rank_subspace(std::size_t d, std::size_t n) { return 2 * n >= d ? d : 2 * n; }

}  // namespace detail

/// The factors of a low-rank + diagonal inverse metric M⁻¹ = S(I + U(Λ − I)Uᵀ)S, as the kernel
/// takes them (nuts_kernel::set_metric_low_rank) and a chain keeps them: k (the directions in use)
/// and kmax (the most it holds), then σ (d values, S = diag σ), λ − 1 (kmax values, the first k
/// used) and U (kmax × d, row p the unit vector u_p, the first k rows used; orthonormal).
/// low_rank_factors_size(d, kmax) = 2 + d + kmax + kmax·d values: O(d·kmax), where the d × d
/// matrix M⁻¹ would be d² (docs/design/low-rank-memory.md). The array says its own kmax, so a
/// reader needs only d.
TYCHE_HD inline std::size_t low_rank_factors_size(std::size_t d, std::size_t kmax) { return 2 + d + kmax + kmax * d; }

namespace detail {
/// Where each part of the factors starts (low_rank_factors_size).
struct low_rank_layout {
  std::size_t d, kmax;
  template <class R>
  TYCHE_HD static low_rank_layout of(const R* factors, std::size_t d) {
    return {d, static_cast<std::size_t>(factors[1])};
  }
  TYCHE_HD static constexpr std::size_t rank() { return 0; }
  TYCHE_HD static constexpr std::size_t max_rank() { return 1; }
  TYCHE_HD static constexpr std::size_t sigma() { return 2; }
  TYCHE_HD std::size_t lambda_minus_one() const { return 2 + d; }
  TYCHE_HD std::size_t directions() const { return 2 + d + kmax; }
  TYCHE_HD std::size_t size() const { return low_rank_factors_size(d, kmax); }
};
}  // namespace detail

/// The most directions the low-rank estimate of windows of at most n draws (n summed over the
/// chains when they pool) keeps in d dimensions: its subspace's min(d, 2n), or the user's cap
/// (low_rank_settings::max_rank) when that is smaller and not 0.
TYCHE_HD inline std::size_t low_rank_max_rank(std::size_t d, std::size_t n, std::size_t cap = 0) {
  std::size_t k = 2 * n < d ? 2 * n : d;
  if (cap > 0 && cap < k) k = cap;
  return k;
}

/// The d of factors of `size` values (low_rank_factors_size(d, kmax) = size, kmax = factors[1]);
/// 0 when no d fits.
template <class R>
TYCHE_HD std::size_t low_rank_dimension(const R* factors, std::size_t size) {
  if (size < 3 || !(factors[1] >= R(0)) || !(factors[1] < static_cast<R>(size))) return 0;
  const std::size_t kmax = static_cast<std::size_t>(factors[1]);
  const std::size_t rest = size - 2 - (kmax < size - 2 ? kmax : size - 2);
  return rest % (1 + kmax) == 0 ? rest / (1 + kmax) : 0;
}

/// The identity as factors (k = 0, σ = 1), with room for kmax directions.
template <class R>
TYCHE_HD void low_rank_identity(R* factors, std::size_t d, std::size_t kmax) {
  const detail::low_rank_layout at{d, kmax};
  for (std::size_t i = 0; i < at.size(); ++i) factors[i] = R(0);
  factors[at.max_rank()] = static_cast<R>(kmax);
  for (std::size_t i = 0; i < d; ++i) factors[at.sigma() + i] = R(1);
}

/// The factors of a diagonal inverse metric (d positive variances): σ = √m, k = 0; false when a
/// value is not positive and finite. The room for kmax directions is set.
template <class R>
TYCHE_HD bool low_rank_factors_from_diagonal(const R* m, std::size_t d, std::size_t kmax, R* factors) {
  low_rank_identity(factors, d, kmax);
  for (std::size_t i = 0; i < d; ++i) {
    if (!(m[i] > R(0)) || !(m[i] - m[i] == R(0))) return false;
    factors[detail::low_rank_layout::sigma() + i] = detail::lr_sqrt(m[i]);
  }
  return true;
}

/// Values of scratch low_rank_factors_from_matrix needs (d × d: the eigen-decomposition).
TYCHE_HD inline std::size_t low_rank_matrix_workspace(std::size_t d) { return d * d + 2 * d; }

namespace detail {
/// Of the n candidate eigenvalues w[p] with keep[p] = 1, sets keep to 0 for all but the kmax
/// whose |log w| is largest (of equal ones, the first kept); the kept stay in their order.
template <class R>
TYCHE_HD void lr_keep_largest(const R* w, R* keep, std::size_t n, std::size_t kmax) {
  std::size_t count = 0;
  for (std::size_t p = 0; p < n; ++p) count += keep[p] != R(0) ? 1 : 0;
  while (count > kmax) {  // drop the kept one with the smallest |log w| (only under a cap)
    std::size_t drop = n;
    R smallest = R(0);
    for (std::size_t p = 0; p < n; ++p) {
      if (keep[p] == R(0)) continue;
      const R a = w[p] >= R(1) ? w[p] : R(1) / w[p];  // monotone in |log w|
      if (drop == n || a <= smallest) {
        drop = p;
        smallest = a;
      }
    }
    keep[drop] = R(0);
    --count;
  }
}
}  // namespace detail

/// The factors (room for kmax directions) of a symmetric positive-definite inverse metric given
/// as a d × d row-major matrix m: S = √diag m and the eigen-decomposition of the correlation
/// matrix S⁻¹mS⁻¹, leaving out the directions whose eigenvalue is 1 to within 10⁻¹², and where
/// more than kmax remain, all but the kmax with the largest |log λ| — so that a cut keeps every
/// coordinate's scale. A diagonal m needs no decomposition: k = 0 (work unused; it may be null
/// then). For a metric that did not come from the low-rank estimate (a user's init_inv_metric,
/// Pathfinder's covariance). work: low_rank_matrix_workspace(d) values. Returns false when m is
/// not positive definite or not finite (factors then undefined).
template <class R>
TYCHE_HD bool low_rank_factors_from_matrix(const R* m, std::size_t d, std::size_t kmax, R* factors, R* work) {
  bool diagonal = true;
  for (std::size_t i = 0; i < d && diagonal; ++i)
    for (std::size_t j = 0; j < d; ++j)
      if (i != j && m[i * d + j] != R(0)) {
        diagonal = false;
        break;
      }
  if (diagonal) {
    low_rank_identity(factors, d, kmax);
    for (std::size_t i = 0; i < d; ++i) {
      const R v = m[i * d + i];
      if (!(v > R(0)) || !(v - v == R(0))) return false;
      factors[detail::low_rank_layout::sigma() + i] = detail::lr_sqrt(v);
    }
    return true;
  }
  const detail::low_rank_layout at{d, kmax};
  R* v = work;
  R* lambda = work + d * d;
  R* scratch = lambda + d;
  for (std::size_t i = 0; i < d; ++i) {  // S, in scratch while the correlations are written
    const R mii = m[i * d + i];
    if (!(mii > R(0)) || !(mii - mii == R(0))) return false;
    scratch[i] = detail::lr_sqrt(mii);
  }
  for (std::size_t i = 0; i < d; ++i)
    for (std::size_t j = 0; j < d; ++j) v[i * d + j] = i == j ? R(1) : m[i * d + j] / (scratch[i] * scratch[j]);
  low_rank_identity(factors, d, kmax);
  for (std::size_t i = 0; i < d; ++i) factors[at.sigma() + i] = scratch[i];
  if (!detail::symmetric_eigen(v, lambda, scratch, d)) return false;
  R* keep = scratch;  // the decomposition's scratch, free now: 1 for a direction kept
  for (std::size_t p = 0; p < d; ++p) {
    const R l = lambda[p];
    if (!(l > R(0)) || !(l - l == R(0))) return false;
    keep[p] = detail::lr_abs(l - R(1)) <= R(1e-12) * (l > R(1) ? l : R(1)) ? R(0) : R(1);
  }
  detail::lr_keep_largest(lambda, keep, d, kmax);
  std::size_t kept = 0;
  for (std::size_t p = 0; p < d; ++p) {
    if (keep[p] == R(0)) continue;
    for (std::size_t j = 0; j < d; ++j) factors[at.directions() + kept * d + j] = v[j * d + p];  // column p
    factors[at.lambda_minus_one() + kept] = lambda[p] - R(1);
    ++kept;
  }
  factors[at.rank()] = static_cast<R>(kept);
  return true;
}

/// Factors `from` (any kmax) copied into `to`, whose room is kmax directions: σ, and the
/// directions, all of them where they fit, else the kmax with the largest |log λ| (in their order).
/// `to` may not alias `from`. keep: 2k values of scratch (k: `from`'s).
template <class R>
TYCHE_HD void low_rank_copy(const R* from, std::size_t d, std::size_t kmax, R* to, R* keep) {
  const detail::low_rank_layout src = detail::low_rank_layout::of(from, d), dst{d, kmax};
  const std::size_t k = static_cast<std::size_t>(from[src.rank()]);
  low_rank_identity(to, d, kmax);
  for (std::size_t i = 0; i < d; ++i) to[dst.sigma() + i] = from[src.sigma() + i];
  for (std::size_t r = 0; r < k; ++r) keep[r] = R(1);
  // (lr_keep_largest compares λ, here 1 + (λ − 1): keep[] holds λ's place while it decides)
  R* lambda = keep + k;
  for (std::size_t r = 0; r < k; ++r) lambda[r] = R(1) + from[src.lambda_minus_one() + r];
  detail::lr_keep_largest(lambda, keep, k, kmax);
  std::size_t kept = 0;
  for (std::size_t r = 0; r < k; ++r) {
    if (keep[r] == R(0)) continue;
    to[dst.lambda_minus_one() + kept] = from[src.lambda_minus_one() + r];
    for (std::size_t i = 0; i < d; ++i) to[dst.directions() + kept * d + i] = from[src.directions() + r * d + i];
    ++kept;
  }
  to[dst.rank()] = static_cast<R>(kept);
}

/// The d × d row-major matrix M⁻¹ = S(I + U(Λ − I)Uᵀ)S of factors, in O(d²k) — the values the
/// kernel's one-lane dense form, the chain and the fit take, computed the same way everywhere.
template <class R>
TYCHE_HD void low_rank_dense(const R* factors, std::size_t d, R* out) {
  const detail::low_rank_layout at = detail::low_rank_layout::of(factors, d);
  const std::size_t k = static_cast<std::size_t>(factors[at.rank()]);
  for (std::size_t i = 0; i < d; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      R v = i == j ? R(1) : R(0);
      for (std::size_t r = 0; r < k; ++r)
        v += factors[at.lambda_minus_one() + r] * factors[at.directions() + r * d + i] *
             factors[at.directions() + r * d + j];
      v *= factors[at.sigma() + i] * factors[at.sigma() + j];
      out[i * d + j] = v;
      out[j * d + i] = v;
    }
}

/// Checks factors as a metric: k ≤ kmax ≤ d, σ positive and finite, every used λ positive and
/// finite. Returns 0 (ok), 1 for a bad count (where: SIZE_MAX) or σ (where: its index), 2 for a λ
/// that is not positive and finite (where: the direction).
template <class R>
TYCHE_HD int low_rank_check(const R* factors, std::size_t d, std::size_t* where = nullptr) {
  const R kr = factors[detail::low_rank_layout::rank()], kmax = factors[detail::low_rank_layout::max_rank()];
  if (!(kr >= R(0)) || !(kr <= kmax) || !(kmax <= static_cast<R>(d)) ||
      kr != static_cast<R>(static_cast<std::size_t>(kr))) {
    if (where) *where = static_cast<std::size_t>(-1);
    return 1;
  }
  const detail::low_rank_layout at = detail::low_rank_layout::of(factors, d);
  for (std::size_t i = 0; i < d; ++i) {
    const R s = factors[at.sigma() + i];
    if (!(s > R(0)) || !(s - s == R(0))) {
      if (where) *where = i;
      return 1;
    }
  }
  const std::size_t k = static_cast<std::size_t>(kr);
  for (std::size_t r = 0; r < k; ++r) {
    const R lambda = R(1) + factors[at.lambda_minus_one() + r];
    if (!(lambda > R(0)) || !(lambda - lambda == R(0))) {
      if (where) *where = r;
      return 2;
    }
  }
  return 0;
}

/// out = M⁻¹p from the factors, O(dk); the arithmetic of the kernel's detail::sharp_low_rank.
template <class R>
TYCHE_HD void low_rank_sharp(const R* factors, std::size_t d, const R* p, R* out) {
  const detail::low_rank_layout at = detail::low_rank_layout::of(factors, d);
  const std::size_t k = static_cast<std::size_t>(factors[at.rank()]);
  const R* sigma = factors + at.sigma();
  for (std::size_t i = 0; i < d; ++i) out[i] = sigma[i] * p[i];
  for (std::size_t r = 0; r < k; ++r) {
    const R* u = factors + at.directions() + r * d;
    R c = R(0);
    for (std::size_t i = 0; i < d; ++i) c += u[i] * (sigma[i] * p[i]);
    c *= factors[at.lambda_minus_one() + r];
    for (std::size_t i = 0; i < d; ++i) out[i] += c * u[i];
  }
  for (std::size_t i = 0; i < d; ++i) out[i] *= sigma[i];
}

/// A momentum p ~ N(0, M) from d standard normals in p: p = S⁻¹(z + U(b ⊙ Uᵀz)), b = λ^(−½) − 1;
/// the arithmetic of the kernel's detail::momentum_low_rank. tmp: d values.
template <class R>
TYCHE_HD void low_rank_momentum(const R* factors, std::size_t d, R* p, R* tmp) {
  const detail::low_rank_layout at = detail::low_rank_layout::of(factors, d);
  const std::size_t k = static_cast<std::size_t>(factors[at.rank()]);
  for (std::size_t i = 0; i < d; ++i) tmp[i] = p[i];
  for (std::size_t r = 0; r < k; ++r) {
    const R* u = factors + at.directions() + r * d;
    R c = R(0);
    for (std::size_t i = 0; i < d; ++i) c += u[i] * p[i];
    c *= R(1) / detail::lr_sqrt(R(1) + factors[at.lambda_minus_one() + r]) - R(1);
    for (std::size_t i = 0; i < d; ++i) tmp[i] += c * u[i];
  }
  for (std::size_t i = 0; i < d; ++i) p[i] = tmp[i] / factors[at.sigma() + i];
}

/// Values of scratch low_rank_inverse_metric needs for up to n draws of dimension d: for every
/// count of draws from 2 to n, since a window of fewer draws may project onto a subspace (2n′ < d,
/// with its basis: m·d values) where one of n does not. (Until 2026-12-05 this was the need of n
/// draws alone, and a chain's window buffer, sized for its longest window, was written past its
/// end by a shorter window that projects where the longest does not, 2·(that window) < d ≤
/// 2·(the longest), at some d between 51 and 453 with 1,000 warm-up iterations: at d = 420 the
/// 200-draw window needed 810,060 values and the buffer held 707,700. AddressSanitizer did not
/// see it: the arrays written past the end lie beyond its redzone.)
TYCHE_HD inline std::size_t low_rank_workspace(std::size_t d, std::size_t n) {
  auto exact = [d](std::size_t draws) {
    const std::size_t m = detail::low_rank_subspace(d, draws);
    return 2 * d + (m < d ? m * d : 0) + 4 * m * m + 2 * m + (m > d ? m : d);
  };
  const std::size_t most = exact(n);
  if (2 * n < d) return most;  // (the need grows with the draws while they project)
  const std::size_t projecting = (d - 1) / 2;  // the most draws that still project
  const std::size_t need = projecting >= 2 ? exact(projecting) : 0;
  return need > most ? need : most;
}

/// The low-rank + diagonal inverse metric (top of this file) of n draws x and their gradients g
/// of log p (row i: draw i, d values; both overwritten), written as factors (σ, Λ − I, U and k:
/// the form the kernel applies in O(dk) per leapfrog) to `factors`, whose kmax (factors[1], set
/// by low_rank_identity) and settings.max_rank (when not 0) bound the directions kept: where more
/// eigenvalues fall outside [1/c, c], the kmax with the largest |log λ| (in the order of their
/// λ). work:
/// low_rank_workspace(d, n) values. Returns the number of eigen-directions kept, or −1 when the
/// decomposition failed (the factors then hold the diagonal part alone, σ with k = 0). n ≥ 2.
template <class R>
TYCHE_HD int low_rank_inverse_metric(R* x, R* g, std::size_t n, std::size_t d, R* factors, R* work,
                                     low_rank_settings settings = {}) {
  const detail::low_rank_layout at = detail::low_rank_layout::of(factors, d);
  const std::size_t m = detail::low_rank_subspace(d, n);
  R* sigma = work;
  R* tmp = sigma + d;  // max(m, d) values
  R* q = tmp + (m > d ? m : d);
  R* cx = q + (m < d ? m * d : 0);
  R* lg = cx + m * m;
  R* a = lg + m * m;
  R* b = a + m * m;
  R* w = b + m * m;
  R* e = w + m;
  R* u = e + m;  // d values
  const R nn = static_cast<R>(n);

  // 1. σ, and the centred, scaled draws and gradients.
  for (std::size_t j = 0; j < d; ++j) {
    R mx = 0, mg = 0;
    for (std::size_t i = 0; i < n; ++i) {
      mx += x[i * d + j];
      mg += g[i * d + j];
    }
    mx /= nn;
    mg /= nn;
    R vx = 0, vg = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const R a1 = x[i * d + j] - mx, b1 = g[i * d + j] - mg;
      vx += a1 * a1;
      vg += b1 * b1;
    }
    R s2 = vg > 0 ? detail::lr_sqrt(vx / vg) : vx / nn;  // the diagonal estimator's value
    if (!(s2 >= R(1e-10))) s2 = R(1e-10);
    if (s2 > R(1e10)) s2 = R(1e10);
    const R s = detail::lr_sqrt(s2);
    sigma[j] = s;
    for (std::size_t i = 0; i < n; ++i) {
      x[i * d + j] = (x[i * d + j] - mx) / s;
      g[i * d + j] = (g[i * d + j] - mg) * s;
    }
  }
  low_rank_identity(factors, d, at.kmax);
  for (std::size_t j = 0; j < d; ++j) factors[at.sigma() + j] = sigma[j];

  // 2. The subspace: Gram–Schmidt, twice, over the 2n vectors; those left with less than 10⁻⁸
  // of their length are in the span already.
  std::size_t rank = d;
  if (m < d) {
    rank = 0;
    for (std::size_t v = 0; v < 2 * n && rank < m; ++v) {
      const R* src = v < n ? x + v * d : g + (v - n) * d;
      R norm0 = 0;
      for (std::size_t j = 0; j < d; ++j) {
        u[j] = src[j];
        norm0 += u[j] * u[j];
      }
      if (!(norm0 > 0)) continue;
      for (int pass = 0; pass < 2; ++pass)
        for (std::size_t r = 0; r < rank; ++r) {
          R dot = 0;
          for (std::size_t j = 0; j < d; ++j) dot += q[r * d + j] * u[j];
          for (std::size_t j = 0; j < d; ++j) u[j] -= dot * q[r * d + j];
        }
      R norm = 0;
      for (std::size_t j = 0; j < d; ++j) norm += u[j] * u[j];
      if (!(norm > R(1e-16) * norm0)) continue;
      norm = detail::lr_sqrt(norm);
      for (std::size_t j = 0; j < d; ++j) q[rank * d + j] = u[j] / norm;
      ++rank;
    }
    // The projections, in place: row i of x (and g) becomes its rank coordinates in Q.
    R* const both[2] = {x, g};
    for (R* rows : both)
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t r = 0; r < rank; ++r) {
          R dot = 0;
          for (std::size_t j = 0; j < d; ++j) dot += q[r * d + j] * rows[i * d + j];
          tmp[r] = dot;
        }
        for (std::size_t r = 0; r < rank; ++r) rows[i * d + r] = tmp[r];
      }
  }
  const std::size_t k = rank;
  if (k == 0) return 0;

  // 3. Cx, Cg (k × k), Cg = LLᵀ, B² = LᵀCxL, B = (B²)^½, Σ = L⁻ᵀBL⁻¹.
  // Each sum of squares over n², as nuts-rs scales the draws by 1/(σn) and the gradients by σ/n
  // (mass_matrix/low_rank.rs, rescale_points): the regularising I then weighs against ~1/(nγ)
  // (200 at n = 500), not n/γ (5·10⁷). Without the n², B² below had eigenvalues up to ~10¹⁵ and
  // rounding made spurious directions: 172 on a 1,000-d Gaussian with a diagonal covariance from
  // 500 exact draws (none exist), 23 beside the one true direction of dense_metric_test's 400-d
  // Gaussian from 200 (now none, and one beside u).
  // The O(k²n) and O(k³) loops below run along rows (contiguous memory), each sum still taken
  // term by term in the order of its index (tmp and u: k-value rows of running sums), so the
  // numbers are the loops along columns' up to where g++ contracts a multiply and an add into
  // one rounding (it did in some places and not in others: the last bits of the factors moved).
  // A 1,000-d fit of 4 chains: 26.4 → 13.5 s, with the eigen-decompositions' layout below.
  const R inv_gamma = R(1) / (static_cast<R>(settings.gamma) * nn * nn);
  R trace_cg = 0;  // (a bound on Σ's smallest eigenvalue, step 4)
  R* const sum_x = tmp;  // row r's sums, c ≤ r (k ≤ max(m, d) and k ≤ d values)
  R* const sum_g = u;
  for (std::size_t r = 0; r < k; ++r) {
    for (std::size_t c = 0; c <= r; ++c) sum_x[c] = sum_g[c] = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const R xr = x[i * d + r], gr = g[i * d + r];
      const R* TYCHE_RESTRICT xi = x + i * d;
      const R* TYCHE_RESTRICT gi = g + i * d;
      for (std::size_t c = 0; c <= r; ++c) {
        sum_x[c] += xr * xi[c];
        sum_g[c] += gr * gi[c];
      }
    }
    for (std::size_t c = 0; c <= r; ++c) {
      R sx = sum_x[c] * inv_gamma, sg = sum_g[c] * inv_gamma;
      if (r == c) {
        sx += 1;
        sg += 1;
        trace_cg += sg;
      }
      cx[r * k + c] = cx[c * k + r] = sx;
      a[r * k + c] = a[c * k + r] = sg;
    }
  }
  auto fail = [&]() { return -1; };  // the factors hold σ and k = 0 already
  for (std::size_t r = 0; r < k * k; ++r) lg[r] = 0;
  for (std::size_t i = 0; i < k; ++i)  // Cholesky of Cg (in a) into lg
    for (std::size_t j = 0; j <= i; ++j) {
      R s = a[i * k + j];
      for (std::size_t p = 0; p < j; ++p) s -= lg[i * k + p] * lg[j * k + p];
      if (i == j) {
        if (!(s > 0)) return fail();
        lg[i * k + i] = detail::lr_sqrt(s);
      } else {
        lg[i * k + j] = s / lg[j * k + j];
      }
    }
  for (std::size_t r = 0; r < k; ++r) {  // a = Cx·L: a[r][c] = Σ_{p ≥ c} cx[r][p]·L[p][c]
    R* TYCHE_RESTRICT ar = a + r * k;
    for (std::size_t c = 0; c < k; ++c) ar[c] = 0;
    for (std::size_t p = 0; p < k; ++p) {
      const R x_rp = cx[r * k + p];
      const R* TYCHE_RESTRICT lp = lg + p * k;
      for (std::size_t c = 0; c <= p; ++c) ar[c] += x_rp * lp[c];
    }
  }
  for (std::size_t r = 0; r < k; ++r) {  // b = Lᵀ·a (symmetric): b[r][c] = Σ_{p ≥ r} L[p][r]·a[p][c]
    R* TYCHE_RESTRICT br = b + r * k;
    for (std::size_t c = 0; c <= r; ++c) br[c] = 0;
    for (std::size_t p = r; p < k; ++p) {
      const R l_pr = lg[p * k + r];
      const R* TYCHE_RESTRICT ap = a + p * k;
      for (std::size_t c = 0; c <= r; ++c) br[c] += l_pr * ap[c];
    }
  }
  for (std::size_t r = 0; r < k; ++r)
    for (std::size_t c = 0; c < r; ++c) b[c * k + r] = b[r * k + c];
  if (!detail::symmetric_eigen(b, w, e, k)) return fail();
  // B² = LᵀCxL ≥ LᵀL ≅ Cg ≥ I exactly (Cx ≥ I, Cg ≥ I), but its eigenvalues span up to
  // cond(Cx)·cond(Cg), and the smallest come out of the decomposition with errors of that order
  // times ε: below 1, or negative. Those are raised to 1, their exact bound (taken as computed, Σ
  // had eigenvalues ≤ 0 and the estimate failed: −110 measured at d = 1,000, n = 500 before the
  // sums had their n², when the span was ~10¹⁶; with it, of order (1 + 1/(nγ))², 4·10⁴ at n = 500).
  for (std::size_t p = 0; p < k; ++p) w[p] = detail::lr_sqrt(w[p] > R(1) ? w[p] : R(1));  // √λ
  for (std::size_t r = 0; r < k; ++r) {  // a = B = V·diag(√λ)·Vᵀ
    for (std::size_t c = 0; c <= r; ++c) {
      R s = 0;
      const R* TYCHE_RESTRICT vr = b + r * k;
      const R* TYCHE_RESTRICT vc = b + c * k;
      for (std::size_t p = 0; p < k; ++p) s += vr[p] * vc[p] * w[p];
      a[r * k + c] = a[c * k + r] = s;
    }
  }
  // Σ = L⁻ᵀ·B·L⁻¹: columns of Y = L⁻ᵀB by back substitution, then Σ = L⁻ᵀYᵀ; into b.
  // Row ii of each from the rows below it (every column c at once).
  R* const run = tmp;
  for (std::size_t ii = k; ii-- > 0;) {  // Y[ii][c] = (B[ii][c] − Σ_{p > ii} L[p][ii]·Y[p][c]) / L[ii][ii]
    for (std::size_t c = 0; c < k; ++c) run[c] = a[ii * k + c];
    for (std::size_t p = ii + 1; p < k; ++p) {
      const R l = lg[p * k + ii];
      const R* TYCHE_RESTRICT yp = cx + p * k;
      for (std::size_t c = 0; c < k; ++c) run[c] -= l * yp[c];
    }
    for (std::size_t c = 0; c < k; ++c) cx[ii * k + c] = run[c] / lg[ii * k + ii];  // cx is free: Y
  }
  for (std::size_t ii = k; ii-- > 0;) {  // Σ[ii][c] = (Yᵀ[ii][c] − Σ_{p > ii} L[p][ii]·Σ[p][c]) / L[ii][ii]
    for (std::size_t c = 0; c < k; ++c) run[c] = cx[c * k + ii];
    for (std::size_t p = ii + 1; p < k; ++p) {
      const R l = lg[p * k + ii];
      const R* TYCHE_RESTRICT sp = b + p * k;
      for (std::size_t c = 0; c < k; ++c) run[c] -= l * sp[c];
    }
    for (std::size_t c = 0; c < k; ++c) b[ii * k + c] = run[c] / lg[ii * k + ii];
  }
  for (std::size_t r = 0; r < k; ++r)
    for (std::size_t c = 0; c < r; ++c) b[r * k + c] = b[c * k + r] = R(0.5) * (b[r * k + c] + b[c * k + r]);

  // 4. Σ's eigen-directions outside [1/c, c], back in θ's coordinates.
  if (!detail::symmetric_eigen(b, w, e, k)) return fail();
  const R cut = static_cast<R>(settings.cutoff);
  for (std::size_t p = 0; p < k; ++p)
    if (!(w[p] - w[p] == R(0))) return fail();
  // Σ ≥ λmax(Cg)^(−½)·I ≥ (trace Cg)^(−½)·I exactly (ΣCgΣ = Cx ≥ I and Cg ≤ λmax·I give
  // Σ² ≥ I/λmax); an eigenvalue computed below the bound is rounding (see B² above).
  // Such a direction is left out (λ = 1): its value says nothing, and raised to the bound it would
  // have the largest |log λ| of all, first to be kept under a cap.
  const R floor = R(1) / detail::lr_sqrt(trace_cg);
  R* keep = e;  // free after the decomposition: 1 for a direction kept
  for (std::size_t p = 0; p < k; ++p)
    keep[p] = !(w[p] > floor) || (w[p] <= cut && w[p] >= R(1) / cut) ? R(0) : R(1);
  const std::size_t cap = settings.max_rank > 0 && settings.max_rank < at.kmax ? settings.max_rank : at.kmax;
  detail::lr_keep_largest(w, keep, k, cap);
  int kept = 0;
  for (std::size_t p = 0; p < k; ++p) {
    if (keep[p] == R(0)) continue;
    R* u_p = factors + at.directions() + static_cast<std::size_t>(kept) * d;  // the unit direction
    for (std::size_t j = 0; j < d; ++j) {
      R s = 0;
      if (m < d) {
        for (std::size_t r = 0; r < k; ++r) s += q[r * d + j] * b[r * k + p];
      } else {
        s = b[j * k + p];
      }
      u_p[j] = s;
    }
    factors[at.lambda_minus_one() + static_cast<std::size_t>(kept)] = w[p] - R(1);
    ++kept;
  }
  factors[at.rank()] = static_cast<R>(kept);
  return kept;
}

}  // namespace tyche::samplers
