// multi_normal(mu, Sigma) and multi_normal_cholesky(mu, L) (tyche/distributions/multi_normal.hpp):
// log densities against −½ rᵀΣ⁻¹r − ½ log det Σ − (K/2) log 2π computed here by Gauss–Jordan in
// long double, gradients through the property check, draws against mean and covariance,
// NUTS on a correlated target (means within 4 MCSE, variances within 10 %), and the errors.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "support/property.hpp"

using namespace tyche;
using Catch::Matchers::Contains;

namespace {
constexpr std::size_t K = 4;

/// Σᵢⱼ = sᵢ sⱼ ρ^|i−j| (N × N; s repeats 1, 2, 0.5, 1.5).
template <std::size_t N>
std::vector<double> covariance_of() {
  const double s[4] = {1.0, 2.0, 0.5, 1.5};
  std::vector<double> c(N * N);
  for (std::size_t i = 0; i < N; ++i)
    for (std::size_t j = 0; j < N; ++j)
      c[i * N + j] = s[i % 4] * s[j % 4] * std::pow(0.7, std::fabs(double(i) - double(j)));
  return c;
}
std::vector<double> covariance() { return covariance_of<K>(); }

/// The log density by Gauss–Jordan elimination of [Σ | r] in long double.
template <std::size_t K>
long double reference_lpdf(const std::vector<double>& x, const std::vector<double>& mu,
                           const std::vector<double>& sigma) {
  long double a[K][K + 1];
  for (std::size_t i = 0; i < K; ++i) {
    for (std::size_t j = 0; j < K; ++j) a[i][j] = sigma[i * K + j];
    a[i][K] = x[i] - mu[i];
  }
  long double log_det = 0;
  for (std::size_t c = 0; c < K; ++c) {
    log_det += std::log(std::fabs(a[c][c]));
    for (std::size_t r = 0; r < K; ++r) {
      if (r == c) continue;
      const long double f = a[r][c] / a[c][c];
      for (std::size_t j = c; j <= K; ++j) a[r][j] -= f * a[c][j];
    }
  }
  long double quad = 0;  // rᵀ Σ⁻¹ r, with Σ⁻¹ r = a[i][K] / a[i][i]
  for (std::size_t i = 0; i < K; ++i) quad += (x[i] - mu[i]) * a[i][K] / a[i][i];
  return -0.5L * quad - 0.5L * log_det - 0.5L * K * std::log(2 * 3.14159265358979323846L);
}
}  // namespace

/// The first test's checks for N × N (N = 19: the triangular solves' rows run their loops'
/// bodies, not only the tails: four partial sums for a batch of chains, two SIMD batches of
/// observations for double, autodiff/vector_ops.hpp's triangular_dot and triangular_axpy).
template <std::size_t K>
void check_multi_normal_against_reference() {
  const auto sigma = covariance_of<K>();
  const auto l = detail::cholesky_lower(sigma.data(), K, "test");
  vector_param<"x", K> x;
  vector_param<"m", K> m;
  const auto f = compile(multi_normal(m, matrix(sigma.data(), K, K)).log_prob(x), x, m);
  const auto g = compile(multi_normal_cholesky(m, matrix(l.data(), K, K)).log_prob(x), x, m);
  for (const auto& p : tyche_test::random_points(50, 2 * K, -3, 3, 8)) {
    const std::vector<double> xv(p.begin(), p.begin() + K), mv(p.begin() + K, p.end());
    const double ref = static_cast<double>(reference_lpdf<K>(xv, mv, sigma));
    CHECK(f.value(p) == Approx(ref).epsilon(1e-13));
    CHECK(g.value(p) == Approx(ref).epsilon(1e-13));
  }
  for (const auto& p : tyche_test::random_points(5, 2 * K, -3, 3, 9)) {
    tyche_test::check_gradient_at(f, p, "multi_normal");
    tyche_test::check_gradient_at(g, p, "multi_normal_cholesky");
  }
  tyche_test::check_lanes(f, tyche_test::random_points(8, 2 * K, -3, 3, 10), "multi_normal (lanes)");
  tyche_test::check_lanes(g, tyche_test::random_points(8, 2 * K, -3, 3, 11), "multi_normal_cholesky (lanes)");
}

