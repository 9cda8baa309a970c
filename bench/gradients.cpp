// bench/gradients.cpp — cost of one value_and_gradient of a tyche program against a
// hand-written plain-C++ twin that computes the same value and gradient.
//
// Each case builds a tyche model and a twin, evaluates both at the same random point and aborts
// if they disagree (value or any gradient component) by more than 1e-8 relative; then both are
// timed with Google Benchmark in the same process, at that point. The twins are written as an
// expert would write them for speed: one pass over the data, fused loops, no allocation in the
// timed call, four accumulators for long reductions. Same translation unit, same flags.
//
// Benchmark names: <case>/tyche and <case>/handwritten; bench/run.sh turns the JSON output into
// a CSV of medians. See docs/benchmarks.md.
#include <tyche/io/json_data.hpp>
#include <tyche/tyche.hpp>

#if TYCHE_BENCH_CBLAS
#include <cblas.h>
extern "C" void openblas_set_num_threads(int) __attribute__((weak));
#endif

#include <benchmark/benchmark.h>

#include "synthetic.hpp"
#include "posteriordb.hpp"  // examples/posteriordb.hpp

#include <algorithm>
#include <array>
#include <memory>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <tuple>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// ---- checking --------------------------------------------------------------------------------

bool close(double a, double b) {
  const double scale = std::max(std::fabs(a), std::fabs(b));
  return std::fabs(a - b) <= 1e-8 * scale;
}

/// Aborts unless the two (value, gradient) pairs agree to 1e-8 relative, component by component.
void check_twins(const char* name, double v_tyche, const std::vector<double>& g_tyche,
                 double v_hand, const std::vector<double>& g_hand) {
  bool ok = close(v_tyche, v_hand) && g_tyche.size() == g_hand.size();
  if (!close(v_tyche, v_hand))
    std::fprintf(stderr, "%s: value differs: tyche %.17g, handwritten %.17g\n", name, v_tyche,
                 v_hand);
  for (std::size_t i = 0; i < std::min(g_tyche.size(), g_hand.size()); ++i) {
    if (!close(g_tyche[i], g_hand[i])) {
      std::fprintf(stderr, "%s: gradient[%zu] differs: tyche %.17g, handwritten %.17g\n", name, i,
                   g_tyche[i], g_hand[i]);
      ok = false;
    }
  }
  if (!ok) {
    std::fprintf(stderr, "%s: tyche and the hand-written twin disagree; aborting\n", name);
    std::abort();
  }
}

std::vector<double> random_point(std::size_t dim, double scale, unsigned long long seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0.0, scale);
  std::vector<double> x(dim);
  for (auto& v : x) v = z(rng);
  return x;
}

// --calls=<case>/<impl>:<count> (for valgrind --tool=callgrind): instead of benchmarking, make
// <count> calls of that one function inside repeat_calls, which callgrind can be told to count
// alone (--toggle-collect='*repeat_calls*'); see docs/benchmarks.md.
std::string calls_name;
long calls_count = 0;

template <class F>
[[gnu::noinline]] double repeat_calls(F& f, const std::vector<double>& theta,
                                      std::vector<double>& grad, long count) {
  double acc = 0;
  for (long k = 0; k < count; ++k) {
    benchmark::DoNotOptimize(theta.data());
    acc += f(theta, grad);
    benchmark::ClobberMemory();
  }
  return acc;
}

/// Registers <name>/tyche and <name>/handwritten. Both closures are called with (theta, grad)
/// and return the log density; the inputs live in the case object, which outlives the run.
template <class Tyche, class Hand>
void register_pair(const std::string& name, const std::vector<double>* theta,
                   std::vector<double>* g_tyche, std::vector<double>* g_hand, Tyche tyche,
                   Hand hand) {
  if (!calls_name.empty()) {
    double v = 0;
    if (calls_name == name + "/tyche") v = repeat_calls(tyche, *theta, *g_tyche, calls_count);
    if (calls_name == name + "/handwritten") v = repeat_calls(hand, *theta, *g_hand, calls_count);
    benchmark::DoNotOptimize(v);
    return;
  }
  benchmark::RegisterBenchmark((name + "/tyche").c_str(),
                               [=](benchmark::State& st) {
                                 for (auto _ : st) {
                                   benchmark::DoNotOptimize(theta->data());
                                   double v = tyche(*theta, *g_tyche);
                                   benchmark::DoNotOptimize(v);
                                   benchmark::ClobberMemory();
                                 }
                               });
  benchmark::RegisterBenchmark((name + "/handwritten").c_str(),
                               [=](benchmark::State& st) {
                                 for (auto _ : st) {
                                   benchmark::DoNotOptimize(theta->data());
                                   double v = hand(*theta, *g_hand);
                                   benchmark::DoNotOptimize(v);
                                   benchmark::ClobberMemory();
                                 }
                               });
}

// ---- iid_normal_100: lp = -0.5 Σ x² -------------------------------------------------------------

struct iid_normal_hand {
  std::size_t n;
  double operator()(const double* __restrict x, double* __restrict g) const {
    double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    const std::size_t n4 = n - n % 4;
    std::size_t i = 0;
    for (; i < n4; i += 4) {
      a0 += x[i] * x[i];
      a1 += x[i + 1] * x[i + 1];
      a2 += x[i + 2] * x[i + 2];
      a3 += x[i + 3] * x[i + 3];
      g[i] = -x[i];
      g[i + 1] = -x[i + 1];
      g[i + 2] = -x[i + 2];
      g[i + 3] = -x[i + 3];
    }
    for (; i < n; ++i) {
      a0 += x[i] * x[i];
      g[i] = -x[i];
    }
    return -0.5 * ((a0 + a1) + (a2 + a3));
  }
};

// ---- eight_schools_noncentered ------------------------------------------------------------------
// θ = (mu, log_tau, theta_raw[0..7]); tau = exp(log_tau), theta = mu + tau theta_raw,
// lp = Σ -theta_raw²/2 + Σ -((y - theta)/sigma)²/2 - mu²/50 - log1p((tau/5)²) + log_tau.

constexpr std::size_t J = 8;
const std::vector<double> es_y{28, 8, -3, 7, -1, 1, 18, 12};
const std::vector<double> es_sigma{15, 10, 16, 11, 9, 11, 10, 18};

struct eight_schools_hand {
  double inv_sigma[J];
  double y[J];
  eight_schools_hand() {
    for (std::size_t j = 0; j < J; ++j) {
      inv_sigma[j] = 1.0 / es_sigma[j];
      y[j] = es_y[j];
    }
  }
  double operator()(const double* __restrict th, double* __restrict g) const {
    const double mu = th[0];
    const double log_tau = th[1];
    const double* raw = th + 2;
    const double tau = std::exp(log_tau);
    double lp_raw = 0, lp_lik = 0, g_mu = 0, g_tau = 0;
    for (std::size_t j = 0; j < J; ++j) {
      const double z = (y[j] - (mu + tau * raw[j])) * inv_sigma[j];
      lp_raw += raw[j] * raw[j];
      lp_lik += z * z;
      const double r = z * inv_sigma[j];  // d lp / d theta_j
      g_mu += r;
      g_tau += r * raw[j];
      g[2 + j] = tau * r - raw[j];
    }
    const double t5 = tau * 0.2;
    const double q = t5 * t5;
    g[0] = g_mu - mu / 25.0;
    // d/dlog_tau: tau * (Σ r raw - 2 (tau/25) / (1 + q)) + 1
    g[1] = tau * g_tau - 2.0 * q / (1.0 + q) + 1.0;
    return -0.5 * lp_raw - 0.5 * lp_lik - mu * mu / 50.0 - std::log1p(q) + log_tau;
  }
};

// ---- logistic_regression -----------------------------------------------------------------------
// θ = (alpha, beta[0..p)); η = alpha + X β;
// lp = -alpha²/2 - Σβ²/2 + Σᵢ [yᵢ ηᵢ - log1p_exp(ηᵢ)].

using tyche_bench::logistic_data;  // bench/synthetic.hpp: 10,000 × 100

/// Σⱼ rowⱼ βⱼ with four accumulators (the twins' dot product of a row of X).
inline double row_dot(const double* __restrict row, const double* __restrict beta, std::size_t p) {
  double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  std::size_t j = 0;
  for (; j + 4 <= p; j += 4) {
    a0 += row[j] * beta[j];
    a1 += row[j + 1] * beta[j + 1];
    a2 += row[j + 2] * beta[j + 2];
    a3 += row[j + 3] * beta[j + 3];
  }
  for (; j < p; ++j) a0 += row[j] * beta[j];
  return (a0 + a1) + (a2 + a3);
}

/// log1p_exp(η) = max(η, 0) + log1p(e^-|η|), and its derivative σ(η) in sig.
inline double softplus(double eta, double& sig) {
  const double e = std::exp(-std::fabs(eta));
  const double inv = 1.0 / (1.0 + e);
  sig = eta >= 0 ? inv : e * inv;
  return std::max(eta, 0.0) + std::log1p(e);
}

struct logistic_hand {
  const double* X;
  const double* y;
  std::size_t n, p;
  double operator()(const double* __restrict th, double* __restrict g) const {
    const double alpha = th[0];
    const double* __restrict beta = th + 1;
    double* __restrict gb = g + 1;
    double lp = -0.5 * alpha * alpha;
    for (std::size_t j = 0; j < p; ++j) {
      lp -= 0.5 * beta[j] * beta[j];
      gb[j] = -beta[j];
    }
    double g_alpha = -alpha;
    // One pass over X: each row is used for η_i and, while it is in L1, for X_iᵀ r_i.
    for (std::size_t i = 0; i < n; ++i) {
      const double* __restrict row = X + i * p;
      const double eta = alpha + row_dot(row, beta, p);
      double sig;
      lp += y[i] * eta - softplus(eta, sig);
      const double r = y[i] - sig;
      g_alpha += r;
      for (std::size_t k = 0; k < p; ++k) gb[k] += r * row[k];
    }
    g[0] = g_alpha;
    return lp;
  }
};

// ---- sparse_logistic -----------------------------------------------------------------------------
// The logistic regression's model with a sparse X: 10,000 × 100, five non-zero entries per row
// (5 %) at random columns, N(0, 1) values; tyche's sparse_matrix (CSR) against the same X dense
// (sparse_logistic_dense) and one twin, a loop over each row's non-zero entries.

struct sparse_logistic_data {
  static constexpr std::size_t n = 10000, p = 100, per_row = 5;
  std::vector<double> dense, w, y;
  std::vector<int> c, u;
  sparse_logistic_data() : dense(n * p, 0.0), y(n) {
    std::mt19937_64 rng(17);
    std::normal_distribution<double> z;
    std::uniform_int_distribution<int> col(0, static_cast<int>(p) - 1);
    u.push_back(0);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t k = 0; k < per_row; ++k) dense[i * p + static_cast<std::size_t>(col(rng))] = z(rng);
      for (std::size_t j = 0; j < p; ++j)
        if (dense[i * p + j] != 0.0) {
          w.push_back(dense[i * p + j]);
          c.push_back(static_cast<int>(j));
        }
      u.push_back(static_cast<int>(w.size()));
      y[i] = (i * 7) % 3 == 0 ? 1.0 : 0.0;
    }
  }
};

struct sparse_logistic_hand {
  const sparse_logistic_data* d;
  double operator()(const double* __restrict th, double* __restrict g) const {
    constexpr std::size_t n = sparse_logistic_data::n, p = sparse_logistic_data::p;
    const double alpha = th[0];
    const double* __restrict beta = th + 1;
    double* __restrict gb = g + 1;
    double lp = -0.5 * alpha * alpha;
    for (std::size_t j = 0; j < p; ++j) {
      lp -= 0.5 * beta[j] * beta[j];
      gb[j] = -beta[j];
    }
    double g_alpha = -alpha;
    const double* __restrict w = d->w.data();
    const int* __restrict c = d->c.data();
    const int* __restrict u = d->u.data();
    for (std::size_t i = 0; i < n; ++i) {
      double eta = alpha;
      for (int k = u[i]; k < u[i + 1]; ++k) eta += w[k] * beta[c[k]];
      double sig;
      lp += d->y[i] * eta - softplus(eta, sig);
      const double r = d->y[i] - sig;
      g_alpha += r;
      for (int k = u[i]; k < u[i + 1]; ++k) gb[c[k]] += r * w[k];
    }
    g[0] = g_alpha;
    return lp;
  }
};

