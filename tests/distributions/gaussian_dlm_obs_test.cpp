// gaussian_dlm_obs(F, G, V, W, m0, C0) (tyche/distributions/gaussian_dlm_obs.hpp, the Kalman filter
// of autodiff/kalman.hpp): the log density against the joint normal of all r·T observations
// written out here (the states' covariances Cov(θₛ, θₜ) by their recursion, no filter; a
// long double Cholesky), relative error ≤ 1e-10; gradients in every entry of every argument
// (the upper triangles of V, W and C0 are not read: zero) against Richardson-extrapolated finite
// differences (tests/support/property.hpp); SIMD lanes; the vector-V and scalar forms; draws
// against the joint normal's moments (4.5 standard errors); the data checks.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/discrete_checks.hpp"
#include "support/property.hpp"
#include "support/reference_math.hpp"

using namespace tyche;
using Catch::Matchers::Contains;

namespace {
using ld = long double;
using mat = std::vector<ld>;

using tyche_test::product;
using tyche_test::transposed;
/// The symmetric matrix a k × k lower triangle defines.
mat from_lower(const std::vector<double>& a, std::size_t k) {
  mat s(k * k);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j) s[i * k + j] = i >= j ? a[i * k + j] : a[j * k + i];
  return s;
}

/// The mean and covariance of all r·T observations (observation (j, t) at t·r + j) of the model
/// yₜ = Fᵀ θₜ + vₜ, θₜ = G θₜ₋₁ + wₜ, θ₀ ~ N(m0, C0): Cov(θₜ, θₜ) = G Cov(θₜ₋₁, θₜ₋₁) Gᵀ + W,
/// Cov(θₛ, θₜ) = G Cov(θₛ₋₁, θₜ) for s > t.
struct joint_normal {
  std::vector<ld> mean, cov;
};
joint_normal dlm_joint(const std::vector<double>& f, const std::vector<double>& g, const std::vector<double>& v,
                       const std::vector<double>& w, const std::vector<double>& m0, const std::vector<double>& c0,
                       std::size_t n, std::size_t r, std::size_t steps, bool diagonal_v) {
  const mat F(f.begin(), f.end()), G(g.begin(), g.end()), Gt = transposed(G, n, n), Ft = transposed(F, n, r);
  const mat W = from_lower(w, n);
  mat V(r * r, 0.0L);
  if (diagonal_v) {
    for (std::size_t j = 0; j < r; ++j) V[j * r + j] = v[j];
  } else {
    V = from_lower(v, r);
  }
  std::vector<std::vector<mat>> cross(steps, std::vector<mat>(steps));  // Cov(θₛ, θₜ), s ≥ t
  mat prev = from_lower(c0, n);
  mat mean(m0.begin(), m0.end());
  joint_normal out;
  out.mean.resize(r * steps);
  out.cov.assign(r * steps * r * steps, 0.0L);
  for (std::size_t t = 0; t < steps; ++t) {
    mat c = product(product(G, prev, n, n, n), Gt, n, n, n);
    for (std::size_t e = 0; e < n * n; ++e) c[e] += W[e];
    cross[t][t] = c;
    prev = c;
    mean = product(G, mean, n, n, 1);
    const mat fm = product(Ft, mean, r, n, 1);
    for (std::size_t j = 0; j < r; ++j) out.mean[t * r + j] = fm[j];
  }
  for (std::size_t t = 0; t < steps; ++t)
    for (std::size_t s = t + 1; s < steps; ++s) cross[s][t] = product(G, cross[s - 1][t], n, n, n);
  for (std::size_t s = 0; s < steps; ++s)
    for (std::size_t t = 0; t <= s; ++t) {
      const mat block = product(product(Ft, cross[s][t], r, n, n), F, r, n, r);
      for (std::size_t i = 0; i < r; ++i)
        for (std::size_t j = 0; j < r; ++j) {
          ld c = block[i * r + j] + (s == t ? V[i * r + j] : 0.0L);
          out.cov[(s * r + i) * r * steps + t * r + j] = c;
          out.cov[(t * r + j) * r * steps + s * r + i] = c;
        }
    }
  return out;
}

