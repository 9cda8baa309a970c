// The CPU executor (samplers/nuts/cpu_executor.hpp): chains as SIMD lanes, each at its own point
// of its own trajectory. A chain's draws must not depend on what runs beside it: the number of
// chains, of threads, of lanes per group, or the schedule, nor on where the heap puts its state
// (identical calls give identical draws). The scalar path (lanes = 1) and the lane path must
// both sample the target.
#include <tyche/tyche.hpp>

#include "../../examples/posteriordb.hpp"
#include "support/small_regression.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

// A small hierarchical model with a matvec, so that lanes exercise reductions, a workspace and
// a transform.
auto hierarchical() { return tyche_test::small_regression(); }

double mean_of(const std::vector<std::vector<double>>& chains) {
  double s = 0;
  std::size_t n = 0;
  for (const auto& c : chains)
    for (double v : c) s += v, ++n;
  return s / static_cast<double>(n);
}

// Allocates blocks of varied sizes, frees every other one and keeps the rest until it is
// destroyed: what the next nuts() call allocates then lies elsewhere, at other distances.
class heap_perturbation {
 public:
  explicit heap_perturbation(unsigned seed) {
    std::mt19937 gen(seed);
    const int blocks = std::uniform_int_distribution<int>(1, 60)(gen);
    std::vector<std::vector<char>> freed;
    for (int j = 0; j < blocks; ++j) {
      std::vector<char> block(std::uniform_int_distribution<std::size_t>(8, 300)(gen));
      (j % 2 == 0 ? freed : kept_).push_back(std::move(block));
    }
  }

 private:
  std::vector<std::vector<char>> kept_;
};

}  // namespace

TEST_CASE("lockstep: identical nuts() calls give identical draws, with empty lanes, wherever the heap puts them",
          "[nuts][lockstep]") {
  using namespace tyche;
  // kidiq-kidscore_interaction: two identical calls in one -O3 -march=native process gave
  // different draws (742,500 against 740,622 gradients): GCC versions the loop that regularises
  // the adapted metric for aliasing, its scalar and vectorised copies rounded differently, and
  // which one ran depended on where the heap had put the chain's vectors (adaptation.hpp). So
  // every call after the first runs with the heap rearranged. Lanes: twice the widest batch with
  // 3 chains (lanes empty on every width ≥ 2), the widest batch with 5 chains (3 empty lanes on
  // AVX-512; on narrower builds chains rotate through the lanes), and the scalar path.
  const auto data = read_json_data(
      (tyche_examples::posteriors_dir(__FILE__) / "kidiq-kidscore_interaction" / "data.json").string());
  const auto kidiq = tyche_examples::kidiq_kidscore_interaction(data);
  const int w = static_cast<int>(simd_lane_width);
  for (const auto& [chains, lanes] : {std::pair{3, w > 1 ? 2 * w : 1}, std::pair{5, w}, std::pair{3, 1}}) {
    const nuts_config cfg{
        .chains = chains, .warmup = 300, .draws = 100, .seed = 2, .executor = cpu{.threads = 1, .lanes = lanes}};
    const auto first = nuts(kidiq.model, cfg);
    for (unsigned perturbation = 1; perturbation <= 4; ++perturbation) {
      INFO("chains = " << chains << ", lanes = " << lanes << ", heap perturbation " << perturbation);
      const heap_perturbation heap(perturbation);
      const auto again = nuts(kidiq.model, cfg);
      CHECK(again.values == first.values);  // bit-identical
      CHECK(again.step_size == first.step_size);
      CHECK(again.inv_metric == first.inv_metric);
      CHECK(again.gradient_evaluations == first.gradient_evaluations);
    }
  }
}

TEST_CASE("lockstep: a chain's draws do not depend on chains, threads, lanes or schedule", "[nuts][lockstep]") {
  using namespace tyche;
  const auto m = hierarchical();
  const int w = static_cast<int>(simd_lane_width);
  const int h = static_cast<int>(half_lane_width);
  nuts_config base{.chains = 1, .warmup = 150, .draws = 100, .seed = 11, .executor = cpu{.threads = 1, .lanes = w}};
  const auto one = nuts(m, base);
  REQUIRE(one.lanes == w);

  // 4w + 1 chains in batches of 2w lanes: three batches, on both threads (the executor takes
  // one thread per batch at most).
  auto many = base;
  many.chains = 4 * w + 1;
  many.executor = cpu{.threads = 2, .lanes = 2 * w};
  const auto five = nuts(m, many);
  auto wide = base;
  wide.chains = 3;
  wide.executor = cpu{.threads = 1, .lanes = 4 * w};
  const auto three = nuts(m, wide);
  auto synced = base;
  synced.chains = 4 * w + 1;
  synced.executor = cpu{.threads = 2, .lanes = 2 * w, .schedule = samplers::lane_schedule::trajectory_sync};
  const auto sync = nuts(m, synced);

  CHECK(five.threads == 2);  // three batches of 2w lanes on the two threads
  CHECK(sync.threads == 2);
  CHECK(one.values[0] == five.values[0]);  // bit-identical
  CHECK(one.values[0] == three.values[0]);
  CHECK(five.values == sync.values);
  CHECK(five.step_size == sync.step_size);
  CHECK(five.inv_metric == sync.inv_metric);
  for (int c = 0; c < 5; ++c)
    for (int d = 0; d < base.draws; ++d) {
      CHECK(five.stats[c][d].n_leapfrog == sync.stats[c][d].n_leapfrog);
      CHECK(five.stats[c][d].energy == sync.stats[c][d].energy);
    }
  CHECK(three.values[2] != three.values[0]);
  CHECK(five.gradient_evaluations == sync.gradient_evaluations);

  // first_chain: chains 3 … 5 of the five, run by themselves (as tyche::mpi runs a rank's block),
  // and numbered as in the larger run in messages.
  auto tail = many;
  tail.chains = 3;
  tail.first_chain = 2;
  const auto last_three = nuts(m, tail);
  for (int c = 0; c < 3; ++c) CHECK(last_three.values[c] == five.values[c + 2]);
  const std::vector<double> fine = {1.0, 0.5, 0.5, 0.5}, negative_sigma = {-1.0, 0.5, 0.5, 0.5};
  tail.init = {fine, fine, negative_sigma};
  CHECK_THROWS_WITH(nuts(m, tail), Catch::Matchers::Contains("chain 5: init"));
  tail.first_chain = -1;
  tail.init.clear();
  CHECK_THROWS_WITH(nuts(m, tail), Catch::Matchers::Contains("first_chain = -1 must be ≥ 0"));

  // lanes = 0: the widest batch of at least 4 lanes that a thread's chains fill, for a model
  // reading fewer than 4,096 data values; else one chain at a time. Within one batch width a
  // chain's draws are again independent of what runs beside it. (Across the two widths they
  // are not bit-identical: the compiler contracts multiply-adds differently in the two
  // instantiations of the model.)
  auto automatic = base;
  automatic.executor = cpu{.threads = 1, .lanes = 0};
  automatic.chains = 1;  // a lone chain: never in a batch with empty lanes
  const auto lone = nuts(m, automatic);
  CHECK(lone.lanes == 1);
  auto scalar = base;
  scalar.executor = cpu{.threads = 1, .lanes = 1};
  CHECK(lone.values == nuts(m, scalar).values);
  automatic.chains = w;  // as many chains as lanes: the full width where it has 4 lanes or more
  CHECK(nuts(m, automatic).lanes == (w >= 4 ? w : 1));
  if (h >= 4) {
    automatic.chains = h;
    CHECK(nuts(m, automatic).lanes == h);
  }
  automatic.chains = 2 * w;
  automatic.executor = cpu{.threads = 2, .lanes = 0};
  CHECK(nuts(m, automatic).lanes == (w >= 4 ? w : 1));
  const auto narrow = nuts(m, {.chains = 2, .warmup = base.warmup, .draws = base.draws, .seed = base.seed,
                               .executor = cpu{.threads = 1, .lanes = h > 1 ? h : w}});
  if (h > 1) {
    auto several = base;
    several.chains = 2;
    several.executor = cpu{.threads = 1, .lanes = 3 * h};  // three batches of the half width
    const auto half = nuts(m, several);
    CHECK(half.values[0] == narrow.values[0]);
    CHECK(half.values[1] == narrow.values[1]);
  }
}

