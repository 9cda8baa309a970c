// tyche/backends/cuda/nuts.cuh — the CUDA launcher of the device executor (tyche::cuda): one chain
// per CUDA thread running device_chain_run (samplers/nuts/device_chain.hpp) on the device, the
// model's program_view a kernel argument (by value: it is trivially copyable, and its parameter
// names are spelled as words so nvcc's generated host code can name its type, core/meta.hpp)
// with its data copied to device memory. Included by samplers/nuts/sampler.hpp in translation
// units compiled by nvcc only. The host's part of the run is samplers/nuts/device_executor.hpp.
#pragma once
#include <cuda_runtime.h>

#include <tyche/compile/relocate.hpp>
#include <tyche/config.hpp>
#include <tyche/samplers/nuts/device_chain.hpp>
#include <tyche/samplers/nuts/device_executor.hpp>

#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <map>
#include <thread>
#include <memory>
#include <new>
#include <type_traits>
#include <stdexcept>
#include <string>
#include <vector>

namespace tyche::samplers::detail {

/// Throws for a CUDA error, naming the call.
inline void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("tyche::nuts: cuda: ") + what + ": " + cudaGetErrorString(e));
}

template <class Target>
__global__ void device_chains_setup_kernel(device_chain* states, double* buffers, device_run r, const double* init,
                                           int chains) {
  const int c = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (c >= chains) return;
  device_chain_setup(states[c], buffers + static_cast<std::size_t>(c) * r.layout.total, r,
                     init + static_cast<std::size_t>(c) * device_chain_init_size(r.layout, r.d));
}

/// The chains' random initial points and first step sizes (device_chain_initialise), one chain
/// per thread.
template <class Target>
__global__ void device_chains_init_kernel(Target target, device_chain* states, double* buffers, device_run r,
                                          int chains) {
  const int c = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (c >= chains) return;
  device_chain state = states[c];
  device_chain_initialise(target, state, buffers + static_cast<std::size_t>(c) * r.layout.total, r);
  states[c] = state;
}

template <class Target>
__global__ void device_chains_kernel(Target target, device_chain* states, double* buffers, device_run r,
                                     double* out_q, transition_stats* out_stats, int chains) {
  const int c = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (c >= chains) return;
  device_chain state = states[c];
  device_chain_run(target, state, buffers + static_cast<std::size_t>(c) * r.layout.total, r,
                   out_q + static_cast<std::size_t>(c) * static_cast<std::size_t>(r.block) * r.d,
                   out_stats + static_cast<std::size_t>(c) * static_cast<std::size_t>(r.block));
  states[c] = state;
}

// ---- cuda_gradient::whole_device: every thread of the device on each chain's gradient -------------
//
// One cooperative launch (every block resident at once). Block 0's first `chains` threads are the
// chains' controllers: each runs device_chain_run for its chain, and its target posts the point
// and waits while the other blocks (the workers) compute the gradient. The workers' thread w of W
// evaluates its parts of each posted chain's log density (program_view::value_and_gradient_part:
// its share of every loop over the data). Rounds of three grid barriers — A: points posted;
// B: block sums written; C: sums added — serve every chain that is not finished: the chains
// advance in lockstep, one gradient each per round. (cuda::separate_controllers puts the
// controllers in a kernel of their own, launched first, and the workers in another on the SMs
// left free, so the workers do not get the controllers' 255 registers; measured no faster, off.)
// Each worker's gradient lives in shared memory where it fits (cuda::shared_gradient, the
// default): in local memory it spills to L2 and each part's zeroing, adjoint updates and warp sums
// wait on it (measured 1.6-2.8x slower per leapfrog). A thread waiting more than
// grid_wait_limit_ns at a barrier gives the launch up (barrier[2]), and the host throws — with
// separate controllers only: one cooperative launch guarantees that every block runs.
//
// Chains can share each read of the data (cuda::tiles; one tile, each chain its own pass, is the
// automatic choice: more measured slower, grid_tile_values): a worker's share is cut into
// `tiles` parts (part t·W + w of tiles·W, so that tile t of the grid is one contiguous stretch
// of every loop), and for each tile the worker evaluates every chain of a group before it moves
// on — the tile's data come from device memory once and from the SM's cache for the group's
// other chains. After each
// (tile, chain) evaluation a warp adds its 32 lanes' values and gradients by recursive halving
// (warp_add_to) into the warp's accumulators for that chain in shared memory; after the last
// tile the block adds its warps' accumulators (one sum per chain and value, in partials), and
// after B the workers add those block sums (a warp per value). The order of every addition is
// fixed — it depends on the tiles, the block and warp shapes (the blocks per SM, which a group's
// shared memory can change when registers allow more than one), never on timing or on which
// other chains are active —, so a run's draws do not depend on timing. The controllers never meet a
// block barrier (__syncthreads), only the grid barrier, which each arrives at by itself; in a
// worker block its thread 0 arrives for the block.

/// What the controllers and the workers of a whole_device launch exchange, in device memory.
struct grid_exchange {
  double* theta = nullptr;     // [chains][d]: the points posted
  int* active = nullptr;       // [chains]: 1 while a chain has posted a point this round
  double* partials = nullptr;  // [worker blocks][chains][d + 1]: each block's sums (value, gradient)
  double* result = nullptr;    // [chains][d + 1]: the sums
  double* scratch = nullptr;   // [workers][d]: a part's gradient (models without a static dimension)
  double* workspace = nullptr; // [workers][workspace]: the model's workspace of each worker
  unsigned* barrier = nullptr; // arrivals, generation
  unsigned expected = 0;       // arrivals per barrier: worker blocks + chains
  unsigned tiles = 1;          // parts of each worker's share: chains of a group share each tile's read
  unsigned group = 1;          // chains evaluated per tile (shared memory: their points and accumulators)
  unsigned gradient_stride = 0; // > 0: each worker's gradient in shared memory, this many values apart
  volatile int* started = nullptr;  // separate kernels: host-mapped, set when the controllers run
  unsigned long long wait_limit_ns = 0;  // > 0: a thread waiting this long at the barrier gives up
};

/// Nanoseconds a thread waits at the grid barrier before it gives up a launch with separate
/// controllers (the workers' kernel did not start beside the controllers': another program on
/// the GPU, MPS limits, kernels serialised by a profiler or CUDA_LAUNCH_BLOCKING).
inline constexpr unsigned long long grid_wait_limit_ns = 60ull * 1000 * 1000 * 1000;