TEST_CASE("multi_normal: log density against an independent computation, and gradients",
          "[distributions][multi_normal]") {
  check_multi_normal_against_reference<K>();
  check_multi_normal_against_reference<19>();
}

TEST_CASE("multi_normal: draws have the mean and covariance", "[distributions][multi_normal]") {
  const auto sigma = covariance();
  const std::vector<double> mu{1.0, -2.0, 0.0, 3.0};
  const auto d = multi_normal(data(mu), matrix(sigma.data(), K, K));
  std::mt19937_64 rng(21);
  const std::size_t n = 100000;
  std::vector<double> mean(K, 0.0), cov(K * K, 0.0);
  std::vector<std::vector<double>> xs;
  for (std::size_t r = 0; r < n; ++r) xs.push_back(d.draw_all(rng, K, mu));
  for (const auto& x : xs)
    for (std::size_t i = 0; i < K; ++i) mean[i] += x[i] / double(n);
  for (const auto& x : xs)
    for (std::size_t i = 0; i < K; ++i)
      for (std::size_t j = 0; j < K; ++j) cov[i * K + j] += (x[i] - mean[i]) * (x[j] - mean[j]) / double(n - 1);
  for (std::size_t i = 0; i < K; ++i) {
    // Standard error of a mean: sqrt(Σᵢᵢ / n); of a covariance: sqrt((ΣᵢᵢΣⱼⱼ + Σᵢⱼ²) / n).
    CHECK(std::fabs(mean[i] - mu[i]) < 4.5 * std::sqrt(sigma[i * K + i] / double(n)));
    for (std::size_t j = 0; j < K; ++j) {
      const double se = std::sqrt((sigma[i * K + i] * sigma[j * K + j] + sigma[i * K + j] * sigma[i * K + j]) / double(n));
      INFO("covariance " << i << ", " << j << ": " << cov[i * K + j] << " against " << sigma[i * K + j]);
      CHECK(std::fabs(cov[i * K + j] - sigma[i * K + j]) < 4.5 * se);
    }
  }
}

TEST_CASE("multi_normal: NUTS on a correlated prior", "[distributions][multi_normal][nuts]") {
  const auto sigma = covariance();
  const std::vector<double> mu{1.0, -2.0, 0.0, 3.0};
  auto m = model([&] { return joint(multi_normal<"x">(data(mu), matrix(sigma.data(), K, K))); });
  REQUIRE(m.dim() == K);
  const auto fit = nuts(m, {.chains = 4, .warmup = 1000, .draws = 2000, .seed = 77});
  for (std::size_t k = 0; k < K; ++k) {
    const auto chains = fit.parameter(k);
    std::vector<double> all;
    for (const auto& c : chains) all.insert(all.end(), c.begin(), c.end());
    double mean = 0, var = 0;
    for (double v : all) mean += v / double(all.size());
    for (double v : all) var += (v - mean) * (v - mean) / double(all.size() - 1);
    const double mcse = std::sqrt(var / ess_bulk(chains));
    INFO(fit.names[k] << ": mean " << mean << " (MCSE " << mcse << "), variance " << var);
    CHECK(std::fabs(mean - mu[k]) < 4 * mcse);
    CHECK(std::fabs(var / sigma[k * K + k] - 1) < 0.10);
  }
}

