// tyche/samplers/nuts/adaptation.hpp — Stan's warm-up: dual averaging of the step size (Hoffman
// & Gelman 2014, §3.2; δ = 0.8, γ = 0.05, t₀ = 10, κ = 0.75, μ = log 10ε) and windowed
// estimation of a diagonal or dense metric (init buffer 75, windows from 25 doubling, term buffer 50;
// regularised as n/(n+5)·var + 10⁻³·5/(n+5)). One deliberate difference from Stan: when the
// last metric window closes at the very end of warm-up (no term buffer), Stan restarts dual
// averaging and then ends it with no iterations, which sets the step size to exp(0) = 1; here
// the step size found after the metric update is kept.
#pragma once
#include <tyche/config.hpp>
#include <tyche/samplers/nuts/low_rank.hpp>

#include <cstddef>
#include <math.h>  // global-namespace exp, pow, sqrt, fma, which CUDA device code also provides

// Kernel code: no allocation (the metric estimate works in a buffer the caller binds), no
// exception, TYCHE_HD, over R = double or float.

namespace tyche::samplers {

/// Warm-up settings, with Stan's defaults.
struct adaptation_config {
  double delta = 0.8;  // target acceptance statistic
  double gamma = 0.05;
  double t0 = 10;
  double kappa = 0.75;
  int init_buffer = 75;
  int term_buffer = 50;
  int base_window = 25;
  /// The diagonal metric from the draws and the gradients of each window (nutpie's estimator,
  /// √(var θ / var ∇log p)) instead of the draws' variance (Stan's). Diagonal metric only.
  bool gradients = false;
  /// The low-rank + diagonal metric from each window's draws and gradients (nutpie's,
  /// samplers/nuts/low_rank.hpp), written as its factors (low_rank_factors_size(d, kmax) values:
  /// metric_adaptation::max_rank()); the windows are Stan's.
  bool low_rank = false;
  low_rank_settings low_rank_options = {};
  /// Low rank: the chains whose windows one estimate takes (pooled: all of them; else 1), and the
  /// directions the initial metric may have (d for a user's d × d matrix, k for factors, 0 for
  /// the identity or a diagonal), all kept where no window replaces it. With
  /// low_rank_options.max_rank they set kmax (metric_adaptation::max_rank()).
  std::size_t low_rank_chains = 1;
  std::size_t low_rank_init_rank = 0;
  /// nutpie's schedule for the gradient estimator (diagonal): the metric from every draw of a
  /// foreground estimate, a background estimate that replaces it every early_switch draws in the
  /// first early_window of warm-up and then in windows from main_window draws growing
  /// window_growth×; the last step_size_window of warm-up adapts the step size alone. Stan's
  /// step-size heuristic and the restart of dual averaging follow the first metric only.
  bool nutpie_schedule = false;
  double early_window = 0.3, step_size_window = 0.15, window_growth = 1.5;
  int early_switch = 10, main_window = 80;
  /// Cross-chain pooling (nuts_config::pool_metric): at a window's end (nutpie: a switch) learn()
  /// computes no metric but leaves pool_pending(); metric_adaptation::pool() then merges the
  /// windows of all the chains and writes each chain's metric. Not with low_rank.
  bool pooled = false;
};

namespace detail {

/// a·b + c, rounded the same way in every copy the compiler makes of a loop. Where the target
/// has a fused multiply-add, GCC (-O3, FMA targets) contracts a·b + c in some copies of a loop
/// and not in others: it fused the metric's regularisation below in the scalar copy of a loop
/// versioned for aliasing but not in the vectorised one, where a select stood between the
/// multiply and the add. Which copy ran depended on where the heap had put the vectors, so
/// identical nuts() calls in one process gave different metrics, and then chains. Here the
/// fusion is explicit (fma, one rounding) where the target has the instruction, and a·b + c
/// (two roundings, which no copy can fuse) where it has not: builds without FMA keep their
/// results bit for bit.
template <class R>
TYCHE_HD inline R multiply_add(R a, R b, R c) {
#if defined(FP_FAST_FMA) || defined(__FMA__) || defined(__ARM_FEATURE_FMA) || defined(__CUDA_ARCH__)
  return ::fma(a, b, c);
#else
  return a * b + c;
#endif
}

TYCHE_HD inline double adapt_exp(double x) { return ::exp(x); }
TYCHE_HD inline float adapt_exp(float x) { return ::expf(x); }
TYCHE_HD inline double adapt_sqrt(double x) { return ::sqrt(x); }
TYCHE_HD inline float adapt_sqrt(float x) { return ::sqrtf(x); }
TYCHE_HD inline double adapt_pow(double x, double y) { return ::pow(x, y); }
TYCHE_HD inline float adapt_pow(float x, float y) { return ::powf(x, y); }

}  // namespace detail

/// Dual averaging of log ε towards an average acceptance statistic δ.
template <class R = double>
class step_size_adaptation {
 public:
  TYCHE_HD explicit step_size_adaptation(const adaptation_config& c = {})
      : delta_(static_cast<R>(c.delta)), gamma_(static_cast<R>(c.gamma)), t0_(static_cast<R>(c.t0)),
        kappa_(static_cast<R>(c.kappa)) {}
  TYCHE_HD void set_mu(R mu) { mu_ = mu; }
  TYCHE_HD void restart() {
    counter_ = 0;
    s_bar_ = 0;
    x_bar_ = 0;
  }
  /// Updates ε after a transition with acceptance statistic accept_stat.
  TYCHE_HD void learn(R& epsilon, R accept_stat) {
    ++counter_;
    accept_stat = accept_stat > 1 ? 1 : accept_stat;
    const R eta = R(1) / (counter_ + t0_);
    s_bar_ = (R(1) - eta) * s_bar_ + eta * (delta_ - accept_stat);
    const R x = mu_ - s_bar_ * detail::adapt_sqrt(static_cast<R>(counter_)) / gamma_;
    const R x_eta = detail::adapt_pow(static_cast<R>(counter_), -kappa_);
    x_bar_ = (R(1) - x_eta) * x_bar_ + x_eta * x;
    epsilon = detail::adapt_exp(x);
  }
  /// The step size for sampling: exp of the averaged log ε — or ε itself when there has been
  /// no iteration since the last restart (see the top of this file).
  TYCHE_HD void complete(R& epsilon) const {
    if (counter_ > 0) epsilon = detail::adapt_exp(x_bar_);
  }

