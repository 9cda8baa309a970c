// bench/cuda_executor.cu — nuts() with the executor tyche::cuda (one chain per CUDA thread,
// warm-up and draws on the device) against the CPU executor (tyche::cpu{}, every core of the same
// machine) in one run: what a user gets from `nuts(model, {.chains = N, .executor = cuda{}})`,
// model written with the model API, timed end to end (host initialisation and the copying back
// and constraining of the draws included). Built by `bash bench/run.sh cuda` (target
// bench_cuda_executor); without a GPU only the CPU rows are printed.
//
//   cuda_executor [--quick] [--data] [--share] [--split] [--blocks] [--many]
//
// --many: eight schools at 16,384 and 131,072 chains only (GPU rows, warm-up 200, 100 draws, after
// a first call of 32 chains labelled cuda_first_call): the host's part of the call (seconds −
// device_seconds) where it matters most, with the chains initialised on the device (the default)
// and on the host (cuda_init_on_host), and the default again (cuda_again).
// --data: the data-heavy rows only. --share: whole_device's settings against each other
// (cuda::tiles, cuda::chain_group, cuda::shared_gradient; share_rows below) on covertype and the
// logistic regression. --split: whole_device's controllers in one kernel with the workers or in
// their own (cuda::separate_controllers), gradients in local or shared memory, fewer worker
// blocks (split_rows below). --blocks: the defaults (one kernel, gradients in shared memory) with
// fewer worker blocks (cuda::worker_blocks) and more tiles (cuda::tiles) (blocks_rows below).
//
// The CPU rows come from bench/cuda_executor_cpu.cpp, compiled by the host compiler with
// tyche::simd (-march=native): what users get on the CPU. (Under nvcc xsimd is off, so
// tyche::cpu{} in a .cu file runs its chains without SIMD lanes.)
//
// CSV on stdout: suite,model,n,chains,executor,value,unit with, per model, executor and number
// of chains, the rows
//   seconds                 wall time of the nuts() call
//   device_seconds          (cuda) of which in the NUTS kernels (fit.device_seconds: since
//                           2026-12-04 with the initialisation kernel, and the host's reservation
//                           of the fit where it outlasts the first launch)
//   device_leapfrogs_per_second  (cuda) leapfrogs / device_seconds
//   leapfrogs_per_second    Σ n_leapfrog over all chains and iterations (warm-up included) / seconds
//   min_bulk_ess_per_second the smallest bulk ESS over the parameters / seconds (chains ≤ 16,384)
//   utilization             useful gradients / slots (cuda: per warp of 32 threads, 32 × its
//                           longest chain; cpu: lanes of SIMD batches)
// At 16,384 chains of eight schools the executor label cuda_threads_per_block_<k> gives the rows of
// other block sizes (the default is 64).
// Models: eight_schools_noncentered (10 parameters), corr_gaussian_100 (a 100-d Gaussian with a
// data covariance, dense metric; 1, 32, 1,024 chains, 100 + 100 iterations) and logistic_regression (10,000 × 100
// synthetic design, 101 parameters: the data-heavy case, where one chain per thread reads the
// whole matrix per gradient).
#include <cuda_runtime.h>

#include "cuda_executor.hpp"

#include <algorithm>
#include <cstring>
#include <vector>
#include <thread>

// The CPU rows, from bench/cuda_executor_cpu.cpp (a host-compiled translation unit).
void cpu_rows_eight_schools(int chains, int warmup, int draws);
void cpu_rows_logistic_regression(int chains, int warmup, int draws);
void cpu_rows_covertype(int chains, int warmup, int draws);
void cpu_rows_corr_gaussian(int chains, int warmup, int draws);

