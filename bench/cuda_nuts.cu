// bench/cuda_nuts.cu — the NUTS kernel (tyche/samplers/nuts/kernel.hpp) on a GPU, one chain per
// CUDA thread (the design of tests/cuda/nuts_kernel_test.cu, not yet the lockstep executor of
// issue 16), against the same kernel on every core of the host. Not built by default: build the
// target bench_cuda_nuts (CMake option TYCHE_ENABLE_CUDA with nvcc found) and run it on a machine
// with a GPU:
//
//   cmake -S . -B build/gpu -DCMAKE_BUILD_TYPE=Release
//   cmake --build build/gpu --target bench_cuda_nuts && build/gpu/bench/cuda_nuts [--quick]
//
// (not in build/gcc: tools/test.sh configures that tree to build CUDA code as PTX at -O0)
//
// For each model and number of chains it runs warm-up (step size by dual averaging, Stan's
// settings: δ = 0.8, max depth 10, unit diagonal metric) then draws, all on the device, and
// prints one CSV row:
//
//   where,model,dim,chains,warmup,draws,seconds,grad_evals,grads_per_second,draws_per_second,mean_first
//
//   where            gpu or cpu (host threads, one chain at a time per thread)
//   seconds          wall time of the kernel (gpu: CUDA events around the launch) or of the threads
//   grad_evals       Σ n_leapfrog over all transitions of all chains (warm-up included)
//   draws_per_second chains × draws / seconds
//   mean_first       the mean over all chains and draws of the first coordinate (a check that the
//                    run sampled the posterior: eight schools mu ≈ 4.4, the Gaussians 0)
//
// Models: eight_schools (non-centred, 10 parameters, tests/support/eight_schools.hpp, evaluated
// through the compiled program's program_view: the model code users write) and gauss_100 (a
// 100-d Gaussian with standard deviations 1..10 written by hand; the memory traffic of a larger
// state per chain).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <thread>
#include <type_traits>
#include <vector>

#include "support/eight_schools.hpp"

namespace {

using namespace tyche::samplers;
using kernel_type = nuts_kernel<double>;
constexpr int max_depth = 10;

using es_program = decltype(tyche_test::eight_schools_noncentered(nullptr, nullptr));
using es_view = es_program::view_type;

struct eight_schools_target {
  static constexpr std::size_t dim = 10;
  const es_view* view;
  TYCHE_HD double operator()(const double* q, double* g) const { return view->value_and_gradient(q, g); }
};

struct gauss_target {
  static constexpr std::size_t dim = 100;
  TYCHE_HD double operator()(const double* q, double* g) const {
    double s = 0;
    for (std::size_t i = 0; i < dim; ++i) {
      const double sd = 1.0 + 9.0 * double(i) / double(dim - 1);
      const double z = q[i] / (sd * sd);
      g[i] = -z;
      s += q[i] * z;
    }
    return -0.5 * s;
  }
};

struct chain_result {
  double mean_first;
  unsigned long long grad_evals;
  int status;
};

/// One chain: warm-up of the step size, then `draws` transitions; the mean of θ[0] over the draws
/// and the number of gradients.
template <class Target>
TYCHE_HD chain_result run_chain(const Target& target, double* storage, std::size_t storage_size, int chain,
                                int warmup, int draws) {
  constexpr std::size_t dim = Target::dim;
  chain_result r{0, 0, 0};
  kernel_type k;
  if (k.bind(storage, storage_size, dim, max_depth, metric_kind::diagonal) != nuts_status::ok) {
    r.status = 1;
    return r;
  }
  k.rng().seed = 20261126;
  k.rng().stream[0] = static_cast<std::uint64_t>(chain);
  double q[Target::dim], g[Target::dim];
  for (std::size_t i = 0; i < dim; ++i) q[i] = 0.1 * double(i % 7) * (chain % 2 == 0 ? 1 : -1);
  k.set_point(0, q, g, target(q, g));
  double eps = 0.5;
  step_size_adaptation<double> adapt;
  adapt.set_mu(::log(10 * eps));
  for (int t = 0; t < warmup + draws; ++t) {
    if (k.set_step_size(0, eps) != nuts_status::ok) {
      r.status = 2;
      return r;
    }
    const bool start[1] = {true};
    if (k.begin(start) != nuts_status::ok) {
      r.status = 3;
      return r;
    }
    bool ended[1] = {false};
    while (!ended[0]) {
      k.set_pending(target(k.pending_q(), k.pending_grad()));
      k.resume(ended);
    }
    const transition_stats& s = k.stats(0);
    r.grad_evals += static_cast<unsigned long long>(s.n_leapfrog);
    if (t < warmup) {
      adapt.learn(eps, s.accept_stat);
      if (t == warmup - 1) adapt.complete(eps);
    } else {
      k.get_point(0, q);
      r.mean_first += q[0] / draws;
    }
  }
  return r;
}

template <class Target>
__global__ void chains_kernel(Target target, double* storage, std::size_t storage_size, int chains, int warmup,
                              int draws, chain_result* out) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= chains) return;
  out[c] = run_chain(target, storage + std::size_t(c) * storage_size, storage_size, c, warmup, draws);
}

bool cuda_ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  return false;
}

