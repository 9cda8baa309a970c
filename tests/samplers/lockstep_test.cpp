// The lockstep driver (samplers/nuts/lockstep.hpp): chains as SIMD lanes, each at its own point
// of its own trajectory. A chain's draws must not depend on what runs beside it: the number of
// chains, of threads, of lanes per group, or the schedule. The scalar path (lanes = 1) and the
// lane path must both sample the target.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace {

// A small hierarchical model with a matvec, so that lanes exercise reductions, a workspace and
// a transform.
auto hierarchical() {
  using namespace tyche;
  static const std::vector<double> x = {0.5, -1.2, 0.3, 2.0, -0.7, 1.1, -0.4, 0.9, 1.6, -2.1,
                                        0.2, 0.8, -1.5, 0.6, 1.3, -0.1, 0.4, -0.9, 1.8, -0.3};
  static const std::vector<double> y = {1.1, -0.8, 0.9, 2.9, -0.2, 1.9, 0.1, 1.5, 2.6, -1.9};
  auto sigma = half_normal<"sigma">(1.0);
  auto beta = normal<"beta">(0.0, 2.0, shape<2>);
  auto alpha = normal<"alpha">(0.0, 2.0);
  auto obs = normal(alpha + matvec(matrix(x, 10, 2), beta), sigma).observe(data(y));
  return model(joint(sigma, beta, alpha, obs));
}

double mean_of(const std::vector<std::vector<double>>& chains) {
  double s = 0;
  std::size_t n = 0;
  for (const auto& c : chains)
    for (double v : c) s += v, ++n;
  return s / static_cast<double>(n);
}

}  // namespace

TEST_CASE("lockstep: a chain's draws do not depend on chains, threads, lanes or schedule", "[nuts][lockstep]") {
  using namespace tyche;
  const auto m = hierarchical();
  const int w = static_cast<int>(samplers::simd_lane_width);
  const int h = static_cast<int>(samplers::half_lane_width);
  nuts_config base{.chains = 1, .warmup = 150, .draws = 100, .seed = 11, .threads = 1, .lanes = w};
  const auto one = nuts(m, base);
  REQUIRE(one.lanes == w);

  auto many = base;
  many.chains = 5;
  many.threads = 2;
  many.lanes = 2 * w;
  const auto five = nuts(m, many);
  auto wide = base;
  wide.chains = 3;
  wide.lanes = 4 * w;
  const auto three = nuts(m, wide);
  auto synced = base;
  synced.chains = 5;
  synced.threads = 2;
  synced.lanes = 2 * w;
  synced.schedule = samplers::lane_schedule::trajectory_sync;
  const auto sync = nuts(m, synced);

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

  // lanes = 0: the narrowest batch that holds a thread's chains. Within one batch width a
  // chain's draws are again independent of what runs beside it. (Across the two widths they
  // are not bit-identical: the compiler contracts multiply-adds differently in the two
  // instantiations of the model.)
  auto automatic = base;
  automatic.lanes = 0;
  automatic.chains = h > 1 ? h : w;
  const auto narrow = nuts(m, automatic);
  CHECK(narrow.lanes == (h > 1 ? h : w));
  automatic.chains = (h > 1 ? h : w) + 1;
  CHECK(nuts(m, automatic).lanes == w);
  if (h > 1) {
    auto several = base;
    several.chains = 2;
    several.lanes = 3 * h;  // three batches of the half width
    const auto half = nuts(m, several);
    CHECK(half.values[0] == narrow.values[0]);
    CHECK(half.values[1] == narrow.values[1]);
  }
}

TEST_CASE("lockstep: gradient counts and utilisation", "[nuts][lockstep]") {
  using namespace tyche;
  const auto m = hierarchical();
  const int w = static_cast<int>(samplers::simd_lane_width);
  // No warm-up: every gradient of a trajectory belongs to a recorded draw.
  nuts_config cfg{.chains = 8 * w, .warmup = 0, .draws = 60, .seed = 3, .init_step_size = 0.2, .threads = 1};
  const auto pc = nuts(m, cfg);
  long long leapfrogs = 0;
  for (const auto& chain : pc.stats)
    for (const auto& s : chain) leapfrogs += s.n_leapfrog;
  CHECK(pc.gradient_evaluations == leapfrogs);
  cfg.schedule = samplers::lane_schedule::trajectory_sync;
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
    const auto fit = nuts(m, {.chains = 4, .warmup = 500, .draws = 500, .seed = 21, .lanes = lanes});
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
  const int w = static_cast<int>(samplers::simd_lane_width);
  if (w > 1) {
    CHECK_THROWS_WITH(nuts(m, {.lanes = w + 1}), Catch::Matchers::Contains("lanes = " + std::to_string(w + 1)));
  }
  CHECK_THROWS_WITH(nuts(m, {.lanes = -2}), Catch::Matchers::Contains("lanes = -2"));
}

TEST_CASE("lockstep: a chain that fails is named, the others finish", "[nuts][lockstep]") {
  using namespace tyche;
  // An improper flat target: the step-size heuristic grows past 1e7 in every chain.
  auto x = flat<"x">();
  const auto m = model(joint(x));
  for (auto schedule : {samplers::lane_schedule::program_counter, samplers::lane_schedule::trajectory_sync})
    CHECK_THROWS_WITH(nuts(m, {.chains = 3, .warmup = 10, .draws = 10, .threads = 2, .schedule = schedule}),
                      Catch::Matchers::Contains("chain 1"));
}

TEST_CASE("nuts: progress is reported every refresh iterations of every chain", "[nuts]") {
  using namespace tyche;
  const auto m = model(joint(normal<"x">(0.0, 1.0, shape<2>)));
  std::vector<nuts_progress> seen;  // calls are serialised by nuts()
  nuts_config cfg{.chains = 3, .warmup = 50, .draws = 70, .seed = 1, .threads = 2};
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
