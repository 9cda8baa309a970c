// bench/stan/compile_stan.cpp — the Stan program the compile-time rows build: one model
// (-DBENCH_STAN_MODEL='"<generated>.hpp"', from rstan::stanc) read from its data file, then
// stan_program.hpp's run (the log density and gradient at a point, checked against
// compile_tyche.cpp's; Stan's NUTS service; the posterior means): a model built into a program
// that can fit it, as compile_tyche.cpp is for tyche.   usage: compile_stan DATA.json
#include BENCH_STAN_MODEL

#include "json_var_context.hpp"
#include "stan_program.hpp"

#include <cstdio>
#include <exception>
#include <iostream>

int main(int argc, char** argv) try {
  if (argc != 2) return 2;
  const auto context = stan_bench::read_json_var_context(argv[1]);
  stan_model model(*context, 0, &std::cerr);
  stan_bench::run_program(model);
} catch (const std::exception& e) {
  std::fprintf(stderr, "compile_stan: %s\n", e.what());
  return 1;
}