TEST_CASE("lockstep: gradient counts and utilisation", "[nuts][lockstep]") {
  using namespace tyche;
  const auto m = hierarchical();
  const int w = static_cast<int>(simd_lane_width);
  // No warm-up: every gradient of a trajectory belongs to a recorded draw.
  nuts_config cfg{.chains = 8 * w, .warmup = 0, .draws = 60, .seed = 3, .init_step_size = 0.2, .executor = cpu{.threads = 1, .lanes = w}};
  const auto pc = nuts(m, cfg);
  long long leapfrogs = 0;
  for (const auto& chain : pc.stats)
    for (const auto& s : chain) leapfrogs += s.n_leapfrog;
  CHECK(pc.gradient_evaluations == leapfrogs);
  cfg.executor = cpu{.threads = 1, .lanes = w, .schedule = samplers::lane_schedule::trajectory_sync};
  const auto sync = nuts(m, cfg);
  CHECK(sync.gradient_evaluations == leapfrogs);
  // Program-counter batching wastes lanes only while the last chains finish; synchronised
  // trajectories waste, each iteration, the difference to the longest one.
  long long longest_sum = 0;
  for (int d = 0; d < cfg.draws; ++d) {
    int longest = 0;
    for (const auto& chain : sync.stats) longest = std::max(longest, chain[d].n_leapfrog);
    longest_sum += longest;
  }
  const double expected_sync = static_cast<double>(leapfrogs) / (static_cast<double>(cfg.chains) * longest_sum);
  CHECK(sync.utilization == Approx(expected_sync).epsilon(1e-12));
  CHECK(pc.utilization > sync.utilization);
  if (w > 1) {
    CHECK(pc.utilization > 0.8);
    CHECK(pc.utilization <= 1.0);
  } else {
    CHECK(pc.utilization == 1.0);
  }
}

TEST_CASE("lockstep: the scalar and the lane paths both sample the target", "[nuts][lockstep]") {
  using namespace tyche;
  // x ~ N(0, I₃) and log-normal y: means and variances known. Tolerance: 4 MCSE for means;
  // the variance estimate within 15 % (2000 draws per path, ESS > 1000).
  auto x = normal<"x">(0.0, 1.0, shape<3>);
  auto s = lognormal<"s">(0.0, 0.5);
  const auto m = model(joint(x, s));
  for (int lanes : {1, 0}) {
    const auto fit = nuts(m, {.chains = 4, .warmup = 500, .draws = 500, .seed = 21, .executor = cpu{.lanes = lanes}});
    INFO("lanes = " << lanes);
    for (std::size_t k = 0; k < 3; ++k) {
      const auto draws = fit.parameter(k);
      const double mean = mean_of(draws);
      const double mcse = tyche::mcse_mean(draws);
      CHECK(std::abs(mean) < 4 * mcse);
      double var = 0;
      int n = 0;
      for (const auto& chain : draws)
        for (double v : chain) var += (v - mean) * (v - mean), ++n;
      CHECK(var / (n - 1) == Approx(1.0).epsilon(0.15));
    }
    const auto sd = fit.parameter(3);
    const double mean_s = mean_of(sd);
    CHECK(std::abs(mean_s - std::exp(0.125)) < 4 * tyche::mcse_mean(sd));
  }
}

TEST_CASE("lockstep: lanes that are not a multiple of the SIMD width are refused", "[nuts][lockstep]") {
  using namespace tyche;
  const auto m = model(joint(normal<"x">(0.0, 1.0)));
  const int w = static_cast<int>(simd_lane_width);
  if (w > 1) {
    CHECK_THROWS_WITH(nuts(m, {.executor = cpu{.lanes = w + 1}}), Catch::Matchers::Contains("lanes = " + std::to_string(w + 1)));
  }
  CHECK_THROWS_WITH(nuts(m, {.executor = cpu{.lanes = -2}}), Catch::Matchers::Contains("lanes = -2"));
}

TEST_CASE("lockstep: a chain that fails is named, the others finish", "[nuts][lockstep]") {
  using namespace tyche;
  // An improper flat target: the step-size heuristic grows past 1e7 in every chain.
  auto x = flat<"x">();
  const auto m = model(joint(x));
  for (auto schedule : {samplers::lane_schedule::program_counter, samplers::lane_schedule::trajectory_sync})
    CHECK_THROWS_WITH(nuts(m, {.chains = 3, .warmup = 10, .draws = 10, .executor = cpu{.threads = 2, .schedule = schedule}}),
                      Catch::Matchers::Contains("chain 1"));
}

