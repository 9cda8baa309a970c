// tests/support/recursive_nuts.hpp — a plain, recursive No-U-Turn Sampler transition, kept as the
// test reference for tyche's unrolled (non-recursive) NUTS. It follows Stan's base_nuts: multinomial
// sampling within the trajectory (Betancourt 2017, appendix A), biased progressive sampling at the
// top level, and the extra U-turn checks across the two halves of every merged subtree.
//
// It depends on nothing from tyche: plain doubles, std::vector, and
//   Target: double operator()(const std::vector<double>& q, std::vector<double>& grad) const
//           returns log p(q) and writes ∇ log p(q) (grad already has size d);
//   Rng:    double uniform();  // in [0, 1)
//           double normal();   // standard normal
//
// Random numbers are consumed in exactly this order, and nowhere else:
//   1. d normals, the momentum p_i = normal() / sqrt(inv_metric_i), i = 0 … d−1;
//   2. per doubling: one uniform for the direction (forward iff u > 0.5), then the uniforms of the
//      subtree merges inside build_tree (one per merge of two valid halves, drawn before that merge's
//      U-turn check, in the order the merges complete: depth-first, left to right in time of
//      integration), then — only if the new subtree is valid and its log weight is not greater than
//      the old trajectory's — one uniform for the top-level (biased progressive) sample.
//
// Floating-point conventions (an unrolled implementation that wants bit-identical results must do
// the same arithmetic):
//   H(q, p)       = 0.5 · Σ_i p_i · (m_i · p_i)  −  log p(q),   sum sequential over i = 0 … d−1;
//   p♯_i          = m_i · p_i                                    (m = inv_metric);
//   leapfrog(ε')  : h = 0.5·ε'; p_i += h·g_i; q_i += ε'·(m_i·p_i); g = ∇log p(q); p_i += h·g_i;
//   dot(a, b)     = Σ_i a_i · b_i, sequential over i = 0 … d−1;
//   log_sum_exp(a, b) = a == −∞ ? b : b == −∞ ? a : a > b ? a + log1p(exp(b − a))
//                                                       : b + log1p(exp(a − b));
//   vector sums such as rho_init + p_final_beg are elementwise, in the order written.
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

