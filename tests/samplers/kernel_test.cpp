// The NUTS kernel (tyche/samplers/nuts/kernel.hpp) as code that runs anywhere: W chains in the
// lanes of a SIMD batch give, chain by chain, what W single-lane kernels give; every status a
// call can report; the step-size heuristic's failures; float lanes; the lanes' random streams.
// (tests/samplers/unrolled_nuts_test.cpp checks the kernel against a recursive NUTS.)
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

namespace {

using namespace tyche::samplers;

constexpr std::size_t dim = 6;

/// A Gaussian with precisions (i + 1)/3 and correlation between neighbours through a simple
/// quadratic form; written with + and × only, evaluated lane by lane in double so that the
/// comparisons below measure the kernel alone.
template <class R>
R gaussian(const R* q, R* g) {
  R s = 0;
  for (std::size_t i = 0; i < dim; ++i) g[i] = 0;
  for (std::size_t i = 0; i < dim; ++i) {
    const R p = R(i + 1) / R(3);
    s += p * q[i] * q[i];
    g[i] -= p * q[i];
  }
  for (std::size_t i = 0; i + 1 < dim; ++i) {  // + 0.4 q_i q_{i+1}
    s += R(0.4) * q[i] * q[i + 1];
    g[i] -= R(0.2) * q[i + 1];
    g[i + 1] -= R(0.2) * q[i];
  }
  return R(-0.5) * s;
}

struct run_result {
  std::vector<double> q;  // [chain][transition][i]
  std::vector<transition_stats> stats;
};

/// `chains` chains, `transitions` transitions each, in kernels of lane type T; chain c starts at
/// a point of its own with step size 0.3 + 0.02 c and metric 1 + 0.1 i (diagonal) or a
/// tridiagonal matrix (dense), stream (seed 5, c).
template <class T>
run_result run(int chains, int transitions, metric_kind kind) {
  using kernel = nuts_kernel<T>;
  constexpr int w = kernel::width;
  run_result out;
  out.q.assign(static_cast<std::size_t>(chains * transitions) * dim, 0.0);
  out.stats.resize(static_cast<std::size_t>(chains * transitions));
  for (int c0 = 0; c0 < chains; c0 += w) {
    std::vector<T> storage(kernel::storage_size(dim, 8, kind));
    kernel k;
    REQUIRE(k.bind(storage.data(), storage.size(), dim, 8, kind) == nuts_status::ok);
    k.rng().seed = 5;
    bool start[w] = {};
    int done[w] = {};
    for (int l = 0; l < w && c0 + l < chains; ++l) {
      const int c = c0 + l;
      double q[dim], g[dim], m[dim * dim] = {};
      for (std::size_t i = 0; i < dim; ++i) q[i] = 0.3 * std::sin(1.7 * double(i) + c);
      const double lp = gaussian(q, g);
      k.set_point(l, q, g, lp);
      if (kind == metric_kind::diagonal) {
        for (std::size_t i = 0; i < dim; ++i) m[i] = 1.0 + 0.1 * double(i);
      } else {
        for (std::size_t i = 0; i < dim; ++i) {
          m[i * dim + i] = 1.0 + 0.1 * double(i);
          if (i + 1 < dim) m[i * dim + i + 1] = m[(i + 1) * dim + i] = -0.3;
        }
      }
      REQUIRE(k.set_metric(l, m) == nuts_status::ok);
      REQUIRE(k.set_step_size(l, 0.3 + 0.02 * c) == nuts_status::ok);
      k.rng().stream[l] = static_cast<std::uint64_t>(c);
      start[l] = true;
    }
    REQUIRE(k.begin(start) == nuts_status::ok);
    while (k.any_running()) {
      for (int l = 0; l < w; ++l) {  // log p lane by lane, in double
        double q[dim], g[dim];
        for (std::size_t i = 0; i < dim; ++i) q[i] = tyche::lane_traits<T>::get(k.pending_q()[i], l);
        const double lp = gaussian(q, g);
        for (std::size_t i = 0; i < dim; ++i) tyche::lane_traits<T>::set(k.pending_grad()[i], l, g[i]);
        k.set_pending(l, lp);
      }
      bool ended[w];
      k.resume(ended);
      bool again[w] = {};
      for (int l = 0; l < w; ++l) {
        if (!ended[l]) continue;
        const std::size_t at = static_cast<std::size_t>((c0 + l) * transitions + done[l]);
        k.get_point(l, out.q.data() + at * dim);
        out.stats[at] = k.stats(l);
        again[l] = ++done[l] < transitions;
      }
      REQUIRE(k.begin(again) == nuts_status::ok);
    }
  }
  return out;
}

void require_same_chains(const run_result& a, const run_result& b, const char* what) {
  // Without fused multiply-adds every width computes each lane's numbers in the same order of
  // the same IEEE operations: equal, bit for bit. With them (-march=native), the compiler
  // chooses where to fuse differently for each instantiation (docs/nuts.md), so the chains
  // agree to rounding until a decision tips; then only the first transition is compared.
#if defined(__FMA__) || defined(__FP_FAST_FMA) || defined(FP_FAST_FMA)
  constexpr bool exact = false;
#else
  constexpr bool exact = true;
#endif
  INFO(what);
  for (std::size_t t = 0; t < a.stats.size(); ++t) {
    if (!exact && t % 40 != 0) continue;  // 40 transitions per chain
    INFO("transition " << t);
    REQUIRE(a.stats[t].n_leapfrog == b.stats[t].n_leapfrog);
    REQUIRE(a.stats[t].tree_depth == b.stats[t].tree_depth);
    REQUIRE(a.stats[t].divergent == b.stats[t].divergent);
    if (exact) {
      REQUIRE(a.stats[t].accept_stat == b.stats[t].accept_stat);
      REQUIRE(a.stats[t].energy == b.stats[t].energy);
      for (std::size_t i = 0; i < dim; ++i) REQUIRE(a.q[t * dim + i] == b.q[t * dim + i]);
    } else {
      REQUIRE(a.stats[t].accept_stat == Approx(b.stats[t].accept_stat).epsilon(1e-9));
      for (std::size_t i = 0; i < dim; ++i) REQUIRE(a.q[t * dim + i] == Approx(b.q[t * dim + i]).margin(1e-9));
    }
  }
}

}  // namespace

