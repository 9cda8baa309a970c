// tyche/autodiff/kalman.hpp — the log density of a Gaussian dynamic linear model by the Kalman
// filter, and its vector–Jacobian product (the op contract: autodiff/vector_ops.hpp;
// docs/design/vector-ops.md):
//
//   gaussian_dlm_map  log p(y | F, G, V, W, m0, C0) of the r × T observations y of the model
//                     yₜ ~ N(Fᵀ θₜ, V), θₜ ~ N(G θₜ₋₁, W), θ₀ ~ N(m0, C0) (Stan's
//                     gaussian_dlm_obs; one value)
//
// Forward (per step t, from the filtered mean m and covariance C of θₜ₋₁ given y₁ … yₜ₋₁):
//   a = G m,  R = G C Gᵀ + W,  P = R F,  Q = Fᵀ P + V,  e = yₜ − Fᵀ a,  s = Q⁻¹ e,
//   log p(yₜ | y₁ … yₜ₋₁) = −½ (r log 2π + log det Q + eᵀ s),
//   m ← a + P s,  C ← R − P Q⁻¹ Pᵀ
// (West and Harrison, "Bayesian Forecasting and Dynamic Models", 1997, Theorem 4.1; Stan Math's
// gaussian_dlm_obs_lpdf states the same filter). Q is factored by Cholesky (NaN, a rejected
// point, where it is not positive definite); Q and each new C are symmetrised, ½(M + Mᵀ), so
// that rounding never makes them drift apart from symmetric matrices over many steps.
//
// Reverse: the filter's steps in reverse order, from the matrices each step computed (kept in
// scratch by the forward pass of the same evaluation: T (2n + 2n² + 2nr + r² + 2r) values), with
// the adjoints of m and C carried back from step t + 1. With C̄ the (symmetrised) adjoint of the new
// C, m̄ that of the new m and ℓ̄ the output's: R̄ = C̄, P̄ = −2 C̄ P Q⁻¹ + m̄ sᵀ, (Q⁻¹)‾ = −Pᵀ C̄ P +
// s̄ eᵀ with s̄ = Pᵀ m̄ − ½ ℓ̄ e, ē = −½ ℓ̄ s + Q⁻¹ s̄, Q̄ = sym(−½ ℓ̄ Q⁻¹ − Q⁻¹ (Q⁻¹)‾ Q⁻¹); then
// ȳₜ = ē, F̄ += a (−ē)ᵀ + P Q̄ + R P̄, ā = m̄ − F ē, V̄ += Q̄, R̄ += P̄ Fᵀ, W̄ += R̄,
// Ḡ += (R̄ + R̄ᵀ) G C + ā mᵀ, and the adjoints carried to step t − 1: m̄ = Gᵀ ā, C̄ = Gᵀ R̄ G
// (the matrix rules of Giles, "Collected matrix derivative results for forward and reverse mode
// algorithmic differentiation", 2008). O(T (n³ + n² r + r³)) each way.
//
// Matrices are vectors of their entries in row-major order: y r × T (Stan's shape: column t is
// the observation at time t + 1), F n × r, G n × n, V r × r (or its r diagonal entries), W and C0
// n × n, m0 n. V, W and C0 are read through their lower triangles (the symmetric matrices those
// define; their adjoints go to the lower triangles), as the other ops read covariance matrices.
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/multivariate_ops.hpp>
#include <tyche/autodiff/vector_ops.hpp>
#include <tyche/core/expr.hpp>
#include <tyche/scalar/math.hpp>
#include <tyche/scalar/traits.hpp>

#include <cstddef>

