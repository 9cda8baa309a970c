// bench/stan/compile_stan_driver.cpp — the model-independent half of the Stan program of the
// `compile_separate` rows, built once and linked with each model, as CmdStan builds its main.o:
// Stan's NUTS service (hmc_nuts_diag_e_adapt, what CmdStan and rstan call) instantiated for
// stan::model::model_base (the generated model's virtual interface), the data reader and the
// same output as compile_stan.cpp. The model's own translation unit is the file stanc generates,
// compiled alone with Stan's precompiled model_header.hpp; its new_model() (stanc's factory)
// is all this file needs of it.   usage: compile_stan_separate DATA.json
#include <stan/callbacks/interrupt.hpp>
#include <stan/callbacks/logger.hpp>
#include <stan/callbacks/writer.hpp>
#include <stan/io/empty_var_context.hpp>
#include <stan/model/log_prob_grad.hpp>
#include <stan/model/model_base.hpp>
#include <stan/services/sample/hmc_nuts_diag_e_adapt.hpp>

#include "json_var_context.hpp"

#include <cstdio>
#include <exception>
#include <iostream>
#include <random>
#include <string>
#include <vector>

stan::model::model_base& new_model(stan::io::var_context& data_context, unsigned int seed, std::ostream* msg_stream);

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
  stan::model::model_base& model = new_model(*context, 0, &std::cerr);
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
  std::fprintf(stderr, "compile_stan_separate: %s\n", e.what());
  return 1;
}