/// log N(y | mean, cov) of y r × T (row major: y[j·T + t]) by a long double Cholesky.
ld dlm_ref(const std::vector<double>& y, const std::vector<double>& f, const std::vector<double>& g,
           const std::vector<double>& v, const std::vector<double>& w, const std::vector<double>& m0,
           const std::vector<double>& c0, std::size_t n, std::size_t r, bool diagonal_v = false) {
  const std::size_t steps = y.size() / r, d = r * steps;
  const joint_normal jn = dlm_joint(f, g, v, w, m0, c0, n, r, steps, diagonal_v);
  mat l(d * d, 0.0L);
  for (std::size_t i = 0; i < d; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      ld s = jn.cov[i * d + j];
      for (std::size_t p = 0; p < j; ++p) s -= l[i * d + p] * l[j * d + p];
      l[i * d + j] = i == j ? std::sqrt(s) : s / l[j * d + j];
    }
  ld quad = 0, half_log_det = 0;
  std::vector<ld> z(d);
  for (std::size_t i = 0; i < d; ++i) {
    ld acc = static_cast<ld>(y[(i % r) * steps + i / r]) - jn.mean[i];
    for (std::size_t p = 0; p < i; ++p) acc -= l[i * d + p] * z[p];
    z[i] = acc / l[i * d + i];
    quad += z[i] * z[i];
    half_log_det += std::log(l[i * d + i]);
  }
  return -0.5L * quad - half_log_det - 0.5L * static_cast<ld>(d) * std::log(2 * 3.14159265358979323846L);
}

std::vector<double> part(const std::vector<double>& p, std::size_t& at, std::size_t count) {
  std::vector<double> out(p.begin() + static_cast<std::ptrdiff_t>(at), p.begin() + static_cast<std::ptrdiff_t>(at + count));
  at += count;
  return out;
}

/// A point near a stable, well-conditioned model (n = 2, r = 2): every entry of F, G, V, W, m0,
/// C0 (V, W, C0 symmetric positive definite, their upper triangles arbitrary: not read) moved by
/// up to ±0.05, then the T·r observations.
std::vector<std::vector<double>> dlm_points(std::size_t count, std::size_t steps, unsigned seed) {
  const std::vector<double> base{1.0, 0.3, 0.2, 0.8,          // F (2 × 2)
                                 0.9, 0.2, -0.1, 0.7,         // G
                                 0.5, 0.1, 0.1, 0.4,          // V
                                 0.3, 0.05, 0.05, 0.2,        // W
                                 0.4, -0.3,                   // m0
                                 1.0, 0.2, 0.2, 0.8};         // C0
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-0.05, 0.05), yu(-1.5, 1.5);
  std::vector<std::vector<double>> pts;
  for (std::size_t c = 0; c < count; ++c) {
    std::vector<double> p = base;
    for (auto& x : p) x += u(rng);
    for (std::size_t i = 0; i < 2 * steps; ++i) p.push_back(yu(rng));
    pts.push_back(p);
  }
  return pts;
}
}  // namespace