namespace {

__global__ void read_all(const double* x, std::size_t n, double* out) {
  double s = 0;
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += x[i];
  if (s == 12345.678) *out = s;  // keeps the reads
}

// The time of one read of `bytes` of device memory (the median of 20 reads by a grid-stride
// kernel): the floor of one gradient of a model that reads its data once per evaluation.
void one_read(const char* name, std::size_t n_rows, std::size_t bytes) {
  double* x = nullptr;
  double* out = nullptr;
  if (cudaMalloc(&x, bytes) != cudaSuccess || cudaMalloc(&out, sizeof(double)) != cudaSuccess) return;
  cudaMemset(x, 0, bytes);
  cudaDeviceProp p{};
  cudaGetDeviceProperties(&p, 0);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> ms;
  for (int t = 0; t < 21; ++t) {
    cudaEventRecord(a);
    read_all<<<p.multiProcessorCount * 8, 256>>>(x, bytes / sizeof(double), out);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float m = 0;
    cudaEventElapsedTime(&m, a, b);
    if (t > 0) ms.push_back(m);
  }
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2];
  row(name, n_rows, 0, "cuda", median, "one_read_ms");
  row(name, n_rows, 0, "cuda", static_cast<double>(bytes) / (median * 1e-3) / 1e9, "read_GB_per_s");
  cudaFree(x);
  cudaFree(out);
}

// The data-heavy rows: the logistic regression 10,000 × 100 with each chain's gradient computed
// by the whole device (cuda_gradient::whole_device, the default for it at these chain counts);
// covertype 581,012 × 54 (1, 8, 64 chains), with the time of one
// read of its design matrix, in double and with X stored as floats.
void data_rows(bool gpu, bool quick) {
  const regression_data rd;
  const auto lr = logistic_regression(rd);
  for (const int chains : {1, 32}) {
    const int w = quick ? 50 : 300, draws = quick ? 50 : 300;
    if (gpu) measure("logistic_regression", rd.n, lr, chains, tyche::cuda{}, w, draws);
    // One chain per thread (cuda_gradient::per_thread) is left out: on the H100 it ran 21
    // leapfrogs per second for one chain and 169 for 32 (docs/gpu.md), minutes per row.
    cpu_rows_logistic_regression(chains, w, draws);
  }
  // The floor of a whole_device round: eight schools (8 data values) with every thread on one
  // chain's gradient — the barriers, the sums and the chain's own step, no data to speak of.
  if (gpu)
    measure("eight_schools_noncentered", 8, tyche_test::eight_schools_model(), 1,
            tyche::cuda{.gradient = tyche::cuda_gradient::whole_device}, 200, 200, "cuda_whole_device");
  const covertype_data cd;
  const auto ct = covertype(cd);
  if (gpu) one_read("covertype", cd.d.n, cd.d.X.size() * sizeof(double));
  for (const int chains : {1, 8, 64}) {
    const int it = chains == 64 ? 20 : (quick ? 50 : 200);
    if (gpu) measure("covertype", cd.d.n, ct, chains, tyche::cuda{}, it, it);
    if (chains <= 8) cpu_rows_covertype(chains, quick ? 5 : 50, quick ? 5 : 50);
  }
  // X stored as floats: half the bytes per read (the one read of the float matrix beside it).
  if (gpu) {
    const covertype_float_data cf(cd);
    const auto ctf = covertype_float(cf);
    one_read("covertype_float", cf.n, cf.X.size() * sizeof(float));
    for (const int chains : {1, 8, 64}) {
      const int it = chains == 64 ? 20 : (quick ? 50 : 200);
      measure("covertype_float", cf.n, ctf, chains, tyche::cuda{}, it, it);
    }
  }
}

