// tyche/samplers/nuts/sampler.hpp — nuts(model, config): warm-up and sampling of several chains
// with the unrolled transition. Each chain is a chain_runner: its own Philox stream (seed, c),
// its own resumable transition and warm-up. The lockstep driver (lockstep.hpp) runs the runners
// as SIMD lanes, each lane at its own point of its own trajectory, on several threads; with
// lanes = 1 each runner evaluates its own gradients in double precision. Either way a chain's
// draws do not depend on the number of chains, threads or lanes beside it, for a given batch
// width (nuts_config::lanes).
#pragma once
#include <tyche/config.hpp>
#include <tyche/random/philox.hpp>
#include <tyche/random/variates.hpp>
#include <tyche/samplers/nuts/adaptation.hpp>
#include <tyche/samplers/nuts/lockstep.hpp>
#include <tyche/samplers/nuts/transition.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace tyche {

/// What nuts() reports every `refresh` iterations of a chain.
struct nuts_progress {
  int chain = 0;       // 1-based, as Stan prints it
  int iteration = 0;   // 1-based, warm-up included
  int iterations = 0;  // warm-up + draws
  bool warmup = false;
};

/// Settings of nuts(); defaults as Stan's.
struct nuts_config {
  int chains = 4;
  int warmup = 1000;
  int draws = 1000;
  std::uint64_t seed = 1;
  int max_depth = 10;
  double adapt_delta = 0.8;
  double init_step_size = 1.0;
  double init_radius = 2.0;  // initial θ uniform on (−r, r), as Stan
  int threads = 0;           // 0: one per chain, up to the hardware's concurrency
  /// Chains one thread advances together as SIMD lanes: 0 = the narrowest SIMD batch of
  /// doubles that holds ⌈chains / threads⌉ chains: half the build's widest batch where the
  /// build has such a batch (AVX2 under AVX-512: 4 chains on one thread in 4 lanes, not in 8
  /// with 4 empty) and it suffices, else the widest (1 without tyche::simd); 1 = one chain at a
  /// time in scalar double; otherwise a multiple of the widest or of the half width (the widest
  /// when it is a multiple of both). A chain's draws are the same for every value that uses
  /// the same batch width (lanes never interact); the two widths, and the scalar path, differ
  /// in the last bits of exp/log (the compiler contracts multiply-adds differently in each), so
  /// they give other, equally valid, chains. lanes = 0 picks the width from chains and
  /// threads: to reproduce a chain with another number of chains, set lanes.
  int lanes = 0;
  /// How lanes are scheduled: program_counter (default) lets every lane start its next
  /// transition as soon as its trajectory ends; trajectory_sync makes all chains wait for the
  /// longest trajectory of each iteration (the baseline of the autobatching paper's Figure 7,
  /// for benchmarks).
  samplers::lane_schedule schedule = samplers::lane_schedule::program_counter;
  /// The metric adapted in warm-up: diagonal (Stan's diag_e, the default) or dense (dense_e,
  /// for strongly correlated posteriors of moderate dimension: O(d²) per leapfrog).
  samplers::metric_kind metric = samplers::metric_kind::diagonal;
  /// Progress: every `refresh` iterations of each chain (and at its first and last), on_progress
  /// is called, or, when it is empty, a line in Stan's format goes to std::clog
  /// ("Chain 2: Iteration: 100 / 2000 [  5%]  (Warmup)"). 0: silent. Calls are serialised, from
  /// the sampling threads.
  int refresh = 0;
  std::function<void(const nuts_progress&)> on_progress = {};
};

/// The result of nuts(): per chain, the draws on the constrained scale and Stan's sampler
/// statistics, plus the adapted step size and metric.
struct nuts_fit {
  std::vector<std::string> names;  // parameter names, Stan style
  int chains = 0, draws = 0;
  std::vector<std::vector<double>> values;                    // [chain][draw * dim + k]
  std::vector<std::vector<samplers::transition_stats>> stats;     // [chain][draw]
  std::vector<double> step_size;                              // [chain]
  std::vector<std::vector<double>> inv_metric;                // [chain]: diagonal, or d × d row-major
  long long gradient_evaluations = 0;  // leapfrog gradients of all chains, warm-up included
  int lanes = 1;                       // chains per SIMD group actually used
  double utilization = 1;              // useful lane gradients / lane slots evaluated
  int max_depth = 10;                  // the configured maximum tree depth (for summary's warning)
  double adapt_delta = 0.8;            // the configured target acceptance statistic
  std::uint64_t seed = 1;              // the seed the chains' streams were keyed by
  double seconds = 0;                  // wall-clock time of the run (warm-up and sampling)

