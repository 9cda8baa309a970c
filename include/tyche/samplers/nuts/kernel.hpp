// tyche/samplers/nuts/kernel.hpp — the NUTS transition as a kernel that runs anywhere: W chains
// as the lanes of one value of type T (T = double or float: one chain, on the host or in a CUDA
// thread; T = an xsimd batch: one chain per SIMD lane), each lane at its own point of its own
// trajectory. No allocation (the caller binds one buffer), no exception (functions return a
// nuts_status), no I/O, no std:: container; every member is TYCHE_HD.
//
// The algorithm is Stan's NUTS in Lao & Dillon's unrolled form (instruction_table.hpp; docs/
// nuts.md): multinomial sampling (uniform-progressive within a doubling, biased-progressive at
// its end), the generalised U-turn criterion with the two extra checks across every merge,
// divergence when the energy error exceeds 1000. The random numbers are consumed in the
// recursive algorithm's order — per transition the momentum (one normal per coordinate), then
// per doubling one uniform for the direction, one per merge, and one at the end of the doubling
// unless the new half outweighs the trajectory before it — so the kernel reproduces the
// recursion (tests/samplers/unrolled_nuts_test.cpp) and, lane by lane, the single-chain kernel
// (tests/samplers/kernel_test.cpp).
//
// Subtrees are stored by *level* (a subtree of 2^j leaves at level j), not by stack slot: after
// leaf k of a doubling the completed subtrees are the set bits of k, leaf k is merged with the
// levels 0, 1, …, ctz(k) − 1 in turn (the merges the instruction table prescribes), and the
// result is stored at level ctz(k). Every lane that merges at step m reads level m: the lanes
// of a batch touch the same addresses, and a lane's slot differs from another's only by masks.
//
// Use: bind() a buffer of storage_size() values of T; per lane, set_point(), set_metric() and
// set_step_size() (a chain's state), set the lane's random stream (rng()); begin() the lanes
// that start a transition; then repeatedly evaluate log p and its gradient at pending_q() (all
// lanes at once, e.g. the model's program_view::value_and_gradient<T>), call
// set_pending(value) and resume(), until every lane you care about has ended (resume reports
// which lanes end in that step; stats(l) and the point — point_q(l) — are then the lane's
// result, and the lane waits for the next begin()).
#pragma once
#include <tyche/backends/simd/lanes.hpp>
#include <tyche/concepts.hpp>
#include <tyche/config.hpp>
#include <tyche/samplers/nuts/chain_streams.hpp>
#include <tyche/samplers/nuts/instruction_table.hpp>
#include <tyche/samplers/nuts/low_rank.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <math.h>    // global-namespace exp, which CUDA device code also provides
#include <string.h>  // ::memcpy, also in device code

// TYCHE_KERNEL_IVDEP: the loop after it has no dependences through memory between iterations
// (the kernel's vectors never overlap), so the compiler may vectorise it without run-time
// overlap checks. Internal; #undef-ed at the end of this header.
#if defined(__CUDACC__)
#define TYCHE_KERNEL_IVDEP
#elif defined(__clang__)
#define TYCHE_KERNEL_IVDEP _Pragma("clang loop vectorize(assume_safety)")
// Where T is already a SIMD batch the marked loops cannot be vectorised again, and clang says
// so (-Wpass-failed); that is expected, not a problem of the user's build. Popped at the end.
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wpass-failed"
#elif defined(__GNUC__)
#define TYCHE_KERNEL_IVDEP _Pragma("GCC ivdep")
#else
#define TYCHE_KERNEL_IVDEP
#endif

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
  /// The trajectory met a point whose log density (or energy) was not finite — NaN, or −∞ off
  /// the support — which counts as a divergence: where the model is not defined, not where
  /// its curvature defeats the step size (summary's divergence warning tells the two apart).
  /// (Last, so that the seven CmdStan columns above keep their positions in braced lists.)
  bool non_finite = false;
};

/// The kind of metric (mass matrix) of the kinetic energy: diagonal, dense, or low-rank +
/// diagonal (nutpie's: M⁻¹ = S(I + U(Λ − I)Uᵀ)S, estimated from draws and gradients,
/// samplers/nuts/low_rank.hpp). The kernel applies a low-rank metric in its factored form: O(dk)
/// per leapfrog for k directions, against O(d²) for a dense one (as the d × d matrix when 2k ≥ d,
/// where that costs less).
enum class metric_kind { diagonal, dense, low_rank };

/// Whether nuts_config::init_inv_metric and nuts_fit::inv_metric hold this kind as a d × d matrix:
/// the dense kind, and the low-rank kind (whose chains keep it as factors, O(d·kmax) values:
/// low_rank.hpp; the fit's matrix only while d ≤ 1,000, its factors always).
TYCHE_HD constexpr bool stored_dense(metric_kind kind) { return kind != metric_kind::diagonal; }

/// What a kernel call reports; the executors turn anything but ok into an exception that names
/// the chain and the value.
enum class nuts_status : unsigned char {
  ok,
  storage_too_small,      // bind(): the buffer holds fewer than storage_size() values
  invalid_dimension,      // bind(): dim = 0
  invalid_max_depth,      // bind(): max_depth outside [1, max_supported_depth]
  invalid_step_size,      // set_step_size(): not a positive finite number
  invalid_metric,         // set_metric(): a diagonal element not positive and finite
  metric_not_positive_definite,  // set_metric() / cholesky_lower(): a dense metric is not
  non_finite_start,       // begin(): the starting point's log density or energy is not finite
  step_size_too_large,    // find_initial_step_size(): grew past 1e7 (improper posterior?)
  step_size_too_small,    // find_initial_step_size(): fell below 1e-300
};

/// A short English description of a status, for messages.
TYCHE_HD inline const char* describe(nuts_status s) {
  switch (s) {
    case nuts_status::ok: return "ok";
    case nuts_status::storage_too_small: return "the kernel's buffer is smaller than storage_size()";
    case nuts_status::invalid_dimension: return "the dimension is 0";
    case nuts_status::invalid_max_depth: return "max_depth is outside [1, 30]";
    case nuts_status::invalid_step_size: return "the step size is not a positive finite number";
    case nuts_status::invalid_metric: return "an element of the inverse metric is not a positive finite number";
    case nuts_status::metric_not_positive_definite: return "the dense inverse metric is not positive definite";
    case nuts_status::non_finite_start: return "the log density or energy at the start of the transition is not finite";
    case nuts_status::step_size_too_large:
      return "the step size grew past 1e7 while initialising it: the posterior may be improper";
    case nuts_status::step_size_too_small:
      return "no acceptably small step size: the log density or its gradient is not finite near the current point";
  }
  return "unknown status";
}

