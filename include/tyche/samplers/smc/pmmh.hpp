// tyche/samplers/smc/pmmh.hpp — particle marginal Metropolis–Hastings: static parameters θ of a
// program whose likelihood only a particle filter can estimate (a state-space model).
//
//   auto make = [&](std::span<const double> theta) { return stepwise(...a program for θ...); };
//   auto log_prior = [](std::span<const double> theta) { return ...; };   // −∞ outside the support
//   auto r = tyche::smc::run_pmmh(make, log_prior, {0.5, 0.0}, {.particles = 200, .seed = 1});
//   std::cout << summary(r);
//
// Each iteration proposes θ' = θ + λ·L·z (z standard normal, L L' the proposal covariance),
// runs one SMC sweep of make(θ') (run_smc, either engine) for its likelihood estimate Ẑ(θ'), and
// accepts with probability min(1, Ẑ(θ') p(θ') / (Ẑ(θ) p(θ))), keeping the current Ẑ(θ) until the
// next acceptance. Because Ẑ is unbiased, the chain's stationary distribution is the exact
// posterior p(θ | y) (Andrieu, Doucet & Holenstein 2010, JRSS B 72, §2.4 and Theorem 4); with
// each accepted sweep one particle is drawn from the final weights and its predictions kept, so
// the predicted values are draws from p(x | y) too.
//
// Warm-up (the first `warmup` iterations of each chain, not kept) adapts the proposal: the
// covariance of the chain's draws so far (Haario, Saksman & Tamminen 2001), from 2·d + 10
// iterations on and once the chain has moved max(d + 1, 10) times, with λ moved by a
// Robbins–Monro step towards `target_acceptance` (Andrieu & Thoms 2008, Algorithm 4) and started
// again from 1 when the chain's covariance first replaces the starting proposal. The proposal is
// fixed for the kept iterations.
//
// A particle whose step throws std::domain_error (a value outside a density's support) gets
// weight 0 (config::domain_error_zero_weight, in-process engine): counted in domain_errors.
//
// The particle count decides how well the chain mixes: with a noisy Ẑ the chain sticks where an
// estimate happened to be high. Doucet, Pitt, Deligiannidis & Kohn (2015, Biometrika 102) find
// the best trade-off of cost and mixing near sd(log Ẑ) ≈ 1.2–1.5 at the posterior's centre;
// Sherlock, Thiery, Roberts & Rosenthal (2015, Ann. Statist. 43) near 1.8 with an acceptance
// rate of about 7 % for a random walk. After the chains, run_pmmh estimates sd(log Ẑ) at the
// posterior mean from `noise_runs` sweeps, and summary() (tyche/diagnostics/pmmh_summary.hpp,
// with R̂ and ESS) warns when it is above 2 (more particles) or below 0.5 (fewer would do).
//
// Correlated PMMH (pmmh_config::correlation = ρ > 0; Deligiannidis, Doucet & Pitt 2018): the
// chain's state also holds the standard normals U of its current estimate, the proposal moves
// them to ρU + √(1 − ρ²)ε, and the sweep is a smooth function of U (samplers/smc/correlated.hpp),
// so log Ẑ(θ') − log Ẑ(θ) is far less noisy than with fresh numbers and fewer particles do;
// summary() then judges the noise of that difference (pmmh_result::log_likelihood_ratio_sd).
//
// Everything random is a function of `seed`: chain c's start, proposals and acceptances draw from
// counter_rng(seed, c); the sweep of its iteration i has a seed of its own, a hash of (seed, c, i),
// and the particle kept from it a uniform from another hash of that seed. So results depend
// neither on `chain_threads` (chains run at once, on threads of their own: the in-process engine)
// nor on `threads` (the in-process engine's threads within a sweep), and the θ chain does not
// depend on what the program predicts.
#pragma once
#include <tyche/random/philox.hpp>
#include <tyche/samplers/smc/config.hpp>
#include <tyche/samplers/smc/correlated.hpp>
#include <tyche/samplers/smc/detail/collector.hpp>
#include <tyche/samplers/smc/result.hpp>
#include <tyche/samplers/nuts/cpus.hpp>
#include <tyche/samplers/smc/detail/worker_pool.hpp>
#include <tyche/samplers/smc/program.hpp>
#include <tyche/samplers/smc/run.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