#if TYCHE_BENCH_CBLAS
// The same gradient from a BLAS: η = X β by one GEMV, the per-row terms, then Xᵀ r by a second
// GEMV (two reads of X; what a program built on a BLAS-2 does, FastAD's Eigen form among them).
struct logistic_blas {
  const double* X;
  const double* y;
  std::size_t n, p;
  double operator()(const double* th, double* g) const {
    thread_local std::vector<double> eta;
    eta.resize(n);
    const double alpha = th[0];
    cblas_dgemv(CblasRowMajor, CblasNoTrans, int(n), int(p), 1.0, X, int(p), th + 1, 1, 0.0, eta.data(), 1);
    double lp = -0.5 * alpha * alpha, g_alpha = -alpha;
    for (std::size_t j = 0; j < p; ++j) lp -= 0.5 * th[1 + j] * th[1 + j];
    for (std::size_t i = 0; i < n; ++i) {
      const double e_i = alpha + eta[i];
      const double e = std::exp(-std::fabs(e_i));
      const double inv = 1.0 / (1.0 + e);
      const double sig = e_i >= 0 ? inv : e * inv;
      lp += y[i] * e_i - (std::max(e_i, 0.0) + std::log1p(e));
      eta[i] = y[i] - sig;  // the residual, in place
      g_alpha += eta[i];
    }
    for (std::size_t j = 0; j < p; ++j) g[1 + j] = -th[1 + j];
    cblas_dgemv(CblasRowMajor, CblasTrans, int(n), int(p), 1.0, X, int(p), eta.data(), 1, 1.0, g + 1, 1);
    g[0] = g_alpha;
    return lp;
  }
};
#endif

// ---- binomial_logit_regression ------------------------------------------------------------------
// The logistic regression's X (10,000 × 100) with binomial counts: trials tᵢ = 1 + i mod 4,
// counts cᵢ = tᵢ·yᵢ (yᵢ ∈ {0, 1} of logistic_data), θ = (alpha, beta);
// lp = -alpha²/2 - Σβ²/2 + Σᵢ [cᵢ ηᵢ - tᵢ log1p_exp(ηᵢ)] (+ Σ log C(tᵢ, cᵢ), which tyche folds into a
// constant and the twin adds once). tyche's model: binomial_logit(data(t), alpha + X β), whose
// cᵢ·ηᵢ leaves the loop as (Xᵀc)·β (compile/reduce_sum.hpp) so that X is read once per gradient.

struct binomial_counts {
  std::vector<double> trials, counts;
  double log_choose = 0;
  explicit binomial_counts(const logistic_data& d) : trials(d.n), counts(d.n) {
    for (std::size_t i = 0; i < d.n; ++i) {
      trials[i] = double(1 + i % 4);
      counts[i] = trials[i] * d.y[i];
      log_choose += std::lgamma(trials[i] + 1) - std::lgamma(counts[i] + 1) - std::lgamma(trials[i] - counts[i] + 1);
    }
  }
};

struct binomial_logit_hand {
  const double* X;
  const double* t;
  const double* c;
  double log_choose;
  std::size_t n, p;
  double operator()(const double* __restrict th, double* __restrict g) const {
    const double alpha = th[0];
    const double* __restrict beta = th + 1;
    double* __restrict gb = g + 1;
    double lp = -0.5 * alpha * alpha + log_choose;
    for (std::size_t j = 0; j < p; ++j) {
      lp -= 0.5 * beta[j] * beta[j];
      gb[j] = -beta[j];
    }
    double g_alpha = -alpha;
    for (std::size_t i = 0; i < n; ++i) {  // one pass over X, as logistic_hand
      const double* __restrict row = X + i * p;
      const double eta = alpha + row_dot(row, beta, p);
      double sig;
      lp += c[i] * eta - t[i] * softplus(eta, sig);
      const double r = c[i] - t[i] * sig;
      g_alpha += r;
      for (std::size_t k = 0; k < p; ++k) gb[k] += r * row[k];
    }
    g[0] = g_alpha;
    return lp;
  }
};

// ---- kidiq (kidscore_interaction) ------------------------------------------------------------
// kid_score ~ normal(Xβ, σ), X = [1, mom_hs, mom_iq, mom_hs·mom_iq], β flat, σ ~ half_cauchy(0,
// 2.5), θ = (β[4], log σ) with the log-Jacobian. The first n rows of shared/posteriors'
// kidiq data; for n > 434 the 434 rows resampled with a fixed seed. The twin is the
// straightforward O(n) loop a competent C++ programmer writes.

struct kidiq_rows {
  std::vector<double> X, y;  // n × 4 row-major, n
  std::size_t n = 0;
};

// The project's root: the first folder at or above this source file's (or, where the compiler
// recorded a relative __FILE__, the working directory's) that holds include/tyche/tyche.hpp.
// A search that reaches the file system's root stops with an error (it looped there before).
std::filesystem::path posteriors_dir() {
  namespace fs = std::filesystem;
  for (fs::path start : {fs::absolute(fs::path(__FILE__)).parent_path(), fs::current_path()}) {
    for (fs::path p = start;; p = p.parent_path()) {
      if (fs::exists(p / "include" / "tyche" / "tyche.hpp")) return p / ".." / "shared" / "posteriors";
      if (p == p.parent_path()) break;
    }
  }
  throw std::runtime_error(std::string("bench_gradients: no folder above ") + __FILE__ +
                           " or the working directory holds include/tyche/tyche.hpp; run it from the "
                           "project's tree (the shared posteriors are found at <root>/../shared)");
}

kidiq_rows kidiq_data(std::size_t n) {
  const auto dir = posteriors_dir() / "kidiq-kidscore_interaction" / "data.json";
  const tyche::data_file d = tyche::read_json_data(dir);
  const auto rows = static_cast<std::size_t>(d.integer("N"));
  const auto& score = d.vector("kid_score", rows);
  const auto& hs = d.vector("mom_hs", rows);
  const auto& iq = d.vector("mom_iq", rows);
  kidiq_rows k;
  k.n = n;
  std::mt19937_64 rng(20261121);
  std::uniform_int_distribution<std::size_t> pick(0, rows - 1);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t r = n <= rows ? i : pick(rng);
    k.X.insert(k.X.end(), {1.0, hs[r], iq[r], hs[r] * iq[r]});
    k.y.push_back(score[r]);
  }
  return k;
}

struct kidiq_hand {
  const double* X;
  const double* y;
  std::size_t n;
  double operator()(const double* __restrict th, double* __restrict g) const {
    const double b0 = th[0], b1 = th[1], b2 = th[2], b3 = th[3], log_sigma = th[4];
    const double sigma = std::exp(log_sigma), inv_var = 1.0 / (sigma * sigma);
    double ss = 0, g0 = 0, g1 = 0, g2 = 0, g3 = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double* x = X + 4 * i;
      const double r = y[i] - (b0 * x[0] + b1 * x[1] + b2 * x[2] + b3 * x[3]);
      ss += r * r;
      g0 += r * x[0];
      g1 += r * x[1];
      g2 += r * x[2];
      g3 += r * x[3];
    }
    const double nn = static_cast<double>(n);
    const double u = sigma / 2.5;
    // Σ normal_lpdf + half_cauchy_lpdf(σ | 2.5) + log σ (Jacobian).
    const double lp = -0.5 * ss * inv_var - nn * log_sigma - nn * 0.91893853320467274178 -
                      std::log1p(u * u) - std::log(2.5) + (0.69314718055994530942 - 1.14472988584940017414) +
                      log_sigma;
    g[0] = g0 * inv_var;
    g[1] = g1 * inv_var;
    g[2] = g2 * inv_var;
    g[3] = g3 * inv_var;
    g[4] = ss * inv_var - nn - 2 * u * u / (1 + u * u) + 1;
    return lp;
  }
};

// ---- arK (posteriordb arK-arK) ------------------------------------------------------------------
// y[t] ~ normal(alpha + Σₖ beta[k] y[t−k], sigma), t = K+1..T; alpha, beta ~ normal(0, 10),
// sigma ~ half_cauchy(0, 2.5); θ = (alpha, beta[5], log sigma). The twin: one pass over t.

constexpr double half_log_two_pi = 0.91893853320467274178;
constexpr double log_two = 0.69314718055994530942;
constexpr double log_pi = 1.14472988584940017414;

struct ark_hand {
  const double* y;
  std::size_t t_len;
  static constexpr std::size_t K = 5;
  double operator()(const double* __restrict th, double* __restrict g) const {
    const double alpha = th[0], log_sigma = th[6], sigma = std::exp(log_sigma);
    const double inv_var = 1.0 / (sigma * sigma);
    double ss = 0, ga = 0, gb[K] = {0, 0, 0, 0, 0};
    for (std::size_t t = K; t < t_len; ++t) {
      double m = alpha;
      for (std::size_t k = 0; k < K; ++k) m += th[1 + k] * y[t - k - 1];
      const double r = y[t] - m;
      ss += r * r;
      ga += r;
      for (std::size_t k = 0; k < K; ++k) gb[k] += r * y[t - k - 1];
    }
    const double n = double(t_len - K);
    double lp = -0.5 * ss * inv_var - n * log_sigma - n * half_log_two_pi;
    lp += -0.5 * alpha * alpha / 100 - std::log(10.0) - half_log_two_pi;
    g[0] = ga * inv_var - alpha / 100;
    for (std::size_t k = 0; k < K; ++k) {
      lp += -0.5 * th[1 + k] * th[1 + k] / 100 - std::log(10.0) - half_log_two_pi;
      g[1 + k] = gb[k] * inv_var - th[1 + k] / 100;
    }
    const double u = sigma / 2.5;
    lp += log_two - log_pi - std::log(2.5) - std::log1p(u * u) + log_sigma;
    g[6] = ss * inv_var - n - 2 * u * u / (1 + u * u) + 1;
    return lp;
  }
};

// ---- low_dim_gauss_mix (posteriordb) -------------------------------------------------------------
// y[n] ~ theta N(mu[1], sigma[1]) + (1 − theta) N(mu[2], sigma[2]), mu ordered ~ normal(0, 2),
// sigma ~ half_normal(2), theta ~ beta(5, 5); θ = (mu[1], log(mu[2] − mu[1]), log sigma[1..2],
// logit theta). The twin: one pass with a two-term log-sum-exp per observation.

struct gauss_mix_hand {
  const double* y;
  std::size_t n;
  double operator()(const double* __restrict th, double* __restrict g) const {
    const double eb = std::exp(th[1]);
    const double mu1 = th[0], mu2 = th[0] + eb;
    const double s1 = std::exp(th[2]), s2 = std::exp(th[3]);
    const double theta = 1 / (1 + std::exp(-th[4]));
    const double lt = std::log(theta), l1t = std::log1p(-theta);
    const double is1 = 1 / s1, is2 = 1 / s2;
    const double c1 = lt - th[2] - half_log_two_pi, c2 = l1t - th[3] - half_log_two_pi;
    double lp = 0, gm1 = 0, gm2 = 0, gs1 = 0, gs2 = 0, gw1 = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double z1 = (y[i] - mu1) * is1, z2 = (y[i] - mu2) * is2;
      const double l1 = c1 - 0.5 * z1 * z1, l2 = c2 - 0.5 * z2 * z2;
      const double top = std::max(l1, l2);
      const double e1 = std::exp(l1 - top), e2 = std::exp(l2 - top);
      const double inv = 1 / (e1 + e2);
      lp += top + std::log(e1 + e2);
      const double w1 = e1 * inv, w2 = e2 * inv;
      gm1 += w1 * z1;
      gm2 += w2 * z2;
      gs1 += w1 * (z1 * z1 - 1);
      gs2 += w2 * (z2 * z2 - 1);
      gw1 += w1;
    }
    const double nn = double(n);
    // d/dmu_k = Σ w_k z_k / σ_k; d/dlog σ_k = Σ w_k (z_k² − 1); d/dθ = Σ (w1/θ − w2/(1 − θ)).
    const double dmu1 = gm1 * is1 - mu1 / 4, dmu2 = gm2 * is2 - mu2 / 4;
    lp += -0.125 * (mu1 * mu1 + mu2 * mu2) - 2 * (std::log(2.0) + half_log_two_pi);
    lp += 2 * (0.5 * (log_two - log_pi) - std::log(2.0)) - 0.125 * (s1 * s1 + s2 * s2);
    lp += std::lgamma(10.0) - 2 * std::lgamma(5.0) + 4 * lt + 4 * l1t;
    lp += th[1] + th[2] + th[3] + lt + l1t;  // log-Jacobians
    g[0] = dmu1 + dmu2;
    g[1] = dmu2 * eb + 1;
    g[2] = gs1 - 0.25 * s1 * s1 + 1;
    g[3] = gs2 - 0.25 * s2 * s2 + 1;
    // θ(1 − θ) d/dθ of Σ log-mixture = Σ (w1 (1 − θ) − w2 θ) = gw1 − nθ; beta(5, 5) and the
    // Jacobian add 5(1 − θ) − 5θ.
    g[4] = (gw1 - nn * theta) + 5 * (1 - theta) - 5 * theta;
    return lp;
  }
};

// ---- glmm_poisson ----------------------------------------------------------------------------------
// y[i] ~ poisson_log(alpha + beta x[i] + sigma_u z[group[i]]), alpha ~ normal(0, 5),
// beta ~ normal(0, 1), sigma_u ~ half_normal(1), z ~ std_normal (20 groups); N = 500 counts,
// synthetic with a fixed seed. θ = (alpha, beta, log sigma_u, z[20]). tyche gathers z by the
// group indices (gather(z, group)); the twin indexes z[group[i]] in its loop.

