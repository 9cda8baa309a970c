// multi_normal_prec(mu, Omega) (tyche/distributions/multi_normal_prec.hpp) and the multivariate
// normal's free-term functions (multi_normal_lpdf, multi_normal_cholesky_lpdf,
// multi_normal_prec_lpdf): log densities against −½ rᵀΩr + ½ log det Ω − (K/2) log 2π computed
// here in long double (log det by elimination), a data Ω and a CAR precision τ(D − αW) of
// parameters, N observed rows; gradients through the property check; draws against the
// covariance Ω⁻¹; NUTS on a prior (means within 4 MCSE, variances within 10 %); do_ into Ω; errors.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <span>
#include <stdexcept>
#include <vector>

#include "support/gaussian_checks.hpp"
#include "support/property.hpp"

using namespace tyche;
using Catch::Matchers::Contains;

namespace {
/// Ωᵢⱼ: the inverse of an AR(1)-like covariance has a banded form; here a generic SPD matrix:
/// Ω = A Aᵀ + K·I with Aᵢⱼ = sin(1 + i + 2j).
std::vector<double> precision_of(std::size_t k) {
  std::vector<double> a(k * k), om(k * k);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j) a[i * k + j] = std::sin(1.0 + double(i) + 2.0 * double(j));
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j) {
      double s = i == j ? double(k) * 0.5 : 0.0;
      for (std::size_t p = 0; p < k; ++p) s += a[i * k + p] * a[j * k + p];
      om[i * k + j] = s;
    }
  return om;
}

/// log det of a K × K matrix by Gaussian elimination (no pivoting: Ω is positive definite).
long double log_det(std::vector<long double> a, std::size_t k) {
  long double ld = 0;
  for (std::size_t c = 0; c < k; ++c) {
    ld += std::log(a[c * k + c]);
    for (std::size_t r = c + 1; r < k; ++r) {
      const long double f = a[r * k + c] / a[c * k + c];
      for (std::size_t j = c; j < k; ++j) a[r * k + j] -= f * a[c * k + j];
    }
  }
  return ld;
}

/// Σₙ log N(yₙ | μₙ, Ω⁻¹) for rows of K; mu of 1, K or N·K values.
long double reference_lpdf(const std::vector<double>& y, const std::vector<double>& mu,
                           const std::vector<double>& om, std::size_t k) {
  const std::vector<long double> oml(om.begin(), om.end());
  const long double ld = log_det(oml, k);
  long double total = 0;
  for (std::size_t n = 0; n * k < y.size(); ++n) {
    std::vector<long double> r(k);
    for (std::size_t i = 0; i < k; ++i)
      r[i] = (long double)y[n * k + i] - (mu.size() == 1 ? mu[0] : (mu.size() == k ? mu[i] : mu[n * k + i]));
    long double q = 0;
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) q += r[i] * oml[i * k + j] * r[j];
    total += -0.5L * q + 0.5L * ld - 0.5L * (long double)k * std::log(2 * 3.14159265358979323846L);
  }
  return total;
}

/// Σ = Ω⁻¹ by Gauss–Jordan in long double.
std::vector<double> inverse(const std::vector<double>& om, std::size_t k) {
  std::vector<long double> a(om.begin(), om.end()), inv(k * k, 0.0L);
  for (std::size_t i = 0; i < k; ++i) inv[i * k + i] = 1;
  for (std::size_t c = 0; c < k; ++c) {
    const long double p = a[c * k + c];
    for (std::size_t j = 0; j < k; ++j) a[c * k + j] /= p, inv[c * k + j] /= p;
    for (std::size_t r = 0; r < k; ++r) {
      if (r == c) continue;
      const long double f = a[r * k + c];
      for (std::size_t j = 0; j < k; ++j) a[r * k + j] -= f * a[c * k + j], inv[r * k + j] -= f * inv[c * k + j];
    }
  }
  return std::vector<double>(inv.begin(), inv.end());
}

/// The CAR matrices of a ring of K areas: W its adjacency, D the diagonal of its degrees (2).
std::vector<double> ring_adjacency(std::size_t k) {
  std::vector<double> w(k * k, 0.0);
  for (std::size_t i = 0; i < k; ++i) {
    w[i * k + (i + 1) % k] = 1;
    w[((i + 1) % k) * k + i] = 1;
  }
  return w;
}
std::vector<double> ring_degrees(std::size_t k) {
  std::vector<double> d(k * k, 0.0);
  for (std::size_t i = 0; i < k; ++i) d[i * k + i] = 2;
  return d;
}