namespace tyche::smc {

struct pmmh_config {
  /// Particles of each sweep (one particle-filter likelihood estimate per iteration).
  std::size_t particles = 100;
  /// Chains.
  std::size_t chains = 4;
  /// Chains run at once, on threads of their own (0: one per chain, up to the CPUs this process
  /// may use). The in-process engine only: the fork engine runs them one after another (0 or 1
  /// there). With more than one, `make`, `log_prior` and the programs `make` returns (their step
  /// and predict, and whatever they capture by reference) run on several threads at once, so
  /// they must not modify shared state; and chains other than the first run on std::threads,
  /// whose stacks are the platform's default (8 MiB on Linux with glibc, less elsewhere).
  /// Results do not depend on it.
  std::size_t chain_threads = 0;
  /// Iterations of each chain that adapt the proposal and are not kept.
  std::size_t warmup = 1000;
  /// Iterations of each chain kept.
  std::size_t iterations = 1000;
  std::uint64_t seed = 0;
  /// The starting proposal: independent normal steps with these standard deviations (one per
  /// parameter; empty: 0.1 for each).
  std::vector<double> proposal_sd{};
  /// Whether warm-up adapts the proposal's covariance and scale (otherwise proposal_sd is used
  /// throughout).
  bool adapt = true;
  /// The acceptance rate warm-up steers the proposal's scale towards.
  double target_acceptance = 0.15;
  /// Each chain starts at θ₀ plus independent normal offsets of this standard deviation (0: all
  /// chains start at θ₀).
  double init_sd = 0;
  /// Sweeps at the posterior mean after the chains, for sd(log Ẑ) (0: not measured).
  std::size_t noise_runs = 20;
  /// Names of the parameters, for the summary (empty: theta[1], theta[2], …).
  std::vector<std::string> parameter_names{};
  /// Passed to every sweep (config of run_smc).
  double ess_threshold = 0.5;
  resampling_scheme resampling = resampling_scheme::systematic;
  engine_kind engine = engine_kind::automatic;
  /// Threads within each sweep (the in-process engine's; run_smc's `threads`): chain_threads ×
  /// threads threads in all.
  std::size_t threads = 1;
  /// Correlated pseudo-marginal PMMH (Deligiannidis, Doucet & Pitt 2018): ρ in [0, 1). With
  /// ρ > 0 each chain keeps the standard normals U its current likelihood estimate used and
  /// proposes U' = ρU + √(1 − ρ²)ε with θ', so that the errors of the two estimates largely
  /// cancel in the acceptance ratio and far fewer particles mix as well
  /// (samplers/smc/correlated.hpp). Needs a stepwise program on the in-process engine whose
  /// step takes `auto& g` (it then also takes a correlated_rng) and whose particles have an
  /// order (a state that is a number, or stepwise(initial, n, step, predict, key)); each sweep
  /// then resamples after every observe, systematically in key order (ess_threshold and
  /// resampling are not used). 0: every sweep's random numbers are fresh.
  double correlation = 0;
  /// Correlated PMMH: the normals stored per particle and observe — the draws one step makes
  /// (a uniform counts as one). Draws beyond them come fresh each sweep (exact, but less
  /// correlated) and are counted in pmmh_result::randoms_beyond.
  std::size_t randoms_per_step = 1;
};

/// The chains of a PMMH run: kept draws of θ and of the predicted names, chain after chain.
struct pmmh_result {
  std::size_t dim = 0, chains = 0, iterations = 0, particles = 0;
  /// The chains that ran at once (pmmh_config::chain_threads, resolved).
  std::size_t chain_threads = 1;
  std::vector<std::string> parameter_names;
  /// θ: draws[(c · iterations + i) · dim + k].
  std::vector<double> draws;
  /// log Ẑ(θ) and log p(θ) of each kept draw (c · iterations + i).
  std::vector<double> log_likelihood, log_prior;
  /// Predicted names and, for each kept draw, the predictions of one particle of the sweep that
  /// last moved the chain (drawn by its final weights): predicted[(c · iterations + i) · names + j],
  /// NaN where that particle did not predict a name.
  std::vector<std::string> names;
  std::vector<double> predicted;
  /// Each chain's acceptance rate over its kept iterations.
  std::vector<double> acceptance;
  /// Particle steps that threw std::domain_error (a value outside a density's support, e.g.
  /// smc::normal_lpdf with sd = ∞), over the chains' sweeps: each gave its particle weight 0 (that
  /// path's likelihood counts as 0; config::domain_error_zero_weight, in-process engine). The
  /// first one's chain, iteration, point, particle, observe and message.
  std::size_t domain_errors = 0;
  std::string first_domain_error;
  /// sd(log Ẑ) over noise_runs sweeps at the posterior mean of θ (NaN if not measured).
  double log_likelihood_sd = std::numeric_limits<double>::quiet_NaN();
  /// The proposal's covariance after warm-up (dim × dim, row major), chain after chain.
  std::vector<double> proposal_covariance;
  /// pmmh_config::correlation.
  double correlation = 0;
  /// Correlated PMMH: the sd of log Ẑ(θ̄, U') − log Ẑ(θ̄, U) over noise_runs pairs at the
  /// posterior mean θ̄, U ~ N(0, I), U' = ρU + √(1 − ρ²)ε: the noise of the acceptance ratio
  /// where θ' ≈ θ, which decides how well the chain mixes (NaN if not measured or ρ = 0).
  double log_likelihood_ratio_sd = std::numeric_limits<double>::quiet_NaN();
  /// Correlated PMMH: the draws steps made beyond randoms_per_step (from fresh streams), over
  /// every sweep of the chains.
  std::size_t randoms_beyond = 0;
  double seconds = 0;

