// tests/support/gaussian_checks.hpp — checks of draws and of NUTS fits against a known Gaussian
// law (mean μ, covariance Σ, K × K row major), shared by the multivariate normal families' tests.
#pragma once
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <vector>

namespace tyche_test {

/// The sample mean and covariance of n draws of K values against μ and Σ: each within 4.5
/// standard errors (of a mean √(Σᵢᵢ/n); of a covariance √((ΣᵢᵢΣⱼⱼ + Σᵢⱼ²)/n)).
inline void check_gaussian_draws(const std::vector<std::vector<double>>& xs, const std::vector<double>& mu,
                                 const std::vector<double>& sigma) {
  const std::size_t k = mu.size();
  const double n = double(xs.size());
  std::vector<double> mean(k, 0.0), cov(k * k, 0.0);
  for (const auto& x : xs)
    for (std::size_t i = 0; i < k; ++i) mean[i] += x[i] / n;
  for (const auto& x : xs)
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) cov[i * k + j] += (x[i] - mean[i]) * (x[j] - mean[j]) / (n - 1);
  for (std::size_t i = 0; i < k; ++i) {
    INFO("mean " << i << ": " << mean[i] << " against " << mu[i]);
    CHECK(std::fabs(mean[i] - mu[i]) < 4.5 * std::sqrt(sigma[i * k + i] / n));
    for (std::size_t j = 0; j < k; ++j) {
      const double se = std::sqrt((sigma[i * k + i] * sigma[j * k + j] + sigma[i * k + j] * sigma[i * k + j]) / n);
      INFO("covariance " << i << ", " << j << ": " << cov[i * k + j] << " against " << sigma[i * k + j]);
      CHECK(std::fabs(cov[i * k + j] - sigma[i * k + j]) < 4.5 * se);
    }
  }
}

/// A NUTS fit's marginals against μ and the diagonal of Σ: each mean within 4 MCSE (bulk ESS),
/// each variance within 10 %.
template <class Fit>
void check_gaussian_marginals(const Fit& fit, const std::vector<double>& mu, const std::vector<double>& sigma) {
  const std::size_t k = mu.size();
  for (std::size_t p = 0; p < k; ++p) {
    const auto chains = fit.parameter(p);
    std::vector<double> all;
    for (const auto& c : chains) all.insert(all.end(), c.begin(), c.end());
    double mean = 0, var = 0;
    for (double v : all) mean += v / double(all.size());
    for (double v : all) var += (v - mean) * (v - mean) / double(all.size() - 1);
    const double mcse = std::sqrt(var / tyche::ess_bulk(chains));
    INFO(fit.names[p] << ": mean " << mean << " (MCSE " << mcse << ") against " << mu[p] << ", variance " << var
                      << " against " << sigma[p * k + p]);
    CHECK(std::fabs(mean - mu[p]) < 4 * mcse);
    CHECK(std::fabs(var / sigma[p * k + p] - 1) < 0.10);
  }
}

}  // namespace tyche_test