namespace detail {

TYCHE_HD TYCHE_INLINE double lane_exp(double x) { return ::exp(x); }
TYCHE_HD TYCHE_INLINE float lane_exp(float x) { return ::expf(x); }
TYCHE_HD TYCHE_INLINE double lane_log(double x) { return ::log(x); }
TYCHE_HD TYCHE_INLINE float lane_log(float x) { return ::logf(x); }

/// c ? a : b without a branch: for one lane the choice is a coin toss of the sampler (which
/// subtree's proposal is kept), so a branch would be mispredicted about half of the time. The
/// value is chosen by masking its bits, which compilers keep as straight-line code.
template <class R>
TYCHE_HD TYCHE_INLINE R choose(bool c, R a, R b) {
  using bits = std::conditional_t<sizeof(R) == 8, std::uint64_t, std::uint32_t>;
  static_assert(sizeof(R) == sizeof(bits), "tyche: choose() takes a 32- or 64-bit real");
  bits x, y;
  ::memcpy(&x, &a, sizeof x);
  ::memcpy(&y, &b, sizeof y);
  const bits m = bits(0) - static_cast<bits>(c);
  const bits r = y ^ ((x ^ y) & m);
  R out;
  ::memcpy(&out, &r, sizeof out);
  return out;
}
/// Exchanges the pointers a and b when c holds, without a branch (see choose()).
template <class T>
TYCHE_HD TYCHE_INLINE void exchange_if(bool c, T*& a, T*& b) {
  const std::uintptr_t x = reinterpret_cast<std::uintptr_t>(a), y = reinterpret_cast<std::uintptr_t>(b);
  const std::uintptr_t flip = (x ^ y) & (std::uintptr_t(0) - static_cast<std::uintptr_t>(c));
  a = reinterpret_cast<T*>(x ^ flip);
  b = reinterpret_cast<T*>(y ^ flip);
}

/// Count of trailing zero bits of k > 0 (std::countr_zero is not usable in device code).
TYCHE_HD TYCHE_INLINE int trailing_zeros(unsigned long k) {
#if defined(__CUDA_ARCH__)
  return __ffsll(static_cast<long long>(k)) - 1;
#elif defined(__GNUC__) || defined(__clang__)
  return __builtin_ctzl(k);
#else
  int n = 0;
  while ((k & 1u) == 0) {
    k >>= 1;
    ++n;
  }
  return n;
#endif
}

// ---- vector arithmetic of one lane type over the d coordinates --------------------------------
// Written once for every T; a batch's lanes compute what W scalar loops compute, in the same
// order of operations, so a chain's numbers do not depend on how many chains run beside it.

/// p♯ = M⁻¹p (diagonal: d values; dense: row-major d × d). out may not alias p.
template <class T>
TYCHE_HD TYCHE_INLINE void sharp(const T* TYCHE_RESTRICT metric, bool dense, const T* TYCHE_RESTRICT p,
                                 T* TYCHE_RESTRICT out, std::size_t d) {
  if (!dense) {
    for (std::size_t i = 0; i < d; ++i) out[i] = metric[i] * p[i];
    return;
  }
  for (std::size_t i = 0; i < d; ++i) {
    T row = T(0);
    for (std::size_t j = 0; j < d; ++j) row += metric[i * d + j] * p[j];
    out[i] = row;
  }
}

/// pᵀM⁻¹p, summed in coordinate order (the energy at the start of a transition).
template <class T>
TYCHE_HD TYCHE_INLINE T kinetic_energy_twice(const T* metric, bool dense, const T* p, std::size_t d) {
  T kinetic = T(0);
  if (!dense) {
    for (std::size_t i = 0; i < d; ++i) kinetic += metric[i] * p[i] * p[i];
  } else {
    for (std::size_t i = 0; i < d; ++i) {
      T row = T(0);
      for (std::size_t j = 0; j < d; ++j) row += metric[i * d + j] * p[j];
      kinetic += p[i] * row;
    }
  }
  return kinetic;
}

/// A momentum p ~ N(0, M) from d standard normals u (in p on entry): p_i = u_i / √(M⁻¹)_ii
/// (diagonal), or p = L⁻ᵀu with M⁻¹ = LLᵀ (dense: back substitution, in place).
template <class T>
TYCHE_HD TYCHE_INLINE void momentum_from_normals(const T* metric, const T* chol, bool dense, T* p, std::size_t d) {
  using traits = lane_traits<T>;
  if (!dense) {
    for (std::size_t i = 0; i < d; ++i) p[i] /= traits::sqrt(metric[i]);
    return;
  }
  for (std::size_t i = d; i-- > 0;) {
    T s = p[i];
    for (std::size_t k = i + 1; k < d; ++k) s -= chol[k * d + i] * p[k];
    p[i] = s / chol[i * d + i];
  }
}

/// q += eps · M⁻¹p (tmp: d values of scratch for a dense metric).
template <class T>
TYCHE_HD TYCHE_INLINE void drift(const T* TYCHE_RESTRICT metric, bool dense, T eps, T* TYCHE_RESTRICT q,
                                 const T* TYCHE_RESTRICT p, T* TYCHE_RESTRICT tmp, std::size_t d) {
  if (!dense) {
    for (std::size_t i = 0; i < d; ++i) q[i] += eps * metric[i] * p[i];
    return;
  }
  sharp(metric, dense, p, tmp, d);
  for (std::size_t i = 0; i < d; ++i) q[i] += eps * tmp[i];
}

/// dst = src in the lanes of `take` (all of dst for W = 1 when take is true).
template <class T>
TYCHE_HD TYCHE_INLINE void copy_lanes(T* TYCHE_RESTRICT dst, const T* TYCHE_RESTRICT src,
                                      const typename lane_traits<T>::mask& take, std::size_t d) {
  if constexpr (lane_traits<T>::width == 1) {
    if (take)
      for (std::size_t i = 0; i < d; ++i) dst[i] = src[i];
  } else {
    if (!lane_traits<T>::any(take)) return;
    for (std::size_t i = 0; i < d; ++i) dst[i] = lane_traits<T>::select(take, src[i], dst[i]);
  }
}

/// Swaps a and b in the lanes of `take`.
template <class T>
TYCHE_HD TYCHE_INLINE void swap_lanes(T* TYCHE_RESTRICT a, T* TYCHE_RESTRICT b,
                                      const typename lane_traits<T>::mask& take, std::size_t d) {
  for (std::size_t i = 0; i < d; ++i) {
    const T x = a[i], y = b[i];
    a[i] = lane_traits<T>::select(take, y, x);
    b[i] = lane_traits<T>::select(take, x, y);
  }
}

/// The low-rank form's arrays in the kernel: σ (d values), λ − 1 and λ^(−1/2) − 1 (kmax values
/// each, zero past a lane's k) and the directions U (row p: u_p, d values; zero past a lane's k).
template <class T>
struct low_rank_view {
  const T* sigma;
  const T* a;  // λ − 1
  const T* b;  // λ^(−1/2) − 1
  const T* u;
  std::size_t k;  // rows of U in use (the largest k of the lanes)
};

/// out = M⁻¹p = S(x + U(a ⊙ Uᵀx)), x = Sp. out may not alias p.
template <class T>
TYCHE_HD TYCHE_INLINE void sharp_low_rank(const low_rank_view<T>& m, const T* TYCHE_RESTRICT p, T* TYCHE_RESTRICT out,
                                          std::size_t d) {
  for (std::size_t i = 0; i < d; ++i) out[i] = m.sigma[i] * p[i];
  for (std::size_t r = 0; r < m.k; ++r) {
    const T* TYCHE_RESTRICT u = m.u + r * d;
    T c = T(0);
    for (std::size_t i = 0; i < d; ++i) c += u[i] * (m.sigma[i] * p[i]);
    c *= m.a[r];
    for (std::size_t i = 0; i < d; ++i) out[i] += c * u[i];
  }
  for (std::size_t i = 0; i < d; ++i) out[i] *= m.sigma[i];
}

/// A momentum p ~ N(0, M) from d standard normals z (in p on entry): p = S⁻¹(z + U(b ⊙ Uᵀz)),
/// whose covariance S⁻¹(I + U(Λ⁻¹ − I)Uᵀ)S⁻¹ is M (U orthonormal). tmp: d values.
template <class T>
TYCHE_HD TYCHE_INLINE void momentum_low_rank(const low_rank_view<T>& m, T* TYCHE_RESTRICT p, T* TYCHE_RESTRICT tmp,
                                             std::size_t d) {
  for (std::size_t i = 0; i < d; ++i) tmp[i] = p[i];
  for (std::size_t r = 0; r < m.k; ++r) {
    const T* TYCHE_RESTRICT u = m.u + r * d;
    T c = T(0);
    for (std::size_t i = 0; i < d; ++i) c += u[i] * p[i];
    c *= m.b[r];
    for (std::size_t i = 0; i < d; ++i) tmp[i] += c * u[i];
  }
  for (std::size_t i = 0; i < d; ++i) p[i] = tmp[i] / m.sigma[i];
}

}  // namespace detail

/// Cholesky–Banachiewicz factor L (lower, row-major) of a symmetric positive-definite d × d
/// matrix m = LLᵀ. Returns metric_not_positive_definite (and the pivot index in *pivot) when a
/// pivot is not positive and finite.
template <class R>
TYCHE_HD nuts_status cholesky_lower(const R* m, R* chol, std::size_t d, std::size_t* pivot = nullptr) {
  for (std::size_t k = 0; k < d * d; ++k) chol[k] = R(0);
  for (std::size_t i = 0; i < d; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      R s = m[i * d + j];
      for (std::size_t k = 0; k < j; ++k) s -= chol[i * d + k] * chol[j * d + k];
      if (i == j) {
        if (!(s > 0) || s - s != 0) {  // not positive, or not finite
          if (pivot) *pivot = i;
          return nuts_status::metric_not_positive_definite;
        }
        chol[i * d + i] = lane_traits<R>::sqrt(s);
      } else {
        chol[i * d + j] = s / chol[j * d + j];
      }
    }
  return nuts_status::ok;
}

/// Checks a metric: diagonal (d positive finite values) or dense (positive definite, checked by
/// cholesky_lower). The first bad index goes to *where.
template <class R>
TYCHE_HD nuts_status check_diagonal_metric(const R* m, std::size_t d, std::size_t* where = nullptr) {
  for (std::size_t i = 0; i < d; ++i)
    if (!(m[i] > 0) || m[i] - m[i] != 0) {
      if (where) *where = i;
      return nuts_status::invalid_metric;
    }
  return nuts_status::ok;
}

/// W chains in the lanes of T, one NUTS transition each at a time. Rng: the lanes' random
/// streams (chain_streams<W> by default; see lane_generator in tyche/concepts.hpp).
template <class T, class Rng = chain_streams<lane_traits<T>::width>>
class nuts_kernel {
 public:
  using traits = lane_traits<T>;
  using real = typename traits::real;
  using mask = typename traits::mask;
  static constexpr int width = traits::width;
  static_assert(lane_generator<Rng, real>,
                "tyche::samplers::nuts_kernel<T, Rng> requires Rng to be a lane_generator (members "
                "uniforms(real* out, const bool* take) and normals(real* out, std::size_t n, const "
                "bool* take); see tyche/concepts.hpp)");
  static constexpr int max_levels = max_supported_depth;

