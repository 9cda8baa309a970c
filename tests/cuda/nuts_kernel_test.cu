// tests/cuda/nuts_kernel_test.cu — the NUTS kernel (tyche/samplers/nuts/kernel.hpp) as device
// code: one chain per CUDA thread, the whole state machine, the step-size warm-up (dual
// averaging, samplers/nuts/adaptation.hpp) and the draws on the device, no host round trip per
// leapfrog. Two targets:
//   - a 4-d Gaussian N(0, diag(1, 4, 9, 16)) written by hand: 256 chains × (300 warm-up + 400
//     draws); each coordinate's mean within 4 standard errors of 0 (the standard error from the
//     256 independent chain means) and its variance within 10 % of the truth;
//   - eight schools (non-centred, tests/support/eight_schools.hpp) through the model's
//     program_view: 128 chains × (300 + 300); every draw finite, acceptance statistics in
//     [0, 1], and the posterior mean of mu within 4 standard errors of the same kernel run on
//     the host (the two differ in the last bits of exp/log, so chain by chain they diverge).
// The kernel's buffers are the threads' parts of one device allocation. Exits 77 (ctest:
// skipped) without a GPU.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <type_traits>
#include <vector>

#include "support/eight_schools.hpp"

namespace {

using namespace tyche::samplers;
using kernel_type = nuts_kernel<double>;

struct gaussian_target {
  static constexpr std::size_t dim = 4;
  TYCHE_HD double operator()(const double* q, double* g) const {
    double s = 0;
    for (std::size_t i = 0; i < dim; ++i) {
      const double v = double((i + 1) * (i + 1));
      g[i] = -q[i] / v;
      s += q[i] * q[i] / v;
    }
    return -0.5 * s;
  }
};

using es_program = decltype(tyche_test::eight_schools_noncentered(nullptr, nullptr));
using es_view = es_program::view_type;
static_assert(std::is_trivially_copyable_v<es_view>);

struct view_target {
  const es_view* view;
  TYCHE_HD double operator()(const double* q, double* g) const { return view->value_and_gradient(q, g); }
};

/// One chain: warm-up of the step size by dual averaging, then `draws` transitions; writes
/// θ of every draw and its acceptance statistic. Runs on the host and on the device.
template <class Target>
TYCHE_HD int run_chain(const Target& target, std::size_t dim, double* storage, std::size_t storage_size,
                       int chain, int warmup, int draws, double* out_q, double* out_accept) {
  kernel_type k;
  if (k.bind(storage, storage_size, dim, 10, metric_kind::diagonal) != nuts_status::ok) return 1;
  k.rng().seed = 20261124;
  k.rng().stream[0] = static_cast<std::uint64_t>(chain);
  double q[16], g[16];
  for (std::size_t i = 0; i < dim; ++i) q[i] = 0.1 * double(i + 1) * (chain % 2 == 0 ? 1 : -1);
  const double lp = target(q, g);
  k.set_point(0, q, g, lp);
  double eps = 0.5;
  step_size_adaptation<double> adapt;
  adapt.set_mu(::log(10 * eps));
  for (int t = 0; t < warmup + draws; ++t) {
    if (k.set_step_size(0, eps) != nuts_status::ok) return 2;
    const bool start[1] = {true};
    if (k.begin(start) != nuts_status::ok) return 3;
    bool ended[1] = {false};
    while (!ended[0]) {
      k.set_pending(target(k.pending_q(), k.pending_grad()));
      k.resume(ended);
    }
    const transition_stats& s = k.stats(0);
    if (t < warmup) {
      adapt.learn(eps, s.accept_stat);
      if (t == warmup - 1) adapt.complete(eps);
    } else {
      k.get_point(0, out_q + std::size_t(t - warmup) * dim);
      out_accept[t - warmup] = s.accept_stat;
    }
  }
  return 0;
}

template <class Target>
__global__ void chains_kernel(Target target, std::size_t dim, double* storage, std::size_t storage_size, int chains,
                              int warmup, int draws, double* out_q, double* out_accept, int* status) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= chains) return;
  status[c] = run_chain(target, dim, storage + std::size_t(c) * storage_size, storage_size, c, warmup, draws,
                        out_q + std::size_t(c) * draws * dim, out_accept + std::size_t(c) * draws);
}

#define CHECK_CUDA(call)                                                        \
  do {                                                                          \
    cudaError_t err_ = (call);                                                  \
    if (err_ != cudaSuccess) {                                                  \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(err_)); \
      return -1;                                                                \
    }                                                                           \
  } while (0)

