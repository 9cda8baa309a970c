// bench/split.cpp — one chain's gradient on several cores (cpu::split; issue 17, "one chain on
// every core"), part of bash bench/run.sh scale. One chain of NUTS (30 + 30 iterations, seed 1) on
//   covertype            logistic regression 581,012 × 54 (bench/synthetic.hpp, seed 20261121)
//   logistic_regression  10,000 × 100 (the same generator, the gradients benchmark's data)
// with cpu{.threads = 1} (unsplit), cpu{.threads = 2} (the default: split into cpu_split_parts
// parts, one helper thread) and cpu{.threads = 2, .split = 1} (unsplit, the second core idle).
// Prints, per model and setting:
//   split,<model>,<threads>,<split>,ms_per_leapfrog,<wall ms / leapfrog gradient>
//   split,<model>,<threads>,<split>,ms_per_gradient,<median of 30 evaluations at the last draw>
// Then four chains (30 + 30 iterations each, seed 1; also of a logistic regression 2,500 × 10), wall ms per chain-gradient (fit.seconds /
// fit.gradient_evaluations), with cpu{.threads = 1} (the default there: one batch of 4 lanes
// in an AVX-512 build), cpu{.threads = 2, .lanes = 1, .split = 1} (two chains one at a time on
// each core, the default before chains were grouped across threads) and cpu{.threads = 2} (the
// default: one batch, its evaluations split over both cores):
//   chains4,<model>,<threads>,<lanes>,<split>,ms_per_chain_gradient,<ms>
// First, the part pool's own cost (samplers/nuts/split_gradient.hpp): 2 parts that each spin for
// `part` µs, on the calling thread and one helper, after 2,000 runs to let the scheduler place
// the helper; the median wall time of 2,000 more runs and how many of their parts the helper ran:
//   pool,<part µs>,median_us,<µs>,parts_on_helper,<of 2000>
// (the ideal is the part's time and 2,000: each run's second part on the helper).
// Then where the default's threshold (cpu_split_min_work) sits: one chain (150 + 150
// iterations, seed 1, the best of 3 runs) with cpu{.threads = 2, .split = 1} and .split = 8, on
// logistic regressions of 250, 500, 1,000 and 2,500 rows × 100, 500 and 1,000 × 50 and 250 to
// 5,000 × 10, normal linear regressions of 2,500 and 10,000 × 10 (reduced to sufficient
// statistics: nothing to split), an elementwise Poisson regression (one covariate) of 2,500 to
// 25,000 rows and one with 200 group effects (gather) of 10,000 to 50,000 rows:
//   threshold,<model>,<split_values>,<split_work>,split_default,<parts split = 0 picks on 2
//     threads>,unsplit_ms,<ms per leapfrog>,split8_ms,<ms per leapfrog>,gain,<unsplit / split8>
// --quick: 58,101 rows of covertype, and the threshold rows from one run of 50 + 50 iterations.
// --threshold: the pool and threshold rows only.
#include <tyche/tyche.hpp>

#include "synthetic.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

namespace {

using namespace tyche;

template <std::size_t K>
auto logistic(const tyche_bench::logistic_data& d) {
  auto alpha = normal<"alpha">(0.0, 1.0);
  auto beta = normal<"beta">(0.0, 1.0, shape<K>);
  return model(joint(alpha, beta, bernoulli_logit(alpha + matvec(matrix(d.X, d.n, K), beta)).observe(data(d.y))));
}

template <class Model>
void run(const char* name, const Model& m) {
  struct setting {
    int threads, split;
  };
  for (const setting s : {setting{1, 0}, setting{2, 0}, setting{2, 1}}) {
    const nuts_fit fit =
        nuts(m, {.chains = 1, .warmup = 30, .draws = 30, .seed = 1, .executor = cpu{.threads = s.threads, .split = s.split}});
    std::printf("split,%s,%d,%d,ms_per_leapfrog,%.3f\n", name, s.threads, fit.split,
                1e3 * fit.seconds / static_cast<double>(fit.gradient_evaluations));
    // The gradient alone, as the executor evaluates it.
    const samplers::detail::model_target<Model> target(m);
    const samplers::detail::model_erased_target erased(target);
    const std::size_t parts = samplers::detail::resolve_split(erased, nuts_config{.chains = 1}, cpu{.threads = s.threads, .split = s.split});
    samplers::detail::part_pool pool(s.threads - 1);
    const samplers::detail::split_target<samplers::detail::model_erased_target> split(erased, parts, pool);
    const std::vector<double> theta(fit.values[0].end() - static_cast<std::ptrdiff_t>(m.dim()), fit.values[0].end());
    std::vector<double> grad(m.dim()), ws(split.workspace_size() + 1), times;
    for (int rep = 0; rep < 31; ++rep) {
      const auto t = std::chrono::steady_clock::now();
      if (parts > 1) split.value_and_gradient(theta.data(), grad.data(), ws.data());
      else erased.value_and_gradient(theta.data(), grad.data(), ws.data());
      if (rep > 0) times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count());
    }
    std::nth_element(times.begin(), times.begin() + 15, times.end());
    std::printf("split,%s,%d,%d,ms_per_gradient,%.3f\n", name, s.threads, static_cast<int>(parts), 1e3 * times[15]);
  }
}

