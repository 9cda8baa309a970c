// tyche/samplers/smc.hpp — forward inference over C++ programs: observe/predict, SMC,
// particle independent Metropolis–Hastings, particle Gibbs and particle marginal
// Metropolis–Hastings, on a fork-based engine
// (Paige & Wood 2014) and an in-process engine. See docs/smc.md.
#pragma once
#include <tyche/samplers/smc/config.hpp>
#include <tyche/samplers/smc/correlated.hpp>
#include <tyche/samplers/smc/fork.hpp>
#include <tyche/samplers/smc/in_process.hpp>
#include <tyche/samplers/smc/mem.hpp>
#include <tyche/samplers/smc/pmmh.hpp>
#include <tyche/samplers/smc/program.hpp>
#include <tyche/samplers/smc/resampling.hpp>
#include <tyche/samplers/smc/result.hpp>
#include <tyche/samplers/smc/run.hpp>