 private:
  R delta_, gamma_, t0_, kappa_;
  R mu_ = R(2.302585092994045684);  // log 10
  R s_bar_ = 0, x_bar_ = 0;
  long counter_ = 0;
};

/// Windowed estimation of M⁻¹: the posterior variances of θ (diagonal), or with dense = true its
/// covariance matrix (row-major d × d), regularised towards 10⁻³·I as Stan does; or, with
/// adaptation_config::gradients (diagonal only), √(var θᵢ / var ∂ᵢ log p) over the window's
/// draws and gradients, the diagonal that minimises the Fisher divergence between the posterior
/// and a Gaussian with that scale (Seyboldt, Carlson & Carpenter, arXiv 2603.18845; nutpie). The
/// running estimates live in a buffer of buffer_size() values bound with bind(). With
/// adaptation_config::low_rank (and dense), the window's draws and gradients are kept and the
/// metric is low_rank_inverse_metric's.
template <class R = double>
class metric_adaptation {
 public:
  /// Values of R the estimate needs (gradients: the gradients' moments too; low rank: every draw
  /// and gradient of the longest window, and the estimate's scratch).
  TYCHE_HD std::size_t buffer_size() const {
    if (nutpie_) return 8 * d_;  // foreground and background: draws' and gradients' mean and m2
    if (low_rank_) return 2 * capacity_ * d_ + low_rank_workspace(d_, capacity_);
    return dense_ ? 2 * d_ + d_ * d_ : (gradients_ ? 4 * d_ : 2 * d_);
  }