struct glmm_data {
  static constexpr std::size_t n = 500, groups = 20;
  std::vector<double> x, y;
  std::vector<int> group;
  glmm_data() {
    std::mt19937_64 rng(424242);
    std::normal_distribution<double> z01;
    std::vector<double> u(groups);
    for (auto& v : u) v = 0.6 * z01(rng);
    for (std::size_t i = 0; i < n; ++i) {
      x.push_back(z01(rng));
      group.push_back(int(i % groups));
      y.push_back(double(std::poisson_distribution<int>(std::exp(0.5 + 0.3 * x.back() + u[i % groups]))(rng)));
    }
  }
};

struct glmm_hand {
  const glmm_data* d;
  double log_factorials = 0;  // Σ lgamma(y + 1)
  explicit glmm_hand(const glmm_data* data) : d(data) {
    for (double v : d->y) log_factorials += std::lgamma(v + 1);
  }
  double operator()(const double* __restrict th, double* __restrict g) const {
    const double alpha = th[0], beta = th[1], log_s = th[2], s = std::exp(log_s);
    const double* z = th + 3;
    double* gz = g + 3;
    for (std::size_t k = 0; k < glmm_data::groups; ++k) gz[k] = 0;
    double lp = 0, ga = 0, gb = 0, gs = 0;
    for (std::size_t i = 0; i < glmm_data::n; ++i) {
      const int k = d->group[i];
      const double eta = alpha + beta * d->x[i] + s * z[k];
      const double mu = std::exp(eta);
      lp += d->y[i] * eta - mu;
      const double r = d->y[i] - mu;
      ga += r;
      gb += r * d->x[i];
      gs += r * z[k];
      gz[k] += r;
    }
    lp -= log_factorials;
    lp += -0.5 * alpha * alpha / 25 - std::log(5.0) - half_log_two_pi;
    lp += -0.5 * beta * beta - half_log_two_pi;
    lp += 0.5 * (log_two - log_pi) - 0.5 * s * s + log_s;
    for (std::size_t k = 0; k < glmm_data::groups; ++k) {
      lp += -0.5 * z[k] * z[k] - half_log_two_pi;
      gz[k] = s * gz[k] - z[k];
    }
    g[0] = ga - alpha / 25;
    g[1] = gb - beta;
    g[2] = s * gs - s * s + 1;
    return lp;
  }
};

// ---- car_poisson: disease mapping with a proper CAR prior ----------------------------------------
// y[i] ~ poisson_log(log E[i] + b0 + phi[i]) over a 10 × 10 grid of areas (rook neighbours: 180
// pairs), phi ~ car(alpha, tau, graph), alpha ~ uniform(0, 1), tau ~ gamma(2, 2), b0 ~
// normal(0, 1); synthetic with a fixed seed. θ = (b0, logit alpha, log tau, phi[100]). tyche's
// car is O(K + E) per gradient (the eigenvalues once); a second tyche row writes the same prior
// as multi_normal_prec(0, tau * (D - alpha * W)), O(K³), against the same twin. The twin: the
// sums over areas and pairs.

struct car_data {
  static constexpr std::size_t side = 10, k = side * side;
  std::vector<int> n1, n2;
  std::vector<double> y, log_e, d, w = std::vector<double>(k * k, 0.0), dmat = std::vector<double>(k * k, 0.0);
  std::vector<double> lambda;
  car_data() {
    for (std::size_t i = 0; i < k; ++i) {
      if (i % side + 1 < side) n1.push_back(int(i)), n2.push_back(int(i + 1));
      if (i + side < k) n1.push_back(int(i)), n2.push_back(int(i + side));
    }
    d.assign(k, 0.0);
    for (std::size_t p = 0; p < n1.size(); ++p) {
      d[std::size_t(n1[p])] += 1, d[std::size_t(n2[p])] += 1;
      w[std::size_t(n1[p]) * k + std::size_t(n2[p])] = w[std::size_t(n2[p]) * k + std::size_t(n1[p])] = 1;
    }
    for (std::size_t i = 0; i < k; ++i) dmat[i * k + i] = d[i];
    std::vector<double> nw(k * k, 0.0);
    for (std::size_t p = 0; p < n1.size(); ++p) {
      const auto i = std::size_t(n1[p]), j = std::size_t(n2[p]);
      nw[i * k + j] = nw[j * k + i] = 1 / std::sqrt(d[i] * d[j]);
    }
    lambda = tyche::detail::symmetric_eigenvalues(nw, k);
    std::mt19937_64 rng(2718);
    for (std::size_t i = 0; i < k; ++i) {
      log_e.push_back(std::log(2.0 + double(i % 7)));
      const double eta = log_e.back() - 0.2 + 0.4 * std::sin(0.3 * double(i));
      y.push_back(double(std::poisson_distribution<int>(std::exp(eta))(rng)));
    }
  }
};

struct car_hand {
  const car_data* d;
  double constant = 0;  // −Σ lgamma(y + 1) + ½ Σ log dᵢ − (K/2) log 2π − ½ log 2π (b0's) + 2 log 2 (gamma(2, 2))
  explicit car_hand(const car_data* data) : d(data) {
    for (double v : d->y) constant -= std::lgamma(v + 1);
    for (double v : d->d) constant += 0.5 * std::log(v);
    constant -= (0.5 * double(car_data::k) + 0.5) * 2 * half_log_two_pi;
    constant += 2 * log_two;
  }
  double operator()(const double* __restrict th, double* __restrict g) const {
    constexpr std::size_t k = car_data::k;
    const double b0 = th[0], u = th[1], log_tau = th[2];
    const double alpha = 1 / (1 + std::exp(-u)), tau = std::exp(log_tau);
    const double* phi = th + 3;
    double* gphi = g + 3;
    double lp = constant, gb = 0;
    double sd = 0, sw = 0;
    for (std::size_t i = 0; i < k; ++i) {
      const double eta = d->log_e[i] + b0 + phi[i], mu = std::exp(eta);
      lp += d->y[i] * eta - mu;
      gb += d->y[i] - mu;
      gphi[i] = d->y[i] - mu - tau * d->d[i] * phi[i];
      sd += d->d[i] * phi[i] * phi[i];
    }
    for (std::size_t p = 0; p < d->n1.size(); ++p) {
      const auto i = std::size_t(d->n1[p]), j = std::size_t(d->n2[p]);
      sw += phi[i] * phi[j];
      gphi[i] += tau * alpha * phi[j];
      gphi[j] += tau * alpha * phi[i];
    }
    double ld = 0, dl = 0;
    for (double l : d->lambda) {
      ld += std::log1p(-alpha * l);
      dl += l / (1 - alpha * l);
    }
    lp += 0.5 * double(k) * log_tau + 0.5 * ld - 0.5 * tau * (sd - 2 * alpha * sw);
    lp += -0.5 * b0 * b0;                                   // b0 ~ normal(0, 1)
    lp += std::log(alpha) + std::log1p(-alpha);            // uniform(0, 1) through logistic: Jacobian
    lp += log_tau - 2 * tau + log_tau;                     // gamma(2, 2) and its log Jacobian
    g[0] = gb - b0;
    g[1] = (tau * sw - 0.5 * dl) * alpha * (1 - alpha) + 1 - 2 * alpha;
    g[2] = 0.5 * double(k) - 0.5 * tau * (sd - 2 * alpha * sw) + 2 - 2 * tau;
    return lp;
  }
};

// ---- zip_regression: a zero-inflated Poisson regression ------------------------------------------
// y[i] ~ zero_inflated(poisson(exp(b0 + b1 x[i])), zi), b0, b1 ~ normal(0, 1), zi ~ beta(1, 1);
// N = 1000, synthetic with a fixed seed (30 % structural zeros). θ = (b0, b1, logit zi). tyche:
// one op over the observations from poisson's pointwise log densities at y and at 0; the twin: one
// pass, one exp per observation.

struct zip_data {
  static constexpr std::size_t n = 1000;
  std::vector<double> x, y;
  zip_data() {
    std::mt19937_64 rng(31415);
    std::normal_distribution<double> z01;
    std::uniform_real_distribution<double> u01;
    for (std::size_t i = 0; i < n; ++i) {
      x.push_back(z01(rng));
      const double lam = std::exp(0.4 + 0.6 * x.back());
      y.push_back(u01(rng) < 0.3 ? 0.0 : double(std::poisson_distribution<int>(lam)(rng)));
    }
  }
};

struct zip_hand {
  const zip_data* d;
  double log_factorials = 0;  // Σ lgamma(y + 1) over the positive y
  explicit zip_hand(const zip_data* data) : d(data) {
    for (double v : d->y) log_factorials += std::lgamma(v + 1);
  }
  double operator()(const double* __restrict th, double* __restrict g) const {
    const double b0 = th[0], b1 = th[1], u = th[2];
    const double zi = 1 / (1 + std::exp(-u)), log1m_zi = std::log1p(-zi);
    double lp = -log_factorials, g0 = 0, g1 = 0, gz = 0;
    for (std::size_t i = 0; i < zip_data::n; ++i) {
      const double eta = b0 + b1 * d->x[i], lam = std::exp(eta);
      double deta;
      if (d->y[i] == 0) {
        const double e = std::exp(-lam), p0 = zi + (1 - zi) * e;
        lp += std::log(p0);
        gz += (1 - e) / p0;
        deta = -(1 - zi) * e * lam / p0;
      } else {
        lp += log1m_zi + d->y[i] * eta - lam;
        gz -= 1 / (1 - zi);
        deta = d->y[i] - lam;
      }
      g0 += deta;
      g1 += deta * d->x[i];
    }
    lp += -0.5 * (b0 * b0 + b1 * b1) - 2 * half_log_two_pi + std::log(zi) + log1m_zi;  // priors, Jacobian
    g[0] = g0 - b0;
    g[1] = g1 - b1;
    g[2] = gz * zi * (1 - zi) + 1 - 2 * zi;
    return lp;
  }
};

// ---- hmm_scan: a 2-state Gaussian HMM, the forward algorithm by scan ---------------------------
// y_t | z_t ~ normal(mu[z_t], 1), transitions fixed (stay 0.9 and 0.8), p(z_0) = (1/2, 1/2),
// mu ~ normal(0, 3) (two unconstrained values). The twin: the forward algorithm, then its
// reverse pass by hand (the adjoint of α_t from that of α_t+1 through the softmax weights).

struct hmm_data {
  static constexpr std::size_t n = 1000;
  std::vector<double> y, y_first, y_rest;
  double lg[2][2] = {{std::log(0.9), std::log(0.1)}, {std::log(0.2), std::log(0.8)}};
  hmm_data() {
    std::mt19937_64 rng(77);
    std::normal_distribution<double> z01;
    std::uniform_real_distribution<double> u01;
    int z = 0;
    for (std::size_t t = 0; t < n; ++t) {
      if (u01(rng) > (z == 0 ? 0.9 : 0.8)) z = 1 - z;
      y.push_back((z == 0 ? -1.0 : 2.0) + z01(rng));
    }
    y_first.assign(y.begin(), y.begin() + 1);
    y_rest.assign(y.begin() + 1, y.end());
  }
};

struct hmm_hand {
  const hmm_data* d;
  double operator()(const double* __restrict th, double* __restrict g) const {
    const std::size_t n = hmm_data::n;
    thread_local std::vector<double> a(2 * n), e(2 * n);
    const double* y = d->y.data();
    for (std::size_t t = 0; t < n; ++t)
      for (int k = 0; k < 2; ++k) {
        const double r = y[t] - th[k];
        e[2 * t + k] = -0.5 * r * r - half_log_two_pi;
      }
    a[0] = std::log(0.5) + e[0];
    a[1] = std::log(0.5) + e[1];
    for (std::size_t t = 1; t < n; ++t)
      for (int j = 0; j < 2; ++j) {
        const double u = a[2 * (t - 1)] + d->lg[0][j], v = a[2 * (t - 1) + 1] + d->lg[1][j];
        const double top = std::max(u, v);
        a[2 * t + j] = top + std::log(std::exp(u - top) + std::exp(v - top)) + e[2 * t + j];
      }
    const double u = a[2 * (n - 1)], v = a[2 * (n - 1) + 1], top = std::max(u, v);
    const double lse = top + std::log(std::exp(u - top) + std::exp(v - top));
    double ab[2] = {std::exp(u - lse), std::exp(v - lse)};  // adjoint of α_{n−1}
    double gm[2] = {0, 0};
    for (std::size_t t = n; t-- > 0;) {
      for (int k = 0; k < 2; ++k) gm[k] += ab[k] * (y[t] - th[k]);
      if (t == 0) break;
      double prev[2] = {0, 0};
      for (int j = 0; j < 2; ++j) {
        const double inner = a[2 * t + j] - e[2 * t + j];  // log Σᵢ exp(α_{t−1,i} + lg_ij)
        for (int i = 0; i < 2; ++i) prev[i] += ab[j] * std::exp(a[2 * (t - 1) + i] + d->lg[i][j] - inner);
      }
      ab[0] = prev[0];
      ab[1] = prev[1];
    }
    double lp = lse;
    for (int k = 0; k < 2; ++k) {
      lp += -0.5 * th[k] * th[k] / 9 - std::log(3.0) - half_log_two_pi;
      g[k] = gm[k] - th[k] / 9;
    }
    return lp;
  }
};

