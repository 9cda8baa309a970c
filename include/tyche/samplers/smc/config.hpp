// tyche/samplers/smc/config.hpp — the settings of a forward-inference run.
//
//   auto r = tyche::smc::run_smc(program, {.particles = 1000, .seed = 1});
//
// One config serves run_smc, run_pimh and run_pg and both engines; fields an engine or
// algorithm does not use are ignored (threads by the fork engine; timeout_seconds,
// predict_bytes and max_processes by the in-process engine).
#pragma once
#include <tyche/samplers/smc/resampling.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>

namespace tyche::smc {

struct particle_set;

/// Which engine runs the program.
enum class engine_kind {
  automatic,   ///< in_process for a stepwise program, fork for a plain callable
  in_process,  ///< particles are values; resampling copies them; threads
  fork,        ///< particles are processes; resampling forks them (Paige & Wood 2014)
};

/// The forward-inference algorithm.
enum class algorithm {
  smc,   ///< independent sequential Monte Carlo sweeps
  pimh,  ///< particle independent Metropolis–Hastings (Andrieu, Doucet & Holenstein 2010)
  pg,    ///< particle Gibbs: conditional SMC around a retained trace (ibid.)
};

struct config {
  /// L, the number of particles (at least 1).
  std::size_t particles = 100;
  /// SMC: independent sweeps; PIMH and PG: iterations of the chain (the first is plain SMC).
  std::size_t sweeps = 1;
  /// Every random number of the run is a function of (seed, sweep, particle, observe).
  std::uint64_t seed = 0;
  /// SMC and PIMH resample after an observe when ESS < ess_threshold · L (the paper's
  /// τ = L/2 by default); PG resamples after every observe but the last.
  double ess_threshold = 0.5;
  /// The scheme of SMC, PIMH and PG's first sweep; PG's conditional sweeps draw the free
  /// particles' ancestors multinomially (Chopin & Singh 2015).
  resampling_scheme resampling = resampling_scheme::systematic;
  engine_kind engine = engine_kind::automatic;
  /// In-process engine: threads that step particles, 0 for one per CPU this process may run on
  /// (results do not depend on it).
  std::size_t threads = 1;
  /// In-process engine: a particle whose step throws std::domain_error (a value outside a
  /// density's support, e.g. smc::normal_lpdf with sd = 0 or ∞) gets weight 0 from that observe
  /// on and is not stepped again, as if the step had returned −inf — Stan's reject, per particle:
  /// that path's likelihood counts as 0. Counted in result::domain_errors. Off (the default),
  /// the exception ends the run. run_pmmh turns it on. The fork engine ignores it.
  bool domain_error_zero_weight = false;
  /// Stop starting sweeps after this many seconds of wall-clock time (at least one runs).
  double max_seconds = std::numeric_limits<double>::infinity();
  /// Keep every sweep's particle set in the result (turn off for long runs that only use
  /// on_sweep).
  bool keep_sweeps = true;
  /// Called after every sweep with the particle set the sweep outputs (for PIMH, the set the
  /// chain holds after the accept/reject step), in the calling process and thread.
  std::function<void(const particle_set&)> on_sweep{};
  /// Fork engine: the longest wait, in seconds, for a particle to reach the next observe
  /// (or the end of the program) before the run is abandoned with an error.
  double timeout_seconds = 60;
  /// Fork engine: bytes of shared memory per particle for its predictions.
  std::size_t predict_bytes = std::size_t{1} << 14;
  /// Fork engine: the most particle and keeper processes alive at once (particle Gibbs keeps
  /// one process per observe of every lineage that may be retained).
  std::size_t max_processes = 4096;
};

}  // namespace tyche::smc
