// bench/cuda_executor.cu — nuts() with the executor tyche::cuda (one chain per CUDA thread,
// warm-up and draws on the device) against the CPU executor (tyche::cpu{}, every core of the same
// machine) in one run: what a user gets from `nuts(model, {.chains = N, .executor = cuda{}})`,
// model written with the model API, timed end to end (host initialisation and the copying back
// and constraining of the draws included). Built by `bash bench/run.sh cuda` (target
// bench_cuda_executor); without a GPU only the CPU rows are printed.
//
//   cuda_executor [--quick]
//
// The CPU rows come from bench/cuda_executor_cpu.cpp, compiled by the host compiler with
// tyche::simd (-march=native): what users get on the CPU. (Under nvcc xsimd is off, so
// tyche::cpu{} in a .cu file runs its chains without SIMD lanes.)
//
// CSV on stdout: suite,model,n,chains,executor,value,unit with, per model, executor and number
// of chains, the rows
//   seconds                 wall time of the nuts() call
//   device_seconds          (cuda) of which in the NUTS kernels (fit.device_seconds)
//   device_leapfrogs_per_second  (cuda) leapfrogs / device_seconds
//   leapfrogs_per_second    Σ n_leapfrog over all chains and iterations (warm-up included) / seconds
//   min_bulk_ess_per_second the smallest bulk ESS over the parameters / seconds (chains ≤ 16,384)
//   utilization             useful gradients / slots (cuda: per warp of 32 threads, 32 × its
//                           longest chain; cpu: lanes of SIMD batches)
// At 16,384 chains of eight schools the executor label cuda_threads_per_block_<k> gives the rows of
// other block sizes (the default is 64).
// Models: eight_schools_noncentered (10 parameters) and logistic_regression (10,000 × 100
// synthetic design, 101 parameters: the data-heavy case, where one chain per thread reads the
// whole matrix per gradient).
#include <cuda_runtime.h>

#include "cuda_executor.hpp"

#include <cstring>
#include <thread>

// The CPU rows, from bench/cuda_executor_cpu.cpp (a host-compiled translation unit).
void cpu_rows_eight_schools(int chains, int warmup, int draws);
void cpu_rows_logistic_regression(int chains, int warmup, int draws);

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  int devices = 0;
  const bool gpu = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
  if (gpu) {
    cudaDeviceProp p{};
    cudaGetDeviceProperties(&p, 0);
    std::fprintf(stderr, "GPU: %s, %d SMs; host: %u threads\n", p.name, p.multiProcessorCount,
                 std::thread::hardware_concurrency());
  } else {
    std::fprintf(stderr, "no CUDA device: CPU rows only\n");
  }
  std::printf("suite,model,n,chains,executor,value,unit\n");
  const int warmup = quick ? 200 : 1000;
  const auto es = tyche_test::eight_schools_model();
  for (const int chains : {1, 32, 1024, 16384, 131072}) {
    const int draws = chains >= 16384 ? 100 : (quick ? 200 : 1000);
    if (gpu) measure("eight_schools_noncentered", 8, es, chains, tyche::cuda{}, warmup, draws);
    if (chains <= 1024) cpu_rows_eight_schools(chains, warmup, draws);
  }
  // Chains per block of threads (the default is 64), at 16,384 chains.
  if (gpu)
    for (const int tpb : {32, 128, 256}) {
      const std::string label = "cuda_threads_per_block_" + std::to_string(tpb);
      measure("eight_schools_noncentered", 8, es, 16384, tyche::cuda{.threads_per_block = tpb}, warmup, 100,
              label.c_str());
    }
  const regression_data rd;
  const auto lr = logistic_regression(rd);
  // One chain per thread reads the whole design per gradient (the data-parallel gradient is not
  // built yet): on an H100 one chain ran 21 leapfrogs per second and 32 chains of 50 + 50
  // iterations took 220 s, so the GPU rows run 20 + 20 (one chain) or 50 + 50 iterations in
  // both modes, and 1,024 chains are left out.
  for (const int chains : {1, 32}) {
    const int w = quick ? 50 : 300, draws = quick ? 50 : 300;
    const int gpu_iterations = chains == 1 ? 20 : 50;
    if (gpu) measure("logistic_regression", rd.n, lr, chains, tyche::cuda{}, gpu_iterations, gpu_iterations);
    cpu_rows_logistic_regression(chains, w, draws);
  }
  return 0;
}
