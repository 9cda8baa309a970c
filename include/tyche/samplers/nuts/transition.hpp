// tyche/samplers/nuts/transition.hpp — one NUTS transition, unrolled: no recursion, the
// trajectory is a flat loop over leapfrogs driven by the compile-time schedule of
// instruction_table.hpp, and the state is O(max depth) subtree records (Lao & Dillon's unrolled
// NUTS). The decisions are Stan's (multinomial sampling: uniform-progressive within a doubling,
// biased-progressive at the top; the generalised U-turn criterion with the two extra checks
// across merged subtrees; divergence when the energy error exceeds 1000), taken in the same
// order as the recursive algorithm, so that with the same random stream both produce the same
// trajectory (tests/samplers/unrolled_nuts_test.cpp checks it).
//
// This is the single-chain, double-precision transition. The batched driver (chains as SIMD
// lanes, each lane at its own point of this state machine) is built on the same schedule.
#pragma once
#include <tyche/config.hpp>
#include <tyche/samplers/nuts/instruction_table.hpp>

#include <bit>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace tyche::samplers {

/// The statistics Stan writes for every draw.
struct transition_stats {
  double log_density = 0;  // lp__
  double accept_stat = 0;  // accept_stat__
  double step_size = 0;    // stepsize__
  int tree_depth = 0;      // treedepth__
  int n_leapfrog = 0;      // n_leapfrog__
  bool divergent = false;  // divergent__
  double energy = 0;       // energy__
};

/// The kind of metric (mass matrix) of the kinetic energy.
enum class metric_kind { diagonal, dense };

/// A point of phase space with what the integrator needs at it.
struct phase_point {
  std::vector<double> q, p, grad;
  double log_density = 0;
};

namespace detail {

inline double log_sum_exp(double a, double b) {
  constexpr double ninf = -std::numeric_limits<double>::infinity();
  if (a == ninf) return b;
  if (b == ninf) return a;
  return a > b ? a + std::log1p(std::exp(b - a)) : b + std::log1p(std::exp(a - b));
}

/// A completed subtree on the stack: its proposal, its total weight, the sum of its momenta,
/// and the momenta (and p♯ = M⁻¹p) at its two ends, in the direction of integration.
struct subtree {
  phase_point proposal;
  double log_sum_weight = 0;
  std::vector<double> rho, p_begin, p_end, p_sharp_begin, p_sharp_end;
};

inline double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

/// The generalised no-U-turn criterion (Betancourt 2017): the trajectory keeps going while
/// both ends' p♯ point along ρ.
inline bool no_u_turn(const std::vector<double>& p_sharp_minus, const std::vector<double>& p_sharp_plus,
                      const std::vector<double>& rho) {
  return dot(p_sharp_plus, rho) > 0 && dot(p_sharp_minus, rho) > 0;
}

/// out = a + b (out may not alias a or b).
inline void add(const std::vector<double>& a, const std::vector<double>& b, std::vector<double>& out) {
  out.resize(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out[i] = a[i] + b[i];
}

}  // namespace detail

/// One NUTS transition from q0. Target: `double operator()(const std::vector<double>& q,
/// std::vector<double>& grad) const` returning log p(q) and writing its gradient. Rng:
/// `double uniform()` in [0, 1) and `double normal()`. inv_metric is the diagonal of M⁻¹;
/// set_dense_inv_metric() makes the metric dense.
/// Random numbers are consumed in this order: the momentum (one normal per coordinate, in
/// order), then per doubling one uniform for the direction, one for each merge whose later
/// subtree does not outweigh the merged one, and one at the end of the doubling under the same
/// condition.
///
/// The transition is resumable: its only suspension point is a gradient. begin() starts a
/// transition and leaves a point whose gradient is wanted (pending()); the caller evaluates
/// log p and ∇log p there, by any means (one chain at a time, or many chains as SIMD lanes), and
/// calls resume(), which runs the state machine up to the next gradient it needs or to the end
/// of the transition. operator() is that loop with the Target evaluating one point at a time.
template <class Target, class Rng>
class unrolled_transition {
 public:
  unrolled_transition(const Target& target, std::vector<double> inv_metric, int max_depth)
      : target_(target), max_depth_(max_depth) {
    if (max_depth < 1 || max_depth > max_supported_depth)
      throw std::invalid_argument("tyche::nuts: max_depth = " + std::to_string(max_depth) +
                                  " is outside [1, " + std::to_string(max_supported_depth) + "]");
    set_inv_metric(std::move(inv_metric));
  }