TEST_CASE("gaussian_dlm_obs: log density against the joint normal of all observations; gradients in every entry "
          "of every argument; lanes",
          "[distributions][gaussian_dlm_obs]") {
  constexpr std::size_t N = 2, R = 2, T = 5;
  vector_param<"F", N * R> f;
  vector_param<"G", N * N> g;
  vector_param<"V", R * R> v;
  vector_param<"W", N * N> w;
  vector_param<"m0", N> m0;
  vector_param<"C0", N * N> c0;
  vector_param<"y", R * T> y;
  // Every argument a parameter, y too (a variable: missing observations).
  const auto all = compile(gaussian_dlm_obs_lpdf(y, f, g, v, w, m0, c0), f, g, v, w, m0, c0, y);
  // Data y as a data matrix (r × T), the other arguments parameters.
  const auto pts = dlm_points(12, T, 11);
  for (const auto& p : pts) {
    std::size_t at = 0;
    const auto fv = part(p, at, N * R), gv = part(p, at, N * N), vv = part(p, at, R * R), wv = part(p, at, N * N),
               mv = part(p, at, N), cv = part(p, at, N * N), yv = part(p, at, R * T);
    const ld ref = dlm_ref(yv, fv, gv, vv, wv, mv, cv, N, R);
    tyche_test::discrete::check_log_pmf(all.value(p), ref, "gaussian_dlm_obs, every argument a parameter", 1e-10);
    const auto with_data = compile(gaussian_dlm_obs(f, g, v, w, m0, c0).observe(matrix(yv.data(), R, T)).log_density(), f, g, v, w,
                                   m0, c0);
    const std::vector<double> q(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(at - R * T));
    tyche_test::discrete::check_log_pmf(with_data.value(q), ref, "gaussian_dlm_obs, data matrix y", 1e-10);
  }
  for (std::size_t i = 0; i < 6; ++i) tyche_test::check_gradient_at(all, pts[i], "gaussian_dlm_obs, every argument");
  tyche_test::check_lanes(all, pts, "gaussian_dlm_obs (lanes)");

  // More observations than states (n = 1, r = 3: Q larger than every n-sized matrix), every
  // argument a parameter: F = (1, 0.5, −0.3) + u, G = 0.8 + u, V = 0.4 I + 0.1 (off-diagonal) + u,
  // W = 0.3 + u, m0 = 0.2 + u, C0 = 1 + u.
  vector_param<"F3", 3> f3;
  param<"G1"> g1;
  vector_param<"V3", 9> v3;
  param<"W1"> w1;
  param<"m01"> m01;
  param<"C01"> c01;
  vector_param<"y3", 3 * T> y3;
  const auto wide = compile(gaussian_dlm_obs_lpdf(y3, f3, g1, v3, w1, m01, c01), f3, g1, v3, w1, m01, c01, y3);
  std::mt19937_64 rng(15);
  std::uniform_real_distribution<double> u(-0.05, 0.05), yu(-1.5, 1.5);
  std::vector<std::vector<double>> wide_pts;
  for (int c = 0; c < 6; ++c) {
    std::vector<double> p{1.0, 0.5, -0.3, 0.8, 0.4, 0.1, 0.1, 0.1, 0.4, 0.1, 0.1, 0.1, 0.4, 0.3, 0.2, 1.0};
    for (auto& x : p) x += u(rng);
    for (std::size_t i = 0; i < 3 * T; ++i) p.push_back(yu(rng));
    std::size_t at = 0;
    const auto fv = part(p, at, 3), gv = part(p, at, 1), vv = part(p, at, 9), wv = part(p, at, 1), mv = part(p, at, 1),
               cv = part(p, at, 1), yv = part(p, at, 3 * T);
    tyche_test::discrete::check_log_pmf(wide.value(p), dlm_ref(yv, fv, gv, vv, wv, mv, cv, 1, 3),
                                        "gaussian_dlm_obs, n = 1, r = 3", 1e-10);
    tyche_test::check_gradient_at(wide, p, "gaussian_dlm_obs, n = 1, r = 3");
    wide_pts.push_back(p);
  }
  tyche_test::check_lanes(wide, wide_pts, "gaussian_dlm_obs, n = 1, r = 3 (lanes)");

  // One state, one observation (n = r = 1: the scalar code path), every argument a parameter.
  param<"F1"> f1;
  param<"V1"> v1;
  vector_param<"y1", T> y1;
  const auto scalar = compile(gaussian_dlm_obs_lpdf(y1, f1, g1, v1, w1, m01, c01), f1, g1, v1, w1, m01, c01, y1);
  std::vector<std::vector<double>> scalar_pts;
  for (int c = 0; c < 6; ++c) {
    std::vector<double> p{1.0, 0.8, 0.4, 0.3, 0.2, 1.0};
    for (auto& x : p) x += u(rng);
    for (std::size_t i = 0; i < T; ++i) p.push_back(yu(rng));
    std::size_t at = 0;
    const auto fv = part(p, at, 1), gv = part(p, at, 1), vv = part(p, at, 1), wv = part(p, at, 1), mv = part(p, at, 1),
               cv = part(p, at, 1), yv = part(p, at, T);
    tyche_test::discrete::check_log_pmf(scalar.value(p), dlm_ref(yv, fv, gv, vv, wv, mv, cv, 1, 1),
                                        "gaussian_dlm_obs, n = r = 1", 1e-10);
    tyche_test::check_gradient_at(scalar, p, "gaussian_dlm_obs, n = r = 1");
    scalar_pts.push_back(p);
  }
  tyche_test::check_lanes(scalar, scalar_pts, "gaussian_dlm_obs, n = r = 1 (lanes)");
}