// whole_device's settings (cuda::tiles, cuda::chain_group, cuda::shared_gradient) on covertype
// 581,012 × 54 and the logistic regression 10,000 × 100, against each other in one run (run it
// alone on the GPU). Executor labels cuda_tiles_<tiles>_group_<chains>_<shared|local> (0:
// automatic). On covertype, 131 worker blocks of 256 threads give each worker about 955 data
// values: 8 tiles ≈ 120 values per tile, 15 ≈ 64, 30 ≈ 32, 60 ≈ 16.
void share_rows() {
  const covertype_data cd;
  const auto ct = covertype(cd);
  one_read("covertype", cd.d.n, cd.d.X.size() * sizeof(double));
  auto run = [&](const char* name, std::size_t n, const auto& m, int chains, int tiles, int group, bool shared,
                 int it) {
    const tyche::cuda exec{.gradient = tyche::cuda_gradient::whole_device, .tiles = tiles, .chain_group = group,
                           .shared_gradient = shared};
    const std::string label = "cuda_tiles_" + std::to_string(tiles) + "_group_" + std::to_string(group) +
                              (shared ? "_shared" : "_local");
    measure(name, n, m, chains, exec, it, it, label.c_str());
  };
  // Tiles (the workers' gradients in local memory, as on 2026-11-27; shared is the default now).
  run("covertype", cd.d.n, ct, 1, 0, 0, false, 30);
  for (const int tiles : {1, 8, 15, 30, 60}) run("covertype", cd.d.n, ct, 8, tiles, 0, false, 20);
  for (const int tiles : {15, 30, 60}) run("covertype", cd.d.n, ct, 64, tiles, 0, false, 20);
  run("covertype", cd.d.n, ct, 64, 30, 8, false, 20);
  run("covertype", cd.d.n, ct, 256, 30, 0, false, 20);
  const regression_data rd;
  const auto lr = logistic_regression(rd);
  for (const int tiles : {1, 4}) run("logistic_regression", rd.n, lr, 32, tiles, 0, false, 50);
  run("logistic_regression", rd.n, lr, 64, 1, 0, false, 50);
  // The workers' gradients in shared memory against local memory, one tile.
  for (const int chains : {1, 8})
    for (const bool shared : {true, false}) run("covertype", cd.d.n, ct, chains, 1, 0, shared, chains == 1 ? 30 : 20);
  for (const int chains : {1, 32})
    for (const bool shared : {true, false}) run("logistic_regression", rd.n, lr, chains, 1, 0, shared, 50);
}

// whole_device's controllers in the workers' kernel (one cooperative launch) or in a kernel of
// their own (cuda::separate_controllers; off by default), each with the workers' gradients in local
// or in shared memory (cuda::shared_gradient), and fewer worker blocks (cuda::worker_blocks) for
// the logistic regression, whose 10,000 rows leave most of the device's workers without a row:
// one run, alone on the GPU. Executor labels cuda_<one_kernel|separate>_<local|shared>[_blocks_k].
void split_rows() {
  const covertype_data cd;
  const auto ct = covertype(cd);
  const covertype_float_data cf(cd);
  const auto ctf = covertype_float(cf);
  const regression_data rd;
  const auto lr = logistic_regression(rd);
  auto run = [&](const char* name, std::size_t n, const auto& m, int chains, bool separate, bool shared, int blocks,
                 int it) {
    const tyche::cuda exec{.gradient = tyche::cuda_gradient::whole_device, .shared_gradient = shared,
                           .separate_controllers = separate, .worker_blocks = blocks};
    const std::string label = std::string("cuda_") + (separate ? "separate" : "one_kernel") +
                              (shared ? "_shared" : "_local") +
                              (blocks > 0 ? "_blocks_" + std::to_string(blocks) : std::string());
    measure(name, n, m, chains, exec, it, it, label.c_str());
  };
  for (const int chains : {1, 8})
    for (const bool separate : {false, true})
      for (const bool shared : {false, true}) run("covertype", cd.d.n, ct, chains, separate, shared, 0, 30);
  for (const bool separate : {false, true}) run("covertype_float", cf.n, ctf, 1, separate, false, 0, 30);
  for (const int chains : {1, 32})
    for (const bool separate : {false, true})
      for (const bool shared : {false, true}) run("logistic_regression", rd.n, lr, chains, separate, shared, 0, 50);
  for (const int chains : {1, 32})
    for (const int blocks : {16, 33, 66}) run("logistic_regression", rd.n, lr, chains, true, false, blocks, 50);
}

