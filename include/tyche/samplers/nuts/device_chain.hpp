// tyche/samplers/nuts/device_chain.hpp — one chain per thread of a device: the chain's whole life
// after initialisation — transitions, warm-up, recording of draws — as kernel code (no
// allocation, no exception, TYCHE_HD), for the CUDA executor (backends/cuda/nuts.cuh: one chain
// per CUDA thread) and for its emulation on the host (device_executor.hpp: the same function
// called for one chain after another), so that the code a GPU runs is also run, and checked, by
// the test suite on any machine.
//
// A chain's state between launches is a device_chain (trivially copyable) and its part of one
// allocation of doubles laid out by device_chain_layout: the kernel's buffer, the metric
// estimate's buffer, the inverse metric (and its Cholesky factor; the low-rank metric as its
// factors, the form the kernel applies, with the d × d matrix where 2k ≥ d), the point and gradient, the
// step-size heuristic's scratch and the model's workspace. Each launch runs every chain up to a
// given iteration and writes the draws of that stretch (unconstrained θ and the sampler
// statistics) to an output block, which the host copies back and constrains.
#pragma once
#include <tyche/config.hpp>
#include <tyche/random/philox.hpp>
#include <tyche/samplers/nuts/adaptation.hpp>
#include <tyche/samplers/nuts/chain_streams.hpp>
#include <tyche/samplers/nuts/kernel.hpp>
#include <tyche/samplers/nuts/warmup.hpp>

#include <cstddef>
#include <cstdint>

namespace tyche::samplers {

/// Where a chain's buffers sit in its part of the executor's allocation, in values of double.
struct device_chain_layout {
  std::size_t kernel = 0, adapt = 0, metric = 0, chol = 0, matrix = 0, q = 0, grad = 0, scratch = 0, workspace = 0,
              best = 0;
  std::size_t total = 0;  // doubles per chain
  std::size_t metric_size = 0, workspace_size = 0;
  std::size_t kmax = 0;  // low rank: the most directions (metric holds the factors)
  bool dense = false, low_rank = false;

