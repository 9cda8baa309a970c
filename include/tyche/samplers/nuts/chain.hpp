// tyche/samplers/nuts/chain.hpp — one chain between its transitions, on the host: its random
// stream, its point, its step size and metric, its warm-up, what it records. An executor loads
// the chain into a lane of a NUTS kernel (kernel.hpp) for a transition and gives the
// transition's result back to end_iteration(); everything a chain does between transitions is
// here, so that every executor does it the same way.
//
// Target: what the sampler needs from a model (samplers/concepts.hpp, log_density_target): its
// dimension, log p and its gradient in double, Stan's random initialisation, and constrain.
#pragma once
#include <tyche/config.hpp>
#include <tyche/random/philox.hpp>
#include <tyche/samplers/nuts/adaptation.hpp>
#include <tyche/samplers/nuts/chain_streams.hpp>
#include <tyche/samplers/nuts/config.hpp>
#include <tyche/samplers/nuts/kernel.hpp>
#include <tyche/samplers/nuts/warmup.hpp>
#include <tyche/scalar/format.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <iostream>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tyche::samplers::detail {

/// Stan's progress line ("Chain 2: Iteration: 100 / 2000 [  5%]  (Warmup)"), to std::clog.
inline void print_progress_line(const nuts_progress& p) {
  char line[128];
  std::snprintf(line, sizeof line, "Chain %d: Iteration: %*d / %d [%3d%%]  (%s)\n", p.chain,
                static_cast<int>(std::to_string(p.iterations).size()), p.iteration, p.iterations,
                static_cast<int>(100.0 * p.iteration / p.iterations), p.warmup ? "Warmup" : "Sampling");
  std::clog << line;
}

/// Calls cfg.on_progress, or prints Stan's progress line; one call at a time.
inline void report_progress(const nuts_config& cfg, const nuts_progress& p) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  if (cfg.on_progress) {
    cfg.on_progress(p);
    return;
  }
  print_progress_line(p);
}

/// The exception an executor throws for a kernel status, naming what was wrong.
[[noreturn]] inline void throw_status(nuts_status s, const std::string& what) {
  throw std::runtime_error("tyche::nuts: " + what + ": " + describe(s));
}

/// The warm-up settings of a configuration (Stan's, with its adapt_delta) for d coordinates.
inline adaptation_config adaptation_of(const nuts_config& cfg, std::size_t d = 0) {
  adaptation_config ac;
  ac.low_rank_options.max_rank = cfg.low_rank_max_rank;
  ac.low_rank_chains = cfg.pool_metric && cfg.chains > 0 ? static_cast<std::size_t>(cfg.chains) : 1;
  if (d > 1 && cfg.init_inv_metric.size() == d * d) ac.low_rank_init_rank = d;
  if (cfg.init_inv_metric_factors.size() > 2) ac.low_rank_init_rank = static_cast<std::size_t>(cfg.init_inv_metric_factors[0]);
  ac.delta = cfg.adapt_delta;
  ac.gradients = cfg.metric_estimator != metric_estimator::draws;
  ac.nutpie_schedule = cfg.metric_estimator == metric_estimator::nutpie;
  ac.low_rank = cfg.metric == metric_kind::low_rank;
  ac.pooled = cfg.pool_metric;
  return ac;
}

/// The most directions a chain's low-rank metric keeps for this configuration and d (0 for the
/// other metrics): the kernels' and the chains' kmax.
inline std::size_t low_rank_kmax(const nuts_config& cfg, std::size_t d) {
  if (cfg.metric != metric_kind::low_rank) return 0;
  return metric_adaptation<double>(d, cfg.warmup, adaptation_of(cfg, d), true).max_rank();
}

/// The largest d for which nuts_fit::inv_metric holds a low-rank metric as the d × d matrix
/// (beyond it, the factors alone: nuts_fit::inv_metric_factors).
inline constexpr std::size_t low_rank_fit_matrix_limit = 1000;

/// Records chain c's adapted metric in the fit: `metric` as the chain keeps it (low rank: the
/// factors, with the d × d matrix beside them while d ≤ low_rank_fit_matrix_limit).
inline void record_metric(nuts_fit& fit, std::size_t c, metric_kind kind, const double* metric, std::size_t size,
                          std::size_t d) {
  if (kind != metric_kind::low_rank) {
    fit.inv_metric[c].assign(metric, metric + size);
    return;
  }
  fit.inv_metric_factors.at(c).assign(metric, metric + size);  // (sized with the fit: make_fit_frame)
  if (d <= low_rank_fit_matrix_limit) {
    fit.inv_metric[c].assign(d * d, 0.0);
    low_rank_dense(metric, d, fit.inv_metric[c].data());
  } else {
    fit.inv_metric[c].clear();
  }
}

