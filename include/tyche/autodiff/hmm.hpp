// tyche/autodiff/hmm.hpp — the value and vector–Jacobian rule of hmm_marginal
// (operations/hmm.hpp): the log marginal likelihood of a hidden Markov model with K states and
// N observations, the states summed out by the forward algorithm, and its gradient by the
// backward algorithm.
//
// With ω[k, t] the log density of observation t in state k, Γ the transition matrix
// (Γᵢⱼ = p(zₜ = j | zₜ₋₁ = i)) and ρ the initial distribution, L = Σ over all state paths z of
// ρ_{z₀} e^{ω[z₀, 0]} Πₜ Γ_{zₜ₋₁ zₜ} e^{ω[zₜ, t]}. Scaled forward pass (Rabiner 1989, section
// V.A; Stan's hmm_marginal computes the same quantity):
//   mₜ = maxₖ ω[k, t],  α̃ₜ(j) = e^{ω[j, t] − mₜ} · (t = 0: ρⱼ; else Σᵢ α̂ₜ₋₁(i) Γᵢⱼ),
//   cₜ = Σⱼ α̃ₜ(j),  α̂ₜ = α̃ₜ / cₜ,  log L = Σₜ (log cₜ + mₜ).
// Reverse, with β̂ the backward variables scaled by the same factors (β̂_{N−1} = 1,
// β̂ₜ₋₁(i) = Σⱼ Γᵢⱼ eⱼ, eⱼ = e^{ω[j, t] − mₜ} β̂ₜ(j) / cₜ) — so that α̂ₜ(k) β̂ₜ(k) is the posterior
// probability of state k at t:
//   ∂log L/∂ω[k, t] = α̂ₜ(k) β̂ₜ(k),  ∂log L/∂Γᵢⱼ = Σ_{t ≥ 1} α̂ₜ₋₁(i) eⱼ(t),
//   ∂log L/∂ρₖ = e^{ω[k, 0] − m₀} β̂₀(k) / c₀.
// O(N K²) each way; the N·K scaled forward variables and the N scales are kept in scratch space
// between the passes. A row of Γ or ρ that does not sum to 1 (within 1e-8) makes the value NaN
// (data are checked when the model is made; operations/hmm.hpp).
#pragma once
#include <tyche/config.hpp>
#include <tyche/backends/simd/batch.hpp>
#include <tyche/scalar/math.hpp>
#include <tyche/scalar/traits.hpp>

#include <cmath>
#include <cstddef>

namespace tyche::ops {

/// The op of hmm_marginal: one value. Operands: ω as one vector of K·N values (row k = state
/// k, row major: Stan's K × N log_omega) or as K vectors of N values (omega_rows = true); then
/// Γ as one vector of K² values (row major) or as its K rows (gamma_rows = true); then ρ (K).
struct hmm_marginal_map {
  static constexpr const char* name = "hmm_marginal";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;  // sizes only; the data are operands
  /// Its data operands are checked when it is made (log_omega may hold −inf: an observation
  /// impossible in a state), so joint(...)'s finiteness check does not look below it.
  static constexpr bool checks_own_data = true;
  template <class... Cs>
  static constexpr std::size_t extent = 1;
  std::size_t k = 0;  // states
  std::size_t n = 0;  // observations
  bool omega_rows = false;
  bool gamma_rows = false;
  bool operator==(const hmm_marginal_map&) const = default;

  /// α̂ (N·K), c (N), m (N), β̂ (K), e (K).
  std::size_t scratch_size(std::size_t, const std::size_t*) const { return n * k + 2 * n + 2 * k; }

