// tyche/samplers/smc/run.hpp — run_smc, run_pimh, run_pg: forward inference over a program.
//
//   auto r = tyche::smc::run_smc(program, {.particles = 1000, .seed = 1});
//   r.log_evidence; r.mean("mu"); std::cout << summary(r);
//
// The engine follows from the program unless config::engine names one:
//   a stepwise program (tyche::smc::stepwise)  →  in-process engine (or fork, if asked);
//   a plain callable `void()` that calls observe/predict  →  fork engine.
#pragma once
#include <tyche/concepts.hpp>
#include <tyche/samplers/smc/config.hpp>
#include <tyche/samplers/smc/detail/collector.hpp>
#include <tyche/samplers/smc/fork.hpp>
#include <tyche/samplers/smc/in_process.hpp>
#include <tyche/samplers/smc/program.hpp>
#include <tyche/samplers/smc/result.hpp>

#include <stdexcept>
#include <string>
#include <type_traits>

namespace tyche::smc {

namespace detail {

template <class Program>
result run_program(const Program& program, algorithm method, const config& cfg, const char* function) {
  check_config(cfg, function);
  if constexpr (is_stepwise_program<Program>::value) {
    if (cfg.engine == engine_kind::fork) {
#if TYCHE_SMC_FORK_ENGINE
      const auto as_callable = [&program] {
        typename Program::state_type s = program.initial;
        for (std::size_t n = 0; n < program.observations; ++n) observe(program.step(s, n, rng()));
        predictions p;
        program.predict(s, p);
        for (const auto& [name, value] : p.entries()) predict(name, value);
      };
      return run_fork(as_callable, method, cfg, function);
#else
      throw std::invalid_argument(std::string(function) +
                                  ": engine_kind::fork, but this build has no fork engine (it needs Linux); "
                                  "engine_kind::in_process or automatic runs stepwise programs");
#endif
    }
    return run_in_process(program, method, cfg);
  } else {
#if TYCHE_SMC_FORK_ENGINE
    if (cfg.engine == engine_kind::in_process)
      throw std::invalid_argument(std::string(function) +
                                  ": the in-process engine runs stepwise programs (tyche::smc::stepwise); "
                                  "a plain callable runs on the fork engine (engine_kind::fork or automatic)");
    return run_fork(program, method, cfg, function);
#else
    static_assert(sizeof(Program) == 0,
                  "tyche::smc::run_smc/run_pimh/run_pg(program, config): a plain callable program runs on "
                  "the fork engine, which this build does not have (it needs Linux: fork, POSIX semaphores "
                  "and shared memory, prctl); write the program as tyche::smc::stepwise(...), which runs "
                  "on the in-process engine");
#endif
  }
}

template <class Program>
result run(const Program& program, algorithm method, const config& cfg, const char* function) {
  if constexpr (!smc_program<Program>) {
    static_assert(smc_program<Program>,
                  "tyche::smc::run_smc/run_pimh/run_pg(program, config) requires 'program' to be a "
                  "tyche::smc::stepwise(...) program or a callable taking no arguments that calls "
                  "tyche::smc::observe and tyche::smc::predict");
    return {};
  } else {
    return run_program(program, method, cfg, function);
  }
}

}  // namespace detail

/// Sequential Monte Carlo: config::sweeps independent particle filters.
template <class Program>
result run_smc(const Program& program, const config& cfg = {}) {
  return detail::run(program, algorithm::smc, cfg, "tyche::smc::run_smc");
}

/// Particle independent Metropolis–Hastings: config::sweeps iterations.
template <class Program>
result run_pimh(const Program& program, const config& cfg = {}) {
  return detail::run(program, algorithm::pimh, cfg, "tyche::smc::run_pimh");
}

/// Particle Gibbs (conditional SMC with a retained trace): config::sweeps iterations.
template <class Program>
result run_pg(const Program& program, const config& cfg = {}) {
  return detail::run(program, algorithm::pg, cfg, "tyche::smc::run_pg");
}

}  // namespace tyche::smc