  /// Runs one transition from `current` (whose q, log_density and grad must be set). On return
  /// `current` holds the selected point.
  transition_stats operator()(phase_point& current, double step_size, Rng& rng) {
    begin(current, step_size, rng);
    do {
      phase_point& z = pending();
      z.log_density = target_(z.q, z.grad);
    } while (!resume(rng));
    return stats_;
  }

  /// Starts a transition from `current` (q, log_density and grad set), which must outlive it:
  /// the selected point is written there when the transition ends. Afterwards pending() is a
  /// point whose log density and gradient are wanted.
  void begin(phase_point& current, double step_size, Rng& rng) {
    const std::size_t d = current.q.size();
    current_ = &current;
    stats_ = transition_stats{};
    stats_.step_size = step_size;
    step_size_ = step_size;
    sample_momentum(current.p, d, rng);
    H0_ = hamiltonian(current);
    z_fwd_ = current;
    z_bck_ = current;
    z_sample_ = current;
    sharp(current.p, ps_fwd_fwd_);
    ps_fwd_bck_ = ps_bck_fwd_ = ps_bck_bck_ = ps_fwd_fwd_;
    rho_ = current.p;
    p_fwd_fwd_ = p_fwd_bck_ = p_bck_fwd_ = p_bck_bck_ = current.p;
    log_sum_weight_ = 0;  // the initial point's weight, exp(H0 − H0)
    sum_metro_prob_ = 0;
    depth_ = 0;
    n_leapfrog_ = 0;
    divergent_ = false;
    begin_doubling(rng);  // depth 0 < max_depth: always at least one leapfrog
  }

  /// The point whose log density and gradient the state machine waits for.
  phase_point& pending() { return forward_ ? z_fwd_ : z_bck_; }

  /// Continues after pending()'s log_density and grad were set. Returns true when the
  /// transition has ended (the selected point is in `current`, stats() holds its statistics);
  /// false when pending() again wants a gradient.
  bool resume(Rng& rng) {
    constexpr double ninf = -std::numeric_limits<double>::infinity();
    phase_point& z = pending();
    // The second half of the leapfrog's momentum update, then the new leaf.
    const std::size_t d = z.q.size();
    for (std::size_t i = 0; i < d; ++i) z.p[i] += 0.5 * eps_ * z.grad[i];
    ++n_leapfrog_;
    double h = hamiltonian(z);
    if (std::isnan(h)) h = std::numeric_limits<double>::infinity();
    if (h - H0_ > max_energy_error) divergent_ = true;
    sum_metro_prob_ += H0_ - h > 0 ? 1.0 : std::exp(H0_ - h);
    detail::subtree& leaf = stack_[static_cast<std::size_t>(top_++)];
    leaf.proposal = z;
    leaf.log_sum_weight = detail::log_sum_exp(ninf, H0_ - h);
    leaf.rho = z.p;
    leaf.p_begin = leaf.p_end = z.p;
    sharp(z.p, leaf.p_sharp_begin);
    leaf.p_sharp_end = leaf.p_sharp_begin;
    if (divergent_) return finish();
    // The merges the schedule prescribes after leaf k: ctz(k) of them.
    for (int m = std::countr_zero(static_cast<unsigned long>(leaf_)); m > 0; --m) {
      detail::subtree& init = stack_[static_cast<std::size_t>(top_ - 2)];
      detail::subtree& fin = stack_[static_cast<std::size_t>(top_ - 1)];
      const double lsw_subtree = detail::log_sum_exp(init.log_sum_weight, fin.log_sum_weight);
      bool take_final = fin.log_sum_weight > lsw_subtree;
      if (!take_final) take_final = rng.uniform() < std::exp(fin.log_sum_weight - lsw_subtree);
      if (take_final) init.proposal = fin.proposal;
      detail::add(init.rho, fin.rho, rho_subtree_);
      bool persist = detail::no_u_turn(init.p_sharp_begin, fin.p_sharp_end, rho_subtree_);
      detail::add(init.rho, fin.p_begin, scratch_);
      persist = persist && detail::no_u_turn(init.p_sharp_begin, fin.p_sharp_begin, scratch_);
      detail::add(fin.rho, init.p_end, scratch_);
      persist = persist && detail::no_u_turn(init.p_sharp_end, fin.p_sharp_end, scratch_);
      init.log_sum_weight = lsw_subtree;
      init.rho.swap(rho_subtree_);
      init.p_end = fin.p_end;
      init.p_sharp_end = fin.p_sharp_end;
      --top_;
      if (!persist) return finish();
    }
    if (leaf_ < leaves_) {
      ++leaf_;
      start_leapfrog();
      return false;
    }
    return end_doubling(rng);
  }

