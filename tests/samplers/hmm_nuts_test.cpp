// NUTS on hidden Markov models whose forward algorithm is written with scan (compile/scan.hpp):
// a 2-state Gaussian HMM's posterior means against quadrature over the means, and a model with
// simplex transition rows and positive-ordered means against the same model through
// hmm_marginal (operations/hmm.hpp). The values and gradients of both forms are checked against
// enumeration of every state path in tests/compile/scan_test.cpp and
// tests/operations/hmm_test.cpp; these tests sample, so they live in a folder every tree builds
// optimised (the clang tree compiles compile/ and operations/ at -O0, where they took 50 s each
// under AddressSanitizer).
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <vector>

#include "support/reference_math.hpp"
#include "support/sanitized.hpp"

using namespace tyche;

namespace {

using tyche_test::normal_log;

// The forward algorithm in plain C++ (the reference for the NUTS test).
double hmm_forward(const std::vector<double>& y, const std::vector<double>& rho,
                   const std::vector<std::vector<double>>& gamma, const std::vector<double>& mu, double sigma) {
  const std::size_t k = rho.size();
  std::vector<double> a(k), next(k);
  for (std::size_t j = 0; j < k; ++j) a[j] = std::log(rho[j]) + normal_log(y[0], mu[j], sigma);
  for (std::size_t t = 1; t < y.size(); ++t) {
    for (std::size_t j = 0; j < k; ++j) {
      double top = -INFINITY;
      for (std::size_t i = 0; i < k; ++i) top = std::max(top, a[i] + std::log(gamma[i][j]));
      double acc = 0;
      for (std::size_t i = 0; i < k; ++i) acc += std::exp(a[i] + std::log(gamma[i][j]) - top);
      next[j] = top + std::log(acc) + normal_log(y[t], mu[j], sigma);
    }
    a = next;
  }
  double top = *std::max_element(a.begin(), a.end()), acc = 0;
  for (double v : a) acc += std::exp(v - top);
  return top + std::log(acc);
}

// A reproducible sequence from a 2-state chain (its own generator: the test does not depend on
// the standard library's distributions).
std::vector<double> hmm_data(std::size_t n, double mu0, double mu1, std::uint64_t seed) {
  std::uint64_t x = seed;
  auto uniform = [&] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return (static_cast<double>(x >> 11) + 0.5) / 9007199254740992.0;
  };
  std::vector<double> y(n);
  int z = 0;
  for (std::size_t t = 0; t < n; ++t) {
    if (uniform() < (z == 0 ? 0.1 : 0.2)) z = 1 - z;
    const double u1 = uniform(), u2 = uniform();
    y[t] = (z == 0 ? mu0 : mu1) + std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
  }
  return y;
}

}  // namespace

TEST_CASE("scan: NUTS on a 2-state Gaussian HMM against the posterior by quadrature",
          "[samplers][scan][hmm][nuts]") {
  // N = 200 from states with means -1 and 2 (unit scale, known); the means' posterior under
  // normal(0, 3) priors on the ordered pair, against a grid over (mu0, mu1) with the forward
  // algorithm written in plain C++ above.
  static const std::vector<double> y = hmm_data(200, -1.0, 2.0, 20261125);
  static const std::vector<double> y_first{y[0]}, y_rest(y.begin() + 1, y.end());
  const std::vector<std::vector<double>> gamma{{0.9, 0.1}, {0.2, 0.8}};
  const double l00 = std::log(0.9), l01 = std::log(0.1), l10 = std::log(0.2), l11 = std::log(0.8);
  auto mu = ordered<"mu">(normal(0.0, 3.0), shape<2>);
  auto init = std::tuple{std::log(0.5) + normal_lpdf(data(y_first), mu[0], 1.0),
                         std::log(0.5) + normal_lpdf(data(y_first), mu[1], 1.0)};
  auto alpha = scan(
      [&](const auto& a, const auto& yt) {
        return std::tuple{log_sum_exp(a[0] + l00, a[1] + l10) + normal_lpdf(yt, mu[0], 1.0),
                          log_sum_exp(a[0] + l01, a[1] + l11) + normal_lpdf(yt, mu[1], 1.0)};
      },
      init, data(y_rest));
  const auto m = model(joint(mu, target(log_sum_exp(alpha))));

  // Quadrature: the mode from a coarse grid over [-3, 4]², then a 301 × 301 grid of ±1.2 around
  // it (the posterior sds are about 0.14; the mass at the grid's edges is checked to be negligible).
  auto log_post = [&](double m0, double m1) {
    return hmm_forward(y, {0.5, 0.5}, gamma, {m0, m1}, 1.0) + normal_log(m0, 0, 3) + normal_log(m1, 0, 3);
  };
  double c0 = 0, c1 = 0, best = -INFINITY;
  for (int i = 0; i <= 70; ++i)
    for (int j = 0; j <= 70; ++j) {
      const double m0 = -3 + 0.1 * i, m1 = -3 + 0.1 * j;
      if (m0 >= m1) continue;  // ordered
      const double v = log_post(m0, m1);
      if (v > best) {
        best = v;
        c0 = m0;
        c1 = m1;
      }
    }
  const int n = 301;
  const double half = 1.2, h = 2 * half / (n - 1);
  REQUIRE(c0 + half < c1 - half);  // the fine grid lies inside the ordered region
  std::vector<double> lp(static_cast<std::size_t>(n * n));
  double top = -INFINITY;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double m0 = c0 - half + i * h, m1 = c1 - half + j * h;
      const double v = log_post(m0, m1);
      lp[static_cast<std::size_t>(i * n + j)] = v;
      top = std::max(top, v);
    }
  double mass = 0, mean0 = 0, mean1 = 0, edge = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double w = std::exp(lp[static_cast<std::size_t>(i * n + j)] - top);
      mass += w;
      mean0 += w * (c0 - half + i * h);
      mean1 += w * (c1 - half + j * h);
      if (i == 0 || j == 0 || i == n - 1 || j == n - 1) edge = std::max(edge, w);
    }
  INFO("mode " << c0 << ", " << c1 << ", edge " << edge);
  REQUIRE(edge < 1e-12);
  mean0 /= mass;
  mean1 /= mass;

  const auto fit = nuts(m, {.chains = 4, .warmup = 500, .draws = 1000, .seed = 20261125});
  const double want[] = {mean0, mean1};
  for (std::size_t k = 0; k < 2; ++k) {
    const auto chains = fit.parameter(k);
    const double mean = tyche_test::pooled_mean(chains);
    const double mcse = mcse_mean(chains);
    INFO(fit.names[k] << ": NUTS mean " << mean << ", quadrature " << want[k] << ", MCSE " << mcse);
    CHECK(std::fabs(mean - want[k]) < 4 * mcse);  // 4 Monte Carlo standard errors
  }
}

