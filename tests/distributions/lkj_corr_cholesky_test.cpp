// lkj_corr_cholesky(eta, K) (tyche/distributions/lkj_corr_cholesky.hpp): the log density against
// two independent computations — for K = 2, the density of the correlation r, (1 − r²)^{η−1} /
// (2^{2η−1} B(η, η)); for K = 3, 4, the product of the canonical partial correlations'
// Beta(aⱼ, aⱼ) densities on (−1, 1) (Boost.Math) times the Jacobian of z ↦ L — gradients in L
// and in η through the property check, prior draws and NUTS draws against the known law of one
// correlation (2·Beta(η − 1 + K/2, same) − 1: mean 0, E r² = 1/(2η + K − 1), z-tests at fixed
// seeds), and the errors.
#include <tyche/tyche.hpp>

#include <boost/math/distributions/beta.hpp>
#include <boost/math/special_functions/beta.hpp>
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "support/property.hpp"

using namespace tyche;
using Catch::Matchers::Contains;

namespace {
/// L (k × k, row major) from canonical partial correlations z (row by row, strictly lower).
std::vector<double> cholesky_from_cpcs(const std::vector<double>& z, std::size_t k) {
  std::vector<double> l(k * k, 0.0);
  l[0] = 1;
  std::size_t p = 0;
  for (std::size_t i = 1; i < k; ++i) {
    double rest = 1;
    for (std::size_t j = 0; j < i; ++j, ++p) {
      l[i * k + j] = z[p] * std::sqrt(rest);
      rest -= l[i * k + j] * l[i * k + j];
    }
    l[i * k + i] = std::sqrt(rest);
  }
  return l;
}

/// log p(L) from the canonical partial correlations: zᵢⱼ in column j are independent
/// Beta(aⱼ, aⱼ) on (−1, 1), aⱼ = η + (K − 2 − j)/2, and Lᵢⱼ = zᵢⱼ sᵢⱼ with sᵢⱼ = √(1 − Σ_{j'<j}
/// Lᵢⱼ'²), so log p(L) = Σ log p(zᵢⱼ) − Σ log sᵢⱼ.
double cpc_lpdf(const std::vector<double>& z, std::size_t k, double eta) {
  const auto l = cholesky_from_cpcs(z, k);
  double lp = 0;
  std::size_t p = 0;
  for (std::size_t i = 1; i < k; ++i) {
    double rest = 1;
    for (std::size_t j = 0; j < i; ++j, ++p) {
      const double a = eta + 0.5 * (double(k) - 2.0 - double(j));
      const boost::math::beta_distribution<double> b(a, a);
      lp += std::log(boost::math::pdf(b, (z[p] + 1) / 2) / 2) - 0.5 * std::log(rest);
      rest -= l[i * k + j] * l[i * k + j];
    }
  }
  return lp;
}
}  // namespace

TEST_CASE("lkj_corr_cholesky: K = 2 is the density of one correlation", "[distributions][lkj]") {
  vector_param<"x", 4> x;
  for (double eta : {0.5, 1.0, 2.0, 5.3}) {
    const auto f = compile(lkj_corr_cholesky(eta, 2).log_prob(x), x);
    for (double r : {-0.95, -0.5, 0.0, 0.1, 0.7, 0.99}) {
      const std::vector<double> l{1.0, 0.0, r, std::sqrt(1 - r * r)};
      const double expected = (eta - 1) * std::log1p(-r * r) - (2 * eta - 1) * std::log(2.0) -
                              std::log(boost::math::beta(eta, eta));
      INFO("eta = " << eta << ", r = " << r);
      CHECK(f.value(l) == Approx(expected).epsilon(1e-12).margin(1e-12));
    }
  }
}