TEST_CASE("gaussian_dlm_obs: a vector V (independent observation errors), scalar arguments (the local level "
          "model), data matrices",
          "[distributions][gaussian_dlm_obs]") {
  // A local linear trend observed twice per step (r = 2, V diagonal = exp(lv)), level and slope
  // variances exp(lw): data F, G, C0; m0 a parameter.
  constexpr std::size_t N = 2, R = 2;
  const std::vector<double> F{1.0, 1.0, 0.0, 0.5}, G{1.0, 1.0, 0.0, 1.0}, C0{2.0, 0.0, 0.0, 2.0};
  const std::vector<double> yd{0.1, 0.5, 1.2, 1.1, 2.3, 2.9, 0.0, 0.4, 0.8, 1.5, 2.1, 2.2};
  vector_param<"lv", R> lv;
  vector_param<"lw", N> lw;
  vector_param<"m0", N> m0;
  const auto trend = compile(gaussian_dlm_obs(matrix(F.data(), N, R), matrix(G.data(), N, N), exp(lv),
                                              diag_matrix(exp(lw)), m0, matrix(C0.data(), N, N))
                                 .observe(data(yd))
                                 .log_density(),
                             lv, lw, m0);
  std::mt19937_64 rng(12);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<std::vector<double>> pts;
  for (int i = 0; i < 8; ++i) pts.push_back({u(rng), u(rng), u(rng), u(rng), u(rng), u(rng)});
  for (const auto& p : pts) {
    const std::vector<double> vv{std::exp(p[0]), std::exp(p[1])}, wv{std::exp(p[2]), 0.0, 0.0, std::exp(p[3])};
    const ld ref = dlm_ref(yd, F, G, vv, wv, {p[4], p[5]}, C0, N, R, true);
    tyche_test::discrete::check_log_pmf(trend.value(p), ref, "gaussian_dlm_obs, vector V", 1e-10);
    tyche_test::check_gradient_at(trend, p, "gaussian_dlm_obs, vector V");
  }
  tyche_test::check_lanes(trend, pts, "gaussian_dlm_obs, vector V (lanes)");

  // The local level model: every argument a number or a scalar expression (n = r = 1).
  param<"sv"> sv;
  param<"sw"> sw;
  const std::vector<double> y1{0.3, 0.1, -0.2, 0.5, 0.7, 0.4};
  const auto level = compile(gaussian_dlm_obs_lpdf(data(y1), 1.0, 1.0, square(exp(sv)), square(exp(sw)), 0.0, 10.0),
                             sv, sw);
  for (const auto& p : tyche_test::random_points(8, 2, -1, 1, 13)) {
    const ld ref = dlm_ref(y1, {1.0}, {1.0}, {std::exp(2 * p[0])}, {std::exp(2 * p[1])}, {0.0}, {10.0}, 1, 1);
    tyche_test::discrete::check_log_pmf(level.value(p), ref, "gaussian_dlm_obs, local level", 1e-10);
    tyche_test::check_gradient_at(level, p, "gaussian_dlm_obs, local level");
  }
  // A W of rank one (the slope does not evolve) is a valid data argument.
  const std::vector<double> w_rank1{0.5, 0.0, 0.0, 0.0};
  const auto static_slope = compile(gaussian_dlm_obs_lpdf(data(yd), matrix(F.data(), N, R), matrix(G.data(), N, N),
                                                          exp(lv), matrix(w_rank1.data(), N, N), m0,
                                                          matrix(C0.data(), N, N)),
                                    lv, m0);
  const std::vector<double> p{0.1, -0.2, 0.3, 0.05};
  tyche_test::discrete::check_log_pmf(static_slope.value(p),
                                      dlm_ref(yd, F, G, {std::exp(0.1), std::exp(-0.2)}, w_rank1, {0.3, 0.05}, C0, N, R,
                                              true),
                                      "gaussian_dlm_obs, W of rank one", 1e-10);
}