// Four chains under three settings (the header says which).
template <class Model>
void run_four(const char* name, const Model& m) {
  for (const cpu exec : {cpu{.threads = 1}, cpu{.threads = 2, .lanes = 1, .split = 1}, cpu{.threads = 2}}) {
    const nuts_fit fit = nuts(m, {.chains = 4, .warmup = 30, .draws = 30, .seed = 1, .executor = exec});
    std::printf("chains4,%s,%d,%d,%d,ms_per_chain_gradient,%.4f\n", name, exec.threads, fit.lanes, fit.split,
                1e3 * fit.seconds / static_cast<double>(fit.gradient_evaluations));
  }
}

// One threshold row (see the top of the file).
// quick: one run of 50 + 50 iterations instead of the best of 3 of 150 + 150.
template <class Model>
void threshold_row(const char* name, const Model& m, bool quick) {
  const int runs = quick ? 1 : 3, iterations = quick ? 50 : 150;
  auto best = [&m, runs, iterations](int split, int* used) {
    double b = 1e300;
    for (int r = 0; r < runs; ++r) {
      const nuts_fit fit = nuts(m, {.chains = 1, .warmup = iterations, .draws = iterations, .seed = 1,
                                    .executor = cpu{.threads = 2, .split = split}});
      b = std::min(b, 1e3 * fit.seconds / static_cast<double>(fit.gradient_evaluations));
      *used = fit.split;
    }
    return b;
  };
  int used = 0;
  const double unsplit = best(1, &used), split = best(8, &used);
  best(0, &used);
  std::printf("threshold,%s,%zu,%zu,split_default,%d,unsplit_ms,%.4f,split8_ms,%.4f,gain,%.2f\n", name,
              m.split_values(), m.split_work(), used, unsplit, split, unsplit / split);
  std::fflush(stdout);
}