  TYCHE_HD metric_adaptation(std::size_t dim, int num_warmup, adaptation_config c = {}, bool dense = false)
      : d_(dim), dense_(dense && !c.low_rank), gradients_(c.gradients && !dense && !c.low_rank), low_rank_(c.low_rank),
        nutpie_(c.nutpie_schedule && c.gradients && !dense && !c.low_rank), pooled_(c.pooled),
        low_rank_options_(c.low_rank_options), num_warmup_(num_warmup) {
    if (num_warmup < 20) {  // too short for windows: the metric stays as it is
      num_warmup_ = 0;
      nutpie_ = false;
      set_max_rank(c);
      return;
    }
    if (nutpie_) {
      early_end_ = static_cast<int>(c.early_window * num_warmup);
      final_start_ = num_warmup - static_cast<int>(c.step_size_window * num_warmup);
      early_switch_ = c.early_switch;
      window_size_ = c.main_window;
      growth_ = c.window_growth;
      return;
    }
    if (c.init_buffer + c.base_window + c.term_buffer > num_warmup) {
      c.init_buffer = static_cast<int>(0.15 * num_warmup);
      c.term_buffer = static_cast<int>(0.1 * num_warmup);
      c.base_window = num_warmup - (c.init_buffer + c.term_buffer);
    }
    init_buffer_ = c.init_buffer;
    term_buffer_ = c.term_buffer;
    window_size_ = c.base_window;
    next_window_ = init_buffer_ + window_size_ - 1;
    capacity_ = longest_window();
    set_max_rank(c);
  }

  /// Low rank: the most directions the metric holds (kmax of its factors): the user's cap
  /// (low_rank_settings::max_rank), else the estimate's bound min(d, 2 × the window draws it
  /// takes) — or, when warm-up has no window to replace it, the initial metric's directions
  /// (adaptation_config::low_rank_init_rank; otherwise an initial metric with more is cut to the
  /// kmax with the largest |log λ|: the first window replaces it); 0 for the other metrics.
  TYCHE_HD std::size_t max_rank() const { return kmax_; }

  /// Binds buffer_size() values (zeroed here).
  TYCHE_HD void bind(R* buffer) {
    for (std::size_t k = 0; k < buffer_size(); ++k) buffer[k] = 0;
    if (nutpie_) {
      fg_ = buffer;
      bg_ = buffer + 4 * d_;
      return;
    }
    if (low_rank_) {
      draws_ = buffer;
      grads_ = buffer + capacity_ * d_;
      work_ = buffer + 2 * capacity_ * d_;
      return;
    }
    mean_ = buffer;
    delta_ = buffer + d_;
    m2_ = buffer + 2 * d_;
    if (!dense_) {  // diagonal: no δ vector, m2 follows the mean
      delta_ = nullptr;
      m2_ = buffer + d_;
    }
    if (gradients_) {  // the gradients' mean and m2 after the draws'
      grad_mean_ = buffer + 2 * d_;
      grad_m2_ = buffer + 3 * d_;
    }
  }

  /// The number of values of M⁻¹: d (diagonal), d² (dense), or the low-rank factors
  /// (low_rank_factors_size(d, max_rank())).
  TYCHE_HD std::size_t metric_size() const {
    return low_rank_ ? low_rank_factors_size(d_, kmax_) : dense_ ? d_ * d_ : d_;
  }
  TYCHE_HD bool low_rank() const { return low_rank_; }

