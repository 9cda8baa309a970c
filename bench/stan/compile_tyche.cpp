// bench/stan/compile_tyche.cpp — the tyche program the compile-time rows build: one model
// (-DBENCH_TYCHE_TWIN=<name>, bench/stan/tyche_models.hpp) read from its data file, its log density
// and gradient at the harness's point printed. Nothing else: the Stan counterpart is
// compile_stan.cpp.   usage: compile_tyche DATA.json
#include "tyche_models.hpp"

#include <cstdio>
#include <exception>
#include <random>
#include <vector>

int main(int argc, char** argv) try {
  if (argc != 2) return 2;
  const tyche::data_file d = tyche::read_json_data(argv[1]);
  const auto posterior = tyche_bench::BENCH_TYCHE_TWIN(d);
  std::mt19937_64 rng(20261121);
  const std::vector<double> theta = posterior.model.initial_point(rng, 2.0);
  std::vector<double> grad(theta.size());
  const double lp = posterior.model.log_prob_and_gradient(theta, grad);
  std::printf("%.17g", lp);
  for (double g : grad) std::printf(" %.17g", g);
  std::printf("\n");
} catch (const std::exception& e) {
  std::fprintf(stderr, "compile_tyche: %s\n", e.what());
  return 1;
}
