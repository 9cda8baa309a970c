// tyche/autodiff/categorical_glm.hpp — the value and vector–Jacobian rule of
// categorical_logit_glm (distributions/categorical_logit_glm.hpp): the log likelihood of each
// row of a multinomial logistic regression with N observations, P predictors and K categories,
//
//   ηₙₖ = αₖ + Σₚ xₙₚ βₚₖ,   ℓₙ = ηₙ,yₙ − log Σₖ exp ηₙₖ,
//
// and the vector–Jacobian product, ∂/∂αₖ = Σₙ wₙ rₙₖ and ∂/∂βₚₖ = Σₙ wₙ xₙₚ rₙₖ with
// rₙₖ = [yₙ = k] − softmax(ηₙ)ₖ and wₙ the adjoint of ℓₙ (Stan's categorical_logit_glm_lpmf
// computes the same quantities). The family sums the N values, so every wₙ is the same number:
// the forward pass then does the gradient's work too, in its one pass over X — each row's K
// linear predictors, their log-sum-exp (shifted by the largest) and the row's Σ rₙₖ terms,
// accumulated while the row is in cache — and the reverse pass scales the sums by that adjoint.
// Where the adjoints differ (the rows' values used one by one), the reverse pass reads X again.
// An evaluation without a gradient takes forward_value, which leaves the sums out.
// The N values are what leave-one-out cross-validation takes row by row (model::
// pointwise_log_likelihood). O(N·P·K) multiply-adds; scratch K·(P + 2) values.
#pragma once
#include <tyche/config.hpp>
#include <tyche/backends/simd/batch.hpp>
#include <tyche/backends/simd/lanes.hpp>
#include <tyche/core/expr.hpp>
#include <tyche/scalar/math.hpp>
#include <tyche/scalar/traits.hpp>

#include <cmath>
#include <cstddef>

namespace tyche::ops {

/// The op of categorical_logit_glm: one value per row of X. Payload: X (n × p, row major,
/// viewed; E = double, or float for a matrix of floats: each value converted to the scalar type,
/// the sums in it), the categories y (n values 1 … k, viewed). Operands: α (k values), then β
/// (p·k values, category by category: βⱼ,c at [c·p + j], Stan's p × k matrix in its
/// column-major order).
template <class E = double>
struct basic_categorical_logit_glm_map {
  static constexpr const char* name = "categorical_logit_glm";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = true;
  static constexpr bool reads_data_matrix = true;  // X (compile/relocate.hpp, matrix_values_read)
  template <class... Cs>
  static constexpr std::size_t extent = dynamic_extent;
  const E* x = nullptr;
  const double* y = nullptr;
  std::size_t n = 0;  // observations (rows of X)
  std::size_t p = 0;  // predictors (columns of X)
  std::size_t k = 0;  // categories
  bool operator==(const basic_categorical_logit_glm_map&) const = default;

  /// f(x, n·p), f(y, n) (compile/relocate.hpp).
  template <class F>
  void for_each_data_buffer(std::size_t, F&& f) {
    if (x != nullptr) f(x, n * p);
    if (y != nullptr) f(y, n);
  }

  /// The gradient's sums Σₙ rₙ (k) and Σₙ xₙ rₙ (p·k, category by category), then a row's η (k).
  std::size_t scratch_size(std::size_t, const std::size_t*) const { return k * (p + 2); }

