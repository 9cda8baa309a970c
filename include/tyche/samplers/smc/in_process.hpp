// tyche/samplers/smc/in_process.hpp — the in-process engine: SMC, PIMH and particle Gibbs
// over a stepwise program (tyche/samplers/smc/program.hpp). Particles are values of the
// program's state; resampling copies them; the step of every particle runs on
// config::threads threads.
//
// One sweep, for observe n = 0 .. N−1:
//   every particle l: log g_l = step(state_l, n, rng(seed, sweep, l, n))   (parallel)
//   log w_l += log g_l;  log Ẑ += log Σ_l w_l − log Σ_l w_l(before)        (serial)
//   if PG or ESS < τ: ancestors a = resample(w), state_i = state_{a_i}, w = 1
// (after the last observe too, as in the paper's Algorithm 1: the fork engine cannot know
// which observe is the last, and both engines follow the same rule)
// then every particle predicts from its final state; the set is weighted by w.
//
//   SMC   sweeps are independent.
//   PIMH  sweep m is a proposal, accepted with probability min(1, Ẑ_m / Ẑ_current)
//         (Andrieu, Doucet & Holenstein 2010, §2.4.1); the output is the current set.
//   PG    sweep 0 is SMC; sweep m > 0 is conditional SMC: slot 0 holds the retained trace
//         (its states and log-likelihoods at every observe), slots 1..L−1 draw L − 1
//         ancestors among all L, independently (multinomial; ibid. §2.4.3). After each sweep a particle b ~ w is drawn
//         and its lineage, traced back through the ancestors, becomes the retained trace.
//
// Random numbers are keyed by (seed, sweep, particle, observe), never by thread, so results
// do not depend on config::threads. An exception thrown by step or predict propagates (the one
// from the lowest-numbered chunk of particles when several throw); one of the <stdexcept> types
// themselves with where it happened in front of its message (detail::rethrow_with).
#pragma once
#include <tyche/samplers/smc/config.hpp>
#include <tyche/samplers/smc/detail/collector.hpp>
#include <tyche/samplers/smc/detail/worker_pool.hpp>
#include <tyche/samplers/smc/program.hpp>
#include <tyche/samplers/smc/resampling.hpp>
#include <tyche/samplers/smc/result.hpp>

#include <chrono>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tyche::smc::detail {