  /// Adds draw q (unconstrained) and, for the gradient estimator, the gradient of log p there;
  /// at the end of a window writes the new M⁻¹ (metric_size() values) to inv_metric and
  /// returns true.
  TYCHE_HD bool learn(R* inv_metric, const R* q, const R* grad = nullptr) {
    if (nutpie_) return learn_nutpie(inv_metric, q, grad);
    if (in_window()) {
      if (low_rank_) {
        keep(q, grad);
      } else {
        add(q);
        if (gradients_ && grad != nullptr) add_gradient(grad);
      }
    }
    if (end_of_window()) {
      compute_next_window();
      if (pooled_) {  // the metric waits for the other chains' windows (pool())
        pending_ = true;
        ++counter_;
        return false;
      }
      const R n = static_cast<R>(count_);
      const std::size_t d = d_, size = metric_size();
      if (low_rank_) {  // fewer than 3 draws with gradients: the metric stays as it is
        if (count_ >= 3 && grad_count_ == count_)
          low_rank_inverse_metric(draws_, grads_, static_cast<std::size_t>(count_), d, inv_metric, work_,
                                  low_rank_options_);
        count_ = grad_count_ = 0;
        ++counter_;
        return true;
      }
      if (gradients_ && count_ > 1 && grad_count_ == count_) {
        // √(var θ / var ∇): a coordinate whose gradient does not vary keeps the draws' raw
        // variance; the result is kept within [1e-10, 1e10]. (Without a gradient for every
        // draw, Stan's regularised estimate below.)
        for (std::size_t k = 0; k < d; ++k) inv_metric[k] = gradient_metric(m2_[k] / (n - 1), grad_m2_[k] / (n - 1));
        reset();
        ++counter_;
        return true;
      }
      for (std::size_t k = 0; k < size; ++k) {
        const bool diagonal = !dense_ || k / d == k % d;
        inv_metric[k] = regularised(count_ > 1 ? m2_[k] / (n - 1) : (diagonal ? R(1) : R(0)), n, diagonal);
      }
      reset();
      ++counter_;
      return true;
    }
    ++counter_;
    return false;
  }

  /// Whether the metric learn() has just written should restart the step size (Stan's
  /// heuristic from the current point, and dual averaging): every new metric of Stan's windows;
  /// on nutpie's schedule, the first only.
  TYCHE_HD bool restarts_step_size() const { return !nutpie_ || updates_ == 1; }

  /// Whether learn() has closed a window whose metric waits for pool() (adaptation_config::pooled).
  TYCHE_HD bool pool_pending() const { return pending_; }

