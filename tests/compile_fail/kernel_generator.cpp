// expect: nuts_kernel<T, Rng> requires Rng to be a lane_generator
#include <tyche/samplers/nuts/kernel.hpp>
#include <random>
int main() {
  tyche::samplers::nuts_kernel<double, std::mt19937_64> k;  // not a lane_generator
  return static_cast<int>(k.dim());
}
