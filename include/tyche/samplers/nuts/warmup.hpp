// tyche/samplers/nuts/warmup.hpp — what a chain does after each warm-up transition, as kernel
// code (no allocation, no exception, TYCHE_HD): dual averaging of the step size, the windowed
// metric, and at the end of a metric window the new metric's check and Stan's step-size
// heuristic from the current point. The host chain (chain.hpp, nuts_chain::end_iteration) and
// the device chain (device_chain.hpp, one chain per CUDA thread) both call warmup_step, so a
// chain's warm-up is the same arithmetic on every executor.
#pragma once
#include <tyche/config.hpp>
#include <tyche/samplers/nuts/adaptation.hpp>
#include <tyche/samplers/nuts/kernel.hpp>

#include <cstddef>

namespace tyche::samplers {

/// The outcome of warmup_step.
struct warmup_result {
  nuts_status status = nuts_status::ok;
  bool metric_changed = false;  // a window closed: the kernel must load the new metric
  bool bad_metric = false;      // status is the new metric's: `where` names its element or pivot
  bool pool_pending = false;    // a window closed and its metric waits for the other chains'
  std::size_t where = 0;
};

/// After the metric estimate has written a new inverse metric at the end of warm-up transition
/// `iteration`: its check (and Cholesky factor chol, dense; low rank: inv_metric holds the
/// factors, chol is null), and when the estimate says so
/// Stan's step-size heuristic from the current point and a restart of dual averaging; at the
/// last warm-up transition, the final step size. warmup_step's second half, and what a chain
/// does once cross-chain pooling (adaptation_config::pooled) has given it its metric.
TYCHE_EXEC_CHECK_DISABLE
template <class R, class Rng, class Target>
TYCHE_HD warmup_result after_new_metric(int iteration, int warmup, R& eps, step_size_adaptation<R>& step,
                                        const metric_adaptation<R>& metric, R* inv_metric, R* chol, const R* q,
                                        const R* grad, R logp, std::size_t d, Rng& rng, Target&& target, R* scratch) {
  warmup_result r;
  nuts_status s = nuts_status::ok;
  if (metric.low_rank()) {  // its factors: σ (where: its index) or a direction's λ
    const int bad = low_rank_check(inv_metric, d, &r.where);
    s = bad == 0 ? nuts_status::ok : bad == 1 ? nuts_status::invalid_metric : nuts_status::metric_not_positive_definite;
  } else {
    s = chol != nullptr ? cholesky_lower(inv_metric, chol, d, &r.where) : check_diagonal_metric(inv_metric, d, &r.where);
  }
  if (s != nuts_status::ok) {
    r.status = s;
    r.bad_metric = true;
    return r;
  }
  r.metric_changed = true;
  if (metric.restarts_step_size()) {
    const metric_kind kind =
        metric.low_rank() ? metric_kind::low_rank : chol != nullptr ? metric_kind::dense : metric_kind::diagonal;
    r.status = find_initial_step_size(&eps, q, grad, logp, inv_metric, chol, kind, d, rng, target, scratch);
    if (r.status != nuts_status::ok) return r;
    step.set_mu(detail::lane_log(R(10) * eps));
    step.restart();
  }
  if (iteration == warmup - 1) step.complete(eps);
  return r;
}

/// After warm-up transition `iteration` (0-based) of `warmup`, with acceptance statistic
/// accept_stat, at the point (q, grad, logp) the transition selected: updates the step size eps,
/// the step-size and metric estimates, and at the end of a metric window the inverse metric
/// (inv_metric, and its Cholesky factor chol when chol is not null: the dense metric) and, by
/// Stan's heuristic with the generator rng (W = 1) and target(q, grad) → log p, a new eps.
/// With cross-chain pooling, a window's end leaves the metric to metric_adaptation::pool() and
/// after_new_metric() (pool_pending); with `defer` (restart_stuck_chains' check at the window's
/// end without pooling: nuts_chain::meet_at_windows), the window's metric is written to
/// inv_metric and its check and step size are left to after_new_metric() (pool_pending too).
/// scratch: 4·d values.
TYCHE_EXEC_CHECK_DISABLE
template <class R, class Rng, class Target>
TYCHE_HD warmup_result warmup_step(int iteration, int warmup, R& eps, R accept_stat, step_size_adaptation<R>& step,
                                   metric_adaptation<R>& metric, R* inv_metric, R* chol, const R* q, const R* grad,
                                   R logp, std::size_t d, Rng& rng, Target&& target, R* scratch, bool defer = false) {
  step.learn(eps, accept_stat);
  if (metric.learn(inv_metric, q, grad)) {
    if (defer) {
      warmup_result r;
      r.pool_pending = true;
      return r;
    }
    return after_new_metric(iteration, warmup, eps, step, metric, inv_metric, chol, q, grad, logp, d, rng, target,
                            scratch);
  }
  warmup_result r;
  if (metric.pool_pending()) {
    r.pool_pending = true;
    return r;
  }
  if (iteration == warmup - 1) step.complete(eps);
  return r;
}

}  // namespace tyche::samplers
