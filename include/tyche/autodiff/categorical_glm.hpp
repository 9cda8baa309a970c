// tyche/autodiff/categorical_glm.hpp — the value and vector–Jacobian rule of
// categorical_logit_glm (distributions/categorical_logit_glm.hpp): the log likelihood of a
// multinomial logistic regression with N observations, P predictors and K categories,
//
//   ηₙₖ = αₖ + Σₚ xₙₚ βₚₖ,   log L = Σₙ (ηₙ,yₙ − log Σₖ exp ηₙₖ),
//
// and its gradient, ∂log L/∂αₖ = Σₙ rₙₖ and ∂log L/∂βₚₖ = Σₙ xₙₚ rₙₖ with rₙₖ = [yₙ = k] − softmax(ηₙ)ₖ
// (Stan's categorical_logit_glm_lpmf computes the same quantities). One pass over X: each row's
// K linear predictors, its log-sum-exp (shifted by the largest), and the row's contribution to
// the gradient, accumulated in scratch space while the row is in cache; the reverse pass only
// scales the accumulated gradient by the adjoint. The op's value is a sum over rows, so that
// reverse sees one adjoint, and the forward pass can do the gradient's work without knowing it.
// O(N·P·K) multiply-adds each way of the single pass; scratch K·(P + 2) values.
#pragma once
#include <tyche/config.hpp>
#include <tyche/backends/simd/batch.hpp>
#include <tyche/scalar/math.hpp>
#include <tyche/scalar/traits.hpp>

#include <cmath>
#include <cstddef>

namespace tyche::ops {

/// The op of categorical_logit_glm: one value. Payload: X (n × p, row major, viewed), the
/// categories y (n values 1 … k, viewed). Operands: α (k values), then β (p·k values, class by
/// class: βₚₖ at [k·p + p], Stan's p × k matrix in its column-major order).
struct categorical_logit_glm_map {
  static constexpr const char* name = "categorical_logit_glm";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = true;
  static constexpr bool reads_data_matrix = true;  // X (compile/relocate.hpp, matrix_values_read)
  template <class... Cs>
  static constexpr std::size_t extent = 1;
  const double* x = nullptr;
  const double* y = nullptr;
  std::size_t n = 0;  // observations (rows of X)
  std::size_t p = 0;  // predictors (columns of X)
  std::size_t k = 0;  // categories
  bool operator==(const categorical_logit_glm_map&) const = default;

  /// f(x, n·p), f(y, n) (compile/relocate.hpp).
  template <class F>
  void for_each_data_buffer(std::size_t, F&& f) {
    if (x != nullptr) f(x, n * p);
    if (y != nullptr) f(y, n);
  }

  /// The gradient's accumulators ∂/∂α (k) and ∂/∂β (p·k), then a row's η (k).
  std::size_t scratch_size(std::size_t, const std::size_t*) const { return k * (p + 2); }

  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*, T* scratch) const {
    const T* TYCHE_RESTRICT alpha = in[0];
    const T* TYCHE_RESTRICT beta = in[1];
    T* TYCHE_RESTRICT g_alpha = scratch;
    T* TYCHE_RESTRICT g_beta = g_alpha + k;
    T* TYCHE_RESTRICT eta = g_beta + p * k;
    for (std::size_t j = 0; j < k * (p + 1); ++j) scratch[j] = lift<T>(0.0);
    T log_l = lift<T>(0.0);
    for (std::size_t r = 0; r < n; ++r) {
      const double* TYCHE_RESTRICT xr = x + r * p;
      // Four categories at a time: four independent sums, each xₙⱼ read once for them.
      std::size_t c = 0;
      for (; c + 4 <= k; c += 4) {
        const T* TYCHE_RESTRICT b0 = beta + c * p;
        const T* TYCHE_RESTRICT b1 = b0 + p;
        const T* TYCHE_RESTRICT b2 = b1 + p;
        const T* TYCHE_RESTRICT b3 = b2 + p;
        T a0 = alpha[c], a1 = alpha[c + 1], a2 = alpha[c + 2], a3 = alpha[c + 3];
        for (std::size_t j = 0; j < p; ++j) {
          const T xj = lift<T>(xr[j]);
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
        for (std::size_t j = 0; j < p; ++j) acc = acc + lift<T>(xr[j]) * bc[j];
        eta[c] = acc;
      }
      const std::size_t yr = static_cast<std::size_t>(y[r]) - 1;
      const T eta_y = eta[yr];
      T m = eta[0];
      for (std::size_t c = 1; c < k; ++c) m = math::max(m, eta[c]);
      T total = lift<T>(0.0);
      for (std::size_t c = 0; c < k; ++c) {
        eta[c] = math::exp(eta[c] - m);  // from here on, exp(η − m)
        total = total + eta[c];
      }
      // log softmax(η)_y = (η_y − m) − log Σ exp(η − m), with total ≥ 1 (the largest term is 1).
      log_l = log_l + (eta_y - m) - math::log(total);
      // The row's part of the gradient: r_c = [y = c] − softmax(η)_c.
      const T inv_total = lift<T>(1.0) / total;
      for (std::size_t c = 0; c < k; ++c) {
        eta[c] = (c == yr ? lift<T>(1.0) : lift<T>(0.0)) - eta[c] * inv_total;  // r_c from here
        g_alpha[c] = g_alpha[c] + eta[c];
      }
      c = 0;
      for (; c + 4 <= k; c += 4) {
        T* TYCHE_RESTRICT g0 = g_beta + c * p;
        T* TYCHE_RESTRICT g1 = g0 + p;
        T* TYCHE_RESTRICT g2 = g1 + p;
        T* TYCHE_RESTRICT g3 = g2 + p;
        const T r0 = eta[c], r1 = eta[c + 1], r2 = eta[c + 2], r3 = eta[c + 3];
        for (std::size_t j = 0; j < p; ++j) {
          const T xj = lift<T>(xr[j]);
          g0[j] = g0[j] + xj * r0;
          g1[j] = g1[j] + xj * r1;
          g2[j] = g2[j] + xj * r2;
          g3[j] = g3[j] + xj * r3;
        }
      }
      for (; c < k; ++c) {
        T* TYCHE_RESTRICT gc = g_beta + c * p;
        const T rc = eta[c];
        for (std::size_t j = 0; j < p; ++j) gc[j] = gc[j] + lift<T>(xr[j]) * rc;
      }
    }
    out[0] = log_l;
  }

  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const*, const std::size_t*, T* const* in_adj,
                        T* scratch) const {
    const T a0 = adj[0];
    const T* g_alpha = scratch;
    const T* g_beta = g_alpha + k;
    for (std::size_t c = 0; c < k; ++c) in_adj[0][c] += a0 * g_alpha[c];
    for (std::size_t j = 0; j < p * k; ++j) in_adj[1][j] += a0 * g_beta[j];
  }
};

}  // namespace tyche::ops
