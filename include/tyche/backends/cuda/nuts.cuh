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
#include <map>
#include <memory>
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

  /// Checks the device and the kernel's limits; nothing is allocated yet.
  cuda_launcher(const View& view, const cuda& exec, int chains) : exec_(exec), chains_(chains), target_{view} {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
      throw std::runtime_error("tyche::nuts: cuda: no CUDA device is available (cudaGetDeviceCount); "
                               "tyche::cuda{.emulate = true} runs the device code on the host");
    if (exec.device >= devices)
      throw std::invalid_argument("tyche::nuts: cuda: device = " + std::to_string(exec.device) + ", but there are " +
                                  std::to_string(devices) + " CUDA devices");
    cuda_check(cudaSetDevice(exec.device), "cudaSetDevice");
    cuda_check(cudaFuncGetAttributes(&kernel_, device_chains_kernel<target_type>), "cudaFuncGetAttributes");
    if (exec.threads_per_block > kernel_.maxThreadsPerBlock)
      throw std::invalid_argument("tyche::nuts: cuda: threads_per_block = " + std::to_string(exec.threads_per_block) +
                                  " is more than this model's kernel can run in a block (" +
                                  std::to_string(kernel_.maxThreadsPerBlock) + ", with " +
                                  std::to_string(kernel_.numRegs) + " registers per thread)");
    cuda_check(cudaGetDeviceProperties(&device_, exec.device), "cudaGetDeviceProperties");
  }

  const target_type& target() const { return target_; }
  [[nodiscard]] int lanes() const { return 32; }
  [[nodiscard]] double utilization(const std::vector<device_chain>& states) const {
    return warp_utilization(states, exec_.threads_per_block);
  }

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
    const std::size_t need = chains_bytes + data_bytes + local_bytes;
    std::size_t free_bytes = 0, total_bytes = 0;
    cuda_check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    if (need < chains_bytes || need > free_bytes)
      throw std::runtime_error("tyche::nuts: cuda: " + std::to_string(n) + " chains need " + std::to_string(need) +
                               " bytes of device memory (" + std::to_string(device_bytes_per_chain(p)) +
                               " per chain, with " + std::to_string(p.block) + " draws per launch; " +
                               std::to_string(data_bytes) + " of model data; " + std::to_string(local_bytes) +
                               " of the kernel's local memory), and the device has " + std::to_string(free_bytes) +
                               " of " + std::to_string(total_bytes) +
                               " bytes free: use fewer chains, or a smaller cuda::draws_per_launch");
    states_ = static_cast<device_chain*>(states_buffer_.allocate(n * sizeof(device_chain), "cudaMalloc (chains)"));
    buffers_ = static_cast<double*>(buffers_buffer_.allocate(n * r.layout.total * sizeof(double), "cudaMalloc (chain buffers)"));
    out_q_ = static_cast<double*>(
        out_q_buffer_.allocate(n * static_cast<std::size_t>(p.block) * r.d * sizeof(double), "cudaMalloc (draws)"));
    out_stats_ = static_cast<transition_stats*>(out_stats_buffer_.allocate(
        n * static_cast<std::size_t>(p.block) * sizeof(transition_stats), "cudaMalloc (sampler statistics)"));
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

  template <class Target>
  void launch(const Target& target, const device_run& r) {
    (void)cudaGetLastError();  // an earlier error of this thread is not this launch's
    device_chains_kernel<Target><<<blocks(), exec_.threads_per_block>>>(target, states_, buffers_, r, out_q_, out_stats_,
                                                                        chains_);
    cuda_check(cudaGetLastError(), "launch");
    cuda_check(cudaDeviceSynchronize(), "NUTS kernel");
  }

  void read_block(std::vector<double>& q, std::vector<transition_stats>& stats) const {
    const std::size_t n = static_cast<std::size_t>(chains_);
    q.resize(n * block_ * d_);
    stats.resize(n * block_);
    cuda_check(cudaMemcpy(q.data(), out_q_, q.size() * sizeof(double), cudaMemcpyDeviceToHost), "cudaMemcpy (draws)");
    cuda_check(cudaMemcpy(stats.data(), out_stats_, stats.size() * sizeof(transition_stats), cudaMemcpyDeviceToHost),
               "cudaMemcpy (sampler statistics)");
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
  [[nodiscard]] unsigned blocks() const {
    return static_cast<unsigned>((chains_ + exec_.threads_per_block - 1) / exec_.threads_per_block);
  }

  cuda exec_;
  int chains_;
  target_type target_;
  cudaFuncAttributes kernel_{};
  cudaDeviceProp device_{};
  std::vector<std::unique_ptr<device_buffer>> data_;
  device_buffer states_buffer_, buffers_buffer_, out_q_buffer_, out_stats_buffer_;
  device_chain* states_ = nullptr;
  double* buffers_ = nullptr;
  double* out_q_ = nullptr;
  transition_stats* out_stats_ = nullptr;
  std::size_t block_ = 0, d_ = 0;
};

}  // namespace tyche::samplers::detail