namespace tyche {

namespace detail {

/// Where the Kalman filter's values live in the op's scratch (offsets, in values). Each step t
/// has a block of its own (at block(t)) that keeps, from the forward pass for the reverse pass,
/// the mean m it started from and the matrices it computed (a, G C, R, P, P Q⁻¹, Q⁻¹, e, s);
/// the rest is shared: Q and its factors, the covariances C of the current and the next step,
/// and the adjoints of one step (reverse).
struct dlm_layout {
  std::size_t n = 1, r = 1, steps = 1;
  std::size_t m = 0, a = 0, gc = 0, rr = 0, p = 0, pqi = 0, qi = 0, e = 0, s = 0, stride = 0;  // in a step's block
  std::size_t blocks = 0, q = 0, l = 0, linv = 0, c_now = 0, c_next = 0;                        // shared
  std::size_t mb = 0, cb = 0, ab = 0, rb = 0, pb = 0, qb = 0, qib = 0, sb = 0, eb = 0, tmp = 0;  // shared adjoints
  std::size_t total = 0;
  TYCHE_HD dlm_layout(std::size_t n_, std::size_t r_, std::size_t steps_) : n(n_), r(r_), steps(steps_) {
    std::size_t at = 0;
    auto take = [&](std::size_t size) {
      const std::size_t here = at;
      at += size;
      return here;
    };
    const std::size_t n2 = n * n, r2 = r * r, nr = n * r;
    m = take(n), a = take(n), gc = take(n2), rr = take(n2), p = take(nr), pqi = take(nr), qi = take(r2),
    e = take(r), s = take(r);
    stride = at;
    blocks = 0;
    at = steps * stride;
    q = take(r2), l = take(r2), linv = take(r2), c_now = take(n2), c_next = take(n2);
    mb = take(n), cb = take(n2), ab = take(n), rb = take(n2), pb = take(nr), qb = take(r2), qib = take(r2),
    sb = take(r), eb = take(r), tmp = take(n2 > nr ? (n2 > r2 ? n2 : r2) : (nr > r2 ? nr : r2));  // C̄ P, Q⁻¹ (Q⁻¹)‾, R̄ G
    total = at;
  }
  TYCHE_HD std::size_t block(std::size_t t) const { return blocks + t * stride; }
};

/// The operands of gaussian_dlm_map, in order.
enum dlm_operand : std::size_t { dlm_y, dlm_f, dlm_g, dlm_v, dlm_w, dlm_m0, dlm_c0 };

/// ½(M + Mᵀ) in place, M k × k.
template <class T>
TYCHE_HD void symmetrise(std::size_t k, T* m) {
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < i; ++j) {
      const T v = lift<T>(0.5) * (m[i * k + j] + m[j * k + i]);
      m[i * k + j] = v;
      m[j * k + i] = v;
    }
}

/// Adds the adjoint g of a symmetric k × k matrix read through its lower triangle to that
/// triangle's adjoint: entry (i, j), j < i, stands for both (i, j) and (j, i).
template <class T>
TYCHE_HD void add_to_lower(std::size_t k, const T* g, T* lower_adj) {
  for (std::size_t i = 0; i < k; ++i) {
    for (std::size_t j = 0; j < i; ++j) lower_adj[i * k + j] += g[i * k + j] + g[j * k + i];
    lower_adj[i * k + i] += g[i * k + i];
  }
}

/// One step of the Kalman filter at time t from the state (m, C) (m in the step's block w, C at
/// c): fills the block's a, G C, R, P, Q⁻¹, e and s (and the shared Q and its Cholesky factor),
/// and returns −½ (log det Q + eᵀ Q⁻¹ e) (the constant −½ r log 2π is the caller's). With one
/// observation per step (r = 1), Q⁻¹ = 1/Q and ½ log det Q = ½ log Q, without the factorisation.
template <class T>
TYCHE_HD T dlm_predict(const dlm_layout& d, bool diagonal_v, std::size_t t, const T* c, const T* const* in, T* w,
                       T* shared) {
  const std::size_t n = d.n, r = d.r;
  const T* y = in[dlm_y];
  const T* f = in[dlm_f];
  const T* g = in[dlm_g];
  const T* v = in[dlm_v];
  const T* wc = in[dlm_w];
  const T* m = w + d.m;
  T* a = w + d.a;
  T* gc = w + d.gc;
  T* rr = w + d.rr;
  T* p = w + d.p;
  T* e = w + d.e;
  T* s = w + d.s;
  T* qi = w + d.qi;
  T* q = shared + d.q;
  T* l = shared + d.l;
  for (std::size_t i = 0; i < n; ++i) {
    T acc = lift<T>(0.0);
    for (std::size_t j = 0; j < n; ++j) acc = acc + g[i * n + j] * m[j];
    a[i] = acc;
    for (std::size_t k = 0; k < n; ++k) {
      T gck = lift<T>(0.0);
      for (std::size_t j = 0; j < n; ++j) gck = gck + g[i * n + j] * c[j * n + k];
      gc[i * n + k] = gck;
    }
  }
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < n; ++k) {
      T acc = symmetric_at(wc, n, i, k);
      for (std::size_t j = 0; j < n; ++j) acc = acc + gc[i * n + j] * g[k * n + j];
      rr[i * n + k] = acc;
    }
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < r; ++j) {
      T acc = lift<T>(0.0);
      for (std::size_t k = 0; k < n; ++k) acc = acc + rr[i * n + k] * f[k * r + j];
      p[i * r + j] = acc;
    }
  for (std::size_t j = 0; j < r; ++j) {
    T fa = lift<T>(0.0);
    for (std::size_t i = 0; i < n; ++i) fa = fa + f[i * r + j] * a[i];
    e[j] = y[j * d.steps + t] - fa;
    for (std::size_t k = 0; k < r; ++k) {
      T acc = diagonal_v ? (j == k ? v[j] : lift<T>(0.0)) : symmetric_at(v, r, j, k);
      for (std::size_t i = 0; i < n; ++i) acc = acc + f[i * r + j] * p[i * r + k];
      q[j * r + k] = acc;
    }
  }
  if (r == 1) {
    qi[0] = lift<T>(1.0) / q[0];
    s[0] = qi[0] * e[0];
    return -lift<T>(0.5) * (math::log(q[0]) + e[0] * s[0]);
  }
  symmetrise(r, q);
  cholesky_forward(r, q, l);
  inverse_from_cholesky(r, l, shared + d.linv, qi);
  T half_log_det = lift<T>(0.0), quad = lift<T>(0.0);
  for (std::size_t j = 0; j < r; ++j) {
    half_log_det = half_log_det + math::log(l[j * r + j]);
    T acc = lift<T>(0.0);
    for (std::size_t k = 0; k < r; ++k) acc = acc + qi[j * r + k] * e[k];
    s[j] = acc;
    quad = quad + e[j] * acc;
  }
  return -(half_log_det + lift<T>(0.5) * quad);
}

