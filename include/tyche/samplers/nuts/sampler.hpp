// tyche/samplers/nuts/sampler.hpp — nuts(model, config): warm-up and sampling of several chains
// with the unrolled transition, chains spread over threads. Chain c draws from the Philox stream
// (seed, c), so its draws are the same whatever the number of chains or threads.
//
// This first driver runs one chain per thread with the double-precision transition; the
// lockstep driver that runs chains as SIMD lanes (each at its own point of the state machine) is
// the next step (docs/nuts.md).
#pragma once
#include <tyche/config.hpp>
#include <tyche/random/philox.hpp>
#include <tyche/samplers/nuts/adaptation.hpp>
#include <tyche/samplers/nuts/transition.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace tyche {

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
};

/// The result of nuts(): per chain, the draws on the constrained scale and Stan's sampler
/// statistics, plus the adapted step size and metric.
struct nuts_fit {
  std::vector<std::string> names;  // parameter names, Stan style
  int chains = 0, draws = 0;
  std::vector<std::vector<double>> values;                    // [chain][draw * dim + k]
  std::vector<std::vector<samplers::transition_stats>> stats;     // [chain][draw]
  std::vector<double> step_size;                              // [chain]
  std::vector<std::vector<double>> inv_metric;                // [chain]

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
    z.p.resize(z.q.size());
    for (std::size_t i = 0; i < z.q.size(); ++i) z.p[i] = rng.normal() / std::sqrt(tr.inv_metric()[i]);
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

template <class Model>
void run_chain(const Model& m, const nuts_config& cfg, int chain, nuts_fit& fit) {
  chain_rng rng{counter_rng(cfg.seed, static_cast<std::uint64_t>(chain))};
  const model_density<Model> target{m};
  const std::size_t d = m.dim();
  samplers::phase_point z;
  z.grad.resize(d);
  // Initial point: uniform(−r, r) on θ, up to 100 attempts at a finite density and gradient.
  for (int attempt = 0;; ++attempt) {
    z.q = m.initial_point(rng, cfg.init_radius);
    z.log_density = target(z.q, z.grad);
    bool finite = std::isfinite(z.log_density);
    for (double g : z.grad) finite = finite && std::isfinite(g);
    if (finite) break;
    if (attempt == 99)
      throw std::runtime_error("tyche::nuts: chain " + std::to_string(chain + 1) +
                               ": no initial point with a finite log density and gradient in "
                               "100 attempts");
  }
  samplers::adaptation_config ac;
  ac.delta = cfg.adapt_delta;
  samplers::unrolled_transition<model_density<Model>, chain_rng> tr(target, std::vector<double>(d, 1.0),
                                                                cfg.max_depth);
  samplers::step_size_adaptation step_adapt(ac);
  samplers::metric_adaptation metric_adapt(d, cfg.warmup, ac);
  double eps = initial_step_size(tr, z, cfg.init_step_size, rng);
  step_adapt.set_mu(std::log(10 * eps));
  std::vector<double> inv_metric(d, 1.0);
  auto& values = fit.values[static_cast<std::size_t>(chain)];
  auto& stats = fit.stats[static_cast<std::size_t>(chain)];
  values.reserve(static_cast<std::size_t>(cfg.draws) * d);
  for (int it = 0; it < cfg.warmup + cfg.draws; ++it) {
    const auto s = tr(z, eps, rng);
    if (it < cfg.warmup) {
      step_adapt.learn(eps, s.accept_stat);
      if (metric_adapt.learn(inv_metric, z.q)) {
        tr.set_inv_metric(inv_metric);
        eps = initial_step_size(tr, z, eps, rng);
        step_adapt.set_mu(std::log(10 * eps));
        step_adapt.restart();
      }
      if (it == cfg.warmup - 1) step_adapt.complete(eps);
    } else {
      const auto x = m.constrain(z.q);
      values.insert(values.end(), x.begin(), x.end());
      stats.push_back(s);
    }
  }
  fit.step_size[static_cast<std::size_t>(chain)] = eps;
  fit.inv_metric[static_cast<std::size_t>(chain)] = tr.inv_metric();
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
  nuts_fit fit;
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
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(cfg.chains));
  auto worker = [&](int first) {
    for (int c = first; c < cfg.chains; c += threads) {
      try {
        detail::run_chain(m, cfg, c, fit);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(c)] = std::make_exception_ptr(
            std::runtime_error(std::string(e.what()) + " (chain " + std::to_string(c + 1) + ")"));
      } catch (...) {
        errors[static_cast<std::size_t>(c)] = std::current_exception();
      }
    }
  };
  if (threads == 1) {
    worker(0);
  } else {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(worker, t);
    for (auto& th : pool) th.join();
  }
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return fit;
}

}  // namespace tyche