  [[nodiscard]] std::size_t dim() const { return names.size(); }
  /// Draws of parameter k, chain by chain: [chain][draw].
  [[nodiscard]] std::vector<std::vector<double>> parameter(std::size_t k) const {
    std::vector<std::vector<double>> out(static_cast<std::size_t>(chains));
    for (int c = 0; c < chains; ++c) {
      out[c].resize(static_cast<std::size_t>(draws));
      for (int d = 0; d < draws; ++d) out[c][d] = values[c][d * dim() + k];
    }
    return out;
  }
  [[nodiscard]] int divergences() const {
    int n = 0;
    for (const auto& chain : stats)
      for (const auto& s : chain) n += s.divergent ? 1 : 0;
    return n;
  }
};

namespace detail {

/// The transition's random-number interface over a chain's Philox stream; also a
/// UniformRandomBitGenerator for model.initial_point.
struct chain_rng {
  counter_rng rng;
  using result_type = counter_rng::result_type;
  static constexpr result_type min() { return counter_rng::min(); }
  static constexpr result_type max() { return counter_rng::max(); }
  result_type operator()() { return rng(); }
  double uniform() { return rng.uniform01(); }
  double normal() { return rng.normal(); }
  /// n standard normals from the n positions n calls of normal() would use, by the same
  /// Box–Muller formula: the momentum of a transition. Where the build has SIMD, a batch of
  /// positions at a time: the Philox blocks bit for bit as counter_rng computes them, log, sqrt
  /// and cos in the batch (so in other last bits than normal()).
  void normals(double* out, std::size_t n) {
#if TYCHE_HAS_XSIMD
    using batch = samplers::lane_batch;
    using bits = xsimd::batch<std::uint64_t, typename batch::arch_type>;
    using ints = xsimd::batch<std::int64_t, typename batch::arch_type>;
    constexpr std::size_t w = batch::size;
    constexpr double two_pi = 6.28318530717958647692;
    const std::uint64_t seed = rng.seed(), stream = rng.stream();
    const bits low(0xffffffffu);
    alignas(64) std::uint64_t position[w];
    alignas(64) double z[w];
    for (std::size_t first = 0; first < n; first += w) {
      const std::size_t m = n - first < w ? n - first : w;
      const std::uint64_t k = rng.position();
      for (std::size_t l = 0; l < w; ++l) position[l] = k + l;  // lanes past m: computed, unused
      rng.discard(m);
      // Philox-4x32-10 of counter (position, stream) under key seed, as philox4x32_10.
      const bits pos = bits::load_aligned(position);
      bits c0 = pos & low, c1 = pos >> 32, c2(stream & 0xffffffffu), c3(stream >> 32);
      auto k0 = static_cast<std::uint32_t>(seed), k1 = static_cast<std::uint32_t>(seed >> 32);
      for (int r = 0; r < 10; ++r) {
        if (r > 0) {
          k0 += philox_constants::w0;
          k1 += philox_constants::w1;
        }
        const bits p0 = bits(philox_constants::m0) * c0, p1 = bits(philox_constants::m1) * c2;
        const bits n0 = (p1 >> 32) ^ c1 ^ bits(k0), n2 = (p0 >> 32) ^ c3 ^ bits(k1);
        c1 = p1 & low;
        c3 = p0 & low;
        c0 = n0;
        c2 = n2;
      }
      // uniform01_from_bits of words 0–1 and of words 2–3, then Box–Muller's cosine branch.
      auto uniform = [](const bits& x) {
        const batch top = xsimd::to_float(xsimd::bitwise_cast<ints>(x >> 11));  // exact: < 2^53
        return xsimd::select(top == batch(0.0), batch(0x1p-54), top * batch(0x1p-53));
      };
      const batch u1 = uniform(c0 | (c1 << 32)), u2 = uniform(c2 | (c3 << 32));
      const batch r = math::sqrt(batch(-2.0) * math::log(u1)) * math::cos(batch(two_pi) * u2);
      r.store_aligned(z);
      for (std::size_t l = 0; l < m; ++l) out[first + l] = z[l];
    }
#else
    for (std::size_t i = 0; i < n; ++i) out[i] = rng.normal();
#endif
  }
};

/// One chain's view of the model's log density: its own workspace, no allocation per call.
template <class Model>
struct model_density {
  const Model& model;
  mutable std::vector<double> workspace = std::vector<double>(model.program().workspace_size());
  double operator()(const std::vector<double>& q, std::vector<double>& grad) const {
    return model.program().value_and_gradient(q, grad, workspace);
  }
};

/// Stan's heuristic for a first step size: double or halve ε until the acceptance of one
/// leapfrog from a fresh momentum crosses 0.8.
template <class Transition>
double initial_step_size(const Transition& tr, const samplers::phase_point& z0, double eps,
                         chain_rng& rng) {
  if (!(eps > 0) || eps > 1e7) return eps;
  auto delta_h = [&](double e) {
    samplers::phase_point z = z0;
    tr.sample_momentum(z.p, z.q.size(), rng);
    const double h0 = tr.hamiltonian(z);
    tr.leapfrog(z, e);
    double h = tr.hamiltonian(z);
    if (std::isnan(h)) h = std::numeric_limits<double>::infinity();
    return h0 - h;
  };
  const double log_08 = std::log(0.8);
  const int direction = delta_h(eps) > log_08 ? 1 : -1;
  for (int guard = 0; guard < 200; ++guard) {
    const double dh = delta_h(eps);
    if (direction == 1 && !(dh > log_08)) break;
    if (direction == -1 && !(dh < log_08)) break;
    eps = direction == 1 ? 2 * eps : 0.5 * eps;
    if (eps > 1e7)
      throw std::runtime_error("tyche::nuts: the step size grew past 1e7 while initialising it: "
                               "the posterior may be improper");
    if (eps < 1e-300)
      throw std::runtime_error("tyche::nuts: no acceptably small step size: the log density or "
                               "its gradient is not finite near the current point");
  }
  return eps;
}

/// Calls cfg.on_progress, or prints Stan's progress line; one call at a time.
inline void report_progress(const nuts_config& cfg, const nuts_progress& p) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  if (cfg.on_progress) {
    cfg.on_progress(p);
    return;
  }
  char line[128];
  std::snprintf(line, sizeof line, "Chain %d: Iteration: %*d / %d [%3d%%]  (%s)\n", p.chain,
                static_cast<int>(std::to_string(p.iterations).size()), p.iteration, p.iterations,
                static_cast<int>(100.0 * p.iteration / p.iterations), p.warmup ? "Warmup" : "Sampling");
  std::clog << line;
}