// ---- arma11: ARMA(1,1) errors by scan ----------------------------------------------------------
// err_0 = y_0 − (mu + phi·mu), err_t = y_t − (mu + phi·y_{t−1} + theta·err_{t−1}),
// err ~ normal(0, sigma); mu ~ normal(0, 10), phi, theta ~ normal(0, 2), sigma ~ half_normal(1)
// (θ: mu, phi, theta, log sigma). The twin: the recursion, then the errors' adjoints backwards
// (ē_t = −err_t/σ² − theta·ē_{t+1}).

struct arma_data {
  static constexpr std::size_t n = 1000;
  std::vector<double> y, y_now, y_before;
  arma_data() {
    std::mt19937_64 rng(78);
    std::normal_distribution<double> z01;
    double before = 1.25, err_before = 0;
    for (std::size_t t = 0; t < n; ++t) {
      const double err = z01(rng);
      y.push_back(0.5 + 0.6 * before + 0.3 * err_before + err);
      before = y.back();
      err_before = err;
    }
    y_now.assign(y.begin() + 1, y.end());
    y_before.assign(y.begin(), y.end() - 1);
  }
};

struct arma_hand {
  const arma_data* d;
  double operator()(const double* __restrict th, double* __restrict g) const {
    const std::size_t n = arma_data::n;
    thread_local std::vector<double> err(n);
    const double mu = th[0], phi = th[1], theta = th[2], sigma = std::exp(th[3]);
    const double* y = d->y.data();
    const double inv_var = 1 / (sigma * sigma);
    err[0] = y[0] - (mu + phi * mu);
    double ss = err[0] * err[0];
    for (std::size_t t = 1; t < n; ++t) {
      err[t] = y[t] - (mu + phi * y[t - 1] + theta * err[t - 1]);
      ss += err[t] * err[t];
    }
    double gmu = 0, gphi = 0, gtheta = 0, eb_next = 0;
    for (std::size_t t = n; t-- > 0;) {
      const double eb = -err[t] * inv_var - theta * eb_next;
      if (t == 0) {
        gmu -= eb * (1 + phi);
        gphi -= eb * mu;
      } else {
        gmu -= eb;
        gphi -= eb * y[t - 1];
        gtheta -= eb * err[t - 1];
      }
      eb_next = eb;
    }
    double lp = -0.5 * ss * inv_var - double(n) * (th[3] + half_log_two_pi);
    lp += -0.5 * mu * mu / 100 - std::log(10.0) - half_log_two_pi;
    lp += -0.5 * phi * phi / 4 - log_two - half_log_two_pi;
    lp += -0.5 * theta * theta / 4 - log_two - half_log_two_pi;
    lp += log_two - 0.5 * sigma * sigma - half_log_two_pi + th[3];
    g[0] = gmu - mu / 100;
    g[1] = gphi - phi / 4;
    g[2] = gtheta - theta / 4;
    g[3] = ss * inv_var - double(n) - sigma * sigma + 1;
    return lp;
  }
};

// --- A general linear solve with a matrix of parameters: x = A⁻¹ b, A = M + diag(exp(lw)), K = 10,
// lw ~ N(0, 1), target −½ xᵀx. tyche: mdivide_left (an LU solve per SIMD lane, its factors kept
// for the reverse pass's solve with Aᵀ). The twin: one LU factorisation with partial pivoting (a
// branching pivot search), reused for the adjoint solve Aᵀλ = −x; Ā = −λ xᵀ, of which the
// diagonal reaches lw. ---
struct solve_data {
  static constexpr std::size_t k = 10;
  std::vector<double> m, b;
  solve_data() {
    std::mt19937_64 rng(83);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (std::size_t e = 0; e < k * k; ++e) m.push_back(u(rng) + (e % (k + 1) == 0 ? 2.0 : 0.0));
    for (std::size_t i = 0; i < k; ++i) b.push_back(u(rng));
  }
};

struct solve_hand {
  const solve_data* d;
  double operator()(const double* __restrict th, double* __restrict g) const {
    constexpr std::size_t k = solve_data::k;
    double lu[k * k], x[k], w[k];
    std::size_t perm[k];
    for (std::size_t e = 0; e < k * k; ++e) lu[e] = d->m[e];
    for (std::size_t i = 0; i < k; ++i) lu[i * k + i] += std::exp(th[i]), perm[i] = i;
    for (std::size_t c = 0; c < k; ++c) {  // P A = L U, L unit lower (below the diagonal)
      std::size_t p = c;
      for (std::size_t r = c + 1; r < k; ++r)
        if (std::fabs(lu[r * k + c]) > std::fabs(lu[p * k + c])) p = r;
      if (p != c) {
        for (std::size_t j = 0; j < k; ++j) std::swap(lu[c * k + j], lu[p * k + j]);
        std::swap(perm[c], perm[p]);
      }
      for (std::size_t r = c + 1; r < k; ++r) {
        const double f = lu[r * k + c] / lu[c * k + c];
        lu[r * k + c] = f;
        for (std::size_t j = c + 1; j < k; ++j) lu[r * k + j] -= f * lu[c * k + j];
      }
    }
    for (std::size_t i = 0; i < k; ++i) {  // L y = P b, then U x = y
      double acc = d->b[perm[i]];
      for (std::size_t j = 0; j < i; ++j) acc -= lu[i * k + j] * x[j];
      x[i] = acc;
    }
    for (std::size_t i = k; i-- > 0;) {
      double acc = x[i];
      for (std::size_t j = i + 1; j < k; ++j) acc -= lu[i * k + j] * x[j];
      x[i] = acc / lu[i * k + i];
    }
    double lp = 0.0;
    for (std::size_t i = 0; i < k; ++i) lp += -0.5 * x[i] * x[i] - 0.5 * th[i] * th[i] - half_log_two_pi;
    // Aᵀ λ = −x with Aᵀ = Uᵀ Lᵀ P: Uᵀ z = −x, Lᵀ w = z, λ = Pᵀ w.
    for (std::size_t i = 0; i < k; ++i) {
      double acc = -x[i];
      for (std::size_t j = 0; j < i; ++j) acc -= lu[j * k + i] * w[j];
      w[i] = acc / lu[i * k + i];
    }
    for (std::size_t i = k; i-- > 0;) {
      double acc = w[i];
      for (std::size_t j = i + 1; j < k; ++j) acc -= lu[j * k + i] * w[j];
      w[i] = acc;
    }
    double lambda[k];
    for (std::size_t i = 0; i < k; ++i) lambda[perm[i]] = w[i];
    for (std::size_t i = 0; i < k; ++i) g[i] = -lambda[i] * x[i] * std::exp(th[i]) - th[i];
    return lp;
  }
};

// --- local level (Kalman filter) by scan: examples/local_level.cpp's model on 1000 simulated
// observations. Twin: the filter forwards, keeping m, P, F, v per step, and its adjoints by hand.
struct local_level_data {
  static constexpr std::size_t n = 1000;
  std::vector<double> y;
  local_level_data() {
    std::mt19937_64 rng(79);
    std::normal_distribution<double> z01;
    double level = 2.0;
    for (std::size_t t = 0; t < n; ++t) {
      y.push_back(level + 0.8 * z01(rng));
      level += 0.3 * z01(rng);
    }
  }
};

struct local_level_hand {
  const local_level_data* d;
  double operator()(const double* __restrict th, double* __restrict g) const {
    const std::size_t n = local_level_data::n;
    thread_local std::vector<double> ms(n), ps(n), fs(n), vs(n);
    const double q = std::exp(th[0]), r = std::exp(th[1]);
    const double qv = q * q, rv = r * r;
    const double* y = d->y.data();
    double m = 0.0, p = 10.0, ll = 0.0;
    for (std::size_t t = 0; t < n; ++t) {
      const double f = p + rv, v = y[t] - m, k = p / f;
      ms[t] = m;
      ps[t] = p;
      fs[t] = f;
      vs[t] = v;
      ll -= 0.5 * std::log(f) + 0.5 * v * v / f + half_log_two_pi;
      m += k * v;
      p = p * rv / f + qv;
    }
    // Adjoints of (m, P) after step t; ll's adjoint is 1 throughout.
    double am = 0, ap = 0, ar = 0, aq = 0;
    for (std::size_t t = n; t-- > 0;) {
      const double p0 = ps[t], f = fs[t], v = vs[t];
      const double inv_f = 1 / f, inv_f2 = inv_f * inv_f;
      const double dll_df = -0.5 * inv_f + 0.5 * v * v * inv_f2;
      const double am_prev = am * (1 - p0 * inv_f) + v * inv_f;
      const double ap_prev = am * v * rv * inv_f2 + ap * rv * rv * inv_f2 + dll_df;
      ar += -am * p0 * v * inv_f2 + ap * p0 * p0 * inv_f2 + dll_df;
      aq += ap;
      am = am_prev;
      ap = ap_prev;
    }
    // half_normal(1) priors on q and r, on the log scale with the log-Jacobian.
    const double lp = ll + 2 * log_two - 0.5 * (qv + rv) - 2 * half_log_two_pi + th[0] + th[1];
    g[0] = aq * 2 * qv - qv + 1;
    g[1] = ar * 2 * rv - rv + 1;
    return lp;
  }
};

// --- GARCH(1,1) variances by scan_states (a scalar state: K = 1), 1000 returns observed with
// them. Twin: the variances forwards, their adjoints backwards by hand.
struct garch_data {
  static constexpr std::size_t n = 1000;
  std::vector<double> before, after;  // y[0 .. n − 2] (the lagged returns), y[1 .. n − 1]
  garch_data() {
    std::mt19937_64 rng(89);
    std::normal_distribution<double> z01;
    std::vector<double> y;
    double v = 1.0, prev = 0.0;
    for (std::size_t t = 0; t < n; ++t) {
      if (t > 0) v = 0.1 + 0.15 * (prev - 0.05) * (prev - 0.05) + 0.8 * v;
      prev = 0.05 + std::sqrt(v) * z01(rng);
      y.push_back(prev);
    }
    before.assign(y.begin(), y.end() - 1);
    after.assign(y.begin() + 1, y.end());
  }
};

struct garch_hand {
  const garch_data* d;
  double operator()(const double* __restrict th, double* __restrict g) const {
    const std::size_t n = d->before.size();
    thread_local std::vector<double> vs(n + 1);
    const double mu = th[0], om = std::exp(th[1]);
    const double al = 1 / (1 + std::exp(-th[2])), be = 1 / (1 + std::exp(-th[3]));
    const double* yb = d->before.data();
    const double* ya = d->after.data();
    double ll = 0;
    vs[0] = 1.0;
    for (std::size_t t = 0; t < n; ++t) {
      const double r = yb[t] - mu, e = ya[t] - mu;
      const double v = om + al * r * r + be * vs[t];
      vs[t + 1] = v;
      ll -= 0.5 * std::log(v) + 0.5 * e * e / v + half_log_two_pi;
    }
    // ā: the adjoint of the variance after step t, carried back through β.
    double a = 0, g_mu = 0, g_om = 0, g_al = 0, g_be = 0;
    for (std::size_t t = n; t-- > 0;) {
      const double r = yb[t] - mu, e = ya[t] - mu, v = vs[t + 1], inv_v = 1 / v;
      a += -0.5 * inv_v + 0.5 * e * e * inv_v * inv_v;
      g_mu += e * inv_v - 2 * a * al * r;
      g_om += a;
      g_al += a * r * r;
      g_be += a * vs[t];
      a *= be;
    }
    // Priors: normal(0, 1) on mu, half_normal(1) on omega (log scale, with its Jacobian),
    // uniform(0, 1) on alpha and beta (logit scale, with theirs).
    const double lp = ll - 0.5 * mu * mu - half_log_two_pi - 0.5 * om * om - half_log_two_pi + log_two + th[1] +
                      std::log(al * (1 - al)) + std::log(be * (1 - be));
    g[0] = g_mu - mu;
    g[1] = (g_om - om) * om + 1;
    g[2] = g_al * al * (1 - al) + 1 - 2 * al;
    g[3] = g_be * be * (1 - be) + 1 - 2 * be;
    return lp;
  }
};

