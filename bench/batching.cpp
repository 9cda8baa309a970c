// bench/batching.cpp — gradient throughput and lane utilisation of the lockstep NUTS driver as
// the number of chains grows, with the two schedules of samplers/nuts/lockstep.hpp:
//
//   program_counter  every lane starts its next transition as soon as its trajectory ends, and a
//                    lane whose chain is done takes the next unstarted chain (tyche's default);
//   trajectory_sync  every chain waits for the longest trajectory of the iteration (the "local
//                    static" batching the autobatching paper, Radul et al. 2020, measures against);
//   scalar_lanes     (extra rows) program_counter with lanes = 1: no SIMD, one chain at a time
//                    per thread, to show what the lanes buy;
//   one_thread       (extra rows) program_counter on one thread, to show what the second (and
//                    further) threads buy: program_counter's rows / these.
//
// Targets: corr_gaussian_100 and logistic_regression (every mode, 100 + 100 iterations), and
// eight_schools (program_counter and one_thread only, 4, 16 and 64 chains of 1000 + 1000).
//
// Both schedules run exactly the same chains (the driver's tests check the draws are
// bit-identical), so the difference is only waiting. Prints CSV:
//   target,mode,chains,grads_per_second,utilization
// grads_per_second: useful gradient evaluations (leapfrogs of all chains, warm-up included) per
// second of wall time of the nuts() call; utilization: useful lane gradients / lane slots spent
// (lockstep.hpp says how slots are counted for each schedule).
//
// Usage: batching [--quick] [--max-chains N]
// trajectory_sync is one of the CPU executor's comparison modes, compiled only on request
// (config.hpp).
#define TYCHE_CPU_COMPARISON_MODES 1
#include <tyche/tyche.hpp>

#include "synthetic.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

// corr_gaussian_100: x ~ N(0, Σ), Σᵢⱼ = 0.9^|i−j|, through its AR(1) factorisation (as in
// tests/samplers/gaussian_nuts_test.cpp): a 100 × 100 matvec per gradient.
struct corr_gaussian {
  static constexpr std::size_t d = 100;
  std::vector<double> shift = std::vector<double>(d * d, 0.0), zero = std::vector<double>(d, 0.0),
                      scale = std::vector<double>(d, std::sqrt(1 - 0.81));
  corr_gaussian() {
    for (std::size_t i = 1; i < d; ++i) shift[i * d + (i - 1)] = 1.0;
    scale[0] = 1.0;
  }
  auto model() const {
    using namespace tyche;
    auto x = flat<"x">(shape<d>);
    return tyche::model(
        joint(x, normal(data(zero), data(scale)).observe(x - 0.9 * matvec(matrix(shift.data(), d, d), x))));
  }
};

// logistic_regression: 1,000 rows × 25 standard-normal features, coefficients 0.5·N(0, 1), fixed
// seed; N(0, 1) priors on the intercept and the coefficients. (Smaller than the 10,000 × 100 of
// `bench/run.sh nuts`, so that 1024 chains fit in the time budget.)
struct logistic : tyche_bench::logistic_data {
  logistic() : tyche_bench::logistic_data(1000, 25) {}
  auto model() const {
    using namespace tyche;
    auto alpha = normal<"alpha">(0.0, 1.0);
    auto beta = normal<"beta">(0.0, 1.0, shape_of(p));
    return tyche::model(
        joint(alpha, beta, bernoulli_logit(alpha + matvec(matrix(X.data(), n, p), beta)).observe(data(y))));
  }
};

// eight_schools_noncentered (posteriordb; y and σ of its data.json): a model whose gradient costs
// tens of nanoseconds, so that the executor's own work per transition — what threads share — shows.
struct eight_schools {
  std::vector<double> y{28, 8, -3, 7, -1, 1, 18, 12}, sigma{15, 10, 16, 11, 9, 11, 10, 18};
  auto model() const {
    using namespace tyche;
    auto theta_trans = std_normal<"theta_trans">(shape<8>);
    auto mu = normal<"mu">(0.0, 5.0);
    auto tau = half_cauchy<"tau">(5.0);
    return tyche::model(joint(theta_trans, mu, tau, normal(mu + tau * theta_trans, data(sigma)).observe(data(y))));
  }
};

template <class Model>
void row(const char* target, const char* mode, const Model& m, int chains, int iterations, int lanes,
         tyche::samplers::lane_schedule schedule, int threads = 0) {
  tyche::nuts_config cfg;
  cfg.chains = chains;
  cfg.warmup = iterations / 2;
  cfg.draws = iterations / 2;
  cfg.seed = 7;
  std::get<tyche::cpu>(cfg.executor).lanes = lanes;
  std::get<tyche::cpu>(cfg.executor).schedule = schedule;
  std::get<tyche::cpu>(cfg.executor).threads = threads;
  const auto start = std::chrono::steady_clock::now();
  const auto fit = tyche::nuts(m, cfg);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s,%s,%d,%.0f,%.4f\n", target, mode, chains,
              static_cast<double>(fit.gradient_evaluations) / seconds, fit.utilization);
  std::fflush(stdout);
}

template <class Model>
void rows(const char* target, const Model& m, bool quick, int max_chains) {
  using tyche::samplers::lane_schedule;
  const int iterations = quick ? 40 : 200;
  for (auto schedule : {lane_schedule::program_counter, lane_schedule::trajectory_sync})
    for (int chains : {1, 4, 16, 64, 256, 1024})
      if (chains <= max_chains)
        row(target, schedule == lane_schedule::program_counter ? "program_counter" : "trajectory_sync", m,
            chains, iterations, 0, schedule);
  // An extra row: the same chains without SIMD lanes (lanes = 1, one chain at a time per thread).
  for (int chains : {1, 16, 64})
    if (chains <= max_chains) row(target, "scalar_lanes", m, chains, iterations, 1, lane_schedule::program_counter);
  // And the default's chains on one thread (lanes = 0 picks the lanes for one thread then).
  for (int chains : {16, 64, 256})
    if (chains <= max_chains) row(target, "one_thread", m, chains, iterations, 0, lane_schedule::program_counter, 1);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int max_chains = 1024;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--max-chains") == 0 && i + 1 < argc) {
      max_chains = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: batching [--quick] [--max-chains N]\n");
      return 2;
    }
  }
  std::fprintf(stderr, "batching: %zu SIMD lanes of double, %u hardware threads\n",
               tyche::simd_lane_width, std::thread::hardware_concurrency());
  std::printf("target,mode,chains,grads_per_second,utilization\n");
  static const corr_gaussian cg;
  rows("corr_gaussian_100", cg.model(), quick, max_chains);
  static const logistic lr;
  rows("logistic_regression", lr.model(), quick, max_chains);
  // Eight schools, 1000 + 1000 iterations as users run it (100 + 100 with --quick), the default
  // executor on all threads and on one.
  static const eight_schools es;
  for (int chains : {4, 16, 64})
    if (chains <= max_chains) {
      row("eight_schools", "program_counter", es.model(), chains, quick ? 200 : 2000, 0,
          tyche::samplers::lane_schedule::program_counter);
      row("eight_schools", "one_thread", es.model(), chains, quick ? 200 : 2000, 0,
          tyche::samplers::lane_schedule::program_counter, 1);
    }
}