TEST_CASE("multi_normal: errors name the entry", "[distributions][multi_normal]") {
  vector_param<"x", 2> x;
  const std::vector<double> not_pd{1.0, 2.0, 2.0, 1.0};
  CHECK_THROWS_WITH(multi_normal(x, matrix(not_pd.data(), 2, 2)),
                    Contains("Sigma is not positive definite (pivot 2"));
  const std::vector<double> not_sym{1.0, 0.5, 0.4, 1.0};
  CHECK_THROWS_WITH(multi_normal(x, matrix(not_sym.data(), 2, 2)),
                    Contains("Sigma[2, 1] = 0.4 but Sigma[1, 2] = 0.5"));
  const std::vector<double> bad_l{1.0, 0.0, 0.3, -1.0};
  CHECK_THROWS_WITH(multi_normal_cholesky(x, matrix(bad_l.data(), 2, 2)),
                    Contains("L[2, 2] = -1 must be a positive number"));
  const std::vector<double> eye3{1, 0, 0, 0, 1, 0, 0, 0, 1};
  CHECK_THROWS_WITH(multi_normal(x, matrix(eye3.data(), 3, 3)), Contains("mu has size 2 but the matrix is 3 x 3"));
  vector_param<"y", 3> y;
  const std::vector<double> eye2{1, 0, 0, 1};
  CHECK_THROWS_WITH(multi_normal(0.0, matrix(eye2.data(), 2, 2)).log_prob(y),
                    Contains("x has size 3 but L is 2 x 2"));
}

// ---- the matrix as an expression of parameters ------------------------------------------------

/// Value and gradient in x and mu of the parameter version equal the data version's at the
/// same L; the gradient in L passes the property check (with the diagonal kept positive); reps
/// random L. N = 19 runs the loops' bodies (check_multi_normal_against_reference).
template <std::size_t K>
void check_parameter_l(int reps) {
  vector_param<"x", K> x;
  vector_param<"m", K> m;
  vector_param<"l", K * K> lp;
  const auto f = compile(multi_normal_cholesky(m, lp).log_prob(x), x, m, lp);
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> u(-1, 1), d(0.4, 2);
  for (int r = 0; r < reps; ++r) {
    std::vector<double> l(K * K);
    for (std::size_t i = 0; i < K; ++i)
      for (std::size_t j = 0; j < K; ++j) l[i * K + j] = j < i ? u(rng) : (j == i ? d(rng) : 5 * u(rng));
    const auto p = tyche_test::random_points(1, 2 * K, -3, 3, 50 + unsigned(r))[0];
    std::vector<double> all = p;
    all.insert(all.end(), l.begin(), l.end());
    const auto h = compile(multi_normal_cholesky(m, matrix(l.data(), K, K)).log_prob(x), x, m);
    std::vector<double> gf(f.dim()), gh(h.dim()), wf(f.workspace_size()), wh(h.workspace_size());
    const double vf = f.value_and_gradient(std::span<const double>(all), std::span<double>(gf), std::span<double>(wf));
    const double vh = h.value_and_gradient(std::span<const double>(p), std::span<double>(gh), std::span<double>(wh));
    CHECK(vf == Approx(vh).epsilon(1e-13));
    for (std::size_t k = 0; k < 2 * K; ++k) CHECK(gf[k] == Approx(gh[k]).epsilon(1e-12).margin(1e-12));
    // The part of L above the diagonal is not read.
    for (std::size_t i = 0; i < K; ++i)
      for (std::size_t j = i + 1; j < K; ++j) CHECK(gf[2 * K + i * K + j] == 0.0);
    tyche_test::check_gradient_at(f, all, "multi_normal_cholesky(m, l)");
    if (r == 0) {
      // (A random 19 × 19 triangular L is too ill-conditioned for float's 1e-4: K = 4 only.)
      if constexpr (K <= 4) tyche_test::check_float(f, all, "multi_normal_cholesky(m, l) (float)");
      std::vector<std::vector<double>> points;  // other x and mu, the same L
      for (unsigned v = 0; v < 16; ++v) {
        std::vector<double> q = tyche_test::random_points(1, 2 * K, -3, 3, 80 + v)[0];
        q.insert(q.end(), l.begin(), l.end());
        points.push_back(std::move(q));
      }
      tyche_test::check_lanes(f, points, "multi_normal_cholesky(m, l) (lanes)");
    }
  }
}

TEST_CASE("multi_normal_cholesky: a parameter L against the data L at equal values",
          "[distributions][multi_normal][matrix]") {
  check_parameter_l<K>(12);
  check_parameter_l<19>(2);
}

