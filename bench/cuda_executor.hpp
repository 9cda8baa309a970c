// bench/cuda_executor.hpp — what bench/cuda_executor.cu (the GPU rows, compiled by nvcc) and
// bench/cuda_executor_cpu.cpp (the CPU rows, compiled by the host compiler with tyche::simd, as
// users build CPU code: under nvcc xsimd is off, so tyche::cpu{} there would run without SIMD
// lanes) share: the models, one CSV row, one measurement. In an anonymous namespace: each
// translation unit has its own (their nuts() calls differ by compiler).
#pragma once
#include <tyche/tyche.hpp>

#include "support/eight_schools.hpp"  // tests/support
#include "synthetic.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <variant>
#include <vector>

namespace {

struct regression_data {
  std::size_t n = 10000, k = 100;
  std::vector<double> x, y;
  regression_data() {
    std::mt19937_64 gen(20261126);
    std::normal_distribution<double> z;
    x.resize(n * k);
    for (auto& v : x) v = z(gen);
    std::vector<double> beta(k);
    for (auto& b : beta) b = 0.3 * z(gen);
    y.resize(n);
    std::uniform_real_distribution<double> u;
    for (std::size_t i = 0; i < n; ++i) {
      double eta = 0.5;
      for (std::size_t j = 0; j < k; ++j) eta += x[i * k + j] * beta[j];
      y[i] = u(gen) < 1 / (1 + std::exp(-eta)) ? 1.0 : 0.0;
    }
  }
};

auto logistic_regression(const regression_data& d) {
  using namespace tyche;
  return model(
      [](const regression_data& d) {
        auto alpha = normal<"alpha">(0.0, 5.0);
        auto beta = normal<"beta">(0.0, 1.0, shape<100>);
        return joint(alpha, beta, bernoulli_logit(alpha + matvec(matrix(d.x, d.n, d.k), beta)).observe(data(d.y)));
      },
      d);
}

// Edward2's covertype workload's shape (581,012 × 54; bench/synthetic.hpp's generator, seed
// 20261121: the data bench/stan's write_covertype_data writes), the same model with K = 54.
struct covertype_data {
  tyche_bench::logistic_data d{581012, 54, 20261121};
};

auto covertype(const covertype_data& c) {
  using namespace tyche;
  return model(
      [](const tyche_bench::logistic_data& d) {
        auto alpha = normal<"alpha">(0.0, 5.0);
        auto beta = normal<"beta">(0.0, 1.0, shape<54>);
        return joint(alpha, beta, bernoulli_logit(alpha + matvec(matrix(d.X, d.n, d.p), beta)).observe(data(d.y)));
      },
      c.d);
}

// The same model with X stored as floats (matrix(const float*, …): half the bytes per read,
// each value converted to double as it is read; y, θ and the sums stay double).
struct covertype_float_data {
  std::size_t n, p;
  std::vector<float> X;
  std::vector<double> y;
  explicit covertype_float_data(const covertype_data& c) : n(c.d.n), p(c.d.p), X(c.d.X.begin(), c.d.X.end()), y(c.d.y) {}
};

[[maybe_unused]] auto covertype_float(const covertype_float_data& c) {
  using namespace tyche;
  return model(
      [](const covertype_float_data& d) {
        auto alpha = normal<"alpha">(0.0, 5.0);
        auto beta = normal<"beta">(0.0, 1.0, shape<54>);
        return joint(alpha, beta, bernoulli_logit(alpha + matvec(matrix(d.X.data(), d.n, d.p), beta)).observe(data(d.y)));
      },
      c);
}

// The 100-dimensional correlated Gaussian (Σᵢⱼ = 0.9^|i−j|, a data covariance: multi_normal's
// triangular solve with its Cholesky factor, O(d²) per gradient), the lanes benchmark's
// corr_gaussian_100; the dense metric.
struct corr_gaussian_data {
  static constexpr std::size_t d = 100;
  std::vector<double> mu, sigma;
  corr_gaussian_data() : mu(d, 0.0), sigma(d * d) {
    for (std::size_t i = 0; i < d; ++i)
      for (std::size_t j = 0; j < d; ++j)
        sigma[i * d + j] = std::pow(0.9, std::fabs(static_cast<double>(i) - static_cast<double>(j)));
  }
};

[[maybe_unused]] auto corr_gaussian(const corr_gaussian_data& c) {
  using namespace tyche;
  return model(joint(multi_normal<"x">(data(c.mu), matrix(c.sigma.data(), c.d, c.d))));
}

void row(const char* model, std::size_t n, int chains, const char* executor, double value, const char* unit) {
  std::printf("cuda,%s,%zu,%d,%s,%.6g,%s\n", model, n, chains, executor, value, unit);
  std::fflush(stdout);
}

template <class Model>
void measure(const char* name, std::size_t n, const Model& m, int chains, const tyche::nuts_executor& executor,
             int warmup, int draws, const char* label = nullptr,
             tyche::samplers::metric_kind metric = tyche::samplers::metric_kind::diagonal) {
  const char* where = label != nullptr ? label : std::holds_alternative<tyche::cuda>(executor) ? "cuda" : "cpu";
  tyche::nuts_fit fit;
  try {
    fit = tyche::nuts(m, {.chains = chains, .warmup = warmup, .draws = draws, .seed = 7, .metric = metric,
                          .executor = executor});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s %s %d chains: %s\n", name, where, chains, e.what());
    return;
  }
  row(name, n, chains, where, fit.seconds, "seconds");
  if (fit.device_seconds > 0) {
    row(name, n, chains, where, fit.device_seconds, "device_seconds");
    row(name, n, chains, where, static_cast<double>(fit.gradient_evaluations) / fit.device_seconds,
        "device_leapfrogs_per_second");
  }
  row(name, n, chains, where, static_cast<double>(fit.gradient_evaluations) / fit.seconds, "leapfrogs_per_second");
  if (chains <= 16384) {
    double ess = 1e300;
    for (std::size_t k = 0; k < fit.dim(); ++k) {
      const double e = tyche::ess_bulk(fit.parameter(k));
      ess = std::isfinite(e) ? std::min(ess, e) : ess;
    }
    if (ess < 1e300) row(name, n, chains, where, ess / fit.seconds, "min_bulk_ess_per_second");
  }
  row(name, n, chains, where, fit.utilization, "utilization");
  // Milliseconds per leapfrog of one chain, and per chain-leapfrog (in the kernels where the
  // fit says how long they took, else end to end).
  const double s = fit.device_seconds > 0 ? fit.device_seconds : fit.seconds;
  const double per_chain = static_cast<double>(fit.gradient_evaluations) / chains;
  row(name, n, chains, where, 1e3 * s / per_chain, "ms_per_leapfrog");
  row(name, n, chains, where, 1e3 * s / static_cast<double>(fit.gradient_evaluations), "ms_per_chain_leapfrog");
}

}  // namespace
