// tyche/compile/ode.hpp — ode_rk45(f, y0, t0, ts): the solution of an ordinary differential
// equation dy/dt = f(t, y) at the output times ts, with its gradient, written as a lambda.
//
// As with scan (compile/scan.hpp), the lambda is called once, on placeholder expressions (the
// time t and the state y of K values), when the model is built; what it returns is the right-
// hand side's graph, a type, compiled once into a program of
//     G(a, y, t, p) = Σₖ aₖ · fₖ(t, y, p),
// p the model's parameters the lambda uses (captured random variables; loop invariants such as
// CL / V hoisted out as scan hoists them). One evaluation of G's gradient with a = eₖ gives f
// (∂G/∂a) and row k of the Jacobians ∂f/∂y and ∂f/∂p, so K gradient evaluations give f and both
// Jacobians at a point. The solver integrates the state and its forward sensitivities
// S = ∂y/∂(y0, p) together (dS/dt = ∂f/∂y · S + [0 | ∂f/∂p], S(t0) = [I | 0]: Stan's coupled
// system) by the Dormand–Prince 5(4) pair with an adaptive step, the error controlled over the
// state and its sensitivities; it steps to each output time exactly. The node is a vector_op
// (docs/design/vector-ops.md) whose operands are y0 and those parameters; its forward pass
// solves and keeps S at each output time, its reverse pass is adjᵀ S. Each chain (each SIMD
// lane) is solved in double with its own steps. See docs/design/ode.md.
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/vector_ops.hpp>
#include <tyche/compile/program.hpp>
#include <tyche/compile/scan.hpp>
#include <tyche/compile/substitute.hpp>
#include <tyche/core/leaves.hpp>
#include <tyche/core/nodes.hpp>
#include <tyche/scalar/format.hpp>
#include <tyche/scalar/traits.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace tyche {