  /// The statistics of the last completed transition.
  const transition_stats& stats() const { return stats_; }

  static constexpr double max_energy_error = 1000.0;

  /// M⁻¹ (changed by adaptation between transitions): its diagonal (d values) for a diagonal
  /// metric, the row-major matrix (d² values) for a dense one.
  const std::vector<double>& inv_metric() const { return inv_metric_; }
  [[nodiscard]] bool dense() const { return dense_; }
  /// Sets a diagonal M⁻¹: d positive finite values.
  void set_inv_metric(std::vector<double> m) {
    for (std::size_t i = 0; i < m.size(); ++i)
      if (!(m[i] > 0) || !std::isfinite(m[i]))
        throw std::invalid_argument("tyche::nuts: inverse metric element " + std::to_string(i) + " = " +
                                    std::to_string(m[i]) + " is not a positive finite number");
    dense_ = false;
    inv_metric_ = std::move(m);
  }
  /// Sets a dense M⁻¹: a symmetric positive-definite d × d matrix, row-major; its Cholesky
  /// factor (Cholesky–Banachiewicz) is computed here.
  void set_dense_inv_metric(std::vector<double> m, std::size_t d) {
    if (m.size() != d * d)
      throw std::invalid_argument("tyche::nuts: a dense inverse metric of dimension " + std::to_string(d) +
                                  " needs " + std::to_string(d * d) + " values, not " + std::to_string(m.size()));
    chol_.assign(d * d, 0.0);  // lower L, M⁻¹ = L Lᵀ
    for (std::size_t i = 0; i < d; ++i)
      for (std::size_t j = 0; j <= i; ++j) {
        double s = m[i * d + j];
        for (std::size_t k = 0; k < j; ++k) s -= chol_[i * d + k] * chol_[j * d + k];
        if (i == j) {
          if (!(s > 0) || !std::isfinite(s))
            throw std::invalid_argument("tyche::nuts: the dense inverse metric is not positive definite "
                                        "(pivot " + std::to_string(i) + " = " + std::to_string(s) + ")");
          chol_[i * d + i] = std::sqrt(s);
        } else {
          chol_[i * d + j] = s / chol_[j * d + j];
        }
      }
    dense_ = true;
    inv_metric_ = std::move(m);
  }