/// The message of a failed warm-up step of chain `chain` (0-based); inv_metric: the metric it
/// adapted (low rank: its factors).
inline std::string warmup_error(int chain, const warmup_result& r, const std::vector<double>& inv_metric,
                                bool low_rank = false) {
  const std::string who = "tyche::nuts: chain " + std::to_string(chain + 1);
  if (r.bad_metric && low_rank) {
    if (r.where == static_cast<std::size_t>(-1))
      return who + ": the adapted low-rank inverse metric's count of directions (" +
             std::to_string(inv_metric.empty() ? 0.0 : inv_metric[0]) + ") is not an integer in [0, " +
             std::to_string(inv_metric.size() > 1 ? inv_metric[1] : 0.0) + "]";
    if (r.status == nuts_status::metric_not_positive_definite)
      return who + ": the adapted low-rank inverse metric has a direction (" + std::to_string(r.where + 1) +
             ") whose eigenvalue is not a positive finite number";
    return who + ": the adapted low-rank inverse metric's scale σ[" + std::to_string(r.where) + "] = " +
           std::to_string(2 + r.where < inv_metric.size() ? inv_metric[2 + r.where] : 0.0) +
           " is not a positive finite number";
  }
  if (r.bad_metric && r.status == nuts_status::metric_not_positive_definite)
    return who + ": the adapted dense inverse metric is not positive definite (pivot " + std::to_string(r.where) + ")";
  if (r.bad_metric)
    return who + ": adapted inverse metric element " + std::to_string(r.where) + " = " +
           std::to_string(r.where < inv_metric.size() ? inv_metric[r.where] : 0.0) +
           " is not a positive finite number";
  return who + ": " + describe(r.status);
}

template <class Target>
class nuts_chain {
 public:
  nuts_chain(const Target& target, const nuts_config& cfg, int chain, nuts_fit& fit)
      : target_(target), cfg_(cfg), chain_(chain), fit_(fit), d_(target.dim()),
        rng_(cfg.seed, static_cast<std::uint64_t>(cfg.first_chain) + static_cast<std::uint64_t>(chain)), step_adapt_(adaptation_of(cfg)),
        metric_adapt_(d_, cfg.warmup, adaptation_of(cfg, d_), stored_dense(cfg.metric)) {
    // The chain's larger arrays are allocated here — on the thread that calls nuts(), for the
    // CPU executor — and first written by the thread that runs the chain (initialise,
    // end_iteration). Allocated there instead, they came from that thread's malloc arena, which
    // glibc trims when the run frees them, so every fit faulted their pages in again: eight
    // schools, 64 chains on 2 threads, 20 fits: 35,600 page faults and 2.0 s, against 2,200 and
    // 1.6-1.7 s allocated here (docs/nuts.md).
    try {
      fit_.values[static_cast<std::size_t>(chain_)].reserve(static_cast<std::size_t>(cfg_.draws) * target_.constrained_dim());
      fit_.stats[static_cast<std::size_t>(chain_)].reserve(static_cast<std::size_t>(cfg_.draws));
      adapt_buffer_.reserve(metric_adapt_.buffer_size());
    } catch (const std::bad_alloc&) {
      throw std::runtime_error("tyche::nuts: chain " + std::to_string(chain_number()) + ": no memory for its " +
                               std::to_string(cfg_.draws) + " draws of " + std::to_string(target_.constrained_dim()) +
                               " values and its warm-up buffer (" + std::to_string(metric_adapt_.buffer_size()) +
                               " values)");
    }
  }
  nuts_chain(const nuts_chain&) = delete;
  nuts_chain& operator=(const nuts_chain&) = delete;

