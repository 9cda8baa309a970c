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
TYCHE_HD inline double select(bool c, double a, double b) { return c ? a : b; }
TYCHE_HD inline float  select(bool c, float a, float b) { return c ? a : b; }
TYCHE_HD inline double sign_of(double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }
TYCHE_HD inline float  sign_of(float x) { return x > 0 ? 1.0f : (x < 0 ? -1.0f : 0.0f); }
// clang-format on

inline constexpr double pi = 3.14159265358979323846;
inline constexpr double inv_sqrt_two = 0.70710678118654752440;
inline constexpr double inv_sqrt_two_pi = 0.39894228040143267794;
inline constexpr double two_over_sqrt_pi = 1.12837916709551257390;

/// Digamma ψ(x) = d/dx log Γ(x): upward recurrence to x ≥ 10, then the asymptotic series
/// ψ(x) ~ log x − 1/(2x) − Σ B₂ₖ/(2k x²ᵏ) (Abramowitz & Stegun 6.3.18); reflection
/// ψ(1−x) − ψ(x) = π cot(πx) for x < 0. Relative error below 1e-14 away from the poles.
TYCHE_HD inline double digamma(double x) {
  double shift = 0.0;
  if (x <= 0.0) {
    if (x == ::floor(x)) return ::nan("");  // pole
    return digamma(1.0 - x) - pi / ::tan(pi * x);
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
    const double s = ::sin(pi * x);
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

}  // namespace tyche::math
