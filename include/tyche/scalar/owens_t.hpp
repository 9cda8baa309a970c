// tyche/scalar/owens_t.hpp — Owen's T function and the skew normal distribution's log CDF, with
// their derivatives. Host and CUDA device code, double precision.
//
// T(h, a) = (1/2π) ∫₀ᵃ e^(−h²(1+x²)/2) / (1 + x²) dx (Owen 1956). For |a| ≤ 1 the integral is
// taken as e^(−h²/2)/(2π) ∫₀ᵃ e^(−h²x²/2)/(1 + x²) dx by 20-point Gauss–Legendre quadrature over
// [0, min(a, 8.6/h)] (beyond 8.6/h the Gaussian factor is below e^(−37) of its value at 0): the
// integrand is positive, so T has the double's relative precision for every h, down to its
// underflow near h = 38. For |a| > 1, Owen's identity (Owen 1956, eq. 2.3; Patefield & Tandy
// 2000) T(h, a) = ½Q(h) + ½Q(ah) − Q(h)Q(ah) − T(ah, 1/a) for h ≥ 0, Q = 1 − Φ, whose terms do
// not cancel (T(ah, 1/a) ≤ ½Q(ah)Φ(ah)). T is even in h and odd in a; ∂T/∂h = −φ(h)(Φ(ah) − ½),
// ∂T/∂a = e^(−h²(1+a²)/2) / (2π(1 + a²)).
//
// The skew normal CDF (Azzalini 1985) is F(z; α) = Φ(z) − 2T(z, α), and 1 − F(z; α) = F(−z; −α).
// Where z < 0 and α > 0 (the light tail: F ≪ Φ(z)) the difference cancels; there, for α|z| ≥ 3,
// F(z; α) = 2[T(z, ∞) − T(z, α)] = (1/π) ∫_α^∞ e^(−z²(1+x²)/2)/(1 + x²) dx is computed directly:
// with x² = α² + 2t/z²,
//   F = e^(−z²(1+α²)/2) / (π z²) ∫₀^∞ e^(−t) / (√(α² + 2t/z²) (1 + α² + 2t/z²)) dt,
// five Gauss–Legendre panels of width 8 in t (e^(−40) left out); the integrand's singularity at
// t = −α²z²/2 ≤ −4.5 keeps each panel's error near the double's precision. Below α|z| = 3 the
// difference loses at most log₁₀((1 + α²)/(2Φ(−3))) digits for α ≤ 1; for α > 1 (and α|z| < 3)
// F = 2T(α|z|, 1/α) − Q(α|z|) erf(|z|/√2) (from the identity above) does not cancel. Where the
// difference is a sum (α ≤ 0) or cancels little, Q and T are computed scaled by e^(z²/2), so log F
// stays finite far into the heavy tail (a normal's log CDF at z = −10⁴).
#pragma once
#include <tyche/config.hpp>
#include <tyche/scalar/math.hpp>

#include <cmath>

