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

/// Σᵢⱼ = sᵢ sⱼ ρ^|i−j|.
std::vector<double> covariance() {
  const double s[K] = {1.0, 2.0, 0.5, 1.5};
  std::vector<double> c(K * K);
  for (std::size_t i = 0; i < K; ++i)
    for (std::size_t j = 0; j < K; ++j)
      c[i * K + j] = s[i] * s[j] * std::pow(0.7, std::fabs(double(i) - double(j)));
  return c;
}

/// The log density by Gauss–Jordan elimination of [Σ | r] in long double.
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

TEST_CASE("multi_normal: log density against an independent computation, and gradients",
          "[distributions][multi_normal]") {
  const auto sigma = covariance();
  const auto l = detail::cholesky_lower(sigma.data(), K, "test");
  vector_param<"x", K> x;
  vector_param<"m", K> m;
  const auto f = compile(multi_normal(m, matrix(sigma.data(), K, K)).log_prob(x), x, m);
  const auto g = compile(multi_normal_cholesky(m, matrix(l.data(), K, K)).log_prob(x), x, m);
  for (const auto& p : tyche_test::random_points(50, 2 * K, -3, 3, 8)) {
    const std::vector<double> xv(p.begin(), p.begin() + K), mv(p.begin() + K, p.end());
    const double ref = static_cast<double>(reference_lpdf(xv, mv, sigma));
    CHECK(f.value(p) == Approx(ref).epsilon(1e-13));
    CHECK(g.value(p) == Approx(ref).epsilon(1e-13));
  }
  for (const auto& p : tyche_test::random_points(5, 2 * K, -3, 3, 9)) {
    tyche_test::check_gradient_at(f, p, "multi_normal");
    tyche_test::check_gradient_at(g, p, "multi_normal_cholesky");
  }
  tyche_test::check_lanes(f, tyche_test::random_points(8, 2 * K, -3, 3, 10), "multi_normal (lanes)");
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
                    Contains("Sigma[2, 1] = 0.400000 but Sigma[1, 2] = 0.500000"));
  const std::vector<double> bad_l{1.0, 0.0, 0.3, -1.0};
  CHECK_THROWS_WITH(multi_normal_cholesky(x, matrix(bad_l.data(), 2, 2)),
                    Contains("L[2, 2] = -1.000000 must be a positive number"));
  const std::vector<double> eye3{1, 0, 0, 0, 1, 0, 0, 0, 1};
  CHECK_THROWS_WITH(multi_normal(x, matrix(eye3.data(), 3, 3)), Contains("mu has size 2 but the matrix is 3 x 3"));
  vector_param<"y", 3> y;
  const std::vector<double> eye2{1, 0, 0, 1};
  CHECK_THROWS_WITH(multi_normal(0.0, matrix(eye2.data(), 2, 2)).log_prob(y),
                    Contains("x has size 3 but L is 2 x 2"));
}
