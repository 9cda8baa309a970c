// tyche/samplers/nuts/adaptation.hpp — Stan's warm-up: dual averaging of the step size (Hoffman
// & Gelman 2014, §3.2; δ = 0.8, γ = 0.05, t₀ = 10, κ = 0.75, μ = log 10ε) and windowed
// estimation of a diagonal or dense metric (init buffer 75, windows from 25 doubling, term buffer 50;
// regularised as n/(n+5)·var + 10⁻³·5/(n+5)). One deliberate difference from Stan: when the
// last metric window closes at the very end of warm-up (no term buffer), Stan restarts dual
// averaging and then ends it with no iterations, which sets the step size to exp(0) = 1; here
// the step size found after the metric update is kept.
#pragma once
#include <tyche/config.hpp>

#include <cmath>
#include <cstddef>
#include <vector>

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
};

namespace detail {

/// a·b + c, rounded the same way in every copy the compiler makes of a loop. Where the target
/// has a fused multiply-add, GCC (-O3, FMA targets) contracts a·b + c in some copies of a loop
/// and not in others: it fused the metric's regularisation below in the scalar copy of a loop
/// versioned for aliasing but not in the vectorised one, where a select stood between the
/// multiply and the add. Which copy ran depended on where the heap had put the vectors, so
/// identical nuts() calls in one process gave different metrics, and then chains. Here the
/// fusion is explicit (std::fma, one rounding) where the target has the instruction, and
/// a·b + c (two roundings, which no copy can fuse) where it has not: builds without FMA keep
/// their results bit for bit.
inline double multiply_add(double a, double b, double c) {
#if defined(FP_FAST_FMA) || defined(__FMA__) || defined(__ARM_FEATURE_FMA)
  return std::fma(a, b, c);
#else
  return a * b + c;
#endif
}

}  // namespace detail

/// Dual averaging of log ε towards an average acceptance statistic δ.
class step_size_adaptation {
 public:
  explicit step_size_adaptation(const adaptation_config& c = {}) : c_(c) {}
  void set_mu(double mu) { mu_ = mu; }
  void restart() {
    counter_ = 0;
    s_bar_ = 0;
    x_bar_ = 0;
  }
  /// Updates ε after a transition with acceptance statistic accept_stat.
  void learn(double& epsilon, double accept_stat) {
    ++counter_;
    accept_stat = accept_stat > 1 ? 1 : accept_stat;
    const double eta = 1.0 / (counter_ + c_.t0);
    s_bar_ = (1.0 - eta) * s_bar_ + eta * (c_.delta - accept_stat);
    const double x = mu_ - s_bar_ * std::sqrt(static_cast<double>(counter_)) / c_.gamma;
    const double x_eta = std::pow(static_cast<double>(counter_), -c_.kappa);
    x_bar_ = (1.0 - x_eta) * x_bar_ + x_eta * x;
    epsilon = std::exp(x);
  }
  /// The step size for sampling: exp of the averaged log ε — or ε itself when there has been
  /// no iteration since the last restart (see the top of this file).
  void complete(double& epsilon) const {
    if (counter_ > 0) epsilon = std::exp(x_bar_);
  }

 private:
  adaptation_config c_;
  double mu_ = std::log(10.0);
  double s_bar_ = 0, x_bar_ = 0;
  long counter_ = 0;
};

/// Windowed estimation of M⁻¹: the posterior variances of θ (diagonal), or with dense = true its
/// covariance matrix (row-major d × d), regularised towards 10⁻³·I as Stan does.
class metric_adaptation {
 public:
  metric_adaptation(std::size_t dim, int num_warmup, adaptation_config c = {}, bool dense = false)
      : mean_(dim, 0.0), m2_(dense ? dim * dim : dim, 0.0), dense_(dense), num_warmup_(num_warmup) {
    if (num_warmup < 20) {  // too short for windows: the metric stays as it is
      num_warmup_ = 0;
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
  }

  /// Adds draw q (unconstrained); at the end of a window writes the new M⁻¹ diagonal to
  /// inv_metric and returns true.
  bool learn(std::vector<double>& inv_metric, const std::vector<double>& q) {
    if (in_window()) add(q);
    if (end_of_window()) {
      compute_next_window();
      const double n = static_cast<double>(count_);
      const std::size_t d = mean_.size();
      inv_metric.resize(m2_.size());
      for (std::size_t k = 0; k < m2_.size(); ++k) {
        const bool diagonal = !dense_ || k / d == k % d;
        const double cov = count_ > 1 ? m2_[k] / (n - 1) : (diagonal ? 1.0 : 0.0);
        const double shrink_to = diagonal ? 1e-3 * (5.0 / (n + 5.0)) : 0.0;  // 10⁻³·I, weighted
        inv_metric[k] = detail::multiply_add(n / (n + 5.0), cov, shrink_to);
      }
      reset();
      ++counter_;
      return true;
    }
    ++counter_;
    return false;
  }

 private:
  bool in_window() const {
    return counter_ >= init_buffer_ && counter_ < num_warmup_ - term_buffer_ && counter_ != num_warmup_;
  }
  bool end_of_window() const { return counter_ == next_window_ && counter_ != num_warmup_; }
  void compute_next_window() {
    if (next_window_ == num_warmup_ - term_buffer_ - 1) return;
    window_size_ *= 2;
    next_window_ = counter_ + window_size_;
    if (next_window_ != num_warmup_ - term_buffer_ - 1) {
      const int boundary = next_window_ + 2 * window_size_;
      if (boundary >= num_warmup_ - term_buffer_) next_window_ = num_warmup_ - term_buffer_ - 1;
    }
  }
  void add(const std::vector<double>& q) {  // Welford
    ++count_;
    const std::size_t d = q.size();
    if (!dense_) {
      for (std::size_t i = 0; i < d; ++i) {
        const double delta = q[i] - mean_[i];
        mean_[i] += delta / static_cast<double>(count_);
        m2_[i] += delta * (q[i] - mean_[i]);
      }
      return;
    }
    delta_.resize(d);
    for (std::size_t i = 0; i < d; ++i) {
      delta_[i] = q[i] - mean_[i];
      mean_[i] += delta_[i] / static_cast<double>(count_);
    }
    for (std::size_t i = 0; i < d; ++i)
      for (std::size_t j = 0; j < d; ++j) m2_[i * d + j] += (q[i] - mean_[i]) * delta_[j];
  }
  void reset() {
    count_ = 0;
    for (auto& v : mean_) v = 0;
    for (auto& v : m2_) v = 0;
  }

  std::vector<double> mean_, m2_, delta_;
  bool dense_ = false;
  long count_ = 0;
  int num_warmup_ = 0;
  int init_buffer_ = 0, term_buffer_ = 0, window_size_ = 0, next_window_ = -1;
  int counter_ = 0;
};

}  // namespace tyche::samplers
