// A build without the SMC fork engine, as on a system without <sys/prctl.h> (anything but
// Linux): TYCHE_SMC_FORK_ENGINE defined to 0 before tyche is included. The umbrella header
// compiles, stepwise programs run on the in-process engine, and what needs the fork engine says
// so (docs/smc.md, "Where the fork engine runs").
#define TYCHE_SMC_FORK_ENGINE 0
#include <tyche/tyche.hpp>

#include "smc/paper_programs.hpp"  // the plain-callable programs there still compile

#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>

namespace smc = tyche::smc;

static_assert(!TYCHE_SMC_FORK_ENGINE, "tests/headers/without_fork_engine_test.cpp must be built without the fork engine");

TEST_CASE("without the fork engine: stepwise programs run in process", "[headers][without_fork_engine]") {
  const auto r = smc::run_smc(smc_programs::gaussian_stepwise(), {.particles = 2000, .seed = 3});
  CHECK(std::isfinite(r.log_evidence));
  CHECK(std::fabs(r.mean("mu") - smc_programs::gaussian_posterior_mean) < 0.5);
  const auto same = smc::run_smc(smc_programs::gaussian_stepwise(),
                                 {.particles = 2000, .seed = 3, .engine = smc::engine_kind::in_process});
  CHECK(same.log_evidence == r.log_evidence);
}

TEST_CASE("without the fork engine: what needs it says so", "[headers][without_fork_engine]") {
  CHECK_THROWS_AS(smc::run_smc(smc_programs::gaussian_stepwise(), {.engine = smc::engine_kind::fork}),
                  std::invalid_argument);
  CHECK_THROWS_WITH(smc::observe(0.0), Catch::Contains("no fork engine"));
  CHECK_THROWS_AS(smc::predict("mu", 1.0), std::logic_error);
  CHECK_THROWS_AS(smc::rng(), std::logic_error);
}
