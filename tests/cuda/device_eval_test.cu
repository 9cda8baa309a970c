// tests/cuda/device_eval_test.cu — evaluates a model's value and gradient in device code, one
// chain per CUDA thread, and compares with the same expression evaluated on the host. Exits 77
// (reported by ctest as skipped, never as passed) when no GPU is present.
#include <cuda_runtime.h>

#include <cmath>
#include <type_traits>
#include <cstdio>
#include <vector>

#include "support/eight_schools.hpp"

using program_type = decltype(tyche_test::eight_schools_noncentered(nullptr, nullptr));
using view_type = program_type::view_type;

// nvcc's host stub cannot spell a kernel signature whose types carry class-type template
// arguments (the parameter names), so the view travels through device memory instead of
// being a kernel argument. It is trivially copyable, which makes the byte copy valid.
static_assert(std::is_trivially_copyable_v<view_type>);

template <class T>
__global__ void eval_kernel(const unsigned char* view_bytes, const T* thetas, T* grads,
                            T* values, int chains) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= chains) return;
  const view_type& view = *reinterpret_cast<const view_type*>(view_bytes);
  const std::size_t d = view.dim();
  values[c] = view.value_and_gradient(thetas + c * d, grads + c * d);
}

#define CHECK_CUDA(call)                                                                  \
  do {                                                                                    \
    cudaError_t err_ = (call);                                                            \
    if (err_ != cudaSuccess) {                                                            \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(err_));           \
      return 1;                                                                           \
    }                                                                                     \
  } while (0)

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: skipped\n");
    return 77;
  }
  constexpr int chains = 64;
  constexpr int d = 10;
  double *y_dev = nullptr, *sigma_dev = nullptr, *theta_dev = nullptr, *grad_dev = nullptr,
         *val_dev = nullptr;
  CHECK_CUDA(cudaMalloc(&y_dev, 8 * sizeof(double)));
  CHECK_CUDA(cudaMalloc(&sigma_dev, 8 * sizeof(double)));
  CHECK_CUDA(cudaMalloc(&theta_dev, chains * d * sizeof(double)));
  CHECK_CUDA(cudaMalloc(&grad_dev, chains * d * sizeof(double)));
  CHECK_CUDA(cudaMalloc(&val_dev, chains * sizeof(double)));
  CHECK_CUDA(cudaMemcpy(y_dev, tyche_test::eight_schools_y, 8 * sizeof(double), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(sigma_dev, tyche_test::eight_schools_inv_sigma, 8 * sizeof(double), cudaMemcpyHostToDevice));

  std::vector<double> theta(chains * d);
  for (int i = 0; i < chains * d; ++i) theta[i] = std::sin(0.37 * i + 0.1);
  CHECK_CUDA(cudaMemcpy(theta_dev, theta.data(), theta.size() * sizeof(double), cudaMemcpyHostToDevice));

  const auto device_prog = tyche_test::eight_schools_noncentered(y_dev, sigma_dev);
  unsigned char* view_dev = nullptr;
  CHECK_CUDA(cudaMalloc(&view_dev, sizeof(view_type)));
  CHECK_CUDA(cudaMemcpy(view_dev, &device_prog.view(), sizeof(view_type), cudaMemcpyHostToDevice));
  eval_kernel<double><<<1, chains>>>(view_dev, theta_dev, grad_dev, val_dev, chains);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<double> grad(chains * d), val(chains);
  CHECK_CUDA(cudaMemcpy(grad.data(), grad_dev, grad.size() * sizeof(double), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(val.data(), val_dev, val.size() * sizeof(double), cudaMemcpyDeviceToHost));

  const auto host_prog = tyche_test::eight_schools_noncentered(tyche_test::eight_schools_y,
                                                               tyche_test::eight_schools_inv_sigma);
  int failures = 0;
  std::vector<double> g(d);
  for (int c = 0; c < chains; ++c) {
    const double v = tyche_test::eight_schools_chain(host_prog.view(), theta.data() + c * d, g.data());
    auto close = [](double a, double b) { return std::fabs(a - b) <= 1e-12 * (1.0 + std::fabs(b)); };
    if (!close(val[c], v)) {
      std::fprintf(stderr, "chain %d: device value %.17g, host %.17g\n", c, val[c], v);
      ++failures;
    }
    for (int k = 0; k < d; ++k)
      if (!close(grad[c * d + k], g[k])) {
        std::fprintf(stderr, "chain %d: d/dtheta[%d] device %.17g, host %.17g\n", c, k, grad[c * d + k], g[k]);
        ++failures;
      }
  }
  // The same model in float on the device, against double on the host (float accuracy).
  std::vector<float> theta_f(theta.begin(), theta.end()), grad_f(chains * d), val_f(chains);
  float *theta_f_dev = nullptr, *grad_f_dev = nullptr, *val_f_dev = nullptr;
  CHECK_CUDA(cudaMalloc(&theta_f_dev, theta_f.size() * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&grad_f_dev, grad_f.size() * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&val_f_dev, val_f.size() * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(theta_f_dev, theta_f.data(), theta_f.size() * sizeof(float), cudaMemcpyHostToDevice));
  eval_kernel<float><<<1, chains>>>(view_dev, theta_f_dev, grad_f_dev, val_f_dev, chains);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaMemcpy(val_f.data(), val_f_dev, val_f.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(grad_f.data(), grad_f_dev, grad_f.size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (int c = 0; c < chains; ++c) {
    const double v = tyche_test::eight_schools_chain(host_prog.view(), theta.data() + c * d, g.data());
    if (std::fabs(val_f[c] - v) > 1e-4 * (1.0 + std::fabs(v))) {
      std::fprintf(stderr, "chain %d: device float value %.9g, host double %.17g\n", c, val_f[c], v);
      ++failures;
    }
    for (int k = 0; k < d; ++k)
      if (std::fabs(grad_f[c * d + k] - g[k]) > 1e-4 * (1.0 + std::fabs(g[k]))) {
        std::fprintf(stderr, "chain %d: float d/dtheta[%d] device %.9g, host %.17g\n", c, k, grad_f[c * d + k], g[k]);
        ++failures;
      }
  }
  cudaFree(theta_f_dev); cudaFree(grad_f_dev); cudaFree(val_f_dev);
  cudaFree(y_dev); cudaFree(sigma_dev); cudaFree(theta_dev); cudaFree(grad_dev); cudaFree(val_dev); cudaFree(view_dev);
  std::printf("%d chains compared in double and float, %d mismatches\n", chains, failures);
  return failures == 0 ? 0 : 1;
}
