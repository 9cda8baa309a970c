// The model and configuration both files of tests/headers/comparison_modes_{a,b}.cpp sample: one
// model type, chains in SIMD lanes (the build's widest batch) on one thread.
#pragma once
#include <tyche/tyche.hpp>

#include <vector>

namespace comparison_modes {

inline auto the_model() {
  using namespace tyche;
  return model(joint(normal<"mu">(0.0, 1.0), std_normal<"z">(shape<3>)));
}

inline tyche::nuts_config config() {
  const int w = tyche::simd_lane_width;
  return {.chains = 2 * w, .warmup = 60, .draws = 40, .seed = 7, .executor = tyche::cpu{.threads = 1, .lanes = w}};
}

bool b_refuses_trajectory_sync();
std::vector<std::vector<double>> b_default_values();

}  // namespace comparison_modes
