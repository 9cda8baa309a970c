// lkj_corr(eta, K) (tyche/distributions/lkj_corr.hpp) on the corr_matrix transform: the log
// density against the density of one correlation for K = 2, (1 − r²)^{η−1} / (2^{2η−1} B(η, η)),
// and for K = 3, 4 against the partial correlations' Beta densities (Boost.Math) with the
// Jacobian of z ↦ Ω; gradients through the property check; NUTS draws of one correlation
// against its law (z-test in MCSE at a fixed seed); prior draws are correlation matrices.
#include <tyche/tyche.hpp>

#include <boost/math/distributions/beta.hpp>
#include <boost/math/special_functions/beta.hpp>
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "support/property.hpp"

using namespace tyche;
using Catch::Matchers::Contains;

namespace {
/// Ω (k × k) from canonical partial correlations z (row by row, strictly lower).
std::vector<double> correlation_from_cpcs(const std::vector<double>& z, std::size_t k) {
  std::vector<double> l(k * k, 0.0), omega(k * k, 0.0);
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
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j)
      for (std::size_t q = 0; q < k; ++q) omega[i * k + j] += l[i * k + q] * l[j * k + q];
  return omega;
}

/// log p(Ω): the zᵢⱼ of column j are independent Beta(aⱼ, aⱼ) on (−1, 1), aⱼ = η + (K − 2 − j)/2,
/// and |∂Ω/∂z| = Π (1 − zᵢⱼ²)^{(K − 2 − j)/2}.
double cpc_lpdf(const std::vector<double>& z, std::size_t k, double eta) {
  double lp = 0;
  std::size_t p = 0;
  for (std::size_t i = 1; i < k; ++i)
    for (std::size_t j = 0; j < i; ++j, ++p) {
      const double a = eta + 0.5 * (double(k) - 2.0 - double(j));
      const boost::math::beta_distribution<double> b(a, a);
      lp += std::log(boost::math::pdf(b, (z[p] + 1) / 2) / 2) - 0.5 * (double(k) - 2.0 - double(j)) * std::log1p(-z[p] * z[p]);
    }
  return lp;
}
}  // namespace

TEST_CASE("lkj_corr: log density against one correlation and the partial correlations",
          "[distributions][lkj_corr]") {
  vector_param<"x", 4> x2;
  for (double eta : {0.5, 1.0, 3.0}) {
    const auto f = compile(lkj_corr(eta, 2).log_prob(x2), x2);
    for (double r : {-0.9, 0.0, 0.35, 0.98}) {
      const double expected = (eta - 1) * std::log1p(-r * r) - (2 * eta - 1) * std::log(2.0) -
                              std::log(boost::math::beta(eta, eta));
      CHECK(f.value(std::vector<double>{1.0, r, r, 1.0}) == Approx(expected).epsilon(1e-12).margin(1e-12));
    }
  }
  for (std::size_t k : {3, 4}) {
    vector_param<"x"> x(k * k);
    for (double eta : {0.8, 2.0}) {
      const auto f = compile(lkj_corr(eta, k).log_prob(x), x);
      for (const auto& z : tyche_test::random_points(15, k * (k - 1) / 2, -0.9, 0.9, 17 + unsigned(k))) {
        INFO("K = " << k << ", eta = " << eta);
        CHECK(f.value(correlation_from_cpcs(z, k)) == Approx(cpc_lpdf(z, k, eta)).epsilon(1e-10).margin(1e-10));
      }
    }
  }
}

TEST_CASE("lkj_corr: gradients through the corr_matrix transform and in eta", "[distributions][lkj_corr]") {
  constexpr std::size_t k = 3;
  vector_param<"u", 3> u;
  param<"e"> e;
  const transforms::corr_matrix tr{k};
  const auto f = compile(lkj_corr(exp(e), k).log_prob(tr.constrain(u)) + tr.log_jacobian(u), u, e);
  const auto pts = tyche_test::random_points(10, 4, -1.5, 1.5, 29);
  for (const auto& p : pts) tyche_test::check_gradient_at(f, p, "lkj_corr(exp(e), 3)");
  tyche_test::check_lanes(f, pts, "lkj_corr (lanes)");
}

TEST_CASE("lkj_corr: NUTS and prior draws of one correlation", "[distributions][lkj_corr][nuts]") {
  // K = 3, η = 0.8: E r² = 1/(2η + K − 1) = 1/3.6 for Ω₃₂; mean and E r² within 4 MCSE.
  constexpr std::size_t k = 3;
  const double eta = 0.8;
  auto m = model([&] { return joint(lkj_corr<"Omega">(eta, k)); });
  REQUIRE(m.dim() == 3);
  const auto fit = nuts(m, {.chains = 4, .warmup = 500, .draws = 1500, .seed = 7});
  REQUIRE(fit.names[7] == "Omega[3,2]");
  const auto r = fit.parameter(7);
  auto sq = r;
  double mean = 0, mean2 = 0, count = 0;
  for (auto& c : sq)
    for (auto& v : c) {
      mean += v;
      v *= v;
      mean2 += v;
      ++count;
    }
  mean /= count;
  mean2 /= count;
  double var = 0, var2 = 0;
  for (const auto& c : r)
    for (double v : c) var += (v - mean) * (v - mean) / (count - 1);
  for (const auto& c : sq)
    for (double v : c) var2 += (v - mean2) * (v - mean2) / (count - 1);
  const double exact = 1 / (2 * eta + k - 1);
  INFO("mean " << mean << ", E r² " << mean2 << " (exact " << exact << ")");
  CHECK(std::fabs(mean) < 4 * std::sqrt(var / ess_bulk(r)));
  CHECK(std::fabs(mean2 - exact) < 4 * std::sqrt(var2 / ess_bulk(sq)));

  std::mt19937_64 rng(3);
  for (int d = 0; d < 100; ++d) {
    const auto omega = m.sample_prior(rng);
    const auto theta = m.unconstrain(omega);  // throws unless Ω is a correlation matrix
    CHECK(theta.size() == 3);
  }
  CHECK_THROWS_WITH(lkj_corr(1.0, 1), Contains("lkj_corr(eta, K): K = 1 must be at least 2"));
}
