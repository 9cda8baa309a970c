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

#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
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

inline std::vector<double> add(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> s(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) s[i] = a[i] + b[i];
  return s;
}

}  // namespace detail

/// One NUTS transition from q0. Target: `double operator()(const std::vector<double>& q,
/// std::vector<double>& grad) const` returning log p(q) and writing its gradient. Rng:
/// `double uniform()` in [0, 1) and `double normal()`. inv_metric is the diagonal of M⁻¹.
/// Random numbers are consumed in this order: the momentum (one normal per coordinate, in
/// order), then per doubling one uniform for the direction, one for each merge whose later
/// subtree does not outweigh the merged one, and one at the end of the doubling under the same
/// condition.
template <class Target, class Rng>
class unrolled_transition {
 public:
  unrolled_transition(const Target& target, std::vector<double> inv_metric, int max_depth)
      : target_(target), inv_metric_(std::move(inv_metric)), max_depth_(max_depth) {
    if (max_depth < 1 || max_depth > max_supported_depth)
      throw std::invalid_argument("tyche::nuts: max_depth = " + std::to_string(max_depth) +
                                  " is outside [1, " + std::to_string(max_supported_depth) + "]");
  }

  /// Runs one transition from `current` (whose q, log_density and grad must be set). On return
  /// `current` holds the selected point.
  transition_stats operator()(phase_point& current, double step_size, Rng& rng) {
    const std::size_t d = current.q.size();
    constexpr double ninf = -std::numeric_limits<double>::infinity();
    transition_stats stats;
    stats.step_size = step_size;

    // Momentum and the initial point.
    current.p.resize(d);
    for (std::size_t i = 0; i < d; ++i) current.p[i] = rng.normal() / std::sqrt(inv_metric_[i]);
    const double H0 = hamiltonian(current);
    phase_point z_fwd = current, z_bck = current, z_sample = current;
    std::vector<double> p_sharp0 = sharp(current.p);
    std::vector<double> rho = current.p;
    std::vector<double> p_fwd_fwd = current.p, p_fwd_bck = current.p, p_bck_fwd = current.p,
                        p_bck_bck = current.p;
    std::vector<double> ps_fwd_fwd = p_sharp0, ps_fwd_bck = p_sharp0, ps_bck_fwd = p_sharp0,
                        ps_bck_bck = p_sharp0;
    double log_sum_weight = 0;  // the initial point's weight, exp(H0 − H0)
    double sum_metro_prob = 0;
    int depth = 0;
    int n_leapfrog = 0;
    bool divergent = false;

    while (depth < max_depth_) {
      std::vector<double> rho_fwd(d, 0.0), rho_bck(d, 0.0);
      const bool forward = rng.uniform() > 0.5;
      // The trajectory so far becomes the half on the other side of the new subtree: its end
      // nearest the new subtree is the trajectory's old end in that direction.
      if (forward) {
        rho_bck = rho;
        p_bck_fwd = p_fwd_fwd;
        ps_bck_fwd = ps_fwd_fwd;
      } else {
        rho_fwd = rho;
        p_fwd_bck = p_bck_bck;
        ps_fwd_bck = ps_bck_bck;
      }
      phase_point& z = forward ? z_fwd : z_bck;
      const double eps = forward ? step_size : -step_size;

      // The doubling: 2^depth leapfrogs, each followed by its merges (the schedule).
      bool valid = true;
      stack_.resize(static_cast<std::size_t>(depth) + 1);
      int top = 0;  // number of records on the stack
      const long leaves = 1L << depth;
      for (long k = 1; k <= leaves && valid; ++k) {
        leapfrog(z, eps);
        ++n_leapfrog;
        double h = hamiltonian(z);
        if (std::isnan(h)) h = std::numeric_limits<double>::infinity();
        if (h - H0 > max_energy_error) divergent = true;
        sum_metro_prob += H0 - h > 0 ? 1.0 : std::exp(H0 - h);
        detail::subtree& leaf = stack_[static_cast<std::size_t>(top++)];
        leaf.proposal = z;
        leaf.log_sum_weight = detail::log_sum_exp(ninf, H0 - h);
        leaf.rho = z.p;
        leaf.p_begin = leaf.p_end = z.p;
        leaf.p_sharp_begin = leaf.p_sharp_end = sharp(z.p);
        if (divergent) {
          valid = false;
          break;
        }
        for (int m = std::countr_zero(static_cast<unsigned long>(k)); m > 0 && valid; --m) {
          detail::subtree& init = stack_[static_cast<std::size_t>(top - 2)];
          detail::subtree& fin = stack_[static_cast<std::size_t>(top - 1)];
          const double lsw_subtree = detail::log_sum_exp(init.log_sum_weight, fin.log_sum_weight);
          bool take_final = fin.log_sum_weight > lsw_subtree;
          if (!take_final) take_final = rng.uniform() < std::exp(fin.log_sum_weight - lsw_subtree);
          if (take_final) init.proposal = fin.proposal;
          const std::vector<double> rho_subtree = detail::add(init.rho, fin.rho);
          bool persist = detail::no_u_turn(init.p_sharp_begin, fin.p_sharp_end, rho_subtree);
          persist = persist && detail::no_u_turn(init.p_sharp_begin, fin.p_sharp_begin,
                                                 detail::add(init.rho, fin.p_begin));
          persist = persist && detail::no_u_turn(init.p_sharp_end, fin.p_sharp_end,
                                                 detail::add(fin.rho, init.p_end));
          init.log_sum_weight = lsw_subtree;
          init.rho = rho_subtree;
          init.p_end = fin.p_end;
          init.p_sharp_end = fin.p_sharp_end;
          --top;
          valid = persist;
        }
      }
      if (!valid) break;
      ++depth;

      // The completed doubling is the single record left on the stack.
      const detail::subtree& sub = stack_[0];
      if (forward) {
        rho_fwd = sub.rho;
        p_fwd_bck = sub.p_begin;
        p_fwd_fwd = sub.p_end;
        ps_fwd_bck = sub.p_sharp_begin;
        ps_fwd_fwd = sub.p_sharp_end;
      } else {
        rho_bck = sub.rho;
        p_bck_fwd = sub.p_begin;
        p_bck_bck = sub.p_end;
        ps_bck_fwd = sub.p_sharp_begin;
        ps_bck_bck = sub.p_sharp_end;
      }
      // Biased progressive sampling: prefer the new half.
      if (sub.log_sum_weight > log_sum_weight) {
        z_sample = sub.proposal;
      } else if (rng.uniform() < std::exp(sub.log_sum_weight - log_sum_weight)) {
        z_sample = sub.proposal;
      }
      log_sum_weight = detail::log_sum_exp(log_sum_weight, sub.log_sum_weight);
      rho = detail::add(rho_bck, rho_fwd);
      bool persist = detail::no_u_turn(ps_bck_bck, ps_fwd_fwd, rho);
      persist = persist && detail::no_u_turn(ps_bck_bck, ps_fwd_bck, detail::add(rho_bck, p_fwd_bck));
      persist = persist && detail::no_u_turn(ps_bck_fwd, ps_fwd_fwd, detail::add(rho_fwd, p_bck_fwd));
      if (!persist) break;
    }

    current = z_sample;
    stats.log_density = current.log_density;
    stats.tree_depth = depth;
    stats.n_leapfrog = n_leapfrog;
    stats.divergent = divergent;
    stats.accept_stat = n_leapfrog > 0 ? sum_metro_prob / n_leapfrog : 0.0;
    stats.energy = hamiltonian(current);
    return stats;
  }