  /// Cross-chain pooling: the n estimates a[0 … n) (one per chain, in chain order, each with
  /// pool_pending(); the same dimension and settings) merge their windows' moments — Chan, Golub
  /// & LeVeque's pairwise update, in chain order, so the result does not depend on which chain
  /// arrived last — and each writes the metric of the merged moments to inv_metric[c], by the
  /// same rule learn() applies to one chain's window (Stan's regularised variance or covariance,
  /// √(var θ / var ∇), or nutpie's foreground). The merged variance is that of all the windows'
  /// draws as one sample (between-chain differences included). The low-rank estimate takes every
  /// chain's window draws and gradients, in chain order, as one sample of their total count.
  /// scratch: pool_scratch_size(a, n) values.
  TYCHE_HD static void pool(metric_adaptation* const* a, std::size_t n, R* const* inv_metric, R* scratch) {
    if (n == 0) return;
    const metric_adaptation& first = *a[0];
    const std::size_t d = first.d_;
    if (first.low_rank_) {
      std::size_t total = 0;
      bool all_gradients = true;
      for (std::size_t c = 0; c < n; ++c) {
        total += static_cast<std::size_t>(a[c]->count_);
        all_gradients = all_gradients && a[c]->grad_count_ == a[c]->count_;
      }
      R* x = scratch;
      R* g = scratch + total * d;
      std::size_t row = 0;
      for (std::size_t c = 0; c < n; ++c) {
        const std::size_t rows = static_cast<std::size_t>(a[c]->count_) * d;
        for (std::size_t k = 0; k < rows; ++k) {
          x[row + k] = a[c]->draws_[k];
          g[row + k] = a[c]->grads_[k];
        }
        row += rows;
      }
      // Fewer than 3 draws with gradients in all: the metric stays as it is, as for one chain.
      const bool fresh = total >= 3 && all_gradients;
      if (fresh) low_rank_inverse_metric(x, g, total, d, inv_metric[0], g + total * d, first.low_rank_options_);
      for (std::size_t c = 0; c < n; ++c) {
        metric_adaptation& m = *a[c];
        if (fresh && c > 0)
          for (std::size_t k = 0; k < first.metric_size(); ++k) inv_metric[c][k] = inv_metric[0][k];
        m.count_ = m.grad_count_ = 0;
        m.pending_ = false;
      }
      return;
    }
    if (first.nutpie_) {
      // The backgrounds (draws' mean, m2, gradients' mean, m2) merged into scratch; every chain's
      // foreground becomes it, its background starts again.
      long total = 0;
      for (std::size_t k = 0; k < 4 * d; ++k) scratch[k] = 0;
      for (std::size_t c = 0; c < n; ++c) {
        merge_moments(scratch, total, a[c]->bg_, a[c]->bg_count_, d, 0);  // the draws'
        total = merge_moments(scratch, total, a[c]->bg_, a[c]->bg_count_, d, 2);  // the gradients'
      }
      for (std::size_t c = 0; c < n; ++c) {
        metric_adaptation& m = *a[c];
        for (std::size_t k = 0; k < 4 * d; ++k) {
          m.fg_[k] = scratch[k];
          m.bg_[k] = 0;
        }
        m.fg_count_ = total;
        m.bg_count_ = 0;
        m.pending_ = false;
        if (m.fg_count_ >= 3) {
          m.nutpie_metric(inv_metric[c]);
          ++m.updates_;
        }
      }
      return;
    }
    // Stan's windows: the draws' mean and m2 (d or d² values), and the gradients' mean and m2.
    const bool dense = first.dense_, gradients = first.gradients_;
    const std::size_t m2_size = dense ? d * d : d;
    R* mean = scratch;
    R* m2 = scratch + d;
    R* grad_mean = m2 + m2_size;
    R* grad_m2 = grad_mean + d;
    const std::size_t used = gradients ? 4 * d : d + m2_size;
    for (std::size_t k = 0; k < used; ++k) scratch[k] = 0;
    long total = 0, grad_total = 0;
    bool all_gradients = gradients;
    for (std::size_t c = 0; c < n; ++c) {
      const metric_adaptation& m = *a[c];
      const long nc = m.count_;
      if (nc == 0) continue;
      const R na = static_cast<R>(total), nb = static_cast<R>(nc), nt = na + nb;
      // m2 += m2_c + na·nb/nt · δδᵀ (δ = mean_c − mean), then mean += δ·nb/nt.
      for (std::size_t i = 0; i < d; ++i) {
        const R di = m.mean_[i] - mean[i];
        if (dense) {
          for (std::size_t j = 0; j < d; ++j)
            m2[i * d + j] += m.m2_[i * d + j] + na * nb / nt * di * (m.mean_[j] - mean[j]);
        } else {
          m2[i] += m.m2_[i] + na * nb / nt * di * di;
        }
      }
      const R f = nb / nt;  // 1 for the first chain: its moments are copied exactly
      for (std::size_t i = 0; i < d; ++i) mean[i] += (m.mean_[i] - mean[i]) * f;
      total += nc;
      if (gradients) {
        if (m.grad_count_ != nc) all_gradients = false;
        const R ga = static_cast<R>(grad_total), gb = static_cast<R>(m.grad_count_), gt = ga + gb;
        if (m.grad_count_ > 0) {
          for (std::size_t i = 0; i < d; ++i) {
            const R di = m.grad_mean_[i] - grad_mean[i];
            grad_m2[i] += m.grad_m2_[i] + ga * gb / gt * di * di;
            grad_mean[i] += di * (gb / gt);
          }
          grad_total += m.grad_count_;
        }
      }
    }
    for (std::size_t c = 0; c < n; ++c) {
      metric_adaptation& m = *a[c];
      R* out = inv_metric[c];
      const R nr = static_cast<R>(total);
      if (gradients && total > 1 && all_gradients) {
        for (std::size_t k = 0; k < d; ++k) out[k] = gradient_metric(m2[k] / (nr - 1), grad_m2[k] / (nr - 1));
      } else {
        for (std::size_t k = 0; k < m2_size; ++k) {
          const bool diagonal = !dense || k / d == k % d;
          out[k] = regularised(total > 1 ? m2[k] / (nr - 1) : (diagonal ? R(1) : R(0)), nr, diagonal);
        }
      }
      m.reset();
      m.pending_ = false;
    }
  }

