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

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
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

/// The three U-turn checks of joining two adjacent spans of a trajectory, A then B in the
/// direction of integration (Stan's generalised criterion with the two extra checks across the
/// join): ρ = ρ_A + ρ_B between A's first and B's last p♯, ρ_A + p_B,begin between A's first
/// and B's first, ρ_B + p_A,end between A's last and B's last. One pass over the coordinates;
/// writes ρ_A + ρ_B to rho_out, which may be a_rho.
inline bool joined_no_u_turn(std::size_t d, const double* a_rho, const double* a_p_end,
                             const double* a_ps_begin, const double* a_ps_end, const double* b_rho,
                             const double* b_p_begin, const double* b_ps_begin, const double* b_ps_end,
                             double* rho_out) {
  double whole_begin = 0, whole_end = 0, left_begin = 0, left_end = 0, right_begin = 0, right_end = 0;
  for (std::size_t i = 0; i < d; ++i) {
    const double ra = a_rho[i], rb = b_rho[i];
    const double whole = ra + rb, left = ra + b_p_begin[i], right = rb + a_p_end[i];
    whole_begin += a_ps_begin[i] * whole;
    whole_end += b_ps_end[i] * whole;
    left_begin += a_ps_begin[i] * left;
    left_end += b_ps_begin[i] * left;
    right_begin += a_ps_end[i] * right;
    right_end += b_ps_end[i] * right;
    rho_out[i] = whole;
  }
  return whole_begin > 0 && whole_end > 0 && left_begin > 0 && left_end > 0 && right_begin > 0 &&
         right_end > 0;
}

}  // namespace detail