template <std::size_t K>
void check_data_precision() {
  const auto om = precision_of(K);
  vector_param<"x", K> x;
  vector_param<"m", K> m;
  const auto f = compile(multi_normal_prec(m, matrix(om.data(), K, K)).log_prob(x), x, m);
  const auto sig = inverse(om, K);
  const auto g = compile(multi_normal(m, matrix(sig.data(), K, K)).log_prob(x), x, m);
  for (const auto& p : tyche_test::random_points(30, 2 * K, -3, 3, 8)) {
    const std::vector<double> xv(p.begin(), p.begin() + K), mv(p.begin() + K, p.end());
    const double ref = double(reference_lpdf(xv, mv, om, K));
    CHECK(f.value(p) == Approx(ref).epsilon(1e-12));
    CHECK(g.value(p) == Approx(ref).epsilon(1e-9));  // the same law through Σ = Ω⁻¹
  }
  for (const auto& p : tyche_test::random_points(5, 2 * K, -3, 3, 9))
    tyche_test::check_gradient_at(f, p, "multi_normal_prec(m, Omega)");
  tyche_test::check_lanes(f, tyche_test::random_points(8, 2 * K, -3, 3, 10), "multi_normal_prec (lanes)");
  tyche_test::check_float(f, tyche_test::random_points(1, 2 * K, -1, 1, 11)[0], "multi_normal_prec (float)");
}
}  // namespace

TEST_CASE("multi_normal_prec: a data Omega against an independent computation, and gradients",
          "[distributions][multi_normal_prec]") {
  check_data_precision<4>();
  check_data_precision<13>();
}

TEST_CASE("multi_normal_prec: a CAR precision tau (D - alpha W) of parameters, N observed rows",
          "[distributions][multi_normal_prec]") {
  constexpr std::size_t K = 6, n = 3;
  const auto w = ring_adjacency(K), dg = ring_degrees(K);
  const auto y = tyche_test::random_points(1, n * K, -2, 2, 31)[0];
  param<"tau"> tau;
  param<"alpha"> alpha;
  vector_param<"m", K> m;
  vector_param<"mm", n * K> mm;
  param<"s"> s;
  const auto omega = tau * (data(dg) - alpha * data(w));
  const auto f = compile(multi_normal_prec(m, omega).log_prob(data(y)), tau, alpha, m);
  const auto f1 = compile(multi_normal_prec(s, omega).log_prob(data(y)), tau, alpha, s);
  const auto fn = compile(multi_normal_prec(mm, omega).log_prob(data(y)), tau, alpha, mm);
  const auto fl = compile(multi_normal_prec_lpdf(data(y), m, omega), tau, alpha, m);
  std::mt19937_64 rng(32);
  std::uniform_real_distribution<double> ut(0.3, 3), ua(-0.95, 0.95), um(-1, 1);
  for (int rep = 0; rep < 8; ++rep) {
    const double t = ut(rng), a = ua(rng);
    std::vector<double> om(K * K);
    for (std::size_t e = 0; e < K * K; ++e) om[e] = t * (dg[e] - a * w[e]);
    std::vector<double> mv(K), mmv(n * K);
    for (auto& v : mv) v = um(rng);
    for (auto& v : mmv) v = um(rng);
    std::vector<double> pm{t, a}, p1{t, a, mv[0]}, pn{t, a};
    pm.insert(pm.end(), mv.begin(), mv.end());
    pn.insert(pn.end(), mmv.begin(), mmv.end());
    CHECK(f.value(pm) == Approx(double(reference_lpdf(y, mv, om, K))).epsilon(1e-12));
    CHECK(fl.value(pm) == Approx(double(reference_lpdf(y, mv, om, K))).epsilon(1e-12));
    CHECK(f1.value(p1) == Approx(double(reference_lpdf(y, {mv[0]}, om, K))).epsilon(1e-12));
    CHECK(fn.value(pn) == Approx(double(reference_lpdf(y, mmv, om, K))).epsilon(1e-12));
    tyche_test::check_gradient_at(f, pm, "multi_normal_prec(m, tau (D - alpha W)), 3 rows");
    tyche_test::check_gradient_at(f1, p1, "multi_normal_prec(s, tau (D - alpha W)), one mean");
    tyche_test::check_gradient_at(fn, pn, "multi_normal_prec(mm, tau (D - alpha W)), a mean per row");
    if (rep == 0) {
      std::vector<std::vector<double>> points;
      for (int v = 0; v < 8; ++v) {
        std::vector<double> q{ut(rng), ua(rng)};
        for (std::size_t i = 0; i < K; ++i) q.push_back(um(rng));
        points.push_back(q);
      }
      tyche_test::check_lanes(f, points, "multi_normal_prec(m, tau (D - alpha W)) (lanes)");
    }
  }
  // A matrix that is not positive definite (alpha > 1 on a ring: D − W has a zero eigenvalue,
  // D − 1.5 W a negative one) gives NaN, a point the sampler rejects.
  CHECK(std::isnan(f.value(std::vector<double>{1.0, 1.5, 0, 0, 0, 0, 0, 0})));
}