TEST_CASE("multi_normal: a parameter Sigma against the data Sigma, N observations",
          "[distributions][multi_normal][matrix]") {
  // Sigma = L Lᵀ from a cholesky_factor_cov parameter; y holds N = 5 observations of K and mu is
  // one vector for all rows, one value, or one vector per row: the sum of the rows' densities
  // computed by Gauss–Jordan.
  constexpr std::size_t n = 5;
  const auto y = tyche_test::random_points(1, n * K, -3, 3, 61)[0];
  vector_param<"u", K*(K + 1) / 2> u;
  vector_param<"m", K> m;
  vector_param<"mm", n * K> mm;
  param<"s"> s;
  const transforms::cholesky_factor_cov tr{K};
  const auto sigma_of = multiply_lower_tri_self_transpose(tr.constrain(u));
  const auto f = compile(multi_normal(m, sigma_of).log_prob(data(y)), u, m);
  const auto f1 = compile(multi_normal(s, sigma_of).log_prob(data(y)), u, s);
  const auto fn = compile(multi_normal(mm, sigma_of).log_prob(data(y)), u, mm);
  const auto fc = compile(multi_normal_cholesky(m, tr.constrain(u)).log_prob(data(y)), u, m);
  for (const auto& p : tyche_test::random_points(10, K * (K + 1) / 2 + n * K, -1, 1, 62)) {
    // Sigma at this point, by the same program the test reads it from: entry e of L Lᵀ.
    std::vector<double> uu(p.begin(), p.begin() + K * (K + 1) / 2);
    std::vector<double> sig_v(K * K), pick(K * K, 0.0);
    for (std::size_t e = 0; e < K * K; ++e) {
      pick.assign(K * K, 0.0);
      pick[e] = 1;
      sig_v[e] = compile(sum(data(pick) * sigma_of), u).value(uu);
    }
    const std::vector<double> mv(p.begin() + K * (K + 1) / 2, p.begin() + K * (K + 1) / 2 + K);
    const std::vector<double> mmv(p.begin() + K * (K + 1) / 2, p.end());
    long double ref = 0, ref1 = 0, refn = 0;
    for (std::size_t r = 0; r < n; ++r) {
      const std::vector<double> yr(y.begin() + long(r * K), y.begin() + long(r * K + K));
      ref += reference_lpdf<K>(yr, mv, sig_v);
      ref1 += reference_lpdf<K>(yr, std::vector<double>(K, mv[0]), sig_v);
      refn += reference_lpdf<K>(yr, std::vector<double>(mmv.begin() + long(r * K), mmv.begin() + long(r * K + K)), sig_v);
    }
    std::vector<double> pm = uu, p1 = uu, pn = uu;
    pm.insert(pm.end(), mv.begin(), mv.end());
    p1.push_back(mv[0]);
    pn.insert(pn.end(), mmv.begin(), mmv.end());
    CHECK(f.value(pm) == Approx(double(ref)).epsilon(1e-12));
    CHECK(fc.value(pm) == Approx(double(ref)).epsilon(1e-12));
    CHECK(f1.value(p1) == Approx(double(ref1)).epsilon(1e-12));
    CHECK(fn.value(pn) == Approx(double(refn)).epsilon(1e-12));
    tyche_test::check_gradient_at(f, pm, "multi_normal(m, L Lᵀ), 5 rows");
    tyche_test::check_gradient_at(fn, pn, "multi_normal(mm, L Lᵀ), a mean per row");
    tyche_test::check_gradient_at(f1, p1, "multi_normal(s, L Lᵀ), one mean for every entry");
  }
  tyche_test::check_lanes(f, tyche_test::random_points(8, K * (K + 1) / 2 + K, -1, 1, 63), "multi_normal(m, L Lᵀ)");
}

