// bench/chains_pass.cpp — Edward2's covertype workload (a logistic regression on 581,012 × 54)
// as the gradient of C chains at once: what one pass over the design matrix X costs per chain,
// for tyche and for a BLAS twin, as C grows (bash bench/run.sh chains_pass; issue 17's "many
// chains, one read").
//
// Model: alpha ~ N(0, 1), beta[k] ~ N(0, 1), y ~ bernoulli_logit(alpha + X beta), on the
// synthetic covertype-shaped data of bench/synthetic.hpp (logistic_data, seed 20261121; the data
// `bench/run.sh stan`'s edward2 rows use). Rows:
//
//   tyche,1          one chain, T = double: the streamed matvec, observations in SIMD batches
//   tyche,C          C chains as C / W batched evaluations of W lanes (W = the SIMD width in
//                    doubles): each batch is one pass over X, rows taken in tiles of 8
//                    (compile/evaluate.hpp, "rows in tiles")
//   blas,1           one chain: two GEMVs (X·beta, then Xᵀ·r), the per-row term between them
//   blas,C           C chains: two GEMMs (X·B for the K × C coefficients B, then Xᵀ·R), the
//                    per-element term between them (scalar std::exp and std::log1p): one pass
//                    over X per GEMM, shared by all C
//   blas_products_only,C   the two GEMVs or GEMMs alone: the twin with a free per-element term
//   tyche_float_x,1 and ,W  tyche with X stored as floats (matrix(const float*, …)), one chain and
//                    one batch of W chains
//   tyche_half,W/2   one batch of the half width (4 chains in an AVX-512 build: what nuts()'s
//                    default gives 4 chains on a thread), two columns per 512-bit FMA there
//   fma_floor,1      the two products of one chain (2·rows·cols multiply-adds) at this core's
//                    peak FMA rate, measured first (16 independent chains of the widest batch)
//
// Each row: the best of `reps` evaluations (all C chains), its time per chain, and that time as
// a multiple of one read of X at this machine's measured read bandwidth (one thread: the sum of
// X's values, 4 accumulators, best of 5). The BLAS rows run one thread (openblas_set_num_threads(1)
// where the library is OpenBLAS; set OPENBLAS_NUM_THREADS=1 otherwise). Before timing, every
// chain's value and gradient from tyche (both forms) and from the BLAS twin must agree to 1e-10
// relative, or the program exits with status 1.
//
// The same rows for the logistic regression 10,000 × 100 of `bench/run.sh stan` (X in the
// last-level cache), first; its one-chain rows are issue 17's tyche / BLAS-2 twin ratio as users
// build tyche (tyche::simd; bench/gradients.cpp's logistic_regression_blas row is the same
// comparison without the SIMD backend).
//
// Usage: chains_pass [--rows N] [--reps R] [--max-chains C]   (--rows: covertype's rows)
#include <tyche/tyche.hpp>

#include "synthetic.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#if TYCHE_BENCH_CBLAS
#include <cblas.h>
extern "C" void openblas_set_num_threads(int) __attribute__((weak));
extern "C" char* openblas_get_config() __attribute__((weak));
#endif