/// shared: a pool of cfg.threads threads to step the particles with (run_pmmh's, kept across its
/// sweeps); null: the run makes its own.
template <class Program>
result run_in_process(const Program& program, algorithm method, const config& cfg, worker_pool* shared = nullptr) {
  using state = typename Program::state_type;
  const auto start = std::chrono::steady_clock::now();
  const std::size_t L = cfg.particles, N = program.observations;
  const bool pg = method == algorithm::pg;

  result r;
  collector out(r, cfg, method);
  std::optional<worker_pool> own;
  worker_pool& pool = shared != nullptr ? *shared : own.emplace(cfg.threads);

  std::vector<state> states(L, program.initial), next(L, program.initial);
  std::vector<double> log_w(L), increment(L);
  std::vector<predictions> predicted(L);
  // config::domain_error_zero_weight: each particle's domain_error of this observe, written by
  // the thread that steps it and read in particle order after.
  const bool zero_on_domain_error = cfg.domain_error_zero_weight;
  particle_domain_errors domain(L, zero_on_domain_error);

  // Particle Gibbs: every observe's states, log-likelihoods and ancestors, and the retained trace.
  std::vector<std::vector<state>> history(pg ? N : 0);
  std::vector<std::vector<double>> history_increment(pg ? N : 0);
  std::vector<std::vector<std::size_t>> history_ancestor(pg ? N : 0);
  std::vector<state> retained;
  std::vector<double> retained_increment;
  state retained_final = program.initial;

  // PIMH: the set the chain holds.
  particle_set current;
  double current_log_evidence = 0;

  for (std::size_t m = 0; m < cfg.sweeps; ++m) {
    if (m > 0 && seconds_since(start) >= cfg.max_seconds) break;
    const bool conditional = pg && m > 0;
    const std::size_t first = conditional ? 1 : 0;
    for (auto& s : states) s = program.initial;
    std::fill(log_w.begin(), log_w.end(), 0.0);
    double log_evidence = 0, log_total = std::log(static_cast<double>(L));  // log Σ w
    double final_ess = static_cast<double>(L);  // sweep_record::final_ess

    for (std::size_t n = 0; n < N; ++n) {
      pool.run(L, [&](std::size_t begin, std::size_t end) {
        // The try block is around the loop, not in it (a handler per particle cost 5 % of a
        // cheap step's sweep: bench/pmmh.cpp); after a domain error the loop goes on from the
        // next particle.
        std::size_t l = std::max(begin, first);
        while (l < end) {
          try {
            for (; l < end; ++l) {
              if (zero_on_domain_error && log_w[l] == -std::numeric_limits<double>::infinity()) {
                increment[l] = -std::numeric_limits<double>::infinity();  // dead: its state may be anything
                continue;
              }
              counter_rng g = particle_rng(cfg.seed, m, l, n);
              increment[l] = program.step(states[l], n, g);
            }
          } catch (const std::domain_error& e) {
            if (!zero_on_domain_error)  // (a particle outside where its model is defined: say what else can be done)
              throw std::domain_error("tyche::smc: sweep " + std::to_string(m) + ", particle " + std::to_string(l) +
                                      ", observe " + std::to_string(n) + " (0-based): " + e.what() +
                                      " (with config::domain_error_zero_weight = true such a particle gets weight 0 "
                                      "instead and the sweep goes on; run_pmmh turns it on)");
            increment[l] = -std::numeric_limits<double>::infinity();
            domain.record(l, e.what());
            ++l;
          } catch (...) {
            rethrow_from_step("sweep " + std::to_string(m) + ", ", l, n);
          }
        }
      });
      if (zero_on_domain_error) domain.gather(r, "sweep " + std::to_string(m) + ", ", n);
      if (conditional) {
        states[0] = retained[n];
        increment[0] = retained_increment[n];
      }
      check_increments(increment, n);
      for (std::size_t l = 0; l < L; ++l) log_w[l] += increment[l];
      const weight_summary after = summarise_weights(log_w);
      if (after.log_sum == -std::numeric_limits<double>::infinity()) {
        all_zero_error e = all_zero(n);
        e.domain_errors = r.domain_errors;
        e.first_domain_error = r.first_domain_error;
        throw e;
      }
      log_evidence += after.log_sum - log_total;
      log_total = after.log_sum;
      final_ess = after.ess;
      if (pg) {
        history[n] = states;
        history_increment[n] = increment;
      }
      const bool resample_now = pg || after.ess < cfg.ess_threshold * static_cast<double>(L);
      if (resample_now) {
        counter_rng g = engine_rng(cfg.seed, m, n);
        std::vector<std::size_t> ancestor;
        if (conditional) {
          ancestor.push_back(0);
          // The free particles' ancestors are drawn independently (multinomial), whatever
          // config::resampling says: conditional SMC keeps the posterior invariant with
          // multinomial resampling; systematic and residual resampling would need their
          // conditional variants (Chopin & Singh 2015), and plain systematic resampling of the
          // L - 1 free particles biased the CRP posterior (KL stalled at 2e-4).
          const auto rest = resample(log_w, L - 1, resampling_scheme::multinomial, g);
          ancestor.insert(ancestor.end(), rest.begin(), rest.end());
        } else {
          ancestor = resample(log_w, L, cfg.resampling, g);
        }
        for (std::size_t i = 0; i < L; ++i) next[i] = states[ancestor[i]];
        std::swap(states, next);
        std::fill(log_w.begin(), log_w.end(), 0.0);
        log_total = std::log(static_cast<double>(L));
        if (pg) history_ancestor[n] = std::move(ancestor);
      }
    }
    if (conditional) states[0] = retained_final;

    for (std::size_t l = 0; l < L; ++l) {
      predicted[l].clear();
      // A particle whose step threw std::domain_error (zero_on_domain_error) has weight 0 and a
      // state that may be anything: it predicts nothing (NaN in the set), so that a predict
      // that cannot read such a state does not end the run.
      if (zero_on_domain_error && log_w[l] == -std::numeric_limits<double>::infinity()) continue;
      try {
        program.predict(states[l], predicted[l]);
      } catch (...) {
        rethrow_from_predict("sweep " + std::to_string(m) + ", ", l);
      }
    }
    const sweep_record record{m, log_evidence, true, seconds_since(start), final_ess};
    particle_set set = out.make_set(record, normalised_weights(log_w), L,
                                    [&](std::size_t p) -> const auto& { return predicted[p].entries(); });

    if (method == algorithm::pimh) {
      bool accept = m == 0;
      if (!accept) {
        counter_rng g = engine_rng(cfg.seed, m, final_step);
        accept = std::log(g.uniform01()) < log_evidence - current_log_evidence;
      }
      if (accept) {
        current = std::move(set);
        current_log_evidence = log_evidence;
      }
      const double kept_ess = current.record.final_ess;  // the set the chain holds: its own
      current.record = record;
      current.record.accepted = accept;
      current.record.final_ess = kept_ess;
      out.emit(current, log_evidence);
    } else {
      if (pg) {
        counter_rng g = engine_rng(cfg.seed, m, final_step);
        // b indexes the particles after the last resampling; its parent before resampling at
        // observe n is history_ancestor[n][b].
        std::size_t b = sample_discrete(g, set.weights);
        retained.resize(N, program.initial);
        retained_increment.resize(N);
        retained_final = states[b];
        for (std::size_t n = N; n-- > 0;) {
          b = history_ancestor[n][b];
          retained[n] = history[n][b];
          retained_increment[n] = history_increment[n][b];
        }
      }
      out.emit(set, log_evidence);
    }
  }
  out.finish(seconds_since(start));
  return r;
}

}  // namespace tyche::smc::detail
