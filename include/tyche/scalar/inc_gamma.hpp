// tyche/scalar/inc_gamma.hpp — the regularised incomplete gamma functions in log form,
// log P(a, x) and log Q(a, x) = log(1 − P(a, x)), with their derivatives in a and x, for the
// CDFs of the gamma family and the Poisson counts (autodiff/special.hpp's rules log_gamma_p and
// log_gamma_q). Host and CUDA device code, double precision.
//
// P by its series for x < a + 1 and Q by its continued fraction (modified Lentz) otherwise, as
// in Numerical Recipes §6.2 (Press et al., 3rd ed.); the other one as log(−expm1(·)) of that. The
// derivative in a is that of the same iteration, carried along by forward-mode dual numbers in a
// (the terms' derivatives converge with the terms); the derivative in x is the closed form
// ∂P/∂x = x^(a−1) e^(−x) / Γ(a).
#pragma once
#include <tyche/config.hpp>
#include <tyche/scalar/math.hpp>

namespace tyche::math {

namespace detail {
/// A number and its derivative in a: the arithmetic of forward-mode differentiation.
struct dual_a {
  double v = 0, d = 0;
};
TYCHE_HD inline dual_a operator+(dual_a p, dual_a q) { return {p.v + q.v, p.d + q.d}; }
TYCHE_HD inline dual_a operator-(dual_a p, dual_a q) { return {p.v - q.v, p.d - q.d}; }
TYCHE_HD inline dual_a operator*(dual_a p, dual_a q) { return {p.v * q.v, p.d * q.v + p.v * q.d}; }
TYCHE_HD inline dual_a operator/(dual_a p, dual_a q) {  // one division
  const double r = 1 / q.v, v = p.v * r;
  return {v, (p.d - v * q.d) * r};
}
TYCHE_HD inline dual_a constant_dual(double c) { return {c, 0.0}; }
}  // namespace detail

/// log P(a, x) and log Q(a, x) and their derivatives, a > 0, x ≥ 0.
struct log_inc_gamma_result {
  double log_p = 0, log_q = 0;      // log P(a, x), log Q(a, x)
  double log_p_da = 0, log_p_dx = 0;  // ∂/∂a, ∂/∂x of log P
  double log_q_da = 0, log_q_dx = 0;  // of log Q
};

/// log P(a, x), log Q(a, x) and their derivatives (see the top of the file). NaN for a ≤ 0,
/// x < 0 or NaN arguments; at x = 0, log P = −∞ and log Q = 0 (derivatives 0); at x = ∞,
/// log P = 0 and log Q = −∞.
TYCHE_HD inline log_inc_gamma_result log_inc_gamma(double a, double x) {
  using detail::dual_a;
  log_inc_gamma_result r;
  if (!(a > 0) || !(x >= 0)) {
    const double nan = ::nan("");
    r = {nan, nan, nan, nan, nan, nan};
    return r;
  }
  if (x == 0) {
    r.log_p = -INFINITY;
    return r;
  }
  if (x == INFINITY) {
    r.log_q = -INFINITY;
    return r;
  }
  constexpr double eps = 2.220446049250313e-16;  // the double's epsilon
  constexpr double tiny = 1e-300;
  constexpr int max_terms = 100000;
  const double log_x = ::log(x);
  const dual_a av{a, 1.0};
  bool converged = false;
  // log(x^a e^(−x) / Γ(a + 1)): for a > 1 as Loader's −stirling_error(a) − deviance_term(a, x) −
  // log √(2πa), whose terms are small where the direct a log x − x − log Γ(a + 1) subtracts
  // numbers of size a log a (3e-11 relative at a = 10⁴ before).
  const double log_front = a > 1 ? -stirling_error(a) - deviance_term(a, x) - 0.5 * (log_two_pi + ::log(a))
                                  : a * log_x - x - ::lgamma(a + 1);
  const double log_density = log_front + ::log(a) - log_x;  // log of ∂P/∂x = x^(a−1) e^(−x) / Γ(a)
  if (x < a + 1) {
    // ψ of a + 1, not of a (no cancellation with 1/a for a small a).
    // P = x^a e^(−x) / Γ(a + 1) · Σₙ xⁿ / ((a + 1)…(a + n)).
    dual_a term = detail::constant_dual(1.0), sum = term;
    const dual_a xd = detail::constant_dual(x);
    for (int n = 1; n < max_terms; ++n) {
      term = term * xd / (av + detail::constant_dual(n));
      sum = sum + term;
      if (term.v <= sum.v * eps && ::fabs(term.d) <= (sum.v + ::fabs(sum.d)) * eps) {
        converged = true;
        break;
      }
    }
    r.log_p = log_front + ::log(sum.v);
    r.log_p_da = log_x - digamma(a + 1) + sum.d / sum.v;
    r.log_q = log1m_exp_scalar(r.log_p);
    const double p_over_q = ::exp(r.log_p - r.log_q);
    r.log_q_da = -p_over_q * r.log_p_da;
  } else {
    // Q = x^a e^(−x) / Γ(a) · 1 / (x + 1 − a − 1·(1 − a) / (x + 3 − a − 2·(2 − a) / (x + 5 − a − …))).
    dual_a b = detail::constant_dual(x + 1) - av;
    dual_a c = detail::constant_dual(1 / tiny);
    dual_a d = detail::constant_dual(1) / b;
    dual_a h = d;
    for (int i = 1; i < max_terms; ++i) {
      const dual_a an = detail::constant_dual(-i) * (detail::constant_dual(i) - av);
      b = b + detail::constant_dual(2);
      d = an * d + b;
      if (::fabs(d.v) < tiny) d = detail::constant_dual(tiny);
      c = b + an / c;
      if (::fabs(c.v) < tiny) c = detail::constant_dual(tiny);
      d = detail::constant_dual(1) / d;
      const dual_a del = d * c;
      h = h * del;
      // Both the value and its derivative converged: at an integer a the fraction ends (a term
      // aₙ = −n(n − a) is 0 and δ = 1 from there on), but the derivative's terms go on.
      if (::fabs(del.v - 1) <= 2 * eps && ::fabs(del.d) <= 8 * eps * (1 + ::fabs(h.d / h.v))) {
        converged = true;
        break;
      }
    }
    r.log_q = log_front + ::log(a) + ::log(h.v);  // x^a e^(−x) / Γ(a) = a · front
    r.log_q_da = log_x - digamma(a) + h.d / h.v;
    r.log_p = log1m_exp_scalar(r.log_q);
    const double q_over_p = ::exp(r.log_q - r.log_p);
    r.log_p_da = -q_over_p * r.log_q_da;
  }
  if (!converged) {  // not within max_terms (shapes beyond 10⁸): NaN, not a truncated value
    const double nan = ::nan("");
    r = {nan, nan, nan, nan, nan, nan};
    return r;
  }
  r.log_p_dx = ::exp(log_density - r.log_p);
  r.log_q_dx = -::exp(log_density - r.log_q);
  return r;
}

}  // namespace tyche::math