namespace {

template <class F>
double best_ms(int reps, F&& f) {
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

// θ of chain c: small values that differ per chain (alpha, then beta).
double theta_at(std::size_t c, std::size_t k) { return 0.02 * std::sin(1.0 + 0.37 * double(k) + 1.13 * double(c)); }

double rel(double a, double b) { return std::fabs(a - b) / std::max(1.0, std::fabs(b)); }

#if TYCHE_BENCH_CBLAS
// The BLAS twin for C chains: value[c] and grad[c·(K+1) + k] (k = 0: alpha).
template <std::size_t K>
struct blas_twin {
  const tyche_bench::logistic_data& d;
  std::vector<double> B, eta, grad_b;
  explicit blas_twin(const tyche_bench::logistic_data& data) : d(data) {}
  // The two products alone (X·B, Xᵀ·R, on the buffers of the last run with `chains`): what the
  // twin costs if its per-element term were free.
  void products(std::size_t c) {
    const std::size_t n = d.n;
    if (c == 1) {
      cblas_dgemv(CblasRowMajor, CblasNoTrans, int(n), int(K), 1.0, d.X.data(), int(K), B.data(), 1, 0.0, eta.data(), 1);
      cblas_dgemv(CblasRowMajor, CblasTrans, int(n), int(K), 1.0, d.X.data(), int(K), eta.data(), 1, 0.0,
                  grad_b.data(), 1);
    } else {
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(n), int(c), int(K), 1.0, d.X.data(), int(K),
                  B.data(), int(c), 0.0, eta.data(), int(c));
      cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, int(K), int(c), int(n), 1.0, d.X.data(), int(K),
                  eta.data(), int(c), 0.0, grad_b.data(), int(c));
    }
  }
  void run(std::size_t chains, const std::vector<double>& theta, std::vector<double>& value,
           std::vector<double>& grad) {
    const std::size_t n = d.n, c = chains;
    B.resize(K * c);
    eta.resize(n * c);
    grad_b.resize(K * c);
    for (std::size_t j = 0; j < c; ++j)
      for (std::size_t k = 0; k < K; ++k) B[k * c + j] = theta[j * (K + 1) + 1 + k];
    if (c == 1) {
      cblas_dgemv(CblasRowMajor, CblasNoTrans, int(n), int(K), 1.0, d.X.data(), int(K), B.data(), 1, 0.0, eta.data(), 1);
    } else {
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(n), int(c), int(K), 1.0, d.X.data(), int(K),
                  B.data(), int(c), 0.0, eta.data(), int(c));
    }
    std::vector<double> ga(c, 0.0), v(c, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      const double y = d.y[i];
      double* e = eta.data() + i * c;
      for (std::size_t j = 0; j < c; ++j) {
        const double a = theta[j * (K + 1)] + e[j];
        const double ex = std::exp(-std::fabs(a));
        v[j] += y * a - (std::max(a, 0.0) + std::log1p(ex));
        const double sigma = a >= 0 ? 1.0 / (1.0 + ex) : ex / (1.0 + ex);
        e[j] = y - sigma;  // the residual, in place: R for the second product
        ga[j] += e[j];
      }
    }
    if (c == 1) {
      cblas_dgemv(CblasRowMajor, CblasTrans, int(n), int(K), 1.0, d.X.data(), int(K), eta.data(), 1, 0.0,
                  grad_b.data(), 1);
    } else {
      cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, int(K), int(c), int(n), 1.0, d.X.data(), int(K),
                  eta.data(), int(c), 0.0, grad_b.data(), int(c));
    }
    value.assign(c, 0.0);
    grad.assign(c * (K + 1), 0.0);
    for (std::size_t j = 0; j < c; ++j) {  // the N(0, 1) priors, up to their constants
      double prior = 0;
      for (std::size_t k = 0; k <= K; ++k) prior -= 0.5 * theta[j * (K + 1) + k] * theta[j * (K + 1) + k];
      value[j] = v[j] + prior;
      grad[j * (K + 1)] = ga[j] - theta[j * (K + 1)];
      for (std::size_t k = 0; k < K; ++k) grad[j * (K + 1) + 1 + k] = grad_b[k * c + j] - theta[j * (K + 1) + 1 + k];
    }
  }
};
#endif

/// ns per double of a fused multiply-add at this core's peak: 16 independent chains of FMAs in the
/// widest batch (or in double without the SIMD backend), best of 5.
double fma_ns_per_double = 0;
double measure_fma_peak() {
#if TYCHE_HAS_XSIMD
  using F = xsimd::batch<double>;
#else
  using F = double;
#endif
  constexpr int chains = 16;
  constexpr long steps = 20'000'000;
  F a[chains];
  for (int i = 0; i < chains; ++i) a[i] = F(1.0 + 1e-3 * i);
  const F b(0.999999), c(1e-9);
  const double ms = best_ms(5, [&] {
    for (long k = 0; k < steps; ++k)
      for (int i = 0; i < chains; ++i) {
#if TYCHE_HAS_XSIMD
        a[i] = xsimd::fma(a[i], b, c);
#else
        a[i] = std::fma(a[i], b, c);
#endif
      }
  });
  F s = a[0];
  for (int i = 1; i < chains; ++i) s += a[i];
  volatile double sink = 0;
#if TYCHE_HAS_XSIMD
  sink = sink + s.get(0);
  constexpr double lanes = double(F::size);
#else
  sink = sink + s;
  constexpr double lanes = 1;
#endif
  const double ns = ms * 1e6 / (double(steps) * chains);
  std::fprintf(stderr, "chains_pass: one FMA of %g doubles: %.4f ns at this core's peak (16 independent chains)\n",
               lanes, ns);
  return ns / lanes;
}