namespace {
/// log LKJ-Cholesky density by Stan's formula, with c_K from Lewandowski et al. (2009, eq. 16):
/// c_K = Π_{k=1}^{K−1} [2^{2η−2+K−k} B(η + (K−k−1)/2, η + (K−k−1)/2)]^{K−k}.
double lkj_cholesky_lpdf(const std::vector<double>& l, std::size_t k, double eta) {
  double lp = 0;
  for (std::size_t i = 1; i < k; ++i) lp += (double(k) - double(i + 1) + 2 * eta - 2) * std::log(l[i * k + i]);
  for (std::size_t j = 1; j < k; ++j) {
    const double b = eta + (double(k) - double(j) - 1) / 2;
    lp -= double(k - j) * ((2 * eta - 2 + double(k - j)) * std::log(2.0) + std::lgamma(b) * 2 - std::lgamma(2 * b));
  }
  return lp;
}
}  // namespace

TEST_CASE("multi_normal_cholesky: a hierarchical model with an LKJ prior",
          "[distributions][multi_normal][matrix]") {
  // L_Omega ~ lkj_corr_cholesky(2), tau ~ half_normal(0, 1), mu ~ normal(0, 5),
  // y ~ multi_normal_cholesky(mu, diag_pre_multiply(tau, L_Omega)) for 6 rows of K:
  // the log density (without the Jacobian) against one computed here from the constrained values.
  constexpr std::size_t n = 6;
  const auto y = tyche_test::random_points(1, n * K, -2, 2, 71)[0];
  auto m = model([&] {
    auto l_omega = lkj_corr_cholesky<"L_Omega">(2.0, K);
    auto tau = half_normal<"tau">(1.0, shape<K>);
    auto mu = normal<"mu">(0.0, 5.0, shape<K>);
    return joint(l_omega, tau, mu, multi_normal_cholesky(mu, diag_pre_multiply(tau, l_omega)).observe(data(y)));
  });
  REQUIRE(m.dim() == K * (K - 1) / 2 + 2 * K);
  REQUIRE(m.constrained_dim() == K * K + 2 * K);
  for (const auto& theta : tyche_test::random_points(5, m.dim(), -1, 1, 72)) {
    const auto v = m.constrain(theta);
    const std::vector<double> l(v.begin(), v.begin() + K * K), tau(v.begin() + K * K, v.begin() + K * K + K),
        mu(v.begin() + K * K + K, v.end());
    std::vector<double> sigma(K * K);
    for (std::size_t i = 0; i < K; ++i)
      for (std::size_t j = 0; j < K; ++j) {
        double omega = 0;
        for (std::size_t p = 0; p < K; ++p) omega += l[i * K + p] * l[j * K + p];
        sigma[i * K + j] = tau[i] * tau[j] * omega;
      }
    double expected = lkj_cholesky_lpdf(l, K, 2.0);
    for (double t : tau) expected += std::log(2.0) - 0.5 * t * t - 0.5 * std::log(2 * M_PI);
    for (double x : mu) expected += -0.5 * (x / 5) * (x / 5) - std::log(5.0) - 0.5 * std::log(2 * M_PI);
    for (std::size_t r = 0; r < n; ++r)
      expected += double(reference_lpdf<K>(std::vector<double>(y.begin() + long(r * K), y.begin() + long(r * K + K)), mu, sigma));
    CHECK(m.log_prob(theta, false) == Approx(expected).epsilon(1e-12));
    tyche_test::check_gradient_at(m.program(), theta, "lkj + multi_normal_cholesky model");
  }
  // Prior predictive draws of y have the right shape; the model samples from the prior.
  std::mt19937_64 rng(5);
  const auto prior = m.sample_prior(rng);
  REQUIRE(prior.size() == m.constrained_dim());
  const auto th = m.unconstrain(prior);
  const auto ys = m.sample_observations(th, rng);
  REQUIRE(ys.size() == 1);
  CHECK(ys[0].size() == n * K);
}