/// The device's clock in nanoseconds (%globaltimer).
__device__ inline unsigned long long grid_now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// Adds the 32 lanes' values get(0 … n) (each lane its own) into acc[0 … n) (the warp's
/// accumulators in shared memory), 16 values at a time: four halving steps (lanes 16, 8, 4, 2
/// apart) leave lanes 2i and 2i + 1 with partial sums of value i of the 16, a last exchange adds
/// them, and lane 2i adds the sum to acc. 16 shuffles per 16 values.
template <class Get>
__device__ inline void warp_add_to(Get get, std::size_t n, double* acc, unsigned lane) {
  for (std::size_t base = 0; base < n; base += 16) {
    double v[16];
#pragma unroll
    for (unsigned j = 0; j < 16; ++j) v[j] = base + j < n ? get(base + j) : 0.0;
#pragma unroll
    for (unsigned half = 8; half >= 1; half /= 2) {
      const bool upper = (lane & (2 * half)) != 0;  // keeps values [half, 2·half) of those left
#pragma unroll
      for (unsigned j = 0; j < half; ++j) {
        const double keep = upper ? v[j + half] : v[j], give = upper ? v[j] : v[j + half];
        v[j] = keep + __shfl_xor_sync(0xffffffffu, give, 2 * half);
      }
    }
    v[0] += __shfl_xor_sync(0xffffffffu, v[0], 1);
    const std::size_t i = base + (lane >> 1);
    if ((lane & 1u) == 0 && i < n) acc[i] += v[0];
  }
}

/// A barrier of the whole grid, arrived at by one thread (a worker block's thread 0, or a
/// controller): the last arrival of a generation resets the count and starts the next one.
/// barrier[2] ≠ 0: the launch was given up (a thread waited longer than limit_ns > 0); returns
/// false then, and every thread leaves.
__device__ inline bool grid_arrive(unsigned* barrier, unsigned expected, unsigned long long limit_ns) {
  volatile unsigned* generation = barrier + 1;
  volatile unsigned* failed = barrier + 2;
  const unsigned g = *generation;
  __threadfence();
  if (atomicAdd(barrier, 1u) == expected - 1) {
    atomicExch(barrier, 0u);
    __threadfence();
    atomicAdd(barrier + 1, 1u);
  } else {
    const unsigned long long since = grid_now_ns();
    for (unsigned spin = 0; *generation == g; ++spin) {
      __nanosleep(32);
      if (*failed != 0) return false;
      if (limit_ns > 0 && (spin & 1023u) == 1023u && grid_now_ns() - since > limit_ns) {
        atomicExch(barrier + 2, 1u);
        return false;
      }
    }
  }
  __threadfence();
  return *failed == 0;
}

/// A worker block at the grid barrier; false: the launch was given up.
__device__ inline bool grid_arrive_block(const grid_exchange& x, int* flag) {
  __syncthreads();
  if (threadIdx.x == 0) *flag = grid_arrive(x.barrier, x.expected, x.wait_limit_ns) ? 1 : 0;
  __syncthreads();
  return *flag != 0;
}

/// Threads per block of the whole_device kernel. Measured on an H100 (bench/cuda_executor.cu
/// --data, covertype): 128 or 256 threads run alike; forcing 2 or 4 blocks of 256 per SM
/// (__launch_bounds__, 128 or 64 registers instead of 231) was 1.5x and 1.9x slower.
inline constexpr int grid_threads_per_block = 256;
/// Shared memory per block for the chains of a group (their points, the warps' accumulators).
inline constexpr std::size_t grid_shared_budget = 60 * 1024;
/// Data values per worker and tile when chains share reads (cuda::tiles = 0); 0: one tile.
/// Measured on an H200 (bench/cuda_executor.cu --share, covertype, 8 chains): 8, 15, 30 and 60
/// tiles cost 1.2, 1.5, 2.4 and 4.4 times one tile per chain-leapfrog — a tile's evaluation
/// has a fixed cost about as large as a row's, and the group's re-reads of a tile saved nothing
/// measurable — so the automatic choice is one tile.
inline constexpr int grid_tile_values = 0;

#if defined(TYCHE_CUDA_GRID_PROFILE)
// A diagnostic build (-DTYCHE_CUDA_GRID_PROFILE): clock64() cycles of chain 0's controller (its
// own step between rounds; its wait for a round) and of worker block 1's thread 0 (from A to its
// block sums; waiting at B; the sums across blocks; waiting at C; waiting at A), and the rounds,
// summed over a launch and printed by the launcher to stderr.
__device__ unsigned long long grid_profile[8];
#define TYCHE_GRID_CLOCK(var) const long long var = clock64()
#define TYCHE_GRID_ADD(k, v) atomicAdd(&grid_profile[k], static_cast<unsigned long long>(v))
#else
#define TYCHE_GRID_CLOCK(var)
#define TYCHE_GRID_ADD(k, v)
#endif

/// A chain's controller (thread c of the controllers): runs device_chain_run, its target posting
/// the point and meeting the workers at the grid barrier; then serves the other chains' rounds.
template <class View>
__device__ void grid_controller(device_chain* states, double* buffers, const device_run& r, double* out_q,
                                transition_stats* out_stats, int chains, const grid_exchange& x, int c) {
  const std::size_t d = r.d;
  const std::size_t row = d + 1;  // value, then gradient
#if defined(TYCHE_CUDA_GRID_PROFILE)
  long long left = 0;  // when chain 0's controller last left a round
#endif
  bool ok = true;  // false: the launch was given up (grid_arrive); the chain's evaluations are NaN
  auto target = [&](const double* q, double* grad, double*) -> double {
    if (!ok) return __longlong_as_double(0x7ff8000000000000LL);
    TYCHE_GRID_CLOCK(entered);
#if defined(TYCHE_CUDA_GRID_PROFILE)
    if (c == 0 && left != 0) TYCHE_GRID_ADD(0, entered - left);
#endif
    double* slot = x.theta + static_cast<std::size_t>(c) * d;
    for (std::size_t i = 0; i < d; ++i) __stcg(slot + i, q[i]);
    __stcg(x.active + c, 1);
    ok = grid_arrive(x.barrier, x.expected, x.wait_limit_ns) && grid_arrive(x.barrier, x.expected, x.wait_limit_ns) &&  // A, B
         grid_arrive(x.barrier, x.expected, x.wait_limit_ns);                                         // C
    if (!ok) return __longlong_as_double(0x7ff8000000000000LL);
    const double* result = x.result + static_cast<std::size_t>(c) * row;
    for (std::size_t i = 0; i < d; ++i) grad[i] = __ldcg(result + 1 + i);
#if defined(TYCHE_CUDA_GRID_PROFILE)
    left = clock64();
    if (c == 0) TYCHE_GRID_ADD(1, left - entered);
#endif
    return __ldcg(result);
  };
  device_chain state = states[c];
  device_chain_run(target, state, buffers + static_cast<std::size_t>(c) * r.layout.total, r,
                   out_q + static_cast<std::size_t>(c) * static_cast<std::size_t>(r.block) * d,
                   out_stats + static_cast<std::size_t>(c) * static_cast<std::size_t>(r.block));
  states[c] = state;
  __stcg(x.active + c, 0);
  if (!ok) return;
  for (;;) {  // serve the rounds of the other chains until none is left
    if (!grid_arrive(x.barrier, x.expected, x.wait_limit_ns)) return;  // A
    bool any = false;
    for (int k = 0; k < chains; ++k) any = any || __ldcg(x.active + k) != 0;
    if (!any) return;
    if (!grid_arrive(x.barrier, x.expected, x.wait_limit_ns) || !grid_arrive(x.barrier, x.expected, x.wait_limit_ns)) return;  // B, C
  }
}