TEST_CASE("multi_normal_prec: the upper triangle of an expression Omega is not read",
          "[distributions][multi_normal_prec]") {
  constexpr std::size_t K = 3;
  vector_param<"o", K * K> o;
  const std::vector<double> x{0.3, -1.2, 0.8};
  const auto f = compile(multi_normal_prec(0.5, o).log_prob(data(x)), o);
  std::vector<double> om = precision_of(K);
  const double ref = double(reference_lpdf(x, {0.5}, om, K));
  std::vector<double> scrambled = om;
  scrambled[0 * K + 1] = 7, scrambled[0 * K + 2] = -4, scrambled[1 * K + 2] = 100;
  CHECK(f.value(om) == Approx(ref).epsilon(1e-12));
  CHECK(f.value(scrambled) == Approx(ref).epsilon(1e-12));
  std::vector<double> grad(f.dim()), work(f.workspace_size());
  f.value_and_gradient(std::span<const double>(scrambled), std::span<double>(grad), std::span<double>(work));
  CHECK(grad[0 * K + 1] == 0.0);
  CHECK(grad[1 * K + 2] == 0.0);
  tyche_test::check_gradient_at(f, om, "multi_normal_prec(0.5, o)");
}

TEST_CASE("multi_normal_prec: draws have the covariance Omega^-1", "[distributions][multi_normal_prec]") {
  constexpr std::size_t K = 4;
  const auto om = precision_of(K);
  const auto sigma = inverse(om, K);
  const std::vector<double> mu{1.0, -2.0, 0.0, 3.0};
  // The data form's draw_all (its factor) and the expression form's (the matrix's values,
  // factored per draw): one model each, every argument fixed, drawn from the prior.
  auto data_form = model([&] { return joint(multi_normal_prec<"x">(data(mu), matrix(om.data(), K, K))); });
  auto expr_form = do_<"o">(model([&] {
    auto o = flat<"o">(cov_matrix(K));
    return joint(o, multi_normal_prec<"x">(data(mu), o));
  }), data(om));
  REQUIRE(data_form.dim() == K);
  REQUIRE(expr_form.dim() == K);
  for (const auto& p : tyche_test::random_points(4, K, -3, 3, 40))
    CHECK(expr_form.log_prob(p) == Approx(data_form.log_prob(p)).epsilon(1e-12));
  const auto check_draws = [&](auto& mdl, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::vector<double>> xs;
    for (std::size_t r = 0; r < 40000; ++r) xs.push_back(mdl.sample_prior(rng));
    tyche_test::check_gaussian_draws(xs, mu, sigma);
  };
  check_draws(data_form, 21);
  check_draws(expr_form, 22);
  // An expression Omega is read through its lower triangle by draws too, as by log_prob: a
  // different upper triangle gives the same draws.
  vector_param<"o", K * K> o;
  const auto d = multi_normal_prec(0.0, o);
  std::vector<double> scrambled = om;
  scrambled[0 * K + 3] = 9, scrambled[1 * K + 2] = -7;
  std::mt19937_64 r1(5), r2(5);
  CHECK(d.draw_all(r1, K, {0.0}, scrambled) == d.draw_all(r2, K, {0.0}, om));
}

TEST_CASE("multi_normal_prec: NUTS on a CAR prior", "[distributions][multi_normal_prec][nuts]") {
  // phi ~ multi_normal_prec(0, tau (D − alpha W)) with tau = 2 and alpha = 0.9 given, on a ring
  // of 5 areas: marginal variances (Ω⁻¹)ᵢᵢ, means 0.
  constexpr std::size_t K = 5;
  const auto w = ring_adjacency(K), dg = ring_degrees(K);
  std::vector<double> om(K * K);
  for (std::size_t e = 0; e < K * K; ++e) om[e] = 2.0 * (dg[e] - 0.9 * w[e]);
  const auto sigma = inverse(om, K);
  auto m = model([&] { return joint(multi_normal_prec<"phi">(0.0, 2.0 * (data(dg) - 0.9 * data(w)))); });
  REQUIRE(m.dim() == K);
  const auto fit = nuts(m, {.chains = 4, .warmup = 500, .draws = 1000, .seed = 78});
  tyche_test::check_gaussian_marginals(fit, std::vector<double>(K, 0.0), sigma);
}

