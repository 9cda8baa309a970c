// The dense metric (nuts_config::metric = dense): momentum distribution, Cholesky errors,
// adaptation of the covariance, and sampling of a strongly correlated Gaussian.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>
#include <string>

namespace {

// x ~ N(0, Σ), Σᵢⱼ = ρ^|i−j|, through its AR(1) factorisation (unit Jacobian).
template <std::size_t D>
auto correlated_gaussian(double rho) {
  using namespace tyche;
  static std::vector<double> shift(D * D, 0.0), zero(D, 0.0), scale(D, 0.0);
  for (std::size_t i = 1; i < D; ++i) shift[i * D + (i - 1)] = 1.0;
  for (std::size_t i = 0; i < D; ++i) scale[i] = i == 0 ? 1.0 : std::sqrt(1 - rho * rho);
  auto x = flat<"x">(shape<D>);
  return model(joint(x, normal(data(zero), data(scale)).observe(x - rho * matvec(matrix(shift.data(), D, D), x))));
}

}  // namespace

TEST_CASE("dense metric: momenta are N(0, M) with M the inverse of the given matrix", "[nuts][dense]") {
  // M⁻¹ = [[4, 1.8], [1.8, 1]] (correlation 0.9), so M = [[1, −1.8], [−1.8, 4]] / 0.76.
  // 40,000 momenta: each covariance estimate within 4 standard errors (se ≈ √2·σ²/√n for a
  // variance, √((σᵢ²σⱼ² + σᵢⱼ²)/n) for a covariance). The kernel's own functions: normals from a
  // chain's stream, then p = L⁻ᵀu with M⁻¹ = LLᵀ.
  using namespace tyche::samplers;
  const double inv_metric[4] = {4.0, 1.8, 1.8, 1.0};
  double chol[4];
  REQUIRE(cholesky_lower(inv_metric, chol, 2) == nuts_status::ok);
  chain_streams<1> rng;
  rng.seed = 42;
  const bool take[1] = {true};
  const int n = 40000;
  double s00 = 0, s01 = 0, s11 = 0;
  double p[2];
  for (int k = 0; k < n; ++k) {
    rng.normals(p, 2, take);
    detail::momentum_from_normals(inv_metric, chol, true, p, 2);
    s00 += p[0] * p[0];
    s01 += p[0] * p[1];
    s11 += p[1] * p[1];
  }
  CHECK(rng.position[0] == 2u * n);
  const double m00 = 1 / 0.76, m01 = -1.8 / 0.76, m11 = 4 / 0.76;
  CHECK(std::fabs(s00 / n - m00) < 4 * std::sqrt(2.0 / n) * m00);
  CHECK(std::fabs(s11 / n - m11) < 4 * std::sqrt(2.0 / n) * m11);
  CHECK(std::fabs(s01 / n - m01) < 4 * std::sqrt((m00 * m11 + m01 * m01) / n));
  // pᵀM⁻¹p of p = (1, 2): 4 + 2·2·1.8 + 4 = 15.2.
  const double q[2] = {1.0, 2.0};
  CHECK(detail::kinetic_energy_twice(inv_metric, true, q, 2) == Approx(15.2).epsilon(1e-14));
}

TEST_CASE("dense metric: a matrix that is not positive definite is refused", "[nuts][dense]") {
  using namespace tyche::samplers;
  using kernel = nuts_kernel<double>;
  std::vector<double> storage(kernel::storage_size(2, 5, metric_kind::dense));
  kernel k;
  REQUIRE(k.bind(storage.data(), storage.size(), 2, 5, metric_kind::dense) == nuts_status::ok);
  const double indefinite[4] = {1.0, 2.0, 2.0, 1.0};
  CHECK(k.set_metric(0, indefinite) == nuts_status::metric_not_positive_definite);
  double chol[4];
  std::size_t pivot = 9;
  CHECK(cholesky_lower(indefinite, chol, 2, &pivot) == nuts_status::metric_not_positive_definite);
  CHECK(pivot == 1);
  CHECK(std::string(describe(nuts_status::metric_not_positive_definite)).find("not positive definite") !=
        std::string::npos);
  std::vector<double> diag_storage(kernel::storage_size(2, 5, metric_kind::diagonal));
  REQUIRE(k.bind(diag_storage.data(), diag_storage.size(), 2, 5, metric_kind::diagonal) == nuts_status::ok);
  const double negative[2] = {1.0, -1.0};
  std::size_t where = 9;
  CHECK(k.set_metric(0, negative) == nuts_status::invalid_metric);
  CHECK(check_diagonal_metric(negative, 2, &where) == nuts_status::invalid_metric);
  CHECK(where == 1);
}

TEST_CASE("dense metric: adapts to and samples a strongly correlated Gaussian", "[nuts][dense]") {
  // 10-d, Σᵢⱼ = 0.95^|i−j|. Means within 4 MCSE of 0, variances within 10 % of 1, the adapted
  // M⁻¹ within 0.25 of Σ elementwise (the last warm-up window has ~500 draws), and shorter
  // trajectories than with the diagonal metric, which cannot undo the correlation.
  constexpr std::size_t d = 10;
  const double rho = 0.95;
  const auto m = correlated_gaussian<d>(rho);
  tyche::nuts_config cfg{.chains = 4, .warmup = 1000, .draws = 1000, .seed = 99};
  cfg.metric = tyche::samplers::metric_kind::dense;
  const auto dense = tyche::nuts(m, cfg);
  cfg.metric = tyche::samplers::metric_kind::diagonal;
  const auto diag = tyche::nuts(m, cfg);
  for (std::size_t k = 0; k < d; ++k) {
    const auto chains = dense.parameter(k);
    double mean = 0, var = 0, n = 0;
    for (const auto& c : chains)
      for (double v : c) mean += v, n += 1;
    mean /= n;
    for (const auto& c : chains)
      for (double v : c) var += (v - mean) * (v - mean) / (n - 1);
    INFO("x[" << k + 1 << "]: mean " << mean << ", variance " << var);
    CHECK(std::fabs(mean) < 4 * tyche::mcse_mean(chains));
    CHECK(std::fabs(var - 1.0) < 0.10);
  }
  for (const auto& inv : dense.inv_metric) {
    REQUIRE(inv.size() == d * d);
    for (std::size_t i = 0; i < d; ++i)
      for (std::size_t j = 0; j < d; ++j) {
        INFO("M^-1[" << i << "," << j << "] = " << inv[i * d + j]);
        CHECK(std::fabs(inv[i * d + j] - std::pow(rho, std::fabs(double(i) - double(j)))) < 0.25);
      }
  }
  auto mean_leapfrogs = [](const tyche::nuts_fit& f) {
    double s = 0, n = 0;
    for (const auto& c : f.stats)
      for (const auto& st : c) s += st.n_leapfrog, n += 1;
    return s / n;
  };
  INFO("mean leapfrogs: dense " << mean_leapfrogs(dense) << ", diagonal " << mean_leapfrogs(diag));
  CHECK(mean_leapfrogs(dense) < 0.5 * mean_leapfrogs(diag));
  CHECK(diag.inv_metric[0].size() == d);
}