/// The rows of one data shape (n × K); false when an agreement check failed.
template <std::size_t K>
bool run_shape(const char* shape_name, std::size_t rows, int reps, std::size_t max_chains) {
  const tyche_bench::logistic_data d(rows, K);
  using namespace tyche;
  auto alpha = normal<"alpha">(0.0, 1.0);
  auto beta = normal<"beta">(0.0, 1.0, shape<K>);
  const auto m = model(joint(alpha, beta, bernoulli_logit(alpha + matvec(matrix(d.X.data(), d.n, K), beta)).observe(data(d.y))));
  const auto view = m.program().view();
  const std::size_t dim = m.dim();

  // The machine's read bandwidth, one thread: a read of X.
  volatile double sink = 0;
  const double read_ms = best_ms(5, [&] {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    const double* x = d.X.data();
    const std::size_t n = d.X.size();
    std::size_t i = 0;
    for (; i + 4 <= n; i += 4) {
      s0 += x[i];
      s1 += x[i + 1];
      s2 += x[i + 2];
      s3 += x[i + 3];
    }
    for (; i < n; ++i) s0 += x[i];
    sink = sink + (s0 + s1) + (s2 + s3);
  });
  std::fprintf(stderr, "chains_pass: %s %zu x %zu, X %.1f MB, one read %.3f ms (%.1f GB/s), SIMD width %d\n",
               shape_name, d.n, K, double(d.X.size()) * 8e-6, read_ms, double(d.X.size()) * 8e-6 / read_ms,
               simd_lane_width);
  auto row = [&](const char* impl, std::size_t chains, double ms) {
    std::printf("%s,%zu,%zu,%s,%zu,%.4f,%.4f,%.3f\n", shape_name, d.n, K, impl, chains, ms, ms / double(chains),
                ms / double(chains) / read_ms);
    std::fflush(stdout);
  };

  // The arithmetic floor: the two products (X·β and Xᵀ·r) of one chain, 2·rows·cols multiply-adds,
  // at this core's measured rate of the widest batch's FMAs (fma_ns_per_double: ns per FMA over
  // its lanes).
  row("fma_floor", 1, 2.0 * double(d.n) * double(K) * fma_ns_per_double * 1e-6);

  std::vector<std::size_t> counts;
  for (std::size_t c = 1; c <= max_chains; c *= 2) counts.push_back(c);
  std::vector<double> theta(max_chains * dim);
  for (std::size_t c = 0; c < max_chains; ++c)
    for (std::size_t k = 0; k < dim; ++k) theta[c * dim + k] = theta_at(c, k);

  // One chain at a time (T = double), the reference values.
  std::vector<double> g1(dim), ref_value(max_chains), ref_grad(max_chains * dim), ws(m.program().workspace_size() + 1);
  for (std::size_t c = 0; c < max_chains; ++c) {
    ref_value[c] = view.value_and_gradient(theta.data() + c * dim, ref_grad.data() + c * dim, ws.data());
  }
  row("tyche", 1, best_ms(reps, [&] { sink = sink + view.value_and_gradient(theta.data(), g1.data(), ws.data()); }));

#if TYCHE_HAS_XSIMD
  using B = xsimd::batch<double>;
  constexpr std::size_t W = B::size;
  std::vector<B, xsimd::aligned_allocator<B>> tb(dim), gb(dim), wsb(m.program().workspace_size() + 1);
  auto load_batch = [&](std::size_t first) {
    alignas(64) double lanes[W];
    for (std::size_t k = 0; k < dim; ++k) {
      for (std::size_t l = 0; l < W; ++l) lanes[l] = theta[(first + l) * dim + k];
      tb[k] = B::load_aligned(lanes);
    }
  };
  // Agreement of the lanes with one chain at a time.
  for (std::size_t first = 0; first + W <= max_chains; first += W) {
    load_batch(first);
    const B v = view.value_and_gradient(tb.data(), gb.data(), wsb.data());
    for (std::size_t l = 0; l < W; ++l) {
      bool ok = rel(v.get(l), ref_value[first + l]) <= 1e-10;
      for (std::size_t k = 0; k < dim; ++k) ok = ok && rel(gb[k].get(l), ref_grad[(first + l) * dim + k]) <= 1e-10;
      if (!ok) {
        std::fprintf(stderr, "chains_pass: chain %zu in lanes disagrees with one chain at a time\n", first + l);
        return false;
      }
    }
  }
  // The half-width batch: what nuts()'s default gives 4 chains on a thread of an AVX-512 build
  // (cpu_executor.hpp, default_lanes); under AVX-512 the tile takes two columns per 512-bit
  // operation (detail::column_pair_tiles, backends/simd/batch.hpp).
  if constexpr (half_lane_width > 1) {
    using H = half_lane_batch;
    constexpr std::size_t HW = H::size;
    std::vector<H, xsimd::aligned_allocator<H>> th(dim), gh(dim), wsh(m.program().workspace_size() + 1);
    for (std::size_t k = 0; k < dim; ++k) {
      alignas(64) double lanes[HW];
      for (std::size_t l = 0; l < HW; ++l) lanes[l] = theta[l * dim + k];
      th[k] = H::load_aligned(lanes);
    }
    const H v = view.value_and_gradient(th.data(), gh.data(), wsh.data());
    for (std::size_t l = 0; l < HW && l < max_chains; ++l) {
      bool ok = rel(v.get(l), ref_value[l]) <= 1e-10;
      for (std::size_t k = 0; k < dim; ++k) ok = ok && rel(gh[k].get(l), ref_grad[l * dim + k]) <= 1e-10;
      if (!ok) {
        std::fprintf(stderr, "chains_pass: chain %zu in half-width lanes disagrees with one chain at a time\n", l);
        return false;
      }
    }
    row("tyche_half", HW, best_ms(reps, [&] { sink = sink + view.value_and_gradient(th.data(), gh.data(), wsh.data()).get(0); }));
  }
  for (std::size_t c : counts) {
    if (c < W) continue;
    const double ms = best_ms(reps, [&] {
      for (std::size_t first = 0; first < c; first += W) {
        load_batch(first);
        sink = sink + view.value_and_gradient(tb.data(), gb.data(), wsb.data()).get(0);
      }
    });
    row("tyche", c, ms);
  }
  // X stored as floats (matrix(const float*, …)): half the bytes per pass, each value converted
  // to double as it is read. Its values differ from the double model's by X's rounding only.
  {
    const std::vector<float> xf(d.X.begin(), d.X.end());
    const auto mf = model(
        joint(alpha, beta, bernoulli_logit(alpha + matvec(matrix(xf.data(), d.n, K), beta)).observe(data(d.y))));
    const auto view_f = mf.program().view();
    const double vf = view_f.value_and_gradient(theta.data(), g1.data(), ws.data());
    if (!(rel(vf, ref_value[0]) <= 1e-4)) {
      std::fprintf(stderr, "chains_pass: the float-X model's value %.17g is far from the double one's %.17g\n", vf,
                   ref_value[0]);
      return false;
    }
    row("tyche_float_x", 1, best_ms(reps, [&] { sink = sink + view_f.value_and_gradient(theta.data(), g1.data(), ws.data()); }));
    load_batch(0);
    row("tyche_float_x", W, best_ms(reps, [&] { sink = sink + view_f.value_and_gradient(tb.data(), gb.data(), wsb.data()).get(0); }));
  }
#endif

#if TYCHE_BENCH_CBLAS
  blas_twin<K> twin(d);
  std::vector<double> bv, bg;
  twin.run(max_chains, theta, bv, bg);
  for (std::size_t c = 0; c < max_chains; ++c) {
    // The twin drops the priors' constants: compare values up to the constant of chain 0,
    // relative to the value (a sum of n terms).
    const double dv = std::fabs((bv[c] - bv[0]) - (ref_value[c] - ref_value[0])) / std::max(1.0, std::fabs(ref_value[c]));
    double dg = 0;
    for (std::size_t k = 0; k < dim; ++k) dg = std::max(dg, rel(bg[c * dim + k], ref_grad[c * dim + k]));
    if (!(dv <= 1e-10 && dg <= 1e-10)) {
      std::fprintf(stderr, "chains_pass: the BLAS twin disagrees with tyche on chain %zu (value %.3g, gradient %.3g)\n",
                   c, dv, dg);
      return false;
    }
  }
  for (std::size_t c : counts) {
    row("blas", c, best_ms(reps, [&] { twin.run(c, theta, bv, bg); }));
    row("blas_products_only", c, best_ms(reps, [&] { twin.products(c); }));
  }
#endif
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t rows = 581012;
  int reps = 5;
  std::size_t max_chains = 64;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--rows") == 0 && i + 1 < argc) rows = std::strtoul(argv[++i], nullptr, 10);
    else if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--max-chains") == 0 && i + 1 < argc) max_chains = std::strtoul(argv[++i], nullptr, 10);
    else {
      std::fprintf(stderr, "usage: %s [--rows N] [--reps R] [--max-chains C]\n", argv[0]);
      return 2;
    }
  }
#if TYCHE_BENCH_CBLAS
  if (openblas_set_num_threads) openblas_set_num_threads(1);
  std::fprintf(stderr, "chains_pass: BLAS %s\n", openblas_get_config ? openblas_get_config() : "(not OpenBLAS)");
#endif
  fma_ns_per_double = measure_fma_peak();
  std::printf("shape,rows,cols,impl,chains,ms_per_evaluation,ms_per_chain_gradient,reads_of_x_per_chain\n");
  // The logistic regression of bench/run.sh stan (10,000 × 100, in the last-level cache), then
  // Edward2's covertype shape.
  if (!run_shape<100>("logistic_regression", 10000, 4 * reps, max_chains)) return 1;
  if (!run_shape<54>("covertype", rows, reps, max_chains)) return 1;
  return 0;
}