  /// Values of T the kernel needs for dimension d, a maximum tree depth and a metric kind; for
  /// the low-rank metric, room for kmax directions (at most d; the default: d).
  TYCHE_HD static std::size_t storage_size(std::size_t d, int max_depth, metric_kind kind,
                                           std::size_t kmax = static_cast<std::size_t>(-1)) {
    const std::size_t depth = max_depth < 1 ? 1 : static_cast<std::size_t>(max_depth);
    const std::size_t metric =
        kind == metric_kind::dense ? 2 * d * d : kind == metric_kind::low_rank ? low_rank_storage(d, kmax) : d;
    return (vectors_fixed + vectors_per_level * depth) * d + metric;
  }
  /// The low-rank metric's part: σ and σ² (d each), λ − 1 and λ^(−½) − 1 (kmax each), U
  /// (kmax × d), and the d × d matrix only where one lane can use it (2·kmax ≥ d: it is then
  /// O(d·kmax) too).
  TYCHE_HD static std::size_t low_rank_storage(std::size_t d, std::size_t kmax) {
    const std::size_t k = kmax < d ? kmax : d;
    return 2 * d + 2 * k + k * d + (low_rank_whole(d, k) ? d * d : 0);
  }
  TYCHE_HD static bool low_rank_whole(std::size_t d, std::size_t kmax) { return width == 1 && 2 * kmax >= d; }

  /// Binds the kernel to `size` values of T at `storage` (which must outlive it and stay
  /// unused by others). Lanes start idle, with the identity metric, step size 1, point 0.
  /// Low rank: room for kmax directions (at most d; the default: d).
  TYCHE_HD nuts_status bind(T* storage, std::size_t size, std::size_t d, int max_depth, metric_kind kind,
                            std::size_t kmax = static_cast<std::size_t>(-1)) {
    if (d == 0) return nuts_status::invalid_dimension;
    if (max_depth < 1 || max_depth > max_supported_depth) return nuts_status::invalid_max_depth;
    if (size < storage_size(d, max_depth, kind, kmax)) return nuts_status::storage_too_small;
    kmax_ = kind == metric_kind::low_rank ? (kmax < d ? kmax : d) : 0;
    d_ = d;
    max_depth_ = max_depth;
    dense_ = kind == metric_kind::dense;
    low_rank_ = kind == metric_kind::low_rank;
    rank_ = 0;
    T* next = storage;
    auto take = [&](std::size_t n) {
      T* v = next;
      next += n;
      for (std::size_t i = 0; i < n; ++i) v[i] = T(0);
      return v;
    };
    metric_ = take(dense_ ? d * d : low_rank_ ? low_rank_storage(d, kmax_) : d);
    chol_ = dense_ ? take(d * d) : nullptr;
    cur_q_ = take(d);
    cur_g_ = take(d);
    z_.q = take(d);
    z_.p = take(d);
    z_.g = take(d);
    other_.q = take(d);
    other_.p = take(d);
    other_.g = take(d);
    sample_q_ = take(d);
    sample_g_ = take(d);
    carry_buffer_ = take_record(take, d);
    carry_ = &carry_buffer_;
    for (int j = 0; j < max_depth; ++j) level_[j] = take_record(take, d);
    rho_ = take(d);
    p_fwd_fwd_ = take(d);
    p_bck_bck_ = take(d);
    ps_fwd_fwd_ = take(d);
    ps_bck_bck_ = take(d);
    tmp_ = take(d);
    normals_ = take(d);
    for (int l = 0; l < width; ++l) {
      running_[l] = false;
      lane_rank_[l] = 0;
      step_size_[l] = 1;
      cur_logp_[l] = 0;
      z_is_fwd_[l] = true;
    }
    const T one = T(real(1));
    if (!dense_) {  // diagonal, or low rank's σ and σ² (with k = 0: the identity)
      for (std::size_t i = 0; i < d; ++i) metric_[i] = one;
      if (low_rank_)
        for (std::size_t i = 0; i < d; ++i) metric_[d + i] = one;
      if (low_rank_ && low_rank_whole(d, kmax_))
        for (std::size_t i = 0; i < d; ++i) low_rank_matrix()[i * d + i] = one;
    } else {
      for (std::size_t i = 0; i < d; ++i) metric_[i * d + i] = chol_[i * d + i] = one;
    }
    return nuts_status::ok;
  }

  TYCHE_HD std::size_t dim() const { return d_; }
  TYCHE_HD int max_depth() const { return max_depth_; }
  TYCHE_HD bool dense() const { return dense_; }
  TYCHE_HD bool low_rank() const { return low_rank_; }
  TYCHE_HD Rng& rng() { return rng_; }
  TYCHE_HD const Rng& rng() const { return rng_; }
  /// Lane l's random stream (chain_streams: its chain's Philox stream at its position).
  TYCHE_HD void set_stream(int lane, const counter_rng& g) { rng_.set_lane(lane, g); }
  TYCHE_HD counter_rng stream(int lane) const { return rng_.lane(lane); }

  // ---- a lane's chain: point, metric, step size ------------------------------------------------

  /// The lane's current point: θ, ∇log p(θ) and log p(θ).
  TYCHE_HD void set_point(int lane, const real* q, const real* grad, real log_density) {
    for (std::size_t i = 0; i < d_; ++i) {
      traits::set(cur_q_[i], lane, q[i]);
      traits::set(cur_g_[i], lane, grad[i]);
    }
    cur_logp_[lane] = log_density;
  }
  /// Writes the lane's current point (the selected point once a transition has ended).
  TYCHE_HD void get_point(int lane, real* q, real* grad = nullptr) const {
    for (std::size_t i = 0; i < d_; ++i) {
      q[i] = traits::get(cur_q_[i], lane);
      if (grad) grad[i] = traits::get(cur_g_[i], lane);
    }
  }
  TYCHE_HD real log_density(int lane) const { return cur_logp_[lane]; }

  /// Sets the lane's step size: a positive finite number.
  TYCHE_HD nuts_status set_step_size(int lane, real eps) {
    if (!(eps > 0) || eps - eps != 0) return nuts_status::invalid_step_size;
    step_size_[lane] = eps;
    return nuts_status::ok;
  }
  TYCHE_HD real step_size(int lane) const { return step_size_[lane]; }

  /// Sets the lane's inverse metric M⁻¹: the diagonal (d values), or for a dense kernel the
  /// row-major d × d matrix and, when chol is given, its Cholesky factor (cholesky_lower);
  /// without it the factor is computed here. Checked: positive finite, positive definite. A
  /// low-rank kernel takes its metric factored (set_metric_low_rank): here, invalid_metric.
  TYCHE_HD nuts_status set_metric(int lane, const real* m, const real* chol = nullptr) {
    const std::size_t d = d_;
    if (low_rank_) return nuts_status::invalid_metric;
    if (!dense_) {
      if (const nuts_status s = check_diagonal_metric(m, d); s != nuts_status::ok) return s;
      for (std::size_t i = 0; i < d; ++i) traits::set(metric_[i], lane, m[i]);
      return nuts_status::ok;
    }
    for (std::size_t k = 0; k < d * d; ++k) traits::set(metric_[k], lane, m[k]);
    if (chol) {
      for (std::size_t k = 0; k < d * d; ++k) traits::set(chol_[k], lane, chol[k]);
      return nuts_status::ok;
    }
    // Factor in place, lane by lane (rare: when a dense metric is set without its factor).
    for (std::size_t i = 0; i < d; ++i)
      for (std::size_t j = 0; j <= i; ++j) {
        real s = m[i * d + j];
        for (std::size_t k = 0; k < j; ++k) s -= traits::get(chol_[i * d + k], lane) * traits::get(chol_[j * d + k], lane);
        if (i == j) {
          if (!(s > 0) || s - s != 0) return nuts_status::metric_not_positive_definite;
          traits::set(chol_[i * d + i], lane, lane_traits<real>::sqrt(s));
        } else {
          traits::set(chol_[i * d + j], lane, s / traits::get(chol_[j * d + j], lane));
        }
      }
    return nuts_status::ok;
  }

