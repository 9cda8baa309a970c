// bench/stan/compile_stan.cpp — the Stan program the compile-time rows build: one model
// (-DBENCH_STAN_MODEL='"<generated>.hpp"', from rstan::stanc) read from its data file, its log
// density and gradient at a point printed. Nothing else: the tyche counterpart is
// compile_tyche.cpp.   usage: compile_stan DATA.json
#include BENCH_STAN_MODEL

#include <stan/model/log_prob_grad.hpp>

#include "json_var_context.hpp"

#include <cstdio>
#include <exception>
#include <iostream>
#include <random>
#include <vector>

int main(int argc, char** argv) try {
  if (argc != 2) return 2;
  const auto context = stan_bench::read_json_var_context(argv[1]);
  const stan_model model(*context, 0, &std::cerr);
  std::mt19937_64 rng(20261121);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  std::vector<double> theta(model.num_params_r()), grad;
  for (double& t : theta) t = u(rng);
  std::vector<int> params_i;
  const double lp = stan::model::log_prob_grad<false, true>(model, theta, params_i, grad);
  std::printf("%.17g", lp);
  for (double g : grad) std::printf(" %.17g", g);
  std::printf("\n");
} catch (const std::exception& e) {
  std::fprintf(stderr, "compile_stan: %s\n", e.what());
  return 1;
}
