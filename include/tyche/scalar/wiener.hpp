// tyche/scalar/wiener.hpp — the Wiener first-passage time density (the drift diffusion model of
// two-choice response times), its logarithm and derivatives. Host and CUDA device code, double
// precision.
//
// A Wiener process with drift v starts at w·a between absorbing boundaries 0 and a. Its density of
// reaching the lower boundary at time t (Feller 1968; Navarro & Fuss 2009, eqs. 1–6) is
//   f(t | a, v, w) = a⁻² exp(−v a w − v² t / 2) g(t / a², w),
// with g(u, w) the density of the standard process (a = 1, v = 0), written two ways:
//   small-time  g(u, w) = (2π u³)^(−½) Σ_{k=−∞..∞} (w + 2k) exp(−(w + 2k)² / (2u)),
//   large-time  g(u, w) = π Σ_{k≥1} k exp(−k² π² u / 2) sin(kπw).
// Each series is summed factored by its leading exponential (exp(−w²/(2u)), exp(−π²u/2)), so the
// logarithm keeps its precision in both tails; the small-time one where it needs fewer terms (small
// u: it is the series without cancellation there), the large-time one otherwise. The number of terms
// bounds the first left-out term, including the polynomial weights of the derivative series, below
// e^(−45) of the leading one (as Navarro & Fuss's bounds, applied to the scaled sums).
// Drift variability (Stan's sv: the drift ~ normal(v, sv) per trial, integrated out; Blurton,
// Kesselmeier & Gondan 2017) changes only the factor in front:
//   f(t | a, v, w, sv) = a⁻² (1 + sv² t)^(−½) exp((sv² a² w² − 2 a v w − v² t) / (2(1 + sv² t))) g(t/a², w).
// Stan's wiener(alpha, tau, beta, delta[, sv]) is the density of the upper boundary at y = tau + t,
// which is the lower boundary's with v = −delta and w = 1 − beta.
#pragma once
#include <tyche/config.hpp>

#include <cmath>

namespace tyche::math {

/// log g(u, w) and its partial derivatives in u and w.
struct wiener_standard_result {
  double log_g;
  double du;
  double dw;
};

TYCHE_HD inline wiener_standard_result wiener_log_standard(double u, double w, double one_minus_w) {
  constexpr double pi = 3.14159265358979323846;
  // Terms needed: small-time, k = −j..j with 2j(j − 1)/u > 45; large-time, k = 1..K with
  // (K² − 1)π²u/2 > 46.
  const double js = ::ceil(0.5 + ::sqrt(0.25 + 22.5 * u)) + 1.0;
  const double kl = ::ceil(::sqrt(1.0 + 92.0 / (pi * pi * u))) + 1.0;
  if (2.0 * js + 1.0 <= kl) {
    // Σ (w + 2k)^p exp(−((w + 2k)² − w²)/(2u)) for the value (p = 1), ∂u (p = 3), ∂w (1 − x²/u).
    double s0 = 0, s3 = 0, sw = 0;
    const int j = static_cast<int>(js);
    for (int k = -j; k <= j; ++k) {
      const double x = w + 2.0 * k;
      const double e = ::exp(-(2.0 * k * k + 2.0 * k * w) / u);  // ((w+2k)² − w²)/(2u)
      s0 += x * e;
      s3 += x * x * x * e;
      sw += (1.0 - x * x / u) * e;
    }
    // (−½ log 2π − (3/2) log u: u³ underflows below u ≈ 1e-108.)
    return {-0.918938533204672742 - 1.5 * ::log(u) - w * w / (2.0 * u) + ::log(s0),
            (-1.5 + s3 / (2.0 * u * s0)) / u, sw / s0};
  }
  // Σ k^p exp(−(k² − 1)π²u/2) sin(kπw) (p = 1 for the value, 3 for ∂u), and Σ k² … cos(kπw) (∂w);
  // for w > ½ from 1 − w as the caller has it (sin(kπw) = (−1)^(k+1) sin(kπ(1 − w)), cos(kπw) =
  // (−1)^k cos(kπ(1 − w))), which keeps sin's relative precision as w approaches 1.
  double l0 = 0, l3 = 0, lw = 0;
  const int n = static_cast<int>(kl);
  const bool mirror = w > 0.5;
  const double x = mirror ? one_minus_w : w;
  for (int k = 1; k <= n; ++k) {
    const double e = ::exp(-(double(k) * k - 1.0) * pi * pi * u / 2.0);
    const double sign = mirror && k % 2 == 0 ? -1.0 : 1.0;
    const double s = sign * ::sin(k * pi * x), c = (mirror ? -sign : 1.0) * ::cos(k * pi * x);
    l0 += k * e * s;
    l3 += double(k) * k * k * e * s;
    lw += double(k) * k * e * c;
  }
  return {::log(pi) - pi * pi * u / 2.0 + ::log(l0), -0.5 * pi * pi * l3 / l0, pi * lw / l0};
}

/// log Wiener(y | alpha, tau, beta, delta, sv) and its partial derivatives (Stan's argument
/// order; sv = 0 for the four-parameter density). −∞ with zero derivatives where y ≤ tau.
struct wiener_log_density_result {
  double value;
  double dy;
  double dalpha;
  double dtau;
  double dbeta;
  double ddelta;
  double dsv;
};

TYCHE_HD inline wiener_log_density_result wiener_log_density(double y, double alpha, double tau, double beta,
                                                             double delta, double sv) {
  const double t = y - tau;
  if (!(t > 0)) return {-HUGE_VAL, 0, 0, 0, 0, 0, 0};
  const double a = alpha, w = 1.0 - beta, v = -delta, s = sv * sv;
  const double a2 = a * a;
  const wiener_standard_result g = wiener_log_standard(t / a2, w, beta);
  const double d = 1.0 + s * t;
  const double num = s * a2 * w * w - 2.0 * a * v * w - v * v * t;
  const double value = -0.5 * ::log(d) + num / (2.0 * d) - 2.0 * ::log(a) + g.log_g;
  const double p_v = -(a * w + v * t) / d;
  const double p_a = (s * a * w * w - v * w) / d - 2.0 / a;
  const double p_w = (s * a2 * w - a * v) / d;
  const double p_t = -s / (2.0 * d) - (v * v * d + num * s) / (2.0 * d * d);
  const double p_s = -t / (2.0 * d) + (a2 * w * w * d - num * t) / (2.0 * d * d);
  const double dt = p_t + g.du / a2;
  const double da = p_a - 2.0 * t / (a2 * a) * g.du;
  const double dw = p_w + g.dw;
  return {value, dt, da, -dt, -dw, -p_v, 2.0 * sv * p_s};
}

}  // namespace tyche::math