  /// Sets the lane's low-rank inverse metric M⁻¹ = S(I + U(Λ − I)Uᵀ)S from its factors
  /// (low_rank.hpp's layout: low_rank_inverse_metric's, low_rank_factors_from_matrix's or
  /// low_rank_identity's). Checked: σ positive finite, k ≤ the kernel's kmax, every λ positive
  /// finite. Applied in O(dk) per leapfrog (k: the largest of the lanes') while 2k < d; with more
  /// directions the d × d matrix costs less, and one lane uses it instead (a batch of lanes keeps
  /// the factors: sharp_matrix): `matrix` (row-major, the same metric: low_rank_dense of the
  /// factors, as the chain keeps it), or without it the matrix computed here from the factors
  /// (O(d²k), the same values). The momentum is drawn from the factors either way (once per
  /// transition).
  TYCHE_HD nuts_status set_metric_low_rank(int lane, const real* factors, const real* matrix = nullptr) {
    const std::size_t d = d_;
    if (!low_rank_) return nuts_status::invalid_metric;
    const int bad = low_rank_check(factors, d);
    if (bad == 1) return nuts_status::invalid_metric;
    if (bad == 2) return nuts_status::metric_not_positive_definite;
    const detail::low_rank_layout at = detail::low_rank_layout::of(factors, d);
    const std::size_t k = static_cast<std::size_t>(factors[at.rank()]);
    if (k > kmax_) return nuts_status::invalid_metric;
    const detail::low_rank_view<T> form = low_rank_form();
    T* sigma = const_cast<T*>(form.sigma);
    T* a = const_cast<T*>(form.a);
    T* b = const_cast<T*>(form.b);
    T* u = const_cast<T*>(form.u);
    for (std::size_t i = 0; i < d; ++i) {
      traits::set(sigma[i], lane, factors[at.sigma() + i]);
      traits::set(metric_[d + i], lane, factors[at.sigma() + i] * factors[at.sigma() + i]);  // σ²
    }
    for (std::size_t r = 0; r < kmax_; ++r) {
      const bool used = r < k;
      const real am1 = used ? factors[at.lambda_minus_one() + r] : real(0);
      traits::set(a[r], lane, am1);
      traits::set(b[r], lane, used ? real(1) / lane_traits<real>::sqrt(real(1) + am1) - real(1) : real(0));
      for (std::size_t i = 0; i < d; ++i) traits::set(u[r * d + i], lane, used ? factors[at.directions() + r * d + i] : real(0));
    }
    T* whole = low_rank_matrix();  // S(I + U(Λ − I)Uᵀ)S, for one lane with 2k ≥ d
    if (low_rank_whole(d, kmax_) && 2 * k >= d) {
      for (std::size_t i = 0; i < d; ++i)
        for (std::size_t j = 0; j <= i; ++j) {
          real v;
          if (matrix) {
            v = matrix[i * d + j];
          } else {  // low_rank_dense's arithmetic
            v = i == j ? real(1) : real(0);
            for (std::size_t r = 0; r < k; ++r)
              v += factors[at.lambda_minus_one() + r] * factors[at.directions() + r * d + i] *
                   factors[at.directions() + r * d + j];
            v *= factors[at.sigma() + i] * factors[at.sigma() + j];
          }
          traits::set(whole[i * d + j], lane, v);
          traits::set(whole[j * d + i], lane, v);
        }
    }
    lane_rank_[lane] = k;
    std::size_t most = 0;
    for (int l = 0; l < width; ++l) most = lane_rank_[l] > most ? lane_rank_[l] : most;
    rank_ = most;
    return nuts_status::ok;
  }

  // ---- transitions -----------------------------------------------------------------------------

  /// Starts a transition in every lane with start[l] (from the lane's current point, with its
  /// metric and step size). Lanes already running keep running. Returns non_finite_start (and
  /// leaves that lane idle, *bad = its index) when a starting lane's energy is not finite.
  TYCHE_HD nuts_status begin(const bool* start, int* bad = nullptr) {
    const std::size_t d = d_;
    bool any = false;
    for (int l = 0; l < width; ++l) any = any || start[l];
    if (!any) return nuts_status::ok;
    // The momentum, from the lanes' streams.
    rng_.normals(reinterpret_cast_real(normals_), d, start);
    T kinetic;
    if (low_rank_ && !diagonal_now()) {
      detail::momentum_low_rank(low_rank_form(), normals_, tmp_, d);
      sharp_matrix(normals_, tmp_);
      kinetic = T(0);
      for (std::size_t i = 0; i < d; ++i) kinetic += normals_[i] * tmp_[i];
    } else {
      detail::momentum_from_normals(diag_metric(), chol_, dense_, normals_, d);
      kinetic = detail::kinetic_energy_twice(diag_metric(), dense_, normals_, d);
    }
    real kin[width];
    traits::store(kin, kinetic);
    nuts_status status = nuts_status::ok;
    bool go[width];
    for (int l = 0; l < width; ++l) {
      go[l] = start[l];
      if (!start[l]) continue;
      const real h0 = -cur_logp_[l] + real(0.5) * kin[l];
      if (!(h0 - h0 == 0)) {  // NaN or ±inf
        go[l] = false;
        status = nuts_status::non_finite_start;
        if (bad) *bad = l;
        continue;
      }
      H0_[l] = h0;
      sample_logp_[l] = cur_logp_[l];
      sample_energy_[l] = h0;
      weight_scale_[l] = 0;
      weight_[l] = 1;  // the initial point's weight, exp(H0 − H0)
      sum_metro_[l] = 0;
      depth_[l] = 0;
      n_leapfrog_[l] = 0;
      divergent_[l] = false;
      non_finite_[l] = false;
      running_[l] = true;
      z_logp_[l] = other_logp_[l] = cur_logp_[l];
      z_is_fwd_[l] = true;  // both ends are the current point
      stats_[l] = transition_stats{};
      stats_[l].step_size = step_size_[l];
    }
    const mask on = traits::mask_of(go);
    for (std::size_t i = 0; i < d; ++i) {
      const T p = normals_[i];
      z_.q[i] = traits::select(on, cur_q_[i], z_.q[i]);
      z_.p[i] = traits::select(on, p, z_.p[i]);
      z_.g[i] = traits::select(on, cur_g_[i], z_.g[i]);
      other_.q[i] = traits::select(on, cur_q_[i], other_.q[i]);
      other_.p[i] = traits::select(on, p, other_.p[i]);
      other_.g[i] = traits::select(on, cur_g_[i], other_.g[i]);
      sample_q_[i] = traits::select(on, cur_q_[i], sample_q_[i]);
      sample_g_[i] = traits::select(on, cur_g_[i], sample_g_[i]);
      rho_[i] = traits::select(on, p, rho_[i]);
      p_fwd_fwd_[i] = traits::select(on, p, p_fwd_fwd_[i]);
      p_bck_bck_[i] = traits::select(on, p, p_bck_bck_[i]);
    }
    if (!low_rank_ || diagonal_now()) detail::sharp(diag_metric(), dense_, normals_, tmp_, d);  // (else tmp_ holds it)
    detail::copy_lanes(ps_fwd_fwd_, tmp_, on, d);
    detail::copy_lanes(ps_bck_bck_, tmp_, on, d);
    begin_doubling(go);  // depth 0 < max_depth: always at least one leapfrog
    start_leapfrog(go);
    return status;
  }

  /// θ of every lane's pending point: evaluate log p and its gradient there (into
  /// pending_grad()), for all lanes at once, then call set_pending() and resume(). Lanes that
  /// are not running hold a point of their last transition (finite unless it diverged).
  TYCHE_HD const T* pending_q() const { return z_.q; }
  TYCHE_HD T* pending_q_mutable() { return z_.q; }
  TYCHE_HD T* pending_grad() { return z_.g; }
  /// The log density of every lane's pending point.
  TYCHE_HD void set_pending(const T& log_density) { traits::store(z_logp_, log_density); }
  TYCHE_HD void set_pending(int lane, real log_density) { z_logp_[lane] = log_density; }

  /// Lane l runs nothing: its pending θ becomes lane `from`'s current point, so that an
  /// evaluation of all lanes reads finite numbers there.
  TYCHE_HD void park(int lane, int from) {
    for (std::size_t i = 0; i < d_; ++i) traits::set(z_.q[i], lane, traits::get(cur_q_[i], from));
  }

  /// Whether lane l is in a transition (waits for a gradient).
  TYCHE_HD bool running(int lane) const { return running_[lane]; }
  TYCHE_HD bool any_running() const {
    bool any = false;
    for (int l = 0; l < width; ++l) any = any || running_[l];
    return any;
  }

  /// Continues every running lane after its pending point was evaluated: the leaf, the merges
  /// the schedule prescribes, the end of a doubling and the start of the next, up to the next
  /// gradient a lane needs or the end of its transition. ended[l] is set for the lanes whose
  /// transition ended in this step (their result: stats(l), get_point(l)); returns how many.
  TYCHE_HD int resume(bool* ended) {
    if constexpr (width == 1) return resume_one(ended);
    else return resume_lanes(ended);
  }

  /// The statistics of the lane's last completed transition.
  TYCHE_HD const transition_stats& stats(int lane) const { return stats_[lane]; }

  static constexpr real max_energy_error = real(1000);