  /// The initial point — nuts_config::init, or random_initial_point(): Stan's uniform(−r, r)
  /// on θ, up to 100 attempts at a finite log density and gradient and a step of at least
  /// min_initial_step_size — the initial metric (init_inv_metric, or the identity) and the first
  /// step size (Stan's heuristic); throws when there is none.
  void initialise() {
    started_ = std::chrono::steady_clock::now();
    const std::size_t d = d_;
    const bool low_rank = cfg_.metric == metric_kind::low_rank;
    const bool dense = cfg_.metric == metric_kind::dense;
    inv_metric_.assign(low_rank ? metric_adapt_.metric_size() : dense ? d * d : d, 0.0);
    if (low_rank) {
      low_rank_identity(inv_metric_.data(), d, metric_adapt_.max_rank());
    } else if (dense) {
      chol_.assign(d * d, 0.0);
      for (std::size_t i = 0; i < d; ++i) inv_metric_[i * d + i] = chol_[i * d + i] = 1.0;
    } else {
      for (auto& m : inv_metric_) m = 1.0;
    }
    adapt_buffer_.assign(metric_adapt_.buffer_size(), 0.0);
    metric_adapt_.bind(adapt_buffer_.data());
    scratch_.assign(4 * d, 0.0);
    grad_.assign(d, 0.0);
    workspace_.assign(target_.workspace_size(), 0.0);
    if (!cfg_.init_inv_metric_factors.empty() && low_rank) {  // (checked before: d, a valid metric)
      const auto& f = cfg_.init_inv_metric_factors;
      std::vector<double> keep(2 * static_cast<std::size_t>(f[0]));
      low_rank_copy(f.data(), d, metric_adapt_.max_rank(), inv_metric_.data(), keep.data());
      refresh_low_rank_matrix();
    } else if (!cfg_.init_inv_metric.empty() && low_rank) {  // the kernel's form: σ, and the matrix's directions
      const std::vector<double>& m = cfg_.init_inv_metric;
      bool ok = true;
      if (m.size() == d) {
        ok = low_rank_factors_from_diagonal(m.data(), d, metric_adapt_.max_rank(), inv_metric_.data());
      } else {
        std::vector<double> symmetric = m, work(low_rank_matrix_workspace(d));
        for (std::size_t i = 0; i < d; ++i)
          for (std::size_t j = 0; j < i; ++j)
            symmetric[i * d + j] = symmetric[j * d + i] = 0.5 * (m[i * d + j] + m[j * d + i]);
        ok = low_rank_factors_from_matrix(symmetric.data(), d, metric_adapt_.max_rank(), inv_metric_.data(),
                                          work.data());
      }
      if (!ok)  // checked before
        throw std::invalid_argument("tyche::nuts: init_inv_metric is not symmetric positive definite");
      refresh_low_rank_matrix();
    } else if (!cfg_.init_inv_metric.empty()) {  // sizes, values and symmetry checked before the chains start
      inv_metric_ = cfg_.init_inv_metric;
      if (dense) {
        for (std::size_t i = 0; i < d; ++i)  // symmetric to rounding: exactly, as the kernel needs it
          for (std::size_t j = 0; j < i; ++j)
            inv_metric_[i * d + j] = inv_metric_[j * d + i] = 0.5 * (inv_metric_[i * d + j] + inv_metric_[j * d + i]);
        std::size_t where = 0;
        if (cholesky_lower(inv_metric_.data(), chol_.data(), d, &where) != nuts_status::ok)  // checked before
          throw std::invalid_argument("tyche::nuts: init_inv_metric is not symmetric positive definite (pivot " +
                                      std::to_string(where) + ")");
      }
    }
    if (!cfg_.init.empty()) {
      const auto& values = cfg_.init.size() == 1 ? cfg_.init[0] : cfg_.init[static_cast<std::size_t>(chain_)];
      const std::string who = "tyche::nuts: chain " + std::to_string(chain_number()) + ": init";
      if constexpr (requires { target_.unconstrain(values); }) {
        try {
          q_ = target_.unconstrain(values);
        } catch (const std::exception& e) {
          throw std::invalid_argument(who + ": " + e.what());  // bad input, as optimize and the others say
        }
      } else {
        throw std::invalid_argument(who + ": this target cannot map constrained values to θ (unconstrain)");
      }
      log_density_ = evaluate(q_.data(), grad_.data());
      bool finite = std::isfinite(log_density_);
      for (double g : grad_) finite = finite && std::isfinite(g);
      if (!finite)
        throw std::invalid_argument(who + ": the log density or its gradient is not finite at the given initial "
                                       "values: " + point_text() + " (start where every term is finite)");
      step_size_ = cfg_.init_step_size;
      find_step_size();
    } else {
      random_initial_point();
    }
    if (cfg_.metric_estimator == metric_estimator::nutpie && cfg_.init_inv_metric.empty() && cfg_.warmup >= 20 &&
        cfg_.metric == metric_kind::diagonal) {
      // nutpie's first metric, 1/|∇log p| here, and Stan's heuristic with it (kept only if it
      // finds a step: else the identity and the step found with it).
      const std::vector<double> identity = inv_metric_;
      const double step_before = step_size_;
      metric_adaptation<double>::metric_from_gradient(inv_metric_.data(), grad_.data(), d);
      step_size_ = cfg_.init_step_size;
      if (try_step_size() != nuts_status::ok) {
        inv_metric_ = identity;
        step_size_ = step_before;
      }
    }
    step_adapt_.set_mu(std::log(10 * step_size_));
    initialised_ = true;
    if (done()) finish();
  }

  /// Stan's random initialisation (θ uniform on (−r, r), up to 100 attempts at a finite log
  /// density and gradient) and its step-size heuristic, with one more test: a point where the
  /// heuristic needs a step below min_initial_step_size is rejected too, and another drawn (if
  /// every attempt needs one, the point with the largest step is kept). Such a point sits where
  /// the log density is astronomically low and steep — an ARMA model's non-invertible region,
  /// log p ≈ −10¹⁰⁰ — and its chain, moving by 10⁻⁶⁰ per leapfrog, may never leave it during
  /// warm-up (docs/nuts.md, "Where the chains start": 28 of 240 ARMA(1,1) chains stayed there
  /// with Stan's rule, 2 of 240 with this one, both near |θ| = 1). A point that passes on its
  /// first attempt is Stan's, and so is every draw after it.
  void random_initial_point() {
    std::vector<double> best_q, best_grad;
    double best_log_density = 0, best_step = -1;
    nuts_status last_failure = nuts_status::ok;
    for (int attempt = 0; attempt < 100; ++attempt) {
      q_ = target_.initial_point(rng_, cfg_.init_radius);
      log_density_ = evaluate(q_.data(), grad_.data());
      bool finite = std::isfinite(log_density_);
      for (double g : grad_) finite = finite && std::isfinite(g);
      if (!finite) continue;
      step_size_ = cfg_.init_step_size;
      // init_radius = 0: every attempt is θ = 0; Stan's rule, the first finite point.
      if (cfg_.init_radius == 0) {
        find_step_size();
        return;
      }
      // No acceptably small step from this point: another one. Any other failure (a step that
      // grows without bound: an improper posterior) is the chain's error, as before.
      const nuts_status s = try_step_size();
      if (s == nuts_status::step_size_too_small) {
        last_failure = s;
        continue;
      }
      if (s != nuts_status::ok) throw_status(s, "chain " + std::to_string(chain_number()));
      if (step_size_ >= min_initial_step_size) return;
      if (step_size_ > best_step) {
        best_step = step_size_;
        best_q = q_;
        best_grad = grad_;
        best_log_density = log_density_;
      }
    }
    if (best_step > 0) {
      q_ = best_q;
      grad_ = best_grad;
      log_density_ = best_log_density;
      step_size_ = best_step;
      return;
    }
    if (last_failure != nuts_status::ok) throw_status(last_failure, "chain " + std::to_string(chain_number()));
    throw std::runtime_error(no_initial_point());
  }