void threshold_rows(bool quick) {
  char name[64];
  for (const std::size_t n : {250, 500, 1000, 2500}) {
    const tyche_bench::logistic_data d(n, 100, 20261121);
    std::snprintf(name, sizeof name, "logistic_%zux100", n);
    threshold_row(name, logistic<100>(d), quick);
  }
  for (const std::size_t n : {500, 1000}) {
    const tyche_bench::logistic_data d(n, 50, 20261121);
    std::snprintf(name, sizeof name, "logistic_%zux50", n);
    threshold_row(name, logistic<50>(d), quick);
  }
  for (const std::size_t n : {250, 500, 1000, 2500, 5000}) {
    const tyche_bench::logistic_data d(n, 10, 20261121);
    std::snprintf(name, sizeof name, "logistic_%zux10", n);
    threshold_row(name, logistic<10>(d), quick);
  }
  for (const std::size_t n : {2500, 10000}) {
    const tyche_bench::logistic_data d(n, 10, 20261121);
    std::vector<double> y(n);
    for (std::size_t i = 0; i < n; ++i) y[i] = 0.5 * d.y[i] + 0.3 * std::sin(0.7 * static_cast<double>(i));
    auto alpha = normal<"alpha">(0.0, 1.0);
    auto beta = normal<"beta">(0.0, 1.0, shape<10>);
    auto sigma = half_normal<"sigma">(1.0);
    std::snprintf(name, sizeof name, "linear_%zux10", n);
    threshold_row(name, model(joint(alpha, beta, sigma,
                                    normal(alpha + matvec(matrix(d.X, d.n, 10), beta), sigma).observe(data(y)))),
                  quick);
  }
  for (const std::size_t n : {2500, 5000, 12500, 25000}) {
    std::vector<double> x(n), counts(n);
    for (std::size_t i = 0; i < n; ++i) {
      x[i] = std::sin(0.37 * static_cast<double>(i));
      counts[i] = std::floor(3.0 + 2.0 * x[i] + 1.5 * std::cos(1.3 * static_cast<double>(i)));
      if (counts[i] < 0) counts[i] = 0;
    }
    auto a = normal<"a">(0.0, 1.0);
    auto b = normal<"b">(0.0, 1.0);
    std::snprintf(name, sizeof name, "poisson_elementwise_%zu", n);
    threshold_row(name, model(joint(a, b, poisson_log(a + b * data(x)).observe(data(counts)))), quick);
  }
  for (const std::size_t n : {10000, 25000, 50000}) {
    constexpr std::size_t groups = 200;
    std::vector<double> x(n), counts(n);
    std::vector<int> g(n);
    for (std::size_t i = 0; i < n; ++i) {
      x[i] = std::sin(0.37 * static_cast<double>(i));
      g[i] = static_cast<int>((i * 7919) % groups);
      counts[i] = std::floor(3.0 + 2.0 * x[i] + std::sin(0.1 * static_cast<double>(g[i])) + 1.5 * std::cos(1.3 * static_cast<double>(i)));
      if (counts[i] < 0) counts[i] = 0;
    }
    auto a = normal<"a">(0.0, 1.0);
    auto b = normal<"b">(0.0, 1.0);
    auto s = half_normal<"s">(1.0);
    auto z = std_normal<"z">(shape<groups>);
    std::snprintf(name, sizeof name, "poisson_groups200_%zu", n);
    threshold_row(name, model(joint(a, b, s, z, poisson_log(a + b * data(x) + s * gather(z, g)).observe(data(counts)))), quick);
  }
}

void pool_rows() {
  using clock = std::chrono::steady_clock;
  for (const double part_us : {5.0, 20.0, 100.0}) {
    samplers::detail::part_pool pool(1);
    const auto caller = std::this_thread::get_id();
    int on_helper = 0;
    std::vector<double> times;
    for (int rep = -2000; rep < 2000; ++rep) {
      std::atomic<int> elsewhere{0};
      auto part = [&](std::size_t) {
        if (std::this_thread::get_id() != caller) ++elsewhere;
        const auto t = clock::now();
        while (std::chrono::duration<double, std::micro>(clock::now() - t).count() < part_us) {
        }
      };
      const auto t = clock::now();
      pool.run(2, part);
      if (rep >= 0) {
        times.push_back(std::chrono::duration<double, std::micro>(clock::now() - t).count());
        on_helper += elsewhere.load();
      }
    }
    std::nth_element(times.begin(), times.begin() + 1000, times.end());
    std::printf("pool,%.0f,median_us,%.1f,parts_on_helper,%d\n", part_us, times[1000], on_helper);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  pool_rows();
  threshold_rows(quick);
  if (argc > 1 && std::strcmp(argv[1], "--threshold") == 0) return 0;
  {
    // Four chains of a few-column regression (cpu::split = 0 splits it by its work since
    // 2026-12-06: one batch over both cores instead of 2 + 2 scalar chains).
    const tyche_bench::logistic_data d(2500, 10, 20261121);
    run_four("logistic_2500x10", logistic<10>(d));
  }
  {
    const tyche_bench::logistic_data d(10000, 100, 20261121);
    run("logistic_regression", logistic<100>(d));
    run_four("logistic_regression", logistic<100>(d));
  }
  const tyche_bench::logistic_data d(quick ? 58101 : 581012, 54, 20261121);
  run("covertype", logistic<54>(d));
  run_four("covertype", logistic<54>(d));
  return 0;
}