 private:
  // resume() for W > 1 lanes, each at its own place in its trajectory.
  TYCHE_HD int resume_lanes(bool* ended) {
    bool alive[width];
    for (int l = 0; l < width; ++l) {
      alive[l] = running_[l];
      ended[l] = false;
    }
    const T kinetic = leaf_pass();
    const T h_all = -traits::load(z_logp_) + T(real(0.5)) * kinetic;
    real h_lanes[width];
    traits::store(h_lanes, h_all);
    int levels_needed = 0;
    int merges[width];
    for (int l = 0; l < width; ++l) {
      merges[l] = 0;
      if (!alive[l]) continue;
      if (!leaf_scalars(l, h_lanes[l])) {
        alive[l] = false;
        ended[l] = true;
        continue;
      }
      merges[l] = detail::trailing_zeros(static_cast<unsigned long>(leaf_[l]));
      if (merges[l] + 1 > levels_needed) levels_needed = merges[l] + 1;
    }
    // Merge with levels 0, 1, …: lane l merges at level m < merges[l] and stores the result at
    // level merges[l] (unless the doubling is complete: then the carry is the new half).
    for (int m = 0; m < levels_needed; ++m) {
      bool store[width], merge[width];
      bool any_store = false, any_merge = false;
      for (int l = 0; l < width; ++l) {
        store[l] = alive[l] && merges[l] == m && leaf_[l] < leaves_[l];
        merge[l] = alive[l] && m < merges[l];
        any_store = any_store || store[l];
        any_merge = any_merge || merge[l];
      }
      if (any_store) store_carry(m, store);
      if (!any_merge) continue;
      merge_level(m, merge, alive, ended);
    }
    // Next leaf, or the end of the doubling.
    bool next_leaf[width], end_doubling[width];
    bool any_next = false, any_end = false;
    for (int l = 0; l < width; ++l) {
      next_leaf[l] = alive[l] && leaf_[l] < leaves_[l];
      end_doubling[l] = alive[l] && !next_leaf[l];
      if (next_leaf[l]) ++leaf_[l];
      any_next = any_next || next_leaf[l];
      any_end = any_end || end_doubling[l];
    }
    if (any_end) finish_doubling(end_doubling, ended);
    if (any_next) start_leapfrog(next_leaf);
    int n = 0;
    for (int l = 0; l < width; ++l)
      if (ended[l]) {
        finish(l);
        ++n;
      }
    if (n > 0) copy_selected(ended);
    return n;
  }

  // The leaf: the second half of the leapfrog's momentum update, then a subtree of one point
  // (its own proposal, ρ = p at both ends) in the carry; returns pᵀM⁻¹p.
  TYCHE_HD T leaf_pass() {
    const std::size_t d = d_;
    const T half = traits::load(half_eps_);
    T kinetic;
    if (diagonal_now()) {
      const T* TYCHE_RESTRICT m = diag_metric();
      T* TYCHE_RESTRICT zp = z_.p;
      const T* TYCHE_RESTRICT zq = z_.q;
      const T* TYCHE_RESTRICT zg = z_.g;
      record& c = *carry_;
      // pᵀM⁻¹p in four partial sums (coordinate i into sum i mod 4), added in a fixed order.
      T k0 = T(0), k1 = T(0), k2 = T(0), k3 = T(0);
      std::size_t i = 0;
      for (; i + 4 <= d; i += 4) {
        const T a = zp[i] + half * zg[i], b = zp[i + 1] + half * zg[i + 1];
        const T e = zp[i + 2] + half * zg[i + 2], f = zp[i + 3] + half * zg[i + 3];
        k0 += (m[i] * a) * a;
        k1 += (m[i + 1] * b) * b;
        k2 += (m[i + 2] * e) * e;
        k3 += (m[i + 3] * f) * f;
      }
      if (i < d) {
        const T a = zp[i] + half * zg[i];
        k0 += (m[i] * a) * a;
      }
      if (i + 1 < d) {
        const T b = zp[i + 1] + half * zg[i + 1];
        k1 += (m[i + 1] * b) * b;
      }
      if (i + 2 < d) {
        const T e = zp[i + 2] + half * zg[i + 2];
        k2 += (m[i + 2] * e) * e;
      }
      kinetic = (k0 + k1) + (k2 + k3);
      T* TYCHE_RESTRICT rho = c.rho;
      T* TYCHE_RESTRICT p_begin = c.p_begin;
      T* TYCHE_RESTRICT p_end = c.p_end;
      T* TYCHE_RESTRICT ps_begin = c.ps_begin;
      T* TYCHE_RESTRICT ps_end = c.ps_end;
      T* TYCHE_RESTRICT prop_q = c.q;
      T* TYCHE_RESTRICT prop_g = c.g;
      TYCHE_KERNEL_IVDEP
      for (std::size_t j = 0; j < d; ++j) {
        const T pj = zp[j] + half * zg[j];
        const T ps = m[j] * pj;
        zp[j] = pj;
        rho[j] = pj;
        p_begin[j] = pj;
        p_end[j] = pj;
        ps_begin[j] = ps;
        ps_end[j] = ps;
        prop_q[j] = zq[j];
        prop_g[j] = zg[j];
      }
    } else {
      record& c = *carry_;
      kinetic = T(0);
      for (std::size_t i = 0; i < d; ++i) z_.p[i] += half * z_.g[i];
      sharp_matrix(z_.p, c.ps_begin);
      for (std::size_t i = 0; i < d; ++i) {
        kinetic += z_.p[i] * c.ps_begin[i];
        c.rho[i] = c.p_begin[i] = c.p_end[i] = z_.p[i];
        c.ps_end[i] = c.ps_begin[i];
        c.q[i] = z_.q[i];
        c.g[i] = z_.g[i];
      }
    }
    return kinetic;
  }

  // The leaf's energy, weight and acceptance term in lane l; false when it diverged.
  TYCHE_HD bool leaf_scalars(int l, real h) {
    if (h != h) h = real(HUGE_VAL);  // NaN: +∞
    ++n_leapfrog_[l];
    if (h - H0_[l] > max_energy_error) divergent_[l] = true;
    if (h == real(HUGE_VAL)) non_finite_[l] = true;
    carry_logp_[l] = z_logp_[l];
    carry_energy_[l] = h;
    // The leaf's weight exp(H0 − h) relative to exp(weight_scale); one exp also gives the
    // acceptance statistic's term min(1, exp(H0 − h)) while the scale is 0.
    const real log_weight = H0_[l] - h;  // −∞ when h is
    if (log_weight > weight_scale_[l] + max_log_weight) rescale_weights(l, log_weight);
    carry_weight_[l] = detail::lane_exp(log_weight - weight_scale_[l]);
    const real w = carry_weight_[l];
    sum_metro_[l] += weight_scale_[l] == 0 ? (w < real(1) ? w : real(1))
                                           : log_weight > 0 ? real(1) : detail::lane_exp(log_weight);
    return !divergent_[l];
  }

  // resume() for one lane: the same steps, without masks.
  TYCHE_HD int resume_one(bool* ended) {
    ended[0] = false;
    if (!running_[0]) return 0;
    const int merges = detail::trailing_zeros(static_cast<unsigned long>(leaf_[0]));
    carry_ = &level_[merges];  // the leaf's record is built where it will be stored
    const T kinetic = leaf_pass();
    bool alive = leaf_scalars(0, -z_logp_[0] + real(0.5) * kinetic);
    for (int m = 0; alive && m < merges; ++m) {
      const bool merge[1] = {true};
      merge_level(m, merge, &alive, ended);
    }
    if (alive) {
      if (leaf_[0] < leaves_[0]) {
        ++leaf_[0];
        const bool store[1] = {true};
        store_carry(merges, store);
        start_leapfrog(store);
      } else {
        finish_doubling(&alive, ended);
      }
    } else {
      ended[0] = true;
    }
    if (!ended[0]) return 0;
    finish(0);
    copy_selected(ended);
    return 1;
  }

  // A subtree's vectors: the sum of its momenta, the momenta and p♯ = M⁻¹p at its two ends in
  // the direction of integration, and its proposal's θ and gradient.
  struct record {
    T *rho = nullptr, *p_begin = nullptr, *p_end = nullptr, *ps_begin = nullptr, *ps_end = nullptr;
    T *q = nullptr, *g = nullptr;
  };
  struct phase {
    T *q = nullptr, *p = nullptr, *g = nullptr;
  };
  static constexpr std::size_t vectors_per_level = 7;
  // current (2), the two ends (6), the sample (2), the carry (7), the trajectory (5), scratch (2)
  static constexpr std::size_t vectors_fixed = 2 + 6 + 2 + 7 + 5 + 2;

  template <class Take>
  TYCHE_HD static record take_record(Take& take, std::size_t d) {
    record r;
    r.rho = take(d);
    r.p_begin = take(d);
    r.p_end = take(d);
    r.ps_begin = take(d);
    r.ps_end = take(d);
    r.q = take(d);
    r.g = take(d);
    return r;
  }

