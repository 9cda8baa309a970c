// bench/stan/compile_stan_driver.cpp — the model-independent half of the Stan program of the
// `compile_separate` rows, built once and linked with each model, as CmdStan builds its main.o:
// stan_program.hpp's run (Stan's NUTS service among it) instantiated for stan::model::model_base,
// the generated model's virtual interface, and the data reader. The model's own translation unit
// is the file stanc generates, compiled alone with Stan's precompiled model_header.hpp; its
// new_model() (stanc's factory) is all this file needs of it.
//   usage: compile_stan_separate DATA.json
#include <stan/model/model_base.hpp>

#include "json_var_context.hpp"
#include "stan_program.hpp"

#include <cstdio>
#include <exception>
#include <iostream>

stan::model::model_base& new_model(stan::io::var_context& data_context, unsigned int seed, std::ostream* msg_stream);

int main(int argc, char** argv) try {
  if (argc != 2) return 2;
  const auto context = stan_bench::read_json_var_context(argv[1]);
  stan_bench::run_program(new_model(*context, 0, &std::cerr));
} catch (const std::exception& e) {
  std::fprintf(stderr, "compile_stan_separate: %s\n", e.what());
  return 1;
}
