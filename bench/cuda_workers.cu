// bench/cuda_workers.cu — a diagnostic of cuda_gradient::whole_device (docs/gpu.md): the time of
// the workers' pass alone (every thread of the device evaluates its part of one chain's log
// density and gradient, program_view::value_and_gradient_part, the warp and block sums as in
// backends/cuda/nuts.cuh) in a kernel of its own, without the controllers' NUTS code, under
// several register budgets (__launch_bounds__ minimum blocks per SM 1 … 4), and with the
// occupancy forced to one block of 256 threads per SM (what the one-kernel design runs at today:
// its controllers' code sets 255 registers for every thread). It answers whether the workers in
// a kernel of their own would be faster, before that split is built.
//
//   cuda_workers            (needs a GPU; built by cmake --build <tree> --target bench_cuda_workers)
//
// CSV on stdout: model,variant,registers,local_bytes,blocks_per_sm,tiles,us_per_pass (variant:
// natural (the registers the compiler chose under __launch_bounds__(256, min)), one_block_per_sm,
// shared_gradient (each thread's gradient in shared memory); _blocks<k>: the grid's blocks)
#include <cuda_runtime.h>

#include "cuda_executor.hpp"

#include <tyche/compile/relocate.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

namespace {

constexpr int threads = 256;

template <class View, int MinBlocks, bool SharedGradient = false>
__global__ void __launch_bounds__(threads, MinBlocks)
    workers_pass(View view, const double* theta_in, double* partials, double* workspace_all, unsigned tiles) {
  extern __shared__ double shared[];
  constexpr std::size_t d = tyche::detail::static_dim_v<typename View::layout_type>;
  static_assert(d != tyche::dynamic_extent, "the diagnostic's models have a static dimension");
  constexpr std::size_t row = d + 1;
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  double* theta = shared;
  double* acc = shared + d;  // [warps][row]
  for (std::size_t i = threadIdx.x; i < d; i += blockDim.x) theta[i] = theta_in[i];
  for (std::size_t i = threadIdx.x; i < warps * row; i += blockDim.x) acc[i] = 0;
  __syncthreads();
  const std::size_t worker = blockIdx.x * blockDim.x + threadIdx.x, workers = gridDim.x * blockDim.x;
  double* workspace = workspace_all != nullptr ? workspace_all + worker * view.workspace_size : nullptr;
  double local[SharedGradient ? 1 : d];
  // SharedGradient: each thread's gradient in shared memory, d | 1 values apart (other banks).
  double* grad = SharedGradient ? acc + warps * row + threadIdx.x * (d | 1) : local;
  for (unsigned t = 0; t < tiles; ++t) {
    const double value = view.value_and_gradient_part(theta, grad, workspace, t * workers + worker, tiles * workers);
    tyche::samplers::detail::warp_add_to([&](std::size_t j) { return j == 0 ? value : grad[j - 1]; }, row,
                                         acc + warp * row, lane);
  }
  __syncthreads();
  for (std::size_t j = threadIdx.x; j < row; j += blockDim.x) {
    double v = 0;
    for (unsigned w = 0; w < warps; ++w) v += acc[w * row + j];
    partials[blockIdx.x * row + j] = v;
  }
}

template <class Model>
void run_model(const char* name, const Model& m) {
  auto view = m.program().view();
  using View = decltype(view);
  constexpr std::size_t d = tyche::detail::static_dim_v<typename View::layout_type>;
  // The model's data on the device, re-pointed as the launcher does (compile/relocate.hpp).
  std::map<const void*, std::size_t> extent;
  tyche::for_each_data_buffer(view, [&](auto*& ptr, std::size_t count) {
    using V = std::remove_cv_t<std::remove_pointer_t<std::remove_reference_t<decltype(ptr)>>>;
    if (ptr != nullptr && count > 0) extent[ptr] = std::max(extent[ptr], count * sizeof(V));
  });
  std::map<const void*, void*> copy;
  for (const auto& [ptr, bytes] : extent) {
    void* dev = nullptr;
    cudaMalloc(&dev, bytes);
    cudaMemcpy(dev, ptr, bytes, cudaMemcpyHostToDevice);
    copy[ptr] = dev;
  }
  tyche::for_each_data_buffer(view, [&](auto*& ptr, std::size_t count) {
    using V = std::remove_cv_t<std::remove_pointer_t<std::remove_reference_t<decltype(ptr)>>>;
    if (ptr != nullptr && count > 0) ptr = static_cast<const V*>(copy.at(ptr));
  });
  cudaDeviceProp p{};
  cudaGetDeviceProperties(&p, 0);
  std::vector<double> theta(d, 0.01);
  double* theta_dev = nullptr;
  cudaMalloc(&theta_dev, d * sizeof(double));
  cudaMemcpy(theta_dev, theta.data(), d * sizeof(double), cudaMemcpyHostToDevice);
  const std::size_t max_blocks = static_cast<std::size_t>(p.multiProcessorCount) * 8;
  double* partials = nullptr;
  cudaMalloc(&partials, max_blocks * (d + 1) * sizeof(double));
  double* workspace = nullptr;
  if (view.workspace_size > 0)
    cudaMalloc(&workspace, max_blocks * threads * view.workspace_size * sizeof(double));
  const std::size_t small = (d + (threads / 32) * (d + 1)) * sizeof(double);

  auto one = [&](auto kernel, const char* variant, int min_blocks, bool force_one, unsigned tiles, bool shared_grad = false,
                 unsigned cap = 0) {
    cudaFuncAttributes a{};
    cudaFuncGetAttributes(&a, kernel);
    // Forcing one block per SM: ask for more shared memory than two blocks could have.
    const std::size_t grad_bytes = shared_grad ? threads * (d | 1) * sizeof(double) : 0;
    const std::size_t shared_bytes = force_one ? static_cast<std::size_t>(p.sharedMemPerBlockOptin) : small + grad_bytes;
    if (shared_bytes > 48 * 1024)
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_bytes));
    int per_sm = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, shared_bytes);
    unsigned blocks = static_cast<unsigned>(per_sm * p.multiProcessorCount);
    if (cap > 0) blocks = std::min(blocks, cap);
    if (per_sm < 1 || blocks > max_blocks) return;
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    for (int i = 0; i < 3; ++i) kernel<<<blocks, threads, shared_bytes>>>(view, theta_dev, partials, workspace, tiles);
    const int reps = 50;
    cudaEventRecord(e0);
    for (int i = 0; i < reps; ++i) kernel<<<blocks, threads, shared_bytes>>>(view, theta_dev, partials, workspace, tiles);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    const cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) {
      std::fprintf(stderr, "%s %s: %s\n", name, variant, cudaGetErrorString(err));
      return;
    }
    std::printf("%s,%s_min%d_blocks%u,%d,%zu,%d,%u,%.2f\n", name, variant, min_blocks, blocks, a.numRegs,
                a.localSizeBytes, per_sm, tiles, 1e3 * ms / reps);
    std::fflush(stdout);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
  };
  one(workers_pass<View, 1>, "natural", 1, false, 1);
  one(workers_pass<View, 2>, "natural", 2, false, 1);
  one(workers_pass<View, 3>, "natural", 3, false, 1);
  one(workers_pass<View, 4>, "natural", 4, false, 1);
  one(workers_pass<View, 1>, "one_block_per_sm", 1, true, 1);
  one(workers_pass<View, 1>, "natural", 1, false, 8);
  one(workers_pass<View, 2>, "natural", 2, false, 8);
  // Each thread's gradient in shared memory instead of local memory.
  one(workers_pass<View, 1, true>, "shared_gradient", 1, false, 1, true);
  one(workers_pass<View, 1, true>, "shared_gradient", 1, false, 8, true);
  // Fewer workers: at most 16, 33, 66 blocks (as many as the device holds otherwise).
  for (const unsigned cap : {16u, 33u, 66u, 132u}) one(workers_pass<View, 1>, "natural", 1, false, 1, false, cap);
  for (const auto& [ptr, dev] : copy) cudaFree(dev);
  cudaFree(theta_dev);
  cudaFree(partials);
  if (workspace != nullptr) cudaFree(workspace);
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "cuda_workers: no CUDA device\n");
    return 77;
  }
  std::printf("model,variant,registers,local_bytes,blocks_per_sm,tiles,us_per_pass\n");
  const covertype_data cd;
  run_model("covertype", covertype(cd));
  const covertype_float_data cf(cd);
  run_model("covertype_float", covertype_float(cf));
  const regression_data rd;
  run_model("logistic_regression", logistic_regression(rd));
  return 0;
}
