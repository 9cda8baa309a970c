// expect: tyche::smc::run_smc/run_pimh/run_pg\(program, config\) requires 'program' to be a
#include <tyche/tyche.hpp>
int main() {
  // A function of the observation index is not a program: stepwise(...) makes one.
  auto step = [](std::size_t n) { return static_cast<double>(n); };
  return static_cast<int>(tyche::smc::run_smc(step, {.particles = 10}).log_evidence);
}