  /// Row r's η (into eta) and its value ℓ; eta then holds r_c = [y = c] − softmax(η)_c (with
  /// Residuals; without, exp(η_c − max η)).
  template <class T, bool Residuals = true>
  TYCHE_HD T row(std::size_t r, const T* TYCHE_RESTRICT alpha, const T* TYCHE_RESTRICT beta,
                 T* TYCHE_RESTRICT eta) const {
    const E* TYCHE_RESTRICT xr = x + r * p;
    // Four categories at a time: four independent sums, each xₙⱼ read once for them.
    std::size_t c = 0;
    for (; c + 4 <= k; c += 4) {
      const T* TYCHE_RESTRICT b0 = beta + c * p;
      const T* TYCHE_RESTRICT b1 = b0 + p;
      const T* TYCHE_RESTRICT b2 = b1 + p;
      const T* TYCHE_RESTRICT b3 = b2 + p;
      T a0 = alpha[c], a1 = alpha[c + 1], a2 = alpha[c + 2], a3 = alpha[c + 3];
      for (std::size_t j = 0; j < p; ++j) {
        const T xj = lift<T>(static_cast<double>(xr[j]));
        a0 = a0 + xj * b0[j];
        a1 = a1 + xj * b1[j];
        a2 = a2 + xj * b2[j];
        a3 = a3 + xj * b3[j];
      }
      eta[c] = a0;
      eta[c + 1] = a1;
      eta[c + 2] = a2;
      eta[c + 3] = a3;
    }
    for (; c < k; ++c) {
      const T* TYCHE_RESTRICT bc = beta + c * p;
      T acc = alpha[c];
      for (std::size_t j = 0; j < p; ++j) acc = acc + lift<T>(static_cast<double>(xr[j])) * bc[j];
      eta[c] = acc;
    }
    const std::size_t yr = static_cast<std::size_t>(y[r]) - 1;
    const T eta_y = eta[yr];
    T m = eta[0];
    for (c = 1; c < k; ++c) m = math::max(m, eta[c]);
    T total = lift<T>(0.0);
    for (c = 0; c < k; ++c) {
      eta[c] = math::exp(eta[c] - m);  // exp(η − m) from here
      total = total + eta[c];
    }
    if constexpr (Residuals) {
      const T inv_total = lift<T>(1.0) / total;
      for (c = 0; c < k; ++c) eta[c] = (c == yr ? lift<T>(1.0) : lift<T>(0.0)) - eta[c] * inv_total;  // r_c
    }
    // log softmax(η)_y = (η_y − m) − log Σ exp(η − m), with the sum ≥ 1 (its largest term is 1).
    return (eta_y - m) - math::log(total);
  }
  /// Σ_c, j: g_beta[c·p + j] += xᵣⱼ · w · r_c and g_alpha[c] += w · r_c (r in eta).
  template <class T>
  TYCHE_HD void add_row(std::size_t r, const T* TYCHE_RESTRICT eta, const T& w, T* TYCHE_RESTRICT g_alpha,
                        T* TYCHE_RESTRICT g_beta) const {
    const E* TYCHE_RESTRICT xr = x + r * p;
    std::size_t c = 0;
    for (; c + 4 <= k; c += 4) {
      T* TYCHE_RESTRICT g0 = g_beta + c * p;
      T* TYCHE_RESTRICT g1 = g0 + p;
      T* TYCHE_RESTRICT g2 = g1 + p;
      T* TYCHE_RESTRICT g3 = g2 + p;
      const T r0 = w * eta[c], r1 = w * eta[c + 1], r2 = w * eta[c + 2], r3 = w * eta[c + 3];
      g_alpha[c] += r0;
      g_alpha[c + 1] += r1;
      g_alpha[c + 2] += r2;
      g_alpha[c + 3] += r3;
      for (std::size_t j = 0; j < p; ++j) {
        const T xj = lift<T>(static_cast<double>(xr[j]));
        g0[j] = g0[j] + xj * r0;
        g1[j] = g1[j] + xj * r1;
        g2[j] = g2[j] + xj * r2;
        g3[j] = g3[j] + xj * r3;
      }
    }
    for (; c < k; ++c) {
      T* TYCHE_RESTRICT gc = g_beta + c * p;
      const T rc = w * eta[c];
      g_alpha[c] += rc;
      for (std::size_t j = 0; j < p; ++j) gc[j] = gc[j] + lift<T>(static_cast<double>(xr[j])) * rc;
    }
  }

  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*, T* scratch) const {
    T* TYCHE_RESTRICT g_alpha = scratch;
    T* TYCHE_RESTRICT g_beta = scratch + k;
    T* TYCHE_RESTRICT eta = scratch + k * (p + 1);
    for (std::size_t c = 0; c < k; ++c) g_alpha[c] = lift<T>(0.0);
    for (std::size_t j = 0; j < p * k; ++j) g_beta[j] = lift<T>(0.0);
    const T one = lift<T>(1.0);
    for (std::size_t r = 0; r < n; ++r) {
      out[r] = row(r, in[0], in[1], eta);
      add_row(r, eta, one, g_alpha, g_beta);
    }
  }

  /// forward() without the gradient's sums, for an evaluation without a gradient (log_prob,
  /// the pointwise log-likelihood, Pathfinder's and ADVI's draws): K·(P + 1) multiply-adds per
  /// row fewer.
  template <class T>
  TYCHE_HD void forward_value(std::size_t, T* out, const T* const* in, const std::size_t*, T* scratch) const {
    T* TYCHE_RESTRICT eta = scratch + k * (p + 1);
    for (std::size_t r = 0; r < n; ++r) out[r] = row<T, false>(r, in[0], in[1], eta);
  }

  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const* in, const std::size_t*, T* const* in_adj,
                        T* scratch) const {
    if (n == 0) return;
    const T a0 = adj[0];
    bool same = true;
    for (std::size_t r = 1; r < n && same; ++r) same = !lane_traits<T>::any(adj[r] != a0);
    if (same) {  // the forward pass's sums, scaled
      const T* g_alpha = scratch;
      const T* g_beta = scratch + k;
      for (std::size_t c = 0; c < k; ++c) in_adj[0][c] += a0 * g_alpha[c];
      for (std::size_t j = 0; j < p * k; ++j) in_adj[1][j] += a0 * g_beta[j];
      return;
    }
    T* TYCHE_RESTRICT eta = scratch + k * (p + 1);
    for (std::size_t r = 0; r < n; ++r) {
      (void)row(r, in[0], in[1], eta);
      add_row(r, eta, adj[r], in_adj[0], in_adj[1]);
    }
  }
};

/// The op with X of doubles.
using categorical_logit_glm_map = basic_categorical_logit_glm_map<double>;

}  // namespace tyche::ops
