// bench/synthetic.hpp — synthetic data shared by the benchmarks, so that every suite that names
// a data set ("logistic_regression 10,000 × 100") means the very same numbers.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace tyche_bench {

/// Logistic-regression data: X (n × p, row-major) standard normal, coefficients 0.5·N(0, 1),
/// intercept 0.5·N(0, 1), y ~ Bernoulli(logistic(α + Xβ)); all from one mt19937_64 stream.
struct logistic_data {
  std::size_t n, p;
  std::vector<double> X, y;
  explicit logistic_data(std::size_t rows = 10000, std::size_t cols = 100, std::uint64_t seed = 20261121)
      : n(rows), p(cols) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> z(0.0, 1.0);
    X.resize(n * p);
    for (auto& v : X) v = z(rng);
    std::vector<double> beta(p);
    for (auto& b : beta) b = 0.5 * z(rng);
    const double alpha = 0.5 * z(rng);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    y.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      double eta = alpha;
      for (std::size_t j = 0; j < p; ++j) eta += X[i * p + j] * beta[j];
      y[i] = u(rng) < 1.0 / (1.0 + std::exp(-eta)) ? 1.0 : 0.0;
    }
  }
};

}  // namespace tyche_bench
