// bench/stan/stan_program.hpp — what the Stan programs of the compile rows do with their model
// (compile_stan.cpp: stanc's class itself; compile_stan_driver.cpp: stan::model::model_base, the
// compile_separate rows): print the log density and gradient at a point (checked against the tyche
// program's), then sample with Stan's NUTS service (hmc_nuts_diag_e_adapt, what CmdStan and rstan
// call; 4 chains of 200 + 200) and print the posterior means.
#pragma once

#include <stan/callbacks/interrupt.hpp>
#include <stan/callbacks/logger.hpp>
#include <stan/callbacks/writer.hpp>
#include <stan/io/empty_var_context.hpp>
#include <stan/model/log_prob_grad.hpp>
#include <stan/services/sample/hmc_nuts_diag_e_adapt.hpp>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace stan_bench {

/// The draws' running sums, for the posterior means.
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

template <class Model>
void run_program(Model& model) {
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
}

}  // namespace stan_bench