struct summary {
  double seconds = 0, mean_first = 0;
  unsigned long long grad_evals = 0;
  int failed = 0;
};

summary summarise(const std::vector<chain_result>& rs, double seconds) {
  summary s;
  s.seconds = seconds;
  for (const chain_result& r : rs) {
    s.grad_evals += r.grad_evals;
    s.mean_first += r.mean_first / double(rs.size());
    s.failed += r.status != 0;
  }
  return s;
}

template <class Target>
bool run_gpu(const Target& target, int chains, int warmup, int draws, summary& out) {
  const std::size_t size = kernel_type::storage_size(Target::dim, max_depth, metric_kind::diagonal);
  double* storage = nullptr;
  chain_result* results = nullptr;
  if (!cuda_ok(cudaMalloc(&storage, size * std::size_t(chains) * sizeof(double)), "cudaMalloc storage") ||
      !cuda_ok(cudaMalloc(&results, std::size_t(chains) * sizeof(chain_result)), "cudaMalloc results"))
    return false;
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start);
  chains_kernel<<<(chains + 127) / 128, 128>>>(target, storage, size, chains, warmup, draws, results);
  cudaEventRecord(stop);
  if (!cuda_ok(cudaGetLastError(), "launch") || !cuda_ok(cudaEventSynchronize(stop), "kernel")) return false;
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  std::vector<chain_result> rs(chains);
  cudaMemcpy(rs.data(), results, rs.size() * sizeof(chain_result), cudaMemcpyDeviceToHost);
  cudaFree(storage);
  cudaFree(results);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  out = summarise(rs, ms / 1000.0);
  return true;
}

template <class Target>
summary run_cpu(const Target& target, int chains, int warmup, int draws) {
  const std::size_t size = kernel_type::storage_size(Target::dim, max_depth, metric_kind::diagonal);
  const int threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<chain_result> rs(chains);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int w = 0; w < threads; ++w)
    pool.emplace_back([&, w] {
      std::vector<double> storage(size);
      for (int c = w; c < chains; c += threads)
        rs[c] = run_chain(target, storage.data(), storage.size(), c, warmup, draws);
    });
  for (std::thread& t : pool) t.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return summarise(rs, seconds);
}

void print(const char* where, const char* model, std::size_t dim, int chains, int warmup, int draws,
           const summary& s) {
  std::printf("%s,%s,%zu,%d,%d,%d,%.4f,%llu,%.4g,%.4g,%.4f\n", where, model, dim, chains, warmup, draws, s.seconds,
              s.grad_evals, double(s.grad_evals) / s.seconds, double(chains) * draws / s.seconds, s.mean_first);
  if (s.failed) std::printf("# %s %s: %d chains failed\n", where, model, s.failed);
  std::fflush(stdout);
}

template <class Target>
void sweep(const char* model, const Target& device_target, const Target& host_target, bool quick) {
  const int warmup = quick ? 100 : 300, draws = quick ? 100 : 300;
  const int cpu_chains = quick ? 64 : 256;
  print("cpu", model, Target::dim, cpu_chains, warmup, draws, run_cpu(host_target, cpu_chains, warmup, draws));
  for (int chains : {128, 1024, 8192, 32768, 131072}) {
    summary s;
    if (!run_gpu(device_target, chains, warmup, draws, s)) return;
    print("gpu", model, Target::dim, chains, warmup, draws, s);
    if (s.seconds > (quick ? 20 : 60)) return;  // the next size would take too long
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "no CUDA device\n");
    return 77;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::printf("# device: %s, %d SMs; host threads: %u\n", prop.name, prop.multiProcessorCount,
              std::thread::hardware_concurrency());
  // A deep trajectory keeps a thread's stack frames: room for the kernel's locals.
  cudaDeviceSetLimit(cudaLimitStackSize, 16 * 1024);
  std::printf("where,model,dim,chains,warmup,draws,seconds,grad_evals,grads_per_second,draws_per_second,mean_first\n");

  double *y_dev = nullptr, *inv_sigma_dev = nullptr;
  es_view* view_dev = nullptr;
  cudaMalloc(&y_dev, 8 * sizeof(double));
  cudaMalloc(&inv_sigma_dev, 8 * sizeof(double));
  cudaMalloc(&view_dev, sizeof(es_view));
  cudaMemcpy(y_dev, tyche_test::eight_schools_y, 8 * sizeof(double), cudaMemcpyHostToDevice);
  cudaMemcpy(inv_sigma_dev, tyche_test::eight_schools_inv_sigma, 8 * sizeof(double), cudaMemcpyHostToDevice);
  const auto device_program = tyche_test::eight_schools_noncentered(y_dev, inv_sigma_dev);
  cudaMemcpy(view_dev, &device_program.view(), sizeof(es_view), cudaMemcpyHostToDevice);
  const auto host_program =
      tyche_test::eight_schools_noncentered(tyche_test::eight_schools_y, tyche_test::eight_schools_inv_sigma);
  sweep("eight_schools", eight_schools_target{view_dev}, eight_schools_target{&host_program.view()}, quick);
  sweep("gauss_100", gauss_target{}, gauss_target{}, quick);
  cudaFree(y_dev);
  cudaFree(inv_sigma_dev);
  cudaFree(view_dev);
  return 0;
}