namespace detail {
/// The placeholder of the time t the right-hand side is evaluated at ("__scan_" so that scan's
/// hoisting and outer-parameter lists treat it as a placeholder, not a model parameter).
inline constexpr fixed_string ode_time_name = "__scan_time";
/// The placeholder of the state y (an algebraic equation's unknowns x): not scan's "__scan_state",
/// so that inside a scan's step the scan's state (which f may use: a dose added to it, a rate that
/// depends on it) is an operand of the solve, not taken for the solve's own state.
inline constexpr fixed_string ode_state_name = "__scan_ode_state";

/// What the solver needs besides the right-hand side: the start, the output times, tolerances.
/// An algebraic equation's solve (compile/algebra_solver.hpp) has no times (null, n = 1: one
/// value per unknown) and reads relative_tolerance as its step tolerance (solve_newton's
/// scaling_step_size, solve_powell's relative_tolerance), absolute_tolerance as its
/// function_tolerance and max_num_steps as its iterations.
struct ode_settings {
  double t0 = 0;
  const double* times = nullptr;  // n output times, t0 < times[0] ≤ times[1] ≤ …
  std::size_t n = 0;
  double relative_tolerance = 1e-6;
  double absolute_tolerance = 1e-6;
  std::size_t max_num_steps = 1000000;  // steps (accepted or not) between two output times
};

/// Whether x is finite (host and device: inf − inf and NaN − NaN are NaN).
TYCHE_HD inline bool ode_finite(double x) { return x - x == 0.0; }

/// The Dormand–Prince 5(4) tableau (Dormand & Prince 1980; Hairer, Nørsett & Wanner, Solving
/// ODEs I, table II.5.2): nodes c, stages a, the fifth-order weights b (the last stage's row,
/// FSAL) and e = b − b̂, b̂ the embedded fourth-order weights.
struct dopri5 {
  static constexpr double c2 = 1.0 / 5, c3 = 3.0 / 10, c4 = 4.0 / 5, c5 = 8.0 / 9;
  static constexpr double a21 = 1.0 / 5;
  static constexpr double a31 = 3.0 / 40, a32 = 9.0 / 40;
  static constexpr double a41 = 44.0 / 45, a42 = -56.0 / 15, a43 = 32.0 / 9;
  static constexpr double a51 = 19372.0 / 6561, a52 = -25360.0 / 2187, a53 = 64448.0 / 6561, a54 = -212.0 / 729;
  static constexpr double a61 = 9017.0 / 3168, a62 = -355.0 / 33, a63 = 46732.0 / 5247, a64 = 49.0 / 176,
                          a65 = -5103.0 / 18656;
  static constexpr double b1 = 35.0 / 384, b3 = 500.0 / 1113, b4 = 125.0 / 192, b5 = -2187.0 / 6784, b6 = 11.0 / 84;
  static constexpr double e1 = 71.0 / 57600, e3 = -71.0 / 16695, e4 = 71.0 / 1920, e5 = -17253.0 / 339200,
                          e6 = 22.0 / 525, e7 = -1.0 / 40;
};

/// The doubles one solve needs besides its inputs and outputs: θ and the gradient of the
/// right-hand side's program (dim each), its workspace, the Jacobians (K × (K + P), P = dim −
/// 2K − 1) and the coupled state u = (y, S) of C = K (1 + Q) values (Q columns of S) with its
/// seven stages and two more vectors.
TYCHE_HD inline std::size_t ode_solver_doubles(std::size_t k, std::size_t q, std::size_t dim, std::size_t ws) {
  const std::size_t c = k * (1 + q);
  return 2 * dim + ws + k * (dim - k - 1) + 10 * c;
}

/// The coupled system's derivative at (t, u): u = (y: K values, S: K × Q row-major), du = (f,
/// ∂f/∂y · S + [0 | ∂f/∂p]). θ's a, y and t are set here; its parameters (after 2K + 1) are
/// the caller's. Q = y0c + P: the sensitivities' columns, y0's (y0c = K; none, y0c = 0, where y0
/// is a constant), then the P parameters'. jac: ∂f/∂y and ∂f/∂p, K rows of K + P; ft (if not null): ∂f/∂t.
template <std::size_t K, class View>
TYCHE_HD TYCHE_NOINLINE void ode_coupled_rhs(const View& rhs, std::size_t q, std::size_t y0c, double t,
                                             const double* u, double* du, double* theta, double* grad, double* ws,
                                             double* jac, double* ft = nullptr) {
  const std::size_t p = rhs.dim() - 2 * K - 1, nj = K + p;
  for (std::size_t k = 0; k < K; ++k) theta[K + k] = u[k];
  theta[2 * K] = t;
  for (std::size_t k = 0; k < K; ++k) {
    for (std::size_t j = 0; j < K; ++j) theta[j] = j == k ? 1.0 : 0.0;
    rhs.template value_and_gradient<double>(theta, grad, ws);
    if (k == 0)
      for (std::size_t j = 0; j < K; ++j) du[j] = grad[j];  // ∂G/∂aⱼ = fⱼ, whatever a is
    for (std::size_t l = 0; l < K; ++l) jac[k * nj + l] = grad[K + l];
    for (std::size_t l = 0; l < p; ++l) jac[k * nj + K + l] = grad[2 * K + 1 + l];
    if (ft) ft[k] = grad[2 * K];  // ∂fₖ/∂t
  }
  const double* s = u + K;
  double* ds = du + K;
  for (std::size_t k = 0; k < K; ++k)
    for (std::size_t j = 0; j < q; ++j) {
      double v = j >= y0c ? jac[k * nj + K + (j - y0c)] : 0.0;
      for (std::size_t l = 0; l < K; ++l) v += jac[k * nj + l] * s[l * q + j];
      ds[k * q + j] = v;
    }
}

/// The step's error estimate hh·Σ eᵢ kᵢ in the max norm over the c values of the state and its
/// sensitivities (as Stan's coupled system controls it), each scaled by atol + rtol ·
/// max(|u|, |u_new|); NaN where any value's is (f not finite at a stage: the step is rejected).
TYCHE_HD inline double ode_error_norm(std::size_t c, double hh, const double* k1, const double* k3, const double* k4,
                                      const double* k5, const double* k6, const double* k7, const double* u,
                                      const double* unew, double atol, double rtol) {
  using tab = dopri5;
  double err = 0;
  for (std::size_t i = 0; i < c; ++i) {
    const double e = hh * (tab::e1 * k1[i] + tab::e3 * k3[i] + tab::e4 * k4[i] + tab::e5 * k5[i] + tab::e6 * k6[i] +
                           tab::e7 * k7[i]);
    const double a = ::fabs(u[i]), b = ::fabs(unew[i]);
    const double r = ::fabs(e) / (atol + rtol * (a > b ? a : b));
    if (r != r) return r;
    if (r > err) err = r;
  }
  return err;
}

/// The first step (Hairer, Nørsett & Wanner, I, II.4, "starting step size") of a method of
/// order p: from the sizes of u, its derivative f0 and a difference estimate of the
/// derivative's derivative, in RMS norms scaled by the tolerances.
/// tmp and f1: c doubles of room each.
template <std::size_t K, class View>
TYCHE_HD double ode_start_step(const View& rhs, const ode_settings& s, std::size_t q, std::size_t y0c, double t,
                               const double* u, const double* f0, double* tmp, double* f1, double* theta,
                               double* grad, double* wsp, double* jac, int p) {
  const std::size_t c = K * (1 + q);
  const double rtol = s.relative_tolerance, atol = s.absolute_tolerance;
  double d0 = 0, d1 = 0;
  for (std::size_t i = 0; i < c; ++i) {
    const double sc = atol + rtol * ::fabs(u[i]);
    d0 += (u[i] / sc) * (u[i] / sc);
    d1 += (f0[i] / sc) * (f0[i] / sc);
  }
  d0 = ::sqrt(d0 / double(c));
  d1 = ::sqrt(d1 / double(c));
  double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
  if (!(h0 > 0) || !ode_finite(h0)) h0 = 1e-6;  // d1 overflowed
  const double span = s.times[s.n - 1] - t;
  if (h0 > span) h0 = span;
  for (std::size_t i = 0; i < c; ++i) tmp[i] = u[i] + h0 * f0[i];
  ode_coupled_rhs<K>(rhs, q, y0c, t + h0, tmp, f1, theta, grad, wsp, jac);
  double d2 = 0;
  for (std::size_t i = 0; i < c; ++i) {
    const double sc = atol + rtol * ::fabs(u[i]);
    d2 += ((f1[i] - f0[i]) / sc) * ((f1[i] - f0[i]) / sc);
  }
  d2 = ::sqrt(d2 / double(c)) / h0;
  const double dm = d1 > d2 ? d1 : d2;
  const double h1 =
      (dm <= 1e-15 || !ode_finite(dm)) ? (h0 * 1e-3 > 1e-6 ? h0 * 1e-3 : 1e-6) : ::pow(0.01 / dm, 1.0 / p);
  return 100 * h0 < h1 ? 100 * h0 : h1;
}

/// Solves dy/dt = f(t, y), y(t0) = y0, for one chain in double: qv holds y0 (K values) then the
/// right-hand side's P parameters; out[k·n + r] is yₖ at times[r], sens[(k·n + r)·Q + j] its
/// derivative by column j: y0's K values (y0c = K; y0c = 0: none, y0 a constant), then the P
/// parameters. w: ode_solver_doubles(K, Q, dim, workspace) doubles. False where the
/// solve failed (a non-finite start or derivative at it, max_num_steps steps between two
/// output times, or a step size that no longer moves t): the caller then gives NaN.
template <std::size_t K, class View>
TYCHE_HD bool ode_rk45_solve(const View& rhs, const ode_settings& s, std::size_t q, std::size_t y0c, const double* qv,
                             double* out,
                             double* sens, double* w) {
  using tab = dopri5;
  const std::size_t dim = rhs.dim(), p = dim - 2 * K - 1, c = K * (1 + q);
  double* theta = w;
  double* grad = theta + dim;
  double* ws = grad + dim;
  double* jac = ws + rhs.workspace_size;
  double* u = jac + K * (K + p);
  double* k1 = u + c;
  double* k2 = k1 + c;
  double* k3 = k2 + c;
  double* k4 = k3 + c;
  double* k5 = k4 + c;
  double* k6 = k5 + c;
  double* k7 = k6 + c;
  double* tmp = k7 + c;
  double* unew = tmp + c;
  double* wsp = rhs.workspace_size > 0 ? ws : nullptr;
  for (std::size_t i = 0; i < K + p; ++i)
    if (!ode_finite(qv[i])) return false;
  for (std::size_t l = 0; l < p; ++l) theta[2 * K + 1 + l] = qv[K + l];
  for (std::size_t k = 0; k < K; ++k) {
    u[k] = qv[k];
    for (std::size_t j = 0; j < q; ++j) u[K + k * q + j] = j == k && j < y0c ? 1.0 : 0.0;
  }
  const double rtol = s.relative_tolerance, atol = s.absolute_tolerance;
  double t = s.t0;
  ode_coupled_rhs<K>(rhs, q, y0c, t, u, k1, theta, grad, wsp, jac);
  for (std::size_t i = 0; i < c; ++i)
    if (!ode_finite(k1[i])) return false;

  double h = ode_start_step<K>(rhs, s, q, y0c, t, u, k1, tmp, k2, theta, grad, wsp, jac, 5);

  for (std::size_t r = 0; r < s.n; ++r) {
    const double tout = s.times[r];
    std::size_t steps = 0;
    bool rejected = false;
    while (t < tout) {
      if (++steps > s.max_num_steps) return false;
      const bool last = t + 1.01 * h >= tout;  // stretched to the output time rather than a sliver after it
      const double hh = last ? tout - t : h;
      if (!(hh > 0) || t + hh == t) return false;
      for (std::size_t i = 0; i < c; ++i) tmp[i] = u[i] + hh * tab::a21 * k1[i];
      ode_coupled_rhs<K>(rhs, q, y0c, t + tab::c2 * hh, tmp, k2, theta, grad, wsp, jac);
      for (std::size_t i = 0; i < c; ++i) tmp[i] = u[i] + hh * (tab::a31 * k1[i] + tab::a32 * k2[i]);
      ode_coupled_rhs<K>(rhs, q, y0c, t + tab::c3 * hh, tmp, k3, theta, grad, wsp, jac);
      for (std::size_t i = 0; i < c; ++i)
        tmp[i] = u[i] + hh * (tab::a41 * k1[i] + tab::a42 * k2[i] + tab::a43 * k3[i]);
      ode_coupled_rhs<K>(rhs, q, y0c, t + tab::c4 * hh, tmp, k4, theta, grad, wsp, jac);
      for (std::size_t i = 0; i < c; ++i)
        tmp[i] = u[i] + hh * (tab::a51 * k1[i] + tab::a52 * k2[i] + tab::a53 * k3[i] + tab::a54 * k4[i]);
      ode_coupled_rhs<K>(rhs, q, y0c, t + tab::c5 * hh, tmp, k5, theta, grad, wsp, jac);
      for (std::size_t i = 0; i < c; ++i)
        tmp[i] = u[i] + hh * (tab::a61 * k1[i] + tab::a62 * k2[i] + tab::a63 * k3[i] + tab::a64 * k4[i] +
                              tab::a65 * k5[i]);
      const double tn = last ? tout : t + hh;
      ode_coupled_rhs<K>(rhs, q, y0c, tn, tmp, k6, theta, grad, wsp, jac);
      for (std::size_t i = 0; i < c; ++i)
        unew[i] = u[i] + hh * (tab::b1 * k1[i] + tab::b3 * k3[i] + tab::b4 * k4[i] + tab::b5 * k5[i] + tab::b6 * k6[i]);
      ode_coupled_rhs<K>(rhs, q, y0c, tn, unew, k7, theta, grad, wsp, jac);
      const double err = ode_error_norm(c, hh, k1, k3, k4, k5, k6, k7, u, unew, atol, rtol);
      if (err <= 1.0) {
        double fac = err == 0 ? 5.0 : 0.9 * ::pow(err, -0.2);
        if (fac > 5.0) fac = 5.0;
        if (fac < 0.2) fac = 0.2;
        if (rejected && fac > 1.0) fac = 1.0;
        t = tn;
        for (std::size_t i = 0; i < c; ++i) {
          u[i] = unew[i];
          k1[i] = k7[i];  // first same as last
        }
        const double hn = hh * fac;
        h = last && hh < h && hn < h ? h : hn;  // a step cut short at an output time keeps the step size
        rejected = false;
      } else {
        const double fac = ode_finite(err) ? 0.9 * ::pow(err, -0.2) : 0.2;
        h = hh * (fac < 0.2 ? 0.2 : fac);
        rejected = true;
      }
    }
    for (std::size_t k = 0; k < K; ++k) {
      out[k * s.n + r] = u[k];
      for (std::size_t j = 0; j < q; ++j) sens[(k * s.n + r) * q + j] = u[K + k * q + j];
    }
  }
  return true;
}

/// The Rosenbrock-W method ROS34PW2 (Rang & Angermann, BIT 45, 2005): four stages, order 3
/// with any matrix in place of the Jacobian (a W-method), L-stable and stiffly accurate, with an
/// embedded method of order 2. Stage i: (I − hγA) kᵢ = h f(t + αᵢh, u + Σⱼ αᵢⱼkⱼ) + hA Σⱼ γᵢⱼkⱼ
/// + γᵢh² ∂f/∂t (j < i; αᵢ, γᵢ the row sums, γᵢ with γ); u_new = u + Σ bᵢkᵢ, the error
/// Σ (bᵢ − b̂ᵢ) kᵢ.
struct ros34pw2 {
  static constexpr double gamma = 0.435866521508459;
  static constexpr double a21 = 0.87173304301691801, a31 = 0.84457060015369423, a32 = -0.11299064236484185;
  static constexpr double a41 = 0.0, a42 = 0.0, a43 = 1.0;
  static constexpr double g21 = -0.87173304301691801, g31 = -0.90338057013044082, g32 = 0.054180672388095326;
  static constexpr double g41 = 0.24212380706095346, g42 = -1.2232505839045147, g43 = 0.54526025533510214;
  static constexpr double b1 = 0.24212380706095346, b2 = -1.2232505839045147, b3 = 1.5452602553351020,
                          b4 = 0.435866521508459;
  static constexpr double bh1 = 0.37810903145819369, bh2 = -0.096042292212423178, bh3 = 0.5,
                          bh4 = 0.2179332607542295;
};

/// The doubles ode_stiff_solve needs besides its inputs and outputs: those of the right-hand
/// side's program (θ, its gradient, its workspace), the Jacobians, ∂f/∂t, ∂f/∂y at the step's
/// start and the factors of I − hγ ∂f/∂y, and eight vectors of the coupled system's
/// C = K (1 + Q) values.
TYCHE_HD inline std::size_t ode_stiff_doubles(std::size_t k, std::size_t q, std::size_t dim, std::size_t ws) {
  const std::size_t c = k * (1 + q);
  return 2 * dim + ws + k * (dim - k - 1) + k + 2 * k * k + 8 * c;
}

/// LU factors of the K × K matrix m in place, rows swapped by partial pivoting (piv[i] the row
/// swapped with row i); false where a pivot is zero or not finite.
template <std::size_t K>
TYCHE_HD bool ode_lu(double* m, std::size_t* piv) {
  for (std::size_t j = 0; j < K; ++j) {
    std::size_t r = j;
    for (std::size_t i = j + 1; i < K; ++i)
      if (::fabs(m[i * K + j]) > ::fabs(m[r * K + j])) r = i;
    piv[j] = r;
    if (r != j)
      for (std::size_t l = 0; l < K; ++l) {
        const double x = m[j * K + l];
        m[j * K + l] = m[r * K + l];
        m[r * K + l] = x;
      }
    const double d = m[j * K + j];
    if (d == 0.0 || !ode_finite(d)) return false;
    for (std::size_t i = j + 1; i < K; ++i) {
      const double f = m[i * K + j] / d;
      m[i * K + j] = f;
      for (std::size_t l = j + 1; l < K; ++l) m[i * K + l] -= f * m[j * K + l];
    }
  }
  return true;
}

/// x ← M⁻¹ x for M's LU factors, x the K values x[0], x[stride], …
template <std::size_t K>
TYCHE_HD void ode_lu_solve(const double* m, const std::size_t* piv, double* x, std::size_t stride) {
  for (std::size_t j = 0; j < K; ++j)
    if (piv[j] != j) {
      const double v = x[j * stride];
      x[j * stride] = x[piv[j] * stride];
      x[piv[j] * stride] = v;
    }
  for (std::size_t i = 1; i < K; ++i) {
    double v = x[i * stride];
    for (std::size_t l = 0; l < i; ++l) v -= m[i * K + l] * x[l * stride];
    x[i * stride] = v;
  }
  for (std::size_t i = K; i-- > 0;) {
    double v = x[i * stride];
    for (std::size_t l = i + 1; l < K; ++l) v -= m[i * K + l] * x[l * stride];
    x[i * stride] = v / m[i * K + i];
  }
}

/// r ← r + h · (I ⊗ J) v over the coupled system's blocks (the state's K values, then each of
/// the Q sensitivity columns, S row-major), J the K × K matrix jy.
template <std::size_t K>
TYCHE_HD void ode_add_block_product(std::size_t q, double h, const double* jy, const double* v, double* r) {
  for (std::size_t b = 0; b <= q; ++b) {
    const std::size_t off = b == 0 ? 0 : K + (b - 1), stride = b == 0 ? 1 : q;
    for (std::size_t i = 0; i < K; ++i) {
      double x = 0;
      for (std::size_t l = 0; l < K; ++l) x += jy[i * K + l] * v[off + l * stride];
      r[off + i * stride] += h * x;
    }
  }
}

/// The stiff solver: as ode_rk45_solve (the same arguments, outputs and failures; w holds
/// ode_stiff_doubles(K, Q, dim, workspace) doubles), by the Rosenbrock-W method ROS34PW2 with an
/// adaptive step. The matrix in place of the coupled system's Jacobian is ∂f/∂y on each of its
/// blocks (the state's and each sensitivity column's), at the step's start: exact for the state,
/// and for the sensitivities all but the second derivatives of f, which a W-method does not need
/// for its order. So one K × K factorisation per step serves the state and every column, and the
/// stiffness (∂f/∂y's eigenvalues, the same for S) is treated implicitly in both. ∂f/∂t (from the
/// same gradients) enters the state's stages.
template <std::size_t K, class View>
TYCHE_HD bool ode_stiff_solve(const View& rhs, const ode_settings& s, std::size_t q, std::size_t y0c, const double* qv,
                              double* out, double* sens, double* w) {
  using tab = ros34pw2;
  const std::size_t dim = rhs.dim(), p = dim - 2 * K - 1, c = K * (1 + q), nj = K + p;
  double* theta = w;
  double* grad = theta + dim;
  double* ws = grad + dim;
  double* jac = ws + rhs.workspace_size;
  double* ft = jac + K * nj;
  double* lu = ft + K;
  double* u = lu + K * K;
  double* f0 = u + c;  // the coupled derivative at the step's start
  double* k1 = f0 + c;
  double* k2 = k1 + c;
  double* k3 = k2 + c;
  double* k4 = k3 + c;
  double* tmp = k4 + c;
  double* r = tmp + c;
  double* jy = r + c;  // ∂f/∂y at the step's start (the first K columns of jac)
  std::size_t piv[K];
  double* wsp = rhs.workspace_size > 0 ? ws : nullptr;
  for (std::size_t i = 0; i < K + p; ++i)
    if (!ode_finite(qv[i])) return false;
  for (std::size_t l = 0; l < p; ++l) theta[2 * K + 1 + l] = qv[K + l];
  for (std::size_t k = 0; k < K; ++k) {
    u[k] = qv[k];
    for (std::size_t j = 0; j < q; ++j) u[K + k * q + j] = j == k && j < y0c ? 1.0 : 0.0;
  }
  const double rtol = s.relative_tolerance, atol = s.absolute_tolerance;
  double t = s.t0;
  // The derivative, ∂f/∂y and ∂f/∂t at (tt, uu), a step's start; false where not finite.
  // A W-method keeps its order whatever matrix and time derivative it is given, so a
  // non-finite entry of ∂f/∂y or ∂f/∂t (√t at t = 0) is taken as 0 rather than failing the solve.
  const auto at_start = [&](double tt, const double* uu) {
    ode_coupled_rhs<K>(rhs, q, y0c, tt, uu, f0, theta, grad, wsp, jac, ft);
    for (std::size_t i = 0; i < K; ++i) {
      for (std::size_t l = 0; l < K; ++l) jy[i * K + l] = ode_finite(jac[i * nj + l]) ? jac[i * nj + l] : 0.0;
      if (!ode_finite(ft[i])) ft[i] = 0.0;
    }
    for (std::size_t i = 0; i < c; ++i)
      if (!ode_finite(f0[i])) return false;
    return true;
  };
  if (!at_start(t, u)) return false;
  double h = ode_start_step<K>(rhs, s, q, y0c, t, u, f0, tmp, k1, theta, grad, wsp, jac, 3);

  // Stage i's right-hand side r = h F + h (I ⊗ J) Σⱼ γᵢⱼ kⱼ + γᵢ h² ∂f/∂t, then kᵢ = (I − hγJ)⁻¹ r.
  const auto stage = [&](double* k, const double* fi, double hh, double gi, const double* sg) {
    for (std::size_t i = 0; i < c; ++i) r[i] = hh * fi[i];
    if (sg) ode_add_block_product<K>(q, hh, jy, sg, r);
    for (std::size_t i = 0; i < K; ++i) r[i] += gi * hh * hh * ft[i];
    for (std::size_t b = 0; b <= q; ++b)
      ode_lu_solve<K>(lu, piv, r + (b == 0 ? 0 : K + (b - 1)), b == 0 ? 1 : q);
    for (std::size_t i = 0; i < c; ++i) k[i] = r[i];
  };
  for (std::size_t ro = 0; ro < s.n; ++ro) {
    const double tout = s.times[ro];
    std::size_t steps = 0;
    bool rejected = false;
    while (t < tout) {
      if (++steps > s.max_num_steps) return false;
      const bool last = t + 1.01 * h >= tout;
      const double hh = last ? tout - t : h;
      if (!(hh > 0) || t + hh == t) return false;
      for (std::size_t i = 0; i < K; ++i)
        for (std::size_t l = 0; l < K; ++l) lu[i * K + l] = (i == l ? 1.0 : 0.0) - hh * tab::gamma * jy[i * K + l];
      double err;
      if (!ode_lu<K>(lu, piv)) {
        err = ::nan("");  // I − hγJ singular at this step size: a smaller one
      } else {
        stage(k1, f0, hh, tab::gamma, nullptr);
        for (std::size_t i = 0; i < c; ++i) tmp[i] = u[i] + tab::a21 * k1[i];
        ode_coupled_rhs<K>(rhs, q, y0c, t + tab::a21 * hh, tmp, k4, theta, grad, wsp, jac);
        for (std::size_t i = 0; i < c; ++i) tmp[i] = tab::g21 * k1[i];
        stage(k2, k4, hh, tab::g21 + tab::gamma, tmp);
        for (std::size_t i = 0; i < c; ++i) tmp[i] = u[i] + tab::a31 * k1[i] + tab::a32 * k2[i];
        ode_coupled_rhs<K>(rhs, q, y0c, t + (tab::a31 + tab::a32) * hh, tmp, k4, theta, grad, wsp, jac);
        for (std::size_t i = 0; i < c; ++i) tmp[i] = tab::g31 * k1[i] + tab::g32 * k2[i];
        stage(k3, k4, hh, tab::g31 + tab::g32 + tab::gamma, tmp);
        for (std::size_t i = 0; i < c; ++i) tmp[i] = u[i] + tab::a41 * k1[i] + tab::a42 * k2[i] + tab::a43 * k3[i];
        ode_coupled_rhs<K>(rhs, q, y0c, last ? tout : t + hh, tmp, k4, theta, grad, wsp, jac);
        for (std::size_t i = 0; i < c; ++i) tmp[i] = tab::g41 * k1[i] + tab::g42 * k2[i] + tab::g43 * k3[i];
        stage(k4, k4, hh, tab::g41 + tab::g42 + tab::g43 + tab::gamma, tmp);
        // The new values (in tmp) and the error: the largest of the RMS norms of the state's
        // and of each sensitivity column's scaled errors (as CVODES measures them with
        // sensitivity error control, Stan's ode_bdf setting; ode_rk45 takes the max norm over
        // every value, as Stan's odeint does), NaN where any stage was not finite.
        for (std::size_t i = 0; i < c; ++i) {
          const double un = u[i] + tab::b1 * k1[i] + tab::b2 * k2[i] + tab::b3 * k3[i] + tab::b4 * k4[i];
          const double e = (tab::b1 - tab::bh1) * k1[i] + (tab::b2 - tab::bh2) * k2[i] +
                           (tab::b3 - tab::bh3) * k3[i] + (tab::b4 - tab::bh4) * k4[i];
          const double a = ::fabs(u[i]), b = ::fabs(un);
          r[i] = e / (atol + rtol * (a > b ? a : b));
          tmp[i] = un;
        }
        err = 0;
        for (std::size_t b = 0; b <= q; ++b) {
          const std::size_t off = b == 0 ? 0 : K + (b - 1), stride = b == 0 ? 1 : q;
          double sq = 0;
          for (std::size_t l = 0; l < K; ++l) sq += r[off + l * stride] * r[off + l * stride];
          const double nb = ::sqrt(sq / double(K));
          if (nb != nb) {
            err = nb;
            break;
          }
          if (nb > err) err = nb;
        }
      }
      const double tn = last ? tout : t + hh;
      if (err <= 1.0 && !at_start(tn, tmp)) {
        // f not finite at the new values (the next step's start): rejected as a NaN error, and
        // the derivatives at the old start again.
        err = ::nan("");
        at_start(t, u);
      }
      if (err <= 1.0) {
        double fac = err == 0 ? 5.0 : 0.9 * ::pow(err, -1.0 / 3);
        if (fac > 5.0) fac = 5.0;
        if (fac < 0.2) fac = 0.2;
        if (rejected && fac > 1.0) fac = 1.0;
        t = tn;
        for (std::size_t i = 0; i < c; ++i) u[i] = tmp[i];
        const double hn = hh * fac;
        h = last && hh < h && hn < h ? h : hn;
        rejected = false;
      } else {
        const double fac = ode_finite(err) ? 0.9 * ::pow(err, -1.0 / 3) : 0.2;
        h = hh * (fac < 0.2 ? 0.2 : fac);
        rejected = true;
      }
    }
    for (std::size_t k = 0; k < K; ++k) {
      out[k * s.n + ro] = u[k];
      for (std::size_t j = 0; j < q; ++j) sens[(k * s.n + ro) * q + j] = u[K + k * q + j];
    }
  }
  return true;
}

/// The solvers ode_map runs, one type each: its name (for messages), whether its equation is
/// algebraic (f(x) = 0, compile/algebra_solver.hpp) rather than an ODE, the doubles of
/// workspace one solve needs, and the solve itself. A solve reads qv (the K initial values, or
/// the guess, then the P parameters) and writes the K values at each of the n output times (n =
/// 1 for an algebraic equation) and their sensitivities by the Q columns; false where it failed.
struct ode_rk45_method {
  static constexpr const char* name = "ode_rk45";
  static constexpr bool algebraic = false;
  TYCHE_HD static std::size_t doubles(std::size_t k, std::size_t q, std::size_t dim, std::size_t ws) {
    return ode_solver_doubles(k, q, dim, ws);
  }
  template <std::size_t K, class View>
  TYCHE_HD static bool solve(const View& rhs, const ode_settings& s, std::size_t q, std::size_t y0c, const double* qv,
                             double* out, double* sens, double* w) {
    return ode_rk45_solve<K>(rhs, s, q, y0c, qv, out, sens, w);
  }
};
struct ode_stiff_method {
  static constexpr const char* name = "ode_stiff";
  static constexpr bool algebraic = false;
  TYCHE_HD static std::size_t doubles(std::size_t k, std::size_t q, std::size_t dim, std::size_t ws) {
    return ode_stiff_doubles(k, q, dim, ws);
  }
  template <std::size_t K, class View>
  TYCHE_HD static bool solve(const View& rhs, const ode_settings& s, std::size_t q, std::size_t y0c, const double* qv,
                             double* out, double* sens, double* w) {
    return ode_stiff_solve<K>(rhs, s, q, y0c, qv, out, sens, w);
  }
};

/// The first 8-byte-aligned address at or after p.
template <class T>
TYCHE_HD double* aligned_doubles(T* p) {
  const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(p);
  return reinterpret_cast<double*>((a + 7) & ~std::uintptr_t(7));
}
}  // namespace detail