  /// Drops the window that learn() closed for pool() without pooling it (a chain left out of the
  /// pool: warm-up restarts it from another chain's state, chain.hpp); the metric stays as it is.
  TYCHE_HD void discard_window() {
    if (low_rank_) count_ = grad_count_ = 0;
    else if (!nutpie_) reset();
    pending_ = false;
  }

  /// Values of scratch pool() needs for these n estimates (their windows as they stand).
  TYCHE_HD static std::size_t pool_scratch_size(const metric_adaptation* const* a, std::size_t n) {
    if (n == 0) return 0;
    const metric_adaptation& first = *a[0];
    const std::size_t d = first.d_;
    if (first.nutpie_ || first.gradients_) return 4 * d;
    if (!first.low_rank_) return first.dense_ ? d + d * d : 2 * d;
    std::size_t total = 0;
    for (std::size_t c = 0; c < n; ++c) total += static_cast<std::size_t>(a[c]->count_);
    return 2 * total * d + low_rank_workspace(d, total);
  }

  /// nutpie's first metric, 1/|∂ᵢ log p| at the initial point (clamped to [1e-20, 1e20]; 1 where
  /// the gradient is not finite), into inv_metric (d values).
  TYCHE_HD static void metric_from_gradient(R* inv_metric, const R* grad, std::size_t d) {
    for (std::size_t i = 0; i < d; ++i) {
      R a = grad[i] < 0 ? -grad[i] : grad[i];
      if (a < R(1e-20)) a = R(1e-20);
      if (a > R(1e20)) a = R(1e20);
      const R m = R(1) / a;
      inv_metric[i] = m - m == R(0) ? m : R(1);
    }
  }