// --- Weibull survival with right censoring: 1000 times, a covariate on the log scale, each
// time censored where it exceeds a uniform(0.5, 6) follow-up (about a third). Twin: the
// observed times' log density and the censored ones' log survival function −(t/σ)^α by hand,
// log t computed once with the data (as tyche's partial evaluation does).
struct survival_data {
  static constexpr std::size_t n = 1000;
  std::vector<double> x_obs, t_obs, x_cens, t_cens, log_t_obs, log_t_cens;  // the logs for the twin
  survival_data() {
    std::mt19937_64 rng(83);
    std::normal_distribution<double> z01;
    std::uniform_real_distribution<double> follow_up(0.5, 6.0);
    for (std::size_t i = 0; i < n; ++i) {
      const double x = z01(rng);
      const double t = std::weibull_distribution<double>(1.5, std::exp(1.0 + 0.5 * x))(rng);
      const double stop = follow_up(rng);
      if (t <= stop) {
        x_obs.push_back(x);
        t_obs.push_back(t);
      } else {
        x_cens.push_back(x);
        t_cens.push_back(stop);
      }
    }
    for (const double t : t_obs) log_t_obs.push_back(std::log(t));
    for (const double t : t_cens) log_t_cens.push_back(std::log(t));
  }
};

struct survival_hand {
  const survival_data* d;
  // θ = (log α, b0, b1): α ~ lognormal(0, 1) (with its log-Jacobian), b ~ normal(0, 2).
  double operator()(const double* __restrict th, double* __restrict g) const {
    const double a = std::exp(th[0]), b0 = th[1], b1 = th[2], log_a = th[0];
    double lp = -0.5 * th[0] * th[0] - half_log_two_pi - 0.125 * (b0 * b0 + b1 * b1) - 2 * (log_two + half_log_two_pi);
    double ga = 0, g0 = 0, g1 = 0;  // ∂/∂α, ∂/∂b0, ∂/∂b1 of the likelihood
    for (std::size_t i = 0; i < d->t_obs.size(); ++i) {
      const double log_s = b0 + b1 * d->x_obs[i], z = d->log_t_obs[i] - log_s, u = std::exp(a * z);
      lp += log_a - log_s + (a - 1) * z - u;
      ga += 1 / a + z - u * z;
      const double gs = a * u - a;
      g0 += gs;
      g1 += gs * d->x_obs[i];
    }
    for (std::size_t j = 0; j < d->t_cens.size(); ++j) {
      const double log_s = b0 + b1 * d->x_cens[j], z = d->log_t_cens[j] - log_s, u = std::exp(a * z);
      lp -= u;
      ga -= u * z;
      g0 += a * u;
      g1 += a * u * d->x_cens[j];
    }
    g[0] = a * ga - th[0];
    g[1] = g0 - 0.25 * b0;
    g[2] = g1 - 0.25 * b1;
    return lp;
  }
};

// --- change point (examples/change_point.cpp's data): the marginal over s by per-s sums of the
// data (change_point) and by tabulate's double loop (change_point_tabulate). Twins: the same
// closed form by hand, and the double loop by hand.
struct change_point_data {
  std::vector<double> y{5, 3, 1, 3, 5, 1, 1, 0, 5, 6, 2, 2, 4, 4, 1, 2, 3, 1, 1, 2,
                        2, 2, 3, 3, 4, 0, 1, 0, 0, 0, 1, 1, 2, 2, 0, 2, 0, 2, 3, 0,
                        0, 1, 1, 2, 0, 1, 0, 2, 0, 1, 0, 0, 1, 0, 1, 0, 0, 4, 0, 0};
  std::vector<double> t_index, early_sum, early_n, late_sum, late_n;
  double c = 0;  // −log T − Σ log y!
  change_point_data() {
    double total = 0;
    c = -std::log(double(y.size()));
    for (double v : y) {
      total += v;
      c -= std::lgamma(v + 1);
    }
    double before = 0;
    for (std::size_t s = 0; s < y.size(); ++s) {
      t_index.push_back(double(s));
      early_sum.push_back(before);
      early_n.push_back(double(s));
      late_sum.push_back(total - before);
      late_n.push_back(double(y.size() - s));
      before += y[s];
    }
  }
};

/// log Σ_s exp(lp_s) and its gradient from lp and the per-s derivatives (de_s, dl_s), plus the
/// exponential(1) priors of e and l on the log scale.
inline double change_point_finish(const std::vector<double>& lp, const std::vector<double>& de,
                                  const std::vector<double>& dl, double c, double e, double l, const double* th,
                                  double* g) {
  double top = -INFINITY;
  for (double v : lp) top = std::max(top, v);
  double acc = 0, ge = 0, gl = 0;
  for (std::size_t s = 0; s < lp.size(); ++s) {
    const double w = std::exp(lp[s] - top);
    acc += w;
    ge += w * de[s];
    gl += w * dl[s];
  }
  g[0] = ge / acc * e - e + 1;
  g[1] = gl / acc * l - l + 1;
  return top + std::log(acc) + c - e + th[0] - l + th[1];
}

struct change_point_hand {
  const change_point_data* d;
  double operator()(const double* __restrict th, double* __restrict g) const {
    const std::size_t n = d->y.size();
    thread_local std::vector<double> lp(n), de(n), dl(n);
    const double e = std::exp(th[0]), l = std::exp(th[1]);
    for (std::size_t s = 0; s < n; ++s) {
      lp[s] = d->early_sum[s] * th[0] - d->early_n[s] * e + d->late_sum[s] * th[1] - d->late_n[s] * l;
      de[s] = d->early_sum[s] / e - d->early_n[s];
      dl[s] = d->late_sum[s] / l - d->late_n[s];
    }
    return change_point_finish(lp, de, dl, d->c, e, l, th, g);
  }
};

struct change_point_loops_hand {
  const change_point_data* d;
  double operator()(const double* __restrict th, double* __restrict g) const {
    const std::size_t n = d->y.size();
    thread_local std::vector<double> lp(n), de(n), dl(n);
    const double e = std::exp(th[0]), l = std::exp(th[1]);
    const double* y = d->y.data();
    for (std::size_t s = 0; s < n; ++s) {
      double acc = 0, ye = 0, yl = 0;
      for (std::size_t t = 0; t < n; ++t) {
        if (t < s) {
          acc += y[t] * th[0] - e;
          ye += y[t];
        } else {
          acc += y[t] * th[1] - l;
          yl += y[t];
        }
      }
      lp[s] = acc;
      de[s] = ye / e - double(s);
      dl[s] = yl / l - double(n - s);
    }
    return change_point_finish(lp, de, dl, d->c, e, l, th, g);
  }
};

// ---- categorical_logit_glm ----------------------------------------------------------------------
// Multinomial logistic regression: y[n] ~ categorical_logit_glm(X, alpha, beta), N = 2,000 rows,
// P = 10 predictors, K = 4 categories, alpha ~ normal(0, 2) (K), beta ~ normal(0, 2) (P·K,
// category by category); synthetic with a fixed seed. Two tyche rows against the same twin:
// the family (one pass over X), and the same model written by hand with one matvec per category
// and log_sum_exp (categorical_logit_glm_by_hand); a third, categorical_logit_glm_float_x, reads
// X as floats (against the twin on the same values as doubles). The twin: one pass over the
// rows, each row's K linear predictors, their log-sum-exp and its share of the gradient.

struct categorical_glm_data {
  static constexpr std::size_t n = 2000, p = 10, k = 4;
  std::vector<double> x, y, is[k];
  categorical_glm_data() {
    std::mt19937_64 rng(8675309);
    std::normal_distribution<double> z01;
    std::uniform_real_distribution<double> u01(0, 1);
    x.resize(n * p);
    for (auto& v : x) v = z01(rng);
    std::vector<double> b(p * k);
    for (auto& v : b) v = 0.4 * z01(rng);
    y.resize(n);
    for (auto& v : is) v.assign(n, 0.0);
    for (std::size_t r = 0; r < n; ++r) {
      double w[k], total = 0;
      for (std::size_t c = 0; c < k; ++c) {
        double e = 0.2 * double(c);
        for (std::size_t j = 0; j < p; ++j) e += x[r * p + j] * b[c * p + j];
        total += w[c] = std::exp(e);
      }
      double s = u01(rng) * total;
      std::size_t c = 0;
      while (c + 1 < k && s >= w[c]) s -= w[c++];
      y[r] = double(c + 1);
      is[c][r] = 1;
    }
  }
};

struct categorical_glm_hand {
  const categorical_glm_data* d;
  double operator()(const double* __restrict th, double* __restrict g) const {
    constexpr std::size_t n = categorical_glm_data::n, p = categorical_glm_data::p, k = categorical_glm_data::k;
    const double* alpha = th;
    const double* beta = th + k;
    double* ga = g;
    double* gb = g + k;
    for (std::size_t j = 0; j < k + p * k; ++j) g[j] = 0;
    double lp = 0;
    for (std::size_t r = 0; r < n; ++r) {
      const double* xr = d->x.data() + r * p;
      double eta[k];
      for (std::size_t c = 0; c < k; ++c) {
        double acc = alpha[c];
        for (std::size_t j = 0; j < p; ++j) acc += xr[j] * beta[c * p + j];
        eta[c] = acc;
      }
      const std::size_t yr = static_cast<std::size_t>(d->y[r]) - 1;
      double top = eta[0];
      for (std::size_t c = 1; c < k; ++c) top = std::max(top, eta[c]);
      lp += eta[yr] - top;
      double total = 0;
      for (std::size_t c = 0; c < k; ++c) total += eta[c] = std::exp(eta[c] - top);
      lp -= std::log(total);
      const double inv = 1 / total;
      for (std::size_t c = 0; c < k; ++c) {
        const double rc = (c == yr ? 1.0 : 0.0) - eta[c] * inv;
        ga[c] += rc;
        for (std::size_t j = 0; j < p; ++j) gb[c * p + j] += xr[j] * rc;
      }
    }
    // normal(0, 2) priors on the K + P·K values.
    for (std::size_t j = 0; j < k + p * k; ++j) {
      lp += -0.125 * th[j] * th[j] - log_two - half_log_two_pi;
      g[j] -= 0.25 * th[j];
    }
    return lp;
  }
};

// ---- pk_ode: one-compartment oral absorption by ode_rk45 ----------------------------------------
// Gut g' = −ka g, central c' = ka g − (CL/V) c, (g, c)(0) = (100, 0); concentrations c/V at 12
// times observed lognormal(log(c/V), σ); CL, V, ka, σ lognormal priors (θ: their logs). The twin:
// the same solver (tyche::detail::ode_rk45_solve, its default tolerances) with f, ∂f/∂y and ∂f/∂p
// written by hand (p = (ka, ke)), and the likelihood's gradient through the sensitivities by hand:
// the row measures what compiling f from an expression costs against writing it out.

// pk_stiff: the same with ka = 200 (absorbed within minutes, observed over a day: stiff) by
// ode_stiff, its twin by tyche::detail::ode_stiff_solve.

struct pk_data {
  std::vector<double> times{0.25, 0.5, 1, 1.5, 2, 3, 4, 6, 8, 12, 16, 24}, conc, log_conc;
  explicit pk_data(double ka = 1.2) {
    std::mt19937_64 rng(7);
    std::normal_distribution<double> z(0, 1);
    const double ke = 5.0 / 30.0;
    for (const double t : times) {
      conc.push_back(100 * ka / (30 * (ka - ke)) * (std::exp(-ke * t) - std::exp(-ka * t)) * std::exp(0.15 * z(rng)));
      log_conc.push_back(std::log(conc.back()));
    }
  }
};

/// G(a, y, t, p) = a₀ (−ka y₀) + a₁ (ka y₀ − ke y₁) and its gradient, θ = (a₀, a₁, y₀, y₁, t, ka, ke):
/// the interface ode_rk45_solve calls (a program view's dim, workspace_size, value_and_gradient).
struct pk_rhs_hand {
  std::size_t workspace_size = 0;
  std::size_t dim() const { return 7; }
  template <class T>
  T value_and_gradient(const T* th, T* g, T*) const {
    const T a0 = th[0], a1 = th[1], y0 = th[2], y1 = th[3], ka = th[5], ke = th[6];
    g[0] = -ka * y0;
    g[1] = ka * y0 - ke * y1;
    g[2] = (a1 - a0) * ka;
    g[3] = -a1 * ke;
    g[4] = 0;
    g[5] = (a1 - a0) * y0;
    g[6] = -a1 * y1;
    return a0 * g[0] + a1 * g[1];
  }
};