  /// kmax: the low-rank metric's most directions (low_rank_kmax; 0 for the other metrics).
  TYCHE_HD static device_chain_layout make(std::size_t d, int max_depth, metric_kind kind, std::size_t workspace,
                                           std::size_t adapt_size, std::size_t kmax) {
    device_chain_layout l;
    l.dense = kind == metric_kind::dense;
    l.low_rank = kind == metric_kind::low_rank;
    l.kmax = l.low_rank ? (kmax < d ? kmax : d) : 0;
    l.metric_size = l.low_rank ? low_rank_factors_size(d, l.kmax) : l.dense ? d * d : d;
    std::size_t at = 0;
    auto take = [&](std::size_t n) {
      const std::size_t here = at;
      at += (n + 7) / 8 * 8;  // each buffer starts on 64 bytes
      return here;
    };
    l.kernel = take(nuts_kernel<double>::storage_size(d, max_depth, kind, l.kmax));
    l.adapt = take(adapt_size);  // metric_adaptation::buffer_size()
    l.metric = take(l.metric_size);
    l.chol = take(l.dense ? d * d : 0);
    l.matrix = take(l.low_rank && 2 * l.kmax >= d ? d * d : 0);  // low_rank_dense of the factors where 2k ≥ d
    l.q = take(d);
    l.grad = take(d);
    l.scratch = take(4 * d);
    l.workspace = take(workspace);
    l.workspace_size = workspace;
    l.best = take(2 * d);  // device_chain_initialise: the best rejected initial point and its gradient
    l.total = at;
    return l;
  }
};

/// What is the same for every chain of a run (and of a launch: until, first_draw).
struct device_run {
  std::uint64_t seed = 0;
  std::size_t d = 0;
  int warmup = 0, draws = 0, max_depth = 10;
  metric_kind metric = metric_kind::diagonal;
  device_chain_layout layout;
  int until = 0;       // run each chain's iterations below this one (warm-up included)
  int first_draw = 0;  // the draw whose values go to row 0 of the output block
  int block = 0;       // draws per chain the output block holds
  // device_chain_initialise: nuts_config's init_radius and init_step_size, min_initial_step_size,
  // and whether nutpie's first metric is tried (metric_estimator nutpie, warm-up ≥ 20, diagonal).
  double init_radius = 2, init_step_size = 1, min_init_step_size = 1e-8;
  bool nutpie_first_metric = false;
};

/// A chain's state between launches.
struct device_chain {
  step_size_adaptation<double> step;
  metric_adaptation<double> metric{0, 0};  // bound to the chain's adapt buffer by device_chain_setup
  std::uint64_t stream = 0, position = 0;  // the chain's Philox stream and its position
  double step_size = 1, log_density = 0;
  long long leapfrogs = 0;  // Σ n_leapfrog, warm-up included
  int iteration = 0;        // iterations done
  nuts_status status = nuts_status::ok;
  bool bad_metric = false;  // status is the adapted metric's (element or pivot `where`)
  std::size_t where = 0;
};

/// Low rank: the d × d matrix of the chain's factors (at l.metric) into l.matrix where 2k ≥ d,
/// for the kernel's one-lane form (nuts_kernel::set_metric_low_rank); returns it, or null.
TYCHE_HD inline const double* device_low_rank_matrix(double* buffer, const device_chain_layout& l, std::size_t d) {
  if (!l.low_rank || 2 * static_cast<std::size_t>(buffer[l.metric]) < d) return nullptr;
  low_rank_dense(buffer + l.metric, d, buffer + l.matrix);
  return buffer + l.matrix;
}

/// Puts a chain's initial values into its buffer: `init` holds θ (d), the gradient (d), the
/// inverse metric (metric_size: low rank, its factors) and, dense, its Cholesky factor (d²);
/// binds the metric estimate.
TYCHE_HD inline void device_chain_setup(device_chain& c, double* buffer, const device_run& r, const double* init) {
  const device_chain_layout& l = r.layout;
  const std::size_t d = r.d;
  for (std::size_t i = 0; i < d; ++i) buffer[l.q + i] = init[i];
  for (std::size_t i = 0; i < d; ++i) buffer[l.grad + i] = init[d + i];
  for (std::size_t k = 0; k < l.metric_size; ++k) buffer[l.metric + k] = init[2 * d + k];
  if (l.dense)
    for (std::size_t k = 0; k < d * d; ++k) buffer[l.chol + k] = init[2 * d + l.metric_size + k];
  const int bad = l.low_rank ? low_rank_check(buffer + l.metric, d) : 0;
  if (bad != 0) c.status = bad == 2 ? nuts_status::metric_not_positive_definite : nuts_status::invalid_metric;
  else if (l.low_rank) device_low_rank_matrix(buffer, l, d);
  c.metric.bind(buffer + l.adapt);
}

/// A chain's random initialisation on the device, what nuts_chain::initialise does on the host
/// without given initial values or metric (samplers/nuts/chain.hpp: random_initial_point, and
/// nutpie's first metric), with the same draws of the chain's stream, so that the chain starts
/// where the host would start it: the identity metric; up to 100 points θ uniform on
/// (−init_radius, init_radius) until the log density and gradient are finite and Stan's step-size
/// heuristic finds a step of at least min_init_step_size (else the point with the largest step);
/// then, with nutpie_first_metric, 1/|∇ log p| as the metric if the heuristic finds a step with
/// it. Writes the buffer's point, gradient, metric (and Cholesky factor, low-rank factors) and
/// the chain's step size, log density, dual-averaging μ and stream position, binds the metric
/// estimate. c.stream is the chain's stream, set by the caller, as are c.step and c.metric. A
/// chain that cannot start gets a status that is not ok (the host then repeats the chain's
/// initialisation, which says why in words).
TYCHE_EXEC_CHECK_DISABLE
template <class Target>
TYCHE_HD void device_chain_initialise(const Target& target, device_chain& c, double* buffer, const device_run& r) {
  const device_chain_layout& l = r.layout;
  const std::size_t d = r.d;
  double* q = buffer + l.q;
  double* grad = buffer + l.grad;
  double* metric = buffer + l.metric;
  double* chol = l.dense ? buffer + l.chol : nullptr;
  double* workspace = l.workspace_size > 0 ? buffer + l.workspace : nullptr;
  double* scratch = buffer + l.scratch;
  double* best_q = buffer + l.best;
  double* best_grad = best_q + d;
  for (std::size_t k = 0; k < l.metric_size; ++k) metric[k] = l.dense ? 0.0 : 1.0;
  if (l.low_rank) low_rank_identity(metric, d, l.kmax);
  if (l.dense)
    for (std::size_t i = 0; i < d; ++i) {
      for (std::size_t j = 0; j < d; ++j) chol[i * d + j] = 0.0;
      metric[i * d + i] = chol[i * d + i] = 1.0;
    }
  c.metric.bind(buffer + l.adapt);
  c.iteration = 0;
  c.leapfrogs = 0;
  c.status = nuts_status::ok;
  counter_rng rng(r.seed, c.stream, 0);
  double log_density = 0, step = r.init_step_size;
  auto evaluate = [&](const double* at, double* g) { return target(at, g, workspace); };
  // Stan's heuristic from `step` at q; `step` is its result when the status is ok.
  auto try_step = [&](double& eps) {
    chain_streams<1> streams;
    streams.seed = r.seed;
    streams.set_lane(0, rng);
    double e = eps;
    const nuts_status s =
        find_initial_step_size(&e, q, grad, log_density, metric, chol, r.metric, d, streams, evaluate, scratch);
    rng = streams.lane(0);
    if (s == nuts_status::ok) eps = e;
    return s;
  };
  nuts_status failure = nuts_status::non_finite_start;  // no finite point: the host says which
  double best_log_density = 0, best_step = -1;
  bool found = false;
  for (int attempt = 0; attempt < 100 && !found; ++attempt) {
    for (std::size_t i = 0; i < d; ++i) q[i] = rng.uniform(-r.init_radius, r.init_radius);
    log_density = evaluate(q, grad);
    bool finite = log_density - log_density == 0;
    for (std::size_t i = 0; i < d; ++i) finite = finite && grad[i] - grad[i] == 0;
    if (!finite) continue;
    step = r.init_step_size;
    const nuts_status s = try_step(step);
    if (r.init_radius == 0 || (s != nuts_status::ok && s != nuts_status::step_size_too_small)) {
      c.status = s;  // θ = 0 every time: Stan's rule, the first finite point; or the chain's error
      found = true;
      break;
    }
    if (s == nuts_status::step_size_too_small) {
      failure = s;
      continue;
    }
    if (step >= r.min_init_step_size) {
      found = true;
      break;
    }
    if (step > best_step) {
      best_step = step;
      best_log_density = log_density;
      for (std::size_t i = 0; i < d; ++i) {
        best_q[i] = q[i];
        best_grad[i] = grad[i];
      }
    }
  }
  if (!found) {
    if (best_step <= 0) {
      c.status = failure;
      return;
    }
    for (std::size_t i = 0; i < d; ++i) {
      q[i] = best_q[i];
      grad[i] = best_grad[i];
    }
    log_density = best_log_density;
    step = best_step;
  }
  if (c.status != nuts_status::ok) return;
  if (r.nutpie_first_metric) {  // kept only if the heuristic finds a step with it
    const double before = step;
    metric_adaptation<double>::metric_from_gradient(metric, grad, d);
    step = r.init_step_size;
    if (try_step(step) != nuts_status::ok) {
      for (std::size_t i = 0; i < d; ++i) metric[i] = 1.0;
      step = before;
    }
  }
  c.step.set_mu(::log(10 * step));
  c.step_size = step;
  c.log_density = log_density;
  c.position = rng.position();
}

/// Values of `init` per chain for device_chain_setup.
TYCHE_HD inline std::size_t device_chain_init_size(const device_chain_layout& l, std::size_t d) {
  return 2 * d + l.metric_size + (l.dense ? d * d : 0);
}

/// Runs chain `c` (its buffer at `buffer`) from its iteration up to r.until: transitions of the
/// NUTS kernel with target(q, grad, workspace) → log p, the warm-up after each warm-up
/// transition (warmup_step, as nuts_chain does on the host), and the draws in
/// [r.first_draw, r.first_draw + r.block) written to out_q (r.block × d, unconstrained θ) and
/// out_stats (r.block). A chain whose status is not ok does nothing; a failure sets it and
/// stops the chain.
TYCHE_EXEC_CHECK_DISABLE
template <class Target>
TYCHE_HD void device_chain_run(const Target& target, device_chain& c, double* buffer, const device_run& r,
                               double* out_q, transition_stats* out_stats) {
  if (c.status != nuts_status::ok || c.iteration >= r.until) return;
  const device_chain_layout& l = r.layout;
  const std::size_t d = r.d;
  double* q = buffer + l.q;
  double* grad = buffer + l.grad;
  double* inv_metric = buffer + l.metric;
  double* chol = l.dense ? buffer + l.chol : nullptr;
  double* workspace = l.workspace_size > 0 ? buffer + l.workspace : nullptr;
  nuts_kernel<double> k;
  nuts_status s = k.bind(buffer + l.kernel, l.adapt - l.kernel, d, r.max_depth, r.metric, l.kmax);
  // (low rank: the matrix is written when the metric changes, so a launch only reads it)
  auto matrix = [&]() -> const double* {
    return 2 * static_cast<std::size_t>(inv_metric[0]) >= d ? buffer + l.matrix : nullptr;
  };
  if (s == nuts_status::ok)
    s = l.low_rank ? k.set_metric_low_rank(0, inv_metric, matrix()) : k.set_metric(0, inv_metric, chol);
  if (s != nuts_status::ok) {
    c.status = s;
    return;
  }
  k.rng().seed = r.seed;
  k.set_stream(0, counter_rng(r.seed, c.stream, c.position));
  k.set_point(0, q, grad, c.log_density);
  auto log_density = [&](const double* at, double* g) { return target(at, g, workspace); };
  while (c.iteration < r.until) {
    s = k.set_step_size(0, c.step_size);
    if (s == nuts_status::ok) {
      const bool start[1] = {true};
      s = k.begin(start);
      if (s == nuts_status::ok && !k.running(0)) s = nuts_status::non_finite_start;
    }
    if (s != nuts_status::ok) {
      c.status = s;
      break;
    }
    bool ended[1] = {false};
    while (!ended[0]) {
      k.set_pending(target(k.pending_q(), k.pending_grad(), workspace));
      k.resume(ended);
    }
    const transition_stats& stats = k.stats(0);
    c.leapfrogs += stats.n_leapfrog;
    k.get_point(0, q, grad);
    c.log_density = k.log_density(0);
    if (c.iteration < r.warmup) {
      const warmup_result w = warmup_step(c.iteration, r.warmup, c.step_size, stats.accept_stat, c.step, c.metric,
                                          inv_metric, chol, q, grad, c.log_density, d, k.rng(), log_density,
                                          buffer + l.scratch);
      if (w.status != nuts_status::ok) {
        c.status = w.status;
        c.bad_metric = w.bad_metric;
        c.where = w.where;
        break;
      }
      if (w.metric_changed) {
        if (l.low_rank) {
          s = k.set_metric_low_rank(0, inv_metric, device_low_rank_matrix(buffer, l, d));
        } else {
          s = k.set_metric(0, inv_metric, chol);
        }
        if (s != nuts_status::ok) {
          c.status = s;
          break;
        }
      }
    } else {
      const int row = c.iteration - r.warmup - r.first_draw;
      if (row >= 0 && row < r.block) {
        for (std::size_t i = 0; i < d; ++i) out_q[static_cast<std::size_t>(row) * d + i] = q[i];
        out_stats[row] = stats;
      }
    }
    ++c.iteration;
  }
  c.position = k.stream(0).position();
}

}  // namespace tyche::samplers