 private:
  // nutpie's schedule (adapt_strategy.rs of nuts-rs): see adaptation_config::nutpie_schedule.
  TYCHE_HD bool learn_nutpie(R* inv_metric, const R* q, const R* grad) {
    const int t = counter_++;
    if (t >= final_start_ || grad == nullptr) return false;
    const bool early = t < early_end_;
    if (!early && t == early_end_ && bg_count_ > window_size_) window_size_ = static_cast<int>(bg_count_);
    add_moments(fg_, fg_count_, q, grad);
    add_moments(bg_, bg_count_, q, grad);
    const int every = early ? early_switch_ : window_size_;
    int next = early_switch_;
    if (!early) {
      const int grown = static_cast<int>(window_size_ * growth_ + R(0.5));
      next = grown > window_size_ + 1 ? grown : window_size_ + 1;
    }
    if (bg_count_ >= every && next + t <= final_start_) {  // switch: the background becomes the estimate
      if (pooled_) {  // every chain's background, merged, becomes each one's (pool())
        if (!early) window_size_ = next;
        pending_ = true;
        return false;
      }
      for (std::size_t k = 0; k < 4 * d_; ++k) {
        fg_[k] = bg_[k];
        bg_[k] = 0;
      }
      fg_count_ = bg_count_;
      bg_count_ = 0;
      if (!early) window_size_ = next;
    }
    if (fg_count_ < 3) return false;
    nutpie_metric(inv_metric);
    ++updates_;
    return true;
  }
  // The metric of nutpie's foreground estimate.
  TYCHE_HD void nutpie_metric(R* inv_metric) const {
    for (std::size_t i = 0; i < d_; ++i) {
      const R var = fg_[d_ + i], grad_var = fg_[3 * d_ + i];  // sums of squares: the ratio is the same
      R m = grad_var > 0 ? detail::adapt_sqrt(var / grad_var) : var / static_cast<R>(fg_count_);
      if (!(m >= R(1e-10))) m = R(1e-10);
      if (m > R(1e10)) m = R(1e10);
      inv_metric[i] = m;
    }
  }
  // √(var θ / var ∇) within [1e-10, 1e10]; a coordinate whose gradient does not vary keeps var θ.
  TYCHE_HD static R gradient_metric(R var, R grad_var) {
    R m = grad_var > 0 ? detail::adapt_sqrt(var / grad_var) : var;
    if (!(m >= R(1e-10))) m = R(1e-10);
    if (m > R(1e10)) m = R(1e10);
    return m;
  }
  // Stan's regularisation of a window's (co)variance from n draws: n/(n+5)·cov + 10⁻³·5/(n+5) on
  // the diagonal.
  TYCHE_HD static R regularised(R cov, R n, bool diagonal) {
    const R shrink_to = diagonal ? R(1e-3) * (R(5) / (n + R(5))) : R(0);  // 10⁻³·I, weighted
    return detail::multiply_add(n / (n + R(5)), cov, shrink_to);
  }
  // Merges the moments (mean at[offset·d …], m2 at[(offset + 1)·d …]) of `count` values from
  // `from` into `into` holding `total`; returns the new total.
  TYCHE_HD static long merge_moments(R* into, long total, const R* from, long count, std::size_t d, std::size_t offset) {
    if (count == 0) return total;
    const R na = static_cast<R>(total), nb = static_cast<R>(count), nt = na + nb;
    R* mean = into + offset * d;
    R* m2 = into + (offset + 1) * d;
    const R* mean_b = from + offset * d;
    const R* m2_b = from + (offset + 1) * d;
    for (std::size_t i = 0; i < d; ++i) {
      const R delta = mean_b[i] - mean[i];
      m2[i] += m2_b[i] + na * nb / nt * delta * delta;
      mean[i] += delta * (nb / nt);  // nb / nt = 1 for the first: its moments are copied exactly
    }
    return total + count;
  }
  // Welford over the draws (values 0 … 2d: mean, m2) and the gradients (2d … 4d) of one estimate.
  TYCHE_HD void add_moments(R* at, long& count, const R* q, const R* g) {
    ++count;
    const R n = static_cast<R>(count);
    for (std::size_t i = 0; i < d_; ++i) {
      R delta = q[i] - at[i];
      at[i] += delta / n;
      at[d_ + i] += delta * (q[i] - at[i]);
      delta = g[i] - at[2 * d_ + i];
      at[2 * d_ + i] += delta / n;
      at[3 * d_ + i] += delta * (g[i] - at[2 * d_ + i]);
    }
  }
  TYCHE_HD bool in_window() const {
    return counter_ >= init_buffer_ && counter_ < num_warmup_ - term_buffer_ && counter_ != num_warmup_;
  }
  TYCHE_HD bool end_of_window() const { return counter_ == next_window_ && counter_ != num_warmup_; }
  // The draws of the longest of Stan's windows (the last: 500 of 1000 warm-up iterations), which
  // the low-rank estimate keeps: compute_next_window's schedule, run ahead.
  TYCHE_HD int longest_window_draws() const {
    const int last = num_warmup_ - term_buffer_ - 1;
    int size = window_size_, end = init_buffer_ + window_size_ - 1, longest = end >= init_buffer_ ? size : 0;
    while (end < last) {
      size *= 2;
      const int from = end;
      end = from + size;
      if (end != last && end + 2 * size >= num_warmup_ - term_buffer_) end = last;
      if (end - from > longest) longest = end - from;
    }
    return longest;
  }
  TYCHE_HD std::size_t longest_window() const {
    const int n = longest_window_draws();
    return n > 0 ? static_cast<std::size_t>(n) : 0;
  }
  TYCHE_HD void compute_next_window() {
    if (next_window_ == num_warmup_ - term_buffer_ - 1) return;
    window_size_ *= 2;
    next_window_ = counter_ + window_size_;
    if (next_window_ != num_warmup_ - term_buffer_ - 1) {
      const int boundary = next_window_ + 2 * window_size_;
      if (boundary >= num_warmup_ - term_buffer_) next_window_ = num_warmup_ - term_buffer_ - 1;
    }
  }
  TYCHE_HD void add(const R* q) {  // Welford
    ++count_;
    const std::size_t d = d_;
    if (!dense_) {
      for (std::size_t i = 0; i < d; ++i) {
        const R delta = q[i] - mean_[i];
        mean_[i] += delta / static_cast<R>(count_);
        m2_[i] += delta * (q[i] - mean_[i]);
      }
      return;
    }
    for (std::size_t i = 0; i < d; ++i) {
      delta_[i] = q[i] - mean_[i];
      mean_[i] += delta_[i] / static_cast<R>(count_);
    }
    for (std::size_t i = 0; i < d; ++i)
      for (std::size_t j = 0; j < d; ++j) m2_[i * d + j] += (q[i] - mean_[i]) * delta_[j];
  }
  TYCHE_HD void keep(const R* q, const R* g) {  // low rank: the window's draws and gradients
    if (static_cast<std::size_t>(count_) >= capacity_) return;
    for (std::size_t i = 0; i < d_; ++i) draws_[static_cast<std::size_t>(count_) * d_ + i] = q[i];
    if (g != nullptr && grad_count_ == count_) {
      for (std::size_t i = 0; i < d_; ++i) grads_[static_cast<std::size_t>(count_) * d_ + i] = g[i];
      ++grad_count_;
    }
    ++count_;
  }
  TYCHE_HD void add_gradient(const R* g) {  // Welford, count_ already advanced by add()
    ++grad_count_;
    for (std::size_t i = 0; i < d_; ++i) {
      const R delta = g[i] - grad_mean_[i];
      grad_mean_[i] += delta / static_cast<R>(count_);
      grad_m2_[i] += delta * (g[i] - grad_mean_[i]);
    }
  }
  TYCHE_HD void reset() {
    count_ = 0;
    grad_count_ = 0;
    for (std::size_t i = 0; i < d_; ++i) mean_[i] = 0;
    for (std::size_t k = 0; k < metric_size(); ++k) m2_[k] = 0;
    if (gradients_)
      for (std::size_t i = 0; i < d_; ++i) grad_mean_[i] = grad_m2_[i] = 0;
  }