TEST_CASE("lkj_corr_cholesky: K = 3, 4 against the partial correlations' Beta densities",
          "[distributions][lkj]") {
  for (std::size_t k : {3, 4}) {
    vector_param<"x"> x(k * k);
    for (double eta : {0.7, 1.0, 2.5}) {
      const auto f = compile(lkj_corr_cholesky(eta, k).log_prob(x), x);
      for (const auto& z : tyche_test::random_points(20, k * (k - 1) / 2, -0.95, 0.95, 7 + unsigned(k))) {
        INFO("K = " << k << ", eta = " << eta);
        CHECK(f.value(cholesky_from_cpcs(z, k)) == Approx(cpc_lpdf(z, k, eta)).epsilon(1e-11).margin(1e-11));
      }
    }
  }
}

TEST_CASE("lkj_corr_cholesky: gradients in L (through the transform) and in eta",
          "[distributions][lkj]") {
  constexpr std::size_t k = 4;
  vector_param<"u", 6> u;
  param<"e"> e;
  const transforms::cholesky_factor_corr tr{k};
  // η = exp(e) > 0; the density of the transformed point plus the log-Jacobian.
  const auto f = compile(lkj_corr_cholesky(exp(e), k).log_prob(tr.constrain(u)) + tr.log_jacobian(u), u, e);
  const auto pts = tyche_test::random_points(10, 7, -1.5, 1.5, 23);
  for (const auto& p : pts) tyche_test::check_gradient_at(f, p, "lkj_corr_cholesky(exp(e), 4)");
  tyche_test::check_lanes(f, pts, "lkj_corr_cholesky (lanes)");
  tyche_test::check_float(f, pts[0], "lkj_corr_cholesky (float)");
  // A parameter η gives the same value as the number.
  for (const auto& p : pts) {
    const auto g = compile(lkj_corr_cholesky(std::exp(p[6]), k).log_prob(tr.constrain(u)) + tr.log_jacobian(u), u);
    CHECK(f.value(p) == Approx(g.value(std::vector<double>(p.begin(), p.begin() + 6))).epsilon(1e-13));
  }
}

namespace {
/// E r² and Var r² of r = 2·Beta(a, a) − 1: 1/(2a + 1) and 3/((2a+1)(2a+3)) − 1/(2a+1)².
struct correlation_law {
  double a;
  double second() const { return 1 / (2 * a + 1); }
  double fourth() const { return 3 / ((2 * a + 1) * (2 * a + 3)); }
};
}  // namespace

TEST_CASE("lkj_corr_cholesky: prior draws have the law of the correlations", "[distributions][lkj]") {
  // K = 4, η = 1.5: every Ωᵢⱼ (i ≠ j) is 2·Beta(η − 1 + K/2, same) − 1. 20000 draws; the mean of
  // r and of r² are each tested within 4 standard errors (exact SEs from the Beta law).
  constexpr std::size_t k = 4;
  const double eta = 1.5;
  auto m = model([&] { return joint(lkj_corr_cholesky<"L">(eta, k)); });
  REQUIRE(m.dim() == 6);
  REQUIRE(m.constrained_dim() == 16);
  const correlation_law law{eta - 1 + k / 2.0};
  std::mt19937_64 rng(2024);
  const int n = 20000;
  const std::pair<std::size_t, std::size_t> pairs[] = {{1, 0}, {3, 1}, {3, 2}};
  double s1[3] = {}, s2[3] = {};
  for (int r = 0; r < n; ++r) {
    const auto l = m.sample_prior(rng);
    for (std::size_t q = 0; q < 3; ++q) {
      const auto [i, j] = pairs[q];
      double omega = 0;
      for (std::size_t p = 0; p < k; ++p) omega += l[i * k + p] * l[j * k + p];
      s1[q] += omega;
      s2[q] += omega * omega;
    }
  }
  for (std::size_t q = 0; q < 3; ++q) {
    const double se1 = std::sqrt(law.second() / n);
    const double se2 = std::sqrt((law.fourth() - law.second() * law.second()) / n);
    INFO("Omega[" << pairs[q].first + 1 << "," << pairs[q].second + 1 << "]: mean " << s1[q] / n << ", E r² "
                  << s2[q] / n << " (exact " << law.second() << ")");
    CHECK(std::fabs(s1[q] / n) < 4 * se1);
    CHECK(std::fabs(s2[q] / n - law.second()) < 4 * se2);
  }
}