TEST_CASE("NUTS on a 2-state Gaussian HMM (N = 200, simplex rows, positive-ordered means): scan against "
          "hmm_marginal",
          "[samplers][hmm][nuts]") {
  // The model: the forward algorithm written with scan, sampled by NUTS, against the same
  // posterior through hmm_marginal (whose value and gradient are checked against enumeration of
  // every state path above). Every constrained parameter's posterior mean within 4 combined Monte
  // Carlo standard errors. Data: N = 200 from a chain with stay probabilities 0.9 and 0.8, means
  // −1 and 2, unit noise (its own generator).
  static const std::vector<double> y = [] {
    std::uint64_t x = 20261126;
    auto uniform = [&] {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      return (static_cast<double>(x >> 11) + 0.5) / 9007199254740992.0;
    };
    std::vector<double> v(200);
    int z = 0;
    for (double& yt : v) {
      if (uniform() < (z == 0 ? 0.1 : 0.2)) z = 1 - z;
      const double u1 = uniform(), u2 = uniform();
      yt = (z == 0 ? -1.0 : 2.0) + std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
    }
    return v;
  }();
  static const std::vector<double> y_first(y.begin(), y.begin() + 1), y_rest(y.begin() + 1, y.end());
  auto mu = positive_ordered<"mu">(normal(1.0, 3.0), shape<2>);
  auto g0 = dirichlet<"g0">(2.0, shape<2>);
  auto g1 = dirichlet<"g1">(2.0, shape<2>);
  auto rho = dirichlet<"rho">(1.0, shape<2>);
  auto sigma = half_normal<"sigma">(2.0);
  const auto by_hmm = model(joint(
      mu, g0, g1, rho, sigma,
      target(hmm_marginal(std::tuple{pointwise_log_density(normal(mu[0] - 2.0, sigma), data(y)),
                                     pointwise_log_density(normal(mu[1] - 2.0, sigma), data(y))},
                          std::tuple{g0, g1}, rho))));
  auto alpha = scan(
      [&](const auto& a, const auto& yt) {
        return std::tuple{
            log_sum_exp(a[0] + log(g0[0]), a[1] + log(g1[0])) + normal_lpdf(yt, mu[0] - 2.0, sigma),
            log_sum_exp(a[0] + log(g0[1]), a[1] + log(g1[1])) + normal_lpdf(yt, mu[1] - 2.0, sigma)};
      },
      std::tuple{log(rho[0]) + normal_lpdf(data(y_first), mu[0] - 2.0, sigma),
                 log(rho[1]) + normal_lpdf(data(y_first), mu[1] - 2.0, sigma)},
      data(y_rest));
  const auto by_scan = model(joint(mu, g0, g1, rho, sigma, target(log_sum_exp(alpha))));
  // Under AddressSanitizer (the clang tree) two chains of 200 + 200, about a quarter of the work;
  // the same 4-MCSE test.
  const bool reduced = tyche_test::address_sanitized;
  const nuts_config cfg{.chains = reduced ? 2 : 4, .warmup = reduced ? 200 : 300, .draws = reduced ? 200 : 400,
                        .seed = 20261126};
  const auto fit_hmm = nuts(by_hmm, cfg);
  nuts_config cfg_scan = cfg;
  cfg_scan.seed = 7;
  const auto fit_scan = nuts(by_scan, cfg_scan);
  REQUIRE(fit_hmm.dim() == fit_scan.dim());
  for (std::size_t k = 0; k < fit_hmm.dim(); ++k) {
    using tyche_test::pooled_mean;
    const auto a = fit_hmm.parameter(k), b = fit_scan.parameter(k);
    const double se = std::sqrt(mcse_mean(a) * mcse_mean(a) + mcse_mean(b) * mcse_mean(b));
    INFO(fit_hmm.names[k] << ": hmm_marginal " << pooled_mean(a) << ", scan " << pooled_mean(b) << ", combined MCSE " << se);
    CHECK(std::fabs(pooled_mean(a) - pooled_mean(b)) < 4 * se);
  }
}