TEST_CASE("kernel: chains in the lanes of a batch are, chain by chain, single-lane chains", "[nuts][kernel]") {
  for (metric_kind kind : {metric_kind::diagonal, metric_kind::dense}) {
    const run_result one = run<double>(8, 40, kind);
    // The chains took many kinds of trajectories (so that lanes sat at different points).
    int shallow = 0, deep = 0;
    for (const auto& s : one.stats) (s.tree_depth <= 2 ? shallow : deep) += 1;
    CHECK(shallow > 0);
    CHECK(deep > 0);
#if TYCHE_HAS_XSIMD
    require_same_chains(one, run<tyche::lane_batch>(8, 40, kind),
                        kind == metric_kind::dense ? "widest batch, dense" : "widest batch, diagonal");
    if constexpr (tyche::half_lane_width > 1)
      require_same_chains(one, run<tyche::half_lane_batch>(8, 40, kind),
                          kind == metric_kind::dense ? "half batch, dense" : "half batch, diagonal");
#endif
  }
}

TEST_CASE("kernel: float lanes sample the target", "[nuts][kernel]") {
  // The kernel over float (a CUDA thread's float chains have this host twin): 4 chains × 2000
  // transitions of the 6-d Gaussian; each coordinate's mean within 4 batch-means standard errors
  // of 0, and the first coordinate's variance ((P⁻¹)₀₀ = 3.7123 for the precision matrix P) within 10 %.
  using kernel = nuts_kernel<float>;
  const int n = 2000;
  std::vector<std::vector<float>> draws(dim);
  for (int c = 0; c < 4; ++c) {
    std::vector<float> storage(kernel::storage_size(dim, 10, metric_kind::diagonal));
    kernel k;
    REQUIRE(k.bind(storage.data(), storage.size(), dim, 10, metric_kind::diagonal) == nuts_status::ok);
    k.rng().seed = 17;
    k.rng().stream[0] = static_cast<std::uint64_t>(c);
    float q[dim] = {}, g[dim];
    const float lp = gaussian(q, g);
    k.set_point(0, q, g, lp);
    REQUIRE(k.set_step_size(0, 0.5f) == nuts_status::ok);
    for (int t = 0; t < n; ++t) {
      const bool start[1] = {true};
      REQUIRE(k.begin(start) == nuts_status::ok);
      bool ended[1] = {false};
      while (!ended[0]) {
        k.set_pending(gaussian(k.pending_q(), k.pending_grad()));
        k.resume(ended);
      }
      REQUIRE(k.stats(0).accept_stat >= 0.0);
      REQUIRE(k.stats(0).accept_stat <= 1.0);
      k.get_point(0, q);
      for (std::size_t i = 0; i < dim; ++i) draws[i].push_back(q[i]);
    }
  }
  // The covariance: the inverse of the precision matrix P (P_ii = (i+1)/3, P_i,i+1 = 0.2).
  for (std::size_t i = 0; i < dim; ++i) {
    const auto& x = draws[i];
    const std::size_t total = x.size(), batches = 40, b = total / batches;
    double mean = 0, var = 0, bvar = 0;
    for (float v : x) mean += v / double(total);
    for (float v : x) var += (v - mean) * (v - mean) / double(total - 1);
    for (std::size_t k = 0; k < batches; ++k) {
      double bm = 0;
      for (std::size_t j = 0; j < b; ++j) bm += x[k * b + j] / double(b);
      bvar += (bm - mean) * (bm - mean) / double(batches - 1);
    }
    INFO("coordinate " << i << ": mean " << mean << ", MCSE " << std::sqrt(bvar / batches) << ", variance " << var);
    CHECK(std::fabs(mean) < 4 * std::sqrt(bvar / batches));
    if (i == 0) CHECK(std::fabs(var / 3.7123 - 1) < 0.10);
  }
}