TEST_CASE("multi_normal_cholesky<\"b\">(mu, L, shape_of(J * K)): J group vectors, as J observed rows",
          "[distributions][multi_normal][matrix]") {
  // Stan's array[J] vector[K] b; b ~ multi_normal_cholesky(mu, diag_pre_multiply(tau, L_Omega)):
  // the named J·K variable's log density and gradient equal those of a flat J·K parameter
  // observed as J rows (the documented workaround before the three-argument form).
  constexpr std::size_t J = 3;
  auto named_rows = model([] {
    auto l_omega = lkj_corr_cholesky<"L_Omega">(2.0, K);
    auto tau = half_normal<"tau">(1.0, shape<K>);
    auto mu = normal<"mu">(0.0, 5.0, shape<K>);
    auto b = multi_normal_cholesky<"b">(mu, diag_pre_multiply(tau, l_omega), shape_of(J * K));
    return joint(l_omega, tau, mu, b);
  });
  auto observed_rows = model([] {
    auto l_omega = lkj_corr_cholesky<"L_Omega">(2.0, K);
    auto tau = half_normal<"tau">(1.0, shape<K>);
    auto mu = normal<"mu">(0.0, 5.0, shape<K>);
    auto b = flat<"b">(shape_of(J * K));
    return joint(l_omega, tau, mu, b, multi_normal_cholesky(mu, diag_pre_multiply(tau, l_omega)).observe(b));
  });
  REQUIRE(named_rows.dim() == observed_rows.dim());
  CHECK(named_rows.parameter_names() == observed_rows.parameter_names());
  for (const auto& theta : tyche_test::random_points(5, named_rows.dim(), -1, 1, 75)) {
    CHECK(named_rows.log_prob(theta) == Approx(observed_rows.log_prob(theta)).epsilon(1e-13));
    tyche_test::check_gradient_at(named_rows.program(), theta, "multi_normal_cholesky<b>(mu, L, shape_of(J * K))");
  }
  // A prior draw has J vectors of K.
  std::mt19937_64 rng(3);
  CHECK(named_rows.sample_prior(rng).size() == named_rows.constrained_dim());
  // The covariance form, with Sigma a cov_matrix parameter.
  auto named_cov = model([] {
    auto s = flat<"Sigma">(cov_matrix(K));
    auto b = multi_normal<"b">(0.0, s, shape_of(J * K));
    return joint(s, b);
  });
  auto observed_cov = model([] {
    auto s = flat<"Sigma">(cov_matrix(K));
    auto b = flat<"b">(shape_of(J * K));
    return joint(s, b, multi_normal(0.0, s).observe(b));
  });
  REQUIRE(named_cov.dim() == observed_cov.dim());
  for (const auto& theta : tyche_test::random_points(5, named_cov.dim(), -0.5, 0.5, 77)) {
    CHECK(named_cov.log_prob(theta) == Approx(observed_cov.log_prob(theta)).epsilon(1e-13));
    tyche_test::check_gradient_at(named_cov.program(), theta, "multi_normal<b>(mu, Sigma, shape_of(J * K))");
  }
  // With a data L (viewed), and the data-L form's density for each row.
  const auto sigma = covariance();
  const auto lv = detail::cholesky_lower(sigma.data(), K, "test");
  const std::vector<double> mu{1.0, -2.0, 0.0, 3.0};
  auto data_rows = model([&] { return joint(multi_normal_cholesky<"x">(data(mu), matrix(lv.data(), K, K), shape<2 * K>)); });
  auto one_row = model([&] { return joint(multi_normal_cholesky<"x">(data(mu), matrix(lv.data(), K, K))); });
  for (const auto& p : tyche_test::random_points(5, 2 * K, -3, 3, 76)) {
    const std::vector<double> first(p.begin(), p.begin() + K), second(p.begin() + K, p.end());
    CHECK(data_rows.log_prob(p) == Approx(one_row.log_prob(first) + one_row.log_prob(second)).epsilon(1e-13));
  }
  // A size that is not J vectors of K names the variable.
  CHECK_THROWS_WITH(model([&] { return joint(multi_normal_cholesky<"x">(data(mu), matrix(lv.data(), K, K), shape_of(7))); }),
                    Catch::Contains("x has 7 values") && Catch::Contains("multiple of K = 4"));
}