TEST_CASE("nuts: progress is reported every refresh iterations of every chain", "[nuts]") {
  using namespace tyche;
  const auto m = model(joint(normal<"x">(0.0, 1.0, shape<2>)));
  std::vector<nuts_progress> seen;  // calls are serialised by nuts()
  nuts_config cfg{.chains = 3, .warmup = 50, .draws = 70, .seed = 1, .executor = cpu{.threads = 2}};
  cfg.refresh = 40;
  cfg.on_progress = [&](const nuts_progress& p) { seen.push_back(p); };
  (void)nuts(m, cfg);
  // Per chain: iterations 1, 40, 80, 120 (the last): 4 reports.
  REQUIRE(seen.size() == 12);
  for (int c = 1; c <= 3; ++c) {
    std::vector<int> its;
    for (const auto& p : seen)
      if (p.chain == c) {
        its.push_back(p.iteration);
        CHECK(p.iterations == 120);
        CHECK(p.warmup == (p.iteration <= 50));
      }
    CHECK(its == std::vector<int>{1, 40, 80, 120});
  }
}

TEST_CASE("lockstep: the batch lane kernel gives the per-chain kernels' draws", "[nuts][lockstep]") {
  // cpu::lane_kernel = batch runs a SIMD batch of chains as the lanes of one kernel; the default
  // runs each chain in a kernel of its own and batches only the gradient. Without fused
  // multiply-adds the two compute the same numbers in the same order: equal draws, bit for bit.
  // With them the compiler fuses differently in the two (docs/design/nuts-kernel.md): then both
  // must sample the target (the means of the two runs within 5 combined standard errors).
  using namespace tyche;
  const auto m = hierarchical();
  const int w = simd_lane_width;
  for (auto schedule : {samplers::lane_schedule::program_counter, samplers::lane_schedule::trajectory_sync}) {
    nuts_config cfg{.chains = w + 1, .warmup = 150, .draws = 200, .seed = 31};
    cfg.executor = cpu{.threads = 1, .lanes = w, .schedule = schedule};
    const auto per_chain = nuts(m, cfg);
    cfg.executor = cpu{.threads = 1, .lanes = w, .schedule = schedule, .lane_kernel = cpu_lane_kernel::batch};
    const auto batch = nuts(m, cfg);
    REQUIRE(batch.lanes == per_chain.lanes);
#if defined(__FMA__) || defined(FP_FAST_FMA)
    for (std::size_t k = 0; k < per_chain.dim(); ++k) {
      const auto a = per_chain.parameter(k), b = batch.parameter(k);
      const double se = std::sqrt(std::pow(mcse_mean(a), 2) + std::pow(mcse_mean(b), 2));
      CHECK(std::fabs(mean_of(a) - mean_of(b)) < 5 * se);
    }
#else
    CHECK(batch.values == per_chain.values);
    CHECK(batch.step_size == per_chain.step_size);
    CHECK(batch.inv_metric == per_chain.inv_metric);
    CHECK(batch.gradient_evaluations == per_chain.gradient_evaluations);
#endif
  }
}

TEST_CASE("program_counter: a thread whose queue runs dry takes another thread's chains, bit for bit",
          "[nuts][lockstep]") {
  using namespace tyche;
  // Chain c waits in thread c mod 2's queue: with 3 or 5 chains, one chain per lane, thread 1 runs
  // out first and takes chains queued for thread 0 (and a chain that has drawn its last draw
  // may wait for restart_stuck_chains' rule of the last window, then leaves).
  const auto m = hierarchical();
  for (const int chains : {3, 5}) {
    INFO(chains << " chains");
    nuts_config cfg{.chains = chains, .warmup = 200, .draws = 60, .seed = 9};
    cfg.executor = cpu{.threads = 1, .lanes = 1};
    const auto one = nuts(m, cfg);
    cfg.executor = cpu{.threads = 2, .lanes = 1};
    const auto two = nuts(m, cfg);
    REQUIRE(two.threads == 2);
    CHECK(two.values == one.values);
    CHECK(two.step_size == one.step_size);
    CHECK(two.gradient_evaluations == one.gradient_evaluations);
  }
}

TEST_CASE("nuts: the executor as the third argument is the executor of the config", "[nuts]") {
  using namespace tyche;
  const auto m = hierarchical();
  const auto a = nuts(m, {.chains = 3, .warmup = 100, .draws = 50, .seed = 4}, cpu{.threads = 2, .lanes = 1});
  const auto b = nuts(m, {.chains = 3, .warmup = 100, .draws = 50, .seed = 4, .executor = cpu{.threads = 2, .lanes = 1}});
  CHECK(a.values == b.values);
  CHECK(a.lanes == 1);
  static_assert(nuts_executor_type<cpu>);
  static_assert(!nuts_executor_type<int>);
  static_assert(sampleable_model<decltype(m)>);
  static_assert(!sampleable_model<std::vector<double>>);
}