  // The normals' scratch holds d values of T, i.e. d·W reals, lane-interleaved as the generator
  // writes them ([i * W + l]).
  TYCHE_HD static real* reinterpret_cast_real(T* v) {
    if constexpr (width == 1) return v;
    else return reinterpret_cast<real*>(v);
  }

  // Weights are products of exps: beyond exp(max_log_weight) relative to the scale, the scale
  // moves up (rarely: H0 − h > 300 means the trajectory fell 300 below the initial energy).
  // Weights then below e^−745 of the largest become 0: their share is below that too.
  static constexpr real max_log_weight = real(300);
  TYCHE_HD void rescale_weights(int l, real scale) {
    const real factor = detail::lane_exp(weight_scale_[l] - scale);
    // The completed subtrees of the doubling in progress: the set bits of leaf − 1.
    const unsigned long done = static_cast<unsigned long>(leaf_[l] - 1);
    for (int j = 0; j < max_depth_; ++j)
      if ((done >> j) & 1u) level_weight_[j][l] *= factor;
    weight_[l] *= factor;
    weight_scale_[l] = scale;
  }

  // level[m] = carry, in the lanes of `store` (one lane: the carry is level m already).
  TYCHE_HD void store_carry(int m, const bool* store) {
    const std::size_t d = d_;
    if constexpr (width > 1) {
      const mask on = traits::mask_of(store);
      record& to = level_[m];
      const record& from = *carry_;
      for (std::size_t i = 0; i < d; ++i) {
        to.rho[i] = traits::select(on, from.rho[i], to.rho[i]);
        to.p_begin[i] = traits::select(on, from.p_begin[i], to.p_begin[i]);
        to.p_end[i] = traits::select(on, from.p_end[i], to.p_end[i]);
        to.ps_begin[i] = traits::select(on, from.ps_begin[i], to.ps_begin[i]);
        to.ps_end[i] = traits::select(on, from.ps_end[i], to.ps_end[i]);
        to.q[i] = traits::select(on, from.q[i], to.q[i]);
        to.g[i] = traits::select(on, from.g[i], to.g[i]);
      }
    }
    for (int l = 0; l < width; ++l)
      if (store[l]) {
        level_weight_[m][l] = carry_weight_[l];
        level_logp_[m][l] = carry_logp_[l];
        level_energy_[m][l] = carry_energy_[l];
      }
  }

  // Merges level m (the earlier subtree) with the carry (the later one) in the lanes of
  // `merge`: the merged subtree's proposal (uniform-progressive: the later one with its share of
  // the weight, one uniform per merge), its weight, and the three U-turn checks.
  TYCHE_HD void merge_level(int m, const bool* merge, bool* alive, bool* ended) {
    real u[width] = {};
    rng_.uniforms(u, merge);
    if constexpr (width == 1) merge_one(m, u[0], alive, ended);  // (merge[0] holds)
    else merge_lanes(m, merge, u, alive, ended);
  }

  // merge_level for one lane: the same steps without a branch on the coin toss (which proposal
  // is kept is decided about half of the time each way; a branch there is mispredicted as often).
  TYCHE_HD void merge_one(int m, real u, bool* alive, bool* ended) {
    record& init = level_[m];
    record& fin = *carry_;
    const real weight = level_weight_[m][0] + carry_weight_[0];
    const bool keep = u < carry_weight_[0] / weight;
    carry_logp_[0] = detail::choose(keep, carry_logp_[0], level_logp_[m][0]);
    carry_energy_[0] = detail::choose(keep, carry_energy_[0], level_energy_[m][0]);
    carry_weight_[0] = weight;
    bool persist = true;
    joined_no_u_turn(init.rho, init.p_end, init.ps_begin, init.ps_end, fin.rho, fin.p_begin, fin.ps_begin,
                     fin.ps_end, fin.rho, true, &persist);
    // The merged subtree begins where the earlier one began, and holds the proposal chosen; the
    // earlier subtree's level is free now, so its vectors are exchanged, not copied.
    swap_pointers(fin.p_begin, init.p_begin);
    swap_pointers(fin.ps_begin, init.ps_begin);
    detail::exchange_if(!keep, fin.q, init.q);
    detail::exchange_if(!keep, fin.g, init.g);
    if (!persist) {
      alive[0] = false;
      ended[0] = true;
    }
  }

  TYCHE_HD void merge_lanes(int m, const bool* merge, const real* u, bool* alive, bool* ended) {
    const std::size_t d = d_;
    record& init = level_[m];
    record& fin = *carry_;
    bool keep_final[width];  // in lanes that do not merge: true (the carry stays as it is)
    for (int l = 0; l < width; ++l) {
      keep_final[l] = true;
      if (!merge[l]) continue;
      const real weight = level_weight_[m][l] + carry_weight_[l];
      keep_final[l] = u[l] < carry_weight_[l] / weight;
      carry_logp_[l] = detail::choose(keep_final[l], carry_logp_[l], level_logp_[m][l]);
      carry_energy_[l] = detail::choose(keep_final[l], carry_energy_[l], level_energy_[m][l]);
      carry_weight_[l] = weight;
    }
    const mask on = traits::mask_of(merge);
    bool persist[width];
    joined_no_u_turn(init.rho, init.p_end, init.ps_begin, init.ps_end, fin.rho, fin.p_begin, fin.ps_begin,
                     fin.ps_end, fin.rho, on, persist);
    // The merged subtree begins where the earlier one began, and holds the proposal chosen.
    const mask keep = traits::mask_of(keep_final);
    for (std::size_t i = 0; i < d; ++i) {
      fin.q[i] = traits::select(keep, fin.q[i], init.q[i]);
      fin.g[i] = traits::select(keep, fin.g[i], init.g[i]);
      fin.p_begin[i] = traits::select(on, init.p_begin[i], fin.p_begin[i]);
      fin.ps_begin[i] = traits::select(on, init.ps_begin[i], fin.ps_begin[i]);
    }
    for (int l = 0; l < width; ++l)
      if (merge[l] && !persist[l]) {
        alive[l] = false;
        ended[l] = true;
      }
  }

  // The three U-turn checks of joining two adjacent spans of a trajectory, A then B in the
  // direction of integration (Stan's generalised criterion with the two extra checks across the
  // join): ρ = ρ_A + ρ_B between A's first and B's last p♯, ρ_A + p_B,begin between A's first
  // and B's first, ρ_B + p_A,end between A's last and B's last. One pass over the coordinates;
  // writes ρ_A + ρ_B to rho_out (which may be a_rho or b_rho) in the lanes of `write`.
  TYCHE_HD void joined_no_u_turn(const T* a_rho, const T* a_p_end, const T* a_ps_begin, const T* a_ps_end,
                                 const T* b_rho, const T* b_p_begin, const T* b_ps_begin, const T* b_ps_end,
                                 T* rho_out, const mask& write, bool* persist) const {
    T whole_begin = T(0), whole_end = T(0), left_begin = T(0), left_end = T(0), right_begin = T(0),
      right_end = T(0);
    for (std::size_t i = 0; i < d_; ++i) {
      const T ra = a_rho[i], rb = b_rho[i];
      const T whole = ra + rb, left = ra + b_p_begin[i], right = rb + a_p_end[i];
      whole_begin += a_ps_begin[i] * whole;
      whole_end += b_ps_end[i] * whole;
      left_begin += a_ps_begin[i] * left;
      left_end += b_ps_begin[i] * left;
      right_begin += a_ps_end[i] * right;
      right_end += b_ps_end[i] * right;
      if constexpr (width == 1) rho_out[i] = whole;
      else rho_out[i] = traits::select(write, whole, rho_out[i]);
    }
    const T zero = T(0);
    traits::store_mask(persist, (whole_begin > zero) && (whole_end > zero) && (left_begin > zero) &&
                                    (left_end > zero) && (right_begin > zero) && (right_end > zero));
  }