/// One chain: its random stream, its point, its resumable transition and its warm-up. The
/// drivers call begin(), evaluate pending() (alone or as one SIMD lane among others) and call
/// resume() until it returns true; then the iteration is over.
template <class Model>
class chain_runner {
 public:
  chain_runner(const chain_runner&) = delete;  // the transition refers to target_
  chain_runner& operator=(const chain_runner&) = delete;
  chain_runner(const Model& m, const nuts_config& cfg, int chain, nuts_fit& fit)
      : m_(m), cfg_(cfg), chain_(chain), fit_(fit),
        rng_{counter_rng(cfg.seed, static_cast<std::uint64_t>(chain))}, target_{m},
        tr_(target_, std::vector<double>(m.dim(), 1.0), cfg.max_depth),
        metric_adapt_(m.dim(), cfg.warmup, adaptation(cfg), cfg.metric == samplers::metric_kind::dense),
        step_adapt_(adaptation(cfg)), inv_metric_(m.dim(), 1.0) {
    const std::size_t d = m.dim();
    if (cfg.metric == samplers::metric_kind::dense) {  // start from the identity
      inv_metric_.assign(d * d, 0.0);
      for (std::size_t i = 0; i < d; ++i) inv_metric_[i * d + i] = 1.0;
      tr_.set_dense_inv_metric(inv_metric_, d);
    }
    z_.grad.resize(d);
    // Initial point: uniform(−r, r) on θ, up to 100 attempts at a finite density and gradient.
    for (int attempt = 0;; ++attempt) {
      z_.q = m.initial_point(rng_, cfg.init_radius);
      z_.log_density = target_(z_.q, z_.grad);
      bool finite = std::isfinite(z_.log_density);
      for (double g : z_.grad) finite = finite && std::isfinite(g);
      if (finite) break;
      if (attempt == 99)
        throw std::runtime_error("tyche::nuts: chain " + std::to_string(chain + 1) +
                                 ": no initial point with a finite log density and gradient in "
                                 "100 attempts");
    }
    eps_ = initial_step_size(tr_, z_, cfg.init_step_size, rng_);
    step_adapt_.set_mu(std::log(10 * eps_));
    auto& values = fit.values[static_cast<std::size_t>(chain)];
    values.reserve(static_cast<std::size_t>(cfg.draws) * d);
    fit.stats[static_cast<std::size_t>(chain)].reserve(static_cast<std::size_t>(cfg.draws));
    if (done()) finish();
  }