TEST_CASE("lanes = 0: a model's data values decide between chains in lanes and one chain at a time", "[nuts][lockstep]") {
  using namespace tyche;
  // A logistic regression on n rows × 10 columns reads n·10 + n values per evaluation (X and y:
  // nothing folds), n·10 of them in a matrix.
  struct rows {  // the data, which the model points at
    std::vector<double> X, y, counts;
    explicit rows(std::size_t n) : X(n * 10), y(n), counts(n * 10) {
      std::mt19937_64 rng(5);
      std::normal_distribution<double> z(0.0, 1.0);
      for (auto& v : X) v = z(rng);
      for (std::size_t i = 0; i < n; ++i) y[i] = static_cast<double>(i % 2);
      for (std::size_t i = 0; i < counts.size(); ++i) counts[i] = static_cast<double>(i % 3);
    }
  };
  const rows small(100), large(400);
  auto logistic = [](const rows& d) {
    auto alpha = normal<"alpha">(0.0, 1.0);
    auto beta = normal<"beta">(0.0, 1.0, shape<10>);
    return model(
        joint(alpha, beta, bernoulli_logit(alpha + matvec(matrix(d.X, d.y.size(), 10), beta)).observe(data(d.y))));
  };
  CHECK(logistic(small).data_values() == 1100);
  CHECK(logistic(large).data_values() == 4400);
  CHECK(logistic(large).matrix_values() == 4000);  // X's 400 × 10; y is not a matrix
  // Counts on one covariate (X's values), elementwise: data-heavy, no matrix.
  auto elementwise = [](const rows& d) {
    auto a = normal<"a">(0.0, 1.0);
    auto b = normal<"b">(0.0, 1.0);
    return model(joint(a, b, poisson_log(a + b * data(d.X)).observe(data(d.counts))));
  };
  using samplers::detail::lane_data_values_limit;
  using samplers::detail::resolve_lanes;
  CHECK(elementwise(large).data_values() >= lane_data_values_limit);
  CHECK(elementwise(large).matrix_values() == 0);
  // A 100-dimensional Gaussian with a data covariance: multi_normal's triangular solve reads the
  // Cholesky factor (100², counted whole) per evaluation, a matrix; the mean (100) is not.
  constexpr std::size_t k = 100;
  std::vector<double> mu(k, 0.0), sigma(k * k);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j) sigma[i * k + j] = std::pow(0.9, std::abs(double(i) - double(j)));
  const auto correlated = model(joint(multi_normal<"x">(data(mu), matrix(sigma.data(), k, k))));
  CHECK(correlated.data_values() == k * k + k);
  CHECK(correlated.matrix_values() == k * k);
  // What a split evaluation divides (the fused sums' loops): the logistic likelihood's X and y,
  // the elementwise Poisson's covariate and counts; not the triangular solve, which every part
  // repeats — so a GPU gives the correlated Gaussian one chain per thread, not the whole device.
  CHECK(logistic(large).split_values() == 4400);
  CHECK(elementwise(large).split_values() == elementwise(large).data_values());
  CHECK(correlated.split_values() == 0);
  // The work of those loops (what cpu::split = 0 is chosen by): an elementwise loop's values
  // count one each; a streamed matvec's X a third each and its rows 30 each (its link function
  // runs once per row, in scalar code, where an elementwise loop runs in SIMD).
  CHECK(logistic(large).split_work() == 400 + 4000 / 3 + 30 * 400);
  CHECK(elementwise(large).split_work() == elementwise(large).split_values());
  CHECK(correlated.split_work() == 0);
  {
    using samplers::detail::resolve_cuda_gradient;
    CHECK(resolve_cuda_gradient(cuda{}, 4, correlated.split_values()) == cuda_gradient::per_thread);
    CHECK(resolve_cuda_gradient(cuda{}, 4, correlated.data_values()) == cuda_gradient::whole_device);
    // A sum inside a log is not fused: every part would evaluate it whole.
    auto a = normal<"a">(0.0, 1.0);
    const auto in_log = model(joint(a, target(log(sum(exp(a * data(large.X)))))));
    CHECK(in_log.data_values() == large.X.size());
    CHECK(in_log.split_values() == 0);
    // A linear predictor used twice is buffered (one loop of its own, every part repeats it):
    // only y, read in the likelihood's loop, is divided.
    auto beta = normal<"beta">(0.0, 1.0, shape<10>);
    auto eta = matvec(matrix(large.X, large.y.size(), 10), beta);
    const auto twice = model(joint(beta, bernoulli_logit(eta).observe(data(large.y)), target(-0.5 * sum(square(eta)))));
    CHECK(twice.split_values() == large.y.size());
    CHECK(twice.split_work() == large.y.size());  // the buffered matvec's rows are not the loop's
    CHECK(twice.data_values() > large.X.size());
  }
  const int w = simd_lane_width, h = half_lane_width;
  const int batch = w >= 4 ? w : 1;  // what 0 gives a small model whose chains fill the full width
  const std::size_t heavy_values = lane_data_values_limit;
  CHECK(resolve_lanes(0, 8 * w, 1, 0, 0) == batch);
  CHECK(resolve_lanes(0, 8 * w, 1, lane_data_values_limit - 1, 0) == batch);
  // Data-heavy, mostly not matrices: one chain at a time.
  CHECK(resolve_lanes(0, 8 * w, 1, heavy_values, 0) == 1);
  CHECK(resolve_lanes(0, 8 * w, 1, heavy_values, heavy_values / 2 - 1) == 1);
  CHECK(resolve_lanes(0, 8 * w, 2, 10 * heavy_values, 0) == 1);
  // Data-heavy, mostly matrix rows: chains in lanes, as for small models.
  CHECK(resolve_lanes(0, 8 * w, 1, heavy_values, heavy_values / 2) == batch);
  CHECK(resolve_lanes(0, 8 * w, 2, 10 * heavy_values, 9 * heavy_values) == batch);
  CHECK(resolve_lanes(0, 4, 4, heavy_values, heavy_values) == 1);  // one chain per thread
  CHECK(resolve_lanes(0, 1, 1, 0, 0) == 1);  // a lone chain
  CHECK(resolve_lanes(0, 4, 4, 0, 0) == 1);  // one chain per thread
  if (h >= 4) CHECK(resolve_lanes(0, h, 1, 0, 0) == h);
  if (h >= 4) CHECK(resolve_lanes(0, h, 1, heavy_values, heavy_values) == h);
  CHECK(resolve_lanes(1, 8 * w, 1, 0, 0) == 1);
  CHECK(resolve_lanes(w, 8 * w, 1, lane_data_values_limit, 0) == w);  // an explicit setting stands
  // The rule for the widths of AVX-512 (8, half 4) and of a build with a 2-lane half (AVX2 had
  // SSE2's until 2026-12-04; the rule still takes any widths), whatever this build's are.
  using samplers::detail::default_lanes;
  for (auto [full, half_w] : {std::pair{8, 4}, std::pair{4, 2}}) {
    INFO("widths " << full << " and " << half_w);
    const int filled_half = half_w >= 4 ? half_w : 1;
    CHECK(default_lanes(full, full, half_w, 0, 0) == full);  // a small model
    CHECK(default_lanes(full, full, half_w, lane_data_values_limit - 1, 0) == full);
    CHECK(default_lanes(4, full, half_w, 0, 0) == (full == 4 ? 4 : filled_half));
    CHECK(default_lanes(1, full, half_w, 0, 0) == 1);  // a lone chain
    // Data-heavy: one chain at a time unless at least half the values are matrix rows.
    CHECK(default_lanes(full, full, half_w, heavy_values, 0) == 1);
    CHECK(default_lanes(full, full, half_w, heavy_values, heavy_values / 2 - 1) == 1);
    CHECK(default_lanes(full, full, half_w, heavy_values, heavy_values / 2) == full);
    CHECK(default_lanes(64, full, half_w, 100 * heavy_values, 99 * heavy_values) == full);
    CHECK(default_lanes(4, full, half_w, heavy_values, heavy_values) == (full == 4 ? 4 : filled_half));
    CHECK(default_lanes(1, full, half_w, heavy_values, heavy_values) == 1);
  }
  // The models' own counts, through the rule: the 400-row logistic regression goes in lanes,
  // the elementwise Poisson model one chain at a time.
  CHECK(default_lanes(8, 8, 4, logistic(large).data_values(), logistic(large).matrix_values()) == 8);
  CHECK(default_lanes(8, 8, 4, elementwise(large).data_values(), elementwise(large).matrix_values()) == 1);
  CHECK(default_lanes(8, 8, 4, logistic(small).data_values(), logistic(small).matrix_values()) == 8);
  CHECK(default_lanes(8, 8, 4, correlated.data_values(), correlated.matrix_values()) == 8);
  // Through nuts(): a thread's chains filling a batch are put in it on the logistic regressions
  // (X is most of their data), one at a time on the elementwise model.
  const auto heavy = nuts(logistic(large), {.chains = 2 * w, .warmup = 20, .draws = 10, .seed = 2,
                                          .executor = cpu{.threads = 1}});
  CHECK(heavy.lanes == batch);
  const auto light = nuts(logistic(small), {.chains = 2 * w, .warmup = 20, .draws = 10, .seed = 2,
                                          .executor = cpu{.threads = 1}});
  CHECK(light.lanes == batch);
  const auto flat = nuts(elementwise(large), {.chains = 2 * w, .warmup = 20, .draws = 10, .seed = 2,
                                            .executor = cpu{.threads = 1}});
  CHECK(flat.lanes == 1);
}