TEST_CASE("gaussian_dlm_obs: draws of a variable y have the joint normal's mean and covariance",
          "[distributions][gaussian_dlm_obs]") {
  // Two observations per step with independent errors (a vector V), y r x T row major: draw value
  // j·T + t is observation j at time t, the joint normal's index t·r + j.
  constexpr std::size_t N = 2, R = 2, T = 3, D = R * T;
  const std::vector<double> F{1.0, 0.3, 0.5, -0.4}, G{0.9, 0.2, 0.0, 0.8}, V{0.3, 0.6}, W{0.2, 0.05, 0.05, 0.1},
      m0{1.0, -0.5}, C0{0.5, 0.1, 0.1, 0.4};
  auto m = model([&] {
    return joint(gaussian_dlm_obs<"y">(matrix(F.data(), N, R), matrix(G.data(), N, N), data(V), matrix(W.data(), N, N),
                                       data(m0), matrix(C0.data(), N, N), shape_of(D)));
  });
  REQUIRE(m.dim() == D);
  const joint_normal jn = dlm_joint(F, G, V, W, m0, C0, N, R, T, true);
  std::mt19937_64 rng(14);
  const std::size_t draws = 40000;
  std::vector<std::vector<double>> xs;
  for (std::size_t i = 0; i < draws; ++i) xs.push_back(m.sample_prior(rng));
  const auto joint_index = [&](std::size_t a) { return (a % T) * R + a / T; };
  for (std::size_t a = 0; a < D; ++a) {
    const double ma = double(jn.mean[joint_index(a)]);
    double mean = 0, var = 0;
    for (const auto& x : xs) mean += x[a] / double(draws);
    for (const auto& x : xs) var += (x[a] - mean) * (x[a] - mean) / double(draws);
    INFO("gaussian_dlm_obs draws: E[y" << a << "] = " << mean << " against " << ma);
    CHECK(std::fabs(mean - ma) < 4.5 * std::sqrt(var / double(draws)));
    for (std::size_t b = 0; b <= a; ++b) {
      const double mb = double(jn.mean[joint_index(b)]);
      const double expected = double(jn.cov[joint_index(a) * D + joint_index(b)]);
      double c = 0, v = 0;
      for (const auto& x : xs) c += (x[a] - ma) * (x[b] - mb) / double(draws);
      for (const auto& x : xs) v += std::pow((x[a] - ma) * (x[b] - mb) - c, 2) / double(draws);
      INFO("gaussian_dlm_obs draws: Cov[y" << a << ", y" << b << "] = " << c << " against " << expected);
      CHECK(std::fabs(c - expected) < 4.5 * std::sqrt(v / double(draws)));
    }
  }
}