template <bool Stiff>
struct pk_hand_t {
  const pk_data* d;
  double operator()(const double* __restrict th, double* __restrict g) const {
    constexpr std::size_t n = 12, q = 2;  // sensitivities' columns: ka, ke (y0 is a constant)
    const double lcl = th[0], lv = th[1], lka = th[2], ls = th[3];
    const double ka = std::exp(lka), ke = std::exp(lcl - lv), s = std::exp(ls);
    thread_local std::vector<double> out(2 * n), sens(2 * n * q),
        w(Stiff ? tyche::detail::ode_stiff_doubles(2, q, 7, 0) : tyche::detail::ode_solver_doubles(2, q, 7, 0));
    const double qv[4] = {100.0, 0.0, ka, ke};  // y0, then the parameters
    const tyche::detail::ode_settings set{0.0, d->times.data(), n, 1e-6, 1e-6, 1000000};
    const bool solved =
        Stiff ? tyche::detail::ode_stiff_solve<2>(pk_rhs_hand{}, set, q, 0, qv, out.data(), sens.data(), w.data())
              : tyche::detail::ode_rk45_solve<2>(pk_rhs_hand{}, set, q, 0, qv, out.data(), sens.data(), w.data());
    if (!solved) return std::nan("");
    // priors: normal on each log (the lognormal and its log-Jacobian)
    const double m[4] = {std::log(5.0), std::log(30.0), Stiff ? std::log(200.0) : 0.0, std::log(0.2)};
    double lp = 0;
    for (int i = 0; i < 4; ++i) {
      const double z = (th[i] - m[i]) / 0.5;
      lp += -0.5 * z * z - std::log(0.5) - half_log_two_pi;
      g[i] = -z / 0.5;
    }
    double g_ka = 0, g_ke = 0, g_mu = 0, g_s = 0;
    for (std::size_t r = 0; r < n; ++r) {
      const double c = out[n + r], mu = std::log(c) - lv, e = (d->log_conc[r] - mu) / s;
      lp += -d->log_conc[r] - ls - half_log_two_pi - 0.5 * e * e;
      const double dmu = e / s;  // ∂/∂μ
      g_mu += dmu;
      g_ka += dmu / c * sens[(n + r) * q + 0];
      g_ke += dmu / c * sens[(n + r) * q + 1];
      g_s += e * e - 1;
    }
    g[0] += g_ke * ke;
    g[1] += -g_mu - g_ke * ke;
    g[2] += g_ka * ka;
    g[3] += g_s;
    return lp;
  }
};

using pk_hand = pk_hand_t<false>;

// steady_state: docs/tutorial.md's Michaelis–Menten steady states (solve_newton): at each
// infusion rate R, C solves R = Vmax C / (Km + C), Vmax = 60 + excess; C observed on two days
// (lognormal error). The twin solves each rate's scalar equation by Newton's method by hand and
// differentiates the root by the implicit function theorem; tyche's solver treats the four
// equations as one system (four gradient evaluations of f per iteration and a 4 × 4 LU: it does
// not know the system is diagonal).
struct steady_data {
  std::vector<double> rates{10, 20, 40, 60}, day1{0.52, 1.31, 3.02, 7.9}, day2{0.60, 1.18, 3.51, 6.9};
};

struct steady_hand {
  const steady_data* d;
  double operator()(const double* th, double* g) const {
    const double excess = std::exp(th[0]), km = std::exp(th[1]), sigma = std::exp(th[2]);
    const double vmax = 60.0 + excess, half_log_2pi = 0.91893853320467274;
    // priors: lognormal(log 30, 1), lognormal(log 4, 0.5) and half_normal(0.3), on the log scale
    double lp = -0.5 * (th[0] - std::log(30.0)) * (th[0] - std::log(30.0)) - half_log_2pi;
    lp += -0.5 * (th[1] - std::log(4.0)) * (th[1] - std::log(4.0)) / 0.25 - std::log(0.5) - half_log_2pi;
    lp += std::log(2.0) - 0.5 * sigma * sigma / 0.09 - std::log(0.3) - half_log_2pi + th[2];
    g[0] = -(th[0] - std::log(30.0));
    g[1] = -(th[1] - std::log(4.0)) / 0.25;
    g[2] = -sigma * sigma / 0.09 + 1.0;
    const double inv_s2 = 1.0 / (sigma * sigma);
    for (std::size_t j = 0; j < d->rates.size(); ++j) {
      const double r = d->rates[j];
      double c = 1.0;
      for (int it = 0; it < 100; ++it) {
        const double f = r - vmax * c / (km + c), fc = -vmax * km / ((km + c) * (km + c));
        const double step = -f / fc;
        c += step;
        if (std::fabs(step) <= 1e-15 * std::fabs(c)) break;
      }
      const double den = km + c, fc = -vmax * km / (den * den);
      const double dc_dvmax = -(-c / den) / fc, dc_dkm = -(vmax * c / (den * den)) / fc;
      const double lc = std::log(c);
      double dlp_dc = 0;
      for (const double y : {d->day1[j], d->day2[j]}) {
        const double z = std::log(y) - lc;
        lp += -std::log(y) - th[2] - half_log_2pi - 0.5 * z * z * inv_s2;
        dlp_dc += z * inv_s2 / c;
        g[2] += -1.0 + z * z * inv_s2;
      }
      g[0] += dlp_dc * dc_dvmax * excess;
      g[1] += dlp_dc * dc_dkm * km;
    }
    return lp;
  }
};