TEST_CASE("multi_normal_cholesky with a parameter L: draws and do_", "[distributions][multi_normal][matrix]") {
  // Draws of a named x ~ multi_normal_cholesky(mu, L) with L = diag(tau) L_Omega at fixed
  // (intervened) values: mean mu and covariance L Lᵀ within 4.5 standard errors.
  const auto sigma = covariance();
  const auto lv = detail::cholesky_lower(sigma.data(), K, "test");
  const std::vector<double> mu{1.0, -2.0, 0.0, 3.0};
  auto full = model([&] {
    auto l = flat<"L">(cholesky_factor_cov(K));
    return joint(l, multi_normal_cholesky<"x">(data(mu), l));
  });
  REQUIRE(full.dim() == K * (K + 1) / 2 + K);
  auto fixed = do_<"L">(full, data(lv));
  REQUIRE(fixed.dim() == K);
  // do_ leaves the density of x given L: equal to the data-L version's.
  auto reference = model([&] { return joint(multi_normal_cholesky<"x">(data(mu), matrix(lv.data(), K, K))); });
  for (const auto& p : tyche_test::random_points(5, K, -3, 3, 81)) CHECK(fixed.log_prob(p) == Approx(reference.log_prob(p)).epsilon(1e-13));
  // do_ on the mean of the data-L version rebuilds x's distribution and keeps L
  // (with_arguments): the density of x is the data-L one at mu.
  auto ref_do = do_<"mm">(model([&] {
    auto mm = normal<"mm">(0.0, 1.0, shape<K>);
    return joint(mm, multi_normal_cholesky<"x">(mm, matrix(lv.data(), K, K)));
  }), data(mu));
  REQUIRE(ref_do.dim() == K);
  for (const auto& p : tyche_test::random_points(5, K, -3, 3, 82)) CHECK(ref_do.log_prob(p) == Approx(reference.log_prob(p)).epsilon(1e-13));

  std::mt19937_64 rng(21);
  const std::size_t n = 40000;
  std::vector<double> mean(K, 0.0), cov(K * K, 0.0);
  std::vector<std::vector<double>> xs;
  for (std::size_t r = 0; r < n; ++r) xs.push_back(fixed.sample_prior(rng));
  for (const auto& x : xs)
    for (std::size_t i = 0; i < K; ++i) mean[i] += x[i] / double(n);
  for (const auto& x : xs)
    for (std::size_t i = 0; i < K; ++i)
      for (std::size_t j = 0; j < K; ++j) cov[i * K + j] += (x[i] - mean[i]) * (x[j] - mean[j]) / double(n - 1);
  for (std::size_t i = 0; i < K; ++i) {
    CHECK(std::fabs(mean[i] - mu[i]) < 4.5 * std::sqrt(sigma[i * K + i] / double(n)));
    for (std::size_t j = 0; j < K; ++j) {
      const double se = std::sqrt((sigma[i * K + i] * sigma[j * K + j] + sigma[i * K + j] * sigma[i * K + j]) / double(n));
      CHECK(std::fabs(cov[i * K + j] - sigma[i * K + j]) < 4.5 * se);
    }
  }
}

TEST_CASE("multi_normal with a matrix expression: errors", "[distributions][multi_normal][matrix]") {
  vector_param<"x", 3> x;
  vector_param<"l", 5> l5;
  vector_param<"l4", 4> l4;
  CHECK_THROWS_WITH(multi_normal_cholesky(x, l5), Contains("'L' has 5 values, which is not the number of entries of a square matrix"));
  CHECK_THROWS_WITH(multi_normal(0.0, l5), Contains("'Sigma' has 5 values"));
  CHECK_THROWS_WITH(multi_normal_cholesky(x, l4), Contains("mu has size 3 but the matrix is 2 x 2"));
  CHECK_THROWS_WITH(multi_normal_cholesky(0.0, l4).log_prob(x), Contains("x has size 3, which is not a multiple of K = 2"));
  vector_param<"v", 3> v;
  CHECK_THROWS_WITH(diag_pre_multiply(v, l4), Contains("'M' has 4 entries but 'v' has size 3"));
}
