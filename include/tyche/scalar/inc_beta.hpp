// tyche/scalar/inc_beta.hpp — the regularised incomplete beta function in log form,
// log I_x(a, b) and log(1 − I_x(a, b)), with their derivatives in a, b and x, for the CDFs of
// the beta family and the binomial and negative binomial counts (autodiff/special.hpp's op
// log_inc_beta_map). Host and CUDA device code, double precision.
//
// I_x(a, b) = x^a (1 − x)^b / (a B(a, b)) · 1/(1 + d₁/(1 + d₂/(1 + …))), the continued fraction
// of Numerical Recipes §6.4 (Press et al., 3rd ed.), evaluated by modified Lentz where
// x < (a + 1)/(a + b + 2), and through 1 − I_{1−x}(b, a) elsewhere; the derivatives in a and b
// are those of the same iteration, carried by forward-mode dual numbers (as scalar/inc_gamma.hpp),
// the one in x the closed form x^(a−1) (1 − x)^(b−1) / B(a, b).
#pragma once
#include <tyche/config.hpp>
#include <tyche/scalar/math.hpp>

namespace tyche::math {

namespace detail {
/// A number and its derivatives in two variables (p, q).
struct dual2 {
  double v = 0, dp = 0, dq = 0;
};
TYCHE_HD inline dual2 operator+(dual2 x, dual2 y) { return {x.v + y.v, x.dp + y.dp, x.dq + y.dq}; }
TYCHE_HD inline dual2 operator-(dual2 x, dual2 y) { return {x.v - y.v, x.dp - y.dp, x.dq - y.dq}; }
TYCHE_HD inline dual2 operator*(dual2 x, dual2 y) {
  return {x.v * y.v, x.dp * y.v + x.v * y.dp, x.dq * y.v + x.v * y.dq};
}
TYCHE_HD inline dual2 operator/(dual2 x, dual2 y) {  // one division
  const double r = 1 / y.v, v = x.v * r;
  return {v, (x.dp - v * y.dp) * r, (x.dq - v * y.dq) * r};
}
TYCHE_HD inline dual2 constant_dual2(double c) { return {c, 0.0, 0.0}; }


/// log(x^p y^q / (p B(p, q))), 0 < x < 1, y = 1 − x. Where p + q > 2 by Loader's (2000) form of
/// the binomial coefficient, n = p + q:
///   log(Γ(n + 1) / (Γ(p + 1) Γ(q + 1)) x^p y^q) = stirling_error(n) − stirling_error(p) −
///     stirling_error(q) − deviance_term(p, n x) − deviance_term(q, n y) − log √(2π p q / n),
/// plus log(q / n), whose terms stay small where p log x + q log y − log B(p, q) subtracts numbers
/// of size n log n (1e-7 relative at a negative binomial's φ = 10⁸ before); directly elsewhere.
TYCHE_HD inline double log_beta_front(double p, double q, double x, double y) {
  const double n = p + q;
  if (n > 2)
    return stirling_error(n) - stirling_error(p) - stirling_error(q) - deviance_term(p, n * x) -
           deviance_term(q, n * y) - 0.5 * (log_two_pi + ::log(p) + ::log(q) - ::log(n)) + ::log(q / n);
  return p * ::log(x) + q * ::log(y) - (::lgamma(p + 1) + ::lgamma(q) - ::lgamma(n));
}

/// log of x^p y^q / (p B(p, q)) · cf(p, q, x), 0 < x < 1 and y = 1 − x (given: a complement the
/// caller has more accurately than 1 − x), and its derivatives in p and q. NaN where the
/// fraction has not converged in max_terms.
TYCHE_HD inline dual2 log_inc_beta_fraction(double p, double q, double x, double y) {
  constexpr double eps = 2.220446049250313e-16;  // the double's epsilon
  constexpr double tiny = 1e-300;
  constexpr int max_terms = 100000;
  bool converged = false;
  const dual2 pd{p, 1.0, 0.0}, qd{q, 0.0, 1.0}, xd = constant_dual2(x), one = constant_dual2(1.0);
  const dual2 pq = pd + qd, p1 = pd + one, pm1 = pd - one;
  dual2 c = one;
  dual2 d = one - pq * xd / p1;
  if (::fabs(d.v) < tiny) d = constant_dual2(tiny);
  d = one / d;
  dual2 h = d;
  for (int m = 1; m < max_terms; ++m) {
    const dual2 md = constant_dual2(m), m2 = constant_dual2(2.0 * m);
    // d_{2m} = m (q − m) x / ((p − 1 + 2m)(p + 2m))
    dual2 an = md * (qd - md) * xd / ((pm1 + m2) * (pd + m2));
    d = one + an * d;
    if (::fabs(d.v) < tiny) d = constant_dual2(tiny);
    c = one + an / c;
    if (::fabs(c.v) < tiny) c = constant_dual2(tiny);
    d = one / d;
    h = h * d * c;
    // d_{2m+1} = −(p + m)(p + q + m) x / ((p + 2m)(p + 1 + 2m))
    an = constant_dual2(-1.0) * (pd + md) * (pq + md) * xd / ((pd + m2) * (p1 + m2));
    d = one + an * d;
    if (::fabs(d.v) < tiny) d = constant_dual2(tiny);
    c = one + an / c;
    if (::fabs(c.v) < tiny) c = constant_dual2(tiny);
    d = one / d;
    const dual2 del = d * c;
    h = h * del;
    // The value and both derivatives converged (at an integer q the fraction's value ends, its
    // derivatives do not: scalar/inc_gamma.hpp).
    const double scale = 1 + ::fabs(h.dp / h.v) + ::fabs(h.dq / h.v);
    if (::fabs(del.v - 1) <= 2 * eps && ::fabs(del.dp) <= 8 * eps * scale && ::fabs(del.dq) <= 8 * eps * scale) {
      converged = true;
      break;
    }
  }
  if (!converged) {
    const double nan = ::nan("");
    return {nan, nan, nan};
  }
  // ψ(p + 1) for ψ(p) + 1/p (no cancellation for a small p).
  const double psi_pq = digamma(p + q);
  dual2 r;
  r.v = log_beta_front(p, q, x, y) + ::log(h.v);
  r.dp = ::log(x) - digamma(p + 1) + psi_pq + h.dp / h.v;
  r.dq = ::log(y) - digamma(q) + psi_pq + h.dq / h.v;
  return r;
}
}  // namespace detail

/// log I_x(a, b), log(1 − I_x(a, b)) and their derivatives.
struct log_inc_beta_result {
  double log_i = 0, log_1m_i = 0;                // log I, log(1 − I)
  double log_i_da = 0, log_i_db = 0, log_i_dx = 0;  // of log I
  double log_1m_i_da = 0, log_1m_i_db = 0, log_1m_i_dx = 0;
};

/// log I_x(a, b) and log(1 − I_x(a, b)) with their derivatives (see the top of the file): a ≥ 0,
/// b > 0, 0 ≤ x ≤ 1, y = 1 − x (the caller's complement, used where 1 − x is needed: given
/// separately it keeps the digits of a small 1 − x, a binomial's p), NaN elsewhere. a = 0 (a
/// binomial count at its number of trials) gives I = 1; x = 0 gives I = 0 and y = 0 gives I = 1
/// (derivatives 0 there); x = 1 with a complement y > 0 is computed from y (a complement below
/// the double's 1e-16 near 1: Student's t near t = 0). The derivative in x is the total one along
/// y = 1 − x.
TYCHE_HD inline log_inc_beta_result log_inc_beta(double a, double b, double x, double y) {
  log_inc_beta_result r;
  if (!(a >= 0) || !(b > 0) || !(x >= 0) || !(x <= 1) || !(y >= 0) || !(y <= 1)) {
    const double nan = ::nan("");
    r = {nan, nan, nan, nan, nan, nan, nan, nan};
    return r;
  }
  if (a == 0 || y == 0) {
    r.log_1m_i = -INFINITY;
    return r;
  }
  if (x == 0) {
    r.log_i = -INFINITY;
    return r;
  }
  // log of x^(a−1) y^(b−1) / B(a, b), the density: x^a y^b / (a B(a, b)) · a / (x y).
  const double log_density = detail::log_beta_front(a, b, x, y) + ::log(a) - ::log(x) - ::log(y);
  if (x < (a + 1) / (a + b + 2)) {
    const detail::dual2 f = detail::log_inc_beta_fraction(a, b, x, y);
    r.log_i = f.v;
    r.log_i_da = f.dp;
    r.log_i_db = f.dq;
    r.log_1m_i = log1m_exp_scalar(r.log_i);
    const double ratio = -::exp(r.log_i - r.log_1m_i);  // −I / (1 − I)
    r.log_1m_i_da = ratio * r.log_i_da;
    r.log_1m_i_db = ratio * r.log_i_db;
  } else {
    const detail::dual2 f = detail::log_inc_beta_fraction(b, a, y, x);  // log(1 − I_x(a, b))
    r.log_1m_i = f.v;
    r.log_1m_i_da = f.dq;
    r.log_1m_i_db = f.dp;
    r.log_i = log1m_exp_scalar(r.log_1m_i);
    const double ratio = -::exp(r.log_1m_i - r.log_i);
    r.log_i_da = ratio * r.log_1m_i_da;
    r.log_i_db = ratio * r.log_1m_i_db;
  }
  r.log_i_dx = ::exp(log_density - r.log_i);
  r.log_1m_i_dx = -::exp(log_density - r.log_1m_i);
  return r;
}

/// The same with y = 1 − x.
TYCHE_HD inline log_inc_beta_result log_inc_beta(double a, double b, double x) { return log_inc_beta(a, b, x, 1 - x); }

/// log P(T ≤ t) and log P(T > t) of Student's t with ν degrees of freedom, with their
/// derivatives in ν and t.
struct student_t_log_cdf_result {
  double lcdf = 0, lccdf = 0;
  double lcdf_dnu = 0, lccdf_dnu = 0, lcdf_dt = 0, lccdf_dt = 0;
};

/// Student's t CDF in log form: P(T ≤ −|t|) = I_x(ν/2, 1/2) / 2 with x = ν/(ν + t²) and
/// 1 − x = t²/(ν + t²) (Abramowitz & Stegun 26.7.1 and 26.5.27), the far tail computed as such and
/// the near side as log(1 − ·), so that neither tail cancels. ∂/∂ν through I's derivatives in a
/// and x (dx/dν = t²/(ν + t²)²); ∂/∂t = f(t)/P from the density f (finite at t = 0, where x = 1
/// and dx/dt = 0). NaN for ν ≤ 0 or a NaN operand; t = ±∞ gives the limits.
TYCHE_HD inline student_t_log_cdf_result student_t_log_cdf(double nu, double t) {
  student_t_log_cdf_result r;
  if (!(nu > 0) || t != t) {
    const double nan = ::nan("");
    r = {nan, nan, nan, nan, nan, nan};
    return r;
  }
  if (t == INFINITY || t == -INFINITY) {
    (t > 0 ? r.lccdf : r.lcdf) = -INFINITY;
    return r;
  }
  const double t2 = t * t;
  const double s = nu + t2;
  const log_inc_beta_result b = log_inc_beta(0.5 * nu, 0.5, nu / s, t2 / s);
  constexpr double log_two = 0.69314718055994530942;
  const double far = b.log_i - log_two;  // log P(T ≤ −|t|)
  const double far_dnu = 0.5 * b.log_i_da + b.log_i_dx * (t2 / (s * s));
  const double near = log1m_exp_scalar(far);
  const double near_dnu = -::exp(far - near) * far_dnu;
  if (t < 0) {
    r.lcdf = far, r.lcdf_dnu = far_dnu, r.lccdf = near, r.lccdf_dnu = near_dnu;
  } else {
    r.lcdf = near, r.lcdf_dnu = near_dnu, r.lccdf = far, r.lccdf_dnu = far_dnu;
  }
  constexpr double log_pi = 1.14472988584940017414;
  const double log_density = ::lgamma(0.5 * (nu + 1)) - ::lgamma(0.5 * nu) - 0.5 * (::log(nu) + log_pi) -
                             0.5 * (nu + 1) * ::log1p(t2 / nu);
  r.lcdf_dt = ::exp(log_density - r.lcdf);
  r.lccdf_dt = -::exp(log_density - r.lccdf);
  return r;
}

/// log P(Y ≤ y) and log P(Y > y) of beta_binomial(n, a, b), with their derivatives in a and b.
struct beta_binomial_log_cdf_result {
  double lcdf = 0, lccdf = 0;
  double lcdf_da = 0, lcdf_db = 0, lccdf_da = 0, lccdf_db = 0;
};

/// The beta-binomial CDF by summing its probabilities on the side of y away from the mean (the
/// smaller probability, kept to full relative precision; the other side as log(1 − ·)):
/// P(Y = k) = C(n, k) B(k + a, n − k + b) / B(a, b), from the term next to y outwards by the ratio
/// of neighbours, so no term overflows; ∂ log P(Y = k)/∂a = ψ(k + a) − ψ(n + a + b) − ψ(a) +
/// ψ(a + b) (and in b with n − k + b), the ψ's stepped by ψ(x + 1) = ψ(x) + 1/x; the side's
/// derivative is the probability-weighted mean of its terms'. O(min(y + 1, n − y)) terms. n and y
/// whole numbers, 0 ≤ y, a > 0, b > 0 (NaN elsewhere); y ≥ n gives P(Y ≤ y) = 1.
TYCHE_HD inline beta_binomial_log_cdf_result beta_binomial_log_cdf(double n, double a, double b, double y) {
  beta_binomial_log_cdf_result r;
  if (!(n >= 0) || !(a > 0) || !(b > 0) || !(y >= 0) || n != ::floor(n) || y != ::floor(y)) {
    const double nan = ::nan("");
    r = {nan, nan, nan, nan, nan, nan};
    return r;
  }
  if (y >= n) {
    r.lccdf = -INFINITY;
    return r;
  }
  const bool lower = y < n * a / (a + b);  // sum P(Y ≤ y) where y is below the mean
  double k = lower ? y : y + 1;            // the term next to y, then outwards
  const double psi_nab = digamma(n + a + b), psi_ab = digamma(a + b), psi_a = digamma(a), psi_b = digamma(b);
  double psi_ka = digamma(k + a), psi_nkb = digamma(n - k + b);
  const double log_first = ::lgamma(n + 1) - ::lgamma(k + 1) - ::lgamma(n - k + 1) + ::lgamma(k + a) +
                           ::lgamma(n - k + b) - ::lgamma(n + a + b) + ::lgamma(a + b) - ::lgamma(a) - ::lgamma(b);
  double t = 1, sum = 0, sum_da = 0, sum_db = 0, log_scale = 0;
  for (;;) {
    sum += t;
    sum_da += t * (psi_ka - psi_nab - psi_a + psi_ab);
    sum_db += t * (psi_nkb - psi_nab - psi_b + psi_ab);
    if (lower ? k == 0 : k == n) break;
    if (lower) {  // P(k − 1) / P(k) = k (n − k + b) / ((n − k + 1)(k − 1 + a))
      t *= k * (n - k + b) / ((n - k + 1) * (k - 1 + a));
      k -= 1;
      psi_ka -= 1 / (k + a);
      psi_nkb += 1 / (n - k - 1 + b);
    } else {  // P(k + 1) / P(k) = (n − k)(k + a) / ((k + 1)(n − k − 1 + b))
      t *= (n - k) * (k + a) / ((k + 1) * (n - k - 1 + b));
      psi_ka += 1 / (k + a);
      psi_nkb -= 1 / (n - k - 1 + b);
      k += 1;
    }
    if (t > 1e250) {  // a U-shaped pmf rising away from y: keep the sums finite
      sum *= 1e-250, sum_da *= 1e-250, sum_db *= 1e-250, t *= 1e-250;
      log_scale += 575.64627324851142;  // 250 log 10
    }
  }
  const double side = log_first + log_scale + ::log(sum);
  const double side_da = sum_da / sum, side_db = sum_db / sum;
  const double other = log1m_exp_scalar(side);
  const double ratio = -::exp(side - other);
  if (lower) {
    r = {side, other, side_da, side_db, ratio * side_da, ratio * side_db};
  } else {
    r = {other, side, ratio * side_da, ratio * side_db, side_da, side_db};
  }
  return r;
}

}  // namespace tyche::math