TEST_CASE("lkj_corr_cholesky: NUTS draws have the law of the correlations",
          "[distributions][lkj][nuts]") {
  // K = 3, η = 2: E r² = 1/(2η + K − 1) = 1/6 for each of Ω₂₁ = L₂₁, Ω₃₁ = L₃₁ and
  // Ω₃₂ = L₃₁L₂₁ + L₃₂L₂₂. Means of r and r² within 4 MCSE (ess_bulk of each).
  constexpr std::size_t k = 3;
  const double eta = 2.0;
  auto m = model([&] { return joint(lkj_corr_cholesky<"L">(eta, k)); });
  const auto fit = nuts(m, {.chains = 4, .warmup = 500, .draws = 1500, .seed = 99});
  REQUIRE(fit.dim() == 9);
  REQUIRE(fit.names[3] == "L[2,1]");
  auto entry = [&](std::size_t i, std::size_t j) { return fit.parameter(i * k + j); };
  const auto l21 = entry(1, 0), l22 = entry(1, 1), l31 = entry(2, 0), l32 = entry(2, 1);
  std::vector<std::vector<double>> omega32 = l21;
  for (std::size_t c = 0; c < l21.size(); ++c)
    for (std::size_t d = 0; d < l21[c].size(); ++d) omega32[c][d] = l31[c][d] * l21[c][d] + l32[c][d] * l22[c][d];
  const double exact_r2 = 1 / (2 * eta + k - 1);
  const std::vector<std::vector<double>>* const correlations[] = {&l21, &l31, &omega32};
  for (const auto* chains : correlations) {
    std::vector<std::vector<double>> sq = *chains;
    double mean = 0, mean2 = 0, count = 0;
    for (auto& c : sq)
      for (auto& v : c) {
        mean += v;
        v = v * v;
        mean2 += v;
        ++count;
      }
    mean /= count;
    mean2 /= count;
    double var = 0, var2 = 0;
    for (const auto& c : *chains)
      for (double v : c) var += (v - mean) * (v - mean) / (count - 1);
    for (const auto& c : sq)
      for (double v : c) var2 += (v - mean2) * (v - mean2) / (count - 1);
    const double mcse = std::sqrt(var / ess_bulk(*chains));
    const double mcse2 = std::sqrt(var2 / ess_bulk(sq));
    INFO("mean " << mean << " (MCSE " << mcse << "), E r² " << mean2 << " (exact " << exact_r2 << ", MCSE "
                 << mcse2 << ")");
    CHECK(std::fabs(mean) < 4 * mcse);
    CHECK(std::fabs(mean2 - exact_r2) < 4 * mcse2);
  }
}

TEST_CASE("lkj_corr_cholesky: errors", "[distributions][lkj]") {
  CHECK_THROWS_WITH(lkj_corr_cholesky(2.0, 1), Contains("K = 1 must be at least 2"));
  vector_param<"x", 4> x;
  CHECK_THROWS_WITH(lkj_corr_cholesky(2.0, 3).log_prob(x), Contains("x has 4 values but K = 3 needs 9"));
  CHECK_THROWS_WITH(joint(lkj_corr_cholesky<"L">(-1.0, 3)), Contains("eta must be > 0"));
}

TEST_CASE("lkj_corr_cholesky: a number eta folds the normalising constant", "[distributions][lkj]") {
  auto fixed = model([] { return joint(lkj_corr_cholesky<"L">(2.0, 3)); });
  auto free = model([] {
    auto eta = exponential<"eta">(1.0);
    return joint(eta, lkj_corr_cholesky<"L">(eta, 3));
  });
  const std::string e_fixed = explain(fixed), e_free = explain(free);
  INFO(e_fixed << "\n---\n" << e_free);
  CHECK(e_fixed.find("corr_cholesky") != std::string::npos);
  CHECK(e_fixed.find("lkj_log_normaliser") == std::string::npos);
  CHECK(e_free.find("lkj_log_normaliser") != std::string::npos);
}
