// tyche/compile/algebra_solver.hpp — solve_newton(f, guess) and solve_powell(f, guess): the root
// x of a system of K algebraic equations f(x) = 0, written as a lambda, with its gradient by the
// implicit function theorem (Stan's solve_newton and solve_powell).
//
// The equations are compiled as an ODE's right-hand side is (compile/ode.hpp): the lambda is
// called once on placeholders, its K residuals become the program G(a, x, p) = Σₖ aₖ fₖ(x, p),
// p the model's parameters f uses (loop invariants hoisted as one column each), and K gradient
// evaluations give f, ∂f/∂x and ∂f/∂p at a point. The node is the same op (ops::ode_map) with an
// algebraic method: its forward pass finds the root of each chain (each SIMD lane) in double and
// keeps S = ∂x/∂p = −(∂f/∂x)⁻¹ ∂f/∂p there; its reverse pass is adjᵀ S, as an ODE's. The guess is
// the op's operand 0 and carries no derivative: the root does not depend on it.
//
// solve_newton: Newton's method with a backtracking line search on ½‖f‖² (Dennis & Schnabel,
// Numerical Methods for Unconstrained Optimization and Nonlinear Equations, 1983, 6.3; KINSOL's
// line-search strategy, which Stan's solve_newton runs); solve_powell: Powell's hybrid (dogleg)
// trust-region method (Powell 1970; MINPACK's hybrj, which Stan's solve_powell runs through
// Eigen), both with the exact Jacobian at every iterate. See docs/design/ode.md, "Algebraic
// equations".
#pragma once
#include <tyche/config.hpp>
#include <tyche/compile/ode.hpp>
#include <tyche/compile/scan.hpp>
#include <tyche/core/nodes.hpp>
#include <tyche/scalar/format.hpp>

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <tuple>
#include <array>
#include <type_traits>
#include <utility>

namespace tyche {

namespace detail {

/// The doubles one algebraic solve needs besides its inputs and outputs: θ, the gradient and
/// the workspace of the equations' program, the Jacobians (K × (K + P)), ∂f/∂x's factors and
/// eight vectors of K.
TYCHE_HD inline std::size_t algebra_solver_doubles(std::size_t k, std::size_t, std::size_t dim, std::size_t ws) {
  return 2 * dim + ws + k * (dim - k - 1) + k * k + 8 * k;
}

/// The residuals f(x) (K values) by one gradient evaluation of G (∂G/∂aⱼ = fⱼ); θ's parameters
/// are the caller's.
template <std::size_t K, class View>
TYCHE_HD void algebra_residuals(const View& rhs, const double* x, double* f, double* theta, double* grad,
                                double* ws) {
  for (std::size_t k = 0; k < K; ++k) {
    theta[k] = k == 0 ? 1.0 : 0.0;
    theta[K + k] = x[k];
  }
  rhs.template value_and_gradient<double>(theta, grad, ws);
  for (std::size_t k = 0; k < K; ++k) f[k] = grad[k];
}

/// ‖v‖ (Euclidean) over K values, scaled by the largest |vᵢ| so that it does not overflow before
/// the norm itself does; +∞ where any value is not finite (a trial point where f is not finite is
/// as bad as can be).
template <std::size_t K>
TYCHE_HD double algebra_norm(const double* v) {
  double m = 0;
  for (std::size_t k = 0; k < K; ++k) {
    if (!ode_finite(v[k])) return HUGE_VAL;
    const double a = ::fabs(v[k]);
    if (a > m) m = a;
  }
  if (m == 0.0) return 0.0;
  double s = 0;
  for (std::size_t k = 0; k < K; ++k) s += (v[k] / m) * (v[k] / m);
  return m * ::sqrt(s);
}

/// The workspace of one algebraic solve, carved from w, and the steps both methods share.
template <std::size_t K, class View>
struct algebra_workspace {
  const View& rhs;
  std::size_t p, nj;
  double *theta, *grad, *ws, *jac, *lu, *x, *f, *step, *xn, *fn, *g, *v;
  std::size_t piv[K];