  // A doubling is complete in the lanes of `done` (its subtree is the carry): biased-progressive
  // sampling (prefer the new half), the checks on the whole trajectory — the trajectory before
  // the doubling (rho_ and its ends) and the new subtree, in the order of integration — and the
  // new trajectory's sum and end; then the transition ends or the next doubling begins.
  TYCHE_HD void finish_doubling(const bool* done, bool* ended) {
    const std::size_t d = d_;
    record& c = *carry_;
    bool take[width], draw[width], fwd[width], bck[width];
    for (int l = 0; l < width; ++l) {
      if (done[l]) ++depth_[l];
      fwd[l] = done[l] && forward_[l];
      bck[l] = done[l] && !forward_[l];
      // Biased progressive sampling: the new half if it outweighs the trajectory before it,
      // else with probability w_new / w_old (one uniform).
      take[l] = done[l] && carry_weight_[l] > weight_[l];
      draw[l] = done[l] && !take[l];
    }
    real u[width] = {};
    rng_.uniforms(u, draw);
    for (int l = 0; l < width; ++l) {
      if (draw[l]) take[l] = u[l] < carry_weight_[l] / weight_[l];
      if (!done[l]) continue;
      sample_logp_[l] = detail::choose(take[l], carry_logp_[l], sample_logp_[l]);
      sample_energy_[l] = detail::choose(take[l], carry_energy_[l], sample_energy_[l]);
      weight_[l] += carry_weight_[l];
    }
    bool persist[width];
    if constexpr (width == 1) {
      detail::exchange_if(take[0], sample_q_, c.q);
      detail::exchange_if(take[0], sample_g_, c.g);
      if (forward_[0]) {  // the old trajectory, then the new half
        joined_no_u_turn(rho_, p_fwd_fwd_, ps_bck_bck_, ps_fwd_fwd_, c.rho, c.p_begin, c.ps_begin, c.ps_end, rho_,
                         true, persist);
        swap_pointers(p_fwd_fwd_, c.p_end);
        swap_pointers(ps_fwd_fwd_, c.ps_end);
      } else {  // the new half (begin: the end nearest the old trajectory), then the old one
        joined_no_u_turn(c.rho, c.p_begin, c.ps_end, c.ps_begin, rho_, p_bck_bck_, ps_bck_bck_, ps_fwd_fwd_, rho_,
                         true, persist);
        swap_pointers(p_bck_bck_, c.p_end);
        swap_pointers(ps_bck_bck_, c.ps_end);
      }
    } else {
      const mask taken = traits::mask_of(take), on = traits::mask_of(done), f = traits::mask_of(fwd),
                 b = traits::mask_of(bck);
      T whole_begin = T(0), whole_end = T(0), left_begin = T(0), left_end = T(0), right_begin = T(0),
        right_end = T(0);
      for (std::size_t i = 0; i < d; ++i) {
        sample_q_[i] = traits::select(taken, c.q[i], sample_q_[i]);
        sample_g_[i] = traits::select(taken, c.g[i], sample_g_[i]);
        // A: the half behind, B: the half ahead, in the direction of integration.
        const T a_rho = traits::select(f, rho_[i], c.rho[i]), b_rho = traits::select(f, c.rho[i], rho_[i]);
        const T a_p_end = traits::select(f, p_fwd_fwd_[i], c.p_begin[i]);
        const T b_p_begin = traits::select(f, c.p_begin[i], p_bck_bck_[i]);
        const T a_ps_begin = traits::select(f, ps_bck_bck_[i], c.ps_end[i]);
        const T a_ps_end = traits::select(f, ps_fwd_fwd_[i], c.ps_begin[i]);
        const T b_ps_begin = traits::select(f, c.ps_begin[i], ps_bck_bck_[i]);
        const T b_ps_end = traits::select(f, c.ps_end[i], ps_fwd_fwd_[i]);
        const T whole = a_rho + b_rho, left = a_rho + b_p_begin, right = b_rho + a_p_end;
        whole_begin += a_ps_begin * whole;
        whole_end += b_ps_end * whole;
        left_begin += a_ps_begin * left;
        left_end += b_ps_begin * left;
        right_begin += a_ps_end * right;
        right_end += b_ps_end * right;
        rho_[i] = traits::select(on, whole, rho_[i]);
        p_fwd_fwd_[i] = traits::select(f, c.p_end[i], p_fwd_fwd_[i]);
        ps_fwd_fwd_[i] = traits::select(f, c.ps_end[i], ps_fwd_fwd_[i]);
        p_bck_bck_[i] = traits::select(b, c.p_end[i], p_bck_bck_[i]);
        ps_bck_bck_[i] = traits::select(b, c.ps_end[i], ps_bck_bck_[i]);
      }
      const T zero = T(0);
      traits::store_mask(persist, (whole_begin > zero) && (whole_end > zero) && (left_begin > zero) &&
                                      (left_end > zero) && (right_begin > zero) && (right_end > zero));
    }
    bool again[width];
    bool any_again = false;
    for (int l = 0; l < width; ++l) {
      again[l] = done[l] && persist[l] && depth_[l] < max_depth_;
      if (done[l] && !again[l]) ended[l] = true;
      any_again = any_again || again[l];
    }
    if (any_again) {
      begin_doubling(again);
      start_leapfrog(again);
    }
  }

  // A doubling starts in the lanes of `go`: a direction (one uniform); the end being extended
  // becomes z_ (the ends are exchanged in lanes that change direction).
  TYCHE_HD void begin_doubling(const bool* go) {
    real u[width] = {};
    rng_.uniforms(u, go);
    bool flip[width];
    bool any_flip = false;
    for (int l = 0; l < width; ++l) {
      flip[l] = false;
      if (!go[l]) continue;
      forward_[l] = u[l] > real(0.5);
      flip[l] = forward_[l] != z_is_fwd_[l];
      any_flip = any_flip || flip[l];
      z_is_fwd_[l] = forward_[l];
      const real eps = forward_[l] ? step_size_[l] : -step_size_[l];
      eps_[l] = eps;
      half_eps_[l] = real(0.5) * eps;
      leaves_[l] = 1L << depth_[l];
      leaf_[l] = 1;
    }
    if (!any_flip) return;
    if constexpr (width == 1) {
      const phase t = z_;
      z_ = other_;
      other_ = t;
    } else {
      const mask on_flip = traits::mask_of(flip);
      detail::swap_lanes(z_.q, other_.q, on_flip, d_);
      detail::swap_lanes(z_.p, other_.p, on_flip, d_);
      detail::swap_lanes(z_.g, other_.g, on_flip, d_);
    }
    for (int l = 0; l < width; ++l)
      if (flip[l]) {
        const real lp = z_logp_[l];
        z_logp_[l] = other_logp_[l];
        other_logp_[l] = lp;
      }
  }

  TYCHE_HD static void swap_pointers(T*& a, T*& b) {
    T* t = a;
    a = b;
    b = t;
  }

  // The leapfrog's first half momentum update and position update, in the lanes of `go`; the
  // gradient is next.
  TYCHE_HD void start_leapfrog(const bool* go) {
    const std::size_t d = d_;
    const T half = traits::load(half_eps_), eps = traits::load(eps_);
    const mask on = traits::mask_of(go);
    T* TYCHE_RESTRICT zp = z_.p;
    T* TYCHE_RESTRICT zq = z_.q;
    const T* TYCHE_RESTRICT zg = z_.g;
    if (diagonal_now()) {
      const T* TYCHE_RESTRICT m = diag_metric();
      TYCHE_KERNEL_IVDEP
      for (std::size_t i = 0; i < d; ++i) {
        const T pi = zp[i] + half * zg[i];
        if constexpr (width == 1) {
          zp[i] = pi;
          zq[i] += eps * m[i] * pi;
        } else {
          zp[i] = traits::select(on, pi, zp[i]);
          zq[i] = traits::select(on, zq[i] + eps * m[i] * pi, zq[i]);
        }
      }
      return;
    }
    for (std::size_t i = 0; i < d; ++i) tmp_[i] = zp[i] + half * zg[i];
    detail::copy_lanes(zp, tmp_, on, d);
    sharp_matrix(zp, tmp_);
    for (std::size_t i = 0; i < d; ++i) {
      if constexpr (width == 1) zq[i] += eps * tmp_[i];
      else zq[i] = traits::select(on, zq[i] + eps * tmp_[i], zq[i]);
    }
  }

  // p♯ = M⁻¹p for a dense or low-rank metric (out may not alias p).
  // Low rank: the factors while 2k < d, else the matrix — for one lane. A batch of lanes always
  // takes the factors (the lanes' rows past their own k are zeros, which add exactly nothing), so
  // that a lane's numbers do not depend on the k of the lanes beside it; a lane then computes what
  // the one-lane kernel does where 2k < d, and differs in the last bits elsewhere.
  TYCHE_HD void sharp_matrix(const T* p, T* out) const {
    if (!low_rank_) detail::sharp(metric_, true, p, out, d_);
    else if (width > 1 || 2 * rank_ < d_) detail::sharp_low_rank(low_rank_form(), p, out, d_);
    else detail::sharp(low_rank_matrix(), true, p, out, d_);
  }
  TYCHE_HD detail::low_rank_view<T> low_rank_form() const {
    const std::size_t d = d_, k = kmax_;
    return {metric_, metric_ + 2 * d, metric_ + 2 * d + k, metric_ + 2 * d + 2 * k, rank_};
  }
  // The d × d matrix of a one-lane low-rank kernel (allocated where 2·kmax ≥ d).
  TYCHE_HD T* low_rank_matrix() const { return metric_ + 2 * d_ + 2 * kmax_ + kmax_ * d_; }
  // The diagonal M⁻¹ the diagonal code paths apply: the diagonal metric, or a one-lane kernel's
  // low-rank metric's σ² when it has no direction (k = 0: M⁻¹ = S², eight schools' estimate every
  // time), so that such a metric costs what the diagonal one does (docs/nuts.md). Not for a batch
  // of lanes: whether a lane took it would depend on the k of the chains beside it, and the
  // program_counter schedule loads chains into lanes while others are mid-trajectory, so a
  // chain's last bits would depend on its neighbours (a batch keeps the factors' arithmetic).
  TYCHE_HD const T* diag_metric() const { return low_rank_ ? metric_ + d_ : metric_; }
  TYCHE_HD bool diagonal_now() const { return !dense_ && (!low_rank_ || (width == 1 && rank_ == 0)); }

