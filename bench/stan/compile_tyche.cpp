// bench/stan/compile_tyche.cpp — the tyche program the compile-time rows build: one model
// (-DBENCH_TYCHE_TWIN=<name>, bench/stan/tyche_models.hpp) read from its data file; it prints the
// log density and gradient at the harness's point (checked against compile_stan.cpp's), then
// samples the model with tyche::nuts (4 chains of 200 + 200) and prints the posterior means: a
// model built into a program that can fit it, as compile_stan.cpp is for Stan.
//   usage: compile_tyche DATA.json
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
  const auto fit = tyche::nuts(posterior.model, {.chains = 4, .warmup = 200, .draws = 200, .seed = 1});
  for (std::size_t k = 0; k < fit.dim(); ++k) {
    double sum = 0;
    for (const auto& chain : fit.parameter(k))
      for (double v : chain) sum += v;
    std::fprintf(stderr, "%s %.4g\n", fit.names[k].c_str(), sum / (4.0 * 200.0));
  }
} catch (const std::exception& e) {
  std::fprintf(stderr, "compile_tyche: %s\n", e.what());
  return 1;
}