namespace ops {

/// The op of an ODE solution: K state values at n output times, the right-hand side's program
/// (θ = (a: K, y: K, t, the Outer parameters in operand order)); operand 0 is y0, operands
/// 1 … Outer the parameters. Values: component k at output time r at k·n + r (scan_states'
/// order). Y0: y0 depends on parameters, so its K sensitivity columns are carried (a constant
/// y0, a dose, needs none: a third fewer columns for a PK model). Method: the solver
/// (detail::ode_rk45_method, ode_stiff_method, or an algebraic equation's solve_newton_method or
/// solve_powell_method: then operand 0 is the guess, never carried, and there is one "output
/// time", the root). Owning: as scan_map's (the program moves into the model's fold_storage when
/// the model is folded).
template <class Program, std::size_t K, std::size_t Outer, bool Y0 = true, class Method = detail::ode_rk45_method,
          bool Owning = true>
struct ode_map {
  static constexpr const char* name = Method::name;
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = true;  // the output times, and what f reads
  template <class... Cs>
  static constexpr std::size_t extent = dynamic_extent;
  using view_type = typename Program::view_type;

  program_holder<Program, Owning> program;  // the right-hand side's program: owned before folding
  view_type rhs;                            // its evaluable part
  detail::ode_settings settings{};

  bool operator==(const ode_map& o) const {
    return program_address(program) == program_address(o.program) && settings.times == o.settings.times &&
           settings.n == o.settings.n && settings.t0 == o.settings.t0 &&
           settings.relative_tolerance == o.settings.relative_tolerance &&
           settings.absolute_tolerance == o.settings.absolute_tolerance &&
           settings.max_num_steps == o.settings.max_num_steps;
  }
  /// The op of the folded tree: the program kept by `storage`, this op a view of it.
  template <class Storage>
    requires Owning
  ode_map<Program, K, Outer, Y0, Method, false> release_into(Storage& storage) const {
    storage.keep(program);
    return {program.get(), rhs, settings};
  }
  /// f(times, n), then every buffer of the right-hand side's view (compile/relocate.hpp).
  template <class F>
  void for_each_data_buffer(std::size_t, F&& f) {
    if (settings.times) f(settings.times, settings.n);  // none for an algebraic equation
    tyche::for_each_data_buffer(rhs, f);
  }
  /// The inputs of a solve: y0's K values and the P parameters.
  TYCHE_HD std::size_t inputs() const { return rhs.dim() - K - 1; }
  /// Q: the sensitivities' columns, y0's K (if Y0) and the parameters'.
  TYCHE_HD std::size_t columns() const { return Y0 ? inputs() : inputs() - K; }
  /// S at the output times (m·Q values of T), then room for the lanes' solves in double: each
  /// lane's inputs, values and sensitivities, and one solver's workspace (twice the doubles in
  /// T's, so that a float or a batch of floats holds them too, and one more for alignment).
  std::size_t scratch_size(std::size_t m, const std::size_t*) const {
    const std::size_t q = columns();
    const std::size_t w = Method::doubles(K, q, rhs.dim(), rhs.workspace_size);
    return m * q + 2 * (inputs() + m + m * q + w) + 1;
  }

  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t* in_n, T* scratch) const {
    using E = element_type_t<T>;
    using lanes = tyche::detail::lane_ops<T>;
    constexpr std::size_t L = lanes::size;
    const std::size_t q = columns(), nin = inputs();
    T* sens = scratch;
    double* qs = detail::aligned_doubles(scratch + m * q);
    double* outs = qs + L * nin;
    double* senss = outs + L * m;
    double* w = senss + L * m * q;
    // Each lane's inputs in double: y0, then the parameters in operand order.
    {
      E buf[L];
      std::size_t i = 0;
      for (std::size_t j = 0; j < 1 + Outer; ++j)
        for (std::size_t k = 0; k < in_n[j]; ++k, ++i) {
          lanes::store(buf, in[j][k]);
          for (std::size_t l = 0; l < L; ++l) qs[l * nin + i] = static_cast<double>(buf[l]);
        }
    }
    for (std::size_t l = 0; l < L; ++l)
      if (!Method::template solve<K>(rhs, settings, q, Y0 ? K : 0, qs + l * nin, outs + l * m, senss + l * m * q,
                                     w)) {
        const double nan = ::nan("");
        for (std::size_t i = 0; i < m; ++i) outs[l * m + i] = nan;
        for (std::size_t i = 0; i < m * q; ++i) senss[l * m * q + i] = nan;
      }
    E buf[L];
    for (std::size_t i = 0; i < m; ++i) {
      for (std::size_t l = 0; l < L; ++l) buf[l] = static_cast<E>(outs[l * m + i]);
      out[i] = lanes::load(buf);
    }
    for (std::size_t i = 0; i < m * q; ++i) {
      for (std::size_t l = 0; l < L; ++l) buf[l] = static_cast<E>(senss[l * m * q + i]);
      sens[i] = lanes::load(buf);
    }
  }

  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const*, const std::size_t* in_n,
                        T* const* in_adj, T* scratch) const {
    const std::size_t q = columns();
    const T* sens = scratch;
    std::size_t col = 0;
    for (std::size_t j = Y0 ? 0 : 1; j < 1 + Outer; ++j)
      for (std::size_t k = 0; k < in_n[j]; ++k, ++col) {
        T acc = lift<T>(0.0);
        for (std::size_t i = 0; i < m; ++i) acc += adj[i] * sens[i * q + col];
        in_adj[j][k] += acc;
      }
  }
};

}  // namespace ops