namespace tyche_test {

struct nuts_draw {
  std::vector<double> q;
  double log_density = 0;
  int tree_depth = 0;
  int n_leapfrog = 0;
  bool divergent = false;
  double accept_stat = 0;
  double energy = 0;
};

namespace recursive_nuts_detail {

using vec = std::vector<double>;

inline constexpr double neg_inf = -std::numeric_limits<double>::infinity();

/// log(exp(a) + exp(b)); log_sum_exp(−∞, −∞) = −∞, never NaN.
inline double log_sum_exp(double a, double b) {
  if (a == neg_inf) return b;
  if (b == neg_inf) return a;
  if (a > b) return a + std::log1p(std::exp(b - a));
  return b + std::log1p(std::exp(a - b));
}

inline double dot(const vec& a, const vec& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

inline vec add(const vec& a, const vec& b) {
  vec r(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) r[i] = a[i] + b[i];
  return r;
}

inline void add_to(vec& a, const vec& b) {
  for (std::size_t i = 0; i < a.size(); ++i) a[i] += b[i];
}

/// The (generalised) no-U-turn criterion: both ends still move along rho.
inline bool criterion(const vec& p_sharp_minus, const vec& p_sharp_plus, const vec& rho) {
  return dot(p_sharp_minus, rho) > 0 && dot(p_sharp_plus, rho) > 0;
}

/// A point in phase space, with the log density and its gradient at q (reused by the next leapfrog).
struct phase_point {
  vec q, p, grad;
  double log_density = 0;
};

template <class Target, class Rng>
class sampler {
 public:
  sampler(const Target& target, double step_size, const vec& inv_metric, Rng& rng)
      : target_(target), step_size_(step_size), m_(inv_metric), rng_(rng) {}

  double hamiltonian(const phase_point& z) const {
    double k = 0;
    for (std::size_t i = 0; i < m_.size(); ++i) k += z.p[i] * (m_[i] * z.p[i]);
    return 0.5 * k - z.log_density;
  }

  vec p_sharp(const vec& p) const {
    vec r(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) r[i] = m_[i] * p[i];
    return r;
  }

  void leapfrog(phase_point& z, double eps) const {
    const double half = 0.5 * eps;
    for (std::size_t i = 0; i < z.p.size(); ++i) z.p[i] += half * z.grad[i];
    for (std::size_t i = 0; i < z.q.size(); ++i) z.q[i] += eps * (m_[i] * z.p[i]);
    z.log_density = target_(z.q, z.grad);
    for (std::size_t i = 0; i < z.p.size(); ++i) z.p[i] += half * z.grad[i];
  }

  nuts_draw transition(const vec& q0) {
    const std::size_t d = q0.size();
    phase_point z0;
    z0.q = q0;
    z0.p.resize(d);
    for (std::size_t i = 0; i < d; ++i) z0.p[i] = rng_.normal() / std::sqrt(m_[i]);
    z0.grad.assign(d, 0.0);
    z0.log_density = target_(z0.q, z0.grad);
    H0_ = hamiltonian(z0);
    n_leapfrog_ = 0;
    sum_metro_prob_ = 0;
    divergent_ = false;

    phase_point z_fwd = z0, z_bck = z0, z_sample = z0, z_propose = z0;
    double log_sum_weight = 0;  // log weight of the initial point, exp(H0 − H0)
    vec rho = z0.p;
    vec p_fwd_fwd = z0.p, p_fwd_bck = z0.p, p_bck_fwd = z0.p, p_bck_bck = z0.p;
    const vec ps0 = p_sharp(z0.p);
    vec ps_fwd_fwd = ps0, ps_fwd_bck = ps0, ps_bck_fwd = ps0, ps_bck_bck = ps0;
    int depth = 0;

    while (depth < max_depth_) {
      vec rho_fwd(d, 0.0), rho_bck(d, 0.0);
      double log_sum_weight_subtree = neg_inf;
      bool valid = false;
      if (rng_.uniform() > 0.5) {
        z_ = z_fwd;
        rho_bck = rho;
        p_bck_fwd = p_fwd_fwd;  // the old trajectory's forward end (Stan's base_nuts; the first
        ps_bck_fwd = ps_fwd_fwd;  // version of this contract said p_fwd_bck, which biases sampling)
        valid = build_tree(depth, z_propose, ps_fwd_bck, ps_fwd_fwd, rho_fwd, p_fwd_bck, p_fwd_fwd,
                           log_sum_weight_subtree, +1.0);
        z_fwd = z_;
      } else {
        z_ = z_bck;
        rho_fwd = rho;
        p_fwd_bck = p_bck_bck;  // the old trajectory's backward end
        ps_fwd_bck = ps_bck_bck;
        valid = build_tree(depth, z_propose, ps_bck_fwd, ps_bck_bck, rho_bck, p_bck_fwd, p_bck_bck,
                           log_sum_weight_subtree, -1.0);
        z_bck = z_;
      }
      if (!valid) break;
      ++depth;

      if (log_sum_weight_subtree > log_sum_weight) {
        z_sample = z_propose;
      } else {
        const double accept_prob = std::exp(log_sum_weight_subtree - log_sum_weight);
        if (rng_.uniform() < accept_prob) z_sample = z_propose;
      }
      log_sum_weight = log_sum_exp(log_sum_weight, log_sum_weight_subtree);
      rho = add(rho_bck, rho_fwd);

      const bool persist = criterion(ps_bck_bck, ps_fwd_fwd, rho) &&
                           criterion(ps_bck_bck, ps_fwd_bck, add(rho_bck, p_fwd_bck)) &&
                           criterion(ps_bck_fwd, ps_fwd_fwd, add(rho_fwd, p_bck_fwd));
      if (!persist) break;
    }

    nuts_draw out;
    out.q = z_sample.q;
    out.log_density = z_sample.log_density;
    out.tree_depth = depth;
    out.n_leapfrog = n_leapfrog_;
    out.divergent = divergent_;
    out.accept_stat = sum_metro_prob_ / static_cast<double>(n_leapfrog_);
    out.energy = hamiltonian(z_sample);
    return out;
  }

  void set_max_depth(int max_depth) { max_depth_ = max_depth; }

 private:
  /// Extends the trajectory from z_ by 2^depth leapfrogs in direction sign. Returns false when the
  /// new subtree (or one of its subtrees) diverged or made a U-turn.
  bool build_tree(int depth, phase_point& z_propose, vec& p_sharp_beg, vec& p_sharp_end, vec& rho,
                  vec& p_beg, vec& p_end, double& log_sum_weight, double sign) {
    const std::size_t d = m_.size();
    if (depth == 0) {
      leapfrog(z_, sign * step_size_);
      ++n_leapfrog_;
      double h = hamiltonian(z_);
      if (std::isnan(h)) h = std::numeric_limits<double>::infinity();
      if (h - H0_ > max_delta_h_) divergent_ = true;
      log_sum_weight = log_sum_exp(log_sum_weight, H0_ - h);
      sum_metro_prob_ += H0_ - h > 0 ? 1.0 : std::exp(H0_ - h);
      z_propose = z_;
      p_sharp_beg = p_sharp(z_.p);
      p_sharp_end = p_sharp_beg;
      add_to(rho, z_.p);
      p_beg = z_.p;
      p_end = p_beg;
      return !divergent_;
    }

    // The initial half.
    double log_sum_weight_init = neg_inf;
    vec p_init_end(d, 0.0), p_sharp_init_end(d, 0.0), rho_init(d, 0.0);
    if (!build_tree(depth - 1, z_propose, p_sharp_beg, p_sharp_init_end, rho_init, p_beg, p_init_end,
                    log_sum_weight_init, sign))
      return false;

    // The final half.
    phase_point z_propose_final = z_;
    double log_sum_weight_final = neg_inf;
    vec p_final_beg(d, 0.0), p_sharp_final_beg(d, 0.0), rho_final(d, 0.0);
    if (!build_tree(depth - 1, z_propose_final, p_sharp_final_beg, p_sharp_end, rho_final, p_final_beg,
                    p_end, log_sum_weight_final, sign))
      return false;

    // Multinomial sample from the merged subtree.
    const double log_sum_weight_subtree = log_sum_exp(log_sum_weight_init, log_sum_weight_final);
    log_sum_weight = log_sum_exp(log_sum_weight, log_sum_weight_subtree);
    if (log_sum_weight_final > log_sum_weight_subtree) {
      z_propose = z_propose_final;
    } else {
      const double accept_prob = std::exp(log_sum_weight_final - log_sum_weight_subtree);
      if (rng_.uniform() < accept_prob) z_propose = z_propose_final;
    }

    const vec rho_subtree = add(rho_init, rho_final);
    add_to(rho, rho_subtree);

    return criterion(p_sharp_beg, p_sharp_end, rho_subtree) &&
           criterion(p_sharp_beg, p_sharp_final_beg, add(rho_init, p_final_beg)) &&
           criterion(p_sharp_init_end, p_sharp_end, add(rho_final, p_init_end));
  }

  const Target& target_;
  double step_size_;
  const vec& m_;
  Rng& rng_;
  int max_depth_ = 10;
  double max_delta_h_ = 1000;
  phase_point z_;  // the running state the leapfrogs advance
  double H0_ = 0;
  int n_leapfrog_ = 0;
  double sum_metro_prob_ = 0;
  bool divergent_ = false;
};

}  // namespace recursive_nuts_detail

/// One NUTS transition from q0 (Stan's base_nuts, diagonal metric inv_metric = M⁻¹). tree_depth is
/// the number of completed doublings; accept_stat = (Σ over all leapfrogs of min(1, exp(H0 − H))) /
/// n_leapfrog (NaN when max_depth ≤ 0, since then no leapfrog is taken); energy = H at the sampled
/// point with the momentum it had on the trajectory.
template <class Target, class Rng>
nuts_draw recursive_nuts_transition(const Target& target, const std::vector<double>& q0, double step_size,
                                    const std::vector<double>& inv_metric, int max_depth, Rng& rng) {
  recursive_nuts_detail::sampler<Target, Rng> s(target, step_size, inv_metric, rng);
  s.set_max_depth(max_depth);
  return s.transition(q0);
}

}  // namespace tyche_test
