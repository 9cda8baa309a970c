// Two translation units of one header-only program, this one with TYCHE_CPU_COMPARISON_MODES 1 and
// comparison_modes_b.cpp without it, sampling the same model type (config.hpp): each must get its
// own driver. Were the flag only a detail of the driver's body, the linker would keep one body of
// nuts<model type> for both, and one of the files would run the other's (this one refused its
// trajectory_sync, or the other ran one). Also the run of the header-only default path with SIMD
// lanes (b), which every other test with lanes links from the tree's separate driver.
#define TYCHE_CPU_COMPARISON_MODES 1
#include <tyche/tyche.hpp>

#include "headers/comparison_modes.hpp"

#include <cstdio>
#include <stdexcept>

int main() {
  using namespace tyche;
  int failures = 0;
  auto fail = [&](const char* what) {
    std::printf("comparison modes: %s\n", what);
    ++failures;
  };
  const auto m = comparison_modes::the_model();
  nuts_config cfg = comparison_modes::config();
  std::get<cpu>(cfg.executor).schedule = samplers::lane_schedule::trajectory_sync;
  nuts_fit synced;
  try {
    synced = nuts(m, cfg);
  } catch (const std::exception& e) {
    std::printf("%s\n", e.what());
    fail("this file (TYCHE_CPU_COMPARISON_MODES 1) refused trajectory_sync");
  }
  const nuts_fit plain = nuts(m, comparison_modes::config());
  if (synced.values != plain.values) fail("trajectory_sync's draws differ from program_counter's");
  if (!comparison_modes::b_refuses_trajectory_sync())
    fail("comparison_modes_b.cpp (no TYCHE_CPU_COMPARISON_MODES) ran trajectory_sync");
  if (comparison_modes::b_default_values() != plain.values)
    fail("comparison_modes_b.cpp's default run differs from this file's");
  std::printf("comparison modes: %d failures\n", failures);
  return failures == 0 ? 0 : 1;
}