/// The update of dlm_predict's step (block w): P Q⁻¹ into the block, and the next state, m_new =
/// a + P s and C_new = sym(R − P Q⁻¹ Pᵀ) (either may be null: not wanted after the last step).
template <class T>
TYCHE_HD void dlm_update(const dlm_layout& d, T* w, T* m_new, T* c_new) {
  const std::size_t n = d.n, r = d.r;
  const T* a = w + d.a;
  const T* rr = w + d.rr;
  const T* p = w + d.p;
  const T* s = w + d.s;
  const T* qi = w + d.qi;
  T* pqi = w + d.pqi;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < r; ++j) {
      T acc = lift<T>(0.0);
      for (std::size_t k = 0; k < r; ++k) acc = acc + p[i * r + k] * qi[k * r + j];
      pqi[i * r + j] = acc;
    }
  if (m_new == nullptr) return;
  for (std::size_t i = 0; i < n; ++i) {
    T acc = a[i];
    for (std::size_t j = 0; j < r; ++j) acc = acc + p[i * r + j] * s[j];
    m_new[i] = acc;
  }
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < n; ++k) {
      T acc = rr[i * n + k];
      for (std::size_t j = 0; j < r; ++j) acc = acc - pqi[i * r + j] * p[k * r + j];
      c_new[i * n + k] = acc;
    }
  symmetrise(n, c_new);
}

/// The filter with one state and one observation per step (n = r = 1: the local-level model),
/// in scalars held in registers: the same values as the general loops (the same block fields, so
/// that either reverse pass could read them), without the loops over sizes of 1 and the stores
/// and reloads that the general code's pointers into one scratch force.
template <class T>
TYCHE_HD T dlm_forward_scalar(const dlm_layout& d, const T* const* in, T* scratch) {
  const T* y = in[dlm_y];
  const T f = in[dlm_f][0], g = in[dlm_g][0], v = in[dlm_v][0], w = in[dlm_w][0];
  T m = in[dlm_m0][0], c = in[dlm_c0][0];
  T lp = lift<T>(0.0);
  for (std::size_t t = 0; t < d.steps; ++t) {
    T* b = scratch + d.block(t);
    const T a = g * m, gc = g * c;
    const T rr = gc * g + w;
    const T p = rr * f;
    const T q = f * p + v;
    const T qi = lift<T>(1.0) / q;
    const T e = y[t] - f * a;
    const T s = qi * e;
    lp = lp - lift<T>(0.5) * (math::log(q) + e * s);
    b[d.m] = m, b[d.a] = a, b[d.gc] = gc, b[d.rr] = rr, b[d.p] = p, b[d.pqi] = p * qi, b[d.qi] = qi, b[d.e] = e,
    b[d.s] = s;
    m = a + p * s;
    c = rr - p * qi * p;
  }
  return lp;
}