/// A block of workers, block `block` of `blocks`: every round, its threads' parts of each posted
/// chain's evaluation, added into the block's sums; then its share of the sums across blocks.
template <class View>
__device__ void grid_workers(const View& view, int chains, const grid_exchange& x, std::size_t block,
                             std::size_t blocks) {
  const std::size_t d = view.dim();
  const std::size_t row = d + 1;  // value, then gradient
  extern __shared__ double shared[];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  const std::size_t group = x.group;
  double* theta = shared;                   // [group][d]: the group's points
  double* acc = shared + group * d;         // [warps][group][d + 1]: each warp's sums
  double* shared_grad = acc + warps * group * row;  // [threads][gradient_stride]: the workers' gradients
  int* list = reinterpret_cast<int*>(shared_grad + static_cast<std::size_t>(blockDim.x) * x.gradient_stride);
  // [chains + 2]: the active chains, their count, the barrier's answer
  const std::size_t worker = block * blockDim.x + threadIdx.x, workers = blocks * blockDim.x;
  const std::size_t parts = static_cast<std::size_t>(x.tiles) * workers;
  double* workspace = x.workspace != nullptr ? x.workspace + worker * view.workspace_size : nullptr;
  constexpr std::size_t static_dim = tyche::detail::static_dim_v<typename View::layout_type>;
  constexpr bool local_gradient = static_dim != dynamic_extent && static_dim <= 256;
  double local[local_gradient ? static_dim : 1];
  double* grad = x.gradient_stride > 0 ? shared_grad + threadIdx.x * x.gradient_stride
                 : local_gradient       ? local
                                        : x.scratch + worker * d;
  int* flag = list + chains + 1;
  for (;;) {
    TYCHE_GRID_CLOCK(before_a);
    if (!grid_arrive_block(x, flag)) return;  // A
    TYCHE_GRID_CLOCK(after_a);
    if (threadIdx.x == 0) {  // the chains that posted a point, in order
      int n = 0;
      for (int c = 0; c < chains; ++c)
        if (__ldcg(x.active + c) != 0) list[n++] = c;
      list[chains] = n;
    }
    __syncthreads();
    const int active = list[chains];
    const bool any = active > 0;
    for (int first = 0; first < active; first += static_cast<int>(group)) {
      const int left = active - first;  // not min(): tyche::min (a vector's smallest element) hides ::min here
      const std::size_t members = static_cast<std::size_t>(static_cast<int>(group) < left ? static_cast<int>(group) : left);
      for (std::size_t i = threadIdx.x; i < members * d; i += blockDim.x)
        theta[i] = __ldcg(x.theta + static_cast<std::size_t>(list[first + static_cast<int>(i / d)]) * d + i % d);
      double* mine = acc + warp * group * row;
      for (std::size_t i = lane; i < members * row; i += 32) mine[i] = 0;
      __syncthreads();
      for (unsigned t = 0; t < x.tiles; ++t) {
        const std::size_t part = t * workers + worker;
        for (std::size_t k = 0; k < members; ++k) {
          const double value = view.value_and_gradient_part(theta + k * d, grad, workspace, part, parts);
          warp_add_to([&](std::size_t j) { return j == 0 ? value : grad[j - 1]; }, row, mine + k * row, lane);
        }
      }
      __syncthreads();
      for (std::size_t i = threadIdx.x; i < members * row; i += blockDim.x) {
        const std::size_t k = i / row, j = i % row;
        double v = 0;
        for (unsigned w = 0; w < warps; ++w) v += acc[(w * group + k) * row + j];
        __stcg(x.partials + (block * static_cast<std::size_t>(chains) + static_cast<std::size_t>(list[first + static_cast<int>(k)])) * row + j, v);
      }
      __syncthreads();  // theta and acc are the next group's
    }
    if (!any) return;
    TYCHE_GRID_CLOCK(before_b);
    if (!grid_arrive_block(x, flag)) return;  // B
    TYCHE_GRID_CLOCK(after_b);
    // The block sums of value k added by a warp: lane l takes blocks l, l + 32, …, then the
    // lanes' sums are added by shuffles (independent loads in flight, not one chain of them).
    const std::size_t values = static_cast<std::size_t>(chains) * row;
    for (std::size_t k = worker / 32; k < values; k += workers / 32) {
      double v = 0;
      for (std::size_t b = lane; b < blocks; b += 32) v += __ldcg(x.partials + b * values + k);
      for (unsigned offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
      if (lane == 0) __stcg(x.result + k, v);
    }
    TYCHE_GRID_CLOCK(before_c);
    if (!grid_arrive_block(x, flag)) return;  // C
#if defined(TYCHE_CUDA_GRID_PROFILE)
    if (block == 0 && threadIdx.x == 0) {
      const long long after_c = clock64();
      TYCHE_GRID_ADD(2, before_b - after_a);
      TYCHE_GRID_ADD(3, after_b - before_b);
      TYCHE_GRID_ADD(4, before_c - after_b);
      TYCHE_GRID_ADD(5, after_c - before_c);
      TYCHE_GRID_ADD(6, after_a - before_a);
      TYCHE_GRID_ADD(7, 1);
    }
#endif
  }
}

/// whole_device in one cooperative launch: block 0 the controllers, blocks 1 … B−1 the workers.
/// Every thread gets the registers the controllers' NUTS code needs (cuda::separate_controllers
/// = false).
template <class View>
__global__ void __launch_bounds__(grid_threads_per_block) device_grid_kernel(View view, device_chain* states, double* buffers, device_run r, double* out_q,
                                   transition_stats* out_stats, int chains, grid_exchange x) {
  if (blockIdx.x == 0) {
    const int c = static_cast<int>(threadIdx.x);
    if (c < chains) grid_controller<View>(states, buffers, r, out_q, out_stats, chains, x, c);
    return;
  }
  grid_workers(view, chains, x, blockIdx.x - 1, gridDim.x - 1);
}

#if TYCHE_CUDA_SEPARATE_CONTROLLERS
/// whole_device in two kernels that run side by side (cuda::separate_controllers; off by default):
/// the controllers, one block, launched first; their thread 0 says so through host-mapped memory,
/// and then the workers are launched on the SMs left free. The workers' kernel gets only the
/// registers its own code needs, so more of its warps fit on an SM.
template <class View>
__global__ void __launch_bounds__(grid_threads_per_block) device_grid_controllers_kernel(device_chain* states, double* buffers, device_run r, double* out_q,
                                   transition_stats* out_stats, int chains, grid_exchange x) {
  if (threadIdx.x == 0) {
    *x.started = 1;
    __threadfence_system();
  }
  const int c = static_cast<int>(threadIdx.x);
  if (c < chains) grid_controller<View>(states, buffers, r, out_q, out_stats, chains, x, c);
}

template <class View>
__global__ void __launch_bounds__(grid_threads_per_block) device_grid_workers_kernel(View view, int chains, grid_exchange x) {
  grid_workers(view, chains, x, blockIdx.x, gridDim.x);
}
#endif
#undef TYCHE_GRID_CLOCK
#undef TYCHE_GRID_ADD

/// Host memory the blocks of draws are copied into: page-locked (cudaMallocHost), which the copy
/// engine writes directly, or ordinary memory where the driver refuses to lock that much.
class host_buffer {
 public:
  host_buffer() = default;
  host_buffer(const host_buffer&) = delete;
  host_buffer& operator=(const host_buffer&) = delete;
  ~host_buffer() {
    if (p_ == nullptr) return;
    if (pinned_) cudaFreeHost(p_);
    else std::free(p_);
  }
  void* allocate(std::size_t bytes) {
    if (cudaMallocHost(&p_, bytes) == cudaSuccess) {
      pinned_ = true;
      return p_;
    }
    (void)cudaGetLastError();  // not this run's error: ordinary memory instead
    p_ = std::malloc(bytes);
    if (p_ == nullptr) throw std::bad_alloc();
    return p_;
  }
  [[nodiscard]] void* get() const { return p_; }

 private:
  void* p_ = nullptr;
  bool pinned_ = false;
};

/// Device memory, freed with the object.
class device_buffer {
 public:
  device_buffer() = default;
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  ~device_buffer() {
    if (p_ != nullptr) cudaFree(p_);
  }
  void* allocate(std::size_t bytes, const char* what) {
    cuda_check(cudaMalloc(&p_, bytes > 0 ? bytes : 1), what);
    return p_;
  }
  [[nodiscard]] void* get() const { return p_; }

 private:
  void* p_ = nullptr;
};

/// The CUDA launcher: the same interface as host_launcher.
template <class View>
class cuda_launcher {
  static_assert(std::is_trivially_copyable_v<View>, "tyche::cuda: run_nuts_cuda checks this first");

 public:
  using target_type = view_log_density<View>;

  /// Checks the device and the kernel's limits; nothing is allocated yet. whole_device: the
  /// chains' gradients computed by every thread (cuda_gradient::whole_device).
  cuda_launcher(const View& view, const cuda& exec, int chains, bool whole_device = false)
      : exec_(exec), chains_(chains), whole_device_(whole_device), target_{view} {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
      throw std::runtime_error("tyche::nuts: cuda: no CUDA device is available (cudaGetDeviceCount); "
                               "tyche::cuda{.emulate = true} runs the device code on the host");
    if (exec.device >= devices)
      throw std::invalid_argument("tyche::nuts: cuda: device = " + std::to_string(exec.device) + ", but there are " +
                                  std::to_string(devices) + " CUDA devices");
    cuda_check(cudaSetDevice(exec.device), "cudaSetDevice");
    cuda_check(cudaFuncGetAttributes(&kernel_, device_chains_kernel<target_type>), "cudaFuncGetAttributes");
    // The initialisation kernel's limits too: the block must fit both, the local memory the larger.
    cudaFuncAttributes init{};
    cuda_check(cudaFuncGetAttributes(&init, device_chains_init_kernel<target_type>), "cudaFuncGetAttributes");
    kernel_.maxThreadsPerBlock = std::min(kernel_.maxThreadsPerBlock, init.maxThreadsPerBlock);
    kernel_.localSizeBytes = std::max(kernel_.localSizeBytes, init.localSizeBytes);
    if (exec.threads_per_block > kernel_.maxThreadsPerBlock)
      throw std::invalid_argument("tyche::nuts: cuda: threads_per_block = " + std::to_string(exec.threads_per_block) +
                                  " is more than this model's kernel can run in a block (" +
                                  std::to_string(kernel_.maxThreadsPerBlock) + ", with " +
                                  std::to_string(kernel_.numRegs) + " registers per thread)");
    cuda_check(cudaGetDeviceProperties(&device_, exec.device), "cudaGetDeviceProperties");
    if (whole_device_) plan_grid();
  }

  const target_type& target() const { return target_; }
  /// Chains in lockstep: a warp's 32 threads, or (whole_device) all the chains.
  [[nodiscard]] int lanes() const { return whole_device_ ? chains_ : 32; }
  /// Useful gradients over those evaluated: per warp of 32 chains (per_thread; a warp runs as
  /// long as its longest chain), or 1 (whole_device: each round evaluates exactly the gradients
  /// of the chains that asked for one).
  [[nodiscard]] double utilization(const std::vector<device_chain>& states) const {
    // whole_device: a round evaluates the gradients of the chains that posted one, no other.
    return whole_device_ ? 1.0 : warp_utilization(states, exec_.threads_per_block);
  }
  /// whole_device: blocks and threads per block of the cooperative launch.
  [[nodiscard]] unsigned grid_blocks() const { return grid_blocks_; }
  [[nodiscard]] unsigned grid_threads() const { return grid_threads_; }

  /// Checks that the run fits in the device's free memory — the chains, the model's data and the
  /// kernel's local memory — (else throws, naming the chains and the bytes), allocates it, and
  /// copies the model's data to the device, re-pointing the view at the copies.
  void reserve(const device_plan& p, std::size_t n) {
    const device_run& r = p.run;
    // The model's data: the most bytes any node reads from each buffer (two nodes may read
    // different lengths of one buffer).
    std::map<const void*, std::size_t> extent;
    for_each_data_buffer(target_.view, [&](auto*& ptr, std::size_t count) {
      using value_type = std::remove_cv_t<std::remove_pointer_t<std::remove_reference_t<decltype(ptr)>>>;
      if (ptr == nullptr || count == 0) return;
      std::size_t& bytes = extent[ptr];
      bytes = std::max(bytes, checked_product(count, sizeof(value_type), "the model's data"));
    });
    std::size_t data_bytes = 0;
    for (const auto& [ptr, bytes] : extent) data_bytes += bytes;
    const std::size_t chains_bytes = checked_product(n, device_bytes_per_chain(p), "the chains");
    // The driver reserves the kernel's local memory (its stack) for every thread the device can
    // hold at once.
    const std::size_t local_bytes =
        checked_product(static_cast<std::size_t>(kernel_.localSizeBytes),
                        static_cast<std::size_t>(device_.maxThreadsPerMultiProcessor) *
                            static_cast<std::size_t>(device_.multiProcessorCount),
                        "the kernel's local memory");
    const std::size_t exchange_bytes = whole_device_ ? grid_exchange_bytes(r.d) : 0;
    if (whole_device_) exchange_.tiles = grid_tiles(data_bytes / sizeof(double));
    const std::size_t need = chains_bytes + data_bytes + local_bytes + exchange_bytes;
    std::size_t free_bytes = 0, total_bytes = 0;
    cuda_check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    if (need < chains_bytes || need > free_bytes)
      throw std::runtime_error("tyche::nuts: cuda: " + std::to_string(n) + " chains need " + std::to_string(need) +
                               " bytes of device memory (" + std::to_string(device_bytes_per_chain(p)) +
                               " per chain, with " + std::to_string(p.block) + " draws per launch; " +
                               std::to_string(data_bytes) + " of model data; " + std::to_string(local_bytes) +
                               " of the kernel's local memory; " + std::to_string(exchange_bytes) +
                               " for the threads' shares of the gradients), and the device has " +
                               std::to_string(free_bytes) +
                               " of " + std::to_string(total_bytes) +
                               " bytes free: use fewer chains, or a smaller cuda::draws_per_launch");
    states_ = static_cast<device_chain*>(states_buffer_.allocate(n * sizeof(device_chain), "cudaMalloc (chains)"));
    buffers_ = static_cast<double*>(buffers_buffer_.allocate(n * r.layout.total * sizeof(double), "cudaMalloc (chain buffers)"));
    out_q_ = static_cast<double*>(
        out_q_buffer_.allocate(n * static_cast<std::size_t>(p.block) * r.d * sizeof(double), "cudaMalloc (draws)"));
    out_stats_ = static_cast<transition_stats*>(out_stats_buffer_.allocate(
        n * static_cast<std::size_t>(p.block) * sizeof(transition_stats), "cudaMalloc (sampler statistics)"));
    if (whole_device_) allocate_exchange(r.d);
    std::map<const void*, void*> copy;
    for (const auto& [ptr, bytes] : extent) {
      data_.push_back(std::make_unique<device_buffer>());
      void* dev = data_.back()->allocate(bytes, "cudaMalloc (model data)");
      cuda_check(cudaMemcpy(dev, ptr, bytes, cudaMemcpyHostToDevice), "cudaMemcpy (model data)");
      copy[ptr] = dev;
    }
    for_each_data_buffer(target_.view, [&](auto*& ptr, std::size_t count) {
      using value_type = std::remove_cv_t<std::remove_pointer_t<std::remove_reference_t<decltype(ptr)>>>;
      if (ptr == nullptr || count == 0) return;
      ptr = static_cast<const value_type*>(copy.at(ptr));
    });
  }

  void setup(const device_plan& p, std::vector<device_chain>& states, const std::vector<double>& init) {
    const std::size_t n = states.size();
    const device_run& r = p.run;
    device_buffer init_buffer;
    auto* init_dev = static_cast<double*>(init_buffer.allocate(init.size() * sizeof(double), "cudaMalloc (initial values)"));
    cuda_check(cudaMemcpy(init_dev, init.data(), init.size() * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy (initial values)");
    cuda_check(cudaMemcpy(states_, states.data(), n * sizeof(device_chain), cudaMemcpyHostToDevice), "cudaMemcpy (chains)");
    cuda_check(cudaMemset(buffers_, 0, n * r.layout.total * sizeof(double)), "cudaMemset");
    (void)cudaGetLastError();  // an earlier error of this thread is not this launch's
    device_chains_setup_kernel<target_type><<<blocks(), exec_.threads_per_block>>>(states_, buffers_, r, init_dev, chains_);
    cuda_check(cudaGetLastError(), "launch (setup)");
    cuda_check(cudaDeviceSynchronize(), "setup kernel");
    block_ = static_cast<std::size_t>(p.block);
    d_ = r.d;
  }

  /// The chains' random initialisation on the device (device_chain_initialise, one chain per
  /// thread); the states come back in `states`.
  template <class Target>
  void initialise(const device_plan& p, std::vector<device_chain>& states, const Target& target) {
    const std::size_t n = states.size();
    const device_run& r = p.run;
    cuda_check(cudaMemcpy(states_, states.data(), n * sizeof(device_chain), cudaMemcpyHostToDevice), "cudaMemcpy (chains)");
    cuda_check(cudaMemset(buffers_, 0, n * r.layout.total * sizeof(double)), "cudaMemset");
    (void)cudaGetLastError();  // an earlier error of this thread is not this launch's
    device_chains_init_kernel<Target><<<blocks(), exec_.threads_per_block>>>(target, states_, buffers_, r, chains_);
    cuda_check(cudaGetLastError(), "launch (initialisation)");
    cuda_check(cudaDeviceSynchronize(), "initialisation kernel");
    read_states(states);
    block_ = static_cast<std::size_t>(p.block);
    d_ = r.d;
  }

  /// during() on the host while a launched kernel runs; should it throw, the kernel is waited for
  /// first (its error, if any, is not this one's).
  template <class During>
  static void run_during(During& during) {
    try {
      during();
    } catch (...) {
      (void)cudaDeviceSynchronize();
      throw;
    }
  }

  /// Runs the chains up to r.until; `during()` runs on this thread while the kernel does (the
  /// host's own work of the run), and the call returns when both are done.
  template <class Target, class During>
  void launch(const Target& target, const device_run& r, During&& during) {
    (void)cudaGetLastError();  // an earlier error of this thread is not this launch's
    if (whole_device_) {
      // Separate controllers: on the controllers' stream (a non-blocking stream does not wait
      // for the legacy default stream), so that it is done before they arrive.
      cuda_check(separate_controllers()
                     ? cudaMemsetAsync(exchange_.barrier, 0, 3 * sizeof(unsigned), streams_[0].get())
                     : cudaMemset(exchange_.barrier, 0, 3 * sizeof(unsigned)),
                 "cudaMemset (grid barrier)");
      View view = target.view;
      device_run run = r;
      int chains = chains_;
      grid_exchange x = exchange_;
      if (separate_controllers()) {
        run_during(during);
#if TYCHE_CUDA_SEPARATE_CONTROLLERS
        launch_separate(view, run, chains, x);
#endif
      } else {
        void* args[] = {&view, &states_, &buffers_, &run, &out_q_, &out_stats_, &chains, &x};
        cuda_check(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(&device_grid_kernel<View>),
                                               dim3(grid_blocks_), dim3(grid_threads_), args, grid_shared_bytes_, nullptr),
                   "cudaLaunchCooperativeKernel (whole_device)");
        run_during(during);
        cuda_check(cudaDeviceSynchronize(), "NUTS kernel (whole_device)");
      }
      unsigned failed = 0;
      cuda_check(cudaMemcpy(&failed, exchange_.barrier + 2, sizeof failed, cudaMemcpyDeviceToHost),
                 "cudaMemcpy (grid barrier)");
      if (failed != 0)  // separate controllers only (wait_limit_ns)
        throw std::runtime_error(
            "tyche::nuts: cuda: gradient = whole_device with separate_controllers: a thread waited more than 60 s at "
            "the grid barrier, and the launch was given up: the controllers' and the workers' kernels did not run side "
            "by side (another program on the GPU, a profiler serialising kernels, CUDA_LAUNCH_BLOCKING?); "
            "cuda{.separate_controllers = false} (the default) runs them in one cooperative launch");
#if defined(TYCHE_CUDA_GRID_PROFILE)
      unsigned long long p[8] = {};
      cudaMemcpyFromSymbol(p, grid_profile, sizeof p);
      const unsigned long long zero[8] = {};
      cudaMemcpyToSymbol(grid_profile, zero, sizeof zero);
      int khz = 1;
      cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, exec_.device);
      const double ms = 1.0 / static_cast<double>(khz);  // cycles → ms
      std::fprintf(stderr,
                   "grid profile (ms): chain 0 step %.3f, chain 0 in rounds %.3f; worker: A->sums %.3f, wait B %.3f, "
                   "sums across blocks %.3f, wait C %.3f, wait A %.3f; rounds %llu\n",
                   p[0] * ms, p[1] * ms, p[2] * ms, p[3] * ms, p[4] * ms, p[5] * ms, p[6] * ms, p[7]);
#endif
      return;
    }
    device_chains_kernel<Target><<<blocks(), exec_.threads_per_block>>>(target, states_, buffers_, r, out_q_, out_stats_,
                                                                        chains_);
    cuda_check(cudaGetLastError(), "launch");
    run_during(during);
    cuda_check(cudaDeviceSynchronize(), "NUTS kernel");
  }

  /// The last launch's block of draws and statistics, copied into host buffers kept for the run
  /// (allocated at the first block; the draws' buffer is not zeroed first).
  void read_block(const double*& q, const transition_stats*& stats) {
    const std::size_t n = static_cast<std::size_t>(chains_), values = n * block_ * d_, rows = n * block_;
    auto* host_q = static_cast<double*>(host_q_.get() ? host_q_.get() : host_q_.allocate(values * sizeof(double)));
    auto* host_stats = static_cast<transition_stats*>(
        host_stats_.get() ? host_stats_.get() : host_stats_.allocate(rows * sizeof(transition_stats)));
    cuda_check(cudaMemcpy(host_q, out_q_, values * sizeof(double), cudaMemcpyDeviceToHost), "cudaMemcpy (draws)");
    cuda_check(cudaMemcpy(host_stats, out_stats_, rows * sizeof(transition_stats), cudaMemcpyDeviceToHost),
               "cudaMemcpy (sampler statistics)");
    q = host_q;
    stats = host_stats;
  }
  void read_states(std::vector<device_chain>& states) const {
    states.resize(static_cast<std::size_t>(chains_));
    cuda_check(cudaMemcpy(states.data(), states_, states.size() * sizeof(device_chain), cudaMemcpyDeviceToHost),
               "cudaMemcpy (chains)");
  }
  void read_metrics(const device_run& r, std::vector<double>& out) const {
    const std::size_t m = r.layout.metric_size;
    out.resize(static_cast<std::size_t>(chains_) * m);
    cuda_check(cudaMemcpy2D(out.data(), m * sizeof(double), buffers_ + r.layout.metric, r.layout.total * sizeof(double),
                            m * sizeof(double), static_cast<std::size_t>(chains_), cudaMemcpyDeviceToHost),
               "cudaMemcpy2D (metrics)");
  }

 private:
  // cuda::separate_controllers, in a build that compiles its kernels (TYCHE_CUDA_SEPARATE_CONTROLLERS).
  [[nodiscard]] bool separate_controllers() const { return TYCHE_CUDA_SEPARATE_CONTROLLERS && exec_.separate_controllers; }

#if TYCHE_CUDA_SEPARATE_CONTROLLERS
  // whole_device in two kernels (cuda::separate_controllers): the controllers' block first, on a
  // stream of its own; once its thread 0 has said it runs (host-mapped memory), the workers'
  // blocks, which fit on the SMs the controllers leave free (plan_grid), on another stream. Both
  // then meet at the grid barrier as in the one-kernel launch.
  void launch_separate(View& view, device_run& run, int& chains, grid_exchange& x) {
    *started_ = 0;
    void* controllers[] = {&states_, &buffers_, &run, &out_q_, &out_stats_, &chains, &x};
    const unsigned threads = static_cast<unsigned>((chains + 31) / 32 * 32);  // the chains' warps
    cuda_check(cudaLaunchKernel(reinterpret_cast<const void*>(&device_grid_controllers_kernel<View>), dim3(1),
                                dim3(threads), controllers, 0, streams_[0].get()),
               "launch (whole_device controllers)");
    const auto t0 = std::chrono::steady_clock::now();
    while (*started_ == 0) {
      if (cudaStreamQuery(streams_[0].get()) != cudaErrorNotReady) break;  // ended (or failed) already
      if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(60)) break;  // the barrier gives up
      std::this_thread::yield();
    }
    void* workers[] = {&view, &chains, &x};
    cuda_check(cudaLaunchKernel(reinterpret_cast<const void*>(&device_grid_workers_kernel<View>),
                                dim3(grid_blocks_ - 1), dim3(grid_threads_), workers, grid_shared_bytes_,
                                streams_[1].get()),
               "launch (whole_device workers)");
    cuda_check(cudaDeviceSynchronize(), "NUTS kernels (whole_device)");
  }

#endif

  [[nodiscard]] unsigned blocks() const {
    return static_cast<unsigned>((chains_ + exec_.threads_per_block - 1) / exec_.threads_per_block);
  }

  // whole_device: 256 threads per block (fewer if the kernel's registers allow fewer), as many
  // blocks as the device holds at once (a cooperative launch needs every block resident), block
  // 0 for the chains' controllers.
  //
  // cuda::separate_controllers: the workers' kernel sets the threads per block, the shared memory
  // and the blocks (as many as fit on all SMs but one: the controllers' block takes at most one
  // SM); the controllers' kernel must run the chains in one block.
  void plan_grid() {
    const bool separate = separate_controllers();
    const void* kernel = reinterpret_cast<const void*>(&device_grid_kernel<View>);
    cudaFuncAttributes a{};
    cuda_check(cudaFuncGetAttributes(&a, device_grid_kernel<View>), "cudaFuncGetAttributes (whole_device)");
    cudaFuncAttributes controllers = a;
#if TYCHE_CUDA_SEPARATE_CONTROLLERS
    if (separate) {
      kernel = reinterpret_cast<const void*>(&device_grid_workers_kernel<View>);
      cuda_check(cudaFuncGetAttributes(&a, device_grid_workers_kernel<View>), "cudaFuncGetAttributes (whole_device)");
      cuda_check(cudaFuncGetAttributes(&controllers, device_grid_controllers_kernel<View>),
                 "cudaFuncGetAttributes (whole_device controllers)");
      if (chains_ > controllers.maxThreadsPerBlock)
        throw std::invalid_argument("tyche::nuts: cuda: gradient = whole_device with " + std::to_string(chains_) +
                                    " chains: this model's controllers' kernel runs at most " +
                                    std::to_string(controllers.maxThreadsPerBlock) + " threads per block (" +
                                    std::to_string(controllers.numRegs) +
                                    " registers per thread), and each chain needs one; use fewer chains, or gradient = "
                                    "per_thread");
      cuda_check(cudaHostAlloc(reinterpret_cast<void**>(&started_host_), sizeof(int), cudaHostAllocMapped),
                 "cudaHostAlloc (whole_device)");
      started_owner_.reset(started_host_);
      started_ = started_host_;
      int* dev = nullptr;
      cuda_check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev), started_host_, 0),
                 "cudaHostGetDevicePointer (whole_device)");
      exchange_.started = dev;
      for (auto& stream : streams_) {
        cudaStream_t st = nullptr;
        cuda_check(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "cudaStreamCreate (whole_device)");
        stream.reset(st);
      }
    }
