// The NUTS kernel built as host code with -fno-exceptions (tests/CMakeLists.txt, target
// test_kernel_no_exceptions): nuts_kernel<double> and nuts_kernel<lane_batch> (a SIMD batch,
// where the build has one) run 4 chains of a 3-d Gaussian; the batch's lanes must give what the
// single-lane kernels give (bit for bit without fused multiply-adds; to 1e-9 on the first
// transition with them, see tests/samplers/kernel_test.cpp), and the draws must have the
// target's moments (means within 4 batch-means standard errors, variances within 10 %). No
// Catch2 (it needs exceptions): prints what failed and returns 1.
#include <tyche/samplers/nuts/kernel.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

namespace {

constexpr std::size_t dim = 3;
constexpr int chains = 4, transitions = 3000;

template <class R>
R target(const R* q, R* g) {  // N(0, diag(1, 4, 9))
  R s = 0;
  for (std::size_t i = 0; i < dim; ++i) {
    const R v = R((i + 1) * (i + 1));
    g[i] = -q[i] / v;
    s += q[i] * q[i] / v;
  }
  return R(-0.5) * s;
}

template <class T>
std::vector<double> run(int& failures) {
  using namespace tyche::samplers;
  using kernel = nuts_kernel<T>;
  constexpr int w = kernel::width;
  std::vector<double> out(static_cast<std::size_t>(chains * transitions) * dim);
  for (int c0 = 0; c0 < chains; c0 += w) {
    std::vector<T> storage(kernel::storage_size(dim, 10, metric_kind::diagonal));
    kernel k;
    if (k.bind(storage.data(), storage.size(), dim, 10, metric_kind::diagonal) != nuts_status::ok) ++failures;
    k.rng().seed = 8;
    bool start[w] = {};
    int done[w] = {};
    for (int l = 0; l < w && c0 + l < chains; ++l) {
      double q[dim] = {0.1 * (c0 + l), -0.2, 0.3}, g[dim];
      k.set_point(l, q, g, target(q, g));
      if (k.set_step_size(l, 0.9) != nuts_status::ok) ++failures;
      k.rng().stream[l] = static_cast<std::uint64_t>(c0 + l);
      start[l] = true;
    }
    if (k.begin(start) != nuts_status::ok) ++failures;
    while (k.any_running()) {
      for (int l = 0; l < w; ++l) {
        double q[dim], g[dim];
        for (std::size_t i = 0; i < dim; ++i) q[i] = tyche::lane_traits<T>::get(k.pending_q()[i], l);
        const double lp = target(q, g);
        for (std::size_t i = 0; i < dim; ++i) tyche::lane_traits<T>::set(k.pending_grad()[i], l, g[i]);
        k.set_pending(l, lp);
      }
      bool ended[w];
      k.resume(ended);
      bool again[w] = {};
      for (int l = 0; l < w; ++l) {
        if (!ended[l]) continue;
        k.get_point(l, out.data() + (static_cast<std::size_t>((c0 + l) * transitions + done[l])) * dim);
        again[l] = ++done[l] < transitions;
      }
      k.begin(again);
    }
  }
  return out;
}

}  // namespace

int main() {
  int failures = 0;
  const std::vector<double> one = run<double>(failures);
  for (std::size_t i = 0; i < dim; ++i) {
    double mean = 0, var = 0, bvar = 0;
    const std::size_t n = static_cast<std::size_t>(chains * transitions), batches = 60, b = n / batches;
    for (std::size_t t = 0; t < n; ++t) mean += one[t * dim + i] / double(n);
    for (std::size_t t = 0; t < n; ++t) var += (one[t * dim + i] - mean) * (one[t * dim + i] - mean) / double(n - 1);
    for (std::size_t k = 0; k < batches; ++k) {
      double bm = 0;
      for (std::size_t j = 0; j < b; ++j) bm += one[(k * b + j) * dim + i] / double(b);
      bvar += (bm - mean) * (bm - mean) / double(batches - 1);
    }
    const double se = std::sqrt(bvar / double(batches)), expected = double((i + 1) * (i + 1));
    if (!(std::fabs(mean) < 4 * se) || !(std::fabs(var / expected - 1) < 0.10)) {
      std::printf("coordinate %zu: mean %g (se %g), variance %g (expected %g)\n", i, mean, se, var, expected);
      ++failures;
    }
  }
#if TYCHE_HAS_XSIMD
  const std::vector<double> lanes = run<tyche::lane_batch>(failures);
#if defined(__FMA__) || defined(FP_FAST_FMA)
  for (int c = 0; c < chains; ++c)
    for (std::size_t i = 0; i < dim; ++i) {
      const std::size_t at = static_cast<std::size_t>(c * transitions) * dim + i;
      if (std::fabs(one[at] - lanes[at]) > 1e-9) ++failures;
    }
#else
  if (one != lanes) {
    std::printf("the SIMD lanes differ from the single-lane kernel\n");
    ++failures;
  }
#endif
  std::printf("kernel without exceptions: double and %d-lane batch, %d failures\n", tyche::simd_lane_width, failures);
#else
  std::printf("kernel without exceptions: double (no SIMD backend in this build), %d failures\n", failures);
#endif
  return failures == 0 ? 0 : 1;
}