  /// Draws of parameter k (0-based) or of a predicted name, chain after chain (chains ×
  /// iterations values: the layout tyche's convergence diagnostics take).
  [[nodiscard]] std::vector<double> samples(std::size_t k) const {
    if (k >= dim)
      throw std::out_of_range("tyche::smc::pmmh_result::samples: parameter " + std::to_string(k) + " of " +
                              std::to_string(dim));
    std::vector<double> out(chains * iterations);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = draws[i * dim + k];
    return out;
  }
  [[nodiscard]] std::vector<double> samples(std::string_view name) const {
    for (std::size_t k = 0; k < parameter_names.size(); ++k)
      if (parameter_names[k] == name) return samples(k);
    for (std::size_t j = 0; j < names.size(); ++j)
      if (names[j] == name) {
        std::vector<double> out(chains * iterations);
        for (std::size_t i = 0; i < out.size(); ++i) out[i] = predicted[i * names.size() + j];
        return out;
      }
    throw std::out_of_range("tyche::smc::pmmh_result: no parameter or predicted name '" + std::string(name) + "'");
  }
  [[nodiscard]] double mean(std::string_view name) const {
    const auto v = samples(name);
    double s = 0;
    for (double x : v) s += x;
    return s / static_cast<double>(v.size());
  }
};

namespace detail {

/// The tag of correlated PMMH's normals: U and ε come from seeds pmmh_sweep_seed(sweep seed, tag, k).
inline constexpr std::uint64_t correlated_tag = 0x636f7272ULL;  // "corr"

/// The seed of chain c's sweep at iteration i (warm-up included): splitmix64 of the three.
inline std::uint64_t pmmh_sweep_seed(std::uint64_t seed, std::uint64_t chain, std::uint64_t iteration) {
  auto mix = [](std::uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  return mix(mix(mix(seed) ^ chain) ^ iteration);
}

/// The lower Cholesky factor of a symmetric d × d matrix (row major), or false if it is not
/// positive definite.
inline bool pmmh_cholesky(const std::vector<double>& a, std::size_t d, std::vector<double>& l) {
  l.assign(d * d, 0.0);
  for (std::size_t i = 0; i < d; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      double s = a[i * d + j];
      for (std::size_t k = 0; k < j; ++k) s -= l[i * d + k] * l[j * d + k];
      if (i == j) {
        if (!(s > 0)) return false;
        l[i * d + i] = std::sqrt(s);
      } else {
        l[i * d + j] = s / l[j * d + j];
      }
    }
  return true;
}

inline std::string pmmh_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

inline std::string pmmh_point(std::span<const double> theta) {
  std::string s = "(";
  char buf[32];
  for (std::size_t k = 0; k < theta.size(); ++k) {
    std::snprintf(buf, sizeof buf, "%s%.17g", k ? ", " : "", theta[k]);
    s += buf;
  }
  return s + ")";
}

/// θ as make and log_prior see it: a span of its d values, stored with NaN after them, so that
/// a program or prior that reads beyond θ (theta[2] where theta0 has 2 values) reads NaN — which
/// the run then reports, naming θ's size — and not memory past the end of a vector.
class padded_theta {
 public:
  static constexpr std::size_t padding = 16;
  explicit padded_theta(std::size_t d) : values_(d + padding, std::numeric_limits<double>::quiet_NaN()), d_(d) {}
  double& operator[](std::size_t k) { return values_[k]; }
  double operator[](std::size_t k) const { return values_[k]; }
  std::size_t size() const { return d_; }
  const double* begin() const { return values_.data(); }
  const double* end() const { return values_.data() + d_; }
  operator std::span<const double>() const { return {values_.data(), d_}; }

 private:
  std::vector<double> values_;
  std::size_t d_;
};

}  // namespace detail

/// Particle marginal Metropolis–Hastings: `make(θ)` (θ a std::span<const double>) returns the
/// program for parameters θ — a stepwise program or a plain callable, as run_smc takes —,
/// `log_prior(θ)` the log prior density (−∞ outside the support; any real θ may be proposed),
/// `theta0` the starting point.
template <class Make, class LogPrior>
pmmh_result run_pmmh(const Make& make, const LogPrior& log_prior, std::vector<double> theta0,
                     const pmmh_config& cfg = {}) {
  const char* f = "tyche::smc::run_pmmh";
  const std::size_t d = theta0.size();
  const auto fail = [f](const std::string& what) { return std::invalid_argument(std::string(f) + ": " + what); };
  if (d == 0) throw fail("theta0 is empty: give the starting point of the parameters");
  for (std::size_t k = 0; k < d; ++k)
    if (!std::isfinite(theta0[k]))
      throw fail("theta0[" + std::to_string(k) + "] = " + detail::pmmh_number(theta0[k]) + " is not finite");
  if (cfg.chains < 1) throw fail("chains must be at least 1");
  if (cfg.iterations < 1) throw fail("iterations must be at least 1");
  if (!cfg.proposal_sd.empty() && cfg.proposal_sd.size() != d)
    throw fail("proposal_sd has " + std::to_string(cfg.proposal_sd.size()) + " values for " + std::to_string(d) +
               " parameters");
  for (std::size_t k = 0; k < cfg.proposal_sd.size(); ++k)
    if (!(cfg.proposal_sd[k] > 0 && std::isfinite(cfg.proposal_sd[k])))
      throw fail("proposal_sd[" + std::to_string(k) + "] = " + detail::pmmh_number(cfg.proposal_sd[k]) +
                 " must be positive and finite");
  if (!cfg.parameter_names.empty() && cfg.parameter_names.size() != d)
    throw fail("parameter_names has " + std::to_string(cfg.parameter_names.size()) + " names for " +
               std::to_string(d) + " parameters");
  if (!(cfg.target_acceptance > 0 && cfg.target_acceptance < 1))
    throw fail("target_acceptance must lie in (0, 1) (got " + detail::pmmh_number(cfg.target_acceptance) + ")");
  if (!(cfg.init_sd >= 0 && std::isfinite(cfg.init_sd)))
    throw fail("init_sd must be finite and at least 0 (got " + detail::pmmh_number(cfg.init_sd) + ")");
  if (cfg.noise_runs == 1) throw fail("noise_runs must be 0 (not measured) or at least 2 (got 1)");
  if (!(cfg.correlation >= 0 && cfg.correlation < 1))
    throw fail("correlation must lie in [0, 1) (got " + detail::pmmh_number(cfg.correlation) + ")");
  const bool correlated = cfg.correlation > 0;
  if (correlated && cfg.randoms_per_step < 1)
    throw fail("randoms_per_step must be at least 1 with correlation > 0 (got 0)");
  for (std::size_t k = 0; k < cfg.parameter_names.size(); ++k)
    for (std::size_t q = 0; q < k; ++q)
      if (cfg.parameter_names[k] == cfg.parameter_names[q])
        throw fail("parameter_names[" + std::to_string(q) + "] and [" + std::to_string(k) + "] are both '" +
                   cfg.parameter_names[k] + "'");

  detail::padded_theta start(d);  // θ₀ as make sees it when the run needs a program before the chains
  for (std::size_t k = 0; k < d; ++k) start[k] = theta0[k];
  // Chains at once: the in-process engine's sweeps are independent values, so chains run on
  // threads of their own; the fork engine's (processes, signals, shared memory) stay on one.
  using program_type = std::remove_cvref_t<decltype(make(std::span<const double>(theta0)))>;
  const bool in_process = is_stepwise_program<program_type>::value && cfg.engine != engine_kind::fork;
  if (cfg.chain_threads > 1 && !in_process)
    throw fail("chain_threads = " + std::to_string(cfg.chain_threads) +
               ", but the fork engine runs chains one after another: set chain_threads to 0 or 1, or run a "
               "tyche::smc::stepwise(...) program on the in-process engine (engine automatic or in_process)");
  // Correlated PMMH: a stepwise program whose step takes a correlated_rng and whose particles
  // have an order; the observes of make(θ₀) fix U's size. (A step written with `auto& g` is
  // therefore compiled for a correlated_rng as well, even when correlation is 0: its body may
  // use g's normal, uniform01, exponential, next_u64, next_u32 and operator(), and the
  // smc::sample_* functions, but not a function typed tyche::counter_rng&.)
  constexpr bool can_correlate = [] {
    if constexpr (is_stepwise_program<program_type>::value)
      return detail::correlated_step<program_type> && detail::has_sort_key<program_type>;
    else
      return false;
  }();
  std::size_t observations = 0;
  if (correlated) {
    if (!in_process)
      throw fail("correlation > 0 needs a tyche::smc::stepwise(...) program on the in-process engine (engine "
                 "automatic or in_process): the fork engine's particles draw their numbers in other processes");
    if constexpr (is_stepwise_program<program_type>::value) {
      if constexpr (!detail::correlated_step<program_type>)
        throw fail("correlation > 0, but the program's step takes a tyche::counter_rng&: write it as "
                   "[](State& s, std::size_t n, auto& g) { ... }, so that it also takes the correlated sweep's "
                   "tyche::smc::correlated_rng");
      else if constexpr (!detail::has_sort_key<program_type>)
        throw fail("correlation > 0, but the particles' state is not a number, so they cannot be sorted before "
                   "resampling: give a key, tyche::smc::stepwise(initial, n, step, predict, key) with "
                   "key(const State&) -> double (e.g. the state's first coordinate)");
      else
        observations = make(std::span<const double>(start)).observations;
    }
  }
  const std::size_t chain_threads =
      !in_process ? 1
                  : std::min<std::size_t>(cfg.chains, cfg.chain_threads > 0
                                                          ? cfg.chain_threads
                                                          : std::size_t{tyche::samplers::detail::available_cpus()});

  const auto started = std::chrono::steady_clock::now();
  pmmh_result out;
  out.dim = d;
  out.chains = cfg.chains;
  out.iterations = cfg.iterations;
  out.particles = cfg.particles;
  out.chain_threads = chain_threads;
  out.correlation = cfg.correlation;
  out.parameter_names = cfg.parameter_names;
  if (out.parameter_names.empty())
    for (std::size_t k = 0; k < d; ++k) out.parameter_names.push_back("theta[" + std::to_string(k + 1) + "]");

  config sc;
  sc.particles = cfg.particles;
  sc.sweeps = 1;
  sc.ess_threshold = cfg.ess_threshold;
  sc.resampling = cfg.resampling;
  sc.engine = cfg.engine;
  // threads = 0: the CPUs left to each chain of the chain_threads running at once (at least 1),
  // not one per CPU each — chains × CPUs threads would contend for the CPUs.
  sc.threads = cfg.threads > 0 ? cfg.threads
                               : std::max<std::size_t>(1, tyche::samplers::detail::available_cpus() / chain_threads);
  sc.domain_error_zero_weight = true;  // a particle's std::domain_error: its weight 0 (in-process engine)
  detail::check_config(sc, f);
  // log Ẑ of a sweep, −∞ where every particle's weight went to 0 (the engines report that as an
  // error, detail::all_zero; here it is an estimate of 0, and the proposal is rejected). A
  // particle whose step throws std::domain_error gets weight 0 (config::domain_error_zero_weight,
  // in-process engine): counted in *domain, whose first message is kept. Any other error of the
  // sweep (the program's own, a NaN weight) is passed on with where it happened.
  struct domain_count {
    std::size_t count = 0;
    std::string first;
  };
  // u: correlated PMMH's normals U (null: a sweep of run_smc, its numbers fresh); *beyond counts
  // the draws beyond them.
  // pool: the chain's threads for the sweep's particles (config::threads > 1, in-process engine),
  // kept from sweep to sweep (null: the sweep makes its own).
  // For errors where a NaN may come from reading θ beyond its d values (padded_theta).
  const std::string beyond_theta = " (theta has " + std::to_string(d) + " values, theta[0] ... theta[" +
                                   std::to_string(d - 1) + "], as theta0 does: a make or log_prior that reads "
                                   "beyond them reads nan)";
  const auto log_z = [&](std::span<const double> theta, std::uint64_t seed, result& r, const std::string& where,
                         domain_count* domain, const double* u, std::size_t* beyond, detail::worker_pool* pool) {
    try {
      config one = sc;
      one.seed = seed;
      if (u == nullptr) {
        if constexpr (is_stepwise_program<program_type>::value) {
          if (in_process)
            r = detail::run_in_process(make(theta), algorithm::smc, one, pool);
          else
            r = run_smc(make(theta), one);
        } else {
          r = run_smc(make(theta), one);
        }
      } else if constexpr (can_correlate) {
        const auto program = make(theta);
        if (program.observations != observations)
          throw std::invalid_argument("the program has " + std::to_string(program.observations) +
                                      " observes, make(theta0)'s had " + std::to_string(observations) +
                                      " (correlated PMMH keeps random numbers for a fixed count)");
        r = detail::run_correlated_sweep(program, one, u, cfg.randoms_per_step, beyond, pool);
      }
    } catch (const detail::all_zero_error& e) {  // the in-process engine's, with its domain errors
      if (domain != nullptr && e.domain_errors > 0) {
        if (domain->count == 0) domain->first = where + ", at " + detail::pmmh_point(theta) + ", " + e.first_domain_error;
        domain->count += e.domain_errors;
      }
      return -std::numeric_limits<double>::infinity();
    } catch (const std::exception& e) {
      if (std::string_view(e.what()).find(detail::all_zero_words) != std::string_view::npos)
        return -std::numeric_limits<double>::infinity();
      const bool nan = std::string_view(e.what()).find("nan") != std::string_view::npos;
      throw std::runtime_error(std::string(f) + ": " + where + ", the sweep at " + detail::pmmh_point(theta) +
                               " failed: " + e.what() + (nan ? beyond_theta : std::string()));
    }
    if (domain != nullptr && r.domain_errors > 0) {
      if (domain->count == 0) domain->first = where + ", at " + detail::pmmh_point(theta) + ", " + r.first_domain_error;
      domain->count += r.domain_errors;
    }
    if (std::isnan(r.log_evidence) || r.log_evidence == std::numeric_limits<double>::infinity())
      throw std::runtime_error(std::string(f) + ": " + where + ": the likelihood estimate at " +
                               detail::pmmh_point(theta) + " is " + detail::pmmh_number(r.log_evidence) + " (log)");
    return r.log_evidence;
  };
  // A chain's pool for its sweeps' particles, made at its first sweep: none where one thread
  // steps them or the sweeps run on the fork engine.
  const auto particle_pool = [&](std::optional<detail::worker_pool>& p) -> detail::worker_pool* {
    if (!in_process || sc.threads == 1) return nullptr;
    if (!p) {
      try {
        p.emplace(sc.threads, chain_threads);
      } catch (const std::system_error& e) {  // a thread that could not be started
        throw std::runtime_error(std::string(f) + ": starting " + std::to_string(sc.threads) +
                                 " threads for a chain's particles (pmmh_config::threads = " +
                                 std::to_string(cfg.threads) + ") failed: " + e.what());
      }
    }
    return &*p;
  };
  const auto at_iteration = [](std::size_t c, std::size_t it) {
    return "chain " + std::to_string(c) + ", iteration " + std::to_string(it);
  };
  const auto prior_at = [&](std::span<const double> theta, const std::string& where) {
    const double lp = static_cast<double>(log_prior(theta));
    if (std::isnan(lp) || lp == std::numeric_limits<double>::infinity())
      throw std::runtime_error(std::string(f) + ": " + where + ": log_prior" + detail::pmmh_point(theta) + " = " +
                               detail::pmmh_number(lp) + "; it must be a number or -inf" + beyond_theta);
    return lp;
  };
  // The particle kept from an accepted sweep is chosen with a uniform of its own (from a hash of
  // the sweep's seed, not a stream the sweep's particles use), so the θ chain does not depend on
  // whether the program predicts anything.
  const auto pick_uniform = [](std::uint64_t sweep_seed) {
    return counter_rng(detail::pmmh_sweep_seed(sweep_seed, 0x7069636bULL, 0), 0).uniform01();
  };

  // One chain's output; merged in chain order after all have run.
  struct chain_output {
    std::vector<double> draws, log_likelihood, log_prior, proposal_covariance;
    std::vector<std::string> names;   // in the order the chain first saw them
    std::vector<double> predicted;    // kept draws × names.size()
    double acceptance = 0;
    domain_count domain;
    std::size_t beyond = 0;  // correlated PMMH: draws beyond U
  };
  std::vector<chain_output> chains(cfg.chains);
  std::atomic<std::size_t> first_failed{std::numeric_limits<std::size_t>::max()};

  const auto run_chain = [&](std::size_t c) {
    chain_output& co = chains[c];
    std::optional<detail::worker_pool> inner;
    co.draws.reserve(cfg.iterations * d);
    co.log_likelihood.reserve(cfg.iterations);
    co.log_prior.reserve(cfg.iterations);
    // One particle of a sweep's final set, drawn by its weights; its predictions in co.names'
    // order (a name seen for the first time becomes a new column, NaN for the draws before).
    std::vector<double> current_pred;
    const auto pick = [&](const result& r, double u) {
      current_pred.assign(co.names.size(), std::numeric_limits<double>::quiet_NaN());
      if (r.sets.empty() || r.names.empty()) return;
      const particle_set& s = r.sets.front();
      double acc = 0;
      std::size_t p = 0;
      for (; p + 1 < s.size(); ++p) {
        acc += s.weights[p];
        if (u < acc) break;
      }
      for (std::size_t q = 0; q < r.names.size(); ++q) {
        std::size_t j = 0;
        while (j < co.names.size() && co.names[j] != r.names[q]) ++j;
        if (j == co.names.size()) {
          for (const auto& name : out.parameter_names)
            if (name == r.names[q])
              throw std::invalid_argument(std::string(f) + ": the program predicts '" + name +
                                          "', which is also a parameter's name: rename one of them");
          co.names.push_back(r.names[q]);
          const std::size_t rows = co.log_likelihood.size(), old = co.names.size() - 1;
          std::vector<double> widened(rows * co.names.size(), std::numeric_limits<double>::quiet_NaN());
          for (std::size_t i = 0; i < rows; ++i)
            for (std::size_t m = 0; m < old; ++m) widened[i * co.names.size() + m] = co.predicted[i * old + m];
          co.predicted = std::move(widened);
          current_pred.push_back(std::numeric_limits<double>::quiet_NaN());
        }
        current_pred[j] = s.value(p, q);
      }
    };

    detail::padded_theta theta(d), proposal(d);
    std::vector<double> chol(d * d), cov(d * d), mean(d), z(d), sd0(d);
    counter_rng g(cfg.seed, c);
    // The start: θ₀, or θ₀ plus normal offsets, drawn again (up to 100 times) where the prior is 0.
    double lp = -std::numeric_limits<double>::infinity();
    for (int attempt = 0; attempt < 100 && lp == -std::numeric_limits<double>::infinity(); ++attempt) {
      for (std::size_t k = 0; k < d; ++k) theta[k] = theta0[k] + (cfg.init_sd > 0 ? cfg.init_sd * g.normal() : 0.0);
      lp = prior_at(theta, "chain " + std::to_string(c) + ", its start");
      if (cfg.init_sd == 0) break;
    }
    if (lp == -std::numeric_limits<double>::infinity())
      throw std::runtime_error(std::string(f) + ": chain " + std::to_string(c) + " starts at " +
                               detail::pmmh_point(theta) + ", where log_prior is -inf: start inside the support" +
                               (cfg.init_sd > 0 ? " (100 draws of theta0 + init_sd * z all were outside)" : ""));
    // The proposal: λ·chol, chol starting diagonal.
    for (std::size_t k = 0; k < d; ++k) sd0[k] = cfg.proposal_sd.empty() ? 0.1 : cfg.proposal_sd[k];
    for (std::size_t k = 0; k < d; ++k) chol[k * d + k] = sd0[k];
    double log_lambda = 0;
    bool from_chain = false;  // whether chol is the chain's covariance yet
    result r;
    const std::uint64_t seed0 = detail::pmmh_sweep_seed(cfg.seed, c, 0);
    // Correlated PMMH: U of the current estimate, and of the proposal. The normals come from a
    // hash of the sweep's seed (the start's U, then each proposal's ε), apart from the streams
    // the sweep itself uses.
    std::vector<double> U, U_new;
    if (correlated) {
      U.resize(detail::correlated_randoms(observations, cfg.particles, cfg.randoms_per_step));
      U_new.resize(U.size());
      counter_rng gu(detail::pmmh_sweep_seed(seed0, detail::correlated_tag, 0), 0);
      for (double& v : U) v = gu.normal();
    }
    double ll = log_z(theta, seed0, r, "chain " + std::to_string(c) + ", its start", &co.domain,
                      correlated ? U.data() : nullptr, &co.beyond, particle_pool(inner));
    if (!(ll > -std::numeric_limits<double>::infinity())) {
      // Where the particles' steps threw (std::domain_error: weight 0), the first one says why.
      std::string why;
      if (co.domain.count > 0) {
        why = "; the first of " + std::to_string(co.domain.count) + " domain errors: " + co.domain.first;
        if (why.find("nan") != std::string::npos) why += beyond_theta;
      }
      throw std::runtime_error(std::string(f) + ": chain " + std::to_string(c) + ": at the starting point " +
                               detail::pmmh_point(theta) + " every particle's weight went to 0 (the likelihood "
                               "estimate is 0): start elsewhere or use more particles" + why);
    }
    pick(r, pick_uniform(seed0));
    std::size_t accepted = 0, accepted_warm = 0;
    const std::size_t total = cfg.warmup + cfg.iterations;
    for (std::size_t it = 1; it <= total; ++it) {
      if (first_failed.load(std::memory_order_relaxed) < c) return;  // a lower chain failed: the run ends
      const bool warm = it <= cfg.warmup;
      const double lambda = std::exp(log_lambda);
      for (std::size_t k = 0; k < d; ++k) z[k] = g.normal();
      for (std::size_t k = 0; k < d; ++k) {
        double s = 0;
        for (std::size_t q = 0; q <= k; ++q) s += chol[k * d + q] * z[q];
        proposal[k] = theta[k] + lambda * s;
      }
      const double u = g.uniform01();  // drawn whether or not a sweep runs, so the stream stays aligned
      const double lp_new = prior_at(proposal, at_iteration(c, it));
      double alpha = 0;
      if (lp_new > -std::numeric_limits<double>::infinity()) {
        result rn;
        const std::uint64_t seed_it = detail::pmmh_sweep_seed(cfg.seed, c, it);
        if (correlated) {  // U' = ρU + √(1 − ρ²)ε (Crank–Nicolson: leaves N(0, I) invariant)
          counter_rng ge(detail::pmmh_sweep_seed(seed_it, detail::correlated_tag, 0), 0);
          const double rho = cfg.correlation, rest = std::sqrt(1 - rho * rho);
          for (std::size_t k = 0; k < U.size(); ++k) U_new[k] = rho * U[k] + rest * ge.normal();
        }
        const double ll_new = log_z(proposal, seed_it, rn, at_iteration(c, it), &co.domain,
                                    correlated ? U_new.data() : nullptr, &co.beyond, particle_pool(inner));
        const double log_ratio = (ll_new + lp_new) - (ll + lp);
        alpha = log_ratio >= 0 ? 1.0 : std::exp(log_ratio);
        if (u < alpha) {
          theta = proposal;
          lp = lp_new;
          ll = ll_new;
          pick(rn, pick_uniform(seed_it));
          if (correlated) U.swap(U_new);
          if (!warm) ++accepted;
          else ++accepted_warm;
        }
      }
      if (warm && cfg.adapt) {
        // Running mean and covariance of the chain (Welford), then the proposal's factor from
        // them once there are enough draws; λ by Robbins–Monro on the acceptance probability.
        const double n = static_cast<double>(it);
        for (std::size_t k = 0; k < d; ++k) z[k] = theta[k] - mean[k];
        for (std::size_t k = 0; k < d; ++k) mean[k] += z[k] / n;
        for (std::size_t k = 0; k < d; ++k)
          for (std::size_t q = 0; q < d; ++q) cov[k * d + q] += z[k] * (theta[q] - mean[q]);
        log_lambda += std::pow(n, -0.6) * (alpha - cfg.target_acceptance);
        // The chain's covariance replaces the starting proposal once the chain has moved often
        // enough for it to span every direction (a chain that stuck from the start has a
        // covariance near 0, which would freeze it); a small multiple of the starting proposal
        // keeps it positive definite.
        // λ was tuned to the starting proposal, the chain's covariance is scaled already
        // (2.38²/d): at the first switch λ starts again from 1. (Carried over, a λ grown because
        // proposal_sd was too small widened the new proposal too: 3–10 times the right sd in
        // tests/smc/pmmh_test.cpp, and log σ = 6 proposed in a stochastic-volatility model.)
        if (it >= 2 * d + 10 && it % 10 == 0 && accepted_warm >= std::max<std::size_t>(d + 1, 10)) {
          std::vector<double> a(d * d), l;
          const double scale = 2.38 * 2.38 / static_cast<double>(d);
          for (std::size_t k = 0; k < d * d; ++k) a[k] = scale * cov[k] / (n - 1);
          for (std::size_t k = 0; k < d; ++k) a[k * d + k] += 1e-4 * sd0[k] * sd0[k];
          if (detail::pmmh_cholesky(a, d, l)) {
            chol = l;
            if (!from_chain) log_lambda = 0;
            from_chain = true;
          }
        }
        if (it == cfg.warmup) {  // from here on the proposal is fixed: fold λ into the factor
          for (double& v : chol) v *= std::exp(log_lambda);
          log_lambda = 0;
        }
      }
      if (!warm) {
        co.draws.insert(co.draws.end(), theta.begin(), theta.end());
        co.log_likelihood.push_back(ll);
        co.log_prior.push_back(lp);
        co.predicted.insert(co.predicted.end(), current_pred.begin(), current_pred.end());
      }
    }
    co.acceptance = static_cast<double>(accepted) / static_cast<double>(cfg.iterations);
    co.proposal_covariance.assign(d * d, 0.0);  // λ²·L·L'
    const double l2 = std::exp(2 * log_lambda);
    for (std::size_t k = 0; k < d; ++k)
      for (std::size_t q = 0; q < d; ++q) {
        double s = 0;
        for (std::size_t m = 0; m < d; ++m) s += chol[k * d + m] * chol[q * d + m];
        co.proposal_covariance[k * d + q] = l2 * s;
      }
  };
  // Contiguous blocks of chains per thread; a failure is reported for the lowest chain that
  // failed, as when the chains run one after another (the worker pool rethrows the lowest
  // block's), and the chains above a failed one stop at their next iteration: their results
  // would be thrown away.
  std::optional<detail::worker_pool> chain_pool;
  try {
    chain_pool.emplace(chain_threads);
  } catch (const std::system_error& e) {  // a thread that could not be started
    throw std::runtime_error(std::string(f) + ": starting " + std::to_string(chain_threads) +
                             " threads for the chains (pmmh_config::chain_threads = " +
                             std::to_string(cfg.chain_threads) + ") failed: " + e.what());
  }
  detail::worker_pool& pool = *chain_pool;
  pool.run(cfg.chains, [&](std::size_t begin, std::size_t end) {
    for (std::size_t c = begin; c < end; ++c) {
      try {
        run_chain(c);
      } catch (...) {
        std::size_t seen = first_failed.load();
        while (c < seen && !first_failed.compare_exchange_weak(seen, c)) {
        }
        throw;
      }
      if (first_failed.load() < c) return;
    }
  });

  // Merge, chain after chain: the names in the order the chains first saw them (chain 0's, then
  // the ones chain 1 adds, …), NaN where a chain's kept particle did not predict a name.
  const std::size_t kept = cfg.chains * cfg.iterations;
  out.draws.reserve(kept * d);
  out.log_likelihood.reserve(kept);
  out.log_prior.reserve(kept);
  for (const chain_output& co : chains)
    for (const auto& name : co.names)
      if (std::find(out.names.begin(), out.names.end(), name) == out.names.end()) out.names.push_back(name);
  out.predicted.assign(kept * out.names.size(), std::numeric_limits<double>::quiet_NaN());
  for (std::size_t c = 0; c < cfg.chains; ++c) {
    const chain_output& co = chains[c];
    out.draws.insert(out.draws.end(), co.draws.begin(), co.draws.end());
    out.log_likelihood.insert(out.log_likelihood.end(), co.log_likelihood.begin(), co.log_likelihood.end());
    out.log_prior.insert(out.log_prior.end(), co.log_prior.begin(), co.log_prior.end());
    out.acceptance.push_back(co.acceptance);
    if (co.domain.count > 0 && out.domain_errors == 0) out.first_domain_error = co.domain.first;
    out.domain_errors += co.domain.count;
    out.randoms_beyond += co.beyond;
    out.proposal_covariance.insert(out.proposal_covariance.end(), co.proposal_covariance.begin(),
                                   co.proposal_covariance.end());
    for (std::size_t q = 0; q < co.names.size(); ++q) {
      const std::size_t j = static_cast<std::size_t>(
          std::find(out.names.begin(), out.names.end(), co.names[q]) - out.names.begin());
      for (std::size_t i = 0; i < cfg.iterations; ++i)
        out.predicted[(c * cfg.iterations + i) * out.names.size() + j] = co.predicted[i * co.names.size() + q];
    }
  }
  chains.clear();

  if (cfg.noise_runs >= 2) {
    detail::padded_theta at(d);
    for (std::size_t k = 0; k < d; ++k) at[k] = 0.0;
    for (std::size_t i = 0; i < kept; ++i)
      for (std::size_t k = 0; k < d; ++k) at[k] += out.draws[i * d + k] / static_cast<double>(kept);
    if (prior_at(at, "the posterior mean") > -std::numeric_limits<double>::infinity()) {
      // Correlated PMMH: each run i is a pair, log Ẑ at U_i ~ N(0, I) and at U_i' = ρU_i +
      // √(1 − ρ²)ε, the step the chain proposes (with θ' = θ̄): sd(log Ẑ) from the first of each
      // pair, the sd of the pairs' differences for the acceptance ratio's noise.
      std::vector<double> lls(cfg.noise_runs), ratios(correlated ? cfg.noise_runs : 0);
      pool.run(cfg.noise_runs, [&](std::size_t begin, std::size_t end) {
        std::optional<detail::worker_pool> inner;
        for (std::size_t i = begin; i < end; ++i) {
          result rs;
          const std::uint64_t seed_i = detail::pmmh_sweep_seed(cfg.seed, cfg.chains + 1, i);
          const std::string where = "the posterior mean's sweep " + std::to_string(i);
          if (!correlated) {
            lls[i] = log_z(at, seed_i, rs, where, nullptr, nullptr, nullptr, particle_pool(inner));
            continue;
          }
          std::vector<double> ui(detail::correlated_randoms(observations, cfg.particles, cfg.randoms_per_step)),
              vi(ui.size());
          counter_rng gu(detail::pmmh_sweep_seed(seed_i, detail::correlated_tag, 0), 0);
          counter_rng ge(detail::pmmh_sweep_seed(seed_i, detail::correlated_tag, 1), 0);
          const double rho = cfg.correlation, rest = std::sqrt(1 - rho * rho);
          for (std::size_t k = 0; k < ui.size(); ++k) {
            ui[k] = gu.normal();
            vi[k] = rho * ui[k] + rest * ge.normal();
          }
          lls[i] = log_z(at, seed_i, rs, where, nullptr, ui.data(), nullptr, particle_pool(inner));
          ratios[i] = log_z(at, detail::pmmh_sweep_seed(cfg.seed, cfg.chains + 2, i), rs, where + "'s pair", nullptr,
                            vi.data(), nullptr, particle_pool(inner)) -
                      lls[i];
        }
      });
      const auto sd_of = [](const std::vector<double>& v) {
        if (!std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); }))
          return std::numeric_limits<double>::infinity();  // some estimate was 0: unbounded there
        double m = 0, s2 = 0;
        for (double x : v) m += x / static_cast<double>(v.size());
        for (double x : v) s2 += (x - m) * (x - m);
        return std::sqrt(s2 / static_cast<double>(v.size() - 1));
      };
      out.log_likelihood_sd = sd_of(lls);
      if (correlated) out.log_likelihood_ratio_sd = sd_of(ratios);
    }
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return out;
}

}  // namespace tyche::smc