// ---- one chain's gradient on several cores (cpu::split, samplers/nuts/split_gradient.hpp) ----

namespace {
// Logistic-regression rows for the split tests: X (rows × cols) standard normal, y = 1 where
// x₀ + b·x₁ + noise > 0; returns {X, y}.
std::pair<std::vector<double>, std::vector<double>> split_test_rows(std::size_t rows, std::size_t cols,
                                                                    std::uint64_t seed, double b) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z;
  std::vector<double> x(rows * cols), y(rows);
  for (auto& v : x) v = z(rng);
  for (std::size_t i = 0; i < rows; ++i) y[i] = x[cols * i] + b * x[cols * i + 1] + z(rng) > 0 ? 1.0 : 0.0;
  return {x, y};
}
}  // namespace

TEST_CASE("split: the part pool runs every part once, on any number of helpers, and rethrows", "[nuts][split]") {
  using tyche::samplers::detail::part_pool;
  for (int helpers : {0, 1, 3}) {
    part_pool pool(helpers);
    CHECK(pool.helpers() == helpers);
    std::vector<int> hits(37, 0);
    auto f = [&](std::size_t p) { ++hits[p]; };
    for (int rep = 0; rep < 50; ++rep) pool.run(hits.size(), f);
    CHECK(std::count(hits.begin(), hits.end(), 50) == 37);
    auto fails = [](std::size_t p) {
      if (p == 5) throw std::runtime_error("part 5 failed");
    };
    CHECK_THROWS_WITH(pool.run(9, fails), "part 5 failed");
    // The helpers take parts: the part this thread runs first waits (up to 10 s, not on timing:
    // a loaded machine may leave the helpers unscheduled for a while) until another thread has
    // started a part.
    std::vector<std::thread::id> ran_on(12);
    std::atomic<bool> elsewhere{false};
    const auto caller = std::this_thread::get_id();
    auto parts = [&](std::size_t p) {
      ran_on[p] = std::this_thread::get_id();
      if (ran_on[p] != caller) {
        elsewhere = true;
      } else if (helpers > 0) {
        for (int waited = 0; waited < 10000 && !elsewhere; ++waited)
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    };
    pool.run(ran_on.size(), parts);
    const auto here = std::count(ran_on.begin(), ran_on.end(), caller);
    if (helpers == 0) CHECK(here == 12);
    else CHECK(here < 12);
    // Two callers at once (two chain threads sharing the helpers).
    std::vector<double> a(64, 0), b(64, 0);
    auto fa = [&](std::size_t p) { a[p] = static_cast<double>(p); };
    auto fb = [&](std::size_t p) { b[p] = 2.0 * static_cast<double>(p); };
    std::thread other([&] {
      for (int rep = 0; rep < 200; ++rep) pool.run(b.size(), fb);
    });
    for (int rep = 0; rep < 200; ++rep) pool.run(a.size(), fa);
    other.join();
    CHECK(std::accumulate(a.begin(), a.end(), 0.0) == 2016.0);
    CHECK(std::accumulate(b.begin(), b.end(), 0.0) == 4032.0);
  }
}

TEST_CASE("split: a chain's draws do not depend on the threads that evaluate its parts", "[nuts][split]") {
  using namespace tyche;
  // y ~ bernoulli_logit(alpha + X beta), 400 × 3: small enough for a test, split explicitly.
  static const auto xy = split_test_rows(400, 3, 5, -0.5);
  auto alpha = normal<"alpha">(0.0, 2.0);
  auto beta = normal<"beta">(0.0, 2.0, shape<3>);
  const auto m = model(joint(alpha, beta, bernoulli_logit(alpha + matvec(matrix(xy.first, 400, 3), beta)).observe(data(xy.second))));

  // The split evaluation equals the whole one to rounding.
  const samplers::detail::model_target<std::remove_cvref_t<decltype(m)>> target(m);
  const samplers::detail::model_erased_target erased(target);
  samplers::detail::part_pool pool(1);
  const samplers::detail::split_target<samplers::detail::model_erased_target> split(erased, 8, pool);
  const std::vector<double> q = {0.3, 0.9, -0.4, 0.1};
  std::vector<double> g(4), h(4), ws(split.workspace_size() + 1);
  const double v = split.value_and_gradient(q.data(), g.data(), ws.data());
  const double w = erased.value_and_gradient(q.data(), h.data(), ws.data());
  CHECK(v == Approx(w).epsilon(1e-12));
  for (int k = 0; k < 4; ++k) CHECK(g[k] == Approx(h[k]).epsilon(1e-12));
  // So does a batch of chains, lane by lane, at the full and at the half width.
  auto batch_split = [&]<class B>(std::type_identity<B>) {
    if constexpr (!std::is_void_v<B> && !std::is_same_v<B, double>) {
      constexpr std::size_t L = B::size;
      std::vector<B> qb(4), gb(4), hb(4), wsb(split.workspace_size() + 1);
      alignas(64) double lanes[L];
      for (std::size_t k = 0; k < 4; ++k) {
        for (std::size_t l = 0; l < L; ++l) lanes[l] = q[k] + 0.1 * static_cast<double>(l);
        qb[k] = B::load_aligned(lanes);
      }
      const B vs = split.value_and_gradient(qb.data(), gb.data(), wsb.data());
      const B vw = erased.value_and_gradient(qb.data(), hb.data(), wsb.data());
      for (std::size_t l = 0; l < L; ++l) {
        INFO(L << " lanes, lane " << l);
        CHECK(vs.get(l) == Approx(vw.get(l)).epsilon(1e-12));
        for (std::size_t k = 0; k < 4; ++k) CHECK(gb[k].get(l) == Approx(hb[k].get(l)).epsilon(1e-12));
      }
    }
  };
  batch_split(std::type_identity<lane_batch>{});
  batch_split(std::type_identity<half_lane_batch>{});

  nuts_config cfg{.chains = 1, .warmup = 100, .draws = 100, .seed = 4, .executor = cpu{.threads = 1, .lanes = 1, .split = 8}};
  const nuts_fit one = nuts(m, cfg);
  CHECK(one.split == 8);
  cfg.executor = cpu{.threads = 2, .lanes = 1, .split = 8};  // one helper thread
  const nuts_fit two = nuts(m, cfg);
  CHECK(two.split == 8);
  CHECK(one.values == two.values);  // bit for bit
  CHECK(one.step_size == two.step_size);
  // The parts counted: 8 per evaluation (every gradient and the initial points' evaluations),
  // none by a helper without one; with one, the helper's are among them (how many depends on
  // the machine's load).
  CHECK(one.split_parts % 8 == 0);
  CHECK(one.split_parts >= 8 * one.gradient_evaluations);
  CHECK(one.split_parts_by_helpers == 0);
  CHECK(two.split_parts == one.split_parts);
  CHECK(two.split_parts_by_helpers <= two.split_parts);
  cfg.executor = cpu{.threads = 3, .lanes = 1, .split = 8};
  const nuts_fit three = nuts(m, cfg);
  CHECK(three.split == 8);
  CHECK(three.values == one.values);
  cfg.executor = cpu{.threads = 2, .lanes = 1, .split = 1};
  const nuts_fit whole = nuts(m, cfg);
  CHECK(whole.split == 1);
  CHECK(whole.values != one.values);  // the sums round otherwise: the split evaluation was used
  CHECK(whole.values[0][0] == Approx(one.values[0][0]).epsilon(1e-6));  // the same chain, to rounding at first
  // Chains in SIMD lanes split too: a batch's draws do not depend on the threads either, and
  // are the unsplit batch's to rounding at first.
  if (simd_lane_width > 1) {
    const int w = simd_lane_width;
    cfg.chains = w;
    cfg.executor = cpu{.threads = 1, .lanes = w, .split = 8};
    const nuts_fit lanes_one = nuts(m, cfg);
    CHECK(lanes_one.split == 8);
    CHECK(lanes_one.lanes == w);
    cfg.executor = cpu{.threads = 2, .lanes = w, .split = 8};  // the batch on one thread, one helper
    const nuts_fit lanes_two = nuts(m, cfg);
    CHECK(lanes_two.split == 8);
    CHECK(lanes_two.threads == 1);  // one batch: one thread holds it, the other helps
    CHECK(lanes_two.helper_threads == 1);
    CHECK(lanes_one.helper_threads == 0);
    // summary says so: a user who asked for 2 threads and reads fit.threads == 1 sees the helper.
    std::ostringstream printed;
    printed << summary(lanes_two);
    REQUIRE(lanes_two.split_parts > 0);
    const long long percent = std::llround(100.0 * static_cast<double>(lanes_two.split_parts_by_helpers) /
                                           static_cast<double>(lanes_two.split_parts));
    CHECK_THAT(printed.str(), Catch::Matchers::Contains(" gradient evaluations: " + std::to_string(w) +
                                                        " chains on 1 thread in SIMD batches of " + std::to_string(w) +
                                                        " lanes; each evaluation split in 8 parts with 1 helper thread, "
                                                        "which ran " + std::to_string(percent) + " % of them\n"));
    CHECK(lanes_two.values == lanes_one.values);  // bit for bit
    cfg.executor = cpu{.threads = 2, .lanes = w, .split = 1};
    const nuts_fit lanes_whole = nuts(m, cfg);
    CHECK(lanes_whole.split == 1);
    CHECK(lanes_whole.values != lanes_one.values);
    for (int c = 0; c < w; ++c) CHECK(lanes_whole.values[c][0] == Approx(lanes_one.values[c][0]).epsilon(1e-6));
  }

  cfg.executor = cpu{.split = -1};
  CHECK_THROWS_WITH(nuts(m, cfg), Catch::Matchers::Contains("split = -1 must be ≥ 0"));
}

TEST_CASE("split: 4 chains of a regression with much data on 2 threads run as one batch split over both",
          "[nuts][split]") {
  using namespace tyche;
  // 25,000 × 10: 275,000 values in the likelihood's loop, work 858,333, over cpu_split_min_work.
  static const auto xy = split_test_rows(25000, 10, 8, -1.0);
  auto alpha = normal<"alpha">(0.0, 1.0);
  auto beta = normal<"beta">(0.0, 1.0, shape<10>);
  const auto m =
      model(joint(alpha, beta, bernoulli_logit(alpha + matvec(matrix(xy.first, 25000, 10), beta)).observe(data(xy.second))));
  REQUIRE(m.split_work() >= cpu_split_min_work);
  const nuts_config cfg{.chains = 4, .warmup = 10, .draws = 5, .seed = 3, .executor = cpu{.threads = 2}};
  const nuts_fit fit = nuts(m, cfg);
  // A 4-lane batch where the build has one (AVX2's full width, AVX-512's half); else as before.
  if (simd_lane_width == 4 || half_lane_width == 4) {
    CHECK(fit.lanes == 4);
    CHECK(fit.split == cpu_split_parts);
    CHECK(fit.threads == 1);  // the batch's thread; the other helps with its parts
    CHECK(fit.helper_threads == 1);
    // The draws are those of the batch on one thread, split alike (the threads do not matter).
    nuts_config alone = cfg;
    alone.executor = cpu{.threads = 1, .lanes = 4, .split = cpu_split_parts};
    CHECK(nuts(m, alone).values == fit.values);
  } else {
    CHECK(fit.lanes == 1);
    CHECK(fit.split == 1);
    CHECK(fit.threads == 2);
    CHECK(fit.helper_threads == 0);
  }
}

TEST_CASE("the default layout: chains in batches from all the chains, split by the threads they leave free",
          "[nuts][split]") {
  using tyche::cpu_split_min_work;
  using tyche::cpu_split_parts;
  using tyche::samplers::detail::cpu_layout;
  using tyche::samplers::detail::plan_cpu_layout;
  using tyche::samplers::detail::target_shape;
  const std::size_t parts = static_cast<std::size_t>(cpu_split_parts);
  // A logistic regression's shape: mostly matrix values, all of them in the fused sums.
  const target_shape heavy{.data_values = 1100000,
                           .matrix_values = 1000000,
                           .split_values = 1100000,
                           .split_work = 733333,  // 100,000 + 1,000,000 / 3 + 30 × 10,000 rows
                           .splittable = true,
                           .batches_splittable = true};
  auto is = [](const cpu_layout& l, int lanes, int threads, std::size_t p) {
    INFO("lanes " << l.lanes << ", threads " << l.threads << ", parts " << l.parts);
    CHECK(l.lanes == lanes);
    CHECK(l.threads == threads);
    CHECK(l.parts == p);
  };
  // AVX-512 widths (8, half 4).
  is(plan_cpu_layout(0, 0, 4, 2, 8, 4, heavy), 4, 1, parts);  // 4 chains on 2 cores: one batch, split
  is(plan_cpu_layout(0, 0, 4, 1, 8, 4, heavy), 4, 1, 1);      // one core: the batch, whole
  is(plan_cpu_layout(0, 0, 4, 8, 8, 4, heavy), 4, 1, parts);  // its 8 parts still fill 8 threads
  is(plan_cpu_layout(0, 0, 4, 9, 8, 4, heavy), 1, 4, parts);  // they would not fill 9: one at a time, split
  is(plan_cpu_layout(0, 0, 4, 16, 8, 4, heavy), 1, 4, parts);
  is(plan_cpu_layout(0, 0, 6, 4, 8, 4, heavy), 4, 2, parts);  // a batch and a half, two helpers
  is(plan_cpu_layout(0, 0, 12, 4, 8, 4, heavy), 4, 3, parts);  // 3 full batches of 4 (not 2 of 8), one helper
  is(plan_cpu_layout(0, 0, 8, 4, 8, 4, heavy), 8, 1, parts);   // one full batch of 8, three helpers
  is(plan_cpu_layout(0, 0, 2, 2, 8, 4, heavy), 1, 2, 1);      // too few chains for a batch
  is(plan_cpu_layout(0, 0, 1, 2, 8, 4, heavy), 1, 1, parts);  // one chain on two cores, as before
  is(plan_cpu_layout(0, 1, 4, 2, 8, 4, heavy), 1, 2, 1);      // split = 1: a thread's share decides
  is(plan_cpu_layout(0, 8, 4, 2, 8, 4, heavy), 4, 1, 8);      // an explicit split groups too
  // A thread's share that fills a batch keeps it (no regrouping into wider batches).
  is(plan_cpu_layout(0, 0, 8, 2, 8, 4, heavy), 4, 2, 1);
  is(plan_cpu_layout(0, 0, 16, 2, 8, 4, heavy), 8, 2, 1);
  is(plan_cpu_layout(0, 0, 16, 4, 8, 4, heavy), 4, 4, 1);
  // AVX2 widths (4, half 2).
  is(plan_cpu_layout(0, 0, 4, 2, 4, 1, heavy), 4, 1, parts);
  // Explicit lanes: the threads that hold chains are those the batches fill.
  is(plan_cpu_layout(4, 0, 4, 2, 8, 4, heavy), 4, 1, parts);
  is(plan_cpu_layout(4, 1, 8, 4, 8, 4, heavy), 4, 2, 1);
  // A target that splits only its double evaluation: its chains are not grouped.
  target_shape scalar_parts = heavy;
  scalar_parts.batches_splittable = false;
  is(plan_cpu_layout(0, 0, 4, 2, 8, 4, scalar_parts), 1, 2, 1);
  is(plan_cpu_layout(4, 0, 4, 2, 8, 4, scalar_parts), 4, 1, 1);  // nor are its batches split
  // Below the split's threshold, or not splittable, or data not in matrices: as before.
  target_shape small = heavy;
  small.split_work = cpu_split_min_work - 1;
  is(plan_cpu_layout(0, 0, 4, 2, 8, 4, small), 1, 2, 1);
  target_shape whole = heavy;
  whole.splittable = false;
  is(plan_cpu_layout(0, 0, 4, 2, 8, 4, whole), 1, 2, 1);
  target_shape flat{.data_values = 1000000,
                    .matrix_values = 0,
                    .split_values = 1000000,
                    .split_work = 1000000,
                    .splittable = true,
                    .batches_splittable = true};
  is(plan_cpu_layout(0, 0, 4, 2, 8, 4, flat), 1, 2, 1);
  is(plan_cpu_layout(0, 0, 1, 2, 8, 4, flat), 1, 1, parts);
}

TEST_CASE("threads = 0 counts the CPUs this process may run on (its affinity mask), not the machine's",
          "[nuts][split]") {
  // Under taskset, a Slurm or container cpuset or an MPI rank's binding the machine has more CPUs
  // than the process may use; cpu{.threads = 0} then took one thread per machine CPU, and an
  // automatic split one helper per CPU it did not have. A thread whose affinity is one CPU:
  // available_cpus() is 1, cpu_threads(cpu{}) is 1, and an automatic split has no helper thread
  // and does not split, where with the process's whole mask (2 CPUs or more) it does.
  using namespace tyche;
  using samplers::detail::available_cpus;
  using samplers::detail::cpu_threads;
  const unsigned all = available_cpus();
  CHECK(all >= 1);
  CHECK(cpu_threads(cpu{}) == static_cast<int>(all));
  CHECK(cpu_threads(cpu{.threads = 5}) == 5);
#if defined(__linux__) && defined(CPU_COUNT)  // <sched.h>, from samplers/nuts/cpus.hpp on Linux
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof mask, &mask) != 0) {  // a machine of more than CPU_SETSIZE CPUs
    WARN("sched_getaffinity with a CPU_SETSIZE mask failed: the pinned checks are skipped");
    return;
  }
  CHECK(static_cast<unsigned>(CPU_COUNT(&mask)) == all);
  int first = 0;
  while (!CPU_ISSET(first, &mask)) ++first;
  // A model whose sums do cpu_split_min_work of work per evaluation (elementwise: their values).
  std::vector<double> x(cpu_split_min_work / 2, 0.5), counts(cpu_split_min_work / 2, 1.0);
  auto a = normal<"a">(0.0, 1.0);
  auto b = normal<"b">(0.0, 1.0);
  const auto m = model(joint(a, b, poisson_log(a + b * data(x)).observe(data(counts))));
  REQUIRE(m.split_work() >= cpu_split_min_work);
  const samplers::detail::model_target<std::remove_cvref_t<decltype(m)>> target(m);
  const samplers::detail::model_erased_target erased(target);
  const nuts_config one_chain{.chains = 1, .executor = cpu{.lanes = 1}};
  bool could_pin = false;
  unsigned pinned = 0;
  int threads = 0;
  std::size_t parts = 0;
  std::thread([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) return;  // the thread's own mask (a sandbox may refuse)
    could_pin = true;
    pinned = available_cpus();
    threads = cpu_threads(cpu{});
    parts = samplers::detail::resolve_split(erased, one_chain, cpu{.lanes = 1});
  }).join();
  if (could_pin) {
    CHECK(pinned == 1);
    CHECK(threads == 1);
    CHECK(parts == 1);
  } else {
    WARN("sched_setaffinity refused: the pinned checks are skipped");
  }
  if (all >= 2) CHECK(samplers::detail::resolve_split(erased, one_chain, cpu{.lanes = 1}) == std::size_t(cpu_split_parts));