namespace detail {

/// Instantiated when f returns a tuple of Returned values for a state of State values.
template <std::size_t Returned, std::size_t State>
constexpr bool ode_rhs_size_mismatch() {
  static_assert(Returned == State,
                "tyche::ode_rk45/ode_stiff(f, y0, t0, ts): f(t, y) returns a tuple whose size is not the state's size "
                "(that of 'y0'); the two sizes are Returned and State in this diagnostic");
  return false;
}
/// Instantiated when f cannot be called as f(t, y).
template <std::size_t State>
constexpr bool ode_rhs_arity_mismatch() {
  static_assert(State != State,
                "tyche::ode_rk45/ode_stiff(f, y0, t0, ts) requires f(t, y) to take the time and the state (a scalar "
                "expression for a state of one value, else y with y[k]) and to return dy/dt; the state's size is "
                "State in this diagnostic");
  return false;
}

/// Instantiated when an algebraic equation's f returns a tuple of Returned values for Unknowns
/// unknowns (compile/algebra_solver.hpp).
template <std::size_t Returned, std::size_t Unknowns>
constexpr bool algebra_rhs_size_mismatch() {
  static_assert(Returned == Unknowns,
                "tyche::solve_newton/solve_powell(f, guess): f(x) returns a tuple whose size is not the number of "
                "unknowns (the size of 'guess'); the two sizes are Returned and Unknowns in this diagnostic");
  return false;
}
/// Instantiated when an algebraic equation's f cannot be called as f(x).
template <std::size_t Unknowns>
constexpr bool algebra_rhs_arity_mismatch() {
  static_assert(Unknowns != Unknowns,
                "tyche::solve_newton/solve_powell(f, guess) requires f(x) to take the unknowns (a scalar expression "
                "for one unknown, else x with x[k]) and to return the K residuals whose root is sought; the number of "
                "unknowns is Unknowns in this diagnostic");
  return false;
}

/// Σₖ aₖ · fₖ for what f returned: a scalar (K = 1), a std::tuple of K scalars, or a vector
/// expression of K values. Algebraic: f is an algebraic equation's (the messages say so).
template <std::size_t K, bool Algebraic, class R>
auto ode_objective(const R& r, const char* fn) {
  const vector_param<scan_adjoint_name, K> a{};
  if constexpr (is_std_tuple<R>::value) {
    if constexpr (std::tuple_size_v<R> != K) {
      if constexpr (Algebraic) (void)algebra_rhs_size_mismatch<std::tuple_size_v<R>, K>();
      else (void)ode_rhs_size_mismatch<std::tuple_size_v<R>, K>();
      return at(a, 0) * at(vector_param<ode_state_name, K>{}, 0);  // of the right form: no further errors
    } else {
      return [&]<std::size_t... I>(std::index_sequence<I...>) {
        constexpr bool scalars = (!is_vector_v<node_t<std::tuple_element_t<I, R>>> && ...);
        static_assert(scalars || Algebraic,
                      "tyche::ode_rk45/ode_stiff(f, y0, t0, ts): a tuple returned by f must hold scalar expressions");
        static_assert(scalars || !Algebraic,
                      "tyche::solve_newton/solve_powell(f, guess): a tuple returned by f must hold scalar expressions");
        return ((at(a, I) * std::get<I>(r)) + ...);
      }(std::make_index_sequence<K>{});
    }
  } else if constexpr (!is_vector_v<node_t<R>>) {
    static_assert(K == 1 || Algebraic,
                  "tyche::ode_rk45/ode_stiff(f, y0, t0, ts): f returns a scalar but the state has more than one value; "
                  "return a std::tuple of dy_k/dt");
    static_assert(K == 1 || !Algebraic,
                  "tyche::solve_newton/solve_powell(f, guess): f returns a scalar but there is more than one unknown; "
                  "return a std::tuple of the K residuals");
    return at(a, 0) * r;
  } else {
    const auto n = as_node(r);
    if (n.size() != K)
      throw std::invalid_argument(std::string("tyche::") + fn +
                                  (Algebraic ? "(f, guess): f returns a vector of size " + std::to_string(n.size()) +
                                                   ", there are " + std::to_string(K) + " unknowns"
                                             : "(f, y0, t0, ts): f returns a vector of size " +
                                                   std::to_string(n.size()) + ", the state has size " +
                                                   std::to_string(K)));
    return sum(a * n);
  }
}

/// Whether Ts is a data vector (data(ts)).
template <class Ts>
constexpr bool ode_times_are_data() {
  if constexpr (expression<Ts>) return kind_of<node_t<Ts>> == node_kind::data_vector;
  else return false;
}

/// The sensitivity columns of the right-hand side's parameters L: one per scalar, a vector's
/// size (a size known only at run time counted as large).
template <class L>
struct ode_columns;
template <class... Ps>
struct ode_columns<meta::list<Ps...>> {
  template <class P>
  static constexpr std::size_t of() {
    if constexpr (kind_of<P> == node_kind::vector_param) return P::extent == dynamic_extent ? 1000000 : P::extent;
    else return 1;
  }
  static constexpr std::size_t value = (std::size_t{0} + ... + of<Ps>());
};

/// The first hoisted subexpression of the same type as subexpression J (J itself if none, or
/// if it holds run-time values: not shareable_v, e.g. an element's index).
template <std::size_t J, class Tuple>
constexpr std::size_t ode_first_same() {
  using H = std::tuple_element_t<J, Tuple>;
  if constexpr (!shareable_v<H>) {
    return J;
  } else {
    return []<std::size_t... I>(std::index_sequence<I...>) {
      std::size_t first = J;
      ((first = (first == J && std::is_same_v<std::tuple_element_t<I, Tuple>, H>) ? I : first), ...);
      return first;
    }(std::make_index_sequence<J>{});
  }
}

/// What a negation negates (void for any other node).
template <class N>
struct ode_negated {
  using type = void;
};
template <class A>
struct ode_negated<unary_node<rules::negate, A>> {
  using type = A;
};

/// The hoisted subexpression whose negation subexpression J is (−ka beside ka, ka = CL/V + kd:
/// not a function of one parameter, so hoisted whole both times), J itself if none.
template <std::size_t J, class Tuple>
constexpr std::size_t ode_negation_of() {
  using H = std::tuple_element_t<J, Tuple>;
  using A = typename ode_negated<node_t<H>>::type;
  if constexpr (!shareable_v<H> || std::is_void_v<A>) {
    return J;
  } else {
    return []<std::size_t... I>(std::index_sequence<I...>) {
      std::size_t of = J;
      ((of = (of == J && I != J && std::is_same_v<node_t<std::tuple_element_t<I, Tuple>>, A>) ? I : of), ...);
      return of;
    }(std::make_index_sequence<std::tuple_size_v<Tuple>>{});
  }
}

/// (node, hoisted) with each placeholder whose subexpression repeats an earlier one's (ka's
/// exp(θ), used in two terms of f) replaced by the earlier placeholder, and each whose
/// subexpression is another's negation by that one's placeholder negated: one parameter of f, so
/// one sensitivity column. The hoisted tuple is kept whole (an unused entry is not an operand).
template <std::size_t J, class Pair>
auto ode_dedupe_hoists(const Pair& p) {
  using Tuple = std::remove_cvref_t<decltype(p.second)>;
  if constexpr (J == std::tuple_size_v<Tuple>) {
    return p;
  } else {
    constexpr std::size_t first = ode_first_same<J, Tuple>();
    constexpr std::size_t negation_of = ode_negation_of<J, Tuple>();
    if constexpr (first == J && negation_of != J) {
      constexpr std::size_t target = ode_first_same<negation_of, Tuple>();  // that one's placeholder, deduplicated
      auto node = substitute<param<hoist_name<J>()>>(p.first, -param<hoist_name<target>()>{});
      return ode_dedupe_hoists<J + 1>(std::pair{node, p.second});
    } else if constexpr (first == J) {
      return ode_dedupe_hoists<J + 1>(p);
    } else {
      // A repeat of `first`: its placeholder, or, where `first` was itself a negation replaced by
      // another's placeholder negated, that.
      constexpr std::size_t first_negates = ode_negation_of<first, Tuple>();
      if constexpr (first_negates != first) {
        auto node = substitute<param<hoist_name<J>()>>(
            p.first, -param<hoist_name<ode_first_same<first_negates, Tuple>()>()>{});
        return ode_dedupe_hoists<J + 1>(std::pair{node, p.second});
      } else {
        auto node = substitute<param<hoist_name<J>()>>(p.first, param<hoist_name<first>()>{});
        return ode_dedupe_hoists<J + 1>(std::pair{node, p.second});
      }
    }
  }
}

/// The parameters of list L an ODE's or an algebraic equation's program takes as operands: all
/// but its own placeholders (the adjoint weights a, the state y and the time t). An enclosing
/// tabulate's or scan's placeholders (the element's index and sequence values, "__scan_index",
/// "__scan_x0", …) are operands like the model's parameters, so that a solve can sit inside
/// tabulate's lambda (one solve per element); scan's own outer_params drops every placeholder.
template <std::size_t K, class L>
struct ode_outer_params;
template <std::size_t K, class... Ps>
struct ode_outer_params<K, meta::list<Ps...>> {
  template <class P>
  static constexpr bool own = std::is_same_v<P, vector_param<scan_adjoint_name, K>> ||
                              std::is_same_v<P, vector_param<ode_state_name, K>> ||
                              std::is_same_v<P, param<ode_time_name>>;
  using type = meta::concat<std::conditional_t<own<Ps>, meta::list<>, meta::list<Ps>>...>;
};

/// The node, for a state of K values (an algebraic equation's K unknowns), once the inputs are
/// checked (ode_impl, algebra_solver.hpp's solve_impl); Method: the solver (ode_map's). An ODE's
/// n output times are at `times`; an algebraic equation has none (null, n = 1).
template <std::size_t K, class Method, class F, class InitNode>
auto ode_build(F&& f, const InitNode& init_node, double t0, const double* times, std::size_t n, double rtol,
               double atol, long long max_num_steps) {
  // The right-hand side's graph, from placeholders.
  using state_param = vector_param<ode_state_name, K>;
  using time_param = param<ode_time_name>;
  using Y = std::conditional_t<K == 1, param_element<state_param>, scan_state<K, ode_state_name>>;
  auto rhs = [&] {
    constexpr bool callable = Method::algebraic ? std::is_invocable_v<F&, Y> : std::is_invocable_v<F&, time_param, Y>;
    if constexpr (!callable) {
      if constexpr (Method::algebraic) (void)algebra_rhs_arity_mismatch<K>();
      else (void)ode_rhs_arity_mismatch<K>();
      if constexpr (K == 1) return at(state_param{}, 0) + 0.0;
      else return state_param{} + 0.0;
    } else if constexpr (Method::algebraic) {
      return f(Y{});
    } else {
      return f(time_param{}, Y{});
    }
  }();
  // Loop invariants out (as scan hoists them), where that does not add sensitivity columns: a
  // hoisted subexpression is one column (CL / V for CL and V), but one whose parameters are used
  // elsewhere in f too adds one. A function of one parameter is hoisted right above it (ka's
  // exp(θ), not −ka), and the same subexpression hoisted twice is one column (ode_dedupe_hoists).
  // Of the hoisted and the plain form, the one with fewer columns is compiled (the hoisted one on
  // a tie: f then evaluates less). An algebraic equation's program has the time too (unused).
  const auto raw = as_node(ode_objective<K, Method::algebraic>(rhs, Method::name));
  using Hoisted = decltype(ode_dedupe_hoists<0>(hoist_rewrite<0, false>(raw)));
  constexpr bool hoist =
      ode_columns<typename ode_outer_params<K, params_of<node_t<typename Hoisted::first_type>>>::type>::value <=
      ode_columns<typename ode_outer_params<K, params_of<node_t<decltype(raw)>>>::type>::value;
  const auto rewritten = [&] {
    if constexpr (hoist) return ode_dedupe_hoists<0>(hoist_rewrite<0, false>(raw));
    else return std::pair{raw, std::tuple<>{}};
  }();
  const auto& objective = rewritten.first;
  using G = node_t<decltype(objective)>;
  using outer = typename ode_outer_params<K, params_of<G>>::type;
  using layout = meta::concat<meta::list<vector_param<scan_adjoint_name, K>, state_param, time_param>, outer>;
  using Program = decltype(compile_with_layout<layout>(objective, vector_param<scan_adjoint_name, K>{}, state_param{},
                                                       time_param{}));
  auto program = std::make_shared<const Program>(
      compile_with_layout<layout>(objective, vector_param<scan_adjoint_name, K>{}, state_param{}, time_param{}));
  auto outer_nodes = scan_outer_nodes<outer>::make(*program, 3, rewritten.second);
  constexpr bool y0_columns = !Method::algebraic && params_of<InitNode>::size > 0;
  using Op = ops::ode_map<Program, K, outer::size, y0_columns, Method, true>;
  const ode_settings settings{t0, times, n, rtol, atol, static_cast<std::size_t>(max_num_steps)};
  const Op op{program, program->view(), settings};
  return std::apply([&](const auto&... p) { return make_vector_op(op, K * n, init_node, p...); }, outer_nodes);
}

/// The output times finite, after t0 and in order; the tolerances positive (one function for
/// every model: not a template).
inline void ode_check_inputs(const char* name, const double* ts, std::size_t n, const std::string& ts_name, double t0,
                             double rtol, double atol, long long max_num_steps) {
  const std::string fn = std::string("tyche::") + name + "(f, y0, t0, ts): ";
  if (!std::isfinite(t0)) throw std::invalid_argument(fn + "t0 is " + format_number(t0) + "; it must be finite");
  if (n == 0) throw std::invalid_argument(fn + "the output times " + ts_name + " are empty");
  for (std::size_t r = 0; r < n; ++r) {
    const double v = ts[r];
    const std::string at_r = "the output times " + ts_name + " have value " + format_number(v) + " at index " +
                             std::to_string(r + 1) + " (1-based)";
    if (!std::isfinite(v)) throw std::invalid_argument(fn + at_r + "; output times must be finite");
    if (r == 0 && !(v > t0))
      throw std::invalid_argument(fn + at_r + ", not after t0 = " + format_number(t0) +
                                  "; every output time must be greater than t0");
    if (r > 0 && v < ts[r - 1])
      throw std::invalid_argument(fn + at_r + ", before the one at index " + std::to_string(r) + " (" +
                                  format_number(ts[r - 1]) + "); output times must be in non-decreasing order");
  }
  if (!(rtol > 0) || !std::isfinite(rtol))
    throw std::invalid_argument(fn + "relative_tolerance is " + format_number(rtol) +
                                "; it must be positive and finite");
  if (!(atol > 0) || !std::isfinite(atol))
    throw std::invalid_argument(fn + "absolute_tolerance is " + format_number(atol) +
                                "; it must be positive and finite");
  if (max_num_steps <= 0)
    throw std::invalid_argument(fn + "max_num_steps is " + std::to_string(max_num_steps) + "; it must be positive");
}

template <class Method, class F, class Init, class Ts>
auto ode_impl(F&& f, const Init& y0, double t0, const Ts& ts, double rtol, double atol, long long max_num_steps) {
  const auto init_node = scan_initial_node(y0);
  using InitNode = std::remove_cvref_t<decltype(init_node)>;
  constexpr std::size_t K = is_vector_v<InitNode> ? InitNode::extent : 1;
  static_assert(K != dynamic_extent,
                "tyche::ode_rk45/ode_stiff(f, y0, t0, ts) requires the state's size to be known at compile time: make "
                "'y0' with shape<K>, or a std::tuple of scalars");
  if constexpr (K == dynamic_extent) {
    return 0.0;  // no further errors
  } else {
    const auto times = as_node(ts);
    const std::string reads = operand_reads(times);  // "ts", or "ts ('times')" for data(times, "times")
    const bool named = reads.rfind("data '", 0) == 0 && reads.find(" with ") == std::string::npos;
    ode_check_inputs(Method::name, times.ptr, times.size(), named ? "ts (" + reads.substr(5) + ")" : std::string("ts"),
                     t0, rtol, atol, max_num_steps);
    return ode_build<K, Method>(std::forward<F>(f), init_node, t0, times.ptr, times.size(), rtol, atol, max_num_steps);
  }
}
/// ode_rk45_tol and ode_stiff_tol: the output times checked to be data, then built.
template <class Method, class F, class Init, class Ts>
auto ode_tol(F&& f, const Init& y0, double t0, const Ts& ts, double rtol, double atol, long long max_num_steps) {
  static_assert(ode_times_are_data<Ts>(),
                "tyche::ode_rk45/ode_stiff(f, y0, t0, ts) requires the output times ts as data: data(ts) of a "
                "std::vector<double>");
  if constexpr (ode_times_are_data<Ts>())
    return ode_impl<Method>(std::forward<F>(f), y0, t0, ts, rtol, atol, max_num_steps);
  else
    return 0.0;
}
}  // namespace detail

