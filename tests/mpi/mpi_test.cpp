// tyche::mpi (tyche/mpi.hpp): NUTS across the ranks of an MPI program. Run by ctest as
// `mpirun -np 2 test_mpi` (tests/CMakeLists.txt; skipped when Open MPI is not installed). Every
// rank runs every test case in the same order (the calls under test are collectives); checks use
// CHECK, never REQUIRE, so that a failure on one rank does not leave the other waiting; the exit
// status is the worst of the ranks'.
//
// - chains across ranks: the gathered fit equals the one-process fit bit for bit (lanes = 0
//   resolved as one process would; 1, 4 and 5 chains over 2 ranks; a chain that warm-up left
//   stuck run again from another rank's chain);
// - data across ranks: the summed log density and gradient equal the whole model's to 1e-12, the
//   draws follow the one-process draws, every rank holds the same fit;
// - errors: a failing chain, models whose parameters differ, an evaluation that throws on one
//   rank: every rank throws the same message, naming the rank, and none hangs (ctest's timeout).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <tyche/mpi.hpp>
#include <tyche/tyche.hpp>

#include "support/arma.hpp"

#include <tyche/io/json_data.hpp>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <utility>
#include <stdexcept>
#include <string>
#include <vector>

using namespace tyche;
using Catch::Matchers::Contains;