#endif
}

namespace {
/// What resolve_split reads from a target.
struct split_probe {
  bool can = true;
  std::size_t values = 0;
  std::size_t split = 0;  // of them, in the loops the parts divide
  [[nodiscard]] bool splittable() const { return can; }
  [[nodiscard]] std::size_t data_values() const { return values; }
  [[nodiscard]] std::size_t split_values() const { return split; }
};
/// One that also says the work of those loops (model_t::split_work), which then decides.
struct worked_split_probe : split_probe {
  std::size_t work = 0;
  [[nodiscard]] std::size_t split_work() const { return work; }
};
}  // namespace

TEST_CASE("split: when cpu::split = 0 splits", "[nuts][split]") {
  using tyche::cpu;
  using tyche::nuts_config;
  using tyche::samplers::detail::resolve_split;
  const split_probe big{true, 1000000, 1000000}, small{true, 1000, 1000}, cannot{false, 1000000, 1000000};
  // Much data, but read outside the loops the parts divide (a triangular solve): every part
  // would repeat it.
  const split_probe unsplit{true, 1000000, 10};
  const nuts_config one{.chains = 1}, four{.chains = 4};
  CHECK(resolve_split(big, one, cpu{.threads = 2}) == static_cast<std::size_t>(tyche::cpu_split_parts));
  CHECK(resolve_split(big, one, cpu{.threads = 1}) == 1);     // no thread to spare
  CHECK(resolve_split(big, four, cpu{.threads = 2}) == 1);    // the chains use every thread
  CHECK(resolve_split(big, four, cpu{.threads = 8}) == static_cast<std::size_t>(tyche::cpu_split_parts));
  CHECK(resolve_split(small, one, cpu{.threads = 2}) == 1);   // too little data to gain
  CHECK(resolve_split(unsplit, one, cpu{.threads = 2}) == 1);
  CHECK(resolve_split(cannot, one, cpu{.threads = 2}) == 1);
  // The work decides where the target says it, not the values: a logistic regression of
  // 2,500 × 10 (27,500 values, work 85,833) splits, one of 500 × 100 (50,500, work 32,166) not.
  const worked_split_probe few_columns{{true, 27500, 27500}, 85833}, many_columns{{true, 50500, 50500}, 32166};
  CHECK(resolve_split(few_columns, one, cpu{.threads = 2}) == static_cast<std::size_t>(tyche::cpu_split_parts));
  CHECK(resolve_split(many_columns, one, cpu{.threads = 2}) == 1);
  CHECK(resolve_split(big, one, cpu{.threads = 2, .split = 1}) == 1);
  CHECK(resolve_split(small, one, cpu{.threads = 1, .split = 4}) == 4);  // explicit: whatever the data
  CHECK_THROWS_WITH(resolve_split(cannot, one, cpu{.split = 4}),
                    Catch::Matchers::Contains("cannot evaluate its log density in parts"));
}

