// The device executor (tyche::cuda, samplers/nuts/device_executor.hpp), emulated: the code a CUDA
// thread runs for its chain (device_chain_run: transitions, warm-up, recording) compiled as host
// code and called for one chain after another. Its draws must be the CPU executor's with one
// chain at a time in scalar double (lanes = 1) bit for bit — the same kernel, the same warm-up
// arithmetic (warmup_step), the same Philox streams — whatever the number of draws per launch.
// Without nvcc the real executor must refuse with a message that says how to get one.
#include <tyche/tyche.hpp>
#include <tyche/io/stan_csv.hpp>

#include "support/eight_schools.hpp"
#include "support/small_regression.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using tyche_test::eight_schools_model;

using tyche_test::small_regression;

void require_same_fit(const tyche::nuts_fit& a, const tyche::nuts_fit& b) {
  REQUIRE(a.chains == b.chains);
  REQUIRE(a.draws == b.draws);
  REQUIRE(a.names == b.names);
  for (int c = 0; c < a.chains; ++c) {
    INFO("chain " << c + 1);
    REQUIRE(a.values[c].size() == b.values[c].size());
    for (std::size_t k = 0; k < a.values[c].size(); ++k) {
      INFO("value " << k);
      REQUIRE(a.values[c][k] == b.values[c][k]);
    }
    REQUIRE(a.stats[c].size() == b.stats[c].size());
    for (std::size_t t = 0; t < a.stats[c].size(); ++t) {
      INFO("draw " << t);
      REQUIRE(a.stats[c][t].log_density == b.stats[c][t].log_density);
      REQUIRE(a.stats[c][t].accept_stat == b.stats[c][t].accept_stat);
      REQUIRE(a.stats[c][t].n_leapfrog == b.stats[c][t].n_leapfrog);
      REQUIRE(a.stats[c][t].divergent == b.stats[c][t].divergent);
      REQUIRE(a.stats[c][t].energy == b.stats[c][t].energy);
      REQUIRE(a.stats[c][t].step_size == b.stats[c][t].step_size);
      REQUIRE(a.stats[c][t].tree_depth == b.stats[c][t].tree_depth);
    }
    REQUIRE(a.step_size[c] == b.step_size[c]);
    REQUIRE(a.inv_metric[c] == b.inv_metric[c]);
  }
  REQUIRE(a.gradient_evaluations == b.gradient_evaluations);
}

template <class Model>
void check_against_cpu(const Model& m, tyche::nuts_config cfg) {
  tyche::nuts_config on_cpu = cfg;
  on_cpu.executor = tyche::cpu{.threads = 2, .lanes = 1};
  tyche::nuts_config emulated = cfg;
  emulated.executor = tyche::cuda{.emulate = true};
  const auto a = tyche::nuts(m, on_cpu);
  const auto b = tyche::nuts(m, emulated);
  require_same_fit(a, b);
  // Draws copied back in blocks of 7 (the last one short): the same run.
  emulated.executor = tyche::cuda{.draws_per_launch = 7, .emulate = true};
  require_same_fit(a, tyche::nuts(m, emulated));
}

}  // namespace

TEST_CASE("emulated device executor: the CPU executor's draws, eight schools", "[device_executor]") {
  check_against_cpu(eight_schools_model(), {.chains = 3, .warmup = 150, .draws = 60, .seed = 11});
}

TEST_CASE("emulated device executor: the CPU executor's draws, a regression", "[device_executor]") {
  check_against_cpu(small_regression(), {.chains = 2, .warmup = 120, .draws = 50, .seed = 5});
}

TEST_CASE("emulated device executor: the CPU executor's draws, dense metric", "[device_executor]") {
  check_against_cpu(small_regression(),
                    {.chains = 2, .warmup = 150, .draws = 40, .seed = 3, .metric = tyche::samplers::metric_kind::dense});
}

TEST_CASE("emulated device executor: no warm-up, no draws", "[device_executor]") {
  const auto m = eight_schools_model();
  check_against_cpu(m, {.chains = 2, .warmup = 0, .draws = 20, .seed = 2});
  check_against_cpu(m, {.chains = 2, .warmup = 30, .draws = 0, .seed = 2});  // the adapted ε and M⁻¹
  check_against_cpu(m, {.chains = 2, .warmup = 0, .draws = 0, .seed = 2});
}