/// Runs `chains` chains of a target on the device; returns the number of failed checks (or −1
/// on a CUDA error) and the draws.
template <class Target>
int run_on_device(const Target& target, std::size_t dim, int chains, int warmup, int draws, std::vector<double>& q,
                  std::vector<double>& accept) {
  const std::size_t size = kernel_type::storage_size(dim, 10, metric_kind::diagonal);
  double *storage = nullptr, *q_dev = nullptr, *accept_dev = nullptr;
  int* status_dev = nullptr;
  CHECK_CUDA(cudaMalloc(&storage, size * chains * sizeof(double)));
  CHECK_CUDA(cudaMalloc(&q_dev, std::size_t(chains) * draws * dim * sizeof(double)));
  CHECK_CUDA(cudaMalloc(&accept_dev, std::size_t(chains) * draws * sizeof(double)));
  CHECK_CUDA(cudaMalloc(&status_dev, chains * sizeof(int)));
  chains_kernel<<<(chains + 63) / 64, 64>>>(target, dim, storage, size, chains, warmup, draws, q_dev, accept_dev,
                                           status_dev);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  q.resize(std::size_t(chains) * draws * dim);
  accept.resize(std::size_t(chains) * draws);
  std::vector<int> status(chains);
  CHECK_CUDA(cudaMemcpy(q.data(), q_dev, q.size() * sizeof(double), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(accept.data(), accept_dev, accept.size() * sizeof(double), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(status.data(), status_dev, status.size() * sizeof(int), cudaMemcpyDeviceToHost));
  cudaFree(storage);
  cudaFree(q_dev);
  cudaFree(accept_dev);
  cudaFree(status_dev);
  int failures = 0;
  for (int c = 0; c < chains; ++c)
    if (status[c] != 0) {
      std::fprintf(stderr, "chain %d: kernel status %d\n", c, status[c]);
      ++failures;
    }
  for (double a : accept)
    if (!(a >= 0 && a <= 1)) ++failures;
  for (double v : q)
    if (!std::isfinite(v)) ++failures;
  return failures;
}

/// Mean over chains of each chain's mean of coordinate k, and its standard error from the
/// spread of the chain means (independent chains).
void chain_means(const std::vector<double>& q, std::size_t dim, int chains, int draws, std::size_t k, double& mean,
                 double& se, double& var) {
  std::vector<double> m(chains, 0.0);
  double all = 0, all2 = 0;
  for (int c = 0; c < chains; ++c) {
    for (int t = 0; t < draws; ++t) {
      const double v = q[(std::size_t(c) * draws + t) * dim + k];
      m[c] += v / draws;
      all += v;
      all2 += v * v;
    }
  }
  const double n = double(chains) * draws;
  mean = all / n;
  var = all2 / n - mean * mean;
  double s = 0;
  for (double x : m) s += (x - mean) * (x - mean);
  se = std::sqrt(s / (chains - 1) / chains);
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: skipped\n");
    return 77;
  }
  int failures = 0;
  {  // the Gaussian
    const int chains = 256, warmup = 300, draws = 400;
    std::vector<double> q, accept;
    const int f = run_on_device(gaussian_target{}, gaussian_target::dim, chains, warmup, draws, q, accept);
    if (f < 0) return 1;
    failures += f;
    for (std::size_t k = 0; k < gaussian_target::dim; ++k) {
      double mean, se, var;
      chain_means(q, gaussian_target::dim, chains, draws, k, mean, se, var);
      const double truth = double((k + 1) * (k + 1));
      const bool ok = std::fabs(mean) < 4 * se && std::fabs(var / truth - 1) < 0.10;
      std::printf("gaussian x[%zu]: mean %.4f (se %.4f), variance %.4f (truth %.0f) %s\n", k, mean, se, var, truth,
                  ok ? "ok" : "FAILED");
      failures += ok ? 0 : 1;
    }
  }
  {  // eight schools through the model's program_view, against the same kernel on the host
    const int chains = 128, warmup = 300, draws = 300;
    constexpr std::size_t dim = 10;
    double *y_dev = nullptr, *inv_sigma_dev = nullptr;
    es_view* view_dev = nullptr;
    if (cudaMalloc(&y_dev, 8 * sizeof(double)) != cudaSuccess ||
        cudaMalloc(&inv_sigma_dev, 8 * sizeof(double)) != cudaSuccess ||
        cudaMalloc(&view_dev, sizeof(es_view)) != cudaSuccess)
      return 1;
    cudaMemcpy(y_dev, tyche_test::eight_schools_y, 8 * sizeof(double), cudaMemcpyHostToDevice);
    cudaMemcpy(inv_sigma_dev, tyche_test::eight_schools_inv_sigma, 8 * sizeof(double), cudaMemcpyHostToDevice);
    const auto device_program = tyche_test::eight_schools_noncentered(y_dev, inv_sigma_dev);
    cudaMemcpy(view_dev, &device_program.view(), sizeof(es_view), cudaMemcpyHostToDevice);
    std::vector<double> q, accept;
    const int f = run_on_device(view_target{view_dev}, dim, chains, warmup, draws, q, accept);
    if (f < 0) return 1;
    failures += f;
    // The host: the same chains with the same kernel, target and seeds.
    const auto host_program =
        tyche_test::eight_schools_noncentered(tyche_test::eight_schools_y, tyche_test::eight_schools_inv_sigma);
    const view_target host_target{&host_program.view()};
    std::vector<double> host_q(q.size()), host_accept(accept.size());
    std::vector<double> storage(kernel_type::storage_size(dim, 10, metric_kind::diagonal));
    for (int c = 0; c < chains; ++c)
      failures += run_chain(host_target, dim, storage.data(), storage.size(), c, warmup, draws,
                            host_q.data() + std::size_t(c) * draws * dim, host_accept.data() + std::size_t(c) * draws);
    double dm, dse, dv, hm, hse, hv;
    chain_means(q, dim, chains, draws, 0, dm, dse, dv);
    chain_means(host_q, dim, chains, draws, 0, hm, hse, hv);
    const bool ok = std::fabs(dm - hm) < 4 * std::sqrt(dse * dse + hse * hse);
    std::printf("eight schools mu: device %.4f (se %.4f), host %.4f (se %.4f) %s\n", dm, dse, hm, hse,
                ok ? "ok" : "FAILED");
    failures += ok ? 0 : 1;
    cudaFree(y_dev);
    cudaFree(inv_sigma_dev);
    cudaFree(view_dev);
  }
  std::printf("NUTS kernel on the device: %d failures\n", failures);
  return failures == 0 ? 0 : 1;
}