  std::size_t d_ = 0;
  R *mean_ = nullptr, *delta_ = nullptr, *m2_ = nullptr, *grad_mean_ = nullptr, *grad_m2_ = nullptr;
  R *draws_ = nullptr, *grads_ = nullptr, *work_ = nullptr;  // low rank
  std::size_t kmax_ = 0;                                       // low rank: max_rank()
  TYCHE_HD void set_max_rank(const adaptation_config& c) {
    if (!low_rank_) return;
    const std::size_t cap = c.low_rank_options.max_rank;
    if (cap > 0) kmax_ = cap < d_ ? cap : d_;
    else if (capacity_ == 0) kmax_ = c.low_rank_init_rank < d_ ? c.low_rank_init_rank : d_;  // no window
    else kmax_ = low_rank_max_rank(d_, capacity_ * (c.low_rank_chains > 0 ? c.low_rank_chains : 1));
  }
  bool dense_ = false, gradients_ = false, low_rank_ = false, nutpie_ = false, pooled_ = false, pending_ = false;
  low_rank_settings low_rank_options_ = {};
  R *fg_ = nullptr, *bg_ = nullptr;  // nutpie: foreground and background moments
  long fg_count_ = 0, bg_count_ = 0, updates_ = 0;
  int early_end_ = 0, final_start_ = 0, early_switch_ = 10;
  double growth_ = 1.5;
  std::size_t capacity_ = 0;  // draws of the longest window (low rank keeps them)
  long count_ = 0, grad_count_ = 0;
  int num_warmup_ = 0;
  int init_buffer_ = 0, term_buffer_ = 0, window_size_ = 0, next_window_ = -1;
  int counter_ = 0;
};

}  // namespace tyche::samplers
