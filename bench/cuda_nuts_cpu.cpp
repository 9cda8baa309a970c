// bench/cuda_nuts_cpu.cpp — the CPU side of bench/cuda_nuts.cu: eight schools (non-centred, the
// same posterior as tests/support/eight_schools.hpp) sampled by tyche::nuts with its defaults
// (tyche::simd, the cpu executor: one thread per core, chains as SIMD lanes), for the numbers of
// chains the GPU runs, on the machine that holds the GPU. Not built by default (target
// bench_cuda_nuts_cpu). Prints rows in bench/cuda_nuts.cu's CSV format:
//
//   where,model,dim,chains,warmup,draws,seconds,grad_evals,grads_per_second,draws_per_second,mean_first
//
// where = cpu_simd; grad_evals = nuts_fit::gradient_evaluations; mean_first = the mean of mu.
//
// Usage: cuda_nuts_cpu [--quick]
#include <tyche/tyche.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

namespace {

struct schools {
  std::vector<double> y, sigma;
};

}  // namespace

int main(int argc, char** argv) {
  using namespace tyche;
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int warmup = quick ? 100 : 300, draws = quick ? 100 : 300;
  const schools d{{28, 8, -3, 7, -1, 1, 18, 12}, {15, 10, 16, 11, 9, 11, 10, 18}};
  const auto m = model([](const schools& d) {
    auto mu = normal<"mu">(0.0, 5.0);
    auto tau = half_cauchy<"tau">(5.0);
    auto theta_raw = std_normal<"theta_raw">(shape<8>);
    return joint(mu, tau, theta_raw, normal(mu + tau * theta_raw, data(d.sigma)).observe(data(d.y)));
  }, d);
  std::printf("# host threads: %u\n", std::thread::hardware_concurrency());
  for (int chains : {64, 1024, 8192}) {
    if (quick && chains > 1024) break;
    const nuts_config cfg{.chains = chains, .warmup = warmup, .draws = draws, .seed = 20261126};
    const auto t0 = std::chrono::steady_clock::now();
    const auto fit = nuts(m, cfg);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double mean_mu = 0;
    for (const auto& chain : fit.parameter(0))
      for (double v : chain) mean_mu += v / (double(chains) * draws);
    std::printf("cpu_simd,eight_schools,%zu,%d,%d,%d,%.4f,%lld,%.4g,%.4g,%.4f\n", m.dim(), chains, warmup, draws,
                seconds, static_cast<long long>(fit.gradient_evaluations),
                double(fit.gradient_evaluations) / seconds, double(chains) * draws / seconds, mean_mu);
    std::fflush(stdout);
  }
}