  TYCHE_HD std::size_t gamma_operand() const { return omega_rows ? k : 1; }
  TYCHE_HD std::size_t rho_operand() const { return gamma_operand() + (gamma_rows ? k : 1); }
  template <class T>
  TYCHE_HD const T& omega(const T* const* in, std::size_t s, std::size_t t) const {
    return omega_rows ? in[s][t] : in[0][s * n + t];
  }
  template <class T>
  TYCHE_HD T& omega_adj(T* const* in_adj, std::size_t s, std::size_t t) const {
    return omega_rows ? in_adj[s][t] : in_adj[0][s * n + t];
  }
  template <class P>
  TYCHE_HD auto& gamma(P in, std::size_t i, std::size_t j) const {
    return gamma_rows ? in[gamma_operand() + i][j] : in[gamma_operand()][i * k + j];
  }

  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*, T* scratch) const {
    T* alpha = scratch;
    T* c = alpha + n * k;
    T* mx = c + n;
    const T* rho = in[rho_operand()];
    T log_l = lift<T>(0.0);
    for (std::size_t t = 0; t < n; ++t) {
      T m = omega(in, 0, t);
      for (std::size_t j = 1; j < k; ++j) m = math::max(m, omega(in, j, t));
      // Every state impossible at t (m = −inf): no shift, so that the scale is 0 and log L −inf.
      m = math::select(m > lift<T>(-INFINITY), m, lift<T>(0.0));
      T total = lift<T>(0.0);
      for (std::size_t j = 0; j < k; ++j) {
        T predicted;
        if (t == 0) {
          predicted = rho[j];
        } else {
          predicted = lift<T>(0.0);
          for (std::size_t i = 0; i < k; ++i) predicted = predicted + alpha[(t - 1) * k + i] * gamma(in, i, j);
        }
        const T a = predicted * math::exp(omega(in, j, t) - m);
        alpha[t * k + j] = a;
        total = total + a;
      }
      // A zero scale (no state possible given what came before) makes log L −inf; the forward
      // variables stay 0 instead of 0/0.
      const T safe_total = math::select(total > lift<T>(0.0), total, lift<T>(1.0));
      for (std::size_t j = 0; j < k; ++j) alpha[t * k + j] = alpha[t * k + j] / safe_total;
      c[t] = total;
      mx[t] = m;
      log_l = log_l + math::log(total) + m;
    }
    // Γ's rows and ρ must be distributions, as Stan's hmm_marginal checks (it throws): where one
    // sums to other than 1 by more than 1e-8 (in float, where a softmax's rounding alone reaches
    // 1e-7: 1e-5), or than 4 K ε where K values' rounding could reach that, the value is NaN — for
    // the sampler a point whose log density is not finite, rather than a likelihood from a matrix
    // that is not stochastic. Data were checked when the model was made (operations/hmm.hpp).
    constexpr bool single = sizeof(element_type_t<T>) < sizeof(double);
    const double rounding = 4.0 * static_cast<double>(k) * (single ? 1.1920929e-7 : 2.220446049250313e-16);
    const double base = single ? 1e-5 : 1e-8;
    const T tolerance = lift<T>(rounding > base ? rounding : base), one = lift<T>(1.0), nan = lift<T>(NAN);
    const auto require_one = [&](const T& sum) {
      log_l = math::select(sum - one <= tolerance, math::select(one - sum <= tolerance, log_l, nan), nan);
    };
    for (std::size_t i = 0; i < k; ++i) {
      T sum = lift<T>(0.0);
      for (std::size_t j = 0; j < k; ++j) sum = sum + gamma(in, i, j);
      require_one(sum);
    }
    T sum = lift<T>(0.0);
    for (std::size_t j = 0; j < k; ++j) sum = sum + rho[j];
    require_one(sum);
    out[0] = log_l;
  }

  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj, T* scratch) const {
    const T* alpha = scratch;
    const T* c = alpha + n * k;
    const T* mx = c + n;
    T* beta = scratch + n * k + 2 * n;
    T* e = beta + k;
    const T a0 = adj[0];
    for (std::size_t j = 0; j < k; ++j) beta[j] = lift<T>(1.0);
    for (std::size_t t = n; t-- > 0;) {
      for (std::size_t j = 0; j < k; ++j) {
        omega_adj(in_adj, j, t) += a0 * alpha[t * k + j] * beta[j];
        e[j] = math::exp(omega(in, j, t) - mx[t]) * beta[j] / c[t];
      }
      if (t == 0) {
        for (std::size_t j = 0; j < k; ++j) in_adj[rho_operand()][j] += a0 * e[j];
      } else {
        for (std::size_t i = 0; i < k; ++i) {
          T b = lift<T>(0.0);
          for (std::size_t j = 0; j < k; ++j) {
            gamma(in_adj, i, j) += a0 * alpha[(t - 1) * k + i] * e[j];
            b = b + gamma(in, i, j) * e[j];
          }
          beta[i] = b;
        }
      }
    }
  }
};

}  // namespace tyche::ops