  // The transition of lane l ended: its statistics (the point is copied by copy_selected).
  TYCHE_HD void finish(int l) {
    running_[l] = false;
    cur_logp_[l] = sample_logp_[l];
    transition_stats& s = stats_[l];
    s.log_density = static_cast<double>(sample_logp_[l]);
    s.tree_depth = depth_[l];
    s.n_leapfrog = n_leapfrog_[l];
    s.divergent = divergent_[l];
    s.non_finite = non_finite_[l];
    s.accept_stat = n_leapfrog_[l] > 0 ? static_cast<double>(sum_metro_[l] / static_cast<real>(n_leapfrog_[l])) : 0.0;
    s.energy = static_cast<double>(sample_energy_[l]);
  }
  // The selected point becomes the current one in the lanes that ended.
  TYCHE_HD void copy_selected(const bool* ended) {
    const mask on = traits::mask_of(ended);
    detail::copy_lanes(cur_q_, sample_q_, on, d_);
    detail::copy_lanes(cur_g_, sample_g_, on, d_);
  }

  std::size_t d_ = 0;
  int max_depth_ = 10;
  bool dense_ = false, low_rank_ = false;
  std::size_t rank_ = 0;                // low rank: the largest k of the lanes
  std::size_t kmax_ = 0;                // low rank: the most directions a lane may have
  std::size_t lane_rank_[width] = {};  // each lane's k
  Rng rng_{};

  // Vectors (d values of T each; metric_ d, or d² for a dense metric, or low_rank_storage() for
  // a low-rank one; chol_ d² for a dense metric), in the bound buffer.
  T *metric_ = nullptr, *chol_ = nullptr, *cur_q_ = nullptr, *cur_g_ = nullptr;
  phase z_, other_;  // the end being extended, and the other end
  T *sample_q_ = nullptr, *sample_g_ = nullptr;
  // The subtree being built at the current leaf: carry_buffer_ for a batch (its lanes need
  // different levels), the storage of its own level for one lane (no copy to store it).
  record carry_buffer_;
  record* carry_ = nullptr;
  record level_[max_levels];    // the completed subtrees of the doubling in progress, by level
  // The trajectory: the sum of its momenta, and the momenta and p♯ at its two ends. During a
  // doubling they describe the trajectory before it (the other half of the doubling's end).
  T *rho_ = nullptr, *p_fwd_fwd_ = nullptr, *p_bck_bck_ = nullptr, *ps_fwd_fwd_ = nullptr, *ps_bck_bck_ = nullptr;
  T *tmp_ = nullptr, *normals_ = nullptr;

  // Per lane.
  bool running_[width] = {}, forward_[width] = {}, z_is_fwd_[width] = {}, divergent_[width] = {}, non_finite_[width] = {};
  real step_size_[width] = {}, eps_[width] = {}, half_eps_[width] = {};
  real cur_logp_[width] = {}, z_logp_[width] = {}, other_logp_[width] = {};
  real H0_[width] = {}, sum_metro_[width] = {};
  // Weights exp(H0 − h) are kept as exp(H0 − h − weight_scale): the scale is 0 unless a point's
  // H0 − h exceeded max_log_weight, then the largest such H0 − h. weight_: the trajectory's.
  real weight_scale_[width] = {}, weight_[width] = {};
  real sample_logp_[width] = {}, sample_energy_[width] = {};
  real carry_weight_[width] = {}, carry_logp_[width] = {}, carry_energy_[width] = {};
  real level_weight_[max_levels][width] = {}, level_logp_[max_levels][width] = {},
       level_energy_[max_levels][width] = {};
  int depth_[width] = {}, n_leapfrog_[width] = {};
  long leaf_[width] = {}, leaves_[width] = {};
  transition_stats stats_[width] = {};
};

namespace detail {
/// The energy change of one leapfrog of size `step` from (q0, grad0) with a fresh momentum
/// (find_initial_step_size's trial). A function rather than a lambda so that nvcc's host/device
/// check is disabled for its call of a host-only target too.
TYCHE_EXEC_CHECK_DISABLE
template <class R, class Rng, class Target>
TYCHE_HD R trial_energy_change(R step, const R* q0, const R* grad0, R logp0, const R* metric, const R* chol,
                               metric_kind kind, std::size_t d, Rng& rng, Target& target, R* scratch) {
  R* q = scratch;
  R* p = scratch + d;
  R* g = scratch + 2 * d;
  R* tmp = scratch + 3 * d;
  const bool take[1] = {true};
  for (std::size_t i = 0; i < d; ++i) {
    q[i] = q0[i];
    g[i] = grad0[i];
  }
  rng.normals(p, d, take);
  const bool dense = kind == metric_kind::dense;
  // M⁻¹p·p; for a low-rank metric (its factors in `metric`) from the factors, the kernel's
  // arithmetic where it applies the factors (0 < 2k < d, or a batch of lanes; one lane with
  // 2k ≥ d applies the matrix, and with k = 0 the kernel applies σ² as a diagonal: the same
  // values to rounding).
  auto kinetic_twice = [&]() {
    if (kind != metric_kind::low_rank) return kinetic_energy_twice(metric, dense, p, d);
    low_rank_sharp(metric, d, p, tmp);
    R k = R(0);
    for (std::size_t i = 0; i < d; ++i) k += p[i] * tmp[i];
    return k;
  };
  if (kind == metric_kind::low_rank) low_rank_momentum(metric, d, p, tmp);
  else momentum_from_normals(metric, chol, dense, p, d);
  const R h0 = -logp0 + R(0.5) * kinetic_twice();
  for (std::size_t i = 0; i < d; ++i) p[i] += R(0.5) * step * g[i];
  if (kind == metric_kind::low_rank) {
    low_rank_sharp(metric, d, p, tmp);
    for (std::size_t i = 0; i < d; ++i) q[i] += step * tmp[i];
  } else {
    drift(metric, dense, step, q, p, tmp, d);
  }
  const R logp = target(q, g);
  for (std::size_t i = 0; i < d; ++i) p[i] += R(0.5) * step * g[i];
  R h = -logp + R(0.5) * kinetic_twice();
  if (h != h) h = R(HUGE_VAL);
  return h0 - h;
}
}  // namespace detail

/// Stan's heuristic for a first step size, for one chain (W = 1): double or halve ε until the
/// acceptance of one leapfrog from a fresh momentum crosses 0.8. target(q, grad) returns log p
/// at q and writes its gradient. q0, grad0, logp0: the current point; metric, chol, kind: the
/// chain's M⁻¹ (the diagonal, the dense matrix with its Cholesky factor chol, or the low-rank
/// metric's factors: its momenta and p♯ then from the factors, as the kernel's); rng: the chain's generator (W = 1;
/// `normals` is called with d values per attempt). scratch: 4·d values. On return *eps holds
/// the step size; an invalid or huge starting ε is returned unchanged.
TYCHE_EXEC_CHECK_DISABLE
template <class R, class Rng, class Target>
TYCHE_HD nuts_status find_initial_step_size(R* eps, const R* q0, const R* grad0, R logp0, const R* metric,
                                            const R* chol, metric_kind kind, std::size_t d, Rng& rng, Target&& target,
                                            R* scratch) {
  R e = *eps;
  if (!(e > 0) || e > R(1e7)) return nuts_status::ok;
  auto delta_h = [&](R step) {
    return detail::trial_energy_change(step, q0, grad0, logp0, metric, chol, kind, d, rng, target, scratch);
  };
  const R log_08 = detail::lane_log(R(0.8));
  const int direction = delta_h(e) > log_08 ? 1 : -1;
  for (int guard = 0; guard < 200; ++guard) {
    const R dh = delta_h(e);
    if (direction == 1 && !(dh > log_08)) break;
    if (direction == -1 && !(dh < log_08)) break;
    e = direction == 1 ? 2 * e : R(0.5) * e;
    if (e > R(1e7)) return nuts_status::step_size_too_large;
    if (e < R(1e-300)) return nuts_status::step_size_too_small;
  }
  *eps = e;
  return nuts_status::ok;
}

}  // namespace tyche::samplers

#undef TYCHE_KERNEL_IVDEP
#if defined(__clang__) && !defined(__CUDACC__)
#pragma clang diagnostic pop
#endif
