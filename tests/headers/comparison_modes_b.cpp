// See comparison_modes_a.cpp: this file is built without TYCHE_CPU_COMPARISON_MODES.
#include <tyche/tyche.hpp>

#include "headers/comparison_modes.hpp"

#include <stdexcept>
#include <vector>

static_assert(!TYCHE_CPU_COMPARISON_MODES, "comparison_modes_b.cpp is built without TYCHE_CPU_COMPARISON_MODES");

namespace comparison_modes {

bool b_refuses_trajectory_sync() {
  using namespace tyche;
  nuts_config cfg = config();
  std::get<cpu>(cfg.executor).schedule = samplers::lane_schedule::trajectory_sync;
  try {
    (void)nuts(the_model(), cfg);
  } catch (const std::invalid_argument&) {
    return true;
  }
  return false;
}

std::vector<std::vector<double>> b_default_values() { return tyche::nuts(the_model(), config()).values; }

}  // namespace comparison_modes