TEST_CASE("kernel: every call reports what is wrong with its arguments", "[nuts][kernel]") {
  using kernel = nuts_kernel<double>;
  std::vector<double> storage(kernel::storage_size(3, 10, metric_kind::diagonal));
  kernel k;
  CHECK(k.bind(storage.data(), storage.size() - 1, 3, 10, metric_kind::diagonal) == nuts_status::storage_too_small);
  CHECK(k.bind(storage.data(), storage.size(), 0, 10, metric_kind::diagonal) == nuts_status::invalid_dimension);
  CHECK(k.bind(storage.data(), storage.size(), 3, 11, metric_kind::diagonal) == nuts_status::storage_too_small);
  REQUIRE(k.bind(storage.data(), storage.size(), 3, 10, metric_kind::diagonal) == nuts_status::ok);
  for (double eps : {0.0, -1.0, double(NAN), double(INFINITY)}) {
    INFO("step size " << eps);
    CHECK(k.set_step_size(0, eps) == nuts_status::invalid_step_size);
  }
  CHECK(k.step_size(0) == 1.0);  // unchanged
  const double nan_metric[3] = {1.0, NAN, 1.0}, inf_metric[3] = {INFINITY, 1.0, 1.0};
  CHECK(k.set_metric(0, nan_metric) == nuts_status::invalid_metric);
  CHECK(k.set_metric(0, inf_metric) == nuts_status::invalid_metric);
  // A point whose log density is not finite cannot start a transition; the lane stays idle.
  const double q[3] = {0, 0, 0}, g[3] = {0, 0, 0};
  k.set_point(0, q, g, -INFINITY);
  const bool start[1] = {true};
  int bad = -1;
  CHECK(k.begin(start, &bad) == nuts_status::non_finite_start);
  CHECK(bad == 0);
  CHECK_FALSE(k.running(0));
  for (nuts_status s : {nuts_status::storage_too_small, nuts_status::invalid_step_size, nuts_status::non_finite_start,
                        nuts_status::step_size_too_large})
    CHECK(std::string(describe(s)).size() > 10);
}