  [[nodiscard]] int chain() const { return chain_; }
  [[nodiscard]] bool done() const { return iteration_ == cfg_.warmup + cfg_.draws; }
  /// Gradients of completed trajectories (leapfrogs) so far.
  [[nodiscard]] long long gradient_evaluations() const { return gradients_; }

  /// Starts the next iteration's transition.
  void begin() { tr_.begin(z_, eps_, rng_); }
  /// The point whose log density and gradient the chain waits for.
  samplers::phase_point& pending() { return tr_.pending(); }
  /// Continues after pending() was evaluated; true when the iteration is over.
  bool resume() {
    if (!tr_.resume(rng_)) return false;
    end_iteration(tr_.stats());
    return true;
  }

  /// All iterations, evaluating one point at a time in double precision.
  void run() {
    while (!done()) {
      begin();
      do {
        samplers::phase_point& z = pending();
        z.log_density = target_(z.q, z.grad);
      } while (!resume());
    }
  }

 private:
  static samplers::adaptation_config adaptation(const nuts_config& cfg) {
    samplers::adaptation_config ac;
    ac.delta = cfg.adapt_delta;
    return ac;
  }

  void end_iteration(const samplers::transition_stats& s) {
    gradients_ += s.n_leapfrog;
    if (iteration_ < cfg_.warmup) {
      step_adapt_.learn(eps_, s.accept_stat);
      if (metric_adapt_.learn(inv_metric_, z_.q)) {
        if (tr_.dense())
          tr_.set_dense_inv_metric(inv_metric_, z_.q.size());
        else
          tr_.set_inv_metric(inv_metric_);
        eps_ = initial_step_size(tr_, z_, eps_, rng_);
        step_adapt_.set_mu(std::log(10 * eps_));
        step_adapt_.restart();
      }
      if (iteration_ == cfg_.warmup - 1) step_adapt_.complete(eps_);
    } else {
      const auto x = m_.constrain(z_.q);
      auto& values = fit_.values[static_cast<std::size_t>(chain_)];
      values.insert(values.end(), x.begin(), x.end());
      fit_.stats[static_cast<std::size_t>(chain_)].push_back(s);
    }
    ++iteration_;
    if (cfg_.refresh > 0 && (iteration_ == 1 || iteration_ % cfg_.refresh == 0 ||
                             iteration_ == cfg_.warmup + cfg_.draws))
      report_progress(cfg_, nuts_progress{chain_ + 1, iteration_, cfg_.warmup + cfg_.draws,
                                          iteration_ <= cfg_.warmup});
    if (done()) finish();
  }

  void finish() {
    fit_.step_size[static_cast<std::size_t>(chain_)] = eps_;
    fit_.inv_metric[static_cast<std::size_t>(chain_)] = tr_.inv_metric();
  }

  const Model& m_;
  const nuts_config& cfg_;
  int chain_;
  nuts_fit& fit_;
  chain_rng rng_;
  model_density<Model> target_;
  samplers::unrolled_transition<model_density<Model>, chain_rng> tr_;
  samplers::metric_adaptation metric_adapt_;
  samplers::step_size_adaptation step_adapt_;
  std::vector<double> inv_metric_;
  samplers::phase_point z_;
  double eps_ = 1;
  int iteration_ = 0;
  long long gradients_ = 0;
};