/// ode_rk45 with its tolerances and step limit given (Stan's ode_rk45_tol): the error of each
/// step, in the max norm over the state and its sensitivities, is kept below
/// absolute_tolerance + relative_tolerance · |value|; max_num_steps bounds the steps (accepted
/// or rejected) between two output times.
template <class F, class Init, class Ts>
auto ode_rk45_tol(F&& f, const Init& y0, double t0, const Ts& ts, double relative_tolerance,
                  double absolute_tolerance, long long max_num_steps) {
  return detail::ode_tol<detail::ode_rk45_method>(std::forward<F>(f), y0, t0, ts, relative_tolerance, absolute_tolerance,
                                max_num_steps);
}

/// The solution of dy/dt = f(t, y), y(t0) = y0, at the output times ts (Stan's ode_rk45):
/// y0 is a scalar (one state value), a vector expression of a size known at compile time, or a
/// std::tuple of scalar expressions; it may depend on the model's parameters. f(t, y) receives
/// the time (a scalar expression) and the state (a scalar expression for one value, else y with
/// y[k]) and returns dy/dt in the same form: a scalar, a std::tuple of K scalars, or a vector
/// expression of K values. It may use any random variable or data of the model (capture them)
/// and any elementwise function. t0 is a number; ts = data(times), the output times, after t0
/// and in non-decreasing order. The result is a vector of K·N values, component by component: yₖ at
/// ts[r] at index k·N + r (0-based), so segment(sol, k·N + 1, N) is component k's path
/// (1-based, as Stan's segment); for one state value, the path itself.
///
/// The Dormand–Prince 5(4) method with an adaptive step (relative and absolute tolerance 1e-6,
/// at most 10⁶ steps between two output times: ode_rk45_tol sets them), the gradient by forward
/// sensitivities. Where a solve fails (those steps run out; f not finite at the start) the values
/// are NaN, so the log density is NaN and the sampler rejects that point as Stan does. For stiff
/// systems an explicit method needs very many steps: ode_stiff is the solver for them.
///
/// Example, one-compartment oral absorption (gut and central amounts; CL, V, ka random variables):
///     auto sol = ode_rk45([&](const auto& t, const auto& a) {
///         return std::tuple{-ka * a[0], ka * a[0] - CL / V * a[1]}; },
///       std::tuple{dose, 0.0}, 0.0, data(times));
///     lognormal(log(assume_positive(segment(sol, N + 1, N) / V)), sigma).observe(data(conc))
template <class F, class Init, class Ts>
auto ode_rk45(F&& f, const Init& y0, double t0, const Ts& ts) {
  return ode_rk45_tol(std::forward<F>(f), y0, t0, ts, 1e-6, 1e-6, 1000000);
}