namespace {

struct schools {
  std::vector<double> y{28, 8, -3, 7, -1, 1, 18, 12}, sigma{15, 10, 16, 11, 9, 11, 10, 18};
};

auto eight_schools(const schools& d) {
  return model(
      [](const schools& s) {
        auto mu = normal<"mu">(0.0, 5.0);
        auto tau = half_cauchy<"tau">(5.0);
        auto theta_raw = std_normal<"theta_raw">(shape<8>);
        return joint(mu, tau, theta_raw, normal(mu + tau * theta_raw, data(s.sigma)).observe(data(s.y)));
      },
      d);
}

void check_same_fit(const nuts_fit& a, const nuts_fit& b) {
  CHECK(a.chains == b.chains);
  if (a.chains != b.chains || a.stats.size() != b.stats.size()) return;  // CHECK only: the other rank goes on
  CHECK(a.draws == b.draws);
  CHECK(a.names == b.names);
  CHECK(a.quantities == b.quantities);
  CHECK(a.values == b.values);  // bit for bit
  CHECK(a.step_size == b.step_size);
  CHECK(a.inv_metric == b.inv_metric);
  CHECK(a.inv_metric_factors == b.inv_metric_factors);
  CHECK(a.restarted_from == b.restarted_from);
  CHECK(a.gradient_evaluations == b.gradient_evaluations);
  CHECK(a.lanes == b.lanes);
  CHECK(a.split == b.split);
  for (int c = 0; c < a.chains; ++c) {
    CHECK(a.stats[c].size() == b.stats[c].size());
    if (a.stats[c].size() != b.stats[c].size()) continue;
    for (std::size_t i = 0; i < a.stats[c].size(); ++i) {
      CHECK(a.stats[c][i].log_density == b.stats[c][i].log_density);
      CHECK(a.stats[c][i].accept_stat == b.stats[c][i].accept_stat);
      CHECK(a.stats[c][i].n_leapfrog == b.stats[c][i].n_leapfrog);
      CHECK(a.stats[c][i].divergent == b.stats[c][i].divergent);
      CHECK(a.stats[c][i].energy == b.stats[c][i].energy);
    }
  }
}

/// Every rank's fit hashes to rank 0's.
bool same_on_every_rank(const nuts_fit& fit) {
  std::uint64_t h = 1469598103934665603ULL;
  for (const auto& chain : fit.values) h = mpi::detail::hash_bytes(chain.data(), chain.size() * sizeof(double), h);
  std::uint64_t first = h;
  MPI_Bcast(&first, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  int differs = h != first ? 1 : 0, any = 0;
  MPI_Allreduce(&differs, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return any == 0;
}

}  // namespace

TEST_CASE("mpi: blocks of items per rank", "[mpi]") {
  CHECK(mpi::block_of(10, 0, 3).begin == 0);
  CHECK(mpi::block_of(10, 0, 3).end == 4);
  CHECK(mpi::block_of(10, 1, 3).begin == 4);
  CHECK(mpi::block_of(10, 1, 3).end == 7);
  CHECK(mpi::block_of(10, 2, 3).end == 10);
  CHECK(mpi::block_of(1, 1, 2).size() == 0);
  CHECK(mpi::size() == 2);  // ctest runs this program on two ranks
}

TEST_CASE("mpi::nuts: chains across ranks give the one-process fit, bit for bit", "[mpi]") {
  static const schools d;
  const auto m = eight_schools(d);
  // 4 chains (2 per rank; lanes = 0 resolves to the batch one process would use), 5 chains with
  // scalar lanes (3 + 2), 1 chain (rank 1 runs none), first_chain = 3 (streams 3, 4, 5).
  std::vector<nuts_config> configs = {
      {.chains = 4, .warmup = 150, .draws = 100, .seed = 3},
      // One thread: one process puts the 4 chains in a batch of 4 lanes where the build has one,
      // where a rank with 2 would run them one at a time: the ranks must use the batch too.
      {.chains = 4, .warmup = 150, .draws = 100, .seed = 3, .executor = cpu{.threads = 1}},
      {.chains = 5, .warmup = 150, .draws = 100, .seed = 4, .executor = cpu{.threads = 1, .lanes = 1}},
      {.chains = 1, .warmup = 150, .draws = 100, .seed = 5},
      {.chains = 3, .warmup = 150, .draws = 100, .seed = 6, .first_chain = 3},
      // The low-rank metric: its factors (nuts_fit::inv_metric_factors) travel with the chains.
      {.chains = 3, .warmup = 150, .draws = 100, .seed = 8, .metric = samplers::metric_kind::low_rank},
      // The device executor (emulated on the host: the path a GPU per rank takes).
      {.chains = 3, .warmup = 100, .draws = 50, .seed = 7, .executor = cuda{.emulate = true}},
  };
  for (const nuts_config& cfg : configs) {
    INFO("chains = " << cfg.chains << ", seed = " << cfg.seed);
    const nuts_fit across = mpi::nuts(m, cfg);
    const nuts_fit one = nuts(m, cfg);
    check_same_fit(across, one);
    CHECK(same_on_every_rank(across));
    CHECK(across.ranks == mpi::size());
    // The threads of every rank that ran chains, summed (5 chains on one thread per rank: 2).
    if (cfg.chains == 5) CHECK(across.threads == std::min(mpi::size(), cfg.chains));
  }
  // first_chain: a run of chains [3, 6) is chains 4 to 6 of a run of 6.
  nuts_config six{.chains = 6, .warmup = 150, .draws = 100, .seed = 6, .executor = cpu{.lanes = 1}};
  nuts_config last = six;
  last.chains = 3;
  last.first_chain = 3;
  const nuts_fit all = nuts(m, six), tail = mpi::nuts(m, last);
  for (int c = 0; c < 3; ++c) CHECK(tail.values[c] == all.values[c + 3]);
  // A model's quantities (quantity<"name">(e)): added after the chains are gathered, as one
  // process adds them after its chains.
  static const std::vector<double> y{1.2, 0.4, -0.3, 2.1};
  auto mu = normal<"mu">(0.0, 5.0);
  auto s = half_normal<"s">(2.0);
  const auto q = model(joint(mu, s, normal(mu, s).observe(data(y)), quantity<"s2">(square(s)), quantity<"z">(mu / s)));
  const nuts_config qc{.chains = 3, .warmup = 100, .draws = 50, .seed = 9};
  const nuts_fit q_across = mpi::nuts(q, qc), q_one = nuts(q, qc);
  CHECK(q_across.quantities == 2);
  CHECK(q_across.names.back() == "z");
  check_same_fit(q_across, q_one);  // the quantities' columns too
  CHECK(same_on_every_rank(q_across));
}

TEST_CASE("mpi::nuts: a chain's gradient, or a batch's, splits as in one process", "[mpi]") {
  // 2,500 × 100 data values (work 160,833, over cpu_split_min_work): with 2 chains on 2 threads one process
  // does not split (no thread to spare) where a rank with 1 chain would; with 1 chain it splits;
  // 4 chains go in one batch, split.
  static const auto xy = [] {
    std::vector<double> x(250000), y(2500);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37 * static_cast<double>(i));
    for (std::size_t i = 0; i < y.size(); ++i) y[i] = x[100 * i] + 0.5 * x[100 * i + 1] > 0 ? 1.0 : 0.0;
    return std::pair{x, y};
  }();
  auto alpha = normal<"alpha">(0.0, 1.0);
  auto beta = normal<"beta">(0.0, 1.0, shape<100>);
  const auto m = model(joint(alpha, beta, bernoulli_logit(alpha + matvec(matrix(xy.first, 2500, 100), beta)).observe(data(xy.second))));
  REQUIRE(m.split_work() >= cpu_split_min_work);  // the same on every rank: no hang
  for (const int chains : {2, 1, 4}) {
    const nuts_config cfg{.chains = chains, .warmup = 20, .draws = 10, .seed = 9, .executor = cpu{.threads = 2}};
    const nuts_fit across = mpi::nuts(m, cfg);
    const nuts_fit one = nuts(m, cfg);
    INFO("chains = " << chains);
    if (chains < 4) CHECK(one.split == (chains == 1 ? cpu_split_parts : 1));
    // 4 chains on 2 threads: one batch of 4 lanes split over both where the build has 4-lane
    // batches (samplers::detail::plan_cpu_layout); each rank runs its 2 chains as that batch.
    if (chains == 4 && (simd_lane_width == 4 || half_lane_width == 4)) {
      CHECK(one.lanes == 4);
      CHECK(one.split == cpu_split_parts);
    }
    check_same_fit(across, one);
  }
}

TEST_CASE("mpi: ranks called with other configurations throw, and do not wait", "[mpi][errors]") {
  static const schools d;
  const auto m = eight_schools(d);
  const nuts_config cfg{.chains = 2, .warmup = 20, .draws = 20, .seed = mpi::rank() == 0 ? 1u : 2u};
  CHECK_THROWS_WITH(mpi::nuts(m, cfg), Contains("rank 1: tyche::mpi::nuts: this rank's configuration differs from rank 0's in seed"));
  // The first setting that differs is named (2026-12-04: a new user's message did not say which).
  nuts_config split = cfg;
  split.seed = 1;
  split.executor = cpu{.split = mpi::rank() == 0 ? 4 : 2};
  CHECK_THROWS_WITH(mpi::nuts(m, split), Contains("differs from rank 0's in cpu::split"));
}

TEST_CASE("mpi::nuts: a chain that warm-up left stuck is run again from another rank's chain", "[mpi]") {
  // tests/samplers/warmup_options_test.cpp's case: chain 4 (on rank 1) starts in the ARMA model's
  // non-invertible region and stays there; it is run again from chain 1's last draw (rank 0's).
  // Chains on different ranks do not meet at the metric windows' ends, so the fit is one
  // process's with the trajectory_sync schedule (whose chains do not meet either), not with the
  // default schedule (which catches chain 4 at iteration 100).
  static const tyche_test::arma_data d(tyche_test::arma_series());
  const auto arma = tyche_test::arma_trap_model(d);
  nuts_config cfg{.chains = 4, .warmup = 500, .draws = 300, .seed = 5, .max_depth = 6};
  cfg.init = {{0.5, 0.6, 0.3, 1.0}, {0.5, 0.6, 0.3, 1.0}, {0.5, 0.6, 0.3, 1.0}, {0.5, 0.6, -1.5, 1.0}};
  const nuts_fit across = mpi::nuts(arma, cfg);
  CHECK(across.restarted_from == std::vector<int>{-1, -1, -1, 0});
  CHECK(same_on_every_rank(across));
  if (mpi::rank() == 0) {
    nuts_config one = cfg;
    one.executor = cpu{.schedule = samplers::lane_schedule::trajectory_sync};
    check_same_fit(across, nuts(arma, one));
    CHECK(nuts(arma, cfg).warmup_restarted_from == std::vector<int>{-1, -1, -1, 0});
  }
}

TEST_CASE("mpi::nuts: a chain that fails on one rank ends the call on every rank", "[mpi][errors]") {
  static const schools d;
  const auto m = eight_schools(d);
  nuts_config cfg{.chains = 4, .warmup = 20, .draws = 20, .seed = 1};
  std::vector<double> fine(10, 0.5), negative_tau(10, 0.5);
  negative_tau[1] = -1;  // tau outside (0, ∞), for chain 4 (rank 1's second)
  cfg.init = {fine, fine, fine, negative_tau};
  CHECK_THROWS_WITH(mpi::nuts(m, cfg), Contains("tyche::mpi: rank 1: ") && Contains("chain 4: init"));
  cfg.init.clear();
  cfg.adapt_delta = 2;  // every rank's configuration error, named once
  CHECK_THROWS_WITH(mpi::nuts(m, cfg), Contains("rank 0: tyche::nuts: adapt_delta = 2") && Contains("and 1 other rank"));
  cfg.adapt_delta = 0.8;
  cfg.pool_metric = true;  // chains on other ranks cannot wait for each other
  CHECK_THROWS_WITH(mpi::nuts(m, cfg), Contains("tyche::mpi::nuts: pool_metric = true: chains on different ranks"));
}

TEST_CASE("mpi::nuts: a rank with other data or another model throws on every rank", "[mpi][errors]") {
  const nuts_config cfg{.chains = 2, .warmup = 20, .draws = 20, .seed = 1};
  // One observation differs on rank 1 (a stale data file on one node): the chains of that rank
  // would sample another posterior.
  schools other;
  if (mpi::rank() == 1) other.y[3] = 7.5;
  const auto m = eight_schools(other);
  CHECK_THROWS_WITH(mpi::nuts(m, cfg), Contains("tyche::mpi: rank 1: tyche::mpi::nuts: this rank's model gives another "
                                                "log density than rank 0's at the same point") &&
                                           Contains("read another data file"));
  // One standard error differs: the same check.
  schools sigma;
  if (mpi::rank() == 1) sigma.sigma[0] = 14;
  CHECK_THROWS_WITH(mpi::nuts(eight_schools(sigma), cfg), Contains("rank 1: tyche::mpi::nuts: this rank's model gives another"));
  // Another parameter's name on rank 1.
  auto renamed = [&] {
    static const schools d;
    if (mpi::rank() == 0) return mpi::nuts(eight_schools(d), cfg);
    return mpi::nuts(model(
                         [](const schools& s) {
                           auto mu = normal<"mu">(0.0, 5.0);
                           auto tau = half_cauchy<"sd">(5.0);
                           auto theta_raw = std_normal<"theta_raw">(shape<8>);
                           return joint(mu, tau, theta_raw,
                                        normal(mu + tau * theta_raw, data(s.sigma)).observe(data(s.y)));
                         },
                         d),
                     cfg);
  };
  CHECK_THROWS_WITH(renamed(), Contains("rank 1: tyche::mpi::nuts: this rank's model has the parameters (mu, sd, "));
  // The same data on both ranks: no error (the fit is checked above).
  static const schools same;
  CHECK_NOTHROW(mpi::nuts(eight_schools(same), cfg));
}

namespace {

/// n observations of y = 1.5 + 2 x + noise, and this rank's block of them.
struct regression {
  std::vector<double> x, y;
  regression() = default;
  regression(std::size_t n, mpi::block b) {
    for (std::size_t i = b.begin; i < b.end && i < n; ++i) {
      const double t = static_cast<double>(i) / static_cast<double>(n);
      x.push_back(t - 0.5);
      y.push_back(1.5 + 2 * (t - 0.5) + 0.3 * std::sin(37.0 * static_cast<double>(i)));
    }
  }
};

/// Rank 0's model (the priors and its block) and the other ranks' (the same parameters, flat).
auto with_priors(const regression& d) {
  auto a = normal<"a">(0.0, 10.0);
  auto b = normal<"b">(0.0, 10.0);
  auto sigma = half_normal<"sigma">(2.0);
  return model(joint(a, b, sigma, normal(a + b * data(d.x), sigma).observe(data(d.y))));
}
auto without_priors(const regression& d) {
  auto a = flat<"a">();
  auto b = flat<"b">();
  auto sigma = flat<"sigma">(positive());
  return model(joint(a, b, sigma, normal(a + b * data(d.x), sigma).observe(data(d.y))));
}

/// The same with Student-t errors: no sufficient statistics (a normal regression's log density
/// partial evaluation reduces to sums fixed before sampling), so every evaluation reads the block.
auto with_priors_t(const regression& d) {
  auto a = normal<"a">(0.0, 10.0);
  auto b = normal<"b">(0.0, 10.0);
  auto sigma = half_normal<"sigma">(2.0);
  return model(joint(a, b, sigma, student_t(4.0, a + b * data(d.x), sigma).observe(data(d.y))));
}
auto without_priors_t(const regression& d) {
  auto a = flat<"a">();
  auto b = flat<"b">();
  auto sigma = flat<"sigma">(positive());
  return model(joint(a, b, sigma, student_t(4.0, a + b * data(d.x), sigma).observe(data(d.y))));
}

/// The sharded target's value and gradient at three points against the whole model's, to 1e-12.
template <class Sharded, class Reference>
void same_density(const Sharded& sharded, const Reference& reference) {
  for (const double x : {-0.4, 0.2, 0.9}) {
    const std::vector<double> q = {x, 1.5 * x, 0.5 * x};
    std::vector<double> g(3), h(3), ws(std::max(sharded.workspace_size(), reference.workspace_size()) + 1);
    const double v = sharded.value_and_gradient(q.data(), g.data(), ws.data());
    const double w = reference.value_and_gradient(q.data(), h.data(), ws.data());
    CHECK(v == Approx(w).epsilon(1e-12));
    for (int k = 0; k < 3; ++k) CHECK(g[k] == Approx(h[k]).epsilon(1e-12));
  }
}

/// A log density target that throws on rank 1.
struct throws_on_rank_1 {
  std::size_t dim() const { return 1; }
  std::size_t constrained_dim() const { return 1; }
  std::size_t workspace_size() const { return 0; }
  template <class T>
  T value_and_gradient(const T* q, T* g, T*) const {
    if (mpi::rank() == 1) throw std::runtime_error("the data of this rank are not finite");
    g[0] = -q[0];
    return -0.5 * q[0] * q[0];
  }
  std::vector<double> initial_point(counter_rng&, double) const { return {0.1}; }
  void constrain(const double* q, std::vector<double>& out) const { out.push_back(q[0]); }
};

}  // namespace

TEST_CASE("mpi::nuts_sharded: the sum over ranks is the whole model's log density", "[mpi]") {
  const std::size_t n = 101;
  const regression whole(n, {0, n});
  const regression mine(n, mpi::block_of(n));
  const auto full = with_priors(whole);
  // Scalar chains, and 4 chains in the lanes of a batch where the build has one of 4 (lanes = 0).
  const nuts_config scalar{.chains = 2, .warmup = 0, .draws = 50, .seed = 7, .executor = cpu{.threads = 1, .lanes = 1}};
  const nuts_config batched{.chains = 4, .warmup = 0, .draws = 50, .seed = 8, .executor = cpu{.threads = 1}};
  auto check = [&](const auto& part) {
    // Value and gradient at three points, against the whole model's, to 1e-12.
    const samplers::detail::model_target<std::remove_cvref_t<decltype(full)>> reference(full);
    mpi::detail::with_shard_target(part, MPI_COMM_WORLD, [&](const auto& sharded, std::size_t) {
      same_density(sharded, reference);
      return 0;
    });
    // The fit: the same on every rank, and the one-process fit's first 50 transitions to 1e-10
    // (the sums round differently, so not bit for bit: at a fixed step size and metric, warmup = 0,
    // the largest relative difference grew from 1e-16 to 4e-12 over the 50; warm-up's step-size
    // adaptation amplifies it, to 1e-8 after 40 warm-up iterations).
    for (const nuts_config& cfg : {scalar, batched}) {
      const nuts_fit fit = mpi::nuts_sharded(part, cfg);
      const nuts_fit one = nuts(full, cfg);
      INFO("chains = " << cfg.chains << ", lanes = " << one.lanes);
      CHECK(same_on_every_rank(fit));
      CHECK(fit.lanes == one.lanes);
      CHECK(fit.values.size() == one.values.size());
      if (fit.values.size() != one.values.size()) continue;
      for (int c = 0; c < cfg.chains; ++c)
        for (std::size_t i = 0; i < fit.values[c].size(); ++i)
          CHECK(fit.values[c][i] == Approx(one.values[c][i]).epsilon(1e-10).margin(1e-12));
      CHECK(fit.gradient_evaluations == one.gradient_evaluations);
    }
    // Warm-up's metric pooled across the chains (nuts_config::pool_metric): every rank pools in
    // the same order (one thread, chain order), so the fit is still the same on every rank.
    nuts_config pooled{.chains = 3, .warmup = 150, .draws = 20, .seed = 9, .executor = cpu{.threads = 1, .lanes = 1}};
    pooled.pool_metric = true;
    const nuts_fit fit = mpi::nuts_sharded(part, pooled);
    CHECK(same_on_every_rank(fit));
    for (int c = 1; c < 3; ++c) CHECK(fit.inv_metric[c] == fit.inv_metric[0]);
  };
  if (mpi::rank() == 0) check(with_priors(mine));
  else check(without_priors(mine));
}

TEST_CASE("mpi::nuts_sharded with threads: each rank's block evaluated in parts on its threads; the fit does not "
          "depend on the threads",
          "[mpi]") {
  const std::size_t n = 101;
  const regression whole(n, {0, n});
  const regression mine(n, mpi::block_of(n));
  const auto full = with_priors_t(whole);
  auto check = [&](const auto& part) {
    // The log density and gradient of the blocks in 3 parts (on 2 threads), against the whole
    // model's, to 1e-12.
    const samplers::detail::model_target<std::remove_cvref_t<decltype(full)>> reference(full);
    const std::size_t used = mpi::detail::with_shard_target(part, MPI_COMM_WORLD, [&](const auto& sharded, std::size_t parts) {
      same_density(sharded, reference);
      return parts;
    }, mpi::detail::shard_threads{.threads = 2, .split = 3, .chains = 1, .lanes = 1});
    CHECK(used == 3);
    // The fit with 4 parts: the same on 1 and 3 threads, bit for bit, and on every rank; the
    // unsplit fit's to rounding (warmup = 0: a fixed step size and metric, as above).
    const nuts_config one_thread{.chains = 2, .warmup = 0, .draws = 50, .seed = 7,
                                 .executor = cpu{.threads = 1, .lanes = 1, .split = 4}};
    nuts_config three_threads = one_thread, unsplit = one_thread;
    three_threads.executor = cpu{.threads = 3, .lanes = 1, .split = 4};
    unsplit.executor = cpu{.threads = 1, .lanes = 1, .split = 1};
    const nuts_fit a = mpi::nuts_sharded(part, one_thread);
    const nuts_fit b = mpi::nuts_sharded(part, three_threads);
    const nuts_fit c = mpi::nuts_sharded(part, unsplit);
    CHECK(a.split == 4);
    CHECK(b.split == 4);
    CHECK(c.split == 1);
    CHECK(a.values == b.values);
    CHECK(a.gradient_evaluations == b.gradient_evaluations);
    CHECK(same_on_every_rank(b));
    // The parts the ranks' evaluations ran, summed over the ranks: 4 per evaluation on each rank
    // (every rank makes the same evaluations), whatever the threads; the helpers' share of them.
    const long long ranks = mpi::size();
    CHECK(a.split_parts == b.split_parts);
    CHECK(a.split_parts % (4 * ranks) == 0);
    CHECK(a.split_parts >= 4 * ranks * a.gradient_evaluations);
    CHECK(a.split_parts_by_helpers == 0);  // one thread per rank: no helpers
    CHECK(b.split_parts_by_helpers <= b.split_parts);
    CHECK(b.helper_threads == 2 * ranks);
    CHECK(a.threads == ranks);
    CHECK(c.split_parts == 0);
    CHECK(c.helper_threads == 0);
    // Ranks with different threads (machines with other core counts): the same fit.
    nuts_config mixed = one_thread;
    mixed.executor = cpu{.threads = mpi::rank() == 0 ? 2 : 1, .lanes = 1, .split = 4};
    const nuts_fit m = mpi::nuts_sharded(part, mixed);
    CHECK(m.values == a.values);
    CHECK(same_on_every_rank(m));
    CHECK(m.helper_threads == 1);  // rank 0's one helper, summed over the ranks (the same on each)
    CHECK(m.split_parts == a.split_parts);
    REQUIRE(a.values.size() == c.values.size());
    bool differs = false;
    for (std::size_t k = 0; k < a.values.size(); ++k) {
      REQUIRE(a.values[k].size() == c.values[k].size());
      for (std::size_t i = 0; i < a.values[k].size(); ++i) {
        CHECK(a.values[k][i] == Approx(c.values[k][i]).epsilon(1e-10).margin(1e-12));
        differs = differs || a.values[k][i] != c.values[k][i];
      }
    }
    INFO("4 parts round differently from 1 (the parts are in the evaluation)");
    CHECK(differs);
    // split = 0 does not split a block this small (cpu_split_min_work), whatever the threads.
    nuts_config automatic = one_thread;
    automatic.executor = cpu{.threads = 2, .lanes = 1};
    CHECK(mpi::nuts_sharded(part, automatic).split == 1);
  };
  if (mpi::rank() == 0) check(with_priors_t(mine));
  else check(without_priors_t(mine));
}

TEST_CASE("mpi::nuts_sharded: errors end the call on every rank", "[mpi][errors]") {
  const std::size_t n = 20;
  const regression mine(n, mpi::block_of(n));
  const nuts_config cfg{.chains = 1, .warmup = 10, .draws = 10, .seed = 1};
  // Another parameter on rank 1.
  auto other_names = [&] {
    if (mpi::rank() == 0) return mpi::nuts_sharded(with_priors(mine), cfg);
    auto a = flat<"a">();
    auto slope = flat<"slope">();
    auto sigma = flat<"sigma">(positive());
    return mpi::nuts_sharded(model(joint(a, slope, sigma, normal(a + slope * data(mine.x), sigma).observe(data(mine.y)))), cfg);
  };
  CHECK_THROWS_WITH(other_names(), Contains("rank 1: tyche::mpi::nuts_sharded: this rank's model has the parameters (a, slope, sigma) but rank 0's has (a, b, sigma)"));
  // sigma on (0, 100) on rank 1: another transform than rank 0's (0, ∞).
  auto other_support = [&] {
    if (mpi::rank() == 0) return mpi::nuts_sharded(with_priors(mine), cfg);
    auto a = flat<"a">();
    auto b = flat<"b">();
    auto sigma = flat<"sigma">(between(0.0, 100.0));
    return mpi::nuts_sharded(model(joint(a, b, sigma, normal(a + b * data(mine.x), sigma).observe(data(mine.y)))), cfg);
  };
  CHECK_THROWS_WITH(other_support(), Contains("rank 1: tyche::mpi::nuts_sharded: this rank's 'sigma' is not constrained as rank 0's"));
  // The value named is the one that differs, not always sigma (2026-12-04).
  auto other_a = [&] {
    if (mpi::rank() == 0) return mpi::nuts_sharded(with_priors(mine), cfg);
    auto a = flat<"a">(between(-10.0, 10.0));
    auto b = flat<"b">();
    auto sigma = flat<"sigma">(positive());
    return mpi::nuts_sharded(model(joint(a, b, sigma, normal(a + b * data(mine.x), sigma).observe(data(mine.y)))), cfg);
  };
  CHECK_THROWS_WITH(other_a(), Contains("this rank's 'a' is not constrained as rank 0's") && Contains("flat<\"a\">"));
  // A prior on rank 1: counted twice.
  CHECK_THROWS_WITH(mpi::nuts_sharded(with_priors(mine), cfg),
                    Contains("rank 1: tyche::mpi::nuts_sharded: this rank's model gives random variable 'a' (normal) a prior") &&
                        Contains("flat<\"a\">(...)"));
  // Threads and parts: not negative.
  nuts_config threads = cfg;
  threads.executor = cpu{.threads = -1};
  CHECK_THROWS_WITH(mpi::nuts_sharded(with_priors(mine), threads), Contains("rank 0: tyche::mpi::nuts_sharded: cpu::threads = -1 must be ≥ 0"));
  threads.executor = cpu{.split = -2};
  CHECK_THROWS_WITH(mpi::nuts_sharded(with_priors(mine), threads), Contains("cpu::split = -2 must be ≥ 0"));
  // An evaluation that throws on rank 1 throws on both, with rank 1's message.
  const throws_on_rank_1 target;
  const mpi::detail::sharded_target<throws_on_rank_1> sharded(target, MPI_COMM_WORLD);
  double q = 0.3, g = 0;
  CHECK_THROWS_WITH(sharded.value_and_gradient(&q, &g, &g),
                    Contains("tyche::mpi: rank 1: the data of this rank are not finite"));
  // The same inside a running sampler: every rank's chain fails at its first evaluation, and the
  // driver reports it on every rank (no rank waits for the other).
  const samplers::detail::model_erased_target erased(sharded);
  CHECK_THROWS_WITH(samplers::detail::run_nuts_erased(erased, {.chains = 2, .warmup = 5, .draws = 5,
                                                               .executor = cpu{.threads = 1, .lanes = 1}},
                                                      {"x"}),
                    Contains("tyche::mpi: rank 1: the data of this rank are not finite") && Contains("chain 1"));
}

TEST_CASE("mpi::nuts_sharded: each rank reads its block of a JSON data file (json_rows): the fit of the blocks "
          "held in memory, bit for bit",
          "[mpi][json_rows]") {
  const std::size_t n = 101;
  const regression whole(n, {0, n});
  const regression mine(n, mpi::block_of(n));
  // Rank 0 writes the data (every digit), the others wait; the file's name is rank 0's.
  long id = mpi::rank() == 0 ? static_cast<long>(::getpid()) : 0;
  MPI_Bcast(&id, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  const std::string path =
      (std::filesystem::temp_directory_path() / ("tyche_mpi_rows_" + std::to_string(id) + ".json")).string();
  if (mpi::rank() == 0) {
    std::ofstream out(path);
    auto list = [&](const std::vector<double>& v) {
      out << "[";
      for (std::size_t i = 0; i < v.size(); ++i) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.17g", v[i]);
        out << (i ? ", " : "") << buf;
      }
      out << "]";
    };
    out << "{\"N\": " << n << ", \"x\": ";
    list(whole.x);
    out << ", \"y\": ";
    list(whole.y);
    out << "}\n";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const data_file f = read_json_data(path, {.variables = {"x", "y"}, .part = mpi::rank(), .parts = mpi::size()});
  MPI_Barrier(MPI_COMM_WORLD);
  if (mpi::rank() == 0) std::filesystem::remove(path);
  CHECK(f.rows().begin == mpi::block_of(n).begin);
  CHECK(f.rows().end == mpi::block_of(n).end);
  CHECK(f.rows().total == n);
  CHECK(f.integer("N") == static_cast<int>(n));
  regression read;
  read.x = f.vector("x");
  read.y = f.vector("y");
  CHECK(read.x == mine.x);  // bit for bit
  CHECK(read.y == mine.y);
  const nuts_config cfg{.chains = 2, .warmup = 20, .draws = 20, .seed = 5, .executor = cpu{.threads = 1, .lanes = 1}};
  const bool first = mpi::rank() == 0;
  const nuts_fit from_file = first ? mpi::nuts_sharded(with_priors_t(read), cfg) : mpi::nuts_sharded(without_priors_t(read), cfg);
  const nuts_fit in_memory = first ? mpi::nuts_sharded(with_priors_t(mine), cfg) : mpi::nuts_sharded(without_priors_t(mine), cfg);
  check_same_fit(from_file, in_memory);
}

int main(int argc, char* argv[]) {
  // Before MPI_Init: tyche's message, not Open MPI's abort of the job.
  bool named = false;
  try {
    (void)mpi::rank();
  } catch (const std::logic_error& e) {
    named = std::string(e.what()).starts_with("tyche::mpi::rank: MPI is not initialised: call MPI_Init");
  }
  if (!named) std::cerr << "mpi::rank() before MPI_Init did not throw tyche's std::logic_error\n";
  // FUNNELED: mpi::nuts_sharded with cpu::threads > 1 starts helper threads (only this thread
  // calls MPI).
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  const int failed = Catch::Session().run(argc, argv) + (named ? 0 : 1);
  int worst = 0;
  MPI_Allreduce(&failed, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
