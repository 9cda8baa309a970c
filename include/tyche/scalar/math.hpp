// tyche/scalar/math.hpp — scalar math for float and double, on the host and in CUDA device
// code. Operation rules in autodiff/ call tyche::math and nothing else, so a new scalar type
// needs only overloads of these functions: backends/simd/batch.hpp adds those for SIMD
// batches. (A header whose templates call math:: on a generic T includes that one too, so
// that the batch overloads are declared before the templates that name them.)
#pragma once
#include <tyche/config.hpp>

#include <cmath>
#include <math.h>  // global-namespace overloads, which CUDA device code also provides

namespace tyche::math {

// clang-format off
TYCHE_HD inline double exp(double x) { return ::exp(x); }
TYCHE_HD inline float  exp(float x) { return ::expf(x); }
TYCHE_HD inline double log(double x) { return ::log(x); }
TYCHE_HD inline float  log(float x) { return ::logf(x); }
TYCHE_HD inline double log1p(double x) { return ::log1p(x); }
TYCHE_HD inline float  log1p(float x) { return ::log1pf(x); }
TYCHE_HD inline double expm1(double x) { return ::expm1(x); }
TYCHE_HD inline float  expm1(float x) { return ::expm1f(x); }
TYCHE_HD inline double sqrt(double x) { return ::sqrt(x); }
TYCHE_HD inline float  sqrt(float x) { return ::sqrtf(x); }
TYCHE_HD inline double tanh(double x) { return ::tanh(x); }
TYCHE_HD inline float  tanh(float x) { return ::tanhf(x); }
TYCHE_HD inline double cos(double x) { return ::cos(x); }
TYCHE_HD inline float  cos(float x) { return ::cosf(x); }
TYCHE_HD inline double sin(double x) { return ::sin(x); }
TYCHE_HD inline float  sin(float x) { return ::sinf(x); }
TYCHE_HD inline double atan(double x) { return ::atan(x); }
TYCHE_HD inline float  atan(float x) { return ::atanf(x); }
TYCHE_HD inline double tan(double x) { return ::tan(x); }
TYCHE_HD inline float  tan(float x) { return ::tanf(x); }
TYCHE_HD inline double asin(double x) { return ::asin(x); }
TYCHE_HD inline float  asin(float x) { return ::asinf(x); }
TYCHE_HD inline double acos(double x) { return ::acos(x); }
TYCHE_HD inline float  acos(float x) { return ::acosf(x); }
TYCHE_HD inline double sinh(double x) { return ::sinh(x); }
TYCHE_HD inline float  sinh(float x) { return ::sinhf(x); }
TYCHE_HD inline double cosh(double x) { return ::cosh(x); }
TYCHE_HD inline float  cosh(float x) { return ::coshf(x); }
TYCHE_HD inline double asinh(double x) { return ::asinh(x); }
TYCHE_HD inline float  asinh(float x) { return ::asinhf(x); }
TYCHE_HD inline double acosh(double x) { return ::acosh(x); }
TYCHE_HD inline float  acosh(float x) { return ::acoshf(x); }
TYCHE_HD inline double atanh(double x) { return ::atanh(x); }
TYCHE_HD inline float  atanh(float x) { return ::atanhf(x); }
TYCHE_HD inline double cbrt(double x) { return ::cbrt(x); }
TYCHE_HD inline float  cbrt(float x) { return ::cbrtf(x); }
TYCHE_HD inline double atan2(double y, double x) { return ::atan2(y, x); }
TYCHE_HD inline float  atan2(float y, float x) { return ::atan2f(y, x); }
TYCHE_HD inline double erf(double x) { return ::erf(x); }
TYCHE_HD inline float  erf(float x) { return ::erff(x); }
TYCHE_HD inline double erfc(double x) { return ::erfc(x); }
TYCHE_HD inline float  erfc(float x) { return ::erfcf(x); }
TYCHE_HD inline double lgamma(double x) { return ::lgamma(x); }
TYCHE_HD inline float  lgamma(float x) { return ::lgammaf(x); }
TYCHE_HD inline double abs(double x) { return ::fabs(x); }
TYCHE_HD inline float  abs(float x) { return ::fabsf(x); }
TYCHE_HD inline double pow(double x, double y) { return ::pow(x, y); }
TYCHE_HD inline float  pow(float x, float y) { return ::powf(x, y); }
TYCHE_HD inline double max(double x, double y) { return x > y ? x : y; }
TYCHE_HD inline float  max(float x, float y) { return x > y ? x : y; }
TYCHE_HD inline double min(double x, double y) { return x < y ? x : y; }
TYCHE_HD inline float  min(float x, float y) { return x < y ? x : y; }
TYCHE_HD inline double select(bool c, double a, double b) { return c ? a : b; }
TYCHE_HD inline float  select(bool c, float a, float b) { return c ? a : b; }
TYCHE_HD inline double sign_of(double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }
TYCHE_HD inline float  sign_of(float x) { return x > 0 ? 1.0f : (x < 0 ? -1.0f : 0.0f); }
/// Stan's step(x): 0 for x < 0, else 1 (NaN gives 1, as Stan's).
TYCHE_HD inline double step(double x) { return x < 0 ? 0.0 : 1.0; }
TYCHE_HD inline float  step(float x) { return x < 0 ? 0.0f : 1.0f; }
/// log step(x): 0 for x ≥ 0, −∞ for x < 0 and for NaN.
TYCHE_HD inline double log_step(double x) { return x >= 0 ? 0.0 : -HUGE_VAL; }
TYCHE_HD inline float  log_step(float x) { return x >= 0 ? 0.0f : -HUGE_VALF; }
/// The largest lane of x (one lane here; a SIMD batch's overload in backends/simd/batch.hpp), NaN
/// lanes ignored: a loop count shared by the lanes of a batch, where each lane stops at its own.
TYCHE_HD inline double lane_max(double x) { return x; }
TYCHE_HD inline float  lane_max(float x) { return x; }
// clang-format on

/// log(1 + e) for e ∈ [0, 1] (or NaN), given u = 1 + e and r = 1/u as the caller has them
/// (log1p_exp and log_add_exp, whose derivative σ is r or e·r): the scalar types call log1p;
/// a batch of doubles reuses r in log1p's correction term instead of dividing again
/// (backends/simd/batch.hpp).
TYCHE_HD inline double log1p_unit(double e, double, double) { return ::log1p(e); }
TYCHE_HD inline float log1p_unit(float e, float, float) { return ::log1pf(e); }

/// log(1 − eˡ), l ≤ 0, without losing either side (Mächler 2012, "Accurately computing
/// log(1 − exp(−|a|))": log(−expm1(l)) above −log 2, log1p(−eˡ) below).
TYCHE_HD inline double log1m_exp_scalar(double l) {
  return l > -0.693147180559945309 ? ::log(-::expm1(l)) : ::log1p(-::exp(l));
}

inline constexpr double pi = 3.14159265358979323846;
inline constexpr double inv_sqrt_two = 0.70710678118654752440;
inline constexpr double inv_sqrt_two_pi = 0.39894228040143267794;
inline constexpr double two_over_sqrt_pi = 1.12837916709551257390;
inline constexpr double sqrt_two = 1.41421356237309504880;
inline constexpr double log_two_sqrt_pi = 1.26551212348464539649;  // log(2√π)
inline constexpr double log_two_pi = 1.83787706640934548356;       // log(2π)

/// The error of Stirling's formula, log Γ(a + 1) − ((a + 1/2) log a − a + log √(2π)), a > 0:
/// its asymptotic series above a = 15 (no cancellation between the large terms), the difference
/// itself below (Loader 2000, "Fast and accurate computation of binomial probabilities").
TYCHE_HD inline double stirling_error(double a) {
  if (a > 15) {
    const double r = 1 / a, r2 = r * r;
    constexpr double s0 = 1.0 / 12, s1 = 1.0 / 360, s2 = 1.0 / 1260, s3 = 1.0 / 1680, s4 = 1.0 / 1188;
    if (a > 500) return (s0 - s1 * r2) * r;
    if (a > 80) return (s0 - (s1 - s2 * r2) * r2) * r;
    if (a > 35) return (s0 - (s1 - (s2 - s3 * r2) * r2) * r2) * r;
    return (s0 - (s1 - (s2 - (s3 - s4 * r2) * r2) * r2) * r2) * r;
  }
  return ::lgamma(a + 1) - (a + 0.5) * ::log(a) + a - 0.5 * log_two_pi;
}

/// a log(a/m) + m − a ≥ 0, the deviance term of Loader (2000): by the series in
/// v = (a − m)/(a + m) where a and m are close (the two logs would cancel), directly elsewhere.
TYCHE_HD inline double deviance_term(double a, double m) {
  if (::fabs(a - m) < 0.1 * (a + m)) {
    const double v = (a - m) / (a + m), v2 = v * v;
    double s = (a - m) * v, e = 2 * a * v;
    for (int j = 1; j < 1000; ++j) {
      e *= v2;
      const double next = s + e / (2 * j + 1);
      if (next == s) break;
      s = next;
    }
    return s;
  }
  return a * ::log(a / m) + m - a;
}

/// x − 2·round(x/2) ∈ [−1, 1]: sin(πx), cos(πx) and tan(πx) of the reduced argument keep their
/// precision where πx itself would have lost it (the reflections below at large negative x).
TYCHE_HD inline double reduce_mod_two(double x) { return x - 2.0 * ::nearbyint(0.5 * x); }

/// Digamma ψ(x) = d/dx log Γ(x): upward recurrence to x ≥ 10, then the asymptotic series
/// ψ(x) ~ log x − 1/(2x) − Σ B₂ₖ/(2k x²ᵏ) (Abramowitz & Stegun 6.3.18); reflection
/// ψ(1−x) − ψ(x) = π cot(πx) for x < 0. Relative error below 1e-14 away from the poles.
TYCHE_HD inline double digamma(double x) {
  double shift = 0.0;
  if (x <= 0.0) {
    if (x == ::floor(x)) return ::nan("");  // pole
    return digamma(1.0 - x) - pi / ::tan(pi * reduce_mod_two(x));
  }
  while (x < 10.0) {
    shift -= 1.0 / x;
    x += 1.0;
  }
  const double r = 1.0 / (x * x);
  const double series =
      r * (1.0 / 12 -
           r * (1.0 / 120 -
                r * (1.0 / 252 - r * (1.0 / 240 - r * (1.0 / 132 - r * (691.0 / 32760))))));
  return shift + ::log(x) - 0.5 / x - series;
}
TYCHE_HD inline float digamma(float x) { return static_cast<float>(digamma(double(x))); }

/// Trigamma ψ₁(x) = d/dx ψ(x): recurrence ψ₁(x) = ψ₁(x+1) + 1/x² to x ≥ 10, then
/// ψ₁(x) ~ 1/x + 1/(2x²) + Σ B₂ₖ/x²ᵏ⁺¹ (A&S 6.4.12); reflection ψ₁(1−x) + ψ₁(x) = π²/sin²(πx).
TYCHE_HD inline double trigamma(double x) {
  double shift = 0.0;
  if (x <= 0.0) {
    if (x == ::floor(x)) return ::nan("");
    const double s = ::sin(pi * reduce_mod_two(x));
    return -trigamma(1.0 - x) + pi * pi / (s * s);
  }
  while (x < 10.0) {
    shift += 1.0 / (x * x);
    x += 1.0;
  }
  const double r = 1.0 / (x * x);
  const double series =
      1.0 / x + 0.5 * r +
      r / x *
          (1.0 / 6 -
           r * (1.0 / 30 - r * (1.0 / 42 - r * (1.0 / 30 - r * (5.0 / 66 - r * (691.0 / 2730))))));
  return shift + series;
}
TYCHE_HD inline float trigamma(float x) { return static_cast<float>(trigamma(double(x))); }

/// Tetragamma ψ₂(x) = d/dx ψ₁(x): recurrence ψ₂(x) = ψ₂(x+1) − 2/x³ to x ≥ 10, then
/// ψ₂(x) ~ −1/x² − 1/x³ − Σ (2k+1) B₂ₖ/x²ᵏ⁺² (A&S 6.4.11 with n = 2); reflection
/// ψ₂(1−x) − ψ₂(x) = 2π³ cot(πx)/sin²(πx) (the second derivative of ψ(1−x) − ψ(x) = π cot πx).
TYCHE_HD inline double tetragamma(double x) {
  double shift = 0.0;
  if (x <= 0.0) {
    if (x == ::floor(x)) return ::nan("");
    const double r = reduce_mod_two(x), s = ::sin(pi * r);
    const double c = ::sin(pi * (0.5 - ::fabs(r)));  // cos(πr), exactly 0 at half-integers
    return tetragamma(1.0 - x) - 2.0 * pi * pi * pi * c / (s * s * s);
  }
  while (x < 10.0) {
    shift -= 2.0 / (x * x * x);
    x += 1.0;
  }
  const double r = 1.0 / (x * x);
  const double series =
      r + r / x +
      r * r *
          (1.0 / 2 -
           r * (1.0 / 6 -
                r * (1.0 / 6 -
                     r * (3.0 / 10 - r * (5.0 / 6 - r * (691.0 / 210 - r * (35.0 / 2 - r * (3617.0 / 30))))))));
  return shift - series;
}
TYCHE_HD inline float tetragamma(float x) { return static_cast<float>(tetragamma(double(x))); }

/// f(z) = 1 / (√π e^{z²} erfc(z)) for z ≥ 5.6 by the continued fraction of A&S 7.1.14,
///   2 e^{z²} ∫_z^∞ e^{−t²} dt = 1/(z + (1/2)/(z + 1/(z + (3/2)/(z + 2/(z + …))))),
/// i.e. f(z) = z + (1/2)/(z + (2/2)/(z + (3/2)/(…))), evaluated bottom-up from 20 levels: for
/// z ≥ 5.6 it has converged to double precision by level 14 (checked against long double erfc).
TYCHE_HD inline double erfc_continued_fraction(double z) {
  double f = z;
  for (int k = 20; k >= 1; --k) f = z + 0.5 * k / f;
  return f;
}

/// log Φ(x), Φ the standard normal cdf (Stan's std_normal_lcdf, log_erfc up to scaling),
/// accurate on the whole line, where log(Phi(x)) underflows to −∞ below x ≈ −38:
///   x ≥ 0:       log1p(−erfc(x/√2)/2)   (1 − Φ(x) = erfc(x/√2)/2, so no cancellation near 0),
///   −8 ≤ x < 0:  log(erfc(−x/√2)/2),
///   x < −8:      −x²/2 − log(2√π) − log f(−x/√2), f the continued fraction above
///                (Φ(x) = erfc(z)/2 = e^{−z²}/(2√π f(z)), z = −x/√2 ≥ 5.66).
TYCHE_HD inline double log_Phi(double x) {
  if (x >= 0.0) return ::log1p(-0.5 * ::erfc(x * inv_sqrt_two));
  if (x >= -8.0) return ::log(0.5 * ::erfc(-x * inv_sqrt_two));
  return -0.5 * x * x - log_two_sqrt_pi - ::log(erfc_continued_fraction(-x * inv_sqrt_two));
}
TYCHE_HD inline float log_Phi(float x) { return static_cast<float>(log_Phi(double(x))); }

/// d/dx log Φ(x) = φ(x)/Φ(x) (the inverse Mills ratio at −x): φ(x)/Φ(x) from erfc for x ≥ −8,
/// and √2 f(−x/√2) below (from the same continued fraction as log_Phi), which tends to −x
/// where φ and Φ both underflow.
TYCHE_HD inline double phi_over_Phi(double x) {
  if (x >= -8.0) return inv_sqrt_two_pi * ::exp(-0.5 * x * x) / (0.5 * ::erfc(-x * inv_sqrt_two));
  return sqrt_two * erfc_continued_fraction(-x * inv_sqrt_two);
}
TYCHE_HD inline float phi_over_Phi(float x) { return static_cast<float>(phi_over_Phi(double(x))); }

/// log I₀(x), I₀ the modified Bessel function of the first kind of order 0 (Stan's
/// log_modified_bessel_first_kind(0, x)); even in x. Relative error below 1e-15 for x in
/// (1, 1e4) against long double std::cyl_bessel_i, and I₀ itself to 1e-15 below 1.
///   |x| ≤ 20: the power series I₀(x) = Σₖ (x²/4)ᵏ/(k!)² (A&S 9.6.12), as log1p of the terms
///             k ≥ 1 (exact for small x: log I₀(x) ≈ x²/4), at most ~30 terms;
///   |x| > 20: the asymptotic expansion I₀(x) ~ eˣ/√(2πx) Σₖ Πⱼ₌₁..ₖ (2j − 1)² / (k! (8x)ᵏ)
///             (A&S 9.7.1 with μ = 0), summed until a term is below 1e-17 of the sum (at most
///             ~26 terms at x = 20, where the smallest term is far below that), so
///             log I₀(x) = x − ½ log(2πx) + log Σ, with no overflow of eˣ.
TYCHE_HD inline double log_bessel_i0(double x) {
  x = ::fabs(x);
  if (!(x < 1e300)) return x;  // ∞ (and NaN): x − ½ log(2πx) would be ∞ − ∞
  if (x <= 20.0) {
    const double q = 0.25 * x * x;
    double term = 1.0, s = 0.0;
    for (int k = 1; k < 80; ++k) {
      term *= q / (double(k) * k);
      s += term;
      if (term <= 1e-17 * s) break;
    }
    return ::log1p(s);
  }
  const double e = 8.0 * x;
  double term = 1.0, s = 1.0;
  for (int k = 1; k < 80; ++k) {
    const double next = term * (2.0 * k - 1) * (2.0 * k - 1) / (k * e);
    if (next >= term) break;  // the asymptotic series has passed its smallest term
    term = next;
    s += term;
    if (term <= 1e-17 * s) break;
  }
  return x - 0.5 * (log_two_pi + ::log(x)) + ::log(s);
}
TYCHE_HD inline float log_bessel_i0(float x) { return static_cast<float>(log_bessel_i0(double(x))); }

/// d/dx log I₀(x) = I₁(x)/I₀(x) (odd in x), from the same two expansions: I₁(x) = (x/2) Σₖ
/// (x²/4)ᵏ/(k!(k+1)!) (A&S 9.6.10) for |x| ≤ 20, and for |x| > 20 the ratio of the asymptotic
/// series of I₁ and I₀ (A&S 9.7.1, μ = 4ν² = 4 and 0: the e^x/√(2πx) cancels), terms
///   I₁: (−1)ᵏ Πⱼ₌₁..ₖ (4 − (2j − 1)²) / (k! (8x)ᵏ) = 1 − 3/(8x) − 15/(2 (8x)²) − …
/// Relative error below 1e-14.
TYCHE_HD inline double bessel_i1_over_i0(double x) {
  const double ax = ::fabs(x);
  if (ax <= 20.0) {
    const double q = 0.25 * x * x;
    double t0 = 1.0, s0 = 1.0, t1 = 1.0, s1 = 1.0;
    for (int k = 1; k < 80; ++k) {
      t0 *= q / (double(k) * k);
      t1 *= q / (double(k) * (k + 1));
      s0 += t0;
      s1 += t1;
      if (t0 <= 1e-17 * s0 && t1 <= 1e-17 * s1) break;
    }
    return 0.5 * x * s1 / s0;
  }
  const double e = 8.0 * ax;
  double t0 = 1.0, s0 = 1.0, t1 = 1.0, s1 = 1.0;
  for (int k = 1; k < 80; ++k) {
    const double odd2 = (2.0 * k - 1) * (2.0 * k - 1);
    const double n0 = t0 * odd2 / (k * e);
    if (n0 >= t0) break;
    t0 = n0;
    t1 *= (odd2 - 4.0) / (k * e);  // (−1)·(4 − (2k − 1)²)
    s0 += t0;
    s1 += t1;
    if (t0 <= 1e-17 * s0 && ::fabs(t1) <= 1e-17 * s1) break;
  }
  return ::copysign(s1 / s0, x);
}
TYCHE_HD inline float bessel_i1_over_i0(float x) {
  return static_cast<float>(bessel_i1_over_i0(double(x)));
}

/// Φ⁻¹(p), the standard normal quantile (Stan's inv_Phi), 0 ≤ p ≤ 1. In the tails (p < 1/4,
/// p > 3/4): Abramowitz & Stegun 26.2.23's rational approximation of the tail quantile (error
/// < 4.5e-4) as the start, then Newton's method on log Φ(z) = log p, which is concave in z: after
/// the first step every iterate lies below the root and rises to it (quadratically: three or
/// four steps reach the double's precision; the loop stops when a step no longer moves z), the
/// upper tail by the symmetry Φ⁻¹(p) = −Φ⁻¹(1 − p) (1 − p exact there). In the centre Newton on
/// erf (below), relative to z. p = 0, 1 give ∓∞; outside [0, 1], NaN.
TYCHE_HD inline double inv_Phi(double p) {
  if (!(p >= 0 && p <= 1)) return ::nan("");
  if (p == 0) return -HUGE_VAL;
  if (p == 1) return HUGE_VAL;
  if (p >= 0.25 && p <= 0.75) {
    // The centre: log Φ's Newton steps would give z to 1e-16 absolute only. Solve
    // erf(z/√2) = 2p − 1 instead (2p − 1 exact here, erf accurate relative to its value):
    // Newton from the first-order z = r √(π/2), to relative precision (z = 0 at p = 1/2).
    const double r = 2 * p - 1;
    double z = r * 1.25331413731550025121;
    for (int i = 0; i < 8 && z != 0; ++i) {
      const double step = (::erf(z * inv_sqrt_two) - r) / (0.79788456080286535588 * ::exp(-0.5 * z * z));
      z -= step;
      if (::fabs(step) <= 1e-16 * ::fabs(z)) break;
    }
    return z;
  }
  const bool upper = p > 0.5;
  const double q = upper ? 1 - p : p;  // the lower tail's probability, ≤ 1/2
  const double log_q = ::log(q);
  const double t = ::sqrt(-2 * log_q);
  double z = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1 + t * (1.432788 + t * (0.189269 + t * 0.001308))));
  for (int i = 0; i < 8; ++i) {
    const double step = (log_Phi(z) - log_q) / phi_over_Phi(z);
    z -= step;
    if (::fabs(step) <= 1e-15 * (1 + ::fabs(z))) break;
  }
  return upper ? -z : z;
}
TYCHE_HD inline float inv_Phi(float p) { return static_cast<float>(inv_Phi(static_cast<double>(p))); }

}  // namespace tyche::math