TEST_CASE("emulated device executor: progress after launches ending at multiples of refresh, same draws",
          "[device_executor]") {
  const auto m = eight_schools_model();
  tyche::nuts_config cfg{.chains = 2, .warmup = 40, .draws = 30, .seed = 6};
  cfg.executor = tyche::cuda{.emulate = true};
  const auto quiet = tyche::nuts(m, cfg);
  std::vector<tyche::nuts_progress> seen;
  cfg.refresh = 25;
  cfg.on_progress = [&](const tyche::nuts_progress& p) { seen.push_back(p); };
  const auto loud = tyche::nuts(m, cfg);
  require_same_fit(quiet, loud);
  // Launches end at 25, 40 (warm-up), 50 and 70: four reports per chain.
  REQUIRE(seen.size() == 8);
  REQUIRE(seen[0].iteration == 25);
  REQUIRE(seen[0].warmup);
  REQUIRE(seen[2].iteration == 40);
  REQUIRE(seen[6].iteration == 70);
  REQUIRE(!seen[6].warmup);
  REQUIRE(seen[7].chain == 2);
}

TEST_CASE("emulated device executor: a log density that is NaN in a region gives divergences",
          "[device_executor]") {
  using namespace tyche;
  // log p = −x²/2 for x < 1.5 and NaN beyond (sqrt of a negative number): the trajectories
  // that cross 1.5 diverge; nothing crashes and every draw stays below 1.5.
  auto x = normal<"x">(0.0, 1.0);
  const auto m = model(joint(x, target(lit<0> * sqrt(lit<3, 2> - x))));
  const auto fit = nuts(m, {.chains = 2, .warmup = 100, .draws = 200, .seed = 4, .executor = cuda{.emulate = true}});
  int divergent = 0;
  for (const auto& chain : fit.stats)
    for (const auto& s : chain) divergent += s.divergent ? 1 : 0;
  REQUIRE(divergent > 0);
  for (const auto& chain : fit.values)
    for (double v : chain) REQUIRE(v < 1.5);
}

TEST_CASE("device executor: settings are checked, and a host-compiled translation unit says how to get a GPU",
          "[device_executor]") {
  const auto m = eight_schools_model();
  auto message = [&](const tyche::nuts_config& cfg) {
    try {
      (void)tyche::nuts(m, cfg);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string bad_block = message({.chains = 2, .executor = tyche::cuda{.threads_per_block = 0, .emulate = true}});
  REQUIRE(bad_block.find("threads_per_block = 0") != std::string::npos);
  const std::string bad_draws = message({.chains = 2, .executor = tyche::cuda{.draws_per_launch = -1, .emulate = true}});
  REQUIRE(bad_draws.find("draws_per_launch = -1") != std::string::npos);
  const std::string bad_device = message({.chains = 2, .executor = tyche::cuda{.device = -1}});
  REQUIRE(bad_device.find("device = -1 must be") != std::string::npos);
#if !defined(__CUDACC__)
  const std::string no_nvcc = message({.chains = 2, .warmup = 10, .draws = 10, .executor = tyche::cuda{}});
  REQUIRE(no_nvcc.find("nvcc") != std::string::npos);
  REQUIRE(no_nvcc.find("emulate = true") != std::string::npos);
#endif
}

TEST_CASE("emulated device executor: summary and the CmdStan CSV of its fit are the CPU fit's", "[device_executor]") {
  const auto m = eight_schools_model();
  tyche::nuts_config cfg{.chains = 2, .warmup = 100, .draws = 50, .seed = 8};
  cfg.executor = tyche::cpu{.threads = 1, .lanes = 1};
  const auto a = tyche::nuts(m, cfg);
  cfg.executor = tyche::cuda{.emulate = true};
  const auto b = tyche::nuts(m, cfg);
  std::ostringstream sa, sb;
  sa << tyche::summary(a);
  sb << tyche::summary(b);
  REQUIRE(sa.str() == sb.str());
  REQUIRE(sa.str().find("theta_raw") != std::string::npos);
  for (int c = 0; c < 2; ++c) {
    std::ostringstream ca, cb;
    tyche::write_stan_csv(ca, a, c, cfg);
    tyche::write_stan_csv(cb, b, c, cfg);
    REQUIRE(ca.str() == cb.str());
    REQUIRE(ca.str().find("lp__") != std::string::npos);
  }
}