TEST_CASE("multi_normal_prec: do_ into the precision, and the multi_normal lpdf functions",
          "[distributions][multi_normal_prec]") {
  constexpr std::size_t K = 4;
  const auto w = ring_adjacency(K), dg = ring_degrees(K);
  auto full = model([&] {
    auto tau = gamma<"tau">(2.0, 1.0);
    auto alpha = uniform<"alpha">(0.0, 0.99);
    return joint(tau, alpha, multi_normal_prec<"phi">(0.0, tau * (data(dg) - alpha * data(w))));
  });
  REQUIRE(full.dim() == 2 + K);
  auto fixed = do_<"alpha">(full, 0.5);
  auto written = model([&] {
    auto tau = gamma<"tau">(2.0, 1.0);
    return joint(tau, multi_normal_prec<"phi">(0.0, tau * (data(dg) - 0.5 * data(w))));
  });
  REQUIRE(fixed.dim() == 1 + K);
  for (const auto& p : tyche_test::random_points(5, 1 + K, -1, 1, 51))
    CHECK(fixed.log_prob(p) == Approx(written.log_prob(p)).epsilon(1e-13));

  // multi_normal_lpdf / multi_normal_cholesky_lpdf / multi_normal_prec_lpdf as free terms agree
  // with each other at Σ = Ω⁻¹ and with the reference.
  const auto om = precision_of(K);
  const auto sig = inverse(om, K);
  const auto l = detail::cholesky_lower(sig.data(), K, "test");
  vector_param<"x", K> x;
  param<"s"> s;
  const auto a = compile(multi_normal_lpdf(x, s, matrix(sig.data(), K, K)), x, s);
  const auto b = compile(multi_normal_cholesky_lpdf(x, s, matrix(l.data(), K, K)), x, s);
  const auto c = compile(multi_normal_prec_lpdf(x, s, matrix(om.data(), K, K)), x, s);
  for (const auto& p : tyche_test::random_points(5, K + 1, -2, 2, 52)) {
    const double ref = double(reference_lpdf(std::vector<double>(p.begin(), p.begin() + K), {p[K]}, om, K));
    CHECK(a.value(p) == Approx(ref).epsilon(1e-10));
    CHECK(b.value(p) == Approx(ref).epsilon(1e-10));
    CHECK(c.value(p) == Approx(ref).epsilon(1e-12));
  }
}

TEST_CASE("multi_normal_prec: errors name the entry", "[distributions][multi_normal_prec]") {
  vector_param<"x", 2> x;
  const std::vector<double> not_pd{1.0, 2.0, 2.0, 1.0};
  CHECK_THROWS_WITH(multi_normal_prec(x, matrix(not_pd.data(), 2, 2)),
                    Contains("multi_normal_prec(mu, Omega): Omega is not positive definite (pivot 2"));
  const std::vector<double> not_sym{1.0, 0.5, 0.4, 1.0};
  CHECK_THROWS_WITH(multi_normal_prec(x, matrix(not_sym.data(), 2, 2)),
                    Contains("Omega[2, 1] = 0.4 but Omega[1, 2] = 0.5"));
  const std::vector<double> nan_entry{1.0, 0.0, 0.0, std::nan("")};
  CHECK_THROWS_WITH(multi_normal_prec(x, matrix(nan_entry.data(), 2, 2)), Contains("Omega[2, 2] = nan must be finite"));
  const std::vector<double> rect{1, 0, 0, 1, 0, 0};
  CHECK_THROWS_WITH(multi_normal_prec(x, matrix(rect.data(), 2, 3)),
                    Contains("Omega must be square and non-empty; it is 2 x 3"));
  const std::vector<double> eye3{1, 0, 0, 0, 1, 0, 0, 0, 1};
  CHECK_THROWS_WITH(multi_normal_prec(x, matrix(eye3.data(), 3, 3)),
                    Contains("mu has size 2 but Omega is 3 x 3"));
  vector_param<"y", 3> y;
  const std::vector<double> eye2{1, 0, 0, 1};
  CHECK_THROWS_WITH(multi_normal_prec(0.0, matrix(eye2.data(), 2, 2)).log_prob(y),
                    Contains("x has size 3, which is not a multiple of K = 2"));
  vector_param<"o", 5> o;
  CHECK_THROWS_WITH(multi_normal_prec(0.0, o), Contains("Omega"));
  vector_param<"m3", 3> m3;
  CHECK_THROWS_WITH(multi_normal_prec(m3, matrix(eye2.data(), 2, 2)), Contains("mu has size 3 but Omega is 2 x 2"));
  CHECK_THROWS_WITH(multi_normal_prec<"b">(0.0, matrix(eye2.data(), 2, 2), shape_of(3)),
                    Contains("b has 3 values, which is not a positive multiple of K = 2"));
}