namespace tyche::math {

namespace detail {
/// Σ wᵢ f(xᵢ) over the 20-point Gauss–Legendre rule on [lo, hi].
template <class F>
TYCHE_HD inline double gauss_legendre_20(double lo, double hi, F f) {
  constexpr double x[10] = {0.0765265211334973337546, 0.22778585114164507808, 0.373706088715419560673,
                            0.510867001950827098004,  0.636053680726515025453, 0.746331906460150792614,
                            0.839116971822218823395,  0.912234428251325905868, 0.963971927277913791268,
                            0.993128599185094924786};
  constexpr double w[10] = {0.152753387130725850698, 0.149172986472603746788, 0.142096109318382051329,
                            0.131688638449176626898, 0.118194531961518417312, 0.101930119817240435037,
                            0.0832767415767047487248, 0.0626720483341090635695, 0.040601429800386941331,
                            0.0176140071391521183119};
  const double c = 0.5 * (lo + hi), r = 0.5 * (hi - lo);
  double s = 0.0;
  for (int i = 0; i < 10; ++i) s += w[i] * (f(c - r * x[i]) + f(c + r * x[i]));
  return s * r;
}
/// Q(x) = 1 − Φ(x) = erfc(x/√2)/2.
TYCHE_HD inline double normal_q(double x) { return 0.5 * ::erfc(x * inv_sqrt_two); }
/// T(h, a) for h ≥ 0, a ≥ 0.
TYCHE_HD inline double owens_t_nonnegative(double h, double a) {
  if (h == HUGE_VAL) return 0.0;
  if (a <= 1.0) {
    const double top = h * a > 8.6 ? 8.6 / h : a;
    const double hh = h * h;
    const double integral = gauss_legendre_20(0.0, top, [hh](double x) { return ::exp(-0.5 * hh * x * x) / (1.0 + x * x); });
    return ::exp(-0.5 * hh) * integral / (2.0 * pi);
  }
  if (a == HUGE_VAL) return 0.5 * normal_q(h);
  const double ah = a * h, qh = normal_q(h), qah = normal_q(ah);
  return 0.5 * qh + 0.5 * qah - qh * qah - owens_t_nonnegative(ah, 1.0 / a);
}
/// e^(h²/2) Q(h) for h ≥ 0, finite where Q underflows (scalar/math.hpp's continued fraction of
/// erfc above h = 8).
TYCHE_HD inline double normal_q_scaled(double h) {
  if (h < 8.0) return ::exp(0.5 * h * h) * normal_q(h);
  return 0.28209479177387814347 / erfc_continued_fraction(h * inv_sqrt_two);  // 1/(2√π f(h/√2))
}
/// e^(h²/2) T(h, a) for h ≥ 0, a ≥ 0: the same quadrature and identity as owens_t_nonnegative,
/// without the factor that underflows where h > 38.
TYCHE_HD inline double owens_t_scaled(double h, double a) {
  if (h == HUGE_VAL) return 0.0;
  if (a <= 1.0) {
    const double top = h * a > 8.6 ? 8.6 / h : a;
    const double hh = h * h;
    return gauss_legendre_20(0.0, top, [hh](double x) { return ::exp(-0.5 * hh * x * x) / (1.0 + x * x); }) / (2.0 * pi);
  }
  if (a == HUGE_VAL) return 0.5 * normal_q_scaled(h);
  const double ah = a * h, qs = normal_q_scaled(h);
  const double e = ::exp(-0.5 * (a - 1.0) * (a + 1.0) * h * h);  // e^(h²/2) / e^((ah)²/2)
  return 0.5 * qs + (0.5 * normal_q_scaled(ah) - owens_t_scaled(ah, 1.0 / a)) * e - qs * normal_q(ah);
}
}  // namespace detail

/// Owen's T function T(h, a).
TYCHE_HD inline double owens_t(double h, double a) {
  if (h != h || a != a) return ::nan("");
  const double t = detail::owens_t_nonnegative(::fabs(h), ::fabs(a));
  return a < 0 ? -t : t;
}

struct owens_t_result {
  double v = 0, dh = 0, da = 0;
};
/// T(h, a) and its two partial derivatives.
TYCHE_HD inline owens_t_result owens_t_with_derivatives(double h, double a) {
  owens_t_result r;
  r.v = owens_t(h, a);
  const double phi_h = inv_sqrt_two_pi * ::exp(-0.5 * h * h);
  r.dh = -phi_h * 0.5 * ::erf(a * h * inv_sqrt_two);
  r.da = ::exp(-0.5 * h * h * (1.0 + a * a)) / (2.0 * pi * (1.0 + a * a));
  return r;
}

struct skew_normal_log_cdf_result {
  double v = 0, dz = 0, dalpha = 0;
};

namespace detail {
/// log F(z; α) for z ≤ 0, h = −z.
TYCHE_HD inline double skew_normal_log_cdf_left(double z, double alpha) {
  const double h = -z;
  if (h == HUGE_VAL) return -HUGE_VAL;
  if (alpha > 0 && alpha * h >= 3.0) {  // the light tail, by the integral of the header comment
    const double zz = z * z, a2 = alpha * alpha;
    double integral = 0.0;
    for (int k = 0; k < 5; ++k)
      integral += gauss_legendre_20(8.0 * k, 8.0 * (k + 1), [zz, a2](double t) {
        const double s = a2 + 2.0 * t / zz;
        return ::exp(-t) / (::sqrt(s) * (1.0 + s));
      });
    return -0.5 * zz * (1.0 + a2) + ::log(integral / (pi * zz));
  }
  if (alpha > 1.0) {  // αh < 3 with α > 1 (h < 3): F = 2T(αh, 1/α) − Q(αh) erf(h/√2), Owen's identity
    const double ah = alpha * h;
    return ::log(2.0 * owens_t_nonnegative(ah, 1.0 / alpha) - normal_q(ah) * ::erf(h * inv_sqrt_two));
  }
  // F = Q(h) − 2T(h, α), both scaled by e^(h²/2): a sum where α ≤ 0; where 0 < α ≤ 1 (αh < 3),
  // F ≥ Q(h)·2Φ(−3)/(1 + α²) roughly, so the difference keeps all but about 2.5 digits.
  const double t = owens_t_scaled(h, ::fabs(alpha));
  return -0.5 * h * h + ::log(normal_q_scaled(h) - 2.0 * (alpha < 0 ? -t : t));
}
}  // namespace detail

/// log F(z; α) of the standard skew normal (ξ = 0, ω = 1) and its derivatives in z and α. For
/// z > 0, log F = log(1 − F(−z; −α)): the complement computed as F at z ≤ 0, so that log F keeps
/// its relative precision where F is near 1.
TYCHE_HD inline skew_normal_log_cdf_result skew_normal_log_cdf(double z, double alpha) {
  skew_normal_log_cdf_result r;
  if (z != z || alpha != alpha) {
    r.v = r.dz = r.dalpha = ::nan("");
    return r;
  }
  const double log_f =
      z <= 0 ? detail::skew_normal_log_cdf_left(z, alpha) : ::log1p(-::exp(detail::skew_normal_log_cdf_left(-z, -alpha)));
  if (z == HUGE_VAL || z == -HUGE_VAL) {  // F = 1 or 0, flat
    r.v = log_f;
    return r;
  }
  // ∂F/∂z = 2φ(z)Φ(αz), ∂F/∂α = −e^(−z²(1+α²)/2) / (π(1 + α²)), divided by F in log form (F
  // itself underflows where z²(1 + α²)/2 > 745).
  const double one_a2 = 1.0 + alpha * alpha;
  r.v = log_f;
  r.dz = ::exp(0.5 * ::log(2.0 / pi) - 0.5 * z * z + log_Phi(alpha * z) - log_f);
  r.dalpha = -::exp(-0.5 * z * z * one_a2 - ::log(pi * one_a2) - log_f);
  return r;
}

}  // namespace tyche::math