// The default whole_device (one kernel, the workers' gradients in shared memory) with at most k
// worker blocks (cuda::worker_blocks; 0: every block the device holds) on the logistic regression
// 10,000 × 100 and covertype, and with t tiles (cuda::tiles; 0: automatic) where chains share
// each read: one run, alone on the GPU. Executor labels cuda_blocks_<k> and cuda_tiles_<t>.
void blocks_rows() {
  const covertype_data cd;
  const auto ct = covertype(cd);
  const regression_data rd;
  const auto lr = logistic_regression(rd);
  auto run = [&](const char* name, std::size_t n, const auto& m, int chains, int blocks, int tiles, int it) {
    const tyche::cuda exec{.gradient = tyche::cuda_gradient::whole_device, .tiles = tiles, .worker_blocks = blocks};
    const std::string label = tiles > 0 ? "cuda_tiles_" + std::to_string(tiles) : "cuda_blocks_" + std::to_string(blocks);
    measure(name, n, m, chains, exec, it, it, label.c_str());
  };
  for (const int chains : {1, 32})
    for (const int blocks : {0, 8, 16, 33, 66}) run("logistic_regression", rd.n, lr, chains, blocks, 0, 50);
  for (const int blocks : {0, 66}) run("covertype", cd.d.n, ct, 1, blocks, 0, 30);
  for (const int chains : {8, 64})
    for (const int tiles : {1, 4, 16}) run("covertype", cd.d.n, ct, chains, 0, tiles, 20);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, data_only = false, share = false, split = false, blocks = false, many = false;
  for (int i = 1; i < argc; ++i) {
    quick = quick || std::strcmp(argv[i], "--quick") == 0;
    data_only = data_only || std::strcmp(argv[i], "--data") == 0;
    share = share || std::strcmp(argv[i], "--share") == 0;
    split = split || std::strcmp(argv[i], "--split") == 0;
    blocks = blocks || std::strcmp(argv[i], "--blocks") == 0;
    many = many || std::strcmp(argv[i], "--many") == 0;
  }
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
  if (share) {
    if (gpu) share_rows();
    return 0;
  }
  if (split) {
    if (gpu) split_rows();
    return 0;
  }
  if (blocks) {
    if (gpu) blocks_rows();
    return 0;
  }
  if (many) {
    if (gpu) {
      const auto es = tyche_test::eight_schools_model();
      // A first call, not printed, pays for the CUDA context and the module's load, which the
      // full run's smaller rows pay for before 16,384 chains (measure's rows say any failure).
      measure("eight_schools_noncentered", 8, es, 32, tyche::cuda{}, 10, 10, "cuda_first_call");
      // The default (initial points and step sizes found on the device), the host's
      // initialisation (cuda_init_on_host, the CPU executor's code on the host's threads), and
      // the default again (cuda_again: run-to-run noise).
      for (const int chains : {16384, 131072}) {
        measure("eight_schools_noncentered", 8, es, chains, tyche::cuda{}, 200, 100);
        measure("eight_schools_noncentered", 8, es, chains, tyche::cuda{.init_on_device = false}, 200, 100,
                "cuda_init_on_host");
        measure("eight_schools_noncentered", 8, es, chains, tyche::cuda{}, 200, 100, "cuda_again");
      }
    }
    return 0;
  }
  if (data_only) {
    data_rows(gpu, quick);
    return 0;
  }
  const int warmup = quick ? 200 : 1000;
  const auto es = tyche_test::eight_schools_model();
  for (const int chains : {1, 32, 1024, 16384, 131072}) {
    const int draws = chains >= 16384 ? 100 : (quick ? 200 : 1000);
    if (gpu) measure("eight_schools_noncentered", 8, es, chains, tyche::cuda{}, warmup, draws);
    if (chains <= 1024) cpu_rows_eight_schools(chains, warmup, draws);
  }
  // The 100-d correlated Gaussian (dense metric): one chain per thread (the automatic choice: its
  // data are read by a triangular solve, which whole_device's workers would each repeat), each
  // gradient a serial O(d²) solve on one thread. Not yet run on a GPU (2026-11-28): 100 + 100.
  {
    const corr_gaussian_data cg;
    const auto m = corr_gaussian(cg);
    for (const int chains : {1, 32, 1024}) {
      if (gpu) measure("corr_gaussian_100", cg.d, m, chains, tyche::cuda{}, 100, 100, nullptr,
                       tyche::samplers::metric_kind::dense);
      cpu_rows_corr_gaussian(chains, 100, 100);
    }
  }
  // Chains per block of threads (the default is 64), at 16,384 chains.
  if (gpu)
    for (const int tpb : {32, 128, 256}) {
      const std::string label = "cuda_threads_per_block_" + std::to_string(tpb);
      measure("eight_schools_noncentered", 8, es, 16384, tyche::cuda{.threads_per_block = tpb}, warmup, 100,
              label.c_str());
    }
  data_rows(gpu, quick);
  return 0;
}