  static constexpr double max_energy_error = 1000.0;

  /// The diagonal of M⁻¹ (changed by adaptation between transitions).
  const std::vector<double>& inv_metric() const { return inv_metric_; }
  void set_inv_metric(std::vector<double> m) { inv_metric_ = std::move(m); }

  /// H(q, p) = −log p(q) + ½ pᵀ M⁻¹ p.
  double hamiltonian(const phase_point& z) const {
    double kinetic = 0;
    for (std::size_t i = 0; i < z.p.size(); ++i) kinetic += inv_metric_[i] * z.p[i] * z.p[i];
    return -z.log_density + 0.5 * kinetic;
  }
 private:
  std::vector<double> sharp(const std::vector<double>& p) const {
    std::vector<double> s(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) s[i] = inv_metric_[i] * p[i];
    return s;
  }
 public:
  /// One leapfrog step of size eps (negative: backwards in time).
  void leapfrog(phase_point& z, double eps) const {
    const std::size_t d = z.q.size();
    for (std::size_t i = 0; i < d; ++i) z.p[i] += 0.5 * eps * z.grad[i];
    for (std::size_t i = 0; i < d; ++i) z.q[i] += eps * inv_metric_[i] * z.p[i];
    z.log_density = target_(z.q, z.grad);
    for (std::size_t i = 0; i < d; ++i) z.p[i] += 0.5 * eps * z.grad[i];
  }

 private:
  const Target& target_;
  std::vector<double> inv_metric_;
  int max_depth_;
  std::vector<detail::subtree> stack_;
};

}  // namespace tyche::samplers