/// The reverse pass of dlm_forward_scalar (the general reverse pass with n = r = 1 written out).
template <class T>
TYCHE_HD void dlm_reverse_scalar(const dlm_layout& d, const T& lb, const T* const* in, T* const* in_adj,
                                 const T* scratch) {
  const T f = in[dlm_f][0], g = in[dlm_g][0];
  const T half_lb = lift<T>(0.5) * lb;
  T mb = lift<T>(0.0), cb = lift<T>(0.0), fb = lift<T>(0.0), gb = lift<T>(0.0), vb = lift<T>(0.0),
    wb = lift<T>(0.0);
  for (std::size_t t = d.steps; t-- > 0;) {
    const T* b = scratch + d.block(t);
    const T m = b[d.m], a = b[d.a], gc = b[d.gc], rr = b[d.rr], p = b[d.p], pqi = b[d.pqi], qi = b[d.qi],
            e = b[d.e], s = b[d.s];
    T rb = cb;
    T pb = lift<T>(-2.0) * cb * pqi + mb * s;
    const T sb = p * mb - half_lb * e;
    const T qib = sb * e - p * cb * p;
    const T eb = qi * sb - half_lb * s;
    const T qb = -half_lb * qi - qi * qib * qi;
    in_adj[dlm_y][t] += eb;
    fb = fb + p * qb - a * eb;
    const T ab = mb - f * eb;
    pb = pb + f * qb;
    vb = vb + qb;
    rb = rb + pb * f;
    fb = fb + rr * pb;
    wb = wb + rb;
    gb = gb + lift<T>(2.0) * rb * gc + ab * m;
    mb = g * ab;
    cb = g * rb * g;
  }
  in_adj[dlm_f][0] += fb;
  in_adj[dlm_g][0] += gb;
  in_adj[dlm_v][0] += vb;
  in_adj[dlm_w][0] += wb;
  in_adj[dlm_m0][0] += mb;
  in_adj[dlm_c0][0] += cb;
}

}  // namespace detail