  /// A momentum p ~ N(0, M): p_i = u_i / √(M⁻¹)_ii (diagonal), or p = L⁻ᵀu with M⁻¹ = LLᵀ
  /// (dense); u: d standard normals, in order.
  void sample_momentum(std::vector<double>& p, std::size_t d, Rng& rng) const {
    p.resize(d);
    if (!dense_) {
      for (std::size_t i = 0; i < d; ++i) p[i] = rng.normal() / std::sqrt(inv_metric_[i]);
      return;
    }
    for (std::size_t i = 0; i < d; ++i) p[i] = rng.normal();
    for (std::size_t i = d; i-- > 0;) {  // back substitution, Lᵀ p = u
      double s = p[i];
      for (std::size_t k = i + 1; k < d; ++k) s -= chol_[k * d + i] * p[k];
      p[i] = s / chol_[i * d + i];
    }
  }

  /// H(q, p) = −log p(q) + ½ pᵀ M⁻¹ p.
  double hamiltonian(const phase_point& z) const {
    double kinetic = 0;
    if (!dense_) {
      for (std::size_t i = 0; i < z.p.size(); ++i) kinetic += inv_metric_[i] * z.p[i] * z.p[i];
    } else {
      const std::size_t d = z.p.size();
      for (std::size_t i = 0; i < d; ++i) {
        double row = 0;
        for (std::size_t j = 0; j < d; ++j) row += inv_metric_[i * d + j] * z.p[j];
        kinetic += z.p[i] * row;
      }
    }
    return -z.log_density + 0.5 * kinetic;
  }
 private:
  // p♯ = M⁻¹p.
  void sharp(const std::vector<double>& p, std::vector<double>& out) const {
    const std::size_t d = p.size();
    out.resize(d);
    if (!dense_) {
      for (std::size_t i = 0; i < d; ++i) out[i] = inv_metric_[i] * p[i];
      return;
    }
    for (std::size_t i = 0; i < d; ++i) {
      double row = 0;
      for (std::size_t j = 0; j < d; ++j) row += inv_metric_[i * d + j] * p[j];
      out[i] = row;
    }
  }
  // q += eps · M⁻¹p.
  void drift(phase_point& z, double eps) const {
    const std::size_t d = z.q.size();
    if (!dense_) {
      for (std::size_t i = 0; i < d; ++i) z.q[i] += eps * inv_metric_[i] * z.p[i];
      return;
    }
    sharp(z.p, drift_);
    for (std::size_t i = 0; i < d; ++i) z.q[i] += eps * drift_[i];
  }

  // A doubling: a direction, then 2^depth leaves.
  void begin_doubling(Rng& rng) {
    forward_ = rng.uniform() > 0.5;
    const std::size_t d = rho_.size();
    // The trajectory so far becomes the half on the other side of the new subtree: its end
    // nearest the new subtree is the trajectory's old end in that direction.
    if (forward_) {
      rho_bck_ = rho_;
      rho_fwd_.assign(d, 0.0);
      p_bck_fwd_ = p_fwd_fwd_;
      ps_bck_fwd_ = ps_fwd_fwd_;
    } else {
      rho_fwd_ = rho_;
      rho_bck_.assign(d, 0.0);
      p_fwd_bck_ = p_bck_bck_;
      ps_fwd_bck_ = ps_bck_bck_;
    }
    eps_ = forward_ ? step_size_ : -step_size_;
    if (stack_.size() < static_cast<std::size_t>(depth_) + 1) stack_.resize(static_cast<std::size_t>(depth_) + 1);
    top_ = 0;
    leaves_ = 1L << depth_;
    leaf_ = 1;
    start_leapfrog();
  }

  // The leapfrog's first half momentum update and position update; the gradient is next.
  void start_leapfrog() {
    phase_point& z = pending();
    const std::size_t d = z.q.size();
    for (std::size_t i = 0; i < d; ++i) z.p[i] += 0.5 * eps_ * z.grad[i];
    drift(z, eps_);
  }

