// tests/support/property.hpp — the one property check every differentiable operation passes
// (after Stan Math's expect_ad): the reverse-mode gradient against Richardson-extrapolated
// central finite differences of the double value, xsimd lanes against the scalar result lane
// by lane, and float against double.
#pragma once
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace tyche_test {

/// Tolerance of the gradient check: |g − fd| / max(|g|, 1e-3).
inline constexpr double gradient_tolerance = 1e-7;

/// Central differences with steps h, h/2, h/4, Richardson-extrapolated twice: error O(h⁶).
template <class Prog>
double richardson_derivative(const Prog& p, std::vector<double> x, std::size_t k,
                             std::vector<double>& ws) {
  const double x0 = x[k];
  const double h = 1e-3 * std::max(1.0, std::fabs(x0));
  auto central = [&](double step) {
    x[k] = x0 + step;
    const double up = p.value(std::span<const double>(x), std::span<double>(ws));
    x[k] = x0 - step;
    const double down = p.value(std::span<const double>(x), std::span<double>(ws));
    return (up - down) / (2 * step);
  };
  const double d1 = central(h);
  const double d2 = central(h / 2);
  const double d4 = central(h / 4);
  const double r1 = (4 * d2 - d1) / 3;
  const double r2 = (4 * d4 - d2) / 3;
  return (16 * r2 - r1) / 15;
}

inline double relative_error(double g, double fd) {
  return std::fabs(g - fd) / std::max(std::fabs(g), 1e-3);
}

/// Checks value and gradient of p at x: gradient against finite differences, and the value
/// and gradient from value_and_gradient against value().
template <class Prog>
void check_gradient_at(const Prog& p, const std::vector<double>& x, const std::string& what) {
  std::vector<double> g(p.dim()), ws(p.workspace_size());
  const double v = p.value_and_gradient(std::span<const double>(x), std::span<double>(g),
                                        std::span<double>(ws));
  const double v2 = p.value(std::span<const double>(x), std::span<double>(ws));
  INFO(what);
  REQUIRE(std::isfinite(v));
  CHECK(v == Approx(v2).epsilon(1e-14).margin(1e-14));
  for (std::size_t k = 0; k < p.dim(); ++k) {
    const double fd = richardson_derivative(p, x, k, ws);
    INFO("coordinate " << k << " at x[k] = " << x[k] << ": gradient " << g[k]
                       << ", finite difference " << fd);
    CHECK(relative_error(g[k], fd) <= gradient_tolerance);
  }
}

/// The m values of the vector expression e at θ (element by element, each compiled with params).
template <class E, class... P>
std::vector<double> values_of(const E& e, std::size_t m, const std::vector<double>& theta, const P&... params) {
  std::vector<double> out(m);
  for (std::size_t i = 0; i < m; ++i) out[i] = tyche::compile(tyche::at(e, i), params...).value(theta);
  return out;
}

/// Uniform random points in [lo, hi]^dim, from a fixed seed.
inline std::vector<std::vector<double>> random_points(std::size_t count, std::size_t dim,
                                                      double lo, double hi, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<std::vector<double>> pts(count, std::vector<double>(dim));
  for (auto& p : pts)
    for (auto& v : p) v = u(rng);
  return pts;
}

/// xsimd lanes against the scalar path: lane l of a batch evaluation at points[l] equals the
/// double evaluation at points[l] (to 1e-12, the accuracy of xsimd's elementary functions),
/// and batch<float> lanes equal the float evaluation (to 1e-5).
template <class Prog>
void check_lanes(const Prog& p, const std::vector<std::vector<double>>& points,
                 const std::string& what) {
  INFO(what);
#if TYCHE_HAS_XSIMD
  auto run = [&]<class B>(B, double tol) {
    using E = typename B::value_type;
    constexpr std::size_t L = B::size;
    const std::size_t d = p.dim();
    for (std::size_t start = 0; start + L <= points.size(); start += L) {
      std::vector<B> x(d), g(d), ws(p.workspace_size());
      for (std::size_t k = 0; k < d; ++k) {
        alignas(64) E lanes[L];
        for (std::size_t l = 0; l < L; ++l) lanes[l] = static_cast<E>(points[start + l][k]);
        x[k] = B::load_aligned(lanes);
      }
      const B v = p.value_and_gradient(std::span<const B>(x), std::span<B>(g), std::span<B>(ws));
      for (std::size_t l = 0; l < L; ++l) {
        std::vector<E> xs(d), gs(d), wss(p.workspace_size());
        for (std::size_t k = 0; k < d; ++k) xs[k] = static_cast<E>(points[start + l][k]);
        const E vs = p.value_and_gradient(std::span<const E>(xs), std::span<E>(gs),
                                          std::span<E>(wss));
        INFO("lane " << l << " of " << L << (sizeof(E) == 4 ? " (float)" : " (double)"));
        CHECK(std::fabs(v.get(l) - vs) <= tol * std::max<double>(1.0, std::fabs(vs)));
        for (std::size_t k = 0; k < d; ++k)
          CHECK(std::fabs(g[k].get(l) - gs[k]) <= tol * std::max<double>(1.0, std::fabs(gs[k])));
      }
    }
  };
  run(xsimd::batch<double>{}, 1e-12);
  run(xsimd::batch<float>{}, 1e-5);
#else
  (void)p;
  (void)points;
  WARN("built without xsimd: lane check not run");
#endif
}

/// float against double: the float evaluation agrees with the double one to float accuracy.
template <class Prog>
void check_float(const Prog& p, const std::vector<double>& x, const std::string& what) {
  INFO(what);
  const std::size_t d = p.dim();
  std::vector<double> g(d), ws(p.workspace_size());
  std::vector<float> xf(x.begin(), x.end()), gf(d), wsf(p.workspace_size());
  const double v = p.value_and_gradient(std::span<const double>(x), std::span<double>(g),
                                        std::span<double>(ws));
  const float vf = p.value_and_gradient(std::span<const float>(xf), std::span<float>(gf),
                                        std::span<float>(wsf));
  CHECK(std::fabs(vf - v) <= 1e-4 * std::max(1.0, std::fabs(v)));
  for (std::size_t k = 0; k < d; ++k)
    CHECK(std::fabs(gf[k] - g[k]) <= 1e-4 * std::max(1.0, std::fabs(g[k])));
}

/// The whole property check for a unary operation f on the domain [lo, hi]: f alone on a
/// scalar parameter (100 points), elementwise inside a sum (fused reverse pass), inside a
/// non-fused sum and a log_sum_exp (reverse pass recomputes the loop body), and broadcast from
/// a scalar into a vector loop.
template <class F>
void check_unary(const std::string& name, F f, double lo, double hi) {
  using namespace tyche;
  param<"x"> x;
  vector_param<"v", 3> v;
  const auto scalar = compile(f(x));
  const auto pts = random_points(100, 1, lo, hi, 12345);
  for (const auto& pt : pts) check_gradient_at(scalar, pt, name + "(x)");
  check_lanes(scalar, pts, name + "(x)");
  check_float(scalar, pts[0], name + "(x)");

  const auto fused = compile(sum(f(v)));
  const auto unfused = compile(square(sum(f(v))) * lit<1, 10>);
  const auto lse = compile(log_sum_exp(f(v)));
  const auto broadcast = compile(sum(f(x) * (v + lit<2>)), x, v);
  const auto vpts = random_points(25, 3, lo, hi, 777);
  const auto bpts = random_points(25, 4, lo, hi, 778);
  for (const auto& pt : vpts) {
    check_gradient_at(fused, pt, "sum(" + name + "(v))");
    check_gradient_at(unfused, pt, "square(sum(" + name + "(v)))/10");
    check_gradient_at(lse, pt, "log_sum_exp(" + name + "(v))");
  }
  for (const auto& pt : bpts) check_gradient_at(broadcast, pt, "sum(" + name + "(x) * (v + 2))");
  check_lanes(fused, vpts, "sum(" + name + "(v))");
  check_lanes(lse, vpts, "log_sum_exp(" + name + "(v))");
}

/// The property check for a binary operation f on [lo_a, hi_a] × [lo_b, hi_b]: two scalars,
/// scalar-vector and vector-scalar broadcasting, vector-vector, and data on either side.
template <class F>
void check_binary(const std::string& name, F f, double lo_a, double hi_a, double lo_b,
                  double hi_b) {
  using namespace tyche;
  param<"a"> a;
  param<"b"> b;
  vector_param<"u", 3> u;
  vector_param<"w", 3> w;
  auto points = [&](std::size_t count, std::size_t na, std::size_t nb, unsigned seed) {
    auto pa = random_points(count, na, lo_a, hi_a, seed);
    auto pb = random_points(count, nb, lo_b, hi_b, seed + 1);
    for (std::size_t i = 0; i < count; ++i) pa[i].insert(pa[i].end(), pb[i].begin(), pb[i].end());
    return pa;
  };
  const auto scalar = compile(f(a, b), a, b);
  const auto spts = points(100, 1, 1, 99);
  for (const auto& pt : spts) check_gradient_at(scalar, pt, name + "(a, b)");
  check_lanes(scalar, spts, name + "(a, b)");
  check_float(scalar, spts[0], name + "(a, b)");

  const auto sv = compile(sum(f(a, w)), a, w);
  const auto vs = compile(sum(f(u, b)), u, b);
  const auto vv = compile(sum(f(u, w)), u, w);
  for (const auto& pt : points(25, 1, 3, 5)) check_gradient_at(sv, pt, "sum(" + name + "(a, w))");
  for (const auto& pt : points(25, 3, 1, 7)) check_gradient_at(vs, pt, "sum(" + name + "(u, b))");
  const auto vvpts = points(25, 3, 3, 9);
  for (const auto& pt : vvpts) check_gradient_at(vv, pt, "sum(" + name + "(u, w))");
  check_lanes(vv, vvpts, "sum(" + name + "(u, w))");

  // Data on either side: the constant operand takes no adjoint.
  const std::vector<double> da = random_points(1, 3, lo_a, hi_a, 11)[0];
  const std::vector<double> db = random_points(1, 3, lo_b, hi_b, 12)[0];
  const auto dv = compile(sum(f(data(da), w)), w);
  const auto vd = compile(sum(f(u, data(db))), u);
  for (const auto& pt : random_points(25, 3, lo_b, hi_b, 13))
    check_gradient_at(dv, pt, "sum(" + name + "(data, w))");
  for (const auto& pt : random_points(25, 3, lo_a, hi_a, 14))
    check_gradient_at(vd, pt, "sum(" + name + "(u, data))");
}

}  // namespace tyche_test