namespace ops {

/// log p(y | F, G, V, W, m0, C0) of a Gaussian dynamic linear model by the Kalman filter (see the
/// top of this file): operands y (r·T), F (n·r), G (n²), V (r², or r with diagonal_v), W (n²),
/// m0 (n), C0 (n²); one value. Scratch: every step's matrices (dlm_layout).
struct gaussian_dlm_map {
  static constexpr const char* name = "gaussian_dlm_obs";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t n = 1;      // the state's dimension
  std::size_t r = 1;      // the observations' dimension
  std::size_t steps = 1;  // T
  bool diagonal_v = false;
  template <class...>
  static constexpr std::size_t extent = 1;
  bool operator==(const gaussian_dlm_map&) const = default;
  std::size_t scratch_size(std::size_t, const std::size_t*) const { return detail::dlm_layout(n, r, steps).total; }
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*, T* scratch) const {
    const detail::dlm_layout d(n, r, steps);
    const T norm = lift<T>(double(steps) * double(r) * 0.91893853320467274178);  // ½ log 2π per value
    if (n == 1 && r == 1) {
      out[0] = detail::dlm_forward_scalar(d, in, scratch) - norm;
      return;
    }
    T* c = scratch + d.c_now;
    T* c_next = scratch + d.c_next;
    T* m0 = scratch + d.block(0) + d.m;
    for (std::size_t i = 0; i < n; ++i) {
      m0[i] = in[detail::dlm_m0][i];
      for (std::size_t k = 0; k < n; ++k) c[i * n + k] = detail::symmetric_at(in[detail::dlm_c0], n, i, k);
    }
    T lp = lift<T>(0.0);
    for (std::size_t t = 0; t < steps; ++t) {
      T* w = scratch + d.block(t);
      lp = lp + detail::dlm_predict(d, diagonal_v, t, c, in, w, scratch);
      if (t + 1 < steps) {
        detail::dlm_update(d, w, scratch + d.block(t + 1) + d.m, c_next);
        T* const swap = c;
        c = c_next;
        c_next = swap;
      } else {
        detail::dlm_update(d, w, static_cast<T*>(nullptr), static_cast<T*>(nullptr));  // P Q⁻¹, for reverse
      }
    }
    out[0] = lp - norm;
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj, T* scratch) const {
    const detail::dlm_layout d(n, r, steps);
    if (n == 1 && r == 1) {
      detail::dlm_reverse_scalar(d, adj[0], in, in_adj, scratch);
      return;
    }
    const T* f = in[detail::dlm_f];
    const T* g = in[detail::dlm_g];
    T* mb = scratch + d.mb;  // m̄, C̄: the adjoints of the state the current step produced
    T* cb = scratch + d.cb;
    T* ab = scratch + d.ab;
    T* rb = scratch + d.rb;
    T* pb = scratch + d.pb;
    T* qb = scratch + d.qb;
    T* qib = scratch + d.qib;
    T* sb = scratch + d.sb;
    T* eb = scratch + d.eb;
    T* tmp = scratch + d.tmp;
    const T lb = adj[0];
    const T half_lb = lift<T>(0.5) * lb;
    for (std::size_t i = 0; i < n; ++i) mb[i] = lift<T>(0.0);
    for (std::size_t i = 0; i < n * n; ++i) cb[i] = lift<T>(0.0);
    // Each step's matrices were kept in its block by the forward pass of this evaluation.
    for (std::size_t t = steps; t-- > 0;) {
      const T* w = scratch + d.block(t);
      const T* m = w + d.m;
      const T* a = w + d.a;
      const T* gc = w + d.gc;
      const T* rr = w + d.rr;
      const T* p = w + d.p;
      const T* pqi = w + d.pqi;
      const T* qi = w + d.qi;
      const T* e = w + d.e;
      const T* s = w + d.s;
      // The update: C_new = sym(R − P Q⁻¹ Pᵀ) and m_new = a + P s (none after the last step).
      detail::symmetrise(n, cb);  // the adjoint of R − P Q⁻¹ Pᵀ before symmetrising
      for (std::size_t i = 0; i < n * n; ++i) rb[i] = cb[i];
      for (std::size_t i = 0; i < n; ++i) {
        ab[i] = mb[i];
        for (std::size_t k = 0; k < r; ++k) {
          T acc = lift<T>(0.0), cp = lift<T>(0.0);
          for (std::size_t l = 0; l < n; ++l) {
            acc = acc + cb[i * n + l] * pqi[l * r + k];
            cp = cp + cb[i * n + l] * p[l * r + k];
          }
          pb[i * r + k] = lift<T>(-2.0) * acc + mb[i] * s[k];
          tmp[i * r + k] = cp;  // C̄ P
        }
      }
      for (std::size_t j = 0; j < r; ++j) {
        T acc = lift<T>(0.0);
        for (std::size_t i = 0; i < n; ++i) acc = acc + p[i * r + j] * mb[i];
        sb[j] = acc - half_lb * e[j];
      }
      for (std::size_t j = 0; j < r; ++j)
        for (std::size_t k = 0; k < r; ++k) {
          T acc = lift<T>(0.0);
          for (std::size_t i = 0; i < n; ++i) acc = acc + p[i * r + j] * tmp[i * r + k];
          qib[j * r + k] = sb[j] * e[k] - acc;
        }
      for (std::size_t j = 0; j < r; ++j) {
        T acc = lift<T>(0.0);
        for (std::size_t k = 0; k < r; ++k) acc = acc + qi[j * r + k] * sb[k];
        eb[j] = acc - half_lb * s[j];
      }
      // Q̄ = sym(−½ ℓ̄ Q⁻¹ − Q⁻¹ (Q⁻¹)‾ Q⁻¹) (tmp: Q⁻¹ (Q⁻¹)‾).
      for (std::size_t j = 0; j < r; ++j)
        for (std::size_t k = 0; k < r; ++k) {
          T acc = lift<T>(0.0);
          for (std::size_t l = 0; l < r; ++l) acc = acc + qi[j * r + l] * qib[l * r + k];
          tmp[j * r + k] = acc;
        }
      for (std::size_t j = 0; j < r; ++j)
        for (std::size_t k = 0; k < r; ++k) {
          T acc = lift<T>(0.0);
          for (std::size_t l = 0; l < r; ++l) acc = acc + tmp[j * r + l] * qi[l * r + k];
          qb[j * r + k] = -half_lb * qi[j * r + k] - acc;
        }
      detail::symmetrise(r, qb);
      // e = yₜ − Fᵀ a; Q = Fᵀ P + V; P = R F.
      for (std::size_t j = 0; j < r; ++j) in_adj[detail::dlm_y][j * steps + t] += eb[j];
      T* fb = in_adj[detail::dlm_f];
      for (std::size_t i = 0; i < n; ++i) {
        T acc = lift<T>(0.0);
        for (std::size_t j = 0; j < r; ++j) {
          acc = acc + f[i * r + j] * eb[j];
          T fq = lift<T>(0.0);
          for (std::size_t l = 0; l < r; ++l) fq = fq + p[i * r + l] * qb[j * r + l];
          fb[i * r + j] += fq - a[i] * eb[j];
        }
        ab[i] = ab[i] - acc;
        for (std::size_t l = 0; l < r; ++l) {
          T pf = lift<T>(0.0);
          for (std::size_t j = 0; j < r; ++j) pf = pf + f[i * r + j] * qb[j * r + l];
          pb[i * r + l] = pb[i * r + l] + pf;
        }
      }
      if (diagonal_v)
        for (std::size_t j = 0; j < r; ++j) in_adj[detail::dlm_v][j] += qb[j * r + j];
      else
        detail::add_to_lower(r, qb, in_adj[detail::dlm_v]);
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t k = 0; k < n; ++k) {
          T acc = lift<T>(0.0);
          for (std::size_t j = 0; j < r; ++j) acc = acc + pb[i * r + j] * f[k * r + j];
          rb[i * n + k] = rb[i * n + k] + acc;
        }
      for (std::size_t k = 0; k < n; ++k)
        for (std::size_t j = 0; j < r; ++j) {
          T acc = lift<T>(0.0);
          for (std::size_t i = 0; i < n; ++i) acc = acc + rr[i * n + k] * pb[i * r + j];
          fb[k * r + j] += acc;
        }
      // R = G C Gᵀ + W; a = G m.
      detail::add_to_lower(n, rb, in_adj[detail::dlm_w]);
      T* gb = in_adj[detail::dlm_g];
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) {
          T acc = ab[i] * m[j];
          for (std::size_t l = 0; l < n; ++l) acc = acc + (rb[i * n + l] + rb[l * n + i]) * gc[l * n + j];
          gb[i * n + j] += acc;
        }
      for (std::size_t j = 0; j < n; ++j) {
        T acc = lift<T>(0.0);
        for (std::size_t i = 0; i < n; ++i) acc = acc + g[i * n + j] * ab[i];
        mb[j] = acc;
      }
      for (std::size_t i = 0; i < n; ++i)  // tmp = R̄ G
        for (std::size_t k = 0; k < n; ++k) {
          T acc = lift<T>(0.0);
          for (std::size_t l = 0; l < n; ++l) acc = acc + rb[i * n + l] * g[l * n + k];
          tmp[i * n + k] = acc;
        }
      for (std::size_t j = 0; j < n; ++j)
        for (std::size_t k = 0; k < n; ++k) {
          T acc = lift<T>(0.0);
          for (std::size_t i = 0; i < n; ++i) acc = acc + g[i * n + j] * tmp[i * n + k];
          cb[j * n + k] = acc;
        }
    }
    for (std::size_t i = 0; i < n; ++i) in_adj[detail::dlm_m0][i] += mb[i];
    detail::add_to_lower(n, cb, in_adj[detail::dlm_c0]);
  }
};

}  // namespace ops

}  // namespace tyche