  TYCHE_HD algebra_workspace(const View& r, double* w)
      : rhs(r), p(r.dim() - 2 * K - 1), nj(K + p), theta(w), grad(theta + r.dim()), ws(grad + r.dim()),
        jac(ws + r.workspace_size), lu(jac + K * nj), x(lu + K * K), f(x + K), step(f + K), xn(step + K),
        fn(xn + K), g(fn + K), v(g + K), piv{} {
    if (r.workspace_size == 0) ws = nullptr;
  }
  /// θ from qv (the guess, then the P parameters); false where a value is not finite.
  TYCHE_HD bool start(const double* qv) {
    for (std::size_t i = 0; i < K + p; ++i)
      if (!ode_finite(qv[i])) return false;
    for (std::size_t l = 0; l < p; ++l) theta[2 * K + 1 + l] = qv[K + l];
    theta[2 * K] = 0.0;  // the time slot of the program's layout, unused
    for (std::size_t k = 0; k < K; ++k) x[k] = qv[k];
    return true;
  }
  /// f and the Jacobians at x (K gradient evaluations); ‖f‖, +∞ where f is not finite.
  TYCHE_HD double evaluate_at_x() {
    ode_coupled_rhs<K>(rhs, 0, 0, 0.0, x, f, theta, grad, ws, jac);
    return algebra_norm<K>(f);
  }
  /// ‖f‖ at xn (one gradient evaluation), f(xn) in fn.
  TYCHE_HD double evaluate_at_xn() {
    algebra_residuals<K>(rhs, xn, fn, theta, grad, ws);
    return algebra_norm<K>(fn);
  }
  /// ∂f/∂x's LU factors; false where singular or not finite.
  TYCHE_HD bool factor() {
    for (std::size_t i = 0; i < K; ++i)
      for (std::size_t l = 0; l < K; ++l) lu[i * K + l] = jac[i * nj + l];
    return ode_lu<K>(lu, piv);
  }
  /// The Newton step −(∂f/∂x)⁻¹ f (after factor()).
  TYCHE_HD void newton_step() {
    for (std::size_t k = 0; k < K; ++k) step[k] = -f[k];
    ode_lu_solve<K>(lu, piv, step, 1);
  }
  /// One full Newton step from a point where ‖f‖ is within the tolerance, kept if ‖f‖ does not
  /// grow: quadratic convergence takes the root from the tolerance to about its square.
  TYCHE_HD void polish(double& fnorm) {
    if (fnorm == 0.0 || !factor()) return;
    newton_step();
    for (std::size_t k = 0; k < K; ++k) xn[k] = x[k] + step[k];
    if (evaluate_at_xn() <= fnorm) {
      for (std::size_t k = 0; k < K; ++k) x[k] = xn[k];
      fnorm = evaluate_at_x();
    }
  }
  /// The root's values and S = −(∂f/∂x)⁻¹ ∂f/∂p (K × Q, Q = P) at x; false where ∂f/∂x is singular.
  TYCHE_HD bool finish(std::size_t q, double* out, double* sens) {
    if (!factor()) return false;
    for (std::size_t k = 0; k < K; ++k) {
      out[k] = x[k];
      for (std::size_t j = 0; j < q; ++j) sens[k * q + j] = -jac[k * nj + K + j];
    }
    for (std::size_t j = 0; j < q; ++j) ode_lu_solve<K>(lu, piv, sens + j, q);
    return true;
  }
};

/// Newton's method with a backtracking line search, for one chain in double: qv holds the
/// guess (K values) then the P parameters; out the root, sens its derivatives by the Q = P
/// parameters. Each iteration takes the Newton step p = −(∂f/∂x)⁻¹ f (at most 1000 · max(‖x‖, 1)
/// long), then x + λp with the largest λ of 1, … (each the minimiser of a quadratic model of
/// ‖f‖², within [0.1λ, 0.5λ]) at which ‖f‖ falls by at least the fraction 10⁻⁴ λ (sufficient
/// decrease). It stops when ‖f‖ (Euclidean) is within function_tolerance, after one more full
/// step (polish); it fails where λ falls below scaling_step_size / (max |pᵢ| / (|xᵢ| + 1))
/// (KINSOL's scaled step) or the step no longer moves x, with ‖f‖ above the tolerance, where ∂f/∂x
/// is singular, or after max_num_steps iterations.
template <std::size_t K, class View>
TYCHE_HD bool algebra_newton_solve(const View& rhs, const ode_settings& s, std::size_t q, std::size_t, const double* qv,
                                   double* out, double* sens, double* w) {
  algebra_workspace<K, View> a(rhs, w);
  if (!a.start(qv)) return false;
  const double ftol = s.absolute_tolerance;
  double fnorm = a.evaluate_at_x();
  if (!(fnorm < HUGE_VAL)) return false;
  for (std::size_t iter = 0;; ++iter) {
    if (fnorm <= ftol) {
      a.polish(fnorm);
      break;
    }
    if (iter >= s.max_num_steps || !a.factor()) return false;
    a.newton_step();
    double xnorm = 0, rel = 0;
    for (std::size_t k = 0; k < K; ++k) xnorm += a.x[k] * a.x[k];
    xnorm = ::sqrt(xnorm);
    const double pnorm = algebra_norm<K>(a.step);
    if (!(pnorm < HUGE_VAL)) return false;
    const double longest = 1000.0 * (xnorm > 1.0 ? xnorm : 1.0);
    const double shrink = pnorm > longest ? longest / pnorm : 1.0;
    for (std::size_t k = 0; k < K; ++k) {
      a.step[k] *= shrink;
      const double r = ::fabs(a.step[k]) / (::fabs(a.x[k]) + 1.0);
      if (r > rel) rel = r;
    }
    if (!(rel > 0)) return false;  // no step, and f not within the tolerance
    // Below λ_min (and below a step of 10⁻¹⁶ relative to x, where scaling_step_size is 0) the
    // iterations make no progress.
    const double lambda_min = (s.relative_tolerance > 1e-16 ? s.relative_tolerance : 1e-16) / rel;
    double lambda = 1.0;
    for (;;) {
      for (std::size_t k = 0; k < K; ++k) a.xn[k] = a.x[k] + lambda * a.step[k];
      const double fn = a.evaluate_at_xn();
      if (fnorm - fn >= 1e-4 * lambda * fnorm) break;
      // The minimiser of the quadratic through ‖f‖² at 0 (slope −2‖f‖²) and at λ, from the
      // ratio r = ‖f(x + λp)‖ / ‖f(x)‖ (r² may overflow: λ then shrinks tenfold).
      const double r = fn / fnorm;
      double next = lambda * lambda / (r * r - 1.0 + 2.0 * lambda);
      if (!(next >= 0.1 * lambda)) next = 0.1 * lambda;
      if (next > 0.5 * lambda) next = 0.5 * lambda;
      lambda = next;
      if (lambda < lambda_min) return false;  // no progress along the Newton direction
    }
    for (std::size_t k = 0; k < K; ++k) a.x[k] = a.xn[k];
    fnorm = a.evaluate_at_x();
  }
  return a.finish(q, out, sens);
}

/// Powell's hybrid (dogleg) method, for one chain in double (arguments as
/// algebra_newton_solve's). A trust region of radius Δ (initially 100 · ‖guess‖, or 100) around
/// x: the step is the Newton step where it lies inside, else the point where the dogleg path —
/// to the Cauchy point (the minimiser of the linear model ‖f + ∂f/∂x p‖² along −∂f/∂xᵀ f), then
/// on to the Newton step — leaves the region (where ∂f/∂x is singular: the Cauchy point, or where
/// the path to it leaves the region). A step is taken where the actual decrease of ‖f‖² is more
/// than 10⁻⁴ of the model's; Δ shrinks to a quarter of the step where that ratio is below 1/4 and
/// grows to twice the step where it is above 3/4. It stops when a step taken is within
/// relative_tolerance · ‖x‖ (MINPACK's xtol test, which Stan's solve_powell sets) or f is exactly
/// 0, and succeeds if ‖f‖ (Euclidean, as Stan checks) is then within function_tolerance (or is
/// within it when the max_num_steps iterations run out); it fails otherwise, or where ∂f/∂x is
/// singular at the root.
template <std::size_t K, class View>
TYCHE_HD bool algebra_powell_solve(const View& rhs, const ode_settings& s, std::size_t q, std::size_t, const double* qv,
                                   double* out, double* sens, double* w) {
  algebra_workspace<K, View> a(rhs, w);
  if (!a.start(qv)) return false;
  double fnorm = a.evaluate_at_x();
  if (!(fnorm < HUGE_VAL)) return false;
  double delta = 100.0 * algebra_norm<K>(a.x);
  if (!(delta > 0)) delta = 100.0;
  for (std::size_t iter = 0;; ++iter) {
    if (fnorm == 0.0 || (iter >= s.max_num_steps && fnorm <= s.absolute_tolerance)) break;
    if (iter >= s.max_num_steps) return false;
    // g = ∂f/∂xᵀ f / ‖f‖, the direction of steepest ascent of ½‖f‖² (scaled by 1/‖f‖: no
    // overflow), and the Newton step where ∂f/∂x is regular.
    for (std::size_t l = 0; l < K; ++l) {
      double t = 0;
      for (std::size_t k = 0; k < K; ++k) t += a.jac[k * a.nj + l] * (a.f[k] / fnorm);
      a.g[l] = t;
    }
    bool newton = a.factor();
    if (newton) {
      a.newton_step();
      newton = algebra_norm<K>(a.step) < HUGE_VAL;
    }
    if (!(newton && algebra_norm<K>(a.step) <= delta)) {
      // The Cauchy point −α g ‖f‖, α = ‖g‖² / ‖∂f/∂x g‖² (the minimiser of the linear model
      // along −g).
      for (std::size_t k = 0; k < K; ++k) {
        double t = 0;
        for (std::size_t l = 0; l < K; ++l) t += a.jac[k * a.nj + l] * a.g[l];
        a.v[k] = t;
      }
      const double gn = algebra_norm<K>(a.g), jgn = algebra_norm<K>(a.v);
      if (!(gn > 0) || !(jgn > 0) || !(gn < HUGE_VAL) || !(jgn < HUGE_VAL))
        return false;  // a stationary point of ‖f‖ that is not a root
      const double cauchy = (gn / jgn) * (gn / jgn) * fnorm;  // −cauchy · g is the Cauchy point
      if (cauchy * gn >= delta) {
        for (std::size_t k = 0; k < K; ++k) a.step[k] = -delta / gn * a.g[k];  // to the region's edge
      } else if (!newton) {
        for (std::size_t k = 0; k < K; ++k) a.step[k] = -cauchy * a.g[k];
      } else {
        // From the Cauchy point c towards the Newton step: c + τ (p_N − c) with ‖·‖ = Δ, τ in (0, 1].
        double dd = 0, cd = 0, cc = 0;
        for (std::size_t k = 0; k < K; ++k) {
          const double c = -cauchy * a.g[k], d = a.step[k] - c;
          dd += d * d;
          cd += c * d;
          cc += c * c;
        }
        const double disc = cd * cd + dd * (delta * delta - cc);
        const double tau = dd > 0 ? (-cd + ::sqrt(disc > 0 ? disc : 0.0)) / dd : 0.0;
        for (std::size_t k = 0; k < K; ++k) {
          const double c = -cauchy * a.g[k];
          a.step[k] = c + tau * (a.step[k] - c);
        }
      }
    }
    // The linear model's decrease of ‖f‖² and the actual one, both relative to ‖f‖².
    for (std::size_t k = 0; k < K; ++k) {
      double t = a.f[k];
      for (std::size_t l = 0; l < K; ++l) t += a.jac[k * a.nj + l] * a.step[l];
      a.v[k] = t / fnorm;
    }
    const double model = algebra_norm<K>(a.v);
    const double predicted = 1.0 - model * model;
    for (std::size_t k = 0; k < K; ++k) a.xn[k] = a.x[k] + a.step[k];
    const double r = a.evaluate_at_xn() / fnorm;
    const double ratio = predicted > 0 ? (1.0 - r * r) / predicted : -1.0;
    const double pn = algebra_norm<K>(a.step);
    if (ratio < 0.25) delta = 0.25 * pn;
    else if (ratio > 0.75 && 2.0 * pn > delta) delta = 2.0 * pn;
    if (ratio > 1e-4) {
      for (std::size_t k = 0; k < K; ++k) a.x[k] = a.xn[k];
      fnorm = a.evaluate_at_x();
      if (!(fnorm < HUGE_VAL)) return false;
      if (pn <= s.relative_tolerance * algebra_norm<K>(a.x)) break;
    } else if (delta <= s.relative_tolerance * algebra_norm<K>(a.x)) {
      break;  // the region has shrunk to nothing around a point that is no root (or is one)
    }
  }
  if (fnorm > s.absolute_tolerance) return false;
  return a.finish(q, out, sens);
}

struct solve_newton_method {
  static constexpr const char* name = "solve_newton";
  static constexpr bool algebraic = true;
  TYCHE_HD static std::size_t doubles(std::size_t k, std::size_t q, std::size_t dim, std::size_t ws) {
    return algebra_solver_doubles(k, q, dim, ws);
  }
  template <std::size_t K, class View>
  TYCHE_HD static bool solve(const View& rhs, const ode_settings& s, std::size_t q, std::size_t y0c, const double* qv,
                             double* out, double* sens, double* w) {
    return algebra_newton_solve<K>(rhs, s, q, y0c, qv, out, sens, w);
  }
};
struct solve_powell_method {
  static constexpr const char* name = "solve_powell";
  static constexpr bool algebraic = true;
  TYCHE_HD static std::size_t doubles(std::size_t k, std::size_t q, std::size_t dim, std::size_t ws) {
    return algebra_solver_doubles(k, q, dim, ws);
  }
  template <std::size_t K, class View>
  TYCHE_HD static bool solve(const View& rhs, const ode_settings& s, std::size_t q, std::size_t y0c, const double* qv,
                             double* out, double* sens, double* w) {
    return algebra_powell_solve<K>(rhs, s, q, y0c, qv, out, sens, w);
  }
};

/// The guess's values where they are numbers (a number, or a std::tuple of numbers), checked
/// finite: the message names the function, the index and the value.
template <class Guess>
void algebra_check_guess(const char* fn, const Guess& guess) {
  const auto check = [&](double v, std::size_t i) {
    if (!std::isfinite(v))
      throw std::invalid_argument(std::string("tyche::") + fn + "(f, guess): the guess has value " +
                                  format_number(v) + " at index " + std::to_string(i + 1) +
                                  " (1-based); it must be finite");
  };
  if constexpr (std::is_arithmetic_v<Guess>) {
    check(static_cast<double>(guess), 0);
  } else if constexpr (is_std_tuple<Guess>::value) {
    std::size_t i = 0;
    std::apply(
        [&](const auto&... e) {
          (
              [&](const auto& v) {
                if constexpr (std::is_arithmetic_v<std::remove_cvref_t<decltype(v)>>) check(static_cast<double>(v), i);
                ++i;
              }(e),
              ...);
        },
        guess);
  }
}

/// Whether a tuple guess holds scalars (numbers or scalar expressions), one per unknown.
template <class Guess>
constexpr bool algebra_guess_of_scalars() {
  if constexpr (is_std_tuple<Guess>::value)
    return []<class... E>(std::tuple<E...>*) { return (!is_vector_v<node_t<E>> && ...); }(static_cast<Guess*>(nullptr));
  else
    return true;
}

/// The tolerances and the guess checked, then the node (ode_build with an algebraic Method).
template <class Method, class F, class Guess>
auto solve_checked(F&& f, const Guess& guess, double step_tolerance, const char* step_name, double function_tolerance,
                   long long max_num_steps) {
  const auto init_node = scan_initial_node(guess);
  using InitNode = std::remove_cvref_t<decltype(init_node)>;
  constexpr std::size_t K = is_vector_v<InitNode> ? InitNode::extent : 1;
  static_assert(K != dynamic_extent,
                "tyche::solve_newton/solve_powell(f, guess) requires the number of unknowns to be known at compile "
                "time: give 'guess' as a std::tuple or a std::array of numbers, as rep_vector<K>(value), or as a "
                "number for one unknown");
  if constexpr (K == dynamic_extent) {
    return 0.0;  // no further errors
  } else {
    const std::string fn = std::string("tyche::") + Method::name + "(f, guess): ";
    if (!(step_tolerance >= 0) || !std::isfinite(step_tolerance))
      throw std::invalid_argument(fn + step_name + " is " + format_number(step_tolerance) +
                                  "; it must be non-negative and finite");
    if (!(function_tolerance > 0) || !std::isfinite(function_tolerance))
      throw std::invalid_argument(fn + "function_tolerance is " + format_number(function_tolerance) +
                                  "; it must be positive and finite");
    if (max_num_steps <= 0)
      throw std::invalid_argument(fn + "max_num_steps is " + std::to_string(max_num_steps) + "; it must be positive");
    algebra_check_guess(Method::name, guess);
    auto root = ode_build<K, Method>(std::forward<F>(f), init_node, 0.0, nullptr, 1, step_tolerance,
                                     function_tolerance, max_num_steps);
    if constexpr (is_vector_v<InitNode>) return root;
    else return at(root, 0);  // one unknown, guessed by a scalar: the root as a scalar
  }
}

/// solve_impl for a guess that is not a std::array: a tuple checked to hold scalars first.
template <class Method, class F, class Guess>
auto solve_guess_checked(F&& f, const Guess& guess, double step_tolerance, const char* step_name,
                         double function_tolerance, long long max_num_steps) {
  static_assert(algebra_guess_of_scalars<Guess>(),
                "tyche::solve_newton/solve_powell(f, guess): a tuple 'guess' must hold numbers or scalar expressions, "
                "one per unknown");
  if constexpr (!algebra_guess_of_scalars<Guess>()) return 0.0;  // no further errors
  else return solve_checked<Method>(std::forward<F>(f), guess, step_tolerance, step_name, function_tolerance,
                                    max_num_steps);
}

template <class T>
struct is_std_array_of_numbers : std::false_type {};
template <class T, std::size_t N>
struct is_std_array_of_numbers<std::array<T, N>> : std::bool_constant<std::is_arithmetic_v<T>> {};

/// solve_newton_tol's and solve_powell_tol's body: a tuple guess checked to hold scalars first;
/// a std::array of numbers taken as the tuple of its values.
template <class Method, class F, class Guess>
auto solve_impl(F&& f, const Guess& guess, double step_tolerance, const char* step_name, double function_tolerance,
                long long max_num_steps) {
  if constexpr (is_std_array_of_numbers<Guess>::value) {
    const auto as_tuple = std::apply([](auto... v) { return std::tuple{static_cast<double>(v)...}; }, guess);
    return solve_impl<Method>(std::forward<F>(f), as_tuple, step_tolerance, step_name, function_tolerance,
                              max_num_steps);
  } else {
    return solve_guess_checked<Method>(std::forward<F>(f), guess, step_tolerance, step_name, function_tolerance,
                                       max_num_steps);
  }
}

}  // namespace detail

/// solve_newton with its tolerances given (Stan's solve_newton_tol): a line search fails where
/// its step falls below scaling_step_size (each |pᵢ| relative to |xᵢ| + 1, KINSOL's scaled
/// step); the root is accepted where ‖f(x)‖ ≤ function_tolerance; max_num_steps bounds the
/// iterations. Where Stan differs: its KINSOL measures f in the max norm (tyche: Euclidean, as
/// Stan's solve_powell), and returns the last iterate when a step falls below
/// scaling_step_size whether or not it is a root (tyche: NaN unless ‖f‖ is within the tolerance).
template <class F, class Guess>
auto solve_newton_tol(F&& f, const Guess& guess, double scaling_step_size, double function_tolerance,
                      long long max_num_steps) {
  return detail::solve_impl<detail::solve_newton_method>(std::forward<F>(f), guess, scaling_step_size,
                                                         "scaling_step_size", function_tolerance, max_num_steps);
}

/// The root x of the K equations f(x) = 0 (Stan's solve_newton), with its gradient by the
/// implicit function theorem: ∂x/∂p = −(∂f/∂x)⁻¹ ∂f/∂p at the root, for every parameter p that
/// f uses. f(x) receives the unknowns (a scalar expression for one, else x with x[k]) and returns
/// the K residuals: a scalar, a std::tuple of K scalars, or a vector expression of K values. It
/// may use any random variable or data of the model (capture them) and any elementwise function.
/// guess: a number (one unknown), a std::tuple of K numbers or scalar expressions, a
/// std::array of K numbers, or a vector expression of K values known at compile time
/// (rep_vector<K>(1.0)); no derivative flows through it. The result is a vector expression of the K unknowns (x[k]), or
/// for a scalar guess a scalar expression.
///
/// Newton's method with a backtracking line search, the exact Jacobian at every iterate
/// (scaling_step_size 10⁻³, function_tolerance 10⁻⁶ in the Euclidean norm, at most 200
/// iterations: solve_newton_tol sets them), and one more Newton step once ‖f‖ is within the
/// tolerance (the root to about the tolerance's square). Where it fails (no progress, a singular
/// Jacobian, the iterations run out) the values are NaN, so the log density is NaN and the
/// sampler rejects that point, as Stan rejects where its solver throws. solve_powell is the more
/// robust of the two far from the root.
///
/// Example, a steady state: the amount x with ka · dose = CL/V · x + x² · kq (ka, CL, V, kq random
/// variables):
///     auto x = solve_newton([&](const auto& x) { return ka * dose - CL / V * x - kq * x * x; }, 1.0);
template <class F, class Guess>
auto solve_newton(F&& f, const Guess& guess) {
  return solve_newton_tol(std::forward<F>(f), guess, 1e-3, 1e-6, 200);
}

/// solve_powell with its tolerances given (Stan's solve_powell_tol): the iterations stop when a
/// step is within relative_tolerance · ‖x‖; the root is accepted where ‖f(x)‖ ≤
/// function_tolerance; max_num_steps bounds the iterations (Stan's bounds the evaluations of f,
/// and fails when they run out even at a root; an iteration here is K + 1 evaluations of f's
/// gradient). function_tolerance must be positive (Stan allows 0).
template <class F, class Guess>
auto solve_powell_tol(F&& f, const Guess& guess, double relative_tolerance, double function_tolerance,
                      long long max_num_steps) {
  return detail::solve_impl<detail::solve_powell_method>(std::forward<F>(f), guess, relative_tolerance,
                                                         "relative_tolerance", function_tolerance, max_num_steps);
}

/// The root x of f(x) = 0 (Stan's solve_powell): the same arguments, result, gradient and
/// failures as solve_newton, by Powell's hybrid (dogleg) trust-region method with the exact
/// Jacobian (relative_tolerance 10⁻¹⁰, function_tolerance 10⁻⁶, at most 200 iterations:
/// solve_powell_tol sets them). A trust region keeps the steps where the linear model holds, so
/// it finds roots from guesses where Newton's line search stalls (a singular Jacobian on the way
/// included).
template <class F, class Guess>
auto solve_powell(F&& f, const Guess& guess) {
  return solve_powell_tol(std::forward<F>(f), guess, 1e-10, 1e-6, 200);
}

}  // namespace tyche