/// One NUTS transition from q0. Target: `double operator()(const std::vector<double>& q,
/// std::vector<double>& grad) const` returning log p(q) and writing its gradient. Rng:
/// `double uniform()` in [0, 1) and `double normal()`. inv_metric is the diagonal of M⁻¹;
/// set_dense_inv_metric() makes the metric dense.
/// Random numbers are consumed in this order: the momentum (one normal per coordinate, in
/// order), then per doubling one uniform for the direction, one for each merge, and one at the
/// end of the doubling unless the new half outweighs the trajectory before it.
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
  // The state points into its own storage (see storage_).
  unrolled_transition(const unrolled_transition&) = delete;
  unrolled_transition& operator=(const unrolled_transition&) = delete;

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
    reserve(d);
    current_ = &current;
    stats_ = transition_stats{};
    stats_.step_size = step_size;
    step_size_ = step_size;
    sample_momentum(current.p, d, rng);
    H0_ = hamiltonian(current);
    z_fwd_ = current;
    z_bck_ = current;
    proposal& sample = proposals_[sample_];
    const double* p = current.p.data();
    for (std::size_t i = 0; i < d; ++i) {
      sample.q[i] = current.q[i];
      sample.p[i] = p[i];
      sample.grad[i] = current.grad[i];
      rho_[i] = p_fwd_fwd_[i] = p_bck_bck_[i] = p[i];
    }
    sample.log_density = current.log_density;
    sample.energy = H0_;
    sharp(p, ps_fwd_fwd_);
    for (std::size_t i = 0; i < d; ++i) ps_bck_bck_[i] = ps_fwd_fwd_[i];
    weight_scale_ = 0;
    weight_ = 1;  // the initial point's weight, exp(H0 − H0)
    sum_metro_prob_ = 0;
    depth_ = 0;
    n_leapfrog_ = 0;
    divergent_ = false;
    begin_doubling(rng);  // depth 0 < max_depth: always at least one leapfrog
  }

  /// The point whose log density and gradient the state machine waits for.
  phase_point& pending() { return *active_; }

  /// Continues after pending()'s log_density and grad were set. Returns true when the
  /// transition has ended (the selected point is in `current`, stats() holds its statistics);
  /// false when pending() again wants a gradient.
  bool resume(Rng& rng) {
    phase_point& z = pending();
    const std::size_t d = d_;
    // The second half of the leapfrog's momentum update, and the new leaf: a subtree of one
    // point, its own proposal, ρ = p at both ends.
    subtree& leaf = stack_[static_cast<std::size_t>(top_++)];
    proposal& prop = proposals_[leaf.proposal];
    const double half_eps = 0.5 * eps_;
    double* TYCHE_RESTRICT zp = z.p.data();
    const double* TYCHE_RESTRICT zq = z.q.data();
    const double* TYCHE_RESTRICT zg = z.grad.data();
    double kinetic = 0;
    if (!dense_) {
      // Distinct buffers, so the copies vectorise; the kinetic energy is summed in order after.
      const double* TYCHE_RESTRICT m = inv_metric_.data();
      double* TYCHE_RESTRICT rho = leaf.rho;
      double* TYCHE_RESTRICT p_begin = leaf.p_begin;
      double* TYCHE_RESTRICT p_end = leaf.p_end;
      double* TYCHE_RESTRICT ps_begin = leaf.ps_begin;
      double* TYCHE_RESTRICT ps_end = leaf.ps_end;
      double* TYCHE_RESTRICT prop_q = prop.q;
      double* TYCHE_RESTRICT prop_p = prop.p;
      double* TYCHE_RESTRICT prop_grad = prop.grad;
      {  // pᵀM⁻¹p first, from the inputs: four partial sums
        double k[4] = {0, 0, 0, 0};
        for (std::size_t i = 0; i < d; ++i) {
          const double pi = zp[i] + half_eps * zg[i];
          k[i % 4] += (m[i] * pi) * pi;
        }
        kinetic = (k[0] + k[1]) + (k[2] + k[3]);
      }
      for (std::size_t i = 0; i < d; ++i) {
        const double pi = zp[i] + half_eps * zg[i];
        const double ps = m[i] * pi;
        zp[i] = rho[i] = p_begin[i] = p_end[i] = prop_p[i] = pi;
        ps_begin[i] = ps_end[i] = ps;
        prop_q[i] = zq[i];
        prop_grad[i] = zg[i];
      }
    } else {
      for (std::size_t i = 0; i < d; ++i) zp[i] += half_eps * zg[i];
      sharp(zp, leaf.ps_begin);
      for (std::size_t i = 0; i < d; ++i) {
        kinetic += zp[i] * leaf.ps_begin[i];
        leaf.rho[i] = leaf.p_begin[i] = leaf.p_end[i] = zp[i];
        leaf.ps_end[i] = leaf.ps_begin[i];
        prop.q[i] = zq[i];
        prop.p[i] = zp[i];
        prop.grad[i] = zg[i];
      }
    }
    ++n_leapfrog_;
    double h = -z.log_density + 0.5 * kinetic;
    if (std::isnan(h)) h = std::numeric_limits<double>::infinity();
    if (h - H0_ > max_energy_error) divergent_ = true;
    prop.log_density = z.log_density;
    prop.energy = h;
    // The leaf's weight exp(H0 − h), relative to exp(weight_scale_); one exp also gives the
    // acceptance statistic's term min(1, exp(H0 − h)) while the scale is 0.
    const double log_weight = H0_ - h;  // −∞ when h is
    if (log_weight > weight_scale_ + max_log_weight) rescale_weights(log_weight);
    leaf.weight = std::exp(log_weight - weight_scale_);
    // (min without a branch: which side wins is a coin toss, a branch would be mispredicted.)
    sum_metro_prob_ += weight_scale_ == 0 ? std::min(1.0, leaf.weight) : log_weight > 0 ? 1.0 : std::exp(log_weight);
    if (divergent_) return finish();
    // The merges the schedule prescribes after leaf k: ctz(k) of them.
    for (int m = std::countr_zero(static_cast<unsigned long>(leaf_)); m > 0; --m) {
      subtree& init = stack_[static_cast<std::size_t>(top_ - 2)];
      subtree& fin = stack_[static_cast<std::size_t>(top_ - 1)];
      // Uniform-progressive sampling: the later subtree's proposal with its share of the weight
      // (a uniform drawn at every merge, as the recursive algorithm does).
      const double weight = init.weight + fin.weight;
      const bool take_final = rng.uniform() < fin.weight / weight;
      const std::size_t kept = init.proposal, other = fin.proposal;  // a select, not a branch
      init.proposal = take_final ? other : kept;
      fin.proposal = take_final ? kept : other;
      const bool persist = detail::joined_no_u_turn(d, init.rho, init.p_end, init.ps_begin, init.ps_end, fin.rho,
                                                    fin.p_begin, fin.ps_begin, fin.ps_end, init.rho);
      init.weight = weight;
      std::swap(init.p_end, fin.p_end);  // fin is popped: its storage is free
      std::swap(init.ps_end, fin.ps_end);
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
  /// An Rng with `void normals(double* out, std::size_t n)` gives the d normals in one call.
  void sample_momentum(std::vector<double>& p, std::size_t d, Rng& rng) const {
    p.resize(d);
    if constexpr (requires(double* out) { rng.normals(out, d); }) {
      rng.normals(p.data(), d);
    } else {
      for (std::size_t i = 0; i < d; ++i) p[i] = rng.normal();
    }
    if (!dense_) {
      for (std::size_t i = 0; i < d; ++i) p[i] /= std::sqrt(inv_metric_[i]);
      return;
    }
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

  /// One leapfrog step of size eps (negative: backwards in time).
  void leapfrog(phase_point& z, double eps) const {
    const std::size_t d = z.q.size();
    for (std::size_t i = 0; i < d; ++i) z.p[i] += 0.5 * eps * z.grad[i];
    drift(z, eps);
    z.log_density = target_(z.q, z.grad);
    for (std::size_t i = 0; i < d; ++i) z.p[i] += 0.5 * eps * z.grad[i];
  }

 private:
  // A candidate point: position, momentum, gradient (d values each, in storage_), log density
  // and H.
  struct proposal {
    double *q = nullptr, *p = nullptr, *grad = nullptr;
    double log_density = 0, energy = 0;
  };
  // A completed subtree on the stack: its proposal (an index into proposals_), its total weight,
  // the sum of its momenta, and the momenta (and p♯ = M⁻¹p) at its two ends, in the direction
  // of integration (d values each, in storage_). Merges and the end of a doubling swap these
  // pointers instead of copying vectors.
  struct subtree {
    std::size_t proposal = 0;
    double weight = 0;  // Σ exp(H0 − h) over its points, relative to exp(weight_scale_)
    double *rho = nullptr, *p_begin = nullptr, *p_end = nullptr, *ps_begin = nullptr, *ps_end = nullptr;
  };

  // Sizes the state for dimension d, once: max_depth stack records (a doubling of depth j < max
  // depth holds at most j + 1), their proposals and the sample's, and the trajectory's vectors.
  void reserve(std::size_t d) {
    if (d == d_ && !storage_.empty()) return;
    d_ = d;
    const std::size_t slots = static_cast<std::size_t>(max_depth_);
    const std::size_t vectors = slots * 5 + (slots + 1) * 3 + 11;
    storage_.assign(vectors * d + 1, 0.0);  // + 1: never empty
    double* next = storage_.data();
    auto take = [&] {
      double* v = next;
      next += d;
      return v;
    };
    proposals_.assign(slots + 1, proposal{});
    for (auto& pr : proposals_) pr = {take(), take(), take(), 0, 0};
    stack_.assign(slots, subtree{});
    for (std::size_t k = 0; k < slots; ++k) stack_[k] = {k, 0, take(), take(), take(), take(), take()};
    sample_ = slots;
    rho_ = take();
    rho_fwd_ = take();
    rho_bck_ = take();
    p_fwd_fwd_ = take();
    p_fwd_bck_ = take();
    p_bck_fwd_ = take();
    p_bck_bck_ = take();
    ps_fwd_fwd_ = take();
    ps_fwd_bck_ = take();
    ps_bck_fwd_ = take();
    ps_bck_bck_ = take();
  }

  // p♯ = M⁻¹p (out may not alias p).
  void sharp(const double* TYCHE_RESTRICT p, double* TYCHE_RESTRICT out) const {
    const std::size_t d = d_;
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
    dense_drift_.resize(d);
    for (std::size_t i = 0; i < d; ++i) {
      double row = 0;
      for (std::size_t j = 0; j < d; ++j) row += inv_metric_[i * d + j] * z.p[j];
      dense_drift_[i] = row;
    }
    for (std::size_t i = 0; i < d; ++i) z.q[i] += eps * dense_drift_[i];
  }

  // Weights are products of exps: beyond exp(max_log_weight) relative to the scale, the scale
  // moves up (rarely: H0 − h > 300 means the trajectory fell 300 below the initial energy).
  // Weights then below e^−745 of the largest become 0: their share is below that too.
  static constexpr double max_log_weight = 300.0;
  void rescale_weights(double scale) {
    const double factor = std::exp(weight_scale_ - scale);
    for (int k = 0; k + 1 < top_; ++k) stack_[static_cast<std::size_t>(k)].weight *= factor;  // not the new leaf
    weight_ *= factor;
    weight_scale_ = scale;
  }

  // A doubling: a direction, then 2^depth leaves.
  void begin_doubling(Rng& rng) {
    forward_ = rng.uniform() > 0.5;
    // The trajectory so far becomes the half on the other side of the new subtree: its end
    // nearest the new subtree is the trajectory's old end in that direction. (The new side's
    // vectors are all rewritten by end_doubling, so the old ones are swapped, not copied.)
    if (forward_) {
      std::swap(rho_bck_, rho_);
      std::swap(p_bck_fwd_, p_fwd_fwd_);
      std::swap(ps_bck_fwd_, ps_fwd_fwd_);
    } else {
      std::swap(rho_fwd_, rho_);
      std::swap(p_fwd_bck_, p_bck_bck_);
      std::swap(ps_fwd_bck_, ps_bck_bck_);
    }
    eps_ = forward_ ? step_size_ : -step_size_;
    active_ = forward_ ? &z_fwd_ : &z_bck_;
    top_ = 0;
    leaves_ = 1L << depth_;
    leaf_ = 1;
    start_leapfrog();
  }

  // The leapfrog's first half momentum update and position update; the gradient is next.
  void start_leapfrog() {
    phase_point& z = pending();
    const std::size_t d = d_;
    const double half_eps = 0.5 * eps_, eps = eps_;
    double* TYCHE_RESTRICT zp = z.p.data();
    const double* TYCHE_RESTRICT zg = z.grad.data();
    if (!dense_) {
      double* TYCHE_RESTRICT zq = z.q.data();
      const double* TYCHE_RESTRICT m = inv_metric_.data();
      for (std::size_t i = 0; i < d; ++i) {
        const double pi = zp[i] + half_eps * zg[i];
        zp[i] = pi;
        zq[i] += eps * m[i] * pi;
      }
      return;
    }
    for (std::size_t i = 0; i < d; ++i) zp[i] += half_eps * zg[i];
    drift(z, eps);
  }

  // A doubling completed: it is the single record left on the stack.
  bool end_doubling(Rng& rng) {
    ++depth_;
    subtree& sub = stack_[0];
    // The new half takes the subtree's vectors; the subtree takes the old ones, which the next
    // doubling's first leaf overwrites.
    if (forward_) {
      std::swap(rho_fwd_, sub.rho);
      std::swap(p_fwd_bck_, sub.p_begin);
      std::swap(p_fwd_fwd_, sub.p_end);
      std::swap(ps_fwd_bck_, sub.ps_begin);
      std::swap(ps_fwd_fwd_, sub.ps_end);
    } else {
      std::swap(rho_bck_, sub.rho);
      std::swap(p_bck_fwd_, sub.p_begin);
      std::swap(p_bck_bck_, sub.p_end);
      std::swap(ps_bck_fwd_, sub.ps_begin);
      std::swap(ps_bck_bck_, sub.ps_end);
    }
    // Biased progressive sampling: prefer the new half.
    bool take = sub.weight > weight_;
    if (!take) take = rng.uniform() < sub.weight / weight_;
    const std::size_t kept = sample_, other = sub.proposal;
    sample_ = take ? other : kept;
    sub.proposal = take ? kept : other;
    weight_ += sub.weight;
    const bool persist = detail::joined_no_u_turn(d_, rho_bck_, p_bck_fwd_, ps_bck_bck_, ps_bck_fwd_, rho_fwd_,
                                                  p_fwd_bck_, ps_fwd_bck_, ps_fwd_fwd_, rho_);
    if (!persist || depth_ >= max_depth_) return finish();
    begin_doubling(rng);
    return false;
  }

  // The transition ended: the selected point becomes the current one.
  bool finish() {
    phase_point& current = *current_;
    const proposal& sample = proposals_[sample_];
    const std::size_t d = d_;
    for (std::size_t i = 0; i < d; ++i) {
      current.q[i] = sample.q[i];
      current.p[i] = sample.p[i];
      current.grad[i] = sample.grad[i];
    }
    current.log_density = sample.log_density;
    stats_.log_density = current.log_density;
    stats_.tree_depth = depth_;
    stats_.n_leapfrog = n_leapfrog_;
    stats_.divergent = divergent_;
    stats_.accept_stat = n_leapfrog_ > 0 ? sum_metro_prob_ / n_leapfrog_ : 0.0;
    stats_.energy = sample.energy;
    return true;
  }

  const Target& target_;
  std::vector<double> inv_metric_, chol_;
  mutable std::vector<double> dense_drift_;
  bool dense_ = false;
  int max_depth_;

  // Every d-vector of the state lives in storage_, sized once for the dimension (reserve()).
  std::vector<double> storage_;
  std::size_t d_ = 0;
  std::vector<proposal> proposals_;  // the stack records' and the sample's
  std::vector<subtree> stack_;
  std::size_t sample_ = 0;  // the proposal selected so far

  // The state of the transition in progress.
  phase_point* current_ = nullptr;
  transition_stats stats_;
  double step_size_ = 0, eps_ = 0, H0_ = 0, sum_metro_prob_ = 0;
  // Weights exp(H0 − h) are kept as exp(H0 − h − weight_scale_): 0 unless a point's H0 − h
  // exceeded max_log_weight (an energy far below the initial one, e.g. early in warm-up), then
  // the largest such H0 − h. weight_: the trajectory's total weight.
  double weight_scale_ = 0, weight_ = 1;
  int depth_ = 0, n_leapfrog_ = 0, top_ = 0;
  long leaves_ = 0, leaf_ = 0;
  bool forward_ = true, divergent_ = false;
  phase_point* active_ = &z_fwd_;  // the end being extended: z_fwd_ or z_bck_
  phase_point z_fwd_, z_bck_;
  double *rho_ = nullptr, *rho_fwd_ = nullptr, *rho_bck_ = nullptr;
  double *p_fwd_fwd_ = nullptr, *p_fwd_bck_ = nullptr, *p_bck_fwd_ = nullptr, *p_bck_bck_ = nullptr;
  double *ps_fwd_fwd_ = nullptr, *ps_fwd_bck_ = nullptr, *ps_bck_fwd_ = nullptr, *ps_bck_bck_ = nullptr;
};

}  // namespace tyche::samplers