  /// What the last of the 100 attempts found: the log density, the point (by name, as far as
  /// θ's coordinates are the named values) and where the gradient was not finite.
  [[nodiscard]] std::string no_initial_point() const {
    char radius[32];
    std::snprintf(radius, sizeof radius, "%.6g", cfg_.init_radius);
    return "tyche::nuts: chain " + std::to_string(chain_number()) +
           ": no initial point with a finite log density and gradient in 100 attempts "
           "(θ uniform on (-" + radius + ", " + radius + ") per unconstrained coordinate, init_radius); at the last, " +
           point_text() +
           ". A log density that is -inf or NaN everywhere usually means an observation outside its "
           "family's support, a data value used as a scale that is ≤ 0, or a term no parameter value "
           "can make finite: check the data, start from values inside the support (nuts_config::init), or print "
           "explain(model) to see the terms";
  }

  /// "the log density was <lp> at <the point by name> (unconstrained θ = (…)); the gradient was
  /// not finite in …; there, <the terms that were not finite>": q_, log_density_ and grad_.
  [[nodiscard]] std::string point_text() const {
    auto number = [](double x) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.6g", x);
      return std::string(buf);
    };
    const bool named = fit_.names.size() == d_;  // no matrix variable: θ's coordinates are the names
    auto coordinate = [&](std::size_t k) { return named ? fit_.names[k] : "theta[" + std::to_string(k + 1) + "]"; };
    std::string text = "the log density was " + number(log_density_) + " at ";
    // The point as the model's values (sigma, not log sigma), where they can be computed; θ after.
    std::vector<double> values;
    try {
      target_.constrain(q_.data(), values);
    } catch (...) {
      values.clear();
    }
    const bool by_value = values.size() == fit_.names.size() && !values.empty();
    const std::size_t count = by_value ? values.size() : d_, shown = count < 8 ? count : 8;
    for (std::size_t k = 0; k < shown; ++k) {
      if (k > 0) text += ", ";
      text += by_value ? fit_.names[k] : coordinate(k);
      text += " = ";
      text += number(by_value ? values[k] : q_[k]);
    }
    if (shown < count) text += ", …";
    if (by_value) {
      text += " (unconstrained θ = (";
      for (std::size_t k = 0; k < d_ && k < 8; ++k) text += (k > 0 ? ", " : "") + number(q_[k]);
      text += d_ > 8 ? ", …))" : "))";
    } else {
      text += shown < count ? " (unconstrained θ, " + std::to_string(d_) + " coordinates)" : " (unconstrained θ)";
    }
    std::string bad;
    std::size_t bad_count = 0;
    for (std::size_t k = 0; k < d_; ++k)
      if (!std::isfinite(grad_[k]) && ++bad_count <= 8) bad += (bad.empty() ? "" : ", ") + coordinate(k);
    if (bad_count > 0)
      text += "; the gradient was not finite in " + bad + (bad_count > 8 ? ", …" : "");
    if constexpr (requires { target_.non_finite_terms(q_.data()); }) {
      const std::string terms = target_.non_finite_terms(q_.data());
      if (!terms.empty()) text += "; there, " + terms;
    }
    return text;
  }

  [[nodiscard]] bool initialised() const { return initialised_; }
  [[nodiscard]] int chain() const { return chain_; }
  /// The chain's number in messages and progress (1-based, nuts_config::first_chain counted).
  [[nodiscard]] int chain_number() const { return cfg_.first_chain + chain_ + 1; }
  [[nodiscard]] bool done() const { return iteration_ == cfg_.warmup + cfg_.draws; }
  [[nodiscard]] int iteration() const { return iteration_; }

  // The state a kernel lane runs the next transition from.
  [[nodiscard]] const std::vector<double>& q() const { return q_; }
  [[nodiscard]] const std::vector<double>& grad() const { return grad_; }
  [[nodiscard]] double log_density() const { return log_density_; }
  [[nodiscard]] double step_size() const { return step_size_; }
  [[nodiscard]] const std::vector<double>& inv_metric() const { return inv_metric_; }
  [[nodiscard]] const std::vector<double>& cholesky() const { return chol_; }
  /// Counts changes of the metric, so that a lane holding this chain knows when to reload it.
  [[nodiscard]] unsigned metric_version() const { return metric_version_; }
  [[nodiscard]] counter_rng& rng() { return rng_; }
  /// The step-size estimate (after initialise(): μ = log 10ε, nothing learnt yet).
  [[nodiscard]] const step_size_adaptation<double>& step_adaptation() const { return step_adapt_; }

  /// Loads the chain into lane l of a kernel: point, metric (when `metric` is set: a chain new
  /// to the lane, or changed since), step size, random stream.
  template <class Kernel>
  void load(Kernel& k, int l, bool point, bool metric) {
    if (point) k.set_point(l, q_.data(), grad_.data(), log_density_);
    if (metric) {
      const nuts_status s =
          cfg_.metric != metric_kind::low_rank
              ? k.set_metric(l, inv_metric_.data(), chol_.empty() ? nullptr : chol_.data())
              : k.set_metric_low_rank(l, inv_metric_.data(), low_rank_matrix_.empty() ? nullptr : low_rank_matrix_.data());
      if (s != nuts_status::ok) throw_status(s, "chain " + std::to_string(chain_number()));
    }
    const nuts_status s = k.set_step_size(l, step_size_);
    if (s != nuts_status::ok)
      throw_status(s, "chain " + std::to_string(chain_number()) + ", step size " + tyche::detail::format_number(step_size_));
    k.set_stream(l, rng_);
  }
  /// Takes back the chain's state from lane l after a transition: the selected point and the
  /// stream's position.
  template <class Kernel>
  void unload(const Kernel& k, int l) {
    k.get_point(l, q_.data(), grad_.data());
    log_density_ = k.log_density(l);
    rng_ = k.stream(l);
  }

  /// After a transition (the chain's state unloaded): warm-up (dual averaging; at the end of a
  /// metric window the new metric and Stan's step-size heuristic) or recording of the draw.
  void end_iteration(const transition_stats& s) {
    if (iteration_ < cfg_.warmup) {
      chain_streams<1> streams;
      streams.seed = cfg_.seed;
      streams.set_lane(0, rng_);
      const warmup_result r = warmup_step(
          iteration_, cfg_.warmup, step_size_, s.accept_stat, step_adapt_, metric_adapt_, inv_metric_.data(),
          chol_.empty() ? nullptr : chol_.data(), q_.data(), grad_.data(), log_density_, d_, streams,
          [&](const double* q, double* g) { return evaluate(q, g); }, scratch_.data(), meets_);
      rng_ = streams.lane(0);
      if (r.status != nuts_status::ok) throw std::runtime_error(warmup_error(chain_number() - 1, r, inv_metric_, cfg_.metric == metric_kind::low_rank));
      if (r.metric_changed) take_new_metric();
      pool_pending_ = r.pool_pending;
      if (pool_pending_ && meets_) ++windows_closed_;
    } else {
      auto& values = fit_.values[static_cast<std::size_t>(chain_)];
      target_.constrain(q_.data(), values);
      fit_.stats[static_cast<std::size_t>(chain_)].push_back(s);
    }
    ++iteration_;
    if (iteration_ == cfg_.warmup || iteration_ == cfg_.warmup + cfg_.draws) record_elapsed();  // (warm-up 0: at the end)
    if (cfg_.refresh > 0 &&
        (iteration_ == 1 || iteration_ % cfg_.refresh == 0 || iteration_ == cfg_.warmup + cfg_.draws))
      report_progress(cfg_, nuts_progress{chain_number(), iteration_, cfg_.warmup + cfg_.draws, iteration_ <= cfg_.warmup});
    if (done() && !pool_pending_) finish();
  }

  /// Whether the chain's last transition closed a metric window whose after_pool has not run:
  /// with pool_metric its metric waits for the others' (the executor holds it until pool_chains
  /// has run); with meet_at_windows (restart_stuck_chains, Stan's windows) it has its metric, and
  /// the executor takes its snapshot and runs after_pool at once (the watch, below).
  [[nodiscard]] bool pool_pending() const { return pool_pending_; }
  /// Without pool_metric, restart_stuck_chains checks the chains at each metric window's end all
  /// the same where the executor can (the CPU executor's program_counter schedule, two chains or
  /// more, Stan's windows), so that a stuck chain is caught during warm-up and not only after the
  /// run: the watch below. A window's end then leaves the new metric's check and Stan's step-size
  /// heuristic to after_pool (pool_pending), which the executor runs after take_snapshot, on the
  /// same state with the same stream as at the window's end: a chain that is not stuck draws what
  /// it would have drawn without the check, bit for bit.
  void meet_at_windows(bool on) { meets_ = on && !cfg_.pool_metric; }

  /// The chains' pooled metric (all of them pool_pending(); in chain order): written by the
  /// merged estimate, then each chain's after_new_metric (the check, Stan's heuristic from its
  /// point with its own stream). A chain whose step that fails throws from here, after the
  /// others have their metric; the chain is then the caller's to drop.
  ///
  /// With restart_stuck_chains (and Stan's windows), the pool is where warm-up finds a stuck
  /// chain — the rule find_stuck_chains applies at the end of a run, on the chains' state now:
  /// its step size under 10⁻³ of the largest and its log density below every other chain's that
  /// is not so small. Such a chain's window is left out of the pool (its draws would pull the
  /// merged moments towards the region it is stuck in), and it takes the point, step size and
  /// pooled metric of the next chain in chain order that is not stuck, then goes on with its own
  /// stream (after_pool: Stan's heuristic and dual averaging from there). Without pool_metric
  /// the rule runs without holding the chains (the watch, below), with what the same rule at a
  /// meeting would give: a stuck chain takes the other's point, step size and metric (its own
  /// window's metric, computed from the region it is stuck in, is neither checked nor used).
  /// (For pool_metric only: the executor calls it with cfg.pool_metric.)
  static void pool_chains(const std::vector<nuts_chain*>& chains) {
    if (chains.empty()) return;
    std::vector<nuts_chain*> pooled = chains;
    std::vector<std::pair<nuts_chain*, nuts_chain*>> restarts;  // (stuck, from)
    const nuts_config& cfg = chains.front()->cfg_;
    if (cfg.restart_stuck_chains && chains.size() >= 2 && cfg.metric_estimator != metric_estimator::nutpie) {
      restarts = stuck_among(chains, [](const nuts_chain& c) { return std::pair{c.step_size_, c.log_density_}; });
      pooled.clear();
      for (nuts_chain* c : chains)
        if (std::none_of(restarts.begin(), restarts.end(), [c](const auto& r) { return r.first == c; }))
          pooled.push_back(c);
    }
    std::vector<metric_adaptation<double>*> estimates;
    std::vector<double*> metrics;
    for (nuts_chain* c : pooled) {
      estimates.push_back(&c->metric_adapt_);
      metrics.push_back(c->inv_metric_.data());
    }
    std::vector<double> scratch(metric_adaptation<double>::pool_scratch_size(estimates.data(), estimates.size()));
    metric_adaptation<double>::pool(estimates.data(), estimates.size(), metrics.data(), scratch.data());
    for (auto& [stuck, from] : restarts) stuck->restart_from(*from);
  }
  /// This chain was stuck at a pool (pool_chains): it takes the state of `other` (which has just
  /// pooled): point, gradient, log density, step size and metric; its own window is dropped.
  void restart_from(const nuts_chain& other) {
    q_ = other.q_;
    grad_ = other.grad_;
    log_density_ = other.log_density_;
    step_size_ = other.step_size_;
    inv_metric_ = other.inv_metric_;  // (low rank: its matrix follows in after_pool's take_new_metric)
    metric_adapt_.discard_window();
    fit_.warmup_restarted_from[static_cast<std::size_t>(chain_)] = other.chain_;
    fit_.warmup_restarted_at[static_cast<std::size_t>(chain_)] = iteration_ - 1;
  }

  /// The rule that finds stuck chains (find_stuck_chains' rule, on the chains' state at a
  /// window's end: `at(chain)` gives its step size and log density there), over `chains` in
  /// chain order: (stuck, the chain it takes the state of) pairs — a chain whose step size is
  /// under 10⁻³ of the largest and whose log density is below every chain's that is not so
  /// small; it takes the state of the next chain in chain order whose step is not small.
  template <class At>
  static std::vector<std::pair<nuts_chain*, nuts_chain*>> stuck_among(const std::vector<nuts_chain*>& chains, At at) {
    std::vector<std::pair<nuts_chain*, nuts_chain*>> restarts;
    const std::size_t n = chains.size();
    if (n < 2) return restarts;
    std::vector<std::pair<double, double>> state(n);  // (step size, log density)
    double largest = 0;
    for (std::size_t i = 0; i < n; ++i) {
      state[i] = at(*chains[i]);
      largest = std::max(largest, state[i].first);
    }
    std::vector<bool> small(n);
    double lowest = INFINITY;  // the lowest log density of the chains whose step is not small
    bool any_normal = false;   // (a chain to take a state from)
    for (std::size_t i = 0; i < n; ++i) {
      small[i] = !(state[i].first >= 1e-3 * largest);
      any_normal = any_normal || !small[i];
      if (!small[i]) lowest = std::min(lowest, state[i].second);
    }
    if (!any_normal) return restarts;
    for (std::size_t i = 0; i < n; ++i) {
      if (!small[i] || !(state[i].second < lowest)) continue;
      std::size_t from = (i + 1) % n;
      while (small[from]) from = (from + 1) % n;
      restarts.emplace_back(chains[i], chains[from]);
    }
    return restarts;
  }

  // ---- The watch: restart_stuck_chains without waiting (docs/nuts.md, "Where the chains start").
  // With meet_at_windows the CPU executor does not hold a chain at a metric window's end: the
  // chain keeps what the rule reads and what a restart needs (take_snapshot, before after_pool),
  // and goes on at once, as it would without the rule. When every unfinished chain has closed
  // that window, the rule runs on the snapshots (restart_stuck_at_window); a stuck chain, wherever
  // it is by then — further in warm-up, or drawing — goes back to its own snapshot (its stream's
  // position, its iteration, the state of its metric estimate, the draws it had recorded) and
  // takes the other chain's (apply_restart): what it would have done had every chain waited
  // there, bit for bit. (The executor holds a chain that has drawn its last draw until every
  // window's rule has run.)

  /// The metric windows this chain has closed (with meet_at_windows).
  [[nodiscard]] int windows_closed() const { return windows_closed_; }
  /// Whether the chain holds its snapshot of window w.
  [[nodiscard]] bool has_snapshot(int w) const {
    return w >= 0 && static_cast<std::size_t>(w) < snapshots_.size() && snapshots_[static_cast<std::size_t>(w)].window == w;
  }
  /// Whether the chain holds a snapshot of window w or a later one.
  [[nodiscard]] bool has_snapshot_from(int w) const {
    for (std::size_t k = static_cast<std::size_t>(std::max(w, 0)); k < snapshots_.size(); ++k)
      if (snapshots_[k].window == static_cast<int>(k)) return true;
    return false;
  }
  /// Drops the snapshots of windows w and after (a chain restarted before them, or failed).
  void forget_snapshots_from(int w) {
    for (std::size_t k = static_cast<std::size_t>(std::max(w, 0)); k < snapshots_.size(); ++k) release_snapshot(static_cast<int>(k));
  }
  /// Drops the snapshot of window w and frees its memory (its rule has run and needs it no more).
  void release_snapshot(int w) {
    if (w < 0 || static_cast<std::size_t>(w) >= snapshots_.size()) return;
    window_snapshot& s = snapshots_[static_cast<std::size_t>(w)];
    s.window = -1;
    std::vector<double>().swap(s.q);
    std::vector<double>().swap(s.grad);
    std::vector<double>().swap(s.inv_metric);
    s.metric.reset();
  }
  /// At the end of its metric window `window` (pool_pending(), before after_pool()): what the
  /// rule reads (step size, log density) and what a restart needs, this chain's own (its
  /// stream, iteration, metric estimate and the draws recorded) and another's (its point,
  /// gradient and new metric).
  void take_snapshot(int window) {
    if (snapshots_.size() <= static_cast<std::size_t>(window)) snapshots_.resize(static_cast<std::size_t>(window) + 1);
    window_snapshot& s = snapshots_[static_cast<std::size_t>(window)];
    s.window = window;
    s.windows_closed = windows_closed_;
    s.iteration = iteration_;
    s.recorded = fit_.stats[static_cast<std::size_t>(chain_)].size();
    s.step_size = step_size_;
    s.log_density = log_density_;
    s.rng = rng_;
    s.q = q_;
    s.grad = grad_;
    s.inv_metric = inv_metric_;
    s.metric = metric_adapt_;
  }
  /// The rule over `chains` (each with its snapshot of window w, in chain order): each stuck
  /// chain's restart scheduled from the other's snapshot; returns the stuck chains. The other
  /// chains' snapshots of w are released (a stuck chain's, after apply_restart).
  static std::vector<nuts_chain*> restart_stuck_at_window(const std::vector<nuts_chain*>& chains, int w) {
    const auto at = [w](const nuts_chain& c) {
      const window_snapshot& s = c.snapshots_[static_cast<std::size_t>(w)];
      return std::pair{s.step_size, s.log_density};
    };
    std::vector<nuts_chain*> stuck;
    for (auto& [chain, from] : stuck_among(chains, at)) {
      chain->schedule_restart(*from, w);
      stuck.push_back(chain);
    }
    for (nuts_chain* c : chains)
      if (std::find(stuck.begin(), stuck.end(), c) == stuck.end()) c->release_snapshot(w);
    return stuck;
  }
  /// Whether restart_stuck_at_window found this chain stuck and apply_restart has not run.
  [[nodiscard]] bool restart_pending() const { return restart_pending_.load(std::memory_order_acquire); }
  /// The chain back at its snapshot's window end, from the state of the chain the rule chose
  /// (its snapshot of the same window): then after_pool (Stan's heuristic from there, with this
  /// chain's own stream). Whatever the chain did since its snapshot is dropped (draws included).
  void apply_restart() {
    restart_pending_.store(false, std::memory_order_relaxed);
    const window_snapshot& own = snapshots_[static_cast<std::size_t>(restart_.window)];
    rng_ = own.rng;
    iteration_ = own.iteration;
    windows_closed_ = own.windows_closed;
    metric_adapt_ = *own.metric;
    metric_adapt_.discard_window();  // (the draws it added since, and its own window's)
    fit_.values[static_cast<std::size_t>(chain_)].resize(own.recorded * target_.constrained_dim());
    fit_.stats[static_cast<std::size_t>(chain_)].resize(own.recorded);
    q_ = restart_.q;
    grad_ = restart_.grad;
    log_density_ = restart_.log_density;
    step_size_ = restart_.step_size;
    inv_metric_ = restart_.inv_metric;
    fit_.warmup_restarted_from[static_cast<std::size_t>(chain_)] = restart_.from;
    fit_.warmup_restarted_at[static_cast<std::size_t>(chain_)] = own.iteration - 1;
    std::vector<double>().swap(restart_.q);  // (held since the rule; its copies are the chain's now)
    std::vector<double>().swap(restart_.grad);
    std::vector<double>().swap(restart_.inv_metric);
    release_snapshot(restart_.window);  // (no other thread reads a window whose rule has run)
    after_pool();
  }

  /// After pool_chains: this chain's check of its new metric and its step size.
  void after_pool() {
    pool_pending_ = false;
    chain_streams<1> streams;
    streams.seed = cfg_.seed;
    streams.set_lane(0, rng_);
    const warmup_result r = after_new_metric(
        iteration_ - 1, cfg_.warmup, step_size_, step_adapt_, metric_adapt_, inv_metric_.data(),
        chol_.empty() ? nullptr : chol_.data(), q_.data(), grad_.data(), log_density_, d_, streams,
        [&](const double* q, double* g) { return evaluate(q, g); }, scratch_.data());
    rng_ = streams.lane(0);
    if (r.status != nuts_status::ok) throw std::runtime_error(warmup_error(chain_number() - 1, r, inv_metric_, cfg_.metric == metric_kind::low_rank));
    take_new_metric();
    if (done()) finish();
  }

 private:

  double evaluate(const double* q, double* g) {
    return target_.value_and_gradient(q, g, workspace_.empty() ? nullptr : workspace_.data());
  }

  // Stan's heuristic from the current point, with the chain's stream, in double.
  void find_step_size() {
    const nuts_status s = try_step_size();
    if (s != nuts_status::ok) throw_status(s, "chain " + std::to_string(chain_number()));
  }
  /// Stan's step-size heuristic from step_size_ at the chain's point; step_size_ is its result
  /// when the status is ok.
  nuts_status try_step_size() {
    chain_streams<1> streams;
    streams.seed = cfg_.seed;
    streams.set_lane(0, rng_);
    double eps = step_size_;
    const nuts_status s = find_initial_step_size(
        &eps, q_.data(), grad_.data(), log_density_, inv_metric_.data(), chol_.empty() ? nullptr : chol_.data(),
        cfg_.metric, d_, streams, [&](const double* q, double* g) { return evaluate(q, g); }, scratch_.data());
    rng_ = streams.lane(0);
    if (s == nuts_status::ok) step_size_ = eps;
    return s;
  }

  // The elapsed times of nuts_fit::warmup_seconds and sampling_seconds, at the end of the last
  // warm-up iteration and of the last draw (again after a restart from a snapshot).
  void record_elapsed() {
    const auto c = static_cast<std::size_t>(chain_);
    if (c >= fit_.warmup_seconds.size() || c >= fit_.sampling_seconds.size()) return;
    const double since = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    if (iteration_ == cfg_.warmup) fit_.warmup_seconds[c] = since;
    if (iteration_ == cfg_.warmup + cfg_.draws) {
      if (cfg_.warmup == 0) fit_.warmup_seconds[c] = 0;
      fit_.sampling_seconds[c] = since - fit_.warmup_seconds[c];
    }
  }

  void finish() {
    fit_.step_size[static_cast<std::size_t>(chain_)] = step_size_;
    record_metric(fit_, static_cast<std::size_t>(chain_), cfg_.metric, inv_metric_.data(), inv_metric_.size(), d_);
  }

  const Target& target_;
  const nuts_config& cfg_;
  int chain_;
  nuts_fit& fit_;
  std::size_t d_;
  counter_rng rng_;
  std::chrono::steady_clock::time_point started_{};  // when initialise() ran (record_elapsed)
  step_size_adaptation<double> step_adapt_;
  metric_adaptation<double> metric_adapt_;
  std::vector<double> adapt_buffer_, inv_metric_, chol_, q_, grad_, scratch_, workspace_;
  // metric = low_rank (inv_metric_ holds its factors): the d × d matrix a one-lane kernel
  // applies where 2k ≥ d (then O(d·kmax) values too), so that loading it into a lane costs no
  // O(d²k); empty where 2k < d.
  std::vector<double> low_rank_matrix_;
  void refresh_low_rank_matrix() {
    const std::size_t d = d_;
    if (cfg_.metric != metric_kind::low_rank || 2 * static_cast<std::size_t>(inv_metric_[0]) < d) {
      low_rank_matrix_.clear();
      return;
    }
    low_rank_matrix_.assign(d * d, 0.0);
    low_rank_dense(inv_metric_.data(), d, low_rank_matrix_.data());
  }

  // A window (or the pooled windows) gave a new metric: the lanes reload it.
  void take_new_metric() {
    ++metric_version_;
    refresh_low_rank_matrix();
  }
  double log_density_ = 0, step_size_ = 1;
  unsigned metric_version_ = 0;
  int iteration_ = 0;
  bool initialised_ = false, pool_pending_ = false;
  bool meets_ = false;      // meet_at_windows: the watch's check at each window's end without pool_metric
  int windows_closed_ = 0;  // (meet_at_windows) the metric windows closed
  // The watch (above): the chain's state at each window's end, and a restart the rule
  // scheduled (written by the thread that runs the rule, under the executor's lock; the chain's
  // own thread reads it after restart_pending()).
  struct window_snapshot {
    int window = -1, windows_closed = 0, iteration = 0;
    std::size_t recorded = 0;  // draws recorded (fit_.stats) at the window's end
    double step_size = 0, log_density = 0;
    counter_rng rng{0};
    std::vector<double> q, grad, inv_metric;
    std::optional<metric_adaptation<double>> metric;
  };
  std::vector<window_snapshot> snapshots_;  // by window
  struct scheduled_restart {
    int from = -1, window = 0;
    double step_size = 0, log_density = 0;
    std::vector<double> q, grad, inv_metric;
  } restart_;
  std::atomic<bool> restart_pending_{false};
  void schedule_restart(const nuts_chain& from, int w) {
    const window_snapshot& s = from.snapshots_[static_cast<std::size_t>(w)];
    restart_.from = from.chain_;
    restart_.window = w;
    restart_.step_size = s.step_size;
    restart_.log_density = s.log_density;
    restart_.q = s.q;
    restart_.grad = s.grad;
    restart_.inv_metric = s.inv_metric;
    restart_pending_.store(true, std::memory_order_release);
  }
};

}  // namespace tyche::samplers::detail
