// bench/low_rank_memory.cpp — a chain's memory with the low-rank metric in d = 1,000 … 4,000
// dimensions: one fit per process (the peak is the process's), metric = diagonal (the floor),
// low_rank with its default room for directions, and low_rank with nuts_config::low_rank_max_rank
// = 20. bash bench/run.sh low_rank_memory runs each in a process of its own:
//
//   low_rank_memory D diagonal|low_rank|low_rank_20     prints d,metric,kmax,k,seconds,max_rss_mb
//
// The target: x ~ N(0, S(I + 99uuᵀ)S), S log-spaced from 0.1 to 10, u a fixed unit vector — one
// direction the diagonal cannot capture, so that the estimate keeps one (k = 1) whatever room it
// has. One chain, 300 warm-up iterations (Stan's buffers 75 and 50, windows of 25, 50 and 100
// draws; the estimate's room, 2 × 100 = 200 directions) and 100 draws.
#include <tyche/tyche.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <sys/resource.h>

namespace {

template <std::size_t D>
int run(const std::string& metric) {
  using namespace tyche;
  // y = S⁻¹x has covariance I + 99uuᵀ: y·u ~ N(0, 100) and the rest N(0, 1), written as
  // x ~ N(0, S²) (its diagonal) corrected along u: log p = −½|y|² + ½(1 − 1/100)(y·u)².
  static std::vector<double> scale(D), zero(D, 0.0), u(D);
  for (std::size_t i = 0; i < D; ++i) {
    scale[i] = std::pow(10.0, -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(D - 1));
    u[i] = (i % 2 == 0 ? 1.0 : -1.0) / std::sqrt(static_cast<double>(D));
  }
  static std::vector<double> u_over_s(D);
  for (std::size_t i = 0; i < D; ++i) u_over_s[i] = u[i] / scale[i];
  auto x = flat<"x">(shape<D>);
  const auto projection = dot(data(u_over_s), x);
  const auto m = model(joint(x, normal(data(zero), data(scale)).observe(x), target(0.495 * projection * projection)));
  nuts_config cfg{.chains = 1, .warmup = 300, .draws = 100, .seed = 11};
  cfg.executor = cpu{.threads = 1};
  if (metric != "diagonal") cfg.metric = samplers::metric_kind::low_rank;
  if (metric == "low_rank_20") {
    [](auto& c) {
      if constexpr (requires { c.low_rank_max_rank; }) c.low_rank_max_rank = 20;
      else std::fprintf(stderr, "low_rank_memory: this build has no low_rank_max_rank\n");
    }(cfg);
  }
  const auto start = std::chrono::steady_clock::now();
  const nuts_fit fit = nuts(m, cfg);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  long kmax = -1, k = -1;
  [&](const auto& f) {
    if constexpr (requires { f.inv_metric_factors; }) {
      if (!f.inv_metric_factors.empty() && f.inv_metric_factors[0].size() > 2) {
        k = static_cast<long>(f.inv_metric_factors[0][0]);
        kmax = static_cast<long>(f.inv_metric_factors[0][1]);
      }
    }
  }(fit);
  std::printf("%zu,%s,%ld,%ld,%.2f,%.0f\n", D, metric.c_str(), kmax, k, seconds,
              static_cast<double>(usage.ru_maxrss) / 1024.0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: low_rank_memory 1000|2000|4000 diagonal|low_rank|low_rank_20\n");
    return 2;
  }
  const std::string d = argv[1], metric = argv[2];
  if (metric != "diagonal" && metric != "low_rank" && metric != "low_rank_20") return 2;
  if (d == "1000") return run<1000>(metric);
  if (d == "2000") return run<2000>(metric);
  if (d == "4000") return run<4000>(metric);
  std::fprintf(stderr, "low_rank_memory: d must be 1000, 2000 or 4000\n");
  return 2;
}