TEST_CASE("split: a model's split_work reaches the automatic split through the erased target",
          "[nuts][split]") {
  // model_t::split_work → model_target → erased_target → resolve_split (mpi::shard_parts reads
  // the erased target alike), on logistic regressions of 2,500 × 10 (27,500 values, work 85,833:
  // splits) and 400 × 10 (work 13,733: does not). The model is the type of the test "4 chains of
  // a regression with much data" above, so no driver is compiled for it here.
  using namespace tyche;
  static const auto big = split_test_rows(2500, 10, 11, 0.5), small = split_test_rows(400, 10, 12, 0.5);
  auto regression = [](const std::pair<std::vector<double>, std::vector<double>>& xy) {
    auto alpha = normal<"alpha">(0.0, 1.0);
    auto beta = normal<"beta">(0.0, 1.0, shape<10>);
    const std::size_t n = xy.second.size();
    return model(joint(alpha, beta, bernoulli_logit(alpha + matvec(matrix(xy.first, n, 10), beta)).observe(data(xy.second))));
  };
  const auto m_big = regression(big), m_small = regression(small);
  CHECK(m_big.split_values() == 27500);
  CHECK(m_big.split_work() == 2500 + 25000 / 3 + 30 * 2500);
  CHECK(m_small.split_work() == 400 + 4000 / 3 + 30 * 400);
  using target_type = samplers::detail::model_target<std::remove_cvref_t<decltype(m_big)>>;
  const target_type t_big(m_big), t_small(m_small);
  const samplers::detail::model_erased_target e_big(t_big), e_small(t_small);
  CHECK(e_big.split_work() == m_big.split_work());
  const nuts_config one{.chains = 1};
  CHECK(samplers::detail::resolve_split(e_big, one, cpu{.threads = 2}) == static_cast<std::size_t>(cpu_split_parts));
  CHECK(samplers::detail::resolve_split(e_small, one, cpu{.threads = 2}) == 1);
}