TEST_CASE("gaussian_dlm_obs: data errors name the argument, the entry and the value",
          "[distributions][gaussian_dlm_obs]") {
  const std::vector<double> F{1.0, 0.5}, G{1.0, 0.0, 0.0, 1.0}, W{0.2, 0.0, 0.0, 0.1}, C0{1.0, 0.0, 0.0, 1.0},
      m0{0.0, 0.0}, y{0.1, 0.2, 0.3};
  const std::vector<double> not_symmetric{0.2, 0.1, 0.0, 0.1}, not_psd{0.1, 0.5, 0.5, 0.1}, v_bad{1.0, -0.5},
      m0_3{0.0, 0.0, 0.0};
  const auto Fm = matrix(F.data(), 2, 1), Gm = matrix(G.data(), 2, 2), Wm = matrix(W.data(), 2, 2),
             Cm = matrix(C0.data(), 2, 2);
  const std::string who = "tyche::gaussian_dlm_obs(F, G, V, W, m0, C0): ";
  CHECK_THROWS_WITH(gaussian_dlm_obs(matrix(F.data(), 1, 2), Gm, 1.0, Wm, data(m0), Cm),
                    Contains(who + "'F' is 1 x 2 but must be 2 x J"));
  CHECK_THROWS_WITH(gaussian_dlm_obs(Fm, Gm, 1.0, matrix(not_symmetric.data(), 2, 2), data(m0), Cm),
                    Contains(who + "W is not symmetric: W[2, 1] = 0 but W[1, 2] = 0.1"));
  CHECK_THROWS_WITH(gaussian_dlm_obs(Fm, Gm, 1.0, Wm, data(m0), matrix(not_psd.data(), 2, 2)),
                    Contains(who + "C0 is not positive semi-definite (pivot 2"));
  CHECK_THROWS_WITH(gaussian_dlm_obs(Fm, Gm, -1.0, Wm, data(m0), Cm),
                    Contains(who + "V is not positive semi-definite (pivot 1"));
  CHECK_THROWS_WITH(gaussian_dlm_obs(Fm, Gm, 1.0, Wm, data(m0_3), Cm),
                    Contains(who + "G is 2 x 2 but W has 4 values, m0 3 and C0 4"));
  const std::vector<double> F2{1.0, 0.0, 0.0, 1.0};
  CHECK_THROWS_WITH(gaussian_dlm_obs(matrix(F2.data(), 2, 2), Gm, data(v_bad), Wm, data(m0), Cm),
                    Contains(who + "V[2] = -0.5 must be a variance (>= 0)"));
  CHECK_THROWS_WITH(gaussian_dlm_obs_lpdf(data(y), matrix(F2.data(), 2, 2), Gm, data(F2), Wm, data(m0), Cm),
                    Contains(who + "y has 3 values, which is not a positive multiple of r = 2"));
  CHECK_THROWS_WITH(gaussian_dlm_obs_lpdf(matrix(y.data(), 3, 1), matrix(F2.data(), 2, 2), Gm, data(F2), Wm, data(m0),
                                          Cm),
                    Contains(who + "'y' is 3 x 1 but must be 2 x J"));
  std::vector<double> y_nan{0.1, std::nan(""), 0.3};
  CHECK_THROWS_WITH(gaussian_dlm_obs_lpdf(data(y_nan), Fm, Gm, 1.0, Wm, data(m0), Cm), Contains("tyche::gaussian_dlm_obs(...).observe(y): y[2] = nan is not finite (indices count from 1)"));
  // Non-finite data in every other argument, as a data vector or a number.
  const std::vector<double> m0_nan{0.0, std::nan("")}, f_inf{1.0, std::numeric_limits<double>::infinity()};
  CHECK_THROWS_WITH(gaussian_dlm_obs(data(f_inf), Gm, 1.0, Wm, data(m0), Cm), Contains(who + "F[2] = inf; data must be finite"));
  CHECK_THROWS_WITH(gaussian_dlm_obs(Fm, Gm, 1.0, Wm, data(m0_nan), Cm), Contains(who + "m0[2] = nan; data must be finite"));
  CHECK_THROWS_WITH(gaussian_dlm_obs(Fm, Gm, std::nan(""), Wm, data(m0), Cm), Contains(who + "V[1] = nan; data must be finite"));
  const std::vector<double> w_inf{std::numeric_limits<double>::infinity(), 0.0, 0.0, 1.0};
  CHECK_THROWS_WITH(gaussian_dlm_obs(Fm, Gm, 1.0, data(w_inf), data(m0), Cm), Contains(who + "W[1] = inf; data must be finite"));
}