#endif
    if (separate && !device_.concurrentKernels)
      throw std::invalid_argument(std::string("tyche::nuts: cuda: device ") + device_.name +
                                  " cannot run two kernels at once, which separate_controllers needs: use "
                                  "separate_controllers = false");
    exchange_.wait_limit_ns = separate ? grid_wait_limit_ns : 0;
    if (!separate && !device_.cooperativeLaunch)
      throw std::runtime_error(std::string("tyche::nuts: cuda: device ") + device_.name +
                               " cannot run a cooperative launch, which gradient = whole_device needs: use "
                               "gradient = per_thread");
    grid_threads_ = static_cast<unsigned>(std::min(grid_threads_per_block, a.maxThreadsPerBlock / 32 * 32));
    if (grid_threads_ < 32 || chains_ > static_cast<int>(grid_threads_))
      throw std::invalid_argument("tyche::nuts: cuda: gradient = whole_device with " + std::to_string(chains_) +
                                  " chains: this model's kernel runs at most " + std::to_string(a.maxThreadsPerBlock) +
                                  " threads per block (" + std::to_string(a.numRegs) +
                                  " registers per thread), and each chain needs one; use fewer chains, or gradient = "
                                  "per_thread");
    // Shared memory: each worker's gradient (cuda::shared_gradient, when it fits: an odd stride,
    // so that a warp's 32 gradients fall in different banks), the active chains' list, and per
    // chain of a group its point and each warp's accumulators; as many chains per group as fit
    // in grid_shared_budget (or cuda::chain_group).
    const std::size_t d = target_.view.dim(), warps = grid_threads_ / 32;
    const std::size_t optin = static_cast<std::size_t>(device_.sharedMemPerBlockOptin);
    const std::size_t per_chain = (d + warps * (d + 1)) * sizeof(double);
    const std::size_t fixed = (static_cast<std::size_t>(chains_) + 2) * sizeof(int);
    const std::size_t stride = d | 1u, grad_bytes = grid_threads_ * stride * sizeof(double);
    // (With an explicit chain_group, the gradients go to shared memory only beside the whole group.)
    const std::size_t least_group = exec_.chain_group > 0 ? static_cast<std::size_t>(exec_.chain_group) : 1;
    const bool in_shared = exec_.shared_gradient && grad_bytes + least_group * per_chain + fixed <= optin;
    exchange_.gradient_stride = in_shared ? static_cast<unsigned>(stride) : 0u;
    std::size_t left = optin - std::min(optin, (in_shared ? grad_bytes : 0) + fixed);
    if (separate) {
      // As many blocks per SM as the workers' registers allow, each with its share of the SM's
      // shared memory.
      int by_registers = 0;
      const std::size_t least = (in_shared ? grad_bytes : 0) + fixed + per_chain;
      if (least > 48 * 1024)  // the occupancy of a launch with more than 48 KB needs the attribute first
        cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(least)),
                   "cudaFuncSetAttribute (shared memory)");
      cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&by_registers, kernel, static_cast<int>(grid_threads_),
                                                               least),
                 "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
      if (by_registers > 1) {
        const std::size_t share = static_cast<std::size_t>(device_.sharedMemPerMultiprocessor) /
                                      static_cast<std::size_t>(by_registers) -
                                  static_cast<std::size_t>(device_.reservedSharedMemPerBlock);
        left = std::min(left, share - std::min(share, (in_shared ? grad_bytes : 0) + fixed));
      }
    }
    std::size_t group = exec_.chain_group > 0 ? static_cast<std::size_t>(exec_.chain_group)
                                              : std::min(grid_shared_budget, left) / per_chain;
    group = std::clamp<std::size_t>(group, 1, static_cast<std::size_t>(chains_));
    exchange_.group = static_cast<unsigned>(group);
    grid_shared_bytes_ = group * per_chain + (in_shared ? grad_bytes : 0) + fixed;
    if (grid_shared_bytes_ > optin)
      throw std::invalid_argument("tyche::nuts: cuda: gradient = whole_device: a model of " + std::to_string(d) +
                                  " parameters needs " + std::to_string(grid_shared_bytes_) +
                                  " bytes of shared memory per block (" + std::to_string(group) +
                                  " chains per group), more than the device's " + std::to_string(optin) +
                                  "; use a smaller cuda::chain_group, or gradient = per_thread");
    if (grid_shared_bytes_ > 48 * 1024)
      cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(grid_shared_bytes_)),
                 "cudaFuncSetAttribute (shared memory)");
    int per_sm = 0;
    cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, static_cast<int>(grid_threads_),
                                                             grid_shared_bytes_),
               "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    // One cooperative launch: block 0 the controllers, the rest workers. Separate kernels: the
    // workers fill every SM but one, and grid_blocks_ counts the controllers' block as one.
    grid_blocks_ = separate ? static_cast<unsigned>(per_sm) * static_cast<unsigned>(device_.multiProcessorCount - 1) + 1
                            : static_cast<unsigned>(per_sm) * static_cast<unsigned>(device_.multiProcessorCount);
    if (exec_.worker_blocks > 0) grid_blocks_ = std::min(grid_blocks_, static_cast<unsigned>(exec_.worker_blocks) + 1);
    if (grid_blocks_ < 2)
      throw std::runtime_error("tyche::nuts: cuda: gradient = whole_device: this model's kernel fits " +
                               std::to_string(grid_blocks_) + " blocks of " + std::to_string(grid_threads_) +
                               " threads on the device at once, and needs 2; use gradient = per_thread");
    // reserve() counts this kernel's local memory (separate kernels: the controllers', the larger)
    kernel_ = separate && controllers.localSizeBytes > a.localSizeBytes ? controllers : a;
  }

  // Parts of each worker's share of the data (cuda::tiles): with one chain, 1 (nothing to
  // share); with more, about grid_tile_values values per worker and tile, so that a block's tile
  // stays in its SM's cache while the group's chains read it.
  [[nodiscard]] unsigned grid_tiles(std::size_t data_values) const {
    if (exec_.tiles > 0) return static_cast<unsigned>(exec_.tiles);
    if (chains_ == 1 || grid_tile_values == 0) return 1;
    const std::size_t per_tile = grid_workers() * static_cast<std::size_t>(grid_tile_values);
    return static_cast<unsigned>(std::clamp<std::size_t>((data_values + per_tile - 1) / per_tile, 1, 4096));
  }

  [[nodiscard]] std::size_t grid_workers() const {
    return static_cast<std::size_t>(grid_blocks_ - 1) * grid_threads_;
  }
  // Each worker's gradient in device memory: a model without a static dimension (or above 256)
  // whose gradients are not in shared memory.
  [[nodiscard]] bool grid_scratch() const {
    constexpr std::size_t sd = tyche::detail::static_dim_v<typename View::layout_type>;
    return !(sd != dynamic_extent && sd <= 256) && exchange_.gradient_stride == 0;
  }
  [[nodiscard]] std::size_t grid_exchange_bytes(std::size_t d) const {
    const std::size_t chains = static_cast<std::size_t>(chains_), row = d + 1;
    std::size_t doubles = chains * d + static_cast<std::size_t>(grid_blocks_ - 1) * chains * row + chains * row;
    doubles += checked_product(grid_workers(), (grid_scratch() ? d : 0) + target_.view.workspace_size,
                               "the workers' scratch");
    return doubles * sizeof(double) + chains * sizeof(int) + 3 * sizeof(unsigned);
  }
  void allocate_exchange(std::size_t d) {
    const std::size_t chains = static_cast<std::size_t>(chains_), row = d + 1;
    auto doubles = [&](std::size_t n, const char* what) {
      exchange_memory_.push_back(std::make_unique<device_buffer>());
      return static_cast<double*>(exchange_memory_.back()->allocate(n * sizeof(double), what));
    };
    exchange_.theta = doubles(chains * d, "cudaMalloc (whole_device points)");
    exchange_.partials = doubles(static_cast<std::size_t>(grid_blocks_ - 1) * chains * row, "cudaMalloc (block sums)");
    exchange_.result = doubles(chains * row, "cudaMalloc (gradients)");
    if (grid_scratch()) exchange_.scratch = doubles(grid_workers() * d, "cudaMalloc (workers' gradients)");
    if (target_.view.workspace_size > 0)
      exchange_.workspace = doubles(grid_workers() * target_.view.workspace_size, "cudaMalloc (workers' workspace)");
    exchange_memory_.push_back(std::make_unique<device_buffer>());
    exchange_.active = static_cast<int*>(exchange_memory_.back()->allocate(chains * sizeof(int), "cudaMalloc (flags)"));
    cuda_check(cudaMemset(exchange_.active, 0, chains * sizeof(int)), "cudaMemset (flags)");
    exchange_memory_.push_back(std::make_unique<device_buffer>());
    exchange_.barrier =
        static_cast<unsigned*>(exchange_memory_.back()->allocate(3 * sizeof(unsigned), "cudaMalloc (grid barrier)"));
    exchange_.expected = grid_blocks_ - 1 + static_cast<unsigned>(chains_);
  }

  cuda exec_;
  int chains_;
  bool whole_device_ = false;
  unsigned grid_blocks_ = 0, grid_threads_ = 0;
  std::size_t grid_shared_bytes_ = 0;
  grid_exchange exchange_;
  std::vector<std::unique_ptr<device_buffer>> exchange_memory_;
  target_type target_;
  cudaFuncAttributes kernel_{};
  cudaDeviceProp device_{};
  std::vector<std::unique_ptr<device_buffer>> data_;
  device_buffer states_buffer_, buffers_buffer_, out_q_buffer_, out_stats_buffer_;
  device_chain* states_ = nullptr;
  double* buffers_ = nullptr;
  double* out_q_ = nullptr;
  transition_stats* out_stats_ = nullptr;
  host_buffer host_q_, host_stats_;  // read_block's copies on the host, page-locked where the driver allows
  std::size_t block_ = 0, d_ = 0;
  // cuda::separate_controllers: the flag the controllers set when they run (host-mapped), and
  // the two kernels' streams.
  struct host_free {
    void operator()(int* p) const { cudaFreeHost(p); }
  };
  struct stream_destroy {
    void operator()(cudaStream_t s) const { cudaStreamDestroy(s); }
  };
  int* started_host_ = nullptr;
  volatile int* started_ = nullptr;
  std::unique_ptr<int, host_free> started_owner_{nullptr};
  std::unique_ptr<std::remove_pointer_t<cudaStream_t>, stream_destroy> streams_[2];
};

}  // namespace tyche::samplers::detail
