// bench/stan/compile_stan.cpp — the Stan program the compile-time rows build: one model
// (-DBENCH_STAN_MODEL='"<generated>.hpp"', from rstan::stanc) read from its data file; it prints
// the log density and gradient at a point (checked against compile_tyche.cpp's), then samples
// the model with Stan's NUTS service (hmc_nuts_diag_e_adapt, what CmdStan and rstan call; 4
// chains of 200 + 200) and prints the posterior means: a model built into a program that can fit
// it, as compile_tyche.cpp is for tyche.   usage: compile_stan DATA.json
#include BENCH_STAN_MODEL

#include <stan/callbacks/interrupt.hpp>
#include <stan/callbacks/logger.hpp>
#include <stan/callbacks/writer.hpp>
#include <stan/io/empty_var_context.hpp>
#include <stan/model/log_prob_grad.hpp>
#include <stan/services/sample/hmc_nuts_diag_e_adapt.hpp>

#include "json_var_context.hpp"

#include <cstdio>
#include <exception>
#include <iostream>
#include <random>
#include <string>
#include <vector>

namespace {
struct mean_writer : stan::callbacks::writer {
  std::vector<std::string> names;
  std::vector<double> sum;
  long rows = 0;
  void operator()(const std::vector<std::string>& n) override { names = n; }
  void operator()(const std::vector<double>& state) override {
    sum.resize(state.size());
    for (std::size_t k = 0; k < state.size(); ++k) sum[k] += state[k];
    ++rows;
  }
};
}  // namespace

int main(int argc, char** argv) try {
  if (argc != 2) return 2;
  const auto context = stan_bench::read_json_var_context(argv[1]);
  stan_model model(*context, 0, &std::cerr);
  std::mt19937_64 rng(20261121);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  std::vector<double> theta(model.num_params_r()), grad;
  for (double& t : theta) t = u(rng);
  std::vector<int> params_i;
  const double lp = stan::model::log_prob_grad<false, true>(model, theta, params_i, grad);
  std::printf("%.17g", lp);
  for (double g : grad) std::printf(" %.17g", g);
  std::printf("\n");
  stan::io::empty_var_context init;
  stan::callbacks::interrupt interrupt;
  stan::callbacks::logger logger;
  stan::callbacks::writer init_writer, diagnostic_writer;
  mean_writer out;
  for (unsigned int chain = 1; chain <= 4; ++chain)
    stan::services::sample::hmc_nuts_diag_e_adapt(
        model, init, 1, chain, 2.0, 200, 200, 1, false, 0, 1.0, 0.0, 10, 0.8, 0.05, 0.75, 10.0,
        75, 50, 25, interrupt, logger, init_writer, out, diagnostic_writer);
  for (std::size_t k = 7; k < out.names.size(); ++k)
    std::fprintf(stderr, "%s %.4g\n", out.names[k].c_str(), out.sum[k] / double(out.rows));
} catch (const std::exception& e) {
  std::fprintf(stderr, "compile_stan: %s\n", e.what());
  return 1;
}