  // A doubling completed: it is the single record left on the stack.
  bool end_doubling(Rng& rng) {
    ++depth_;
    const detail::subtree& sub = stack_[0];
    if (forward_) {
      rho_fwd_ = sub.rho;
      p_fwd_bck_ = sub.p_begin;
      p_fwd_fwd_ = sub.p_end;
      ps_fwd_bck_ = sub.p_sharp_begin;
      ps_fwd_fwd_ = sub.p_sharp_end;
    } else {
      rho_bck_ = sub.rho;
      p_bck_fwd_ = sub.p_begin;
      p_bck_bck_ = sub.p_end;
      ps_bck_fwd_ = sub.p_sharp_begin;
      ps_bck_bck_ = sub.p_sharp_end;
    }
    // Biased progressive sampling: prefer the new half.
    if (sub.log_sum_weight > log_sum_weight_) {
      z_sample_ = sub.proposal;
    } else if (rng.uniform() < std::exp(sub.log_sum_weight - log_sum_weight_)) {
      z_sample_ = sub.proposal;
    }
    log_sum_weight_ = detail::log_sum_exp(log_sum_weight_, sub.log_sum_weight);
    detail::add(rho_bck_, rho_fwd_, rho_);
    bool persist = detail::no_u_turn(ps_bck_bck_, ps_fwd_fwd_, rho_);
    detail::add(rho_bck_, p_fwd_bck_, scratch_);
    persist = persist && detail::no_u_turn(ps_bck_bck_, ps_fwd_bck_, scratch_);
    detail::add(rho_fwd_, p_bck_fwd_, scratch_);
    persist = persist && detail::no_u_turn(ps_bck_fwd_, ps_fwd_fwd_, scratch_);
    if (!persist || depth_ >= max_depth_) return finish();
    begin_doubling(rng);
    return false;
  }

  // The transition ended: the selected point becomes the current one.
  bool finish() {
    phase_point& current = *current_;
    current = z_sample_;
    stats_.log_density = current.log_density;
    stats_.tree_depth = depth_;
    stats_.n_leapfrog = n_leapfrog_;
    stats_.divergent = divergent_;
    stats_.accept_stat = n_leapfrog_ > 0 ? sum_metro_prob_ / n_leapfrog_ : 0.0;
    stats_.energy = hamiltonian(current);
    return true;
  }
 public:
  /// One leapfrog step of size eps (negative: backwards in time).
  void leapfrog(phase_point& z, double eps) const {
    const std::size_t d = z.q.size();
    for (std::size_t i = 0; i < d; ++i) z.p[i] += 0.5 * eps * z.grad[i];
    drift(z, eps);
    z.log_density = target_(z.q, z.grad);
    for (std::size_t i = 0; i < d; ++i) z.p[i] += 0.5 * eps * z.grad[i];
  }

 private:
  const Target& target_;
  std::vector<double> inv_metric_, chol_;
  mutable std::vector<double> drift_;
  bool dense_ = false;
  int max_depth_;
  std::vector<detail::subtree> stack_;

  // The state of the transition in progress.
  phase_point* current_ = nullptr;
  transition_stats stats_;
  double step_size_ = 0, eps_ = 0, H0_ = 0, log_sum_weight_ = 0, sum_metro_prob_ = 0;
  int depth_ = 0, n_leapfrog_ = 0, top_ = 0;
  long leaves_ = 0, leaf_ = 0;
  bool forward_ = true, divergent_ = false;
  phase_point z_fwd_, z_bck_, z_sample_;
  std::vector<double> rho_, rho_fwd_, rho_bck_, rho_subtree_, scratch_;
  std::vector<double> p_fwd_fwd_, p_fwd_bck_, p_bck_fwd_, p_bck_bck_;
  std::vector<double> ps_fwd_fwd_, ps_fwd_bck_, ps_bck_fwd_, ps_bck_bck_;
};

}  // namespace tyche::samplers