/// Registers <name>: a model m (heap, kept alive by the closures) against a twin.
template <class Model, class Hand>
void register_model(const std::string& name, std::shared_ptr<Model> m, Hand hand,
                    std::vector<double> point) {
  auto theta = std::make_shared<std::vector<double>>(std::move(point));
  auto gt = std::make_shared<std::vector<double>>(theta->size());
  auto gh = std::make_shared<std::vector<double>>(theta->size());
  auto ws = std::make_shared<std::vector<double>>(m->program().workspace_size());
  const double vt = m->log_prob_and_gradient(*theta, *gt);
  const double vh = hand(theta->data(), gh->data());
  check_twins(name.c_str(), vt, *gt, vh, *gh);
  register_pair(
      name, theta.get(), gt.get(), gh.get(),
      [m, theta, gt, ws](const std::vector<double>& th, std::vector<double>& g) {
        return m->program().value_and_gradient(std::span<const double>(th), std::span<double>(g),
                                               std::span<double>(*ws));
      },
      [hand, gh](const std::vector<double>& th, std::vector<double>& g) { return hand(th.data(), g.data()); });
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tyche;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--calls=", 0) == 0 && a.find(':') != std::string::npos) {
      calls_name = a.substr(8, a.find(':') - 8);
      calls_count = std::stol(a.substr(a.find(':') + 1));
      for (int j = i; j + 1 < argc; ++j) argv[j] = argv[j + 1];
      --argc;
      --i;
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  // --- iid_normal_100 ---
  static const std::size_t iid_n = 100;
  static vector_param<"x"> x(iid_n);
  static auto iid_prog = compile(sum(-0.5 * square(x)), x);
  static std::vector<double> iid_theta = random_point(iid_n, 1.0, 1);
  static std::vector<double> iid_gt(iid_n), iid_gh(iid_n);
  {
    iid_normal_hand hand{iid_n};
    const double vt = iid_prog.value_and_gradient(std::span<const double>(iid_theta),
                                                  std::span<double>(iid_gt));
    const double vh = hand(iid_theta.data(), iid_gh.data());
    check_twins("iid_normal_100", vt, iid_gt, vh, iid_gh);
    register_pair(
        "iid_normal_100", &iid_theta, &iid_gt, &iid_gh,
        [](const std::vector<double>& th, std::vector<double>& g) {
          return iid_prog.value_and_gradient(std::span<const double>(th), std::span<double>(g));
        },
        [hand](const std::vector<double>& th, std::vector<double>& g) {
          return hand(th.data(), g.data());
        });
  }

  // --- eight_schools_noncentered ---
  static param<"mu"> mu;
  static param<"log_tau"> log_tau;
  static vector_param<"theta_raw", J> theta_raw;
  static auto es_prog = [] {
    auto tau = exp(log_tau);
    auto theta = mu + tau * theta_raw;
    auto lp = sum(-0.5 * square(theta_raw)) +
              sum(-0.5 * square((data(es_y) - theta) / data(es_sigma))) - square(mu) / 50.0 -
              log1p(square(tau / 5.0)) + log_tau;
    return compile(lp, mu, log_tau, theta_raw);
  }();
  static std::vector<double> es_theta = random_point(J + 2, 1.0, 2);
  static std::vector<double> es_gt(J + 2), es_gh(J + 2), es_ws(es_prog.workspace_size());
  {
    eight_schools_hand hand;
    const double vt = es_prog.value_and_gradient(std::span<const double>(es_theta),
                                                 std::span<double>(es_gt),
                                                 std::span<double>(es_ws));
    const double vh = hand(es_theta.data(), es_gh.data());
    check_twins("eight_schools_noncentered", vt, es_gt, vh, es_gh);
    register_pair(
        "eight_schools_noncentered", &es_theta, &es_gt, &es_gh,
        [](const std::vector<double>& th, std::vector<double>& g) {
          return es_prog.value_and_gradient(std::span<const double>(th), std::span<double>(g),
                                            std::span<double>(es_ws));
        },
        [hand](const std::vector<double>& th, std::vector<double>& g) {
          return hand(th.data(), g.data());
        });
  }

  // --- logistic_regression ---
  static logistic_data lr;
  static param<"alpha"> alpha;
  static vector_param<"beta"> beta(lr.p);
  static auto lr_prog = [] {
    auto X = matrix(lr.X.data(), lr.n, lr.p);
    auto eta = alpha + matvec(X, beta);
    auto lp = -0.5 * square(alpha) + sum(-0.5 * square(beta)) +
              sum(data(lr.y) * eta - log1p_exp(eta));
    return compile(lp, alpha, beta);
  }();
  // A point of the scale of the posterior (β ~ 0.1), so that η is not saturated everywhere.
  static std::vector<double> lr_theta = random_point(lr.p + 1, 0.1, 3);
  static std::vector<double> lr_gt(lr.p + 1), lr_gh(lr.p + 1), lr_ws(lr_prog.workspace_size());
  {
    logistic_hand hand{lr.X.data(), lr.y.data(), lr.n, lr.p};
    const double vt = lr_prog.value_and_gradient(std::span<const double>(lr_theta),
                                                 std::span<double>(lr_gt),
                                                 std::span<double>(lr_ws));
    const double vh = hand(lr_theta.data(), lr_gh.data());
    check_twins("logistic_regression", vt, lr_gt, vh, lr_gh);
    register_pair(
        "logistic_regression", &lr_theta, &lr_gt, &lr_gh,
        [](const std::vector<double>& th, std::vector<double>& g) {
          return lr_prog.value_and_gradient(std::span<const double>(th), std::span<double>(g),
                                            std::span<double>(lr_ws));
        },
        [hand](const std::vector<double>& th, std::vector<double>& g) {
          return hand(th.data(), g.data());
        });
  }
  // --- sparse_logistic: a sparse X (CSR) and the same X dense, one twin ---
  {
    static const sparse_logistic_data sd;
    constexpr std::size_t n = sparse_logistic_data::n, p = sparse_logistic_data::p;
    static const data_sparse_matrix sx = sparse_matrix(n, p, sd.w, sd.c, sd.u, "X");
    static vector_param<"beta"> sbeta(p);
    static auto sparse_prog = [] {
      auto eta = alpha + sx * sbeta;
      return compile(-0.5 * square(alpha) + sum(-0.5 * square(sbeta)) + sum(data(sd.y) * eta - log1p_exp(eta)), alpha,
                     sbeta);
    }();
    static auto dense_prog = [] {
      auto eta = alpha + matvec(matrix(sd.dense.data(), n, p), sbeta);
      return compile(-0.5 * square(alpha) + sum(-0.5 * square(sbeta)) + sum(data(sd.y) * eta - log1p_exp(eta)), alpha,
                     sbeta);
    }();
    static std::vector<double> sp_theta = random_point(p + 1, 0.3, 5);
    static std::vector<double> sp_gt(p + 1), sp_gd(p + 1), sp_gh(p + 1);
    static std::vector<double> sp_ws(sparse_prog.workspace_size()), dn_ws(dense_prog.workspace_size());
    const sparse_logistic_hand hand{&sd};
    const double vh = hand(sp_theta.data(), sp_gh.data());
    check_twins("sparse_logistic",
                sparse_prog.value_and_gradient(std::span<const double>(sp_theta), std::span<double>(sp_gt),
                                               std::span<double>(sp_ws)),
                sp_gt, vh, sp_gh);
    check_twins("sparse_logistic_dense",
                dense_prog.value_and_gradient(std::span<const double>(sp_theta), std::span<double>(sp_gd),
                                              std::span<double>(dn_ws)),
                sp_gd, vh, sp_gh);
    auto hand_call = [hand](const std::vector<double>& th, std::vector<double>& g) { return hand(th.data(), g.data()); };
    register_pair(
        "sparse_logistic", &sp_theta, &sp_gt, &sp_gh,
        [](const std::vector<double>& th, std::vector<double>& g) {
          return sparse_prog.value_and_gradient(std::span<const double>(th), std::span<double>(g), std::span<double>(sp_ws));
        },
        hand_call);
    register_pair(
        "sparse_logistic_dense", &sp_theta, &sp_gd, &sp_gh,
        [](const std::vector<double>& th, std::vector<double>& g) {
          return dense_prog.value_and_gradient(std::span<const double>(th), std::span<double>(g), std::span<double>(dn_ws));
        },
        hand_call);
  }
  // --- binomial_logit_regression ---
  static const binomial_counts bc(lr);
  static auto bl_prog = [] {
    auto X = matrix(lr.X.data(), lr.n, lr.p);
    auto lp = -0.5 * square(alpha) + sum(-0.5 * square(beta)) +
              binomial_logit(data(bc.trials), alpha + matvec(X, beta)).observe(data(bc.counts)).log_density();
    return compile(lp, alpha, beta);
  }();
  static std::vector<double> bl_gt(lr.p + 1), bl_gh(lr.p + 1), bl_ws(bl_prog.workspace_size());
  {
    binomial_logit_hand hand{lr.X.data(), bc.trials.data(), bc.counts.data(), bc.log_choose, lr.n, lr.p};
    const double vt = bl_prog.value_and_gradient(std::span<const double>(lr_theta), std::span<double>(bl_gt),
                                                 std::span<double>(bl_ws));
    const double vh = hand(lr_theta.data(), bl_gh.data());
    check_twins("binomial_logit_regression", vt, bl_gt, vh, bl_gh);
    register_pair(
        "binomial_logit_regression", &lr_theta, &bl_gt, &bl_gh,
        [](const std::vector<double>& th, std::vector<double>& g) {
          return bl_prog.value_and_gradient(std::span<const double>(th), std::span<double>(g),
                                            std::span<double>(bl_ws));
        },
        [hand](const std::vector<double>& th, std::vector<double>& g) { return hand(th.data(), g.data()); });
  }
#if TYCHE_BENCH_CBLAS
  {  // logistic_regression against the BLAS-2 twin (rows logistic_regression_blas/...: "handwritten" is the BLAS)
    if (openblas_set_num_threads) openblas_set_num_threads(1);
    static std::vector<double> lr_gb(lr.p + 1);
    logistic_blas blas{lr.X.data(), lr.y.data(), lr.n, lr.p};
    const double vb = blas(lr_theta.data(), lr_gb.data());
    check_twins("logistic_regression_blas", lr_prog.value_and_gradient(std::span<const double>(lr_theta), std::span<double>(lr_gt),
                                                                        std::span<double>(lr_ws)),
                lr_gt, vb, lr_gb);
    register_pair(
        "logistic_regression_blas", &lr_theta, &lr_gt, &lr_gb,
        [](const std::vector<double>& th, std::vector<double>& g) {
          return lr_prog.value_and_gradient(std::span<const double>(th), std::span<double>(g),
                                            std::span<double>(lr_ws));
        },
        [blas](const std::vector<double>& th, std::vector<double>& g) { return blas(th.data(), g.data()); });
  }
#endif

  // --- kidiq at n = 100, 200, 400, 434, 10000 ---
  static std::vector<kidiq_rows> kidiq_sets;
  kidiq_sets.reserve(5);
  for (std::size_t n : {100, 200, 400, 434, 10000}) kidiq_sets.push_back(kidiq_data(n));
  for (std::size_t which = 0; which < kidiq_sets.size(); ++which) {
    const kidiq_rows& k = kidiq_sets[which];
    auto beta = flat<"beta">(shape<4>);
    auto sigma = half_cauchy<"sigma">(2.5);
    auto m = std::make_shared<decltype(model(joint(beta, sigma,
        normal(matvec(matrix(k.X.data(), k.n, 4), beta), sigma).observe(data(k.y)))))>(model(joint(
        beta, sigma, normal(matvec(matrix(k.X.data(), k.n, 4), beta), sigma).observe(data(k.y)))));
    auto theta = std::make_shared<std::vector<double>>(std::vector<double>{20, 0.5, 0.6, 0.01, 2.8});
    auto gt = std::make_shared<std::vector<double>>(5), gh = std::make_shared<std::vector<double>>(5);
    kidiq_hand hand{k.X.data(), k.y.data(), k.n};
    const std::string name = "kidiq_" + std::to_string(k.n);
    const double vt = m->log_prob_and_gradient(*theta, *gt);
    const double vh = hand(theta->data(), gh->data());
    check_twins(name.c_str(), vt, *gt, vh, *gh);
    register_pair(
        name, theta.get(), gt.get(), gh.get(),
        [m, theta, gt](const std::vector<double>& th, std::vector<double>& g) {  // keeps the case alive
          return m->program().value_and_gradient(std::span<const double>(th), std::span<double>(g));
        },
        [hand, gh](const std::vector<double>& th, std::vector<double>& g) {
          return hand(th.data(), g.data());
        });
  }

  // --- kidiq written elementwise, as in Rainier: b0 + b1·hs + b2·iq + b3·hs·iq -------------------
  // The same model and twin; the predictor is a Line of scalar-times-data columns, which partial
  // evaluation reduces to the same sufficient statistics (residual_squares over stack(b1, b2,
  // b3)), so these rows must be flat in n too.
  static std::vector<std::array<std::vector<double>, 2>> kidiq_columns(kidiq_sets.size());
  for (std::size_t which = 0; which < kidiq_sets.size(); ++which) {
    const kidiq_rows& k = kidiq_sets[which];
    auto& hs = kidiq_columns[which][0];  // (no structured binding: clang 14 cannot capture one)
    auto& iq = kidiq_columns[which][1];
    for (std::size_t i = 0; i < k.n; ++i) {
      hs.push_back(k.X[4 * i + 1]);
      iq.push_back(k.X[4 * i + 2]);
    }
    auto b0 = flat<"b0">();
    auto b1 = flat<"b1">();
    auto b2 = flat<"b2">();
    auto b3 = flat<"b3">();
    auto sigma = half_cauchy<"sigma">(2.5);
    auto make = [&] {
      return model(joint(b0, b1, b2, b3, sigma,
                         normal(b0 + b1 * data(hs) + b2 * data(iq) + b3 * data(hs) * data(iq), sigma)
                             .observe(data(k.y))));
    };
    auto m = std::make_shared<decltype(make())>(make());
    auto theta = std::make_shared<std::vector<double>>(std::vector<double>{20, 0.5, 0.6, 0.01, 2.8});
    auto gt = std::make_shared<std::vector<double>>(5), gh = std::make_shared<std::vector<double>>(5);
    kidiq_hand hand{k.X.data(), k.y.data(), k.n};
    const std::string name = "kidiq_elementwise_" + std::to_string(k.n);
    const double vt = m->log_prob_and_gradient(*theta, *gt);
    const double vh = hand(theta->data(), gh->data());
    check_twins(name.c_str(), vt, *gt, vh, *gh);
    register_pair(
        name, theta.get(), gt.get(), gh.get(),
        [m, theta, gt](const std::vector<double>& th, std::vector<double>& g) {
          return m->program().value_and_gradient(std::span<const double>(th), std::span<double>(g));
        },
        [hand, gh](const std::vector<double>& th, std::vector<double>& g) {
          return hand(th.data(), g.data());
        });
  }

  // --- arK, low_dim_gauss_mix (examples/posteriordb.hpp), glmm_poisson ---
  {
    const auto dir = posteriors_dir();
    static const tyche::data_file ark_file = tyche::read_json_data(dir / "arK-arK" / "data.json");
    auto ark = std::make_shared<decltype(tyche_examples::ark(ark_file))>(tyche_examples::ark(ark_file));
    const auto& y = ark_file.vector("y");
    register_model("arK", std::shared_ptr<decltype(ark->model)>(ark, &ark->model),
                   ark_hand{y.data(), y.size()}, {0.1, 0.3, -0.2, 0.1, 0.05, 0.0, -1.0});

    static const tyche::data_file mix_file =
        tyche::read_json_data(dir / "low_dim_gauss_mix-low_dim_gauss_mix" / "data.json");
    auto mix = std::make_shared<decltype(tyche_examples::low_dim_gauss_mix(mix_file))>(
        tyche_examples::low_dim_gauss_mix(mix_file));
    const auto& ym = mix_file.vector("y");
    register_model("low_dim_gauss_mix", std::shared_ptr<decltype(mix->model)>(mix, &mix->model),
                   gauss_mix_hand{ym.data(), ym.size()}, {-0.7, 1.2, 0.0, 0.1, 0.3});

    static const glmm_data glmm;
    auto glmm_model = std::make_shared<decltype(model([] {
      auto alpha = normal<"alpha">(0.0, 5.0);
      auto beta = normal<"beta">(0.0, 1.0);
      auto sigma_u = half_normal<"sigma_u">(1.0);
      auto z = std_normal<"z">(shape<glmm_data::groups>);
      return joint(alpha, beta, sigma_u, z,
                   poisson_log(alpha + beta * data(glmm.x) + sigma_u * gather(z, glmm.group))
                       .observe(data(glmm.y)));
    }))>(model([] {
      auto alpha = normal<"alpha">(0.0, 5.0);
      auto beta = normal<"beta">(0.0, 1.0);
      auto sigma_u = half_normal<"sigma_u">(1.0);
      auto z = std_normal<"z">(shape<glmm_data::groups>);
      return joint(alpha, beta, sigma_u, z,
                   poisson_log(alpha + beta * data(glmm.x) + sigma_u * gather(z, glmm.group))
                       .observe(data(glmm.y)));
    }));
    register_model("glmm_poisson", glmm_model, glmm_hand{&glmm},
                   random_point(3 + glmm_data::groups, 0.5, 7));
  }

  // --- zip_regression ---
  {
    static const zip_data zd;
    auto make = [] {
      auto b0 = normal<"b0">(0.0, 1.0);
      auto b1 = normal<"b1">(0.0, 1.0);
      auto zi = tyche::beta<"zi">(1.0, 1.0);
      return model(joint(b0, b1, zi, zero_inflated(poisson(exp(b0 + b1 * data(zd.x))), zi).observe(data(zd.y))));
    };
    register_model("zip_regression", std::make_shared<decltype(make())>(make()), zip_hand{&zd}, {0.3, 0.5, -0.8});
  }

  // --- car_poisson: car against multi_normal_prec, the same twin ---
  {
    static const car_data cd;
    static const tyche::areal_graph graph(car_data::k, cd.n1, cd.n2);
    auto make_sparse = [] {
      auto b0 = normal<"b0">(0.0, 1.0);
      auto alpha = uniform<"alpha">(0.0, 1.0);
      auto tau = gamma<"tau">(2.0, 2.0);
      auto phi = car<"phi">(alpha, tau, graph);
      return model(joint(b0, alpha, tau, phi, poisson_log(data(cd.log_e) + b0 + phi).observe(data(cd.y))));
    };
    auto make_dense = [] {
      auto b0 = normal<"b0">(0.0, 1.0);
      auto alpha = uniform<"alpha">(0.0, 1.0);
      auto tau = gamma<"tau">(2.0, 2.0);
      auto phi = multi_normal_prec<"phi">(0.0, tau * (data(cd.dmat) - alpha * data(cd.w)));
      return model(joint(b0, alpha, tau, phi, poisson_log(data(cd.log_e) + b0 + phi).observe(data(cd.y))));
    };
    auto point = random_point(3 + car_data::k, 0.3, 11);
    register_model("car_poisson", std::make_shared<decltype(make_sparse())>(make_sparse()), car_hand{&cd}, point);
    register_model("car_poisson_dense", std::make_shared<decltype(make_dense())>(make_dense()), car_hand{&cd}, point);
  }

  // --- categorical_logit_glm: the family and the model written by hand, against one twin ---
  {
    static const categorical_glm_data cg;
    constexpr std::size_t n = categorical_glm_data::n, p = categorical_glm_data::p;
    auto family = [] {
      auto alpha = normal<"alpha">(0.0, 2.0, shape<categorical_glm_data::k>);
      auto beta = normal<"beta">(0.0, 2.0, shape<categorical_glm_data::p * categorical_glm_data::k>);
      return model(joint(alpha, beta,
                         categorical_logit_glm(matrix(cg.x, n, p, "X"), alpha, beta).observe(data(cg.y))));
    };
    auto by_hand = [] {
      auto alpha = normal<"alpha">(0.0, 2.0, shape<categorical_glm_data::k>);
      auto beta = normal<"beta">(0.0, 2.0, shape<categorical_glm_data::p * categorical_glm_data::k>);
      const auto X = matrix(cg.x, n, p, "X");
      auto e1 = alpha[0] + matvec(X, segment(beta, 1, p));
      auto e2 = alpha[1] + matvec(X, segment(beta, p + 1, p));
      auto e3 = alpha[2] + matvec(X, segment(beta, 2 * p + 1, p));
      auto e4 = alpha[3] + matvec(X, segment(beta, 3 * p + 1, p));
      return model(joint(alpha, beta,
                         target(sum(data(cg.is[0]) * e1 + data(cg.is[1]) * e2 + data(cg.is[2]) * e3 +
                                    data(cg.is[3]) * e4 - log_sum_exp(e1, e2, e3, e4)))));
    };
    const auto point = random_point(categorical_glm_data::k * (1 + p), 0.3, 9);
    register_model("categorical_logit_glm", std::make_shared<decltype(family())>(family()),
                   categorical_glm_hand{&cg}, point);
    // X as floats: the data with X rounded to float, the model reading the floats and the twin
    // the same values as doubles.
    static const categorical_glm_data cgf = [] {
      categorical_glm_data d;
      for (auto& v : d.x) v = static_cast<double>(static_cast<float>(v));
      return d;
    }();
    static const std::vector<float> xf(cgf.x.begin(), cgf.x.end());
    auto float_x = [] {
      auto alpha = normal<"alpha">(0.0, 2.0, shape<categorical_glm_data::k>);
      auto beta = normal<"beta">(0.0, 2.0, shape<categorical_glm_data::p * categorical_glm_data::k>);
      return model(joint(alpha, beta,
                         categorical_logit_glm(matrix(xf.data(), n, p, "X"), alpha, beta).observe(data(cgf.y))));
    };
    register_model("categorical_logit_glm_float_x", std::make_shared<decltype(float_x())>(float_x()),
                   categorical_glm_hand{&cgf}, point);
    register_model("categorical_logit_glm_by_hand", std::make_shared<decltype(by_hand())>(by_hand()),
                   categorical_glm_hand{&cg}, point);
  }

  // --- hmm_scan ---
  {
    static const hmm_data hd;
    auto make = [] {
      auto mu = normal<"mu">(0.0, 3.0, shape<2>);
      const double l00 = hd.lg[0][0], l01 = hd.lg[0][1], l10 = hd.lg[1][0], l11 = hd.lg[1][1];
      auto init = std::tuple{std::log(0.5) + normal_lpdf(data(hd.y_first), mu[0], 1.0),
                             std::log(0.5) + normal_lpdf(data(hd.y_first), mu[1], 1.0)};
      auto alpha = scan(
          [=](const auto& a, const auto& yt) {
            return std::tuple{log_sum_exp(a[0] + l00, a[1] + l10) + normal_lpdf(yt, mu[0], 1.0),
                              log_sum_exp(a[0] + l01, a[1] + l11) + normal_lpdf(yt, mu[1], 1.0)};
          },
          init, data(hd.y_rest));
      return model(joint(mu, target(log_sum_exp(alpha))));
    };
    auto hmm_model = std::make_shared<decltype(make())>(make());
    register_model("hmm_scan", hmm_model, hmm_hand{&hd}, {-0.8, 1.7});
  }

  // --- hmm_marginal: the same HMM through hmm_marginal, the same twin ---
  {
    static const hmm_data hd;
    static const std::vector<double> gamma{0.9, 0.1, 0.2, 0.8}, rho{0.5, 0.5};
    auto make = [] {
      auto mu = normal<"mu">(0.0, 3.0, shape<2>);
      return model(joint(mu, target(hmm_marginal(std::tuple{pointwise_log_density(normal(mu[0], 1.0), data(hd.y)),
                                                            pointwise_log_density(normal(mu[1], 1.0), data(hd.y))},
                                                 data(gamma), data(rho)))));
    };
    auto hmm_model = std::make_shared<decltype(make())>(make());
    register_model("hmm_marginal", hmm_model, hmm_hand{&hd}, {-0.8, 1.7});
  }

  // --- arma11 by scan ---
  {
    static const arma_data ad;
    auto make = [] {
      auto mu = normal<"mu">(0.0, 10.0);
      auto phi = normal<"phi">(0.0, 2.0);
      auto theta = normal<"theta">(0.0, 2.0);
      auto sigma = half_normal<"sigma">(1.0);
      auto err1 = ad.y[0] - (mu + phi * mu);
      auto s = scan(
          [=](const auto& st, const auto& yt, const auto& yprev) {
            auto err = yt - (mu + phi * yprev + theta * st[0]);
            return std::tuple{err, st[1] + normal_lpdf(err, 0.0, sigma)};
          },
          std::tuple{err1, normal_lpdf(err1, 0.0, sigma)}, data(ad.y_now), data(ad.y_before));
      return model(joint(mu, phi, theta, sigma, target(at(s, 1))));
    };
    auto arma_model = std::make_shared<decltype(make())>(make());
    register_model("arma11_scan", arma_model, arma_hand{&ad}, {0.4, 0.5, 0.2, -0.1});
  }

  // --- local level by scan ---
  {
    static const local_level_data ld;
    auto make = [] {
      auto q = half_normal<"q">(1.0);
      auto r = half_normal<"r">(1.0);
      auto filtered = scan(
          [=](const auto& st, const auto& yt) {
            auto f = assume_positive(st[1] + square(r));
            auto v = yt - st[0];
            return std::tuple{st[0] + st[1] / f * v, st[1] * square(r) / f + square(q),
                              st[2] - 0.5 * log(f) - 0.5 * square(v) / f - half_log_two_pi};
          },
          std::tuple{0.0, 10.0, 0.0}, data(ld.y));
      return model(joint(q, r, target(at(filtered, 2))));
    };
    auto ll_model = std::make_shared<decltype(make())>(make());
    register_model("local_level_scan", ll_model, local_level_hand{&ld}, {-1.1, -0.3});
  }

  // --- the same local level by gaussian_dlm_obs (the Kalman filter op), the same twin: θ₀ ~
  // N(0, 10 − q²), so that the first level is predicted as N(0, 10), as the scan starts ---
  {
    static const local_level_data ld;
    auto make = [] {
      auto q = half_normal<"q">(1.0);
      auto r = half_normal<"r">(1.0);
      return model(joint(q, r, target(gaussian_dlm_obs_lpdf(data(ld.y), 1.0, 1.0, square(r), square(q), 0.0,
                                                            10.0 - square(q)))));
    };
    auto dlm_model = std::make_shared<decltype(make())>(make());
    register_model("local_level_dlm", dlm_model, local_level_hand{&ld}, {-1.1, -0.3});
  }

  // --- a general linear solve with a matrix of parameters (mdivide_left), K = 10 ---
  {
    static const solve_data sd;
    auto make = [] {
      auto lw = normal<"lw">(0.0, 1.0, shape<solve_data::k>);
      auto x = mdivide_left(data(sd.m) + diag_matrix(exp(lw)), data(sd.b));
      return model(joint(lw, target(-0.5 * dot_self(x))));
    };
    auto solve_model = std::make_shared<decltype(make())>(make());
    register_model("mdivide_left", solve_model, solve_hand{&sd},
                   {0.1, -0.2, 0.3, 0.0, -0.5, 0.4, 0.2, -0.1, 0.6, -0.3});
  }

  // --- GARCH(1,1) by scan_states: a scalar state ---
  {
    static const garch_data gd;
    auto make = [] {
      auto mu = normal<"mu">(0.0, 1.0);
      auto omega = half_normal<"omega">(1.0);
      auto alpha = uniform<"alpha">(0.0, 1.0);
      auto beta = uniform<"beta">(0.0, 1.0);
      auto var = scan_states(
          [=](const auto& v, const auto& prev) { return omega + alpha * square(prev - mu) + beta * v; }, 1.0,
          data(gd.before));
      return model(joint(mu, omega, alpha, beta, normal(mu, sqrt(assume_positive(var))).observe(data(gd.after))));
    };
    auto garch_model = std::make_shared<decltype(make())>(make());
    register_model("garch11_scan", garch_model, garch_hand{&gd}, {0.05, -2.3, -1.7, 1.4});
  }

  // --- Weibull survival, right-censored ---
  {
    static const survival_data sd;
    auto make = [] {
      auto alpha = lognormal<"alpha">(0.0, 1.0);
      auto b0 = normal<"b0">(0.0, 2.0);
      auto b1 = normal<"b1">(0.0, 2.0);
      return model(joint(alpha, b0, b1, weibull(alpha, exp(b0 + b1 * data(sd.x_obs))).observe(data(sd.t_obs)),
                         right_censored(weibull(alpha, exp(b0 + b1 * data(sd.x_cens)))).observe(data(sd.t_cens))));
    };
    auto surv_model = std::make_shared<decltype(make())>(make());
    register_model("weibull_censored", surv_model, survival_hand{&sd}, {0.3, 0.9, 0.4});
  }

  // --- change point: closed form, and the double loop by tabulate ---
  {
    static const change_point_data cd;
    auto make_closed = [] {
      auto e = exponential<"e">(1.0);
      auto l = exponential<"l">(1.0);
      auto lp = data(cd.early_sum) * log(e) - data(cd.early_n) * e + data(cd.late_sum) * log(l) -
                data(cd.late_n) * l;
      return model(joint(e, l, target(log_sum_exp(lp) + cd.c)));
    };
    auto closed_model = std::make_shared<decltype(make_closed())>(make_closed());
    register_model("change_point", closed_model, change_point_hand{&cd}, {1.1, 0.0});
    auto make_tab = [] {
      auto e = exponential<"e">(1.0);
      auto l = exponential<"l">(1.0);
      auto lp = tabulate(cd.y.size(), [=](const auto& s) {
        auto early = step(s - data(cd.t_index) - 0.5);
        return poisson_log_lpmf(data(cd.y), log(l) + (log(e) - log(l)) * early);
      });
      return model(joint(e, l, target(log_sum_exp(lp) - std::log(double(cd.y.size())))));
    };
    auto tab_model = std::make_shared<decltype(make_tab())>(make_tab());
    register_model("change_point_tabulate", tab_model, change_point_loops_hand{&cd}, {1.1, 0.0});
  }

  // --- pk_ode by ode_rk45 ---
  {
    static const pk_data pd;
    auto make = [] {
      auto CL = lognormal<"CL">(std::log(5.0), 0.5);
      auto V = lognormal<"V">(std::log(30.0), 0.5);
      auto ka = lognormal<"ka">(0.0, 0.5);
      auto sigma = lognormal<"sigma">(std::log(0.2), 0.5);
      const std::size_t n = pd.times.size();
      auto sol = ode_rk45([=](const auto&, const auto& y) { return std::tuple{-ka * y[0], ka * y[0] - CL / V * y[1]}; },
                          std::tuple{100.0, 0.0}, 0.0, data(pd.times));
      auto conc = assume_positive(segment(sol, n + 1, n) / V);
      return model(joint(CL, V, ka, sigma, lognormal(log(conc), sigma).observe(data(pd.conc))));
    };
    auto pk_model = std::make_shared<decltype(make())>(make());
    register_model("pk_ode", pk_model, pk_hand{&pd}, {std::log(4.5), std::log(32.0), 0.1, std::log(0.18)});
  }
  // --- pk_stiff by ode_stiff ---
  {
    static const pk_data pd(200.0);
    auto make = [] {
      auto CL = lognormal<"CL">(std::log(5.0), 0.5);
      auto V = lognormal<"V">(std::log(30.0), 0.5);
      auto ka = lognormal<"ka">(std::log(200.0), 0.5);
      auto sigma = lognormal<"sigma">(std::log(0.2), 0.5);
      const std::size_t n = pd.times.size();
      auto sol = ode_stiff([=](const auto&, const auto& y) { return std::tuple{-ka * y[0], ka * y[0] - CL / V * y[1]}; },
                           std::tuple{100.0, 0.0}, 0.0, data(pd.times));
      auto conc = assume_positive(segment(sol, n + 1, n) / V);
      return model(joint(CL, V, ka, sigma, lognormal(log(conc), sigma).observe(data(pd.conc))));
    };
    auto pk_model = std::make_shared<decltype(make())>(make());
    register_model("pk_stiff", pk_model, pk_hand_t<true>{&pd},
                   {std::log(4.5), std::log(32.0), std::log(180.0), std::log(0.18)});
  }

  // --- steady_state by solve_newton ---
  {
    static const steady_data sd;
    auto make = [] {
      auto excess = lognormal<"excess">(std::log(30.0), 1.0);
      auto Vmax = 60.0 + excess;
      auto Km = lognormal<"Km">(std::log(4.0), 0.5);
      auto sigma = half_normal<"sigma">(0.3);
      auto css = solve_newton([=](const auto& c) { return data(sd.rates) - Vmax * c / (Km + c); },
                              std::tuple{1.0, 1.0, 1.0, 1.0});
      auto conc = log(assume_positive(css));
      return model(joint(excess, Km, sigma, lognormal(conc, sigma).observe(data(sd.day1)),
                         lognormal(conc, sigma).observe(data(sd.day2))));
    };
    auto ss_model = std::make_shared<decltype(make())>(make());
    register_model("steady_state", ss_model, steady_hand{&sd}, {std::log(41.0), std::log(5.0), std::log(0.1)});
  }

  std::fprintf(stderr, "gradients: all tyche programs agree with their hand-written twins\n");
  if (!calls_name.empty()) return 0;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