/// The number of lanes nuts() uses for a configuration: `requested`, checked, or for 0 the
/// narrowest SIMD batch that holds the chains of one thread (⌈chains / threads⌉): the half-width
/// batch where the build has one and it suffices, else the full width.
inline int resolve_lanes(int requested, int chains, int threads) {
  constexpr int width = static_cast<int>(samplers::simd_lane_width);
  constexpr int half = static_cast<int>(samplers::half_lane_width);
  if (requested == 0) {
    const int per_thread = (chains + threads - 1) / threads;
    return half > 1 && per_thread <= half ? half : width;
  }
  if (requested == 1) return 1;
  if (width == 1 && requested > 1)  // no SIMD backend: the evaluator has one lane
    throw std::invalid_argument("tyche::nuts: lanes = " + std::to_string(requested) +
                                " needs the SIMD backend (link tyche::simd, or define "
                                "TYCHE_USE_XSIMD=1); this build evaluates one chain at a time: "
                                "use lanes = 0 or 1");
  const bool fits = requested > 1 && (requested % width == 0 || (half > 1 && requested % half == 0));
  if (!fits)
    throw std::invalid_argument("tyche::nuts: lanes = " + std::to_string(requested) +
                                " must be 0 (automatic), 1 (scalar) or a multiple of the SIMD "
                                "width " + std::to_string(width) +
                                (half > 1 ? " or of the half width " + std::to_string(half) : std::string()));
  return requested;
}

}  // namespace detail

/// Runs NUTS on a model: config.chains chains of config.warmup + config.draws iterations.
template <class Model>
nuts_fit nuts(const Model& m, const nuts_config& cfg = {}) {
  if (cfg.chains < 1 || cfg.draws < 0 || cfg.warmup < 0)
    throw std::invalid_argument("tyche::nuts: chains must be ≥ 1 and warmup, draws ≥ 0 (got chains = " +
                                std::to_string(cfg.chains) + ", warmup = " + std::to_string(cfg.warmup) +
                                ", draws = " + std::to_string(cfg.draws) + ")");
  if (!(cfg.adapt_delta > 0 && cfg.adapt_delta < 1))
    throw std::invalid_argument("tyche::nuts: adapt_delta = " + std::to_string(cfg.adapt_delta) +
                                " is outside (0, 1)");
  const auto start = std::chrono::steady_clock::now();
  nuts_fit fit;
  fit.max_depth = cfg.max_depth;
  fit.adapt_delta = cfg.adapt_delta;
  fit.seed = cfg.seed;
  fit.names = m.parameter_names();
  fit.chains = cfg.chains;
  fit.draws = cfg.draws;
  fit.values.resize(static_cast<std::size_t>(cfg.chains));
  fit.stats.resize(static_cast<std::size_t>(cfg.chains));
  fit.step_size.resize(static_cast<std::size_t>(cfg.chains));
  fit.inv_metric.resize(static_cast<std::size_t>(cfg.chains));
  int threads = cfg.threads > 0 ? cfg.threads
                                : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::min(threads, cfg.chains);
  const int lanes = detail::resolve_lanes(cfg.lanes, cfg.chains, threads);
  fit.lanes = lanes;
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(cfg.chains));
  auto record_error = [&](int c) {
    try {
      throw;
    } catch (const std::exception& e) {
      errors[static_cast<std::size_t>(c)] = std::make_exception_ptr(
          std::runtime_error(std::string(e.what()) + " (chain " + std::to_string(c + 1) + ")"));
    } catch (...) {
      errors[static_cast<std::size_t>(c)] = std::current_exception();
    }
  };
  using runner = detail::chain_runner<Model>;
  auto make_runner = [&](int c) { return std::make_unique<runner>(m, cfg, c, fit); };
  const auto counts = samplers::run_lockstep<runner>(m.program().view(), cfg.chains, threads, lanes,
                                                     cfg.schedule, make_runner, record_error);
  fit.gradient_evaluations = counts.useful;
  fit.utilization = counts.slots > 0 ? static_cast<double>(counts.useful) / static_cast<double>(counts.slots) : 1.0;
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  fit.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return fit;
}

}  // namespace tyche