/// ode_stiff with its tolerances and step limit given (as ode_rk45_tol; Stan's ode_bdf_tol takes
/// the same three).
template <class F, class Init, class Ts>
auto ode_stiff_tol(F&& f, const Init& y0, double t0, const Ts& ts, double relative_tolerance,
                   double absolute_tolerance, long long max_num_steps) {
  return detail::ode_tol<detail::ode_stiff_method>(std::forward<F>(f), y0, t0, ts, relative_tolerance, absolute_tolerance,
                               max_num_steps);
}

/// The solution of a stiff ODE dy/dt = f(t, y), y(t0) = y0, at the output times ts: the same
/// arguments, result, tolerances (1e-6, 1e-6, 10⁶ steps) and failures (NaN) as ode_rk45, where
/// Stan users write ode_bdf. The method is the Rosenbrock-W method ROS34PW2 (Rang & Angermann
/// 2005; order 3, L-stable) with an adaptive step: each step solves linear systems with
/// I − hγ ∂f/∂y (∂f/∂y from f's gradient, as the sensitivities use it), so a step size is not
/// limited by the fastest decaying component as an explicit method's is. For a system with
/// time scales far apart (an absorption rate 1000× the elimination rate, chemical kinetics),
/// ode_stiff takes tens of steps where ode_rk45 takes thousands; for a non-stiff one ode_rk45 is
/// cheaper (a higher order, no linear algebra).
template <class F, class Init, class Ts>
auto ode_stiff(F&& f, const Init& y0, double t0, const Ts& ts) {
  return ode_stiff_tol(std::forward<F>(f), y0, t0, ts, 1e-6, 1e-6, 1000000);
}

}  // namespace tyche