TEST_CASE("kernel: the step-size heuristic reports a step size that grows or shrinks without end", "[nuts][kernel]") {
  chain_streams<1> rng;
  rng.seed = 3;
  const double q0[1] = {0.0}, g0[1] = {0.0}, metric[1] = {1.0};
  double scratch[4];
  double eps = 1.0;
  // A flat target: every leapfrog is accepted, ε doubles past 1e7.
  auto flat = [](const double*, double* g) {
    g[0] = 0;
    return 0.0;
  };
  CHECK(find_initial_step_size(&eps, q0, g0, 0.0, metric, static_cast<const double*>(nullptr), metric_kind::diagonal, 1, rng, flat,
                               scratch) == nuts_status::step_size_too_large);
  // A target whose log density is NaN away from the start: ε halves (at most 200 times, as
  // Stan) and, from 1e-250, falls below 1e-300.
  auto broken = [](const double* q, double* g) {
    g[0] = NAN;
    return q[0] == 0.0 ? 0.0 : NAN;
  };
  eps = 1e-250;
  CHECK(find_initial_step_size(&eps, q0, g0, 0.0, metric, static_cast<const double*>(nullptr), metric_kind::diagonal, 1, rng, broken,
                               scratch) == nuts_status::step_size_too_small);
  // A standard normal: a step size near 1 (and the stream advanced by one normal per attempt).
  auto normal = [](const double* q, double* g) {
    g[0] = -q[0];
    return -0.5 * q[0] * q[0];
  };
  const double q1[1] = {0.5}, g1[1] = {-0.5};
  eps = 1e-3;
  const std::uint64_t before = rng.position[0];
  CHECK(find_initial_step_size(&eps, q1, g1, -0.125, metric, static_cast<const double*>(nullptr), metric_kind::diagonal, 1, rng,
                               normal, scratch) == nuts_status::ok);
  CHECK(eps > 0.1);
  CHECK(eps < 10);
  CHECK(rng.position[0] > before);
}

TEST_CASE("kernel: each lane reads its own chain's Philox stream", "[nuts][kernel][random]") {
  // uniforms: bit for bit counter_rng's uniform01 at the lane's (stream, position); normals:
  // n positions per lane, in order, equal to a single-lane generator's; lanes not taken do not move.
  chain_streams<4> lanes;
  lanes.seed = 99;
  for (int l = 0; l < 4; ++l) {
    lanes.stream[l] = static_cast<std::uint64_t>(10 + l);
    lanes.position[l] = static_cast<std::uint64_t>(7 * l);
  }
  const bool take[4] = {true, false, true, true};
  double u[4] = {-1, -1, -1, -1};
  lanes.uniforms(u, take);
  for (int l = 0; l < 4; ++l) {
    if (!take[l]) {
      CHECK(u[l] == -1);
      CHECK(lanes.position[l] == static_cast<std::uint64_t>(7 * l));
      continue;
    }
    CHECK(u[l] == tyche::counter_rng(99, 10 + l, 7 * l).uniform01());
    CHECK(lanes.position[l] == static_cast<std::uint64_t>(7 * l + 1));
  }
  constexpr std::size_t n = 37;  // more than one chunk of the generator
  std::vector<double> z(n * 4, 0.0);
  lanes.normals(z.data(), n, take);
  for (int l = 0; l < 4; ++l) {
    if (!take[l]) continue;
    chain_streams<1> one;
    one.seed = 99;
    one.stream[0] = static_cast<std::uint64_t>(10 + l);
    one.position[0] = static_cast<std::uint64_t>(7 * l + 1);
    std::vector<double> expected(n);
    const bool yes[1] = {true};
    one.normals(expected.data(), n, yes);
    for (std::size_t i = 0; i < n; ++i) REQUIRE(z[i * 4 + static_cast<std::size_t>(l)] == expected[i]);
    CHECK(lanes.position[l] == one.position[0]);
  }
  CHECK(lanes.position[1] == 7u);
}
