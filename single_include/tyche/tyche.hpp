// ================================================================================================
// tyche 0.1.0 — single-header distribution.
//
// GENERATED FILE — DO NOT EDIT. Produced by tools/amalgamate.py from include/tyche/tyche.hpp;
// edit the headers under include/tyche/ and run `python3 tools/amalgamate.py` instead.
// ================================================================================================
#pragma once

// ----- begin tyche/tyche.hpp -----
// tyche/tyche.hpp — the umbrella header: everything except backends/cuda.
// ----- begin tyche/concepts.hpp -----
// tyche/concepts.hpp — the contracts of tyche's extension points, in one place: what the library
// requires of a type it accepts from a user (or from another part of itself) where one of these
// is expected. Each concept is checked where the library takes such a value, with a
// static_assert whose message names the call, the argument and what is missing
// (tests/compile_fail/ holds one case per message).
//
//   distribution_family<D>     a family of distributions: normal_distribution<Mu, Sigma>, …
//   continuous_family<D>       … that can be a parameter's prior (it chooses a transform)
//   transform_of<Tr, U>        a constraining bijection applied to an unconstrained U
//   log_density_target<T>      what a sampler needs from a model (an executor's input)
//   sampleable_model<M>        what nuts() needs from the object it is given (tyche::model(...))
//   nuts_executor_type<E>      where nuts() runs the chains: tyche::cpu{…}
//   lane_generator<R, Real>    the random streams of a NUTS kernel's lanes
//   smc_program<P>             a program for forward inference (SMC, PIMH, particle Gibbs)
//
// The requirements are syntactic; the semantics are written beside each (and in
// docs/design/model-api.md and docs/design/nuts-kernel.md). This header depends on the C++
// standard library and random/philox.hpp only, so any layer may include it.
// ----- begin tyche/config.hpp -----
// tyche/config.hpp — macros shared by every header, nothing else.

#define TYCHE_VERSION_MAJOR 0
#define TYCHE_VERSION_MINOR 1
#define TYCHE_VERSION_PATCH 0

// TYCHE_HD marks functions callable from host and CUDA device code. Outside nvcc it is empty.
#if defined(__CUDACC__)
#define TYCHE_HD __host__ __device__
#define TYCHE_CUDA_COMPILER 1
#else
#define TYCHE_HD
#define TYCHE_CUDA_COMPILER 0
#endif

#if defined(__CUDA_ARCH__)
#define TYCHE_DEVICE_CODE 1
#else
#define TYCHE_DEVICE_CODE 0
#endif

// TYCHE_EXEC_CHECK_DISABLE lets a __host__ __device__ template call a host-only callable when
// it is instantiated for the host (nvcc otherwise warns; Thrust does the same).
#if defined(__CUDACC__)
#define TYCHE_EXEC_CHECK_DISABLE _Pragma("nv_exec_check_disable")
#else
#define TYCHE_EXEC_CHECK_DISABLE
#endif

// TYCHE_RESTRICT marks pointers that do not overlap (θ, gradient and workspace of an
// evaluation), so loops over them need no run-time overlap checks.
#if defined(__CUDACC__) || defined(__GNUC__) || defined(__clang__)
#define TYCHE_RESTRICT __restrict__
#else
#define TYCHE_RESTRICT
#endif

// TYCHE_NOINLINE keeps cold paths (error reporting) out of the hot code.
#if defined(__GNUC__) || defined(__clang__)
#define TYCHE_NOINLINE __attribute__((noinline))
#else
#define TYCHE_NOINLINE
#endif

// TYCHE_EVALUATION_ENTRY marks the entry points of an evaluation (program_view::value and
// value_and_gradient) on the host: compiled out of line, with everything below them inlined.
// Out of line, their __restrict__ parameters are the roots of every θ / gradient access, which
// is what lets GCC drop run-time overlap checks (restrict on the parameters of an inlined
// function is not kept once the pointers pass through the evaluation's state). On the device
// they are ordinary inline functions.
#if defined(__CUDA_ARCH__)
#define TYCHE_EVALUATION_ENTRY TYCHE_HD
#elif defined(__GNUC__) || defined(__clang__)
#define TYCHE_EVALUATION_ENTRY TYCHE_HD __attribute__((noinline, flatten))
#else
#define TYCHE_EVALUATION_ENTRY TYCHE_HD
#endif

// TYCHE_INLINE forces inlining of the small per-node evaluation functions, so that a model's
// forward and reverse pass become one straight-line function.
#if defined(__CUDACC__)
#define TYCHE_INLINE __forceinline__
#elif defined(__GNUC__) || defined(__clang__)
#define TYCHE_INLINE inline __attribute__((always_inline))
#else
#define TYCHE_INLINE inline
#endif

// TYCHE_PREFETCH_BATCHES: how many observation batches ahead a streamed matvec asks for the rows
// of its matrix (compile/evaluate.hpp, row_product); 0 turns the hints off.
#ifndef TYCHE_PREFETCH_BATCHES
#define TYCHE_PREFETCH_BATCHES 2
#endif
// ----- end tyche/config.hpp -----
// ----- begin tyche/random/philox.hpp -----
// tyche/random/philox.hpp — the Philox-4x32 bijection and counter_rng, a counter-based random
// number generator built on it.
//
// Philox-4x32-R (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3",
// SC'11; the Random123 library) maps a 128-bit counter and a 64-bit key to 128 bits. Each round
// multiplies two counter words by M0 = 0xD2511F53 and M1 = 0xCD9E8D57, keeps both halves of the
// 64-bit products and xors the high halves with the other two words and the key; the key is
// bumped by the Weyl constants W0 = 0x9E3779B9, W1 = 0xBB67AE85 between rounds. Ten rounds is the
// Random123 default (passes BigCrush with a safety margin). Checked against Random123's
// known-answer vectors in tests/random/philox_test.cpp.
//
// counter_rng(seed, stream) draws block k of stream s as
//     philox4x32_10(counter = {k_lo, k_hi, s_lo, s_hi}, key = {seed_lo, seed_hi})
// (x_lo, x_hi: the low and high 32 bits of a uint64). Every draw — a uint32, a uint64, a uniform,
// a normal, an exponential — consumes exactly ONE position (one Philox block), so draw k of
// stream s is a pure function of (seed, s, k), whatever was drawn before it: streams (one per
// chain) stay aligned, and jumping to position k is free. The price is that a draw uses at most
// 106 of the block's 128 bits.
//
// counter_rng_lanes<L> draws one value for each of L chains (the lanes of an
// xsimd::batch<double>): lane l is, bit for bit, what counter_rng(seed, chains[l]) draws at the
// same position. For now each lane runs the scalar code (a vectorised Philox is a later
// optimisation that must keep this equality; tests/random/philox_test.cpp checks it).
//
// Everything but counter_rng_lanes is TYCHE_HD (usable in CUDA device code); the integer part
// is constexpr.
// ----- begin tyche/random/variates.hpp -----
// tyche/random/variates.hpp — how random bits become variates, and the draws of variates as
// any scalar type T (double; xsimd::batch<double> for a counter_rng_lanes, one chain per lane).
//
//   uniform01_from_bits(x)     m = x >> 11 (the top 53 bits); m · 2⁻⁵³, and 2⁻⁵⁴ for m = 0.
//                              So the result lies in [2⁻⁵⁴, 1 − 2⁻⁵³]: never 0, never 1, and
//                              every value is exact (no rounding). (The "midpoint" rule
//                              (m + ½) · 2⁻⁵³ cannot be used with 53 bits: near 1 it needs 54
//                              significant bits and rounds to 1.)
//   normal_from_bits(a, b)     Box–Muller, cosine branch: √(−2 log u₁) · cos(2π u₂) with
//                              u₁ = uniform01_from_bits(a), u₂ = uniform01_from_bits(b).
//                              |z| ≤ √(108 log 2) ≈ 8.65.
//   exponential_from_bits(x)   −log(uniform01_from_bits(x)), in (0, 54 log 2 ≈ 37.4].
//
// Box–Muller rather than the inverse CDF: it needs only log, sqrt and cos (available in CUDA
// device code and exact to an ulp or so), and one 128-bit Philox block carries both uniforms,
// so a normal consumes a fixed single position of a counter_rng (tyche/random/philox.hpp).
//
// uniform01<T>(g), standard_normal<T>(g), standard_exponential<T>(g) draw from a generator g
// with members uniform01(), normal(), exponential(): a counter_rng for T = double, a
// counter_rng_lanes<L> for T = xsimd::batch<double> with L lanes (each lane bit-identical to the
// scalar stream of its chain; that case is defined by backends/simd/random.hpp).

#include <array>
#include <cstddef>
#include <cstdint>
#include <math.h>  // global-namespace log/sqrt/cos, which CUDA device code also provides
#include <type_traits>

namespace tyche {

/// Uniform on (0, 1) from the top 53 bits of x; see the top of this file.
TYCHE_HD TYCHE_INLINE constexpr double uniform01_from_bits(std::uint64_t x) {
  const std::uint64_t m = x >> 11;
  return m != 0 ? static_cast<double>(m) * 0x1p-53 : 0x1p-54;
}

/// Standard normal by Box–Muller (cosine branch) from two 64-bit words.
TYCHE_HD TYCHE_INLINE double normal_from_bits(std::uint64_t a, std::uint64_t b) {
  constexpr double two_pi = 6.28318530717958647692;
  const double u1 = uniform01_from_bits(a), u2 = uniform01_from_bits(b);
  return ::sqrt(-2.0 * ::log(u1)) * ::cos(two_pi * u2);
}

/// Standard exponential (rate 1) from a 64-bit word.
TYCHE_HD TYCHE_INLINE double exponential_from_bits(std::uint64_t x) {
  return -::log(uniform01_from_bits(x));
}

namespace detail {

template <class T>
inline constexpr bool dependent_false_v = false;

/// Turns what a generator's draw returns (double; std::array<double, L> for L lanes) into T.
template <class T>
struct variate_as {
  static_assert(dependent_false_v<T>,
                "tyche: random variates are drawn as double (from a counter_rng) or as "
                "xsimd::batch<double> (from a counter_rng_lanes with as many lanes)");
};

template <>
struct variate_as<double> {
  TYCHE_HD static constexpr double from(double x) { return x; }
};

// The xsimd batch case is in backends/simd/random.hpp.

}  // namespace detail

/// A uniform on (0, 1) as T: g.uniform01() (one position of every stream).
TYCHE_EXEC_CHECK_DISABLE
template <class T, class G>
TYCHE_HD T uniform01(G& g) {
  return detail::variate_as<T>::from(g.uniform01());
}

/// A standard normal as T: g.normal() (one position of every stream).
TYCHE_EXEC_CHECK_DISABLE
template <class T, class G>
TYCHE_HD T standard_normal(G& g) {
  return detail::variate_as<T>::from(g.normal());
}

/// A standard exponential as T: g.exponential() (one position of every stream).
TYCHE_EXEC_CHECK_DISABLE
template <class T, class G>
TYCHE_HD T standard_exponential(G& g) {
  return detail::variate_as<T>::from(g.exponential());
}

}  // namespace tyche
// ----- end tyche/random/variates.hpp -----

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace tyche {

/// The 128-bit counter (and output) of Philox-4x32: four 32-bit words. A plain struct rather
/// than std::array so that device code needs no relaxed-constexpr flags.
struct philox4x32_counter {
  std::uint32_t words[4];

  TYCHE_HD constexpr std::uint32_t& operator[](int i) { return words[i]; }
  TYCHE_HD constexpr const std::uint32_t& operator[](int i) const { return words[i]; }
  TYCHE_HD friend constexpr bool operator==(const philox4x32_counter& a,
                                            const philox4x32_counter& b) {
    return a.words[0] == b.words[0] && a.words[1] == b.words[1] && a.words[2] == b.words[2] &&
           a.words[3] == b.words[3];
  }
  TYCHE_HD friend constexpr bool operator!=(const philox4x32_counter& a,
                                            const philox4x32_counter& b) {
    return !(a == b);
  }
};

/// The 64-bit key of Philox-4x32: two 32-bit words.
struct philox4x32_key {
  std::uint32_t words[2];

  TYCHE_HD constexpr std::uint32_t& operator[](int i) { return words[i]; }
  TYCHE_HD constexpr const std::uint32_t& operator[](int i) const { return words[i]; }
};

namespace philox_constants {
inline constexpr std::uint32_t m0 = 0xD2511F53u;  ///< multiplier of words 0
inline constexpr std::uint32_t m1 = 0xCD9E8D57u;  ///< multiplier of words 2
inline constexpr std::uint32_t w0 = 0x9E3779B9u;  ///< Weyl increment of key word 0 (golden ratio)
inline constexpr std::uint32_t w1 = 0xBB67AE85u;  ///< Weyl increment of key word 1 (sqrt(3) - 1)
}  // namespace philox_constants

namespace detail {

/// The product of two words holding 32-bit values (exact in 64 bits): the default multiply of
/// philox4x32_words.
struct philox_multiply {
  template <class Word>
  TYCHE_HD TYCHE_INLINE constexpr Word operator()(const Word& a, const Word& b) const {
    return a * b;
  }
};

/// R rounds of Philox-4x32 on a counter held as four words c0..c3 and a key k0, k1: the one
/// implementation of the bijection in the project. Word is std::uint64_t (one counter) or a SIMD
/// batch of them (one counter per lane, backends/simd/random.hpp, which passes a multiply that
/// uses the 32 × 32 → 64-bit lane instruction); each word holds a 32-bit value, so that the
/// products of a round are exact in it. The key is bumped by the Weyl constants before every
/// round but the first.
template <class Word, class Multiply = philox_multiply>
TYCHE_HD TYCHE_INLINE constexpr void philox4x32_words(int rounds, Word& c0, Word& c1, Word& c2, Word& c3,
                                                      std::uint32_t k0, std::uint32_t k1, Multiply mul = {}) {
  const Word low(std::uint64_t{0xffffffffu});
  const Word m0(std::uint64_t{philox_constants::m0}), m1(std::uint64_t{philox_constants::m1});
  for (int r = 0; r < rounds; ++r) {
    if (r > 0) {
      k0 += philox_constants::w0;
      k1 += philox_constants::w1;
    }
    const Word p0 = mul(m0, c0), p1 = mul(m1, c2);
    const Word n0 = (p1 >> 32) ^ c1 ^ Word(std::uint64_t{k0});
    const Word n2 = (p0 >> 32) ^ c3 ^ Word(std::uint64_t{k1});
    c1 = p1 & low;
    c3 = p0 & low;
    c0 = n0;
    c2 = n2;
  }
}

}  // namespace detail

/// Philox-4x32 with R rounds.
template <int R>
TYCHE_HD constexpr philox4x32_counter philox4x32(philox4x32_counter counter,
                                                 philox4x32_key key) {
  static_assert(R >= 1, "tyche: philox4x32 needs at least one round");
  std::uint64_t c0 = counter.words[0], c1 = counter.words[1], c2 = counter.words[2], c3 = counter.words[3];
  detail::philox4x32_words(R, c0, c1, c2, c3, key.words[0], key.words[1]);
  return philox4x32_counter{{static_cast<std::uint32_t>(c0), static_cast<std::uint32_t>(c1),
                             static_cast<std::uint32_t>(c2), static_cast<std::uint32_t>(c3)}};
}

/// Philox-4x32-10, the Random123 default.
TYCHE_HD constexpr philox4x32_counter philox4x32_10(philox4x32_counter counter,
                                                    philox4x32_key key) {
  return philox4x32<10>(counter, key);
}

/// A counter-based generator: stream `stream` (one per chain) of the family keyed by `seed`,
/// at position `position`. See the top of this file for the layout. Satisfies
/// std::uniform_random_bit_generator (64-bit results), so <random>'s distributions accept it.
class counter_rng {
 public:
  using result_type = std::uint64_t;

  TYCHE_HD constexpr counter_rng(std::uint64_t seed, std::uint64_t stream = 0,
                                 std::uint64_t position = 0)
      : seed_(seed), stream_(stream), position_(position) {}

  TYCHE_HD static constexpr result_type min() { return 0; }
  TYCHE_HD static constexpr result_type max() { return ~result_type{0}; }

  TYCHE_HD constexpr std::uint64_t seed() const { return seed_; }
  TYCHE_HD constexpr std::uint64_t stream() const { return stream_; }
  /// The position of the next draw.
  TYCHE_HD constexpr std::uint64_t position() const { return position_; }

  /// Jumps to position k: the next draw is draw k of this stream.
  TYCHE_HD constexpr void seek(std::uint64_t k) { position_ = k; }
  /// Skips n draws (of any kind: every draw consumes one position).
  TYCHE_HD constexpr void discard(std::uint64_t n) { position_ += n; }

  /// The Philox block at position k, without moving.
  TYCHE_HD constexpr philox4x32_counter block(std::uint64_t k) const {
    return philox4x32_10(philox4x32_counter{{static_cast<std::uint32_t>(k),
                                             static_cast<std::uint32_t>(k >> 32),
                                             static_cast<std::uint32_t>(stream_),
                                             static_cast<std::uint32_t>(stream_ >> 32)}},
                         philox4x32_key{{static_cast<std::uint32_t>(seed_),
                                         static_cast<std::uint32_t>(seed_ >> 32)}});
  }
  /// The next block; consumes one position.
  TYCHE_HD constexpr philox4x32_counter next_block() { return block(position_++); }

  /// Word 0 of the next block.
  TYCHE_HD constexpr std::uint32_t next_u32() { return next_block().words[0]; }
  /// Words 0 (low half) and 1 (high half) of the next block.
  TYCHE_HD constexpr std::uint64_t next_u64() {
    const philox4x32_counter b = next_block();
    return bits64(b.words[0], b.words[1]);
  }
  /// The UniformRandomBitGenerator draw: next_u64().
  TYCHE_HD constexpr result_type operator()() { return next_u64(); }

  /// Uniform on (0, 1), never 0 or 1: uniform01_from_bits(next_u64()) (53 random bits).
  TYCHE_HD constexpr double uniform01() { return uniform01_from_bits(next_u64()); }
  /// Standard normal by Box–Muller from the two 64-bit halves of one block (the cosine branch;
  /// the sine branch is not kept, so that every normal consumes exactly one position).
  TYCHE_HD double normal() {
    const philox4x32_counter b = next_block();
    return normal_from_bits(bits64(b.words[0], b.words[1]), bits64(b.words[2], b.words[3]));
  }
  /// Standard exponential (rate 1): −log(uniform01), from words 0 and 1 of one block.
  TYCHE_HD double exponential() { return exponential_from_bits(next_u64()); }

  TYCHE_HD friend constexpr bool operator==(const counter_rng& a, const counter_rng& b) {
    return a.seed_ == b.seed_ && a.stream_ == b.stream_ && a.position_ == b.position_;
  }
  TYCHE_HD friend constexpr bool operator!=(const counter_rng& a, const counter_rng& b) {
    return !(a == b);
  }

 private:
  TYCHE_HD static constexpr std::uint64_t bits64(std::uint32_t lo, std::uint32_t hi) {
    return std::uint64_t{lo} | (std::uint64_t{hi} << 32);
  }

  std::uint64_t seed_;
  std::uint64_t stream_;
  std::uint64_t position_;
};

/// L chains drawn together, one per SIMD lane: every draw gives lane l what
/// counter_rng(seed, chains[l], position) gives, and moves all lanes one position on. Draw a
/// batch with uniform01<xsimd::batch<double>>(lanes) and the like (tyche/random/variates.hpp).
template <std::size_t L>
struct counter_rng_lanes {
  static constexpr std::size_t lanes = L;
  std::uint64_t seed = 0;
  std::array<std::uint64_t, L> chains{};  ///< the stream of each lane
  std::uint64_t position = 0;              ///< the position of the next draw, shared by all lanes

  /// The generator of lane l at the current position.
  constexpr counter_rng lane(std::size_t l) const { return counter_rng(seed, chains[l], position); }
  constexpr void seek(std::uint64_t k) { position = k; }
  constexpr void discard(std::uint64_t n) { position += n; }

  constexpr std::array<std::uint64_t, L> next_u64() {
    return draw([](counter_rng& g) { return g.next_u64(); });
  }
  constexpr std::array<double, L> uniform01() {
    return draw([](counter_rng& g) { return g.uniform01(); });
  }
  std::array<double, L> normal() {
    return draw([](counter_rng& g) { return g.normal(); });
  }
  std::array<double, L> exponential() {
    return draw([](counter_rng& g) { return g.exponential(); });
  }

 private:
  template <class F>
  constexpr auto draw(F f) {
    std::array<decltype(f(std::declval<counter_rng&>())), L> out{};
    for (std::size_t l = 0; l < L; ++l) {
      counter_rng g = lane(l);
      out[l] = f(g);
    }
    ++position;
    return out;
  }
};

}  // namespace tyche
// ----- end tyche/random/philox.hpp -----

#include <concepts>
#include <cstddef>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace tyche {

/// A family of distributions (one struct per family, holding its argument expressions):
/// `D::family` names it ("normal"); `arguments()` gives the argument expressions as a tuple;
/// `log_prob(x)` (a core expression of x and the arguments: not checked here, it needs an x)
/// is the log density with every normalising constant.
template <class D>
concept distribution_family = requires(const D& d) {
  { D::family } -> std::convertible_to<const char*>;
  d.arguments();
};

/// A family whose support is continuous: `transform()` is the bijection from the real line (or
/// ℝⁿ) onto the support, which a random variable with this prior is sampled through.
template <class D>
concept continuous_family = distribution_family<D> && requires(const D& d) { d.transform(); };

/// A transform: `Tr::name`; `constrain(u)`, the constrained value as a core expression of the
/// unconstrained u; `log_jacobian(u)`, log |dx/du| summed over the elements.
template <class Tr, class U>
concept transform_of = requires(const Tr& t, const U& u) {
  { Tr::name } -> std::convertible_to<const char*>;
  t.constrain(u);
  t.log_jacobian(u);
};

/// What a sampler needs from a model: the dimension of θ (unconstrained), log p and its gradient
/// at θ with a caller-owned workspace of workspace_size() values (no allocation per call), Stan's
/// random initialisation, and the constrained values of θ (constrained_dim() of them, appended).
/// Executors also evaluate log p for their lane types (SIMD batches), which a target provides
/// as the same template.
template <class T>
concept log_density_target = requires(const T& t, const double* q, double* g, double* ws, counter_rng& rng,
                                      std::vector<double>& out) {
  { t.dim() } -> std::convertible_to<std::size_t>;
  { t.constrained_dim() } -> std::convertible_to<std::size_t>;
  { t.workspace_size() } -> std::convertible_to<std::size_t>;
  { t.value_and_gradient(q, g, ws) } -> std::convertible_to<double>;
  { t.initial_point(rng, 2.0) } -> std::convertible_to<std::vector<double>>;
  t.constrain(q, out);
};

/// What nuts() needs from the object it is given — a tyche::model(...): its dimension and
/// names, its compiled log density (program(): a view to evaluate, and the workspace it needs),
/// Stan's random initialisation, and constrain.
template <class M>
concept sampleable_model = requires(const M& m, counter_rng& rng, std::span<const double> q) {
  { m.dim() } -> std::convertible_to<std::size_t>;
  { m.constrained_dim() } -> std::convertible_to<std::size_t>;
  { m.parameter_names() } -> std::convertible_to<std::vector<std::string>>;
  m.program().view();
  { m.program().workspace_size() } -> std::convertible_to<std::size_t>;
  { m.initial_point(rng, 2.0) } -> std::convertible_to<std::vector<double>>;
  { m.constrain(q) } -> std::convertible_to<std::vector<double>>;
};

/// An executor: a value that says where chains run and with what resources. Each executor type
/// names itself (`executor_name`) and is one of the alternatives of nuts_executor
/// (samplers/nuts/config.hpp).
template <class E>
concept nuts_executor_type = requires {
  { E::executor_name } -> std::convertible_to<const char*>;
};

/// The random streams of W chains in the lanes of a NUTS kernel (samplers/nuts/kernel.hpp):
/// `uniforms(out, take)` writes out[l], a uniform on (0, 1), for the lanes with take[l];
/// `normals(out, n, take)` writes n standard normals out[i·W + l] for those lanes. A lane's
/// draws must depend on its own chain only (samplers/nuts/chain_streams.hpp: Philox streams).
template <class R, class Real>
concept lane_generator = requires(R& r, Real* out, const bool* take, std::size_t n) {
  r.uniforms(out, take);
  r.normals(out, n, take);
};

/// A program for forward inference (samplers/smc/): either a stepwise program
/// (tyche::smc::stepwise(initial, observations, step, predict): a copyable state, a step that
/// returns the log-likelihood of observation n, a predict that records values), or a callable
/// taking no arguments that calls tyche::smc::observe and tyche::smc::predict (the fork engine).
template <class P>
concept smc_program = std::is_invocable_v<const P&> || requires(const P& p) {
  typename P::state_type;
  p.initial;
  { p.observations } -> std::convertible_to<std::size_t>;
  p.step;
  p.predict;
};

}  // namespace tyche
// ----- end tyche/concepts.hpp -----
// ----- begin tyche/core/expr.hpp -----
// tyche/core/expr.hpp — the expression base class, the node kinds and the compile-time
// properties every node has: its shape, the parameters it depends on, and whether it can be
// shared (see docs/design/expression-core.md).
// ----- begin tyche/core/meta.hpp -----
// tyche/core/meta.hpp — the small compile-time vocabulary the expression core is built from:
// compile-time strings (parameter names), type lists, and paths into an expression tree.

#include <cstddef>
#include <string_view>
#include <type_traits>
#include <utility>

namespace tyche {

/// A string usable as a template argument: `param<"mu">`.
template <std::size_t N>
struct fixed_string {
  char chars[N]{};
  constexpr fixed_string(const char (&s)[N]) {  // NOLINT: implicit by design
    for (std::size_t i = 0; i < N; ++i) chars[i] = s[i];
  }
  [[nodiscard]] constexpr std::string_view view() const { return {chars, N - 1}; }
  [[nodiscard]] static constexpr std::size_t size() { return N - 1; }
  template <std::size_t M>
  constexpr bool operator==(const fixed_string<M>& other) const {
    return view() == other.view();
  }
};

namespace meta {

template <class... Ts>
struct list {
  static constexpr std::size_t size = sizeof...(Ts);
};

template <class... Ls>
struct concat_impl;
template <>
struct concat_impl<> {
  using type = list<>;
};
template <class... As>
struct concat_impl<list<As...>> {
  using type = list<As...>;
};
template <class... As, class... Bs, class... Rest>
struct concat_impl<list<As...>, list<Bs...>, Rest...> {
  using type = typename concat_impl<list<As..., Bs...>, Rest...>::type;
};
/// Concatenation of type lists.
template <class... Ls>
using concat = typename concat_impl<Ls...>::type;

template <std::size_t I, class L>
struct at_impl;
template <std::size_t I, class T, class... Ts>
struct at_impl<I, list<T, Ts...>> : at_impl<I - 1, list<Ts...>> {};
template <class T, class... Ts>
struct at_impl<0, list<T, Ts...>> {
  using type = T;
};
/// The I-th element of a type list.
template <std::size_t I, class L>
using at = typename at_impl<I, L>::type;

/// Index of the first element E of L with Eq<E, T>::value, or L::size when there is none.
template <template <class, class> class Eq, class T, class L>
struct find_if_equal;
template <template <class, class> class Eq, class T, class... Ts>
struct find_if_equal<Eq, T, list<Ts...>> {
  static constexpr std::size_t value = [] {
    constexpr bool hits[] = {Eq<Ts, T>::value..., true};  // the sentinel stops the search
    std::size_t i = 0;
    while (!hits[i]) ++i;
    return i;
  }();
};

/// Number of elements E of L with Eq<E, T>::value.
template <template <class, class> class Eq, class T, class L>
struct count_equal;
template <template <class, class> class Eq, class T, class... Ts>
struct count_equal<Eq, T, list<Ts...>> {
  static constexpr std::size_t value = (std::size_t{0} + ... + (Eq<Ts, T>::value ? 1 : 0));
};

/// L without later duplicates (under Eq), first occurrences kept in order.
template <template <class, class> class Eq, class Done, class Todo>
struct unique_impl;
template <template <class, class> class Eq, class Done>
struct unique_impl<Eq, Done, list<>> {
  using type = Done;
};
template <template <class, class> class Eq, class... Ds, class T, class... Ts>
struct unique_impl<Eq, list<Ds...>, list<T, Ts...>> {
  using type = typename unique_impl<
      Eq,
      std::conditional_t<(find_if_equal<Eq, T, list<Ds...>>::value < sizeof...(Ds)), list<Ds...>,
                         list<Ds..., T>>,
      list<Ts...>>::type;
};
template <template <class, class> class Eq, class L>
using unique = typename unique_impl<Eq, list<>, L>::type;

template <class A, class B>
using same = std::is_same<A, B>;

TYCHE_EXEC_CHECK_DISABLE
template <class F, std::size_t... I>
TYCHE_HD TYCHE_INLINE constexpr void static_for_impl(F& f, std::index_sequence<I...>) {
  (f(std::integral_constant<std::size_t, I>{}), ...);
}
TYCHE_EXEC_CHECK_DISABLE
template <std::size_t N, class F, std::size_t... I>
TYCHE_HD TYCHE_INLINE constexpr void static_for_reverse_impl(F& f, std::index_sequence<I...>) {
  (f(std::integral_constant<std::size_t, N - 1 - I>{}), ...);
}

/// Calls f(std::integral_constant<std::size_t, I>{}) for I = 0 .. N-1, in order.
TYCHE_EXEC_CHECK_DISABLE
template <std::size_t N, class F>
TYCHE_HD TYCHE_INLINE constexpr void static_for(F&& f) {
  static_for_impl(f, std::make_index_sequence<N>{});
}
/// Calls f(std::integral_constant<std::size_t, I>{}) for I = N-1 down to 0.
TYCHE_EXEC_CHECK_DISABLE
template <std::size_t N, class F>
TYCHE_HD TYCHE_INLINE constexpr void static_for_reverse(F&& f) {
  static_for_reverse_impl<N>(f, std::make_index_sequence<N>{});
}

}  // namespace meta

/// A path from the root of an expression to one node: the child index taken at each level.
template <std::size_t... I>
struct path {};

namespace meta {
template <class P, std::size_t J>
struct push_impl;
template <std::size_t... I, std::size_t J>
struct push_impl<path<I...>, J> {
  using type = path<I..., J>;
};
template <class P, std::size_t J>
using push = typename push_impl<P, J>::type;
}  // namespace meta

}  // namespace tyche
// ----- end tyche/core/meta.hpp -----

#include <concepts>
#include <cstddef>
#include <span>
#include <type_traits>

namespace tyche {

/// CRTP base of every expression node. A node is an ordinary value type: it owns its operands
/// by value and holds no evaluation state, so one model can be evaluated by many threads.
template <class Derived>
struct expr {
  TYCHE_HD constexpr const Derived& derived() const { return static_cast<const Derived&>(*this); }
};

/// The kinds of node; the evaluator dispatches on them at compile time.
enum class node_kind {
  literal,       // a rational constant in the type: lit<1, 2>
  constant,      // a run-time constant (a double in the node)
  param,         // a scalar parameter, by name
  vector_param,  // a vector parameter, by name, static or run-time size
  param_element, // element k of a vector parameter: a scalar
  data_vector,   // a view of a vector of data
  data_matrix,   // a view of a row-major matrix of data (only as the left operand of matvec)
  unary,         // an elementwise function of one operand
  binary,        // an elementwise function of two operands (with scalar broadcasting)
  sum,           // sum over the elements of a vector expression
  log_sum_exp,   // log Σ exp over the elements of a vector expression
  matvec,        // data matrix × parameter vector: a vector held in a buffer
  residual_squares, // Σᵢ (yᵢ − s − xᵢᵀv)² from sufficient statistics (partial evaluation)
  vector_op,     // a vector computed from whole operands by an op (ordered transform, scan, …),
                 // held in a buffer (the workspace), like matvec
  element,       // element k of a buffered vector (matvec or vector_op): a scalar
  param_gather   // v[idx[i]] for a vector parameter v and a data index vector: a vector leaf
};

inline constexpr std::size_t dynamic_extent = std::dynamic_extent;

template <class T>
concept expression = std::derived_from<std::remove_cvref_t<T>, expr<std::remove_cvref_t<T>>>;

/// A wrapper stands for an expression without being a node: a random variable is used as its
/// value. Every operation unwraps it (detail::as_node), so wrappers never sit in a tree.
template <class T>
concept wraps_expression = requires(const std::remove_cvref_t<T>& x) { x.value_expression(); };

/// Plain numbers a user may write next to expressions (they become run-time constants).
template <class T>
concept arithmetic = std::is_arithmetic_v<std::remove_cvref_t<T>> &&
                     !std::is_same_v<std::remove_cvref_t<T>, bool>;

template <class N>
inline constexpr node_kind kind_of = std::remove_cvref_t<N>::kind;

/// True for nodes whose value is a vector (elementwise expressions and vector leaves).
template <class N>
inline constexpr bool is_vector_v = std::remove_cvref_t<N>::is_vector;

/// Compile-time size of a vector node, or dynamic_extent when known only at run time.
template <class N>
inline constexpr std::size_t extent_v = std::remove_cvref_t<N>::extent;

template <class N>
inline constexpr bool is_leaf_v =
    kind_of<N> == node_kind::literal || kind_of<N> == node_kind::constant ||
    kind_of<N> == node_kind::param || kind_of<N> == node_kind::vector_param ||
    kind_of<N> == node_kind::param_element || kind_of<N> == node_kind::data_vector ||
    kind_of<N> == node_kind::data_matrix || kind_of<N> == node_kind::param_gather;

/// A matvec computed row by row inside a reduction's loop (compile/stream.hpp), not buffered.
template <class N>
inline constexpr bool is_streamed_v = [] {
  if constexpr (requires { std::remove_cvref_t<N>::streamed; }) return std::remove_cvref_t<N>::streamed;
  else return false;
}();

/// Vector nodes whose values are computed whole into a buffer of the workspace (not fused into
/// a reduction's loop): matvec (unless streamed) and vector_op.
template <class N>
inline constexpr bool is_buffered_v =
    (kind_of<N> == node_kind::matvec && !is_streamed_v<N>) || kind_of<N> == node_kind::vector_op;

/// Elementwise vector nodes are fused into the loop of the reduction that consumes them.
template <class N>
inline constexpr bool is_elementwise_v =
    ((kind_of<N> == node_kind::unary || kind_of<N> == node_kind::binary) && is_vector_v<N>) ||
    is_streamed_v<N>;

namespace detail {
template <class N>
struct children_of {
  using type = typename N::children;
};
}  // namespace detail
template <class N>
using children_t = typename std::remove_cvref_t<N>::children;

// ---- parameter dependencies ---------------------------------------------------------------

namespace detail {
/// Two parameters (leaf types) with the same name: the same parameter, whatever their types.
template <class A, class B>
struct same_param_name : std::bool_constant<A::name == B::name> {};

template <class N>
struct params_of_impl;
template <class... Cs>
struct params_of_list {
  using type = meta::unique<same_param_name, meta::concat<typename params_of_impl<Cs>::type...>>;
};
template <class N>
struct params_of_impl {
  template <class L>
  struct from;
  template <class... Cs>
  struct from<meta::list<Cs...>> {
    using type = typename params_of_list<Cs...>::type;
  };
  template <class M, bool Element = kind_of<M> == node_kind::param_element ||
                                    kind_of<M> == node_kind::param_gather>
  struct self {
    using type = meta::list<M>;
  };
  template <class M>
  struct self<M, true> {
    using type = meta::list<typename M::vector_type>;
  };
  using type = typename std::conditional_t<
      kind_of<N> == node_kind::param || kind_of<N> == node_kind::vector_param ||
          kind_of<N> == node_kind::param_element || kind_of<N> == node_kind::param_gather,
      self<N>, from<children_t<N>>>::type;
};
}  // namespace detail

/// The parameters (leaf types) that node N depends on, each once, in order of first appearance.
template <class N>
using params_of = typename detail::params_of_impl<std::remove_cvref_t<N>>::type;

/// True when N's value changes with some parameter.
template <class N>
inline constexpr bool depends_on_params_v = params_of<N>::size > 0;

/// True when N's value depends on the parameter called Name.
template <class N, fixed_string Name>
inline constexpr bool depends_on_v = [] {
  return []<class... Ps>(meta::list<Ps...>) { return ((Ps::name == Name) || ...); }(params_of<N>{});
}();

// ---- sharing --------------------------------------------------------------------------------

namespace detail {
template <class N>
struct shareable_impl {
  template <class L>
  struct all;
  template <class... Cs>
  struct all<meta::list<Cs...>> : std::bool_constant<(shareable_impl<Cs>::value && ...)> {};
  static constexpr bool value = !std::remove_cvref_t<N>::has_payload && all<children_t<N>>::value;
};
}  // namespace detail

/// A node is shareable when its type alone determines its value: no run-time payload
/// (constants, data views, non-type operation arguments) anywhere below it. Two occurrences of
/// a shareable type in one model are the same value and are evaluated once.
template <class N>
inline constexpr bool shareable_v = detail::shareable_impl<std::remove_cvref_t<N>>::value;

}  // namespace tyche
// ----- end tyche/core/expr.hpp -----
// ----- begin tyche/core/leaves.hpp -----
// tyche/core/leaves.hpp — the leaves of an expression: literal and run-time constants,
// parameters (scalar and vector, by name) and views of data.

#include <array>
#include <cmath>
#include <concepts>
#include <iterator>
#include <ranges>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace tyche {

/// A rational constant carried in the type: `lit<2>`, `lit<1, 2>`. Costs nothing to store,
/// and keeps the subexpressions it appears in shareable.
template <std::intmax_t Num, std::intmax_t Den = 1>
struct literal : expr<literal<Num, Den>> {
  static_assert(Den != 0, "tyche::lit<Num, Den> requires a non-zero denominator 'Den'");
  static constexpr node_kind kind = node_kind::literal;
  static constexpr bool is_vector = false;
  static constexpr std::size_t extent = 1;
  static constexpr bool has_payload = false;
  using children = meta::list<>;
  static constexpr double value = static_cast<double>(Num) / static_cast<double>(Den);
};

template <std::intmax_t Num, std::intmax_t Den = 1>
inline constexpr literal<Num, Den> lit{};

/// A constant known when the model is built (a plain number in the user's code, or a scalar
/// of data).
struct constant : expr<constant> {
  static constexpr node_kind kind = node_kind::constant;
  static constexpr bool is_vector = false;
  static constexpr std::size_t extent = 1;
  static constexpr bool has_payload = true;
  using children = meta::list<>;
  double value = 0.0;
  TYCHE_HD constexpr explicit constant(double v) : value(v) {}
};

/// A scalar parameter. Two `param<"mu">` anywhere in a model are the same parameter.
template <fixed_string Name>
struct param : expr<param<Name>> {
  static constexpr node_kind kind = node_kind::param;
  static constexpr bool is_vector = false;
  static constexpr std::size_t extent = 1;
  static constexpr bool has_payload = false;
  static constexpr auto name = Name;
  using children = meta::list<>;
};

/// A vector parameter of compile-time size Extent, or of run-time size when Extent is
/// dynamic_extent (then the size is given on construction).
template <fixed_string Name, std::size_t Extent = dynamic_extent>
struct vector_param : expr<vector_param<Name, Extent>> {
  static constexpr node_kind kind = node_kind::vector_param;
  static constexpr bool is_vector = true;
  static constexpr std::size_t extent = Extent;
  static constexpr bool has_payload = false;
  static constexpr auto name = Name;
  using children = meta::list<>;
  TYCHE_HD constexpr std::size_t size() const { return Extent; }
};

template <fixed_string Name>
struct vector_param<Name, dynamic_extent> : expr<vector_param<Name, dynamic_extent>> {
  static constexpr node_kind kind = node_kind::vector_param;
  static constexpr bool is_vector = true;
  static constexpr std::size_t extent = dynamic_extent;
  static constexpr bool has_payload = false;  // identity is the name; the size is checked
  static constexpr auto name = Name;
  using children = meta::list<>;
  std::size_t n = 0;
  TYCHE_HD constexpr explicit vector_param(std::size_t size) : n(size) {}
  TYCHE_HD constexpr std::size_t size() const { return n; }
};

/// Element k (0-based) of vector parameter V: a scalar. Made by at(v, k) or v[k].
template <class V>
struct param_element : expr<param_element<V>> {
  static constexpr node_kind kind = node_kind::param_element;
  static constexpr bool is_vector = false;
  static constexpr std::size_t extent = 1;
  static constexpr bool has_payload = true;  // the index
  using children = meta::list<>;
  using vector_type = V;
  static constexpr auto name = V::name;
  V vector;
  std::size_t index = 0;
};

/// v[idx[i] − Shift], i = 0 … n−1, for a vector parameter V and n data indices (0-based for
/// Shift = 0; categorical observations are 1-based doubles, Index = double, Shift = 1), checked
/// against V's size when made: a vector leaf read straight from θ, so the gather is fused into
/// the loop that consumes it (y ~ normal(alpha[group], sigma)). Made by gather(v, idx). The
/// index storage must outlive the model, as data does.
template <class V, class Index = int, std::size_t Shift = 0>
struct param_gather : expr<param_gather<V, Index, Shift>> {
  static constexpr node_kind kind = node_kind::param_gather;
  static constexpr bool is_vector = true;
  static constexpr std::size_t extent = dynamic_extent;
  static constexpr bool has_payload = true;  // the indices
  using children = meta::list<>;
  using vector_type = V;
  static constexpr auto name = V::name;
  V vector;
  const Index* index = nullptr;
  std::size_t n = 0;
  TYCHE_HD constexpr std::size_t size() const { return n; }
  /// The position in V of element i.
  TYCHE_HD constexpr std::size_t position(std::size_t i) const {
    return static_cast<std::size_t>(index[i]) - Shift;
  }
};

/// A view of a vector of data (double). The storage must outlive the model, as with std::span,
/// and must not change after compile(): compile() reads data to fold what depends on data only
/// (e.g. 1/σ for a division by data), so a changed value would be half seen. Compile again
/// after changing data.
template <std::size_t Extent = dynamic_extent>
struct data_vector : expr<data_vector<Extent>> {
  static constexpr node_kind kind = node_kind::data_vector;
  static constexpr bool is_vector = true;
  static constexpr std::size_t extent = Extent;
  static constexpr bool has_payload = true;
  using children = meta::list<>;
  const double* ptr = nullptr;
  std::size_t n = 0;
  const char* name = nullptr;  // for messages: data(y, "y"); not part of the value
  TYCHE_HD constexpr std::size_t size() const { return Extent == dynamic_extent ? n : Extent; }
  TYCHE_HD constexpr double operator[](std::size_t i) const { return ptr[i]; }
};

/// A view of a row-major matrix of data; it appears only as the left operand of matvec.
struct data_matrix : expr<data_matrix> {
  static constexpr node_kind kind = node_kind::data_matrix;
  static constexpr bool is_vector = false;
  static constexpr std::size_t extent = dynamic_extent;
  static constexpr bool has_payload = true;
  using children = meta::list<>;
  const double* ptr = nullptr;
  std::size_t rows = 0;
  std::size_t cols = 0;
  const char* name = nullptr;  // for messages: matrix(x, rows, cols, "X"); not part of the value
};

// ---- making leaves ---------------------------------------------------------------------------

namespace detail {
/// xtensor-like: has shape(), strides(), dimension() and data() (duck-typed, so the core does
/// not include xtensor).
template <class X>
concept xtensor_like = requires(const X& x) {
  x.shape();
  x.strides();
  { x.dimension() } -> std::convertible_to<std::size_t>;
  { x.data() } -> std::convertible_to<const double*>;
};
template <class Container>
concept contiguous_doubles = !xtensor_like<Container> && requires(const Container& c) {
  { std::data(c) } -> std::convertible_to<const double*>;
  { std::size(c) } -> std::convertible_to<std::size_t>;
};

/// tyche::data is a function object, not a function, so that `data(v)` for a std::vector v
/// finds it and not std::data through argument-dependent lookup.
struct data_fn {
  /// A scalar of data: a run-time constant.
  constant operator()(double x) const { return constant{x}; }

  /// A view of data from anything contiguous that holds doubles: std::vector, std::array,
  /// std::span. The storage must outlive the model.
  template <contiguous_doubles Container>
  auto operator()(const Container& c) const {
    if constexpr (requires { std::tuple_size<Container>::value; }) {
      return data_vector<std::tuple_size<Container>::value>{{}, std::data(c), std::size(c)};
    } else {
      return data_vector<>{{}, std::data(c), static_cast<std::size_t>(std::size(c))};
    }
  }

  /// The same view, with a name that error messages use: `data(y, "y")` (a string literal, or
  /// storage that outlives the model).
  template <contiguous_doubles Container>
  auto operator()(const Container& c, const char* name) const {
    auto v = (*this)(c);
    v.name = name;
    return v;
  }

  /// A view of a one-dimensional xtensor container (xt::xtensor<double, 1>, xt::xarray<double>).
  template <xtensor_like X>
  data_vector<> operator()(const X& x) const {
    if (x.dimension() != 1 || (x.size() > 1 && x.strides()[0] != 1))
      throw std::invalid_argument(
          "tyche::data(x) requires a contiguous one-dimensional array; got " +
          std::to_string(x.dimension()) + " dimensions (use tyche::matrix(x) for a matrix)");
    return {{}, x.data(), static_cast<std::size_t>(x.size())};
  }

  /// Forbidden: data(temporary) would keep a view of storage destroyed at the end of the line.
  template <class Container>
    requires(!std::is_lvalue_reference_v<Container> && !std::is_arithmetic_v<Container> &&
             !std::ranges::borrowed_range<Container>)  // a temporary std::span is fine
  data_vector<> operator()(Container&&, const char* = nullptr) const {
    static_assert(sizeof(Container) == 0,
                  "tyche::data(x) keeps a view of 'x', not a copy: pass a named container that "
                  "outlives the model, not a temporary");
    return {};  // a node, so that the expression around the call raises no further errors
  }

  /// A view of n doubles starting at ptr (host or, for device evaluation, device memory).
  data_vector<> operator()(const double* ptr, std::size_t n) const { return {{}, ptr, n}; }
};
}  // namespace detail

inline constexpr detail::data_fn data{};

namespace detail {
/// Throws std::invalid_argument naming the call, the matrix (its name, or `arg`) and the first
/// entry that is NaN or infinite: for ops that hold a data matrix themselves rather than as a
/// leaf of the expression (which joint(...) checks).
inline void check_matrix_finite(const data_matrix& x, const char* call, const char* arg) {
  for (std::size_t i = 0; i < x.rows * x.cols; ++i)
    if (!std::isfinite(x.ptr[i]))
      throw std::invalid_argument(std::string("tyche::") + call + ": " + (x.name ? x.name : arg) + "[" +
                                  std::to_string(i / x.cols + 1) + ", " + std::to_string(i % x.cols + 1) +
                                  "] = " + std::to_string(x.ptr[i]) + "; data must be finite");
}
}  // namespace detail

/// A view of a row-major rows × cols matrix starting at ptr.
inline data_matrix matrix(const double* ptr, std::size_t rows, std::size_t cols, const char* name = nullptr) {
  return {{}, ptr, rows, cols, name};
}

/// A view of a contiguous range of doubles (std::vector, std::array, std::span) holding a
/// row-major rows × cols matrix; its size must be rows · cols. A name, if given, is what error
/// messages call it: `matrix(x, n, k, "X")`.
template <class R>
  requires(!std::is_pointer_v<R> && requires(const R& r) {
    { std::data(r) } -> std::convertible_to<const double*>;
    std::size(r);
  })
data_matrix matrix(const R& r, std::size_t rows, std::size_t cols, const char* name = nullptr) {
  if (std::size(r) != rows * cols)
    throw std::invalid_argument("tyche::matrix(values, " + std::to_string(rows) + ", " +
                                std::to_string(cols) + "): values has " +
                                std::to_string(std::size(r)) + " elements, not " +
                                std::to_string(rows * cols));
  return {{}, std::data(r), rows, cols, name};
}

/// A view of a two-dimensional row-major xtensor container (xt::xtensor<double, 2>).
template <detail::xtensor_like X>
data_matrix matrix(const X& x) {
  if (x.dimension() != 2)
    throw std::invalid_argument("tyche::matrix(x) requires a two-dimensional array; got " +
                                std::to_string(x.dimension()) + " dimensions");
  const auto rows = static_cast<std::size_t>(x.shape()[0]);
  const auto cols = static_cast<std::size_t>(x.shape()[1]);
  if (rows * cols > 0 && ((cols > 1 && x.strides()[1] != 1) ||
                          (rows > 1 && static_cast<std::size_t>(x.strides()[0]) != cols)))
    throw std::invalid_argument(
        "tyche::matrix(x) requires a contiguous row-major array (xt::layout_type::row_major)");
  return {{}, x.data(), rows, cols};
}

}  // namespace tyche
// ----- end tyche/core/leaves.hpp -----
// ----- begin tyche/operations/functions.hpp -----
// tyche/operations/functions.hpp — the functions and operators that build expressions (exp,
// log, +, −, ×, ÷, pow, sum, dot, log_sum_exp, at, matvec, …), with the rewrites applied as
// nodes are built: identities and literal folding (operations/identities.hpp), and the Line and
// LogLine normal forms (operations/linear.hpp). The node types themselves are in core/nodes.hpp,
// their value and derivative rules in autodiff/.
// ----- begin tyche/autodiff/arithmetic.hpp -----
// tyche/autodiff/arithmetic.hpp — value and derivative rules for arithmetic: negation, the
// four operations, square, inverse, sqrt, abs and powers.
//
// A unary rule R has `R::value(x)` and `R::value(x, dx)`, the second also setting dy/dx; a
// binary rule has `value(a, b)` and `value(a, b, da, db)`. The evaluator stores the partial
// derivatives in the forward pass and multiplies them by the adjoint in the reverse pass, so
// every rule computes its derivative from quantities it already has (often y itself).
// ----- begin tyche/backends/simd/batch.hpp -----
// tyche/backends/simd/batch.hpp — the only header that includes xsimd. It teaches tyche's
// scalar vocabulary (scalar/traits.hpp, scalar/math.hpp) about xsimd::batch, so that a model
// evaluates one chain per SIMD lane. Compiled only when TYCHE_USE_XSIMD is set (the
// tyche::simd CMake target sets it); otherwise it defines TYCHE_HAS_XSIMD 0 and nothing else.
//
// Layers above the scalar one (the expression core, autodiff rules, compile) include this
// header wherever their templates call tyche::math on a generic scalar or use the traits:
// math::exp(x) is a qualified name, looked up where the template is defined, so the batch
// overloads must be declared before it (see docs/design/expression-core.md, "Layers").
// ----- begin tyche/scalar/math.hpp -----
// tyche/scalar/math.hpp — scalar math for float and double, on the host and in CUDA device
// code. Operation rules in autodiff/ call tyche::math and nothing else, so a new scalar type
// needs only overloads of these functions: backends/simd/batch.hpp adds those for SIMD
// batches. (A header whose templates call math:: on a generic T includes that one too, so
// that the batch overloads are declared before the templates that name them.)

#include <cmath>
#include <math.h>  // global-namespace overloads, which CUDA device code also provides

namespace tyche::math {

// clang-format off
TYCHE_HD inline double exp(double x) { return ::exp(x); }
TYCHE_HD inline float  exp(float x) { return ::expf(x); }
TYCHE_HD inline double log(double x) { return ::log(x); }
TYCHE_HD inline float  log(float x) { return ::logf(x); }
TYCHE_HD inline double log1p(double x) { return ::log1p(x); }
TYCHE_HD inline float  log1p(float x) { return ::log1pf(x); }
TYCHE_HD inline double expm1(double x) { return ::expm1(x); }
TYCHE_HD inline float  expm1(float x) { return ::expm1f(x); }
TYCHE_HD inline double sqrt(double x) { return ::sqrt(x); }
TYCHE_HD inline float  sqrt(float x) { return ::sqrtf(x); }
TYCHE_HD inline double tanh(double x) { return ::tanh(x); }
TYCHE_HD inline float  tanh(float x) { return ::tanhf(x); }
TYCHE_HD inline double cos(double x) { return ::cos(x); }
TYCHE_HD inline float  cos(float x) { return ::cosf(x); }
TYCHE_HD inline double sin(double x) { return ::sin(x); }
TYCHE_HD inline float  sin(float x) { return ::sinf(x); }
TYCHE_HD inline double erf(double x) { return ::erf(x); }
TYCHE_HD inline float  erf(float x) { return ::erff(x); }
TYCHE_HD inline double erfc(double x) { return ::erfc(x); }
TYCHE_HD inline float  erfc(float x) { return ::erfcf(x); }
TYCHE_HD inline double lgamma(double x) { return ::lgamma(x); }
TYCHE_HD inline float  lgamma(float x) { return ::lgammaf(x); }
TYCHE_HD inline double abs(double x) { return ::fabs(x); }
TYCHE_HD inline float  abs(float x) { return ::fabsf(x); }
TYCHE_HD inline double pow(double x, double y) { return ::pow(x, y); }
TYCHE_HD inline float  pow(float x, float y) { return ::powf(x, y); }
TYCHE_HD inline double max(double x, double y) { return x > y ? x : y; }
TYCHE_HD inline float  max(float x, float y) { return x > y ? x : y; }
TYCHE_HD inline double select(bool c, double a, double b) { return c ? a : b; }
TYCHE_HD inline float  select(bool c, float a, float b) { return c ? a : b; }
TYCHE_HD inline double sign_of(double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }
TYCHE_HD inline float  sign_of(float x) { return x > 0 ? 1.0f : (x < 0 ? -1.0f : 0.0f); }
/// Stan's step(x): 0 for x < 0, else 1 (NaN gives 1, as Stan's).
TYCHE_HD inline double step(double x) { return x < 0 ? 0.0 : 1.0; }
TYCHE_HD inline float  step(float x) { return x < 0 ? 0.0f : 1.0f; }
// clang-format on

inline constexpr double pi = 3.14159265358979323846;
inline constexpr double inv_sqrt_two = 0.70710678118654752440;
inline constexpr double inv_sqrt_two_pi = 0.39894228040143267794;
inline constexpr double two_over_sqrt_pi = 1.12837916709551257390;
inline constexpr double sqrt_two = 1.41421356237309504880;
inline constexpr double log_two_sqrt_pi = 1.26551212348464539649;  // log(2√π)
inline constexpr double log_two_pi = 1.83787706640934548356;       // log(2π)

/// Digamma ψ(x) = d/dx log Γ(x): upward recurrence to x ≥ 10, then the asymptotic series
/// ψ(x) ~ log x − 1/(2x) − Σ B₂ₖ/(2k x²ᵏ) (Abramowitz & Stegun 6.3.18); reflection
/// ψ(1−x) − ψ(x) = π cot(πx) for x < 0. Relative error below 1e-14 away from the poles.
TYCHE_HD inline double digamma(double x) {
  double shift = 0.0;
  if (x <= 0.0) {
    if (x == ::floor(x)) return ::nan("");  // pole
    return digamma(1.0 - x) - pi / ::tan(pi * x);
  }
  while (x < 10.0) {
    shift -= 1.0 / x;
    x += 1.0;
  }
  const double r = 1.0 / (x * x);
  const double series =
      r * (1.0 / 12 -
           r * (1.0 / 120 -
                r * (1.0 / 252 - r * (1.0 / 240 - r * (1.0 / 132 - r * (691.0 / 32760))))));
  return shift + ::log(x) - 0.5 / x - series;
}
TYCHE_HD inline float digamma(float x) { return static_cast<float>(digamma(double(x))); }

/// Trigamma ψ₁(x) = d/dx ψ(x): recurrence ψ₁(x) = ψ₁(x+1) + 1/x² to x ≥ 10, then
/// ψ₁(x) ~ 1/x + 1/(2x²) + Σ B₂ₖ/x²ᵏ⁺¹ (A&S 6.4.12); reflection ψ₁(1−x) + ψ₁(x) = π²/sin²(πx).
TYCHE_HD inline double trigamma(double x) {
  double shift = 0.0;
  if (x <= 0.0) {
    if (x == ::floor(x)) return ::nan("");
    const double s = ::sin(pi * x);
    return -trigamma(1.0 - x) + pi * pi / (s * s);
  }
  while (x < 10.0) {
    shift += 1.0 / (x * x);
    x += 1.0;
  }
  const double r = 1.0 / (x * x);
  const double series =
      1.0 / x + 0.5 * r +
      r / x *
          (1.0 / 6 -
           r * (1.0 / 30 - r * (1.0 / 42 - r * (1.0 / 30 - r * (5.0 / 66 - r * (691.0 / 2730))))));
  return shift + series;
}
TYCHE_HD inline float trigamma(float x) { return static_cast<float>(trigamma(double(x))); }

/// f(z) = 1 / (√π e^{z²} erfc(z)) for z ≥ 5.6 by the continued fraction of A&S 7.1.14,
///   2 e^{z²} ∫_z^∞ e^{−t²} dt = 1/(z + (1/2)/(z + 1/(z + (3/2)/(z + 2/(z + …))))),
/// i.e. f(z) = z + (1/2)/(z + (2/2)/(z + (3/2)/(…))), evaluated bottom-up from 20 levels: for
/// z ≥ 5.6 it has converged to double precision by level 14 (checked against long double erfc).
TYCHE_HD inline double erfc_continued_fraction(double z) {
  double f = z;
  for (int k = 20; k >= 1; --k) f = z + 0.5 * k / f;
  return f;
}

/// log Φ(x), Φ the standard normal cdf (Stan's std_normal_lcdf, log_erfc up to scaling),
/// accurate on the whole line, where log(Phi(x)) underflows to −∞ below x ≈ −38:
///   x ≥ 0:       log1p(−erfc(x/√2)/2)   (1 − Φ(x) = erfc(x/√2)/2, so no cancellation near 0),
///   −8 ≤ x < 0:  log(erfc(−x/√2)/2),
///   x < −8:      −x²/2 − log(2√π) − log f(−x/√2), f the continued fraction above
///                (Φ(x) = erfc(z)/2 = e^{−z²}/(2√π f(z)), z = −x/√2 ≥ 5.66).
TYCHE_HD inline double log_Phi(double x) {
  if (x >= 0.0) return ::log1p(-0.5 * ::erfc(x * inv_sqrt_two));
  if (x >= -8.0) return ::log(0.5 * ::erfc(-x * inv_sqrt_two));
  return -0.5 * x * x - log_two_sqrt_pi - ::log(erfc_continued_fraction(-x * inv_sqrt_two));
}
TYCHE_HD inline float log_Phi(float x) { return static_cast<float>(log_Phi(double(x))); }

/// d/dx log Φ(x) = φ(x)/Φ(x) (the inverse Mills ratio at −x): φ(x)/Φ(x) from erfc for x ≥ −8,
/// and √2 f(−x/√2) below (from the same continued fraction as log_Phi), which tends to −x
/// where φ and Φ both underflow.
TYCHE_HD inline double phi_over_Phi(double x) {
  if (x >= -8.0) return inv_sqrt_two_pi * ::exp(-0.5 * x * x) / (0.5 * ::erfc(-x * inv_sqrt_two));
  return sqrt_two * erfc_continued_fraction(-x * inv_sqrt_two);
}
TYCHE_HD inline float phi_over_Phi(float x) { return static_cast<float>(phi_over_Phi(double(x))); }

/// log I₀(x), I₀ the modified Bessel function of the first kind of order 0 (Stan's
/// log_modified_bessel_first_kind(0, x)); even in x. Relative error below 1e-15 for x in
/// (1, 1e4) against long double std::cyl_bessel_i, and I₀ itself to 1e-15 below 1.
///   |x| ≤ 20: the power series I₀(x) = Σₖ (x²/4)ᵏ/(k!)² (A&S 9.6.12), as log1p of the terms
///             k ≥ 1 (exact for small x: log I₀(x) ≈ x²/4), at most ~30 terms;
///   |x| > 20: the asymptotic expansion I₀(x) ~ eˣ/√(2πx) Σₖ Πⱼ₌₁..ₖ (2j − 1)² / (k! (8x)ᵏ)
///             (A&S 9.7.1 with μ = 0), summed until a term is below 1e-17 of the sum (at most
///             ~26 terms at x = 20, where the smallest term is far below that), so
///             log I₀(x) = x − ½ log(2πx) + log Σ, with no overflow of eˣ.
TYCHE_HD inline double log_bessel_i0(double x) {
  x = ::fabs(x);
  if (!(x < 1e300)) return x;  // ∞ (and NaN): x − ½ log(2πx) would be ∞ − ∞
  if (x <= 20.0) {
    const double q = 0.25 * x * x;
    double term = 1.0, s = 0.0;
    for (int k = 1; k < 80; ++k) {
      term *= q / (double(k) * k);
      s += term;
      if (term <= 1e-17 * s) break;
    }
    return ::log1p(s);
  }
  const double e = 8.0 * x;
  double term = 1.0, s = 1.0;
  for (int k = 1; k < 80; ++k) {
    const double next = term * (2.0 * k - 1) * (2.0 * k - 1) / (k * e);
    if (next >= term) break;  // the asymptotic series has passed its smallest term
    term = next;
    s += term;
    if (term <= 1e-17 * s) break;
  }
  return x - 0.5 * (log_two_pi + ::log(x)) + ::log(s);
}
TYCHE_HD inline float log_bessel_i0(float x) { return static_cast<float>(log_bessel_i0(double(x))); }

/// d/dx log I₀(x) = I₁(x)/I₀(x) (odd in x), from the same two expansions: I₁(x) = (x/2) Σₖ
/// (x²/4)ᵏ/(k!(k+1)!) (A&S 9.6.10) for |x| ≤ 20, and for |x| > 20 the ratio of the asymptotic
/// series of I₁ and I₀ (A&S 9.7.1, μ = 4ν² = 4 and 0: the e^x/√(2πx) cancels), terms
///   I₁: (−1)ᵏ Πⱼ₌₁..ₖ (4 − (2j − 1)²) / (k! (8x)ᵏ) = 1 − 3/(8x) − 15/(2 (8x)²) − …
/// Relative error below 1e-14.
TYCHE_HD inline double bessel_i1_over_i0(double x) {
  const double ax = ::fabs(x);
  if (ax <= 20.0) {
    const double q = 0.25 * x * x;
    double t0 = 1.0, s0 = 1.0, t1 = 1.0, s1 = 1.0;
    for (int k = 1; k < 80; ++k) {
      t0 *= q / (double(k) * k);
      t1 *= q / (double(k) * (k + 1));
      s0 += t0;
      s1 += t1;
      if (t0 <= 1e-17 * s0 && t1 <= 1e-17 * s1) break;
    }
    return 0.5 * x * s1 / s0;
  }
  const double e = 8.0 * ax;
  double t0 = 1.0, s0 = 1.0, t1 = 1.0, s1 = 1.0;
  for (int k = 1; k < 80; ++k) {
    const double odd2 = (2.0 * k - 1) * (2.0 * k - 1);
    const double n0 = t0 * odd2 / (k * e);
    if (n0 >= t0) break;
    t0 = n0;
    t1 *= (odd2 - 4.0) / (k * e);  // (−1)·(4 − (2k − 1)²)
    s0 += t0;
    s1 += t1;
    if (t0 <= 1e-17 * s0 && ::fabs(t1) <= 1e-17 * s1) break;
  }
  return ::copysign(s1 / s0, x);
}
TYCHE_HD inline float bessel_i1_over_i0(float x) {
  return static_cast<float>(bessel_i1_over_i0(double(x)));
}

}  // namespace tyche::math
// ----- end tyche/scalar/math.hpp -----
// ----- begin tyche/scalar/traits.hpp -----
// tyche/scalar/traits.hpp — what the expression core needs to know about a scalar type T:
// its element type (double for a SIMD batch of doubles), its lane count, and how data (always
// stored as double) becomes a T. The SIMD backend (backends/simd/batch.hpp) specialises these
// traits for its batches; this header knows nothing of it.

#include <cstddef>
#include <type_traits>

namespace tyche {

/// Traits of a scalar type: element_type and lanes. Specialised for SIMD batches in
/// backends/simd/batch.hpp.
template <class T>
struct scalar_traits {
  static_assert(std::is_floating_point_v<T>,
                "tyche: a scalar type must be float, double or an xsimd::batch of them");
  using element_type = T;
  static constexpr std::size_t lanes = 1;
};

template <class T>
using element_type_t = typename scalar_traits<T>::element_type;

/// Converts a data value (double) to the scalar type T, broadcasting it to every lane.
template <class T>
TYCHE_HD TYCHE_INLINE T lift(double x) {
  return T(static_cast<element_type_t<T>>(x));
}

namespace detail {

/// Loads, stores and sums of the lanes of U, for loops that take several observations at
/// once (compile/evaluate.hpp): for a plain scalar, one element. Specialised for SIMD batches
/// in backends/simd/batch.hpp.
template <class U>
struct lane_ops {
  static constexpr std::size_t size = 1;
  TYCHE_HD TYCHE_INLINE static U load(const element_type_t<U>* p) { return *p; }
  TYCHE_HD TYCHE_INLINE static void store(element_type_t<U>* p, const U& v) { *p = v; }
  TYCHE_HD TYCHE_INLINE static element_type_t<U> sum(const U& v) { return v; }
};

/// The type a single chain's loops over observations evaluate with: with the SIMD backend, a
/// batch of doubles (one observation per lane); otherwise T itself (one observation at a time).
/// TYCHE_OBSERVATION_SIMD=0 turns the batches off.
template <class T>
struct observation_batch {
  using type = T;
};
template <class T>
using observation_batch_t = typename observation_batch<T>::type;

}  // namespace detail
}  // namespace tyche
// ----- end tyche/scalar/traits.hpp -----

#if defined(TYCHE_USE_XSIMD) && TYCHE_USE_XSIMD && !TYCHE_DEVICE_CODE && !defined(__CUDACC__)
#define TYCHE_HAS_XSIMD 1
// A debug build for AVX-512 with g++ (-O0 -march=native on an AVX-512 machine) failed inside
// <xsimd/xsimd.hpp> (issue 18): without __OPTIMIZE__, GCC 12's <avx512bwintrin.h> defines
// _mm512_mask_blend_epi8 and _mm512_mask_blend_epi16 as macros that C-cast their operands to
// __v64qi / __v32hi, and xsimd 8.1's select() for integer batches under AVX-512BW (reached from
// xsimd::log) passes them xsimd::batch objects, which a C cast cannot convert ("invalid cast
// from type 'const xsimd::batch<long int, xsimd::avx512bw>' to type '__v64qi'"). With
// optimisation GCC declares both as functions of __m512i, to which a batch converts; here the
// two macros become such functions (on the same builtins) for unoptimised builds.
#if defined(__GNUC__) && !defined(__clang__) && !defined(__OPTIMIZE__) && defined(__AVX512BW__)
#if defined(XSIMD_VERSION_MAJOR) && defined(_mm512_mask_blend_epi8)
#error "tyche: an unoptimised g++ build for AVX-512 needs <tyche/...> included before <xsimd/xsimd.hpp>: xsimd 8.1 read as included first hands its batches to GCC's -O0 macro _mm512_mask_blend_epi8, which cannot cast them (tyche/backends/simd/batch.hpp explains); include tyche first, or build with -O1 or more"
#endif
#include <immintrin.h>
#ifdef _mm512_mask_blend_epi8
#undef _mm512_mask_blend_epi8
inline __m512i _mm512_mask_blend_epi8(__mmask64 mask, __m512i if_clear, __m512i if_set) {
  return reinterpret_cast<__m512i>(__builtin_ia32_blendmb_512_mask(reinterpret_cast<__v64qi>(if_clear),
                                                                   reinterpret_cast<__v64qi>(if_set), mask));
}
#endif
#ifdef _mm512_mask_blend_epi16
#undef _mm512_mask_blend_epi16
inline __m512i _mm512_mask_blend_epi16(__mmask32 mask, __m512i if_clear, __m512i if_set) {
  return reinterpret_cast<__m512i>(__builtin_ia32_blendmw_512_mask(reinterpret_cast<__v32hi>(if_clear),
                                                                   reinterpret_cast<__v32hi>(if_set), mask));
}
#endif
#endif
#include <xsimd/xsimd.hpp>

#include <array>
#include <cstddef>
#include <math.h>

namespace tyche {

template <class E, class A>
struct scalar_traits<xsimd::batch<E, A>> {
  using element_type = E;
  static constexpr std::size_t lanes = xsimd::batch<E, A>::size;
};

namespace detail {

template <class E, class A>
struct lane_ops<xsimd::batch<E, A>> {
  using U = xsimd::batch<E, A>;
  static constexpr std::size_t size = U::size;
  TYCHE_INLINE static U load(const E* p) { return U::load_unaligned(p); }
  TYCHE_INLINE static void store(E* p, const U& v) { v.store_unaligned(p); }
  TYCHE_INLINE static E sum(const U& v) { return xsimd::hadd(v); }
};

#if !defined(TYCHE_OBSERVATION_SIMD) || TYCHE_OBSERVATION_SIMD
template <>
struct observation_batch<double> {
  using type = xsimd::batch<double>;
};
#endif

}  // namespace detail

namespace math {

// Functions xsimd provides for whole batches. exp, log, log1p and expm1 are inlined into the
// loops that call them (a call passes batches through memory, and keeps the loop from
// overlapping one batch's polynomial with the next one's loads).
template <class E, class A>
TYCHE_INLINE xsimd::batch<E, A> exp(const xsimd::batch<E, A>& x) { return xsimd::exp(x); }
template <class E, class A>
TYCHE_INLINE xsimd::batch<E, A> log(const xsimd::batch<E, A>& x) { return xsimd::log(x); }
template <class E, class A>
TYCHE_INLINE xsimd::batch<E, A> log1p(const xsimd::batch<E, A>& x) { return xsimd::log1p(x); }
template <class E, class A>
TYCHE_INLINE xsimd::batch<E, A> expm1(const xsimd::batch<E, A>& x) { return xsimd::expm1(x); }
template <class E, class A>
xsimd::batch<E, A> sqrt(const xsimd::batch<E, A>& x) { return xsimd::sqrt(x); }
template <class E, class A>
xsimd::batch<E, A> tanh(const xsimd::batch<E, A>& x) { return xsimd::tanh(x); }
template <class E, class A>
xsimd::batch<E, A> cos(const xsimd::batch<E, A>& x) { return xsimd::cos(x); }
template <class E, class A>
xsimd::batch<E, A> sin(const xsimd::batch<E, A>& x) { return xsimd::sin(x); }
template <class E, class A>
xsimd::batch<E, A> erf(const xsimd::batch<E, A>& x) { return xsimd::erf(x); }
template <class E, class A>
xsimd::batch<E, A> erfc(const xsimd::batch<E, A>& x) { return xsimd::erfc(x); }
template <class A>
xsimd::batch<double, A> lgamma(const xsimd::batch<double, A>& x) { return xsimd::lgamma(x); }
template <class E, class A>
xsimd::batch<E, A> abs(const xsimd::batch<E, A>& x) { return xsimd::abs(x); }
template <class E, class A>
xsimd::batch<E, A> pow(const xsimd::batch<E, A>& x, const xsimd::batch<E, A>& y) {
  return xsimd::pow(x, y);
}
template <class E, class A>
xsimd::batch<E, A> max(const xsimd::batch<E, A>& x, const xsimd::batch<E, A>& y) {
  return xsimd::max(x, y);
}
template <class E, class A>
xsimd::batch<E, A> select(const xsimd::batch_bool<E, A>& c, const xsimd::batch<E, A>& a,
                          const xsimd::batch<E, A>& b) {
  return xsimd::select(c, a, b);
}
template <class E, class A>
xsimd::batch<E, A> step(const xsimd::batch<E, A>& x) {
  using B = xsimd::batch<E, A>;
  return xsimd::select(x < B(E(0)), B(E(0)), B(E(1)));
}
template <class E, class A>
xsimd::batch<E, A> sign_of(const xsimd::batch<E, A>& x) {
  using B = xsimd::batch<E, A>;
  return xsimd::select(x > B(E(0)), B(E(1)), xsimd::select(x < B(E(0)), B(E(-1)), B(E(0))));
}

/// Applies a scalar function lane by lane, for what xsimd does not vectorise (digamma).
template <class F, class E, class A>
xsimd::batch<E, A> per_lane(F f, const xsimd::batch<E, A>& x) {
  alignas(A::alignment()) std::array<E, xsimd::batch<E, A>::size> lanes{};
  x.store_aligned(lanes.data());
  for (auto& v : lanes) v = f(v);
  return xsimd::batch<E, A>::load_aligned(lanes.data());
}

/// xsimd 8.1's lgamma for batch<float> returns wrong values when the lanes hold different
/// arguments (e.g. lanes {5.437, 0.827, 2.426, 7.524} give 339.8 for lgamma(5.437); tested in
/// tests/backends/simd_test.cpp), so float batches go lane by lane through lgammaf.
template <class A>
xsimd::batch<float, A> lgamma(const xsimd::batch<float, A>& x) {
  return per_lane([](float v) { return ::lgammaf(v); }, x);
}

/// Digamma and trigamma (scalar/math.hpp) lane by lane: xsimd has neither.
template <class E, class A>
xsimd::batch<E, A> digamma(const xsimd::batch<E, A>& x) {
  return per_lane([](E v) { return digamma(v); }, x);
}
template <class E, class A>
xsimd::batch<E, A> trigamma(const xsimd::batch<E, A>& x) {
  return per_lane([](E v) { return trigamma(v); }, x);
}

/// log Φ and its derivative φ/Φ, log I₀ and its derivative I₁/I₀ (scalar/math.hpp) lane by
/// lane: each has branches and loops that depend on the argument.
template <class E, class A>
xsimd::batch<E, A> log_Phi(const xsimd::batch<E, A>& x) {
  return per_lane([](E v) { return log_Phi(v); }, x);
}
template <class E, class A>
xsimd::batch<E, A> phi_over_Phi(const xsimd::batch<E, A>& x) {
  return per_lane([](E v) { return phi_over_Phi(v); }, x);
}
template <class E, class A>
xsimd::batch<E, A> log_bessel_i0(const xsimd::batch<E, A>& x) {
  return per_lane([](E v) { return log_bessel_i0(v); }, x);
}
template <class E, class A>
xsimd::batch<E, A> bessel_i1_over_i0(const xsimd::batch<E, A>& x) {
  return per_lane([](E v) { return bessel_i1_over_i0(v); }, x);
}

}  // namespace math
}  // namespace tyche

#else
#define TYCHE_HAS_XSIMD 0
#endif
// ----- end tyche/backends/simd/batch.hpp -----

namespace tyche::rules {

struct negate {
  static constexpr const char* name = "negate";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return -x; }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = lift<T>(-1.0);
    return -x;
  }
};

struct square {
  static constexpr const char* name = "square";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return x * x; }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = x + x;
    return x * x;
  }
};

struct inverse {
  static constexpr const char* name = "inverse";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return lift<T>(1.0) / x; }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    const T y = lift<T>(1.0) / x;
    dx = -(y * y);
    return y;
  }
};

struct sqrt {
  static constexpr const char* name = "sqrt";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::sqrt(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    const T y = math::sqrt(x);
    dx = lift<T>(0.5) / y;
    return y;
  }
};

struct abs {
  static constexpr const char* name = "abs";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::abs(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = math::sign_of(x);  // 0 at 0: the subgradient Stan uses
    return math::abs(x);
  }
};

/// Stan's step(x): 0 for x < 0, else 1; its derivative is 0 (everywhere but at 0, where it is
/// taken as 0 too).
struct step {
  static constexpr const char* name = "step";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::step(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = lift<T>(0.0);
    return math::step(x);
  }
};

/// x^c for a constant exponent c known when the model is built.
struct pow_constant {
  static constexpr const char* name = "pow";
  static constexpr bool has_payload = true;
  double exponent = 1.0;
  TYCHE_HD constexpr bool operator==(const pow_constant& other) const {
    return exponent == other.exponent;
  }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const {
    return math::pow(x, lift<T>(exponent));
  }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    const T c = lift<T>(exponent);
    // x⁰ = 1 has derivative 0 everywhere, also at x = 0 where 0 · 0⁻¹ would give NaN.
    dx = exponent == 0.0 ? lift<T>(0.0) : c * math::pow(x, c - lift<T>(1.0));
    return math::pow(x, c);
  }
};

struct add {
  static constexpr const char* name = "add";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b) const { return a + b; }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b, T& da, T& db) const {
    da = lift<T>(1.0);
    db = lift<T>(1.0);
    return a + b;
  }
};

struct subtract {
  static constexpr const char* name = "subtract";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b) const { return a - b; }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b, T& da, T& db) const {
    da = lift<T>(1.0);
    db = lift<T>(-1.0);
    return a - b;
  }
};

struct multiply {
  static constexpr const char* name = "multiply";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b) const { return a * b; }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b, T& da, T& db) const {
    da = b;
    db = a;
    return a * b;
  }
};

struct divide {
  static constexpr const char* name = "divide";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b) const { return a / b; }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b, T& da, T& db) const {
    const T inv = lift<T>(1.0) / b;
    const T y = a * inv;
    da = inv;
    db = -(y * inv);
    return y;
  }
};

/// a^b with both operands variable: d/da = b a^(b-1), d/db = a^b log a.
struct pow {
  static constexpr const char* name = "pow";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b) const {
    return math::pow(a, b);
  }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b, T& da, T& db) const {
    const T y = math::pow(a, b);
    da = b * math::pow(a, b - lift<T>(1.0));
    db = y * math::log(a);
    return y;
  }
};

}  // namespace tyche::rules
// ----- end tyche/autodiff/arithmetic.hpp -----
// ----- begin tyche/autodiff/exp_log.hpp -----
// tyche/autodiff/exp_log.hpp — value and derivative rules for the exponential family of
// functions: exp, log, log1p, expm1, log1p_exp (softplus), log_add_exp.

namespace tyche::rules {

struct exp {
  static constexpr const char* name = "exp";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::exp(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    const T y = math::exp(x);
    dx = y;
    return y;
  }
};

struct log {
  static constexpr const char* name = "log";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::log(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = lift<T>(1.0) / x;
    return math::log(x);
  }
};

struct log1p {
  static constexpr const char* name = "log1p";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::log1p(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = lift<T>(1.0) / (lift<T>(1.0) + x);
    return math::log1p(x);
  }
};

struct expm1 {
  static constexpr const char* name = "expm1";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::expm1(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    const T y = math::expm1(x);
    dx = y + lift<T>(1.0);
    return y;
  }
};

/// log(1 + eˣ) computed as max(x, 0) + log1p(e^−|x|), which neither overflows nor loses
/// precision; its derivative is the logistic function, from the same e^−|x|.
struct log1p_exp {
  static constexpr const char* name = "log1p_exp";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const {
    const T zero = lift<T>(0.0);
    return math::max(x, zero) + math::log1p(math::exp(-math::abs(x)));
  }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    const T zero = lift<T>(0.0);
    const T one = lift<T>(1.0);
    const T e = math::exp(-math::abs(x));
    const T r = one / (one + e);
    dx = math::select(x >= zero, r, e * r);
    return math::max(x, zero) + math::log1p(e);
  }
};

/// log(eᵃ + eᵇ) = max(a, b) + log1p(e^−|a − b|): one exp and one log1p, never overflowing; one
/// operand −∞ gives the other exactly. ∂/∂a = σ(a − b), ∂/∂b = 1 − σ(a − b).
struct log_add_exp {
  static constexpr const char* name = "log_add_exp";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b) const {
    return math::max(a, b) + math::log1p(math::exp(-math::abs(a - b)));
  }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b, T& da, T& db) const {
    const T one = lift<T>(1.0);
    const T d = a - b;
    const T e = math::exp(-math::abs(d));
    const T r = one / (one + e);
    da = math::select(d >= lift<T>(0.0), r, e * r);
    db = one - da;
    return math::max(a, b) + math::log1p(e);
  }
};

/// y·a − eᵃ, the part of the Poisson log density with log rate a that depends on a (poisson_log):
/// one node, so that a vector a (a linear predictor) is computed once per element. ∂/∂y = a,
/// ∂/∂a = y − eᵃ.
struct poisson_log_term {
  static constexpr const char* name = "poisson_log_term";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& y, const T& a) const {
    return y * a - math::exp(a);
  }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& y, const T& a, T& dy, T& da) const {
    const T e = math::exp(a);
    dy = a;
    da = y - e;
    return y * a - e;
  }
};

/// y·a − log(1 + eᵃ) = y log σ(a) + (1 − y) log(1 − σ(a)), the Bernoulli log density with
/// logit a (bernoulli_logit) as one node: one softplus per element, a vector a computed once.
/// ∂/∂y = a, ∂/∂a = y − σ(a).
struct bernoulli_logit_term {
  static constexpr const char* name = "bernoulli_logit_term";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& y, const T& a) const {
    return y * a - log1p_exp{}.value(a);
  }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& y, const T& a, T& dy, T& da) const {
    T sigma;
    const T softplus = log1p_exp{}.value(a, sigma);
    dy = a;
    da = y - sigma;
    return y * a - softplus;
  }
};

}  // namespace tyche::rules
// ----- end tyche/autodiff/exp_log.hpp -----
// ----- begin tyche/autodiff/logistic.hpp -----
// tyche/autodiff/logistic.hpp — value and derivative rules for the sigmoid family: logistic
// (inverse logit), log_logistic (log inv-logit), log1m_logistic (log(1 − inv-logit)), tanh.
// All are computed from e^−|x| so that no intermediate overflows.

namespace tyche::rules {

struct logistic {
  static constexpr const char* name = "logistic";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const {
    const T one = lift<T>(1.0);
    const T e = math::exp(-math::abs(x));
    const T r = one / (one + e);
    return math::select(x >= lift<T>(0.0), r, e * r);
  }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    const T one = lift<T>(1.0);
    const T e = math::exp(-math::abs(x));
    const T r = one / (one + e);
    dx = e * r * r;  // σ(x) σ(−x), without cancellation
    return math::select(x >= lift<T>(0.0), r, e * r);
  }
};

/// log σ(x) = −log(1 + e^−x).
struct log_logistic {
  static constexpr const char* name = "log_logistic";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const {
    const T zero = lift<T>(0.0);
    return math::select(x >= zero, zero, x) - math::log1p(math::exp(-math::abs(x)));
  }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    const T zero = lift<T>(0.0);
    const T one = lift<T>(1.0);
    const T e = math::exp(-math::abs(x));
    const T r = one / (one + e);
    dx = math::select(x >= zero, e * r, r);  // σ(−x)
    return math::select(x >= zero, zero, x) - math::log1p(e);
  }
};

/// log(1 − σ(x)) = log σ(−x) = −log(1 + eˣ).
struct log1m_logistic {
  static constexpr const char* name = "log1m_logistic";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const {
    const T zero = lift<T>(0.0);
    return math::select(x >= zero, -x, zero) - math::log1p(math::exp(-math::abs(x)));
  }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    const T zero = lift<T>(0.0);
    const T one = lift<T>(1.0);
    const T e = math::exp(-math::abs(x));
    const T r = one / (one + e);
    dx = -math::select(x >= zero, r, e * r);  // −σ(x)
    return math::select(x >= zero, -x, zero) - math::log1p(e);
  }
};

struct tanh {
  static constexpr const char* name = "tanh";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::tanh(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    const T y = math::tanh(x);
    dx = lift<T>(1.0) - y * y;
    return y;
  }
};

}  // namespace tyche::rules
// ----- end tyche/autodiff/logistic.hpp -----
// ----- begin tyche/autodiff/matrix_ops.hpp -----
// tyche/autodiff/matrix_ops.hpp — value and vector–Jacobian rules of K × K matrices as vector_op
// nodes: a matrix is a vector of its K² entries in row-major order (entry (i, j) at i·K + j,
// 0-based), computed whole by an op with a hand-written vector–Jacobian product (the contract
// of an op: autodiff/vector_ops.hpp; docs/design/vector-ops.md). These are the pieces of the
// matrix transforms (transforms/matrix.hpp), lkj_corr_cholesky and multi_normal /
// multi_normal_cholesky with a matrix that depends on parameters:
//
//   corr_cholesky_map      K(K−1)/2 unconstrained values → Cholesky factor of a correlation matrix
//   cov_cholesky_map       K(K+1)/2 unconstrained values → Cholesky factor with positive diagonal
//   cpc_log_jacobian_map   the log-Jacobian of the two correlation transforms (one value)
//   diagonal_sum_map       Σᵢ (w₀ + s·i) f(diagonal entry i), f = identity or log (one value)
//   multiply_lower_tri_self_transpose_map   L Lᵀ
//   cholesky_decompose_map the lower Cholesky factor of a symmetric positive-definite matrix
//   diag_pre_multiply_map  diag(v) M
//   cholesky_residual_map  L⁻¹(yₙ − μₙ) for N rows yₙ (multi_normal_cholesky)
//   lkj_log_normaliser_map log c_K(η), the LKJ normalising constant (one value)
//   data_matvec_map        X v for a data matrix X and a vector expression v
//   matvec_map             M v for a K × K matrix M given as an expression
//   rows_dot_product_map   the dot products of the rows (or columns) of two matrices
//
// The functions users call with such K²-vectors are in operations/matrices.hpp.
// ----- begin tyche/autodiff/vector_ops.hpp -----
// tyche/autodiff/vector_ops.hpp — value and vector–Jacobian rules of the vectors that are not
// elementwise, whose every value depends on whole operands: the ordered transform, a running
// sum, a stack of operands, copies of a scalar, a contiguous segment, a linear recurrence, a
// gather through data indices, a triangular solve, a Cholesky product. Such an op is the rule of a vector_op node (core/nodes.hpp): the
// evaluator (compile/evaluate.hpp) materialises the operands, calls the op's forward step into
// a buffer of the workspace and, in the reverse pass, the op's vector–Jacobian product. The
// functions that make these nodes are in operations/vectors.hpp. See docs/design/vector-ops.md.
//
// An op is a small value type with
//   name, has_payload (and operator== when it has one), extent<Cs...> (the static size of the
//   result, or dynamic_extent),
//   forward(m, out, in, in_n):           out[0 .. m) from the operands in[j][0 .. in_n[j]),
//   reverse(m, out, adj, in, in_n, in_adj): in_adj[j][·] += ∂(Σ adj·out)/∂in[j][·] (in_adj is
//                                           zero on entry),
// templated on the scalar type T (double, float, SIMD batches, …).

#include <cstddef>
#include <memory>
#include <vector>

namespace tyche {

namespace detail {
/// The lower Cholesky factor l (m × m, row major, zeros above the diagonal) of the matrix whose
/// lower triangle c holds (row major; the part above the diagonal is not read): the unblocked
/// Cholesky–Banachiewicz loops. A matrix that is not positive definite gives NaN.
template <class T>
TYCHE_HD void cholesky_forward(std::size_t m, const T* c, T* l) {
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j <= i; ++j) {
      T s = c[i * m + j];
      for (std::size_t p = 0; p < j; ++p) s = s - l[i * m + p] * l[j * m + p];
      l[i * m + j] = i == j ? math::sqrt(s) : s / l[j * m + j];
    }
    for (std::size_t j = i + 1; j < m; ++j) l[i * m + j] = lift<T>(0.0);
  }
}
/// Reverse mode of cholesky_forward: from L̄ (lb, lower part; overwritten) adds C̄ to the lower
/// triangle of c_adj, running the loops in their exact reverse order (with s the pivot quantity
/// of entry (i, j): s̄ = L̄ᵢᵢ / (2 Lᵢᵢ) on the diagonal, s̄ = L̄ᵢⱼ / Lⱼⱼ and L̄ⱼⱼ −= L̄ᵢⱼ Lᵢⱼ / Lⱼⱼ
/// below it; C̄ᵢⱼ += s̄; L̄ᵢₚ −= s̄ Lⱼₚ and L̄ⱼₚ −= s̄ Lᵢₚ for p < j). Murray, "Differentiation of
/// the Cholesky decomposition", 2016, unblocked algorithm. O(m³).
template <class T>
TYCHE_HD void cholesky_reverse(std::size_t m, const T* l, T* lb, T* c_adj) {
  for (std::size_t i = m; i-- > 0;) {
    for (std::size_t j = i + 1; j-- > 0;) {
      T sb;
      if (i == j) {
        sb = lb[i * m + i] / (lift<T>(2.0) * l[i * m + i]);
      } else {
        sb = lb[i * m + j] / l[j * m + j];
        lb[j * m + j] = lb[j * m + j] - lb[i * m + j] * l[i * m + j] / l[j * m + j];
      }
      c_adj[i * m + j] += sb;
      for (std::size_t p = 0; p < j; ++p) {
        lb[i * m + p] = lb[i * m + p] - sb * l[j * m + p];
        lb[j * m + p] = lb[j * m + p] - sb * l[i * m + p];
      }
    }
  }
}
}  // namespace detail

namespace ops {

/// The ordered transform's map (Stan's): x₀ = u₀ (positive_ordered: x₀ = e^u₀),
/// xₖ = xₖ₋₁ + e^uₖ. Reverse: with Gₖ = Σ_{j ≥ k} adjⱼ, ∂/∂uₖ = Gₖ e^uₖ (k ≥ 1, or k = 0 when
/// positive), ∂/∂u₀ = G₀ otherwise. e^uₖ is recomputed, not taken as xₖ − xₖ₋₁, which cancels.
template <bool Positive>
struct ordered_map {
  static constexpr const char* name = Positive ? "positive_ordered" : "ordered";
  static constexpr bool has_payload = false;
  static constexpr bool positive_result = Positive;  // the values' support (interval/support.hpp)
  template <class U>
  static constexpr std::size_t extent = extent_v<U>;
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t*) const {
    const T* u = in[0];
    if (m == 0) return;
    T acc = Positive ? math::exp(u[0]) : u[0];
    out[0] = acc;
    for (std::size_t k = 1; k < m; ++k) {
      acc = acc + math::exp(u[k]);
      out[k] = acc;
    }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const* in,
                        const std::size_t*, T* const* in_adj) const {
    const T* u = in[0];
    T g = lift<T>(0.0);
    for (std::size_t k = m; k-- > 0;) {
      g = g + adj[k];
      in_adj[0][k] += (k > 0 || Positive) ? g * math::exp(u[k]) : g;
    }
  }
};

/// xₖ = Σ_{j ≤ k} aⱼ. Reverse: ∂/∂aₖ = Σ_{j ≥ k} adjⱼ.
struct cumulative_sum_map {
  static constexpr const char* name = "cumulative_sum";
  static constexpr bool has_payload = false;
  template <class A>
  static constexpr std::size_t extent = extent_v<A>;
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t*) const {
    T acc = lift<T>(0.0);
    for (std::size_t k = 0; k < m; ++k) out[k] = acc = acc + in[0][k];
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const*, const std::size_t*,
                        T* const* in_adj) const {
    T g = lift<T>(0.0);
    for (std::size_t k = m; k-- > 0;) in_adj[0][k] += g = g + adj[k];
  }
};

/// The operands (scalars and vectors) one after another: append_row(a, b) and to_vector(x...)
/// (operations/vectors.hpp), and the coefficient vector w of a residual sum of squares
/// Σ(y − s − Zw)² whose predictor mixes scalar coefficients and a vector parameter
/// (compile/reduce_sum.hpp). Reverse: each adjoint goes back to its operand.
struct stack_map {
  static constexpr const char* name = "stack";
  static constexpr bool has_payload = false;
  template <class... Cs>
  static constexpr std::size_t extent =
      ((extent_v<Cs> != dynamic_extent) && ...) ? (std::size_t{0} + ... + extent_v<Cs>) : dynamic_extent;
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t* in_n) const {
    for (std::size_t j = 0, k = 0; k < m; ++j)
      for (std::size_t i = 0; i < in_n[j]; ++i) out[k++] = in[j][i];
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const*, const std::size_t* in_n,
                        T* const* in_adj) const {
    for (std::size_t j = 0, k = 0; k < m; ++j)
      for (std::size_t i = 0; i < in_n[j]; ++i) in_adj[j][i] += adj[k++];
  }
};

/// m copies of one scalar operand (rep_vector(x, n)). Reverse: ∂/∂x = Σᵢ adjᵢ. N is the static
/// size or dynamic_extent; a run-time size is part of the node's value (has_payload), so that two
/// rep_vectors of one x but of different sizes are not taken for the same value.
template <std::size_t N = dynamic_extent>
struct rep_map {
  static constexpr const char* name = "rep_vector";
  static constexpr bool has_payload = N == dynamic_extent;
  template <class X>
  static constexpr std::size_t extent = N;
  bool operator==(const rep_map&) const = default;
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t*) const {
    for (std::size_t i = 0; i < m; ++i) out[i] = in[0][0];
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const*, const std::size_t*,
                        T* const* in_adj) const {
    T acc = lift<T>(0.0);
    for (std::size_t i = 0; i < m; ++i) acc = acc + adj[i];
    in_adj[0][0] += acc;
  }
};

/// The m elements of the operand from position offset (0-based) on: head, tail and segment of a
/// vector that is not elementwise over leaves (a cumulative sum, a matvec, a parameter vector).
/// Reverse: each adjoint goes back to its position. N is the static size or dynamic_extent.
template <std::size_t N = dynamic_extent>
struct segment_map {
  static constexpr const char* name = "segment";
  static constexpr bool has_payload = true;
  std::size_t offset = 0;
  template <class V>
  static constexpr std::size_t extent = N;
  bool operator==(const segment_map&) const = default;
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t*) const {
    for (std::size_t i = 0; i < m; ++i) out[i] = in[0][offset + i];
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const*, const std::size_t*,
                        T* const* in_adj) const {
    for (std::size_t i = 0; i < m; ++i) in_adj[0][offset + i] += adj[i];
  }
};

/// sₜ = aₜ + bₜ sₜ₋₁ for t = 0 … m−1, with s₋₁ = s0; b is a scalar or a vector of size m.
/// Reverse, with λₜ the adjoint of sₜ (λₜ = adjₜ + bₜ₊₁ λₜ₊₁): ∂/∂aₜ = λₜ, ∂/∂bₜ = λₜ sₜ₋₁,
/// ∂/∂s0 = b₀ λ₀.
struct linear_recurrence_map {
  static constexpr const char* name = "linear_recurrence";
  static constexpr bool has_payload = false;
  template <class A, class B, class S0>
  static constexpr std::size_t extent = extent_v<A>;
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t* in_n) const {
    const T* a = in[0];
    const T* b = in[1];
    const bool b_vector = in_n[1] > 1;
    T s = in[2][0];
    for (std::size_t t = 0; t < m; ++t) out[t] = s = a[t] + b[b_vector ? t : 0] * s;
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T* out, const T* adj, const T* const* in,
                        const std::size_t* in_n, T* const* in_adj) const {
    const T* b = in[1];
    const bool b_vector = in_n[1] > 1;
    T lambda = lift<T>(0.0);
    for (std::size_t t = m; t-- > 0;) {
      lambda = adj[t] + (t + 1 < m ? b[b_vector ? t + 1 : 0] * lambda : lift<T>(0.0));
      in_adj[0][t] += lambda;
      const T previous = t > 0 ? out[t - 1] : in[2][0];
      in_adj[1][b_vector ? t : 0] += lambda * previous;
    }
    if (m > 0) in_adj[2][0] += b[0] * lambda;
  }
};

/// xᵢ = v[idx[i] − Shift] (idx checked when made). Reverse: ∂/∂v[idx[i] − Shift] += adjᵢ.
template <class Index = int, std::size_t Shift = 0>
struct gather_map {
  static constexpr const char* name = "gather";
  static constexpr bool has_payload = true;
  const Index* idx = nullptr;
  std::size_t n = 0;
  template <class V>
  static constexpr std::size_t extent = dynamic_extent;
  bool operator==(const gather_map&) const = default;
  TYCHE_HD std::size_t position(std::size_t i) const { return static_cast<std::size_t>(idx[i]) - Shift; }
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t*) const {
    for (std::size_t i = 0; i < m; ++i) out[i] = in[0][position(i)];
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const*, const std::size_t*,
                        T* const* in_adj) const {
    for (std::size_t i = 0; i < m; ++i) in_adj[0][position(i)] += adj[i];
  }
};

/// z = L⁻¹ r for a lower-triangular K × K data matrix L (row-major; the part above the
/// diagonal is not read): forward substitution zᵢ = (rᵢ − Σ_{j<i} Lᵢⱼ zⱼ) / Lᵢᵢ. Reverse:
/// ∂/∂r = L⁻ᵀ adj, by back substitution wᵢ = (adjᵢ − Σ_{j>i} Lⱼᵢ wⱼ) / Lᵢᵢ. owner keeps L
/// alive when the op computed it (multi_normal's Cholesky factor); it is null for a user's L.
struct lower_triangular_solve_map {
  static constexpr const char* name = "lower_triangular_solve";
  static constexpr bool has_payload = true;
  const double* l = nullptr;
  std::size_t k = 0;
  std::shared_ptr<const std::vector<double>> owner;
  template <class R>
  static constexpr std::size_t extent = extent_v<R>;
  bool operator==(const lower_triangular_solve_map& o) const { return l == o.l && k == o.k; }
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t*) const {
    const T* r = in[0];
    for (std::size_t i = 0; i < m; ++i) {
      T acc = r[i];
      for (std::size_t j = 0; j < i; ++j) acc = acc - lift<T>(l[i * k + j]) * out[j];
      out[i] = acc * lift<T>(1.0 / l[i * k + i]);
    }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const*, const std::size_t*,
                        T* const* in_adj) const {
    T* w = in_adj[0];  // zero on entry: w is built in place, from the last element down
    for (std::size_t i = m; i-- > 0;) {
      T acc = adj[i];
      for (std::size_t j = i + 1; j < m; ++j) acc = acc - lift<T>(l[j * k + i]) * w[j];
      w[i] = acc * lift<T>(1.0 / l[i * k + i]);
    }
  }
};

/// f = L z with L the lower Cholesky factor of a K × K matrix C given as its K² entries (row
/// major; only the lower triangle is read) — Stan's cholesky_decompose(C) * z, for the
/// non-centred latent Gaussian process f ~ multi_normal(0, C). Scratch: L (K²) and its adjoint
/// (K²). Reverse: L̄ = f̄ zᵀ (lower part), z̄ = Lᵀ f̄, then C̄ by reverse-mode of the Cholesky
/// loops (detail::cholesky_reverse). O(K³) each way. A C that is not positive definite gives
/// NaN (a rejected point for the sampler).
struct cholesky_multiply_map {
  static constexpr const char* name = "cholesky_multiply";
  static constexpr bool has_payload = false;
  template <class C, class Z>
  static constexpr std::size_t extent = extent_v<Z>;
  static std::size_t scratch_size(std::size_t m, const std::size_t*) { return 2 * m * m; }
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t*, T* l) const {
    const T* z = in[1];
    detail::cholesky_forward(m, in[0], l);
    for (std::size_t i = 0; i < m; ++i) {
      T acc = lift<T>(0.0);
      for (std::size_t j = 0; j <= i; ++j) acc = acc + l[i * m + j] * z[j];
      out[i] = acc;
    }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj, T* l) const {
    const T* z = in[1];
    T* c_adj = in_adj[0];
    T* z_adj = in_adj[1];
    T* lb = l + m * m;  // L̄
    for (std::size_t i = 0; i < m; ++i) {
      for (std::size_t j = 0; j <= i; ++j) {
        lb[i * m + j] = adj[i] * z[j];
        z_adj[j] += l[i * m + j] * adj[i];
      }
    }
    detail::cholesky_reverse(m, l, lb, c_adj);
  }
};

}  // namespace ops

}  // namespace tyche
// ----- end tyche/autodiff/vector_ops.hpp -----

#include <cstddef>

namespace tyche {

namespace detail {
/// sech y = 1 / cosh y, 0 (not NaN) when cosh overflows.
template <class T>
TYCHE_HD T sech(const T& y) {
  return lift<T>(2.0) / (math::exp(y) + math::exp(-y));
}
/// log sech² y = −2 log cosh y, without overflow: 2 log 2 − 2|y| − 2 log1p(e^{−2|y|}).
template <class T>
TYCHE_HD T log_sech_squared(const T& y) {
  const T a = math::abs(y);
  return lift<T>(1.38629436111989061883) - lift<T>(2.0) * a -
         lift<T>(2.0) * math::log1p(math::exp(lift<T>(-2.0) * a));
}
}  // namespace detail

namespace ops {

/// The Cholesky factor L of a K × K correlation matrix from K(K−1)/2 unconstrained values
/// (Stan's cholesky_factor_corr): u fills the strictly lower triangle row by row, zᵢⱼ = tanh uᵢⱼ
/// are canonical partial correlations, and row i is
///   Lᵢⱼ = zᵢⱼ sᵢⱼ (j < i),  Lᵢᵢ = sᵢᵢ,  sᵢⱼ = Π_{j'<j} sech uᵢⱼ'  (= √(1 − Σ_{j'<j} Lᵢⱼ'²)),
/// so every row has norm 1 and a positive diagonal; zeros above the diagonal. Reverse (row i):
///   ∂/∂uᵢⱼ = L̄ᵢⱼ sech²(uᵢⱼ) sᵢⱼ − tanh(uᵢⱼ) Σ_{m=j+1..i} L̄ᵢₘ Lᵢₘ.
struct corr_cholesky_map {
  static constexpr const char* name = "corr_cholesky";
  static constexpr bool has_payload = true;
  std::size_t k = 0;
  template <class U>
  static constexpr std::size_t extent = dynamic_extent;
  bool operator==(const corr_cholesky_map&) const = default;
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*) const {
    const T* u = in[0];
    std::size_t p = 0;
    for (std::size_t i = 0; i < k; ++i) {
      T s = lift<T>(1.0);
      for (std::size_t j = 0; j < i; ++j, ++p) {
        out[i * k + j] = math::tanh(u[p]) * s;
        s = s * detail::sech(u[p]);
      }
      out[i * k + i] = s;
      for (std::size_t j = i + 1; j < k; ++j) out[i * k + j] = lift<T>(0.0);
    }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T* out, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj) const {
    const T* u = in[0];
    T* ub = in_adj[0];
    std::size_t row = 0;  // position of uᵢ₀
    for (std::size_t i = 1; i < k; row += i, ++i) {
      T s = lift<T>(1.0);
      for (std::size_t j = 0; j < i; ++j) {  // the direct term L̄ᵢⱼ sech² sᵢⱼ
        const T c = detail::sech(u[row + j]);
        ub[row + j] += adj[i * k + j] * c * c * s;
        s = s * c;
      }
      T g = adj[i * k + i] * out[i * k + i];  // Σ_{m > j} L̄ᵢₘ Lᵢₘ
      for (std::size_t j = i; j-- > 0;) {
        ub[row + j] += -math::tanh(u[row + j]) * g;
        g = g + adj[i * k + j] * out[i * k + j];
      }
    }
  }
};

/// The Cholesky factor L of a K × K covariance matrix from K(K+1)/2 unconstrained values
/// (Stan's cholesky_factor_cov, square): u fills the lower triangle row by row (row i: Lᵢ₀ …
/// Lᵢᵢ), the diagonal exponentiated: Lᵢⱼ = uₚ (j < i), Lᵢᵢ = e^uₚ; zeros above.
struct cov_cholesky_map {
  static constexpr const char* name = "cov_cholesky";
  static constexpr bool has_payload = true;
  std::size_t k = 0;
  template <class U>
  static constexpr std::size_t extent = dynamic_extent;
  bool operator==(const cov_cholesky_map&) const = default;
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*) const {
    const T* u = in[0];
    std::size_t p = 0;
    for (std::size_t i = 0; i < k; ++i) {
      for (std::size_t j = 0; j < i; ++j) out[i * k + j] = u[p++];
      out[i * k + i] = math::exp(u[p++]);
      for (std::size_t j = i + 1; j < k; ++j) out[i * k + j] = lift<T>(0.0);
    }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T* out, const T* adj, const T* const*, const std::size_t*,
                        T* const* in_adj) const {
    std::size_t p = 0;
    for (std::size_t i = 0; i < k; ++i) {
      for (std::size_t j = 0; j < i; ++j) in_adj[0][p++] += adj[i * k + j];
      in_adj[0][p++] += adj[i * k + i] * out[i * k + i];
    }
  }
};

/// The log-Jacobian of the correlation transforms, as a function of their K(K−1)/2
/// unconstrained values u (position (i, j), j < i, row by row): Σ wᵢⱼ log sech² uᵢⱼ, where
/// log sech² u = log(1 − tanh² u) is tanh's and
///   cholesky_factor_corr (CorrMatrix = false): wᵢⱼ = 1 + (i − 1 − j)/2  (the map z → L has
///     ∂Lᵢⱼ/∂zᵢⱼ = sᵢⱼ, and log sᵢⱼ = ½ Σ_{j'<j} log(1 − zᵢⱼ'²));
///   corr_matrix (CorrMatrix = true): wᵢⱼ = 1 + (K − 2 − j)/2  (the Jacobian of canonical
///     partial correlations → correlation matrix, Lewandowski, Kurowicka & Joe 2009, eq. 11 of
///     Joe 2006; Stan's reference manual, "Correlation matrices").
/// One value. Reverse: ∂/∂uᵢⱼ = −2 wᵢⱼ tanh uᵢⱼ.
template <bool CorrMatrix>
struct cpc_log_jacobian_map {
  static constexpr const char* name = CorrMatrix ? "corr_matrix_log_jacobian" : "corr_cholesky_log_jacobian";
  static constexpr bool has_payload = true;
  std::size_t k = 0;
  template <class U>
  static constexpr std::size_t extent = 1;
  bool operator==(const cpc_log_jacobian_map&) const = default;
  TYCHE_HD double weight(std::size_t i, std::size_t j) const {
    return CorrMatrix ? 1.0 + 0.5 * (double(k) - 2.0 - double(j)) : 1.0 + 0.5 * (double(i) - 1.0 - double(j));
  }
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*) const {
    T acc = lift<T>(0.0);
    std::size_t p = 0;
    for (std::size_t i = 1; i < k; ++i)
      for (std::size_t j = 0; j < i; ++j, ++p) acc = acc + lift<T>(weight(i, j)) * detail::log_sech_squared(in[0][p]);
    out[0] = acc;
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj) const {
    std::size_t p = 0;
    for (std::size_t i = 1; i < k; ++i)
      for (std::size_t j = 0; j < i; ++j, ++p)
        in_adj[0][p] += lift<T>(-2.0 * weight(i, j)) * math::tanh(in[0][p]) * adj[0];
  }
};

/// Σᵢ (w0 + step·i) f(xᵢᵢ) over the K diagonal entries of x, with f the identity or log (Log).
/// x is a full K × K matrix (K² values, row major) or, when Packed, the K(K+1)/2 values of a
/// lower triangle row by row (the unconstrained values of cov_cholesky_map, whose diagonal
/// entry i is at i(i+1)/2 + i). One value. multi_normal_cholesky's Σ log Lᵢᵢ, lkj's
/// Σ (K − k + 2η − 2) log Lₖₖ, and the log-Jacobians of cholesky_factor_cov and cov_matrix.
template <bool Packed, bool Log>
struct diagonal_sum_map {
  static constexpr const char* name = Log ? "diagonal_log_sum" : "diagonal_sum";
  static constexpr bool has_payload = true;
  std::size_t k = 0;
  double w0 = 1.0;
  double step = 0.0;
  template <class X>
  static constexpr std::size_t extent = 1;
  bool operator==(const diagonal_sum_map&) const = default;
  TYCHE_HD std::size_t position(std::size_t i) const { return Packed ? i * (i + 1) / 2 + i : i * k + i; }
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*) const {
    T acc = lift<T>(0.0);
    for (std::size_t i = 0; i < k; ++i) {
      const double w = w0 + step * double(i);
      if (w == 0.0) continue;  // 0 · log 0 is 0 here, as in the formulas these sums come from
      const T x = in[0][position(i)];
      acc = acc + lift<T>(w) * (Log ? math::log(x) : x);
    }
    out[0] = acc;
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj) const {
    for (std::size_t i = 0; i < k; ++i) {
      const double w = w0 + step * double(i);
      if (w == 0.0) continue;
      const std::size_t p = position(i);
      in_adj[0][p] += Log ? lift<T>(w) * adj[0] / in[0][p] : lift<T>(w) * adj[0];
    }
  }
};

/// S = L Lᵀ for a lower-triangular K × K L (K² values; the part above the diagonal is not
/// read): Sᵢⱼ = Σ_{p ≤ min(i, j)} Lᵢₚ Lⱼₚ, all K² entries. Reverse: L̄ᵢₚ = Σ_{j ≥ p} (S̄ᵢⱼ + S̄ⱼᵢ) Lⱼₚ
/// for p ≤ i. O(K³).
struct multiply_lower_tri_self_transpose_map {
  static constexpr const char* name = "multiply_lower_tri_self_transpose";
  static constexpr bool has_payload = true;
  std::size_t k = 0;
  template <class L>
  static constexpr std::size_t extent = extent_v<L>;
  bool operator==(const multiply_lower_tri_self_transpose_map&) const = default;
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*) const {
    const T* l = in[0];
    for (std::size_t i = 0; i < k; ++i) {
      for (std::size_t j = 0; j <= i; ++j) {
        T acc = lift<T>(0.0);
        for (std::size_t p = 0; p <= j; ++p) acc = acc + l[i * k + p] * l[j * k + p];
        out[i * k + j] = acc;
        out[j * k + i] = acc;
      }
    }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj) const {
    const T* l = in[0];
    for (std::size_t i = 0; i < k; ++i) {
      for (std::size_t p = 0; p <= i; ++p) {
        T acc = lift<T>(0.0);
        for (std::size_t j = p; j < k; ++j) acc = acc + (adj[i * k + j] + adj[j * k + i]) * l[j * k + p];
        in_adj[0][i * k + p] += acc;
      }
    }
  }
};

/// The lower Cholesky factor L of a symmetric positive-definite K × K matrix C (K² values; only
/// the lower triangle is read, as Stan's cholesky_decompose does after checking symmetry):
/// detail::cholesky_forward, zeros above the diagonal; NaN when C is not positive definite (a
/// rejected point). Reverse: detail::cholesky_reverse on a copy of L̄ (scratch, K²). O(K³).
struct cholesky_decompose_map {
  static constexpr const char* name = "cholesky_decompose";
  static constexpr bool has_payload = true;
  std::size_t k = 0;
  template <class C>
  static constexpr std::size_t extent = extent_v<C>;
  bool operator==(const cholesky_decompose_map&) const = default;
  std::size_t scratch_size(std::size_t m, const std::size_t*) const { return m; }
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*, T*) const {
    detail::cholesky_forward(k, in[0], out);
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T* out, const T* adj, const T* const*, const std::size_t*,
                        T* const* in_adj, T* lb) const {
    for (std::size_t i = 0; i < m; ++i) lb[i] = adj[i];
    detail::cholesky_reverse(k, out, lb, in_adj[0]);
  }
};

/// diag(v) M: row i of the K × K matrix M (K² values) times vᵢ (v: K values). Reverse, with
/// adj the result's adjoint: v̄ᵢ += Σⱼ adjᵢⱼ Mᵢⱼ, M̄ᵢⱼ += adjᵢⱼ vᵢ.
struct diag_pre_multiply_map {
  static constexpr const char* name = "diag_pre_multiply";
  static constexpr bool has_payload = true;
  std::size_t k = 0;
  template <class V, class M>
  static constexpr std::size_t extent = extent_v<M>;
  bool operator==(const diag_pre_multiply_map&) const = default;
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*) const {
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) out[i * k + j] = in[0][i] * in[1][i * k + j];
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj) const {
    for (std::size_t i = 0; i < k; ++i) {
      T acc = lift<T>(0.0);
      for (std::size_t j = 0; j < k; ++j) {
        acc = acc + adj[i * k + j] * in[1][i * k + j];
        in_adj[1][i * k + j] += adj[i * k + j] * in[0][i];
      }
      in_adj[0][i] += acc;
    }
  }
};

/// X v for a rows × cols data matrix X (row major, viewed: it must outlive the model) and a
/// vector operand v of cols values that is not a bare vector parameter (those make the streamed
/// matvec node of core/nodes.hpp): an elementwise expression, another vector_op, data. Reverse:
/// v̄ += Xᵀ adj. O(rows · cols) each way; X is read where it is, never copied.
struct data_matvec_map {
  static constexpr const char* name = "matvec";
  static constexpr bool has_payload = true;
  const double* x = nullptr;
  std::size_t rows = 0;
  std::size_t cols = 0;
  template <class V>
  static constexpr std::size_t extent = dynamic_extent;
  bool operator==(const data_matvec_map&) const = default;
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*) const {
    const T* v = in[0];
    for (std::size_t r = 0; r < rows; ++r) {
      T acc = lift<T>(0.0);
      for (std::size_t c = 0; c < cols; ++c) acc = acc + lift<T>(x[r * cols + c]) * v[c];
      out[r] = acc;
    }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const*, const std::size_t*,
                        T* const* in_adj) const {
    T* vb = in_adj[0];
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c) vb[c] += lift<T>(x[r * cols + c]) * adj[r];
  }
};

/// M v for a K × K matrix M given as its K² entries (row major, any vector expression: a
/// Cholesky factor, diag_pre_multiply(tau, L), …) and a vector v of K values. Reverse:
/// M̄ᵢⱼ += adjᵢ vⱼ, v̄ += Mᵀ adj. O(K²) each way.
struct matvec_map {
  static constexpr const char* name = "matvec";
  static constexpr bool has_payload = true;
  std::size_t k = 0;
  template <class M, class V>
  static constexpr std::size_t extent = extent_v<V>;
  bool operator==(const matvec_map&) const = default;
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*) const {
    const T* mat = in[0];
    const T* v = in[1];
    for (std::size_t i = 0; i < k; ++i) {
      T acc = lift<T>(0.0);
      for (std::size_t j = 0; j < k; ++j) acc = acc + mat[i * k + j] * v[j];
      out[i] = acc;
    }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj) const {
    const T* mat = in[0];
    const T* v = in[1];
    for (std::size_t i = 0; i < k; ++i) {
      for (std::size_t j = 0; j < k; ++j) {
        in_adj[0][i * k + j] += adj[i] * v[j];
        in_adj[1][j] += mat[i * k + j] * adj[i];
      }
    }
  }
};

/// The dot products of the rows (Columns = false: rows values) or of the columns (Columns = true:
/// cols values) of two rows × cols matrices A and B given as their entries (row major): Stan's
/// rows_dot_product and columns_dot_product. With x null the operands are A and B; with x
/// set, A is that data matrix (viewed, not copied) and the one operand is B. Reverse:
/// Āᵢⱼ += adjᵢ Bᵢⱼ and B̄ᵢⱼ += adjᵢ Aᵢⱼ (adjⱼ for columns).
template <bool Columns>
struct rows_dot_product_map {
  static constexpr const char* name = Columns ? "columns_dot_product" : "rows_dot_product";
  static constexpr bool has_payload = true;
  std::size_t rows = 0;
  std::size_t cols = 0;
  const double* x = nullptr;
  template <class... Cs>
  static constexpr std::size_t extent = dynamic_extent;
  bool operator==(const rows_dot_product_map&) const = default;
  template <class T>
  TYCHE_HD T a_at(const T* const* in, std::size_t p) const {
    return x != nullptr ? lift<T>(x[p]) : in[0][p];
  }
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t*) const {
    const T* b = in[x != nullptr ? 0 : 1];
    for (std::size_t r = 0; r < m; ++r) out[r] = lift<T>(0.0);
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < cols; ++j) {
        T& o = out[Columns ? j : i];
        o = o + a_at(in, i * cols + j) * b[i * cols + j];
      }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj) const {
    const std::size_t ib = x != nullptr ? 0 : 1;
    const T* b = in[ib];
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < cols; ++j) {
        const std::size_t p = i * cols + j;
        const T a = adj[Columns ? j : i];
        if (x == nullptr) in_adj[0][p] += a * b[p];
        in_adj[ib][p] += a * a_at(in, p);
      }
  }
};

/// zₙ = L⁻¹(yₙ − μₙ) for the N rows yₙ of y and a lower-triangular K × K L (K² values; the
/// part above the diagonal is not read), all N·K values. y and μ each hold one value (for
/// every entry), K values (one vector, for every row) or N·K values (row n at n·K). Forward
/// substitution. Reverse, per row: w = L⁻ᵀ z̄ₙ by back substitution (scratch: K values), then
/// ȳₙ += w, μ̄ₙ −= w and L̄ᵢⱼ −= wᵢ zₙⱼ (j ≤ i), from dz = −L⁻¹ dL z. O(N K²) each way.
struct cholesky_residual_map {
  static constexpr const char* name = "cholesky_residual";
  static constexpr bool has_payload = true;
  std::size_t k = 0;
  template <class L, class Y, class Mu>
  static constexpr std::size_t extent = dynamic_extent;
  bool operator==(const cholesky_residual_map&) const = default;
  std::size_t scratch_size(std::size_t, const std::size_t*) const { return k; }
  TYCHE_HD std::size_t index(std::size_t len, std::size_t n, std::size_t i) const {
    return len == 1 ? 0 : (len == k ? i : n * k + i);
  }
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t* in_n, T*) const {
    const T* l = in[0];
    for (std::size_t n = 0; n * k < m; ++n) {
      T* z = out + n * k;
      for (std::size_t i = 0; i < k; ++i) {
        T acc = in[1][index(in_n[1], n, i)] - in[2][index(in_n[2], n, i)];
        for (std::size_t j = 0; j < i; ++j) acc = acc - l[i * k + j] * z[j];
        z[i] = acc / l[i * k + i];
      }
    }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T* out, const T* adj, const T* const* in, const std::size_t* in_n,
                        T* const* in_adj, T* w) const {
    const T* l = in[0];
    for (std::size_t n = 0; n * k < m; ++n) {
      const T* z = out + n * k;
      const T* zb = adj + n * k;
      for (std::size_t i = k; i-- > 0;) {
        T acc = zb[i];
        for (std::size_t j = i + 1; j < k; ++j) acc = acc - l[j * k + i] * w[j];
        w[i] = acc / l[i * k + i];
      }
      for (std::size_t i = 0; i < k; ++i) {
        in_adj[1][index(in_n[1], n, i)] += w[i];
        in_adj[2][index(in_n[2], n, i)] += -w[i];
        for (std::size_t j = 0; j <= i; ++j) in_adj[0][i * k + j] += -w[i] * z[j];
      }
    }
  }
};

/// log c_K(η), the normalising constant of the LKJ density det(Ω)^{η−1} / c_K(η) on K × K
/// correlation matrices (Lewandowski, Kurowicka & Joe 2009, section 3.2), written through the
/// canonical partial correlations, which are independent with density ∝ (1 − z²)^{aⱼ−1} on
/// (−1, 1), aⱼ = η + (K − 2 − j)/2 for the K − 1 − j of them in column j:
///   log c_K(η) = Σ_{j=0..K−2} (K − 1 − j) [(2aⱼ − 1) log 2 + 2 log Γ(aⱼ) − log Γ(2aⱼ)].
/// η is one value; so is the result. Reverse: ∂/∂η = Σ (K − 1 − j) [2 log 2 + 2ψ(aⱼ) − 2ψ(2aⱼ)].
struct lkj_log_normaliser_map {
  static constexpr const char* name = "lkj_log_normaliser";
  static constexpr bool has_payload = true;
  std::size_t k = 0;
  template <class Eta>
  static constexpr std::size_t extent = 1;
  bool operator==(const lkj_log_normaliser_map&) const = default;
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*) const {
    const T eta = in[0][0];
    T acc = lift<T>(0.0);
    for (std::size_t j = 0; j + 1 < k; ++j) {
      const T a = eta + lift<T>(0.5 * (double(k) - 2.0 - double(j)));
      acc = acc + lift<T>(double(k - 1 - j)) *
                      ((lift<T>(2.0) * a - lift<T>(1.0)) * lift<T>(0.69314718055994530942) +
                       lift<T>(2.0) * math::lgamma(a) - math::lgamma(lift<T>(2.0) * a));
    }
    out[0] = acc;
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj) const {
    const T eta = in[0][0];
    T acc = lift<T>(0.0);
    for (std::size_t j = 0; j + 1 < k; ++j) {
      const T a = eta + lift<T>(0.5 * (double(k) - 2.0 - double(j)));
      acc = acc + lift<T>(2.0 * double(k - 1 - j)) *
                      (lift<T>(0.69314718055994530942) + math::digamma(a) - math::digamma(lift<T>(2.0) * a));
    }
    in_adj[0][0] += acc * adj[0];
  }
};

}  // namespace ops

}  // namespace tyche
// ----- end tyche/autodiff/matrix_ops.hpp -----
// ----- begin tyche/autodiff/special.hpp -----
// tyche/autodiff/special.hpp — value and derivative rules for special functions: lgamma,
// digamma, erf, Phi (the standard normal CDF), log_Phi (its logarithm, without underflow),
// log_bessel_i0 (log of the modified Bessel function I₀), and cos.

namespace tyche::rules {

struct lgamma {
  static constexpr const char* name = "lgamma";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::lgamma(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = math::digamma(x);
    return math::lgamma(x);
  }
};

struct digamma {
  static constexpr const char* name = "digamma";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::digamma(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = math::trigamma(x);
    return math::digamma(x);
  }
};

struct erf {
  static constexpr const char* name = "erf";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::erf(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = lift<T>(math::two_over_sqrt_pi) * math::exp(-(x * x));
    return math::erf(x);
  }
};

/// Φ(x) = erfc(−x/√2)/2, accurate in the lower tail; Φ'(x) = e^(−x²/2)/√(2π).
struct Phi {
  static constexpr const char* name = "Phi";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const {
    return lift<T>(0.5) * math::erfc(-x * lift<T>(math::inv_sqrt_two));
  }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = lift<T>(math::inv_sqrt_two_pi) * math::exp(lift<T>(-0.5) * x * x);
    return lift<T>(0.5) * math::erfc(-x * lift<T>(math::inv_sqrt_two));
  }
};

/// log Φ(x) (Stan's std_normal_lcdf), finite where Φ(x) underflows (scalar/math.hpp);
/// d/dx = φ(x)/Φ(x), which tends to −x as x → −∞.
struct log_Phi {
  static constexpr const char* name = "log_Phi";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::log_Phi(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = math::phi_over_Phi(x);
    return math::log_Phi(x);
  }
};

/// log I₀(x) (Stan's log_modified_bessel_first_kind(0, x)); d/dx = I₁(x)/I₀(x) (A&S 9.6.27:
/// I₀' = I₁).
struct log_bessel_i0 {
  static constexpr const char* name = "log_bessel_i0";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::log_bessel_i0(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = math::bessel_i1_over_i0(x);
    return math::log_bessel_i0(x);
  }
};

/// cos x; d/dx = −sin x.
struct cos {
  static constexpr const char* name = "cos";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::cos(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = -math::sin(x);
    return math::cos(x);
  }
};

}  // namespace tyche::rules
// ----- end tyche/autodiff/special.hpp -----
// ----- begin tyche/core/nodes.hpp -----
// tyche/core/nodes.hpp — the operation nodes (unary and binary, elementwise with scalar
// broadcasting; sum, log_sum_exp, matvec, residual_squares, vector_op, element) and the plain
// builders that make them as written. A node is generic over its rule (autodiff/) or op: this
// header names none. The functions and operators users call, with the rewrites applied as
// nodes are built, are in operations/.

#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace tyche {

/// f(a) elementwise, for a rule f from tyche/autodiff/.
template <class Rule, class A>
struct unary_node : expr<unary_node<Rule, A>> {
  static constexpr node_kind kind = node_kind::unary;
  static constexpr bool is_vector = A::is_vector;
  static constexpr std::size_t extent = A::extent;
  static constexpr bool has_payload = Rule::has_payload;
  using children = meta::list<A>;
  using rule_type = Rule;
  [[no_unique_address]] Rule rule;
  A a;
  template <std::size_t I>
  TYCHE_HD constexpr const A& child() const { return a; }
  TYCHE_HD constexpr std::size_t size() const {
    if constexpr (extent != dynamic_extent) return extent; else return a.size();
  }
};

/// f(a, b) elementwise; a scalar operand is broadcast against a vector one.
template <class Rule, class A, class B>
struct binary_node : expr<binary_node<Rule, A, B>> {
  static constexpr node_kind kind = node_kind::binary;
  static constexpr bool is_vector = A::is_vector || B::is_vector;
  static constexpr std::size_t extent =
      !A::is_vector   ? (B::is_vector ? B::extent : 1)
      : !B::is_vector ? A::extent
                      : (A::extent != dynamic_extent ? A::extent : B::extent);
  static constexpr bool has_payload = Rule::has_payload;
  using children = meta::list<A, B>;
  using rule_type = Rule;
  [[no_unique_address]] Rule rule;
  A a;
  B b;
  template <std::size_t I>
  TYCHE_HD constexpr const auto& child() const {
    if constexpr (I == 0) return a; else return b;
  }
  TYCHE_HD constexpr std::size_t size() const {  // static when either operand's size is
    if constexpr (extent != dynamic_extent) return extent;
    else if constexpr (A::is_vector) return a.size();
    else return b.size();
  }
};

/// Σᵢ aᵢ over a vector expression.
template <class A>
struct sum_node : expr<sum_node<A>> {
  static constexpr node_kind kind = node_kind::sum;
  static constexpr bool is_vector = false;
  static constexpr std::size_t extent = 1;
  static constexpr bool has_payload = false;
  using children = meta::list<A>;
  A a;
  template <std::size_t I>
  TYCHE_HD constexpr const A& child() const { return a; }
};

/// log Σᵢ exp(aᵢ) over a vector expression, computed in one stable pass.
template <class A>
struct log_sum_exp_node : expr<log_sum_exp_node<A>> {
  static constexpr node_kind kind = node_kind::log_sum_exp;
  static constexpr bool is_vector = false;
  static constexpr std::size_t extent = 1;
  static constexpr bool has_payload = false;
  using children = meta::list<A>;
  A a;
  template <std::size_t I>
  TYCHE_HD constexpr const A& child() const { return a; }
};

/// X v for a data matrix X and a vector parameter v: a vector node whose values are held in a
/// buffer (the workspace), because every element needs all of v. Streamed (made only by
/// compile(), compile/stream.hpp, for a matvec used once, inside a reduction's loop): no buffer;
/// element i is row i of X times v, computed in the loop, and its adjoint goes to v while the
/// row is in cache, so one evaluation reads X once.
template <class V, bool Streamed = false>
struct matvec_node : expr<matvec_node<V, Streamed>> {
  static constexpr node_kind kind = node_kind::matvec;
  static constexpr bool streamed = Streamed;
  static constexpr bool is_vector = true;
  static constexpr std::size_t extent = dynamic_extent;
  static constexpr bool has_payload = true;
  using children = meta::list<data_matrix, V>;
  data_matrix x;
  V v;
  template <std::size_t I>
  TYCHE_HD constexpr const auto& child() const {
    if constexpr (I == 0) return x; else return v;
  }
  TYCHE_HD constexpr std::size_t size() const { return x.rows; }
};

/// Σᵢ (yᵢ − s − xᵢᵀv)² over n rows of data (y, X), for a scalar node S (the intercept; lit<0>
/// when there is none) and a vector parameter v of size k, evaluated in O(k²) from sufficient
/// statistics computed once when the model is built (compile/reduce_sum.hpp). With centred
/// data, x̄ and ȳ the column and data means and m = s + x̄ᵀv − ȳ:
///   Σᵢ (yᵢ − s − xᵢᵀv)² = S_yy − 2 vᵀS_xy + vᵀS_xx v + n m²,
/// S_yy = Σ(yᵢ − ȳ)², S_xy = Σ(xᵢ − x̄)(yᵢ − ȳ), S_xx = Σ(xᵢ − x̄)(xᵢ − x̄)ᵀ. Centring keeps the
/// cancellation down to a factor 1/(1 − R²) instead of Σyᵢ² / Σ residual².
/// stats: [S_yy, ȳ, n, x̄ (k), S_xy (k), S_xx (k × k, row-major)].
template <class S, class V>
struct residual_squares_node : expr<residual_squares_node<S, V>> {
  static constexpr node_kind kind = node_kind::residual_squares;
  static constexpr bool is_vector = false;
  static constexpr std::size_t extent = 1;
  static constexpr bool has_payload = true;
  using children = meta::list<S, V>;
  S s;
  V v;
  const double* stats = nullptr;
  std::size_t k = 0;
  template <std::size_t I>
  TYCHE_HD constexpr const auto& child() const {
    if constexpr (I == 0) return s; else return v;
  }
};

/// The operands of a vector_op, child I at index I (a flat struct: no std::tuple, so that it is
/// usable in device code and trivially copyable).
template <std::size_t I, class C>
struct operand_holder {
  C c;
};
template <class Seq, class... Cs>
struct operand_pack;
template <std::size_t... I, class... Cs>
struct operand_pack<std::index_sequence<I...>, Cs...> : operand_holder<I, Cs>... {};

template <std::size_t I, class C>
TYCHE_HD constexpr const C& operand_at(const operand_holder<I, C>& h) {
  return h.c;
}

/// A vector of m values computed from whole operands (scalars or vectors) by Op: the ordered
/// transform, a cumulative sum, a linear recurrence, a gather (autodiff/vector_ops.hpp). Its values
/// live in a buffer of the workspace, like matvec's; its gradient is Op's vector–Jacobian
/// product. Op provides name, has_payload, forward and reverse (see autodiff/vector_ops.hpp).
template <class Op, class... Cs>
struct vector_op_node : expr<vector_op_node<Op, Cs...>> {
  static constexpr node_kind kind = node_kind::vector_op;
  static constexpr bool is_vector = true;
  static constexpr std::size_t extent = Op::template extent<Cs...>;
  static constexpr bool has_payload = Op::has_payload;
  using children = meta::list<Cs...>;
  using op_type = Op;
  [[no_unique_address]] Op op;
  operand_pack<std::index_sequence_for<Cs...>, Cs...> operands;
  std::size_t m = 0;  // the number of values
  template <std::size_t I>
  TYCHE_HD constexpr const auto& child() const {
    return operand_at<I>(operands);
  }
  TYCHE_HD constexpr std::size_t size() const {
    if constexpr (extent != dynamic_extent) return extent; else return m;
  }
};

/// Element k (0-based) of a buffered vector V (matvec or vector_op): a scalar. Made by at(v, k).
template <class V>
struct element_node : expr<element_node<V>> {
  static constexpr node_kind kind = node_kind::element;
  static constexpr bool is_vector = false;
  static constexpr std::size_t extent = 1;
  static constexpr bool has_payload = true;  // the index
  using children = meta::list<V>;
  V v;
  std::size_t index = 0;
  template <std::size_t I>
  TYCHE_HD constexpr const V& child() const { return v; }
};

/// vector_op_node<Op, Cs...> with m values from operands cs.
template <class Op, class... Cs>
auto make_vector_op(const Op& op, std::size_t m, const Cs&... cs) {
  return vector_op_node<Op, Cs...>{{}, op, {{cs}...}, m};
}

/// The vector_op n with f applied to each operand (fold, substitute).
template <class N, class F>
auto rebuild_vector_op(const N& n, F&& f) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return make_vector_op(n.op, n.m, f(n.template child<I>())...);
  }(std::make_index_sequence<children_t<N>::size>{});
}

// ---- building nodes ------------------------------------------------------------------------

namespace detail {

/// The number of values of a node: its size for a vector, 1 for a scalar.
template <class C>
TYCHE_HD constexpr std::size_t operand_size(const C& c) {
  if constexpr (is_vector_v<C>) return c.size();
  else return 1;
}

/// What may stand as an operand of an elementwise operation: an expression other than a
/// matrix, or a plain number.
template <class T>
concept operand = (expression<T> && (wraps_expression<T> || kind_of<T> != node_kind::data_matrix)) ||
                  arithmetic<T>;

/// The core node an operand stands for: a number becomes a constant; a wrapper (a random
/// variable, see tyche/model) becomes the expression of its value; a node is itself.
template <class T>
TYCHE_HD constexpr auto as_node(const T& x) {
  if constexpr (arithmetic<T>) return constant{static_cast<double>(x)};
  else if constexpr (wraps_expression<T>) return as_node(x.value_expression());
  else return x;
}
template <class T>
using node_t = decltype(as_node(std::declval<T>()));

inline void check_same_size(const char* op, std::size_t a, std::size_t b) {
  if (a != b)
    throw std::invalid_argument(std::string("tyche::") + op + ": vector operands have sizes " +
                                std::to_string(a) + " and " + std::to_string(b));
}

template <class Rule, class A>
auto make_unary(const A& a, Rule rule = {}) {
  using N = node_t<A>;
  return unary_node<Rule, N>{{}, rule, as_node(a)};
}

/// The parts of a literal type (is_literal false for any other node).
template <class N>
struct literal_parts {
  static constexpr bool is_literal = false;
};
template <std::intmax_t N, std::intmax_t D>
struct literal_parts<literal<N, D>> {
  static constexpr bool is_literal = true;
  static constexpr std::intmax_t num = N, den = D;
};
template <class N, std::intmax_t Num, std::intmax_t Den = 1>
inline constexpr bool is_literal_equal_v = [] {
  if constexpr (literal_parts<N>::is_literal)
    return literal_parts<N>::num * Den == Num * literal_parts<N>::den;
  else
    return false;
}();

/// literal<N, D> in lowest terms with a positive denominator.
template <std::intmax_t N, std::intmax_t D>
constexpr auto reduced_literal() {
  constexpr std::intmax_t an = N < 0 ? -N : N, ad = D < 0 ? -D : D;
  constexpr std::intmax_t g = std::gcd(an, ad) == 0 ? 1 : std::gcd(an, ad);
  constexpr std::intmax_t sign = (N < 0) != (D < 0) ? -1 : 1;
  return literal<sign * an / g, ad / g>{};
}

template <class Rule, class A, class B>
auto make_binary_node(const A& a, const B& b) {
  using NA = node_t<A>;
  using NB = node_t<B>;
  if constexpr (NA::is_vector && NB::is_vector) {
    static_assert(NA::extent == dynamic_extent || NB::extent == dynamic_extent ||
                      NA::extent == NB::extent,
                  "tyche: an elementwise operation on two vectors requires equal sizes");
  }
  binary_node<Rule, NA, NB> n{{}, {}, as_node(a), as_node(b)};
  if constexpr (NA::is_vector && NB::is_vector) check_same_size(Rule::name, n.a.size(), n.b.size());
  return n;
}

}  // namespace detail

}  // namespace tyche
// ----- end tyche/core/nodes.hpp -----
// ----- begin tyche/interval/support.hpp -----
// tyche/interval/support.hpp — the support of every expression node: at compile time from the types
// (support_of<N>, support_known_v<N>), and at model construction from the values of constants
// and data (support(node), support_at(node, i)); the argument domains distributions and
// operations require (domains::positive, …), the check of an argument against its domain, and
// the escape hatch assume_support. Rules: docs/design/partial-evaluation.md, "Supports and
// checks".
// ----- begin tyche/interval/interval.hpp -----
// tyche/interval/interval.hpp — constexpr interval arithmetic over the extended reals, with open
// and closed ends: the supports of expression nodes are computed with it (interval/support.hpp),
// at compile time from the types and at model construction from the data
// (docs/design/partial-evaluation.md, "Supports and checks"; the idea is Rainier's, whose every
// node carries its interval).
//
// An interval is {lo, hi, lo_closed, hi_closed}; lo = −∞ / hi = +∞ are allowed, and a closed
// infinite end means the value ±∞ itself can occur (log(0) = −∞, 1/0 = +∞). Every operation
// returns a SOUND superset of the exact image: never a smaller set. Where a bound is computed in
// floating point and the result may be inexact, it is moved outward by one ulp (exactness of
// + − × ÷ is tested with error-free transformations, so exact results such as 0 + 1·(0, 1) stay
// exact). Transcendental functions (exp, log, lgamma, …) have no constexpr implementation in
// C++20: in constant evaluation their images use exactly known values only (exp(0) = 1,
// logistic(0) = ½, the limits at ±∞) and monotonicity; at run time they call <cmath> and widen
// by a few ulps. Where an operand leaves a function's domain (log of a negative number), the
// image is the whole line: the point of the supports is to find such operands, and the checks
// look at the operand, not at the result.

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

namespace tyche {

struct interval {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_closed = false;
  bool hi_closed = false;

  static constexpr double inf = std::numeric_limits<double>::infinity();

  /// The whole line (−∞, ∞).
  static constexpr interval whole() { return {}; }
  /// The empty set (represented as (+∞, −∞)).
  static constexpr interval empty() { return {inf, -inf, false, false}; }
  static constexpr interval point(double x) { return {x, x, true, true}; }
  static constexpr interval closed(double a, double b) { return {a, b, true, true}; }
  static constexpr interval open(double a, double b) { return {a, b, false, false}; }
  static constexpr interval closed_open(double a, double b) { return {a, b, true, false}; }
  static constexpr interval open_closed(double a, double b) { return {a, b, false, true}; }
  /// (0, ∞) and [0, ∞).
  static constexpr interval positive() { return open(0.0, inf); }
  static constexpr interval nonnegative() { return closed_open(0.0, inf); }

  [[nodiscard]] constexpr bool is_empty() const {
    return lo > hi || (lo == hi && !(lo_closed && hi_closed)) || lo != lo || hi != hi;
  }
  [[nodiscard]] constexpr bool is_whole() const {
    return lo == -inf && hi == inf && !lo_closed && !hi_closed;
  }
  [[nodiscard]] constexpr bool bounded_below() const { return lo > -inf; }
  [[nodiscard]] constexpr bool bounded_above() const { return hi < inf; }
  [[nodiscard]] constexpr bool contains(double x) const {
    return !is_empty() && (lo_closed ? x >= lo : x > lo) && (hi_closed ? x <= hi : x < hi);
  }
  /// True when every element of *this is in d (the empty set is inside everything).
  [[nodiscard]] constexpr bool subset_of(const interval& d) const {
    if (is_empty()) return true;
    if (d.is_empty()) return false;
    const bool lo_ok = lo > d.lo || (lo == d.lo && (d.lo_closed || !lo_closed));
    const bool hi_ok = hi < d.hi || (hi == d.hi && (d.hi_closed || !hi_closed));
    return lo_ok && hi_ok;
  }
  /// True when *this and d have no element in common.
  [[nodiscard]] constexpr bool disjoint_from(const interval& d) const;
  constexpr bool operator==(const interval& o) const {
    if (is_empty() && o.is_empty()) return true;
    return lo == o.lo && hi == o.hi && lo_closed == o.lo_closed && hi_closed == o.hi_closed;
  }
};

// ---- floating-point helpers (constexpr) --------------------------------------------------------

namespace detail::iv {

inline constexpr double inf = std::numeric_limits<double>::infinity();

constexpr bool is_nan(double x) { return x != x; }
/// Finite (no arithmetic: ∞ − ∞ is not a constant expression).
constexpr bool is_finite(double x) { return x > -std::numeric_limits<double>::infinity() && x < std::numeric_limits<double>::infinity(); }

/// The next double towards −∞ / +∞ (std::nextafter is not constexpr before C++23).
constexpr double next_down(double x) {
  if (is_nan(x) || x == -inf) return x;
  if (x == 0.0) return -std::numeric_limits<double>::denorm_min();
  const auto bits = std::bit_cast<std::uint64_t>(x);
  return std::bit_cast<double>(x > 0 ? bits - 1 : bits + 1);
}
constexpr double next_up(double x) { return -next_down(-x); }

/// Error-free sum (Knuth's TwoSum): s + e == a + b exactly, for finite a, b, s.
constexpr bool sum_exact(double a, double b, double s) {
  if (!is_finite(s)) return !is_finite(a) || !is_finite(b);  // overflow is inexact
  const double bb = s - a;
  const double e = (a - (s - bb)) + (b - bb);
  return e == 0.0;
}

/// Veltkamp split and Dekker's TwoProduct: whether a · b == p exactly (finite operands).
constexpr void split(double a, double& hi, double& lo) {
  const double c = 134217729.0 * a;  // 2^27 + 1
  hi = c - (c - a);
  lo = a - hi;
}
constexpr bool product_exact(double a, double b, double p) {
  if (a == 0.0 || b == 0.0) return p == 0.0;
  if (!is_finite(p) || !is_finite(a) || !is_finite(b)) return !is_finite(a) || !is_finite(b);
  // Far from overflow and underflow, Dekker's product is exact; near them, call it inexact.
  const double m = a < 0 ? -a : a, n = b < 0 ? -b : b, q = p < 0 ? -p : p;
  if (m > 1e150 || n > 1e150 || q < 1e-290 || q > 1e290) return false;
  double ah = 0, al = 0, bh = 0, bl = 0;
  split(a, ah, al);
  split(b, bh, bl);
  const double e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
  return e == 0.0;
}

/// A bound computed in round-to-nearest, moved outward unless it is known exact.
constexpr double down_unless(bool exact, double x) { return exact ? x : next_down(x); }
constexpr double up_unless(bool exact, double x) { return exact ? x : next_up(x); }

/// One end of an interval while it is being computed: a value and whether it is attained.
struct end {
  double value;
  bool closed;
};

}  // namespace detail::iv

constexpr bool interval::disjoint_from(const interval& d) const {
  if (is_empty() || d.is_empty()) return true;
  // The intersection's ends are the larger lo and the smaller hi.
  const bool a_lo = lo > d.lo || (lo == d.lo && !lo_closed);
  interval x{a_lo ? lo : d.lo, 0, a_lo ? lo_closed : d.lo_closed, false};
  if (lo == d.lo) x.lo_closed = lo_closed && d.lo_closed;
  const bool a_hi = hi < d.hi || (hi == d.hi && !hi_closed);
  x.hi = a_hi ? hi : d.hi;
  x.hi_closed = a_hi ? hi_closed : d.hi_closed;
  if (hi == d.hi) x.hi_closed = hi_closed && d.hi_closed;
  return x.is_empty();
}

// ---- set operations ------------------------------------------------------------------------------

/// The smallest interval containing a and b.
constexpr interval hull(const interval& a, const interval& b) {
  if (a.is_empty()) return b;
  if (b.is_empty()) return a;
  interval r;
  r.lo = a.lo < b.lo ? a.lo : b.lo;
  r.lo_closed = (a.lo == r.lo && a.lo_closed) || (b.lo == r.lo && b.lo_closed);
  r.hi = a.hi > b.hi ? a.hi : b.hi;
  r.hi_closed = (a.hi == r.hi && a.hi_closed) || (b.hi == r.hi && b.hi_closed);
  return r;
}

/// a ∩ b.
constexpr interval intersect(const interval& a, const interval& b) {
  if (a.is_empty() || b.is_empty()) return interval::empty();
  interval r;
  r.lo = a.lo > b.lo ? a.lo : b.lo;
  r.lo_closed = (a.lo != r.lo || a.lo_closed) && (b.lo != r.lo || b.lo_closed);
  r.hi = a.hi < b.hi ? a.hi : b.hi;
  r.hi_closed = (a.hi != r.hi || a.hi_closed) && (b.hi != r.hi || b.hi_closed);
  return r.is_empty() ? interval::empty() : r;
}

// ---- arithmetic ----------------------------------------------------------------------------------

constexpr interval operator-(const interval& a) {
  if (a.is_empty()) return a;
  return {-a.hi, -a.lo, a.hi_closed, a.lo_closed};
}

constexpr interval operator+(const interval& a, const interval& b) {
  using namespace detail::iv;
  if (a.is_empty() || b.is_empty()) return interval::empty();
  interval r;
  if (a.lo == -inf || b.lo == -inf) {
    r.lo = -inf;
    r.lo_closed = (a.lo == -inf && a.lo_closed) || (b.lo == -inf && b.lo_closed);
  } else {
    const double s = a.lo + b.lo;
    r.lo = down_unless(sum_exact(a.lo, b.lo, s), s);
    r.lo_closed = a.lo_closed && b.lo_closed;
  }
  if (a.hi == inf || b.hi == inf) {
    r.hi = inf;
    r.hi_closed = (a.hi == inf && a.hi_closed) || (b.hi == inf && b.hi_closed);
  } else {
    const double s = a.hi + b.hi;
    r.hi = up_unless(sum_exact(a.hi, b.hi, s), s);
    r.hi_closed = a.hi_closed && b.hi_closed;
  }
  return r;
}

constexpr interval operator-(const interval& a, const interval& b) { return a + (-b); }

namespace detail::iv {
/// x · y for interval ends, with 0 · ±∞ = 0 (a limit, as in interval arithmetic); rounded
/// down (Down) or up.
template <bool Down>
constexpr double end_product(double x, double y) {
  if (x == 0.0 || y == 0.0) return 0.0;
  const double p = x * y;
  return Down ? down_unless(product_exact(x, y, p), p) : up_unless(product_exact(x, y, p), p);
}
/// Whether the product of two ends is attained: both are, or one is an attained 0.
constexpr bool end_product_closed(const end& x, const end& y) {
  return (x.closed && y.closed) || (x.value == 0.0 && x.closed) || (y.value == 0.0 && y.closed);
}
}  // namespace detail::iv

constexpr interval operator*(const interval& a, const interval& b) {
  using namespace detail::iv;
  if (a.is_empty() || b.is_empty()) return interval::empty();
  const end xs[2] = {{a.lo, a.lo_closed}, {a.hi, a.hi_closed}};
  const end ys[2] = {{b.lo, b.lo_closed}, {b.hi, b.hi_closed}};
  interval r{inf, -inf, false, false};
  for (const end& x : xs) {
    for (const end& y : ys) {
      const double lo = end_product<true>(x.value, y.value);
      const double hi = end_product<false>(x.value, y.value);
      const bool closed = end_product_closed(x, y);
      if (lo < r.lo) {
        r.lo = lo;
        r.lo_closed = closed;
      } else if (lo == r.lo) {
        r.lo_closed = r.lo_closed || closed;
      }
      if (hi > r.hi) {
        r.hi = hi;
        r.hi_closed = closed;
      } else if (hi == r.hi) {
        r.hi_closed = r.hi_closed || closed;
      }
    }
  }
  // An attained 0 in either factor makes 0 attained, also strictly inside the result.
  return r;
}

/// 1/x. When x may be 0 the result contains ±∞ (1/0 = +∞ in IEEE arithmetic).
constexpr interval inverse(const interval& a) {
  using namespace detail::iv;
  if (a.is_empty()) return a;
  auto inv_down = [](double x) {  // lower bound of 1/x
    if (x == inf || x == -inf) return 0.0;
    const double q = 1.0 / x;
    return down_unless(product_exact(q, x, 1.0) && q * x == 1.0, q);
  };
  auto inv_up = [](double x) {
    if (x == inf || x == -inf) return 0.0;
    const double q = 1.0 / x;
    return up_unless(product_exact(q, x, 1.0) && q * x == 1.0, q);
  };
  const bool positive_side = a.lo > 0 || (a.lo == 0 && !a.lo_closed);
  const bool negative_side = a.hi < 0 || (a.hi == 0 && !a.hi_closed);
  if (positive_side) {  // (0, ∞]: 1/x decreasing
    interval r;
    r.lo = inv_down(a.hi);
    r.lo_closed = a.hi_closed;  // 1/∞ = 0 is attained only if ∞ is
    r.hi = a.lo == 0 ? inf : inv_up(a.lo);
    r.hi_closed = a.lo == 0 ? false : a.lo_closed;
    return r;
  }
  if (negative_side) return -inverse(-a);
  if (a.lo == 0 && a.hi > 0) {  // [0, b]: 1/0 = +∞
    return {inv_down(a.hi), inf, a.hi_closed, true};
  }
  if (a.hi == 0 && a.lo < 0) return {-inf, inv_up(a.lo), true, a.lo_closed};
  return {-inf, inf, true, true};
}

constexpr interval operator/(const interval& a, const interval& b) { return a * inverse(b); }

/// n · a for a count n (the sum of n elements of a).
constexpr interval scale(double n, const interval& a) {
  if (n == 0) return interval::point(0.0);
  return interval::point(n) * a;
}

// ---- elementwise functions ---------------------------------------------------------------------

namespace detail::iv {

/// Lower and upper bounds of f(x) for a function known exactly only at some points: the
/// image of a monotone function at a finite end that is not one of them is bracketed by the
/// nearest known points (a sound superset).
struct known_point {
  double x;
  double fx;
};

/// f(x) rounded down/up: at run time through Fn (<cmath>), widened by 4 ulps; in constant
/// evaluation from the known points of an increasing f.
template <bool Down, class Fn, std::size_t K>
constexpr double monotone_bound(double x, Fn fn, const known_point (&known)[K]) {
  for (const auto& p : known)
    if (p.x == x) return p.fx;
  if (!std::is_constant_evaluated()) {
    double y = fn(x);
    for (int i = 0; i < 4; ++i) y = Down ? next_down(y) : next_up(y);
    return y;
  }
  // Largest known point below x (for the lower bound) / smallest above (upper bound).
  double best = Down ? -inf : inf;
  for (const auto& p : known) {
    if (Down && p.x < x && p.fx > best) best = p.fx;
    if (!Down && p.x > x && p.fx < best) best = p.fx;
  }
  return best;
}

/// The image of [a] under an increasing f on its domain, given its limits at the ends of the
/// domain in `known` (which must include them). Attained ends stay attained where f is
/// strictly increasing and finite there; an end mapped to a known limit at ±∞ is attained only
/// if the infinite end is.
template <class Fn, std::size_t K>
constexpr interval increasing_image(const interval& a, Fn fn, const known_point (&known)[K]) {
  if (a.is_empty()) return a;
  interval r;
  r.lo = monotone_bound<true>(a.lo, fn, known);
  r.hi = monotone_bound<false>(a.hi, fn, known);
  // A bound taken from a known point strictly below/above the end is not attained.
  const bool lo_exact = [&] {
    for (const auto& p : known)
      if (p.x == a.lo) return true;
    return !std::is_constant_evaluated();
  }();
  const bool hi_exact = [&] {
    for (const auto& p : known)
      if (p.x == a.hi) return true;
    return !std::is_constant_evaluated();
  }();
  r.lo_closed = a.lo_closed && lo_exact;
  r.hi_closed = a.hi_closed && hi_exact;
  // Never past f's limits at the ends of its domain (known[0], known[K − 1]): a run-time bound
  // widened by ulps, or rounded to the limit (exp(−800) = 0), is put back to the limit, which
  // only the end of the domain itself attains.
  if (r.lo <= known[0].fx && a.lo != known[0].x) {
    r.lo = known[0].fx;
    r.lo_closed = false;
  }
  if (r.hi >= known[K - 1].fx && a.hi != known[K - 1].x) {
    r.hi = known[K - 1].fx;
    r.hi_closed = false;
  }
  return r;
}

template <class Fn, std::size_t K>
constexpr interval decreasing_image(const interval& a, Fn fn, const known_point (&known)[K]) {
  // f decreasing: f(x) = g(−x) with g increasing.
  known_point flipped[K];
  for (std::size_t i = 0; i < K; ++i) flipped[i] = {-known[K - 1 - i].x, known[K - 1 - i].fx};
  return increasing_image(-a, [fn](double x) { return fn(-x); }, flipped);
}

}  // namespace detail::iv

// Each function below is the image of an interval under the elementwise operation of the same
// name in operations/functions.hpp (rules in autodiff/).

namespace detail::iv {
inline constexpr known_point exp_points[] = {{-inf, 0.0}, {0.0, 1.0}, {inf, inf}};
inline constexpr known_point log_points[] = {{0.0, -inf}, {1.0, 0.0}, {inf, inf}};
inline constexpr known_point log1p_points[] = {{-1.0, -inf}, {0.0, 0.0}, {inf, inf}};
inline constexpr known_point expm1_points[] = {{-inf, -1.0}, {0.0, 0.0}, {inf, inf}};
inline constexpr known_point sqrt_points[] = {{0.0, 0.0}, {1.0, 1.0}, {inf, inf}};
inline constexpr known_point log1p_exp_points[] = {{-inf, 0.0}, {inf, inf}};
inline constexpr known_point logistic_points[] = {{-inf, 0.0}, {0.0, 0.5}, {inf, 1.0}};
inline constexpr known_point log_logistic_points[] = {{-inf, -inf}, {inf, 0.0}};
inline constexpr known_point log1m_logistic_points[] = {{-inf, 0.0}, {inf, -inf}};  // decreasing
inline constexpr known_point odd_unit_points[] = {{-inf, -1.0}, {0.0, 0.0}, {inf, 1.0}};  // tanh, erf
inline constexpr known_point digamma_points[] = {{0.0, -inf}, {inf, inf}};

/// The closed domain of a function; outside it the image is the whole line.
constexpr bool inside(const interval& a, double lo) { return a.is_empty() || a.lo >= lo; }

/// log(1 + eˣ) as in rules::log1p_exp.
inline double log1p_exp_value(double x) { return (x > 0 ? x : 0.0) + std::log1p(std::exp(-std::fabs(x))); }
inline double logistic_value(double x) { return 1.0 / (1.0 + std::exp(-x)); }
inline double log_logistic_value(double x) { return -log1p_exp_value(-x); }
inline double log1m_logistic_value(double x) { return -log1p_exp_value(x); }
inline double phi_value(double x) { return 0.5 * std::erfc(-x * 0.70710678118654752440); }
inline constexpr known_point log_bessel_i0_points[] = {{0.0, 0.0}, {inf, inf}};  // on |x|
}  // namespace detail::iv

constexpr interval exp(const interval& a) {
  return detail::iv::increasing_image(a, [](double x) { return std::exp(x); }, detail::iv::exp_points);
}
/// log x: domain [0, ∞] (log 0 = −∞).
constexpr interval log(const interval& a) {
  if (!detail::iv::inside(a, 0.0)) return interval::whole();
  return detail::iv::increasing_image(a, [](double x) { return std::log(x); }, detail::iv::log_points);
}
/// log(1 + x): domain [−1, ∞].
constexpr interval log1p(const interval& a) {
  if (!detail::iv::inside(a, -1.0)) return interval::whole();
  return detail::iv::increasing_image(a, [](double x) { return std::log1p(x); }, detail::iv::log1p_points);
}
constexpr interval expm1(const interval& a) {
  return detail::iv::increasing_image(a, [](double x) { return std::expm1(x); }, detail::iv::expm1_points);
}
/// √x: domain [0, ∞].
constexpr interval sqrt(const interval& a) {
  if (!detail::iv::inside(a, 0.0)) return interval::whole();
  return detail::iv::increasing_image(a, [](double x) { return std::sqrt(x); }, detail::iv::sqrt_points);
}
/// log(1 + eˣ): (0, ∞) for the whole line.
constexpr interval log1p_exp(const interval& a) {
  return detail::iv::increasing_image(a, detail::iv::log1p_exp_value, detail::iv::log1p_exp_points);
}
/// The inverse logit: (0, 1) for the whole line.
constexpr interval logistic(const interval& a) {
  return detail::iv::increasing_image(a, detail::iv::logistic_value, detail::iv::logistic_points);
}
/// log σ(x): (−∞, 0).
constexpr interval log_logistic(const interval& a) {
  return detail::iv::increasing_image(a, detail::iv::log_logistic_value, detail::iv::log_logistic_points);
}
/// log(1 − σ(x)): (−∞, 0), decreasing.
constexpr interval log1m_logistic(const interval& a) {
  return detail::iv::decreasing_image(a, detail::iv::log1m_logistic_value,
                                      detail::iv::log1m_logistic_points);
}
constexpr interval tanh(const interval& a) {
  return detail::iv::increasing_image(a, [](double x) { return std::tanh(x); }, detail::iv::odd_unit_points);
}
constexpr interval erf(const interval& a) {
  return detail::iv::increasing_image(a, [](double x) { return std::erf(x); }, detail::iv::odd_unit_points);
}
/// The standard normal cdf: (0, 1).
constexpr interval Phi(const interval& a) {
  return detail::iv::increasing_image(a, detail::iv::phi_value, detail::iv::logistic_points);
}
/// log Φ(x): (−∞, 0), increasing.
constexpr interval log_Phi(const interval& a) {
  return detail::iv::increasing_image(a, [](double x) { return math::log_Phi(x); },
                                      detail::iv::log_logistic_points);
}
/// cos x: [−1, 1] (not narrowed for short intervals).
constexpr interval cos(const interval& a) {
  if (a.is_empty()) return a;
  return interval::closed(-1.0, 1.0);
}

/// step(x) (0 for x < 0, else 1): {1} where x ≥ 0, {0} where x < 0, else [0, 1].
constexpr interval step(const interval& a) {
  if (a.is_empty()) return a;
  if (a.lo >= 0) return interval::closed(1.0, 1.0);
  if (a.hi < 0 || (a.hi == 0 && !a.hi_closed)) return interval::closed(0.0, 0.0);
  return interval::closed(0.0, 1.0);
}

/// |x|.
constexpr interval abs(const interval& a) {
  if (a.is_empty() || a.lo >= 0) return a;
  if (a.hi <= 0) return -a;
  const interval n = -a;  // lo < 0 < hi: 0 is attained
  interval r{0.0, n.hi > a.hi ? n.hi : a.hi, true, false};
  r.hi_closed = (n.hi == r.hi && n.hi_closed) || (a.hi == r.hi && a.hi_closed);
  return r;
}

/// log I₀(x): even, increasing in |x|, 0 at x = 0; [0, ∞) for the whole line.
constexpr interval log_bessel_i0(const interval& a) {
  return detail::iv::increasing_image(abs(a), [](double x) { return math::log_bessel_i0(x); },
                                      detail::iv::log_bessel_i0_points);
}

/// x²: |x| · |x|, which has no dependency problem since |x| ≥ 0.
constexpr interval square(const interval& a) {
  const interval m = abs(a);
  return m * m;
}

/// lgamma(x) = log |Γ(x)|: on (0, ∞] it is ≥ lgamma(1.4616…) = −0.1214862905…, decreasing
/// before that minimum and increasing after it; on the negative half-line the whole line.
constexpr interval lgamma(const interval& a) {
  using namespace detail::iv;
  if (a.is_empty()) return a;
  if (!(a.lo > 0 || (a.lo == 0 && !a.lo_closed))) return interval::whole();
  constexpr double x_min = 1.4616321449683623;
  const double y_min = next_down(-0.12148629053584961);
  if (std::is_constant_evaluated()) {
    // lgamma ≥ 0 on (0, 1] and [2, ∞), = 0 at 1 and 2.
    const bool nonneg = a.hi <= 1.0 || a.lo >= 2.0;
    interval r{nonneg ? 0.0 : y_min, inf, true, false};
    if (a.hi == inf && a.hi_closed) r.hi_closed = true;
    return r;
  }
  auto down = [](double x) { return next_down(next_down(std::lgamma(x))); };
  auto up = [](double x) { return next_up(next_up(std::lgamma(x))); };
  auto at = [&](double x, bool lower) { return x == 0 || x == inf ? inf : (lower ? down(x) : up(x)); };
  if (a.hi <= x_min) return {at(a.hi, true), at(a.lo, false), a.hi_closed, a.lo_closed && a.lo != 0};
  if (a.lo >= x_min) return {at(a.lo, true), at(a.hi, false), a.lo_closed, a.hi_closed && a.hi != inf};
  const double l = at(a.lo, false), h = at(a.hi, false);
  interval r{y_min, l > h ? l : h, true, false};
  r.hi_closed = (l >= h && a.lo_closed && a.lo != 0) || (h >= l && a.hi_closed && a.hi != inf);
  return r;
}

/// digamma(x): increasing on (0, ∞); the whole line elsewhere (poles at 0, −1, −2, …).
constexpr interval digamma(const interval& a) {
  if (a.is_empty()) return a;
  if (!(a.lo > 0 || (a.lo == 0 && !a.lo_closed))) return interval::whole();
  return detail::iv::increasing_image(a, [](double x) { return math::digamma(x); },
                                      detail::iv::digamma_points);
}

namespace detail::iv {
/// aⁿ for a ⊆ [0, ∞] and a whole n ≥ 1, by repeated multiplication (monotone there).
constexpr interval pow_nonnegative(const interval& a, long long n) {
  interval r = a;
  for (long long i = 1; i < n; ++i) r = r * a;
  return r;
}
}  // namespace detail::iv

/// aᶜ for a constant exponent c (a literal, or a run-time constant at model construction).
/// Whole c: even powers are ≥ 0, odd powers keep the sign, negative powers go through 1/x.
/// Fractional c: domain [0, ∞].
constexpr interval pow(const interval& a, double c) {
  using namespace detail::iv;
  if (a.is_empty()) return a;
  if (c == 0) return interval::point(1.0);
  const bool whole_number = c == static_cast<double>(static_cast<long long>(c)) && c >= -64 && c <= 64;
  if (whole_number) {
    const long long n = static_cast<long long>(c);
    if (n < 0) return inverse(pow(a, -c));
    if (n % 2 == 0) return pow_nonnegative(abs(a), n);
    if (a.lo >= 0) return pow_nonnegative(a, n);
    if (a.hi <= 0) return -pow_nonnegative(-a, n);
    const interval neg = -pow_nonnegative(-intersect(a, interval::closed(-inf, 0.0)), n);
    return hull(neg, pow_nonnegative(intersect(a, interval::closed(0.0, inf)), n));
  }
  if (!inside(a, 0.0)) return interval::whole();
  if (c > 0) {
    const known_point k[] = {{0.0, 0.0}, {1.0, 1.0}, {inf, inf}};
    return increasing_image(a, [c](double x) { return std::pow(x, c); }, k);
  }
  const known_point k[] = {{0.0, inf}, {1.0, 1.0}, {inf, 0.0}};
  return decreasing_image(a, [c](double x) { return std::pow(x, c); }, k);
}

/// aᵇ for two intervals: a point b is pow(a, c); otherwise only the sign of the result is
/// known: (0, ∞) for a > 0, [0, ∞] for a ≥ 0, the whole line else.
constexpr interval pow(const interval& a, const interval& b) {
  if (a.is_empty() || b.is_empty()) return interval::empty();
  if (b.lo == b.hi) return pow(a, b.lo);
  if (a.lo > 0 || (a.lo == 0 && !a.lo_closed)) return {0.0, interval::inf, false, a.hi_closed && a.hi == interval::inf};
  if (a.lo >= 0) return {0.0, interval::inf, true, true};
  return interval::whole();
}

// ---- text ------------------------------------------------------------------------------------

/// A short string built in constant evaluation.
struct interval_text {
  char chars[64]{};
  std::size_t size = 0;
  constexpr void append(char c) {
    if (size + 1 < sizeof chars) chars[size++] = c;
  }
  constexpr void append(const char* s) {
    while (*s) append(*s++);
  }
  [[nodiscard]] std::string str() const { return std::string(chars, size); }
};

namespace detail::iv {
constexpr void append_unsigned(interval_text& t, unsigned long long v) {
  char digits[24]{};
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (n > 0) t.append(digits[--n]);
}
}  // namespace detail::iv

/// x as text: "inf", "-inf", "nan", whole numbers below 10^15 exactly, anything else to six
/// significant digits ("0.333333", "1.5e+300"). The same in constant evaluation and at run
/// time, so that compile-time and construction-time messages agree.
constexpr void append_number(interval_text& t, double x) {
  using namespace detail::iv;
  if (is_nan(x)) return t.append("nan");
  if (x < 0) {
    t.append('-');
    x = -x;
  }
  if (x == inf) return t.append("inf");
  if (x < 1e15 && x == static_cast<double>(static_cast<unsigned long long>(x)))
    return append_unsigned(t, static_cast<unsigned long long>(x));
  // six significant digits: x ≈ m · 10^e with 1 ≤ m < 10
  int e = 0;
  double m = x;
  while (m >= 10.0) {
    m /= 10.0;
    ++e;
  }
  while (m < 1.0) {
    m *= 10.0;
    --e;
  }
  auto digits = static_cast<unsigned long long>(m * 100000.0 + 0.5);
  if (digits >= 1000000ULL) {
    digits /= 10;
    ++e;
  }
  char d[6]{};
  for (int i = 5; i >= 0; --i) {
    d[i] = static_cast<char>('0' + digits % 10);
    digits /= 10;
  }
  int last = 5;  // drop trailing zeros
  while (last > 0 && d[last] == '0') --last;
  if (e >= -5 && e < 15) {
    if (e < 0) {
      t.append("0.");
      for (int i = -1; i > e; --i) t.append('0');
      for (int i = 0; i <= last; ++i) t.append(d[i]);
    } else {
      for (int i = 0; i <= (e > last ? e : last); ++i) {
        if (i == e + 1) t.append('.');
        t.append(i <= 5 ? d[i] : '0');
      }
    }
    return;
  }
  t.append(d[0]);
  if (last > 0) {
    t.append('.');
    for (int i = 1; i <= last; ++i) t.append(d[i]);
  }
  t.append(e < 0 ? "e-" : "e+");
  append_unsigned(t, static_cast<unsigned long long>(e < 0 ? -e : e));
}

/// "(0, inf)", "[0, 1]", "(-inf, 2]"; "{}" for the empty set.
constexpr interval_text to_text(const interval& a) {
  interval_text t;
  if (a.is_empty()) {
    t.append("{}");
    return t;
  }
  t.append(a.lo_closed ? '[' : '(');
  append_number(t, a.lo);
  t.append(", ");
  append_number(t, a.hi);
  t.append(a.hi_closed ? ']' : ')');
  return t;
}

inline std::string to_string(const interval& a) { return to_text(a).str(); }
inline std::string number_to_string(double x) {
  interval_text t;
  append_number(t, x);
  return t.str();
}

}  // namespace tyche
// ----- end tyche/interval/interval.hpp -----

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace tyche {

// ---- the escape hatch: a support the user vouches for ----------------------------------------

/// Supports for assume_support<S>(x). A support is a type with `static constexpr interval value`.
namespace supports {
struct positive {
  static constexpr interval value = interval::positive();
};
struct nonnegative {
  static constexpr interval value = interval::nonnegative();
};
struct unit_interval {
  static constexpr interval value = interval::closed(0.0, 1.0);
};
/// [Lo, Hi] with integer bounds; Lo < Hi.
template <std::intmax_t Lo, std::intmax_t Hi>
struct closed {
  static_assert(Lo < Hi, "tyche::supports::closed<Lo, Hi> requires Lo < Hi");
  static constexpr interval value = interval::closed(static_cast<double>(Lo), static_cast<double>(Hi));
};
}  // namespace supports

namespace rules {
/// The identity, carrying a support that the user vouches for (assume_support): value x,
/// derivative 1. The support of the node is Support::value, whatever its operand's is.
template <class Support>
struct assume_support {
  static constexpr const char* name = "assume_support";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return x; }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = lift<T>(1.0);
    return x;
  }
};
}  // namespace rules

// ---- the image of every operation --------------------------------------------------------------

namespace detail {

template <class Rule>
struct is_assume_rule : std::false_type {};
template <class S>
struct is_assume_rule<rules::assume_support<S>> : std::true_type {};

/// True for the rules whose image is computed below; any other rule (a new one) is (−∞, ∞).
template <class Rule>
inline constexpr bool known_unary_rule_v =
    std::is_same_v<Rule, rules::negate> || std::is_same_v<Rule, rules::square> ||
    std::is_same_v<Rule, rules::inverse> || std::is_same_v<Rule, rules::sqrt> ||
    std::is_same_v<Rule, rules::abs> || std::is_same_v<Rule, rules::pow_constant> ||
    std::is_same_v<Rule, rules::step> ||
    std::is_same_v<Rule, rules::exp> || std::is_same_v<Rule, rules::log> ||
    std::is_same_v<Rule, rules::log1p> || std::is_same_v<Rule, rules::expm1> ||
    std::is_same_v<Rule, rules::log1p_exp> || std::is_same_v<Rule, rules::logistic> ||
    std::is_same_v<Rule, rules::log_logistic> || std::is_same_v<Rule, rules::log1m_logistic> ||
    std::is_same_v<Rule, rules::tanh> || std::is_same_v<Rule, rules::lgamma> ||
    std::is_same_v<Rule, rules::digamma> || std::is_same_v<Rule, rules::erf> ||
    std::is_same_v<Rule, rules::Phi> || std::is_same_v<Rule, rules::log_Phi> ||
    std::is_same_v<Rule, rules::log_bessel_i0> || std::is_same_v<Rule, rules::cos> ||
    is_assume_rule<Rule>::value;

template <class Rule>
inline constexpr bool known_binary_rule_v =
    std::is_same_v<Rule, rules::add> || std::is_same_v<Rule, rules::subtract> ||
    std::is_same_v<Rule, rules::multiply> || std::is_same_v<Rule, rules::divide> ||
    std::is_same_v<Rule, rules::pow>;

template <class S>
constexpr interval assumed_support(rules::assume_support<S>) { return S::value; }

/// The image of a under the unary rule r.
template <class Rule>
constexpr interval unary_image(const Rule& r, const interval& a) {
  if constexpr (std::is_same_v<Rule, rules::negate>) return -a;
  else if constexpr (std::is_same_v<Rule, rules::square>) return square(a);
  else if constexpr (std::is_same_v<Rule, rules::inverse>) return inverse(a);
  else if constexpr (std::is_same_v<Rule, rules::sqrt>) return sqrt(a);
  else if constexpr (std::is_same_v<Rule, rules::abs>) return abs(a);
  else if constexpr (std::is_same_v<Rule, rules::step>) return step(a);
  else if constexpr (std::is_same_v<Rule, rules::pow_constant>) return pow(a, r.exponent);
  else if constexpr (std::is_same_v<Rule, rules::exp>) return exp(a);
  else if constexpr (std::is_same_v<Rule, rules::log>) return log(a);
  else if constexpr (std::is_same_v<Rule, rules::log1p>) return log1p(a);
  else if constexpr (std::is_same_v<Rule, rules::expm1>) return expm1(a);
  else if constexpr (std::is_same_v<Rule, rules::log1p_exp>) return log1p_exp(a);
  else if constexpr (std::is_same_v<Rule, rules::logistic>) return logistic(a);
  else if constexpr (std::is_same_v<Rule, rules::log_logistic>) return log_logistic(a);
  else if constexpr (std::is_same_v<Rule, rules::log1m_logistic>) return log1m_logistic(a);
  else if constexpr (std::is_same_v<Rule, rules::tanh>) return tanh(a);
  else if constexpr (std::is_same_v<Rule, rules::lgamma>) return lgamma(a);
  else if constexpr (std::is_same_v<Rule, rules::digamma>) return digamma(a);
  else if constexpr (std::is_same_v<Rule, rules::erf>) return erf(a);
  else if constexpr (std::is_same_v<Rule, rules::Phi>) return Phi(a);
  else if constexpr (std::is_same_v<Rule, rules::log_Phi>) return log_Phi(a);
  else if constexpr (std::is_same_v<Rule, rules::log_bessel_i0>) return log_bessel_i0(a);
  else if constexpr (std::is_same_v<Rule, rules::cos>) return cos(a);
  else if constexpr (is_assume_rule<Rule>::value) return assumed_support(r);
  else return interval::whole();
}

template <class Rule>
constexpr interval binary_image(const interval& a, const interval& b) {
  if constexpr (std::is_same_v<Rule, rules::add>) return a + b;
  else if constexpr (std::is_same_v<Rule, rules::subtract>) return a - b;
  else if constexpr (std::is_same_v<Rule, rules::multiply>) return a * b;
  else if constexpr (std::is_same_v<Rule, rules::divide>) return a / b;
  else if constexpr (std::is_same_v<Rule, rules::pow>) return pow(a, b);
  else return interval::whole();
}

/// Σ of n elements of e (n known).
constexpr interval sum_image(std::size_t n, const interval& e) { return scale(static_cast<double>(n), e); }

/// Σ of an unknown number n ≥ 0 of elements of e: 0 when n = 0.
constexpr interval sum_image_any_size(const interval& e) {
  if (e.is_empty()) return interval::point(0.0);
  interval r;
  if (e.lo >= 0) r = {0.0, e.hi <= 0 ? 0.0 : interval::inf, true, e.hi <= 0};
  else if (e.hi <= 0) r = {-interval::inf, 0.0, false, true};
  return r;
}

}  // namespace detail

// ---- vector ops (autodiff/vector_ops.hpp) -------------------------------------------------------

/// x ≥ 0 (closed at 0 allowed) / x > 0 for every point of a.
constexpr bool all_nonnegative(const interval& a) { return !a.is_empty() && a.lo >= 0; }
constexpr bool all_positive(const interval& a) {
  return !a.is_empty() && (a.lo > 0 || (a.lo == 0 && !a.lo_closed));
}

/// The support of the values of a vector_op with op Op, from its operands' supports (in order).
/// ordered_map<true> is positive; a linear recurrence sₜ = aₜ + bₜ sₜ₋₁ stays ≥ 0 (> 0) when a
/// is > 0 (≥ 0) and b and s₋₁ are ≥ 0 (GARCH variances); a gather, a segment and a rep_vector
/// take their operand's support, a stack (append_row, to_vector) the hull of its operands'; a
/// cumulative sum of non-negative terms is non-negative; anything else is the whole line.
template <class Op, std::size_t Arity>
constexpr interval vector_op_image(const interval (&in)[Arity]) {
  if constexpr (requires { Op::positive_result; }) {
    return Op::positive_result ? interval::positive() : interval::whole();
  } else if constexpr (std::string_view(Op::name) == "linear_recurrence") {
    if (all_nonnegative(in[1]) && all_nonnegative(in[2])) {
      if (all_positive(in[0])) return interval::positive();
      if (all_nonnegative(in[0])) return interval::nonnegative();
    }
    return interval::whole();
  } else if constexpr (std::string_view(Op::name) == "gather" ||
                       std::string_view(Op::name) == "segment" ||
                       std::string_view(Op::name) == "rep_vector") {
    return in[0];
  } else if constexpr (std::string_view(Op::name) == "stack") {
    interval r = interval::empty();
    for (const interval& a : in) r = hull(r, a);
    return r;
  } else if constexpr (std::string_view(Op::name) == "cumulative_sum") {
    return all_nonnegative(in[0]) ? interval::nonnegative() : interval::whole();
  } else {
    return interval::whole();
  }
}

// ---- compile time: from the types ------------------------------------------------------------

namespace detail {
template <class N>
constexpr interval compute_support();
template <class N>
constexpr bool compute_support_known();
}  // namespace detail

/// The support of node N as far as its type tells: exact for literals, from the transform for
/// a random variable's value (exp(u) → (0, ∞), logistic(u) → (0, 1), …), (−∞, ∞) for a bare
/// parameter, and (−∞, ∞) for run-time constants and data, whose values the type does not
/// hold (see support_known_v). Computed once per node type.
template <class N>
inline constexpr interval support_of = detail::compute_support<std::remove_cvref_t<N>>();

/// True when support_of<N> depends on no run-time value (no constant, data, run-time size or
/// run-time exponent below N, and no node kind this header does not know): then a support
/// that is not inside a domain is a proof, and the checks fail at compile time.
template <class N>
inline constexpr bool support_known_v = detail::compute_support_known<std::remove_cvref_t<N>>();

namespace detail {

template <class N>
constexpr interval compute_support() {
  constexpr node_kind k = kind_of<N>;
  if constexpr (k == node_kind::literal) {
    return interval::point(N::value);
  } else if constexpr (k == node_kind::unary) {
    using Rule = typename N::rule_type;
    using A = meta::at<0, children_t<N>>;
    if constexpr (is_assume_rule<Rule>::value) return assumed_support(Rule{});
    else if constexpr (std::is_same_v<Rule, rules::pow_constant>) {
      // The exponent is a run-time value: only the sign is known, for a ≥ 0.
      constexpr interval a = support_of<A>;
      if constexpr (a.lo >= 0) return interval{0.0, interval::inf, true, true};
      else return interval::whole();
    } else if constexpr (known_unary_rule_v<Rule>) {
      return unary_image(Rule{}, support_of<A>);
    } else {
      return interval::whole();
    }
  } else if constexpr (k == node_kind::binary) {
    using A = meta::at<0, children_t<N>>;
    using B = meta::at<1, children_t<N>>;
    return binary_image<typename N::rule_type>(support_of<A>, support_of<B>);
  } else if constexpr (k == node_kind::sum) {
    using A = meta::at<0, children_t<N>>;
    if constexpr (extent_v<A> != dynamic_extent) return sum_image(extent_v<A>, support_of<A>);
    else return sum_image_any_size(support_of<A>);
  } else if constexpr (k == node_kind::log_sum_exp) {
    // max ≤ log Σ exp ≤ max + log n, and log n ≤ n − 1.
    using A = meta::at<0, children_t<N>>;
    constexpr interval e = support_of<A>;
    if constexpr (extent_v<A> == 1) return e;
    else if constexpr (extent_v<A> != dynamic_extent)
      return e.is_empty() ? e : e + interval::closed(0.0, static_cast<double>(extent_v<A> - 1));
    else return interval::whole();
  } else if constexpr (k == node_kind::residual_squares) {
    return interval::nonnegative();
  } else if constexpr (k == node_kind::element) {
    return support_of<meta::at<0, children_t<N>>>;
  } else if constexpr (k == node_kind::vector_op) {
    return []<class... Cs>(meta::list<Cs...>) {
      const interval in[sizeof...(Cs)] = {support_of<Cs>...};
      return vector_op_image<typename N::op_type>(in);
    }(children_t<N>{});
  } else {
    // constant, data, parameters (unconstrained), gathered parameters, matvec (data), and any
    // kind added later
    return interval::whole();
  }
}

template <class L>
struct all_children_known;
template <class... Cs>
struct all_children_known<meta::list<Cs...>> : std::bool_constant<(support_known_v<Cs> && ...)> {};

template <class N>
constexpr bool compute_support_known() {
  constexpr node_kind k = kind_of<N>;
  if constexpr (k == node_kind::literal || k == node_kind::param ||
                k == node_kind::vector_param || k == node_kind::param_element ||
                k == node_kind::residual_squares) {
    return true;  // a residual sum of squares is ≥ 0 whatever the data
  } else if constexpr (k == node_kind::unary) {
    using Rule = typename N::rule_type;
    if constexpr (is_assume_rule<Rule>::value) return true;
    else if constexpr (!known_unary_rule_v<Rule> || Rule::has_payload) return false;
    else return all_children_known<children_t<N>>::value;
  } else if constexpr (k == node_kind::binary) {
    return known_binary_rule_v<typename N::rule_type> && !N::rule_type::has_payload &&
           all_children_known<children_t<N>>::value;
  } else if constexpr (k == node_kind::sum || k == node_kind::log_sum_exp) {
    using A = meta::at<0, children_t<N>>;
    return extent_v<A> != dynamic_extent && support_known_v<A>;
  } else if constexpr (k == node_kind::param_gather) {
    return true;  // a parameter: the whole line
  } else if constexpr (k == node_kind::element || k == node_kind::vector_op) {
    return all_children_known<children_t<N>>::value;
  } else {
    return false;  // constant, data, matvec, and any kind added later
  }
}

}  // namespace detail

// ---- construction time: from the values -------------------------------------------------------

namespace detail {
/// [min, max] of n values (NaN makes it the whole line).
inline interval range_of(const double* p, std::size_t n) {
  if (n == 0) return interval::empty();
  double lo = p[0], hi = p[0];
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isnan(p[i])) return interval{-interval::inf, interval::inf, true, true};
    lo = p[i] < lo ? p[i] : lo;
    hi = p[i] > hi ? p[i] : hi;
  }
  return interval::closed(lo, hi);
}

/// log n, as an interval that contains it.
inline interval log_count(std::size_t n) {
  const double l = std::log(static_cast<double>(n));
  return interval::closed(iv::next_down(iv::next_down(l)), iv::next_up(iv::next_up(l)));
}

/// The support of node n with its data read: all elements (Index == false), or only element i
/// of every vector below n (Index == true).
template <bool Index, class N>
interval support_impl(const N& n, std::size_t i) {
  constexpr node_kind k = kind_of<N>;
  if constexpr (k == node_kind::literal) {
    return interval::point(N::value);
  } else if constexpr (k == node_kind::constant) {
    return interval::point(n.value);
  } else if constexpr (k == node_kind::data_vector) {
    if constexpr (Index) return interval::point(n.ptr[i]);
    else return range_of(n.ptr, n.size());
  } else if constexpr (k == node_kind::data_matrix) {
    return range_of(n.ptr, n.rows * n.cols);
  } else if constexpr (k == node_kind::unary) {
    using Rule = typename N::rule_type;
    if constexpr (is_assume_rule<Rule>::value) return assumed_support(Rule{});
    else if constexpr (known_unary_rule_v<Rule>) return unary_image(n.rule, support_impl<Index>(n.a, i));
    else return interval::whole();
  } else if constexpr (k == node_kind::binary) {
    auto child = [&](const auto& c) {
      using C = std::remove_cvref_t<decltype(c)>;
      if constexpr (is_vector_v<C>) return support_impl<Index>(c, i);
      else return support_impl<false>(c, 0);
    };
    return binary_image<typename N::rule_type>(child(n.a), child(n.b));
  } else if constexpr (k == node_kind::sum) {
    return sum_image(n.a.size(), support_impl<false>(n.a, 0));
  } else if constexpr (k == node_kind::log_sum_exp) {
    const std::size_t count = n.a.size();
    if (count == 0) return interval::point(-interval::inf);
    return support_impl<false>(n.a, 0) + log_count(count);
  } else if constexpr (k == node_kind::matvec) {
    // Row i (or any row) of X times v: Σⱼ Xᵢⱼ vⱼ.
    const interval v = support_impl<false>(n.v, 0);
    if constexpr (Index) {
      interval r = interval::point(0.0);
      for (std::size_t j = 0; j < n.x.cols; ++j) r = r + interval::point(n.x.ptr[i * n.x.cols + j]) * v;
      return r;
    } else {
      return scale(static_cast<double>(n.x.cols), range_of(n.x.ptr, n.x.rows * n.x.cols) * v);
    }
  } else if constexpr (k == node_kind::residual_squares) {
    return interval::nonnegative();
  } else if constexpr (k == node_kind::element) {
    return support_impl<false>(n.v, 0);
  } else if constexpr (k == node_kind::vector_op) {
    return [&]<std::size_t... J>(std::index_sequence<J...>) {
      const interval in[sizeof...(J)] = {support_impl<false>(n.template child<J>(), 0)...};
      return vector_op_image<typename N::op_type>(in);
    }(std::make_index_sequence<children_t<N>::size>{});
  } else {
    return interval::whole();  // parameters, and any kind added later
  }
}
}  // namespace detail

/// The support of node n, with the values of its constants and data: what a model built from
/// it can produce. A vector node's support contains all its elements. At least as tight as
/// support_of<N>.
template <class N>
interval support(const N& n) {
  return intersect(detail::support_impl<false>(n, 0), support_of<N>);
}

/// The support of element i of a vector node n (every vector below it taken at index i).
template <class N>
interval support_at(const N& n, std::size_t i) {
  return intersect(detail::support_impl<true>(n, i), support_of<N>);
}

// ---- domains and checks --------------------------------------------------------------------------

/// What an argument of a distribution or operation requires. Each has the interval and the
/// words of the messages.
namespace domains {
struct positive {
  static constexpr interval value = interval::positive();
  static constexpr const char* text = "> 0";
};
struct nonnegative {
  static constexpr interval value = interval::nonnegative();
  static constexpr const char* text = ">= 0";
};
struct probability {
  static constexpr interval value = interval::closed(0.0, 1.0);
  static constexpr const char* text = "in [0, 1]";
};
/// A proportion strictly between 0 and 1 (beta_proportion's mean).
struct open_unit_interval {
  static constexpr interval value = interval::open(0.0, 1.0);
  static constexpr const char* text = "in (0, 1)";
};
/// log1p(x) needs x > −1.
struct greater_than_minus_one {
  static constexpr interval value = interval::open(-1.0, interval::inf);
  static constexpr const char* text = "> -1";
};
}  // namespace domains

/// What a failed compile-time check shows: the support as characters, e.g.
/// support_is<'(', '-', 'i', 'n', 'f', ',', ' ', 'i', 'n', 'f', ')'>. (A string literal cannot
/// be computed into a static_assert message in C++20, and a character pack is the one form both
/// GCC and Clang print readably.)
template <char... C>
struct support_is {
  static constexpr bool ok = false;
};
/// What a passed check gives.
struct support_inside {
  static constexpr bool ok = true;
};

namespace detail {
template <class N>
struct support_is_of {
  static constexpr interval_text text = to_text(support_of<N>);
  template <std::size_t... I>
  static auto make(std::index_sequence<I...>) -> support_is<text.chars[I]...>;
  using type = decltype(make(std::make_index_sequence<text.size>{}));
};

/// A distribution argument fails at compile time when its support is known from the types and
/// is not inside the domain.
template <class N, class Domain>
inline constexpr bool argument_outside_v =
    support_known_v<N> && !support_of<N>.subset_of(Domain::value);

/// An operation's operand fails at compile time when its support is known from the types and
/// has no point in the domain (every value would be outside it).
template <class N, class Domain>
inline constexpr bool operand_never_inside_v =
    support_known_v<N> && support_of<N>.disjoint_from(Domain::value);

template <class N, bool Fails>
struct verdict {
  using type = support_inside;
};
template <class N>
struct verdict<N, true> {
  using type = typename support_is_of<N>::type;
};
}  // namespace detail

/// support_inside when node N may be a distribution argument with domain Domain; else
/// support_is<…> with N's support spelled out. Use as static_assert(argument_support_t<N, D>::ok, "…").
template <class N, class Domain>
using argument_support_t =
    typename detail::verdict<std::remove_cvref_t<N>,
                             detail::argument_outside_v<std::remove_cvref_t<N>, Domain>>::type;

/// support_inside unless the types prove that no value of node N is in Domain.
template <class N, class Domain>
using operand_support_t =
    typename detail::verdict<std::remove_cvref_t<N>,
                             detail::operand_never_inside_v<std::remove_cvref_t<N>, Domain>>::type;

namespace detail {

/// Appends "data[i] = v" for every data vector below n (numbered data#1, data#2, … when there
/// are several).
template <class N>
void describe_data_at(const N& n, std::size_t i, std::string& out, std::size_t& count) {
  if constexpr (kind_of<N> == node_kind::data_vector) {
    ++count;
    out += (out.empty() ? "" : ", ") + std::string("data#") + std::to_string(count) + "[" +
           std::to_string(i + 1) + "] = " + number_to_string(n.ptr[i]);
  } else if constexpr (kind_of<N> == node_kind::matvec) {
    ++count;
    out += (out.empty() ? "" : ", ") + std::string("matrix#") + std::to_string(count) + " row " +
           std::to_string(i + 1);
  } else if constexpr (children_t<N>::size > 0 && kind_of<N> != node_kind::sum &&
                       kind_of<N> != node_kind::log_sum_exp &&
                       requires { n.template child<0>(); }) {
    meta::static_for<children_t<N>::size>([&](auto c) {
      const auto& child = n.template child<decltype(c)::value>();
      if constexpr (is_vector_v<std::remove_cvref_t<decltype(child)>>) describe_data_at(child, i, out, count);
    });
  }
}

/// The construction-time check of a distribution argument (call: "normal(mu, sigma)", name:
/// "sigma"). Throws std::invalid_argument when the support of node, with its data and constants
/// read, is not inside Domain: for a vector argument over data, at the first index whose
/// support is not, naming the index and the data values there.
template <class Domain, class N>
void check_argument(const char* call, const char* name, const N& n) {
  if constexpr (support_known_v<N>) {
    return;  // decided at compile time (argument_support_t)
  } else {
    const interval s = support(n);
    if (s.subset_of(Domain::value)) return;
    const std::string head =
        std::string("tyche::") + call + ": " + name + " must be " + Domain::text + ", but ";
    if constexpr (is_vector_v<N>) {
      for (std::size_t i = 0; i < n.size(); ++i) {
        const interval si = support_at(n, i);
        if (si.subset_of(Domain::value)) continue;
        if constexpr (kind_of<N> == node_kind::data_vector) {
          throw std::invalid_argument(head + name + "[" + std::to_string(i + 1) + "] = " +
                                      number_to_string(n.ptr[i]) + " (data)");
        }
        std::string where;
        std::size_t count = 0;
        describe_data_at(n, i, where, count);
        if (count == 1 && where.rfind("data#1[", 0) == 0) where.erase(4, 2);  // data[i]
        throw std::invalid_argument(head + name + "[" + std::to_string(i + 1) + "] has support " +
                                    to_string(si) + (where.empty() ? "" : " (" + where + ")"));
      }
      return;  // every element is inside; only the hull of all of them was not
    } else {
      throw std::invalid_argument(head + "its support is " + to_string(s));
    }
  }
}

}  // namespace detail

}  // namespace tyche
// ----- end tyche/interval/support.hpp -----
// ----- begin tyche/operations/identities.hpp -----
// tyche/operations/identities.hpp — the identities that make a node vanish as it is built, the
// partial-evaluation rules that need neither a support nor data: x + 0, x · 1, x / 1, …, and a
// literal ∘ literal folded into one literal by the compiler (docs/design/partial-evaluation.md).

#include <cstdint>
#include <type_traits>

namespace tyche::detail {

/// a ∘ b for two literals, done by the compiler in exact rational arithmetic (lit<1, 2> +
/// lit<1, 3> is lit<5, 6>); nothing for a division by lit<0>.
template <class Rule, class A, class B>
inline constexpr bool folds_literals_v =
    literal_parts<A>::is_literal && literal_parts<B>::is_literal &&
    (std::is_same_v<Rule, rules::add> || std::is_same_v<Rule, rules::subtract> ||
     std::is_same_v<Rule, rules::multiply> ||
     (std::is_same_v<Rule, rules::divide> && !is_literal_equal_v<B, 0>));
template <class Rule, class A, class B>
constexpr auto fold_literal_pair() {
  constexpr std::intmax_t n1 = literal_parts<A>::num, d1 = literal_parts<A>::den;
  constexpr std::intmax_t n2 = literal_parts<B>::num, d2 = literal_parts<B>::den;
  if constexpr (std::is_same_v<Rule, rules::add>) return reduced_literal<n1 * d2 + n2 * d1, d1 * d2>();
  else if constexpr (std::is_same_v<Rule, rules::subtract>) return reduced_literal<n1 * d2 - n2 * d1, d1 * d2>();
  else if constexpr (std::is_same_v<Rule, rules::multiply>) return reduced_literal<n1 * n2, d1 * d2>();
  else return reduced_literal<n1 * d2, d1 * n2>();
}

/// The identities that make a node vanish, applied as nodes are built (the partial-evaluation
/// rules that need no support): x + 0, 0 + x, x − 0, x · 1, 1 · x, x / 1 are x; a literal ∘
/// literal is a literal. (0 · x is not 0: x may be ∞ or NaN.)
template <class Rule, class NA, class NB>
inline constexpr int binary_identity_v =
    folds_literals_v<Rule, NA, NB> ? 3
    : ((std::is_same_v<Rule, rules::add> || std::is_same_v<Rule, rules::subtract>) && is_literal_equal_v<NB, 0>) ||
            ((std::is_same_v<Rule, rules::multiply> || std::is_same_v<Rule, rules::divide>) &&
             is_literal_equal_v<NB, 1>)
        ? 1  // the left operand
    : (std::is_same_v<Rule, rules::add> && is_literal_equal_v<NA, 0>) ||
            (std::is_same_v<Rule, rules::multiply> && is_literal_equal_v<NA, 1>)
        ? 2  // the right operand
        : 0;

}  // namespace tyche::detail
// ----- end tyche/operations/identities.hpp -----
// ----- begin tyche/operations/linear.hpp -----
// tyche/operations/linear.hpp — the Line and LogLine normal forms of partial evaluation (Rainier,
// seed 002, "Line" and "LogLine"), applied as nodes are built:
//
//   Line     a + Σᵢ bᵢ·xᵢ   for constants a, bᵢ (literals or run-time constants) and nodes xᵢ,
//            read from any tree of +, −, unary −, × and ÷ by a constant;
//   LogLine  k · Πᵢ xᵢ^pᵢ   for a constant k, literal exponents pᵢ and nodes xᵢ, read from any
//            tree of ×, ÷, square, sqrt, inverse and pow(x, literal).
//
// When an operation combines two Lines (two LogLines), the terms over the same node merge
// their coefficients (exponents), the constants fold into one, and the result is emitted
// again as a tree whenever that tree is cheaper than the one written, or as cheap and with
// fewer terms: x + x is 2·x, (x + 1) + (y + 2) is (x + y) + 3, 2·(3·x) is 6·x, x·x is
// square(x), sqrt(x)·sqrt(x) is x for x ≥ 0. A tree that would not get cheaper is left as the
// user wrote it (2·(x + y) stays: distributing would add a multiply). "Same node" means the same
// type with no run-time payload below it (shareable_v): such a type is one value.
//
// Terms are emitted scalars first (computed once per evaluation, outside any loop), then the
// constant, then vector terms, so a vector Line costs one elementwise operation per vector term.
//
// The rewrites here need no data. Those that need a support (log of a LogLine, exp(log x)) are
// in operations/functions.hpp, next to the functions they rewrite. See
// docs/design/partial-evaluation.md.

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>

namespace tyche::detail {

/// The node Rule(a, b) or Rule(a) for nodes a and b, as written: no rewrite, no size check (what
/// emitting a form builds, its operands already checked).
template <class Rule, class A, class B>
auto plain_binary(const A& a, const B& b) {
  return binary_node<Rule, A, B>{{}, {}, a, b};
}
template <class Rule, class A>
auto plain_unary(const A& a) {
  return unary_node<Rule, A>{{}, {}, a};
}

template <class N, class Rule>
inline constexpr bool is_binary_rule_v = [] {
  if constexpr (kind_of<N> == node_kind::binary) return std::is_same_v<typename N::rule_type, Rule>;
  else return false;
}();
template <class N, class Rule>
inline constexpr bool is_unary_rule_v = [] {
  if constexpr (kind_of<N> == node_kind::unary) return std::is_same_v<typename N::rule_type, Rule>;
  else return false;
}();

/// The Line and LogLine forms: a tree read into a form (decompose_line, decompose_product), the
/// terms over the same node merged (merge_line, merge_product), the cost of the tree as written
/// and as the form would emit it (line_plan, product_plan), and the form emitted as a tree again
/// (emit_line, emit_product).
namespace forms {

// ---- coefficients: literals (exact) and run-time constants -----------------------------------

template <class N>
inline constexpr bool is_coef_v = kind_of<N> == node_kind::literal || kind_of<N> == node_kind::constant;

template <class C>
constexpr double coef_value(const C& c) {
  if constexpr (kind_of<C> == node_kind::literal) return C::value;
  else return c.value;
}

/// −1, 0, +1 for a literal; 2 for a run-time constant (sign unknown in the type).
template <class C>
inline constexpr int coef_sign_v = [] {
  if constexpr (literal_parts<C>::is_literal)
    return literal_parts<C>::num < 0 ? -1 : (literal_parts<C>::num == 0 ? 0 : 1);
  else
    return 2;
}();

template <class A, class B>
auto coef_add(const A& a, const B& b) {
  if constexpr (literal_parts<A>::is_literal && literal_parts<B>::is_literal)
    return fold_literal_pair<rules::add, A, B>();
  else if constexpr (is_literal_equal_v<A, 0>) return b;
  else if constexpr (is_literal_equal_v<B, 0>) return a;
  else return constant{coef_value(a) + coef_value(b)};
}
template <class A, class B>
auto coef_mul(const A& a, const B& b) {
  if constexpr (literal_parts<A>::is_literal && literal_parts<B>::is_literal)
    return fold_literal_pair<rules::multiply, A, B>();
  else if constexpr (is_literal_equal_v<A, 1>) return b;
  else if constexpr (is_literal_equal_v<B, 1>) return a;
  else return constant{coef_value(a) * coef_value(b)};
}
template <class L>
constexpr auto literal_reciprocal() {
  return reduced_literal<literal_parts<L>::den, literal_parts<L>::num>();
}

/// The cost of one operation on node X: elementwise operations on vectors weigh as many scalar
/// ones (a vector of unknown length is taken to be long).
template <class X>
inline constexpr int weight_v = is_vector_v<X> ? 64 : 1;

// ---- a light tuple for the forms (std::tuple's constraints cost compile time here) ----------

template <std::size_t I, class T>
struct light_tuple_slot {
  T value;
};
template <class Seq, class... Ts>
struct light_tuple_base;
template <std::size_t... I, class... Ts>
struct light_tuple_base<std::index_sequence<I...>, Ts...> : light_tuple_slot<I, Ts>... {};

template <class... Ts>
struct light_tuple : light_tuple_base<std::index_sequence_for<Ts...>, Ts...> {
  static constexpr std::size_t size = sizeof...(Ts);
  constexpr light_tuple(const Ts&... ts) : light_tuple_base<std::index_sequence_for<Ts...>, Ts...>{{ts}...} {}
};
template <class... Ts>
light_tuple(Ts...) -> light_tuple<Ts...>;

template <std::size_t I, class T>
constexpr const T& light_get(const light_tuple_slot<I, T>& s) {
  return s.value;
}
template <class... A, class... B>
auto light_concat_two(const light_tuple<A...>& a, const light_tuple<B...>& b) {
  return [&]<std::size_t... I, std::size_t... J>(std::index_sequence<I...>, std::index_sequence<J...>) {
    return light_tuple<A..., B...>(light_get<I>(a)..., light_get<J>(b)...);
  }(std::index_sequence_for<A...>{}, std::index_sequence_for<B...>{});
}
inline auto light_concat() { return light_tuple<>(); }
template <class T, class... R>
auto light_concat(const T& t, const R&... r) {
  if constexpr (sizeof...(R) == 0) return t;
  else return light_concat_two(t, light_concat(r...));
}
template <class F, class T>
decltype(auto) light_apply(F&& f, const T& t) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) -> decltype(auto) {
    return f(light_get<I>(t)...);
  }(std::make_index_sequence<T::size>{});
}

// ---- Line: a + Σ bᵢ·xᵢ --------------------------------------------------------------------------

template <class C, class X>
struct term {
  using coef_type = C;
  using node_type = X;
  C c;
  X x;
};
template <class C, class X>
term(C, X) -> term<C, X>;

template <class Off, class... Ts>
struct line_form {
  using offset_type = Off;
  static constexpr std::size_t size = sizeof...(Ts);
  Off off;
  light_tuple<Ts...> ts;
};

template <class Off, class... Ts>
auto make_line_form(const Off& off, const light_tuple<Ts...>& ts) {
  return line_form<Off, Ts...>{off, ts};
}

/// N is an operation a Line is read through (+, −, unary −, × or ÷ by a constant).
template <class N>
inline constexpr bool is_line_op_v = [] {
  if constexpr (is_binary_rule_v<N, rules::add> || is_binary_rule_v<N, rules::subtract> ||
                is_unary_rule_v<N, rules::negate>) {
    return true;
  } else if constexpr (is_binary_rule_v<N, rules::multiply>) {
    return is_coef_v<meta::at<0, children_t<N>>> || is_coef_v<meta::at<1, children_t<N>>>;
  } else if constexpr (is_binary_rule_v<N, rules::divide>) {
    using B = meta::at<1, children_t<N>>;
    return literal_parts<B>::is_literal && !is_literal_equal_v<B, 0>;
  } else {
    return false;
  }
}();

template <class F, class C>
auto scale_line(const F& f, const C& c) {
  return light_apply(
      [&](const auto&... t) {
        // A missing constant stays missing (a scaled lit<0> would become a run-time 0).
        auto off = [&] {
          if constexpr (is_literal_equal_v<decltype(f.off), 0>) return lit<0>;
          else return coef_mul(f.off, c);
        }();
        return make_line_form(off, light_tuple{term{coef_mul(t.c, c), t.x}...});
      },
      f.ts);
}
template <class F, class G>
auto add_lines(const F& f, const G& g) {
  return make_line_form(coef_add(f.off, g.off), light_concat(f.ts, g.ts));
}

/// n read as a Line, term by term, without merging.
template <class N>
auto decompose_line(const N& n) {
  if constexpr (is_coef_v<N>) {
    return make_line_form(n, light_tuple<>{});
  } else if constexpr (is_binary_rule_v<N, rules::add>) {
    return add_lines(decompose_line(n.a), decompose_line(n.b));
  } else if constexpr (is_binary_rule_v<N, rules::subtract>) {
    return add_lines(decompose_line(n.a), scale_line(decompose_line(n.b), lit<-1>));
  } else if constexpr (is_unary_rule_v<N, rules::negate>) {
    return scale_line(decompose_line(n.a), lit<-1>);
  } else if constexpr (is_line_op_v<N> && is_binary_rule_v<N, rules::multiply>) {
    if constexpr (is_coef_v<decltype(n.a)>) return scale_line(decompose_line(n.b), n.a);
    else return scale_line(decompose_line(n.a), n.b);
  } else if constexpr (is_line_op_v<N> && is_binary_rule_v<N, rules::divide>) {
    return scale_line(decompose_line(n.a), literal_reciprocal<decltype(n.b)>());
  } else {
    return make_line_form(lit<0>, light_tuple{term{lit<1>, n}});
  }
}

/// The cost of the tree as written: the Line operations in it.
template <class N>
constexpr int line_tree_cost() {
  if constexpr (!is_line_op_v<N>) {
    return 0;
  } else if constexpr (kind_of<N> == node_kind::unary) {
    return weight_v<N> + line_tree_cost<meta::at<0, children_t<N>>>();
  } else {
    using A = meta::at<0, children_t<N>>;
    using B = meta::at<1, children_t<N>>;
    return weight_v<N> + line_tree_cost<A>() + line_tree_cost<B>();
  }
}

/// Index of the first of Ts whose node_type is X (sizeof...(Ts) when none).
template <class X, class... Ts>
constexpr std::size_t find_node_index() {
  constexpr bool hit[] = {std::is_same_v<typename Ts::node_type, X>..., true};
  std::size_t i = 0;
  while (!hit[i]) ++i;
  return i;
}

/// Index of the term over node X in Ts (sizeof...(Ts) when there is none, or when X carries a
/// payload: two such nodes of one type may hold different values).
template <class X, class... Ts>
constexpr std::size_t find_node() {
  if constexpr (!shareable_v<X>) {
    return sizeof...(Ts);
  } else {
    return find_node_index<X, Ts...>();
  }
}

template <std::size_t I, class Tuple, class T>
auto replace_at(const Tuple& ts, const T& t) {
  return [&]<std::size_t... J>(std::index_sequence<J...>) {
    auto pick = [&]<std::size_t K>(std::integral_constant<std::size_t, K>) {
      if constexpr (K == I) return t; else return light_get<K>(ts);
    };
    return light_tuple{pick(std::integral_constant<std::size_t, J>{})...};
  }(std::make_index_sequence<Tuple::size>{});
}

/// Two nodes of one type about to be merged: the same value, unless a vector parameter below
/// them was given two sizes (vector_param<"v">(3) and vector_param<"v">(4)), which compile()
/// would report if the merge did not make one of them vanish. Reported here, the same way.
template <class X>
void check_same_sizes(const X& a, const X& b) {
  if constexpr (kind_of<X> == node_kind::vector_param) {
    if (a.size() != b.size())
      throw std::invalid_argument("tyche: vector parameter '" + std::string(X::name.view()) +
                                  "' is used with sizes " + std::to_string(a.size()) + " and " +
                                  std::to_string(b.size()));
  } else if constexpr (!is_leaf_v<X> && children_t<X>::size > 0) {
    meta::static_for<children_t<X>::size>([&](auto c) {
      check_same_sizes(a.template child<decltype(c)::value>(), b.template child<decltype(c)::value>());
    });
  }
}

template <class Off, class... Ts, class C, class X>
auto add_term(const line_form<Off, Ts...>& acc, const term<C, X>& t) {
  constexpr std::size_t i = find_node<X, Ts...>();
  if constexpr (i == sizeof...(Ts)) {
    return make_line_form(acc.off, light_concat(acc.ts, light_tuple{t}));
  } else {
    const auto& old = light_get<i>(acc.ts);
    check_same_sizes(old.x, t.x);
    return make_line_form(acc.off, replace_at<i>(acc.ts, term{coef_add(old.c, t.c), t.x}));
  }
}

template <std::size_t I, class Acc, class F>
auto merge_line_from(const Acc& acc, const F& f) {
  if constexpr (I == F::size) return acc;
  else return merge_line_from<I + 1>(add_term(acc, light_get<I>(f.ts)), f);
}
/// f with the terms over the same node merged (first appearance keeps its place).
template <class F>
auto merge_line(const F& f) {
  return merge_line_from<0>(make_line_form(f.off, light_tuple<>{}), f);
}

/// The order in which a merged form's items are emitted: scalar terms, the constant, vector
/// terms; a term with a coefficient that is not a negative literal goes first in its group when
/// the group comes first (so no negation is needed). Index F::size stands for the constant.
template <std::size_t N>
struct order_t {
  std::array<std::size_t, N + 1> item{};
  std::size_t count = 0;
};

/// The order in which a merged form's items are emitted: scalar terms, the constant, vector
/// terms; a term with a coefficient that is not a negative literal goes first in its group when
/// the group comes first (so no negation is needed). Index N stands for the constant.
template <std::size_t N>
constexpr order_t<N> plan_order(const std::array<bool, N + 1>& vec, const std::array<int, N + 1>& sign,
                                bool has_offset) {
  order_t<N> o;
  for (int vectors = 0; vectors < 2; ++vectors) {
    const std::size_t first = o.count;
    for (std::size_t i = 0; i < N; ++i)
      if (vec[i] == (vectors == 1)) o.item[o.count++] = i;
    if (first == 0 && o.count > 0 && sign[o.item[0]] < 0) {  // lead with a non-negative term
      for (std::size_t j = 1; j < o.count; ++j) {
        if (sign[o.item[j]] >= 0) {
          const std::size_t lead = o.item[j];
          for (std::size_t k = j; k > 0; --k) o.item[k] = o.item[k - 1];
          o.item[0] = lead;
          break;
        }
      }
    }
    if (vectors == 0 && has_offset) o.item[o.count++] = N;
  }
  return o;
}

/// The cost of the emitted tree (same units as tree_cost).
template <std::size_t N>
constexpr int plan_cost(const order_t<N>& o, const std::array<int, N + 1>& sign,
                        const std::array<int, N + 1>& weight, const std::array<bool, N + 1>& unit) {
  int c = 0;
  for (std::size_t j = 0; j < o.count; ++j) {
    const std::size_t i = o.item[j];
    if (i == N) c += j == 0 ? 0 : 1;
    else if (j == 0) c += unit[i] && sign[i] > 0 ? 0 : weight[i];
    else c += unit[i] ? weight[i] : 2 * weight[i];
  }
  return c;
}

template <class F>
struct line_plan;
template <class Off, class... Ts>
struct line_plan<line_form<Off, Ts...>> {
  static constexpr std::size_t n = sizeof...(Ts);
  static constexpr std::array<int, n + 1> sign{coef_sign_v<typename Ts::coef_type>..., 0};
  static constexpr order_t<n> order = plan_order<n>(
      std::array<bool, n + 1>{is_vector_v<typename Ts::node_type>..., false}, sign,
      !is_literal_equal_v<Off, 0>);
  static constexpr int cost = plan_cost<n>(
      order, sign, std::array<int, n + 1>{weight_v<typename Ts::node_type>..., 0},
      std::array<bool, n + 1>{(is_literal_equal_v<typename Ts::coef_type, 1> ||
                               is_literal_equal_v<typename Ts::coef_type, -1>)...,
                              false});
};

/// acc followed by one more item of the Line (acc is none for the first).
struct none {};

template <class Acc, class C, class X>
auto append(const Acc& acc, const term<C, X>& t) {
  if constexpr (std::is_same_v<Acc, none>) {
    if constexpr (is_literal_equal_v<C, 1>) return t.x;
    else if constexpr (is_literal_equal_v<C, -1>) return plain_unary<rules::negate>(t.x);
    else return plain_binary<rules::multiply>(t.c, t.x);
  } else if constexpr (is_literal_equal_v<C, 1>) {
    return plain_binary<rules::add>(acc, t.x);
  } else if constexpr (is_literal_equal_v<C, -1>) {
    return plain_binary<rules::subtract>(acc, t.x);
  } else if constexpr (coef_sign_v<C> == -1) {
    return plain_binary<rules::subtract>(acc, plain_binary<rules::multiply>(coef_mul(t.c, lit<-1>), t.x));
  } else {
    return plain_binary<rules::add>(acc, plain_binary<rules::multiply>(t.c, t.x));
  }
}
template <class Acc, class Off>
auto append_offset(const Acc& acc, const Off& off) {
  if constexpr (std::is_same_v<Acc, none>) return off;
  else if constexpr (coef_sign_v<Off> == -1) return plain_binary<rules::subtract>(acc, coef_mul(off, lit<-1>));
  else return plain_binary<rules::add>(acc, off);
}

template <std::size_t J, class Acc, class F>
auto emit_line_from(const Acc& acc, const F& f) {
  using P = line_plan<F>;
  if constexpr (J == P::order.count) {
    if constexpr (std::is_same_v<Acc, none>) return lit<0>;
    else return acc;
  } else {
    constexpr std::size_t i = P::order.item[J];
    if constexpr (i == F::size) return emit_line_from<J + 1>(append_offset(acc, f.off), f);
    else return emit_line_from<J + 1>(append(acc, light_get<i>(f.ts)), f);
  }
}
/// A merged form as a tree.
template <class F>
auto emit_line(const F& f) {
  return emit_line_from<0>(none{}, f);
}

// The same reading on types alone: what decides whether to rewrite, for every operation built,
// without instantiating the value-level functions above (they run only to rewrite).

template <class A, class B>
using coef_add_t = decltype(coef_add(std::declval<const A&>(), std::declval<const B&>()));
template <class A, class B>
using coef_mul_t = decltype(coef_mul(std::declval<const A&>(), std::declval<const B&>()));

template <class F, class G>
struct add_lines_t;
template <class O1, class... T1, class O2, class... T2>
struct add_lines_t<line_form<O1, T1...>, line_form<O2, T2...>> {
  using type = line_form<coef_add_t<O1, O2>, T1..., T2...>;
};
template <class F, class C>
struct scale_line_t;
template <class O, class... Ts, class C>
struct scale_line_t<line_form<O, Ts...>, C> {
  using offset = std::conditional_t<is_literal_equal_v<O, 0>, literal<0>, coef_mul_t<O, C>>;
  using type = line_form<offset, term<coef_mul_t<typename Ts::coef_type, C>, typename Ts::node_type>...>;
};

template <class N>
constexpr int line_case() {
  if constexpr (is_coef_v<N>) return 1;
  else if constexpr (is_binary_rule_v<N, rules::add>) return 2;
  else if constexpr (is_binary_rule_v<N, rules::subtract>) return 3;
  else if constexpr (is_unary_rule_v<N, rules::negate>) return 4;
  else if constexpr (is_line_op_v<N> && is_binary_rule_v<N, rules::multiply>)
    return is_coef_v<meta::at<0, children_t<N>>> ? 5 : 6;
  else if constexpr (is_line_op_v<N> && is_binary_rule_v<N, rules::divide>) return 7;
  else return 0;
}
template <class N, int Case = line_case<N>()>
struct line_of {
  using type = line_form<literal<0>, term<literal<1>, N>>;
};
template <class N>
struct line_of<N, 1> {
  using type = line_form<N>;
};
template <class N>
struct line_of<N, 2> {
  using type = typename add_lines_t<typename line_of<meta::at<0, children_t<N>>>::type,
                                 typename line_of<meta::at<1, children_t<N>>>::type>::type;
};
template <class N>
struct line_of<N, 3> {
  using type = typename add_lines_t<
      typename line_of<meta::at<0, children_t<N>>>::type,
      typename scale_line_t<typename line_of<meta::at<1, children_t<N>>>::type, literal<-1>>::type>::type;
};
template <class N>
struct line_of<N, 4> {
  using type = typename scale_line_t<typename line_of<meta::at<0, children_t<N>>>::type, literal<-1>>::type;
};
template <class N>
struct line_of<N, 5> {
  using type =
      typename scale_line_t<typename line_of<meta::at<1, children_t<N>>>::type, meta::at<0, children_t<N>>>::type;
};
template <class N>
struct line_of<N, 6> {
  using type =
      typename scale_line_t<typename line_of<meta::at<0, children_t<N>>>::type, meta::at<1, children_t<N>>>::type;
};
template <class N>
struct line_of<N, 7> {
  using type = typename scale_line_t<typename line_of<meta::at<0, children_t<N>>>::type,
                                decltype(literal_reciprocal<meta::at<1, children_t<N>>>())>::type;
};

template <bool Hit, class S, class C, class X>
struct merged_term {
  using type = S;
};
template <class S, class C, class X>
struct merged_term<true, S, C, X> {
  using type = term<coef_add_t<typename S::coef_type, C>, X>;
};
template <class F, class T>
struct add_term_t;
template <class O, class... Ts, class C, class X>
struct add_term_t<line_form<O, Ts...>, term<C, X>> {
  static constexpr std::size_t i = find_node<X, Ts...>();
  template <std::size_t... J>
  static auto replaced(std::index_sequence<J...>) -> line_form<O, typename merged_term<J == i, Ts, C, X>::type...>;
  using type = std::conditional_t<i == sizeof...(Ts), line_form<O, Ts..., term<C, X>>,
                                  decltype(replaced(std::index_sequence_for<Ts...>{}))>;
};
template <class Acc, class... Ts>
struct merge_all {
  using type = Acc;
};
template <class Acc, class T, class... Ts>
struct merge_all<Acc, T, Ts...> : merge_all<typename add_term_t<Acc, T>::type, Ts...> {};
template <class F>
struct merged;
template <class O, class... Ts>
struct merged<line_form<O, Ts...>> {
  using type = typename merge_all<line_form<O>, Ts...>::type;
};

template <class N>
using raw_line_form_t = typename line_of<N>::type;
template <class N>
using merged_line_form_t = typename merged<raw_line_form_t<N>>::type;

/// The number of constants (literals and run-time numbers) the Line of N is read from.
template <class N>
constexpr int offset_pieces() {
  constexpr int c = line_case<N>();
  if constexpr (c == 1) return 1;
  else if constexpr (c == 2 || c == 3)
    return offset_pieces<meta::at<0, children_t<N>>>() + offset_pieces<meta::at<1, children_t<N>>>();
  else if constexpr (c == 4 || c == 6 || c == 7) return offset_pieces<meta::at<0, children_t<N>>>();
  else if constexpr (c == 5) return offset_pieces<meta::at<1, children_t<N>>>();
  else return 0;
}

/// True when N, read as a Line, is emitted cheaper (or as cheap, with fewer terms). AtRoot:
/// N is a whole Line (compile() folds each once, at its root); else N is being built by an
/// operator, inside a Line that may still grow, and merging run-time constants alone is left
/// to compile(): rewriting a growing sum at every + would cost compile time quadratic in its
/// length for one addition saved per constant.
template <class N, bool AtRoot = false>
inline constexpr bool line_rewrites_v = [] {
  if constexpr (!is_line_op_v<N>) {
    return false;
  } else {
    using M = merged_line_form_t<N>;
    using P = line_plan<M>;
    constexpr int pieces = offset_pieces<N>();
    constexpr int deferred =
        !AtRoot && kind_of<typename M::offset_type> == node_kind::constant && pieces > 1 ? pieces - 1 : 0;
    constexpr int before = line_tree_cost<N>();
    constexpr int after = P::cost + deferred;
    return after < before || (after <= before && M::size < raw_line_form_t<N>::size);
  }
}();

// ---- LogLine: k · Π xᵢ^pᵢ (scalar products) ---------------------------------------------------

template <class P, class X>
struct factor {
  using power_type = P;
  using node_type = X;
  X x;
};

template <class K, class... Fs>
struct product_form {
  using coef_type = K;
  static constexpr std::size_t size = sizeof...(Fs);
  K k;
  light_tuple<Fs...> fs;
};
template <class K, class... Fs>
auto make_product_form(const K& k, const light_tuple<Fs...>& fs) {
  return product_form<K, Fs...>{k, fs};
}

template <class N>
inline constexpr bool is_literal_power_v = [] {
  if constexpr (kind_of<N> == node_kind::binary) {
    return std::is_same_v<typename N::rule_type, rules::pow> &&
           literal_parts<meta::at<1, children_t<N>>>::is_literal;
  } else {
    return false;
  }
}();

/// N is a scalar operation a LogLine is read through (×, ÷, square, sqrt, inverse, pow by a
/// literal). A constant times a node is also a Line term: the Line form is tried first.
template <class N>
inline constexpr bool is_product_op_v = [] {
  if constexpr (is_vector_v<N>) return false;
  else
    return is_binary_rule_v<N, rules::multiply> || is_binary_rule_v<N, rules::divide> ||
           is_unary_rule_v<N, rules::square> || is_unary_rule_v<N, rules::sqrt> ||
           is_unary_rule_v<N, rules::inverse> || is_literal_power_v<N>;
}();

/// The exponent the operation N raises its operand to (square 2, sqrt 1/2, …).
template <class N>
constexpr auto power_of_op() {
  if constexpr (is_unary_rule_v<N, rules::square>) return lit<2>;
  else if constexpr (is_unary_rule_v<N, rules::sqrt>) return lit<1, 2>;
  else if constexpr (is_unary_rule_v<N, rules::inverse>) return lit<-1>;
  else return meta::at<1, children_t<N>>{};
}

/// k^p for a coefficient k and a literal p.
template <class K, class P>
auto coef_pow(const K& k, P) {
  if constexpr (is_literal_equal_v<K, 1>) {
    return lit<1>;
  } else if constexpr (literal_parts<K>::is_literal && literal_parts<P>::den == 1 &&
                       literal_parts<P>::num >= 0 && literal_parts<P>::num <= 4) {
    if constexpr (literal_parts<P>::num == 0) return lit<1>;
    else return coef_mul(k, coef_pow(k, reduced_literal<literal_parts<P>::num - 1, 1>()));
  } else if constexpr (literal_parts<K>::is_literal && !is_literal_equal_v<K, 0> &&
                       literal_parts<P>::den == 1 && literal_parts<P>::num < 0 &&
                       literal_parts<P>::num >= -4) {
    return coef_pow(literal_reciprocal<K>(), reduced_literal<-literal_parts<P>::num, 1>());
  } else {
    return constant{std::pow(coef_value(k), P::value)};
  }
}

template <class F, class P>
auto raise_product(const F& f, P p) {
  return light_apply(
      [&](const auto&... g) {
        return make_product_form(
            coef_pow(f.k, p),
            light_tuple{factor<decltype(coef_mul(typename std::remove_cvref_t<decltype(g)>::power_type{}, p)),
                               typename std::remove_cvref_t<decltype(g)>::node_type>{g.x}...});
      },
      f.fs);
}
template <class F, class G>
auto multiply_products(const F& f, const G& g) {
  return make_product_form(coef_mul(f.k, g.k), light_concat(f.fs, g.fs));
}

/// n read as a LogLine, factor by factor, without merging.
template <class N>
auto decompose_product(const N& n) {
  if constexpr (is_coef_v<N>) {
    return make_product_form(n, light_tuple<>{});
  } else if constexpr (!is_product_op_v<N>) {
    return make_product_form(lit<1>, light_tuple{factor<literal<1>, N>{n}});
  } else if constexpr (is_binary_rule_v<N, rules::multiply>) {
    return multiply_products(decompose_product(n.a), decompose_product(n.b));
  } else if constexpr (is_binary_rule_v<N, rules::divide>) {
    return multiply_products(decompose_product(n.a), raise_product(decompose_product(n.b), lit<-1>));
  } else if constexpr (kind_of<N> == node_kind::unary) {
    return raise_product(decompose_product(n.a), power_of_op<N>());
  } else {
    return raise_product(decompose_product(n.a), power_of_op<N>());
  }
}

/// The scalar cost of raising to the literal power P: 0 for 1; one operation for 2, 1/2, −1
/// (square, sqrt, inverse); four for any other (pow is exp(p·log x)).
template <class P>
inline constexpr int power_cost_v =
    (is_literal_equal_v<P, 1> || is_literal_equal_v<P, 0>) ? 0
    : (is_literal_equal_v<P, 2> || is_literal_equal_v<P, 1, 2> || is_literal_equal_v<P, -1>) ? 1
                                                                                           : 4;

template <class N>
constexpr int product_tree_cost() {
  if constexpr (!is_product_op_v<N>) {
    return 0;
  } else if constexpr (kind_of<N> == node_kind::unary) {
    return 1 + product_tree_cost<meta::at<0, children_t<N>>>();
  } else if constexpr (is_literal_power_v<N>) {
    return power_cost_v<decltype(power_of_op<N>())> + product_tree_cost<meta::at<0, children_t<N>>>();
  } else {
    return 1 + product_tree_cost<meta::at<0, children_t<N>>>() + product_tree_cost<meta::at<1, children_t<N>>>();
  }
}

/// True when the tree N reads through only integer powers (no sqrt, no fractional pow): then
/// (xᵃ)ᵇ = xᵃᵇ and (xy)ᵇ = xᵇyᵇ hold for every real x, y.
template <class N>
constexpr bool integer_powers() {
  if constexpr (!is_product_op_v<N>) {
    return true;
  } else if constexpr (is_unary_rule_v<N, rules::sqrt>) {
    return false;
  } else if constexpr (is_literal_power_v<N>) {
    return literal_parts<decltype(power_of_op<N>())>::den == 1 &&
           integer_powers<meta::at<0, children_t<N>>>();
  } else if constexpr (kind_of<N> == node_kind::unary) {
    return integer_powers<meta::at<0, children_t<N>>>();
  } else {
    return integer_powers<meta::at<0, children_t<N>>>() && integer_powers<meta::at<1, children_t<N>>>();
  }
}

template <class X>
inline constexpr bool positive_support_v =
    support_of<X>.lo > 0 || (support_of<X>.lo == 0 && !support_of<X>.lo_closed);
template <class X>
inline constexpr bool nonnegative_support_v = support_of<X>.lo >= 0;

template <class K, class... Fs, class P, class X>
auto add_factor(const product_form<K, Fs...>& acc, const factor<P, X>& f) {
  constexpr std::size_t i = find_node<X, Fs...>();
  if constexpr (i == sizeof...(Fs)) {
    return make_product_form(acc.k, light_concat(acc.fs, light_tuple{f}));
  } else {
    check_same_sizes(light_get<i>(acc.fs).x, f.x);
    using Old = std::remove_cvref_t<decltype(light_get<i>(acc.fs))>;
    using Sum = decltype(coef_add(typename Old::power_type{}, P{}));
    return make_product_form(acc.k, replace_at<i>(acc.fs, factor<Sum, X>{f.x}));
  }
}
template <std::size_t I, class Acc, class F>
auto merge_product_from(const Acc& acc, const F& f) {
  if constexpr (I == F::size) return acc;
  else return merge_product_from<I + 1>(add_factor(acc, light_get<I>(f.fs)), f);
}
template <class F>
auto merge_product(const F& f) {
  return merge_product_from<0>(make_product_form(f.k, light_tuple<>{}), f);
}

/// (A factor whose exponents cancel, x·x⁻¹, is dropped: the bases are positive then, see
/// merge_is_exact, and x⁰ = 1.)
/// Every factor of a raw form over the same node as another has exponents of one sign, or a
/// positive base: then merging them (xᵃ·xᵇ = xᵃ⁺ᵇ) is exact wherever the product is defined.
template <class F>
struct merge_is_exact;
template <class K, class... Fs>
struct merge_is_exact<product_form<K, Fs...>> {
  static constexpr bool value = [] {
    constexpr int sign[] = {(literal_parts<typename Fs::power_type>::num < 0 ? -1 : 1)..., 0};
    constexpr bool positive[] = {positive_support_v<typename Fs::node_type>..., true};
    constexpr std::size_t n = sizeof...(Fs);
    constexpr std::size_t group[] = {find_node_index<typename Fs::node_type, Fs...>()..., 0};
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        if (group[i] == group[j] && i != j && sign[i] != sign[j] && !positive[i]) return false;
    return true;
  }();
};

template <class F>
struct all_bases_positive;
template <class K, class... Fs>
struct all_bases_positive<product_form<K, Fs...>>
    : std::bool_constant<(positive_support_v<typename Fs::node_type> && ...)> {};

/// Emits x^P as its cheapest node (P > 0).
template <class P, class X>
auto power_node(const X& x) {
  if constexpr (is_literal_equal_v<P, 1>) return x;
  else if constexpr (is_literal_equal_v<P, 2>) return plain_unary<rules::square>(x);
  else if constexpr (is_literal_equal_v<P, 1, 2>) return plain_unary<rules::sqrt>(x);
  else return plain_binary<rules::pow>(x, P{});
}

template <class Acc, class X>
auto times(const Acc& acc, const X& x) {
  if constexpr (std::is_same_v<Acc, none>) return x;
  else return plain_binary<rules::multiply>(acc, x);
}

/// The product of the factors with exponents of sign S (+1: numerator; −1: denominator, with
/// the exponent negated), in order; none when there is none.
template <int S, std::size_t I, class Acc, class F>
auto product_from(const Acc& acc, const F& f) {
  if constexpr (I == F::size) {
    return acc;
  } else {
    using G = std::remove_cvref_t<decltype(light_get<I>(f.fs))>;
    using P = typename G::power_type;
    if constexpr (literal_parts<P>::num * S > 0) {
      using Q = decltype(coef_mul(P{}, literal<S>{}));
      return product_from<S, I + 1>(times(acc, power_node<Q>(light_get<I>(f.fs).x)), f);
    } else {
      return product_from<S, I + 1>(acc, f);
    }
  }
}

template <class F>
auto emit_product(const F& f) {
  auto num = product_from<1, 0>(none{}, f);
  auto den = product_from<-1, 0>(none{}, f);
  using Num = decltype(num);
  using Den = decltype(den);
  using K = typename F::coef_type;
  auto with_k = [&](const auto& x) {  // k · x
    if constexpr (is_literal_equal_v<K, 1>) return x;
    else if constexpr (is_literal_equal_v<K, -1>) return plain_unary<rules::negate>(x);
    else return plain_binary<rules::multiply>(f.k, x);
  };
  if constexpr (std::is_same_v<Num, none> && std::is_same_v<Den, none>) {
    return f.k;
  } else if constexpr (std::is_same_v<Den, none>) {
    return with_k(num);
  } else if constexpr (std::is_same_v<Num, none>) {
    if constexpr (is_literal_equal_v<K, 1>) return plain_unary<rules::inverse>(den);
    else return plain_binary<rules::divide>(f.k, den);
  } else {
    return plain_binary<rules::divide>(with_k(num), den);
  }
}

template <class F>
struct product_plan;
template <class K, class... Fs>
struct product_plan<product_form<K, Fs...>> {
  static constexpr int num = ((literal_parts<typename Fs::power_type>::num > 0 ? 1 : 0) + ... + 0);
  static constexpr int den = ((literal_parts<typename Fs::power_type>::num < 0 ? 1 : 0) + ... + 0);
  static constexpr int powers =
      (power_cost_v<std::conditional_t<(literal_parts<typename Fs::power_type>::num < 0),
                                       decltype(coef_mul(typename Fs::power_type{}, lit<-1>)),
                                       typename Fs::power_type>> + ... + 0);
  static constexpr bool unit_k = is_literal_equal_v<K, 1> || is_literal_equal_v<K, -1>;
  static constexpr int cost =
      powers + (num > 1 ? num - 1 : 0) + (den > 1 ? den - 1 : 0) +
      (num > 0 && den > 0 ? 1 : 0) + (num == 0 && den > 0 ? 1 : 0) + (num > 0 && !is_literal_equal_v<K, 1> ? 1 : 0);
};

template <class N>
using raw_product_form_t = decltype(decompose_product(std::declval<const N&>()));
template <class N>
using merged_product_form_t = decltype(merge_product(std::declval<const raw_product_form_t<N>&>()));

/// True when N, read as a LogLine, is emitted cheaper (or as cheap, with fewer factors) and
/// the rewrite is exact: integer powers only, or positive bases.
template <class N>
inline constexpr bool logline_rewrites_v = [] {
  if constexpr (!is_product_op_v<N>) {
    return false;
  } else {
    using R = raw_product_form_t<N>;
    using M = merged_product_form_t<N>;
    constexpr bool exact = (integer_powers<N>() || all_bases_positive<R>::value) && merge_is_exact<R>::value;
    constexpr int before = product_tree_cost<N>();
    return exact && (product_plan<M>::cost < before || (product_plan<M>::cost <= before && M::size < R::size));
  }
}();

template <class F>
struct logs_needed;
template <class K, class... Fs>
struct logs_needed<product_form<K, Fs...>>
    : std::integral_constant<int, ((is_unary_rule_v<typename Fs::node_type, rules::exp> ||
                                    literal_parts<typename Fs::power_type>::num == 0
                                        ? 0
                                        : 1) +
                                   ... + 0)> {};

template <std::size_t I, class Acc, class F>
auto sum_of_logs(const Acc& acc, const F& f) {
  if constexpr (I == F::size) {
    return acc;
  } else {
    const auto& g = light_get<I>(f.fs);
    using P = typename std::remove_cvref_t<decltype(g)>::power_type;
    return sum_of_logs<I + 1>(acc + P{} * log(g.x), f);  // tyche::log, found by ADL
  }
}

}  // namespace forms

template <class N>
constexpr bool log_splits() {
  if constexpr (!forms::is_product_op_v<N>) {
    return false;
  } else {
    using M = forms::merged_product_form_t<N>;
    using K = typename M::coef_type;
    return forms::all_bases_positive<forms::raw_product_form_t<N>>::value && forms::coef_sign_v<K> == 1 &&
           forms::logs_needed<M>::value <= 1;
  }
}
template <class N>
auto log_of_product(const N& n) {
  const auto m = forms::merge_product(forms::decompose_product(n));
  using K = typename decltype(m)::coef_type;
  if constexpr (is_literal_equal_v<K, 1>) return forms::sum_of_logs<0>(lit<0>, m);
  else return forms::sum_of_logs<0>(constant{std::log(forms::coef_value(m.k))}, m);
}
template <class N>
constexpr bool is_unary_log_of_nonnegative() {
  if constexpr (is_unary_rule_v<N, rules::log>) return forms::nonnegative_support_v<meta::at<0, children_t<N>>>;
  else return false;
}

/// The node of a Line operation, in normal form (the hook of make_binary and operator-).
template <class N, bool AtRoot = false>
auto line_normal_form(const N& n) {
  if constexpr (forms::line_rewrites_v<N, AtRoot>) return forms::emit_line(forms::merge_line(forms::decompose_line(n)));
  else if constexpr (forms::logline_rewrites_v<N>)
    return forms::emit_product(forms::merge_product(forms::decompose_product(n)));
  else return n;
}

}  // namespace tyche::detail
// ----- end tyche/operations/linear.hpp -----

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace tyche {

namespace detail {

template <class Rule, class A, class B>
auto make_binary(const A& a, const B& b) {
  using NA = node_t<A>;
  using NB = node_t<B>;
  if constexpr (binary_identity_v<Rule, NA, NB> == 3) {
    return fold_literal_pair<Rule, NA, NB>();
  } else if constexpr (binary_identity_v<Rule, NA, NB> == 1) {
    return as_node(a);
  } else if constexpr (binary_identity_v<Rule, NA, NB> == 2) {
    return as_node(b);
  } else if constexpr (std::is_same_v<Rule, rules::add> || std::is_same_v<Rule, rules::subtract> ||
                       std::is_same_v<Rule, rules::multiply> || std::is_same_v<Rule, rules::divide> ||
                       std::is_same_v<Rule, rules::pow>) {
    return line_normal_form(make_binary_node<Rule>(a, b));
  } else {
    return make_binary_node<Rule>(a, b);
  }
}


}  // namespace detail

// clang-format off
template <detail::operand A> requires expression<A> auto expm1(const A& a) { return detail::make_unary<rules::expm1>(a); }
template <detail::operand A> requires expression<A> auto square(const A& a) { return detail::line_normal_form(detail::make_unary<rules::square>(a)); }
template <detail::operand A> requires expression<A> auto inverse(const A& a) { return detail::line_normal_form(detail::make_unary<rules::inverse>(a)); }
template <detail::operand A> requires expression<A> auto lgamma(const A& a) { return detail::make_unary<rules::lgamma>(a); }
template <detail::operand A> requires expression<A> auto digamma(const A& a) { return detail::make_unary<rules::digamma>(a); }
template <detail::operand A> requires expression<A> auto logistic(const A& a) { return detail::make_unary<rules::logistic>(a); }
template <detail::operand A> requires expression<A> auto inv_logit(const A& a) { return detail::make_unary<rules::logistic>(a); }
template <detail::operand A> requires expression<A> auto log_logistic(const A& a) { return detail::make_unary<rules::log_logistic>(a); }
template <detail::operand A> requires expression<A> auto log1m_logistic(const A& a) { return detail::make_unary<rules::log1m_logistic>(a); }
template <detail::operand A> requires expression<A> auto log1p_exp(const A& a) { return detail::make_unary<rules::log1p_exp>(a); }
template <detail::operand A> requires expression<A> auto tanh(const A& a) { return detail::make_unary<rules::tanh>(a); }
template <detail::operand A> requires expression<A> auto erf(const A& a) { return detail::make_unary<rules::erf>(a); }
template <detail::operand A> requires expression<A> auto Phi(const A& a) { return detail::make_unary<rules::Phi>(a); }
/// log Φ(a), finite where Φ(a) underflows (a < −38); std_normal_lcdf is Stan's name for it.
template <detail::operand A> requires expression<A> auto log_Phi(const A& a) { return detail::make_unary<rules::log_Phi>(a); }
template <detail::operand A> requires expression<A> auto std_normal_lcdf(const A& a) { return detail::make_unary<rules::log_Phi>(a); }
/// log I₀(a), I₀ the modified Bessel function of the first kind of order 0 (Stan's
/// log_modified_bessel_first_kind(0, a)), without overflow for large a.
template <detail::operand A> requires expression<A> auto log_bessel_i0(const A& a) { return detail::make_unary<rules::log_bessel_i0>(a); }
template <detail::operand A> requires expression<A> auto cos(const A& a) { return detail::make_unary<rules::cos>(a); }
template <detail::operand A> requires expression<A> auto abs(const A& a) { return detail::make_unary<rules::abs>(a); }
/// Stan's step(a): 0 where a < 0, else 1, with derivative 0 (an indicator: step(s - t - 0.5) is 1
/// where t < s for integers s, t).
template <detail::operand A> requires expression<A> auto step(const A& a) { return detail::make_unary<rules::step>(a); }

// clang-format on

// log (below, with its rewrites), log1p and sqrt check their operand's support
// (interval/support.hpp): compilation fails when the types prove that no value of the operand is
// in the function's domain, e.g. log(-exp(x)). An operand that may leave the domain (log of a bare
// parameter) is allowed: see docs/design/partial-evaluation.md, "Supports and checks", for why
// operations are checked less strictly than distribution arguments.
template <detail::operand A> requires expression<A> auto log1p(const A& a) {
  static_assert(operand_support_t<detail::node_t<A>, domains::greater_than_minus_one>::ok,
                "tyche::log1p(x): x must be > -1 somewhere, but its support (the interval spelled "
                "out in tyche::support_is<...> in this diagnostic) has no value > -1");
  return detail::make_unary<rules::log1p>(a);
}
template <detail::operand A> requires expression<A> auto sqrt(const A& a) {
  static_assert(operand_support_t<detail::node_t<A>, domains::nonnegative>::ok,
                "tyche::sqrt(x): x must be >= 0 somewhere, but its support (the interval spelled "
                "out in tyche::support_is<...> in this diagnostic) has no value >= 0");
  return detail::line_normal_form(detail::make_unary<rules::sqrt>(a));
}

// clang-format off
template <detail::operand A, detail::operand B> requires (expression<A> || expression<B>)
auto operator+(const A& a, const B& b) { return detail::make_binary<rules::add>(a, b); }
template <detail::operand A, detail::operand B> requires (expression<A> || expression<B>)
auto operator-(const A& a, const B& b) { return detail::make_binary<rules::subtract>(a, b); }
template <detail::operand A, detail::operand B> requires (expression<A> || expression<B>)
auto operator*(const A& a, const B& b) { return detail::make_binary<rules::multiply>(a, b); }
template <detail::operand A, detail::operand B> requires (expression<A> || expression<B>)
auto operator/(const A& a, const B& b) { return detail::make_binary<rules::divide>(a, b); }
// clang-format on

/// log a. log of a product of powers with positive bases becomes a sum of logs when that needs
/// no more logs than one (log(σ²) is 2·log σ, log(e^a·σ) is a + log σ; operations/linear.hpp).
/// log(logistic(x)) becomes log_logistic(x) (finite for every x). log(exp(x)) is x itself (exact where the two nodes would round, and finite where
/// exp(x) under- or overflows): the rewrite of the partial-evaluation rules that needs no support.
template <detail::operand A>
  requires expression<A>
auto log(const A& a) {
  using N = detail::node_t<A>;
  static_assert(operand_support_t<N, domains::positive>::ok,
                "tyche::log(x): x must be > 0 somewhere, but its support (the interval spelled "
                "out in tyche::support_is<...> in this diagnostic) has no positive value");
  if constexpr (detail::log_splits<N>()) {
    return detail::log_of_product(detail::as_node(a));  // log(k·Π xᵢ^pᵢ) = log k + Σ pᵢ log xᵢ
  } else if constexpr (kind_of<N> == node_kind::unary) {
    if constexpr (std::is_same_v<typename N::rule_type, rules::exp>) return detail::as_node(a).a;
    else if constexpr (std::is_same_v<typename N::rule_type, rules::logistic>)
      return detail::make_unary<rules::log_logistic>(detail::as_node(a).a);  // log σ(x), stable
    else return detail::make_unary<rules::log>(a);
  } else {
    return detail::make_unary<rules::log>(a);
  }
}

/// eᵃ. exp(log(x)) is x where the support of x is inside [0, ∞) (interval/support.hpp): there the
/// two are equal (exp(log 0) = 0), elsewhere log(x) would be NaN, so the rewrite needs it.
template <detail::operand A>
  requires expression<A>
auto exp(const A& a) {
  using N = detail::node_t<A>;
  if constexpr (detail::is_unary_log_of_nonnegative<N>()) return detail::as_node(a).a;
  else return detail::make_unary<rules::exp>(a);
}

/// −a; −(−x) is x and −lit<n, d> is lit<−n, d>.
template <detail::operand A>
  requires expression<A>
auto operator-(const A& a) {
  using N = detail::node_t<A>;
  if constexpr (detail::literal_parts<N>::is_literal) {
    return literal<-detail::literal_parts<N>::num, detail::literal_parts<N>::den>{};
  } else if constexpr (kind_of<N> == node_kind::unary) {
    if constexpr (std::is_same_v<typename N::rule_type, rules::negate>) return detail::as_node(a).a;
    else return detail::line_normal_form(detail::make_unary<rules::negate>(a));
  } else {
    return detail::line_normal_form(detail::make_unary<rules::negate>(a));
  }
}

/// log(1 − a); log1m(logistic(x)) is log1m_logistic(x), finite for every x.
template <detail::operand A>
  requires expression<A>
auto log1m(const A& a) {
  using N = detail::node_t<A>;
  if constexpr (kind_of<N> == node_kind::unary) {
    if constexpr (std::is_same_v<typename N::rule_type, rules::logistic>)
      return detail::make_unary<rules::log1m_logistic>(detail::as_node(a).a);
    else return log1p(-detail::as_node(a));
  } else {
    return log1p(-detail::as_node(a));
  }
}

/// log(eᵃ + eᵇ), elementwise (a scalar operand is broadcast).
template <detail::operand A, detail::operand B>
  requires(expression<A> || expression<B>)
auto log_add_exp(const A& a, const B& b) {
  return detail::make_binary<rules::log_add_exp>(a, b);
}

/// aᵇ. A plain-number exponent makes the cheaper one-operand node x^c.
template <detail::operand A, detail::operand B>
  requires(expression<A> || expression<B>)
auto pow(const A& a, const B& b) {
  using NB = detail::node_t<B>;
  if constexpr (arithmetic<B>) {
    return detail::make_unary(a, rules::pow_constant{static_cast<double>(b)});
  } else if constexpr (detail::is_literal_equal_v<NB, 1>) {  // literal exponents: x¹ is x, and
    return detail::as_node(a);                              // x², x^½, x⁻¹ their cheaper nodes
  } else if constexpr (detail::is_literal_equal_v<NB, 2>) {
    return square(a);
  } else if constexpr (detail::is_literal_equal_v<NB, 1, 2>) {
    return sqrt(a);
  } else if constexpr (detail::is_literal_equal_v<NB, -1>) {
    return inverse(a);
  } else {
    return detail::make_binary<rules::pow>(a, b);
  }
}

/// Σᵢ aᵢ.
template <expression A>
auto sum(const A& a) {
  using N = detail::node_t<A>;
  static_assert(is_vector_v<N>,
                "tyche::sum(a) requires 'a' to be a vector expression; it is a scalar");
  return sum_node<N>{{}, detail::as_node(a)};
}

namespace detail {
/// Σ over the elements of a vector expression, the expression itself for a scalar: the log
/// density of a distribution or the log-Jacobian of a transform from its elementwise terms.
template <class E>
auto total(const E& e) {
  if constexpr (is_vector_v<node_t<E>>) return sum(e);
  else return as_node(e);
}
}  // namespace detail

/// Σᵢ aᵢ bᵢ.
template <detail::operand A, detail::operand B>
  requires(expression<A> && expression<B>)
auto dot(const A& a, const B& b) {
  static_assert(is_vector_v<detail::node_t<A>> && is_vector_v<detail::node_t<B>>,
                "tyche::dot(a, b) requires 'a' and 'b' to be vector expressions");
  return sum(a * b);
}

/// log Σᵢ exp(aᵢ).
template <expression A>
auto log_sum_exp(const A& a) {
  using N = detail::node_t<A>;
  static_assert(is_vector_v<N>,
                "tyche::log_sum_exp(a) requires 'a' to be a vector expression; it is a scalar");
  return log_sum_exp_node<N>{{}, detail::as_node(a)};
}

/// log(eᵃ + eᵇ + …) of two or more operands, elementwise (Stan's log_sum_exp(a, b)): log_add_exp
/// applied left to right; a scalar operand is broadcast.
template <detail::operand A, detail::operand B, detail::operand... C>
  requires(expression<A> || expression<B> || (expression<C> || ...))
auto log_sum_exp(const A& a, const B& b, const C&... c) {
  if constexpr (sizeof...(C) == 0) return log_add_exp(a, b);
  else return log_sum_exp(log_add_exp(a, b), c...);
}

/// Element k (0-based) of a vector expression, as a scalar expression: at(theta, 2) is
/// theta[3] in Stan's 1-based notation. Elementwise operations distribute over the index
/// (at(exp(v), k) = exp(at(v, k))); a data element is read now.
template <expression A>
auto at(const A& wrapped, std::size_t k) {
  using N = detail::node_t<A>;
  static_assert(is_vector_v<N>, "tyche::at(v, k) requires 'v' to be a vector expression");
  const N n = detail::as_node(wrapped);
  if (k >= n.size())
    throw std::out_of_range("tyche::at(v, k): index " + std::to_string(k) + " is past the end of a "
                            "vector of size " + std::to_string(n.size()));
  if constexpr (kind_of<N> == node_kind::vector_param) {
    return param_element<N>{{}, n, k};
  } else if constexpr (kind_of<N> == node_kind::data_vector) {
    return constant{n.ptr[k]};
  } else if constexpr (kind_of<N> == node_kind::unary) {
    auto a = at(n.a, k);
    return unary_node<typename N::rule_type, decltype(a)>{{}, n.rule, a};
  } else if constexpr (kind_of<N> == node_kind::binary) {
    auto pick = [k](const auto& x) {
      if constexpr (is_vector_v<std::remove_cvref_t<decltype(x)>>) return at(x, k);
      else return x;
    };
    auto a = pick(n.a);
    auto b = pick(n.b);
    return binary_node<typename N::rule_type, decltype(a), decltype(b)>{{}, n.rule, a, b};
  } else if constexpr (is_buffered_v<N>) {
    return element_node<N>{{}, n, k};
  } else {
    static_assert(kind_of<N> == node_kind::param_gather);
    using V = typename N::vector_type;
    return param_element<V>{{}, n.vector, n.position(k)};
  }
}

/// x, with the support S::value (a type from tyche::supports, or any type with a
/// `static constexpr interval value`) in place of the one computed for it: the escape hatch of
/// the support checks, for an argument the user knows to be inside its domain where interval
/// arithmetic cannot prove it (e.g. b − a for b > a by construction). The value and the gradient
/// are x's; nothing is checked at run time. `normal(mu, assume_support<supports::positive>(s))`.
template <class S, expression A>
auto assume_support(const A& x) {
  static_assert(requires { S::value; } && std::is_same_v<std::remove_cvref_t<decltype(S::value)>, interval>,
                "tyche::assume_support<S>(x) requires 'S' to have a static constexpr tyche::interval "
                "'value' (see tyche::supports)");
  return detail::make_unary<rules::assume_support<S>>(x);
}
/// assume_support<supports::positive>(x): x > 0.
template <expression A>
auto assume_positive(const A& x) {
  return assume_support<supports::positive>(x);
}
/// assume_support<supports::nonnegative>(x): x ≥ 0.
template <expression A>
auto assume_nonnegative(const A& x) {
  return assume_support<supports::nonnegative>(x);
}
/// assume_support<supports::unit_interval>(x): 0 ≤ x ≤ 1.
template <expression A>
auto assume_probability(const A& x) {
  return assume_support<supports::unit_interval>(x);
}

/// X v: a data matrix times a vector expression. A vector parameter v makes the matvec node
/// (streamed through its loop, or a normal likelihood's sufficient statistics); any other
/// vector (elementwise, a vector_op, data) a vector_op that reads X in place
/// (ops::data_matvec_map); data times data is computed once, when the model is built.
template <expression V>
auto matvec(const data_matrix& x, const V& v) {
  using N = detail::node_t<V>;
  static_assert(is_vector_v<N>, "tyche::matvec(X, v) requires 'v' to be a vector expression");
  const N node = detail::as_node(v);
  if (x.cols != node.size())
    throw std::invalid_argument("tyche::matvec(X, v): X has " + std::to_string(x.cols) +
                                " columns but v has size " + std::to_string(node.size()));
  if constexpr (kind_of<N> == node_kind::vector_param) return matvec_node<N>{{}, x, node};
  else {
    detail::check_matrix_finite(x, "matvec(X, v)", "X");
    return make_vector_op(ops::data_matvec_map{x.ptr, x.rows, x.cols}, x.rows, node);
  }
}
template <expression V>
auto operator*(const data_matrix& x, const V& v) {
  return matvec(x, v);
}

}  // namespace tyche
// ----- end tyche/operations/functions.hpp -----
// ----- begin tyche/operations/vectors.hpp -----
// tyche/operations/vectors.hpp — the functions that make vectors that are not elementwise:
// cumulative_sum, linear_recurrence, cholesky_multiply, gather, rep_vector, append_row,
// to_vector, head, tail and segment. Each makes a vector_op node (core/nodes.hpp) whose op, with
// its forward step and vector–Jacobian product, is in autodiff/vector_ops.hpp; the evaluator
// materialises the operands, runs the op into a buffer of the workspace and, in the reverse pass,
// its vector–Jacobian product. gather and segment go through elementwise operations down to
// the leaves (a gathered parameter is read in the loop, a segment of data is a view). softmax
// and log_softmax are written with log_sum_exp, so that their gradients are generated and they
// fuse into the loops that consume them. See docs/design/vector-ops.md.

#include <concepts>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace tyche {

namespace detail {
/// gather through elementwise operations down to the leaves, as at() does for one element:
/// gather(exp(u), idx) = exp(gather(u, idx)), so a gathered parameter is read in the loop.
/// The indices must have been checked.
template <std::size_t Shift = 0, class Index, class N>
auto gather_node(const N& n, const Index* idx, std::size_t len) {
  if constexpr (kind_of<N> == node_kind::vector_param) {
    return param_gather<N, Index, Shift>{{}, n, idx, len};
  } else if constexpr (kind_of<N> == node_kind::unary) {
    auto a = gather_node<Shift>(n.a, idx, len);
    return unary_node<typename N::rule_type, decltype(a)>{{}, n.rule, a};
  } else if constexpr (kind_of<N> == node_kind::binary) {
    auto pick = [&](const auto& x) {
      if constexpr (is_vector_v<std::remove_cvref_t<decltype(x)>>) return gather_node<Shift>(x, idx, len);
      else return x;
    };
    auto a = pick(n.a);
    auto b = pick(n.b);
    return binary_node<typename N::rule_type, decltype(a), decltype(b)>{{}, n.rule, a, b};
  } else {
    return make_vector_op(ops::gather_map<Index, Shift>{idx, len}, len, n);
  }
}
}  // namespace detail

/// xₖ = Σ_{j ≤ k} aⱼ.
template <expression A>
auto cumulative_sum(const A& a) {
  using N = detail::node_t<A>;
  static_assert(is_vector_v<N>, "tyche::cumulative_sum(a) requires 'a' to be a vector expression");
  const N n = detail::as_node(a);
  return make_vector_op(ops::cumulative_sum_map{}, n.size(), n);
}

/// The first-order linear recurrence sₜ = aₜ + b·sₜ₋₁ (t = 0 … n−1), s₋₁ = s0: a vector of the
/// size of a. b is a scalar or a vector of a's size (then sₜ = aₜ + bₜ sₜ₋₁). Written once,
/// it covers AR(1) filters, exponential smoothing and GARCH variances:
///   σ²ₜ = α₀ + α₁ r²ₜ₋₁ + β₁ σ²ₜ₋₁  is  linear_recurrence(alpha0 + alpha1 * square(r_prev), beta1, s0).
template <detail::operand A, detail::operand B, detail::operand S0>
  requires(expression<A> || expression<B> || expression<S0>)
auto linear_recurrence(const A& a, const B& b, const S0& s0) {
  using NA = detail::node_t<A>;
  using NB = detail::node_t<B>;
  using NS = detail::node_t<S0>;
  static_assert(is_vector_v<NA>,
                "tyche::linear_recurrence(a, b, s0) requires 'a' to be a vector expression");
  static_assert(!is_vector_v<NS>,
                "tyche::linear_recurrence(a, b, s0) requires 's0' (the value before the first) to "
                "be a scalar");
  const NA na = detail::as_node(a);
  const NB nb = detail::as_node(b);
  if constexpr (is_vector_v<NB>) {
    if (nb.size() != na.size())
      throw std::invalid_argument("tyche::linear_recurrence(a, b, s0): 'b' has size " +
                                  std::to_string(nb.size()) + " but 'a' has size " +
                                  std::to_string(na.size()));
  }
  return make_vector_op(ops::linear_recurrence_map{}, na.size(), na, nb, detail::as_node(s0));
}

/// L z with L the lower Cholesky factor of the K × K matrix whose K² entries (row major) are
/// the vector expression c; z a vector of K. Stan's `cholesky_decompose(C) * z`: the latent
/// values of a Gaussian process in non-centred form, f = cholesky_multiply(C, f_tilde) with
/// f_tilde ~ std_normal, C = α² exp(−d²/(2ρ²)) + jitter·I built elementwise from data.
/// Gradients flow to the entries of C (lower triangle) and to z.
template <expression C, expression Z>
auto cholesky_multiply(const C& c, const Z& z) {
  using NC = detail::node_t<C>;
  using NZ = detail::node_t<Z>;
  static_assert(is_vector_v<NC> && is_vector_v<NZ>,
                "tyche::cholesky_multiply(c, z) requires 'c' (the K*K entries of the matrix, row "
                "major) and 'z' (K values) to be vector expressions");
  const NC nc = detail::as_node(c);
  const NZ nz = detail::as_node(z);
  if (nc.size() != nz.size() * nz.size())
    throw std::invalid_argument("tyche::cholesky_multiply(c, z): 'c' has " + std::to_string(nc.size()) +
                                " entries but 'z' has size " + std::to_string(nz.size()) +
                                " (c must hold the " + std::to_string(nz.size() * nz.size()) +
                                " entries of a square matrix, row major)");
  return make_vector_op(ops::cholesky_multiply_map{}, nz.size(), nc, nz);
}

/// (v[idx[0]], v[idx[1]], …): v indexed by data, 0-based (Stan's v[idx] with idx − 1), e.g. the
/// group effect of each observation: `normal(alpha + gather(a, group), sigma).observe(y)`.
/// Every index is checked against v's size now. The indices are viewed, not copied: like data,
/// they must outlive the model and must not change after it is compiled.
template <expression V>
auto gather(const V& v, std::span<const int> idx) {
  using N = detail::node_t<V>;
  static_assert(is_vector_v<N>, "tyche::gather(v, idx) requires 'v' to be a vector expression");
  const N n = detail::as_node(v);
  for (std::size_t i = 0; i < idx.size(); ++i) {
    if (idx[i] < 0 || static_cast<std::size_t>(idx[i]) >= n.size())
      throw std::out_of_range("tyche::gather(v, idx): idx[" + std::to_string(i + 1) + "] = " +
                              std::to_string(idx[i]) + " is outside 0 … " +
                              std::to_string(n.size()) + " − 1 (indices are 0-based; v has size " +
                              std::to_string(n.size()) + ")");
  }
  return detail::gather_node(n, idx.data(), idx.size());
}
template <expression V>
auto gather(const V& v, const std::vector<int>& idx) {
  return gather(v, std::span<const int>(idx));
}
/// A temporary index vector would dangle: keep the indices alive beside the data.
template <expression V>
auto gather(const V& v, std::vector<int>&& idx) = delete;

// ---- softmax ----------------------------------------------------------------------------------

/// vₖ − log Σⱼ exp vⱼ: the log of softmax(v), stable (log_sum_exp shifts by the maximum) and
/// finite wherever v is. An elementwise expression of v and one scalar log_sum_exp node: its
/// gradient is generated, and it fuses into the loop that consumes it (no buffer).
/// `target(dot(data(counts), log_softmax(beta)))` is a multinomial-logit log likelihood.
template <expression V>
auto log_softmax(const V& v) {
  using N = detail::node_t<V>;
  static_assert(is_vector_v<N>, "tyche::log_softmax(v) requires 'v' to be a vector expression");
  const N n = detail::as_node(v);
  return n - log_sum_exp(n);
}

/// exp vₖ / Σⱼ exp vⱼ, computed as exp(vₖ − log_sum_exp(v)) (every exponent ≤ 0: no overflow),
/// with the support [0, 1]: a probability vector (categorical(theta)). Where only its log is
/// needed, log_softmax(v) is exact where this underflows.
template <expression V>
auto softmax(const V& v) {
  using N = detail::node_t<V>;
  static_assert(is_vector_v<N>, "tyche::softmax(v) requires 'v' to be a vector expression");
  const N n = detail::as_node(v);
  return assume_probability(exp(n - log_sum_exp(n)));
}

// ---- rep_vector, append_row, to_vector -------------------------------------------------------

/// N copies of the scalar x, N fixed at compile time: `rep_vector<3>(mu)`.
template <std::size_t N, detail::operand X>
auto rep_vector(const X& x) {
  static_assert(!is_vector_v<detail::node_t<X>>,
                "tyche::rep_vector(x, n) requires 'x' to be a scalar expression");
  return make_vector_op(ops::rep_map<N>{}, N, detail::as_node(x));
}
/// n copies of the scalar x, n given at run time: Stan's rep_vector(x, n).
template <detail::operand X>
auto rep_vector(const X& x, std::size_t n) {
  static_assert(!is_vector_v<detail::node_t<X>>,
                "tyche::rep_vector(x, n) requires 'x' to be a scalar expression");
  return make_vector_op(ops::rep_map<>{}, n, detail::as_node(x));
}
/// rep_vector(x, shape<N>) (static size) and rep_vector(x, shape_of(n)) (run-time size).
template <detail::operand X, class S>
  requires(!std::is_arithmetic_v<S> && requires(const S& s) {
    { s.size } -> std::convertible_to<std::size_t>;
  })
auto rep_vector(const X& x, const S& shape) {
  if constexpr (std::is_pointer_v<decltype(&S::size)>) return rep_vector<S::size>(x);  // a static member
  else return rep_vector(x, static_cast<std::size_t>(shape.size));
}

/// a then b, one vector (Stan's append_row for vectors): each is a vector or a scalar, at least
/// one a vector. Its size is static when both sizes are.
template <detail::operand A, detail::operand B>
  requires(expression<A> || expression<B>)
auto append_row(const A& a, const B& b) {
  using NA = detail::node_t<A>;
  using NB = detail::node_t<B>;
  static_assert(is_vector_v<NA> || is_vector_v<NB>,
                "tyche::append_row(a, b) requires 'a' or 'b' to be a vector expression (to make a "
                "vector of scalars, use to_vector(x...))");
  const NA na = detail::as_node(a);
  const NB nb = detail::as_node(b);
  return make_vector_op(ops::stack_map{}, detail::operand_size(na) + detail::operand_size(nb), na, nb);
}
/// append_row(a, b).
template <detail::operand A, detail::operand B>
  requires(expression<A> || expression<B>)
auto append(const A& a, const B& b) {
  return append_row(a, b);
}

/// The vector (x₀, x₁, …) of K scalar expressions (plain numbers allowed beside them), K fixed
/// at compile time: `to_vector(mu, mu + delta, 0.0)`.
template <detail::operand... X>
  requires(sizeof...(X) > 0 && (expression<X> || ...))
auto to_vector(const X&... x) {
  static_assert((!is_vector_v<detail::node_t<X>> && ...),
                "tyche::to_vector(x...) requires every argument to be a scalar expression (to join "
                "vectors, use append_row(a, b))");
  return make_vector_op(ops::stack_map{}, sizeof...(X), detail::as_node(x)...);
}

// ---- head, tail, segment ---------------------------------------------------------------------

namespace detail {
template <class Op>
struct is_segment_map : std::false_type {};
template <std::size_t M>
struct is_segment_map<ops::segment_map<M>> : std::true_type {};

/// Elements offset … offset + len − 1 (0-based, checked) of n, with static size Len (or
/// dynamic_extent). Through elementwise operations down to the leaves, as gather_node: a data
/// vector becomes a view of its part, a gathered parameter a gather of part of its indices, a
/// matvec (dynamic sizes) the matvec of some of X's rows; a parameter vector or a vector_op
/// becomes a segment vector_op (two segments merge into one).
template <std::size_t Len, class N>
auto segment_node(const N& n, std::size_t offset, std::size_t len) {
  if constexpr (kind_of<N> == node_kind::data_vector) {
    return data_vector<Len>{{}, n.ptr + offset, len, n.name};
  } else if constexpr (kind_of<N> == node_kind::param_gather && Len == dynamic_extent) {
    return N{{}, n.vector, n.index + offset, len};
  } else if constexpr (kind_of<N> == node_kind::matvec && !is_streamed_v<N> && Len == dynamic_extent) {
    return N{{}, matrix(n.x.ptr + offset * n.x.cols, len, n.x.cols), n.v};
  } else if constexpr (kind_of<N> == node_kind::unary) {
    auto a = segment_node<Len>(n.a, offset, len);
    return unary_node<typename N::rule_type, decltype(a)>{{}, n.rule, a};
  } else if constexpr (kind_of<N> == node_kind::binary) {
    auto pick = [&](const auto& x) {
      if constexpr (is_vector_v<std::remove_cvref_t<decltype(x)>>) return segment_node<Len>(x, offset, len);
      else return x;
    };
    auto a = pick(n.a);
    auto b = pick(n.b);
    return binary_node<typename N::rule_type, decltype(a), decltype(b)>{{}, n.rule, a, b};
  } else if constexpr (kind_of<N> == node_kind::vector_op) {
    if constexpr (is_segment_map<typename N::op_type>::value)
      return make_vector_op(ops::segment_map<Len>{n.op.offset + offset}, len, n.template child<0>());
    else return make_vector_op(ops::segment_map<Len>{offset}, len, n);
  } else {
    return make_vector_op(ops::segment_map<Len>{offset}, len, n);
  }
}

/// Checks that elements first … first + len − 1 (1-based) are inside a vector of size; fn is how
/// the call is written.
inline void check_segment(const char* fn, std::size_t size, std::size_t first, std::size_t len) {
  if (first == 0)
    throw std::invalid_argument(std::string("tyche::") + fn + ": i = 0, but i is 1-based (the first "
                                "element is i = 1)");
  if (first - 1 + len > size)
    throw std::invalid_argument(std::string("tyche::") + fn + ": elements " + std::to_string(first) +
                                " ... " + std::to_string(first - 1 + len) + " (1-based; n = " +
                                std::to_string(len) + ") were asked for, but v has size " +
                                std::to_string(size));
}
inline void check_length(const char* fn, std::size_t size, std::size_t len) {
  if (len > size)
    throw std::invalid_argument(std::string("tyche::") + fn + ": n = " + std::to_string(len) +
                                " but v has size " + std::to_string(size));
}
}  // namespace detail

/// The first Len elements of v, Len fixed at compile time: `head<3>(v)`.
template <std::size_t Len, expression V>
auto head(const V& v) {
  using N = detail::node_t<V>;
  static_assert(is_vector_v<N> && (extent_v<N> == dynamic_extent || Len <= extent_v<N>),
                "tyche::head(v, n) requires 'v' to be a vector expression of at least n elements");
  const N n = detail::as_node(v);
  detail::check_length("head<n>(v)", n.size(), Len);
  if constexpr (Len == extent_v<N>) return n;
  else return detail::segment_node<Len>(n, 0, Len);
}
/// The first len elements of v (Stan's head(v, n)).
template <expression V>
auto head(const V& v, std::size_t len) {
  using N = detail::node_t<V>;
  static_assert(is_vector_v<N>,
                "tyche::head(v, n) requires 'v' to be a vector expression of at least n elements");
  const N n = detail::as_node(v);
  detail::check_length("head(v, n)", n.size(), len);
  return detail::segment_node<dynamic_extent>(n, 0, len);
}

/// The last Len elements of v, Len fixed at compile time: `tail<3>(v)`.
template <std::size_t Len, expression V>
auto tail(const V& v) {
  using N = detail::node_t<V>;
  static_assert(is_vector_v<N> && (extent_v<N> == dynamic_extent || Len <= extent_v<N>),
                "tyche::tail(v, n) requires 'v' to be a vector expression of at least n elements");
  const N n = detail::as_node(v);
  detail::check_length("tail<n>(v)", n.size(), Len);
  if constexpr (Len == extent_v<N>) return n;
  else return detail::segment_node<Len>(n, n.size() - Len, Len);
}
/// The last len elements of v (Stan's tail(v, n)).
template <expression V>
auto tail(const V& v, std::size_t len) {
  using N = detail::node_t<V>;
  static_assert(is_vector_v<N>,
                "tyche::tail(v, n) requires 'v' to be a vector expression of at least n elements");
  const N n = detail::as_node(v);
  detail::check_length("tail(v, n)", n.size(), len);
  return detail::segment_node<dynamic_extent>(n, n.size() - len, len);
}

/// Elements I … I + Len − 1 of v, 1-based as in Stan, I and Len fixed at compile time:
/// `segment<2, 3>(v)` is v[2:4] (at(v, 1) … at(v, 3)).
template <std::size_t I, std::size_t Len, expression V>
auto segment(const V& v) {
  using N = detail::node_t<V>;
  static_assert(is_vector_v<N> && I >= 1 && (extent_v<N> == dynamic_extent || I - 1 + Len <= extent_v<N>),
                "tyche::segment(v, i, n) requires 'v' to be a vector expression with elements "
                "i ... i + n - 1 (i is 1-based: at least 1)");
  const N n = detail::as_node(v);
  detail::check_segment("segment<i, n>(v)", n.size(), I, Len);
  if constexpr (I == 1 && Len == extent_v<N>) return n;
  else return detail::segment_node<Len>(n, I - 1, Len);
}
/// Elements i … i + len − 1 of v, i 1-based as in Stan: segment(v, 2, 3) is v[2:4].
template <expression V>
auto segment(const V& v, std::size_t i, std::size_t len) {
  using N = detail::node_t<V>;
  static_assert(is_vector_v<N>,
                "tyche::segment(v, i, n) requires 'v' to be a vector expression with elements "
                "i ... i + n - 1 (i is 1-based: at least 1)");
  const N n = detail::as_node(v);
  detail::check_segment("segment(v, i, n)", n.size(), i, len);
  return detail::segment_node<dynamic_extent>(n, i - 1, len);
}

}  // namespace tyche
// ----- end tyche/operations/vectors.hpp -----
// ----- begin tyche/operations/matrices.hpp -----
// tyche/operations/matrices.hpp — the functions users call with K × K matrices given as vectors
// of their K² entries in row-major order (entry (i, j) at i·K + j, 0-based):
// diag_pre_multiply, multiply_lower_tri_self_transpose, cholesky_decompose, matvec(M, v),
// rows_dot_product and columns_dot_product (which take data matrices too), Stan's functions of
// the same names (`diag_pre_multiply(tau, L_Omega)`). Each makes a vector_op node whose op is in
// autodiff/matrix_ops.hpp. (matvec(X, v) for a data matrix X is in operations/functions.hpp.)

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace tyche {

namespace detail {
/// K for a vector of K² entries; throws (naming fn and the argument) when n is not a square.
inline std::size_t matrix_order(std::size_t n, const char* fn, const char* arg) {
  std::size_t k = static_cast<std::size_t>(std::llround(std::sqrt(static_cast<double>(n))));
  if (k * k != n || n == 0)
    throw std::invalid_argument(std::string("tyche::") + fn + ": '" + arg + "' has " + std::to_string(n) +
                                " values, which is not the number of entries of a square matrix "
                                "(K*K, row major)");
  return k;
}

/// True when n is K² for some K ≥ 1, or not known at compile time.
constexpr bool static_square(std::size_t n) {
  if (n == dynamic_extent) return true;
  for (std::size_t k = 1; k * k <= n; ++k)
    if (k * k == n) return true;
  return false;
}

template <class N>
inline constexpr bool is_data_matrix_v = kind_of<N> == node_kind::data_matrix;

/// A matrix argument of rows_dot_product: a data matrix, or a vector expression of entries.
template <class N>
inline constexpr bool matrix_argument_v = is_data_matrix_v<N> || is_vector_v<N>;

/// Static sizes of two vector-expression matrices that cannot be one square shape.
template <class NA, class NB>
inline constexpr bool static_shapes_agree_v = [] {
  if constexpr (is_data_matrix_v<NA> || is_data_matrix_v<NB>) {
    return true;  // a data matrix's shape is known at run time
  } else {
    constexpr std::size_t a = extent_v<NA>, b = extent_v<NB>;
    return (a == dynamic_extent || b == dynamic_extent || a == b) && static_square(a) && static_square(b);
  }
}();

/// rows_dot_product / columns_dot_product of A and B (data matrices or K*K vector expressions).
template <bool Columns, class A, class B>
auto dot_products(const A& a, const B& b, const char* fn) {
  using NA = node_t<A>;
  using NB = node_t<B>;
  const NA na = as_node(a);
  const NB nb = as_node(b);
  auto entries = [](const auto& n) {
    if constexpr (is_data_matrix_v<std::remove_cvref_t<decltype(n)>>) return n.rows * n.cols;
    else return n.size();
  };
  auto shape = [](const auto& n) {
    if constexpr (is_data_matrix_v<std::remove_cvref_t<decltype(n)>>)
      return std::to_string(n.rows) + " x " + std::to_string(n.cols);
    else
      return "a vector of " + std::to_string(n.size()) + " entries";
  };
  if (entries(na) != entries(nb) ||
      (is_data_matrix_v<NA> && is_data_matrix_v<NB> && shape(na) != shape(nb)))
    throw std::invalid_argument(std::string("tyche::") + fn + ": 'A' is " + shape(na) + " but 'B' is " + shape(nb));
  using map = ops::rows_dot_product_map<Columns>;
  if constexpr (is_data_matrix_v<NA>) {
    check_matrix_finite(na, fn, "A");
    if constexpr (is_data_matrix_v<NB>) check_matrix_finite(nb, fn, "B");
    const std::size_t m = Columns ? na.cols : na.rows;
    if constexpr (is_data_matrix_v<NB>)  // data only: computed once, when the model is built
      return make_vector_op(map{na.rows, na.cols, na.ptr}, m, data_vector<>{{}, nb.ptr, nb.rows * nb.cols});
    else
      return make_vector_op(map{na.rows, na.cols, na.ptr}, m, nb);
  } else if constexpr (is_data_matrix_v<NB>) {
    return dot_products<Columns>(nb, na, fn);  // Σ aᵢⱼ bᵢⱼ is symmetric in A and B
  } else {
    const std::size_t k = matrix_order(na.size(), fn, "A");
    return make_vector_op(map{k, k, nullptr}, k, na, nb);
  }
}
}  // namespace detail

/// (Σⱼ Aᵢⱼ Bᵢⱼ)ᵢ, the dot products of the rows of A and B: Stan's rows_dot_product. A and B are
/// data matrices (`matrix(x, rows, cols)`) or vector expressions of the K² entries of a K × K
/// matrix (row major); with one of each, the data matrix gives the shape.
template <expression A, expression B>
auto rows_dot_product(const A& a, const B& b) {
  using NA = detail::node_t<A>;
  using NB = detail::node_t<B>;
  static_assert(detail::matrix_argument_v<NA> && detail::matrix_argument_v<NB> &&
                    detail::static_shapes_agree_v<NA, NB>,
                "tyche::rows_dot_product(A, B) requires 'A' and 'B' to be matrices of one shape: data "
                "matrices, or vector expressions of the K*K entries of a square matrix (row major)");
  return detail::dot_products<false>(a, b, "rows_dot_product(A, B)");
}

/// (Σᵢ Aᵢⱼ Bᵢⱼ)ⱼ, the dot products of the columns of A and B: Stan's columns_dot_product; the
/// arguments as for rows_dot_product.
template <expression A, expression B>
auto columns_dot_product(const A& a, const B& b) {
  using NA = detail::node_t<A>;
  using NB = detail::node_t<B>;
  static_assert(detail::matrix_argument_v<NA> && detail::matrix_argument_v<NB> &&
                    detail::static_shapes_agree_v<NA, NB>,
                "tyche::columns_dot_product(A, B) requires 'A' and 'B' to be matrices of one shape: "
                "data matrices, or vector expressions of the K*K entries of a square matrix (row major)");
  return detail::dot_products<true>(a, b, "columns_dot_product(A, B)");
}

/// M v for a K × K matrix M given as a vector expression of its K² entries (row major: a
/// Cholesky factor, `diag_pre_multiply(tau, L_Omega)`, a matrix built from parameters) and a
/// vector expression v of K values (parameters or data): Stan's `M * v`. For the Cholesky factor
/// of a matrix C of parameters, cholesky_multiply(C, z) does the same without the K² buffer of L.
template <expression M, expression V>
  requires(!std::is_same_v<std::remove_cvref_t<M>, data_matrix>)
auto matvec(const M& m, const V& v) {
  using NM = detail::node_t<M>;
  using NV = detail::node_t<V>;
  static_assert(is_vector_v<NM> && is_vector_v<NV> &&
                    (extent_v<NM> == dynamic_extent || extent_v<NV> == dynamic_extent ||
                     extent_v<NM> == extent_v<NV> * extent_v<NV>),
                "tyche::matvec(M, v) requires 'v' to be a vector expression of K values and 'M' one "
                "of the K*K entries of a square matrix (row major)");
  const NM nm = detail::as_node(m);
  const NV nv = detail::as_node(v);
  const std::size_t k = nv.size();
  if (nm.size() != k * k)
    throw std::invalid_argument("tyche::matvec(M, v): 'M' has " + std::to_string(nm.size()) +
                                " entries but 'v' has size " + std::to_string(k) + " (M must be " +
                                std::to_string(k) + " x " + std::to_string(k) + ", row major)");
  return make_vector_op(ops::matvec_map{k}, k, nm, nv);
}

/// diag(v) M for a vector v of K values and a K × K matrix M given as its K² entries (row
/// major): Stan's diag_pre_multiply(v, M), e.g. the Cholesky factor of a covariance matrix
/// from scales and a correlation Cholesky factor, `diag_pre_multiply(tau, L_Omega)`.
template <expression V, expression M>
auto diag_pre_multiply(const V& v, const M& m) {
  using NV = detail::node_t<V>;
  using NM = detail::node_t<M>;
  static_assert(is_vector_v<NV> && is_vector_v<NM>,
                "tyche::diag_pre_multiply(v, M) requires 'v' (K values) and 'M' (the K*K entries of "
                "a matrix, row major) to be vector expressions");
  const NV nv = detail::as_node(v);
  const NM nm = detail::as_node(m);
  if (nm.size() != nv.size() * nv.size())
    throw std::invalid_argument("tyche::diag_pre_multiply(v, M): 'M' has " + std::to_string(nm.size()) +
                                " entries but 'v' has size " + std::to_string(nv.size()) + " (M must be " +
                                std::to_string(nv.size()) + " x " + std::to_string(nv.size()) + ", row major)");
  return make_vector_op(ops::diag_pre_multiply_map{nv.size()}, nm.size(), nv, nm);
}

/// L Lᵀ for a lower-triangular K × K matrix L given as its K² entries (row major; the part above
/// the diagonal is not read): Stan's multiply_lower_tri_self_transpose(L), e.g. a covariance
/// matrix from its Cholesky factor. K² values.
template <expression L>
auto multiply_lower_tri_self_transpose(const L& l) {
  using N = detail::node_t<L>;
  static_assert(is_vector_v<N>, "tyche::multiply_lower_tri_self_transpose(L) requires 'L' (the K*K "
                                "entries of a matrix, row major) to be a vector expression");
  const N n = detail::as_node(l);
  const std::size_t k = detail::matrix_order(n.size(), "multiply_lower_tri_self_transpose(L)", "L");
  return make_vector_op(ops::multiply_lower_tri_self_transpose_map{k}, n.size(), n);
}

/// The lower Cholesky factor of a symmetric positive-definite K × K matrix given as its K²
/// entries (row major; only the lower triangle is read): Stan's cholesky_decompose. A matrix
/// that is not positive definite gives NaN, which the sampler rejects.
template <expression C>
auto cholesky_decompose(const C& c) {
  using N = detail::node_t<C>;
  static_assert(is_vector_v<N>, "tyche::cholesky_decompose(C) requires 'C' (the K*K entries of a "
                                "matrix, row major) to be a vector expression");
  const N n = detail::as_node(c);
  const std::size_t k = detail::matrix_order(n.size(), "cholesky_decompose(C)", "C");
  return make_vector_op(ops::cholesky_decompose_map{k}, n.size(), n);
}

}  // namespace tyche
// ----- end tyche/operations/matrices.hpp -----
// ----- begin tyche/compile/program.hpp -----
// tyche/compile/program.hpp — compile(expr): binds an expression to a parameter layout, folds
// what depends on data only, and evaluates value and gradient for any scalar type.
// ----- begin tyche/compile/evaluate.hpp -----
// tyche/compile/evaluate.hpp — the forward and reverse passes, generated from an expression's
// type. No tape, no virtual call, no allocation: the slots of one evaluation are a struct on
// the stack (plus, for matvec, a caller-supplied workspace), and each node's step is an
// inlined function chosen at compile time. See docs/design/expression-core.md.
// ----- begin tyche/compile/graph.hpp -----
// tyche/compile/graph.hpp — the compile-time shape of an evaluation: which nodes get a slot, in
// which order they are evaluated, which occurrences are shared, and which reductions can fold
// their reverse pass into the forward pass. All of it is computed from the expression's type.
// See docs/design/expression-core.md.

#include <cmath>
#include <type_traits>
#include <utility>

namespace tyche::detail {

/// One occurrence of node type N at path P in the expression tree.
template <class N, class P>
struct entry {
  using node = N;
  using path = P;
};

/// Two occurrences share one slot when they are the same node: the same type, and either the
/// type is shareable (no run-time payload below it) or it is the very same occurrence.
template <class E1, class E2>
struct same_slot
    : std::bool_constant<std::is_same_v<typename E1::node, typename E2::node> &&
                         (shareable_v<typename E1::node> ||
                          std::is_same_v<typename E1::path, typename E2::path>)> {};

/// Nodes evaluated once per evaluation: scalar operations, reductions, matvec. Leaves need no
/// slot (they are read in place) and elementwise nodes live in their reduction's loop.
template <class N>
inline constexpr bool has_outer_slot_v = !is_leaf_v<N> && !is_elementwise_v<N>;

template <class N, class P, class Seq = std::make_index_sequence<children_t<N>::size>>
struct outer_occurrences;
template <class N, class P, std::size_t... I>
struct outer_occurrences<N, P, std::index_sequence<I...>> {
  using below =
      meta::concat<typename outer_occurrences<meta::at<I, children_t<N>>, meta::push<P, I>>::type...>;
  using type = std::conditional_t<has_outer_slot_v<N>, meta::concat<below, meta::list<entry<N, P>>>,
                                  below>;
};

/// Every occurrence of a slot-owning node, children before parents (post-order).
template <class Root>
using outer_occurrences_t = typename outer_occurrences<Root, path<>>::type;
/// The outer slots: occurrences with shared ones merged, in evaluation order.
template <class Root>
using outer_entries_t = meta::unique<same_slot, outer_occurrences_t<Root>>;

template <class N, class P, bool Elementwise = is_elementwise_v<N>,
          class Seq = std::make_index_sequence<children_t<N>::size>>
struct kernel_occurrences {
  using type = meta::list<>;  // a boundary: scalar node, materialised vector or leaf
};
template <class N, class P, std::size_t... I>
struct kernel_occurrences<N, P, true, std::index_sequence<I...>> {
  using type = meta::concat<
      typename kernel_occurrences<meta::at<I, children_t<N>>, meta::push<P, I>>::type...,
      meta::list<entry<N, P>>>;
};

/// The slots of the loop body of a reduction whose operand A sits at path P: the elementwise
/// nodes of A, children first, shared ones merged.
template <class A, class P>
using kernel_entries_t = meta::unique<same_slot, typename kernel_occurrences<A, P>::type>;

// ---- reductions whose adjoint is known before the reverse pass ---------------------------------

template <class E, int Sign>
struct signed_entry {
  using type = E;
  static constexpr int sign = Sign;
};

/// Reductions reached from the root through +, − and negation only: their adjoint is ±1 before
/// anything is evaluated, so their loop can propagate adjoints while it computes values.
template <class N, class P, int S>
struct signed_sums {
  using type = meta::list<>;
};
template <class N, class P, int S>
  requires(kind_of<N> == node_kind::sum)
struct signed_sums<N, P, S> {
  using type = meta::list<signed_entry<entry<N, P>, S>>;
};
template <class N, class P, int S>
  requires(kind_of<N> == node_kind::binary && !is_vector_v<N> &&
           (std::is_same_v<typename N::rule_type, rules::add> ||
            std::is_same_v<typename N::rule_type, rules::subtract>))
struct signed_sums<N, P, S> {
  static constexpr int sb = std::is_same_v<typename N::rule_type, rules::add> ? S : -S;
  using type = meta::concat<typename signed_sums<meta::at<0, children_t<N>>, meta::push<P, 0>, S>::type,
                            typename signed_sums<meta::at<1, children_t<N>>, meta::push<P, 1>, sb>::type>;
};
template <class N, class P, int S>
  requires(kind_of<N> == node_kind::unary && !is_vector_v<N> &&
           std::is_same_v<typename N::rule_type, rules::negate>)
struct signed_sums<N, P, S> {
  using type = typename signed_sums<meta::at<0, children_t<N>>, meta::push<P, 0>, -S>::type;
};

template <class A, class B>
struct same_signed_slot : same_slot<typename A::type, typename B::type> {};

// ---- run-time-verified sharing of nodes with payloads ----------------------------------------

template <class E1, class E2>
struct same_node_type : std::is_same<typename E1::node, typename E2::node> {};

/// For outer slot K: the first slot whose node has the same type. When that is another slot
/// (the type has a payload, so the types alone could not merge them), the program compares the
/// two nodes' payloads at construction and, when they are equal, slot K aliases that slot.
template <class Entries, std::size_t K>
inline constexpr std::size_t alias_candidate_v =
    meta::find_if_equal<same_node_type, meta::at<K, Entries>, Entries>::value;

/// Number of outer slots whose node has the same type as E's.
template <class Entries, class E>
inline constexpr std::size_t same_type_slots_v = meta::count_equal<same_node_type, E, Entries>::value;

/// Equal payloads everywhere below: the same data views, constants and operation arguments.
template <class N>
bool same_value(const N& a, const N& b) {
  constexpr node_kind k = kind_of<N>;
  if constexpr (k == node_kind::constant) {
    return a.value == b.value && std::signbit(a.value) == std::signbit(b.value);  // 0.0 ≠ −0.0
  } else if constexpr (k == node_kind::data_vector) {
    return a.ptr == b.ptr && a.size() == b.size();
  } else if constexpr (k == node_kind::data_matrix) {
    return a.ptr == b.ptr && a.rows == b.rows && a.cols == b.cols;
  } else if constexpr (k == node_kind::vector_param) {
    return a.size() == b.size();
  } else if constexpr (k == node_kind::param_element) {
    return a.index == b.index && a.vector.size() == b.vector.size();
  } else if constexpr (k == node_kind::param_gather) {
    return a.index == b.index && a.n == b.n && a.vector.size() == b.vector.size();
  } else if constexpr (is_leaf_v<N>) {
    return true;
  } else {
    bool equal = true;
    if constexpr (requires { a.rule; }) {
      if constexpr (N::rule_type::has_payload) equal = a.rule == b.rule;
    }
    if constexpr (k == node_kind::residual_squares) equal = a.stats == b.stats && a.k == b.k;
    if constexpr (k == node_kind::element) equal = a.index == b.index;
    if constexpr (k == node_kind::vector_op) {
      if constexpr (N::op_type::has_payload) equal = a.op == b.op;
      equal = equal && a.m == b.m;
    }
    meta::static_for<children_t<N>::size>([&](auto i) {
      equal = equal && same_value(a.template child<decltype(i)::value>(),
                                  b.template child<decltype(i)::value>());
    });
    return equal;
  }
}

/// +1 or −1 when the reduction occurrence E is used once and reached from the root by sums
/// only; 0 otherwise (its adjoint is then known only in the reverse pass).
template <class Root, class E>
inline constexpr int fused_sign_v = [] {
  using occurrences = outer_occurrences_t<Root>;
  using signed_list = typename signed_sums<Root, path<>, 1>::type;
  if constexpr (meta::count_equal<same_slot, E, occurrences>::value != 1 ||
                same_type_slots_v<outer_entries_t<Root>, E> != 1) {
    return 0;  // used twice, or possibly aliased at run time: adjoint known only in reverse
  } else {
    constexpr std::size_t i =
        meta::find_if_equal<same_signed_slot, signed_entry<E, 0>, signed_list>::value;
    if constexpr (i == signed_list::size) return 0;
    else return meta::at<i, signed_list>::sign;
  }
}();

// ---- navigating the tree ------------------------------------------------------------------------

template <class N>
TYCHE_HD TYCHE_INLINE constexpr const N& at_path(const N& n, path<>) {
  return n;
}
template <class N, std::size_t I, std::size_t... Rest>
TYCHE_HD TYCHE_INLINE constexpr const auto& at_path(const N& n, path<I, Rest...>) {
  return at_path(n.template child<I>(), path<Rest...>{});
}

}  // namespace tyche::detail
// ----- end tyche/compile/graph.hpp -----

#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>

namespace tyche::detail {

// ---- slots ---------------------------------------------------------------------------------------

template <class N, class T, node_kind K = kind_of<N>>
struct slot {  // unary: value, dy/dx, adjoint
  T v;
  T d;
  T adj = lift<T>(0.0);
};
template <class N, class T>
struct slot<N, T, node_kind::binary> {
  T v;
  T d0;
  T d1;
  T adj = lift<T>(0.0);
};
/// Reductions and elements of buffered vectors: a value and its adjoint.
template <class N, class T, node_kind K>
  requires(K == node_kind::sum || K == node_kind::log_sum_exp || K == node_kind::residual_squares ||
           K == node_kind::element)
struct slot<N, T, K> {
  T v;
  T adj = lift<T>(0.0);
};
template <class N, class T>
struct slot<N, T, node_kind::matvec> {
  T* val = nullptr;  // rows values, then rows adjoints, in the workspace
  T* adj = nullptr;
};
template <class N, class T>
  requires is_streamed_v<N>
struct slot<N, T, node_kind::matvec> {  // one row's value, in the loop
  T v;
  T adj = lift<T>(0.0);
};
/// A vector_op whose op asks for scratch space in the workspace (scratch_size(m, in_n)).
template <class N>
inline constexpr bool has_scratch_v =
    requires(const N& n, const std::size_t* in_n) { n.op.scratch_size(std::size_t{}, in_n); };

template <class N, class T>
struct slot<N, T, node_kind::vector_op> {
  static constexpr std::size_t arity = children_t<N>::size;
  T* scratch = nullptr;
  T* val = nullptr;  // m values, then m adjoints, then each operand's values and adjoints
  T* adj = nullptr;
  T* in[arity] = {};
  T* in_adj[arity] = {};
  std::size_t in_n[arity] = {};
};

template <std::size_t I, class S>
struct slot_holder {
  S s;
};
template <class Seq, class... S>
struct slot_tuple_impl;
template <std::size_t... I, class... S>
struct slot_tuple_impl<std::index_sequence<I...>, S...> : slot_holder<I, S>... {};

/// The slots of a list of entries, as one struct.
template <class Entries, class T>
struct slots;
template <class... E, class T>
struct slots<meta::list<E...>, T>
    : slot_tuple_impl<std::index_sequence_for<E...>, slot<typename E::node, T>...> {
  using entries = meta::list<E...>;
  using scalar = T;
  // No user-provided constructor: `state{}` zeroes every value too. Without the zeroing (a
  // constructor that ran only the adjoints' initialisers) g++ 12 reported -Wmaybe-uninitialized
  // for the derivative of a slot that aliases another (never read, but it cannot prove so).
};

template <std::size_t I, class S>
TYCHE_HD TYCHE_INLINE S& get(slot_holder<I, S>& h) {
  return h.s;
}

template <class Entries, class N, class P>
inline constexpr std::size_t index_in_v = meta::find_if_equal<same_slot, entry<N, P>, Entries>::value;

struct no_kernel {
  using entries = meta::list<>;
};

/// The scalar type a loop body evaluates with: its slots' (T, or a batch of observations when
/// the loop takes several at once); outside loop bodies (no_kernel), T.
template <class K, class T>
struct kernel_scalar {
  using type = T;
};
template <class K, class T>
  requires requires { typename K::scalar; }
struct kernel_scalar<K, T> {
  using type = typename K::scalar;
};
template <class K, class T>
using kernel_scalar_t = typename kernel_scalar<K, T>::type;

// ---- the evaluation --------------------------------------------------------------------------

/// Where the parameters live: the index of each parameter of Layout in the θ vector.
template <class Layout>
struct param_offsets {
  std::size_t offset[Layout::size > 0 ? Layout::size : 1] = {};
  std::size_t size[Layout::size > 0 ? Layout::size : 1] = {};
  std::size_t dim = 0;
};

template <class P>
inline constexpr std::size_t param_extent_v =
    kind_of<P> == node_kind::param ? 1 : extent_v<P>;

/// The length of θ when every parameter's size is known at compile time, else dynamic_extent.
template <class Layout>
inline constexpr std::size_t static_dim_v = []<class... Ps>(meta::list<Ps...>) {
  if constexpr (((param_extent_v<Ps> == dynamic_extent) || ...)) return dynamic_extent;
  else return (std::size_t{0} + ... + param_extent_v<Ps>);
}(Layout{});

/// Offset of parameter K in θ when it and every parameter before it have static sizes.
template <class Layout, std::size_t K>
inline constexpr std::size_t static_offset_v = [] {
  std::size_t offset = 0;
  bool known = true;
  meta::static_for<K>([&](auto k) {
    constexpr std::size_t e = param_extent_v<meta::at<decltype(k)::value, Layout>>;
    if (e == dynamic_extent) known = false;
    else offset += e;
  });
  return known ? offset : dynamic_extent;
}();

template <class Layout, class P>
inline constexpr std::size_t layout_index_v = [] {
  return []<class... Ps>(meta::list<Ps...>) {
    constexpr bool hit[] = {(Ps::name == P::name)..., true};  // the sentinel stops the search
    std::size_t i = 0;
    while (!hit[i]) ++i;
    return i;
  }(Layout{});
}();

/// One evaluation of Root at one point θ, with scalar type T. Grad selects value-only or
/// value-and-gradient. Constructed, run once, discarded.
template <class Root, class Layout, class T, bool Grad>
struct evaluation {
  using outer_entries = outer_entries_t<Root>;
  using outer_state = slots<outer_entries, T>;

  // Copies, not references: grad may point anywhere, but not into this local object, so the
  // compiler can keep payloads (constants, data pointers, offsets) in registers.
  Root root;
  param_offsets<Layout> layout;
  const std::size_t* ws_offsets;
  const bool* aliased;  // per outer slot: equal to its alias candidate (graph.hpp)
  const T* TYCHE_RESTRICT theta;
  T* TYCHE_RESTRICT grad;
  T* TYCHE_RESTRICT workspace;
  outer_state state{};
  // Adjoints of scalar parameters, kept here (in registers, once inlined) and added to grad at
  // the end: grad may alias anything, these cannot.
  T param_adj[Layout::size > 0 ? Layout::size : 1] = {};
  // With observation batches, the adjoints a loop body adds to scalars (scalar parameters, then
  // outer slots) are kept as batches and summed across lanes once, after the loop
  // (flush_lanes), not at every batch.
  using W = observation_batch_t<T>;
  static constexpr bool batched = !std::is_same_v<W, T>;
  static constexpr std::size_t lane_adj_size = batched ? Layout::size + outer_entries::size : 0;
  struct no_lane_adj {};
  [[no_unique_address]] std::conditional_t<batched, std::array<W, lane_adj_size>, no_lane_adj> lane_adj{};

  // A constructor, not aggregate initialisation: with braces, g++ zeroed the whole object
  // (1.7 KB for a 30-slot program, the expression copy included) before storing the members, a
  // memset per evaluation that was a large part of the time of a scan over a small step.
  TYCHE_HD TYCHE_INLINE evaluation(const Root& r, const param_offsets<Layout>& l, const std::size_t* wo,
                                   const bool* al, const T* th, T* g, T* ws)
      : root(r), layout(l), ws_offsets(wo), aliased(al), theta(th), grad(g), workspace(ws) {}

  template <class C>
  TYCHE_HD TYCHE_INLINE std::size_t offset_of() const {
    constexpr std::size_t k = layout_index_v<Layout, C>;
    static_assert(k < Layout::size, "tyche: a parameter of the expression is missing from the layout");
    if constexpr (static_offset_v<Layout, k> != dynamic_extent) return static_offset_v<Layout, k>;
    else return layout.offset[k];
  }

  // The coefficients w of a residual_squares node: a vector parameter's values in θ, or a
  // buffered vector's (ops::stack_map of scalar coefficients and a vector parameter).
  template <class V, class VP>
  TYCHE_HD TYCHE_INLINE const T* residual_coefficients(const V&) {
    if constexpr (kind_of<V> == node_kind::vector_param) return theta + offset_of<V>();
    else return get<index_in_v<outer_entries, V, VP>>(state).val;
  }

  // Elements p[0], p[1], … as a U (U = T: p[0]); adding a to them; the sum of a's lanes.
  template <class U>
  TYCHE_HD TYCHE_INLINE static U load_at(const T* p) {
    if constexpr (std::is_same_v<U, T>) return *p;
    else return lane_ops<U>::load(p);
  }
  template <class U>
  TYCHE_HD TYCHE_INLINE static void add_at(T* p, const U& a) {
    if constexpr (std::is_same_v<U, T>) *p += a;
    else lane_ops<U>::store(p, lane_ops<U>::load(p) + a);
  }
  template <class U>
  TYCHE_HD TYCHE_INLINE static T lane_sum(const U& a) {
    if constexpr (std::is_same_v<U, T>) return a;
    else return lane_ops<U>::sum(a);
  }

  // The number of coefficients of a residual_squares node: a constant when V's size is one,
  // so the O(k²) loops unroll.
  template <class V, class N>
  TYCHE_HD TYCHE_INLINE static std::size_t residual_width(const N& n) {
    if constexpr (extent_v<V> != dynamic_extent) return extent_v<V>;
    else return n.k;
  }

  // The value of child C (at path CP) at element i, wherever it lives. In a loop body that
  // takes several observations at once (U a batch), elements i, i+1, …: vectors are loaded,
  // scalars broadcast.
  template <class C, class CP, class K, class U = kernel_scalar_t<K, T>>
  TYCHE_HD TYCHE_INLINE U value_of(const C& c, K& ks, std::size_t i) {
    constexpr node_kind k = kind_of<C>;
    if constexpr (k == node_kind::literal) {
      return lift<U>(C::value);
    } else if constexpr (k == node_kind::constant) {
      return lift<U>(c.value);
    } else if constexpr (k == node_kind::param) {
      return U(theta[offset_of<C>()]);
    } else if constexpr (k == node_kind::vector_param) {
      return load_at<U>(theta + offset_of<C>() + i);
    } else if constexpr (k == node_kind::param_element) {
      return U(theta[offset_of<typename C::vector_type>() + c.index]);
    } else if constexpr (k == node_kind::data_vector) {
      if constexpr (std::is_same_v<U, T>) return lift<T>(c.ptr[i]);
      else return lane_ops<U>::load(c.ptr + i);
    } else if constexpr (k == node_kind::param_gather) {
      const T* v = theta + offset_of<typename C::vector_type>();
      if constexpr (std::is_same_v<U, T>) {
        return v[c.position(i)];
      } else {
        alignas(64) T g[lane_ops<U>::size];
        for (std::size_t j = 0; j < lane_ops<U>::size; ++j) g[j] = v[c.position(i + j)];
        return lane_ops<U>::load(g);
      }
    } else if constexpr (is_elementwise_v<C>) {
      return get<index_in_v<typename K::entries, C, CP>>(ks).v;
    } else if constexpr (is_buffered_v<C>) {
      return load_at<U>(get<index_in_v<outer_entries, C, CP>>(state).val + i);
    } else {
      return U(get<index_in_v<outer_entries, C, CP>>(state).v);
    }
  }

  // Adds a to the adjoint of child C (at path CP) at element i (elements i, i+1, … for a batch:
  // a scalar's adjoint takes the sum of the lanes).
  template <class C, class CP, class K, class U = kernel_scalar_t<K, T>>
  TYCHE_HD TYCHE_INLINE void push_adjoint(K& ks, std::size_t i, const U& a) {
    constexpr node_kind k = kind_of<C>;
    if constexpr (k == node_kind::param) {
      if constexpr (std::is_same_v<U, T>) param_adj[layout_index_v<Layout, C>] += a;
      else lane_adj[layout_index_v<Layout, C>] += a;
    } else if constexpr (k == node_kind::vector_param) {
      add_at(grad + offset_of<C>() + i, a);
    } else if constexpr (k == node_kind::param_element) {
      grad[offset_of<typename C::vector_type>() + at_path(root, CP{}).index] += lane_sum(a);
    } else if constexpr (k == node_kind::param_gather) {
      T* g = grad + offset_of<typename C::vector_type>();
      const C& c = at_path(root, CP{});
      if constexpr (std::is_same_v<U, T>) {
        g[c.position(i)] += a;
      } else {  // one lane at a time: two lanes may name the same element
        alignas(64) T as[lane_ops<U>::size];
        lane_ops<U>::store(as, a);
        for (std::size_t j = 0; j < lane_ops<U>::size; ++j) g[c.position(i + j)] += as[j];
      }
    } else if constexpr (is_elementwise_v<C>) {
      get<index_in_v<typename K::entries, C, CP>>(ks).adj += a;
    } else if constexpr (is_buffered_v<C>) {
      add_at(get<index_in_v<outer_entries, C, CP>>(state).adj + i, a);
    } else if constexpr (has_outer_slot_v<C>) {
      constexpr std::size_t idx = index_in_v<outer_entries, C, CP>;
      if constexpr (std::is_same_v<U, T>) get<idx>(state).adj += a;
      else lane_adj[Layout::size + idx] += a;
    }
    // constants and data: no adjoint
  }

  // One row of X (cols doubles) times v, for the buffered matvec and the streamed one alike
  // (the same numbers either way). Four accumulators: the loop vectorises without reassociating
  // a single sum.
  TYCHE_HD TYCHE_INLINE static T row_dot(const double* row, const T* v, std::size_t cols) {
    T a0 = lift<T>(0.0), a1 = lift<T>(0.0), a2 = lift<T>(0.0), a3 = lift<T>(0.0);
    std::size_t c = 0;
    for (; c + 4 <= cols; c += 4) {
      a0 += lift<T>(row[c]) * v[c];
      a1 += lift<T>(row[c + 1]) * v[c + 1];
      a2 += lift<T>(row[c + 2]) * v[c + 2];
      a3 += lift<T>(row[c + 3]) * v[c + 3];
    }
    for (; c < cols; ++c) a0 += lift<T>(row[c]) * v[c];
    return (a0 + a1) + (a2 + a3);
  }
  // g += a times one row of X (cols doubles): the adjoint of a matvec's element, to v's gradient.
  // a by value: a copy the loop can keep in a register while it stores to g.
  TYCHE_HD TYCHE_INLINE static void add_row_times(T* g, const double* row, std::size_t cols, const T a) {
    for (std::size_t c = 0; c < cols; ++c) g[c] += lift<T>(row[c]) * a;
  }

  // Row i of X times v (rows i, i+1, … for a batch U), for a streamed matvec.
  template <class U, class N>
  TYCHE_HD TYCHE_INLINE U row_product(const N& n, std::size_t i) {
    const std::size_t cols = n.x.cols;
    const T* v = theta + offset_of<meta::at<1, children_t<N>>>();
    if constexpr (std::is_same_v<U, T>) {
      return row_dot(n.x.ptr + i * cols, v, cols);
    } else {  // T = double, U a batch of rows: the rows' products with U-wide chunks of v,
              // the rows interleaved (independent chains), each chunk of v loaded once
      using L = lane_ops<U>;
      constexpr std::size_t w = L::size;
      const double* x = n.x.ptr + i * cols;
#if defined(__GNUC__) && TYCHE_PREFETCH_BATCHES > 0
      // The rows TYCHE_PREFETCH_BATCHES batches ahead, one cache line at a time: a matrix read
      // from memory (Edward2's 256 MB) streams at the bandwidth only with these hints (about
      // 32 → 24 ms per gradient there); a matrix in cache does not notice them.
      if (i + (TYCHE_PREFETCH_BATCHES + 1) * w <= n.x.rows) {
        const double* ahead = x + TYCHE_PREFETCH_BATCHES * w * cols;
        for (std::size_t o = 0; o < w * cols; o += 64 / sizeof(double)) __builtin_prefetch(ahead + o);
      }
#endif
      U acc[w];
      for (auto& a : acc) a = lift<U>(0.0);
      std::size_t c = 0;
      for (; c + w <= cols; c += w) {
        const U vc = L::load(v + c);
        for (std::size_t j = 0; j < w; ++j) acc[j] += L::load(x + j * cols + c) * vc;
      }
      alignas(64) T out[w];
      for (std::size_t j = 0; j < w; ++j) {
        T d = L::sum(acc[j]);
        for (std::size_t r = c; r < cols; ++r) d += x[j * cols + r] * v[r];
        out[j] = d;
      }
      return L::load(out);
    }
  }

  // Adds a times row i of X (rows i, i+1, … times the lanes of a) to the gradient of v.
  template <class N, class U>
  TYCHE_HD TYCHE_INLINE void row_adjoint(const N& n, std::size_t i, const U& a) {
    const std::size_t cols = n.x.cols;
    T* g = grad + offset_of<meta::at<1, children_t<N>>>();
    if constexpr (std::is_same_v<U, T>) {
      add_row_times(g, n.x.ptr + i * cols, cols, a);
    } else {
      using L = lane_ops<U>;
      constexpr std::size_t w = L::size;
      const double* x = n.x.ptr + i * cols;
      alignas(64) T as[w];
      L::store(as, a);
      U aj[w];
      for (std::size_t j = 0; j < w; ++j) aj[j] = U(as[j]);
      std::size_t c = 0;
      for (; c + w <= cols; c += w) {  // each chunk of the gradient loaded and stored once
        U gc = L::load(g + c);
        for (std::size_t j = 0; j < w; ++j) gc += L::load(x + j * cols + c) * aj[j];
        L::store(g + c, gc);
      }
      for (; c < cols; ++c) {
        for (std::size_t j = 0; j < w; ++j) g[c] += x[j * cols + c] * as[j];
      }
    }
  }

  // Forward step of a unary or binary node into slot s; G: also the partial derivatives.
  template <bool G, class N, class P, class S, class K>
  TYCHE_HD TYCHE_INLINE void forward_elementary(const N& n, S& s, K& ks, std::size_t i) {
    using U = kernel_scalar_t<K, T>;
    if constexpr (kind_of<N> == node_kind::matvec) {
      s.v = row_product<U>(n, i);
    } else if constexpr (kind_of<N> == node_kind::unary) {
      const U x = value_of<meta::at<0, children_t<N>>, meta::push<P, 0>>(n.a, ks, i);
      if constexpr (G) s.v = n.rule.value(x, s.d);
      else s.v = n.rule.value(x);
    } else {
      const U a = value_of<meta::at<0, children_t<N>>, meta::push<P, 0>>(n.a, ks, i);
      const U b = value_of<meta::at<1, children_t<N>>, meta::push<P, 1>>(n.b, ks, i);
      if constexpr (G) s.v = n.rule.value(a, b, s.d0, s.d1);
      else s.v = n.rule.value(a, b);
    }
  }

  // Reverse step of a unary or binary node from slot s.
  template <class N, class P, class S, class K>
  TYCHE_HD TYCHE_INLINE void reverse_elementary(const S& s, K& ks, std::size_t i) {
    if constexpr (kind_of<N> == node_kind::matvec) {
      row_adjoint(at_path(root, P{}), i, s.adj);
    } else if constexpr (kind_of<N> == node_kind::unary) {
      push_adjoint<meta::at<0, children_t<N>>, meta::push<P, 0>>(ks, i, s.adj * s.d);
    } else {
      push_adjoint<meta::at<0, children_t<N>>, meta::push<P, 0>>(ks, i, s.adj * s.d0);
      push_adjoint<meta::at<1, children_t<N>>, meta::push<P, 1>>(ks, i, s.adj * s.d1);
    }
  }

  // ---- the loop body of a reduction: element i of operand A at path AP ----

  template <class A, class AP, class U = T>
  using kernel_state = slots<kernel_entries_t<A, AP>, U>;

  template <bool G, class A, class AP, class K>
  TYCHE_HD TYCHE_INLINE kernel_scalar_t<K, T> kernel_forward(const A& a, K& ks, std::size_t i) {
    using entries = typename K::entries;
    meta::static_for<entries::size>([&](auto j) {
      constexpr std::size_t J = decltype(j)::value;
      using E = meta::at<J, entries>;
      forward_elementary<G, typename E::node, typename E::path>(
          at_path(a, relative_path<AP, typename E::path>()), get<J>(ks), ks, i);
    });
    return value_of<A, AP>(a, ks, i);
  }

  template <class A, class AP, class K>
  TYCHE_HD TYCHE_INLINE void kernel_reverse(K& ks, std::size_t i, const kernel_scalar_t<K, T>& seed) {
    using entries = typename K::entries;
    push_adjoint<A, AP>(ks, i, seed);
    meta::static_for_reverse<entries::size>([&](auto j) {
      constexpr std::size_t J = decltype(j)::value;
      using E = meta::at<J, entries>;
      reverse_elementary<typename E::node, typename E::path>(get<J>(ks), ks, i);
    });
  }

  // Path of Full relative to its prefix Prefix (kernel entries carry absolute paths; the loop
  // body navigates from the reduction's operand).
  template <class Prefix, class Full>
  TYCHE_HD static constexpr auto relative_path() {
    return strip_prefix(Prefix{}, Full{});
  }
  template <std::size_t... Rest>
  TYCHE_HD static constexpr auto strip_prefix(path<>, path<Rest...>) {
    return path<Rest...>{};
  }
  template <std::size_t I, std::size_t... Is, std::size_t... Rest>
  TYCHE_HD static constexpr auto strip_prefix(path<I, Is...>, path<I, Rest...>) {
    return strip_prefix(path<Is...>{}, path<Rest...>{});
  }

  // Calls f(std::type_identity<U>{}, i) for the elements of a loop of length len: with
  // observation batches (scalar/traits.hpp), U = the batch for elements i, …, i + lanes − 1, for
  // every whole batch, then U = T for the elements left.
  template <class F>
  TYCHE_HD TYCHE_INLINE static void for_elements(std::size_t len, F&& f) {
    using W = observation_batch_t<T>;
    std::size_t i = 0;
    if constexpr (!std::is_same_v<W, T>) {
      constexpr std::size_t w = lane_ops<W>::size;
      for (; i + w <= len; i += w) f(std::type_identity<W>{}, i);
    }
    for (; i < len; ++i) f(std::type_identity<T>{}, i);
  }

  // Which entries of lane_adj the loop body of operand A (at path AP) adds to: the scalar
  // parameters and the scalar outer slots that its elementwise nodes read.
  template <class A, class AP>
  static constexpr auto lane_targets() {
    std::array<bool, lane_adj_size> m{};
    using entries = kernel_entries_t<A, AP>;
    meta::static_for<entries::size>([&](auto e) {
      using E = meta::at<decltype(e)::value, entries>;
      using N = typename E::node;
      meta::static_for<children_t<N>::size>([&](auto j) {
        using C = meta::at<decltype(j)::value, children_t<N>>;
        using CP = meta::push<typename E::path, decltype(j)::value>;
        if constexpr (kind_of<C> == node_kind::param) m[layout_index_v<Layout, C>] = true;
        else if constexpr (!is_leaf_v<C> && has_outer_slot_v<C> && !is_buffered_v<C>)
          m[Layout::size + index_in_v<outer_entries, C, CP>] = true;
      });
    });
    return m;
  }

  // After a loop over operand A: the lanes' sums of what its body added to scalars.
  template <class A, class AP>
  TYCHE_HD TYCHE_INLINE void flush_lanes() {
    if constexpr (batched) {
      static constexpr auto targets = lane_targets<A, AP>();
      meta::static_for<lane_adj_size>([&](auto k) {
        constexpr std::size_t K = decltype(k)::value;
        if constexpr (targets[K]) {
          if constexpr (K < Layout::size) param_adj[K] += lane_sum(lane_adj[K]);
          else get<K - Layout::size>(state).adj += lane_sum(lane_adj[K]);
          lane_adj[K] = lift<W>(0.0);
        }
      });
    }
  }

  // ---- outer slots ----

  template <class E>
  TYCHE_HD TYCHE_INLINE void forward_outer() {
    using N = typename E::node;
    using P = typename E::path;
    constexpr std::size_t idx = index_in_v<outer_entries, N, P>;
    const N& n = at_path(root, P{});
    auto& s = get<idx>(state);
    no_kernel none;
    constexpr std::size_t alias = alias_candidate_v<outer_entries, idx>;
    if constexpr (alias != idx) {
      if (aliased[idx]) {  // the same node as slot `alias`: take its value (or its buffers)
        const auto& a = get<alias>(state);
        if constexpr (is_buffered_v<N>) {
          s.val = a.val;
          s.adj = a.adj;
        } else {
          s.v = a.v;
        }
        return;
      }
    }
    if constexpr (kind_of<N> == node_kind::unary || kind_of<N> == node_kind::binary) {
      forward_elementary<Grad, N, P>(n, s, none, 0);
    } else if constexpr (kind_of<N> == node_kind::sum) {
      using A = meta::at<0, children_t<N>>;
      using AP = meta::push<P, 0>;
      constexpr int sign = Grad ? fused_sign_v<Root, E> : 0;
      const std::size_t len = n.a.size();
      auto element = [&]<class U>(std::type_identity<U>, std::size_t i) {
        kernel_state<A, AP, U> ks{};
        if constexpr (sign != 0) {
          const U v = kernel_forward<true, A, AP>(n.a, ks, i);
          kernel_reverse<A, AP>(ks, i, lift<U>(static_cast<double>(sign)));
          return v;
        } else {
          return kernel_forward<false, A, AP>(n.a, ks, i);
        }
      };
      // Eight partial sums, partial sum j taking the elements i ≡ j (mod 8): eight independent
      // dependency chains, laid out so that SIMD code adds whole vectors (no shuffles). With
      // observation batches of w lanes, 8 / w batches hold the same eight sums, added in the
      // same order.
      constexpr std::size_t width = 8;
      using W = observation_batch_t<T>;
      constexpr std::size_t w = std::is_same_v<W, T> ? 1 : lane_ops<W>::size;
      static_assert(width % w == 0, "tyche: observation batches wider than 8 lanes");
      W tw[width / w];
      for (auto& tj : tw) tj = lift<W>(0.0);
      const std::size_t full = len - len % width;
      std::size_t i = 0;
      for (; i < full; i += width) {
        for (std::size_t j = 0; j < width / w; ++j)
          tw[j] += element(std::type_identity<W>{}, i + j * w);
      }
      T t[width];
      for (std::size_t j = 0; j < width / w; ++j) {
        if constexpr (w == 1) t[j] = tw[j];
        else lane_ops<W>::store(t + j * w, tw[j]);
      }
      for (; i < len; ++i) t[0] += element(std::type_identity<T>{}, i);
      if constexpr (sign != 0) flush_lanes<A, AP>();
      s.v = ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
    } else if constexpr (kind_of<N> == node_kind::log_sum_exp) {
      using A = meta::at<0, children_t<N>>;
      using AP = meta::push<P, 0>;
      const std::size_t len = n.a.size();
      T m = lift<T>(0.0);
      T acc = lift<T>(0.0);
      for (std::size_t i = 0; i < len; ++i) {
        kernel_state<A, AP> ks{};
        const T v = kernel_forward<false, A, AP>(n.a, ks, i);
        if (i == 0) {
          m = v;
          acc = lift<T>(1.0);
        } else {
          const T m_new = math::max(m, v);
          // While every element so far is −∞, shift by 0, not by −∞ (−∞ − −∞ is NaN).
          const T ninf = lift<T>(-HUGE_VAL);
          const T base = math::select(m_new == ninf, lift<T>(0.0), m_new);
          acc = acc * math::exp(m - base) + math::exp(v - base);
          m = m_new;
        }
      }
      s.v = m + math::log(acc);
    } else if constexpr (kind_of<N> == node_kind::residual_squares) {
      using S = meta::at<0, children_t<N>>;
      using V = meta::at<1, children_t<N>>;
      const T sv = value_of<S, meta::push<P, 0>>(n.s, none, 0);
      const T* v = residual_coefficients<V, meta::push<P, 1>>(n.v);
      const std::size_t k = residual_width<V>(n);
      const double* xbar = n.stats + 3;
      const double* sxy = xbar + k;
      const double* sxx = sxy + k;
      T quad = lift<T>(0.0), cross = lift<T>(0.0), m = sv - lift<T>(n.stats[1]);
      for (std::size_t a = 0; a < k; ++a) {
        T row = lift<T>(0.0);
        for (std::size_t b = 0; b < k; ++b) row += lift<T>(sxx[a * k + b]) * v[b];
        quad += v[a] * row;
        cross += lift<T>(sxy[a]) * v[a];
        m += lift<T>(xbar[a]) * v[a];
      }
      s.v = lift<T>(n.stats[0]) - lift<T>(2.0) * cross + quad + lift<T>(n.stats[2]) * m * m;
    } else if constexpr (kind_of<N> == node_kind::element) {
      s.v = value_of<meta::at<0, children_t<N>>, meta::push<P, 0>>(n.v, none, n.index);
    } else if constexpr (kind_of<N> == node_kind::vector_op) {
      // Each operand is materialised in the workspace (a vector operand through its loop body),
      // then Op computes the m values from the whole operands.
      const std::size_t m = n.size();
      T* p = workspace + ws_offsets[idx];
      s.val = p;
      s.adj = p + m;
      p += 2 * m;
      meta::static_for<children_t<N>::size>([&](auto j) {
        constexpr std::size_t J = decltype(j)::value;
        using C = meta::at<J, children_t<N>>;
        using CP = meta::push<P, J>;
        const C& c = n.template child<J>();
        const std::size_t len = operand_size(c);
        s.in[J] = p;
        s.in_adj[J] = p + len;
        s.in_n[J] = len;
        p += 2 * len;
        if constexpr (is_vector_v<C>) {
          for_elements(len, [&]<class U>(std::type_identity<U>, std::size_t i) {
            kernel_state<C, CP, U> ks{};
            const U v = kernel_forward<false, C, CP>(c, ks, i);
            if constexpr (std::is_same_v<U, T>) s.in[J][i] = v;
            else lane_ops<U>::store(s.in[J] + i, v);
          });
        } else {
          s.in[J][0] = value_of<C, CP>(c, none, 0);
        }
      });
      if constexpr (has_scratch_v<N>) {
        s.scratch = p;  // after the operands: the op's own scratch (kept for the reverse pass)
        n.op.forward(m, s.val, s.in, s.in_n, s.scratch);
      } else {
        n.op.forward(m, s.val, s.in, s.in_n);
      }
      if constexpr (Grad) {
        for (std::size_t r = 0; r < m; ++r) s.adj[r] = lift<T>(0.0);
      }
    } else if constexpr (kind_of<N> == node_kind::matvec) {
      const std::size_t rows = n.x.rows;
      const std::size_t cols = n.x.cols;
      s.val = workspace + ws_offsets[idx];
      s.adj = s.val + rows;
      const T* v = theta + offset_of<meta::at<1, children_t<N>>>();
      for (std::size_t r = 0; r < rows; ++r) {
        s.val[r] = row_dot(n.x.ptr + r * cols, v, cols);
        if constexpr (Grad) s.adj[r] = lift<T>(0.0);
      }
    }
  }

  template <class E>
  TYCHE_HD TYCHE_INLINE void reverse_outer() {
    using N = typename E::node;
    using P = typename E::path;
    constexpr std::size_t idx = index_in_v<outer_entries, N, P>;
    const N& n = at_path(root, P{});
    auto& s = get<idx>(state);
    no_kernel none;
    constexpr std::size_t alias = alias_candidate_v<outer_entries, idx>;
    if constexpr (alias != idx) {
      if (aliased[idx]) {  // hand the adjoint to the slot it aliases (buffers are shared)
        if constexpr (!is_buffered_v<N>) get<alias>(state).adj += s.adj;
        return;
      }
    }
    if constexpr (kind_of<N> == node_kind::unary || kind_of<N> == node_kind::binary) {
      reverse_elementary<N, P>(s, none, 0);
    } else if constexpr (kind_of<N> == node_kind::sum) {
      if constexpr (fused_sign_v<Root, E> == 0) {
        using A = meta::at<0, children_t<N>>;
        using AP = meta::push<P, 0>;
        for_elements(n.a.size(), [&]<class U>(std::type_identity<U>, std::size_t i) {
          kernel_state<A, AP, U> ks{};
          kernel_forward<true, A, AP>(n.a, ks, i);
          kernel_reverse<A, AP>(ks, i, U(s.adj));
        });
        flush_lanes<A, AP>();
      }
    } else if constexpr (kind_of<N> == node_kind::log_sum_exp) {
      using A = meta::at<0, children_t<N>>;
      using AP = meta::push<P, 0>;
      const std::size_t len = n.a.size();
      for (std::size_t i = 0; i < len; ++i) {
        kernel_state<A, AP> ks{};
        const T v = kernel_forward<true, A, AP>(n.a, ks, i);
        // Weight exp(v − lse); when every element is −∞ all weights are 0, not NaN.
        const T ninf = lift<T>(-HUGE_VAL);
        const T w = math::select(s.v == ninf, lift<T>(0.0), math::exp(v - s.v));
        kernel_reverse<A, AP>(ks, i, s.adj * w);
      }
    } else if constexpr (kind_of<N> == node_kind::residual_squares) {
      // ∂/∂s = 2 n m;  ∂/∂v = 2 (S_xx v − S_xy + n m x̄).
      using S = meta::at<0, children_t<N>>;
      using V = meta::at<1, children_t<N>>;
      const T sv = value_of<S, meta::push<P, 0>>(n.s, none, 0);
      const T* v = residual_coefficients<V, meta::push<P, 1>>(n.v);
      const std::size_t k = residual_width<V>(n);
      const double* xbar = n.stats + 3;
      const double* sxy = xbar + k;
      const double* sxx = sxy + k;
      T m = sv - lift<T>(n.stats[1]);
      for (std::size_t a = 0; a < k; ++a) m += lift<T>(xbar[a]) * v[a];
      const T nm2 = lift<T>(2.0 * n.stats[2]) * m;
      push_adjoint<S, meta::push<P, 0>>(none, 0, s.adj * nm2);
      for (std::size_t a = 0; a < k; ++a) {
        T row = lift<T>(0.0);
        for (std::size_t b = 0; b < k; ++b) row += lift<T>(sxx[a * k + b]) * v[b];
        const T g = s.adj * (lift<T>(2.0) * (row - lift<T>(sxy[a])) + nm2 * lift<T>(xbar[a]));
        if constexpr (kind_of<V> == node_kind::vector_param) grad[offset_of<V>() + a] += g;
        else get<index_in_v<outer_entries, V, meta::push<P, 1>>>(state).adj[a] += g;
      }
    } else if constexpr (kind_of<N> == node_kind::element) {
      push_adjoint<meta::at<0, children_t<N>>, meta::push<P, 0>>(none, n.index, s.adj);
    } else if constexpr (kind_of<N> == node_kind::vector_op) {
      constexpr std::size_t arity = children_t<N>::size;
      for (std::size_t j = 0; j < arity; ++j)
        for (std::size_t i = 0; i < s.in_n[j]; ++i) s.in_adj[j][i] = lift<T>(0.0);
      if constexpr (has_scratch_v<N>) n.op.reverse(n.size(), s.val, s.adj, s.in, s.in_n, s.in_adj, s.scratch);
      else n.op.reverse(n.size(), s.val, s.adj, s.in, s.in_n, s.in_adj);
      meta::static_for<arity>([&](auto j) {
        constexpr std::size_t J = decltype(j)::value;
        using C = meta::at<J, children_t<N>>;
        using CP = meta::push<P, J>;
        if constexpr (depends_on_params_v<C>) {
          const C& c = n.template child<J>();
          if constexpr (is_vector_v<C>) {
            for_elements(s.in_n[J], [&]<class U>(std::type_identity<U>, std::size_t i) {
              kernel_state<C, CP, U> ks{};
              kernel_forward<true, C, CP>(c, ks, i);
              kernel_reverse<C, CP>(ks, i, load_at<U>(s.in_adj[J] + i));
            });
            flush_lanes<C, CP>();
          } else {
            push_adjoint<C, CP>(none, 0, s.in_adj[J][0]);
          }
        }
      });
    } else if constexpr (kind_of<N> == node_kind::matvec) {
      const std::size_t rows = n.x.rows;
      const std::size_t cols = n.x.cols;
      T* g = grad + offset_of<meta::at<1, children_t<N>>>();
      for (std::size_t r = 0; r < rows; ++r) add_row_times(g, n.x.ptr + r * cols, cols, s.adj[r]);
    }
  }

  /// For a vector root: evaluates the scalar slots, after which element(i) gives element i.
  TYCHE_HD TYCHE_INLINE void prepare() {
    meta::static_for<outer_entries::size>(
        [&](auto k) { forward_outer<meta::at<decltype(k)::value, outer_entries>>(); });
  }
  TYCHE_HD TYCHE_INLINE T element(std::size_t i) {
    kernel_state<Root, path<>> ks{};
    return kernel_forward<false, Root, path<>>(root, ks, i);
  }

  TYCHE_HD TYCHE_INLINE T run() {
    if constexpr (Grad) {
      for (auto& a : param_adj) a = lift<T>(0.0);
    }
    static_assert(!is_vector_v<Root>,
                  "tyche: a model's log density must be a scalar; reduce vectors with "
                  "tyche::sum(...)");
    meta::static_for<outer_entries::size>(
        [&](auto k) { forward_outer<meta::at<decltype(k)::value, outer_entries>>(); });
    no_kernel none;
    const T result = value_of<Root, path<>>(root, none, 0);
    if constexpr (Grad) {
      push_adjoint<Root, path<>>(none, 0, lift<T>(1.0));
      meta::static_for_reverse<outer_entries::size>(
          [&](auto k) { reverse_outer<meta::at<decltype(k)::value, outer_entries>>(); });
      meta::static_for<Layout::size>([&](auto k) {
        constexpr std::size_t K = decltype(k)::value;
        using P = meta::at<K, Layout>;
        if constexpr (kind_of<P> == node_kind::param) grad[offset_of<P>()] += param_adj[K];
      });
    }
    return result;
  }
};

/// Workspace offsets for the buffered slots (matvec, vector_op) of an expression (none for aliased slots); with
/// ws_offsets null, only the total.
template <class Root, class Entries = outer_entries_t<Root>>
std::size_t assign_workspace(const Root& root, const bool* aliased, std::size_t* ws_offsets) {
  std::size_t total = 0;
  meta::static_for<Entries::size>([&](auto k) {
    constexpr std::size_t K = decltype(k)::value;
    using E = meta::at<K, Entries>;
    if constexpr (kind_of<typename E::node> == node_kind::matvec) {
      if (!aliased[K]) {
        if (ws_offsets) ws_offsets[K] = total;
        total += 2 * at_path(root, typename E::path{}).x.rows;
      }
    } else if constexpr (kind_of<typename E::node> == node_kind::vector_op) {
      if (!aliased[K]) {  // values and adjoints of the result and of every operand
        if (ws_offsets) ws_offsets[K] = total;
        const auto& n = at_path(root, typename E::path{});
        total += 2 * n.size();
        std::size_t in_n[children_t<typename E::node>::size] = {};
        meta::static_for<children_t<typename E::node>::size>([&](auto j) {
          in_n[decltype(j)::value] = operand_size(n.template child<decltype(j)::value>());
          total += 2 * in_n[decltype(j)::value];
        });
        if constexpr (has_scratch_v<typename E::node>) total += n.op.scratch_size(n.size(), in_n);
      }
    }
  });
  return total;
}

}  // namespace tyche::detail
// ----- end tyche/compile/evaluate.hpp -----
// ----- begin tyche/compile/fold.hpp -----
// tyche/compile/fold.hpp — evaluates, once at model construction, every subexpression that
// depends on data and constants only (compile/constant.hpp), and replaces it by its value: a
// run-time constant for a scalar, a data vector (stored in a fold_storage owned by the program)
// for a vector. Evaluations then never recompute them. Sums are then rewritten to take work out
// of their loops (compile/reduce_sum.hpp).
// ----- begin tyche/compile/constant.hpp -----
// tyche/compile/constant.hpp — evaluates, once at model construction, an expression that
// depends on no parameter (data and constants only), and owns the values of folded vectors.
// The fold (compile/fold.hpp) replaces such subexpressions by their values; the sum rewrites
// (compile/reduce_sum.hpp) use it for the sums and statistics they compute from data.

#include <cstddef>
#include <memory>
#include <vector>

namespace tyche::detail {

/// Owns the values of folded vector subexpressions.
struct fold_storage {
  std::vector<std::unique_ptr<double[]>> buffers;
  double* allocate(std::size_t n) {
    buffers.push_back(std::make_unique<double[]>(n > 0 ? n : 1));
    return buffers.back().get();
  }
};

/// f(ev) for a value-only evaluation ev of n in double with no parameters, its workspace alive
/// for the call.
template <class N, class F>
auto with_constant_evaluation(const N& n, F&& f) {
  param_offsets<meta::list<>> none{};
  bool not_aliased[outer_entries_t<N>::size + 1] = {};
  std::size_t ws_offsets[outer_entries_t<N>::size + 1] = {};
  std::vector<double> workspace(assign_workspace(n, not_aliased, ws_offsets));
  evaluation<N, meta::list<>, double, false> ev{n,       none,    ws_offsets, not_aliased,
                                                nullptr, nullptr, workspace.data()};
  return f(ev);
}

/// The value of a scalar expression that depends on no parameter.
template <class N>
double evaluate_constant(const N& n) {
  return with_constant_evaluation(n, [](auto& ev) { return ev.run(); });
}

/// The values of a vector expression that depends on no parameter, written to out[0 .. size).
template <class N>
void evaluate_constant_vector(const N& n, double* out) {
  with_constant_evaluation(n, [&](auto& ev) {
    ev.prepare();
    for (std::size_t i = 0; i < n.size(); ++i) out[i] = ev.element(i);
  });
}

/// Σᵢ aᵢ of a vector expression that depends on no parameter (reduce_sum, for sums its rules
/// make of data alone).
template <class N>
double constant_sum(const N& n, fold_storage&) {
  std::vector<double> values(n.size());
  evaluate_constant_vector(n, values.data());
  double total = 0;
  for (double v : values) total += v;
  return total;
}

}  // namespace tyche::detail
// ----- end tyche/compile/constant.hpp -----
// ----- begin tyche/compile/reduce_sum.hpp -----
// tyche/compile/reduce_sum.hpp — rewrites of Σᵢ over a (folded) vector expression that take
// work out of the loop, decided from the types when a model is built (see
// docs/design/partial-evaluation.md):
//
//   Σ(A ± s) → ΣA ± n·s           Σ(−A) → −ΣA
//   Σ(y − (s + Xv))², Σ((s + Xv) − y)², and any Line with the same terms (Σ(y − Xv − s)²,
//   Σ(−Xv + y + c)², …) → residual_squares: O(k²) from sufficient statistics
//   Σ(s·A), Σ(A·s) → s·ΣA,  Σ(A / s) → (ΣA) / s,  Σ((A·s)²) → s²·Σ(A²),  Σ((A / s)²) → Σ(A²) / s²
//     — these four only when the inner sum is itself reduced (see pull_out)
//
// for a scalar s (a parameter expression or a constant), a vector A, data y, a data matrix X
// with k columns, and a vector parameter v. Everything else stays one fused loop (sum_node).
// The statistics are computed here, once, into the program's fold_storage.

#include <algorithm>
#include <array>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <vector>

namespace tyche::detail {

/// Which operand of a binary node N with rule Rule is a scalar: 0 (left), 1 (right), or −1 (N
/// is not such a node, or both operands are vectors, or both are scalars).
template <class N, class Rule>
inline constexpr int scalar_operand_v = [] {
  if constexpr (is_binary_rule_v<N, Rule>) {
    constexpr bool l = is_vector_v<meta::at<0, children_t<N>>>;
    constexpr bool r = is_vector_v<meta::at<1, children_t<N>>>;
    return !l && r ? 0 : (l && !r ? 1 : -1);
  } else {
    return -1;
  }
}();

/// The operand of a unary node N with rule Rule (void when N is not one).
template <class N, class Rule>
struct operand_of_unary {
  using type = void;
};
template <class Rule, class A>
struct operand_of_unary<unary_node<Rule, A>, Rule> {
  using type = A;
};

/// A linear predictor s + Xv (or Xv, or Xv + s): a matvec of a data matrix and a vector
/// parameter, plus an optional scalar.
template <class N>
inline constexpr bool is_linear_predictor_v = [] {
  if constexpr (kind_of<N> == node_kind::matvec) {
    return true;
  } else if constexpr (is_binary_rule_v<N, rules::add>) {
    using A = meta::at<0, children_t<N>>;
    using B = meta::at<1, children_t<N>>;
    return (!is_vector_v<A> && kind_of<B> == node_kind::matvec) ||
           (kind_of<A> == node_kind::matvec && !is_vector_v<B>);
  } else {
    return false;
  }
}();

template <class N>
const auto& predictor_matvec(const N& n) {
  if constexpr (kind_of<N> == node_kind::matvec) return n;
  else if constexpr (kind_of<decltype(n.a)> == node_kind::matvec) return n.a;
  else return n.b;
}
template <class N>
auto predictor_intercept(const N& n) {
  if constexpr (kind_of<N> == node_kind::matvec) return lit<0>;
  else if constexpr (kind_of<decltype(n.a)> == node_kind::matvec) return n.b;
  else return n.a;
}

/// (y − L)² or (L − y)² for data y and a linear predictor L.
template <class N>
inline constexpr bool is_squared_residual_v = [] {
  if constexpr (is_unary_rule_v<N, rules::square>) {
    using D = meta::at<0, children_t<N>>;
    if constexpr (is_binary_rule_v<D, rules::subtract>) {
      using A = meta::at<0, children_t<D>>;
      using B = meta::at<1, children_t<D>>;
      return (kind_of<A> == node_kind::data_vector && is_linear_predictor_v<B>) ||
             (is_linear_predictor_v<A> && kind_of<B> == node_kind::data_vector);
    } else {
      return false;
    }
  } else {
    return false;
  }
}();

/// The sufficient statistics of Σᵢ (yᵢ − s − xᵢᵀv)² (layout in residual_squares_node).
template <class Storage, class Y>
const double* residual_statistics(const Y& y, const data_matrix& x, Storage& storage) {
  const std::size_t n = x.rows, k = x.cols;
  double* st = storage.allocate(3 + 2 * k + k * k);
  double* xbar = st + 3;
  double* sxy = xbar + k;
  double* sxx = sxy + k;
  double ybar = 0;
  for (std::size_t i = 0; i < n; ++i) ybar += y[i];
  ybar = n > 0 ? ybar / static_cast<double>(n) : 0.0;
  for (std::size_t a = 0; a < k; ++a) {
    double m = 0;
    for (std::size_t i = 0; i < n; ++i) m += x.ptr[i * k + a];
    xbar[a] = n > 0 ? m / static_cast<double>(n) : 0.0;
  }
  double syy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double dy = y[i] - ybar;
    const double* row = x.ptr + i * k;
    syy += dy * dy;
    for (std::size_t a = 0; a < k; ++a) {
      const double da = row[a] - xbar[a];
      sxy[a] += da * dy;
      for (std::size_t b = 0; b <= a; ++b) sxx[a * k + b] += da * (row[b] - xbar[b]);
    }
  }
  for (std::size_t a = 0; a < k; ++a)
    for (std::size_t b = 0; b < a; ++b) sxx[b * k + a] = sxx[a * k + b];
  st[0] = syy;
  st[1] = ybar;
  st[2] = static_cast<double>(n);
  return st;
}

/// (c·y + S − c·Xv)² read as a Line (operations/linear.hpp), in any arrangement: one data vector y
/// and one matvec Xv with opposite unit coefficients, every other term a scalar. It is
/// (y − s − Xv)² with s = −c·S.
template <std::size_t N>
struct residual_terms {
  std::size_t y = N, mv = N;  // the data vector's and the matvec's indices (N: none)
  bool ok = false;
};
/// Finds y and Xv among N terms (kinds and unit signs given per term).
template <std::size_t N>
constexpr residual_terms<N> find_residual_terms(const std::array<bool, N + 1>& is_data,
                                                const std::array<bool, N + 1>& is_mv,
                                                const std::array<bool, N + 1>& is_vec,
                                                const std::array<int, N + 1>& sign) {
  residual_terms<N> r;
  int vectors = 0;
  for (std::size_t i = 0; i < N; ++i) {
    vectors += is_vec[i] ? 1 : 0;
    if (is_data[i] && r.y == N) r.y = i;
    if (is_mv[i] && r.mv == N) r.mv = i;
  }
  r.ok = vectors == 2 && r.y < N && r.mv < N && sign[r.y] != 0 && sign[r.y] == -sign[r.mv];
  return r;
}

template <class F>
struct residual_line {
  static constexpr bool value = false;
};
template <class Off, class... Ts>
struct residual_line<forms::line_form<Off, Ts...>> {
  static constexpr std::size_t n = sizeof...(Ts);
  static constexpr std::array<int, n + 1> sign{(is_literal_equal_v<typename Ts::coef_type, 1>    ? 1
                                                : is_literal_equal_v<typename Ts::coef_type, -1> ? -1
                                                                                                 : 0)...,
                                               0};
  static constexpr residual_terms<n> terms = find_residual_terms<n>(
      std::array<bool, n + 1>{(kind_of<typename Ts::node_type> == node_kind::data_vector)..., false},
      std::array<bool, n + 1>{(kind_of<typename Ts::node_type> == node_kind::matvec)..., false},
      std::array<bool, n + 1>{is_vector_v<typename Ts::node_type>..., false}, sign);
  static constexpr std::size_t y = terms.y, mv = terms.mv;
  static constexpr bool value = terms.ok;
};

/// The form f without its vector terms (the scalar part S of a Line).
template <class F>
auto scalar_part(const F& f) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    auto keep = [&](const auto& t) {
      if constexpr (is_vector_v<typename std::remove_cvref_t<decltype(t)>::node_type>) return forms::light_tuple<>{};
      else return forms::light_tuple{t};
    };
    return forms::make_line_form(f.off, forms::light_concat(keep(forms::light_get<I>(f.ts))...));
  }(std::make_index_sequence<F::size>{});
}

/// s·d for a scalar s that depends on parameters and data d (a data vector, or a product of
/// them): a column d with coefficient s. (s₁·(s₂·d) has coefficient s₁·s₂; (s·d₁)·d₂ column d₁d₂.)
template <class X>
inline constexpr bool is_scaled_data_v = [] {
  if constexpr (is_binary_rule_v<X, rules::multiply> && is_vector_v<X>) {
    using A = meta::at<0, children_t<X>>;
    using B = meta::at<1, children_t<X>>;
    constexpr bool a_scalar = !is_vector_v<A> && depends_on_params_v<A>;
    constexpr bool b_scalar = !is_vector_v<B> && depends_on_params_v<B>;
    constexpr bool a_data = kind_of<A> == node_kind::data_vector;
    constexpr bool b_data = kind_of<B> == node_kind::data_vector;
    if constexpr ((a_scalar && b_data) || (a_data && b_scalar)) return true;
    else if constexpr (a_scalar || a_data) return is_scaled_data_v<B>;
    else if constexpr (b_scalar || b_data) return is_scaled_data_v<A>;
    else return false;
  } else {
    return false;
  }
}();

/// The coefficient (a scalar node) of a scaled data column.
template <class X>
auto scaled_data_coefficient(const X& x) {
  using A = std::remove_cvref_t<decltype(x.a)>;
  using B = std::remove_cvref_t<decltype(x.b)>;
  if constexpr (!is_vector_v<A>) {
    if constexpr (kind_of<B> == node_kind::data_vector) return x.a;
    else return plain_binary<rules::multiply>(x.a, scaled_data_coefficient(x.b));
  } else if constexpr (!is_vector_v<B>) {
    if constexpr (kind_of<A> == node_kind::data_vector) return x.b;
    else return plain_binary<rules::multiply>(scaled_data_coefficient(x.a), x.b);
  } else if constexpr (kind_of<A> == node_kind::data_vector) {
    return scaled_data_coefficient(x.b);
  } else {
    return scaled_data_coefficient(x.a);
  }
}
/// Multiplies column[0 .. n) by the data of a scaled data column.
template <class X>
void scaled_data_column(const X& x, double* column, std::size_t n) {
  if constexpr (kind_of<X> == node_kind::data_vector) {
    for (std::size_t i = 0; i < n; ++i) column[i] *= x.ptr[i];
  } else if constexpr (is_vector_v<X>) {
    scaled_data_column(x.a, column, n);
    scaled_data_column(x.b, column, n);
  }
}

/// The kind of a vector Line term in a general residual: 1 data, 2 scaled data, 3 matvec, −1
/// anything else (0 for scalars).
template <class X>
inline constexpr int residual_term_kind_v = !is_vector_v<X>                          ? 0
                                            : kind_of<X> == node_kind::data_vector   ? 1
                                            : is_scaled_data_v<X>                    ? 2
                                            : kind_of<X> == node_kind::matvec        ? 3
                                                                                     : -1;

/// (Σ cⱼ yⱼ + Σ cₖ sₖ dₖ + c Xv + S)² read as a Line: data vectors y with constant coefficients,
/// scalar-times-data columns, at most one matvec, scalars S. It is (Y − s − Zw)² with
/// Y = Σ cⱼ yⱼ, s = −S, Z = [−cₖ dₖ … | −c X] and w = (sₖ …, v): a residual sum of squares in the
/// coefficients w (the kidiq regression written elementwise, b0 + b1·x1 + b2·x2).
template <class F>
struct general_residual {
  static constexpr bool value = false;
};
template <class Off, class... Ts>
struct general_residual<forms::line_form<Off, Ts...>> {
  static constexpr int kinds[] = {residual_term_kind_v<typename Ts::node_type>..., 0};
  static constexpr std::size_t columns = ((residual_term_kind_v<typename Ts::node_type> == 2 ? 1 : 0) + ... + 0);
  static constexpr std::size_t matvecs = ((residual_term_kind_v<typename Ts::node_type> == 3 ? 1 : 0) + ... + 0);
  static constexpr bool value = ((residual_term_kind_v<typename Ts::node_type> >= 0) && ...) &&
                                matvecs <= 1 && columns + matvecs >= 1;
};

template <class X>
inline constexpr bool is_general_residual_v = [] {
  if constexpr (is_vector_v<X> && forms::is_line_op_v<X>) return general_residual<forms::merged_line_form_t<X>>::value;
  else if constexpr (is_vector_v<X>) return is_scaled_data_v<X>;  // Σ(s·d)²
  else return false;
}();

/// residual_squares for a general residual (see general_residual).
template <class X, class Storage>
auto general_residual_squares(const X& x, Storage& storage) {
  const auto f = forms::merge_line(forms::decompose_line(x));
  using F = std::remove_cvref_t<decltype(f)>;
  const std::size_t n = x.size();
  // The coefficients: every scaled-data term's scalar, then the matvec's vector parameter.
  const auto coefficients = [&]<std::size_t... I>(std::index_sequence<I...>) {
    auto pick = [&](const auto& t) {
      using Xt = typename std::remove_cvref_t<decltype(t)>::node_type;
      if constexpr (residual_term_kind_v<Xt> == 2) return forms::light_tuple{scaled_data_coefficient(t.x)};
      else return forms::light_tuple<>{};
    };
    auto pick_matvec = [&](const auto& t) {
      using Xt = typename std::remove_cvref_t<decltype(t)>::node_type;
      if constexpr (residual_term_kind_v<Xt> == 3) return forms::light_tuple{t.x.v};
      else return forms::light_tuple<>{};
    };
    return forms::light_concat(pick(forms::light_get<I>(f.ts))..., pick_matvec(forms::light_get<I>(f.ts))...);
  }(std::make_index_sequence<F::size>{});
  std::size_t width = 0;  // K: the columns of Z
  forms::light_apply([&](const auto&... c) { ((width += detail::operand_size(c)), ...); }, coefficients);
  double* y = storage.allocate(n);
  double* z = storage.allocate(n * width);
  for (std::size_t i = 0; i < n; ++i) y[i] = 0.0;
  std::vector<double> column(n);
  std::size_t col = 0;
  auto fill = [&](std::size_t j, double scale, const double* values, std::size_t stride) {
    for (std::size_t i = 0; i < n; ++i) z[i * width + j] = scale * values[i * stride];
  };
  meta::static_for<F::size>([&](auto i) {  // scaled-data columns, in the coefficients' order
    const auto& t = forms::light_get<decltype(i)::value>(f.ts);
    using Xt = typename std::remove_cvref_t<decltype(t)>::node_type;
    if constexpr (residual_term_kind_v<Xt> == 1) {
      for (std::size_t r = 0; r < n; ++r) y[r] += forms::coef_value(t.c) * t.x.ptr[r];
    } else if constexpr (residual_term_kind_v<Xt> == 2) {
      std::fill(column.begin(), column.end(), 1.0);
      scaled_data_column(t.x, column.data(), n);
      fill(col++, -forms::coef_value(t.c), column.data(), 1);
    }
  });
  meta::static_for<F::size>([&](auto i) {  // the matvec's columns last
    const auto& t = forms::light_get<decltype(i)::value>(f.ts);
    using Xt = typename std::remove_cvref_t<decltype(t)>::node_type;
    if constexpr (residual_term_kind_v<Xt> == 3) {
      for (std::size_t j = 0; j < t.x.x.cols; ++j) fill(col++, -forms::coef_value(t.c), t.x.x.ptr + j, t.x.x.cols);
    }
  });
  const auto w = forms::light_apply([&](const auto&... c) { return make_vector_op(ops::stack_map{}, width, c...); },
                            coefficients);
  const auto s = -forms::emit_line(scalar_part(f));
  residual_squares_node<std::remove_cvref_t<decltype(s)>, std::remove_cvref_t<decltype(w)>> r{{}, s, w, nullptr, width};
  r.stats = residual_statistics(y, data_matrix{{}, z, n, width}, storage);
  return r;
}

template <class X>
inline constexpr bool is_residual_line_v = [] {
  if constexpr (is_vector_v<X> && forms::is_line_op_v<X>) return residual_line<forms::merged_line_form_t<X>>::value;
  else return false;
}();

template <class N>
inline constexpr bool is_sum_node_v = kind_of<N> == node_kind::sum;

template <class A, class Storage>
auto reduce_sum(const A& a, Storage& storage);

/// factor(ΣB) when ΣB reduces to something other than a loop; else Σa unchanged. Pulling a
/// factor out of a loop that stays a loop would save one multiply per element but cost the
/// fused single pass (a sum reached from the root through ± only propagates its adjoint while it
/// computes its value; one under a factor needs a second pass), so it is not done.
template <class A, class B, class Storage, class Wrap>
auto pull_out(const A& a, const B& inner, Storage& storage, Wrap wrap) {
  auto reduced = reduce_sum(inner, storage);
  if constexpr (is_sum_node_v<decltype(reduced)>) return sum_node<A>{{}, a};
  else return wrap(reduced);
}

/// A node equal to Σᵢ aᵢ for a folded vector expression a.
template <class A, class Storage>
auto reduce_sum(const A& a, Storage& storage) {
  if constexpr (!depends_on_params_v<A>) {
    return constant{constant_sum(a, storage)};  // data only (a sum made by a rule below): Σ now
  } else if constexpr (is_binary_rule_v<A, rules::add> || is_binary_rule_v<A, rules::subtract>) {
    using Rule = typename A::rule_type;
    using L = meta::at<0, children_t<A>>;
    using R = meta::at<1, children_t<A>>;
    if constexpr (is_vector_v<L> && !is_vector_v<R>) {  // Σ(A ± s) = ΣA ± n·s
      const constant n{static_cast<double>(a.size())};
      return plain_binary<Rule>(reduce_sum(a.a, storage), plain_binary<rules::multiply>(n, a.b));
    } else if constexpr (!is_vector_v<L> && is_vector_v<R>) {  // Σ(s ± A) = n·s ± ΣA
      const constant n{static_cast<double>(a.size())};
      return plain_binary<Rule>(plain_binary<rules::multiply>(n, a.a), reduce_sum(a.b, storage));
    } else {
      return sum_node<A>{{}, a};
    }
  } else if constexpr (scalar_operand_v<A, rules::multiply> == 0) {
    return pull_out(a, a.b, storage, [&](const auto& r) { return plain_binary<rules::multiply>(a.a, r); });
  } else if constexpr (scalar_operand_v<A, rules::multiply> == 1) {
    return pull_out(a, a.a, storage, [&](const auto& r) { return plain_binary<rules::multiply>(a.b, r); });
  } else if constexpr (scalar_operand_v<A, rules::divide> == 1) {
    return pull_out(a, a.a, storage, [&](const auto& r) { return plain_binary<rules::divide>(r, a.b); });
  } else if constexpr (is_unary_rule_v<A, rules::negate>) {
    return plain_unary<rules::negate>(reduce_sum(a.a, storage));  // −Σ stays fused
  } else if constexpr (is_unary_rule_v<A, rules::square>) {
    using X = typename operand_of_unary<A, rules::square>::type;
    if constexpr (scalar_operand_v<X, rules::multiply> == 0) {
      return pull_out(a, plain_unary<rules::square>(a.a.b), storage, [&](const auto& r) {
        return plain_binary<rules::multiply>(plain_unary<rules::square>(a.a.a), r);
      });
    } else if constexpr (scalar_operand_v<X, rules::multiply> == 1) {
      return pull_out(a, plain_unary<rules::square>(a.a.a), storage, [&](const auto& r) {
        return plain_binary<rules::multiply>(plain_unary<rules::square>(a.a.b), r);
      });
    } else if constexpr (scalar_operand_v<X, rules::divide> == 1) {
      return pull_out(a, plain_unary<rules::square>(a.a.a), storage, [&](const auto& r) {
        return plain_binary<rules::divide>(r, plain_unary<rules::square>(a.a.b));
      });
    } else if constexpr (is_squared_residual_v<A>) {
      const auto& d = a.a;
      const auto& predictor = [&]() -> const auto& {
        if constexpr (kind_of<decltype(d.a)> == node_kind::data_vector) return d.b; else return d.a;
      }();
      const auto& y = [&]() -> const auto& {
        if constexpr (kind_of<decltype(d.a)> == node_kind::data_vector) return d.a; else return d.b;
      }();
      const auto& mv = predictor_matvec(predictor);
      auto s = predictor_intercept(predictor);
      using V = std::remove_cvref_t<decltype(mv.v)>;
      residual_squares_node<decltype(s), V> r{{}, s, mv.v, nullptr, mv.x.cols};
      r.stats = residual_statistics(y, mv.x, storage);
      return r;
    } else if constexpr (is_residual_line_v<X>) {
      const auto f = forms::merge_line(forms::decompose_line(a.a));
      using RL = residual_line<std::remove_cvref_t<decltype(f)>>;
      const auto& y = forms::light_get<RL::y>(f.ts).x;
      const auto& mv = forms::light_get<RL::mv>(f.ts).x;
      const auto scalars = forms::emit_line(scalar_part(f));  // S
      auto s = [&] {                                   // s = −c·S
        if constexpr (RL::sign[RL::y] == 1) return -scalars;
        else return scalars;
      }();
      using V = std::remove_cvref_t<decltype(mv.v)>;
      residual_squares_node<decltype(s), V> r{{}, s, mv.v, nullptr, mv.x.cols};
      r.stats = residual_statistics(y, mv.x, storage);
      return r;
    } else if constexpr (is_general_residual_v<X>) {
      return general_residual_squares(a.a, storage);
    } else {
      return sum_node<A>{{}, a};
    }
  } else {
    return sum_node<A>{{}, a};
  }
}

// ---- loops over the same length become one --------------------------------------------------

/// The static length of a loop (a sum node over a vector of compile-time size), else 0.
template <class T>
inline constexpr std::size_t loop_extent_v = [] {
  if constexpr (kind_of<T> == node_kind::sum) {
    constexpr std::size_t e = extent_v<meta::at<0, children_t<T>>>;
    return e == dynamic_extent ? std::size_t{0} : e;
  } else {
    return std::size_t{0};
  }
}();

/// The first two terms of a Line that are loops of one static length (i, j), or (n, n).
template <class F>
struct loop_pair;
template <class Off, class... Ts>
struct loop_pair<forms::line_form<Off, Ts...>> {
  static constexpr std::array<std::size_t, sizeof...(Ts) + 1> ext{loop_extent_v<typename Ts::node_type>..., 0};
  static constexpr std::array<std::size_t, 2> value = [] {
    constexpr std::size_t n = sizeof...(Ts);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = i + 1; j < n; ++j)
        if (ext[i] != 0 && ext[i] == ext[j]) return std::array<std::size_t, 2>{i, j};
    return std::array<std::size_t, 2>{n, n};
  }();
};

template <class F>
auto merge_loops_form(const F& f) {
  // Plain integers, not the array: a lambda below reads them (nvcc does not take an array's
  // operator[] on a captured constexpr local as a constant).
  constexpr std::size_t first = loop_pair<F>::value[0], second = loop_pair<F>::value[1];
  if constexpr (first == F::size) {
    return forms::emit_line(f);
  } else {
    const auto& ti = forms::light_get<first>(f.ts);
    const auto& tj = forms::light_get<second>(f.ts);
    // cᵢΣaᵢ + cⱼΣaⱼ = Σ(cᵢaᵢ + cⱼaⱼ): one pass over the elements instead of two.
    const auto body = forms::emit_line(
        forms::make_line_form(lit<0>, forms::light_tuple{forms::term{ti.c, ti.x.a}, forms::term{tj.c, tj.x.a}}));
    const sum_node<std::remove_cvref_t<decltype(body)>> loop{{}, body};
    auto ts = [&]<std::size_t... I>(std::index_sequence<I...>) {
      auto pick = [&]<std::size_t K>(std::integral_constant<std::size_t, K>) {
        if constexpr (K == first) return forms::light_tuple{forms::term{lit<1>, loop}};
        else if constexpr (K == second) return forms::light_tuple<>{};
        else return forms::light_tuple{forms::light_get<K>(f.ts)};
      };
      return forms::light_concat(pick(std::integral_constant<std::size_t, I>{})...);
    }(std::make_index_sequence<F::size>{});
    return merge_loops_form(forms::make_line_form(f.off, ts));
  }
}

/// n with the loops of one static length among its Line's terms fused into one loop (applied
/// to the folded and reduced log density).
template <class N>
auto merge_loops(const N& n) {
  if constexpr (!forms::is_line_op_v<N>) {
    return n;
  } else {
    using P = loop_pair<forms::merged_line_form_t<N>>;
    if constexpr (P::value[0] == forms::merged_line_form_t<N>::size) return n;
    else return merge_loops_form(forms::merge_line(forms::decompose_line(n)));
  }
}

}  // namespace tyche::detail
// ----- end tyche/compile/reduce_sum.hpp -----

#include <type_traits>

namespace tyche::detail {

/// a / d where d depends on no parameter.
template <class N>
inline constexpr bool divides_by_constant_v = [] {
  if constexpr (kind_of<N> == node_kind::binary) {
    return std::is_same_v<typename N::rule_type, rules::divide> &&
           !depends_on_params_v<meta::at<1, children_t<N>>>;
  } else {
    return false;
  }
}();

/// a / s for a vector a and a scalar s that depends on parameters: a × (1/s) with 1/s a scalar
/// node, computed once per evaluation instead of one divide per element (normal(mu, sigma) over
/// a vector of data divides every residual by sigma).
template <class N>
inline constexpr bool divides_vector_by_scalar_v = [] {
  if constexpr (kind_of<N> == node_kind::binary) {
    return std::is_same_v<typename N::rule_type, rules::divide> && is_vector_v<N> &&
           !is_vector_v<meta::at<1, children_t<N>>>;
  } else {
    return false;
  }
}();

/// Folds n; with Reduce, also rewrites every sum (compile/reduce_sum.hpp) and puts every
/// Line in normal form once, at its root (InLine: n's parent reads n into its own Line).
template <bool Reduce = true, bool InLine = false, class N>
auto fold(const N& n, fold_storage& storage) {
  if constexpr (is_leaf_v<N>) {
    return n;
  } else if constexpr (!depends_on_params_v<N>) {
    if constexpr (is_vector_v<N>) {
      double* values = storage.allocate(n.size());
      evaluate_constant_vector(n, values);
      return data_vector<>{{}, values, n.size()};
    } else {
      return constant{evaluate_constant(n)};
    }
  } else if constexpr (kind_of<N> == node_kind::unary) {
    constexpr bool line = forms::is_line_op_v<N>;  // −a
    auto a = fold<Reduce, line>(n.a, storage);
    const unary_node<typename N::rule_type, decltype(a)> r{{}, n.rule, a};
    if constexpr (Reduce && line && !InLine) return line_normal_form<decltype(r), true>(r);
    else return r;
  } else if constexpr (divides_by_constant_v<N> || divides_vector_by_scalar_v<N>) {
    // a / d for d free of parameters: a × (1/d), with 1/d computed here, once; a / s for a
    // vector a: a × (1/s), one divide per evaluation. A multiply is several times cheaper than a
    // divide.
    auto a = fold<Reduce>(n.a, storage);
    auto inv = fold<Reduce>(detail::make_unary<rules::inverse>(n.b), storage);
    return binary_node<rules::multiply, decltype(a), decltype(inv)>{{}, {}, a, inv};
  } else if constexpr (kind_of<N> == node_kind::binary) {
    constexpr bool line = forms::is_line_op_v<N>;
    auto a = fold<Reduce, line>(n.a, storage);
    auto b = fold<Reduce, line>(n.b, storage);
    // Folding may have made constants of subtrees: merge them into the Line
    // (operations/linear.hpp), once per Line, at its root. (Part of the rewrites:
    // compile_without_rewrites keeps the tree as built.)
    using R = binary_node<typename N::rule_type, decltype(a), decltype(b)>;
    const R r{{}, n.rule, a, b};
    if constexpr (Reduce && !(InLine && forms::is_line_op_v<R>)) return line_normal_form<R, true>(r);
    else return r;
  } else if constexpr (kind_of<N> == node_kind::sum) {
    auto a = fold<Reduce>(n.a, storage);
    if constexpr (Reduce) return reduce_sum(a, storage);
    else return sum_node<decltype(a)>{{}, a};
  } else if constexpr (kind_of<N> == node_kind::log_sum_exp) {
    auto a = fold<Reduce>(n.a, storage);
    return log_sum_exp_node<decltype(a)>{{}, a};
  } else if constexpr (kind_of<N> == node_kind::vector_op) {
    return rebuild_vector_op(n, [&](const auto& c) { return fold<Reduce>(c, storage); });
  } else if constexpr (kind_of<N> == node_kind::element) {
    auto v = fold<Reduce>(n.v, storage);
    return element_node<decltype(v)>{{}, v, n.index};
  } else {
    return n;  // matvec: a data matrix and a parameter vector, nothing to fold
  }
}

}  // namespace tyche::detail
// ----- end tyche/compile/fold.hpp -----
// ----- begin tyche/compile/stream.hpp -----
// tyche/compile/stream.hpp — stream_matvecs(e): every matvec X·v whose type occurs once in e, and
// which is not read as whole buffer (at(Xv, k)), becomes a streamed matvec: computed row by row
// in the loop of the reduction that consumes it, with its adjoint added to v's gradient while the
// row is in cache. A buffered matvec reads X twice per gradient (Xv forward, Xᵀ·adjoint in
// reverse) and stores two vectors of its length; a streamed one reads X once and stores nothing.
// Applied by compile() last (docs/design/expression-core.md, "Streamed matvec").

#include <cstddef>
#include <type_traits>

namespace tyche::detail {

template <class M, class Root>
inline constexpr std::size_t occurrences_v = []<class... Es>(meta::list<Es...>) {
  return (std::size_t{0} + ... + (std::is_same_v<typename Es::node, M> ? 1 : 0));
}(outer_occurrences_t<Root>{});

template <class Root>
inline constexpr bool has_matvec_v = []<class... Es>(meta::list<Es...>) {
  return ((kind_of<typename Es::node> == node_kind::matvec) || ...);
}(outer_occurrences_t<Root>{});

template <class Root, class N>
auto stream_node(const N& n) {
  if constexpr (kind_of<N> == node_kind::matvec) {
    using V = std::remove_cvref_t<decltype(n.v)>;
    if constexpr (!is_streamed_v<N> && occurrences_v<N, Root> == 1) return matvec_node<V, true>{{}, n.x, n.v};
    else return n;
  } else if constexpr (kind_of<N> == node_kind::unary) {
    auto a = stream_node<Root>(n.a);
    return unary_node<typename N::rule_type, decltype(a)>{{}, n.rule, a};
  } else if constexpr (kind_of<N> == node_kind::binary) {
    auto a = stream_node<Root>(n.a);
    auto b = stream_node<Root>(n.b);
    return binary_node<typename N::rule_type, decltype(a), decltype(b)>{{}, n.rule, a, b};
  } else if constexpr (kind_of<N> == node_kind::sum) {
    auto a = stream_node<Root>(n.a);
    return sum_node<decltype(a)>{{}, a};
  } else if constexpr (kind_of<N> == node_kind::log_sum_exp) {
    auto a = stream_node<Root>(n.a);
    return log_sum_exp_node<decltype(a)>{{}, a};
  } else if constexpr (kind_of<N> == node_kind::vector_op) {
    return rebuild_vector_op(n, [&](const auto& c) { return stream_node<Root>(c); });
  } else {
    return n;  // leaves, residual_squares, and element (at(Xv, k) reads the buffer)
  }
}

/// e with its matvecs streamed where that is exact (see the top of this file).
template <class E>
auto stream_matvecs(const E& e) {
  if constexpr (has_matvec_v<E>) return stream_node<E>(e);
  else return e;
}

}  // namespace tyche::detail
// ----- end tyche/compile/stream.hpp -----

#include <cstddef>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace tyche {

/// A contiguous range (std::vector, std::span, std::array, …): what evaluations take.
template <class R>
concept contiguous_range = requires(R& r) {
  std::data(r);
  std::size(r);
};
template <class R>
using range_value_t = std::remove_cv_t<std::remove_pointer_t<decltype(std::data(std::declval<R&>()))>>;

namespace detail {

/// Every parameter occurrence in N, duplicates kept (for the shape-consistency check).
template <class N>
struct all_params {
  template <class L>
  struct from;
  template <class... Cs>
  struct from<meta::list<Cs...>> {
    using type = meta::concat<typename all_params<Cs>::type...>;
  };
  using type = std::conditional_t<
      kind_of<N> == node_kind::param || kind_of<N> == node_kind::vector_param, meta::list<N>,
      typename from<children_t<N>>::type>;
};
template <class V>
struct all_params<param_element<V>> {
  using type = meta::list<V>;
};

/// True when every occurrence Os is in Layout (by name) with exactly the same type.
template <class Layout, class O>
constexpr bool consistent_param() {
  constexpr std::size_t i = meta::find_if_equal<same_param_name, O, Layout>::value;
  if constexpr (i == Layout::size) return false;
  else return std::is_same_v<meta::at<i, Layout>, O>;
}
template <class Layout, class Occurrences>
inline constexpr bool consistent_params_v = [] {
  return []<class... Os>(meta::list<Os...>) {
    return (consistent_param<Layout, Os>() && ...);
  }(Occurrences{});
}();

/// Records the run-time size of every vector parameter, and checks that each name has one size.
template <class Layout, class N>
void record_sizes(const N& n, param_offsets<Layout>& layout, std::vector<bool>& seen) {
  if constexpr (kind_of<N> == node_kind::vector_param) {
    constexpr std::size_t k = layout_index_v<Layout, N>;
    if (seen[k] && layout.size[k] != n.size())
      throw std::invalid_argument("tyche: vector parameter '" + std::string(N::name.view()) +
                                  "' is used with sizes " + std::to_string(layout.size[k]) +
                                  " and " + std::to_string(n.size()));
    layout.size[k] = n.size();
    seen[k] = true;
  } else if constexpr (kind_of<N> == node_kind::param) {
    constexpr std::size_t k = layout_index_v<Layout, N>;
    layout.size[k] = 1;
    seen[k] = true;
  } else if constexpr (kind_of<N> == node_kind::param_element) {
    record_sizes<Layout>(n.vector, layout, seen);
    if (n.index >= n.vector.size())
      throw std::invalid_argument("tyche: element " + std::to_string(n.index + 1) + " of '" +
                                  std::string(N::name.view()) + "', which has size " +
                                  std::to_string(n.vector.size()));
  } else if constexpr (children_t<N>::size > 0) {
    meta::static_for<children_t<N>::size>(
        [&](auto i) { record_sizes<Layout>(n.template child<i>(), layout, seen); });
  }
}

/// Decides, for every outer slot with an alias candidate, whether the two nodes are equal.
template <class Root, class Entries = outer_entries_t<Root>>
void find_aliases(const Root& root, bool* aliased) {
  meta::static_for<Entries::size>([&](auto k) {
    constexpr std::size_t K = decltype(k)::value;
    constexpr std::size_t A = alias_candidate_v<Entries, K>;
    using E = meta::at<K, Entries>;
    if constexpr (A != K) {
      using EA = meta::at<A, Entries>;
      aliased[K] = same_value(at_path(root, typename E::path{}), at_path(root, typename EA::path{}));
    }
  });
}


}  // namespace detail

/// The part of a program needed to evaluate it: the (folded) expression, where each parameter
/// sits in θ, and the workspace layout. Trivially copyable, so it can be passed to a CUDA
/// kernel by value; the data it views must live where the evaluation runs.
template <class Expr, class Layout>
struct program_view {
  using expression_type = Expr;
  using layout_type = Layout;
  static constexpr std::size_t n_slots = detail::outer_entries_t<Expr>::size;

  Expr expr;
  detail::param_offsets<Layout> layout;
  std::size_t ws_offsets[n_slots > 0 ? n_slots : 1] = {};
  bool aliased[n_slots > 0 ? n_slots : 1] = {};
  std::size_t workspace_size = 0;

  /// Number of parameters (length of θ).
  TYCHE_HD std::size_t dim() const { return layout.dim; }

  /// f(θ). `workspace` must hold workspace_size values (none for most models); θ and the
  /// workspace must not overlap.
  template <class T>
  TYCHE_EVALUATION_ENTRY T value(const T* TYCHE_RESTRICT theta,
                                 T* TYCHE_RESTRICT workspace = nullptr) const {
    detail::evaluation<Expr, Layout, T, false> ev{expr,  layout,  ws_offsets, aliased,
                                                  theta, nullptr, workspace};
    return ev.run();
  }

  /// f(θ), and ∇f(θ) written to grad[0 .. dim()). θ, grad and the workspace must not overlap.
  template <class T>
  TYCHE_EVALUATION_ENTRY T value_and_gradient(const T* TYCHE_RESTRICT theta,
                                              T* TYCHE_RESTRICT grad,
                                              T* TYCHE_RESTRICT workspace = nullptr) const {
    constexpr std::size_t static_dim = detail::static_dim_v<Layout>;
    const std::size_t dim = static_dim != dynamic_extent ? static_dim : layout.dim;
    for (std::size_t i = 0; i < dim; ++i) grad[i] = lift<T>(0.0);
    detail::evaluation<Expr, Layout, T, true> ev{expr, layout, ws_offsets, aliased,
                                                 theta, grad, workspace};
    return ev.run();
  }
};

/// A compiled expression: the evaluable view plus the storage of data folded at construction.
template <class Expr, class Layout>
class program {
 public:
  using view_type = program_view<Expr, Layout>;
  using layout_type = Layout;

  program(view_type view, std::shared_ptr<const detail::fold_storage> storage)
      : view_(view), storage_(std::move(storage)) {}

  /// Number of parameters (length of θ).
  [[nodiscard]] std::size_t dim() const { return view_.dim(); }
  /// Number of scalars of scratch space an evaluation needs (matvec buffers).
  [[nodiscard]] std::size_t workspace_size() const { return view_.workspace_size; }
  /// The evaluable part, e.g. to copy to a device. It points into storage this program owns:
  /// it must not outlive the program (hence no view() of a temporary program).
  [[nodiscard]] const view_type& view() const& { return view_; }
  const view_type& view() const&& = delete;

  /// Parameter names in layout order, with their sizes.
  [[nodiscard]] std::vector<std::pair<std::string, std::size_t>> parameters() const {
    std::vector<std::pair<std::string, std::size_t>> out;
    meta::static_for<Layout::size>([&](auto k) {
      out.emplace_back(std::string(meta::at<k, Layout>::name.view()), view_.layout.size[k]);
    });
    return out;
  }
  /// Offset of parameter number k (layout order) in θ.
  [[nodiscard]] std::size_t offset(std::size_t k) const { return view_.layout.offset[k]; }

  // Evaluation. θ, grad and workspace are contiguous ranges of one scalar type T (std::vector,
  // std::span, std::array, …; T any scalar type of the core). The overloads with a workspace
  // never allocate; those without allocate one only when workspace_size() > 0.

  /// f(θ).
  template <contiguous_range Theta>
  auto value(const Theta& theta) const {
    using T = range_value_t<Theta>;
    std::vector<T> ws(workspace_size());
    return value(theta, ws);
  }
  template <contiguous_range Theta, contiguous_range Workspace>
  auto value(const Theta& theta, Workspace&& workspace) const {
    using T = range_value_t<Theta>;
    static_assert(std::is_same_v<range_value_t<Workspace>, T>,
                  "tyche::program::value(theta, workspace) requires 'workspace' to hold the "
                  "scalar type of 'theta'");
    check(std::size(theta), std::size(workspace), "value");
    return view_.value(static_cast<const T*>(std::data(theta)), std::data(workspace));
  }
  /// f(θ), and ∇f(θ) written to grad.
  template <contiguous_range Theta, contiguous_range Grad>
  auto value_and_gradient(const Theta& theta, Grad&& grad) const {
    using T = range_value_t<Theta>;
    std::vector<T> ws(workspace_size());
    return value_and_gradient(theta, grad, ws);
  }
  template <contiguous_range Theta, contiguous_range Grad, contiguous_range Workspace>
  auto value_and_gradient(const Theta& theta, Grad&& grad, Workspace&& workspace) const {
    using T = range_value_t<Theta>;
    static_assert(std::is_same_v<range_value_t<Grad>, T> && std::is_same_v<range_value_t<Workspace>, T>,
                  "tyche::program::value_and_gradient(theta, grad, workspace) requires 'grad' "
                  "and 'workspace' to hold the scalar type of 'theta'");
    check(std::size(theta), std::size(workspace), "value_and_gradient");
    if (std::size(grad) != dim())
      throw std::invalid_argument("tyche::program::value_and_gradient: grad has size " +
                                  std::to_string(std::size(grad)) + ", expected " +
                                  std::to_string(dim()));
    return view_.value_and_gradient(static_cast<const T*>(std::data(theta)), std::data(grad),
                                    std::data(workspace));
  }

 private:
  void check(std::size_t theta_size, std::size_t ws_size, const char* fn) const {
    if (theta_size != dim() || ws_size < workspace_size()) [[unlikely]]
      fail(theta_size, ws_size, fn);
  }
  [[noreturn]] TYCHE_NOINLINE void fail(std::size_t theta_size, std::size_t ws_size,
                                        const char* fn) const {
    if (theta_size != dim())
      throw std::invalid_argument(std::string("tyche::program::") + fn + ": theta has size " +
                                  std::to_string(theta_size) + ", expected " +
                                  std::to_string(dim()));
    throw std::invalid_argument(std::string("tyche::program::") + fn + ": workspace has size " +
                                std::to_string(ws_size) + ", expected at least " +
                                std::to_string(workspace_size()));
  }

  view_type view_;
  std::shared_ptr<const detail::fold_storage> storage_;
};

namespace detail {

/// Evaluates expression e (scalar or vector, not folded) at θ with the given layout, writing
/// its value(s) to out[0 .. size). For conversions outside the hot path: constrain(), bounds,
/// distribution arguments when sampling.
template <class Layout, class E>
void evaluate_at(const E& e, const param_offsets<Layout>& layout, const double* theta, double* out) {
  using N = node_t<E>;
  const N n = as_node(e);
  bool not_aliased[outer_entries_t<N>::size + 1] = {};
  std::vector<double> workspace(assign_workspace(n, not_aliased, nullptr));
  std::size_t ws_offsets[outer_entries_t<N>::size + 1] = {};
  assign_workspace(n, not_aliased, ws_offsets);
  evaluation<N, Layout, double, false> ev{n,     layout,  ws_offsets,        not_aliased,
                                          theta, nullptr, workspace.data()};
  if constexpr (is_vector_v<N>) {
    ev.prepare();
    for (std::size_t i = 0; i < n.size(); ++i) out[i] = ev.element(i);
  } else {
    out[0] = ev.run();
  }
}

/// Number of values of a (possibly wrapped) expression: its size, or 1 for a scalar.
template <class E>
std::size_t value_count(const E& e) {
  using N = node_t<E>;
  if constexpr (is_vector_v<N>) return as_node(e).size();
  else return 1;
}

template <class Layout, bool Reduce = true, class Wrapped, class... Listed>
auto compile_with_layout(const Wrapped& wrapped, const Listed&... listed) {
  using Expr = node_t<Wrapped>;
  const Expr e = as_node(wrapped);
  static_assert(!is_vector_v<Expr>,
                "tyche::compile(f) requires 'f' to be a scalar expression; reduce vectors with "
                "tyche::sum(...)");
  static_assert(consistent_params_v<Layout, typename all_params<Expr>::type>,
                "tyche::compile(f): a parameter name is used for two different parameters "
                "(scalar and vector, or two sizes fixed at compile time)");
  auto storage = std::make_shared<fold_storage>();
  auto folded = [&] {
    if constexpr (Reduce) return stream_matvecs(merge_loops(fold<true>(e, *storage)));
    else return fold<false>(e, *storage);
  }();
  using F = decltype(folded);
  program_view<F, Layout> view{folded, {}, {}, {}, 0};
  std::vector<bool> seen(Layout::size, false);
  record_sizes<Layout>(e, view.layout, seen);
  (record_sizes<Layout>(listed, view.layout, seen), ...);  // a listed size must match the use
  std::size_t dim = 0;
  for (std::size_t k = 0; k < Layout::size; ++k) {
    if (!seen[k]) {
      std::string name;
      meta::static_for<Layout::size>([&](auto j) {
        if (decltype(j)::value == k) name = std::string(meta::at<decltype(j)::value, Layout>::name.view());
      });
      throw std::invalid_argument("tyche::compile: parameter '" + name +
                                  "' is in the layout but neither in the expression nor listed");
    }
    view.layout.offset[k] = dim;
    dim += view.layout.size[k];
  }
  view.layout.dim = dim;
  find_aliases(view.expr, view.aliased);
  view.workspace_size = assign_workspace(view.expr, view.aliased, view.ws_offsets);
  return program<F, Layout>(view, std::move(storage));
}
}  // namespace detail

/// Compiles f like compile(f, params...), but without the rewrites of sums that partial
/// evaluation makes (compile/reduce_sum.hpp): data-only subexpressions are still folded.
/// For checking those rewrites, and as an escape hatch should one ever be wrong for a model.
template <expression Expr, expression... Params>
auto compile_without_rewrites(const Expr& f, const Params&... params) {
  if constexpr (sizeof...(Params) == 0)
    return detail::compile_with_layout<params_of<detail::node_t<Expr>>, false>(f);
  else
    return detail::compile_with_layout<meta::list<Params...>, false>(f, params...);
}

/// Compiles f, with its parameters laid out in θ in order of first appearance.
template <expression Expr>
auto compile(const Expr& f) {
  return detail::compile_with_layout<params_of<detail::node_t<Expr>>>(f);
}

/// Compiles f, with its parameters laid out in θ in the order given.
template <expression Expr, expression... Params>
  requires(sizeof...(Params) > 0)
auto compile(const Expr& f, const Params&... params) {
  constexpr bool all_params =
      ((kind_of<Params> == node_kind::param || kind_of<Params> == node_kind::vector_param) && ...);
  static_assert(all_params,
                "tyche::compile(f, params...) requires every 'params' argument to be a parameter");
  if constexpr (all_params) {
    using layout = meta::list<Params...>;
    constexpr bool unique = meta::unique<detail::same_param_name, layout>::size == layout::size;
    static_assert(unique, "tyche::compile(f, params...): a parameter is listed twice");
    using used = params_of<detail::node_t<Expr>>;
    constexpr bool complete =
        used::size == layout::size && detail::consistent_params_v<layout, used>;
    static_assert(!unique || complete,
                  "tyche::compile(f, params...) requires the list to name every parameter of "
                  "'f' exactly once");
    if constexpr (unique && complete) return detail::compile_with_layout<layout>(f, params...);
  }
}

}  // namespace tyche
// ----- end tyche/compile/program.hpp -----
// ----- begin tyche/compile/scan.hpp -----
// tyche/compile/scan.hpp — scan(step, init, sequences...): a loop over a latent state written as
// a lambda. step(state, x_t...) returns the next state from the current one and the sequences'
// values at step t; scan returns the state after the last step, a vector of K values (a scalar
// state: K = 1). The forward algorithm of a hidden Markov model, a Kalman filter with its
// log-likelihood carried in the state, an ARMA error recursion: each is one step.
//
// The lambda is called once, on placeholder expressions (the state, one scalar per sequence),
// when the model is built; what it returns is the step's graph, a type. That graph is compiled
// once into a program of the step's vector–Jacobian product,
//     F(a, s, x, p) = Σₖ aₖ · stepₖ(s, x, p),
// where p are the model's parameters the lambda uses (captured random variables): its gradient
// gives the next state (∂F/∂a) and, in the reverse pass, the adjoint of the state before (∂F/∂s)
// and the parameters' share (∂F/∂p). The scan is a vector_op (docs/design/vector-ops.md) whose
// operands are the initial state and those parameters; it runs the program N times forwards,
// keeping the N + 1 states in its scratch space, and N times backwards. Compile time does not
// depend on N. See docs/design/scan.md.

#include <array>
#include <cmath>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace tyche {

namespace detail {
inline constexpr fixed_string scan_state_name = "__scan_state";
inline constexpr fixed_string scan_adjoint_name = "__scan_adjoint";
/// The placeholder of sequence I's value at a step: "__scan_x0", "__scan_x1", …
template <std::size_t I>
constexpr fixed_string<10> scan_sequence_name() {
  static_assert(I < 10, "tyche::scan: at most 10 sequences");
  const char s[10] = {'_', '_', 's', 'c', 'a', 'n', '_', 'x', static_cast<char>('0' + I), '\0'};
  return fixed_string<10>(s);
}
template <class P>
inline constexpr bool is_scan_placeholder_v = P::name.view().starts_with("__scan_");

/// The parameters of list L that are not a scan's placeholders.
template <class L>
struct outer_params;
template <class... Ps>
struct outer_params<meta::list<Ps...>> {
  using type = meta::concat<std::conditional_t<is_scan_placeholder_v<Ps>, meta::list<>, meta::list<Ps>>...>;
};

template <class T>
struct is_std_tuple : std::false_type {};
template <class... Ts>
struct is_std_tuple<std::tuple<Ts...>> : std::true_type {};
}  // namespace detail

/// The state of a scan with K > 1 values, as the step lambda receives it: s[k] (0-based) is
/// a scalar expression; s itself is a vector expression of size K.
template <std::size_t K>
struct scan_state : expr<scan_state<K>> {
  using vector_type = vector_param<detail::scan_state_name, K>;
  vector_type v{};
  auto value_expression() const { return v; }
  auto operator[](std::size_t k) const { return at(v, k); }
};

namespace ops {

/// The op of a scan node: K state values, S sequences of `steps` values, Outer parameters as
/// operands 1 … Outer after the initial state (operand 0). Program: the compiled F above, with
/// θ laid out as (a: K, s: K, x: S, the Outer parameters in operand order). All = false: the
/// result is the last state (K values); All = true (scan_states): every state after a step,
/// component by component (value k after step t at k·steps + t), K·steps values.
template <class Program, std::size_t K, std::size_t S, std::size_t Outer, bool All = false>
struct scan_map {
  static constexpr const char* name = All ? "scan_states" : "scan";
  static constexpr bool has_payload = true;
  template <class... Cs>
  static constexpr std::size_t extent = All ? dynamic_extent : K;
  using view_type = typename Program::view_type;

  std::shared_ptr<const Program> program;  // owns the step's folded data
  view_type step;                          // its evaluable part
  std::array<const double*, S> sequences{};
  std::size_t steps = 0;

  bool operator==(const scan_map& o) const {
    return program == o.program && sequences == o.sequences && steps == o.steps;
  }
  /// The N + 1 states, then θ, ∇F, the adjoint being carried, and the step's workspace.
  std::size_t scratch_size(std::size_t, const std::size_t*) const {
    return (steps + 1) * K + 2 * step.dim() + K + step.workspace_size;
  }

  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t* in_n, T* scratch) const {
    T* states = scratch;
    T* theta = states + (steps + 1) * K;
    T* grad = theta + step.dim();
    T* ws = grad + step.dim() + K;
    for (std::size_t k = 0; k < K; ++k) {
      states[k] = in[0][k];
      theta[k] = lift<T>(0.0);  // a: any value; ∂F/∂aₖ is the next state's value k
    }
    std::size_t o = 2 * K + S;
    for (std::size_t j = 1; j <= Outer; ++j)
      for (std::size_t i = 0; i < in_n[j]; ++i) theta[o++] = in[j][i];
    for (std::size_t t = 0; t < steps; ++t) {
      for (std::size_t k = 0; k < K; ++k) theta[K + k] = states[t * K + k];
      for (std::size_t s = 0; s < S; ++s) theta[2 * K + s] = lift<T>(sequences[s][t]);
      step.template value_and_gradient<T>(theta, grad, step.workspace_size > 0 ? ws : nullptr);
      for (std::size_t k = 0; k < K; ++k) states[(t + 1) * K + k] = grad[k];
    }
    if constexpr (All) {
      for (std::size_t k = 0; k < K; ++k)
        for (std::size_t t = 0; t < steps; ++t) out[k * steps + t] = states[(t + 1) * K + k];
    } else {
      for (std::size_t k = 0; k < m; ++k) out[k] = states[steps * K + k];
    }
  }

  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const*, const std::size_t* in_n,
                        T* const* in_adj, T* scratch) const {
    T* states = scratch;
    T* theta = states + (steps + 1) * K;
    T* grad = theta + step.dim();
    T* carried = grad + step.dim();
    T* ws = carried + K;
    for (std::size_t k = 0; k < K; ++k) carried[k] = All ? adj[k * steps + steps - 1] : adj[k];
    for (std::size_t t = steps; t-- > 0;) {
      // With every state an output, the adjoint of the state after step t − 1 (s_t) is what its
      // own use adds to what flows back from step t (added below, once ∂F/∂s is known).
      for (std::size_t k = 0; k < K; ++k) {
        theta[k] = carried[k];
        theta[K + k] = states[t * K + k];
      }
      for (std::size_t s = 0; s < S; ++s) theta[2 * K + s] = lift<T>(sequences[s][t]);
      step.template value_and_gradient<T>(theta, grad, step.workspace_size > 0 ? ws : nullptr);
      for (std::size_t k = 0; k < K; ++k) carried[k] = grad[K + k];
      if constexpr (All) {
        if (t > 0)
          for (std::size_t k = 0; k < K; ++k) carried[k] += adj[k * steps + t - 1];
      }
      std::size_t o = 2 * K + S;
      for (std::size_t j = 1; j <= Outer; ++j)
        for (std::size_t i = 0; i < in_n[j]; ++i) in_adj[j][i] += grad[o++];
    }
    for (std::size_t k = 0; k < K; ++k) in_adj[0][k] += carried[k];
  }
};

}  // namespace ops

namespace detail {

/// The initial state as a node, and K: a scalar (K = 1), a vector expression of a size known at
/// compile time, or a std::tuple of scalar expressions (stacked into a vector).
template <class Init>
auto scan_initial_node(const Init& init) {
  if constexpr (is_std_tuple<Init>::value) {
    return std::apply(
        [](const auto&... e) {
          static_assert((!is_vector_v<node_t<decltype(e)>> && ...),
                        "tyche::scan(step, init, ...): a tuple 'init' must hold scalar expressions");
          return make_vector_op(ops::stack_map{}, sizeof...(e), as_node(e)...);
        },
        init);
  } else {
    return as_node(init);
  }
}

/// Σₖ aₖ · nextₖ for what the step returned: a scalar (K = 1), a std::tuple of K scalars, or a
/// vector expression of K values.
template <std::size_t K, class Next>
auto scan_objective(const Next& next) {
  const vector_param<scan_adjoint_name, K> a{};
  if constexpr (is_std_tuple<Next>::value) {
    static_assert(std::tuple_size_v<Next> == K,
                  "tyche::scan(step, init, ...): the step returns a tuple whose size is not the "
                  "state's size (that of 'init')");
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      static_assert((!is_vector_v<node_t<std::tuple_element_t<I, Next>>> && ...),
                    "tyche::scan(step, init, ...): a tuple returned by the step must hold scalar "
                    "expressions");
      return ((at(a, I) * std::get<I>(next)) + ...);
    }(std::make_index_sequence<K>{});
  } else if constexpr (!is_vector_v<node_t<Next>>) {
    static_assert(K == 1,
                  "tyche::scan(step, init, ...): the step returns a scalar but the state has more "
                  "than one value; return a std::tuple of them");
    return at(a, 0) * next;
  } else {
    const auto n = as_node(next);
    if (n.size() != K)
      throw std::invalid_argument("tyche::scan(step, init, ...): the step returns a vector of size " +
                                  std::to_string(n.size()) + ", the state has size " + std::to_string(K));
    return sum(a * n);
  }
}

// ---- loop-invariant hoisting ----------------------------------------------------------------
// A step's graph is rewritten before it is compiled: every maximal scalar subexpression that
// uses the model's parameters and no placeholder (q = exp(θ_q), its square, log(g[0]), …) becomes
// a placeholder parameter "__hoist_NNN" of the step, wrapped in assume_support with the
// subexpression's support, and the subexpression itself an operand of the scan: evaluated once
// per evaluation of the model (its adjoint: the sum over steps), not once per step.

/// "__hoist_000", "__hoist_001", …
template <std::size_t I>
constexpr fixed_string<12> hoist_name() {
  static_assert(I < 1000, "tyche::scan: at most 1000 loop-invariant subexpressions in a step");
  const char s[12] = {'_', '_', 'h', 'o', 'i', 's', 't', '_', static_cast<char>('0' + I / 100),
                      static_cast<char>('0' + I / 10 % 10), static_cast<char>('0' + I % 10), '\0'};
  return fixed_string<12>(s);
}
template <class P>
inline constexpr bool is_hoist_placeholder_v = P::name.view().starts_with("__hoist_");
template <class P>
constexpr std::size_t hoist_index() {
  constexpr auto v = P::name.view();
  return std::size_t(v[8] - '0') * 100 + std::size_t(v[9] - '0') * 10 + std::size_t(v[10] - '0');
}

template <class L>
struct uses_placeholder;
template <class... Ps>
struct uses_placeholder<meta::list<Ps...>> : std::bool_constant<(is_scan_placeholder_v<Ps> || ...)> {};

/// A scalar unary or binary node whose parameters are all the model's (none a placeholder).
template <class N>
constexpr bool hoistable() {
  if constexpr (is_vector_v<N>) {
    return false;
  } else if constexpr (kind_of<N> != node_kind::unary && kind_of<N> != node_kind::binary) {
    return false;
  } else {
    using Ps = params_of<N>;
    return Ps::size > 0 && !uses_placeholder<Ps>::value;
  }
}

template <class N>
struct hoisted_support {
  static constexpr interval value = support_of<N>;
};

template <class N>
constexpr std::size_t hoist_count() {
  if constexpr (hoistable<N>()) {
    return 1;
  } else if constexpr (kind_of<N> == node_kind::unary || kind_of<N> == node_kind::sum ||
                       kind_of<N> == node_kind::log_sum_exp) {
    return hoist_count<meta::at<0, children_t<N>>>();
  } else if constexpr (kind_of<N> == node_kind::binary) {
    return hoist_count<meta::at<0, children_t<N>>>() + hoist_count<meta::at<1, children_t<N>>>();
  } else if constexpr (kind_of<N> == node_kind::vector_op || kind_of<N> == node_kind::element) {
    return []<class... Cs>(meta::list<Cs...>) { return (std::size_t{0} + ... + hoist_count<Cs>()); }(children_t<N>{});
  } else {
    return 0;
  }
}

/// The node with its hoistable subexpressions replaced by placeholders numbered from I, and the
/// subexpressions (a std::tuple, in the placeholders' order).
template <std::size_t I, class N>
auto hoist_rewrite(const N& n) {
  if constexpr (hoistable<N>()) {
    using P = param<hoist_name<I>()>;
    using R = rules::assume_support<hoisted_support<N>>;
    return std::pair{unary_node<R, P>{{}, R{}, P{}}, std::tuple<N>{n}};
  } else if constexpr (kind_of<N> == node_kind::unary) {
    auto [a, h] = hoist_rewrite<I>(n.a);
    return std::pair{unary_node<typename N::rule_type, decltype(a)>{{}, n.rule, a}, h};
  } else if constexpr (kind_of<N> == node_kind::binary) {
    auto [a, ha] = hoist_rewrite<I>(n.a);
    auto [b, hb] = hoist_rewrite<I + hoist_count<meta::at<0, children_t<N>>>()>(n.b);
    return std::pair{binary_node<typename N::rule_type, decltype(a), decltype(b)>{{}, n.rule, a, b},
                     std::tuple_cat(ha, hb)};
  } else if constexpr (kind_of<N> == node_kind::sum) {
    auto [a, h] = hoist_rewrite<I>(n.a);
    return std::pair{sum_node<decltype(a)>{{}, a}, h};
  } else if constexpr (kind_of<N> == node_kind::log_sum_exp) {
    auto [a, h] = hoist_rewrite<I>(n.a);
    return std::pair{log_sum_exp_node<decltype(a)>{{}, a}, h};
  } else if constexpr (kind_of<N> == node_kind::element && hoist_count<N>() > 0) {
    auto [v, h] = hoist_rewrite<I>(n.v);
    using V = decltype(v);
    if constexpr (is_buffered_v<V>) return std::pair{element_node<V>{{}, v, n.index}, h};
    else return std::pair{at(v, n.index), h};
  } else if constexpr (kind_of<N> == node_kind::vector_op && hoist_count<N>() > 0) {
    return [&]<std::size_t... J>(std::index_sequence<J...>) {
      using Cs = children_t<N>;
      constexpr std::array<std::size_t, sizeof...(J) + 1> first = [] {
        std::array<std::size_t, sizeof...(J) + 1> f{};
        std::size_t k = 0;
        ((f[J] = k, k += hoist_count<meta::at<J, Cs>>()), ...);
        f[sizeof...(J)] = k;
        return f;
      }();
      auto parts = std::tuple{hoist_rewrite<I + first[J]>(n.template child<J>())...};
      return std::pair{make_vector_op(n.op, n.m, std::get<J>(parts).first...),
                       std::tuple_cat(std::get<J>(parts).second...)};
    }(std::make_index_sequence<children_t<N>::size>{});
  } else {
    return std::pair{n, std::tuple<>{}};
  }
}

template <class Outer>
struct scan_outer_nodes;
template <class... Ps>
struct scan_outer_nodes<meta::list<Ps...>> {
  // The operands for the step's outer parameters: a model parameter as its leaf (a vector of
  // run-time size takes its size from the step's layout), a hoisted placeholder as the
  // subexpression it stands for.
  template <class Program, class Hoisted>
  static auto make(const Program& program, std::size_t first, const Hoisted& hoisted) {
    std::size_t k = first;
    auto one = [&]<class P>(std::type_identity<P>) {
      const std::size_t size = program.view().layout.size[k++];
      if constexpr (is_hoist_placeholder_v<P>) {
        (void)size;
        return std::get<hoist_index<P>()>(hoisted);
      } else if constexpr (kind_of<P> == node_kind::vector_param && P::extent == dynamic_extent) {
        return P(size);
      } else {
        (void)size;
        return P{};
      }
    };
    return std::tuple{one(std::type_identity<Ps>{})...};
  }
};

}  // namespace detail

namespace detail {
template <bool All, class Step, class Init, class... Sequences>
auto scan_impl(Step&& step, const Init& init, const Sequences&... sequences) {
  constexpr std::size_t S = sizeof...(Sequences);
  static_assert(S > 0, "tyche::scan(step, init, sequences...) requires at least one data sequence (data(y))");
  static_assert(((kind_of<detail::node_t<Sequences>> == node_kind::data_vector) && ...),
                "tyche::scan(step, init, sequences...) requires every sequence to be a data vector "
                "(data(y))");
  const auto init_node = detail::scan_initial_node(init);
  using InitNode = std::remove_cvref_t<decltype(init_node)>;
  constexpr std::size_t K = is_vector_v<InitNode> ? InitNode::extent : 1;
  static_assert(K != dynamic_extent,
                "tyche::scan(step, init, ...) requires the state's size to be known at compile "
                "time: make 'init' with shape<K>, or a std::tuple of scalars");

  // The sequences: one length, finite values.
  const std::array<const double*, S> ptrs{detail::as_node(sequences).ptr...};
  const std::array<std::size_t, S> lengths{detail::as_node(sequences).size()...};
  const std::size_t steps = lengths[0];
  if (All && steps == 0)
    throw std::invalid_argument("tyche::scan_states(step, init, sequences...): the sequences are empty; there "
                                "is no state after a step to return");
  for (std::size_t s = 0; s < S; ++s) {
    if (lengths[s] != steps)
      throw std::invalid_argument("tyche::scan(step, init, sequences...): sequence " + std::to_string(s + 1) +
                                  " has " + std::to_string(lengths[s]) + " values, sequence 1 has " +
                                  std::to_string(steps));
    for (std::size_t t = 0; t < steps; ++t)
      if (!std::isfinite(ptrs[s][t]))
        throw std::invalid_argument("tyche::scan(step, init, sequences...): sequence " + std::to_string(s + 1) +
                                    " has value " + std::to_string(ptrs[s][t]) + " at index " +
                                    std::to_string(t + 1) + " (1-based); sequences must be finite");
  }

  // The step's graph, from placeholders.
  using state_param = vector_param<detail::scan_state_name, K>;
  auto next = [&]<std::size_t... I>(std::index_sequence<I...>) {
    static_assert(std::is_invocable_v<Step&, std::conditional_t<K == 1, param_element<state_param>, scan_state<K>>,
                                      param<detail::scan_sequence_name<I>()>...>,
                  "tyche::scan(step, init, sequences...) requires step(state, x...) to take the state "
                  "and one scalar per sequence");
    if constexpr (K == 1) return step(at(state_param{}, 0), param<detail::scan_sequence_name<I>()>{}...);
    else return step(scan_state<K>{}, param<detail::scan_sequence_name<I>()>{}...);
  }(std::make_index_sequence<S>{});
  const auto rewritten = detail::hoist_rewrite<0>(detail::as_node(detail::scan_objective<K>(next)));
  const auto& objective = rewritten.first;
  using F = detail::node_t<decltype(objective)>;
  using outer = typename detail::outer_params<params_of<F>>::type;
  // θ of the step's program: a, s, the sequences' placeholders, then the model's parameters.
  auto build = [&]<std::size_t... I>(std::index_sequence<I...>) {
    using full_layout = meta::concat<meta::list<vector_param<detail::scan_adjoint_name, K>, state_param>,
                                     meta::list<param<detail::scan_sequence_name<I>()>...>, outer>;
    return detail::compile_with_layout<full_layout>(objective, vector_param<detail::scan_adjoint_name, K>{},
                                                    state_param{}, param<detail::scan_sequence_name<I>()>{}...);
  };
  using Program = decltype(build(std::make_index_sequence<S>{}));
  auto program = std::make_shared<const Program>(build(std::make_index_sequence<S>{}));
  auto outer_nodes = detail::scan_outer_nodes<outer>::make(*program, 2 + S, rewritten.second);
  using Op = ops::scan_map<Program, K, S, outer::size, All>;
  Op op{program, program->view(), ptrs, steps};
  const std::size_t m = All ? K * steps : K;
  return std::apply([&](const auto&... p) { return make_vector_op(op, m, init_node, p...); }, outer_nodes);
}
}  // namespace detail

/// The state after a loop over the sequences' values: s₀ = init, sₜ₊₁ = step(sₜ, x₀[t], x₁[t], …)
/// for t = 0 … N − 1, where the sequences are data vectors of N values each (`data(y)`).
/// init is a scalar (the state is one value), a vector expression of a size fixed at compile
/// time, or a std::tuple of scalar expressions. step receives the state — a scalar expression,
/// or for K > 1 values an expression s whose s[k] are its values — and one scalar expression
/// per sequence, and returns the next state in the same form: a scalar, a std::tuple of K
/// scalars, or a vector expression of K values. It may use any random variable or data of the
/// model (capture them), any elementwise function, log_sum_exp, and the families' log densities
/// (normal_lpdf, …). The result is a vector expression of K values (use at(r, k), sum, …).
///
/// Example, the forward algorithm of a 2-state HMM in log space (lg: log transition matrix):
///     auto alpha = scan([&](const auto& a, const auto& y) {
///         return std::tuple{log_sum_exp(a[0] + lg00, a[1] + lg10) + normal_lpdf(y, mu[0], sigma), …};
///       }, init, data(y_rest));
///     target(log_sum_exp(alpha))
template <class Step, class Init, class... Sequences>
auto scan(Step&& step, const Init& init, const Sequences&... sequences) {
  return detail::scan_impl<false>(std::forward<Step>(step), init, sequences...);
}

/// Every state of the loop scan(step, init, sequences...) runs, not only the last: a vector of
/// K·N values, component by component — value k of the state after step t (t = 0 … N − 1) at
/// index k·N + t (0-based), so segment(r, k·N + 1, N) is component k's path (1-based, as Stan's
/// segment). For a state of one value it is the path s₁ … s_N itself. The same loop and cost as
/// scan; the adjoint of each state joins the reverse pass at its step.
///
/// Example, GARCH(1,1) variances (y: returns, err_t = y_t − mu):
///     auto var = scan_states([&](const auto& v, const auto& e_prev) {
///         return omega + alpha * square(e_prev - mu) + beta * v; }, sigma1_sq, data(y_before));
///     normal(mu, sqrt(assume_positive(var))).observe(data(y_after))
template <class Step, class Init, class... Sequences>
auto scan_states(Step&& step, const Init& init, const Sequences&... sequences) {
  return detail::scan_impl<true>(std::forward<Step>(step), init, sequences...);
}

}  // namespace tyche
// ----- end tyche/compile/scan.hpp -----
// ----- begin tyche/compile/tabulate.hpp -----
// tyche/compile/tabulate.hpp — tabulate(n, f, sequences...): a vector of n values whose element i
// is f(i, x₀[i], x₁[i], …), written as a lambda. The element may be any scalar expression of the
// model's random variables and data, including vector-valued parts reduced inside it (a sum over
// all observations that depends on i: the change point's log p(y, s) for every s is
// tabulate(T, [&](auto s) { return sum(...); })), so a double loop is written without unrolling.
//
// As with scan (compile/scan.hpp, docs/design/scan.md), the lambda is called once, on
// placeholder expressions (i, and one scalar per sequence), when the model is built; what it
// returns is the element's graph, a type, compiled once into a program with
// θ = (i, x, p), p the model's parameters the lambda uses. The result is a vector_op
// (docs/design/vector-ops.md) whose operands are those parameters: its forward pass runs the
// element program's value n times, its reverse pass the element's gradient n times, each scaled
// by the adjoint of element i. Compile time does not depend on n.

#include <array>
#include <cmath>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace tyche {

namespace detail {
/// The placeholder of the index i (0-based) of the element being computed.
inline constexpr fixed_string tabulate_index_name = "__scan_index";
}  // namespace detail

namespace ops {

/// The op of a tabulate node: n elements, S sequences of n values, Outer parameters as operands
/// 0 … Outer − 1. Program: the element, θ laid out as (i, x: S, the Outer parameters in operand
/// order).
template <class Program, std::size_t S, std::size_t Outer>
struct tabulate_map {
  static constexpr const char* name = "tabulate";
  static constexpr bool has_payload = true;
  template <class... Cs>
  static constexpr std::size_t extent = dynamic_extent;
  using view_type = typename Program::view_type;

  std::shared_ptr<const Program> program;  // owns the element's folded data
  view_type element;                       // its evaluable part
  std::array<const double*, S> sequences{};

  bool operator==(const tabulate_map& o) const { return program == o.program && sequences == o.sequences; }
  /// θ, its gradient and the element's workspace.
  std::size_t scratch_size(std::size_t, const std::size_t*) const {
    return 2 * element.dim() + element.workspace_size;
  }

  /// θ = (i, x[i], p) for element i (p already in place from `first`).
  template <class T>
  TYCHE_HD void set_theta(T* theta, std::size_t i) const {
    theta[0] = lift<T>(static_cast<double>(i));
    for (std::size_t s = 0; s < S; ++s) theta[1 + s] = lift<T>(sequences[s][i]);
  }
  template <class T>
  TYCHE_HD void set_outer(T* theta, const T* const* in, const std::size_t* in_n) const {
    std::size_t o = 1 + S;
    for (std::size_t j = 0; j < Outer; ++j)
      for (std::size_t k = 0; k < in_n[j]; ++k) theta[o++] = in[j][k];
  }

  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t* in_n, T* scratch) const {
    T* theta = scratch;
    T* ws = theta + 2 * element.dim();
    set_outer(theta, in, in_n);
    for (std::size_t i = 0; i < m; ++i) {
      set_theta(theta, i);
      out[i] = element.template value<T>(theta, element.workspace_size > 0 ? ws : nullptr);
    }
  }

  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const* in, const std::size_t* in_n,
                        T* const* in_adj, T* scratch) const {
    T* theta = scratch;
    T* grad = theta + element.dim();
    T* ws = grad + element.dim();
    set_outer(theta, in, in_n);
    for (std::size_t i = 0; i < m; ++i) {
      set_theta(theta, i);
      element.template value_and_gradient<T>(theta, grad, element.workspace_size > 0 ? ws : nullptr);
      std::size_t o = 1 + S;
      for (std::size_t j = 0; j < Outer; ++j)
        for (std::size_t k = 0; k < in_n[j]; ++k) in_adj[j][k] += adj[i] * grad[o++];
    }
  }
};

}  // namespace ops

/// A vector of n values, element i (0-based) being f(i, x₀[i], x₁[i], …): f receives i as a
/// scalar expression (its value is the index, 0 … n − 1) and one scalar expression per
/// sequence (data vectors of n values each, `data(y)`), and returns a scalar expression. f may
/// use any random variable or data of the model (capture them), vector expressions reduced to a
/// scalar (sum, log_sum_exp, dot products), any elementwise function and the families' log
/// densities (normal_lpdf, …). The result is a vector expression of n values.
///
/// Example, the change point's log p(y, s | e, l) for every s (y: T counts, t: 0 … T − 1), a
/// double loop written as one:
///     auto lp = tabulate(T, [&](const auto& s) {
///       auto early = step(s - data(t) - 0.5);                    // 1 where t < s
///       return poisson_log_lpmf(data(y), log(l) + (log(e) - log(l)) * early);
///     });
///     target(log_sum_exp(lp))
template <class F, class... Sequences>
auto tabulate(std::size_t n, F&& f, const Sequences&... sequences) {
  constexpr std::size_t S = sizeof...(Sequences);
  static_assert(((kind_of<detail::node_t<Sequences>> == node_kind::data_vector) && ...),
                "tyche::tabulate(n, f, sequences...) requires every sequence to be a data vector (data(y))");
  if (n == 0) throw std::invalid_argument("tyche::tabulate(n, f, ...): n is 0; the vector would be empty");
  const std::array<const double*, S> ptrs{detail::as_node(sequences).ptr...};
  const std::array<std::size_t, S> lengths{detail::as_node(sequences).size()...};
  for (std::size_t s = 0; s < S; ++s) {
    if (lengths[s] != n)
      throw std::invalid_argument("tyche::tabulate(n, f, sequences...): sequence " + std::to_string(s + 1) +
                                  " has " + std::to_string(lengths[s]) + " values, n is " + std::to_string(n));
    for (std::size_t t = 0; t < n; ++t)
      if (!std::isfinite(ptrs[s][t]))
        throw std::invalid_argument("tyche::tabulate(n, f, sequences...): sequence " + std::to_string(s + 1) +
                                    " has value " + std::to_string(ptrs[s][t]) + " at index " +
                                    std::to_string(t + 1) + " (1-based); sequences must be finite");
  }

  using index_param = param<detail::tabulate_index_name>;
  auto element = [&]<std::size_t... I>(std::index_sequence<I...>) {
    static_assert(std::is_invocable_v<F&, index_param, param<detail::scan_sequence_name<I>()>...>,
                  "tyche::tabulate(n, f, sequences...) requires f(i, x...) to take the index and one "
                  "scalar per sequence");
    return f(index_param{}, param<detail::scan_sequence_name<I>()>{}...);
  }(std::make_index_sequence<S>{});
  const auto rewritten = detail::hoist_rewrite<0>(detail::as_node(element));  // loop invariants out
  using E = detail::node_t<decltype(rewritten.first)>;
  static_assert(!is_vector_v<E>,
                "tyche::tabulate(n, f, ...): f must return a scalar expression (one element); reduce "
                "a vector with sum(...) or log_sum_exp(...)");
  using outer = typename detail::outer_params<params_of<E>>::type;
  static_assert(outer::size > 0,
                "tyche::tabulate(n, f, ...): the element uses no random variable; compute the "
                "vector in C++ and use it as data(v)");
  auto build = [&]<std::size_t... I>(std::index_sequence<I...>) {
    using full_layout = meta::concat<meta::list<index_param>, meta::list<param<detail::scan_sequence_name<I>()>...>,
                                     outer>;
    return detail::compile_with_layout<full_layout>(rewritten.first, index_param{},
                                                    param<detail::scan_sequence_name<I>()>{}...);
  };
  using Program = decltype(build(std::make_index_sequence<S>{}));
  auto program = std::make_shared<const Program>(build(std::make_index_sequence<S>{}));
  auto outer_nodes = detail::scan_outer_nodes<outer>::make(*program, 1 + S, rewritten.second);
  using Op = ops::tabulate_map<Program, S, outer::size>;
  Op op{program, program->view(), ptrs};
  return std::apply([&](const auto&... p) { return make_vector_op(op, n, p...); }, outer_nodes);
}

}  // namespace tyche
// ----- end tyche/compile/tabulate.hpp -----
// ----- begin tyche/operations/hmm.hpp -----
// tyche/operations/hmm.hpp — hmm_marginal(log_omega, Gamma, rho): the log marginal likelihood
// of a hidden Markov model, its discrete states summed out by the forward algorithm, with the
// gradient from the backward algorithm (Stan 2.24's function of the same name and arguments).
// The op is in autodiff/hmm.hpp. For a recursion that is not an HMM, write its step with scan
// (compile/scan.hpp).
// ----- begin tyche/autodiff/hmm.hpp -----
// tyche/autodiff/hmm.hpp — the value and vector–Jacobian rule of hmm_marginal
// (operations/hmm.hpp): the log marginal likelihood of a hidden Markov model with K states and
// N observations, the states summed out by the forward algorithm, and its gradient by the
// backward algorithm.
//
// With ω[k, t] the log density of observation t in state k, Γ the transition matrix
// (Γᵢⱼ = p(zₜ = j | zₜ₋₁ = i)) and ρ the initial distribution, L = Σ over all state paths z of
// ρ_{z₀} e^{ω[z₀, 0]} Πₜ Γ_{zₜ₋₁ zₜ} e^{ω[zₜ, t]}. Scaled forward pass (Rabiner 1989, section
// V.A; Stan's hmm_marginal computes the same quantity):
//   mₜ = maxₖ ω[k, t],  α̃ₜ(j) = e^{ω[j, t] − mₜ} · (t = 0: ρⱼ; else Σᵢ α̂ₜ₋₁(i) Γᵢⱼ),
//   cₜ = Σⱼ α̃ₜ(j),  α̂ₜ = α̃ₜ / cₜ,  log L = Σₜ (log cₜ + mₜ).
// Reverse, with β̂ the backward variables scaled by the same factors (β̂_{N−1} = 1,
// β̂ₜ₋₁(i) = Σⱼ Γᵢⱼ eⱼ, eⱼ = e^{ω[j, t] − mₜ} β̂ₜ(j) / cₜ) — so that α̂ₜ(k) β̂ₜ(k) is the posterior
// probability of state k at t:
//   ∂log L/∂ω[k, t] = α̂ₜ(k) β̂ₜ(k),  ∂log L/∂Γᵢⱼ = Σ_{t ≥ 1} α̂ₜ₋₁(i) eⱼ(t),
//   ∂log L/∂ρₖ = e^{ω[k, 0] − m₀} β̂₀(k) / c₀.
// O(N K²) each way; the N·K scaled forward variables and the N scales are kept in scratch space
// between the passes. Γ and ρ enter as given (no check that they are stochastic: that is what
// the caller's simplex parameters or data guarantee).

#include <cmath>
#include <cstddef>

namespace tyche::ops {

/// The op of hmm_marginal: one value. Operands: ω as one vector of K·N values (row k = state
/// k, row major: Stan's K × N log_omega) or as K vectors of N values (omega_rows = true); then
/// Γ as one vector of K² values (row major) or as its K rows (gamma_rows = true); then ρ (K).
struct hmm_marginal_map {
  static constexpr const char* name = "hmm_marginal";
  static constexpr bool has_payload = true;
  /// Its data operands are checked when it is made (log_omega may hold −inf: an observation
  /// impossible in a state), so joint(...)'s finiteness check does not look below it.
  static constexpr bool checks_own_data = true;
  template <class... Cs>
  static constexpr std::size_t extent = 1;
  std::size_t k = 0;  // states
  std::size_t n = 0;  // observations
  bool omega_rows = false;
  bool gamma_rows = false;
  bool operator==(const hmm_marginal_map&) const = default;

  /// α̂ (N·K), c (N), m (N), β̂ (K), e (K).
  std::size_t scratch_size(std::size_t, const std::size_t*) const { return n * k + 2 * n + 2 * k; }

  TYCHE_HD std::size_t gamma_operand() const { return omega_rows ? k : 1; }
  TYCHE_HD std::size_t rho_operand() const { return gamma_operand() + (gamma_rows ? k : 1); }
  template <class T>
  TYCHE_HD const T& omega(const T* const* in, std::size_t s, std::size_t t) const {
    return omega_rows ? in[s][t] : in[0][s * n + t];
  }
  template <class T>
  TYCHE_HD T& omega_adj(T* const* in_adj, std::size_t s, std::size_t t) const {
    return omega_rows ? in_adj[s][t] : in_adj[0][s * n + t];
  }
  template <class P>
  TYCHE_HD auto& gamma(P in, std::size_t i, std::size_t j) const {
    return gamma_rows ? in[gamma_operand() + i][j] : in[gamma_operand()][i * k + j];
  }

  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*, T* scratch) const {
    T* alpha = scratch;
    T* c = alpha + n * k;
    T* mx = c + n;
    const T* rho = in[rho_operand()];
    T log_l = lift<T>(0.0);
    for (std::size_t t = 0; t < n; ++t) {
      T m = omega(in, 0, t);
      for (std::size_t j = 1; j < k; ++j) m = math::max(m, omega(in, j, t));
      // Every state impossible at t (m = −inf): no shift, so that the scale is 0 and log L −inf.
      m = math::select(m > lift<T>(-INFINITY), m, lift<T>(0.0));
      T total = lift<T>(0.0);
      for (std::size_t j = 0; j < k; ++j) {
        T predicted;
        if (t == 0) {
          predicted = rho[j];
        } else {
          predicted = lift<T>(0.0);
          for (std::size_t i = 0; i < k; ++i) predicted = predicted + alpha[(t - 1) * k + i] * gamma(in, i, j);
        }
        const T a = predicted * math::exp(omega(in, j, t) - m);
        alpha[t * k + j] = a;
        total = total + a;
      }
      // A zero scale (no state possible given what came before) makes log L −inf; the forward
      // variables stay 0 instead of 0/0.
      const T safe_total = math::select(total > lift<T>(0.0), total, lift<T>(1.0));
      for (std::size_t j = 0; j < k; ++j) alpha[t * k + j] = alpha[t * k + j] / safe_total;
      c[t] = total;
      mx[t] = m;
      log_l = log_l + math::log(total) + m;
    }
    out[0] = log_l;
  }

  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj, T* scratch) const {
    const T* alpha = scratch;
    const T* c = alpha + n * k;
    const T* mx = c + n;
    T* beta = scratch + n * k + 2 * n;
    T* e = beta + k;
    const T a0 = adj[0];
    for (std::size_t j = 0; j < k; ++j) beta[j] = lift<T>(1.0);
    for (std::size_t t = n; t-- > 0;) {
      for (std::size_t j = 0; j < k; ++j) {
        omega_adj(in_adj, j, t) += a0 * alpha[t * k + j] * beta[j];
        e[j] = math::exp(omega(in, j, t) - mx[t]) * beta[j] / c[t];
      }
      if (t == 0) {
        for (std::size_t j = 0; j < k; ++j) in_adj[rho_operand()][j] += a0 * e[j];
      } else {
        for (std::size_t i = 0; i < k; ++i) {
          T b = lift<T>(0.0);
          for (std::size_t j = 0; j < k; ++j) {
            gamma(in_adj, i, j) += a0 * alpha[(t - 1) * k + i] * e[j];
            b = b + gamma(in, i, j) * e[j];
          }
          beta[i] = b;
        }
      }
    }
  }
};

}  // namespace tyche::ops
// ----- end tyche/autodiff/hmm.hpp -----
// ----- begin tyche/scalar/format.hpp -----
// tyche/scalar/format.hpp — numbers in messages: the shortest decimal text that reads back to
// the same double where it has at most 10 significant digits ("0.1", "-1e-09", "3",
// "2147483648"), else 10 significant digits ("0.96" for 0.9600000000000001, the rounding noise
// of a sum); "nan", "inf", "-inf". (std::to_string would print "0.100000", "-0.000000".)

#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <system_error>

namespace tyche::detail {

inline std::string format_number(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  if (r.ec != std::errc{}) return "?";
  const std::string shortest(buf, r.ptr);
  int digits = 0;
  for (const char c : shortest) {
    if (c == 'e') break;
    digits += c >= '0' && c <= '9' ? 1 : 0;
  }
  if (digits <= 10) return shortest;
  std::snprintf(buf, sizeof buf, "%.10g", x);
  return buf;
}

}  // namespace tyche::detail
// ----- end tyche/scalar/format.hpp -----

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>

namespace tyche {

namespace detail {
template <class T>
struct is_tuple_of : std::false_type {};
template <class... Ts>
struct is_tuple_of<std::tuple<Ts...>> : std::true_type {};

/// The operand nodes of a matrix argument given whole (one vector) or by rows (a std::tuple of
/// vectors), and the sizes of its pieces.
template <class M>
auto hmm_matrix_nodes(const M& m) {
  if constexpr (is_tuple_of<M>::value) {
    return std::apply([](const auto&... r) { return std::tuple{as_node(r)...}; }, m);
  } else {
    return std::tuple{as_node(m)};
  }
}

template <class Node>
void hmm_check_data(const Node& node, const char* arg, std::size_t piece, bool probabilities) {
  if constexpr (kind_of<Node> == node_kind::data_vector) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      const double v = node.ptr[i];
      const bool bad = probabilities ? !(v >= 0 && v <= 1) : (std::isnan(v) || v == INFINITY);
      if (bad)
        throw std::invalid_argument(std::string("tyche::hmm_marginal(log_omega, Gamma, rho): '") + arg + "'" +
                                    (piece ? " row " + std::to_string(piece) : std::string()) + " has value " +
                                    tyche::detail::format_number(v) + " at index " + std::to_string(i + 1) +
                                    (probabilities ? " (1-based); it must be a probability in [0, 1]"
                                                   : " (1-based); log densities must not be NaN or +inf"));
    }
  }
}
}  // namespace detail

/// log p(y) of a hidden Markov model with K states and N observations, the states summed out:
///   log_omega  the log densities of the observations in each state, log p(yₜ | zₜ = k): one
///              vector of K·N values (row k holds state k's N values: Stan's K × N matrix, row
///              major) or a std::tuple of K vectors of N values, e.g.
///              `std::tuple{pointwise_log_density(normal(mu[0], sigma), data(y)), …}`;
///   Gamma      the transition matrix, Γᵢⱼ = p(zₜ = j | zₜ₋₁ = i): one vector of K² values (row
///              major) or a std::tuple of its K rows (e.g. K simplex random variables);
///   rho        the initial state's distribution, a vector of K values (a simplex).
/// One scalar; add it to the model with target(...). Gradients flow to every argument.
/// O(N K²) per evaluation, forwards and backwards; the forward variables are kept (N·K values).
template <class Omega, class Gamma, class Rho>
auto hmm_marginal(const Omega& log_omega, const Gamma& gamma, const Rho& rho) {
  using NR = detail::node_t<Rho>;
  static_assert(is_vector_v<NR>, "tyche::hmm_marginal(log_omega, Gamma, rho): 'rho' (the initial state's "
                                 "distribution, K values) must be a vector expression");
  const NR rho_node = detail::as_node(rho);
  const std::size_t k = rho_node.size();
  if (k == 0) throw std::invalid_argument("tyche::hmm_marginal(log_omega, Gamma, rho): 'rho' has no values");
  constexpr bool omega_rows = detail::is_tuple_of<Omega>::value;
  constexpr bool gamma_rows = detail::is_tuple_of<Gamma>::value;
  const auto omega_nodes = detail::hmm_matrix_nodes(log_omega);
  const auto gamma_nodes = detail::hmm_matrix_nodes(gamma);
  const std::string fn = "tyche::hmm_marginal(log_omega, Gamma, rho): ";

  std::size_t n = 0;
  std::apply(
      [&](const auto&... r) {
        static_assert((is_vector_v<std::remove_cvref_t<decltype(r)>> && ...),
                      "tyche::hmm_marginal(log_omega, Gamma, rho): 'log_omega' must be a vector "
                      "expression (K*N values, row k for state k) or a std::tuple of K vector "
                      "expressions (N values each)");
        if constexpr (omega_rows) {
          if (sizeof...(r) != k)
            throw std::invalid_argument(fn + "'log_omega' has " + std::to_string(sizeof...(r)) +
                                        " rows but 'rho' has " + std::to_string(k) + " states");
          std::size_t row = 0;
          ((n = row == 0 ? r.size() : n,
            r.size() != n ? throw std::invalid_argument(fn + "'log_omega' row " + std::to_string(row + 1) + " has " +
                                                        std::to_string(r.size()) + " values, row 1 has " +
                                                        std::to_string(n))
                          : void(),
            detail::hmm_check_data(r, "log_omega", ++row, false)),
           ...);
        } else {
          const std::size_t total = (r.size(), ...);
          if (total % k != 0)
            throw std::invalid_argument(fn + "'log_omega' has " + std::to_string(total) +
                                        " values, not a multiple of the " + std::to_string(k) +
                                        " states of 'rho' (K*N values, row major)");
          n = total / k;
          (detail::hmm_check_data(r, "log_omega", 0, false), ...);
        }
      },
      omega_nodes);
  std::apply(
      [&](const auto&... r) {
        static_assert((is_vector_v<std::remove_cvref_t<decltype(r)>> && ...),
                      "tyche::hmm_marginal(log_omega, Gamma, rho): 'Gamma' must be a vector "
                      "expression (K*K values, row major) or a std::tuple of its K rows");
        if constexpr (gamma_rows) {
          if (sizeof...(r) != k)
            throw std::invalid_argument(fn + "'Gamma' has " + std::to_string(sizeof...(r)) + " rows but 'rho' has " +
                                        std::to_string(k) + " states");
          std::size_t row = 0;
          ((++row, r.size() != k ? throw std::invalid_argument(fn + "'Gamma' row " + std::to_string(row) + " has " +
                                                               std::to_string(r.size()) + " values, not " +
                                                               std::to_string(k))
                                 : void(),
            detail::hmm_check_data(r, "Gamma", row, true)),
           ...);
        } else {
          const std::size_t total = (r.size(), ...);
          if (total != k * k)
            throw std::invalid_argument(fn + "'Gamma' has " + std::to_string(total) + " values, not " +
                                        std::to_string(k) + "*" + std::to_string(k) + " (the " + std::to_string(k) +
                                        " states of 'rho', row major)");
          (detail::hmm_check_data(r, "Gamma", 0, true), ...);
        }
      },
      gamma_nodes);
  detail::hmm_check_data(rho_node, "rho", 0, true);

  const ops::hmm_marginal_map op{k, n, omega_rows, gamma_rows};
  const auto node = std::apply(
      [&](const auto&... o) {
        return std::apply([&](const auto&... g) { return make_vector_op(op, 1, o..., g..., rho_node); }, gamma_nodes);
      },
      omega_nodes);
  return at(node, 0);
}

}  // namespace tyche
// ----- end tyche/operations/hmm.hpp -----
// ----- begin tyche/compile/explain.hpp -----
// tyche/compile/explain.hpp — explain(program or model): what a log density became after
// folding and the rewrites of partial evaluation, as one line of nested operations, e.g.
//
//   ((-1/2 * (residual_squares(alpha, beta[4]; n=434) / square(sigma))) - (434 * log(sigma))) - 398.8
//
// Leaves: numbers (literals as fractions), parameter names (vector parameters with their size),
// data[n], matrix[r x c]. A sum shows its length: sum[n](...). Use it to see whether a model's
// likelihood was reduced to sufficient statistics (residual_squares) or runs as a loop over the
// data (sum[n]).
//
// explain(m, with_supports) also prints the support of every node but numbers
// (interval/support.hpp, with the data read) after it in braces:
//
//   (exp(sigma{(-inf, inf)}){(0, inf)} * data[3]{[1, 2]}){(0, inf)}

#include <cstdio>
#include <string>
#include <type_traits>

namespace tyche {

namespace detail {

inline std::string explain_number(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.10g", x);
  return buffer;
}

template <class Rule>
constexpr const char* infix_symbol() {
  if constexpr (std::is_same_v<Rule, rules::add>) return " + ";
  else if constexpr (std::is_same_v<Rule, rules::subtract>) return " - ";
  else if constexpr (std::is_same_v<Rule, rules::multiply>) return " * ";
  else if constexpr (std::is_same_v<Rule, rules::divide>) return " / ";
  else return nullptr;
}

template <std::intmax_t Num, std::intmax_t Den>
std::string explain_literal(literal<Num, Den>) {
  if constexpr (Den == 1) return std::to_string(Num);
  else return std::to_string(Num) + "/" + std::to_string(Den);
}

template <class N>
std::string explain_node(const N& n, bool supports);

/// n as text, followed by {its support} when supports is set (not for numbers).
template <class N>
std::string explain_child(const N& n, bool supports) {
  std::string s = explain_node(n, supports);
  constexpr node_kind k = kind_of<N>;
  if (supports && k != node_kind::literal && k != node_kind::constant)
    s += "{" + to_string(support(n)) + "}";
  return s;
}

/// The pieces appended in order. Not `std::string(name) + "..." + ...`: with a name known at
/// compile time, g++ 12 at -O2 warns about those chains (-Warray-bounds, a false positive, GCC
/// PR 105651).
template <class... Pieces>
std::string concat(const Pieces&... pieces) {
  std::string out;
  ((out += pieces), ...);
  return out;
}

template <class N>
std::string explain_node(const N& n, bool supports) {
  (void)supports;  // unused for leaves
  constexpr node_kind k = kind_of<N>;
  if constexpr (k == node_kind::literal) {
    using L = std::remove_cvref_t<N>;
    return explain_literal(L{});
  } else if constexpr (k == node_kind::constant) {
    return explain_number(n.value);
  } else if constexpr (k == node_kind::param) {
    return std::string(N::name.view());
  } else if constexpr (k == node_kind::vector_param) {
    return concat(N::name.view(), "[", std::to_string(n.size()), "]");
  } else if constexpr (k == node_kind::param_element) {
    return concat(N::vector_type::name.view(), "[", std::to_string(n.index + 1), "]");
  } else if constexpr (k == node_kind::data_vector) {
    return "data[" + std::to_string(n.size()) + "]";
  } else if constexpr (k == node_kind::data_matrix) {
    return "matrix[" + std::to_string(n.rows) + " x " + std::to_string(n.cols) + "]";
  } else if constexpr (k == node_kind::unary) {
    return concat(N::rule_type::name, "(", explain_child(n.a, supports), ")");
  } else if constexpr (k == node_kind::binary) {
    constexpr const char* symbol = infix_symbol<typename N::rule_type>();
    if constexpr (symbol != nullptr)
      return "(" + explain_child(n.a, supports) + symbol + explain_child(n.b, supports) + ")";
    else
      return concat(N::rule_type::name, "(", explain_child(n.a, supports), ", ", explain_child(n.b, supports), ")");
  } else if constexpr (k == node_kind::sum) {
    return "sum[" + std::to_string(n.a.size()) + "](" + explain_child(n.a, supports) + ")";
  } else if constexpr (k == node_kind::log_sum_exp) {
    return "log_sum_exp[" + std::to_string(n.a.size()) + "](" + explain_child(n.a, supports) + ")";
  } else if constexpr (k == node_kind::matvec) {
    return "matvec(" + explain_child(n.x, supports) + ", " + explain_child(n.v, supports) + ")";
  } else if constexpr (k == node_kind::vector_op) {
    std::string out = concat(N::op_type::name, "[", std::to_string(n.size()), "](");
    meta::static_for<children_t<N>::size>([&](auto j) {
      if (decltype(j)::value > 0) out += ", ";
      out += explain_child(n.template child<decltype(j)::value>(), supports);
    });
    return out + ")";
  } else if constexpr (k == node_kind::element) {
    return explain_child(n.v, supports) + "[" + std::to_string(n.index + 1) + "]";
  } else if constexpr (k == node_kind::param_gather) {
    return concat(N::vector_type::name.view(), "[idx[", std::to_string(n.size()), "]]");
  } else if constexpr (k == node_kind::residual_squares) {
    return "residual_squares(" + explain_child(n.s, supports) + ", " + explain_child(n.v, supports) + "; n=" +
           explain_number(n.stats[2]) + ")";
  } else {
    return "?";
  }
}

}  // namespace detail

/// Tag for explain(..., with_supports): print the support of every node.
struct explain_with_supports_t {};
inline constexpr explain_with_supports_t with_supports{};

/// The folded and rewritten expression of a compiled program, as one line.
template <class Expr, class Layout>
std::string explain(const program<Expr, Layout>& p) {
  return detail::explain_node(p.view().expr, false);
}
/// The same, with the support of every node (but numbers) in braces after it.
template <class Expr, class Layout>
std::string explain(const program<Expr, Layout>& p, explain_with_supports_t) {
  return detail::explain_child(p.view().expr, true);
}

/// The folded and rewritten log density of a model (with the log-Jacobian), as one line.
template <class M>
  requires requires(const M& m) { m.program(); }
std::string explain(const M& m) {
  return explain(m.program());
}
template <class M>
  requires requires(const M& m) { m.program(); }
std::string explain(const M& m, explain_with_supports_t) {
  return explain(m.program(), with_supports);
}

/// An expression (not compiled: nothing folded), with the support of every node.
template <expression E>
std::string explain(const E& e, explain_with_supports_t) {
  return detail::explain_child(detail::as_node(e), true);
}

}  // namespace tyche
// ----- end tyche/compile/explain.hpp -----
// ----- begin tyche/distributions.hpp -----
// tyche/distributions.hpp — every distribution family.
// ----- begin tyche/distributions/bernoulli.hpp -----
// tyche/distributions/bernoulli.hpp — bernoulli(p), for observations only.
//   log p(y | p) = y log p + (1 − y) log(1 − p),   y ∈ {0, 1}, 0 ≤ p ≤ 1.
// The data (y) must be 0 or 1: observe throws "... y[i] = v is not 0 or 1" otherwise. At p = 0 or
// p = 1 the term 0 · log 0 evaluates to NaN (not 0), as in the naive formula: use bernoulli_logit
// where p may reach the boundary.
// ----- begin tyche/distributions/detail/family.hpp -----
// tyche/distributions/detail/family.hpp — what every distribution header uses: the base class
// (distributions/distribution.hpp), the transforms from the unconstrained line to a support
// given by bounds, building a named random variable (distributions/random_variable.hpp) or an
// unnamed distribution from user arguments, constants, and the checks of observed values that
// families with the same support share. (The sum over the elements of an elementwise log
// density, detail::total, is in operations/functions.hpp, shared with the transforms'
// log-Jacobians.)
// ----- begin tyche/distributions/distribution.hpp -----
// tyche/distributions/distribution.hpp — the base class of every distribution family
// (distribution<Derived>: observe(data) makes a likelihood term, with the data checked against
// the family's support), the likelihood term itself (observed<Dist, X>), and the rebuilding of a
// distribution with other arguments (do_ substitutes a value into the arguments).

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace tyche {

// ---- the base class and the likelihood term ---------------------------------------------------

template <class Dist, class X>
struct observed;

/// CRTP base of every distribution: observe(data) makes a likelihood term.
template <class Derived>
struct distribution {
  const Derived& derived() const { return static_cast<const Derived&>(*this); }

  /// The likelihood term log p(x | arguments) for observed x (data, usually). Data values are
  /// checked now: a value outside the family's support throws, naming the index and value.
  template <class X>
  auto observe(const X& x) const {
    if constexpr (!distribution_family<Derived>) {
      static_assert(distribution_family<Derived>,
                    "tyche: observe(x) needs a distribution family: a struct deriving from "
                    "tyche::distribution<itself> with `family` (its name) and `arguments()` "
                    "(tyche/concepts.hpp, distribution_family)");
      return 0;
    } else {
      using N = detail::node_t<X>;
      const N node = detail::as_node(x);
      if constexpr (kind_of<N> == node_kind::data_vector) {
        for (std::size_t i = 0; i < node.size(); ++i) check_observation(node.ptr[i], i);
      } else if constexpr (kind_of<N> == node_kind::constant) {
        check_observation(node.value, 0);
      }
      return observed<Derived, N>{derived(), node};
    }
  }

 private:
  void check_observation(double v, std::size_t i) const {
    const char* problem = nullptr;
    if (!std::isfinite(v)) problem = "is not finite";
    else if constexpr (requires { Derived::observation_problem(v); }) problem = Derived::observation_problem(v);
    if (problem)
      throw std::invalid_argument(std::string("tyche::") + Derived::family + "(...).observe(y): y[" +
                                  std::to_string(i + 1) + "] = " + tyche::detail::format_number(v) + " " +
                                  problem);
  }
};

namespace detail {
/// Dist<A...> with its arguments replaced: Dist<B...>{{}, b...}.
template <class Dist>
struct rebuild_distribution;
template <template <class...> class D, class... A>
struct rebuild_distribution<D<A...>> {
  template <class... B>
  static auto make(const B&... b) {
    return D<B...>{{}, b...};
  }
};

/// Distribution d with its arguments (in the order of d.arguments()) replaced by b...: through
/// d.with_arguments(b...) when d holds more than its arguments (a matrix's order, a factored
/// covariance, the family under a constraint), else by rebuilding Dist<B...>.
template <class Dist, class... B>
auto with_arguments(const Dist& d, const B&... b) {
  if constexpr (requires { d.with_arguments(b...); }) return d.with_arguments(b...);
  else return rebuild_distribution<Dist>::make(b...);
}
}  // namespace detail

/// A likelihood term: distribution Dist observed at x.
template <class Dist, class X>
struct observed {
  Dist distribution;
  X value;
  auto log_density() const { return distribution.log_prob(value); }
};

}  // namespace tyche
// ----- end tyche/distributions/distribution.hpp -----
// ----- begin tyche/distributions/random_variable.hpp -----
// tyche/distributions/random_variable.hpp — named random variables: parameters with a prior,
// made by a distribution's named form (`normal<"mu">(0.0, 5.0)`), of a shape (scalar_shape,
// shape<N>, shape_of(n)). A random variable is used in expressions as its value: the transform
// (chosen from the distribution's support) of an unconstrained parameter. It lives beside the
// distributions that make it; model/ gathers random variables and likelihood terms into a
// joint density.

#include <cstddef>
#include <type_traits>
#include <utility>

namespace tyche {

// ---- shapes ---------------------------------------------------------------------------------

struct scalar_shape {};
/// A vector of N values, N fixed at compile time: `std_normal<"z">(shape<8>)`.
template <std::size_t N>
struct static_shape {
  static constexpr std::size_t size = N;
};
template <std::size_t N>
inline constexpr static_shape<N> shape{};
/// A vector whose size is given at run time: `std_normal<"z">(shape_of(n))`.
struct dynamic_shape {
  std::size_t size;
};
inline dynamic_shape shape_of(std::size_t n) { return {n}; }

template <class S>
concept shape_tag = std::is_same_v<S, scalar_shape> || std::is_same_v<S, dynamic_shape> ||
                    requires { S::size; };

namespace detail {
template <fixed_string Name, class Shape>
struct param_for;
template <fixed_string Name>
struct param_for<Name, scalar_shape> {
  using type = param<Name>;
  static type make(scalar_shape) { return {}; }
};
template <fixed_string Name, std::size_t N>
struct param_for<Name, static_shape<N>> {
  using type = vector_param<Name, N>;
  static type make(static_shape<N>) { return {}; }
};
template <fixed_string Name>
struct param_for<Name, dynamic_shape> {
  using type = vector_param<Name>;
  static type make(dynamic_shape s) { return type(s.size); }
};
}  // namespace detail

// ---- random variables ---------------------------------------------------------------------------

/// A named random variable: a parameter with a prior. In expressions it is its value.
template <fixed_string Name, class Dist, class Shape>
struct random_variable : expr<random_variable<Name, Dist, Shape>> {
  static_assert(continuous_family<Dist>,
                "tyche: a named random variable needs a continuous family as its distribution: a "
                "struct with `family`, `arguments()`, `log_prob(x)` and `transform()` (the bijection "
                "onto its support; tyche/concepts.hpp, continuous_family). Discrete families "
                "(poisson, bernoulli, ...) can only be observed");
  static constexpr auto name = Name;
  using distribution_type = Dist;
  using shape_type = Shape;
  using param_type = typename detail::param_for<Name, Shape>::type;

  Dist distribution;
  param_type parameter;
  static_assert(transform_of<decltype(std::declval<const Dist&>().transform()), param_type>,
                "tyche: a named random variable's transform (its family's transform()) must have "
                "`name`, `constrain(u)` and `log_jacobian(u)` for the unconstrained parameter u "
                "(tyche/concepts.hpp, transform_of)");

  random_variable(Dist d, Shape s)
      : distribution(d), parameter(detail::param_for<Name, Shape>::make(s)) {}

  /// The transform from the unconstrained line to the distribution's support.
  auto transform() const { return distribution.transform(); }
  /// The variable's value: transform(parameter), a core expression.
  auto value_expression() const { return transform().constrain(parameter); }
  /// log p(value | arguments), summed over the elements of a vector variable.
  auto log_prior() const { return distribution.log_prob(value_expression()); }
  /// log |d value / d parameter|, summed over the elements.
  auto log_jacobian() const { return transform().log_jacobian(parameter); }
  /// Element k (0-based) of a vector variable: `theta[0]` is Stan's theta[1].
  auto operator[](std::size_t k) const { return at(value_expression(), k); }
  /// Number of scalar parameters.
  std::size_t size() const {
    if constexpr (std::is_same_v<Shape, scalar_shape>) return 1;
    else return parameter.size();
  }
};

namespace detail {
/// Builds random_variable<Name, Dist, Shape>. With no shape given and a vector argument, the
/// variable takes the argument's shape.
template <fixed_string Name, class Dist, class Shape>
auto make_random_variable(const Dist& d, Shape s) {
  return random_variable<Name, Dist, Shape>(d, s);
}
}  // namespace detail

/// The named random variable Name with distribution d (of the given shape; a scalar by
/// default): `named<"mu">(normal(0.0, 5.0))` is `normal<"mu">(0.0, 5.0)`. The way to give a
/// family of your own (tyche/concepts.hpp, continuous_family) a named variable.
template <fixed_string Name, class Dist, shape_tag Shape = scalar_shape>
auto named(const Dist& d, Shape shape = {}) {
  if constexpr (!continuous_family<Dist>) {
    static_assert(continuous_family<Dist>,
                  "tyche::named<\"name\">(d) requires d to be a distribution of a continuous family: "
                  "a struct with `family`, `arguments()`, `log_prob(x)` and `transform()` "
                  "(tyche/concepts.hpp, continuous_family), e.g. tyche::normal(0.0, 1.0); discrete "
                  "families can only be observed");
    return 0;
  } else {
    return detail::make_random_variable<Name>(d, shape);
  }
}

}  // namespace tyche
// ----- end tyche/distributions/random_variable.hpp -----
// ----- begin tyche/transforms/bounds.hpp -----
// tyche/transforms/bounds.hpp — the transforms from the unconstrained line to a support given
// by bounds: none (identity), a lower bound, an upper bound, both. Each gives the constrained
// value as a core expression of the unconstrained parameter u, the log-Jacobian log|dx/du| as
// a core expression, and the inverse for unconstrain(). Bounds are core expressions too, so a
// bound may depend on another parameter (beta1 < 1 − alpha1).

#include <cmath>

namespace tyche::transforms {

/// The real line: x = u, log|J| = 0.
struct identity {
  static constexpr const char* name = "identity";
  template <class U> auto constrain(const U& u) const { return u; }
  template <class U> auto log_jacobian(const U&) const { return lit<0>; }
  static double unconstrain(double x) { return x; }
  /// u as an expression of x (do_ needs it where the model's log density uses u itself).
  template <class X> auto unconstrain_expression(const X& x) const { return tyche::detail::as_node(x); }
  static bool contains(double x) { return !std::isnan(x); }
};

/// (L, ∞): x = L + eᵘ, log|J| = u. With L = 0 this is the positive half-line (x = eᵘ).
template <class Lower>
struct lower_bound {
  static constexpr const char* name = "lower bound";
  Lower lower;
  template <class U> auto constrain(const U& u) const {
    if constexpr (std::is_same_v<Lower, literal<0>>) return exp(u);
    else return lower + exp(u);
  }
  template <class U> auto log_jacobian(const U& u) const { return tyche::detail::total(u); }
  static double unconstrain(double x, double l) { return std::log(x - l); }
  template <class X> auto unconstrain_expression(const X& x) const {
    if constexpr (std::is_same_v<Lower, literal<0>>) return log(x);
    else return log(x - lower);
  }
  static bool contains(double x, double l) { return x > l; }
};

/// (−∞, U): x = U − eᵘ, log|J| = u.
template <class Upper>
struct upper_bound {
  static constexpr const char* name = "upper bound";
  Upper upper;
  template <class U> auto constrain(const U& u) const { return upper - exp(u); }
  template <class U> auto log_jacobian(const U& u) const { return tyche::detail::total(u); }
  static double unconstrain(double x, double h) { return std::log(h - x); }
  template <class X> auto unconstrain_expression(const X& x) const { return log(upper - x); }
  static bool contains(double x, double h) { return x < h; }
};

/// (L, U): x = L + (U − L)·logistic(u), log|J| = log(U − L) + log σ(u) + log(1 − σ(u)).
template <class Lower, class Upper>
struct interval {
  static constexpr const char* name = "interval";
  Lower lower;
  Upper upper;
  template <class U> auto constrain(const U& u) const {
    if constexpr (std::is_same_v<Lower, literal<0>> && std::is_same_v<Upper, literal<1>>)
      return logistic(u);
    else return lower + (upper - lower) * logistic(u);
  }
  template <class U> auto log_jacobian(const U& u) const {
    auto per_element = log_logistic(u) + log1m_logistic(u);
    if constexpr (std::is_same_v<Lower, literal<0>> && std::is_same_v<Upper, literal<1>>)
      return tyche::detail::total(per_element);
    else return tyche::detail::total(per_element + log(upper - lower));
  }
  static double unconstrain(double x, double l, double h) {
    const double p = (x - l) / (h - l);
    return std::log(p) - std::log1p(-p);
  }
  /// logit((x − L)/(U − L)) = log(x − L) − log(U − x).
  template <class X> auto unconstrain_expression(const X& x) const { return log(x - lower) - log(upper - x); }
  static bool contains(double x, double l, double h) { return x > l && x < h; }
};

}  // namespace tyche::transforms
// ----- end tyche/transforms/bounds.hpp -----

#include <cmath>
#include <cstddef>
#include <type_traits>

namespace tyche::detail {

inline constexpr double log_two = 0.69314718055994530942;
inline constexpr double log_pi = 1.14472988584940017414;
inline constexpr double half_log_two_pi = 0.91893853320467274178;  // ½ log(2π)

// What observe(y) says of a value y outside a family's support (nullptr when y is inside): each
// family's observation_problem, for the supports several families share.
inline const char* count_problem(double v) {
  return v < 0 || v != std::floor(v) ? "is not a non-negative integer count" : nullptr;
}
inline const char* category_problem(double v) {
  return v < 1 || v != std::floor(v) ? "is not a category (an integer >= 1)" : nullptr;
}
inline const char* binary_problem(double v) { return v == 0.0 || v == 1.0 ? nullptr : "is not 0 or 1"; }
inline const char* nonnegative_problem(double v) { return v < 0 ? "is negative (support x ≥ 0)" : nullptr; }
inline const char* positive_problem(double v) { return v <= 0 ? "is not positive (support x > 0)" : nullptr; }

/// The shape a random variable takes from its arguments when none is given: the size of its
/// vector arguments (static if one of them has a static size), or a scalar.
template <class... Nodes>
auto shape_from(const Nodes&... nodes) {
  constexpr bool any_vector = (is_vector_v<Nodes> || ...);
  if constexpr (!any_vector) {
    return scalar_shape{};
  } else {
    constexpr std::size_t e = [] {
      std::size_t found = dynamic_extent;
      ((is_vector_v<Nodes> && extent_v<Nodes> != dynamic_extent ? (found = extent_v<Nodes>, 0) : 0), ...);
      return found;
    }();
    if constexpr (e != dynamic_extent) {
      return static_shape<e>{};
    } else {
      std::size_t n = 0;
      auto take = [&](const auto& node) {
        if constexpr (is_vector_v<std::remove_cvref_t<decltype(node)>>) n = node.size();
      };
      (take(nodes), ...);
      return dynamic_shape{n};
    }
  }
}

/// Dist<node_t<Args>...> from user arguments (numbers, expressions, random variables).
template <template <class...> class Dist, class... Args>
auto make_distribution(const Args&... args) {
  return Dist<node_t<Args>...>{{}, as_node(args)...};
}

/// The named random variable Name ~ Dist(args...), of the given shape (or of the arguments').
template <fixed_string Name, template <class...> class Dist, class Shape, class... Args>
auto make_named(Shape shape, const Args&... args) {
  auto d = make_distribution<Dist>(args...);
  if constexpr (std::is_same_v<Shape, scalar_shape>) {
    return make_random_variable<Name>(d, shape_from(as_node(args)...));
  } else {
    return make_random_variable<Name>(d, shape);
  }
}

}  // namespace tyche::detail
// ----- end tyche/distributions/detail/family.hpp -----

#include <random>
#include <tuple>

namespace tyche {

template <class P>
struct bernoulli_distribution : distribution<bernoulli_distribution<P>> {
  static constexpr const char* family = "bernoulli";
  P p;
  template <class X>
  auto log_prob(const X& y) const {
    return detail::total(y * log(p) + (lit<1> - y) * log1p(-p));
  }
  auto arguments() const { return std::tuple{p}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<P, domains::probability>::ok,
                  "tyche::bernoulli(p): p must be in [0, 1], but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside [0, 1]");
    detail::check_argument<domains::probability>("bernoulli(p)", "p", p);
  }
  template <class G>
  static double draw(G& rng, double pr) { return std::bernoulli_distribution(pr)(rng) ? 1.0 : 0.0; }
  static double mean(double pr) { return pr; }
  static double variance(double pr) { return pr * (1.0 - pr); }
  static const char* observation_problem(double v) { return detail::binary_problem(v); }
};

/// The distribution bernoulli(p), to observe data: `bernoulli(p).observe(data(y))`.
template <detail::operand P>
auto bernoulli(const P& p) {
  return detail::make_distribution<bernoulli_distribution>(p);
}

}  // namespace tyche
// ----- end tyche/distributions/bernoulli.hpp -----
// ----- begin tyche/distributions/bernoulli_logit.hpp -----
// tyche/distributions/bernoulli_logit.hpp — bernoulli_logit(alpha) = bernoulli(logistic(alpha)),
// for observations only.
//   log p(y | α) = y log σ(α) + (1 − y) log(1 − σ(α)),   y ∈ {0, 1}, α ∈ ℝ,
// computed as y·α − log(1 + e^α) with a stable softplus when α is a vector (one transcendental
// per element), with log_logistic and log1m_logistic for a scalar α (whose sums over y the
// partial evaluation reduces); neither overflows nor loses precision for large |α|. The data (y) must be 0 or 1: observe throws "... y[i] = v is not 0 or 1" otherwise.

#include <cmath>
#include <random>
#include <tuple>

namespace tyche {

template <class Alpha>
struct bernoulli_logit_distribution : distribution<bernoulli_logit_distribution<Alpha>> {
  static constexpr const char* family = "bernoulli_logit";
  Alpha alpha;
  template <class X>
  auto log_prob(const X& y) const {
    if constexpr (is_vector_v<Alpha>) {
      // A vector logit (a linear predictor): y·α − log(1 + e^α) as one node, one softplus.
      return detail::total(detail::make_binary<rules::bernoulli_logit_term>(y, alpha));
    } else {
      return detail::total(y * log_logistic(alpha) + (lit<1> - y) * log1m_logistic(alpha));
    }
  }
  auto arguments() const { return std::tuple{alpha}; }
  static double probability(double a) { return 1.0 / (1.0 + std::exp(-a)); }
  template <class G>
  static double draw(G& rng, double a) { return std::bernoulli_distribution(probability(a))(rng) ? 1.0 : 0.0; }
  static double mean(double a) { return probability(a); }
  static double variance(double a) { return probability(a) * probability(-a); }
  static const char* observation_problem(double v) { return detail::binary_problem(v); }
};

/// The distribution bernoulli_logit(alpha): `bernoulli_logit(a + b * x).observe(data(y))`.
template <detail::operand Alpha>
auto bernoulli_logit(const Alpha& alpha) {
  return detail::make_distribution<bernoulli_logit_distribution>(alpha);
}

}  // namespace tyche
// ----- end tyche/distributions/bernoulli_logit.hpp -----
// ----- begin tyche/distributions/beta.hpp -----
// tyche/distributions/beta.hpp — beta(a, b).
//   log p(x | a, b) = log Γ(a + b) − log Γ(a) − log Γ(b) + (a − 1) log x + (b − 1) log(1 − x),
//   x ∈ (0, 1), a > 0, b > 0.

#include <random>
#include <tuple>

namespace tyche {

template <class A, class B>
struct beta_distribution : distribution<beta_distribution<A, B>> {
  static constexpr const char* family = "beta";
  A a;
  B b;
  auto transform() const { return transforms::interval<literal<0>, literal<1>>{}; }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(lgamma(a + b) - lgamma(a) - lgamma(b) + (a - lit<1>) * log(x) +
                         (b - lit<1>) * log1p(-x));
  }
  auto arguments() const { return std::tuple{a, b}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<A, domains::positive>::ok,
                  "tyche::beta(a, b): a must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    static_assert(argument_support_t<B, domains::positive>::ok,
                  "tyche::beta(a, b): b must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::positive>("beta(a, b)", "a", a);
    detail::check_argument<domains::positive>("beta(a, b)", "b", b);
  }
  /// x / (x + y) for x ~ gamma(a, 1), y ~ gamma(b, 1).
  template <class G>
  static double draw(G& rng, double a, double b) {
    const double x = std::gamma_distribution<double>(a, 1.0)(rng);
    const double y = std::gamma_distribution<double>(b, 1.0)(rng);
    return x / (x + y);
  }
  static double mean(double a, double b) { return a / (a + b); }
  static double variance(double a, double b) { return a * b / ((a + b) * (a + b) * (a + b + 1)); }
  static const char* observation_problem(double v) {
    return v <= 0 || v >= 1 ? "is outside (0, 1) (support 0 < x < 1)" : nullptr;
  }
};

/// Name ~ beta(a, b), support (0, 1), sampled as logit Name.
template <fixed_string Name, detail::operand A, detail::operand B, shape_tag Shape = scalar_shape>
auto beta(const A& a, const B& b, Shape shape = {}) {
  return detail::make_named<Name, beta_distribution>(shape, a, b);
}
template <detail::operand A, detail::operand B>
auto beta(const A& a, const B& b) {
  return detail::make_distribution<beta_distribution>(a, b);
}

}  // namespace tyche
// ----- end tyche/distributions/beta.hpp -----
// ----- begin tyche/distributions/beta_binomial.hpp -----
// tyche/distributions/beta_binomial.hpp — beta_binomial(n, a, b), for observations only.
//   log p(y | n, a, b) = log C(n, y) + log B(y + a, n − y + b) − log B(a, b),
//   y ∈ {0, …, n}, a > 0, b > 0, with log B(u, v) = lgamma(u) + lgamma(v) − lgamma(u + v).
// n is data, as in binomial: log C(n, y) is folded when the model is built. Data checks as
// binomial's (binomial.hpp). log B is a difference of lgammas: for a + b ≫ 10⁶ it loses
// accuracy (absolute error about ε · (a + b) log(a + b)).
// ----- begin tyche/distributions/binomial.hpp -----
// tyche/distributions/binomial.hpp — binomial(n, p), for observations only.
//   log p(y | n, p) = log C(n, y) + y log p + (n − y) log(1 − p),   y ∈ {0, …, n}, 0 ≤ p ≤ 1,
// with log C(n, y) = lgamma(n + 1) − lgamma(y + 1) − lgamma(n − y + 1). The number of trials n is
// data (a number, data(v) or a literal): log C(n, y) and n − y then depend on the data only and
// are folded when the model is built.
//
// Data checks (observe throws std::invalid_argument naming the index and the value):
//   y[i] = v is not a non-negative integer count
//   n[i] = v is not a non-negative integer count                 (n known: number, data, literal)
//   y[i] = v exceeds the number of trials n[i] = m                (n known)
// When n is an expression of parameters (not data) the last two checks cannot be made.

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>

namespace tyche {

namespace detail {

/// Whether node N's values are known when the model is built (a number, a literal, data).
template <class N>
inline constexpr bool known_values_v = kind_of<N> == node_kind::constant ||
                                       kind_of<N> == node_kind::literal ||
                                       kind_of<N> == node_kind::data_vector;

/// Element i of a known node (a scalar is broadcast).
template <class N>
double known_value(const N& n, std::size_t i) {
  if constexpr (kind_of<N> == node_kind::constant) return n.value;
  else if constexpr (kind_of<N> == node_kind::literal) return N::value;
  else return n.ptr[i];
}

template <class N>
std::size_t known_size(const N& n) {
  if constexpr (kind_of<N> == node_kind::data_vector) return n.size();
  else return 1;
}

/// The checks on the number of trials n of a count family observed at y (both nodes): n is a
/// non-negative integer and y ≤ n, elementwise. Nothing is checked unless both are known.
template <class Y, class N>
void check_trials(const char* family, const Y& y, const N& n) {
  if constexpr (known_values_v<Y> && known_values_v<N>) {
    const std::size_t ny = known_size(y), nn = known_size(n);
    const std::size_t count = std::max(ny, nn);
    auto fail = [&](const std::string& what) {
      throw std::invalid_argument(std::string("tyche::") + family + "(...).observe(y): " + what);
    };
    auto at = [](const char* name, std::size_t i, double v) {
      return std::string(name) + "[" + std::to_string(i + 1) + "] = " + tyche::detail::format_number(v);
    };
    for (std::size_t i = 0; i < nn; ++i) {
      const double m = known_value(n, i);
      if (!std::isfinite(m) || m < 0 || m != std::floor(m))
        fail(at("n", i, m) + " is not a non-negative integer count");
    }
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t iy = ny == 1 ? 0 : i, in = nn == 1 ? 0 : i;
      const double v = known_value(y, iy), m = known_value(n, in);
      if (v > m) fail(at("y", iy, v) + " exceeds the number of trials " + at("n", in, m));
    }
  }
}

}  // namespace detail

template <class N, class P>
struct binomial_distribution : distribution<binomial_distribution<N, P>> {
  static constexpr const char* family = "binomial";
  N n;
  P p;
  template <class X>
  auto log_prob(const X& y) const {
    return detail::total(y * log(p) + (n - y) * log1p(-p) +
                         (lgamma(n + lit<1>) - lgamma(y + lit<1>) - lgamma(n - y + lit<1>)));
  }
  auto arguments() const { return std::tuple{n, p}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<N, domains::nonnegative>::ok,
                  "tyche::binomial(n, p): n must be >= 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside [0, inf)");
    static_assert(argument_support_t<P, domains::probability>::ok,
                  "tyche::binomial(n, p): p must be in [0, 1], but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside [0, 1]");
    detail::check_argument<domains::nonnegative>("binomial(n, p)", "n", n);
    detail::check_argument<domains::probability>("binomial(n, p)", "p", p);
  }
  /// Checks y (non-negative integers, see distribution::observe), then n and y ≤ n.
  template <class X>
  auto observe(const X& x) const {
    auto o = distribution<binomial_distribution>::observe(x);
    detail::check_trials(family, o.value, n);
    return o;
  }
  template <class G>
  static double draw(G& rng, double trials, double pr) {
    return static_cast<double>(std::binomial_distribution<long long>(std::llround(trials), pr)(rng));
  }
  static double mean(double trials, double pr) { return trials * pr; }
  static double variance(double trials, double pr) { return trials * pr * (1.0 - pr); }
  static const char* observation_problem(double v) { return detail::count_problem(v); }
};

/// The distribution binomial(n, p), to observe counts of successes in n trials:
/// `binomial(data(trials), p).observe(data(y))`.
template <detail::operand N, detail::operand P>
auto binomial(const N& n, const P& p) {
  return detail::make_distribution<binomial_distribution>(n, p);
}

}  // namespace tyche
// ----- end tyche/distributions/binomial.hpp -----

#include <cmath>
#include <random>
#include <tuple>

namespace tyche {

template <class N, class A, class B>
struct beta_binomial_distribution : distribution<beta_binomial_distribution<N, A, B>> {
  static constexpr const char* family = "beta_binomial";
  N n;
  A a;
  B b;
  template <class X>
  auto log_prob(const X& y) const {
    return detail::total(lgamma(y + a) + lgamma(n - y + b) - lgamma(n + a + b) + lgamma(a + b) -
                         lgamma(a) - lgamma(b) +
                         (lgamma(n + lit<1>) - lgamma(y + lit<1>) - lgamma(n - y + lit<1>)));
  }
  auto arguments() const { return std::tuple{n, a, b}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<N, domains::nonnegative>::ok,
                  "tyche::beta_binomial(n, a, b): n must be >= 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside [0, inf)");
    static_assert(argument_support_t<A, domains::positive>::ok,
                  "tyche::beta_binomial(n, a, b): a must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    static_assert(argument_support_t<B, domains::positive>::ok,
                  "tyche::beta_binomial(n, a, b): b must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::nonnegative>("beta_binomial(n, a, b)", "n", n);
    detail::check_argument<domains::positive>("beta_binomial(n, a, b)", "a", a);
    detail::check_argument<domains::positive>("beta_binomial(n, a, b)", "b", b);
  }
  /// Checks y (non-negative integers, see distribution::observe), then n and y ≤ n.
  template <class X>
  auto observe(const X& x) const {
    auto o = distribution<beta_binomial_distribution>::observe(x);
    detail::check_trials(family, o.value, n);
    return o;
  }
  /// p ~ beta(a, b) (as X / (X + Y) for X ~ gamma(a), Y ~ gamma(b)), then binomial(n, p).
  template <class G>
  static double draw(G& rng, double trials, double sa, double sb) {
    const double x = std::gamma_distribution<double>(sa, 1.0)(rng);
    const double z = std::gamma_distribution<double>(sb, 1.0)(rng);
    const double pr = x + z > 0 ? x / (x + z) : sa / (sa + sb);
    return static_cast<double>(std::binomial_distribution<long long>(std::llround(trials), pr)(rng));
  }
  static double mean(double trials, double sa, double sb) { return trials * sa / (sa + sb); }
  static double variance(double trials, double sa, double sb) {
    const double s = sa + sb;
    return trials * sa * sb * (s + trials) / (s * s * (s + 1.0));
  }
  static const char* observation_problem(double v) { return detail::count_problem(v); }
};

/// The distribution beta_binomial(n, a, b): `beta_binomial(data(trials), a, b).observe(data(y))`.
template <detail::operand N, detail::operand A, detail::operand B>
auto beta_binomial(const N& n, const A& a, const B& b) {
  return detail::make_distribution<beta_binomial_distribution>(n, a, b);
}

}  // namespace tyche
// ----- end tyche/distributions/beta_binomial.hpp -----
// ----- begin tyche/distributions/beta_proportion.hpp -----
// tyche/distributions/beta_proportion.hpp — beta_proportion(mu, kappa) = beta(μκ, (1 − μ)κ).
// The beta distribution by its mean μ and precision κ, as in Stan.
//   log p(x | μ, κ) = log Γ(κ) − log Γ(μκ) − log Γ((1 − μ)κ) + (μκ − 1) log x
//                     + ((1 − μ)κ − 1) log(1 − x),   x ∈ (0, 1), 0 < μ < 1, κ > 0.

#include <random>
#include <tuple>

namespace tyche {

template <class Mu, class Kappa>
struct beta_proportion_distribution : distribution<beta_proportion_distribution<Mu, Kappa>> {
  static constexpr const char* family = "beta_proportion";
  Mu mu;
  Kappa kappa;
  auto transform() const { return transforms::interval<literal<0>, literal<1>>{}; }
  template <class X>
  auto log_prob(const X& x) const {
    const auto a = mu * kappa;
    const auto b = (lit<1> - mu) * kappa;
    return detail::total(lgamma(kappa) - lgamma(a) - lgamma(b) + (a - lit<1>) * log(x) +
                         (b - lit<1>) * log1p(-x));
  }
  auto arguments() const { return std::tuple{mu, kappa}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<Mu, domains::open_unit_interval>::ok,
                  "tyche::beta_proportion(mu, kappa): mu must be in (0, 1), but its support (spelled "
                  "out in tyche::support_is<...> in this diagnostic) is not inside (0, 1)");
    static_assert(argument_support_t<Kappa, domains::positive>::ok,
                  "tyche::beta_proportion(mu, kappa): kappa must be > 0, but its support (spelled out "
                  "in tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::open_unit_interval>("beta_proportion(mu, kappa)", "mu", mu);
    detail::check_argument<domains::positive>("beta_proportion(mu, kappa)", "kappa", kappa);
  }
  /// x / (x + y) for x ~ gamma(μκ, 1), y ~ gamma((1 − μ)κ, 1).
  template <class G>
  static double draw(G& rng, double m, double k) {
    const double x = std::gamma_distribution<double>(m * k, 1.0)(rng);
    const double y = std::gamma_distribution<double>((1 - m) * k, 1.0)(rng);
    return x / (x + y);
  }
  static double mean(double m, double) { return m; }
  static double variance(double m, double k) { return m * (1 - m) / (1 + k); }
  static const char* observation_problem(double v) {
    return v <= 0 || v >= 1 ? "is outside (0, 1) (support 0 < x < 1)" : nullptr;
  }
};

/// Name ~ beta_proportion(mu, kappa), support (0, 1), sampled as logit Name.
template <fixed_string Name, detail::operand Mu, detail::operand Kappa, shape_tag Shape = scalar_shape>
auto beta_proportion(const Mu& mu, const Kappa& kappa, Shape shape = {}) {
  return detail::make_named<Name, beta_proportion_distribution>(shape, mu, kappa);
}
template <detail::operand Mu, detail::operand Kappa>
auto beta_proportion(const Mu& mu, const Kappa& kappa) {
  return detail::make_distribution<beta_proportion_distribution>(mu, kappa);
}

}  // namespace tyche
// ----- end tyche/distributions/beta_proportion.hpp -----
// ----- begin tyche/distributions/binomial_logit.hpp -----
// tyche/distributions/binomial_logit.hpp — binomial_logit(n, alpha) = binomial(n, logistic(alpha)),
// for observations only.
//   log p(y | n, α) = log C(n, y) + y log σ(α) + (n − y) log(1 − σ(α)),   y ∈ {0, …, n}, α ∈ ℝ,
// with log_logistic and log1m_logistic (stable for large |α|). n is data, as in binomial: log C(n, y)
// and n − y are folded when the model is built. Data checks as binomial's (binomial.hpp).

#include <cmath>
#include <random>
#include <tuple>

namespace tyche {

template <class N, class Alpha>
struct binomial_logit_distribution : distribution<binomial_logit_distribution<N, Alpha>> {
  static constexpr const char* family = "binomial_logit";
  N n;
  Alpha alpha;
  template <class X>
  auto log_prob(const X& y) const {
    return detail::total(y * log_logistic(alpha) + (n - y) * log1m_logistic(alpha) +
                         (lgamma(n + lit<1>) - lgamma(y + lit<1>) - lgamma(n - y + lit<1>)));
  }
  auto arguments() const { return std::tuple{n, alpha}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<N, domains::nonnegative>::ok,
                  "tyche::binomial_logit(n, alpha): n must be >= 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside [0, inf)");
    detail::check_argument<domains::nonnegative>("binomial_logit(n, alpha)", "n", n);
  }
  /// Checks y (non-negative integers, see distribution::observe), then n and y ≤ n.
  template <class X>
  auto observe(const X& x) const {
    auto o = distribution<binomial_logit_distribution>::observe(x);
    detail::check_trials(family, o.value, n);
    return o;
  }
  static double probability(double a) { return 1.0 / (1.0 + std::exp(-a)); }
  template <class G>
  static double draw(G& rng, double trials, double a) {
    return static_cast<double>(
        std::binomial_distribution<long long>(std::llround(trials), probability(a))(rng));
  }
  static double mean(double trials, double a) { return trials * probability(a); }
  static double variance(double trials, double a) { return trials * probability(a) * probability(-a); }
  static const char* observation_problem(double v) { return detail::count_problem(v); }
};

/// The distribution binomial_logit(n, alpha): `binomial_logit(data(trials), a + b * x).observe(data(y))`.
template <detail::operand N, detail::operand Alpha>
auto binomial_logit(const N& n, const Alpha& alpha) {
  return detail::make_distribution<binomial_logit_distribution>(n, alpha);
}

}  // namespace tyche
// ----- end tyche/distributions/binomial_logit.hpp -----
// ----- begin tyche/distributions/categorical.hpp -----
// tyche/distributions/categorical.hpp — categorical(theta) and categorical_logit(beta), for observations only.
//   log p(y | θ) = log θ_y,                 y ∈ {1, …, K}, θ a vector of K probabilities;
//   log p(y | β) = β_y − log Σₖ exp βₖ,     y ∈ {1, …, K}, β ∈ ℝᴷ (softmax).
// y is 1-based, as in Stan. Observing n values gathers θ or β through the data (a gather leaf,
// autodiff/vector_ops.hpp): Σᵢ log θ_{yᵢ}, and Σᵢ β_{yᵢ} − n log Σₖ exp βₖ with one log-sum-exp.
// The data must be integers 1 … K: observe throws "... y[i] = v is not a category 1 … K".

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace tyche {

namespace detail {
/// The categories y (data, 1-based doubles) checked against K; then f(gathered) where gathered
/// is the vector v[y₁ − 1], v[y₂ − 1], … (or, for one constant y, the scalar v[y − 1]).
template <class V, class Y>
auto gather_categories(const char* family, const V& v, const Y& y) {
  static_assert(is_vector_v<V>, "tyche::categorical(theta) / categorical_logit(beta): the argument "
                                "must be a vector of K values");
  static_assert(kind_of<Y> == node_kind::data_vector || kind_of<Y> == node_kind::constant,
                "tyche::categorical / categorical_logit: only data can be observed (y must be data)");
  const std::size_t k = v.size();
  auto check = [&](double c, std::size_t i) {
    if (!(c >= 1 && c <= double(k) && c == std::floor(c)))
      throw std::invalid_argument(std::string("tyche::") + family + "(...).observe(y): y[" +
                                  std::to_string(i + 1) + "] = " + tyche::detail::format_number(c) +
                                  " is not a category 1 … " + std::to_string(k));
  };
  if constexpr (kind_of<Y> == node_kind::data_vector) {
    for (std::size_t i = 0; i < y.size(); ++i) check(y.ptr[i], i);
    return gather_node<1>(v, y.ptr, y.size());
  } else {
    check(y.value, 0);
    return at(v, static_cast<std::size_t>(y.value) - 1);
  }
}

/// n draws from the categories 1 … K with probabilities p (not necessarily normalised).
template <class G>
std::vector<double> draw_categories(G& rng, std::size_t n, const std::vector<double>& p) {
  std::discrete_distribution<int> d(p.begin(), p.end());
  std::vector<double> out(n);
  for (auto& o : out) o = d(rng) + 1;
  return out;
}
}  // namespace detail

template <class Theta>
struct categorical_distribution : distribution<categorical_distribution<Theta>> {
  static constexpr const char* family = "categorical";
  Theta theta;
  template <class X>
  auto log_prob(const X& y) const {
    return detail::total(log(detail::gather_categories(family, theta, y)));
  }
  auto arguments() const { return std::tuple{theta}; }
  /// The arguments are whole vectors (model.hpp draws with draw_all, not element by element).
  static constexpr bool whole_arguments = true;
  template <class G>
  static std::vector<double> draw_all(G& rng, std::size_t n, const std::vector<double>& theta) {
    return detail::draw_categories(rng, n, theta);
  }
  static const char* observation_problem(double v) { return detail::category_problem(v); }
};

template <class Beta>
struct categorical_logit_distribution : distribution<categorical_logit_distribution<Beta>> {
  static constexpr const char* family = "categorical_logit";
  Beta beta;
  template <class X>
  auto log_prob(const X& y) const {
    const auto picked = detail::gather_categories(family, beta, y);
    const double n = static_cast<double>(detail::operand_size(picked));
    return detail::total(picked) - constant{n} * log_sum_exp(beta);
  }
  auto arguments() const { return std::tuple{beta}; }
  static constexpr bool whole_arguments = true;
  template <class G>
  static std::vector<double> draw_all(G& rng, std::size_t n, const std::vector<double>& beta) {
    double top = -HUGE_VAL;
    for (double b : beta) top = std::max(top, b);
    std::vector<double> p(beta.size());
    for (std::size_t k = 0; k < beta.size(); ++k) p[k] = std::exp(beta[k] - top);
    return detail::draw_categories(rng, n, p);
  }
  static const char* observation_problem(double v) { return detail::category_problem(v); }
};

/// The distribution categorical(theta), to observe categories 1 … K: `categorical(theta).observe(data(y))`.
template <detail::operand Theta>
auto categorical(const Theta& theta) {
  return detail::make_distribution<categorical_distribution>(theta);
}
/// The distribution categorical_logit(beta) (softmax): `categorical_logit(beta).observe(data(y))`.
template <detail::operand Beta>
auto categorical_logit(const Beta& beta) {
  return detail::make_distribution<categorical_logit_distribution>(beta);
}

}  // namespace tyche
// ----- end tyche/distributions/categorical.hpp -----
// ----- begin tyche/distributions/cauchy.hpp -----
// tyche/distributions/cauchy.hpp — cauchy(mu, sigma) and half_cauchy(sigma).
//   log p(x | μ, σ) = −log π − log σ − log(1 + ((x − μ)/σ)²),   x ∈ ℝ;
//   half_cauchy: log 2 − log π − log σ − log(1 + (x/σ)²),        x > 0.

#include <cmath>
#include <random>
#include <tuple>

namespace tyche {

template <class Mu, class Sigma>
struct cauchy_distribution : distribution<cauchy_distribution<Mu, Sigma>> {
  static constexpr const char* family = "cauchy";
  Mu mu;
  Sigma sigma;
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(-log1p(square((x - mu) / sigma)) - log(sigma) - detail::log_pi);
  }
  auto arguments() const { return std::tuple{mu, sigma}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<Sigma, domains::positive>::ok,
                  "tyche::cauchy(mu, sigma): sigma must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::positive>("cauchy(mu, sigma)", "sigma", sigma);
  }
  template <class G>
  static double draw(G& rng, double m, double s) { return std::cauchy_distribution<double>(m, s)(rng); }
};

template <class Sigma>
struct half_cauchy_distribution : distribution<half_cauchy_distribution<Sigma>> {
  static constexpr const char* family = "half_cauchy";
  Sigma sigma;
  auto transform() const { return transforms::lower_bound<literal<0>>{}; }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(-log1p(square(x / sigma)) - log(sigma) + (detail::log_two - detail::log_pi));
  }
  auto arguments() const { return std::tuple{sigma}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<Sigma, domains::positive>::ok,
                  "tyche::half_cauchy(sigma): sigma must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::positive>("half_cauchy(sigma)", "sigma", sigma);
  }
  template <class G>
  static double draw(G& rng, double s) { return std::fabs(std::cauchy_distribution<double>(0.0, s)(rng)); }
  static const char* observation_problem(double v) { return detail::nonnegative_problem(v); }
};

template <fixed_string Name, detail::operand Mu, detail::operand Sigma, shape_tag Shape = scalar_shape>
auto cauchy(const Mu& mu, const Sigma& sigma, Shape shape = {}) {
  return detail::make_named<Name, cauchy_distribution>(shape, mu, sigma);
}
template <detail::operand Mu, detail::operand Sigma>
auto cauchy(const Mu& mu, const Sigma& sigma) {
  return detail::make_distribution<cauchy_distribution>(mu, sigma);
}

/// Name ~ half-Cauchy(0, sigma), support (0, ∞), sampled as log Name.
template <fixed_string Name, detail::operand Sigma, shape_tag Shape = scalar_shape>
auto half_cauchy(const Sigma& sigma, Shape shape = {}) {
  return detail::make_named<Name, half_cauchy_distribution>(shape, sigma);
}
template <detail::operand Sigma>
auto half_cauchy(const Sigma& sigma) {
  return detail::make_distribution<half_cauchy_distribution>(sigma);
}

}  // namespace tyche
// ----- end tyche/distributions/cauchy.hpp -----
// ----- begin tyche/distributions/chi_square.hpp -----
// tyche/distributions/chi_square.hpp — chi_square(nu).
//   log p(x | ν) = −(ν/2) log 2 − log Γ(ν/2) + (ν/2 − 1) log x − x/2,   x > 0, ν > 0.

#include <random>
#include <tuple>

namespace tyche {

template <class Nu>
struct chi_square_distribution : distribution<chi_square_distribution<Nu>> {
  static constexpr const char* family = "chi_square";
  Nu nu;
  auto transform() const { return transforms::lower_bound<literal<0>>{}; }
  template <class X>
  auto log_prob(const X& x) const {
    const auto half_nu = lit<1, 2> * nu;
    return detail::total((half_nu - lit<1>) * log(x) - lit<1, 2> * x - half_nu * detail::log_two -
                         lgamma(half_nu));
  }
  auto arguments() const { return std::tuple{nu}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<Nu, domains::positive>::ok,
                  "tyche::chi_square(nu): nu must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::positive>("chi_square(nu)", "nu", nu);
  }
  template <class G>
  static double draw(G& rng, double n) { return std::chi_squared_distribution<double>(n)(rng); }
  static double mean(double n) { return n; }
  static double variance(double n) { return 2 * n; }
  static const char* observation_problem(double v) { return detail::positive_problem(v); }
};

/// Name ~ chi_square(nu), support (0, ∞), sampled as log Name.
template <fixed_string Name, detail::operand Nu, shape_tag Shape = scalar_shape>
auto chi_square(const Nu& nu, Shape shape = {}) {
  return detail::make_named<Name, chi_square_distribution>(shape, nu);
}
template <detail::operand Nu>
auto chi_square(const Nu& nu) {
  return detail::make_distribution<chi_square_distribution>(nu);
}

}  // namespace tyche
// ----- end tyche/distributions/chi_square.hpp -----
// ----- begin tyche/distributions/constrained.hpp -----
// tyche/distributions/constrained.hpp — ordered<"x">(dist, shape) and positive_ordered<"x">(dist, shape).
//   A vector random variable with the prior dist on each element, restricted to increasing
//   (and, for positive_ordered, positive) vectors, as Stan's `ordered[2] mu; mu ~ normal(0, 2);`:
//   the prior density is dist's, unnormalised on the narrower support (Stan's convention).
//   θ: u₀ = x₀ (positive_ordered: log x₀), uₖ = log(xₖ − xₖ₋₁); log|J| = Σ_{k≥1} uₖ (+ u₀).
// ----- begin tyche/transforms/ordered.hpp -----
// tyche/transforms/ordered.hpp — the transforms to increasing vectors (Stan's ordered and
// positive_ordered): x₀ = u₀ (or e^u₀), xₖ = xₖ₋₁ + e^uₖ. Not elementwise: the constrained
// vector is a vector_op (its op in autodiff/vector_ops.hpp). The Jacobian is triangular with
// diagonal (1 or e^u₀, e^u₁, …), so log|J| = Σ_{k ≥ 1} uₖ (+ u₀ when positive).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace tyche::transforms {

template <bool Positive>
struct increasing {
  static constexpr const char* name = Positive ? "positive_ordered" : "ordered";
  /// Marks a transform of a whole vector (model.hpp unconstrains it with unconstrain_vector).
  static constexpr bool whole_vector = true;

  template <class U>
  auto constrain(const U& u) const {
    using N = tyche::detail::node_t<U>;
    static_assert(is_vector_v<N>, "tyche: an ordered or positive_ordered random variable must be a "
                                  "vector: give it a shape, e.g. ordered<\"mu\">(normal(0.0, 2.0), shape<2>)");
    const N n = tyche::detail::as_node(u);
    return make_vector_op(ops::ordered_map<Positive>{}, n.size(), n);
  }
  template <class U>
  auto log_jacobian(const U& u) const {
    if constexpr (Positive) return sum(u);
    else return sum(u) - at(u, 0);
  }

  /// u from x[0 .. n): u₀ = x₀ (log x₀), uₖ = log(xₖ − xₖ₋₁). Returns an empty string when x
  /// is inside the support, else what is wrong with it, for element k (0-based).
  static std::string unconstrain_vector(const double* x, double* u, std::size_t n, std::size_t& k) {
    for (k = 0; k < n; ++k) {
      if (std::isnan(x[k])) return "is not a number";
      if (k == 0) {
        if (Positive && !(x[0] > 0)) return "must be > 0 (positive_ordered)";
        u[0] = Positive ? std::log(x[0]) : x[0];
      } else {
        const double step = x[k] - x[k - 1];
        if (!(step > 0))
          return "must exceed the element before it, " + tyche::detail::format_number(x[k - 1]) + " (" + name + ")";
        u[k] = std::log(step);
      }
    }
    return {};
  }

  /// Independent draws from the prior, made a draw from the prior restricted to the support:
  /// sorted (the restriction of an exchangeable density to increasing vectors is the law of
  /// its order statistics). positive_ordered redraws each non-positive element first
  /// (redraw(i) gives a fresh draw), i.e. rejection from the prior truncated to (0, ∞).
  template <class Redraw>
  static void restrict_draws(std::vector<double>& x, Redraw&& redraw) {
    if constexpr (Positive) {
      for (std::size_t i = 0; i < x.size(); ++i) {
        for (int tries = 0; !(x[i] > 0); ++tries) {
          if (tries == 10000)
            throw std::runtime_error("tyche: positive_ordered prior draw: 10000 draws in a row were "
                                     "not positive; the prior puts almost no mass on (0, inf)");
          x[i] = redraw(i);
        }
      }
    }
    std::sort(x.begin(), x.end());
  }
};

/// Increasing vectors: x₀ < x₁ < … (Stan's ordered).
using ordered = increasing<false>;
/// Positive increasing vectors: 0 < x₀ < x₁ < … (Stan's positive_ordered).
using positive_ordered = increasing<true>;

}  // namespace tyche::transforms
// ----- end tyche/transforms/ordered.hpp -----

#include <concepts>

namespace tyche {

/// Distribution Dist with the transform Transform in place of Dist's own.
template <class Dist, class Transform>
struct constrained_distribution : distribution<constrained_distribution<Dist, Transform>> {
  static constexpr const char* family = Dist::family;
  Dist base;
  [[no_unique_address]] Transform support;
  auto transform() const { return support; }
  template <class X>
  auto log_prob(const X& x) const { return base.log_prob(x); }
  auto arguments() const { return base.arguments(); }
  /// The same constraint on Dist with other arguments (do_ substitutes into them).
  template <class... A>
  auto with_arguments(const A&... a) const {
    auto b = detail::with_arguments(base, a...);
    return constrained_distribution<decltype(b), Transform>{{}, b, support};
  }
  template <class G, class... A>
  static double draw(G& rng, A... a) { return Dist::draw(rng, a...); }
  /// The family's own argument checks (interval/support.hpp).
  void check_supports() const {
    if constexpr (requires { base.check_supports(); }) base.check_supports();
  }
};

namespace detail {
template <class D>
concept unnamed_distribution = std::derived_from<D, distribution<D>>;
}

/// Name ~ dist on increasing vectors: `ordered<"mu">(normal(0.0, 2.0), shape<2>)` (Stan:
/// `ordered[2] mu; mu ~ normal(0, 2);`). θ: u₀ = x₀, uₖ = log(xₖ − xₖ₋₁).
template <fixed_string Name, detail::unnamed_distribution Dist, shape_tag Shape>
auto ordered(const Dist& d, Shape shape) {
  static_assert(!std::is_same_v<Shape, scalar_shape>,
                "tyche::ordered<\"name\">(dist, shape): an ordered variable is a vector; give it a "
                "shape, e.g. shape<2> or shape_of(k)");
  return detail::make_random_variable<Name>(
      constrained_distribution<Dist, transforms::ordered>{{}, d, {}}, shape);
}

/// Name ~ dist on positive increasing vectors: `positive_ordered<"c">(exponential(1.0), shape<3>)`
/// (Stan: `positive_ordered[3] c;`). θ: u₀ = log x₀, uₖ = log(xₖ − xₖ₋₁).
template <fixed_string Name, detail::unnamed_distribution Dist, shape_tag Shape>
auto positive_ordered(const Dist& d, Shape shape) {
  static_assert(!std::is_same_v<Shape, scalar_shape>,
                "tyche::positive_ordered<\"name\">(dist, shape): a positive_ordered variable is a "
                "vector; give it a shape, e.g. shape<3> or shape_of(k)");
  return detail::make_random_variable<Name>(
      constrained_distribution<Dist, transforms::positive_ordered>{{}, d, {}}, shape);
}

}  // namespace tyche
// ----- end tyche/distributions/constrained.hpp -----
// ----- begin tyche/distributions/dirichlet.hpp -----
// tyche/distributions/dirichlet.hpp — dirichlet(alpha) on the simplex.
//   log p(x | α) = log Γ(Σₖ αₖ) − Σₖ log Γ(αₖ) + Σₖ (αₖ − 1) log xₖ,   x ∈ simplex, αₖ > 0.
// alpha is a vector of K concentrations, or a scalar (the symmetric Dirichlet; then give the
// variable a shape). A named variable takes the simplex transform (transforms/simplex.hpp):
// `dirichlet<"theta">(data(alpha))`, `dirichlet<"p">(1.0, shape<4>)`.
// ----- begin tyche/transforms/simplex.hpp -----
// tyche/transforms/simplex.hpp — simplex (K positive values summing to 1) and unit_vector (K
// values of norm 1), each from K unconstrained values with one auxiliary dimension, so that a
// variable keeps one θ coordinate per value:
//
// simplex: x = softmax(u) = exp(u − log Σ e^u), with the auxiliary r = Σₖ e^uₖ. The map
//   u ↦ (x₁ … x_{K−1}, r) is a bijection of ℝᴷ; with y = e^u (|∂y/∂u| = Π yₖ) and y = r·x
//   (|∂y/∂(x₁…x_{K−1}, r)| = r^{K−1}), giving r the proper density Gamma(K, 1) makes the term
//   added to the log density
//     Σₖ uₖ − (K − 1) log r + log Gamma(r | K, 1) = Σₖ (uₖ − e^uₖ) − log Γ(K),
//   elementwise in u (the constant is dropped). x keeps exactly the prior it is given; r is
//   independent of x and Gamma(K, 1) distributed. (This is the "normalised Gammas" construction
//   of the Dirichlet turned into a transform; Stan uses stick-breaking with K − 1 coordinates.)
//
// unit_vector: x = u / |u|, adding −½ |u|² (Stan's unit_vector: the radius |u| is the auxiliary,
//   χ-distributed with K degrees of freedom, independent of x).
//
// Both are whole-vector transforms for model.hpp: unconstrain_vector(x) returns u = log x (r = 1)
// or u = x (|u| = 1), so constrain(unconstrain(x)) = x while unconstrain(constrain(θ)) keeps
// only θ's direction. log_prob(θ, false) (no Jacobian) leaves the auxiliary direction flat.

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

namespace tyche::transforms {

struct simplex {
  static constexpr const char* name = "simplex";
  static constexpr bool whole_vector = true;
  template <class U>
  auto constrain(const U& u) const {
    static_assert(is_vector_v<tyche::detail::node_t<U>>,
                  "tyche: a simplex random variable must be a vector: give it a shape");
    return exp(u - log_sum_exp(u));
  }
  template <class U>
  auto log_jacobian(const U& u) const {
    return sum(u - exp(u));
  }
  static std::string unconstrain_vector(const double* x, double* u, std::size_t n, std::size_t& k) {
    double total = 0;
    for (k = 0; k < n; ++k) {
      if (!(x[k] > 0)) return "must be > 0 (simplex)";
      total += x[k];
      u[k] = std::log(x[k]);
    }
    if (!(std::fabs(total - 1) <= 1e-8 * double(n))) {
      k = n - 1;
      return "ends a vector whose sum is " + tyche::detail::format_number(total) + ", not 1 (simplex)";
    }
    return {};
  }
  template <class Redraw>
  static void restrict_draws(std::vector<double>&, Redraw&&) {}
};

struct unit_vector {
  static constexpr const char* name = "unit_vector";
  static constexpr bool whole_vector = true;
  template <class U>
  auto constrain(const U& u) const {
    static_assert(is_vector_v<tyche::detail::node_t<U>>,
                  "tyche: a unit_vector random variable must be a vector: give it a shape");
    return u / sqrt(sum(square(u)));
  }
  template <class U>
  auto log_jacobian(const U& u) const {
    return lit<-1, 2> * sum(square(u));
  }
  static std::string unconstrain_vector(const double* x, double* u, std::size_t n, std::size_t& k) {
    double norm2 = 0;
    for (k = 0; k < n; ++k) {
      if (std::isnan(x[k])) return "is not a number";
      norm2 += x[k] * x[k];
      u[k] = x[k];
    }
    if (!(std::fabs(norm2 - 1) <= 1e-8 * double(n))) {
      k = n - 1;
      return "ends a vector whose squared norm is " + tyche::detail::format_number(norm2) + ", not 1 (unit_vector)";
    }
    return {};
  }
  template <class Redraw>
  static void restrict_draws(std::vector<double>&, Redraw&&) {}
};

}  // namespace tyche::transforms
// ----- end tyche/transforms/simplex.hpp -----

#include <random>
#include <tuple>
#include <vector>

namespace tyche {

template <class Alpha>
struct dirichlet_distribution : distribution<dirichlet_distribution<Alpha>> {
  static constexpr const char* family = "dirichlet";
  Alpha alpha;
  auto transform() const { return transforms::simplex{}; }
  template <class X>
  auto log_prob(const X& x) const {
    static_assert(is_vector_v<X>, "tyche::dirichlet(alpha): the variable must be a vector");
    if constexpr (is_vector_v<Alpha>) {
      return sum((alpha - lit<1>) * log(x)) + lgamma(sum(alpha)) - sum(lgamma(alpha));
    } else {
      const constant k{static_cast<double>(x.size())};
      return (alpha - lit<1>) * sum(log(x)) + lgamma(k * alpha) - k * lgamma(alpha);
    }
  }
  auto arguments() const { return std::tuple{alpha}; }
  static constexpr bool whole_arguments = true;
  /// One draw of K values (normalised Gamma(αₖ, 1) draws); α of size 1 is symmetric.
  template <class G>
  static std::vector<double> draw_all(G& rng, std::size_t k, const std::vector<double>& a) {
    std::vector<double> x(k);
    double total = 0;
    for (std::size_t i = 0; i < k; ++i) {
      x[i] = std::gamma_distribution<double>(a.size() == 1 ? a[0] : a[i], 1.0)(rng);
      total += x[i];
    }
    for (auto& v : x) v /= total;
    return x;
  }
};

/// Name ~ dirichlet(alpha): `dirichlet<"theta">(data(alpha))` (the shape of alpha), or with a
/// scalar alpha and a shape, `dirichlet<"p">(1.0, shape<4>)`.
template <fixed_string Name, detail::operand Alpha, shape_tag Shape = scalar_shape>
auto dirichlet(const Alpha& alpha, Shape shape = {}) {
  static_assert(is_vector_v<detail::node_t<Alpha>> || !std::is_same_v<Shape, scalar_shape>,
                "tyche::dirichlet<\"name\">(alpha, shape): with a scalar alpha give the number of "
                "categories as a shape, e.g. shape<4>");
  return detail::make_named<Name, dirichlet_distribution>(shape, alpha);
}
/// The distribution dirichlet(alpha), e.g. to observe proportions.
template <detail::operand Alpha>
auto dirichlet(const Alpha& alpha) {
  return detail::make_distribution<dirichlet_distribution>(alpha);
}

}  // namespace tyche
// ----- end tyche/distributions/dirichlet.hpp -----
// ----- begin tyche/distributions/double_exponential.hpp -----
// tyche/distributions/double_exponential.hpp — double_exponential(mu, sigma) (Laplace).
//   log p(x | μ, σ) = −log 2 − log σ − |x − μ|/σ,   x ∈ ℝ, σ > 0.

#include <cmath>
#include <random>
#include <tuple>

namespace tyche {

template <class Mu, class Sigma>
struct double_exponential_distribution : distribution<double_exponential_distribution<Mu, Sigma>> {
  static constexpr const char* family = "double_exponential";
  Mu mu;
  Sigma sigma;
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(-abs(x - mu) / sigma - log(sigma) - detail::log_two);
  }
  auto arguments() const { return std::tuple{mu, sigma}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<Sigma, domains::positive>::ok,
                  "tyche::double_exponential(mu, sigma): sigma must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::positive>("double_exponential(mu, sigma)", "sigma", sigma);
  }
  /// By inversion of u ~ uniform(0, 1): μ + σ log 2u below ½, μ − σ log 2(1 − u) above.
  template <class G>
  static double draw(G& rng, double m, double s) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    double u = unit(rng);
    while (u <= 0.0 || u >= 1.0) u = unit(rng);
    return u < 0.5 ? m + s * std::log(2 * u) : m - s * std::log(2 * (1 - u));
  }
  static double mean(double m, double) { return m; }
  static double variance(double, double s) { return 2 * s * s; }
};

/// Name ~ double_exponential(mu, sigma) (Laplace).
template <fixed_string Name, detail::operand Mu, detail::operand Sigma, shape_tag Shape = scalar_shape>
auto double_exponential(const Mu& mu, const Sigma& sigma, Shape shape = {}) {
  return detail::make_named<Name, double_exponential_distribution>(shape, mu, sigma);
}
template <detail::operand Mu, detail::operand Sigma>
auto double_exponential(const Mu& mu, const Sigma& sigma) {
  return detail::make_distribution<double_exponential_distribution>(mu, sigma);
}

}  // namespace tyche
// ----- end tyche/distributions/double_exponential.hpp -----
// ----- begin tyche/distributions/exp_mod_normal.hpp -----
// tyche/distributions/exp_mod_normal.hpp — exp_mod_normal(mu, sigma, lambda), as in Stan.
// The sum of a normal(μ, σ) and an independent exponential(λ) variable.
//   log p(x | μ, σ, λ) = log λ + λ (μ − x) + (λσ)²/2 + log Φ((x − μ)/σ − λσ),
//   x ∈ ℝ, σ > 0, λ > 0 (Stan's log(λ/2) + λ(μ + λσ²/2 − x) + log erfc((μ + λσ² − x)/(√2 σ)),
//   with erfc(−t/√2)/2 = Φ(t)), and log Φ = log_Phi, finite where Φ underflows.

#include <random>
#include <tuple>

namespace tyche {

template <class Mu, class Sigma, class Lambda>
struct exp_mod_normal_distribution : distribution<exp_mod_normal_distribution<Mu, Sigma, Lambda>> {
  static constexpr const char* family = "exp_mod_normal";
  Mu mu;
  Sigma sigma;
  Lambda lambda;
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    const auto lambda_sigma = lambda * sigma;
    return detail::total(log(lambda) + lambda * (mu - x) + lit<1, 2> * square(lambda_sigma) +
                         log_Phi((x - mu) / sigma - lambda_sigma));
  }
  auto arguments() const { return std::tuple{mu, sigma, lambda}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<Sigma, domains::positive>::ok,
                  "tyche::exp_mod_normal(mu, sigma, lambda): sigma must be > 0, but its support "
                  "(spelled out in tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    static_assert(argument_support_t<Lambda, domains::positive>::ok,
                  "tyche::exp_mod_normal(mu, sigma, lambda): lambda must be > 0, but its support "
                  "(spelled out in tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::positive>("exp_mod_normal(mu, sigma, lambda)", "sigma", sigma);
    detail::check_argument<domains::positive>("exp_mod_normal(mu, sigma, lambda)", "lambda", lambda);
  }
  /// μ + σ z + e, z ~ normal(0, 1), e ~ exponential(λ).
  template <class G>
  static double draw(G& rng, double m, double s, double l) {
    const double z = std::normal_distribution<double>(0.0, 1.0)(rng);
    return m + s * z + std::exponential_distribution<double>(l)(rng);
  }
  static double mean(double m, double, double l) { return m + 1 / l; }
  static double variance(double, double s, double l) { return s * s + 1 / (l * l); }
};

/// Name ~ exp_mod_normal(mu, sigma, lambda), support ℝ.
template <fixed_string Name, detail::operand Mu, detail::operand Sigma, detail::operand Lambda,
          shape_tag Shape = scalar_shape>
auto exp_mod_normal(const Mu& mu, const Sigma& sigma, const Lambda& lambda, Shape shape = {}) {
  return detail::make_named<Name, exp_mod_normal_distribution>(shape, mu, sigma, lambda);
}
template <detail::operand Mu, detail::operand Sigma, detail::operand Lambda>
auto exp_mod_normal(const Mu& mu, const Sigma& sigma, const Lambda& lambda) {
  return detail::make_distribution<exp_mod_normal_distribution>(mu, sigma, lambda);
}

}  // namespace tyche
// ----- end tyche/distributions/exp_mod_normal.hpp -----
// ----- begin tyche/distributions/exponential.hpp -----
// tyche/distributions/exponential.hpp — exponential(lambda), lambda the rate.
//   log p(x | λ) = log λ − λ x,   x ≥ 0, λ > 0.

#include <random>
#include <tuple>

namespace tyche {

template <class Lambda>
struct exponential_distribution : distribution<exponential_distribution<Lambda>> {
  static constexpr const char* family = "exponential";
  Lambda lambda;
  auto transform() const { return transforms::lower_bound<literal<0>>{}; }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(log(lambda) - lambda * x);
  }
  auto arguments() const { return std::tuple{lambda}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<Lambda, domains::positive>::ok,
                  "tyche::exponential(lambda): lambda must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::positive>("exponential(lambda)", "lambda", lambda);
  }
  template <class G>
  static double draw(G& rng, double l) { return std::exponential_distribution<double>(l)(rng); }
  static double mean(double l) { return 1.0 / l; }
  static double variance(double l) { return 1.0 / (l * l); }
  static const char* observation_problem(double v) { return detail::nonnegative_problem(v); }
};

/// Name ~ exponential(lambda) (rate lambda), support (0, ∞), sampled as log Name.
template <fixed_string Name, detail::operand Lambda, shape_tag Shape = scalar_shape>
auto exponential(const Lambda& lambda, Shape shape = {}) {
  return detail::make_named<Name, exponential_distribution>(shape, lambda);
}
template <detail::operand Lambda>
auto exponential(const Lambda& lambda) {
  return detail::make_distribution<exponential_distribution>(lambda);
}

}  // namespace tyche
// ----- end tyche/distributions/exponential.hpp -----
// ----- begin tyche/distributions/flat.hpp -----
// tyche/distributions/flat.hpp — flat<"x">(...): an improper uniform prior (no prior term) on
// the real line or on a support given by bounds, e.g. for regression coefficients with "no
// prior" or a scale with a flat prior on (0, ∞) (Stan: a parameter with no sampling statement).
// ----- begin tyche/transforms/matrix.hpp -----
// tyche/transforms/matrix.hpp — the transforms to K × K matrices (Stan's cholesky_factor_corr,
// cholesky_factor_cov, cov_matrix, corr_matrix). A matrix variable is a vector parameter of the
// unconstrained size (θ holds only free coordinates) whose value is a vector_op of K² values,
// the matrix in row-major order (the ops in autodiff/matrix_ops.hpp):
//
//   cholesky_factor_corr  K(K−1)/2  L = corr_cholesky(u): zᵢⱼ = tanh uᵢⱼ, canonical partial
//                                   correlations; Lᵢⱼ = zᵢⱼ √(1 − Σ_{j'<j} Lᵢⱼ'²), Lᵢᵢ the rest
//                                   of row i's unit norm.
//                                   log|J| = Σ_{i>j} [log(1 − zᵢⱼ²) + ½ log(1 − Σ_{j'<j} Lᵢⱼ'²)]
//   cholesky_factor_cov   K(K+1)/2  L lower triangular, Lᵢⱼ = u (j < i), Lᵢᵢ = e^u.
//                                   log|J| = Σᵢ uᵢᵢ
//   cov_matrix            K(K+1)/2  Σ = L Lᵀ with L as for cholesky_factor_cov.
//                                   log|J| = K log 2 + Σ_{k=1..K} (K − k + 2) log Lₖₖ
//   corr_matrix           K(K−1)/2  Ω = L Lᵀ with L as for cholesky_factor_corr.
//                                   log|J| = Σ_{i>j} [log(1 − zᵢⱼ²) + ((K − 2 − j)/2) log(1 − zᵢⱼ²)]
//                                   (j 0-based)
//
// The log-Jacobians are those of the map from u to the free entries of the value (the strictly
// lower triangle for the correlation types, the lower triangle for the others), as in Stan's
// reference manual, chapter "Constraint Transforms" (sections on Cholesky factors of
// correlation and covariance matrices, covariance and correlation matrices); the correlation
// ones come from the canonical partial correlations of Lewandowski, Kurowicka and Joe (2009).
//
// model.hpp finds these by `matrix_valued`: constrain() writes the K² entries, parameter names
// are `L[i,j]` (1-based row, column, row-major order), and unconstrain() reads K² entries with
// unconstrain_matrix, which checks them (triangular, positive diagonal, unit rows or diagonal,
// symmetric, positive definite) and names the first bad entry.

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

namespace tyche::transforms {

namespace detail {
inline std::string number(double v) { return tyche::detail::format_number(v); }

/// Entries above the diagonal must be 0 and diagonal entries positive and finite, every entry
/// finite. Returns the problem, with bad the index of the entry, or "".
inline std::string check_lower_triangular(const double* x, std::size_t k, std::size_t& bad) {
  for (std::size_t i = 0; i < k; ++i) {
    for (std::size_t j = 0; j < k; ++j) {
      bad = i * k + j;
      if (!std::isfinite(x[bad])) return "is not finite";
      if (j > i && x[bad] != 0) return "must be 0 (the matrix is lower triangular)";
      if (j == i && !(x[bad] > 0)) return "must be > 0 (a diagonal entry of a Cholesky factor)";
    }
  }
  return {};
}

/// Symmetric, finite; on success l holds the lower Cholesky factor. Returns the problem, with
/// bad the index of the entry, or "".
inline std::string cholesky_of_symmetric(const double* x, std::size_t k, std::vector<double>& l,
                                         std::size_t& bad) {
  for (std::size_t i = 0; i < k; ++i) {
    for (std::size_t j = 0; j < k; ++j) {
      bad = i * k + j;
      if (!std::isfinite(x[bad])) return "is not finite";
      const double a = x[i * k + j], b = x[j * k + i];
      if (j < i && !(std::fabs(a - b) <= 1e-8 * (std::fabs(a) + std::fabs(b)) + 1e-300))
        return "differs from the entry across the diagonal, " + number(b) + " (the matrix must be symmetric)";
    }
  }
  l.assign(k * k, 0.0);
  for (std::size_t i = 0; i < k; ++i) {
    for (std::size_t j = 0; j <= i; ++j) {
      double s = x[i * k + j];
      for (std::size_t p = 0; p < j; ++p) s -= l[i * k + p] * l[j * k + p];
      if (i == j) {
        if (!(s > 0)) {
          bad = i * k + i;
          return "ends pivot " + std::to_string(i + 1) + " of the Cholesky factorisation at " + number(s) +
                 " (the matrix must be positive definite)";
        }
        l[i * k + i] = std::sqrt(s);
      } else {
        l[i * k + j] = s / l[j * k + j];
      }
    }
  }
  return {};
}

/// u of a correlation Cholesky factor l (checked): zᵢⱼ = Lᵢⱼ / √(Σ_{m=j..i} Lᵢₘ²) (the rest of
/// row i's norm, which is 1 − Σ_{j'<j} Lᵢⱼ'² without the cancellation), u = atanh z.
inline std::string corr_cholesky_inverse(const double* l, std::size_t k, double* u, std::size_t& bad) {
  std::size_t p = 0;
  for (std::size_t i = 1; i < k; ++i) {
    for (std::size_t j = 0; j < i; ++j, ++p) {
      double rest = 0;
      for (std::size_t m = j; m <= i; ++m) rest += l[i * k + m] * l[i * k + m];
      const double z = l[i * k + j] / std::sqrt(rest);
      if (!(std::fabs(z) < 1)) {
        bad = i * k + j;
        return "leaves no room for the rest of its row (a partial correlation of " + number(z) + ")";
      }
      u[p] = std::atanh(z);
    }
  }
  return {};
}
}  // namespace detail

/// Lower-triangular K × K matrices with positive diagonal and rows of norm 1: Cholesky factors
/// of correlation matrices. K(K−1)/2 unconstrained coordinates.
struct cholesky_factor_corr {
  static constexpr const char* name = "cholesky_factor_corr";
  static constexpr bool whole_vector = true;
  static constexpr bool matrix_valued = true;
  std::size_t k = 2;
  [[nodiscard]] std::size_t order() const { return k; }
  [[nodiscard]] std::size_t parameter_size() const { return k * (k - 1) / 2; }
  template <class U>
  auto constrain(const U& u) const {
    return make_vector_op(ops::corr_cholesky_map{k}, k * k, tyche::detail::as_node(u));
  }
  template <class U>
  auto log_jacobian(const U& u) const {
    return at(make_vector_op(ops::cpc_log_jacobian_map<false>{k}, 1, tyche::detail::as_node(u)), 0);
  }
  std::string unconstrain_matrix(const double* x, double* u, std::size_t& bad) const {
    std::string problem = detail::check_lower_triangular(x, k, bad);
    if (!problem.empty()) return problem;
    for (std::size_t i = 0; i < k; ++i) {
      double norm2 = 0;
      for (std::size_t j = 0; j <= i; ++j) norm2 += x[i * k + j] * x[i * k + j];
      if (!(std::fabs(norm2 - 1) <= 1e-8)) {
        bad = i * k + i;
        return "ends row " + std::to_string(i + 1) + ", whose squared norm is " + detail::number(norm2) +
               ", not 1 (cholesky_factor_corr)";
      }
    }
    return detail::corr_cholesky_inverse(x, k, u, bad);
  }
};

/// Lower-triangular K × K matrices with positive diagonal: Cholesky factors of covariance
/// matrices. K(K+1)/2 unconstrained coordinates.
struct cholesky_factor_cov {
  static constexpr const char* name = "cholesky_factor_cov";
  static constexpr bool whole_vector = true;
  static constexpr bool matrix_valued = true;
  std::size_t k = 1;
  [[nodiscard]] std::size_t order() const { return k; }
  [[nodiscard]] std::size_t parameter_size() const { return k * (k + 1) / 2; }
  template <class U>
  auto constrain(const U& u) const {
    return make_vector_op(ops::cov_cholesky_map{k}, k * k, tyche::detail::as_node(u));
  }
  template <class U>
  auto log_jacobian(const U& u) const {
    return at(make_vector_op(ops::diagonal_sum_map<true, false>{k, 1.0, 0.0}, 1, tyche::detail::as_node(u)), 0);
  }
  std::string unconstrain_matrix(const double* x, double* u, std::size_t& bad) const {
    std::string problem = detail::check_lower_triangular(x, k, bad);
    if (!problem.empty()) return problem;
    std::size_t p = 0;
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j <= i; ++j) u[p++] = j < i ? x[i * k + j] : std::log(x[i * k + i]);
    return {};
  }
};

/// Symmetric positive-definite K × K matrices: Σ = L Lᵀ with L a cholesky_factor_cov.
/// K(K+1)/2 unconstrained coordinates.
struct cov_matrix {
  static constexpr const char* name = "cov_matrix";
  static constexpr bool whole_vector = true;
  static constexpr bool matrix_valued = true;
  std::size_t k = 1;
  [[nodiscard]] std::size_t order() const { return k; }
  [[nodiscard]] std::size_t parameter_size() const { return k * (k + 1) / 2; }
  template <class U>
  auto constrain(const U& u) const {
    return make_vector_op(ops::multiply_lower_tri_self_transpose_map{k}, k * k,
                          cholesky_factor_cov{k}.constrain(u));
  }
  /// The map L ↦ L Lᵀ on lower triangles has |J| = 2ᴷ Π Lₖₖ^{K−k+1}, and Lₖₖ = e^u adds Π Lₖₖ.
  template <class U>
  auto log_jacobian(const U& u) const {
    return at(make_vector_op(ops::diagonal_sum_map<true, false>{k, double(k) + 1.0, -1.0}, 1,
                             tyche::detail::as_node(u)),
              0) +
           constant{double(k) * 0.69314718055994530942};
  }
  std::string unconstrain_matrix(const double* x, double* u, std::size_t& bad) const {
    std::vector<double> l;
    std::string problem = detail::cholesky_of_symmetric(x, k, l, bad);
    if (!problem.empty()) return problem;
    return cholesky_factor_cov{k}.unconstrain_matrix(l.data(), u, bad);
  }
};

/// Correlation matrices (symmetric positive definite with unit diagonal): Ω = L Lᵀ with L a
/// cholesky_factor_corr. K(K−1)/2 unconstrained coordinates.
struct corr_matrix {
  static constexpr const char* name = "corr_matrix";
  static constexpr bool whole_vector = true;
  static constexpr bool matrix_valued = true;
  std::size_t k = 2;
  [[nodiscard]] std::size_t order() const { return k; }
  [[nodiscard]] std::size_t parameter_size() const { return k * (k - 1) / 2; }
  template <class U>
  auto constrain(const U& u) const {
    return make_vector_op(ops::multiply_lower_tri_self_transpose_map{k}, k * k,
                          cholesky_factor_corr{k}.constrain(u));
  }
  template <class U>
  auto log_jacobian(const U& u) const {
    return at(make_vector_op(ops::cpc_log_jacobian_map<true>{k}, 1, tyche::detail::as_node(u)), 0);
  }
  std::string unconstrain_matrix(const double* x, double* u, std::size_t& bad) const {
    for (std::size_t i = 0; i < k; ++i) {
      bad = i * k + i;
      if (!(std::fabs(x[bad] - 1) <= 1e-8)) return "must be 1 (a diagonal entry of a correlation matrix)";
    }
    std::vector<double> l;
    std::string problem = detail::cholesky_of_symmetric(x, k, l, bad);
    if (!problem.empty()) return problem;
    // Rows of L have norm √Ωᵢᵢ = 1 up to rounding; the inverse uses the rest of each row's norm.
    return detail::corr_cholesky_inverse(l.data(), k, u, bad);
  }
};

}  // namespace tyche::transforms
// ----- end tyche/transforms/matrix.hpp -----

#include <cstddef>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>

namespace tyche {

namespace detail {
inline void check_matrix_order(std::size_t k, std::size_t least, const char* what) {
  if (k < least)
    throw std::invalid_argument(std::string("tyche::") + what + "(K): K = " + std::to_string(k) +
                                " must be at least " + std::to_string(least));
}
}  // namespace detail

/// Supports for flat(): the real line, (lower, ∞), (−∞, upper), (lower, upper), the simplex,
/// the unit sphere, and the matrix supports below. Bounds may be
/// numbers or expressions of other parameters.
inline transforms::identity real_line() { return {}; }
template <detail::operand L>
auto greater_than(const L& lower) {
  return transforms::lower_bound<detail::node_t<L>>{detail::as_node(lower)};
}
inline transforms::lower_bound<literal<0>> positive() { return {}; }
/// Vectors of positive values summing to 1 (give the variable a shape).
inline transforms::simplex probability_simplex() { return {}; }
/// Vectors of Euclidean norm 1 (give the variable a shape).
inline transforms::unit_vector unit_sphere() { return {}; }
/// K × K matrices (a variable's value is its K·K entries, row major; θ holds the free
/// coordinates, transforms/matrix.hpp): Cholesky factors of correlation matrices (K ≥ 2) and
/// of covariance matrices, covariance matrices, correlation matrices (K ≥ 2).
inline transforms::cholesky_factor_corr cholesky_factor_corr(std::size_t k) {
  detail::check_matrix_order(k, 2, "cholesky_factor_corr");
  return {k};
}
inline transforms::cholesky_factor_cov cholesky_factor_cov(std::size_t k) {
  detail::check_matrix_order(k, 1, "cholesky_factor_cov");
  return {k};
}
inline transforms::cov_matrix cov_matrix(std::size_t k) {
  detail::check_matrix_order(k, 1, "cov_matrix");
  return {k};
}
inline transforms::corr_matrix corr_matrix(std::size_t k) {
  detail::check_matrix_order(k, 2, "corr_matrix");
  return {k};
}
template <detail::operand U>
auto less_than(const U& upper) {
  return transforms::upper_bound<detail::node_t<U>>{detail::as_node(upper)};
}
template <detail::operand L, detail::operand U>
auto between(const L& lower, const U& upper) {
  return transforms::interval<detail::node_t<L>, detail::node_t<U>>{detail::as_node(lower),
                                                                    detail::as_node(upper)};
}

template <class Transform>
struct flat_distribution : distribution<flat_distribution<Transform>> {
  static constexpr const char* family = "flat";
  Transform support;
  auto transform() const { return support; }
  template <class X>
  auto log_prob(const X&) const { return lit<0>; }
  auto arguments() const { return std::tuple{}; }
};

/// An improper flat prior on the given support (default: the real line):
/// `flat<"beta">(shape<7>)`, `flat<"sigma">(positive())`, `flat<"p">(between(0.0, 1.0))`.
/// A matrix support takes no shape: `flat<"Sigma">(cov_matrix(3))` has 6 coordinates in θ and
/// the 9 entries of Sigma as its value.
template <fixed_string Name, class Support = transforms::identity, shape_tag Shape = scalar_shape>
  requires(!shape_tag<Support>)
auto flat(Support support = {}, Shape shape = {}) {
  if constexpr (requires { Support::matrix_valued; }) {
    static_assert(std::is_same_v<Shape, scalar_shape>,
                  "tyche::flat<\"name\">(support, shape): a matrix support (cholesky_factor_corr(K), "
                  "cov_matrix(K), ...) has its size already; give no shape");
    return detail::make_random_variable<Name>(flat_distribution<Support>{{}, support},
                                              dynamic_shape{support.parameter_size()});
  } else {
    return detail::make_random_variable<Name>(flat_distribution<Support>{{}, support}, shape);
  }
}
template <fixed_string Name, shape_tag Shape>
auto flat(Shape shape) {
  return detail::make_random_variable<Name>(flat_distribution<transforms::identity>{{}, {}}, shape);
}

}  // namespace tyche
// ----- end tyche/distributions/flat.hpp -----
// ----- begin tyche/distributions/frechet.hpp -----
// tyche/distributions/frechet.hpp — frechet(alpha, sigma): shape α, scale σ (as in Stan).
//   log p(x | α, σ) = log α − log σ − (1 + α) log(x/σ) − (x/σ)^{−α},   x > 0, α > 0, σ > 0.

#include <cmath>
#include <limits>
#include <random>
#include <tuple>

namespace tyche {

template <class Alpha, class Sigma>
struct frechet_distribution : distribution<frechet_distribution<Alpha, Sigma>> {
  static constexpr const char* family = "frechet";
  Alpha alpha;
  Sigma sigma;
  auto transform() const { return transforms::lower_bound<literal<0>>{}; }
  template <class X>
  auto log_prob(const X& x) const {
    const auto log_z = log(x / sigma);  // (x/σ)^{−α} = exp(−α log(x/σ)), log(x/σ) computed once
    return detail::total(log(alpha) - log(sigma) - (lit<1> + alpha) * log_z - exp(-(alpha * log_z)));
  }
  auto arguments() const { return std::tuple{alpha, sigma}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<Alpha, domains::positive>::ok,
                  "tyche::frechet(alpha, sigma): alpha must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    static_assert(argument_support_t<Sigma, domains::positive>::ok,
                  "tyche::frechet(alpha, sigma): sigma must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::positive>("frechet(alpha, sigma)", "alpha", alpha);
    detail::check_argument<domains::positive>("frechet(alpha, sigma)", "sigma", sigma);
  }
  /// By inversion of the cdf exp(−(x/σ)^{−α}): σ (−log u)^{−1/α}, u ~ uniform(0, 1).
  template <class G>
  static double draw(G& rng, double a, double s) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    double u = unit(rng);
    while (u <= 0.0 || u >= 1.0) u = unit(rng);
    return s * std::exp(-std::log(-std::log(u)) / a);
  }
  /// σ Γ(1 − 1/α) for α > 1, infinite otherwise.
  static double mean(double a, double s) {
    return a > 1 ? s * std::tgamma(1 - 1 / a) : std::numeric_limits<double>::infinity();
  }
  /// σ² (Γ(1 − 2/α) − Γ(1 − 1/α)²) for α > 2, infinite otherwise.
  static double variance(double a, double s) {
    if (!(a > 2)) return std::numeric_limits<double>::infinity();
    const double g1 = std::tgamma(1 - 1 / a);
    return s * s * (std::tgamma(1 - 2 / a) - g1 * g1);
  }
  // 0 is rejected too: log(x/σ) = −∞ there, and −(x/σ)^{−α} − (1 + α)·log(x/σ) is −∞ + ∞.
  static const char* observation_problem(double v) { return detail::positive_problem(v); }
};

/// Name ~ frechet(alpha, sigma) (shape alpha, scale sigma), support (0, ∞), sampled as log Name.
template <fixed_string Name, detail::operand Alpha, detail::operand Sigma, shape_tag Shape = scalar_shape>
auto frechet(const Alpha& alpha, const Sigma& sigma, Shape shape = {}) {
  return detail::make_named<Name, frechet_distribution>(shape, alpha, sigma);
}
template <detail::operand Alpha, detail::operand Sigma>
auto frechet(const Alpha& alpha, const Sigma& sigma) {
  return detail::make_distribution<frechet_distribution>(alpha, sigma);
}

}  // namespace tyche
// ----- end tyche/distributions/frechet.hpp -----
// ----- begin tyche/distributions/gamma.hpp -----
// tyche/distributions/gamma.hpp — gamma(alpha, beta): shape α, rate β (as in Stan).
//   log p(x | α, β) = α log β − log Γ(α) + (α − 1) log x − β x,   x > 0, α > 0, β > 0.

#include <random>
#include <tuple>

namespace tyche {

template <class Alpha, class Beta>
struct gamma_distribution : distribution<gamma_distribution<Alpha, Beta>> {
  static constexpr const char* family = "gamma";
  Alpha alpha;
  Beta beta;
  auto transform() const { return transforms::lower_bound<literal<0>>{}; }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(alpha * log(beta) - lgamma(alpha) + (alpha - lit<1>) * log(x) - beta * x);
  }
  auto arguments() const { return std::tuple{alpha, beta}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<Alpha, domains::positive>::ok,
                  "tyche::gamma(alpha, beta): alpha must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    static_assert(argument_support_t<Beta, domains::positive>::ok,
                  "tyche::gamma(alpha, beta): beta must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::positive>("gamma(alpha, beta)", "alpha", alpha);
    detail::check_argument<domains::positive>("gamma(alpha, beta)", "beta", beta);
  }
  template <class G>
  static double draw(G& rng, double a, double b) { return std::gamma_distribution<double>(a, 1.0 / b)(rng); }
  static double mean(double a, double b) { return a / b; }
  static double variance(double a, double b) { return a / (b * b); }
  static const char* observation_problem(double v) { return detail::positive_problem(v); }
};

/// Name ~ gamma(alpha, beta) (shape alpha, rate beta), support (0, ∞), sampled as log Name.
template <fixed_string Name, detail::operand Alpha, detail::operand Beta, shape_tag Shape = scalar_shape>
auto gamma(const Alpha& alpha, const Beta& beta, Shape shape = {}) {
  return detail::make_named<Name, gamma_distribution>(shape, alpha, beta);
}
template <detail::operand Alpha, detail::operand Beta>
auto gamma(const Alpha& alpha, const Beta& beta) {
  return detail::make_distribution<gamma_distribution>(alpha, beta);
}

}  // namespace tyche
// ----- end tyche/distributions/gamma.hpp -----
// ----- begin tyche/distributions/gumbel.hpp -----
// tyche/distributions/gumbel.hpp — gumbel(mu, beta): location μ, scale β (as in Stan).
//   log p(x | μ, β) = −log β − z − e^{−z},   z = (x − μ)/β,   x ∈ ℝ, β > 0.

#include <cmath>
#include <numbers>
#include <random>
#include <tuple>

namespace tyche {

template <class Mu, class Beta>
struct gumbel_distribution : distribution<gumbel_distribution<Mu, Beta>> {
  static constexpr const char* family = "gumbel";
  Mu mu;
  Beta beta;
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    const auto z = (x - mu) / beta;
    return detail::total(-log(beta) - z - exp(-z));
  }
  auto arguments() const { return std::tuple{mu, beta}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<Beta, domains::positive>::ok,
                  "tyche::gumbel(mu, beta): beta must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::positive>("gumbel(mu, beta)", "beta", beta);
  }
  /// By inversion of the cdf exp(−e^{−z}): μ − β log(−log u), u ~ uniform(0, 1).
  template <class G>
  static double draw(G& rng, double m, double b) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    double u = unit(rng);
    while (u <= 0.0 || u >= 1.0) u = unit(rng);
    return m - b * std::log(-std::log(u));
  }
  /// μ + β γ, γ the Euler–Mascheroni constant.
  static double mean(double m, double b) { return m + b * std::numbers::egamma; }
  static double variance(double, double b) { return b * b * std::numbers::pi * std::numbers::pi / 6; }
};

/// Name ~ gumbel(mu, beta), support ℝ.
template <fixed_string Name, detail::operand Mu, detail::operand Beta, shape_tag Shape = scalar_shape>
auto gumbel(const Mu& mu, const Beta& beta, Shape shape = {}) {
  return detail::make_named<Name, gumbel_distribution>(shape, mu, beta);
}
template <detail::operand Mu, detail::operand Beta>
auto gumbel(const Mu& mu, const Beta& beta) {
  return detail::make_distribution<gumbel_distribution>(mu, beta);
}

}  // namespace tyche
// ----- end tyche/distributions/gumbel.hpp -----
// ----- begin tyche/distributions/half_normal.hpp -----
// tyche/distributions/half_normal.hpp — half_normal(sigma): the normal(0, sigma) folded onto x ≥ 0.
//   log p(x | σ) = log 2 − ½ log 2π − log σ − ½ (x/σ)²,   x ≥ 0, σ > 0.

#include <cmath>
#include <numbers>
#include <random>
#include <tuple>

namespace tyche {

template <class Sigma>
struct half_normal_distribution : distribution<half_normal_distribution<Sigma>> {
  static constexpr const char* family = "half_normal";
  Sigma sigma;
  auto transform() const { return transforms::lower_bound<literal<0>>{}; }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(lit<-1, 2> * square(x / sigma) - log(sigma) +
                         (detail::log_two - detail::half_log_two_pi));
  }
  auto arguments() const { return std::tuple{sigma}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<Sigma, domains::positive>::ok,
                  "tyche::half_normal(sigma): sigma must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::positive>("half_normal(sigma)", "sigma", sigma);
  }
  template <class G>
  static double draw(G& rng, double s) { return std::fabs(std::normal_distribution<double>(0.0, s)(rng)); }
  static double mean(double s) { return s * std::sqrt(2.0 / std::numbers::pi); }
  static double variance(double s) { return s * s * (1.0 - 2.0 / std::numbers::pi); }
  static const char* observation_problem(double v) { return detail::nonnegative_problem(v); }
};

/// Name ~ half-normal(sigma), support (0, ∞), sampled as log Name.
template <fixed_string Name, detail::operand Sigma, shape_tag Shape = scalar_shape>
auto half_normal(const Sigma& sigma, Shape shape = {}) {
  return detail::make_named<Name, half_normal_distribution>(shape, sigma);
}
template <detail::operand Sigma>
auto half_normal(const Sigma& sigma) {
  return detail::make_distribution<half_normal_distribution>(sigma);
}

}  // namespace tyche
// ----- end tyche/distributions/half_normal.hpp -----
// ----- begin tyche/distributions/half_student_t.hpp -----
// tyche/distributions/half_student_t.hpp — half_student_t(nu, sigma): student_t(nu, 0, sigma)
// folded onto x ≥ 0.
//   log p(x | ν, σ) = log 2 + log Γ((ν+1)/2) − log Γ(ν/2) − ½ log ν − ½ log π − log σ
//                     − (ν+1)/2 · log(1 + (x/σ)²/ν),   x ≥ 0, ν > 0, σ > 0.

#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <tuple>

namespace tyche {

template <class Nu, class Sigma>
struct half_student_t_distribution : distribution<half_student_t_distribution<Nu, Sigma>> {
  static constexpr const char* family = "half_student_t";
  Nu nu;
  Sigma sigma;
  auto transform() const { return transforms::lower_bound<literal<0>>{}; }
  template <class X>
  auto log_prob(const X& x) const {
    const auto half_nu = lit<1, 2> * nu;
    const auto half_nu_plus_half = half_nu + lit<1, 2>;
    return detail::total(lgamma(half_nu_plus_half) - lgamma(half_nu) - lit<1, 2> * log(nu) -
                         log(sigma) - half_nu_plus_half * log1p(square(x / sigma) / nu) +
                         (detail::log_two - 0.5 * detail::log_pi));
  }
  auto arguments() const { return std::tuple{nu, sigma}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<Nu, domains::positive>::ok,
                  "tyche::half_student_t(nu, sigma): nu must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    static_assert(argument_support_t<Sigma, domains::positive>::ok,
                  "tyche::half_student_t(nu, sigma): sigma must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::positive>("half_student_t(nu, sigma)", "nu", nu);
    detail::check_argument<domains::positive>("half_student_t(nu, sigma)", "sigma", sigma);
  }
  template <class G>
  static double draw(G& rng, double n, double s) {
    return s * std::fabs(std::student_t_distribution<double>(n)(rng));
  }
  /// 2σ √(ν/π) Γ((ν+1)/2) / (Γ(ν/2) (ν − 1)) for ν > 1 (else infinite).
  static double mean(double n, double s) {
    if (n <= 1) return std::numeric_limits<double>::infinity();
    return 2 * s * std::sqrt(n / std::numbers::pi) *
           std::exp(std::lgamma((n + 1) / 2) - std::lgamma(n / 2)) / (n - 1);
  }
  /// σ² ν/(ν − 2) − mean² for ν > 2 (else infinite; undefined, NaN, for ν ≤ 1).
  static double variance(double n, double s) {
    if (n > 2) {
      const double m = mean(n, s);
      return s * s * n / (n - 2) - m * m;
    }
    return n > 1 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  }
  static const char* observation_problem(double v) { return detail::nonnegative_problem(v); }
};

/// Name ~ half-Student-t(nu, sigma), support (0, ∞), sampled as log Name.
template <fixed_string Name, detail::operand Nu, detail::operand Sigma, shape_tag Shape = scalar_shape>
auto half_student_t(const Nu& nu, const Sigma& sigma, Shape shape = {}) {
  return detail::make_named<Name, half_student_t_distribution>(shape, nu, sigma);
}
template <detail::operand Nu, detail::operand Sigma>
auto half_student_t(const Nu& nu, const Sigma& sigma) {
  return detail::make_distribution<half_student_t_distribution>(nu, sigma);
}

}  // namespace tyche
// ----- end tyche/distributions/half_student_t.hpp -----
// ----- begin tyche/distributions/inv_chi_square.hpp -----
// tyche/distributions/inv_chi_square.hpp — inv_chi_square(nu): 1/x ~ chi_square(nu).
//   log p(x | ν) = −(ν/2) log 2 − log Γ(ν/2) − (ν/2 + 1) log x − 1/(2x),   x > 0, ν > 0.

#include <limits>
#include <random>
#include <tuple>

namespace tyche {

template <class Nu>
struct inv_chi_square_distribution : distribution<inv_chi_square_distribution<Nu>> {
  static constexpr const char* family = "inv_chi_square";
  Nu nu;
  auto transform() const { return transforms::lower_bound<literal<0>>{}; }
  template <class X>
  auto log_prob(const X& x) const {
    const auto half_nu = lit<1, 2> * nu;
    return detail::total(-(half_nu + lit<1>) * log(x) - lit<1, 2> / x - half_nu * detail::log_two -
                         lgamma(half_nu));
  }
  auto arguments() const { return std::tuple{nu}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<Nu, domains::positive>::ok,
                  "tyche::inv_chi_square(nu): nu must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::positive>("inv_chi_square(nu)", "nu", nu);
  }
  template <class G>
  static double draw(G& rng, double n) { return 1.0 / std::chi_squared_distribution<double>(n)(rng); }
  /// 1/(ν − 2) for ν > 2 (else infinite).
  static double mean(double n) { return n > 2 ? 1 / (n - 2) : std::numeric_limits<double>::infinity(); }
  /// 2/((ν − 2)² (ν − 4)) for ν > 4 (else infinite).
  static double variance(double n) {
    return n > 4 ? 2 / ((n - 2) * (n - 2) * (n - 4)) : std::numeric_limits<double>::infinity();
  }
  static const char* observation_problem(double v) { return detail::positive_problem(v); }
};

/// Name ~ inv_chi_square(nu), support (0, ∞), sampled as log Name.
template <fixed_string Name, detail::operand Nu, shape_tag Shape = scalar_shape>
auto inv_chi_square(const Nu& nu, Shape shape = {}) {
  return detail::make_named<Name, inv_chi_square_distribution>(shape, nu);
}
template <detail::operand Nu>
auto inv_chi_square(const Nu& nu) {
  return detail::make_distribution<inv_chi_square_distribution>(nu);
}

}  // namespace tyche
// ----- end tyche/distributions/inv_chi_square.hpp -----
// ----- begin tyche/distributions/inv_gamma.hpp -----
// tyche/distributions/inv_gamma.hpp — inv_gamma(alpha, beta): 1/x ~ gamma(alpha, beta); shape α,
// scale β.
//   log p(x | α, β) = α log β − log Γ(α) − (α + 1) log x − β / x,   x > 0, α > 0, β > 0.

#include <limits>
#include <random>
#include <tuple>

namespace tyche {

template <class Alpha, class Beta>
struct inv_gamma_distribution : distribution<inv_gamma_distribution<Alpha, Beta>> {
  static constexpr const char* family = "inv_gamma";
  Alpha alpha;
  Beta beta;
  auto transform() const { return transforms::lower_bound<literal<0>>{}; }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(alpha * log(beta) - lgamma(alpha) - (alpha + lit<1>) * log(x) - beta / x);
  }
  auto arguments() const { return std::tuple{alpha, beta}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<Alpha, domains::positive>::ok,
                  "tyche::inv_gamma(alpha, beta): alpha must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    static_assert(argument_support_t<Beta, domains::positive>::ok,
                  "tyche::inv_gamma(alpha, beta): beta must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::positive>("inv_gamma(alpha, beta)", "alpha", alpha);
    detail::check_argument<domains::positive>("inv_gamma(alpha, beta)", "beta", beta);
  }
  template <class G>
  static double draw(G& rng, double a, double b) { return b / std::gamma_distribution<double>(a, 1.0)(rng); }
  /// β / (α − 1) for α > 1 (else infinite).
  static double mean(double a, double b) {
    return a > 1 ? b / (a - 1) : std::numeric_limits<double>::infinity();
  }
  /// β² / ((α − 1)² (α − 2)) for α > 2 (else infinite).
  static double variance(double a, double b) {
    return a > 2 ? b * b / ((a - 1) * (a - 1) * (a - 2)) : std::numeric_limits<double>::infinity();
  }
  static const char* observation_problem(double v) { return detail::positive_problem(v); }
};

/// Name ~ inv_gamma(alpha, beta) (shape alpha, scale beta), support (0, ∞), sampled as log Name.
template <fixed_string Name, detail::operand Alpha, detail::operand Beta, shape_tag Shape = scalar_shape>
auto inv_gamma(const Alpha& alpha, const Beta& beta, Shape shape = {}) {
  return detail::make_named<Name, inv_gamma_distribution>(shape, alpha, beta);
}
template <detail::operand Alpha, detail::operand Beta>
auto inv_gamma(const Alpha& alpha, const Beta& beta) {
  return detail::make_distribution<inv_gamma_distribution>(alpha, beta);
}

}  // namespace tyche
// ----- end tyche/distributions/inv_gamma.hpp -----
// ----- begin tyche/distributions/lkj_corr.hpp -----
// tyche/distributions/lkj_corr.hpp — lkj_corr(eta, K) on K × K correlation matrices.
//   log p(Ω | η) = (η − 1) log det Ω − log c_K(η),   η > 0, K ≥ 2,
// Ω symmetric positive definite with unit diagonal (a K·K vector, row major), c_K(η) as for
// lkj_corr_cholesky (Lewandowski, Kurowicka & Joe 2009), the density with respect to Ω's
// strictly lower entries. log det Ω = 2 Σ log Lᵢᵢ with L = cholesky_decompose(Ω), O(K³) per
// evaluation: where Ω is only used through its factor, lkj_corr_cholesky on a
// cholesky_factor_corr variable is the cheaper model of the same law. A named variable takes
// the corr_matrix transform (transforms/matrix.hpp): `auto Omega = lkj_corr<"Omega">(2.0, K);`
// (Stan: `corr_matrix[K] Omega; Omega ~ lkj_corr(2);`). η may be a parameter.
// ----- begin tyche/distributions/lkj_corr_cholesky.hpp -----
// tyche/distributions/lkj_corr_cholesky.hpp — lkj_corr_cholesky(eta, K) on Cholesky factors of K × K correlation matrices.
//   log p(L | η) = Σ_{k=2..K} (K − k + 2η − 2) log Lₖₖ − log c_K(η),   η > 0, K ≥ 2,
//   log c_K(η) = Σ_{j=1..K−1} (K − j) [(2η + K − j − 2) log 2 + 2 log Γ(η + (K − j − 1)/2)
//                                      − log Γ(2η + K − j − 1)],
// L lower triangular with positive diagonal and rows of norm 1 (a K·K vector, row major). It
// is the density of L = cholesky(Ω), with respect to L's strictly lower entries, when Ω has
// the LKJ density det(Ω)^{η−1} / c_K(η) (Lewandowski, Kurowicka & Joe 2009; the kernel is
// Stan's, functions reference "LKJ Cholesky distribution"; c_K is computed through the
// canonical partial correlations, independent Beta(aⱼ, aⱼ) on (−1, 1) with aⱼ = η + (K − j − 1)/2
// in column j). η = 1 is uniform over correlation matrices; each correlation Ωᵢⱼ then has the
// law 2·Beta(η − 1 + K/2, η − 1 + K/2) − 1 (mean 0, variance 1/(2η + K − 1)).
// A named variable takes the cholesky_factor_corr transform (transforms/matrix.hpp):
// `auto L_Omega = lkj_corr_cholesky<"L_Omega">(2.0, K);`, θ holds K(K−1)/2 coordinates and the
// value is the K·K matrix (names L_Omega[1,1] … L_Omega[K,K]). η may be a parameter. The code's
// sum also takes k = 1, whose term is 0 since L₁₁ = 1.

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace tyche {

namespace detail {
inline void check_lkj_order(std::size_t k, const char* who = "lkj_corr_cholesky(eta, K)") {
  if (k < 2)
    throw std::invalid_argument(std::string("tyche::") + who + ": K = " + std::to_string(k) + " must be at least 2");
}

/// One draw of the Cholesky factor of an LKJ(η) correlation matrix (K·K values): the canonical
/// partial correlations of column j are independent 2·Beta(aⱼ, aⱼ) − 1, aⱼ = η + (K − 2 − j)/2
/// (0-based j), and L is built from them as the cholesky_factor_corr transform does.
template <class G>
std::vector<double> draw_lkj_cholesky(G& rng, std::size_t k, double eta) {
  std::vector<double> l(k * k, 0.0);
  l[0] = 1.0;
  for (std::size_t i = 1; i < k; ++i) {
    double rest = 1.0;  // 1 − Σ_{j'<j} Lᵢⱼ'²
    for (std::size_t j = 0; j < i; ++j) {
      const double a = eta + 0.5 * (double(k) - 2.0 - double(j));
      const double g1 = std::gamma_distribution<double>(a, 1.0)(rng);
      const double g2 = std::gamma_distribution<double>(a, 1.0)(rng);
      const double z = (g1 - g2) / (g1 + g2);  // 2·Beta(a, a) − 1
      l[i * k + j] = z * std::sqrt(rest);
      rest *= 1.0 - z * z;
    }
    l[i * k + i] = std::sqrt(rest);
  }
  return l;
}
}  // namespace detail

template <class Eta>
struct lkj_corr_cholesky_distribution : distribution<lkj_corr_cholesky_distribution<Eta>> {
  static constexpr const char* family = "lkj_corr_cholesky";
  Eta eta;
  std::size_t k = 2;
  auto transform() const { return transforms::cholesky_factor_corr{k}; }
  template <class X>
  auto log_prob(const X& x) const {
    using N = detail::node_t<X>;
    static_assert(is_vector_v<N>, "tyche::lkj_corr_cholesky(eta, K): x must be a vector of K*K values");
    const N l = detail::as_node(x);
    if (l.size() != k * k)
      throw std::invalid_argument("tyche::lkj_corr_cholesky(eta, K): x has " + std::to_string(l.size()) +
                                  " values but K = " + std::to_string(k) + " needs " + std::to_string(k * k) +
                                  " (the matrix, row major)");
    // Σᵢ (K − 3 − i) log Lᵢᵢ + 2η Σᵢ log Lᵢᵢ, i = k − 1 (0-based): Stan's Σₖ (K − k + 2η − 2) log Lₖₖ.
    const auto fixed = make_vector_op(ops::diagonal_sum_map<false, true>{k, double(k) - 3.0, -1.0}, 1, l);
    const auto log_diagonal = make_vector_op(ops::diagonal_sum_map<false, true>{k, 1.0, 0.0}, 1, l);
    const auto log_c = make_vector_op(ops::lkj_log_normaliser_map{k}, 1, eta);
    return at(fixed, 0) + lit<2> * eta * at(log_diagonal, 0) - at(log_c, 0);
  }
  auto arguments() const { return std::tuple{eta}; }
  /// The same distribution with other arguments (do_ substitutes into them).
  template <class E>
  auto with_arguments(const E& e) const {
    return lkj_corr_cholesky_distribution<E>{{}, e, k};
  }
  void check_supports() const {
    static_assert(argument_support_t<Eta, domains::positive>::ok,
                  "tyche::lkj_corr_cholesky(eta, K): eta must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::positive>("lkj_corr_cholesky(eta, K)", "eta", eta);
  }
  static constexpr bool whole_arguments = true;
  /// One draw of L (K·K values), detail::draw_lkj_cholesky.
  template <class G>
  std::vector<double> draw_all(G& rng, std::size_t, const std::vector<double>& e) const {
    return detail::draw_lkj_cholesky(rng, k, e[0]);
  }
};

/// The distribution lkj_corr_cholesky(eta, K), e.g. to observe a Cholesky factor (K·K values).
template <detail::operand Eta>
auto lkj_corr_cholesky(const Eta& eta, std::size_t k) {
  static_assert(!is_vector_v<detail::node_t<Eta>>, "tyche::lkj_corr_cholesky(eta, K): eta must be a scalar");
  detail::check_lkj_order(k);
  return lkj_corr_cholesky_distribution<detail::node_t<Eta>>{{}, detail::as_node(eta), k};
}
/// Name ~ lkj_corr_cholesky(eta, K): the Cholesky factor of a K × K correlation matrix,
/// `lkj_corr_cholesky<"L_Omega">(2.0, 3)` (Stan: `cholesky_factor_corr[3] L_Omega;
/// L_Omega ~ lkj_corr_cholesky(2);`).
template <fixed_string Name, detail::operand Eta>
auto lkj_corr_cholesky(const Eta& eta, std::size_t k) {
  const auto d = lkj_corr_cholesky(eta, k);
  return detail::make_random_variable<Name>(d, dynamic_shape{d.transform().parameter_size()});
}

}  // namespace tyche
// ----- end tyche/distributions/lkj_corr_cholesky.hpp -----

#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace tyche {

template <class Eta>
struct lkj_corr_distribution : distribution<lkj_corr_distribution<Eta>> {
  static constexpr const char* family = "lkj_corr";
  Eta eta;
  std::size_t k = 2;
  auto transform() const { return transforms::corr_matrix{k}; }
  template <class X>
  auto log_prob(const X& x) const {
    using N = detail::node_t<X>;
    static_assert(is_vector_v<N>, "tyche::lkj_corr(eta, K): x must be a vector of K*K values");
    const N omega = detail::as_node(x);
    if (omega.size() != k * k)
      throw std::invalid_argument("tyche::lkj_corr(eta, K): x has " + std::to_string(omega.size()) +
                                  " values but K = " + std::to_string(k) + " needs " + std::to_string(k * k) +
                                  " (the matrix, row major)");
    const auto l = make_vector_op(ops::cholesky_decompose_map{k}, k * k, omega);
    const auto log_det = make_vector_op(ops::diagonal_sum_map<false, true>{k, 2.0, 0.0}, 1, l);
    const auto log_c = make_vector_op(ops::lkj_log_normaliser_map{k}, 1, eta);
    return (eta - lit<1>) * at(log_det, 0) - at(log_c, 0);
  }
  auto arguments() const { return std::tuple{eta}; }
  template <class E>
  auto with_arguments(const E& e) const {
    return lkj_corr_distribution<E>{{}, e, k};
  }
  void check_supports() const {
    static_assert(argument_support_t<Eta, domains::positive>::ok,
                  "tyche::lkj_corr(eta, K): eta must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::positive>("lkj_corr(eta, K)", "eta", eta);
  }
  static constexpr bool whole_arguments = true;
  /// One draw of Ω = L Lᵀ (K·K values), L from detail::draw_lkj_cholesky.
  template <class G>
  std::vector<double> draw_all(G& rng, std::size_t, const std::vector<double>& e) const {
    const auto l = detail::draw_lkj_cholesky(rng, k, e[0]);
    std::vector<double> omega(k * k);
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) {
        double acc = 0;
        for (std::size_t p = 0; p <= (i < j ? i : j); ++p) acc += l[i * k + p] * l[j * k + p];
        omega[i * k + j] = acc;
      }
    return omega;
  }
};

/// The distribution lkj_corr(eta, K), e.g. to observe a correlation matrix (K·K values).
template <detail::operand Eta>
auto lkj_corr(const Eta& eta, std::size_t k) {
  static_assert(!is_vector_v<detail::node_t<Eta>>, "tyche::lkj_corr(eta, K): eta must be a scalar");
  detail::check_lkj_order(k, "lkj_corr(eta, K)");
  return lkj_corr_distribution<detail::node_t<Eta>>{{}, detail::as_node(eta), k};
}
/// Name ~ lkj_corr(eta, K): a K × K correlation matrix, `lkj_corr<"Omega">(2.0, 3)`.
template <fixed_string Name, detail::operand Eta>
auto lkj_corr(const Eta& eta, std::size_t k) {
  const auto d = lkj_corr(eta, k);
  return detail::make_random_variable<Name>(d, dynamic_shape{d.transform().parameter_size()});
}

}  // namespace tyche
// ----- end tyche/distributions/lkj_corr.hpp -----
// ----- begin tyche/distributions/log_densities.hpp -----
// tyche/distributions/log_densities.hpp — the log density of every family as a function of
// expressions, under Stan's names: normal_lpdf(y, mu, sigma) = log normal(y | mu, sigma), summed
// over y when y is a vector; poisson_lpmf(k, lambda) for the discrete families. For free terms
// of a model's log density (target(e), model/joint.hpp), mixtures written by hand
// (log_sum_exp of lpdfs), and user functions.
//
// Each checks what observe() checks, when it is called: the arguments against their domains (at
// compile time where the types decide, else against the data) and data values of y against the
// family's support.
// ----- begin tyche/distributions/logistic.hpp -----
// tyche/distributions/logistic.hpp — the distribution logistic(mu, sigma). (With one argument,
// tyche::logistic(e) is the inverse-logit function of tyche/operations/functions.hpp; the overloads
// differ by arity.)
//   log p(x | μ, σ) = −z − log σ − 2 log(1 + e^{−z}) = log σ(z) + log(1 − σ(z)) − log σ,
//   z = (x − μ)/σ,   x ∈ ℝ, σ > 0.

#include <cmath>
#include <numbers>
#include <random>
#include <tuple>

namespace tyche {

template <class Mu, class Sigma>
struct logistic_distribution : distribution<logistic_distribution<Mu, Sigma>> {
  static constexpr const char* family = "logistic";
  Mu mu;
  Sigma sigma;
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    const auto z = (x - mu) / sigma;
    return detail::total(log_logistic(z) + log1m_logistic(z) - log(sigma));
  }
  auto arguments() const { return std::tuple{mu, sigma}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<Sigma, domains::positive>::ok,
                  "tyche::logistic(mu, sigma): sigma must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::positive>("logistic(mu, sigma)", "sigma", sigma);
  }
  /// By inversion of u ~ uniform(0, 1): μ + σ log(u / (1 − u)).
  template <class G>
  static double draw(G& rng, double m, double s) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    double u = unit(rng);
    while (u <= 0.0 || u >= 1.0) u = unit(rng);
    return m + s * (std::log(u) - std::log1p(-u));
  }
  static double mean(double m, double) { return m; }
  static double variance(double, double s) { return s * s * std::numbers::pi * std::numbers::pi / 3; }
};

/// Name ~ logistic(mu, sigma) (the distribution).
template <fixed_string Name, detail::operand Mu, detail::operand Sigma, shape_tag Shape = scalar_shape>
auto logistic(const Mu& mu, const Sigma& sigma, Shape shape = {}) {
  return detail::make_named<Name, logistic_distribution>(shape, mu, sigma);
}
/// The distribution logistic(mu, sigma); logistic(e), one argument, is the inverse logit.
template <detail::operand Mu, detail::operand Sigma>
auto logistic(const Mu& mu, const Sigma& sigma) {
  return detail::make_distribution<logistic_distribution>(mu, sigma);
}

}  // namespace tyche
// ----- end tyche/distributions/logistic.hpp -----
// ----- begin tyche/distributions/loglogistic.hpp -----
// tyche/distributions/loglogistic.hpp — loglogistic(alpha, beta): scale α, shape β (as in Stan).
// log x ~ logistic(log α, 1/β).
//   log p(x | α, β) = log β − log α + (β − 1) log(x/α) − 2 log(1 + (x/α)^β),
//   x > 0, α > 0, β > 0, with log(1 + (x/α)^β) = log1p_exp(β log(x/α)), which does not overflow.

#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <tuple>

namespace tyche {

template <class Alpha, class Beta>
struct loglogistic_distribution : distribution<loglogistic_distribution<Alpha, Beta>> {
  static constexpr const char* family = "loglogistic";
  Alpha alpha;
  Beta beta;
  auto transform() const { return transforms::lower_bound<literal<0>>{}; }
  template <class X>
  auto log_prob(const X& x) const {
    const auto log_z = log(x / alpha);
    return detail::total(log(beta) - log(alpha) + (beta - lit<1>) * log_z -
                         lit<2> * log1p_exp(beta * log_z));
  }
  auto arguments() const { return std::tuple{alpha, beta}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<Alpha, domains::positive>::ok,
                  "tyche::loglogistic(alpha, beta): alpha must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    static_assert(argument_support_t<Beta, domains::positive>::ok,
                  "tyche::loglogistic(alpha, beta): beta must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::positive>("loglogistic(alpha, beta)", "alpha", alpha);
    detail::check_argument<domains::positive>("loglogistic(alpha, beta)", "beta", beta);
  }
  /// By inversion of the cdf 1/(1 + (x/α)^{−β}): α (u/(1 − u))^{1/β}, u ~ uniform(0, 1).
  template <class G>
  static double draw(G& rng, double a, double b) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    double u = unit(rng);
    while (u <= 0.0 || u >= 1.0) u = unit(rng);
    return a * std::exp((std::log(u) - std::log1p(-u)) / b);
  }
  /// α (π/β)/sin(π/β) for β > 1, infinite otherwise.
  static double mean(double a, double b) {
    if (!(b > 1)) return std::numeric_limits<double>::infinity();
    const double t = std::numbers::pi / b;
    return a * t / std::sin(t);
  }
  /// α² (2t/sin 2t − t²/sin² t), t = π/β, for β > 2, infinite otherwise.
  static double variance(double a, double b) {
    if (!(b > 2)) return std::numeric_limits<double>::infinity();
    const double t = std::numbers::pi / b, s = std::sin(t);
    return a * a * (2 * t / std::sin(2 * t) - t * t / (s * s));
  }
  // 0 is rejected too: log(x/α) = −∞ there, and (β − 1)·log(x/α) is NaN for β = 1.
  static const char* observation_problem(double v) { return detail::positive_problem(v); }
};

/// Name ~ loglogistic(alpha, beta) (scale alpha, shape beta), support (0, ∞), sampled as log Name.
template <fixed_string Name, detail::operand Alpha, detail::operand Beta, shape_tag Shape = scalar_shape>
auto loglogistic(const Alpha& alpha, const Beta& beta, Shape shape = {}) {
  return detail::make_named<Name, loglogistic_distribution>(shape, alpha, beta);
}
template <detail::operand Alpha, detail::operand Beta>
auto loglogistic(const Alpha& alpha, const Beta& beta) {
  return detail::make_distribution<loglogistic_distribution>(alpha, beta);
}

}  // namespace tyche
// ----- end tyche/distributions/loglogistic.hpp -----
// ----- begin tyche/distributions/lognormal.hpp -----
// tyche/distributions/lognormal.hpp — lognormal(mu, sigma): log x ~ normal(mu, sigma).
//   log p(x | μ, σ) = −½ ((log x − μ)/σ)² − log σ − log x − ½ log 2π,   x > 0, σ > 0.

#include <cmath>
#include <random>
#include <tuple>

namespace tyche {

template <class Mu, class Sigma>
struct lognormal_distribution : distribution<lognormal_distribution<Mu, Sigma>> {
  static constexpr const char* family = "lognormal";
  Mu mu;
  Sigma sigma;
  auto transform() const { return transforms::lower_bound<literal<0>>{}; }
  template <class X>
  auto log_prob(const X& x) const {
    const auto log_x = log(x);
    return detail::total(lit<-1, 2> * square((log_x - mu) / sigma) - log(sigma) - log_x -
                         detail::half_log_two_pi);
  }
  auto arguments() const { return std::tuple{mu, sigma}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<Sigma, domains::positive>::ok,
                  "tyche::lognormal(mu, sigma): sigma must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::positive>("lognormal(mu, sigma)", "sigma", sigma);
  }
  template <class G>
  static double draw(G& rng, double m, double s) { return std::lognormal_distribution<double>(m, s)(rng); }
  static double mean(double m, double s) { return std::exp(m + s * s / 2); }
  static double variance(double m, double s) { return std::expm1(s * s) * std::exp(2 * m + s * s); }
  static const char* observation_problem(double v) { return detail::positive_problem(v); }
};

/// Name ~ lognormal(mu, sigma), support (0, ∞), sampled as log Name.
template <fixed_string Name, detail::operand Mu, detail::operand Sigma, shape_tag Shape = scalar_shape>
auto lognormal(const Mu& mu, const Sigma& sigma, Shape shape = {}) {
  return detail::make_named<Name, lognormal_distribution>(shape, mu, sigma);
}
template <detail::operand Mu, detail::operand Sigma>
auto lognormal(const Mu& mu, const Sigma& sigma) {
  return detail::make_distribution<lognormal_distribution>(mu, sigma);
}

}  // namespace tyche
// ----- end tyche/distributions/lognormal.hpp -----
// ----- begin tyche/distributions/multi_student_t.hpp -----
// tyche/distributions/multi_student_t.hpp — multi_student_t(nu, mu, Sigma) and multi_student_t_cholesky(nu, mu, L).
//   log p(x | ν, μ, Σ) = log Γ((ν + K)/2) − log Γ(ν/2) − (K/2) log(νπ) − ½ log det Σ
//                        − ((ν + K)/2) log(1 + (x − μ)ᵀ Σ⁻¹ (x − μ) / ν),   x ∈ ℝᴷ, ν > 0,
// Σ = L Lᵀ symmetric positive definite, K × K (Stan Functions Reference, "Multivariate
// Student-t distribution"; multi_student_t_cholesky is the same law given L). It is built on
// multi_normal's machinery (distributions/multi_normal.hpp): the quadratic form is ‖L⁻¹(x − μ)‖²
// and ½ log det Σ = Σᵢ log Lᵢᵢ. As data (tyche::matrix(ptr, K, K), row-major), Σ is factored
// once when the distribution is made and L is viewed (it must outlive the model); x is a named
// K-vector or one observed vector of K, μ a vector of K or a scalar. As expressions of
// parameters (the K·K entries, row major, only the lower triangle read: a cov_matrix variable,
// diag_pre_multiply(tau, L_Omega)), Σ is factored at every evaluation and x is a named K-vector
// or N observations of K values (row n at n·K), μ a scalar, a vector of K or of N·K; the log
// density is the sum over the rows (each row's quadratic form by autodiff/multivariate_ops.hpp's
// row_sums_of_squares). ν may be a parameter. Draws: μ + √(ν/W) L z, W ~ χ²(ν), z standard
// normal (mean μ for ν > 1, covariance ν/(ν − 2) Σ for ν > 2).
// ----- begin tyche/autodiff/multivariate_ops.hpp -----
// tyche/autodiff/multivariate_ops.hpp — value and vector–Jacobian rules of two pieces of the
// multivariate families that the matrix ops of autodiff/matrix_ops.hpp do not cover (the op
// contract: autodiff/vector_ops.hpp; docs/design/vector-ops.md):
//
//   row_sums_of_squares_map  (Σⱼ zₙⱼ²)ₙ for the N rows of an N × K matrix (multi_student_t's
//                            quadratic forms from cholesky_residual_map's L⁻¹(yₙ − μₙ))
//   wishart_map<Inverse>     the log density of the Wishart (inverse Wishart) distribution of
//                            a K × K matrix W given ν and S (one value)
//
// Matrices are vectors of their K² entries in row-major order; as in matrix_ops.hpp, W and S
// are read through their lower triangles (the symmetric matrices those define), and their
// adjoints go to the lower triangles.

#include <cstddef>

namespace tyche {

namespace detail {
/// M⁻¹ = L⁻ᵀ L⁻¹ (all K² entries) from the lower Cholesky factor l of M; linv (K², scratch)
/// receives L⁻¹ by forward substitution, column by column: (L⁻¹)ⱼⱼ = 1/Lⱼⱼ,
/// (L⁻¹)ᵢⱼ = −(Σ_{p=j..i−1} Lᵢₚ (L⁻¹)ₚⱼ)/Lᵢᵢ for i > j. O(K³).
template <class T>
TYCHE_HD void inverse_from_cholesky(std::size_t k, const T* l, T* linv, T* inv) {
  for (std::size_t j = 0; j < k; ++j) {
    for (std::size_t i = 0; i < j; ++i) linv[i * k + j] = lift<T>(0.0);
    linv[j * k + j] = lift<T>(1.0) / l[j * k + j];
    for (std::size_t i = j + 1; i < k; ++i) {
      T acc = lift<T>(0.0);
      for (std::size_t p = j; p < i; ++p) acc = acc + l[i * k + p] * linv[p * k + j];
      linv[i * k + j] = -acc / l[i * k + i];
    }
  }
  for (std::size_t i = 0; i < k; ++i) {
    for (std::size_t j = 0; j <= i; ++j) {
      T acc = lift<T>(0.0);
      for (std::size_t p = i; p < k; ++p) acc = acc + linv[p * k + i] * linv[p * k + j];
      inv[i * k + j] = acc;
      inv[j * k + i] = acc;
    }
  }
}

/// Entry (i, j) of the symmetric matrix whose lower triangle m holds (row major, K × K).
template <class T>
TYCHE_HD const T& symmetric_at(const T* m, std::size_t k, std::size_t i, std::size_t j) {
  return i >= j ? m[i * k + j] : m[j * k + i];
}
}  // namespace detail

namespace ops {

/// qₙ = Σⱼ zₙⱼ² for the m rows of z (m·K values, row n at n·K). Reverse: z̄ₙⱼ += 2 zₙⱼ q̄ₙ.
struct row_sums_of_squares_map {
  static constexpr const char* name = "row_sums_of_squares";
  static constexpr bool has_payload = true;
  std::size_t k = 1;
  template <class Z>
  static constexpr std::size_t extent = dynamic_extent;
  bool operator==(const row_sums_of_squares_map&) const = default;
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t*) const {
    for (std::size_t n = 0; n < m; ++n) {
      T acc = lift<T>(0.0);
      for (std::size_t j = 0; j < k; ++j) acc = acc + in[0][n * k + j] * in[0][n * k + j];
      out[n] = acc;
    }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj) const {
    for (std::size_t n = 0; n < m; ++n) {
      const T g = lift<T>(2.0) * adj[n];
      for (std::size_t j = 0; j < k; ++j) in_adj[0][n * k + j] += g * in[0][n * k + j];
    }
  }
};

/// The log density of a K × K symmetric positive-definite W given ν and S (operands ν: one
/// value; W, S: K² values each, lower triangles read), with log Γ_K(a) = K(K−1)/4 log π +
/// Σ_{j=0..K−1} log Γ(a − j/2) the multivariate log-gamma function (Stan Functions Reference,
/// "Wishart distribution", "Inverse Wishart distribution"):
///   Wishart:          (ν − K − 1)/2 log|W| − ½ tr(S⁻¹W) − (νK/2) log 2 − (ν/2) log|S| − log Γ_K(ν/2),
///   inverse Wishart:  (ν/2) log|S| − (νK/2) log 2 − log Γ_K(ν/2) − (ν + K + 1)/2 log|W| − ½ tr(S W⁻¹).
/// Forward: the Cholesky factors of W and S (log-determinants 2 Σ log Lᵢᵢ), the inverses
/// L⁻ᵀL⁻¹, the trace Σᵢⱼ (S⁻¹)ᵢⱼ Wᵢⱼ (or Σ Sᵢⱼ (W⁻¹)ᵢⱼ). A W or S that is not positive definite
/// gives NaN (a rejected point). Reverse, with G the gradient in the symmetric matrix (from
/// d log|M| = tr(M⁻¹ dM), d tr(S⁻¹W) = tr(S⁻¹ dW) − tr(S⁻¹ W S⁻¹ dS), d M⁻¹ = −M⁻¹ dM M⁻¹):
///   Wishart:          G_W = (ν − K − 1)/2 W⁻¹ − ½ S⁻¹,     G_S = −(ν/2) S⁻¹ + ½ S⁻¹ W S⁻¹,
///   inverse Wishart:  G_W = −(ν + K + 1)/2 W⁻¹ + ½ W⁻¹ S W⁻¹,   G_S = (ν/2) S⁻¹ − ½ W⁻¹,
///   ∂/∂ν = ½ log|W| − (K/2) log 2 − ½ log|S| − ½ Σⱼ ψ(ν/2 − j/2)  (inverse: ½ log|S| − … − ½ log|W|),
/// and the lower-triangle entry (i, j) of a matrix takes Gᵢᵢ on the diagonal, 2 Gᵢⱼ below it
/// (it stands for both (i, j) and (j, i)). Scratch: the two factors, the two inverses and one
/// K² work matrix, then log|W| and log|S|: 5K² + 2. O(K³) each way.
template <bool Inverse>
struct wishart_map {
  static constexpr const char* name = Inverse ? "inv_wishart" : "wishart";
  static constexpr bool has_payload = true;
  std::size_t k = 1;
  template <class Nu, class W, class S>
  static constexpr std::size_t extent = 1;
  bool operator==(const wishart_map&) const = default;
  std::size_t scratch_size(std::size_t, const std::size_t*) const { return 5 * k * k + 2; }

  template <class T>
  TYCHE_HD T log_multi_gamma_half(const T& nu) const {  // log Γ_K(ν/2)
    T acc = lift<T>(0.25 * double(k) * (double(k) - 1.0) * 1.14472988584940017414);
    for (std::size_t j = 0; j < k; ++j) acc = acc + math::lgamma(lift<T>(0.5) * nu - lift<T>(0.5 * double(j)));
    return acc;
  }

  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*, T* scratch) const {
    const std::size_t kk = k * k;
    const T nu = in[0][0];
    const T* w = in[1];
    const T* s = in[2];
    T* lw = scratch;
    T* ls = scratch + kk;
    T* wi = scratch + 2 * kk;
    T* si = scratch + 3 * kk;
    T* work = scratch + 4 * kk;
    detail::cholesky_forward(k, w, lw);
    detail::cholesky_forward(k, s, ls);
    T log_det_w = lift<T>(0.0), log_det_s = lift<T>(0.0);
    for (std::size_t i = 0; i < k; ++i) {
      log_det_w = log_det_w + lift<T>(2.0) * math::log(lw[i * k + i]);
      log_det_s = log_det_s + lift<T>(2.0) * math::log(ls[i * k + i]);
    }
    scratch[5 * kk] = log_det_w;
    scratch[5 * kk + 1] = log_det_s;
    detail::inverse_from_cholesky(k, lw, work, wi);
    detail::inverse_from_cholesky(k, ls, work, si);
    T trace = lift<T>(0.0);  // tr(S⁻¹W), or tr(S W⁻¹)
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j)
        trace = trace + (Inverse ? wi[i * k + j] * detail::symmetric_at(s, k, i, j)
                                 : si[i * k + j] * detail::symmetric_at(w, k, i, j));
    const T half = lift<T>(0.5);
    const T common = -half * nu * lift<T>(double(k) * 0.69314718055994530942) - log_multi_gamma_half(nu) - half * trace;
    if constexpr (Inverse)
      out[0] = common + half * nu * log_det_s - half * (nu + lift<T>(double(k) + 1.0)) * log_det_w;
    else
      out[0] = common + half * (nu - lift<T>(double(k) + 1.0)) * log_det_w - half * nu * log_det_s;
  }

  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj, T* scratch) const {
    const std::size_t kk = k * k;
    const T g = adj[0];
    const T nu = in[0][0];
    const T* w = in[1];
    const T* s = in[2];
    const T* wi = scratch + 2 * kk;
    const T* si = scratch + 3 * kk;
    T* work = scratch + 4 * kk;
    const T log_det_w = scratch[5 * kk], log_det_s = scratch[5 * kk + 1];
    const T half = lift<T>(0.5);
    // ν.
    T psi = lift<T>(0.0);
    for (std::size_t j = 0; j < k; ++j) psi = psi + math::digamma(half * nu - lift<T>(0.5 * double(j)));
    const T dnu_common = -lift<T>(0.5 * double(k) * 0.69314718055994530942) - half * psi;
    in_adj[0][0] += g * (Inverse ? dnu_common + half * log_det_s - half * log_det_w
                                 : dnu_common + half * log_det_w - half * log_det_s);
    // The sandwich A M A (A = S⁻¹, M = W for Wishart; A = W⁻¹, M = S for the inverse) into
    // work, then the lower-triangle adjoints of W and S.
    const T* a = Inverse ? wi : si;
    const T* mid = Inverse ? s : w;
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) {
        T acc = lift<T>(0.0);
        for (std::size_t p = 0; p < k; ++p) acc = acc + a[i * k + p] * detail::symmetric_at(mid, k, p, j);
        work[i * k + j] = acc;  // A M
      }
    const T cw = Inverse ? -half * (nu + lift<T>(double(k) + 1.0)) : half * (nu - lift<T>(double(k) + 1.0));
    const T cs = Inverse ? half * nu : -half * nu;
    for (std::size_t i = 0; i < k; ++i) {
      for (std::size_t j = 0; j <= i; ++j) {
        T sandwich = lift<T>(0.0);  // (A M A)ᵢⱼ
        for (std::size_t p = 0; p < k; ++p) sandwich = sandwich + work[i * k + p] * a[p * k + j];
        T gw, gs;
        if constexpr (Inverse) {
          gw = cw * wi[i * k + j] + half * sandwich;
          gs = cs * si[i * k + j] - half * wi[i * k + j];
        } else {
          gw = cw * wi[i * k + j] - half * si[i * k + j];
          gs = cs * si[i * k + j] + half * sandwich;
        }
        const T weight = lift<T>(i == j ? 1.0 : 2.0) * g;
        in_adj[1][i * k + j] += weight * gw;
        in_adj[2][i * k + j] += weight * gs;
      }
    }
  }
};

}  // namespace ops

}  // namespace tyche
// ----- end tyche/autodiff/multivariate_ops.hpp -----
// ----- begin tyche/distributions/multi_normal.hpp -----
// tyche/distributions/multi_normal.hpp — multi_normal_cholesky(mu, L) and multi_normal(mu, Sigma).
//   log p(x | μ, L) = −½ ‖L⁻¹(x − μ)‖² − Σᵢ log Lᵢᵢ − (K/2) log 2π,   Σ = L Lᵀ, x ∈ ℝᴷ.
// L (lower triangular, positive diagonal) and Σ (symmetric positive definite) are K × K.
// As data (tyche::matrix(ptr, K, K), row-major): μ is a vector of K, or a scalar for all. The
// solve L⁻¹(x − μ) is a vector_op (its op in autodiff/vector_ops.hpp): O(K²) per evaluation,
// with its gradient by back substitution. multi_normal factors Σ once, when it is called (the
// factor is owned by the distribution and the model built from it); multi_normal_cholesky views
// the user's L, which must outlive the model, like data. x is a named K-vector, or one observed
// vector of K.
// As expressions of parameters (a vector of the K·K entries, row major, e.g. a
// cholesky_factor_cov variable, diag_pre_multiply(tau, L_Omega) or a cov_matrix variable; only
// the lower triangle is read): the solve is autodiff/matrix_ops.hpp's cholesky_residual, whose
// gradient reaches L too, and multi_normal factors Σ at every evaluation (cholesky_decompose,
// O(K³), NaN when Σ is not positive definite). x is a named K-vector, or N observations of K
// values (N·K, row n at n·K); μ is a scalar, a vector of K (every row) or of N·K (one per row),
// and the log density is the sum over the rows.

#include <cmath>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace tyche {

namespace detail {
/// The Cholesky factor of a K × K symmetric positive-definite row-major matrix (lower triangle
/// of the result; zeros above). Throws, naming the matrix (name) and the pivot, when it is not
/// positive definite or not symmetric.
inline std::vector<double> cholesky_lower(const double* a, std::size_t k, const char* who,
                                          const char* name = "Sigma") {
  std::vector<double> l(k * k, 0.0);
  for (std::size_t i = 0; i < k; ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      const double aij = a[i * k + j], aji = a[j * k + i];
      if (!(std::fabs(aij - aji) <= 1e-8 * (std::fabs(aij) + std::fabs(aji) + 1e-300)))
        throw std::invalid_argument(std::string("tyche::") + who + ": " + name + " is not symmetric: " + name +
                                    "[" + std::to_string(i + 1) + ", " + std::to_string(j + 1) + "] = " +
                                    tyche::detail::format_number(aij) + " but " + name + "[" + std::to_string(j + 1) +
                                    ", " + std::to_string(i + 1) + "] = " + tyche::detail::format_number(aji));
    }
    for (std::size_t j = 0; j <= i; ++j) {
      double s = a[i * k + j];
      for (std::size_t p = 0; p < j; ++p) s -= l[i * k + p] * l[j * k + p];
      if (i == j) {
        if (!(s > 0))
          throw std::invalid_argument(std::string("tyche::") + who + ": " + name +
                                      " is not positive definite (pivot " + std::to_string(i + 1) +
                                      " is " + tyche::detail::format_number(s) + ")");
        l[i * k + i] = std::sqrt(s);
      } else {
        l[i * k + j] = s / l[j * k + j];
      }
    }
  }
  return l;
}

inline void check_cholesky_factor(const data_matrix& l, const char* who) {
  if (l.rows != l.cols || l.rows == 0)
    throw std::invalid_argument(std::string("tyche::") + who + ": L must be square and non-empty; it is " +
                                std::to_string(l.rows) + " x " + std::to_string(l.cols));
  for (std::size_t i = 0; i < l.rows; ++i)
    if (!(l.ptr[i * l.cols + i] > 0) || !std::isfinite(l.ptr[i * l.cols + i]))
      throw std::invalid_argument(std::string("tyche::") + who + ": L[" + std::to_string(i + 1) + ", " +
                                  std::to_string(i + 1) + "] = " + tyche::detail::format_number(l.ptr[i * l.cols + i]) +
                                  " must be a positive number (L is a Cholesky factor)");
}
}  // namespace detail

template <class Mu>
struct multi_normal_cholesky_distribution : distribution<multi_normal_cholesky_distribution<Mu>> {
  static constexpr const char* family = "multi_normal_cholesky";
  Mu mu;
  ops::lower_triangular_solve_map solve;  // L, K, and the owner of L when multi_normal made it
  double log_det_half = 0;                 // Σᵢ log Lᵢᵢ
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    static_assert(is_vector_v<X>, "tyche::multi_normal_cholesky(mu, L): x must be a vector");
    if (x.size() != solve.k)
      throw std::invalid_argument(std::string("tyche::") + family + "(mu, L): x has size " +
                                  std::to_string(x.size()) + " but L is " + std::to_string(solve.k) +
                                  " x " + std::to_string(solve.k));
    const auto r = x - mu;
    const auto z = make_vector_op(solve, solve.k, r);
    return lit<-1, 2> * sum(square(z)) -
           constant{log_det_half + 0.5 * double(solve.k) * 1.83787706640934548356};
  }
  auto arguments() const { return std::tuple{mu}; }
  /// The same distribution with another mu (do_ substitutes into it); L is kept.
  template <class M2>
  auto with_arguments(const M2& m) const {
    return multi_normal_cholesky_distribution<M2>{{}, m, solve, log_det_half};
  }
  static constexpr bool whole_arguments = true;
  /// n = K values: μ + L z for z standard normal.
  template <class G>
  std::vector<double> draw_all(G& rng, std::size_t n, const std::vector<double>& m) const {
    std::normal_distribution<double> z01;
    std::vector<double> z(solve.k), x(solve.k);
    for (auto& v : z) v = z01(rng);
    for (std::size_t i = 0; i < solve.k; ++i) {
      double acc = m.size() == 1 ? m[0] : m[i];
      for (std::size_t j = 0; j <= i; ++j) acc += solve.l[i * solve.k + j] * z[j];
      x[i] = acc;
    }
    x.resize(n);
    return x;
  }
};

namespace detail {
template <class Mu>
auto make_multi_normal(const char* who, const Mu& mu, const double* l, std::size_t k,
                       std::shared_ptr<const std::vector<double>> owner) {
  using N = node_t<Mu>;
  const N m = as_node(mu);
  if constexpr (is_vector_v<N>) {
    if (m.size() != k)
      throw std::invalid_argument(std::string("tyche::") + who + ": mu has size " + std::to_string(m.size()) +
                                  " but the matrix is " + std::to_string(k) + " x " + std::to_string(k));
  }
  double log_det_half = 0;
  for (std::size_t i = 0; i < k; ++i) log_det_half += std::log(l[i * k + i]);
  return multi_normal_cholesky_distribution<N>{
      {}, m, ops::lower_triangular_solve_map{l, k, std::move(owner)}, log_det_half};
}
template <class Mu>
auto shape_for_multi_normal(const Mu&, std::size_t k) {
  if constexpr (is_vector_v<node_t<Mu>> && extent_v<node_t<Mu>> != dynamic_extent)
    return static_shape<extent_v<node_t<Mu>>>{};
  else
    return dynamic_shape{k};
}
}  // namespace detail

/// The distribution multi_normal_cholesky(mu, L) for a data Cholesky factor L (viewed).
template <detail::operand Mu>
auto multi_normal_cholesky(const Mu& mu, const data_matrix& l) {
  detail::check_cholesky_factor(l, "multi_normal_cholesky(mu, L)");
  return detail::make_multi_normal("multi_normal_cholesky(mu, L)", mu, l.ptr, l.rows, nullptr);
}
/// Name ~ multi_normal_cholesky(mu, L): a vector of K = L.rows.
template <fixed_string Name, detail::operand Mu>
auto multi_normal_cholesky(const Mu& mu, const data_matrix& l) {
  return detail::make_random_variable<Name>(multi_normal_cholesky(mu, l),
                                            detail::shape_for_multi_normal(mu, l.rows));
}

/// multi_normal_cholesky(mu, L) with L an expression: the K·K entries of the Cholesky factor,
/// row major (only the lower triangle is read). Family is multi_normal_cholesky, or
/// multi_normal when L is cholesky_decompose(Sigma) of the user's Sigma.
template <class Mu, class L, bool FromCovariance = false>
struct multi_normal_factor_distribution : distribution<multi_normal_factor_distribution<Mu, L, FromCovariance>> {
  static constexpr const char* family = FromCovariance ? "multi_normal" : "multi_normal_cholesky";
  Mu mu;
  L l;
  std::size_t k = 1;
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    using N = detail::node_t<X>;
    static_assert(is_vector_v<N>, "tyche::multi_normal_cholesky(mu, L): x must be a vector");
    const N xn = detail::as_node(x);
    const std::size_t rows = xn.size() / k;
    if (xn.size() % k != 0 || rows == 0)
      throw std::invalid_argument(std::string("tyche::") + family + "(mu, " + (FromCovariance ? "Sigma" : "L") +
                                  "): x has size " + std::to_string(xn.size()) + ", which is not a multiple of K = " +
                                  std::to_string(k) + " (N observations of K values, row major)");
    const std::size_t mn = detail::operand_size(mu);
    if (mn != 1 && mn != k && mn != xn.size())
      throw std::invalid_argument(std::string("tyche::") + family + "(mu, " + (FromCovariance ? "Sigma" : "L") +
                                  "): mu has size " + std::to_string(mn) + " but x has " + std::to_string(rows) +
                                  " rows of K = " + std::to_string(k) + " (mu must have 1, K or N*K values)");
    const auto z = make_vector_op(ops::cholesky_residual_map{k}, xn.size(), l, xn, mu);
    const auto log_det_half = make_vector_op(ops::diagonal_sum_map<false, true>{k, 1.0, 0.0}, 1, l);
    return lit<-1, 2> * sum(square(z)) - constant{double(rows)} * at(log_det_half, 0) -
           constant{double(rows) * double(k) * detail::half_log_two_pi};
  }
  auto arguments() const { return std::tuple{mu, l}; }
  template <class M2, class L2>
  auto with_arguments(const M2& m, const L2& l2) const {
    return multi_normal_factor_distribution<M2, L2, FromCovariance>{{}, m, l2, k};
  }
  static constexpr bool whole_arguments = true;
  /// n values (n/K rows): row r is μᵣ + L z, z standard normal.
  template <class G>
  std::vector<double> draw_all(G& rng, std::size_t n, const std::vector<double>& m,
                               const std::vector<double>& lv) const {
    std::normal_distribution<double> z01;
    std::vector<double> z(k), x(n);
    for (std::size_t r = 0; r * k < n; ++r) {
      for (auto& v : z) v = z01(rng);
      for (std::size_t i = 0; i < k; ++i) {
        double acc = m.size() == 1 ? m[0] : (m.size() == k ? m[i] : m[r * k + i]);
        for (std::size_t j = 0; j <= i; ++j) acc += lv[i * k + j] * z[j];
        x[r * k + i] = acc;
      }
    }
    return x;
  }
};

namespace detail {
template <class Lx>
inline constexpr bool matrix_expression =
    expression<Lx> && !std::is_same_v<std::remove_cvref_t<Lx>, data_matrix> && is_vector_v<node_t<Lx>>;

template <bool FromCovariance, class Mu, class LN>
auto make_multi_normal_factor(const Mu& mu, const LN& l, std::size_t k) {
  using M = node_t<Mu>;
  const M m = as_node(mu);
  if constexpr (is_vector_v<M>) {
    if (m.size() != k && m.size() % k != 0)
      throw std::invalid_argument(std::string("tyche::") + (FromCovariance ? "multi_normal(mu, Sigma)" : "multi_normal_cholesky(mu, L)") +
                                  ": mu has size " + std::to_string(m.size()) + " but the matrix is " +
                                  std::to_string(k) + " x " + std::to_string(k));
  }
  return multi_normal_factor_distribution<M, LN, FromCovariance>{{}, m, l, k};
}
}  // namespace detail

/// The distribution multi_normal_cholesky(mu, L) for L an expression of K·K values (row major):
/// `multi_normal_cholesky(mu, diag_pre_multiply(tau, L_Omega)).observe(data(y))`.
template <detail::operand Mu, class Lx>
  requires detail::matrix_expression<Lx>
auto multi_normal_cholesky(const Mu& mu, const Lx& l) {
  const auto ln = detail::as_node(l);
  const std::size_t k = detail::matrix_order(ln.size(), "multi_normal_cholesky(mu, L)", "L");
  return detail::make_multi_normal_factor<false>(mu, ln, k);
}
/// Name ~ multi_normal_cholesky(mu, L) for L an expression: a vector of K.
template <fixed_string Name, detail::operand Mu, class Lx>
  requires detail::matrix_expression<Lx>
auto multi_normal_cholesky(const Mu& mu, const Lx& l) {
  const auto d = multi_normal_cholesky(mu, l);
  return detail::make_random_variable<Name>(d, detail::shape_for_multi_normal(mu, d.k));
}

/// The distribution multi_normal(mu, Sigma) for Sigma an expression of K·K values (row major;
/// only the lower triangle is read), e.g. a cov_matrix variable. Σ is factored at every
/// evaluation (cholesky_decompose).
template <detail::operand Mu, class Sx>
  requires detail::matrix_expression<Sx>
auto multi_normal(const Mu& mu, const Sx& sigma) {
  const auto sn = detail::as_node(sigma);
  const std::size_t k = detail::matrix_order(sn.size(), "multi_normal(mu, Sigma)", "Sigma");
  return detail::make_multi_normal_factor<true>(mu, cholesky_decompose(sn), k);
}
/// Name ~ multi_normal(mu, Sigma) for Sigma an expression: a vector of K.
template <fixed_string Name, detail::operand Mu, class Sx>
  requires detail::matrix_expression<Sx>
auto multi_normal(const Mu& mu, const Sx& sigma) {
  const auto d = multi_normal(mu, sigma);
  return detail::make_random_variable<Name>(d, detail::shape_for_multi_normal(mu, d.k));
}

/// The distribution multi_normal(mu, Sigma) for a data covariance Sigma (factored now, copied).
template <detail::operand Mu>
auto multi_normal(const Mu& mu, const data_matrix& sigma) {
  if (sigma.rows != sigma.cols || sigma.rows == 0)
    throw std::invalid_argument("tyche::multi_normal(mu, Sigma): Sigma must be square and non-empty; it is " +
                                std::to_string(sigma.rows) + " x " + std::to_string(sigma.cols));
  auto l = std::make_shared<const std::vector<double>>(
      detail::cholesky_lower(sigma.ptr, sigma.rows, "multi_normal(mu, Sigma)"));
  return detail::make_multi_normal("multi_normal(mu, Sigma)", mu, l->data(), sigma.rows, l);
}
/// Name ~ multi_normal(mu, Sigma): a vector of K = Sigma.rows.
template <fixed_string Name, detail::operand Mu>
auto multi_normal(const Mu& mu, const data_matrix& sigma) {
  return detail::make_random_variable<Name>(multi_normal(mu, sigma),
                                            detail::shape_for_multi_normal(mu, sigma.rows));
}

}  // namespace tyche
// ----- end tyche/distributions/multi_normal.hpp -----

#include <cmath>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace tyche {

namespace detail {
/// log Γ((ν + K)/2) − log Γ(ν/2) − (K/2) log ν − (K/2) log π, the terms of one row that do not
/// depend on x or on the matrix.
template <class Nu>
auto multi_student_t_normaliser(const Nu& nu, std::size_t k) {
  return lgamma((nu + constant{double(k)}) * lit<1, 2>) - lgamma(nu * lit<1, 2>) -
         constant{0.5 * double(k)} * log(nu) - constant{0.5 * double(k) * log_pi};
}

/// n values (n/K rows): row r is μᵣ + √(ν/W) L z, W ~ χ²(ν), z standard normal, L the K × K
/// lower triangle in l.
template <class G>
std::vector<double> draw_multi_student_t(G& rng, std::size_t n, std::size_t k, double nu,
                                         const std::vector<double>& m, const double* l) {
  std::normal_distribution<double> z01;
  std::chi_squared_distribution<double> chi(nu);
  std::vector<double> z(k), x(n);
  for (std::size_t r = 0; r * k < n; ++r) {
    for (auto& v : z) v = z01(rng);
    const double scale = std::sqrt(nu / chi(rng));
    for (std::size_t i = 0; i < k && r * k + i < n; ++i) {
      double acc = 0;
      for (std::size_t j = 0; j <= i; ++j) acc += l[i * k + j] * z[j];
      x[r * k + i] = (m.size() == 1 ? m[0] : (m.size() == k ? m[i] : m[r * k + i])) + scale * acc;
    }
  }
  return x;
}

/// nu > 0, the one argument domain of both forms: at compile time where the types decide, else
/// against the data.
template <bool FromCovariance, class Nu>
void check_multi_student_t_nu(const Nu& nu) {
  if constexpr (FromCovariance)
    static_assert(argument_support_t<Nu, domains::positive>::ok,
                  "tyche::multi_student_t(nu, mu, Sigma): nu must be > 0, but its support (spelled out "
                  "in tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
  else
    static_assert(argument_support_t<Nu, domains::positive>::ok,
                  "tyche::multi_student_t_cholesky(nu, mu, L): nu must be > 0, but its support (spelled "
                  "out in tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
  check_argument<domains::positive>(FromCovariance ? "multi_student_t(nu, mu, Sigma)"
                                                   : "multi_student_t_cholesky(nu, mu, L)",
                                    "nu", nu);
}
}  // namespace detail

/// multi_student_t(nu, mu, Sigma) (FromCovariance) or multi_student_t_cholesky(nu, mu, L) for a
/// data matrix: L⁻¹(x − μ) by the triangular solve of multi_normal, L viewed or owned by the op.
template <class Nu, class Mu, bool FromCovariance = false>
struct multi_student_t_data_distribution : distribution<multi_student_t_data_distribution<Nu, Mu, FromCovariance>> {
  static constexpr const char* family = FromCovariance ? "multi_student_t" : "multi_student_t_cholesky";
  Nu nu;
  Mu mu;
  ops::lower_triangular_solve_map solve;  // L, K, and the owner of L when Σ was factored here
  double log_det_half = 0;                 // Σᵢ log Lᵢᵢ
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    static_assert(is_vector_v<X>, "tyche::multi_student_t(nu, mu, Sigma) / multi_student_t_cholesky(nu, mu, L): "
                                  "x must be a vector");
    if constexpr (!is_vector_v<X>) {
      return constant{0.0};  // the static_assert has said why
    } else {
      if (x.size() != solve.k)
        throw std::invalid_argument(std::string("tyche::") + family + (FromCovariance ? "(nu, mu, Sigma)" : "(nu, mu, L)") +
                                    ": x has size " + std::to_string(x.size()) + " but the matrix is " +
                                    std::to_string(solve.k) + " x " + std::to_string(solve.k));
      const auto z = make_vector_op(solve, solve.k, x - mu);
      return detail::multi_student_t_normaliser(nu, solve.k) - constant{log_det_half} -
             (nu + constant{double(solve.k)}) * lit<1, 2> * log1p(sum(square(z)) / nu);
    }
  }
  auto arguments() const { return std::tuple{nu, mu}; }
  /// The same distribution with other ν and μ (do_ substitutes into them); L is kept.
  template <class N2, class M2>
  auto with_arguments(const N2& n, const M2& m) const {
    return multi_student_t_data_distribution<N2, M2, FromCovariance>{{}, n, m, solve, log_det_half};
  }
  void check_supports() const { detail::check_multi_student_t_nu<FromCovariance>(nu); }
  static constexpr bool whole_arguments = true;
  template <class G>
  std::vector<double> draw_all(G& rng, std::size_t n, const std::vector<double>& nv,
                               const std::vector<double>& m) const {
    return detail::draw_multi_student_t(rng, n, solve.k, nv[0], m, solve.l);
  }
};

/// multi_student_t(nu, mu, Sigma) (FromCovariance, L = cholesky_decompose(Sigma)) or
/// multi_student_t_cholesky(nu, mu, L) with L an expression of K·K values (row major).
template <class Nu, class Mu, class L, bool FromCovariance = false>
struct multi_student_t_factor_distribution
    : distribution<multi_student_t_factor_distribution<Nu, Mu, L, FromCovariance>> {
  static constexpr const char* family = FromCovariance ? "multi_student_t" : "multi_student_t_cholesky";
  static constexpr const char* call = FromCovariance ? "(nu, mu, Sigma)" : "(nu, mu, L)";
  Nu nu;
  Mu mu;
  L l;
  std::size_t k = 1;
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    using N = detail::node_t<X>;
    static_assert(is_vector_v<N>, "tyche::multi_student_t(nu, mu, Sigma) / multi_student_t_cholesky(nu, mu, L): "
                                  "x must be a vector");
    const N xn = detail::as_node(x);
    const std::size_t rows = xn.size() / k;
    if (xn.size() % k != 0 || rows == 0)
      throw std::invalid_argument(std::string("tyche::") + family + call + ": x has size " + std::to_string(xn.size()) +
                                  ", which is not a multiple of K = " + std::to_string(k) +
                                  " (N observations of K values, row major)");
    const std::size_t mn = detail::operand_size(mu);
    if (mn != 1 && mn != k && mn != xn.size())
      throw std::invalid_argument(std::string("tyche::") + family + call + ": mu has size " + std::to_string(mn) +
                                  " but x has " + std::to_string(rows) + " rows of K = " + std::to_string(k) +
                                  " (mu must have 1, K or N*K values)");
    const auto z = make_vector_op(ops::cholesky_residual_map{k}, xn.size(), l, xn, mu);
    const auto q = make_vector_op(ops::row_sums_of_squares_map{k}, rows, z);
    const auto log_det_half = make_vector_op(ops::diagonal_sum_map<false, true>{k, 1.0, 0.0}, 1, l);
    return constant{double(rows)} * (detail::multi_student_t_normaliser(nu, k) - at(log_det_half, 0)) -
           (nu + constant{double(k)}) * lit<1, 2> * sum(log1p(q / nu));
  }
  auto arguments() const { return std::tuple{nu, mu, l}; }
  template <class N2, class M2, class L2>
  auto with_arguments(const N2& n, const M2& m, const L2& l2) const {
    return multi_student_t_factor_distribution<N2, M2, L2, FromCovariance>{{}, n, m, l2, k};
  }
  void check_supports() const { detail::check_multi_student_t_nu<FromCovariance>(nu); }
  static constexpr bool whole_arguments = true;
  template <class G>
  std::vector<double> draw_all(G& rng, std::size_t n, const std::vector<double>& nv, const std::vector<double>& m,
                               const std::vector<double>& lv) const {
    return detail::draw_multi_student_t(rng, n, k, nv[0], m, lv.data());
  }
};

namespace detail {
template <bool FromCovariance, class Nu, class Mu>
auto make_multi_student_t(const char* who, const Nu& nu, const Mu& mu, const double* l, std::size_t k,
                          std::shared_ptr<const std::vector<double>> owner) {
  using M = node_t<Mu>;
  const M m = as_node(mu);
  if constexpr (is_vector_v<M>) {
    if (m.size() != k)
      throw std::invalid_argument(std::string("tyche::") + who + ": mu has size " + std::to_string(m.size()) +
                                  " but the matrix is " + std::to_string(k) + " x " + std::to_string(k));
  }
  double log_det_half = 0;
  for (std::size_t i = 0; i < k; ++i) log_det_half += std::log(l[i * k + i]);
  return multi_student_t_data_distribution<node_t<Nu>, M, FromCovariance>{
      {}, as_node(nu), m, ops::lower_triangular_solve_map{l, k, std::move(owner)}, log_det_half};
}

template <bool FromCovariance, class Nu, class Mu, class LN>
auto make_multi_student_t_factor(const Nu& nu, const Mu& mu, const LN& l, std::size_t k) {
  using M = node_t<Mu>;
  const M m = as_node(mu);
  if constexpr (is_vector_v<M>) {
    if (m.size() != k && m.size() % k != 0)
      throw std::invalid_argument(std::string("tyche::") +
                                  (FromCovariance ? "multi_student_t(nu, mu, Sigma)" : "multi_student_t_cholesky(nu, mu, L)") +
                                  ": mu has size " + std::to_string(m.size()) + " but the matrix is " +
                                  std::to_string(k) + " x " + std::to_string(k));
  }
  return multi_student_t_factor_distribution<node_t<Nu>, M, LN, FromCovariance>{{}, as_node(nu), m, l, k};
}
}  // namespace detail

/// The distribution multi_student_t(nu, mu, Sigma) for a data covariance Sigma (factored now, copied).
template <detail::operand Nu, detail::operand Mu>
auto multi_student_t(const Nu& nu, const Mu& mu, const data_matrix& sigma) {
  if (sigma.rows != sigma.cols || sigma.rows == 0)
    throw std::invalid_argument("tyche::multi_student_t(nu, mu, Sigma): Sigma must be square and non-empty; it is " +
                                std::to_string(sigma.rows) + " x " + std::to_string(sigma.cols));
  auto l = std::make_shared<const std::vector<double>>(
      detail::cholesky_lower(sigma.ptr, sigma.rows, "multi_student_t(nu, mu, Sigma)"));
  return detail::make_multi_student_t<true>("multi_student_t(nu, mu, Sigma)", nu, mu, l->data(), sigma.rows, l);
}
/// Name ~ multi_student_t(nu, mu, Sigma): a vector of K = Sigma.rows.
template <fixed_string Name, detail::operand Nu, detail::operand Mu>
auto multi_student_t(const Nu& nu, const Mu& mu, const data_matrix& sigma) {
  return detail::make_random_variable<Name>(multi_student_t(nu, mu, sigma),
                                            detail::shape_for_multi_normal(mu, sigma.rows));
}
/// The distribution multi_student_t_cholesky(nu, mu, L) for a data Cholesky factor L (viewed).
template <detail::operand Nu, detail::operand Mu>
auto multi_student_t_cholesky(const Nu& nu, const Mu& mu, const data_matrix& l) {
  detail::check_cholesky_factor(l, "multi_student_t_cholesky(nu, mu, L)");
  return detail::make_multi_student_t<false>("multi_student_t_cholesky(nu, mu, L)", nu, mu, l.ptr, l.rows, nullptr);
}
/// Name ~ multi_student_t_cholesky(nu, mu, L): a vector of K = L.rows.
template <fixed_string Name, detail::operand Nu, detail::operand Mu>
auto multi_student_t_cholesky(const Nu& nu, const Mu& mu, const data_matrix& l) {
  return detail::make_random_variable<Name>(multi_student_t_cholesky(nu, mu, l),
                                            detail::shape_for_multi_normal(mu, l.rows));
}

/// The distribution multi_student_t(nu, mu, Sigma) for Sigma an expression of K·K values (row
/// major; only the lower triangle is read), e.g. a cov_matrix variable; factored at every evaluation.
template <detail::operand Nu, detail::operand Mu, class Sx>
  requires detail::matrix_expression<Sx>
auto multi_student_t(const Nu& nu, const Mu& mu, const Sx& sigma) {
  const auto sn = detail::as_node(sigma);
  const std::size_t k = detail::matrix_order(sn.size(), "multi_student_t(nu, mu, Sigma)", "Sigma");
  return detail::make_multi_student_t_factor<true>(nu, mu, cholesky_decompose(sn), k);
}
/// Name ~ multi_student_t(nu, mu, Sigma) for Sigma an expression: a vector of K.
template <fixed_string Name, detail::operand Nu, detail::operand Mu, class Sx>
  requires detail::matrix_expression<Sx>
auto multi_student_t(const Nu& nu, const Mu& mu, const Sx& sigma) {
  const auto d = multi_student_t(nu, mu, sigma);
  return detail::make_random_variable<Name>(d, detail::shape_for_multi_normal(mu, d.k));
}
/// The distribution multi_student_t_cholesky(nu, mu, L) for L an expression of K·K values (row
/// major; only the lower triangle is read): `multi_student_t_cholesky(nu, mu, diag_pre_multiply(tau, L_Omega))`.
template <detail::operand Nu, detail::operand Mu, class Lx>
  requires detail::matrix_expression<Lx>
auto multi_student_t_cholesky(const Nu& nu, const Mu& mu, const Lx& l) {
  const auto ln = detail::as_node(l);
  const std::size_t k = detail::matrix_order(ln.size(), "multi_student_t_cholesky(nu, mu, L)", "L");
  return detail::make_multi_student_t_factor<false>(nu, mu, ln, k);
}
/// Name ~ multi_student_t_cholesky(nu, mu, L) for L an expression: a vector of K.
template <fixed_string Name, detail::operand Nu, detail::operand Mu, class Lx>
  requires detail::matrix_expression<Lx>
auto multi_student_t_cholesky(const Nu& nu, const Mu& mu, const Lx& l) {
  const auto d = multi_student_t_cholesky(nu, mu, l);
  return detail::make_random_variable<Name>(d, detail::shape_for_multi_normal(mu, d.k));
}

}  // namespace tyche
// ----- end tyche/distributions/multi_student_t.hpp -----
// ----- begin tyche/distributions/multinomial.hpp -----
// tyche/distributions/multinomial.hpp — multinomial(theta) and multinomial_logit(gamma), for observations only.
//   log p(y | θ) = log Γ(N + 1) − Σₖ log Γ(yₖ + 1) + Σₖ yₖ log θₖ,   N = Σₖ yₖ,
//   y ∈ {0, 1, …}ᴷ, θ a simplex (θₖ ≥ 0, Σₖ θₖ = 1);
//   log p(y | γ) = log Γ(N + 1) − Σₖ log Γ(yₖ + 1) + Σₖ yₖ γₖ − N log Σₖ exp γₖ,   γ ∈ ℝᴷ,
// the second being the first at θ = softmax(γ) (Stan Functions Reference, "Multinomial
// distribution" and "Multinomial distribution, logit parameterization"). y is one vector of K
// counts (data): the multinomial coefficient is a constant computed when the model is built,
// and N log Σ exp γ takes one log-sum-exp. theta is typically a simplex parameter,
// `auto theta = dirichlet<"theta">(data(alpha)); multinomial(theta).observe(data(y))`; a θₖ of
// exactly 0 gives NaN (0 · log 0), as bernoulli's p = 0 does. Predictive draws keep the
// observed total N.
//
// Data checks (std::invalid_argument naming the index and the value):
//   y[i] = v is not a non-negative integer count
//   y has size n but theta has size K                  (gamma for multinomial_logit)
//   theta must be >= 0, but theta[k] = v (data)        theta sums to s, not 1   (theta data)

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace tyche {

namespace detail {
/// The checks of observed counts y (a node) against the argument's size K; returns
/// log Γ(N + 1) − Σₖ log Γ(yₖ + 1) and sets total to N.
template <class V, class Y>
double multinomial_log_coefficient(const char* family, const char* argument, const V& v, const Y& y,
                                   double& total) {
  static_assert(is_vector_v<V>, "tyche::multinomial(theta) / multinomial_logit(gamma): the argument must "
                                "be a vector of K values");
  static_assert(kind_of<Y> == node_kind::data_vector,
                "tyche::multinomial / multinomial_logit: y must be data, a vector of K counts");
  if constexpr (!is_vector_v<V> || kind_of<Y> != node_kind::data_vector) {
    return 0;  // the static_asserts above have said why
  } else {
    const std::string head = std::string("tyche::") + family + "(...).observe(y): ";
    if (y.size() != v.size())
      throw std::invalid_argument(head + "y has size " + std::to_string(y.size()) + " but " + argument +
                                  " has size " + std::to_string(v.size()) + " (y is one vector of K counts)");
    double log_c = 0;
    total = 0;
    for (std::size_t i = 0; i < y.size(); ++i) {
      const double c = y.ptr[i];
      if (const char* problem = count_problem(c); problem || !std::isfinite(c))
        throw std::invalid_argument(head + "y[" + std::to_string(i + 1) + "] = " + tyche::detail::format_number(c) + " " +
                                    (problem ? problem : "is not finite"));
      total += c;
      log_c -= std::lgamma(c + 1);
    }
    return log_c + std::lgamma(total + 1);
  }
}

/// K counts summing to `total`, drawn with probabilities p (not necessarily normalised) as
/// successive binomials: yₖ ~ binomial(N − Σ_{j<k} yⱼ, pₖ / Σ_{j≥k} pⱼ).
template <class G>
std::vector<double> draw_counts(G& rng, std::size_t k, double total, const std::vector<double>& p) {
  std::vector<double> y(k, 0.0);
  double rest = 0;
  for (double v : p) rest += v;
  auto remaining = static_cast<long long>(std::llround(total));
  for (std::size_t i = 0; i + 1 < k && remaining > 0; ++i) {
    const double q = rest > 0 ? std::min(1.0, std::max(0.0, p[i] / rest)) : 0.0;
    const long long c = std::binomial_distribution<long long>(remaining, q)(rng);
    y[i] = static_cast<double>(c);
    remaining -= c;
    rest -= p[i];
  }
  if (k > 0) y[k - 1] += static_cast<double>(remaining);
  return y;
}
}  // namespace detail

template <class Theta>
struct multinomial_distribution : distribution<multinomial_distribution<Theta>> {
  static constexpr const char* family = "multinomial";
  Theta theta;
  double trials = 0;  // N of the observed counts (set by observe), for predictive draws
  template <class X>
  auto log_prob(const X& x) const {
    const auto y = detail::as_node(x);
    double total = 0;
    const double log_c = detail::multinomial_log_coefficient(family, "theta", theta, y, total);
    if constexpr (is_vector_v<Theta>) return constant{log_c} + sum(y * log(theta));
    else return constant{log_c};  // a static_assert has said why
  }
  /// Checks y (counts, see distribution::observe) and its size; keeps N for predictive draws.
  template <class X>
  auto observe(const X& x) const {
    auto d = *this;
    (void)detail::multinomial_log_coefficient(family, "theta", theta, detail::as_node(x), d.trials);
    return static_cast<const distribution<multinomial_distribution>&>(d).observe(x);
  }
  auto arguments() const { return std::tuple{theta}; }
  template <class T2>
  auto with_arguments(const T2& t) const {
    return multinomial_distribution<T2>{{}, t, trials};
  }
  /// theta ≥ 0 (at compile time where the types decide); for data, also Σ θₖ = 1.
  void check_supports() const {
    static_assert(argument_support_t<Theta, domains::nonnegative>::ok,
                  "tyche::multinomial(theta): theta must be >= 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside [0, inf)");
    detail::check_argument<domains::nonnegative>("multinomial(theta)", "theta", theta);
    if constexpr (kind_of<Theta> == node_kind::data_vector) {
      double s = 0;
      for (std::size_t k = 0; k < theta.size(); ++k) s += theta.ptr[k];
      if (!(std::fabs(s - 1) <= 1e-8 * double(theta.size())))
        throw std::invalid_argument("tyche::multinomial(theta): theta sums to " + tyche::detail::format_number(s) +
                                    ", not 1 (theta must be a simplex)");
    }
  }
  static constexpr bool whole_arguments = true;
  /// K counts with the observed total N.
  template <class G>
  std::vector<double> draw_all(G& rng, std::size_t n, const std::vector<double>& t) const {
    return detail::draw_counts(rng, n, trials, t);
  }
  static const char* observation_problem(double v) { return detail::count_problem(v); }
};

template <class Gamma>
struct multinomial_logit_distribution : distribution<multinomial_logit_distribution<Gamma>> {
  static constexpr const char* family = "multinomial_logit";
  Gamma gamma;
  double trials = 0;
  template <class X>
  auto log_prob(const X& x) const {
    const auto y = detail::as_node(x);
    double total = 0;
    const double log_c = detail::multinomial_log_coefficient(family, "gamma", gamma, y, total);
    if constexpr (is_vector_v<Gamma>) return constant{log_c} + sum(y * gamma) - constant{total} * log_sum_exp(gamma);
    else return constant{log_c};  // a static_assert has said why
  }
  template <class X>
  auto observe(const X& x) const {
    auto d = *this;
    (void)detail::multinomial_log_coefficient(family, "gamma", gamma, detail::as_node(x), d.trials);
    return static_cast<const distribution<multinomial_logit_distribution>&>(d).observe(x);
  }
  auto arguments() const { return std::tuple{gamma}; }
  template <class G2>
  auto with_arguments(const G2& g) const {
    return multinomial_logit_distribution<G2>{{}, g, trials};
  }
  static constexpr bool whole_arguments = true;
  template <class G>
  std::vector<double> draw_all(G& rng, std::size_t n, const std::vector<double>& g) const {
    double top = -HUGE_VAL;
    for (double v : g) top = std::max(top, v);
    std::vector<double> p(g.size());
    for (std::size_t k = 0; k < g.size(); ++k) p[k] = std::exp(g[k] - top);
    return detail::draw_counts(rng, n, trials, p);
  }
  static const char* observation_problem(double v) { return detail::count_problem(v); }
};

/// The distribution multinomial(theta), to observe one vector of K counts:
/// `multinomial(theta).observe(data(y))`.
template <detail::operand Theta>
auto multinomial(const Theta& theta) {
  return detail::make_distribution<multinomial_distribution>(theta);
}
/// The distribution multinomial_logit(gamma) (θ = softmax(γ)): `multinomial_logit(gamma).observe(data(y))`.
template <detail::operand Gamma>
auto multinomial_logit(const Gamma& gamma) {
  return detail::make_distribution<multinomial_logit_distribution>(gamma);
}

}  // namespace tyche
// ----- end tyche/distributions/multinomial.hpp -----
// ----- begin tyche/distributions/neg_binomial_2.hpp -----
// tyche/distributions/neg_binomial_2.hpp — neg_binomial_2(mu, phi), the negative binomial with
// mean μ and precision φ (variance μ + μ²/φ), for observations only.
//   log p(y | μ, φ) = log C(y + φ − 1, y) + y log(μ / (μ + φ)) + φ log(φ / (μ + φ))
//                   = lgamma(y + φ) − lgamma(φ) − y log1p(φ/μ) − φ log1p(μ/φ) − lgamma(y + 1),
//   y ∈ {0, 1, 2, …}, μ > 0, φ > 0.
// The log1p forms keep full precision when φ ≪ μ or μ ≪ φ; lgamma(y + 1) is folded when the model
// is built. log C(y + φ − 1, y) is a difference of lgammas (the core has no lbeta or lchoose), so
// its absolute error is about ε (y + φ) log(y + φ): relative error ~10⁻¹¹ of log p for y or φ
// around 10⁴, worse beyond (where, for large φ, the distribution is practically poisson(μ)).
// The data must be non-negative integer counts: observe throws "... y[i] = v is not a
// non-negative integer count" otherwise.

#include <cmath>
#include <random>
#include <tuple>

namespace tyche {

template <class Mu, class Phi>
struct neg_binomial_2_distribution : distribution<neg_binomial_2_distribution<Mu, Phi>> {
  static constexpr const char* family = "neg_binomial_2";
  Mu mu;
  Phi phi;
  template <class X>
  auto log_prob(const X& y) const {
    return detail::total(lgamma(y + phi) - lgamma(phi) - y * log1p(phi / mu) -
                         phi * log1p(mu / phi) - lgamma(y + lit<1>));
  }
  auto arguments() const { return std::tuple{mu, phi}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<Mu, domains::positive>::ok,
                  "tyche::neg_binomial_2(mu, phi): mu must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    static_assert(argument_support_t<Phi, domains::positive>::ok,
                  "tyche::neg_binomial_2(mu, phi): phi must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::positive>("neg_binomial_2(mu, phi)", "mu", mu);
    detail::check_argument<domains::positive>("neg_binomial_2(mu, phi)", "phi", phi);
  }
  /// The gamma–Poisson mixture: λ ~ gamma(shape φ, scale μ/φ), y ~ poisson(λ).
  template <class G>
  static double draw(G& rng, double m, double f) {
    const double lambda = std::gamma_distribution<double>(f, m / f)(rng);
    if (!(lambda > 0)) return 0.0;
    return static_cast<double>(std::poisson_distribution<long long>(lambda)(rng));
  }
  static double mean(double m, double) { return m; }
  static double variance(double m, double f) { return m + m * m / f; }
  static const char* observation_problem(double v) { return detail::count_problem(v); }
};

/// The distribution neg_binomial_2(mu, phi), to observe counts: `neg_binomial_2(mu, phi).observe(data(y))`.
template <detail::operand Mu, detail::operand Phi>
auto neg_binomial_2(const Mu& mu, const Phi& phi) {
  return detail::make_distribution<neg_binomial_2_distribution>(mu, phi);
}

}  // namespace tyche
// ----- end tyche/distributions/neg_binomial_2.hpp -----
// ----- begin tyche/distributions/neg_binomial_2_log.hpp -----
// tyche/distributions/neg_binomial_2_log.hpp — neg_binomial_2_log(eta, phi) =
// neg_binomial_2(exp(eta), phi), for observations only.
//   log p(y | η, φ) = lgamma(y + φ) − lgamma(φ) − y log(1 + φ e^−η) − φ log(1 + e^η / φ) − lgamma(y + 1)
//                   = lgamma(y + φ) − lgamma(φ) − y log1p_exp(log φ − η) − φ log1p_exp(η − log φ)
//                     − lgamma(y + 1),
//   y ∈ {0, 1, 2, …}, η ∈ ℝ, φ > 0; log1p_exp neither overflows nor loses precision for large |η|.
// lgamma(y + 1) is folded when the model is built. log C(y + φ − 1, y) is a difference of lgammas,
// as in neg_binomial_2 (absolute error about ε (y + φ) log(y + φ)). The data must be non-negative
// integer counts: observe throws "... y[i] = v is not a non-negative integer count" otherwise.

#include <cmath>
#include <random>
#include <tuple>

namespace tyche {

template <class Eta, class Phi>
struct neg_binomial_2_log_distribution : distribution<neg_binomial_2_log_distribution<Eta, Phi>> {
  static constexpr const char* family = "neg_binomial_2_log";
  Eta eta;
  Phi phi;
  template <class X>
  auto log_prob(const X& y) const {
    return detail::total(lgamma(y + phi) - lgamma(phi) - y * log1p_exp(log(phi) - eta) -
                         phi * log1p_exp(eta - log(phi)) - lgamma(y + lit<1>));
  }
  auto arguments() const { return std::tuple{eta, phi}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<Phi, domains::positive>::ok,
                  "tyche::neg_binomial_2_log(eta, phi): phi must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::positive>("neg_binomial_2_log(eta, phi)", "phi", phi);
  }
  /// The gamma–Poisson mixture: λ ~ gamma(shape φ, scale e^η/φ), y ~ poisson(λ).
  template <class G>
  static double draw(G& rng, double e, double f) {
    const double lambda = std::gamma_distribution<double>(f, std::exp(e) / f)(rng);
    if (!(lambda > 0)) return 0.0;
    return static_cast<double>(std::poisson_distribution<long long>(lambda)(rng));
  }
  static double mean(double e, double) { return std::exp(e); }
  static double variance(double e, double f) { return std::exp(e) + std::exp(2.0 * e) / f; }
  static const char* observation_problem(double v) { return detail::count_problem(v); }
};

/// The distribution neg_binomial_2_log(eta, phi): `neg_binomial_2_log(a + b * x, phi).observe(data(y))`.
template <detail::operand Eta, detail::operand Phi>
auto neg_binomial_2_log(const Eta& eta, const Phi& phi) {
  return detail::make_distribution<neg_binomial_2_log_distribution>(eta, phi);
}

}  // namespace tyche
// ----- end tyche/distributions/neg_binomial_2_log.hpp -----
// ----- begin tyche/distributions/normal.hpp -----
// tyche/distributions/normal.hpp — normal(mu, sigma) and std_normal().
//   log p(x | μ, σ) = −½ ((x − μ)/σ)² − log σ − ½ log 2π,   x ∈ ℝ, σ > 0.

#include <random>
#include <tuple>

namespace tyche {

template <class Mu, class Sigma>
struct normal_distribution : distribution<normal_distribution<Mu, Sigma>> {
  static constexpr const char* family = "normal";
  Mu mu;
  Sigma sigma;
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(lit<-1, 2> * square((x - mu) / sigma) - log(sigma) -
                         detail::half_log_two_pi);
  }
  auto arguments() const { return std::tuple{mu, sigma}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<Sigma, domains::positive>::ok,
                  "tyche::normal(mu, sigma): sigma must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::positive>("normal(mu, sigma)", "sigma", sigma);
  }
  template <class G>
  static double draw(G& rng, double m, double s) { return std::normal_distribution<double>(m, s)(rng); }
  static double mean(double m, double) { return m; }
  static double variance(double, double s) { return s * s; }
};

struct std_normal_distribution : distribution<std_normal_distribution> {
  static constexpr const char* family = "std_normal";
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(lit<-1, 2> * square(x) - detail::half_log_two_pi);
  }
  auto arguments() const { return std::tuple{}; }
  template <class G>
  static double draw(G& rng) { return std::normal_distribution<double>(0.0, 1.0)(rng); }
  static double mean() { return 0.0; }
  static double variance() { return 1.0; }
};

/// The named random variable Name ~ normal(mu, sigma): `normal<"mu">(0.0, 5.0)`.
template <fixed_string Name, detail::operand Mu, detail::operand Sigma, shape_tag Shape = scalar_shape>
auto normal(const Mu& mu, const Sigma& sigma, Shape shape = {}) {
  return detail::make_named<Name, normal_distribution>(shape, mu, sigma);
}
/// The distribution normal(mu, sigma), e.g. to observe data: `normal(theta, sigma).observe(y)`.
template <detail::operand Mu, detail::operand Sigma>
auto normal(const Mu& mu, const Sigma& sigma) {
  return detail::make_distribution<normal_distribution>(mu, sigma);
}

/// Name ~ normal(0, 1): `std_normal<"z">(shape<8>)`.
template <fixed_string Name, shape_tag Shape = scalar_shape>
auto std_normal(Shape shape = {}) {
  return detail::make_random_variable<Name>(std_normal_distribution{}, shape);
}
inline auto std_normal() { return std_normal_distribution{}; }

}  // namespace tyche
// ----- end tyche/distributions/normal.hpp -----
// ----- begin tyche/distributions/ordered_logistic.hpp -----
// tyche/distributions/ordered_logistic.hpp — ordered_logistic(eta, c) and ordered_probit(eta, c), for observations only.
//   P(y = 1 | η, c) = 1 − F(η − c₁),   P(y = k | η, c) = F(η − c_{k−1}) − F(η − c_k)  (1 < k < K),
//   P(y = K | η, c) = F(η − c_{K−1}),   y ∈ {1, …, K}, η ∈ ℝ, c ∈ ℝᴷ⁻¹ increasing,
// with F the logistic function (ordered_logistic) or the standard normal CDF Φ (ordered_probit),
// as in the Stan Functions Reference, "Ordered logistic distribution" and "Ordered probit
// distribution". y is 1-based. eta is a scalar (every observation) or a vector with one value
// per observation; c is the vector of the K − 1 cutpoints, typically a parameter with the
// ordered transform: `auto c = ordered<"c">(normal(0.0, 5.0), shape<3>);
// ordered_logistic(matvec(X, beta), c).observe(data(y))`.
// The log probabilities are one vector_op with a hand-written vector–Jacobian product
// (autodiff/ordinal_ops.hpp), without cancellation or underflow in the tails: for logistic,
// log σ(a) + log σ(−b) + log(1 − e^{c_{k−1} − c_k}) with a = η − c_{k−1}, b = η − c_k; for probit,
// log Φ through erfc and the asymptotic series of the normal tail, a middle category as
// log Φ(hi) + log(1 − Φ(lo)/Φ(hi)) after reflecting the pair so that Φ(hi) is not close to 1.
// Cutpoints from parameters that are not increasing give NaN (a rejected point).
//
// Data checks (std::invalid_argument naming the index and the value):
//   y[i] = v is not a category 1 … K
//   eta has size n but y has size m               (eta a vector)
//   c[k] = v is not greater than c[k−1] = w       (c data: the cutpoints must increase)
// ----- begin tyche/autodiff/ordinal_ops.hpp -----
// tyche/autodiff/ordinal_ops.hpp — value and vector–Jacobian rules of the ordinal regression
// likelihoods, ordered_logistic and ordered_probit (distributions/ordered_logistic.hpp), as one
// vector_op (the op contract: autodiff/vector_ops.hpp; docs/design/vector-ops.md):
//
//   ordinal_map<Probit>   (η, c) → log P(yᵢ | ηᵢ, c), one value per observation yᵢ ∈ {1 … K}
//
// with F the logistic or the standard normal CDF and the K − 1 cutpoints c increasing (Stan
// Functions Reference, "Ordered logistic distribution" and "Ordered probit distribution"):
//   P(y = 1) = 1 − F(η − c₁) = F(c₁ − η),   P(y = K) = F(η − c_{K−1}),
//   P(y = k) = F(η − c_{k−1}) − F(η − c_k)  (1 < k < K).
// The categories are data (the op's payload), so the branch on yᵢ is the same in every SIMD
// lane; within a branch the rules are branch-free (math::select), for batches of chains.
//
// Each log is computed without cancellation or underflow:
//   logistic, middle categories: σ(a) − σ(b) = σ(a) σ(−b) (1 − e^{b−a}) (expand both fractions
//     over (1 + e^a)(1 + e^b)), so log P = log σ(a) + log σ(−b) + log(1 − e^{c_{k−1} − c_k}),
//     a = η − c_{k−1}, b = η − c_k, the last term from the cutpoints' difference directly;
//   probit: log Φ and φ/Φ from scalar/math.hpp (math::log_Phi, math::phi_over_Phi: erfc, and a
//     continued fraction where erfc underflows); a middle category reflected (Φ(a) − Φ(b) = Φ(−b) − Φ(−a)) so that
//     neither term is close to 1 unless the other is tiny, then log Φ(hi) + log(1 − e^{log Φ(lo)
//     − log Φ(hi)}).
// Gradients (a, b as above, P the category's probability):
//   logistic: ∂ log P/∂a = σ(−a) + 1/expm1(c_k − c_{k−1}),  ∂ log P/∂b = −σ(b) − 1/expm1(c_k − c_{k−1});
//   probit:   ∂ log P/∂a = φ(a)/P = exp(log φ(a) − log P),   ∂ log P/∂b = −exp(log φ(b) − log P)
//             (φ(x)/Φ(x) for the end categories),
//   and ∂/∂η = ∂/∂a + ∂/∂b, ∂/∂c_{k−1} = −∂/∂a, ∂/∂c_k = −∂/∂b (the end categories have one term).

#include <cstddef>

namespace tyche {

namespace detail {

/// log(1 − e^z) for z < 0: log(−expm1 z) for z > −log 2, log1p(−e^z) below (Mächler,
/// "Accurately computing log(1 − exp(−|a|))", 2012). −inf at z = 0.
template <class T>
TYCHE_HD T log1m_exp_negative(const T& z) {
  return math::select(z > lift<T>(-0.69314718055994530942), math::log(-math::expm1(z)),
                      math::log1p(-math::exp(z)));
}

/// log φ(x), the standard normal log density.
template <class T>
TYCHE_HD T log_std_normal_density(const T& x) {
  return lift<T>(-0.5) * x * x - lift<T>(0.91893853320467274178);
}

/// log(Φ(a) − Φ(b)) for a > b, reflected (Φ(a) − Φ(b) = Φ(−b) − Φ(−a)) so that hi + lo ≤ 0:
/// then Φ(hi) is close to 1 only when Φ(lo) is tiny, and log Φ(hi) + log(1 − e^{log Φ(lo) −
/// log Φ(hi)}) loses nothing to cancellation (except, as any formula on Φ alone, for cutpoints
/// closer than about 10⁻⁸ relative).
template <class T>
TYCHE_HD T log_Phi_difference(const T& a, const T& b) {
  const auto flip = a + b > lift<T>(0.0);
  const T hi = math::select(flip, -b, a);
  const T lo = math::select(flip, -a, b);
  const T log_hi = math::log_Phi(hi);
  return log_hi + log1m_exp_negative(math::log_Phi(lo) - log_hi);
}

}  // namespace detail

namespace ops {

/// log P(yᵢ | ηᵢ, c) for the observations i = 0 … m − 1 of an ordinal regression (see the top of
/// this file): operands η (one value, or one per observation) and c (the K − 1 increasing
/// cutpoints); the categories 1 … K are the payload (data, checked when the op is made), y[i],
/// or y0 for a single observation given as a number. Cutpoints that are not increasing give NaN.
template <bool Probit>
struct ordinal_map {
  static constexpr const char* name = Probit ? "ordered_probit" : "ordered_logistic";
  static constexpr bool has_payload = true;
  const double* y = nullptr;
  double y0 = 1.0;
  template <class Eta, class C>
  static constexpr std::size_t extent = dynamic_extent;
  bool operator==(const ordinal_map&) const = default;
  TYCHE_HD std::size_t category(std::size_t i) const { return static_cast<std::size_t>(y ? y[i] : y0); }

  /// log F(x) and d log F(x) / dx: σ(−x), or φ(x)/Φ(x) (scalar/math.hpp, finite in the tail).
  template <class T>
  TYCHE_HD static T log_cdf(const T& x) {
    if constexpr (Probit) return math::log_Phi(x);
    else return rules::log_logistic{}.value(x);
  }
  template <class T>
  TYCHE_HD static T log_cdf_slope(const T& x) {
    if constexpr (Probit) {
      return math::phi_over_Phi(x);
    } else {
      T dx;
      (void)rules::log_logistic{}.value(x, dx);  // σ(−x)
      return dx;
    }
  }

  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t* in_n) const {
    const T* c = in[1];
    const std::size_t cuts = in_n[1];
    for (std::size_t i = 0; i < m; ++i) {
      const T eta = in[0][in_n[0] > 1 ? i : 0];
      const std::size_t k = category(i);
      if (k == 1) {
        out[i] = log_cdf(c[0] - eta);
      } else if (k == cuts + 1) {
        out[i] = log_cdf(eta - c[cuts - 1]);
      } else if constexpr (Probit) {
        out[i] = detail::log_Phi_difference(eta - c[k - 2], eta - c[k - 1]);
      } else {
        out[i] = rules::log_logistic{}.value(eta - c[k - 2]) + rules::log_logistic{}.value(c[k - 1] - eta) +
                 detail::log1m_exp_negative(c[k - 2] - c[k - 1]);
      }
    }
  }

  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T* out, const T* adj, const T* const* in,
                        const std::size_t* in_n, T* const* in_adj) const {
    const T* c = in[1];
    const std::size_t cuts = in_n[1];
    for (std::size_t i = 0; i < m; ++i) {
      const std::size_t e = in_n[0] > 1 ? i : 0;
      const T eta = in[0][e];
      const std::size_t k = category(i);
      if (k == 1) {
        const T g = adj[i] * log_cdf_slope(c[0] - eta);
        in_adj[0][e] -= g;
        in_adj[1][0] += g;
      } else if (k == cuts + 1) {
        const T g = adj[i] * log_cdf_slope(eta - c[cuts - 1]);
        in_adj[0][e] += g;
        in_adj[1][cuts - 1] -= g;
      } else {
        const T a = eta - c[k - 2], b = eta - c[k - 1];
        T da, db;
        if constexpr (Probit) {
          da = math::exp(detail::log_std_normal_density(a) - out[i]);
          db = -math::exp(detail::log_std_normal_density(b) - out[i]);
        } else {
          T sa, sb;  // σ(−a), σ(b)
          (void)rules::log_logistic{}.value(a, sa);
          (void)rules::log_logistic{}.value(-b, sb);
          const T r = lift<T>(1.0) / math::expm1(c[k - 1] - c[k - 2]);
          da = sa + r;
          db = -sb - r;
        }
        in_adj[0][e] += adj[i] * (da + db);
        in_adj[1][k - 2] -= adj[i] * da;
        in_adj[1][k - 1] -= adj[i] * db;
      }
    }
  }
};

}  // namespace ops

}  // namespace tyche
// ----- end tyche/autodiff/ordinal_ops.hpp -----

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace tyche {

namespace detail {
/// The checks of an ordinal observation y (a node: data or a number) against η and c; returns
/// the number of observations.
template <class Eta, class C, class Y>
std::size_t check_ordinal(const char* family, const Eta& eta, const C& c, const Y& y) {
  static_assert(is_vector_v<C>, "tyche::ordered_logistic(eta, c) / ordered_probit(eta, c): c must be a "
                                "vector of the K - 1 cutpoints");
  static_assert(kind_of<Y> == node_kind::data_vector || kind_of<Y> == node_kind::constant,
                "tyche::ordered_logistic / ordered_probit: only data can be observed (y must be data)");
  if constexpr (!is_vector_v<C> || !(kind_of<Y> == node_kind::data_vector || kind_of<Y> == node_kind::constant)) {
    return 0;  // the static_assert above has said why
  } else {
    const std::string head = std::string("tyche::") + family + "(...).observe(y): ";
    const std::size_t cuts = c.size();
    if (cuts == 0) throw std::invalid_argument(head + "c has no cutpoints (K - 1 >= 1 are needed)");
    const std::size_t n = operand_size(y);
    for (std::size_t i = 0; i < n; ++i) {
      double v;
      if constexpr (kind_of<Y> == node_kind::data_vector) v = y.ptr[i];
      else v = y.value;
      if (!(v >= 1 && v <= double(cuts + 1) && v == std::floor(v)))
        throw std::invalid_argument(head + "y[" + std::to_string(i + 1) + "] = " + tyche::detail::format_number(v) +
                                    " is not a category 1 … " + std::to_string(cuts + 1));
    }
    if constexpr (is_vector_v<Eta>) {
      if (eta.size() != n)
        throw std::invalid_argument(head + "eta has size " + std::to_string(eta.size()) + " but y has size " +
                                    std::to_string(n) + " (eta is one value, or one per observation)");
    }
    if constexpr (kind_of<C> == node_kind::data_vector) {
      for (std::size_t k = 1; k < cuts; ++k)
        if (!(c.ptr[k] > c.ptr[k - 1]))
          throw std::invalid_argument(head + "c[" + std::to_string(k + 1) + "] = " + tyche::detail::format_number(c.ptr[k]) +
                                      " is not greater than c[" + std::to_string(k) + "] = " +
                                      tyche::detail::format_number(c.ptr[k - 1]) + " (the cutpoints must increase)");
    }
    return n;
  }
}

/// Σᵢ log P(yᵢ | ηᵢ, c), the categories checked.
template <bool Probit, class Eta, class C, class X>
auto ordinal_log_prob(const char* family, const Eta& eta, const C& c, const X& x) {
  using Y = node_t<X>;
  const Y y = as_node(x);
  const std::size_t n = check_ordinal(family, eta, c, y);
  ops::ordinal_map<Probit> op{};
  if constexpr (kind_of<Y> == node_kind::data_vector) op.y = y.ptr;
  else if constexpr (kind_of<Y> == node_kind::constant) op.y0 = y.value;
  return sum(make_vector_op(op, n, eta, c));
}

/// n draws of the latent-variable form: y = 1 + #{k : c_k < η + ε}, ε ~ F (logistic or normal).
template <bool Probit, class G>
std::vector<double> draw_ordinal(G& rng, std::size_t n, const std::vector<double>& eta,
                                 const std::vector<double>& c) {
  std::vector<double> out(n);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::normal_distribution<double> z01;
  for (std::size_t i = 0; i < n; ++i) {
    double eps;
    if constexpr (Probit) {
      eps = z01(rng);
    } else {
      double u = unit(rng);
      while (u <= 0.0 || u >= 1.0) u = unit(rng);
      eps = std::log(u) - std::log1p(-u);
    }
    const double latent = (eta.size() == 1 ? eta[0] : eta[i]) + eps;
    double k = 1;
    for (double cut : c) k += cut < latent ? 1 : 0;
    out[i] = k;
  }
  return out;
}
}  // namespace detail

template <class Eta, class C>
struct ordered_logistic_distribution : distribution<ordered_logistic_distribution<Eta, C>> {
  static constexpr const char* family = "ordered_logistic";
  Eta eta;
  C c;
  template <class X>
  auto log_prob(const X& y) const {
    return detail::ordinal_log_prob<false>(family, eta, c, y);
  }
  /// Checks y (finite, see distribution::observe), then the categories against K and eta's size.
  template <class X>
  auto observe(const X& x) const {
    auto o = distribution<ordered_logistic_distribution>::observe(x);
    detail::check_ordinal(family, eta, c, o.value);
    return o;
  }
  auto arguments() const { return std::tuple{eta, c}; }
  /// The arguments are whole vectors (model.hpp draws with draw_all, not element by element).
  static constexpr bool whole_arguments = true;
  template <class G>
  static std::vector<double> draw_all(G& rng, std::size_t n, const std::vector<double>& e,
                                      const std::vector<double>& cuts) {
    return detail::draw_ordinal<false>(rng, n, e, cuts);
  }
  static const char* observation_problem(double v) { return detail::category_problem(v); }
};

template <class Eta, class C>
struct ordered_probit_distribution : distribution<ordered_probit_distribution<Eta, C>> {
  static constexpr const char* family = "ordered_probit";
  Eta eta;
  C c;
  template <class X>
  auto log_prob(const X& y) const {
    return detail::ordinal_log_prob<true>(family, eta, c, y);
  }
  template <class X>
  auto observe(const X& x) const {
    auto o = distribution<ordered_probit_distribution>::observe(x);
    detail::check_ordinal(family, eta, c, o.value);
    return o;
  }
  auto arguments() const { return std::tuple{eta, c}; }
  static constexpr bool whole_arguments = true;
  template <class G>
  static std::vector<double> draw_all(G& rng, std::size_t n, const std::vector<double>& e,
                                      const std::vector<double>& cuts) {
    return detail::draw_ordinal<true>(rng, n, e, cuts);
  }
  static const char* observation_problem(double v) { return detail::category_problem(v); }
};

/// The distribution ordered_logistic(eta, c), to observe categories 1 … K:
/// `ordered_logistic(eta, c).observe(data(y))`.
template <detail::operand Eta, detail::operand C>
auto ordered_logistic(const Eta& eta, const C& c) {
  return detail::make_distribution<ordered_logistic_distribution>(eta, c);
}
/// The distribution ordered_probit(eta, c), to observe categories 1 … K:
/// `ordered_probit(eta, c).observe(data(y))`.
template <detail::operand Eta, detail::operand C>
auto ordered_probit(const Eta& eta, const C& c) {
  return detail::make_distribution<ordered_probit_distribution>(eta, c);
}

}  // namespace tyche
// ----- end tyche/distributions/ordered_logistic.hpp -----
// ----- begin tyche/distributions/pareto.hpp -----
// tyche/distributions/pareto.hpp — pareto(y_min, alpha): scale y_min, shape α (as in Stan).
//   log p(x | y_min, α) = log α + α log y_min − (α + 1) log x,   x ≥ y_min, y_min > 0, α > 0.
// The support depends on an argument: a named variable is sampled as log(x − y_min) (y_min may
// be an expression of other variables). Observed values are checked to be > 0, but not against
// y_min (an expression), and the density is not −∞ below it.

#include <cmath>
#include <limits>
#include <random>
#include <tuple>

namespace tyche {

template <class YMin, class Alpha>
struct pareto_distribution : distribution<pareto_distribution<YMin, Alpha>> {
  static constexpr const char* family = "pareto";
  YMin y_min;
  Alpha alpha;
  auto transform() const { return transforms::lower_bound<YMin>{y_min}; }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(log(alpha) + alpha * log(y_min) - (alpha + lit<1>) * log(x));
  }
  auto arguments() const { return std::tuple{y_min, alpha}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<YMin, domains::positive>::ok,
                  "tyche::pareto(y_min, alpha): y_min must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    static_assert(argument_support_t<Alpha, domains::positive>::ok,
                  "tyche::pareto(y_min, alpha): alpha must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::positive>("pareto(y_min, alpha)", "y_min", y_min);
    detail::check_argument<domains::positive>("pareto(y_min, alpha)", "alpha", alpha);
  }
  /// By inversion of the cdf 1 − (y_min/x)^α: y_min u^{−1/α}, u ~ uniform(0, 1).
  template <class G>
  static double draw(G& rng, double y0, double a) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    double u = unit(rng);
    while (u <= 0.0 || u >= 1.0) u = unit(rng);
    return y0 * std::exp(-std::log(u) / a);
  }
  /// α y_min/(α − 1) for α > 1, infinite otherwise.
  static double mean(double y0, double a) {
    return a > 1 ? a * y0 / (a - 1) : std::numeric_limits<double>::infinity();
  }
  /// y_min² α/((α − 1)²(α − 2)) for α > 2, infinite otherwise.
  static double variance(double y0, double a) {
    return a > 2 ? y0 * y0 * a / ((a - 1) * (a - 1) * (a - 2)) : std::numeric_limits<double>::infinity();
  }
  static const char* observation_problem(double v) { return detail::positive_problem(v); }
};

/// Name ~ pareto(y_min, alpha), support [y_min, ∞), sampled as log(Name − y_min).
template <fixed_string Name, detail::operand YMin, detail::operand Alpha, shape_tag Shape = scalar_shape>
auto pareto(const YMin& y_min, const Alpha& alpha, Shape shape = {}) {
  return detail::make_named<Name, pareto_distribution>(shape, y_min, alpha);
}
template <detail::operand YMin, detail::operand Alpha>
auto pareto(const YMin& y_min, const Alpha& alpha) {
  return detail::make_distribution<pareto_distribution>(y_min, alpha);
}

}  // namespace tyche
// ----- end tyche/distributions/pareto.hpp -----
// ----- begin tyche/distributions/pareto_type_2.hpp -----
// tyche/distributions/pareto_type_2.hpp — pareto_type_2(mu, lambda, alpha), as in Stan.
// Location μ, scale λ, shape α: the Lomax distribution shifted by μ.
//   log p(x | μ, λ, α) = log α − log λ − (α + 1) log(1 + (x − μ)/λ),   x ≥ μ, λ > 0, α > 0.
// The support depends on an argument: a named variable is sampled as log(x − μ) (μ may be an
// expression of other variables). Observed values are not checked against μ (an expression),
// and the density is not −∞ below it.

#include <cmath>
#include <limits>
#include <random>
#include <tuple>

namespace tyche {

template <class Mu, class Lambda, class Alpha>
struct pareto_type_2_distribution : distribution<pareto_type_2_distribution<Mu, Lambda, Alpha>> {
  static constexpr const char* family = "pareto_type_2";
  Mu mu;
  Lambda lambda;
  Alpha alpha;
  auto transform() const { return transforms::lower_bound<Mu>{mu}; }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(log(alpha) - log(lambda) - (alpha + lit<1>) * log1p((x - mu) / lambda));
  }
  auto arguments() const { return std::tuple{mu, lambda, alpha}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<Lambda, domains::positive>::ok,
                  "tyche::pareto_type_2(mu, lambda, alpha): lambda must be > 0, but its support "
                  "(spelled out in tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    static_assert(argument_support_t<Alpha, domains::positive>::ok,
                  "tyche::pareto_type_2(mu, lambda, alpha): alpha must be > 0, but its support "
                  "(spelled out in tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::positive>("pareto_type_2(mu, lambda, alpha)", "lambda", lambda);
    detail::check_argument<domains::positive>("pareto_type_2(mu, lambda, alpha)", "alpha", alpha);
  }
  /// By inversion of the cdf 1 − (1 + (x − μ)/λ)^{−α}: μ + λ (u^{−1/α} − 1), u ~ uniform(0, 1).
  template <class G>
  static double draw(G& rng, double m, double l, double a) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    double u = unit(rng);
    while (u <= 0.0 || u >= 1.0) u = unit(rng);
    return m + l * std::expm1(-std::log(u) / a);
  }
  /// μ + λ/(α − 1) for α > 1, infinite otherwise.
  static double mean(double m, double l, double a) {
    return a > 1 ? m + l / (a - 1) : std::numeric_limits<double>::infinity();
  }
  /// λ² α/((α − 1)²(α − 2)) for α > 2, infinite otherwise.
  static double variance(double, double l, double a) {
    return a > 2 ? l * l * a / ((a - 1) * (a - 1) * (a - 2)) : std::numeric_limits<double>::infinity();
  }
};

/// Name ~ pareto_type_2(mu, lambda, alpha), support [mu, ∞), sampled as log(Name − mu).
template <fixed_string Name, detail::operand Mu, detail::operand Lambda, detail::operand Alpha,
          shape_tag Shape = scalar_shape>
auto pareto_type_2(const Mu& mu, const Lambda& lambda, const Alpha& alpha, Shape shape = {}) {
  return detail::make_named<Name, pareto_type_2_distribution>(shape, mu, lambda, alpha);
}
template <detail::operand Mu, detail::operand Lambda, detail::operand Alpha>
auto pareto_type_2(const Mu& mu, const Lambda& lambda, const Alpha& alpha) {
  return detail::make_distribution<pareto_type_2_distribution>(mu, lambda, alpha);
}

}  // namespace tyche
// ----- end tyche/distributions/pareto_type_2.hpp -----
// ----- begin tyche/distributions/poisson.hpp -----
// tyche/distributions/poisson.hpp — poisson(lambda), for observations only.
//   log p(y | λ) = y log λ − λ − log y!,   y ∈ {0, 1, 2, …}, λ > 0.
// log y! = lgamma(y + 1) depends on the data only: it is folded when the model is built. The data
// must be non-negative integer counts: observe throws "... y[i] = v is not a non-negative
// integer count" otherwise.

#include <cmath>
#include <random>
#include <tuple>

namespace tyche {

template <class Lambda>
struct poisson_distribution : distribution<poisson_distribution<Lambda>> {
  static constexpr const char* family = "poisson";
  Lambda lambda;
  template <class X>
  auto log_prob(const X& y) const {
    return detail::total(y * log(lambda) - lambda - lgamma(y + lit<1>));
  }
  auto arguments() const { return std::tuple{lambda}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<Lambda, domains::positive>::ok,
                  "tyche::poisson(lambda): lambda must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::positive>("poisson(lambda)", "lambda", lambda);
  }
  template <class G>
  static double draw(G& rng, double l) {
    return static_cast<double>(std::poisson_distribution<long long>(l)(rng));
  }
  static double mean(double l) { return l; }
  static double variance(double l) { return l; }
  static const char* observation_problem(double v) { return detail::count_problem(v); }
};

/// The distribution poisson(lambda), to observe counts: `poisson(lambda).observe(data(y))`.
template <detail::operand Lambda>
auto poisson(const Lambda& lambda) {
  return detail::make_distribution<poisson_distribution>(lambda);
}

}  // namespace tyche
// ----- end tyche/distributions/poisson.hpp -----
// ----- begin tyche/distributions/poisson_log.hpp -----
// tyche/distributions/poisson_log.hpp — poisson_log(alpha) = poisson(exp(alpha)), for
// observations only.
//   log p(y | α) = y α − e^α − log y!,   y ∈ {0, 1, 2, …}, α ∈ ℝ.
// log y! = lgamma(y + 1) depends on the data only: it is folded when the model is built. The data
// must be non-negative integer counts: observe throws "... y[i] = v is not a non-negative
// integer count" otherwise.

#include <cmath>
#include <random>
#include <tuple>

namespace tyche {

template <class Alpha>
struct poisson_log_distribution : distribution<poisson_log_distribution<Alpha>> {
  static constexpr const char* family = "poisson_log";
  Alpha alpha;
  template <class X>
  auto log_prob(const X& y) const {
    if constexpr (is_vector_v<Alpha>) {
      // A vector log rate (a linear predictor) enters once per element: y·α − e^α as one node.
      return detail::total(detail::make_binary<rules::poisson_log_term>(y, alpha) - lgamma(y + lit<1>));
    } else {
      // A scalar α: Σ (y α − e^α) reduces to α Σy − n e^α (compile/reduce_sum.hpp).
      return detail::total(y * alpha - exp(alpha) - lgamma(y + lit<1>));
    }
  }
  auto arguments() const { return std::tuple{alpha}; }
  template <class G>
  static double draw(G& rng, double a) {
    return static_cast<double>(std::poisson_distribution<long long>(std::exp(a))(rng));
  }
  static double mean(double a) { return std::exp(a); }
  static double variance(double a) { return std::exp(a); }
  static const char* observation_problem(double v) { return detail::count_problem(v); }
};

/// The distribution poisson_log(alpha): `poisson_log(a + b * x).observe(data(y))`.
template <detail::operand Alpha>
auto poisson_log(const Alpha& alpha) {
  return detail::make_distribution<poisson_log_distribution>(alpha);
}

}  // namespace tyche
// ----- end tyche/distributions/poisson_log.hpp -----
// ----- begin tyche/distributions/skew_normal.hpp -----
// tyche/distributions/skew_normal.hpp — skew_normal(xi, omega, alpha), as in Stan.
// Location ξ, scale ω, shape α (Azzalini 1985).
//   log p(x | ξ, ω, α) = log 2 − ½ log 2π − log ω − z²/2 + log Φ(α z),   z = (x − ξ)/ω,
//   x ∈ ℝ, ω > 0, α ∈ ℝ, with log Φ = log_Phi, finite where Φ(α z) underflows (α z < −38).

#include <cmath>
#include <numbers>
#include <random>
#include <tuple>

namespace tyche {

template <class Xi, class Omega, class Alpha>
struct skew_normal_distribution : distribution<skew_normal_distribution<Xi, Omega, Alpha>> {
  static constexpr const char* family = "skew_normal";
  Xi xi;
  Omega omega;
  Alpha alpha;
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    const auto z = (x - xi) / omega;
    return detail::total(log_Phi(alpha * z) - lit<1, 2> * square(z) - log(omega) +
                         (detail::log_two - detail::half_log_two_pi));
  }
  auto arguments() const { return std::tuple{xi, omega, alpha}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<Omega, domains::positive>::ok,
                  "tyche::skew_normal(xi, omega, alpha): omega must be > 0, but its support (spelled "
                  "out in tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::positive>("skew_normal(xi, omega, alpha)", "omega", omega);
  }
  /// ξ + ω z with z = δ|u₀| + √(1 − δ²) u₁ for u₀, u₁ ~ normal(0, 1) independent,
  /// δ = α/√(1 + α²) (Azzalini & Dalla Valle 1996; Azzalini 2014, §2.1.3): z = u₁' if u₀ ≥ 0
  /// else −u₁', u₁' = δ u₀ + √(1 − δ²) u₁.
  template <class G>
  static double draw(G& rng, double xi_, double omega_, double alpha_) {
    std::normal_distribution<double> n(0.0, 1.0);
    const double d = alpha_ / std::sqrt(1 + alpha_ * alpha_);
    const double u0 = n(rng), u1 = n(rng);
    const double v = d * u0 + std::sqrt(1 - d * d) * u1;
    return xi_ + omega_ * (u0 >= 0 ? v : -v);
  }
  /// ξ + ω δ √(2/π), δ = α/√(1 + α²).
  static double mean(double xi_, double omega_, double alpha_) {
    const double d = alpha_ / std::sqrt(1 + alpha_ * alpha_);
    return xi_ + omega_ * d * std::sqrt(2 / std::numbers::pi);
  }
  /// ω² (1 − 2δ²/π).
  static double variance(double, double omega_, double alpha_) {
    const double d2 = alpha_ * alpha_ / (1 + alpha_ * alpha_);
    return omega_ * omega_ * (1 - 2 * d2 / std::numbers::pi);
  }
};

/// Name ~ skew_normal(xi, omega, alpha), support ℝ.
template <fixed_string Name, detail::operand Xi, detail::operand Omega, detail::operand Alpha,
          shape_tag Shape = scalar_shape>
auto skew_normal(const Xi& xi, const Omega& omega, const Alpha& alpha, Shape shape = {}) {
  return detail::make_named<Name, skew_normal_distribution>(shape, xi, omega, alpha);
}
template <detail::operand Xi, detail::operand Omega, detail::operand Alpha>
auto skew_normal(const Xi& xi, const Omega& omega, const Alpha& alpha) {
  return detail::make_distribution<skew_normal_distribution>(xi, omega, alpha);
}

}  // namespace tyche
// ----- end tyche/distributions/skew_normal.hpp -----
// ----- begin tyche/distributions/student_t.hpp -----
// tyche/distributions/student_t.hpp — student_t(nu, mu, sigma).
//   log p(x | ν, μ, σ) = log Γ((ν+1)/2) − log Γ(ν/2) − ½ log ν − ½ log π − log σ
//                        − (ν+1)/2 · log(1 + ((x − μ)/σ)²/ν),   x ∈ ℝ, ν > 0, σ > 0.

#include <limits>
#include <random>
#include <tuple>

namespace tyche {

template <class Nu, class Mu, class Sigma>
struct student_t_distribution : distribution<student_t_distribution<Nu, Mu, Sigma>> {
  static constexpr const char* family = "student_t";
  Nu nu;
  Mu mu;
  Sigma sigma;
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    const auto half_nu = lit<1, 2> * nu;
    const auto half_nu_plus_half = half_nu + lit<1, 2>;
    return detail::total(lgamma(half_nu_plus_half) - lgamma(half_nu) - lit<1, 2> * log(nu) -
                         log(sigma) - half_nu_plus_half * log1p(square((x - mu) / sigma) / nu) -
                         0.5 * detail::log_pi);
  }
  auto arguments() const { return std::tuple{nu, mu, sigma}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<Nu, domains::positive>::ok,
                  "tyche::student_t(nu, mu, sigma): nu must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    static_assert(argument_support_t<Sigma, domains::positive>::ok,
                  "tyche::student_t(nu, mu, sigma): sigma must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::positive>("student_t(nu, mu, sigma)", "nu", nu);
    detail::check_argument<domains::positive>("student_t(nu, mu, sigma)", "sigma", sigma);
  }
  template <class G>
  static double draw(G& rng, double n, double m, double s) {
    return m + s * std::student_t_distribution<double>(n)(rng);
  }
  /// μ for ν > 1 (else undefined: NaN).
  static double mean(double n, double m, double) {
    return n > 1 ? m : std::numeric_limits<double>::quiet_NaN();
  }
  /// σ² ν/(ν − 2) for ν > 2, infinite for 1 < ν ≤ 2, undefined (NaN) for ν ≤ 1.
  static double variance(double n, double, double s) {
    if (n > 2) return s * s * n / (n - 2);
    return n > 1 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  }
};

/// Name ~ student_t(nu, mu, sigma).
template <fixed_string Name, detail::operand Nu, detail::operand Mu, detail::operand Sigma,
          shape_tag Shape = scalar_shape>
auto student_t(const Nu& nu, const Mu& mu, const Sigma& sigma, Shape shape = {}) {
  return detail::make_named<Name, student_t_distribution>(shape, nu, mu, sigma);
}
template <detail::operand Nu, detail::operand Mu, detail::operand Sigma>
auto student_t(const Nu& nu, const Mu& mu, const Sigma& sigma) {
  return detail::make_distribution<student_t_distribution>(nu, mu, sigma);
}

}  // namespace tyche
// ----- end tyche/distributions/student_t.hpp -----
// ----- begin tyche/distributions/uniform.hpp -----
// tyche/distributions/uniform.hpp — uniform(a, b).
//   log p(x | a, b) = −log(b − a),   a < x < b.
// The support depends on the arguments: a named variable is sampled as logit((x − a)/(b − a)).
// b − a must be > 0 (checked from the types, else when the model is built). Observed values are
// not checked against (a, b) (the bounds are expressions), and the density is not −∞ outside
// them.

#include <random>
#include <tuple>

namespace tyche {

template <class A, class B>
struct uniform_distribution : distribution<uniform_distribution<A, B>> {
  static constexpr const char* family = "uniform";
  A a;
  B b;
  auto transform() const { return transforms::interval<A, B>{a, b}; }
  template <class X>
  auto log_prob(const X& x) const {
    // 0·x: the density does not depend on x inside (a, b), but x must occur in it, so that a
    // vector x counts −log(b − a) once per element and a model's log density without the
    // Jacobian still contains the variable's parameter (compile requires every parameter of
    // the layout to occur).
    return detail::total(lit<0> * x - log(b - a));
  }
  auto arguments() const { return std::tuple{a, b}; }
  /// b − a > 0. Read as a Line, b − a often proves it where a and b alone do not:
  /// uniform(mu − 1, mu + 1) has b − a = 0·mu + 2, support [2, 2].
  void check_supports() const {
    using Width = decltype(b - a);
    static_assert(argument_support_t<Width, domains::positive>::ok,
                  "tyche::uniform(a, b): b - a must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::positive>("uniform(a, b)", "b - a", b - a);
  }
  template <class G>
  static double draw(G& rng, double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng); }
  static double mean(double a, double b) { return (a + b) / 2; }
  static double variance(double a, double b) { return (b - a) * (b - a) / 12; }
};

/// Name ~ uniform(a, b), support (a, b) (a and b may be expressions of other variables).
template <fixed_string Name, detail::operand A, detail::operand B, shape_tag Shape = scalar_shape>
auto uniform(const A& a, const B& b, Shape shape = {}) {
  return detail::make_named<Name, uniform_distribution>(shape, a, b);
}
template <detail::operand A, detail::operand B>
auto uniform(const A& a, const B& b) {
  return detail::make_distribution<uniform_distribution>(a, b);
}

}  // namespace tyche
// ----- end tyche/distributions/uniform.hpp -----
// ----- begin tyche/distributions/von_mises.hpp -----
// tyche/distributions/von_mises.hpp — von_mises(mu, kappa): location μ, concentration κ.
// The circular normal distribution, as in Stan.
//   log p(x | μ, κ) = κ cos(x − μ) − log(2π) − log I₀(κ),   μ ∈ ℝ, κ > 0,
// with log I₀ = log_bessel_i0 (no overflow for large κ). The density has period 2π: a named
// variable lives on the interval (μ − π, μ + π) of one period centred on μ (so its mode is μ),
// sampled as logit((x − μ + π)/(2π)); observed values may be any real numbers (angles are not
// reduced).

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <tuple>

namespace tyche {

template <class Mu, class Kappa>
struct von_mises_distribution : distribution<von_mises_distribution<Mu, Kappa>> {
  static constexpr const char* family = "von_mises";
  Mu mu;
  Kappa kappa;
  /// (μ − π, μ + π), bounds that depend on μ, as uniform(a, b)'s on a and b.
  auto transform() const {
    const auto lower = mu - std::numbers::pi;
    const auto upper = mu + std::numbers::pi;
    return transforms::interval<decltype(lower), decltype(upper)>{lower, upper};
  }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(kappa * cos(x - mu) - log_bessel_i0(kappa) - 2 * detail::half_log_two_pi);
  }
  auto arguments() const { return std::tuple{mu, kappa}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<Kappa, domains::positive>::ok,
                  "tyche::von_mises(mu, kappa): kappa must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::positive>("von_mises(mu, kappa)", "kappa", kappa);
  }
  /// μ + θ, θ ∈ (−π, π), by Best & Fisher (1979), "Efficient simulation of the von Mises
  /// distribution", Appl. Statist. 28(2), 152–157: a wrapped Cauchy envelope with
  /// ρ = (τ − √(2τ))/(2κ), τ = 1 + √(1 + 4κ²) (written 2κ/(τ + √(2τ)), which does not cancel for
  /// small κ), r = (1 + ρ²)/(2ρ); propose f = (1 + r z)/(r + z), z = cos(π u₁); accept when
  /// c(2 − c) > u₂ (the squeeze) or log(c/u₂) + 1 − c ≥ 0, c = κ(r − f); θ = ±arccos f by u₃.
  template <class G>
  static double draw(G& rng, double m, double k) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const double tau = 1 + std::sqrt(1 + 4 * k * k);
    const double rho = 2 * k / (tau + std::sqrt(2 * tau));
    const double r = (1 + rho * rho) / (2 * rho);
    for (;;) {
      const double u1 = unit(rng), u2 = unit(rng), u3 = unit(rng);
      const double z = std::cos(std::numbers::pi * u1);
      const double f = (1 + r * z) / (r + z);
      const double c = k * (r - f);
      if (c * (2 - c) - u2 > 0 || std::log(c / u2) + 1 - c >= 0) {
        const double theta = std::acos(std::clamp(f, -1.0, 1.0));
        if (theta >= std::numbers::pi) continue;  // z rounded to −1: keep inside (−π, π)
        return m + (u3 > 0.5 ? theta : -theta);
      }
    }
  }
  static double mean(double m, double) { return m; }
  /// E[(x − μ)²] on (μ − π, μ + π) (the variance of draw(); the circular variance is
  /// 1 − I₁(κ)/I₀(κ)): from θ² = π²/3 + 4 Σₙ (−1)ⁿ cos(nθ)/n² on [−π, π] and E cos(nθ) =
  /// Aₙ = Iₙ(κ)/I₀(κ) = r₁⋯rₙ, rₙ = Iₙ/Iₙ₋₁ by the backward recurrence rₙ = 1/(2n/κ + rₙ₊₁)
  /// (from A&S 9.6.26, Iₙ₋₁ − Iₙ₊₁ = (2n/κ) Iₙ) started at r_{N+1} = 0 past where Aₙ ≈
  /// e^{−n²/(2κ)} is negligible, the sum nested as r₁(c₁ + r₂(c₂ + …)). O(√κ) steps; the
  /// cancellation in π²/3 − … leaves about 1e-15·κ relative error for large κ.
  static double variance(double, double k) {
    const long n_max = 30 + static_cast<long>(10 * std::sqrt(k));
    double r = 0.0, nested = 0.0;
    for (long n = n_max; n >= 1; --n) {
      r = 1 / (2 * static_cast<double>(n) / k + r);
      const double c = (n % 2 == 1 ? -1.0 : 1.0) / (static_cast<double>(n) * static_cast<double>(n));
      nested = r * (c + nested);
    }
    return std::numbers::pi * std::numbers::pi / 3 + 4 * nested;
  }
};

/// Name ~ von_mises(mu, kappa), support (mu − π, mu + π) (mu may be an expression of other
/// variables).
template <fixed_string Name, detail::operand Mu, detail::operand Kappa, shape_tag Shape = scalar_shape>
auto von_mises(const Mu& mu, const Kappa& kappa, Shape shape = {}) {
  return detail::make_named<Name, von_mises_distribution>(shape, mu, kappa);
}
template <detail::operand Mu, detail::operand Kappa>
auto von_mises(const Mu& mu, const Kappa& kappa) {
  return detail::make_distribution<von_mises_distribution>(mu, kappa);
}

}  // namespace tyche
// ----- end tyche/distributions/von_mises.hpp -----
// ----- begin tyche/distributions/weibull.hpp -----
// tyche/distributions/weibull.hpp — weibull(alpha, sigma): shape α, scale σ (as in Stan).
//   log p(x | α, σ) = log α − log σ + (α − 1) log(x/σ) − (x/σ)^α,   x > 0, α > 0, σ > 0.

#include <cmath>
#include <random>
#include <tuple>

namespace tyche {

template <class Alpha, class Sigma>
struct weibull_distribution : distribution<weibull_distribution<Alpha, Sigma>> {
  static constexpr const char* family = "weibull";
  Alpha alpha;
  Sigma sigma;
  auto transform() const { return transforms::lower_bound<literal<0>>{}; }
  template <class X>
  auto log_prob(const X& x) const {
    const auto log_z = log(x / sigma);  // (x/σ)^α = exp(α log(x/σ)), log(x/σ) computed once
    return detail::total(log(alpha) - log(sigma) + (alpha - lit<1>) * log_z - exp(alpha * log_z));
  }
  auto arguments() const { return std::tuple{alpha, sigma}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  void check_supports() const {
    static_assert(argument_support_t<Alpha, domains::positive>::ok,
                  "tyche::weibull(alpha, sigma): alpha must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    static_assert(argument_support_t<Sigma, domains::positive>::ok,
                  "tyche::weibull(alpha, sigma): sigma must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::positive>("weibull(alpha, sigma)", "alpha", alpha);
    detail::check_argument<domains::positive>("weibull(alpha, sigma)", "sigma", sigma);
  }
  template <class G>
  static double draw(G& rng, double a, double s) { return std::weibull_distribution<double>(a, s)(rng); }
  static double mean(double a, double s) { return s * std::tgamma(1 + 1 / a); }
  static double variance(double a, double s) {
    const double g1 = std::tgamma(1 + 1 / a);
    return s * s * (std::tgamma(1 + 2 / a) - g1 * g1);
  }
  // 0 is rejected too: log(x/σ) = −∞ there, and (α − 1)·log(x/σ) is NaN for α = 1.
  static const char* observation_problem(double v) { return detail::positive_problem(v); }
};

/// Name ~ weibull(alpha, sigma) (shape alpha, scale sigma), support (0, ∞), sampled as log Name.
template <fixed_string Name, detail::operand Alpha, detail::operand Sigma, shape_tag Shape = scalar_shape>
auto weibull(const Alpha& alpha, const Sigma& sigma, Shape shape = {}) {
  return detail::make_named<Name, weibull_distribution>(shape, alpha, sigma);
}
template <detail::operand Alpha, detail::operand Sigma>
auto weibull(const Alpha& alpha, const Sigma& sigma) {
  return detail::make_distribution<weibull_distribution>(alpha, sigma);
}

}  // namespace tyche
// ----- end tyche/distributions/weibull.hpp -----
// ----- begin tyche/distributions/wishart.hpp -----
// tyche/distributions/wishart.hpp — wishart(nu, S) and inv_wishart(nu, S) on K × K covariance matrices.
//   log W(W | ν, S)  = ((ν − K − 1)/2) log det W − ½ tr(S⁻¹W) − (νK/2) log 2 − (ν/2) log det S − log Γ_K(ν/2),
//   log IW(W | ν, S) = (ν/2) log det S − (νK/2) log 2 − log Γ_K(ν/2) − ((ν + K + 1)/2) log det W − ½ tr(S W⁻¹),
//   W, S symmetric positive definite, ν > K − 1,
// with log Γ_K(a) = (K(K − 1)/4) log π + Σ_{j=1..K} log Γ(a + (1 − j)/2) (Stan Functions
// Reference, "Wishart distribution" and "Inverse Wishart distribution"); the density is with
// respect to W's lower triangle. W and S are K·K vectors (row major; only the lower triangles
// are read). A named variable takes the cov_matrix transform (transforms/matrix.hpp):
// `auto Sigma = wishart<"Sigma">(4.0, matrix(S.data(), 3, 3));`, θ holds K(K + 1)/2
// coordinates. S is a data matrix (viewed: it must outlive the model; checked symmetric and
// positive definite) or an expression of K·K parameters; ν may be a parameter. Observed data
// is one matrix: `wishart(nu, S).observe(data(w))` with w the K·K values, checked symmetric and
// positive definite. The whole density is one vector_op (autodiff/multivariate_ops.hpp) with
// its gradient in ν, W and S: two Cholesky factorisations and inverses, O(K³). Draws: the
// Bartlett decomposition W = L A Aᵀ Lᵀ (S = L Lᵀ, A lower triangular with Aᵢᵢ² ~ χ²(ν − i + 1)
// and N(0, 1) below the diagonal); inv_wishart draws X ~ wishart(ν, S⁻¹) and returns X⁻¹.
//
// Data checks (std::invalid_argument naming the entry and the value):
//   W[i, j] = v but W[j, i] = w          W is not positive definite (pivot i is v)   (observed W)
//   S[i, j] = v but S[j, i] = w          S is not positive definite (pivot i is v)   (data S)
//   nu = v must be > K - 1 = k                                                       (ν known)

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace tyche {

namespace detail {
/// One draw of a Wishart(ν, S) matrix (K·K values, row major) from the Cholesky factor l of S:
/// Bartlett's decomposition.
template <class G>
std::vector<double> draw_wishart_from_factor(G& rng, std::size_t k, double nu, const std::vector<double>& l) {
  std::normal_distribution<double> z01;
  std::vector<double> a(k * k, 0.0), la(k * k, 0.0), w(k * k);
  for (std::size_t i = 0; i < k; ++i) {
    a[i * k + i] = std::sqrt(std::chi_squared_distribution<double>(nu - double(i))(rng));
    for (std::size_t j = 0; j < i; ++j) a[i * k + j] = z01(rng);
  }
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      double acc = 0;
      for (std::size_t p = j; p <= i; ++p) acc += l[i * k + p] * a[p * k + j];
      la[i * k + j] = acc;
    }
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      double acc = 0;
      for (std::size_t p = 0; p <= j; ++p) acc += la[i * k + p] * la[j * k + p];
      w[i * k + j] = w[j * k + i] = acc;
    }
  return w;
}

/// The inverse of a symmetric positive-definite matrix (K·K values), through its Cholesky factor.
inline std::vector<double> spd_inverse(const std::vector<double>& m, std::size_t k, const char* who,
                                       const char* name) {
  const auto l = cholesky_lower(m.data(), k, who, name);
  std::vector<double> work(k * k), inv(k * k);
  inverse_from_cholesky(k, l.data(), work.data(), inv.data());
  return inv;
}

/// ν > K − 1 when ν's value is known (a number, a literal, data).
template <class Nu>
void check_wishart_nu(const Nu& nu, std::size_t k, const char* who) {
  double v = 0;
  if constexpr (kind_of<Nu> == node_kind::constant) v = nu.value;
  else if constexpr (kind_of<Nu> == node_kind::literal) v = Nu::value;
  else return;
  if (!(v > double(k) - 1.0))
    throw std::invalid_argument(std::string("tyche::") + who + ": nu = " + tyche::detail::format_number(v) + " must be > K - 1 = " +
                                std::to_string(k - 1));
}
}  // namespace detail

/// wishart(nu, S) (Inverse = false) or inv_wishart(nu, S) (Inverse = true): S a node of K·K values.
template <class Nu, class S, bool Inverse = false>
struct wishart_distribution : distribution<wishart_distribution<Nu, S, Inverse>> {
  static constexpr const char* family = Inverse ? "inv_wishart" : "wishart";
  static constexpr const char* call = Inverse ? "inv_wishart(nu, S)" : "wishart(nu, S)";
  Nu nu;
  S s;
  std::size_t k = 1;
  auto transform() const { return transforms::cov_matrix{k}; }
  template <class X>
  auto log_prob(const X& x) const {
    using N = detail::node_t<X>;
    static_assert(is_vector_v<N>, "tyche::wishart(nu, S) / inv_wishart(nu, S): x must be a vector of K*K values");
    if constexpr (!is_vector_v<N>) {
      return constant{0.0};  // the static_assert has said why
    } else {
      const N w = detail::as_node(x);
      if (w.size() != k * k)
        throw std::invalid_argument(std::string("tyche::") + call + ": x has " + std::to_string(w.size()) +
                                    " values but S is " + std::to_string(k) + " x " + std::to_string(k) +
                                    " (x needs " + std::to_string(k * k) + ", the matrix, row major)");
      return at(make_vector_op(ops::wishart_map<Inverse>{k}, 1, nu, w, s), 0);
    }
  }
  /// Checks an observed matrix (data): finite (distribution::observe), symmetric, positive definite.
  template <class X>
  auto observe(const X& x) const {
    auto o = distribution<wishart_distribution>::observe(x);
    if constexpr (kind_of<decltype(o.value)> == node_kind::data_vector) {
      if (o.value.size() != k * k)
        throw std::invalid_argument(std::string("tyche::") + family + "(...).observe(y): y has " +
                                    std::to_string(o.value.size()) + " values but S is " + std::to_string(k) + " x " +
                                    std::to_string(k) + " (y needs " + std::to_string(k * k) + ", the matrix, row major)");
      (void)detail::cholesky_lower(o.value.ptr, k, (std::string(family) + "(...).observe(y)").c_str(), "W");
    }
    return o;
  }
  auto arguments() const { return std::tuple{nu, s}; }
  template <class N2, class S2>
  auto with_arguments(const N2& n, const S2& s2) const {
    return wishart_distribution<N2, S2, Inverse>{{}, n, s2, k};
  }
  void check_supports() const {
    if constexpr (Inverse)
      static_assert(argument_support_t<Nu, domains::positive>::ok,
                    "tyche::inv_wishart(nu, S): nu must be > 0, but its support (spelled out in "
                    "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    else
      static_assert(argument_support_t<Nu, domains::positive>::ok,
                    "tyche::wishart(nu, S): nu must be > 0, but its support (spelled out in "
                    "tyche::support_is<...> in this diagnostic) is not inside (0, inf)");
    detail::check_argument<domains::positive>(call, "nu", nu);
    detail::check_wishart_nu(nu, k, call);
  }
  static constexpr bool whole_arguments = true;
  /// One draw of W (K·K values).
  template <class G>
  std::vector<double> draw_all(G& rng, std::size_t, const std::vector<double>& nv,
                               const std::vector<double>& sv) const {
    if constexpr (Inverse) {
      const auto s_inv = detail::spd_inverse(sv, k, call, "S");
      const auto x = detail::draw_wishart_from_factor(rng, k, nv[0], detail::cholesky_lower(s_inv.data(), k, call, "S"));
      return detail::spd_inverse(x, k, call, "W");
    } else {
      return detail::draw_wishart_from_factor(rng, k, nv[0], detail::cholesky_lower(sv.data(), k, call, "S"));
    }
  }
};

namespace detail {
template <bool Inverse, class Nu>
auto make_wishart(const Nu& nu, const data_matrix& s) {
  static_assert(!is_vector_v<node_t<Nu>>, "tyche::wishart(nu, S) / inv_wishart(nu, S): nu must be a scalar");
  const char* who = Inverse ? "inv_wishart(nu, S)" : "wishart(nu, S)";
  if (s.rows != s.cols || s.rows == 0)
    throw std::invalid_argument(std::string("tyche::") + who + ": S must be square and non-empty; it is " +
                                std::to_string(s.rows) + " x " + std::to_string(s.cols));
  (void)cholesky_lower(s.ptr, s.rows, who, "S");  // symmetric and positive definite, or throws
  const auto sn = data(s.ptr, s.rows * s.cols);
  const auto n = as_node(nu);
  check_wishart_nu(n, s.rows, who);
  return wishart_distribution<node_t<Nu>, std::remove_cvref_t<decltype(sn)>, Inverse>{{}, n, sn, s.rows};
}
template <bool Inverse, class Nu, class Sx>
auto make_wishart(const Nu& nu, const Sx& s) {
  static_assert(!is_vector_v<node_t<Nu>>, "tyche::wishart(nu, S) / inv_wishart(nu, S): nu must be a scalar");
  const auto sn = as_node(s);
  const std::size_t k = matrix_order(sn.size(), Inverse ? "inv_wishart(nu, S)" : "wishart(nu, S)", "S");
  const auto n = as_node(nu);
  check_wishart_nu(n, k, Inverse ? "inv_wishart(nu, S)" : "wishart(nu, S)");
  return wishart_distribution<node_t<Nu>, node_t<Sx>, Inverse>{{}, n, sn, k};
}
template <class D>
auto wishart_variable_shape(const D& d) {
  return dynamic_shape{d.transform().parameter_size()};
}
}  // namespace detail

/// The distribution wishart(nu, S) for a data scale matrix S (viewed), e.g. to observe a matrix.
template <detail::operand Nu>
auto wishart(const Nu& nu, const data_matrix& s) {
  return detail::make_wishart<false>(nu, s);
}
/// The distribution wishart(nu, S) for S an expression of K·K values (row major).
template <detail::operand Nu, class Sx>
  requires detail::matrix_expression<Sx>
auto wishart(const Nu& nu, const Sx& s) {
  return detail::make_wishart<false>(nu, s);
}
/// Name ~ wishart(nu, S): a K × K covariance matrix (cov_matrix transform).
template <fixed_string Name, detail::operand Nu, class Sx>
auto wishart(const Nu& nu, const Sx& s) {
  const auto d = wishart(nu, s);
  return detail::make_random_variable<Name>(d, detail::wishart_variable_shape(d));
}
/// The distribution inv_wishart(nu, S) for a data scale matrix S (viewed).
template <detail::operand Nu>
auto inv_wishart(const Nu& nu, const data_matrix& s) {
  return detail::make_wishart<true>(nu, s);
}
/// The distribution inv_wishart(nu, S) for S an expression of K·K values (row major).
template <detail::operand Nu, class Sx>
  requires detail::matrix_expression<Sx>
auto inv_wishart(const Nu& nu, const Sx& s) {
  return detail::make_wishart<true>(nu, s);
}
/// Name ~ inv_wishart(nu, S): a K × K covariance matrix (cov_matrix transform).
template <fixed_string Name, detail::operand Nu, class Sx>
auto inv_wishart(const Nu& nu, const Sx& s) {
  const auto d = inv_wishart(nu, s);
  return detail::make_random_variable<Name>(d, detail::wishart_variable_shape(d));
}

}  // namespace tyche
// ----- end tyche/distributions/wishart.hpp -----

#include <type_traits>

namespace tyche {

namespace detail {
/// log p(y | d), with d's argument checks and, for data y, the check of its values.
template <class Dist, class Y>
auto log_density_at(const Dist& d, const Y& y) {
  if constexpr (requires { d.check_supports(); }) d.check_supports();
  return d.observe(y).log_density();
}
}  // namespace detail

/// log bernoulli(y | p), summed over y.
template <detail::operand Y, detail::operand P>
auto bernoulli_lpmf(const Y& y, const P& p) {
  return detail::log_density_at(bernoulli(p), y);
}
/// log bernoulli_logit(y | alpha), summed over y.
template <detail::operand Y, detail::operand Alpha>
auto bernoulli_logit_lpmf(const Y& y, const Alpha& alpha) {
  return detail::log_density_at(bernoulli_logit(alpha), y);
}
/// log beta(y | a, b), summed over y.
template <detail::operand Y, detail::operand A, detail::operand B>
auto beta_lpdf(const Y& y, const A& a, const B& b) {
  return detail::log_density_at(beta(a, b), y);
}
/// log beta_binomial(y | n, a, b), summed over y.
template <detail::operand Y, detail::operand N, detail::operand A, detail::operand B>
auto beta_binomial_lpmf(const Y& y, const N& n, const A& a, const B& b) {
  return detail::log_density_at(beta_binomial(n, a, b), y);
}
/// log beta_proportion(y | mu, kappa), summed over y.
template <detail::operand Y, detail::operand Mu, detail::operand Kappa>
auto beta_proportion_lpdf(const Y& y, const Mu& mu, const Kappa& kappa) {
  return detail::log_density_at(beta_proportion(mu, kappa), y);
}
/// log binomial(y | n, p), summed over y.
template <detail::operand Y, detail::operand N, detail::operand P>
auto binomial_lpmf(const Y& y, const N& n, const P& p) {
  return detail::log_density_at(binomial(n, p), y);
}
/// log binomial_logit(y | n, alpha), summed over y.
template <detail::operand Y, detail::operand N, detail::operand Alpha>
auto binomial_logit_lpmf(const Y& y, const N& n, const Alpha& alpha) {
  return detail::log_density_at(binomial_logit(n, alpha), y);
}
/// log categorical(y | theta), summed over y.
template <detail::operand Y, detail::operand Theta>
auto categorical_lpmf(const Y& y, const Theta& theta) {
  return detail::log_density_at(categorical(theta), y);
}
/// log categorical_logit(y | beta), summed over y.
template <detail::operand Y, detail::operand Beta>
auto categorical_logit_lpmf(const Y& y, const Beta& beta) {
  return detail::log_density_at(categorical_logit(beta), y);
}
/// log cauchy(y | mu, sigma), summed over y.
template <detail::operand Y, detail::operand Mu, detail::operand Sigma>
auto cauchy_lpdf(const Y& y, const Mu& mu, const Sigma& sigma) {
  return detail::log_density_at(cauchy(mu, sigma), y);
}
/// log half_cauchy(y | sigma), summed over y.
template <detail::operand Y, detail::operand Sigma>
auto half_cauchy_lpdf(const Y& y, const Sigma& sigma) {
  return detail::log_density_at(half_cauchy(sigma), y);
}
/// log chi_square(y | nu), summed over y.
template <detail::operand Y, detail::operand Nu>
auto chi_square_lpdf(const Y& y, const Nu& nu) {
  return detail::log_density_at(chi_square(nu), y);
}
/// log dirichlet(y | alpha), summed over y.
template <detail::operand Y, detail::operand Alpha>
auto dirichlet_lpdf(const Y& y, const Alpha& alpha) {
  return detail::log_density_at(dirichlet(alpha), y);
}
/// log double_exponential(y | mu, sigma), summed over y.
template <detail::operand Y, detail::operand Mu, detail::operand Sigma>
auto double_exponential_lpdf(const Y& y, const Mu& mu, const Sigma& sigma) {
  return detail::log_density_at(double_exponential(mu, sigma), y);
}
/// log exp_mod_normal(y | mu, sigma, lambda), summed over y.
template <detail::operand Y, detail::operand Mu, detail::operand Sigma, detail::operand Lambda>
auto exp_mod_normal_lpdf(const Y& y, const Mu& mu, const Sigma& sigma, const Lambda& lambda) {
  return detail::log_density_at(exp_mod_normal(mu, sigma, lambda), y);
}
/// log exponential(y | lambda), summed over y.
template <detail::operand Y, detail::operand Lambda>
auto exponential_lpdf(const Y& y, const Lambda& lambda) {
  return detail::log_density_at(exponential(lambda), y);
}
/// log frechet(y | alpha, sigma), summed over y.
template <detail::operand Y, detail::operand Alpha, detail::operand Sigma>
auto frechet_lpdf(const Y& y, const Alpha& alpha, const Sigma& sigma) {
  return detail::log_density_at(frechet(alpha, sigma), y);
}
/// log gamma(y | alpha, beta), summed over y.
template <detail::operand Y, detail::operand Alpha, detail::operand Beta>
auto gamma_lpdf(const Y& y, const Alpha& alpha, const Beta& beta) {
  return detail::log_density_at(gamma(alpha, beta), y);
}
/// log gumbel(y | mu, beta), summed over y.
template <detail::operand Y, detail::operand Mu, detail::operand Beta>
auto gumbel_lpdf(const Y& y, const Mu& mu, const Beta& beta) {
  return detail::log_density_at(gumbel(mu, beta), y);
}
/// log half_normal(y | sigma), summed over y.
template <detail::operand Y, detail::operand Sigma>
auto half_normal_lpdf(const Y& y, const Sigma& sigma) {
  return detail::log_density_at(half_normal(sigma), y);
}
/// log half_student_t(y | nu, sigma), summed over y.
template <detail::operand Y, detail::operand Nu, detail::operand Sigma>
auto half_student_t_lpdf(const Y& y, const Nu& nu, const Sigma& sigma) {
  return detail::log_density_at(half_student_t(nu, sigma), y);
}
/// log inv_chi_square(y | nu), summed over y.
template <detail::operand Y, detail::operand Nu>
auto inv_chi_square_lpdf(const Y& y, const Nu& nu) {
  return detail::log_density_at(inv_chi_square(nu), y);
}
/// log inv_gamma(y | alpha, beta), summed over y.
template <detail::operand Y, detail::operand Alpha, detail::operand Beta>
auto inv_gamma_lpdf(const Y& y, const Alpha& alpha, const Beta& beta) {
  return detail::log_density_at(inv_gamma(alpha, beta), y);
}
/// log inv_wishart(W | nu, S) of one K × K matrix W (K·K values, row major); S a data matrix or
/// an expression of K·K values.
template <detail::operand W, detail::operand Nu, class S>
auto inv_wishart_lpdf(const W& w, const Nu& nu, const S& s) {
  return detail::log_density_at(inv_wishart(nu, s), w);
}
/// log logistic(y | mu, sigma), summed over y.
template <detail::operand Y, detail::operand Mu, detail::operand Sigma>
auto logistic_lpdf(const Y& y, const Mu& mu, const Sigma& sigma) {
  return detail::log_density_at(logistic(mu, sigma), y);
}
/// log loglogistic(y | alpha, beta), summed over y.
template <detail::operand Y, detail::operand Alpha, detail::operand Beta>
auto loglogistic_lpdf(const Y& y, const Alpha& alpha, const Beta& beta) {
  return detail::log_density_at(loglogistic(alpha, beta), y);
}
/// log lognormal(y | mu, sigma), summed over y.
template <detail::operand Y, detail::operand Mu, detail::operand Sigma>
auto lognormal_lpdf(const Y& y, const Mu& mu, const Sigma& sigma) {
  return detail::log_density_at(lognormal(mu, sigma), y);
}
/// log multi_student_t(y | nu, mu, Sigma), summed over the rows of y; Sigma a data matrix or an
/// expression of K·K values.
template <detail::operand Y, detail::operand Nu, detail::operand Mu, class Sigma>
auto multi_student_t_lpdf(const Y& y, const Nu& nu, const Mu& mu, const Sigma& sigma) {
  return detail::log_density_at(multi_student_t(nu, mu, sigma), y);
}
/// log multi_student_t_cholesky(y | nu, mu, L), summed over the rows of y.
template <detail::operand Y, detail::operand Nu, detail::operand Mu, class L>
auto multi_student_t_cholesky_lpdf(const Y& y, const Nu& nu, const Mu& mu, const L& l) {
  return detail::log_density_at(multi_student_t_cholesky(nu, mu, l), y);
}
/// log multinomial(y | theta) of one vector y of K counts.
template <detail::operand Y, detail::operand Theta>
auto multinomial_lpmf(const Y& y, const Theta& theta) {
  return detail::log_density_at(multinomial(theta), y);
}
/// log multinomial_logit(y | gamma) of one vector y of K counts.
template <detail::operand Y, detail::operand Gamma>
auto multinomial_logit_lpmf(const Y& y, const Gamma& gamma) {
  return detail::log_density_at(multinomial_logit(gamma), y);
}
/// log neg_binomial_2(y | mu, phi), summed over y.
template <detail::operand Y, detail::operand Mu, detail::operand Phi>
auto neg_binomial_2_lpmf(const Y& y, const Mu& mu, const Phi& phi) {
  return detail::log_density_at(neg_binomial_2(mu, phi), y);
}
/// log neg_binomial_2_log(y | eta, phi), summed over y.
template <detail::operand Y, detail::operand Eta, detail::operand Phi>
auto neg_binomial_2_log_lpmf(const Y& y, const Eta& eta, const Phi& phi) {
  return detail::log_density_at(neg_binomial_2_log(eta, phi), y);
}
/// log normal(y | mu, sigma), summed over y.
template <detail::operand Y, detail::operand Mu, detail::operand Sigma>
auto normal_lpdf(const Y& y, const Mu& mu, const Sigma& sigma) {
  return detail::log_density_at(normal(mu, sigma), y);
}
/// log ordered_logistic(y | eta, c), summed over y.
template <detail::operand Y, detail::operand Eta, detail::operand C>
auto ordered_logistic_lpmf(const Y& y, const Eta& eta, const C& c) {
  return detail::log_density_at(ordered_logistic(eta, c), y);
}
/// log ordered_probit(y | eta, c), summed over y.
template <detail::operand Y, detail::operand Eta, detail::operand C>
auto ordered_probit_lpmf(const Y& y, const Eta& eta, const C& c) {
  return detail::log_density_at(ordered_probit(eta, c), y);
}
/// log pareto(y | y_min, alpha), summed over y.
template <detail::operand Y, detail::operand YMin, detail::operand Alpha>
auto pareto_lpdf(const Y& y, const YMin& y_min, const Alpha& alpha) {
  return detail::log_density_at(pareto(y_min, alpha), y);
}
/// log pareto_type_2(y | mu, lambda, alpha), summed over y.
template <detail::operand Y, detail::operand Mu, detail::operand Lambda, detail::operand Alpha>
auto pareto_type_2_lpdf(const Y& y, const Mu& mu, const Lambda& lambda, const Alpha& alpha) {
  return detail::log_density_at(pareto_type_2(mu, lambda, alpha), y);
}
/// log poisson(y | lambda), summed over y.
template <detail::operand Y, detail::operand Lambda>
auto poisson_lpmf(const Y& y, const Lambda& lambda) {
  return detail::log_density_at(poisson(lambda), y);
}
/// log poisson_log(y | alpha), summed over y.
template <detail::operand Y, detail::operand Alpha>
auto poisson_log_lpmf(const Y& y, const Alpha& alpha) {
  return detail::log_density_at(poisson_log(alpha), y);
}
/// log skew_normal(y | xi, omega, alpha), summed over y.
template <detail::operand Y, detail::operand Xi, detail::operand Omega, detail::operand Alpha>
auto skew_normal_lpdf(const Y& y, const Xi& xi, const Omega& omega, const Alpha& alpha) {
  return detail::log_density_at(skew_normal(xi, omega, alpha), y);
}
/// log student_t(y | nu, mu, sigma), summed over y.
template <detail::operand Y, detail::operand Nu, detail::operand Mu, detail::operand Sigma>
auto student_t_lpdf(const Y& y, const Nu& nu, const Mu& mu, const Sigma& sigma) {
  return detail::log_density_at(student_t(nu, mu, sigma), y);
}
/// log uniform(y | a, b), summed over y.
template <detail::operand Y, detail::operand A, detail::operand B>
auto uniform_lpdf(const Y& y, const A& a, const B& b) {
  return detail::log_density_at(uniform(a, b), y);
}
/// log von_mises(y | mu, kappa), summed over y.
template <detail::operand Y, detail::operand Mu, detail::operand Kappa>
auto von_mises_lpdf(const Y& y, const Mu& mu, const Kappa& kappa) {
  return detail::log_density_at(von_mises(mu, kappa), y);
}
/// log weibull(y | alpha, sigma), summed over y.
template <detail::operand Y, detail::operand Alpha, detail::operand Sigma>
auto weibull_lpdf(const Y& y, const Alpha& alpha, const Sigma& sigma) {
  return detail::log_density_at(weibull(alpha, sigma), y);
}
/// log wishart(W | nu, S) of one K × K matrix W (K·K values, row major); S a data matrix or an
/// expression of K·K values.
template <detail::operand W, detail::operand Nu, class S>
auto wishart_lpdf(const W& w, const Nu& nu, const S& s) {
  return detail::log_density_at(wishart(nu, s), w);
}
/// log std_normal(y), summed over y.
template <detail::operand Y>
auto std_normal_lpdf(const Y& y) {
  return detail::log_density_at(std_normal(), y);
}

/// The log density of each element of y under the distribution d, a vector of y's size
/// (a scalar for a scalar y): log d(y₁), log d(y₂), … — Stan's loop
/// `for (n in 1:N) lp[n] = normal_lpdf(y[n] | mu, sigma)` is
/// `pointwise_log_density(normal(mu, sigma), data(y))`. For the emission densities of
/// hmm_marginal (operations/hmm.hpp), mixtures written by hand and pointwise log-likelihoods.
/// Checks d's arguments and y's data values as d.observe(y) does.
template <class Dist, detail::operand Y>
  requires distribution_family<Dist>
auto pointwise_log_density(const Dist& d, const Y& y) {
  const auto summed = detail::log_density_at(d, y);
  using S = std::remove_cvref_t<decltype(summed)>;
  if constexpr (!is_vector_v<detail::node_t<Y>>) {
    return summed;
  } else {
    static_assert(kind_of<S> == node_kind::sum,
                  "tyche::pointwise_log_density(d, y): this family's log density of a vector y is not "
                  "a sum of elementwise terms (a multivariate family); use its *_lpdf instead");
    return summed.a;
  }
}

}  // namespace tyche
// ----- end tyche/distributions/log_densities.hpp -----
// ----- begin tyche/distributions/log_mix.hpp -----
// tyche/distributions/log_mix.hpp — log_mix(theta, lp1, lp2): the log density of a two-component
// mixture from the components' log densities (Stan's log_mix),
//   log_mix(θ, λ₁, λ₂) = log(θ e^λ₁ + (1 − θ) e^λ₂),   0 ≤ θ ≤ 1,
// elementwise for vector operands (sum the result for a vector of observations). Note that a
// family's log_prob(y) is already summed over y, so log_mix(θ, normal(m1, s).log_prob(data(y)),
// normal(m2, s).log_prob(data(y))) mixes the whole data set at once; for a mixture per
// observation, pass elementwise log densities written out (e.g. −½((data(y) − m1)/s)² − log s − …).
//
// Computed as log_add_exp(log θ + λ₁, log(1 − θ) + λ₂) (rules::log_add_exp: max(a, b) +
// log1p(e^−|a − b|)): per element one exp and one log1p, nothing overflows, and log θ and
// log(1 − θ) of a scalar θ are computed once, outside the loop over observations. For θ =
// logistic(u) (a beta or uniform(0, 1) variable) they are log_logistic(u) and log1m_logistic(u),
// finite for every u. At θ = 0 (θ = 1) the result is exactly λ₂ (λ₁). Not defined when λ₁ and λ₂
// are both −∞.
// θ is checked: compilation fails when its support has no point in [0, 1]; a θ that depends on
// no parameter (a number, data) must lie in [0, 1] or the call throws.

namespace tyche {

/// log(θ e^lp1 + (1 − θ) e^lp2), without overflow: `sum(log_mix(theta, lp1_vector, lp2_vector))`.
template <detail::operand Theta, detail::operand Lp1, detail::operand Lp2>
  requires(expression<Theta> || expression<Lp1> || expression<Lp2>)
auto log_mix(const Theta& theta, const Lp1& lp1, const Lp2& lp2) {
  using T = detail::node_t<Theta>;
  static_assert(operand_support_t<T, domains::probability>::ok,
                "tyche::log_mix(theta, lp1, lp2): theta must be in [0, 1], but its support (spelled "
                "out in tyche::support_is<...> in this diagnostic) has no point in [0, 1]");
  const auto t = detail::as_node(theta);
  if constexpr (!depends_on_params_v<T>) {
    // θ known when the model is built (a number, data): every value must be in [0, 1].
    detail::check_argument<domains::probability>("log_mix(theta, lp1, lp2)", "theta", t);
  }
  return log_add_exp(log(t) + detail::as_node(lp1), log1m(t) + detail::as_node(lp2));
}

}  // namespace tyche
// ----- end tyche/distributions/log_mix.hpp -----
// ----- begin tyche/distributions/mixture.hpp -----
// tyche/distributions/mixture.hpp — log_mix(theta, d1, d2), the mixture of two distributions, and
// log_mix(theta, d1, …, dK) of K ≥ 3 with a vector of weights.
//   p(y) = θ p₁(y) + (1 − θ) p₂(y),  0 ≤ θ ≤ 1,  for any two families d₁, d₂.
//   Observing a vector mixes each observation separately (Stan: a loop over n of
//   target += log_mix(theta, normal_lpdf(y[n] | …), normal_lpdf(y[n] | …))):
//     log_mix(theta, normal(mu[0], sigma[0]), normal(mu[1], sigma[1])).observe(data(y))
//   is Σₙ log(θ N(yₙ | μ₁, σ₁) + (1 − θ) N(yₙ | μ₂, σ₂)), each term by the stable log_mix of
//   log_mix.hpp. pointwise_log_prob(d, y) is the vector of one family's log densities.

#include <array>
#include <concepts>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace tyche {

/// The log density of distribution d at each element of x: a vector expression for a vector x
/// (a family's log_prob is the sum of these), a scalar one for a scalar x.
template <class Dist, class X>
  requires std::derived_from<Dist, distribution<Dist>>
auto pointwise_log_prob(const Dist& d, const X& x) {
  const auto node = detail::as_node(x);
  const auto lp = d.log_prob(node);
  if constexpr (is_vector_v<decltype(node)>) {
    static_assert(kind_of<decltype(lp)> == node_kind::sum,
                  "tyche::pointwise_log_prob(d, y): this family's log density is not a plain sum "
                  "of one term per element of y");
    return lp.a;
  } else {
    return lp;
  }
}

/// θ d₁ + (1 − θ) d₂.
template <class Theta, class D1, class D2>
struct mixture_distribution : distribution<mixture_distribution<Theta, D1, D2>> {
  static constexpr const char* family = "log_mix";
  Theta theta;
  D1 first;
  D2 second;
  auto transform() const {
    static_assert(std::is_same_v<decltype(first.transform()), decltype(second.transform())>,
                  "tyche::log_mix(theta, d1, d2) as a prior: d1 and d2 must have the same support");
    return first.transform();
  }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(log_mix(theta, pointwise_log_prob(first, x), pointwise_log_prob(second, x)));
  }
  auto arguments() const { return std::tuple_cat(std::tuple{theta}, first.arguments(), second.arguments()); }
  /// The components' argument checks (interval/support.hpp); θ is checked by log_mix.
  void check_supports() const {
    if constexpr (requires { first.check_supports(); }) first.check_supports();
    if constexpr (requires { second.check_supports(); }) second.check_supports();
  }

  static constexpr std::size_t arity1 = std::tuple_size_v<decltype(std::declval<D1>().arguments())>;
  /// A draw: component 1 with probability θ, else component 2.
  template <class G, class... A>
  static double draw(G& rng, double t, A... a) {
    const std::tuple<A...> args{a...};
    const bool first_component = std::uniform_real_distribution<double>(0.0, 1.0)(rng) < t;
    return [&]<std::size_t... I, std::size_t... J>(std::index_sequence<I...>, std::index_sequence<J...>) {
      return first_component ? D1::draw(rng, std::get<I>(args)...)
                             : D2::draw(rng, std::get<arity1 + J>(args)...);
    }(std::make_index_sequence<arity1>{}, std::make_index_sequence<sizeof...(A) - arity1>{});
  }
};

/// Σₖ θₖ dₖ for K ≥ 3 components and a vector θ of K weights (a simplex parameter, or data):
/// log p(x) = log Σₖ exp(log θₖ + log pₖ(x)), per observation, as K − 1 stable log_add_exp.
template <class Theta, class... Ds>
struct mixture_n_distribution : distribution<mixture_n_distribution<Theta, Ds...>> {
  static constexpr const char* family = "log_mix";
  static constexpr std::size_t K = sizeof...(Ds);
  Theta theta;
  std::tuple<Ds...> components;

  template <std::size_t I, class X>
  auto term(const X& x) const {
    return log(at(theta, I)) + pointwise_log_prob(std::get<I>(components), x);
  }
  template <std::size_t I, class Acc, class X>
  auto mix_from(const Acc& acc, const X& x) const {
    if constexpr (I == K) return acc;
    else return mix_from<I + 1>(log_add_exp(acc, term<I>(x)), x);
  }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(mix_from<1>(term<0>(x), x));
  }
  auto arguments() const {
    return std::apply([&](const auto&... d) { return std::tuple_cat(std::tuple{theta}, d.arguments()...); },
                      components);
  }
  /// The components' argument checks (interval/support.hpp); θ's size and values are checked when
  /// the mixture is made (log_mix).
  void check_supports() const {
    std::apply([](const auto&... d) {
      auto one = [](const auto& c) {
        if constexpr (requires { c.check_supports(); }) c.check_supports();
      };
      (one(d), ...);
    }, components);
  }

  /// Draws: θ is one vector for every draw, so the arguments come whole (model.hpp).
  static constexpr bool whole_arguments = true;
  template <class G, class... A>
  std::vector<double> draw_all(G& rng, std::size_t n, const std::vector<double>& t, const A&... a) const {
    const std::array<const std::vector<double>*, sizeof...(A)> args{&a...};
    constexpr std::array<std::size_t, K> arity{
        std::tuple_size_v<decltype(std::declval<Ds>().arguments())>...};
    std::vector<double> out(n);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (std::size_t i = 0; i < n; ++i) {
      double total = 0;
      for (double w : t) total += w;
      double r = u(rng) * total;
      std::size_t k = 0;
      while (k + 1 < K && r >= t[k]) r -= t[k++];
      meta::static_for<K>([&](auto c) {
        constexpr std::size_t C = decltype(c)::value;
        if (C != k) return;
        constexpr std::size_t offset = [&] {
          std::size_t o = 0;
          for (std::size_t j = 0; j < C; ++j) o += arity[j];
          return o;
        }();
        using D = std::tuple_element_t<C, std::tuple<Ds...>>;
        out[i] = [&]<std::size_t... J>(std::index_sequence<J...>) {
          return D::draw(rng, (args[offset + J]->size() == 1 ? (*args[offset + J])[0] : (*args[offset + J])[i])...);
        }(std::make_index_sequence<arity[C]>{});
      });
    }
    return out;
  }
};

/// The mixture θ d₁ + (1 − θ) d₂ of two distributions: observe it, or name it as a prior
/// (`log_mix<"x">(theta, d1, d2)`, when d1 and d2 have the same support).
template <detail::operand Theta, class D1, class D2>
  requires(std::derived_from<D1, distribution<D1>> && std::derived_from<D2, distribution<D2>>)
auto log_mix(const Theta& theta, const D1& d1, const D2& d2) {
  return mixture_distribution<detail::node_t<Theta>, D1, D2>{{}, detail::as_node(theta), d1, d2};
}
template <fixed_string Name, detail::operand Theta, class D1, class D2, shape_tag Shape = scalar_shape>
  requires(std::derived_from<D1, distribution<D1>> && std::derived_from<D2, distribution<D2>>)
auto log_mix(const Theta& theta, const D1& d1, const D2& d2, Shape shape = {}) {
  return detail::make_random_variable<Name>(log_mix(theta, d1, d2), shape);
}

/// The mixture Σₖ θₖ dₖ of K ≥ 3 distributions with a vector θ of K weights in [0, 1] (a
/// simplex parameter, or data): `log_mix(theta, normal(m1, s1), normal(m2, s2), normal(m3, s3))
/// .observe(data(y))`, Stan's `log_mix(theta, {normal_lpdf(y | m1, s1), …})` per observation.
/// Observe it; as a named prior, use two components or write the density out.
template <detail::operand Theta, class D1, class D2, class D3, class... Ds>
  requires(std::derived_from<D1, distribution<D1>> && std::derived_from<D2, distribution<D2>> &&
           std::derived_from<D3, distribution<D3>> && (std::derived_from<Ds, distribution<Ds>> && ...))
auto log_mix(const Theta& theta, const D1& d1, const D2& d2, const D3& d3, const Ds&... ds) {
  using T = detail::node_t<Theta>;
  static_assert(is_vector_v<T>, "tyche::log_mix(theta, d1, d2, d3, ...): theta must be a vector of one "
                                "weight per component (e.g. a simplex parameter)");
  const T t = detail::as_node(theta);
  constexpr std::size_t k = 3 + sizeof...(Ds);
  if (t.size() != k)
    throw std::invalid_argument("tyche::log_mix(theta, d1, ..., dK): theta has size " + std::to_string(t.size()) +
                                " but there are " + std::to_string(k) + " components");
  if constexpr (kind_of<T> == node_kind::data_vector) {
    for (std::size_t i = 0; i < k; ++i)
      if (!(t.ptr[i] >= 0 && t.ptr[i] <= 1))
        throw std::invalid_argument("tyche::log_mix(theta, d1, ..., dK): theta must be in [0, 1], but theta[" +
                                    std::to_string(i + 1) + "] = " + std::to_string(t.ptr[i]) + " (data)");
  }
  return mixture_n_distribution<T, D1, D2, D3, Ds...>{{}, t, std::tuple{d1, d2, d3, ds...}};
}

}  // namespace tyche
// ----- end tyche/distributions/mixture.hpp -----
// ----- end tyche/distributions.hpp -----
// ----- begin tyche/model/joint.hpp -----
// tyche/model/joint.hpp — joint(...): the random variables and likelihood terms of a model,
// and from them its log density (priors, log-Jacobians, likelihoods) as one core expression.

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>

namespace tyche {

/// A free term of the log density, made by target(e): Stan's `target += e`.
template <class E>
struct log_density_term {
  E value;
  auto log_density() const { return value; }
};

/// Adds e to the model's log density (Stan's `target += e`, NumPyro's `factor`, PyMC's
/// `Potential`): `joint(mu, sigma, target(log_sum_exp(lp)))`. e is any scalar expression of the
/// parameters and data, or a vector expression (its elements are summed). The term is added as
/// written, on the scale of the parameters it is written in: when e stands for the density of a
/// *transformed* parameter, the log-Jacobian of that transform is the user's to add (a random
/// variable's own transform, from its declaration, is accounted for by the library as always).
template <detail::operand E>
auto target(const E& e) {
  using N = detail::node_t<E>;
  if constexpr (is_vector_v<N>) {
    auto total = sum(detail::as_node(e));
    return log_density_term<decltype(total)>{total};
  } else {
    return log_density_term<N>{detail::as_node(e)};
  }
}

namespace detail {
template <class T>
struct is_log_density_term : std::false_type {};
template <class E>
struct is_log_density_term<log_density_term<E>> : std::true_type {};
template <class T>
struct is_random_variable : std::false_type {};
template <fixed_string Name, class Dist, class Shape>
struct is_random_variable<random_variable<Name, Dist, Shape>> : std::true_type {};
template <class T>
struct is_observed : std::false_type {};
template <class Dist, class X>
struct is_observed<observed<Dist, X>> : std::true_type {};

template <class L, class T>
struct append_if_variable {
  using type = L;
};
template <class... Ls, class T>
  requires is_random_variable<T>::value
struct append_if_variable<meta::list<Ls...>, T> {
  using type = meta::list<Ls..., T>;
};
template <class L, class... Ts>
struct variables_of {
  using type = L;
};
template <class L, class T, class... Ts>
struct variables_of<L, T, Ts...> {
  using type = typename variables_of<typename append_if_variable<L, T>::type, Ts...>::type;
};

template <class L>
struct params_of_variables;
template <class... Vs>
struct params_of_variables<meta::list<Vs...>> {
  using type = meta::list<typename Vs::param_type...>;
};

/// The support checks of a term's distribution (its arguments against their domains): static
/// assertions where the types decide, std::invalid_argument where constants or data do. They
/// run here, when a model is assembled, and not when a distribution is made: a density written
/// over bare parameters to be evaluated at chosen points (tests, compile(dist.log_prob(x), ...))
/// is not a model and is not checked (docs/design/partial-evaluation.md, "Supports and checks").
template <class T>
void check_term_supports(const T& term) {
  if constexpr (requires { term.distribution.check_supports(); }) term.distribution.check_supports();
}

/// Instantiated for a parameter P that the model's density uses but no random variable of the
/// joint declares: the diagnostic names P (its name is the template argument).
template <class P>
constexpr bool variable_missing_from_joint() {
  static_assert(sizeof(P) == 0,
                "tyche::joint(terms...): a random variable is used in the model but not listed in "
                "joint(...): add it to joint(...). Its name is in 'P = tyche::param<...>' of this "
                "diagnostic (clang writes the name's characters as numbers)");
  return false;
}
/// True when every parameter of Used is declared in Layout (by name); else the diagnostic above.
template <class Layout, class Used>
constexpr bool every_variable_listed() {
  return []<class... Us>(meta::list<Us...>) {
    return ([]<class U>(std::type_identity<U>) {
      constexpr bool listed = []<class... Ls>(meta::list<Ls...>) { return ((Ls::name == U::name) || ...); }(Layout{});
      if constexpr (listed) return true;
      else return variable_missing_from_joint<U>();
    }(std::type_identity<Us>{}) && ...);
  }(Used{});
}

/// "data#k" for the k-th data leaf of a term, or the name it was given (data(y, "y")).
template <class N>
std::string data_label(const N& n, std::size_t k) {
  return n.name ? std::string(n.name) : "data#" + std::to_string(k);
}

/// The first value below node n that no model can use: a data value that is NaN or infinite,
/// or a constant that is NaN ("" when there is none). count numbers the data leaves met.
template <class N>
std::string first_non_finite(const N& n, std::size_t& count) {
  if constexpr (kind_of<N> == node_kind::data_vector) {
    ++count;
    for (std::size_t i = 0; i < n.size(); ++i)
      if (!std::isfinite(n.ptr[i]))
        return data_label(n, count) + "[" + std::to_string(i + 1) + "] = " + number_to_string(n.ptr[i]);
    return {};
  } else if constexpr (kind_of<N> == node_kind::data_matrix) {
    ++count;
    for (std::size_t i = 0; i < n.rows * n.cols; ++i)
      if (!std::isfinite(n.ptr[i]))
        return data_label(n, count) + "[" + std::to_string(i / n.cols + 1) + ", " + std::to_string(i % n.cols + 1) +
               "] = " + number_to_string(n.ptr[i]);
    return {};
  } else if constexpr (kind_of<N> == node_kind::constant) {
    return std::isnan(n.value) ? std::string("a constant = nan") : std::string();
  } else if constexpr (kind_of<N> == node_kind::vector_op && requires { N::op_type::checks_own_data; }) {
    return {};  // an op that checked its data operands when it was made (hmm_marginal)
  } else if constexpr (children_t<N>::size > 0 && requires { n.template child<0>(); }) {
    std::string found;
    meta::static_for<children_t<N>::size>([&](auto c) {
      if (found.empty()) found = first_non_finite(n.template child<decltype(c)::value>(), count);
    });
    return found;
  } else {
    return {};
  }
}

/// "has 8 values" for a vector node, "is a scalar" for a scalar.
template <class N>
std::string size_text(const N& n) {
  if constexpr (is_vector_v<N>) return "has " + std::to_string(n.size()) + " values";
  else return "is a scalar";
}

/// " (uses theta, tau)": the random variables whose parameters node N reads ("" for none).
template <class N>
std::string uses_text() {
  std::string out;
  [&]<class... Ps>(meta::list<Ps...>) {
    ((out += (out.empty() ? "" : ", ") + std::string(Ps::name.view())), ...);
  }(params_of<N>{});
  return out.empty() ? out : " (uses " + out + ")";
}

/// What a term is, for messages: "the random variable 'mu' (normal)", "normal(...).observe(y)
/// (y has 7 values, argument 1 has 8 values, argument 2 is a scalar)", "target(...)".
template <class T>
std::string describe_term(const T& t) {
  // Built by appending: g++ 12 at -O2 warns (-Warray-bounds, a false positive in its
  // std::string operator+ chains, GCC PR 105651) on `std::string(a) + "..." + b` here.
  std::string text;
  if constexpr (is_random_variable<T>::value) {
    text += "the random variable '";
    text += T::name.view();
    text += "' (";
    text += T::distribution_type::family;
    text += ")";
    return text;
  } else if constexpr (is_observed<T>::value) {
    text += std::remove_cvref_t<decltype(t.distribution)>::family;
    text += "(...).observe(y) (y ";
    text += size_text(as_node(t.value));
    std::size_t k = 0;
    std::apply([&](const auto&... a) { ((text += ", argument " + std::to_string(++k) + " " + size_text(as_node(a)) + uses_text<node_t<decltype(a)>>()), ...); },
               t.distribution.arguments());
    text += ")";
    return text;
  } else {
    (void)t;
    text += "target(...)";
    return text;
  }
}

/// Term `index` of joint(...) (1-based) checked for data that no model can use: NaN or
/// infinite data values (covariates, scales, bounds; an observed y is checked by observe()
/// already) and NaN constants. Throws std::invalid_argument naming the term, the data (its
/// name or its place) and the index.
template <class T>
void check_term_data(const T& t, std::size_t index) {
  std::size_t count = 0;
  std::string found;
  if constexpr (is_random_variable<T>::value || is_observed<T>::value) {
    std::size_t k = 0;
    std::apply([&](const auto&... a) {
      ((found.empty() ? (++k, found = first_non_finite(as_node(a), count)) : found), ...);
    }, t.distribution.arguments());
    if (!found.empty()) found = "argument " + std::to_string(k) + " reads " + found;
  } else {
    found = first_non_finite(as_node(t.value), count);
    if (!found.empty()) found = "it reads " + found;
  }
  if (!found.empty())
    throw std::invalid_argument("tyche::joint(...): term " + std::to_string(index) + ", " + describe_term(t) +
                                ": " + found + "; data must be finite (remove or impute the value)");
}

/// a + b, where a literal 0 on either side is dropped.
template <class A, class B>
auto add_terms(const A& a, const B& b) {
  if constexpr (std::is_same_v<A, literal<0>>) return b;
  else if constexpr (std::is_same_v<B, literal<0>>) return a;
  else return a + b;
}
}  // namespace detail

/// A model's random variables (parameters, in θ order) and likelihood terms.
template <class... Terms>
struct joint_t {
  std::tuple<Terms...> terms;

  /// The random variables, in the order given.
  using variables = typename detail::variables_of<meta::list<>, Terms...>::type;
  /// Their parameters: the layout of θ.
  using layout = typename detail::params_of_variables<variables>::type;

  /// The parameters of the random variables, in θ order (a std::tuple).
  auto parameters() const {
    return std::apply(
        [](const auto&... t) {
          return std::tuple_cat([](const auto& term) {
            if constexpr (detail::is_random_variable<std::remove_cvref_t<decltype(term)>>::value)
              return std::tuple{term.parameter};
            else return std::tuple<>{};
          }(t)...);
        },
        terms);
  }

  /// The log density on the unconstrained space: Σ log priors (+ Σ log-Jacobians when
  /// Jacobian) + Σ log-likelihoods.
  template <bool Jacobian>
  auto log_density() const {
    return std::apply([](const auto&... t) { return sum_terms(term<Jacobian>(t)...); }, terms);
  }

 private:
  template <bool Jacobian, class T>
  static auto term(const T& t) {
    // A term whose log density cannot be built (vectors of different sizes, …) is named, with
    // the sizes of y and the arguments.
    try {
      if constexpr (detail::is_random_variable<T>::value) {
        if constexpr (Jacobian) return detail::add_terms(detail::as_node(t.log_prior()), detail::as_node(t.log_jacobian()));
        else return detail::as_node(t.log_prior());
      } else {
        return detail::as_node(t.log_density());
      }
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("tyche::joint(...): " + detail::describe_term(t) + ": " + e.what());
    }
  }
  template <class First, class... Rest>
  static auto sum_terms(const First& first, const Rest&... rest) {
    if constexpr (sizeof...(Rest) == 0) return first;
    else return detail::add_terms(first, sum_terms(rest...));
  }
};

/// The joint distribution of random variables and observations: `joint(mu, tau, y_obs)`.
/// Random variables are laid out in θ in the order given.
template <class... Terms>
auto joint(const Terms&... terms) {
  static_assert(sizeof...(Terms) > 0, "tyche::joint(...) requires at least one term");
  static_assert(((detail::is_random_variable<Terms>::value || detail::is_observed<Terms>::value ||
                  detail::is_log_density_term<Terms>::value) &&
                 ...),
                "tyche::joint(terms...) requires every term to be a named random variable "
                "(normal<\"mu\">(0, 1)), an observation (normal(mu, 1).observe(data(y))) or a "
                "free log-density term (target(e))");
  using J = joint_t<Terms...>;
  static_assert(meta::unique<meta::same, typename J::variables>::size == J::variables::size,
                "tyche::joint(terms...): a random variable is listed twice");
  using used = params_of<detail::node_t<decltype(std::declval<const J&>().template log_density<true>())>>;
  static_assert(detail::every_variable_listed<typename J::layout, used>(),
                "tyche::joint(terms...): every random variable the model uses must be listed");
  (detail::check_term_supports(terms), ...);
  std::size_t index = 0;
  (detail::check_term_data(terms, ++index), ...);
  return J{{terms...}};
}

}  // namespace tyche
// ----- end tyche/model/joint.hpp -----
// ----- begin tyche/model/model.hpp -----
// tyche/model/model.hpp — model(joint): the compiled log density of a joint distribution on the
// unconstrained space, with and without the log-Jacobian, parameter names, constrain /
// unconstrain, Stan-style random initialisation, prior and posterior predictive sampling.

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <functional>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace tyche {

template <class Joint>
class model_t {
 public:
  using joint_type = Joint;
  using layout = typename Joint::layout;
  using variables = typename Joint::variables;

  explicit model_t(const Joint& joint)
      : joint_(joint), with_jacobian_(compile_density<true>(joint)),
        without_jacobian_(compile_density<false>(joint)) {}

  /// Number of unconstrained parameters.
  [[nodiscard]] std::size_t dim() const { return with_jacobian_.dim(); }

  /// Number of constrained values: what constrain() returns and unconstrain() takes. It is
  /// dim() unless the model has a matrix variable (cholesky_factor_corr, cov_matrix, …), whose
  /// K² entries are its values while θ holds only its free coordinates.
  [[nodiscard]] std::size_t constrained_dim() const {
    std::size_t n = 0;
    for_each_variable([&](const auto& v, std::size_t) { n += detail::value_count(v.value_expression()); });
    return n;
  }

  /// Names of the constrained values, Stan style: "mu", "theta[1]", "theta[2]", …, and for a
  /// K × K matrix variable "L[1,1]", "L[1,2]", …, "L[K,K]" (row major; CmdStan's CSV writes
  /// L.1.1 and orders a matrix by column, which readers match by name). For models without
  /// matrix variables these are also the names of the coordinates of θ.
  [[nodiscard]] std::vector<std::string> parameter_names() const {
    std::vector<std::string> names;
    for_each_variable([&](const auto& v, std::size_t) {
      using V = std::remove_cvref_t<decltype(v)>;
      const std::string name(V::name.view());
      if constexpr (matrix_transform<V>) {
        const std::size_t k = v.transform().order();
        for (std::size_t i = 1; i <= k; ++i)
          for (std::size_t j = 1; j <= k; ++j)
            names.push_back(name + "[" + std::to_string(i) + "," + std::to_string(j) + "]");
      } else if constexpr (kind_of<typename V::param_type> == node_kind::vector_param) {
        for (std::size_t i = 1; i <= v.size(); ++i) names.push_back(name + "[" + std::to_string(i) + "]");
      } else {
        names.push_back(name);
      }
    });
    return names;
  }

  /// log p(θ) on the unconstrained space; with jacobian = false, without the log-Jacobian.
  [[nodiscard]] double log_prob(std::span<const double> theta, bool jacobian = true) const {
    return jacobian ? with_jacobian_.value(theta, workspace(theta))
                    : without_jacobian_.value(theta, workspace(theta));
  }
  [[nodiscard]] double log_prob(const std::vector<double>& theta, bool jacobian = true) const {
    return log_prob(std::span<const double>(theta), jacobian);
  }
  /// log p(θ) and its gradient, written to grad.
  double log_prob_and_gradient(std::span<const double> theta, std::span<double> grad,
                               bool jacobian = true) const {
    return jacobian ? with_jacobian_.value_and_gradient(theta, grad, workspace(theta))
                    : without_jacobian_.value_and_gradient(theta, grad, workspace(theta));
  }
  double log_prob_and_gradient(const std::vector<double>& theta, std::vector<double>& grad,
                               bool jacobian = true) const {
    return log_prob_and_gradient(std::span<const double>(theta), std::span<double>(grad), jacobian);
  }

  /// The compiled log density (with the log-Jacobian): evaluate it for any scalar type, with a
  /// caller-owned workspace and no allocation (program::value_and_gradient, program::view()).
  [[nodiscard]] const auto& program() const { return with_jacobian_; }
  [[nodiscard]] const auto& program_without_jacobian() const { return without_jacobian_; }

  /// The constrained values of θ, in layout order: constrained_dim() values (the length of θ
  /// unless a matrix variable gives its K² entries).
  [[nodiscard]] std::vector<double> constrain(std::span<const double> theta) const {
    check_size(theta.size(), "constrain");
    std::vector<double> out(constrained_dim());
    std::size_t at_value = 0;
    for_each_variable([&](const auto& v, std::size_t) {
      detail::evaluate_at<layout>(v.value_expression(), layout_(), theta.data(), out.data() + at_value);
      at_value += detail::value_count(v.value_expression());
    });
    return out;
  }
  [[nodiscard]] std::vector<double> constrain(const std::vector<double>& theta) const {
    return constrain(std::span<const double>(theta));
  }

  /// θ from constrained values (the inverse of constrain). A value outside its variable's
  /// support throws, naming the variable, the index and the value.
  [[nodiscard]] std::vector<double> unconstrain(std::span<const double> values) const {
    if (values.size() != constrained_dim())
      throw std::invalid_argument("tyche::model::unconstrain: got " + std::to_string(values.size()) +
                                  " values, expected " + std::to_string(constrained_dim()));
    std::vector<double> theta(dim(), 0.0);
    std::size_t at_value = 0;
    for_each_variable([&](const auto& v, std::size_t k) {
      if constexpr (whole_vector_transform<decltype(v)>) {
        unconstrain_whole(v, values.data() + at_value, theta.data() + offset(k));
      } else {
        for (std::size_t i = 0; i < v.size(); ++i)
          theta[offset(k) + i] = unconstrain_one(v, values[at_value + i], i, theta);
      }
      at_value += detail::value_count(v.value_expression());
    });
    return theta;
  }
  [[nodiscard]] std::vector<double> unconstrain(const std::vector<double>& values) const {
    return unconstrain(std::span<const double>(values));
  }

  /// Stan's default initialisation: every coordinate of θ uniform on (−2, 2).
  template <class Generator>
  [[nodiscard]] std::vector<double> initial_point(Generator& rng, double radius = 2.0) const {
    std::uniform_real_distribution<double> u(-radius, radius);
    std::vector<double> theta(dim());
    for (auto& t : theta) t = u(rng);
    return theta;
  }

  /// A draw from the prior: each random variable in order, given the ones before it. Returns
  /// constrained values in layout order.
  template <class Generator>
  [[nodiscard]] std::vector<double> sample_prior(Generator& rng) const {
    std::vector<double> theta(dim(), 0.0), values(constrained_dim(), 0.0);
    std::size_t at_value = 0;
    for_each_variable([&](const auto& v, std::size_t k) {
      const std::size_t n = detail::value_count(v.value_expression());
      auto draws = draw_from(v.distribution, n, theta, rng);
      if constexpr (matrix_transform<decltype(v)>) {  // the family draws the whole matrix
        std::copy(draws.begin(), draws.end(), values.begin() + at_value);
        unconstrain_whole(v, draws.data(), theta.data() + offset(k));
      } else if constexpr (whole_vector_transform<decltype(v)>) {
        using Tr = decltype(v.transform());
        Tr::restrict_draws(draws, [&](std::size_t i) {
          return draw_from(v.distribution, v.size(), theta, rng)[i];
        });
        std::copy(draws.begin(), draws.end(), values.begin() + at_value);
        unconstrain_whole(v, draws.data(), theta.data() + offset(k));
      } else {
        for (std::size_t i = 0; i < v.size(); ++i) {
          values[at_value + i] = draws[i];
          theta[offset(k) + i] = unconstrain_one(v, draws[i], i, theta);
        }
      }
      at_value += n;
    });
    return values;
  }

  /// A posterior (or prior) predictive draw of every observation, given θ (unconstrained):
  /// one vector per observed term, in the order of the joint.
  template <class Generator>
  [[nodiscard]] std::vector<std::vector<double>> sample_observations(std::span<const double> theta,
                                                                      Generator& rng) const {
    check_size(theta.size(), "sample_observations");
    std::vector<double> th(theta.begin(), theta.end());
    std::vector<std::vector<double>> out;
    std::apply(
        [&](const auto&... t) {
          (
              [&] {
                if constexpr (detail::is_observed<std::remove_cvref_t<decltype(t)>>::value)
                  out.push_back(draw_from(t.distribution, detail::value_count(t.value), th, rng));
              }(),
              ...);
        },
        joint_.terms);
    return out;
  }

  [[nodiscard]] const Joint& joint() const { return joint_; }

 private:
  // Every variable's parameter is listed, so a variable whose density does not involve it
  // (a flat prior, a uniform) still has its place in θ (with gradient 0).
  template <bool Jacobian>
  static auto compile_density(const Joint& joint) {
    return std::apply(
        [&](const auto&... p) {
          return detail::compile_with_layout<layout>(joint.template log_density<Jacobian>(), p...);
        },
        joint.parameters());
  }

  const detail::param_offsets<layout>& layout_() const { return with_jacobian_.view().layout; }
  std::size_t offset(std::size_t k) const { return with_jacobian_.offset(k); }

  template <class F>
  void for_each_variable(F&& f) const {
    std::size_t k = 0;
    std::apply(
        [&](const auto&... t) {
          (
              [&] {
                if constexpr (detail::is_random_variable<std::remove_cvref_t<decltype(t)>>::value)
                  f(t, k++);
              }(),
              ...);
        },
        joint_.terms);
  }

  // Scratch space for matvec buffers: one per thread, so a model can be evaluated from several
  // threads at once (the sampler runs chains on threads).
  std::span<double> workspace(std::span<const double>) const {
    thread_local std::vector<double> ws;
    const std::size_t need = std::max(with_jacobian_.workspace_size(), without_jacobian_.workspace_size());
    if (ws.size() < need) ws.resize(need);
    return std::span<double>(ws.data(), need);
  }

  void check_size(std::size_t n, const char* fn) const {
    if (n != dim())
      throw std::invalid_argument(std::string("tyche::model::") + fn + ": got " + std::to_string(n) +
                                  " values, expected " + std::to_string(dim()));
  }

  /// Value of expression e (element i, or its only value) at θ.
  template <class E>
  double value_at(const E& e, std::size_t i, const std::vector<double>& theta) const {
    const std::vector<double> v = values_of(e, theta);
    return v.size() == 1 ? v[0] : v[i];
  }

  /// Variables whose transform maps the whole vector at once (ordered, positive_ordered).
  template <class V>
  static constexpr bool whole_vector_transform =
      requires(const std::remove_cvref_t<V>& v) {
        requires decltype(v.transform())::whole_vector;
      };

  /// Variables whose value is a K × K matrix (transforms/matrix.hpp).
  template <class V>
  static constexpr bool matrix_transform =
      requires(const std::remove_cvref_t<V>& v) {
        requires decltype(v.transform())::matrix_valued;
      };

  /// θ of a variable with a whole-vector transform from its constrained values x.
  template <class V>
  void unconstrain_whole(const V& v, const double* x, double* u) const {
    using Tr = decltype(v.transform());
    std::size_t k = 0;
    std::string problem, where;
    if constexpr (matrix_transform<V>) {
      const auto tr = v.transform();
      problem = tr.unconstrain_matrix(x, u, k);
      where = std::to_string(k / tr.order() + 1) + "," + std::to_string(k % tr.order() + 1);
    } else {
      problem = Tr::unconstrain_vector(x, u, v.size(), k);
      where = std::to_string(k + 1);
    }
    if (!problem.empty())
      throw std::invalid_argument("tyche::model::unconstrain: " + std::string(V::name.view()) + "[" +
                                  where + "] = " + tyche::detail::format_number(x[k]) + " " + problem);
  }

  /// The unconstrained coordinate of element i of variable v with constrained value x, bounds
  /// evaluated at θ (earlier variables already filled in).
  template <class V>
  double unconstrain_one(const V& v, double x, std::size_t i, const std::vector<double>& theta) const {
    const auto tr = v.transform();
    using Tr = decltype(tr);
    bool inside = true;
    double u = x;
    if constexpr (requires { tr.lower; tr.upper; }) {
      const double l = value_at(tr.lower, i, theta), h = value_at(tr.upper, i, theta);
      inside = Tr::contains(x, l, h);
      if (inside) u = Tr::unconstrain(x, l, h);
    } else if constexpr (requires { tr.lower; }) {
      const double l = value_at(tr.lower, i, theta);
      inside = Tr::contains(x, l);
      if (inside) u = Tr::unconstrain(x, l);
    } else if constexpr (requires { tr.upper; }) {
      const double h = value_at(tr.upper, i, theta);
      inside = Tr::contains(x, h);
      if (inside) u = Tr::unconstrain(x, h);
    } else {
      inside = Tr::contains(x);
    }
    if (!inside) {
      std::string where(V::name.view());
      if (v.size() > 1 || kind_of<typename V::param_type> == node_kind::vector_param)
        where += "[" + std::to_string(i + 1) + "]";
      throw std::invalid_argument("tyche::model::unconstrain: " + where + " = " + tyche::detail::format_number(x) +
                                  " is outside its support (" + Tr::name + ")");
    }
    return u;
  }

  /// n draws from distribution d, its arguments evaluated at θ (elementwise for vectors).
  template <class D, class Generator>
  std::vector<double> draw_from(const D& d, std::size_t n, const std::vector<double>& theta,
                                Generator& rng) const {
    const auto args = std::apply(
        [&](const auto&... a) {
          return std::array<std::vector<double>, sizeof...(a)>{values_of(a, theta)...};
        },
        d.arguments());
    if constexpr (requires { D::whole_arguments; }) {  // arguments are whole vectors (categorical)
      return std::apply([&](const auto&... a) { return d.draw_all(rng, n, a...); }, args);
    } else {
      std::vector<double> out(n);
      for (std::size_t i = 0; i < n; ++i) {
        out[i] = [&]<std::size_t... J>(std::index_sequence<J...>) {
          return D::draw(rng, (args[J].size() == 1 ? args[J][0] : args[J][i])...);
        }(std::make_index_sequence<std::tuple_size_v<decltype(d.arguments())>>{});
      }
      return out;
    }
  }
  /// The values of expression e at θ (one for a scalar).
  template <class E>
  std::vector<double> values_of(const E& e, const std::vector<double>& theta) const {
    std::vector<double> v(detail::value_count(e));
    detail::evaluate_at<layout>(e, layout_(), theta.data(), v.data());
    return v;
  }

  Joint joint_;
  decltype(detail::compile_with_layout<layout>(std::declval<Joint>().template log_density<true>())) with_jacobian_;
  decltype(detail::compile_with_layout<layout>(std::declval<Joint>().template log_density<false>())) without_jacobian_;
};

/// The model of a joint distribution: `auto m = model(joint(mu, tau, ...))`, or of a callable
/// that returns one: `model([&] { ...; return joint(...); })`.
template <class J>
auto model(const J& j) {
  if constexpr (requires { j(); }) return model_t<std::remove_cvref_t<decltype(j())>>(j());
  else return model_t<J>(j);
}

/// The model a function of the data builds: `model([](const schools& d) { ...; return
/// joint(...); }, d)` calls f(d) once. The model views the data f reads through data(...), as
/// always: d must outlive the model (a named object, not a temporary), and f must take it by
/// reference (a by-value parameter is a compile error where the type says so). The same function makes
/// the model of other data of the same kind (`model(f, other)`), e.g. in simulation-based
/// calibration or cross-validation.
namespace detail {
/// The parameter type of a callable with one parameter that is not a template (a lambda with a
/// declared parameter type, a function): void when it cannot be known (a generic lambda).
template <class Sig>
struct single_parameter {
  using type = void;
};
template <class R, class P>
struct single_parameter<R (*)(P)> {
  using type = P;
};
template <class R, class C, class P>
struct single_parameter<R (C::*)(P) const> {
  using type = P;
};
template <class R, class C, class P>
struct single_parameter<R (C::*)(P)> {
  using type = P;
};
template <class F>
auto parameter_of_callable() {
  if constexpr (std::is_function_v<F>) return std::type_identity<typename single_parameter<F*>::type>{};
  else if constexpr (requires { &F::operator(); }) return std::type_identity<typename single_parameter<decltype(&F::operator())>::type>{};
  else return std::type_identity<void>{};
}
}  // namespace detail

template <class F, class Data>
  requires std::invocable<const F&, const Data&>
auto model(const F& f, const Data& d) {
  using P = typename decltype(detail::parameter_of_callable<F>())::type;
  static_assert(std::is_void_v<P> || std::is_reference_v<P>,
                "tyche::model(f, data): f takes its data by value, so the model would keep views of "
                "a copy destroyed when f returns: take it by const reference, "
                "[](const my_data& d) { ... }");
  using J = std::remove_cvref_t<std::invoke_result_t<const F&, const Data&>>;
  return model_t<J>(f(d));
}
/// Forbidden: the model would keep views of a temporary's storage, destroyed at the end of the line.
template <class F, class Data>
  requires(!std::is_lvalue_reference_v<Data> && std::invocable<const F&, const Data&>)
auto model(const F&, Data&&) {
  static_assert(sizeof(Data) == 0,
                "tyche::model(f, data) keeps views of 'data', not a copy: pass a named object that "
                "outlives the model, not a temporary");
  return 0;
}

}  // namespace tyche
// ----- end tyche/model/model.hpp -----
// ----- begin tyche/model/intervention.hpp -----
// tyche/model/intervention.hpp — do_<"name">(model, value): the model in which the random
// variable `name` is fixed to `value` (Edward2's `do`, Pearl's intervention). Its prior term
// and log-Jacobian disappear, it leaves θ, and every expression that used it (other variables'
// arguments, likelihoods) sees the value instead.
// ----- begin tyche/compile/substitute.hpp -----
// tyche/compile/substitute.hpp — substitute<Target>(e, r): e with every subtree of type Target
// replaced by r. Used by do_ (an intervened variable's value becomes a constant); a general
// tree rewrite over the core's node kinds.

#include <type_traits>

namespace tyche {

/// Replaces every subtree of type Target in e by r (leaves e unchanged where Target is absent).
template <class Target, class E, class R>
auto substitute(const E& wrapped, const R& r) {
  using N = detail::node_t<E>;
  const N n = detail::as_node(wrapped);
  if constexpr (std::is_same_v<N, Target>) {
    return detail::as_node(r);
  } else if constexpr (kind_of<N> == node_kind::unary) {
    auto a = substitute<Target>(n.a, r);
    return unary_node<typename N::rule_type, decltype(a)>{{}, n.rule, a};
  } else if constexpr (kind_of<N> == node_kind::binary) {
    auto a = substitute<Target>(n.a, r);
    auto b = substitute<Target>(n.b, r);
    return binary_node<typename N::rule_type, decltype(a), decltype(b)>{{}, n.rule, a, b};
  } else if constexpr (kind_of<N> == node_kind::sum) {
    auto a = substitute<Target>(n.a, r);
    return sum_node<decltype(a)>{{}, a};
  } else if constexpr (kind_of<N> == node_kind::log_sum_exp) {
    auto a = substitute<Target>(n.a, r);
    return log_sum_exp_node<decltype(a)>{{}, a};
  } else if constexpr (kind_of<N> == node_kind::vector_op) {
    return rebuild_vector_op(n, [&](const auto& c) { return substitute<Target>(c, r); });
  } else if constexpr (kind_of<N> == node_kind::element) {
    auto v = substitute<Target>(n.v, r);
    using V = decltype(v);
    if constexpr (is_buffered_v<V>) return element_node<V>{{}, v, n.index};
    else return at(v, n.index);  // the vector became something else: take its element
  } else {
    return n;  // leaves, and matvec (a data matrix times a parameter vector)
  }
}

}  // namespace tyche
// ----- end tyche/compile/substitute.hpp -----

#include <tuple>
#include <type_traits>

namespace tyche {

namespace detail {

template <class Dist, class Replace>
auto substitute_distribution(const Dist& d, const Replace& replace) {
  if constexpr (std::tuple_size_v<decltype(d.arguments())> == 0) {
    return d;
  } else {
    return std::apply([&](const auto&... a) { return with_arguments(d, replace(a)...); }, d.arguments());
  }
}

template <fixed_string Name, class Replace, class T>
auto intervene_term(const T& t, const Replace& replace) {
  if constexpr (is_random_variable<T>::value) {
    if constexpr (T::name == Name) {
      return std::tuple<>{};  // the intervened variable leaves the joint
    } else {
      auto d = substitute_distribution(t.distribution, replace);
      using V = random_variable<T::name, decltype(d), typename T::shape_type>;
      V v(d, typename T::shape_type{});
      v.parameter = t.parameter;  // keeps a run-time size
      return std::tuple<V>{v};
    }
  } else if constexpr (is_log_density_term<T>::value) {
    auto e = replace(t.value);
    return std::tuple<log_density_term<decltype(e)>>{{e}};
  } else {
    auto d = substitute_distribution(t.distribution, replace);
    auto x = replace(t.value);
    return std::tuple<observed<decltype(d), decltype(x)>>{{d, x}};
  }
}

/// e with random variable v fixed to r: its value expression (the transform applied to its
/// parameter) replaced by r, then any use of the parameter itself — left where an expression
/// was simplified as it was built, log(exp(u)) = u for a positive variable — by the
/// unconstrained value, an expression of r (transforms/bounds.hpp's unconstrain_expression).
template <class V, class R, class E>
auto replace_variable(const V& v, const R& r, const E& e) {
  using Value = decltype(detail::as_node(v.value_expression()));
  using P = typename V::param_type;
  auto replaced = substitute<Value>(e, r);
  if constexpr (depends_on_v<node_t<decltype(replaced)>, V::name>) {
    constexpr bool invertible = requires { v.transform().unconstrain_expression(r); };
    static_assert(invertible,
                  "tyche::do_<name>(model, value): the model uses the unconstrained parameter of "
                  "'name' directly, and its transform has no unconstrain_expression(x) to express "
                  "it in the value");
    if constexpr (invertible) return substitute<P>(replaced, v.transform().unconstrain_expression(r));
  } else {
    return replaced;
  }
}

template <fixed_string Name, class T>
constexpr bool is_variable_named() {
  if constexpr (is_random_variable<T>::value) return T::name == Name;
  else return false;
}

/// Index of the random variable called Name among Terms (sizeof...(Terms) when absent).
template <fixed_string Name, class... Terms>
constexpr std::size_t variable_index_v = [] {
  constexpr bool hit[] = {is_variable_named<Name, Terms>()..., true};
  std::size_t i = 0;
  while (!hit[i]) ++i;
  return i;
}();

}  // namespace detail

/// The joint with random variable Name fixed to value (a number, or a data vector for a vector
/// variable: `do_<"theta">(j, data(v))`, which keeps a view of v).
template <fixed_string Name, class... Terms, class Value>
auto do_(const joint_t<Terms...>& j, const Value& value) {
  constexpr std::size_t index = detail::variable_index_v<Name, Terms...>;
  static_assert(index < sizeof...(Terms),
                "tyche::do_<name>(model, value) requires 'name' to be a random variable of the "
                "model");
  const auto& v = std::get<(index < sizeof...(Terms) ? index : 0)>(j.terms);
  const auto r = detail::as_node(value);
  const auto replace = [&](const auto& e) { return detail::replace_variable(v, r, e); };
  auto terms = std::apply(
      [&](const auto&... t) { return std::tuple_cat(detail::intervene_term<Name>(t, replace)...); },
      j.terms);
  return std::apply([](const auto&... t) { return joint(t...); }, terms);
}

/// The model with random variable Name fixed to value.
template <fixed_string Name, class Joint, class Value>
auto do_(const model_t<Joint>& m, const Value& value) {
  return model(do_<Name>(m.joint(), value));
}

}  // namespace tyche
// ----- end tyche/model/intervention.hpp -----
// ----- begin tyche/samplers/nuts/instruction_table.hpp -----
// tyche/samplers/nuts/instruction_table.hpp — the U-turn instruction table of the unrolled NUTS
// (Lao & Dillon, "Unrolled implementation of No-U-Turn Sampler", TensorFlow Probability note):
// the recursion of a tree doubling of depth d is enumerated ahead of time, at compile time here,
// as the list of (first leaf, last leaf) pairs of the subtrees whose U-turn is checked, in the
// order the recursion checks them (post-order). From it follows the compressed schedule the
// state machine runs: after leaf k a stack of at most d + 1 subtree records receives the leaf in
// slot popcount(k − 1), then the two top records are merged ctz(k) times.

#include <array>
#include <bit>
#include <cstddef>

namespace tyche::samplers {

/// One U-turn check: the subtree spanning leaves first..last (1-based, as in the note).
struct uturn_check {
  int first = 0;
  int last = 0;
  constexpr bool operator==(const uturn_check&) const = default;
};

/// The (2^depth − 1) checks of a tree doubling of the given depth, in recursion order: the
/// note's build_tree_uturn_instruction(depth), computed at compile time.
template <int Depth>
constexpr auto uturn_instructions() {
  static_assert(Depth >= 1 && Depth <= 20, "tyche::nuts: tree depth must be in [1, 20]");
  std::array<uturn_check, (std::size_t{1} << Depth) - 1> out{};
  std::size_t n = 0;
  // Post-order over the complete binary tree of 2^Depth leaves, without recursion: the subtree
  // of size 2^j ending at leaf k is checked after leaf k exactly when 2^j divides k (j ≥ 1),
  // smaller subtrees first.
  for (int k = 1; k <= (1 << Depth); ++k)
    for (int j = 1; j <= Depth && k % (1 << j) == 0; ++j) out[n++] = {k - (1 << j) + 1, k};
  return out;
}

// The note's example, exactly.
static_assert(uturn_instructions<3>() == std::array<uturn_check, 7>{{{1, 2}, {3, 4}, {1, 4}, {5, 6},
                                                                     {7, 8}, {5, 8}, {1, 8}}});

/// The compressed memory schedule for leaf k (1-based) of a doubling: the stack slot its record
/// is written to, and how many merges (U-turn checks) follow it.
struct leaf_schedule {
  int write_slot = 0;
  int merges = 0;
};

/// The schedule for every leaf of a doubling of the given depth, derived from the instruction
/// table: the checks ending at leaf k are the merges after it, and its slot is the number of
/// complete subtrees on the stack before it. Uses depth + 1 slots at most.
template <int Depth>
constexpr auto leaf_schedules() {
  constexpr auto checks = uturn_instructions<Depth>();
  std::array<leaf_schedule, (std::size_t{1} << Depth) + 1> out{};  // index 1 .. 2^Depth
  int stack = 0;
  std::size_t c = 0;
  for (int k = 1; k <= (1 << Depth); ++k) {
    out[k].write_slot = stack++;
    while (c < checks.size() && checks[c].last == k) {
      ++out[k].merges;
      --stack;  // two records become one
      ++c;
    }
  }
  return out;
}

template <int Depth>
constexpr bool schedule_is_compressed() {
  constexpr auto s = leaf_schedules<Depth>();
  for (int k = 1; k <= (1 << Depth); ++k) {
    if (s[k].write_slot != std::popcount(static_cast<unsigned>(k - 1))) return false;
    if (s[k].merges != std::countr_zero(static_cast<unsigned>(k))) return false;
    if (s[k].write_slot > Depth) return false;  // depth + 1 slots suffice
  }
  return true;
}
// Depths 10 and 12 are checked in tests/samplers/unrolled_nuts_test.cpp: evaluated here they
// cost every translation unit that includes tyche a third of a second.
static_assert(schedule_is_compressed<1>() && schedule_is_compressed<3>());

/// The largest tree depth the sampler accepts.
inline constexpr int max_supported_depth = 30;  // leaf indices are unsigned long; slots grow with the depth

}  // namespace tyche::samplers
// ----- end tyche/samplers/nuts/instruction_table.hpp -----
// ----- begin tyche/samplers/nuts/kernel.hpp -----
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
// ----- begin tyche/backends/simd/lanes.hpp -----
// tyche/backends/simd/lanes.hpp — the lane vocabulary of code that runs several chains as the
// lanes of one value: lane_traits<T> for T = float or double (one chain: width 1, the mask is a
// bool; host and CUDA device code) and, with the SIMD backend, for an xsimd batch (one chain per
// lane, the mask a batch_bool). The NUTS kernel (samplers/nuts/kernel.hpp) is written once over
// this vocabulary. Also the batch widths the CPU executor chooses from (lane_batch, the build's
// widest batch of doubles, and half_lane_batch).

#include <cstddef>
#include <math.h>  // global-namespace sqrt, which CUDA device code also provides
#include <type_traits>

namespace tyche {

/// What code written over a lane type T needs: the width (chains per value), the element type
/// `real`, the mask type, loads and stores of W values, masks from W bools and back, select,
/// any, sqrt (correctly rounded for every T: the lanes of a batch give what W scalar calls give).
template <class T>
struct lane_traits;

namespace detail {

template <class R>
struct scalar_lane_traits {
  using real = R;
  using mask = bool;
  static constexpr int width = 1;
  TYCHE_HD TYCHE_INLINE static R load(const R* lanes) { return lanes[0]; }
  TYCHE_HD TYCHE_INLINE static void store(R* lanes, R x) { lanes[0] = x; }
  TYCHE_HD TYCHE_INLINE static R broadcast(R x) { return x; }
  TYCHE_HD TYCHE_INLINE static mask mask_of(const bool* lanes) { return lanes[0]; }
  TYCHE_HD TYCHE_INLINE static void store_mask(bool* lanes, mask m) { lanes[0] = m; }
  TYCHE_HD TYCHE_INLINE static R select(mask m, R a, R b) { return m ? a : b; }
  TYCHE_HD TYCHE_INLINE static bool any(mask m) { return m; }
  TYCHE_HD TYCHE_INLINE static R get(R x, int) { return x; }
  TYCHE_HD TYCHE_INLINE static void set(R& x, int, R v) { x = v; }
  TYCHE_HD TYCHE_INLINE static R sqrt(R x) {
    if constexpr (std::is_same_v<R, float>) return ::sqrtf(x);
    else return ::sqrt(x);
  }
};

}  // namespace detail

template <>
struct lane_traits<double> : detail::scalar_lane_traits<double> {};
template <>
struct lane_traits<float> : detail::scalar_lane_traits<float> {};

#if TYCHE_HAS_XSIMD
template <class E, class A>
struct lane_traits<xsimd::batch<E, A>> {
  using batch = xsimd::batch<E, A>;
  using real = E;
  using mask = xsimd::batch_bool<E, A>;
  static constexpr int width = static_cast<int>(batch::size);
  TYCHE_INLINE static batch load(const E* lanes) { return batch::load_unaligned(lanes); }
  TYCHE_INLINE static void store(E* lanes, const batch& x) { x.store_unaligned(lanes); }
  TYCHE_INLINE static batch broadcast(E x) { return batch(x); }
  TYCHE_INLINE static mask mask_of(const bool* lanes) { return mask::load_unaligned(lanes); }
  TYCHE_INLINE static void store_mask(bool* lanes, const mask& m) { m.store_unaligned(lanes); }
  TYCHE_INLINE static batch select(const mask& m, const batch& a, const batch& b) { return xsimd::select(m, a, b); }
  TYCHE_INLINE static bool any(const mask& m) { return xsimd::any(m); }
  TYCHE_INLINE static E get(const batch& x, int l) { return x.get(static_cast<std::size_t>(l)); }
  static void set(batch& x, int l, E v) {
    alignas(A::alignment()) E lanes[batch::size];
    x.store_aligned(lanes);
    lanes[l] = v;
    x = batch::load_aligned(lanes);
  }
  TYCHE_INLINE static batch sqrt(const batch& x) { return xsimd::sqrt(x); }
};

/// The batch the CPU executor runs chains in: the build's widest batch of doubles.
using lane_batch = xsimd::batch<double>;
inline constexpr int simd_lane_width = static_cast<int>(lane_batch::size);
/// A batch of half that width where the build has one (AVX2 with FMA under AVX-512; SSE2 under
/// AVX), void where it has none: fewer chains than the wide batch's lanes (4 chains on one thread
/// of an AVX-512 build) run at the half width rather than with half of a wide batch empty.
#if XSIMD_WITH_AVX512F && XSIMD_WITH_FMA3_AVX2
using half_lane_batch = xsimd::batch<double, xsimd::fma3<xsimd::avx2>>;
#elif XSIMD_WITH_AVX512F && XSIMD_WITH_AVX2
using half_lane_batch = xsimd::batch<double, xsimd::avx2>;
#elif XSIMD_WITH_AVX && XSIMD_WITH_SSE2
using half_lane_batch = xsimd::batch<double, xsimd::sse2>;
#else
using half_lane_batch = void;
#endif
inline constexpr int half_lane_width = std::is_void_v<half_lane_batch> ? 0 : simd_lane_width / 2;
#else
using lane_batch = double;
inline constexpr int simd_lane_width = 1;
using half_lane_batch = void;
inline constexpr int half_lane_width = 0;
#endif

}  // namespace tyche
// ----- end tyche/backends/simd/lanes.hpp -----
// ----- begin tyche/samplers/nuts/chain_streams.hpp -----
// tyche/samplers/nuts/chain_streams.hpp — the random numbers of W chains run as the lanes of one
// NUTS kernel: lane l reads its chain's own Philox stream (seed, stream[l]) at its own position,
// so a chain's draws depend on the seed and the chain alone, never on the lanes beside it (each
// draw consumes one position of the lane's stream, random/philox.hpp). Draws are taken for the
// lanes a mask selects; the other lanes' positions do not move.
//
// This is the kernel's default generator; another one fits the kernel when it has the same two
// members (uniforms and normals; the contract is samplers/nuts/kernel.hpp's lane_generator).
// ----- begin tyche/backends/simd/random.hpp -----
// tyche/backends/simd/random.hpp — Philox draws for many (stream, position) pairs at once: a SIMD
// batch of counters per instruction with the SIMD backend, one at a time without it (and in CUDA
// device code). The bijection itself is random/philox.hpp's philox4x32_words, instantiated here
// for xsimd batches of 64-bit words; the conversions to uniforms and normals are random/
// variates.hpp's, written for a batch.
//
// philox_uniforms_at: bit for bit what counter_rng(seed, stream, position).uniform01() gives,
// in every build (integer arithmetic and one exact conversion).
// philox_normals_at: Box–Muller (cosine branch) of the block at (stream, position), as
// counter_rng::normal(); with the SIMD backend log, sqrt and cos are xsimd's, computed in the
// build's widest batch of doubles, so the last bits may differ from counter_rng::normal()'s
// (the C library's) — but not from one call to another, however the pairs are grouped: the
// batch functions work lane by lane.

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace tyche {

/// One draw's place in the counter space: block `position` of stream `stream`.
struct philox_site {
  std::uint64_t stream = 0;
  std::uint64_t position = 0;
};

#if TYCHE_HAS_XSIMD

/// How many Philox blocks one SIMD batch computes (1 without the SIMD backend): a good number of
/// draws to compute ahead of time.
inline constexpr std::size_t philox_batch_size = xsimd::batch<double>::size;

namespace detail {

/// The build's widest batch of doubles and the 64-bit integer batches of the same architecture.
using philox_real_batch = xsimd::batch<double>;
using philox_word_batch = xsimd::batch<std::uint64_t, typename philox_real_batch::arch_type>;
using philox_int_batch = xsimd::batch<std::int64_t, typename philox_real_batch::arch_type>;
inline constexpr std::size_t philox_batch_width = philox_real_batch::size;

/// uniform01_from_bits for a batch of 64-bit words.
TYCHE_INLINE philox_real_batch uniform01_from_bits(const philox_word_batch& x) {
  const philox_real_batch top = xsimd::to_float(xsimd::bitwise_cast<philox_int_batch>(x >> 11));  // < 2^53: exact
  return xsimd::select(top == philox_real_batch(0.0), philox_real_batch(0x1p-54), top * philox_real_batch(0x1p-53));
}

/// The product of words that hold 32-bit values, lane by lane: the unsigned 32 × 32 → 64-bit
/// multiply of the low halves (pmuludq), one instruction where xsimd has no 64-bit lane
/// multiply (SSE2, AVX2: it would multiply lane by lane in scalar code) and cheaper than the
/// full 64-bit one where it has (AVX-512DQ's vpmullq).
struct philox_lane_multiply {
  template <class A>
  TYCHE_INLINE xsimd::batch<std::uint64_t, A> operator()(const xsimd::batch<std::uint64_t, A>& a,
                                                         const xsimd::batch<std::uint64_t, A>& b) const {
#if XSIMD_WITH_AVX512F
    if constexpr (std::is_base_of_v<xsimd::avx512f, A>) return _mm512_mul_epu32(a, b);
#endif
#if XSIMD_WITH_AVX2
    if constexpr (std::is_base_of_v<xsimd::avx2, A>) return _mm256_mul_epu32(a, b);
#endif
#if XSIMD_WITH_SSE2
    if constexpr (std::is_base_of_v<xsimd::sse2, A>) return _mm_mul_epu32(a, b);
#endif
    return a * b;
  }
};

/// Philox-4x32-10 of the counters {position, stream} of a batch of sites under key seed; the
/// four output words, each in the low 32 bits of a 64-bit lane.
TYCHE_INLINE void philox_blocks(std::uint64_t seed, const philox_site* sites, philox_word_batch& c0,
                                philox_word_batch& c1, philox_word_batch& c2, philox_word_batch& c3) {
  constexpr std::size_t w = philox_batch_width;
  alignas(64) std::uint64_t position[w], stream[w];
  for (std::size_t l = 0; l < w; ++l) {
    position[l] = sites[l].position;
    stream[l] = sites[l].stream;
  }
  const philox_word_batch low(std::uint64_t{0xffffffffu});
  const philox_word_batch pos = philox_word_batch::load_aligned(position);
  const philox_word_batch str = philox_word_batch::load_aligned(stream);
  c0 = pos & low;
  c1 = pos >> 32;
  c2 = str & low;
  c3 = str >> 32;
  philox4x32_words(10, c0, c1, c2, c3, static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                   philox_lane_multiply{});
}

}  // namespace detail

/// out[j] = counter_rng(seed, sites[j].stream, sites[j].position).uniform01(), bit for bit.
inline void philox_uniforms_at(std::uint64_t seed, const philox_site* sites, double* out, std::size_t n) {
  constexpr std::size_t w = detail::philox_batch_width;
  alignas(64) philox_site chunk[w];
  alignas(64) double values[w];
  for (std::size_t first = 0; first < n; first += w) {
    const std::size_t m = n - first < w ? n - first : w;
    for (std::size_t l = 0; l < w; ++l) chunk[l] = sites[first + (l < m ? l : 0)];  // lanes past m: unused
    detail::philox_word_batch c0, c1, c2, c3;
    detail::philox_blocks(seed, chunk, c0, c1, c2, c3);
    detail::uniform01_from_bits(c0 | (c1 << 32)).store_aligned(values);
    for (std::size_t l = 0; l < m; ++l) out[first + l] = values[l];
  }
}

/// out[j] = the standard normal of the block at sites[j] (Box–Muller, cosine branch, xsimd's
/// log, sqrt and cos in the widest batch; see the top of this file).
inline void philox_normals_at(std::uint64_t seed, const philox_site* sites, double* out, std::size_t n) {
  using batch = detail::philox_real_batch;
  constexpr std::size_t w = detail::philox_batch_width;
  constexpr double two_pi = 6.28318530717958647692;
  alignas(64) philox_site chunk[w];
  alignas(64) double values[w];
  for (std::size_t first = 0; first < n; first += w) {
    const std::size_t m = n - first < w ? n - first : w;
    for (std::size_t l = 0; l < w; ++l) chunk[l] = sites[first + (l < m ? l : 0)];
    detail::philox_word_batch c0, c1, c2, c3;
    detail::philox_blocks(seed, chunk, c0, c1, c2, c3);
    const batch u1 = detail::uniform01_from_bits(c0 | (c1 << 32)), u2 = detail::uniform01_from_bits(c2 | (c3 << 32));
    const batch r = xsimd::sqrt(batch(-2.0) * xsimd::log(u1)) * xsimd::cos(batch(two_pi) * u2);
    r.store_aligned(values);
    for (std::size_t l = 0; l < m; ++l) out[first + l] = values[l];
  }
}

namespace detail {

/// Draws of a counter_rng_lanes<L> (random/philox.hpp) as an xsimd batch of L lanes.
template <class A>
struct variate_as<xsimd::batch<double, A>> {
  using batch = xsimd::batch<double, A>;
  template <std::size_t L>
  static batch from(const std::array<double, L>& x) {
    static_assert(L == batch::size, "tyche: a counter_rng_lanes<L> draws batches of exactly L lanes");
    return batch::load_unaligned(x.data());
  }
};

}  // namespace detail

#else  // no SIMD backend (or CUDA): one site at a time

inline constexpr std::size_t philox_batch_size = 1;

TYCHE_HD inline void philox_uniforms_at(std::uint64_t seed, const philox_site* sites, double* out, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) out[j] = counter_rng(seed, sites[j].stream, sites[j].position).uniform01();
}

TYCHE_HD inline void philox_normals_at(std::uint64_t seed, const philox_site* sites, double* out, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) out[j] = counter_rng(seed, sites[j].stream, sites[j].position).normal();
}

#endif

}  // namespace tyche
// ----- end tyche/backends/simd/random.hpp -----

#include <cstddef>
#include <cstdint>

namespace tyche::samplers {

template <int W>
struct chain_streams {
  std::uint64_t seed = 0;
  std::uint64_t stream[W] = {};    ///< the chain whose stream each lane reads
  std::uint64_t position[W] = {};  ///< the position of each lane's next draw

  /// The generator of lane l at its current position.
  TYCHE_HD counter_rng lane(int l) const { return counter_rng(seed, stream[l], position[l]); }
  TYCHE_HD void set_lane(int l, const counter_rng& g) {
    stream[l] = g.stream();
    position[l] = g.position();
    cached_[l] = 0;
  }

  /// out[l] = the next uniform on (0, 1) of lane l's stream, for the lanes with take[l]. The
  /// uniforms of the next `ahead` positions of a lane are computed together (one SIMD batch of
  /// Philox blocks) and kept until used; a draw is a pure function of its position, so this
  /// changes no value (a momentum's normals consume positions in between: those uniforms are
  /// simply not used).
  template <class R>
  TYCHE_HD void uniforms(R* out, const bool* take) {
    philox_site sites[W * ahead];
    int refill[W];
    int n = 0;
    for (int l = 0; l < W; ++l) {
      if (!take[l]) continue;
      const std::uint64_t k = position[l] - cache_from_[l];
      if (k < cached_[l]) continue;
      cache_from_[l] = position[l];
      cached_[l] = ahead;
      for (std::size_t j = 0; j < ahead; ++j) sites[n * ahead + j] = {stream[l], position[l] + j};
      refill[n++] = l;
    }
    if (n > 0) {
      double values[W * ahead];
      philox_uniforms_at(seed, sites, values, static_cast<std::size_t>(n) * ahead);
      for (int j = 0; j < n; ++j)
        for (std::size_t i = 0; i < ahead; ++i) cache_[refill[j]][i] = values[j * ahead + i];
    }
    for (int l = 0; l < W; ++l)
      if (take[l]) out[l] = static_cast<R>(cache_[l][position[l]++ - cache_from_[l]]);
  }

  /// out[i * W + l], i < n: the next n standard normals of lane l's stream, for the lanes with
  /// take[l] (a momentum: n positions, in order).
  template <class R>
  TYCHE_HD void normals(R* out, std::size_t n, const bool* take) {
    philox_site sites[chunk];
    std::size_t at[chunk];
    std::size_t filled = 0;
    for (int l = 0; l < W; ++l) {
      if (!take[l]) continue;
      for (std::size_t i = 0; i < n; ++i) {
        sites[filled] = {stream[l], position[l] + i};
        at[filled++] = i * W + static_cast<std::size_t>(l);
        if (filled == chunk) flush_normals(out, sites, at, filled);
      }
      position[l] += n;
    }
    if (filled > 0) flush_normals(out, sites, at, filled);
  }

 private:
  static constexpr std::size_t ahead = philox_batch_size;  // uniforms computed ahead per lane
  static constexpr std::size_t chunk = 32;                 // sites per call of philox_normals_at
  double cache_[W][ahead] = {};
  std::uint64_t cache_from_[W] = {};  // the position of cache_[l][0]
  std::uint64_t cached_[W] = {};      // how many are valid
  template <class R>
  TYCHE_HD void flush_normals(R* out, const philox_site* sites, const std::size_t* at, std::size_t& filled) const {
    double values[chunk];
    philox_normals_at(seed, sites, values, filled);
    for (std::size_t j = 0; j < filled; ++j) out[at[j]] = static_cast<R>(values[j]);
    filled = 0;
  }
};

}  // namespace tyche::samplers
// ----- end tyche/samplers/nuts/chain_streams.hpp -----

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
};

/// The kind of metric (mass matrix) of the kinetic energy.
enum class metric_kind { diagonal, dense };

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

  /// Values of T the kernel needs for dimension d, a maximum tree depth and a metric kind.
  TYCHE_HD static std::size_t storage_size(std::size_t d, int max_depth, metric_kind kind) {
    const std::size_t depth = max_depth < 1 ? 1 : static_cast<std::size_t>(max_depth);
    const std::size_t metric = kind == metric_kind::dense ? 2 * d * d : d;
    return (vectors_fixed + vectors_per_level * depth) * d + metric;
  }

  /// Binds the kernel to `size` values of T at `storage` (which must outlive it and stay
  /// unused by others). Lanes start idle, with the identity metric, step size 1, point 0.
  TYCHE_HD nuts_status bind(T* storage, std::size_t size, std::size_t d, int max_depth, metric_kind kind) {
    if (d == 0) return nuts_status::invalid_dimension;
    if (max_depth < 1 || max_depth > max_supported_depth) return nuts_status::invalid_max_depth;
    if (size < storage_size(d, max_depth, kind)) return nuts_status::storage_too_small;
    d_ = d;
    max_depth_ = max_depth;
    dense_ = kind == metric_kind::dense;
    T* next = storage;
    auto take = [&](std::size_t n) {
      T* v = next;
      next += n;
      for (std::size_t i = 0; i < n; ++i) v[i] = T(0);
      return v;
    };
    metric_ = take(dense_ ? d * d : d);
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
      step_size_[l] = 1;
      cur_logp_[l] = 0;
      z_is_fwd_[l] = true;
    }
    const T one = T(real(1));
    if (!dense_) {
      for (std::size_t i = 0; i < d; ++i) metric_[i] = one;
    } else {
      for (std::size_t i = 0; i < d; ++i) metric_[i * d + i] = chol_[i * d + i] = one;
    }
    return nuts_status::ok;
  }

  TYCHE_HD std::size_t dim() const { return d_; }
  TYCHE_HD int max_depth() const { return max_depth_; }
  TYCHE_HD bool dense() const { return dense_; }
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
  /// without it the factor is computed here. Checked: positive finite, positive definite.
  TYCHE_HD nuts_status set_metric(int lane, const real* m, const real* chol = nullptr) {
    const std::size_t d = d_;
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
    detail::momentum_from_normals(metric_, chol_, dense_, normals_, d);
    const T kinetic = detail::kinetic_energy_twice(metric_, dense_, normals_, d);
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
    detail::sharp(metric_, dense_, normals_, tmp_, d);
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
    if (!dense_) {
      const T* TYCHE_RESTRICT m = metric_;
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
      detail::sharp(metric_, true, z_.p, c.ps_begin, d);
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
    if (!dense_) {
      const T* TYCHE_RESTRICT m = metric_;
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
    detail::sharp(metric_, true, zp, tmp_, d);
    for (std::size_t i = 0; i < d; ++i) {
      if constexpr (width == 1) zq[i] += eps * tmp_[i];
      else zq[i] = traits::select(on, zq[i] + eps * tmp_[i], zq[i]);
    }
  }

  // The transition of lane l ended: its statistics (the point is copied by copy_selected).
  TYCHE_HD void finish(int l) {
    running_[l] = false;
    cur_logp_[l] = sample_logp_[l];
    transition_stats& s = stats_[l];
    s.log_density = static_cast<double>(sample_logp_[l]);
    s.tree_depth = depth_[l];
    s.n_leapfrog = n_leapfrog_[l];
    s.divergent = divergent_[l];
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
  bool dense_ = false;
  Rng rng_{};

  // Vectors (d values of T each; metric_ d or d², chol_ d² for a dense metric), in the bound
  // buffer.
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
  bool running_[width] = {}, forward_[width] = {}, z_is_fwd_[width] = {}, divergent_[width] = {};
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

/// Stan's heuristic for a first step size, for one chain (W = 1): double or halve ε until the
/// acceptance of one leapfrog from a fresh momentum crosses 0.8. target(q, grad) returns log p
/// at q and writes its gradient. q0, grad0, logp0: the current point; metric, chol: the
/// chain's M⁻¹ (chol: its Cholesky factor, dense only); rng: the chain's generator (W = 1;
/// `normals` is called with d values per attempt). scratch: 4·d values. On return *eps holds
/// the step size; an invalid or huge starting ε is returned unchanged.
TYCHE_EXEC_CHECK_DISABLE
template <class R, class Rng, class Target>
TYCHE_HD nuts_status find_initial_step_size(R* eps, const R* q0, const R* grad0, R logp0, const R* metric,
                                            const R* chol, bool dense, std::size_t d, Rng& rng, Target&& target,
                                            R* scratch) {
  R e = *eps;
  if (!(e > 0) || e > R(1e7)) return nuts_status::ok;
  R* q = scratch;
  R* p = scratch + d;
  R* g = scratch + 2 * d;
  R* tmp = scratch + 3 * d;
  const bool take[1] = {true};
  auto delta_h = [&](R step) {
    for (std::size_t i = 0; i < d; ++i) {
      q[i] = q0[i];
      g[i] = grad0[i];
    }
    rng.normals(p, d, take);
    detail::momentum_from_normals(metric, chol, dense, p, d);
    const R h0 = -logp0 + R(0.5) * detail::kinetic_energy_twice(metric, dense, p, d);
    for (std::size_t i = 0; i < d; ++i) p[i] += R(0.5) * step * g[i];
    detail::drift(metric, dense, step, q, p, tmp, d);
    const R logp = target(q, g);
    for (std::size_t i = 0; i < d; ++i) p[i] += R(0.5) * step * g[i];
    R h = -logp + R(0.5) * detail::kinetic_energy_twice(metric, dense, p, d);
    if (h != h) h = R(HUGE_VAL);
    return h0 - h;
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
// ----- end tyche/samplers/nuts/kernel.hpp -----
// ----- begin tyche/samplers/nuts/adaptation.hpp -----
// tyche/samplers/nuts/adaptation.hpp — Stan's warm-up: dual averaging of the step size (Hoffman
// & Gelman 2014, §3.2; δ = 0.8, γ = 0.05, t₀ = 10, κ = 0.75, μ = log 10ε) and windowed
// estimation of a diagonal or dense metric (init buffer 75, windows from 25 doubling, term buffer 50;
// regularised as n/(n+5)·var + 10⁻³·5/(n+5)). One deliberate difference from Stan: when the
// last metric window closes at the very end of warm-up (no term buffer), Stan restarts dual
// averaging and then ends it with no iterations, which sets the step size to exp(0) = 1; here
// the step size found after the metric update is kept.

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
/// covariance matrix (row-major d × d), regularised towards 10⁻³·I as Stan does. The running
/// estimate lives in a buffer of buffer_size() values bound with bind().
template <class R = double>
class metric_adaptation {
 public:
  /// Values of R the estimate needs for dimension d.
  TYCHE_HD static std::size_t buffer_size(std::size_t d, bool dense) { return dense ? 2 * d + d * d : 2 * d; }

  TYCHE_HD metric_adaptation(std::size_t dim, int num_warmup, adaptation_config c = {}, bool dense = false)
      : d_(dim), dense_(dense), num_warmup_(num_warmup) {
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

  /// Binds buffer_size(dim, dense) values (zeroed here).
  TYCHE_HD void bind(R* buffer) {
    mean_ = buffer;
    delta_ = buffer + d_;
    m2_ = buffer + 2 * d_;
    if (!dense_) {  // diagonal: no δ vector, m2 follows the mean
      delta_ = nullptr;
      m2_ = buffer + d_;
    }
    for (std::size_t k = 0; k < buffer_size(d_, dense_); ++k) buffer[k] = 0;
  }

  /// The number of values of M⁻¹: d (diagonal) or d² (dense).
  TYCHE_HD std::size_t metric_size() const { return dense_ ? d_ * d_ : d_; }

  /// Adds draw q (unconstrained); at the end of a window writes the new M⁻¹ (metric_size()
  /// values) to inv_metric and returns true.
  TYCHE_HD bool learn(R* inv_metric, const R* q) {
    if (in_window()) add(q);
    if (end_of_window()) {
      compute_next_window();
      const R n = static_cast<R>(count_);
      const std::size_t d = d_, size = metric_size();
      for (std::size_t k = 0; k < size; ++k) {
        const bool diagonal = !dense_ || k / d == k % d;
        const R cov = count_ > 1 ? m2_[k] / (n - 1) : (diagonal ? R(1) : R(0));
        const R shrink_to = diagonal ? R(1e-3) * (R(5) / (n + R(5))) : R(0);  // 10⁻³·I, weighted
        inv_metric[k] = detail::multiply_add(n / (n + R(5)), cov, shrink_to);
      }
      reset();
      ++counter_;
      return true;
    }
    ++counter_;
    return false;
  }

 private:
  TYCHE_HD bool in_window() const {
    return counter_ >= init_buffer_ && counter_ < num_warmup_ - term_buffer_ && counter_ != num_warmup_;
  }
  TYCHE_HD bool end_of_window() const { return counter_ == next_window_ && counter_ != num_warmup_; }
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
  TYCHE_HD void reset() {
    count_ = 0;
    for (std::size_t i = 0; i < d_; ++i) mean_[i] = 0;
    for (std::size_t k = 0; k < metric_size(); ++k) m2_[k] = 0;
  }

  std::size_t d_ = 0;
  R *mean_ = nullptr, *delta_ = nullptr, *m2_ = nullptr;
  bool dense_ = false;
  long count_ = 0;
  int num_warmup_ = 0;
  int init_buffer_ = 0, term_buffer_ = 0, window_size_ = 0, next_window_ = -1;
  int counter_ = 0;
};

}  // namespace tyche::samplers
// ----- end tyche/samplers/nuts/adaptation.hpp -----
// ----- begin tyche/samplers/nuts/sampler.hpp -----
// tyche/samplers/nuts/sampler.hpp — nuts(model, config): warm-up and sampling of several chains.
// The transition is the NUTS kernel (kernel.hpp), the same code on every executor; a chain's
// life between transitions (initialisation, warm-up, recording) is nuts_chain (chain.hpp); the
// executor named by config.executor runs the chains (cpu_executor.hpp: threads × SIMD lanes).
// Each chain draws from its own Philox stream (seed, chain), so its draws do not depend on the
// number of chains, threads or lanes beside it, for a given batch width (cpu::lanes).
// ----- begin tyche/samplers/nuts/chain.hpp -----
// tyche/samplers/nuts/chain.hpp — one chain between its transitions, on the host: its random
// stream, its point, its step size and metric, its warm-up, what it records. An executor loads
// the chain into a lane of a NUTS kernel (kernel.hpp) for a transition and gives the
// transition's result back to end_iteration(); everything a chain does between transitions is
// here, so that every executor does it the same way.
//
// Target: what the sampler needs from a model (samplers/concepts.hpp, log_density_target): its
// dimension, log p and its gradient in double, Stan's random initialisation, and constrain.
// ----- begin tyche/samplers/nuts/config.hpp -----
// tyche/samplers/nuts/config.hpp — what nuts() takes and returns: nuts_config (Stan's settings and
// the executor that runs the chains), nuts_fit (draws, sampler statistics, adapted step sizes
// and metrics), nuts_progress. Executors are values: tyche::cpu{…} runs the chains on this
// machine's threads and SIMD lanes; later executors (CUDA, processes) join the variant.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

namespace tyche {

namespace samplers {
/// How the CPU executor schedules the chains of its lanes: program_counter (default) lets
/// every lane start its next transition as soon as its trajectory ends; trajectory_sync makes
/// all chains wait for the longest trajectory of each iteration (the baseline of the
/// autobatching paper's Figure 7, for benchmarks).
enum class lane_schedule { program_counter, trajectory_sync };
}  // namespace samplers

/// How the CPU executor runs a group of chains in SIMD lanes: each chain in a NUTS kernel of its
/// own, their gradients evaluated together as the lanes of one batch (per_chain, the default:
/// the kernel's bookkeeping in each chain's own order), or all of them as the lanes of one
/// kernel over the batch type (batch: the bookkeeping too in SIMD, with masks where the lanes'
/// trajectories differ). Both give the same draws up to the fusing of multiply-adds
/// (docs/design/nuts-kernel.md).
enum class cpu_lane_kernel { per_chain, batch };

/// The CPU executor: chains on `threads` threads, each advancing `lanes` chains together as the
/// lanes of SIMD batches (samplers/nuts/cpu_executor.hpp).
struct cpu {
  static constexpr const char* executor_name = "cpu";
  /// 0: one per chain, up to the hardware's concurrency.
  int threads = 0;
  /// Chains one thread advances together as SIMD lanes: 0 = the narrowest SIMD batch of
  /// doubles that holds ⌈chains / threads⌉ chains: half the build's widest batch where the
  /// build has such a batch (AVX2 under AVX-512: 4 chains on one thread in 4 lanes, not in 8
  /// with 4 empty) and it suffices, else the widest (1 without tyche::simd); 1 = one chain at a
  /// time in scalar double; otherwise a multiple of the widest or of the half width (the widest
  /// when it is a multiple of both). A chain's draws are the same for every value that uses
  /// the same batch width (lanes never interact); the two widths, and the scalar path, differ
  /// in the last bits of exp/log (the compiler contracts multiply-adds differently in each), so
  /// they give other, equally valid, chains. lanes = 0 picks the width from chains and
  /// threads: to reproduce a chain with another number of chains, set lanes.
  int lanes = 0;
  samplers::lane_schedule schedule = samplers::lane_schedule::program_counter;
  cpu_lane_kernel lane_kernel = cpu_lane_kernel::per_chain;
};

/// The executors nuts() can run on.
using nuts_executor = std::variant<cpu>;

/// What nuts() reports every `refresh` iterations of a chain.
struct nuts_progress {
  int chain = 0;       // 1-based, as Stan prints it
  int iteration = 0;   // 1-based, warm-up included
  int iterations = 0;  // warm-up + draws
  bool warmup = false;
};

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
  /// The metric adapted in warm-up: diagonal (Stan's diag_e, the default) or dense (dense_e,
  /// for strongly correlated posteriors of moderate dimension: O(d²) per leapfrog).
  samplers::metric_kind metric = samplers::metric_kind::diagonal;
  /// Progress: every `refresh` iterations of each chain (and at its first and last), on_progress
  /// is called, or, when it is empty, a line in Stan's format goes to std::clog
  /// ("Chain 2: Iteration: 100 / 2000 [  5%]  (Warmup)"). 0: silent. Calls are serialised, from
  /// the sampling threads.
  int refresh = 0;
  std::function<void(const nuts_progress&)> on_progress = {};
  /// Where the chains run: tyche::cpu{.threads = …, .lanes = …} (the default, cpu{}).
  nuts_executor executor = cpu{};
};

/// The result of nuts(): per chain, the draws on the constrained scale and Stan's sampler
/// statistics, plus the adapted step size and metric.
struct nuts_fit {
  std::vector<std::string> names;  // parameter names, Stan style
  int chains = 0, draws = 0;
  std::vector<std::vector<double>> values;                     // [chain][draw * dim + k]
  std::vector<std::vector<samplers::transition_stats>> stats;  // [chain][draw]
  std::vector<double> step_size;                               // [chain]
  std::vector<std::vector<double>> inv_metric;                 // [chain]: diagonal, or d × d row-major
  long long gradient_evaluations = 0;  // leapfrog gradients of all chains, warm-up included
  int lanes = 1;                       // chains per SIMD group actually used
  double utilization = 1;              // useful lane gradients / lane slots evaluated
  int max_depth = 10;                  // the configured maximum tree depth (for summary's warning)
  double adapt_delta = 0.8;            // the configured target acceptance statistic
  std::uint64_t seed = 1;              // the seed the chains' streams were keyed by
  double seconds = 0;                  // wall-clock time of the run (warm-up and sampling)

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

}  // namespace tyche
// ----- end tyche/samplers/nuts/config.hpp -----

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace tyche::samplers::detail {

/// Calls cfg.on_progress, or prints Stan's progress line; one call at a time.
inline void report_progress(const nuts_config& cfg, const nuts_progress& p) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  if (cfg.on_progress) {
    cfg.on_progress(p);
    return;
  }
  char line[128];
  std::snprintf(line, sizeof line, "Chain %d: Iteration: %*d / %d [%3d%%]  (%s)\n", p.chain,
                static_cast<int>(std::to_string(p.iterations).size()), p.iteration, p.iterations,
                static_cast<int>(100.0 * p.iteration / p.iterations), p.warmup ? "Warmup" : "Sampling");
  std::clog << line;
}

/// The exception an executor throws for a kernel status, naming what was wrong.
[[noreturn]] inline void throw_status(nuts_status s, const std::string& what) {
  throw std::runtime_error("tyche::nuts: " + what + ": " + describe(s));
}

template <class Target>
class nuts_chain {
 public:
  nuts_chain(const Target& target, const nuts_config& cfg, int chain, nuts_fit& fit)
      : target_(target), cfg_(cfg), chain_(chain), fit_(fit), d_(target.dim()),
        rng_(cfg.seed, static_cast<std::uint64_t>(chain)), step_adapt_(adaptation(cfg)),
        metric_adapt_(d_, cfg.warmup, adaptation(cfg), cfg.metric == metric_kind::dense) {}
  nuts_chain(const nuts_chain&) = delete;
  nuts_chain& operator=(const nuts_chain&) = delete;

  /// The initial point (uniform(−r, r) on θ, up to 100 attempts at a finite log density and
  /// gradient) and the first step size (Stan's heuristic); throws when there is none.
  void initialise() {
    const std::size_t d = d_;
    const bool dense = cfg_.metric == metric_kind::dense;
    inv_metric_.assign(dense ? d * d : d, 0.0);
    if (dense) {
      chol_.assign(d * d, 0.0);
      for (std::size_t i = 0; i < d; ++i) inv_metric_[i * d + i] = chol_[i * d + i] = 1.0;
    } else {
      for (auto& m : inv_metric_) m = 1.0;
    }
    adapt_buffer_.assign(metric_adaptation<double>::buffer_size(d, dense), 0.0);
    metric_adapt_.bind(adapt_buffer_.data());
    scratch_.assign(4 * d, 0.0);
    grad_.assign(d, 0.0);
    workspace_.assign(target_.workspace_size(), 0.0);
    for (int attempt = 0;; ++attempt) {
      q_ = target_.initial_point(rng_, cfg_.init_radius);
      log_density_ = evaluate(q_.data(), grad_.data());
      bool finite = std::isfinite(log_density_);
      for (double g : grad_) finite = finite && std::isfinite(g);
      if (finite) break;
      if (attempt == 99) throw std::runtime_error(no_initial_point());
    }
    step_size_ = cfg_.init_step_size;
    find_step_size();
    step_adapt_.set_mu(std::log(10 * step_size_));
    auto& values = fit_.values[static_cast<std::size_t>(chain_)];
    values.reserve(static_cast<std::size_t>(cfg_.draws) * target_.constrained_dim());
    fit_.stats[static_cast<std::size_t>(chain_)].reserve(static_cast<std::size_t>(cfg_.draws));
    initialised_ = true;
    if (done()) finish();
  }

  /// What the last of the 100 attempts found: the log density, the point (by name, as far as
  /// θ's coordinates are the named values) and where the gradient was not finite.
  [[nodiscard]] std::string no_initial_point() const {
    auto number = [](double x) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.6g", x);
      return std::string(buf);
    };
    const bool named = fit_.names.size() == d_;  // no matrix variable: θ's coordinates are the names
    auto coordinate = [&](std::size_t k) { return named ? fit_.names[k] : "theta[" + std::to_string(k + 1) + "]"; };
    std::string text = "tyche::nuts: chain " + std::to_string(chain_ + 1) +
                       ": no initial point with a finite log density and gradient in 100 attempts "
                       "(θ uniform on (-" + number(cfg_.init_radius) + ", " + number(cfg_.init_radius) +
                       ") per unconstrained coordinate, init_radius); at the last, the log density was " +
                       number(log_density_) + " at ";
    const std::size_t shown = d_ < 8 ? d_ : 8;
    for (std::size_t k = 0; k < shown; ++k) {
      if (k > 0) text += ", ";
      text += coordinate(k);
      text += " = ";
      text += number(q_[k]);
    }
    if (shown < d_) text += ", … (unconstrained θ, " + std::to_string(d_) + " coordinates)";
    else text += " (unconstrained θ)";
    std::string bad;
    std::size_t bad_count = 0;
    for (std::size_t k = 0; k < d_; ++k)
      if (!std::isfinite(grad_[k]) && ++bad_count <= 8) bad += (bad.empty() ? "" : ", ") + coordinate(k);
    if (bad_count > 0)
      text += "; the gradient was not finite in " + bad + (bad_count > 8 ? ", …" : "");
    text += ". A log density that is -inf or NaN everywhere usually means an observation outside its "
            "family's support, a data value used as a scale that is ≤ 0, or a term no parameter value "
            "can make finite: check the data, or print explain(model) to see the terms";
    return text;
  }

  [[nodiscard]] bool initialised() const { return initialised_; }
  [[nodiscard]] int chain() const { return chain_; }
  [[nodiscard]] bool done() const { return iteration_ == cfg_.warmup + cfg_.draws; }
  [[nodiscard]] int iteration() const { return iteration_; }

  // The state a kernel lane runs the next transition from.
  [[nodiscard]] const std::vector<double>& q() const { return q_; }
  [[nodiscard]] const std::vector<double>& grad() const { return grad_; }
  [[nodiscard]] double log_density() const { return log_density_; }
  [[nodiscard]] double step_size() const { return step_size_; }
  [[nodiscard]] const std::vector<double>& inv_metric() const { return inv_metric_; }
  [[nodiscard]] const std::vector<double>& cholesky() const { return chol_; }
  /// Counts changes of the metric, so that a lane holding this chain knows when to reload it.
  [[nodiscard]] unsigned metric_version() const { return metric_version_; }
  [[nodiscard]] counter_rng& rng() { return rng_; }

  /// Loads the chain into lane l of a kernel: point, metric (when `metric` is set: a chain new
  /// to the lane, or changed since), step size, random stream.
  template <class Kernel>
  void load(Kernel& k, int l, bool point, bool metric) {
    if (point) k.set_point(l, q_.data(), grad_.data(), log_density_);
    if (metric) {
      const nuts_status s = k.set_metric(l, inv_metric_.data(), chol_.empty() ? nullptr : chol_.data());
      if (s != nuts_status::ok) throw_status(s, "chain " + std::to_string(chain_ + 1));
    }
    const nuts_status s = k.set_step_size(l, step_size_);
    if (s != nuts_status::ok)
      throw_status(s, "chain " + std::to_string(chain_ + 1) + ", step size " + tyche::detail::format_number(step_size_));
    k.set_stream(l, rng_);
  }
  /// Takes back the chain's state from lane l after a transition: the selected point and the
  /// stream's position.
  template <class Kernel>
  void unload(const Kernel& k, int l) {
    k.get_point(l, q_.data(), grad_.data());
    log_density_ = k.log_density(l);
    rng_ = k.stream(l);
  }

  /// After a transition (the chain's state unloaded): warm-up (dual averaging; at the end of a
  /// metric window the new metric and Stan's step-size heuristic) or recording of the draw.
  void end_iteration(const transition_stats& s) {
    if (iteration_ < cfg_.warmup) {
      step_adapt_.learn(step_size_, s.accept_stat);
      if (metric_adapt_.learn(inv_metric_.data(), q_.data())) {
        if (!chol_.empty()) {
          std::size_t pivot = 0;
          if (cholesky_lower(inv_metric_.data(), chol_.data(), d_, &pivot) != nuts_status::ok)
            throw std::runtime_error("tyche::nuts: chain " + std::to_string(chain_ + 1) +
                                     ": the adapted dense inverse metric is not positive definite (pivot " +
                                     std::to_string(pivot) + ")");
        } else {
          std::size_t where = 0;
          if (check_diagonal_metric(inv_metric_.data(), d_, &where) != nuts_status::ok)
            throw std::runtime_error("tyche::nuts: chain " + std::to_string(chain_ + 1) +
                                     ": adapted inverse metric element " + std::to_string(where) + " = " +
                                     std::to_string(inv_metric_[where]) + " is not a positive finite number");
        }
        ++metric_version_;
        find_step_size();
        step_adapt_.set_mu(std::log(10 * step_size_));
        step_adapt_.restart();
      }
      if (iteration_ == cfg_.warmup - 1) step_adapt_.complete(step_size_);
    } else {
      auto& values = fit_.values[static_cast<std::size_t>(chain_)];
      target_.constrain(q_.data(), values);
      fit_.stats[static_cast<std::size_t>(chain_)].push_back(s);
    }
    ++iteration_;
    if (cfg_.refresh > 0 &&
        (iteration_ == 1 || iteration_ % cfg_.refresh == 0 || iteration_ == cfg_.warmup + cfg_.draws))
      report_progress(cfg_, nuts_progress{chain_ + 1, iteration_, cfg_.warmup + cfg_.draws, iteration_ <= cfg_.warmup});
    if (done()) finish();
  }

 private:
  static adaptation_config adaptation(const nuts_config& cfg) {
    adaptation_config ac;
    ac.delta = cfg.adapt_delta;
    return ac;
  }

  double evaluate(const double* q, double* g) {
    return target_.value_and_gradient(q, g, workspace_.empty() ? nullptr : workspace_.data());
  }

  // Stan's heuristic from the current point, with the chain's stream, in double.
  void find_step_size() {
    chain_streams<1> streams;
    streams.seed = cfg_.seed;
    streams.set_lane(0, rng_);
    double eps = step_size_;
    const nuts_status s = find_initial_step_size(
        &eps, q_.data(), grad_.data(), log_density_, inv_metric_.data(), chol_.empty() ? nullptr : chol_.data(),
        !chol_.empty(), d_, streams, [&](const double* q, double* g) { return evaluate(q, g); }, scratch_.data());
    rng_ = streams.lane(0);
    if (s != nuts_status::ok) throw_status(s, "chain " + std::to_string(chain_ + 1));
    step_size_ = eps;
  }

  void finish() {
    fit_.step_size[static_cast<std::size_t>(chain_)] = step_size_;
    fit_.inv_metric[static_cast<std::size_t>(chain_)] = inv_metric_;
  }

  const Target& target_;
  const nuts_config& cfg_;
  int chain_;
  nuts_fit& fit_;
  std::size_t d_;
  counter_rng rng_;
  step_size_adaptation<double> step_adapt_;
  metric_adaptation<double> metric_adapt_;
  std::vector<double> adapt_buffer_, inv_metric_, chol_, q_, grad_, scratch_, workspace_;
  double log_density_ = 0, step_size_ = 1;
  unsigned metric_version_ = 0;
  int iteration_ = 0;
  bool initialised_ = false;
};

}  // namespace tyche::samplers::detail
// ----- end tyche/samplers/nuts/chain.hpp -----
// ----- begin tyche/samplers/nuts/cpu_executor.hpp -----
// tyche/samplers/nuts/cpu_executor.hpp — the CPU executor (tyche::cpu): chains on threads, each
// thread advancing `lanes` chains together as the lanes of NUTS kernels (kernel.hpp) of a SIMD
// batch type (one kernel per batch of lanes; lanes = 1: a kernel of one double), every lane at
// its own point of its own trajectory.
//
// Each step a thread evaluates the model once per kernel with a running lane — log p and its
// gradient for all its lanes at once, straight from the kernel's pending θ, which is laid out as
// the batched evaluation reads it — and resumes the kernel, which runs every lane's state
// machine up to its next gradient. A lane whose transition ends hands its chain back
// (nuts_chain::end_iteration: warm-up, recording) and, in the program_counter schedule, puts it
// at the back of a queue shared by all threads and starts the next transition of the chain at
// the front, so no lane waits for another and chains rotate through the lanes of all threads at
// about the same pace (program-counter batching, Radul et al. 2020, "Automatically batching
// control-intensive programs for modern accelerators"). The trajectory_sync schedule holds
// every chain in a lane of its thread and makes all chains wait for the longest trajectory of
// each iteration: the "local static" batching that paper measures against, kept as the
// benchmark's baseline.
//
// Utilisation is the fraction of lane slots that do useful work: useful lane gradients over lane
// slots evaluated (program_counter; a kernel with no running lane is not evaluated), or over the
// lane slots the chains occupy (whole batches) × the longest trajectory of each iteration
// (trajectory_sync). A single chain on a build with 8 lanes has utilisation 1/8 under both.

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace tyche::samplers {

/// Gradient counts of a run: useful lane gradients and lane slots spent.
struct lane_counts {
  long long useful = 0;
  long long slots = 0;
};

namespace detail {

/// The number of lanes the CPU executor uses: `requested`, checked, or for 0 the narrowest SIMD
/// batch that holds the chains of one thread (⌈chains / threads⌉): the half-width batch where
/// the build has one and it suffices, else the full width.
inline int resolve_lanes(int requested, int chains, int threads) {
  constexpr int width = simd_lane_width;
  constexpr int half = half_lane_width;
  if (requested == 0) {
    const int per_thread = (chains + threads - 1) / threads;
    return half > 1 && per_thread <= half ? half : width;
  }
  if (requested == 1) return 1;
  if (width == 1 && requested > 1)  // no SIMD backend: the kernel has one lane
    throw std::invalid_argument("tyche::nuts: lanes = " + std::to_string(requested) +
                                " needs the SIMD backend (link tyche::simd, or define "
                                "TYCHE_USE_XSIMD=1); this build evaluates one chain at a time: "
                                "use lanes = 0 or 1");
  const bool fits = requested > 1 && (requested % width == 0 || (half > 1 && requested % half == 0));
  if (!fits)
    throw std::invalid_argument("tyche::nuts: lanes = " + std::to_string(requested) +
                                " must be 0 (automatic), 1 (scalar) or a multiple of the SIMD "
                                "width " + std::to_string(width) +
                                (half > 1 ? " or of the half width " + std::to_string(half) : std::string()));
  return requested;
}

/// W chains in the lanes of one kernel over T (the batch-lane kernel: its pending θ is laid out
/// as the batched evaluation reads it), with the buffers it works in.
template <class T>
class batch_lanes : public nuts_kernel<T> {
 public:
  using kernel_type = nuts_kernel<T>;
  static constexpr int width = kernel_type::width;

  batch_lanes(std::size_t d, const nuts_config& cfg, std::size_t workspace)
      : storage_(kernel_type::storage_size(d, cfg.max_depth, cfg.metric)), workspace_(workspace) {
    const nuts_status s = this->bind(storage_.data(), storage_.size(), d, cfg.max_depth, cfg.metric);
    if (s != nuts_status::ok) throw_status(s, "max_depth = " + std::to_string(cfg.max_depth));
    this->rng().seed = cfg.seed;
  }

  /// Evaluates log p and its gradient at every lane's pending point when a lane is running.
  template <class Target>
  bool evaluate(const Target& target) {
    if (!this->any_running()) return false;
    this->set_pending(target.value_and_gradient(this->pending_q(), this->pending_grad(),
                                                workspace_.empty() ? nullptr : workspace_.data()));
    return true;
  }

 private:
  std::vector<T> storage_;  // (std::allocator honours a batch's alignment)
  std::vector<T> workspace_;
};

/// W chains, each in a kernel of its own over double, whose pending points are evaluated
/// together as the lanes of T: copied into a batch, evaluated once, the gradients copied back.
/// The same interface as a kernel of W lanes.
template <class T>
class chain_lanes {
 public:
  using traits = lane_traits<T>;
  using kernel_type = nuts_kernel<double>;
  static constexpr int width = traits::width;

  chain_lanes(std::size_t d, const nuts_config& cfg, std::size_t workspace)
      : d_(d), size_(kernel_type::storage_size(d, cfg.max_depth, cfg.metric)), storage_(size_ * width),
        q_(d), g_(d), workspace_(workspace), gradients_(d * width) {
    for (int l = 0; l < width; ++l) {
      const nuts_status s =
          k_[l].bind(storage_.data() + size_ * static_cast<std::size_t>(l), size_, d, cfg.max_depth, cfg.metric);
      if (s != nuts_status::ok) throw_status(s, "max_depth = " + std::to_string(cfg.max_depth));
      k_[l].rng().seed = cfg.seed;
    }
  }

  void set_point(int l, const double* q, const double* g, double lp) { k_[l].set_point(0, q, g, lp); }
  void get_point(int l, double* q, double* g = nullptr) const { k_[l].get_point(0, q, g); }
  [[nodiscard]] double log_density(int l) const { return k_[l].log_density(0); }
  nuts_status set_metric(int l, const double* m, const double* chol = nullptr) { return k_[l].set_metric(0, m, chol); }
  nuts_status set_step_size(int l, double eps) { return k_[l].set_step_size(0, eps); }
  void set_stream(int l, const counter_rng& g) { k_[l].set_stream(0, g); }
  [[nodiscard]] counter_rng stream(int l) const { return k_[l].stream(0); }
  [[nodiscard]] bool running(int l) const { return k_[l].running(0); }
  [[nodiscard]] bool any_running() const {
    bool any = false;
    for (int l = 0; l < width; ++l) any = any || k_[l].running(0);
    return any;
  }
  [[nodiscard]] const transition_stats& stats(int l) const { return k_[l].stats(0); }
  void park(int, int) {}  // an idle lane is evaluated at a running lane's point (evaluate)

  nuts_status begin(const bool* start, int* bad = nullptr) {
    nuts_status status = nuts_status::ok;
    for (int l = 0; l < width; ++l) {
      if (!start[l]) continue;
      const bool one[1] = {true};
      const nuts_status s = k_[l].begin(one);
      if (s != nuts_status::ok) {
        status = s;
        if (bad) *bad = l;
      }
    }
    return status;
  }
  int resume(bool* ended) {
    int n = 0;
    for (int l = 0; l < width; ++l) {
      ended[l] = false;
      if (k_[l].running(0)) n += k_[l].resume(&ended[l]);
    }
    return n;
  }

  /// Evaluates log p and its gradient at every running lane's pending point, all lanes in one
  /// batched evaluation (an idle lane repeats a running lane's point).
  template <class Target>
  bool evaluate(const Target& target) {
    int any = -1;
    for (int l = 0; l < width && any < 0; ++l)
      if (k_[l].running(0)) any = l;
    if (any < 0) return false;
    const double* q[width];
    for (int l = 0; l < width; ++l) q[l] = (k_[l].running(0) ? k_[l] : k_[any]).pending_q();
    alignas(64) double lanes[width];
    for (std::size_t i = 0; i < d_; ++i) {
      for (int l = 0; l < width; ++l) lanes[l] = q[l][i];
      q_[i] = traits::load(lanes);
    }
    const T value = target.value_and_gradient(q_.data(), g_.data(), workspace_.empty() ? nullptr : workspace_.data());
    traits::store(lanes, value);
    double* out = gradients_.data();
    for (std::size_t i = 0; i < d_; ++i) traits::store(out + i * width, g_[i]);
    for (int l = 0; l < width; ++l) {
      if (!k_[l].running(0)) continue;
      k_[l].set_pending(lanes[l]);
      double* g = k_[l].pending_grad();
      for (std::size_t i = 0; i < d_; ++i) g[i] = out[i * width + static_cast<std::size_t>(l)];
    }
    return true;
  }

 private:
  std::size_t d_, size_;
  std::vector<double> storage_;
  kernel_type k_[width];
  std::vector<T> q_, g_, workspace_;
  std::vector<double> gradients_;  // [i * width + lane]
};

/// The chains of a group of W lanes (Lanes: batch_lanes or chain_lanes), with which chain each
/// lane runs and which chain's state it holds.
template <class Lanes, class Target>
class lane_block {
 public:
  using chain_type = nuts_chain<Target>;
  static constexpr int width = Lanes::width;

  lane_block(const Target& target, const nuts_config& cfg) : kernel(target.dim(), cfg, target.workspace_size()) {}
  lane_block(const lane_block&) = delete;
  lane_block& operator=(const lane_block&) = delete;

  bool evaluate(const Target& target) { return kernel.evaluate(target); }

  /// Puts chain c into lane l, its state loaded (the point and metric only when the lane does
  /// not already hold them).
  void load(chain_type* c, int l) {
    const bool same = resident[l] == c;
    c->load(kernel, l, !same, !same || metric_version[l] != c->metric_version());
    owner[l] = c;
    resident[l] = c;
    metric_version[l] = c->metric_version();
  }
  /// Lane l holds no chain: its pending θ becomes its last point, or another lane's, so that
  /// the batched evaluation reads finite numbers there.
  void park(int l) {
    owner[l] = nullptr;
    int from = resident[l] != nullptr ? l : -1;
    for (int k = 0; k < width && from < 0; ++k)
      if (resident[k] != nullptr) from = k;
    if (from >= 0) kernel.park(l, from);
  }
  /// A chain that failed leaves its lane; the lane's state is not its any more.
  void drop(int l) {
    resident[l] = nullptr;
    park(l);
  }

  Lanes kernel;
  chain_type* owner[width] = {};     // the chain running in each lane, or none
  chain_type* resident[width] = {};  // the chain whose point and metric each lane holds
  unsigned metric_version[width] = {};
};

/// Starts the lanes of `start`; a lane whose chain cannot start (non-finite energy) reports the
/// chain's error and is parked.
template <class Block, class OnError>
void begin_lanes(Block& b, bool* start, OnError& on_error) {
  constexpr int w = Block::width;
  b.kernel.begin(start);
  for (int l = 0; l < w; ++l)
    if (start[l] && !b.kernel.running(l)) {
      try {
        throw_status(nuts_status::non_finite_start, "chain " + std::to_string(b.owner[l]->chain() + 1));
      } catch (...) {
        on_error(b.owner[l]->chain());
      }
      b.drop(l);
    }
}

/// The program_counter schedule: chains [0, chains) wait in one queue shared by all threads; a
/// lane whose transition ends puts its chain at the back and takes the chain at the front. A
/// chain is initialised (initial point, first step size) the first time a lane takes it.
template <class Lanes, class Target, class OnError>
lane_counts run_program_counter(const Target& target, const nuts_config& cfg,
                                std::vector<std::unique_ptr<nuts_chain<Target>>>& chains, int threads, int lanes,
                                OnError& on_error) {
  using block = lane_block<Lanes, Target>;
  using chain_type = nuts_chain<Target>;
  constexpr int w = block::width;
  std::mutex queue_mutex;
  std::deque<chain_type*> queue;  // guarded by queue_mutex
  for (auto& c : chains) queue.push_back(c.get());
  std::atomic<long long> useful{0}, slots{0};
  auto worker = [&] {
    const int k_blocks = lanes / w;
    std::vector<std::unique_ptr<block>> blocks;
    for (int k = 0; k < k_blocks; ++k) blocks.push_back(std::make_unique<block>(target, cfg));
    // Gives lane l of b the chain at the front of the queue, after putting `mine` (if any) at
    // the back; start[l] when it has one.
    auto rotate = [&](block& b, int l, chain_type* mine, bool* start) {
      for (;;) {
        chain_type* next = nullptr;
        {
          std::lock_guard<std::mutex> lock(queue_mutex);
          if (mine != nullptr) queue.push_back(mine);
          mine = nullptr;
          if (!queue.empty()) {
            next = queue.front();
            queue.pop_front();
          }
        }
        if (next == nullptr) {
          b.park(l);
          return;
        }
        try {
          if (!next->initialised()) next->initialise();
          if (next->done()) continue;
          b.load(next, l);
          start[l] = true;
          return;
        } catch (...) {
          on_error(next->chain());
          b.drop(l);
        }
      }
    };
    std::vector<bool> evaluated(static_cast<std::size_t>(k_blocks));
    for (auto& b : blocks) {
      bool start[w] = {};
      for (int l = 0; l < w; ++l) rotate(*b, l, nullptr, start);
      begin_lanes(*b, start, on_error);
    }
    long long my_useful = 0, my_slots = 0;
    for (;;) {
      long long spent = 0;
      for (std::size_t k = 0; k < blocks.size(); ++k) {
        evaluated[k] = blocks[k]->evaluate(target);
        if (evaluated[k]) spent += w;
      }
      if (spent == 0) break;  // every lane is idle and the queue is empty
      my_slots += spent;
      for (std::size_t k = 0; k < blocks.size(); ++k) {
        if (!evaluated[k]) continue;
        block& b = *blocks[k];
        for (int l = 0; l < w; ++l) my_useful += b.kernel.running(l) ? 1 : 0;
        bool ended[w];
        if (b.kernel.resume(ended) == 0) continue;
        bool start[w] = {};
        for (int l = 0; l < w; ++l) {
          if (!ended[l]) continue;
          chain_type* c = b.owner[l];
          try {
            c->unload(b.kernel, l);
            c->end_iteration(b.kernel.stats(l));
          } catch (...) {
            on_error(c->chain());
            b.drop(l);
            rotate(b, l, nullptr, start);
            continue;
          }
          rotate(b, l, c->done() ? nullptr : c, start);
        }
        begin_lanes(b, start, on_error);
      }
    }
    useful += my_useful;
    slots += my_slots;
  };
  if (threads == 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (auto& th : pool) th.join();
  }
  return {useful.load(), slots.load()};
}

/// The trajectory_sync schedule: thread t holds chains t, t + threads, …, each in a lane of its
/// own; every iteration all of them begin a transition, and the thread waits for the longest,
/// then for the other threads.
template <class Lanes, class Target, class OnError>
lane_counts run_trajectory_sync(const Target& target, const nuts_config& cfg,
                                std::vector<std::unique_ptr<nuts_chain<Target>>>& chains, int threads, int lanes,
                                OnError& on_error) {
  using block = lane_block<Lanes, Target>;
  using chain_type = nuts_chain<Target>;
  constexpr int w = block::width;
  const int n_chains = static_cast<int>(chains.size());
  std::vector<long long> longest(static_cast<std::size_t>(threads), 0);
  std::atomic<long long> useful{0};
  long long slots = 0;
  std::atomic<long long> resident_slots{0};  // lane slots the chains occupy, whole batches
  auto completion = [&]() noexcept {
    long long m = 0;
    for (auto& x : longest) {
      m = std::max(m, x);
      x = 0;
    }
    slots += m * resident_slots.load();
  };
  std::barrier sync(threads, completion);
  auto worker = [&](int t) {
    std::vector<chain_type*> mine;
    for (int c = t; c < n_chains; c += threads) {
      try {
        chains[static_cast<std::size_t>(c)]->initialise();
        if (!chains[static_cast<std::size_t>(c)]->done()) mine.push_back(chains[static_cast<std::size_t>(c)].get());
      } catch (...) {
        on_error(c);
      }
    }
    const std::size_t group = static_cast<std::size_t>(lanes);
    for (std::size_t first = 0; first < mine.size(); first += group)
      resident_slots += static_cast<long long>((std::min(group, mine.size() - first) + w - 1) / w * w);
    std::vector<std::unique_ptr<block>> blocks;
    for (std::size_t first = 0; first < mine.size(); first += w) blocks.push_back(std::make_unique<block>(target, cfg));
    sync.arrive_and_wait();  // every thread counted its chains
    std::vector<long long> steps(mine.size(), 0);
    long long my_useful = 0;
    for (;;) {
      bool any = false;
      for (std::size_t k = 0; k < blocks.size(); ++k) {
        block& b = *blocks[k];
        bool start[w] = {};
        for (int l = 0; l < w; ++l) {
          const std::size_t i = k * w + static_cast<std::size_t>(l);
          if (i >= mine.size() || mine[i] == nullptr || mine[i]->done()) continue;
          try {
            b.load(mine[i], l);
            start[l] = true;
            any = true;
          } catch (...) {
            on_error(mine[i]->chain());
            mine[i] = nullptr;
            b.drop(l);
          }
        }
        begin_lanes(b, start, on_error);
        for (int l = 0; l < w; ++l)
          if (start[l] && !b.kernel.running(l)) mine[k * w + static_cast<std::size_t>(l)] = nullptr;
      }
      for (;;) {
        bool ran = false;
        for (std::size_t k = 0; k < blocks.size(); ++k) {
          block& b = *blocks[k];
          if (!b.evaluate(target)) continue;
          ran = true;
          for (int l = 0; l < w; ++l)
            if (b.kernel.running(l)) {
              ++my_useful;
              ++steps[k * w + static_cast<std::size_t>(l)];
            }
          bool ended[w];
          if (b.kernel.resume(ended) == 0) continue;
          for (int l = 0; l < w; ++l) {
            if (!ended[l]) continue;
            chain_type*& c = mine[k * w + static_cast<std::size_t>(l)];
            try {
              c->unload(b.kernel, l);
              c->end_iteration(b.kernel.stats(l));
              b.park(l);
            } catch (...) {
              on_error(c->chain());
              c = nullptr;
              b.drop(l);
            }
          }
        }
        if (!ran) break;
      }
      long long m = 0;
      for (auto& s : steps) {
        m = std::max(m, s);
        s = 0;
      }
      longest[static_cast<std::size_t>(t)] = m;
      if (!any) {  // this thread's chains are done (or it had none): leave the barrier
        sync.arrive_and_drop();
        break;
      }
      sync.arrive_and_wait();
    }
    useful += my_useful;
  };
  if (threads == 1) {
    worker(0);
  } else {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(worker, t);
    for (auto& th : pool) th.join();
  }
  return {useful.load(), slots};
}

/// Runs the chains with the CPU executor's settings; returns the gradient counts and sets
/// fit.lanes.
template <class Target, class OnError>
lane_counts run_cpu(const Target& target, const nuts_config& cfg, const cpu& exec,
                    std::vector<std::unique_ptr<nuts_chain<Target>>>& chains, nuts_fit& fit, OnError& on_error) {
  static_assert(log_density_target<Target>,
                "tyche::samplers::detail::run_cpu(target, ...) requires a log_density_target (tyche/concepts.hpp)");
  if (exec.threads < 0)
    throw std::invalid_argument("tyche::nuts: threads = " + std::to_string(exec.threads) +
                                " must be ≥ 0 (0: one per chain, up to the hardware's concurrency)");
  int threads = exec.threads > 0 ? exec.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::min(threads, cfg.chains);
  const int lanes = resolve_lanes(exec.lanes, cfg.chains, threads);
  fit.lanes = lanes;
  auto run = [&]<class T>(std::type_identity<T>) {
    // One kernel per chain, the gradient batched (the default), or one kernel per batch of
    // chains (cpu::lane_kernel; docs/design/nuts-kernel.md says when each is faster).
    auto with = [&]<class Lanes>(std::type_identity<Lanes>) {
      if (exec.schedule == lane_schedule::trajectory_sync)
        return run_trajectory_sync<Lanes>(target, cfg, chains, threads, lanes, on_error);
      return run_program_counter<Lanes>(target, cfg, chains, threads, lanes, on_error);
    };
    if constexpr (lane_traits<T>::width == 1) return with(std::type_identity<batch_lanes<T>>{});
    else if (exec.lane_kernel == cpu_lane_kernel::batch) return with(std::type_identity<batch_lanes<T>>{});
    else return with(std::type_identity<chain_lanes<T>>{});
  };
  constexpr int full = simd_lane_width, half = half_lane_width > 1 ? half_lane_width : 1;
  if constexpr (full > 1)
    if (lanes > 1 && lanes % full == 0) return run(std::type_identity<lane_batch>{});
  if constexpr (half > 1)
    if (lanes > 1 && lanes % half == 0) return run(std::type_identity<half_lane_batch>{});
  return run(std::type_identity<double>{});
}

}  // namespace detail
}  // namespace tyche::samplers
// ----- end tyche/samplers/nuts/cpu_executor.hpp -----

#include <chrono>
#include <cmath>
#include <cstddef>
#include <exception>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace tyche {

namespace samplers::detail {

/// A model as the sampler sees it (samplers/concepts.hpp, log_density_target): its compiled
/// log density (with the log-Jacobian) for double and for the SIMD batches, Stan's random
/// initialisation, and constrain.
template <class Model>
class model_target {
 public:
  explicit model_target(const Model& m) : model_(m), view_(m.program().view()) {}
  [[nodiscard]] std::size_t dim() const { return model_.dim(); }
  [[nodiscard]] std::size_t constrained_dim() const { return model_.constrained_dim(); }
  [[nodiscard]] std::size_t workspace_size() const { return model_.program().workspace_size(); }
  template <class T>
  T value_and_gradient(const T* q, T* grad, T* workspace) const {
    return view_.value_and_gradient(q, grad, workspace);
  }
  template <class Generator>
  [[nodiscard]] std::vector<double> initial_point(Generator& rng, double radius) const {
    return model_.initial_point(rng, radius);
  }
  /// Appends the constrained values of θ to out.
  void constrain(const double* q, std::vector<double>& out) const {
    const auto x = model_.constrain(std::span<const double>(q, dim()));
    out.insert(out.end(), x.begin(), x.end());
  }

 private:
  const Model& model_;
  const std::remove_cvref_t<decltype(std::declval<const Model&>().program().view())>& view_;
};

/// The configuration's errors, before any chain starts: invalid_argument naming the setting.
inline void check_config(const nuts_config& cfg) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("tyche::nuts: " + what); };
  if (cfg.chains < 1 || cfg.draws < 0 || cfg.warmup < 0)
    fail("chains must be ≥ 1 and warmup, draws ≥ 0 (got chains = " + std::to_string(cfg.chains) +
         ", warmup = " + std::to_string(cfg.warmup) + ", draws = " + std::to_string(cfg.draws) + ")");
  if (!(cfg.adapt_delta > 0 && cfg.adapt_delta < 1))
    fail("adapt_delta = " + tyche::detail::format_number(cfg.adapt_delta) + " is outside (0, 1)");
  if (cfg.max_depth < 1 || cfg.max_depth > max_supported_depth)
    fail("max_depth = " + std::to_string(cfg.max_depth) + " is outside [1, " + std::to_string(max_supported_depth) +
         "]");
  if (!(cfg.init_step_size > 0) || !std::isfinite(cfg.init_step_size))
    fail("init_step_size = " + tyche::detail::format_number(cfg.init_step_size) + " is not a positive finite number");
  if (!(cfg.init_radius >= 0) || !std::isfinite(cfg.init_radius))
    fail("init_radius = " + tyche::detail::format_number(cfg.init_radius) + " is not a finite number ≥ 0");
}

/// The sampler's view of a log_density_target with its type erased: the driver — chains,
/// warm-up, the executor's schedules over every lane layout and batch width — is compiled once
/// per translation unit, not once per model type (issue 18: it was most of the code generated
/// for each model of a program that samples several); per model only the model's own code is
/// compiled: its log density and gradient for double and for each batch the executor may use,
/// its initialisation and constrain. The price is one indirect call per evaluation of a batch of
/// lanes (bench/run.sh nuts_step measures it); the arithmetic, and so every draw, is unchanged.
///
/// A template on the batch types, so that translation units built with different SIMD settings
/// (-march, tyche::tyche beside tyche::simd) get distinct drivers instead of one inline function
/// with two bodies.
template <class Full, class Half>
class erased_target {
  template <class T>
  using value_and_gradient_fn = T (*)(const void*, const T*, T*, T*);
  using half_type = std::conditional_t<std::is_void_v<Half>, double, Half>;

  template <class Target, class T>
  static T value_and_gradient_of(const void* self, const T* q, T* grad, T* workspace) {
    return static_cast<const Target*>(self)->value_and_gradient(q, grad, workspace);
  }
  template <class Target>
  static std::vector<double> initial_point_of(const void* self, counter_rng& rng, double radius) {
    return static_cast<const Target*>(self)->initial_point(rng, radius);
  }
  template <class Target>
  static void constrain_of(const void* self, const double* q, std::vector<double>& out) {
    static_cast<const Target*>(self)->constrain(q, out);
  }

 public:
  /// Views `target`, which must outlive this object.
  template <log_density_target Target>
  explicit erased_target(const Target& target)
      : self_(&target), dim_(target.dim()), constrained_dim_(target.constrained_dim()),
        workspace_size_(target.workspace_size()), double_(&value_and_gradient_of<Target, double>),
        full_(&value_and_gradient_of<Target, Full>), half_(&value_and_gradient_of<Target, half_type>),
        initial_point_(&initial_point_of<Target>), constrain_(&constrain_of<Target>) {}
  [[nodiscard]] std::size_t dim() const { return dim_; }
  [[nodiscard]] std::size_t constrained_dim() const { return constrained_dim_; }
  [[nodiscard]] std::size_t workspace_size() const { return workspace_size_; }
  /// T: double, Full or Half (lane_batch, half_lane_batch: the types the CPU executor evaluates).
  template <class T>
  T value_and_gradient(const T* q, T* grad, T* workspace) const {
    if constexpr (std::is_same_v<T, double>) {
      return double_(self_, q, grad, workspace);
    } else if constexpr (std::is_same_v<T, Full>) {
      return full_(self_, q, grad, workspace);
    } else {
      static_assert(std::is_same_v<T, half_type>, "erased_target: a batch type the CPU executor does not use");
      return half_(self_, q, grad, workspace);
    }
  }
  [[nodiscard]] std::vector<double> initial_point(counter_rng& rng, double radius) const {
    return initial_point_(self_, rng, radius);
  }
  void constrain(const double* q, std::vector<double>& out) const { constrain_(self_, q, out); }

 private:
  const void* self_;
  std::size_t dim_, constrained_dim_, workspace_size_;
  value_and_gradient_fn<double> double_;
  value_and_gradient_fn<Full> full_;
  value_and_gradient_fn<half_type> half_;
  std::vector<double> (*initial_point_)(const void*, counter_rng&, double);
  void (*constrain_)(const void*, const double*, std::vector<double>&);
};

/// The driver's view of every model of this translation unit's SIMD settings.
using model_erased_target = erased_target<lane_batch, half_lane_batch>;

/// nuts() on a model's erased target: the fit's frame, the chains, the executor. One
/// instantiation per SIMD setting, whatever the number of models a program samples.
template <class Target>
nuts_fit run_nuts_erased(const Target& target, const nuts_config& cfg, std::vector<std::string> names) {
  check_config(cfg);
  const auto start = std::chrono::steady_clock::now();
  nuts_fit fit;
  fit.max_depth = cfg.max_depth;
  fit.adapt_delta = cfg.adapt_delta;
  fit.seed = cfg.seed;
  fit.names = std::move(names);
  fit.chains = cfg.chains;
  fit.draws = cfg.draws;
  fit.values.resize(static_cast<std::size_t>(cfg.chains));
  fit.stats.resize(static_cast<std::size_t>(cfg.chains));
  fit.step_size.resize(static_cast<std::size_t>(cfg.chains));
  fit.inv_metric.resize(static_cast<std::size_t>(cfg.chains));
  using chain_type = nuts_chain<Target>;
  std::vector<std::unique_ptr<chain_type>> chains;
  for (int c = 0; c < cfg.chains; ++c) chains.push_back(std::make_unique<chain_type>(target, cfg, c, fit));
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(cfg.chains));
  auto record_error = [&](int c) {
    try {
      throw;
    } catch (const std::exception& e) {
      // Named once: a chain's own errors start "tyche::nuts: chain <c>: ".
      const std::string what = e.what();
      const bool named = what.rfind("tyche::nuts: chain " + std::to_string(c + 1) + ":", 0) == 0;
      errors[static_cast<std::size_t>(c)] = std::make_exception_ptr(
          std::runtime_error(named ? what : what + " (chain " + std::to_string(c + 1) + ")"));
    } catch (...) {
      errors[static_cast<std::size_t>(c)] = std::current_exception();
    }
  };
  const samplers::lane_counts counts = std::visit(
      [&](const auto& executor) { return samplers::detail::run_cpu(target, cfg, executor, chains, fit, record_error); },
      cfg.executor);
  fit.gradient_evaluations = counts.useful;
  fit.utilization = counts.slots > 0 ? static_cast<double>(counts.useful) / static_cast<double>(counts.slots) : 1.0;
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  fit.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return fit;
}

/// nuts() once the model is known to be one: its target, erased.
template <class Model>
nuts_fit run_nuts(const Model& m, const nuts_config& cfg) {
  const model_target<Model> target(m);
  return run_nuts_erased(model_erased_target(target), cfg, m.parameter_names());
}

}  // namespace samplers::detail

/// Runs NUTS on a model: config.chains chains of config.warmup + config.draws iterations, on
/// the executor config.executor (tyche::cpu{} by default).
template <class Model>
nuts_fit nuts(const Model& m, const nuts_config& cfg = {}) {
  if constexpr (!sampleable_model<Model>) {
    static_assert(sampleable_model<Model>,
                  "tyche::nuts(model, config) requires a model built with tyche::model(...) (a joint "
                  "distribution of named random variables, e.g. tyche::model(tyche::joint(mu, "
                  "normal(mu, 1.0).observe(tyche::data(y))))); the first argument is not one");
    return {};
  } else {
    return samplers::detail::run_nuts(m, cfg);
  }
}

/// nuts(model, config) on the given executor: nuts(m, {.chains = 8}, tyche::cpu{.threads = 2})
/// is nuts(m, {.chains = 8, .executor = tyche::cpu{.threads = 2}}).
template <class Model, class Executor>
nuts_fit nuts(const Model& m, nuts_config cfg, const Executor& executor) {
  if constexpr (!nuts_executor_type<Executor>) {
    static_assert(nuts_executor_type<Executor>,
                  "tyche::nuts(model, config, executor) requires an executor as its third argument "
                  "(tyche::cpu{.threads = ..., .lanes = ...}); the argument given is not one");
    return {};
  } else {
    cfg.executor = executor;
    return nuts(m, cfg);
  }
}

}  // namespace tyche
// ----- end tyche/samplers/nuts/sampler.hpp -----
// ----- begin tyche/diagnostics/convergence.hpp -----
// tyche/diagnostics/convergence.hpp — MCMC convergence diagnostics: split-R̂, rank-normalised
// split-R̂ (bulk and folded, "tail"), bulk-ESS, tail-ESS, ESS of a quantile, MCSE of the mean and
// of a quantile, and type-7 quantiles.
//
//     std::vector<double> draws = ...;                // 4 chains × 1000 draws, one chain after another
//     double r   = tyche::rhat(draws, 4, 1000);       // max(bulk R̂, folded R̂), as Stan reports it
//     double eb  = tyche::ess_bulk(draws, 4, 1000);
//     double et  = tyche::ess_tail(draws, 4, 1000);
//     double se  = tyche::mcse_mean(draws, 4, 1000);
//     double q95 = tyche::quantile(draws, 0.95);
//
//     std::vector<std::vector<double>> chains = ...;  // or one range per chain (equal lengths)
//     double r2 = tyche::rhat(chains);
//
// Reference. A. Vehtari, A. Gelman, D. Simpson, B. Carpenter, P.-C. Bürkner (2021),
// "Rank-normalization, folding, and localization: an improved R̂ for assessing convergence of
// MCMC", Bayesian Analysis 16(2), 667–718, doi:10.1214/20-BA1221. Every function follows the
// definition of the R package `posterior` (checked against posterior 1.4.0 on R 4.2.2 by
// tests/diagnostics; tools/diagnostics_reference.R writes the reference values):
//   * split chains: each chain is cut into halves of floor(n/2) draws; when n is odd the middle
//     draw is dropped (posterior's .split_chains);
//   * rank normalisation: ranks over all (split) draws together, ties get their average rank,
//     z = Φ⁻¹((r − 3/8) / (S + 1/4)) with S the number of draws (posterior's z_scale);
//   * folding: |x − median(x)|, the median over all draws (posterior's fold_draws);
//   * ESS: Geyer's initial positive sequence of the chain-averaged autocorrelations, then his
//     initial monotone sequence, the "improved" end term ρ̂ of the last even lag, and τ̂ capped
//     below at 1/log10(S) (posterior's .ess, equations (10)–(11) of the paper). posterior computes
//     autocovariances by FFT; here each lag is computed directly and only as far as Geyer's
//     truncation reaches: O(S · lags), about 1 s for 4 × 100 000 draws of an AR(1) with
//     ρ = 0.999, O(S · n) at worst for chains that do not mix. The two agree to rounding.
//
// Input. Draws are given either as one contiguous array, chains × draws row-major (chain c's
// draws at [c·n, (c+1)·n)), with its shape, or as a range of chains, each a range convertible to
// std::span<const double> (std::vector<std::vector<double>>, std::vector<std::span<const double>>,
// ...), all of one length. Every function accepts any number of chains ≥ 1 and throws
// std::invalid_argument for none, or when the array's size is not chains × n, or the chains
// differ in length.
//
// NaN results. Where posterior returns NA, these functions return a quiet NaN and never throw:
// with fewer than 4 draws per chain (a split chain needs 2 draws for R̂), and
// when the draws (or the split, rank-normalised or indicator draws a function looks at) contain
// NaN or ±∞ or are constant (max − min < DBL_EPSILON, posterior's absolute tolerance). ESS needs
// at least 3 draws per split chain, so every ESS and MCSE is NaN for n = 4 and n = 5. Like
// posterior, ranks are finite for ±∞ draws, so rhat, rhat_bulk and ess_bulk still give numbers
// there, while split_rhat, ess_basic and ess_tail are NaN. When every chain is constant but the
// chains differ, the within-chain variance is 0 and every R̂ is +∞ (posterior reports +∞ for
// rhat_basic and, from rounding noise in its sums, about 1e16 for the rank-normalised ones); the
// ESS there is finite, as in posterior.

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <limits>
#include <numeric>
#include <ranges>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace tyche {

namespace detail::diagnostics {

inline constexpr double nan_value = std::numeric_limits<double>::quiet_NaN();

/// Chains stored one after another: chain c is data[c·n, (c+1)·n).
struct draw_matrix {
  std::vector<double> data;
  std::size_t chains = 0;
  std::size_t n = 0;
  const double* chain(std::size_t c) const { return data.data() + c * n; }
  double* chain(std::size_t c) { return data.data() + c * n; }
};

/// A range of chains, each convertible to std::span<const double>.
template <class R>
concept chain_range = std::ranges::input_range<const R> &&
                      std::convertible_to<std::ranges::range_reference_t<const R>, std::span<const double>>;

[[noreturn]] inline void fail(const char* function, const std::string& what) {
  throw std::invalid_argument(std::string("tyche::") + function + ": " + what);
}

inline void check_shape(const char* function, std::size_t size, std::size_t chains, std::size_t n) {
  if (chains < 1) fail(function, "needs at least one chain");
  if (size != chains * n)
    fail(function, "draws has " + std::to_string(size) + " values, expected chains × n = " +
                       std::to_string(chains) + " × " + std::to_string(n));
}

inline draw_matrix gather(const char* function, std::span<const double> draws, std::size_t chains,
                          std::size_t n) {
  check_shape(function, draws.size(), chains, n);
  return draw_matrix{std::vector<double>(draws.begin(), draws.end()), chains, n};
}

template <chain_range R>
draw_matrix gather(const char* function, const R& chains) {
  draw_matrix m;
  bool first = true;
  for (auto&& c : chains) {
    const std::span<const double> s = c;
    if (first) {
      m.n = s.size();
      first = false;
    } else if (s.size() != m.n) {
      fail(function, "chain " + std::to_string(m.chains + 1) + " has " + std::to_string(s.size()) +
                         " draws, chain 1 has " + std::to_string(m.n));
    }
    m.data.insert(m.data.end(), s.begin(), s.end());
    ++m.chains;
  }
  check_shape(function, m.data.size(), m.chains, m.n);
  return m;
}

/// posterior's should_return_NA: any NaN or ±∞, or max − min < DBL_EPSILON.
inline bool should_return_na(std::span<const double> x) {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  for (double v : x) {
    if (!std::isfinite(v)) return true;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  return std::abs(hi - lo) < std::numeric_limits<double>::epsilon();
}

/// Fewer draws per chain than any R̂ or ESS needs: 4 (two per split chain). NaN, as posterior.
inline constexpr std::size_t min_draws = 4;
inline bool too_few(const draw_matrix& x) { return x.n < min_draws; }

inline bool any_nan(std::span<const double> x) {
  return std::any_of(x.begin(), x.end(), [](double v) { return std::isnan(v); });
}

/// R's mean(): long double sum, then one correction pass.
inline double r_mean(const double* x, std::size_t n) {
  long double s = 0.0L;
  for (std::size_t i = 0; i < n; ++i) s += x[i];
  s /= static_cast<long double>(n);
  if (std::isfinite(static_cast<double>(s))) {
    long double t = 0.0L;
    for (std::size_t i = 0; i < n; ++i) t += (x[i] - s);
    s += t / static_cast<long double>(n);
  }
  return static_cast<double>(s);
}

/// Sample variance (denominator n − 1), two passes.
inline double r_var(const double* x, std::size_t n) {
  const double m = r_mean(x, n);
  long double s = 0.0L;
  for (std::size_t i = 0; i < n; ++i) {
    const double d = x[i] - m;
    s += static_cast<long double>(d) * d;
  }
  return static_cast<double>(s / static_cast<long double>(n - 1));
}

/// posterior's .split_chains: halves of floor(n/2) draws, the middle draw dropped for odd n; the
/// first halves of all chains come first, then the second halves.
inline draw_matrix split_chains(const draw_matrix& x) {
  const std::size_t half = x.n / 2;
  draw_matrix s{std::vector<double>(2 * x.chains * half), 2 * x.chains, half};
  for (std::size_t c = 0; c < x.chains; ++c) {
    const double* src = x.chain(c);
    std::copy(src, src + half, s.chain(c));
    std::copy(src + (x.n - half), src + x.n, s.chain(x.chains + c));
  }
  return s;
}

/// Φ⁻¹(p), Wichura's algorithm AS 241 (PPND16), as R's qnorm (R ≤ 4.2).
inline double inv_normal_cdf(double p) {
  if (std::isnan(p) || p < 0.0 || p > 1.0) return nan_value;
  if (p == 0.0) return -std::numeric_limits<double>::infinity();
  if (p == 1.0) return std::numeric_limits<double>::infinity();
  const double q = p - 0.5;
  if (std::abs(q) <= 0.425) {
    const double r = 0.180625 - q * q;
    return q *
           (((((((r * 2509.0809287301226727 + 33430.575583588128105) * r + 67265.770927008700853) * r +
                45921.953931549871457) * r + 13731.693765509461125) * r + 1971.5909503065514427) * r +
             133.14166789178437745) * r + 3.387132872796366608) /
           (((((((r * 5226.495278852854561 + 28729.085735721942674) * r + 39307.89580009271061) * r +
                21213.794301586595867) * r + 5394.1960214247511077) * r + 687.1870074920579083) * r +
             42.313330701600911252) * r + 1.0);
  }
  double r = std::sqrt(-std::log(q < 0.0 ? p : 1.0 - p));
  double val;
  if (r <= 5.0) {
    r -= 1.6;
    val = (((((((r * 7.7454501427834140764e-4 + 0.0227238449892691845833) * r + 0.24178072517745061177) * r +
               1.27045825245236838258) * r + 3.64784832476320460504) * r + 5.7694972214606914055) * r +
            4.6303378461565452959) * r + 1.42343711074968357734) /
          (((((((r * 1.05075007164441684324e-9 + 5.475938084995344946e-4) * r + 0.0151986665636164571966) * r +
               0.14810397642748007459) * r + 0.68976733498510000455) * r + 1.6763848301838038494) * r +
            2.05319162663775882187) * r + 1.0);
  } else {
    r -= 5.0;
    val = (((((((r * 2.01033439929228813265e-7 + 2.71155556874348757815e-5) * r + 0.0012426609473880784386) * r +
               0.026532189526576123093) * r + 0.29656057182850489123) * r + 1.7848265399172913358) * r +
            5.4637849111641143699) * r + 6.6579046435011037772) /
          (((((((r * 2.04426310338993978564e-15 + 1.4215117583164458887e-7) * r + 1.8463183175100546818e-5) * r +
               7.868691311456132591e-4) * r + 0.0148753612908506148525) * r + 0.13692988092273580531) * r +
            0.59983220655588793769) * r + 1.0);
  }
  return q < 0.0 ? -val : val;
}

/// posterior's z_scale: average ranks over all values, then Φ⁻¹((r − 3/8) / (S + 1/4)).
inline void z_scale(std::vector<double>& values) {
  const std::size_t S = values.size();
  std::vector<std::size_t> order(S);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  std::vector<double> rank(S);
  for (std::size_t i = 0; i < S;) {
    std::size_t j = i;
    while (j + 1 < S && values[order[j + 1]] == values[order[i]]) ++j;
    const double r = static_cast<double>(i + j + 2) / 2.0;  // 1-based average rank of i..j
    for (std::size_t k = i; k <= j; ++k) rank[order[k]] = r;
    i = j + 1;
  }
  const double denominator = static_cast<double>(S) - 2.0 * 0.375 + 1.0;
  for (std::size_t i = 0; i < S; ++i) values[i] = inv_normal_cdf((rank[i] - 0.375) / denominator);
}

/// R's quantile(type = 7) of values already sorted ascending.
inline double quantile_sorted(std::span<const double> sorted, double p) {
  const std::size_t n = sorted.size();
  if (n == 0 || std::isnan(p)) return nan_value;
  p = std::max(0.0, std::min(1.0, p));
  const double index = 1.0 + static_cast<double>(n - 1) * p;  // 1-based, as in R
  const double lo = std::floor(index);
  const double hi = std::ceil(index);
  const double qs = sorted[static_cast<std::size_t>(lo) - 1];
  const double xh = sorted[static_cast<std::size_t>(hi) - 1];
  if (index > lo && xh != qs) {
    const double h = index - lo;
    return (1.0 - h) * qs + h * xh;
  }
  return qs;
}

/// R's median(): the middle value, or R's mean() of the two middle values.
inline double r_median(std::vector<double> x) {
  const std::size_t n = x.size();
  const std::size_t half = (n + 1) / 2;  // 1-based index of the (lower) middle value
  std::nth_element(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(half - 1), x.end());
  const double a = x[half - 1];
  if (n % 2 == 1) return a;
  const double b = *std::min_element(x.begin() + static_cast<std::ptrdiff_t>(half), x.end());
  const double pair[2] = {a, b};
  return r_mean(pair, 2);
}

/// posterior's .rhat on already split (and possibly rank-normalised) chains.
inline double rhat_core(const draw_matrix& x) {
  if (x.n < 2 || should_return_na(x.data)) return nan_value;
  const std::size_t m = x.chains, n = x.n;
  std::vector<double> mean(m), var(m);
  for (std::size_t c = 0; c < m; ++c) {
    mean[c] = r_mean(x.chain(c), n);
    var[c] = r_var(x.chain(c), n);
  }
  const double dn = static_cast<double>(n);
  const double var_between = dn * r_var(mean.data(), m);
  const double var_within = r_mean(var.data(), m);
  return std::sqrt((var_between / var_within + dn - 1.0) / dn);
}

/// posterior's .ess on already split chains: Geyer's initial positive and initial monotone
/// sequences on the chain-averaged autocovariances (biased estimator, denominator n).
inline double ess_core(const draw_matrix& x) {
  const std::size_t m = x.chains, n = x.n;
  if (n < 3 || should_return_na(x.data)) return nan_value;
  // Centred chains; a chain of zero variance has zero autocovariances (as in posterior).
  std::vector<double> centred(m * n);
  std::vector<double> mean(m);
  for (std::size_t c = 0; c < m; ++c) {
    const double* xc = x.chain(c);
    mean[c] = r_mean(xc, n);
    const bool constant = r_var(xc, n) == 0.0;
    for (std::size_t i = 0; i < n; ++i) centred[c * n + i] = constant ? 0.0 : xc[i] - mean[c];
  }
  std::vector<double> acov_means;  // computed lag by lag, as far as the sequences need
  auto acov_mean = [&](std::size_t lag) {
    while (acov_means.size() <= lag) {
      const std::size_t t = acov_means.size();
      double total = 0.0;
      for (std::size_t c = 0; c < m; ++c) {
        const double* y = centred.data() + c * n;
        const std::size_t len = n - t;
        double s[4] = {0.0, 0.0, 0.0, 0.0};  // four running sums: pipelined, and pairwise-ish
        std::size_t i = 0;
        for (; i + 4 <= len; i += 4)
          for (std::size_t k = 0; k < 4; ++k) s[k] += y[i + k] * y[i + k + t];
        for (; i < len; ++i) s[0] += y[i] * y[i + t];
        total += ((s[0] + s[1]) + (s[2] + s[3])) / static_cast<double>(n);
      }
      acov_means.push_back(total / static_cast<double>(m));
    }
    return acov_means[lag];
  };
  const double dn = static_cast<double>(n);
  const double mean_var = acov_mean(0) * dn / (dn - 1.0);
  double var_plus = mean_var * (dn - 1.0) / dn;
  if (m > 1) var_plus += r_var(mean.data(), m);

  std::vector<double> rho(n, 0.0);
  const long long last = static_cast<long long>(n) - 5;
  long long t = 0;
  double rho_even = 1.0;
  rho[0] = rho_even;
  double rho_odd = 1.0 - (mean_var - acov_mean(1)) / var_plus;
  rho[1] = rho_odd;
  while (t < last && !std::isnan(rho_even + rho_odd) && rho_even + rho_odd > 0.0) {
    t += 2;
    const auto ut = static_cast<std::size_t>(t);
    rho_even = 1.0 - (mean_var - acov_mean(ut)) / var_plus;
    rho_odd = 1.0 - (mean_var - acov_mean(ut + 1)) / var_plus;
    if (rho_even + rho_odd >= 0.0) {
      rho[ut] = rho_even;
      rho[ut + 1] = rho_odd;
    }
  }
  const long long max_t = t;
  if (rho_even > 0.0) rho[static_cast<std::size_t>(max_t)] = rho_even;
  // Geyer's initial monotone sequence.
  t = 0;
  while (t <= max_t - 4) {
    t += 2;
    const auto ut = static_cast<std::size_t>(t);
    if (rho[ut] + rho[ut + 1] > rho[ut - 2] + rho[ut - 1]) {
      rho[ut] = (rho[ut - 2] + rho[ut - 1]) / 2.0;
      rho[ut + 1] = rho[ut];
    }
  }
  const double ess = static_cast<double>(m) * dn;
  // sum(rho_hat_t[1:max_t]) in R; for max_t = 0, 1:0 selects rho_hat_t[1] alone.
  double sum = 0.0;
  if (max_t == 0) {
    sum = rho[0];
  } else {
    for (long long i = 0; i < max_t; ++i) sum += rho[static_cast<std::size_t>(i)];
  }
  double tau = -1.0 + 2.0 * sum + rho[static_cast<std::size_t>(max_t)];
  const double tau_bound = 1.0 / std::log10(ess);
  if (tau < tau_bound) tau = tau_bound;
  return ess / tau;
}

/// Rank-normalised split-R̂ of the given (unsplit) draws.
inline double rhat_bulk_core(const draw_matrix& x) {
  if (too_few(x)) return nan_value;
  draw_matrix s = split_chains(x);
  if (any_nan(s.data)) return nan_value;
  z_scale(s.data);
  return rhat_core(s);
}

/// Rank-normalised split-R̂ of |x − median(x)|.
inline double rhat_tail_core(const draw_matrix& x) {
  if (too_few(x) || any_nan(x.data)) return nan_value;
  const double med = r_median(x.data);
  draw_matrix f = x;
  for (double& v : f.data) v = std::abs(v - med);
  return rhat_bulk_core(f);
}

/// posterior's .ess_quantile: ESS of the split indicator draws x ≤ quantile(x, p).
inline double ess_quantile_core(const draw_matrix& x, double p) {
  if (too_few(x) || should_return_na(x.data)) return nan_value;
  const std::size_t S = x.data.size();
  if (p == 1.0) p = (static_cast<double>(S) - 0.5) / static_cast<double>(S);
  std::vector<double> sorted = x.data;
  std::sort(sorted.begin(), sorted.end());
  const double q = quantile_sorted(sorted, p);
  draw_matrix indicator{std::vector<double>(S), x.chains, x.n};
  for (std::size_t i = 0; i < S; ++i) indicator.data[i] = x.data[i] <= q ? 1.0 : 0.0;
  return ess_core(split_chains(indicator));
}

/// Regularised incomplete beta function I_x(a, b) (continued fraction, modified Lentz).
inline double incomplete_beta(double a, double b, double x) {
  if (x <= 0.0) return 0.0;
  if (x >= 1.0) return 1.0;
  const auto continued_fraction = [](double a_, double b_, double x_) {
    constexpr double tiny = 1e-300;
    constexpr double eps = 1e-16;
    const double qab = a_ + b_, qap = a_ + 1.0, qam = a_ - 1.0;
    double c = 1.0;
    double d = 1.0 - qab * x_ / qap;
    if (std::abs(d) < tiny) d = tiny;
    d = 1.0 / d;
    double h = d;
    for (int k = 1; k <= 100000; ++k) {
      const double kk = k, k2 = 2.0 * kk;
      double aa = kk * (b_ - kk) * x_ / ((qam + k2) * (a_ + k2));
      d = 1.0 + aa * d;
      if (std::abs(d) < tiny) d = tiny;
      c = 1.0 + aa / c;
      if (std::abs(c) < tiny) c = tiny;
      d = 1.0 / d;
      h *= d * c;
      aa = -(a_ + kk) * (qab + kk) * x_ / ((a_ + k2) * (qap + k2));
      d = 1.0 + aa * d;
      if (std::abs(d) < tiny) d = tiny;
      c = 1.0 + aa / c;
      if (std::abs(c) < tiny) c = tiny;
      d = 1.0 / d;
      const double delta = d * c;
      h *= delta;
      if (std::abs(delta - 1.0) < eps) break;
    }
    return h;
  };
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  if (x < (a + 1.0) / (a + b + 2.0)) return std::exp(log_front) * continued_fraction(a, b, x) / a;
  return 1.0 - std::exp(log_front) * continued_fraction(b, a, 1.0 - x) / b;
}

/// Quantile of the Beta(a, b) distribution (R's qbeta), by bisection to full precision.
inline double beta_quantile(double p, double a, double b) {
  if (std::isnan(p) || std::isnan(a) || std::isnan(b) || !(a > 0.0) || !(b > 0.0)) return nan_value;
  double lo = 0.0, hi = 1.0;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    if (incomplete_beta(a, b, mid) < p) lo = mid;
    else hi = mid;
  }
  return 0.5 * (lo + hi);
}

/// posterior's .mcse_quantile.
inline double mcse_quantile_core(const draw_matrix& x, double p) {
  const double ess = ess_quantile_core(x, p);
  if (std::isnan(ess)) return nan_value;
  const double a1 = beta_quantile(0.1586553, ess * p + 1.0, ess * (1.0 - p) + 1.0);
  const double a2 = beta_quantile(0.8413447, ess * p + 1.0, ess * (1.0 - p) + 1.0);
  std::vector<double> sorted = x.data;
  std::sort(sorted.begin(), sorted.end());
  const double S = static_cast<double>(sorted.size());
  const double i1 = std::max(std::floor(a1 * S), 1.0);
  const double i2 = std::min(std::ceil(a2 * S), S);
  return (sorted[static_cast<std::size_t>(i2) - 1] - sorted[static_cast<std::size_t>(i1) - 1]) / 2.0;
}

inline void check_probability(const char* function, double p) {
  if (!(p >= 0.0 && p <= 1.0)) fail(function, "probability must be in [0, 1], got " + std::to_string(p));
}

}  // namespace detail::diagnostics

// ---- R̂ --------------------------------------------------------------------------------------------

/// Classic split-R̂ (Gelman et al., BDA3, eq. 11.4, on split chains): posterior's rhat_basic(x) with
/// split = TRUE. Vehtari et al. (2021), eq. (4). NaN for non-finite or constant draws.
inline double split_rhat(std::span<const double> draws, std::size_t chains, std::size_t n) {
  using namespace detail::diagnostics;
  return rhat_core(split_chains(gather("split_rhat", draws, chains, n)));
}
template <detail::diagnostics::chain_range R>
double split_rhat(const R& chains) {
  using namespace detail::diagnostics;
  return rhat_core(split_chains(gather("split_rhat", chains)));
}

/// Rank-normalised split-R̂ (bulk-R̂): split-R̂ of the normal scores of the pooled ranks.
/// Vehtari et al. (2021), section 4.1, eq. (14); posterior's .rhat(z_scale(.split_chains(x))).
inline double rhat_bulk(std::span<const double> draws, std::size_t chains, std::size_t n) {
  return detail::diagnostics::rhat_bulk_core(detail::diagnostics::gather("rhat_bulk", draws, chains, n));
}
template <detail::diagnostics::chain_range R>
double rhat_bulk(const R& chains) {
  return detail::diagnostics::rhat_bulk_core(detail::diagnostics::gather("rhat_bulk", chains));
}

/// Folded rank-normalised split-R̂ (tail-R̂): rhat_bulk of |x − median(x)|. Vehtari et al. (2021),
/// section 4.2, eq. (15); posterior's .rhat(z_scale(.split_chains(fold_draws(x)))).
inline double rhat_tail(std::span<const double> draws, std::size_t chains, std::size_t n) {
  return detail::diagnostics::rhat_tail_core(detail::diagnostics::gather("rhat_tail", draws, chains, n));
}
template <detail::diagnostics::chain_range R>
double rhat_tail(const R& chains) {
  return detail::diagnostics::rhat_tail_core(detail::diagnostics::gather("rhat_tail", chains));
}

/// R̂ as Stan and posterior report it: max(rhat_bulk, rhat_tail). Vehtari et al. (2021),
/// section 4.3; posterior's rhat(). NaN when either is NaN (posterior: NA).
inline double rhat(std::span<const double> draws, std::size_t chains, std::size_t n) {
  using namespace detail::diagnostics;
  const draw_matrix x = gather("rhat", draws, chains, n);
  const double bulk = rhat_bulk_core(x), tail = rhat_tail_core(x);
  return std::isnan(bulk) || std::isnan(tail) ? nan_value : std::max(bulk, tail);
}
template <detail::diagnostics::chain_range R>
double rhat(const R& chains) {
  using namespace detail::diagnostics;
  const draw_matrix x = gather("rhat", chains);
  const double bulk = rhat_bulk_core(x), tail = rhat_tail_core(x);
  return std::isnan(bulk) || std::isnan(tail) ? nan_value : std::max(bulk, tail);
}

// ---- ESS ------------------------------------------------------------------------------------------

/// ESS of the split chains as they are (no rank normalisation): posterior's ess_basic(x) with
/// split = TRUE, equal to ess_mean(x). Vehtari et al. (2021), section 3.2, eqs. (10)–(11).
inline double ess_basic(std::span<const double> draws, std::size_t chains, std::size_t n) {
  using namespace detail::diagnostics;
  return ess_core(split_chains(gather("ess_basic", draws, chains, n)));
}
template <detail::diagnostics::chain_range R>
double ess_basic(const R& chains) {
  using namespace detail::diagnostics;
  return ess_core(split_chains(gather("ess_basic", chains)));
}

/// ESS for the mean: the same as ess_basic (posterior's ess_mean).
inline double ess_mean(std::span<const double> draws, std::size_t chains, std::size_t n) {
  using namespace detail::diagnostics;
  return ess_core(split_chains(gather("ess_mean", draws, chains, n)));
}
template <detail::diagnostics::chain_range R>
double ess_mean(const R& chains) {
  using namespace detail::diagnostics;
  return ess_core(split_chains(gather("ess_mean", chains)));
}

/// Bulk-ESS: ESS of the rank-normalised split chains. Vehtari et al. (2021), section 4.1;
/// posterior's ess_bulk(), .ess(z_scale(.split_chains(x))).
inline double ess_bulk(std::span<const double> draws, std::size_t chains, std::size_t n) {
  using namespace detail::diagnostics;
  draw_matrix s = split_chains(gather("ess_bulk", draws, chains, n));
  if (s.n < 2 || any_nan(s.data)) return nan_value;
  z_scale(s.data);
  return ess_core(s);
}
template <detail::diagnostics::chain_range R>
double ess_bulk(const R& chains) {
  using namespace detail::diagnostics;
  draw_matrix s = split_chains(gather("ess_bulk", chains));
  if (s.n < 2 || any_nan(s.data)) return nan_value;
  z_scale(s.data);
  return ess_core(s);
}

/// ESS of the quantile of probability p: ESS of the split indicator draws I(x ≤ q̂_p), q̂_p the
/// type-7 quantile over all draws (p = 1 is taken as (S − ½)/S). Vehtari et al. (2021), section
/// 4.3; posterior's ess_quantile(x, p).
inline double ess_quantile(std::span<const double> draws, std::size_t chains, std::size_t n, double p) {
  using namespace detail::diagnostics;
  check_probability("ess_quantile", p);
  return ess_quantile_core(gather("ess_quantile", draws, chains, n), p);
}
template <detail::diagnostics::chain_range R>
double ess_quantile(const R& chains, double p) {
  using namespace detail::diagnostics;
  check_probability("ess_quantile", p);
  return ess_quantile_core(gather("ess_quantile", chains), p);
}

/// Tail-ESS: min(ess_quantile(x, 0.05), ess_quantile(x, 0.95)). Vehtari et al. (2021), section
/// 4.3; posterior's ess_tail(). NaN when either is NaN.
inline double ess_tail(std::span<const double> draws, std::size_t chains, std::size_t n) {
  using namespace detail::diagnostics;
  const draw_matrix x = gather("ess_tail", draws, chains, n);
  const double lo = ess_quantile_core(x, 0.05), hi = ess_quantile_core(x, 0.95);
  return std::isnan(lo) || std::isnan(hi) ? nan_value : std::min(lo, hi);
}
template <detail::diagnostics::chain_range R>
double ess_tail(const R& chains) {
  using namespace detail::diagnostics;
  const draw_matrix x = gather("ess_tail", chains);
  const double lo = ess_quantile_core(x, 0.05), hi = ess_quantile_core(x, 0.95);
  return std::isnan(lo) || std::isnan(hi) ? nan_value : std::min(lo, hi);
}

// ---- MCSE -----------------------------------------------------------------------------------------

/// Monte Carlo standard error of the mean: sd(x) / √ess_mean(x), sd over all draws (denominator
/// S − 1). Vehtari et al. (2021), section 3.2; posterior's mcse_mean().
inline double mcse_mean(std::span<const double> draws, std::size_t chains, std::size_t n) {
  using namespace detail::diagnostics;
  const draw_matrix x = gather("mcse_mean", draws, chains, n);
  if (too_few(x)) return nan_value;
  return std::sqrt(r_var(x.data.data(), x.data.size())) / std::sqrt(ess_core(split_chains(x)));
}
template <detail::diagnostics::chain_range R>
double mcse_mean(const R& chains) {
  using namespace detail::diagnostics;
  const draw_matrix x = gather("mcse_mean", chains);
  if (too_few(x)) return nan_value;
  return std::sqrt(r_var(x.data.data(), x.data.size())) / std::sqrt(ess_core(split_chains(x)));
}

/// Monte Carlo standard error of the quantile of probability p: half the distance between the
/// draws at the 15.9% and 84.1% points of Beta(ess·p + 1, ess·(1 − p) + 1), ess = ess_quantile(x,
/// p). Vehtari et al. (2021), section 4.4; posterior's mcse_quantile(x, p). The Beta quantiles are
/// computed here by bisection on the regularised incomplete beta function.
inline double mcse_quantile(std::span<const double> draws, std::size_t chains, std::size_t n, double p) {
  using namespace detail::diagnostics;
  check_probability("mcse_quantile", p);
  return mcse_quantile_core(gather("mcse_quantile", draws, chains, n), p);
}
template <detail::diagnostics::chain_range R>
double mcse_quantile(const R& chains, double p) {
  using namespace detail::diagnostics;
  check_probability("mcse_quantile", p);
  return mcse_quantile_core(gather("mcse_quantile", chains), p);
}

// ---- quantiles --------------------------------------------------------------------------------------

/// Sample quantile of probability p ∈ [0, 1], R's type 7 (Hyndman & Fan 1996; R's and posterior's
/// default, quantile2()): with h = (N − 1)·p, x₍⌊h⌋₎ + (h − ⌊h⌋)(x₍⌊h⌋+1₎ − x₍⌊h⌋₎) over the sorted
/// values. NaN when values is empty or holds a NaN (posterior: NA). Throws std::invalid_argument
/// for p outside [0, 1].
inline double quantile(std::span<const double> values, double p) {
  using namespace detail::diagnostics;
  check_probability("quantile", p);
  if (values.empty() || any_nan(values)) return nan_value;
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  return quantile_sorted(sorted, p);
}

}  // namespace tyche
// ----- end tyche/diagnostics/convergence.hpp -----
// ----- begin tyche/diagnostics/summary.hpp -----
// tyche/diagnostics/summary.hpp — summary(fit): the table Stan and posterior print for a fit
// (mean, sd, MCSE, 5/50/95% quantiles, bulk- and tail-ESS, R̂) and the sampler warnings:
// divergences, tree depth saturation, E-BFMI < 0.3, R̂ > 1.01.

#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

namespace tyche {

/// One row of the summary.
struct summary_row {
  std::string name;
  double mean, sd, mcse, q5, q50, q95, ess_bulk, ess_tail, rhat;
};

/// The summary of a fit, printable with <<.
struct fit_summary {
  std::vector<summary_row> rows;
  std::vector<std::string> warnings;
  int chains = 0, draws = 0;
};

/// E-BFMI of one chain (Betancourt 2016): Σ (E_n − E_{n−1})² / Σ (E_n − Ē)².
inline double e_bfmi(const std::vector<samplers::transition_stats>& chain) {
  if (chain.size() < 2) return std::nan("");
  double mean = 0;
  for (const auto& s : chain) mean += s.energy / static_cast<double>(chain.size());
  double num = 0, den = 0;
  for (std::size_t i = 0; i < chain.size(); ++i) {
    den += (chain[i].energy - mean) * (chain[i].energy - mean);
    if (i > 0) num += (chain[i].energy - chain[i - 1].energy) * (chain[i].energy - chain[i - 1].energy);
  }
  return num / den;
}

/// The summary table and warnings of a NUTS fit.
inline fit_summary summary(const nuts_fit& fit, int max_depth = 0) {
  if (max_depth <= 0) max_depth = fit.max_depth;  // 0: the depth the fit was run with
  fit_summary out;
  out.chains = fit.chains;
  out.draws = fit.draws;
  for (std::size_t k = 0; k < fit.dim(); ++k) {
    const auto chains = fit.parameter(k);
    std::vector<double> all;
    for (const auto& c : chains) all.insert(all.end(), c.begin(), c.end());
    // As R's mean and sd (long double sums): no draws, mean NaN; one draw, sd NaN.
    const double mean = all.empty() ? std::nan("") : detail::diagnostics::r_mean(all.data(), all.size());
    const double var = all.size() < 2 ? std::nan("") : detail::diagnostics::r_var(all.data(), all.size());
    out.rows.push_back({fit.names[k], mean, std::sqrt(var), mcse_mean(chains), quantile(all, 0.05),
                        quantile(all, 0.5), quantile(all, 0.95), ess_bulk(chains), ess_tail(chains),
                        rhat(chains)});
  }
  // What cannot be estimated is NaN in the table, and said once here (posterior prints NA).
  if (fit.draws < static_cast<int>(detail::diagnostics::min_draws)) {
    out.warnings.push_back(std::to_string(fit.draws) + " draws per chain: MCSE, ESS and R-hat need at least " +
                           std::to_string(detail::diagnostics::min_draws) + " and are NaN");
  } else {
    // A parameter constant in every draw (L[1,1] of a Cholesky factor of a correlation matrix)
    // has NaN R-hat and ESS in the table and no warning, as in Stan; NaN draws are warned of.
    std::string with_nan;
    int count = 0;
    for (std::size_t k = 0; k < fit.dim(); ++k) {
      bool nan = false;
      for (const auto& chain : fit.values)
        for (std::size_t d = k; d < chain.size() && !nan; d += fit.dim()) nan = std::isnan(chain[d]);
      if (!nan) continue;
      if (count < 5) with_nan += (count > 0 ? ", " : "") + fit.names[k];
      ++count;
    }
    if (count > 5) with_nan += ", … (" + std::to_string(count) + " in all)";
    if (count > 0) out.warnings.push_back("NaN draws of " + with_nan + ": their MCSE, ESS and R-hat are NaN");
  }
  const int divergent = fit.divergences();
  if (divergent > 0)
    out.warnings.push_back(std::to_string(divergent) + " of " + std::to_string(fit.chains * fit.draws) +
                           " transitions ended with a divergence: the posterior may be biased; "
                           "reparameterise, or raise adapt_delta");
  int saturated = 0;
  for (const auto& chain : fit.stats)
    for (const auto& s : chain) saturated += s.tree_depth >= max_depth ? 1 : 0;
  if (saturated > 0)
    out.warnings.push_back(std::to_string(saturated) + " transitions hit the maximum tree depth " +
                           std::to_string(max_depth));
  for (int c = 0; c < fit.chains; ++c) {
    const double b = e_bfmi(fit.stats[static_cast<std::size_t>(c)]);
    if (b < 0.3) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "chain %d: E-BFMI = %.3f < 0.3", c + 1, b);
      out.warnings.emplace_back(buf);
    }
  }
  for (const auto& r : out.rows)
    if (r.rhat > 1.01) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "%s: R-hat = %.3f > 1.01: the chains have not mixed", r.name.c_str(), r.rhat);
      out.warnings.emplace_back(buf);
    }
  return out;
}

inline std::ostream& operator<<(std::ostream& os, const fit_summary& s) {
  char line[256];
  std::snprintf(line, sizeof line, "%-14s %9s %9s %8s %9s %9s %9s %8s %8s %6s\n", "", "mean", "sd",
                "mcse", "5%", "50%", "95%", "ess_bulk", "ess_tail", "rhat");
  os << line;
  for (const auto& r : s.rows) {
    std::snprintf(line, sizeof line, "%-14s %9.3g %9.3g %8.2g %9.3g %9.3g %9.3g %8.0f %8.0f %6.3f\n",
                  r.name.c_str(), r.mean, r.sd, r.mcse, r.q5, r.q50, r.q95, r.ess_bulk, r.ess_tail, r.rhat);
    os << line;
  }
  os << s.chains << " chains of " << s.draws << " draws after warm-up\n";
  for (const auto& w : s.warnings) os << "warning: " << w << "\n";
  return os;
}

}  // namespace tyche
// ----- end tyche/diagnostics/summary.hpp -----
// ----- begin tyche/io/stan_csv.hpp -----
// tyche/io/stan_csv.hpp — CmdStan's output CSV: writing a NUTS fit, one file per chain, and
// reading such a file back (one written by tyche or by CmdStan).
//
//     const auto fit = tyche::nuts(m, cfg);
//     tyche::write_stan_csv_files("out/eight_schools", fit, cfg);   // out/eight_schools_1.csv, …
//     // R:      rstan::read_stan_csv(c("out/eight_schools_1.csv", …))
//     // Python: arviz.from_cmdstan("out/eight_schools_*.csv")
//     const tyche::stan_csv draws = tyche::read_stan_csv("out/eight_schools_1.csv");
//     const std::vector<double> mu = draws.column("mu");
//
// The format is the one the CmdStan guide describes ("Stan CSV file format"): comment lines
// starting with '#' that echo the configuration as nested `key = value` lines (a value equal to
// CmdStan's default is followed by "(Default)", as CmdStan writes it); the column header
// `lp__,accept_stat__,stepsize__,treedepth__,n_leapfrog__,divergent__,energy__,<parameters>`;
// the adaptation comments (`# Adaptation terminated`, `# Step size = …`, `# Diagonal elements of
// inverse mass matrix:` and one line of values); one row per draw; and the elapsed times.
//
// Column names. tyche names the coordinates of a vector `theta[1]`, `theta[2]`, … (and would
// name a matrix element `x[2,3]`); CmdStan's CSV writes them `theta.1`, `x.2.3`, and the readers
// (rstan, cmdstanr, ArviZ) turn the dots back into indices. So the writer converts: `[i]` becomes
// `.i` and `[i,j]` becomes `.i.j` (stan_csv_name). A name must otherwise be a Stan identifier
// (letters, digits, '_'; not starting with a digit), or the writer throws.
//
// Numbers. Every value is written as the shortest decimal that reads back to the same double
// (std::to_chars), so a file round-trips bit for bit; CmdStan writes 6 significant digits by
// default (sig_figs = -1), which readers treat the same way. Non-finite values are written
// nan, inf, -inf, as CmdStan writes them.
//
// What differs from a CmdStan file, and why:
//   - lp__ is tyche's log density on the unconstrained space with the log-Jacobian and all
//     normalising constants; Stan drops the constants of `~` statements, so lp__ differs from
//     Stan's by a constant (and is the same up to that constant).
//   - The elapsed times: nuts_fit does not record them, so they are taken from
//     stan_csv_options (0 unless the caller measured them).
//   - Warm-up draws are not kept by nuts(), so save_warmup is always 0.
//   - The first comment line is `# tyche_version = …`; CmdStan writes `# stan_version_major`
//     and so on, which tyche does not claim.
//
// Reading. read_stan_csv accepts CmdStan's files too (any columns, saved warm-up draws, a dense
// metric). A malformed file throws std::invalid_argument naming the source, the line and what is
// wrong, e.g. "tyche::read_stan_csv: fit_1.csv, line 52: 9 values, expected 10 (the columns of
// the header at line 38)".

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <ostream>
#include <istream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace tyche {

/// What a CmdStan CSV file holds that a nuts_fit and a nuts_config do not.
struct stan_csv_options {
  std::string model = "tyche_model";  // `# model = …`
  std::string data_file{};            // `# data / file = …`; empty when the data are not in a file
  /// The elapsed times written at the end of every file, in seconds (nuts_fit does not record
  /// them: measure them around nuts() if they matter; 0 means not measured).
  double warmup_seconds = 0;
  double sampling_seconds = 0;
};

/// The sampler columns CmdStan writes before the parameters, in its order.
inline constexpr std::string_view stan_csv_sampler_columns[] = {
    "lp__", "accept_stat__", "stepsize__", "treedepth__", "n_leapfrog__", "divergent__", "energy__"};

namespace detail::stan_csv_impl {

inline bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

inline std::string quote_name(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else out += c;
  }
  return out + "'";
}

/// The shortest decimal that reads back to x; nan, inf, -inf as CmdStan writes them.
inline void append_number(std::string& out, double x) {
  if (std::isnan(x)) {
    out += "nan";
    return;
  }
  if (std::isinf(x)) {
    out += x > 0 ? "inf" : "-inf";
    return;
  }
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  out.append(buf, r.ptr);
}
inline std::string number(double x) {
  std::string s;
  append_number(s, x);
  return s;
}

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// A decimal number, the whole field (a leading '+' allowed); nullopt if it is not one.
inline std::optional<double> parse_number(std::string_view s) {
  if (s.size() > 1 && s.front() == '+' && s[1] != '-') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  double x = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), x);
  if (r.ec != std::errc{} || r.ptr != s.data() + s.size()) return std::nullopt;
  return x;
}

}  // namespace detail::stan_csv_impl

/// The CmdStan CSV column name of a tyche parameter name: `theta[2]` → `theta.2`,
/// `x[2,3]` (or `x[2, 3]`) → `x.2.3`, `mu` → `mu`. Throws std::invalid_argument, naming the
/// name, when it is not a Stan identifier followed by an optional list of positive indices.
inline std::string stan_csv_name(std::string_view name) {
  using namespace detail::stan_csv_impl;
  auto fail = [&](const char* why) {
    throw std::invalid_argument("tyche::stan_csv_name: parameter name " + quote_name(name) +
                                " cannot be a CmdStan column name: " + why +
                                " (expected a Stan identifier, then optionally [i] or [i,j,...])");
  };
  const std::size_t open = name.find('[');
  const std::string_view base = name.substr(0, open);
  if (base.empty()) fail("the name before the indices is empty");
  if (!is_letter(base.front())) fail("it does not start with a letter");
  for (char c : base)
    if (!(is_letter(c) || is_digit(c) || c == '_')) fail("it holds a character other than letters, digits and '_'");
  std::string out(base);
  if (open == std::string_view::npos) return out;
  if (name.back() != ']') fail("it does not end with ']'");
  std::string_view inside = name.substr(open + 1, name.size() - open - 2);
  for (;;) {
    const std::size_t comma = inside.find(',');
    const std::string_view index = trim(inside.substr(0, comma));
    if (index.empty()) fail("an index is empty");
    for (char c : index)
      if (!is_digit(c)) fail("an index is not a non-negative integer");
    out += '.';
    out += index;
    if (comma == std::string_view::npos) break;
    inside.remove_prefix(comma + 1);
  }
  return out;
}

/// Writes chain `chain` (0-based, as in fit.values; CmdStan's `id` is chain + 1) of a NUTS fit
/// in CmdStan's CSV format. config must be the nuts_config the fit was made with (the file
/// echoes it). Throws std::invalid_argument when chain is out of range, when config does not
/// match the fit, or when a parameter name cannot be a CmdStan column name.
inline void write_stan_csv(std::ostream& os, const nuts_fit& fit, int chain, const nuts_config& config,
                           const stan_csv_options& options = {}) {
  using namespace detail::stan_csv_impl;
  const std::string fn = "tyche::write_stan_csv: ";
  if (chain < 0 || chain >= fit.chains)
    throw std::invalid_argument(fn + "chain = " + std::to_string(chain) + " is out of range: the fit has " +
                                std::to_string(fit.chains) + " chains, numbered 0 to " +
                                std::to_string(fit.chains - 1));
  if (config.draws != fit.draws || config.chains != fit.chains)
    throw std::invalid_argument(fn + "config has chains = " + std::to_string(config.chains) + ", draws = " +
                                std::to_string(config.draws) + " but the fit has chains = " +
                                std::to_string(fit.chains) + ", draws = " + std::to_string(fit.draws) +
                                ": pass the nuts_config the fit was made with");
  const auto c = static_cast<std::size_t>(chain);
  const std::size_t dim = fit.dim(), draws = static_cast<std::size_t>(fit.draws);
  if (fit.values.size() <= c || fit.stats.size() <= c || fit.values[c].size() != draws * dim ||
      fit.stats[c].size() != draws)
    throw std::invalid_argument(fn + "chain " + std::to_string(chain) + " of the fit holds " +
                                std::to_string(c < fit.values.size() ? fit.values[c].size() : 0) +
                                " values and " + std::to_string(c < fit.stats.size() ? fit.stats[c].size() : 0) +
                                " sampler statistics, expected " + std::to_string(draws * dim) + " and " +
                                std::to_string(draws));
  for (double t : {options.warmup_seconds, options.sampling_seconds})
    if (!(t >= 0) || !std::isfinite(t))
      throw std::invalid_argument(fn + "options.warmup_seconds and options.sampling_seconds must be finite "
                                       "and >= 0 (got " + number(options.warmup_seconds) + " and " +
                                  number(options.sampling_seconds) + ")");
  for (const auto* s : {&options.model, &options.data_file})
    if (s->find_first_of("\r\n") != std::string::npos)
      throw std::invalid_argument(fn + "options.model and options.data_file must be one line each (got " +
                                  quote_name(*s) + ")");
  std::vector<std::string> columns;
  for (const auto& name : fit.names) columns.push_back(stan_csv_name(name));

  const samplers::adaptation_config adapt;  // the warm-up settings nuts() uses
  const bool adapted = config.warmup > 0;
  std::string out;
  // Configuration, as CmdStan's `sample` method echoes it. `(Default)`: CmdStan's default value.
  auto line = [&](int indent, std::string_view key, const std::string& value, bool is_default) {
    out += '#';
    out.append(static_cast<std::size_t>(1 + 2 * indent), ' ');
    out += key;
    out += " = ";
    out += value;
    if (is_default) out += " (Default)";
    out += '\n';
  };
  auto section = [&](int indent, std::string_view key) {
    out += '#';
    out.append(static_cast<std::size_t>(1 + 2 * indent), ' ');
    out += key;
    out += '\n';
  };
  line(0, "tyche_version",
       std::to_string(TYCHE_VERSION_MAJOR) + "." + std::to_string(TYCHE_VERSION_MINOR) + "." +
           std::to_string(TYCHE_VERSION_PATCH),
       false);
  line(0, "model", options.model, false);
  line(0, "method", "sample", true);
  section(1, "sample");
  line(2, "num_samples", std::to_string(config.draws), config.draws == 1000);
  line(2, "num_warmup", std::to_string(config.warmup), config.warmup == 1000);
  line(2, "save_warmup", "0", true);
  line(2, "thin", "1", true);
  section(2, "adapt");
  line(3, "engaged", adapted ? "1" : "0", adapted);
  line(3, "gamma", number(adapt.gamma), adapt.gamma == 0.05);
  line(3, "delta", number(config.adapt_delta), config.adapt_delta == 0.8);
  line(3, "kappa", number(adapt.kappa), adapt.kappa == 0.75);
  line(3, "t0", number(adapt.t0), adapt.t0 == 10);
  line(3, "init_buffer", std::to_string(adapt.init_buffer), adapt.init_buffer == 75);
  line(3, "term_buffer", std::to_string(adapt.term_buffer), adapt.term_buffer == 50);
  line(3, "window", std::to_string(adapt.base_window), adapt.base_window == 25);
  line(2, "algorithm", "hmc", true);
  section(3, "hmc");
  line(4, "engine", "nuts", true);
  section(5, "nuts");
  line(6, "max_depth", std::to_string(config.max_depth), config.max_depth == 10);
  const bool dense = config.metric == samplers::metric_kind::dense;
  line(4, "metric", dense ? "dense_e" : "diag_e", !dense);
  line(4, "metric_file", "", true);
  line(4, "stepsize", number(config.init_step_size), config.init_step_size == 1);
  line(4, "stepsize_jitter", "0", true);
  line(2, "num_chains", std::to_string(config.chains), config.chains == 1);
  line(0, "id", std::to_string(chain + 1), chain == 0);
  section(0, "data");
  line(1, "file", options.data_file, options.data_file.empty());
  line(0, "init", number(config.init_radius), config.init_radius == 2);
  section(0, "random");
  line(1, "seed", std::to_string(config.seed), false);
  section(0, "output");
  line(1, "sig_figs", "-1", true);

  // Column header.
  for (std::string_view s : stan_csv_sampler_columns) {
    out += s;
    out += ',';
  }
  for (std::size_t k = 0; k < columns.size(); ++k) {
    out += columns[k];
    out += k + 1 < columns.size() ? "," : "";
  }
  if (columns.empty()) out.pop_back();
  out += '\n';

  // Adaptation.
  if (adapted) {
    out += "# Adaptation terminated\n# Step size = ";
    append_number(out, c < fit.step_size.size() ? fit.step_size[c] : std::nan(""));
    const std::vector<double> none;
    const auto& inv_metric = c < fit.inv_metric.size() ? fit.inv_metric[c] : none;
    // The metric is d × d for θ's dimension d, which is fewer than the columns when a matrix
    // variable writes its K² entries (fit.dim() counts those).
    const auto dim = static_cast<std::size_t>(std::llround(std::sqrt(static_cast<double>(inv_metric.size()))));
    if (dense && dim > 0 && inv_metric.size() == dim * dim) {  // CmdStan: one row per line
      out += "\n# Elements of inverse mass matrix:\n";
      for (std::size_t i = 0; i < dim; ++i) {
        out += "# ";
        for (std::size_t j = 0; j < dim; ++j) {
          if (j > 0) out += ", ";
          append_number(out, inv_metric[i * dim + j]);
        }
        out += '\n';
      }
    } else {
      out += "\n# Diagonal elements of inverse mass matrix:\n# ";
      for (std::size_t k = 0; k < inv_metric.size(); ++k) {
        if (k > 0) out += ", ";
        append_number(out, inv_metric[k]);
      }
      out += '\n';
    }
  }
  os << out;
  out.clear();

  // Draws.
  for (std::size_t d = 0; d < draws; ++d) {
    const samplers::transition_stats& s = fit.stats[c][d];
    append_number(out, s.log_density);
    out += ',';
    append_number(out, s.accept_stat);
    out += ',';
    append_number(out, s.step_size);
    out += ',';
    out += std::to_string(s.tree_depth);
    out += ',';
    out += std::to_string(s.n_leapfrog);
    out += s.divergent ? ",1," : ",0,";
    append_number(out, s.energy);
    for (std::size_t k = 0; k < dim; ++k) {
      out += ',';
      append_number(out, fit.values[c][d * dim + k]);
    }
    out += '\n';
    if (out.size() > (1u << 16)) {
      os << out;
      out.clear();
    }
  }

  // Elapsed times, as CmdStan writes them.
  char times[256];
  std::snprintf(times, sizeof times,
                "# \n#  Elapsed Time: %.3f seconds (Warm-up)\n#                %.3f seconds (Sampling)\n"
                "#                %.3f seconds (Total)\n# \n",
                options.warmup_seconds, options.sampling_seconds,
                options.warmup_seconds + options.sampling_seconds);
  out += times;
  os << out;
  if (!os) throw std::runtime_error(fn + "the stream failed while writing chain " + std::to_string(chain));
}

/// Writes every chain of a fit to its own file, `<prefix>_1.csv` … `<prefix>_<chains>.csv` (the
/// names CmdStan gives its output files), and returns their paths. The folder of prefix must
/// exist. Throws std::runtime_error when a file cannot be written.
inline std::vector<std::filesystem::path> write_stan_csv_files(const std::filesystem::path& prefix,
                                                               const nuts_fit& fit, const nuts_config& config,
                                                               const stan_csv_options& options = {}) {
  std::vector<std::filesystem::path> paths;
  for (int c = 0; c < fit.chains; ++c) {
    std::filesystem::path path = prefix;
    path += "_" + std::to_string(c + 1) + ".csv";
    std::ofstream file(path, std::ios::binary);
    if (!file)
      throw std::runtime_error("tyche::write_stan_csv_files: cannot open " + path.string() + " for writing");
    write_stan_csv(file, fit, c, config, options);
    file.close();
    if (!file) throw std::runtime_error("tyche::write_stan_csv_files: error while writing " + path.string());
    paths.push_back(path);
  }
  return paths;
}

/// The contents of a CmdStan CSV file: column names as written (`theta.1`), the draws as a
/// row-major matrix, and what the comments say.
struct stan_csv {
  std::vector<std::string> names;  // every column, as in the file: lp__, …, energy__, mu, theta.1, …
  std::size_t rows = 0;            // number of draws (rows of values)
  std::vector<double> values;      // row-major: draw r, column k is values[r * names.size() + k]
  /// Rows before the `# Adaptation terminated` line: warm-up draws, when the file was written
  /// with save_warmup = 1; 0 otherwise.
  std::size_t warmup_rows = 0;
  /// The `key = value` lines of the configuration comments, in order, without "(Default)"
  /// (nested keys are not qualified: the data file and the output file are both `file`).
  std::vector<std::pair<std::string, std::string>> config;
  double step_size = std::numeric_limits<double>::quiet_NaN();  // `# Step size = …`; NaN if absent
  std::vector<double> inv_metric;  // the diagonal, or the dense matrix row by row; empty if absent
  bool dense_metric = false;
  double warmup_seconds = std::numeric_limits<double>::quiet_NaN();  // elapsed times; NaN if absent
  double sampling_seconds = std::numeric_limits<double>::quiet_NaN();

  [[nodiscard]] std::size_t cols() const { return names.size(); }
  [[nodiscard]] double at(std::size_t row, std::size_t col) const { return values[row * names.size() + col]; }

  /// The index of a column, by its name in the file (`theta.1`) or tyche's (`theta[1]`).
  /// Throws std::invalid_argument naming the column when there is none.
  [[nodiscard]] std::size_t column_index(std::string_view name) const {
    const std::string key = name.find('[') == std::string_view::npos ? std::string(name) : stan_csv_name(name);
    for (std::size_t k = 0; k < names.size(); ++k)
      if (names[k] == key) return k;
    std::string list;
    for (std::size_t k = 0; k < names.size() && k < 20; ++k) list += (k ? ", " : "") + names[k];
    if (names.size() > 20) list += ", ...";
    throw std::invalid_argument("tyche::stan_csv::column_index: no column " +
                                detail::stan_csv_impl::quote_name(key) + " (columns: " + list + ")");
  }
  /// Every draw of one column, in file order.
  [[nodiscard]] std::vector<double> column(std::string_view name) const {
    const std::size_t k = column_index(name);
    std::vector<double> out(rows);
    for (std::size_t r = 0; r < rows; ++r) out[r] = at(r, k);
    return out;
  }
  /// The value of a configuration key (the first one of that name), if the file has it.
  [[nodiscard]] std::optional<std::string> config_value(std::string_view key) const {
    for (const auto& [k, v] : config)
      if (k == key) return v;
    return std::nullopt;
  }
};

/// Reads a CmdStan CSV file from a stream; `source` names it in error messages. Throws
/// std::invalid_argument, naming the source and the line, when the input is malformed.
inline stan_csv read_stan_csv(std::istream& in, std::string_view source = "<stream>") {
  using namespace detail::stan_csv_impl;
  stan_csv out;
  std::size_t line_no = 0, header_line = 0;
  auto fail = [&](const std::string& what) {
    throw std::invalid_argument("tyche::read_stan_csv: " + std::string(source) + ", line " +
                                std::to_string(line_no) + ": " + what);
  };
  // After `Diagonal elements of inverse mass matrix:`: one line of values; after `Elements of
  // inverse mass matrix:` (dense): lines of values up to the next comment that is not numbers.
  enum class expect { nothing, diagonal, dense_rows, sampling_time } next = expect::nothing;
  auto parse_list = [&](std::string_view text, std::vector<double>& values) {
    for (;;) {
      const std::size_t comma = text.find(',');
      const std::string_view field = trim(text.substr(0, comma));
      const auto x = parse_number(field);
      if (!x) return false;
      values.push_back(*x);
      if (comma == std::string_view::npos) return true;
      text.remove_prefix(comma + 1);
    }
  };
  auto leading_seconds = [](std::string_view text) -> std::optional<double> {
    text = trim(text);
    const std::size_t end = text.find(" seconds");
    if (end == std::string_view::npos) return std::nullopt;
    return parse_number(trim(text.substr(0, end)));
  };

  std::string raw;
  while (std::getline(in, raw)) {
    ++line_no;
    std::string_view line(raw);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (trim(line).empty()) continue;  // CmdStan writes none; tolerated (a trailing blank line)
    if (line.front() == '#') {
      std::string_view text = line.substr(line.find_first_not_of('#') == std::string_view::npos
                                              ? line.size()
                                              : line.find_first_not_of('#'));
      text = trim(text);
      if (next == expect::diagonal) {
        if (!parse_list(text, out.inv_metric))
          fail("expected the diagonal of the inverse metric (numbers separated by commas) after "
               "'Diagonal elements of inverse mass matrix:', found " + quote_name(text));
        next = expect::nothing;
        continue;
      }
      if (next == expect::dense_rows) {
        std::vector<double> row;
        if (parse_list(text, row)) {
          out.inv_metric.insert(out.inv_metric.end(), row.begin(), row.end());
          continue;
        }
        next = expect::nothing;
      }
      if (next == expect::sampling_time) {
        const auto t = leading_seconds(text);
        if (!t || text.find("(Sampling)") == std::string_view::npos)
          fail("expected the sampling time ('<number> seconds (Sampling)') after the warm-up time, found " +
               quote_name(text));
        out.sampling_seconds = *t;
        next = expect::nothing;
        continue;
      }
      if (header_line == 0) {
        const std::size_t eq = text.find('=');
        if (eq != std::string_view::npos) {
          std::string_view value = trim(text.substr(eq + 1));
          constexpr std::string_view dflt = "(Default)";
          if (value.size() >= dflt.size() && value.substr(value.size() - dflt.size()) == dflt)
            value = trim(value.substr(0, value.size() - dflt.size()));
          out.config.emplace_back(std::string(trim(text.substr(0, eq))), std::string(value));
        }
        continue;
      }
      if (text == "Adaptation terminated") {
        out.warmup_rows = out.rows;
      } else if (text.starts_with("Step size")) {
        const std::size_t eq = text.find('=');
        const auto x = eq == std::string_view::npos ? std::nullopt : parse_number(trim(text.substr(eq + 1)));
        if (!x) fail("expected 'Step size = <number>', found " + quote_name(text));
        out.step_size = *x;
      } else if (text.starts_with("Diagonal elements of inverse mass matrix")) {
        next = expect::diagonal;
      } else if (text.starts_with("Elements of inverse mass matrix")) {
        out.dense_metric = true;
        next = expect::dense_rows;
      } else if (text.starts_with("Elapsed Time:")) {
        const auto t = leading_seconds(text.substr(std::string_view("Elapsed Time:").size()));
        if (!t) fail("expected 'Elapsed Time: <number> seconds (Warm-up)', found " + quote_name(text));
        out.warmup_seconds = *t;
        next = expect::sampling_time;
      }
      continue;  // other comments (CmdStan's messages) are ignored
    }
    if (next == expect::diagonal)
      fail("expected a comment line with the diagonal of the inverse metric after "
           "'Diagonal elements of inverse mass matrix:'");
    if (next == expect::sampling_time)
      fail("expected a comment line with the sampling time after the warm-up time");
    next = expect::nothing;

    if (header_line == 0) {  // the column header: the first line that is not a comment
      header_line = line_no;
      std::string_view rest = line;
      for (std::size_t k = 1;; ++k) {
        const std::size_t comma = rest.find(',');
        const std::string_view name = rest.substr(0, comma);
        if (name.empty()) fail("column " + std::to_string(k) + " of the header has an empty name");
        if (parse_number(name))
          fail("expected the column header (names), found the number " + quote_name(name) +
               " in column " + std::to_string(k) + ": is the header missing?");
        const bool ok_start = is_letter(name.front()) || name.front() == '_';
        bool ok = ok_start;
        for (char ch : name) ok = ok && (is_letter(ch) || is_digit(ch) || ch == '_' || ch == '.' || ch == ':');
        if (!ok)
          fail("column " + std::to_string(k) + " of the header, " + quote_name(name) +
               ", is not a CmdStan column name (a letter, then letters, digits, '_', '.', ':')");
        for (std::size_t j = 0; j < out.names.size(); ++j)
          if (out.names[j] == name)
            fail("column " + std::to_string(k) + " of the header, " + quote_name(name) +
                 ", has the name of column " + std::to_string(j + 1));
        out.names.emplace_back(name);
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
      }
      continue;
    }

    // A row of draws.
    const std::size_t n = out.names.size();
    std::size_t count = 1;
    for (char ch : line) count += ch == ',' ? 1 : 0;
    if (count != n)
      fail(std::to_string(count) + (count == 1 ? " value" : " values") + ", expected " + std::to_string(n) +
           " (the columns of the header at line " + std::to_string(header_line) + ")");
    std::string_view rest = line;
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t comma = rest.find(',');
      const std::string_view field = rest.substr(0, comma);
      const auto x = parse_number(field);
      if (!x) {
        std::string why = field.empty() ? "is empty" : quote_name(field) + " is not a number";
        const auto r = [&] {
          double v = 0;
          std::string_view f = field;
          if (f.size() > 1 && f.front() == '+') f.remove_prefix(1);
          return std::from_chars(f.data(), f.data() + f.size(), v);
        }();
        if (r.ec == std::errc::result_out_of_range) why = quote_name(field) + " is out of the range of a double";
        fail("column " + std::to_string(k + 1) + " (" + out.names[k] + ") " + why);
      }
      out.values.push_back(*x);
      if (comma != std::string_view::npos) rest.remove_prefix(comma + 1);
    }
    ++out.rows;
  }
  if (in.bad()) throw std::runtime_error("tyche::read_stan_csv: " + std::string(source) + ": read error");
  ++line_no;  // errors at the end of the input name the line after the last
  if (next == expect::diagonal)
    fail("the input ends after 'Diagonal elements of inverse mass matrix:' without the values");
  if (next == expect::sampling_time) fail("the input ends after the warm-up time without the sampling time");
  if (header_line == 0)
    fail("no column header: the input has no line that is not a comment (is it a CmdStan CSV file?)");
  return out;
}

/// Reads a CmdStan CSV file; errors name the file.
inline stan_csv read_stan_csv(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("tyche::read_stan_csv: cannot open " + file.string());
  return read_stan_csv(in, file.string());
}

}  // namespace tyche
// ----- end tyche/io/stan_csv.hpp -----
// ----- begin tyche/samplers/smc.hpp -----
// tyche/samplers/smc.hpp — forward inference over C++ programs: observe/predict, SMC,
// particle independent Metropolis–Hastings and particle Gibbs, on a fork-based engine
// (Paige & Wood 2014) and an in-process engine. See docs/smc.md.
// ----- begin tyche/samplers/smc/config.hpp -----
// tyche/samplers/smc/config.hpp — the settings of a forward-inference run.
//
//   auto r = tyche::smc::run_smc(program, {.particles = 1000, .seed = 1});
//
// One config serves run_smc, run_pimh and run_pg and both engines; fields an engine or
// algorithm does not use are ignored (threads by the fork engine; timeout_seconds,
// predict_bytes and max_processes by the in-process engine).
// ----- begin tyche/samplers/smc/resampling.hpp -----
// tyche/samplers/smc/resampling.hpp — weights and resampling for sequential Monte Carlo.
//
// Weights are kept as log weights. log_sum_exp and effective_sample_size work on them
// directly; normalised_weights turns them into probabilities.
//
// Resampling draws offspring counts O_1..O_L with E[O_l] = L·w_l and Σ O_l = L (or any
// requested total), then lists the ancestors in increasing order: ancestor l appears O_l
// times. Both engines use that sorted order, so particle slot i of the next generation is
// the same copy in the in-process engine and in the fork engine (where a parent keeps the
// first of its slots and forks children into the rest).
//
//   multinomial   O ~ Multinomial(n, w): n independent categorical draws.
//   stratified    one uniform in each of n strata [(k + u_k)/n]: lower variance.
//   systematic    one uniform u for all strata [(k + u)/n] (Carpenter, Clifford & Fearnhead
//                 1999; Kitagawa 1996): the default, as in most SMC libraries.
//   residual      ⌊n w_l⌋ copies deterministically, the rest multinomially on the
//                 residual weights (Liu & Chen 1998).
// Douc & Cappé (2005), "Comparison of resampling schemes for particle filtering", compare
// them: all four are unbiased; residual and stratified provably reduce the conditional
// variance relative to multinomial; systematic usually does best in practice.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace tyche::smc {

/// How offspring counts are drawn from the weights.
enum class resampling_scheme { systematic, stratified, residual, multinomial };

/// log Σ exp(x_i), exact for −∞ entries; −∞ when every entry is −∞.
inline double log_sum_exp(const std::vector<double>& x) {
  double m = -std::numeric_limits<double>::infinity();
  for (double v : x) m = std::max(m, v);
  if (m == -std::numeric_limits<double>::infinity()) return m;
  double s = 0;
  for (double v : x) s += std::exp(v - m);
  return m + std::log(s);
}

/// Normalised weights exp(log_w − log_sum_exp(log_w)).
inline std::vector<double> normalised_weights(const std::vector<double>& log_w) {
  const double z = log_sum_exp(log_w);
  std::vector<double> w(log_w.size());
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = std::exp(log_w[i] - z);
  return w;
}

/// Effective sample size 1 / Σ w_l² of the normalised weights (Kong, Liu & Wong 1994).
inline double effective_sample_size(const std::vector<double>& log_w) {
  const auto w = normalised_weights(log_w);
  double s = 0;
  for (double v : w) s += v * v;
  return 1.0 / s;
}

/// log Σ exp(log_w) and the ESS of the normalised weights, in one pass.
struct weight_summary {
  double log_sum;
  double ess;
};
inline weight_summary summarise_weights(const std::vector<double>& log_w) {
  double m = -std::numeric_limits<double>::infinity();
  for (double v : log_w) m = std::max(m, v);
  if (m == -std::numeric_limits<double>::infinity()) return {m, 0};
  double s = 0, s2 = 0;
  for (double v : log_w) {
    const double e = std::exp(v - m);
    s += e;
    s2 += e * e;
  }
  return {m + std::log(s), s * s / s2};
}

/// Offspring counts for n draws from normalised weights w, using uniforms from g.
inline std::vector<std::size_t> offspring_counts(const std::vector<double>& w, std::size_t n,
                                                 resampling_scheme scheme, counter_rng& g) {
  const std::size_t L = w.size();
  std::vector<std::size_t> count(L, 0);
  if (n == 0) return count;
  const double dn = static_cast<double>(n);
  // Sorted points in (0, 1) against the cumulative weights: one pass.
  auto by_sorted_points = [&](auto point_k, std::size_t points, const std::vector<double>& p) {
    double cumulative = 0;
    std::size_t l = 0;
    double upper = p.empty() ? 0 : p[0];
    for (std::size_t k = 0; k < points; ++k) {
      const double u = point_k(k);
      while (u > upper && l + 1 < L) {
        ++l;
        cumulative = upper;
        upper = cumulative + p[l];
      }
      // Past the last weight (rounding): the last particle with positive weight.
      std::size_t pick = l;
      while (p[pick] == 0 && pick > 0) --pick;
      ++count[pick];
    }
  };
  switch (scheme) {
    case resampling_scheme::systematic: {
      const double u = g.uniform01();
      by_sorted_points([&](std::size_t k) { return (static_cast<double>(k) + u) / dn; }, n, w);
      break;
    }
    case resampling_scheme::stratified: {
      by_sorted_points([&](std::size_t k) { return (static_cast<double>(k) + g.uniform01()) / dn; },
                       n, w);
      break;
    }
    case resampling_scheme::multinomial: {
      // n sorted uniforms from normalised cumulative exponential spacings.
      std::vector<double> e(n + 1);
      double total = 0;
      for (auto& v : e) total += (v = g.exponential());
      double running = 0;
      std::vector<double> points(n);
      for (std::size_t k = 0; k < n; ++k) points[k] = (running += e[k]) / total;
      by_sorted_points([&](std::size_t k) { return points[k]; }, n, w);
      break;
    }
    case resampling_scheme::residual: {
      std::size_t assigned = 0;
      std::vector<double> residual(L);
      double residual_total = 0;
      for (std::size_t l = 0; l < L; ++l) {
        const double expected = dn * w[l];
        const auto whole = static_cast<std::size_t>(std::floor(expected));
        count[l] = whole;
        assigned += whole;
        residual[l] = expected - static_cast<double>(whole);
        residual_total += residual[l];
      }
      if (assigned > n) {  // rounding in dn · w: take the excess back from the largest counts
        while (assigned > n) {
          auto it = std::max_element(count.begin(), count.end());
          --*it;
          --assigned;
        }
        break;
      }
      const std::size_t rest = n - assigned;
      if (rest == 0) break;
      if (!(residual_total > 0)) {  // all residuals zero by rounding: give the rest to the mode
        count[static_cast<std::size_t>(std::max_element(w.begin(), w.end()) - w.begin())] += rest;
        break;
      }
      for (auto& r : residual) r /= residual_total;
      const std::vector<std::size_t> base = count;
      std::fill(count.begin(), count.end(), 0);
      const double dr = static_cast<double>(rest);
      by_sorted_points([&](std::size_t k) { return (static_cast<double>(k) + g.uniform01()) / dr; },
                       rest, residual);
      for (std::size_t l = 0; l < L; ++l) count[l] += base[l];
      break;
    }
  }
  return count;
}

/// The ancestors in increasing order: l repeated count[l] times.
inline std::vector<std::size_t> ancestors_from_counts(const std::vector<std::size_t>& count) {
  std::vector<std::size_t> a;
  for (std::size_t l = 0; l < count.size(); ++l) a.insert(a.end(), count[l], l);
  return a;
}

/// n ancestor indices, sorted, drawn from the log weights with the given scheme.
inline std::vector<std::size_t> resample(const std::vector<double>& log_w, std::size_t n,
                                         resampling_scheme scheme, counter_rng& g) {
  return ancestors_from_counts(offspring_counts(normalised_weights(log_w), n, scheme, g));
}

}  // namespace tyche::smc
// ----- end tyche/samplers/smc/resampling.hpp -----

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>

namespace tyche::smc {

struct particle_set;

/// Which engine runs the program.
enum class engine_kind {
  automatic,   ///< in_process for a stepwise program, fork for a plain callable
  in_process,  ///< particles are values; resampling copies them; threads
  fork,        ///< particles are processes; resampling forks them (Paige & Wood 2014)
};

/// The forward-inference algorithm.
enum class algorithm {
  smc,   ///< independent sequential Monte Carlo sweeps
  pimh,  ///< particle independent Metropolis–Hastings (Andrieu, Doucet & Holenstein 2010)
  pg,    ///< particle Gibbs: conditional SMC around a retained trace (ibid.)
};

struct config {
  /// L, the number of particles (at least 1).
  std::size_t particles = 100;
  /// SMC: independent sweeps; PIMH and PG: iterations of the chain (the first is plain SMC).
  std::size_t sweeps = 1;
  /// Every random number of the run is a function of (seed, sweep, particle, observe).
  std::uint64_t seed = 0;
  /// SMC and PIMH resample after an observe when ESS < ess_threshold · L (the paper's
  /// τ = L/2 by default); PG resamples after every observe but the last.
  double ess_threshold = 0.5;
  /// The scheme of SMC, PIMH and PG's first sweep; PG's conditional sweeps draw the free
  /// particles' ancestors multinomially (Chopin & Singh 2015).
  resampling_scheme resampling = resampling_scheme::systematic;
  engine_kind engine = engine_kind::automatic;
  /// In-process engine: threads that step particles (results do not depend on it).
  std::size_t threads = 1;
  /// Stop starting sweeps after this many seconds of wall-clock time (at least one runs).
  double max_seconds = std::numeric_limits<double>::infinity();
  /// Keep every sweep's particle set in the result (turn off for long runs that only use
  /// on_sweep).
  bool keep_sweeps = true;
  /// Called after every sweep with the particle set the sweep outputs (for PIMH, the set the
  /// chain holds after the accept/reject step), in the calling process and thread.
  std::function<void(const particle_set&)> on_sweep{};
  /// Fork engine: the longest wait, in seconds, for a particle to reach the next observe
  /// (or the end of the program) before the run is abandoned with an error.
  double timeout_seconds = 60;
  /// Fork engine: bytes of shared memory per particle for its predictions.
  std::size_t predict_bytes = std::size_t{1} << 14;
  /// Fork engine: the most particle and keeper processes alive at once (particle Gibbs keeps
  /// one process per observe of every lineage that may be retained).
  std::size_t max_processes = 4096;
};

}  // namespace tyche::smc
// ----- end tyche/samplers/smc/config.hpp -----
// ----- begin tyche/samplers/smc/fork.hpp -----
// tyche/samplers/smc/fork.hpp — the fork engine (Paige & Wood 2014, "A compilation target for
// probabilistic programming languages"): every particle is a process running the program;
// observe() is a barrier; resampling forks particles or ends them. Also observe(), predict()
// and rng(), the calls a program makes.
//
// Processes. run_fork (in the calling process, the *controller*) forks a *manager*, which
//   - makes itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER), so every process below it
//     that loses its parent becomes its child, and dies with the controller (PDEATHSIG);
//   - forks an *anchor* process that only leads a new process group: every particle and keeper
//     joins that group, so one killpg ends them all;
//   - forks the L particles of a sweep, each running the program from the top;
//   - runs the barrier loop below and streams each sweep's particles to the controller
//     through a pipe; the controller builds the result and calls on_sweep.
// A particle forks its offspring through a short-lived intermediate process (fork, fork,
// exit), so that every offspring is reparented to the manager at once: the manager alone
// reaps every process and sees how each ended (a crash, an exception, an early exit).
//
// Shared memory (mmap MAP_SHARED | MAP_ANONYMOUS, made before any fork): a header with two
// process-shared counting semaphores, `arrived` (a particle reached an observe or the end)
// and `departed` (a particle or keeper read its instruction and finished forking), and one
// record per particle slot (its `go` semaphore, what it reported, the manager's instruction,
// and a buffer for its predictions or error text) and per keeper.
//
// One observe (a barrier), for SMC and PIMH (the paper's Algorithms 1 and 2):
//   particle: write log-likelihood, post arrived, wait on go[slot]
//   manager:  wait for every running particle (reaping and checking for deaths meanwhile);
//             update weights and log Ẑ; if ESS < τ, draw offspring counts O (sorted
//             ancestors, as the in-process engine); write instructions; post each go; wait
//             for as many departures
//   particle: O = 0: exit. O ≥ 1: fork O − 1 children into slots first+1 .. first+O−1,
//             continue as slot `first`, post departed; each copy reseeds rng() for its slot.
// Particle Gibbs (Algorithms 3 and 4) resamples at every observe, and every particle with
// offspring also forks a *keeper*: a copy frozen at that observe, waiting in the retain/
// branch loop. A conditional sweep runs L − 1 fresh particles; slot 0 is the retained trace,
// whose keeper at observe n forks the retained particle's new offspring. After each sweep a
// particle b is drawn; the keepers on b's lineage are kept and every other keeper ends.
// Keepers whose lineage has died out are ended at once, so the keepers alive are the
// distinct ancestors of the current particles.
//
// Errors. A particle that throws reports the message; one that dies (abort, SIGSEGV, exit)
// is reaped by the manager; NaN or +inf log-likelihoods, programs that observe a different
// number of times, and particles that do not reach the next observe within
// config::timeout_seconds are detected by the manager. Each ends the run: the manager kills
// the process group, reaps every process, reports; run_fork reaps the manager and throws
// std::runtime_error naming the particle, the observe and the cause.
//
// Restrictions. Call run_fork from a single-threaded process (fork copies only the calling
// thread; a lock held by another thread stays locked in every particle). In particles, the
// default dispositions of SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT and SIGPIPE
// are restored, so a crash ends the particle.
//
// Linux only: fork, POSIX semaphores and shared memory, and prctl (the child subreaper, the
// parent-death signal). TYCHE_SMC_FORK_ENGINE is 1 where <sys/prctl.h> exists on Linux, else 0;
// with 0 this header declares no engine, the calls a program makes (observe, predict, rng) throw
// std::logic_error, and run_smc/run_pimh/run_pg take stepwise programs only (the in-process
// engine). Defining it to 0 before including tyche leaves the engine out on Linux too. See
// docs/smc.md, "Where the fork engine runs".
#ifndef TYCHE_SMC_FORK_ENGINE
#if defined(__linux__) && __has_include(<sys/prctl.h>)
#define TYCHE_SMC_FORK_ENGINE 1
#else
#define TYCHE_SMC_FORK_ENGINE 0
#endif
#endif

// ----- begin tyche/samplers/smc/detail/collector.hpp -----
// tyche/samplers/smc/detail/collector.hpp — turns each sweep's particles (weights and
// predict lists) into a particle_set, keeps the name table, calls on_sweep, fills the result.
// ----- begin tyche/samplers/smc/result.hpp -----
// tyche/samplers/smc/result.hpp — what a forward-inference run returns.
//
// Every sweep outputs a particle_set: L particles, their normalised weights and the values
// they predicted (one column per predicted name; NaN where a particle did not predict that
// name). The result keeps the sets (unless config::keep_sweeps is off) and answers questions
// about the posterior of each name, weighting each sweep's set equally, as the paper does
// for repeated SMC and as PIMH and particle Gibbs require:
//
//   r.samples("mu"), r.weights()       weighted samples (weights sum to 1 over all sweeps)
//   r.unweighted_samples("mu")         each sweep's set resampled to L equal-weight draws
//   r.mean("mu"), r.sd("mu"), r.quantile("mu", 0.95), r.histogram("k")
//   r.log_evidence                     the estimate of log p(y) (see below)
//   std::cout << summary(r)
//
// log_evidence: SMC and PIMH, log of the mean of the sweeps' estimates Ẑ (each unbiased);
// PG, the first sweep's (the conditional sweeps' Ẑ are not estimates of p(y)).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <map>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tyche::smc {

/// What one sweep produced.
struct sweep_record {
  std::size_t index = 0;      ///< 0-based sweep number
  double log_evidence = 0;    ///< log Ẑ of this sweep's particle filter
  bool accepted = true;       ///< PIMH: whether the proposal was accepted
  double seconds = 0;         ///< wall-clock time from the start of the run to the end of the sweep
};

/// One sweep's output: weighted particles and what they predicted.
struct particle_set {
  sweep_record record;
  std::vector<double> weights;  ///< normalised, one per particle
  std::size_t columns = 0;      ///< names known when the set was made
  std::vector<double> values;   ///< particle-major: values[particle · columns + column]
  std::size_t size() const { return weights.size(); }
  /// The value particle p predicted for column c (NaN if it did not).
  double value(std::size_t p, std::size_t c) const {
    return c < columns ? values[p * columns + c] : std::numeric_limits<double>::quiet_NaN();
  }
};

/// Values a program predicts: predictions("mu", mu), predictions("z", t, z) names "z[t]".
class predictions {
 public:
  void operator()(std::string_view name, double value) { entries_.emplace_back(std::string(name), value); }
  void operator()(std::string_view name, std::size_t index, double value) {
    entries_.emplace_back(indexed_name(name, index), value);
  }
  const std::vector<std::pair<std::string, double>>& entries() const { return entries_; }
  void clear() { entries_.clear(); }
  static std::string indexed_name(std::string_view name, std::size_t index) {
    std::string s(name);
    s += '[';
    s += std::to_string(index);
    s += ']';
    return s;
  }

 private:
  std::vector<std::pair<std::string, double>> entries_;
};

class result {
 public:
  algorithm method = algorithm::smc;
  std::size_t particles = 0;
  /// Predicted names, in the order first seen.
  std::vector<std::string> names;
  /// One record per sweep run.
  std::vector<sweep_record> sweeps;
  /// Each sweep's particle set (empty when config::keep_sweeps is off).
  std::vector<particle_set> sets;
  double log_evidence = 0;
  double seconds = 0;  ///< wall-clock time of the whole run

  /// The column of a name, or throws std::out_of_range naming it.
  std::size_t column(std::string_view name) const {
    for (std::size_t c = 0; c < names.size(); ++c)
      if (names[c] == name) return c;
    throw std::out_of_range("tyche::smc::result: nothing was predicted under the name '" +
                            std::string(name) + "'");
  }
  bool has(std::string_view name) const {
    return std::find(names.begin(), names.end(), name) != names.end();
  }
  /// Every particle's value of `name`, sweep after sweep (NaN where not predicted).
  std::vector<double> samples(std::string_view name) const {
    const std::size_t c = column(name);
    std::vector<double> out;
    for (const auto& s : sets)
      for (std::size_t p = 0; p < s.size(); ++p) out.push_back(s.value(p, c));
    return out;
  }
  /// The weight of every sample: each sweep's normalised weights divided by the number of sweeps.
  std::vector<double> weights() const {
    std::vector<double> out;
    const double per = sets.empty() ? 0 : 1.0 / static_cast<double>(sets.size());
    for (const auto& s : sets)
      for (double w : s.weights) out.push_back(w * per);
    return out;
  }
  /// Each sweep's set resampled (systematically, with a fixed stream) to as many equally
  /// weighted draws as it has particles.
  std::vector<double> unweighted_samples(std::string_view name) const {
    const std::size_t c = column(name);
    std::vector<double> out;
    for (const auto& s : sets) {
      counter_rng g(0x7e5a3b1d, s.record.index);
      const auto count = offspring_counts(s.weights, s.size(), resampling_scheme::systematic, g);
      for (std::size_t p = 0; p < s.size(); ++p) out.insert(out.end(), count[p], s.value(p, c));
    }
    return out;
  }
  /// Weighted mean of `name` over the particles that predicted it.
  double mean(std::string_view name) const {
    const auto [x, w] = weighted(name);
    double m = 0;
    for (std::size_t i = 0; i < x.size(); ++i) m += w[i] * x[i];
    return m;
  }
  double variance(std::string_view name) const {
    const auto [x, w] = weighted(name);
    double m = 0, v = 0;
    for (std::size_t i = 0; i < x.size(); ++i) m += w[i] * x[i];
    for (std::size_t i = 0; i < x.size(); ++i) v += w[i] * (x[i] - m) * (x[i] - m);
    return v;
  }
  double sd(std::string_view name) const { return std::sqrt(variance(name)); }
  /// The weighted quantile: the smallest value whose cumulative weight reaches p.
  double quantile(std::string_view name, double p) const {
    const auto xw = weighted(name);
    const std::vector<double>& x = xw.first;
    const std::vector<double>& w = xw.second;
    std::vector<std::size_t> order(x.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return x[a] < x[b]; });
    double cumulative = 0;
    for (std::size_t i : order)
      if ((cumulative += w[i]) >= p) return x[i];
    return order.empty() ? std::numeric_limits<double>::quiet_NaN() : x[order.back()];
  }
  /// The weighted distribution of the distinct values of `name` (for discrete quantities).
  std::map<double, double> histogram(std::string_view name) const {
    const auto [x, w] = weighted(name);
    std::map<double, double> h;
    for (std::size_t i = 0; i < x.size(); ++i) h[x[i]] += w[i];
    return h;
  }
  /// PIMH: the fraction of proposals accepted (sweeps after the first).
  double acceptance_rate() const {
    if (sweeps.size() < 2) return std::numeric_limits<double>::quiet_NaN();
    double a = 0;
    for (std::size_t i = 1; i < sweeps.size(); ++i) a += sweeps[i].accepted ? 1 : 0;
    return a / static_cast<double>(sweeps.size() - 1);
  }

 private:
  /// Values of `name` and their weights renormalised over the particles that predicted it.
  std::pair<std::vector<double>, std::vector<double>> weighted(std::string_view name) const {
    const std::size_t c = column(name);
    std::vector<double> x, w;
    const double per = sets.empty() ? 0 : 1.0 / static_cast<double>(sets.size());
    double total = 0;
    for (const auto& s : sets)
      for (std::size_t p = 0; p < s.size(); ++p) {
        const double v = s.value(p, c);
        if (std::isnan(v)) continue;
        x.push_back(v);
        w.push_back(s.weights[p] * per);
        total += s.weights[p] * per;
      }
    for (double& v : w) v /= total;
    return {std::move(x), std::move(w)};
  }
};

/// One row of an SMC summary.
struct smc_summary_row {
  std::string name;
  double mean, sd, q5, q50, q95, ess;
  std::map<double, double> histogram;  ///< filled when the name takes few distinct integer values
};

/// The summary of a forward-inference result, printable with <<: mean, sd and quantiles of
/// every predicted name, the mean effective sample size of the sweeps' weights, and a
/// histogram for discrete quantities (at most 12 distinct integer values).
struct smc_summary {
  std::vector<smc_summary_row> rows;
  algorithm method = algorithm::smc;
  std::size_t sweeps = 0, particles = 0;
  double log_evidence = 0, acceptance = 0;
};

inline smc_summary summary(const result& r) {
  smc_summary out;
  out.method = r.method;
  out.sweeps = r.sweeps.size();
  out.particles = r.particles;
  out.log_evidence = r.log_evidence;
  out.acceptance = r.acceptance_rate();
  double ess = 0;
  for (const auto& s : r.sets) {
    double q = 0;
    for (double w : s.weights) q += w * w;
    ess += 1.0 / q / static_cast<double>(r.sets.size());
  }
  for (const auto& name : r.names) {
    smc_summary_row row{name, r.mean(name), r.sd(name), r.quantile(name, 0.05),
                        r.quantile(name, 0.5), r.quantile(name, 0.95), ess, {}};
    auto h = r.histogram(name);
    const bool integral = std::all_of(h.begin(), h.end(), [](const auto& kv) {
      return kv.first == std::floor(kv.first);
    });
    if (integral && h.size() <= 12) row.histogram = std::move(h);
    out.rows.push_back(std::move(row));
  }
  return out;
}

inline std::ostream& operator<<(std::ostream& os, const smc_summary& s) {
  char line[256];
  std::snprintf(line, sizeof line, "%-14s %9s %9s %9s %9s %9s %8s\n", "", "mean", "sd", "5%", "50%",
                "95%", "ess");
  os << line;
  for (const auto& r : s.rows) {
    std::snprintf(line, sizeof line, "%-14s %9.3g %9.3g %9.3g %9.3g %9.3g %8.0f\n", r.name.c_str(),
                  r.mean, r.sd, r.q5, r.q50, r.q95, r.ess);
    os << line;
    for (const auto& [v, p] : r.histogram) {
      std::snprintf(line, sizeof line, "  %-12g %9.3f  ", v, p);
      os << line << std::string(static_cast<std::size_t>(std::lround(p * 40)), '#') << "\n";
    }
  }
  const char* method = s.method == algorithm::smc ? "SMC" : s.method == algorithm::pimh ? "PIMH" : "PG";
  std::snprintf(line, sizeof line, "%s: %zu sweeps of %zu particles; log evidence %.4g", method,
                s.sweeps, s.particles, s.log_evidence);
  os << line;
  if (s.method == algorithm::pimh && !std::isnan(s.acceptance)) {
    std::snprintf(line, sizeof line, "; acceptance %.2f", s.acceptance);
    os << line;
  }
  return os << "\n";
}

}  // namespace tyche::smc
// ----- end tyche/samplers/smc/result.hpp -----

#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tyche::smc::detail {

using prediction_list = std::vector<std::pair<std::string, double>>;

/// Seconds since `start` on the steady clock.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

class collector {
 public:
  collector(result& r, const config& cfg, algorithm method) : r_(r), cfg_(cfg) {
    r_.method = method;
    r_.particles = cfg.particles;
  }

  /// The particle set of weights w (normalised) and one predict list per particle.
  template <class ListOf>
  particle_set make_set(const sweep_record& rec, std::vector<double> w, std::size_t n, ListOf list_of) {
    particle_set s;
    s.record = rec;
    s.weights = std::move(w);
    // Columns of each particle's list; particles usually predict the same names in the same
    // order, so the previous list's columns are tried first (no map look-up).
    std::vector<std::vector<std::size_t>> columns(n);
    for (std::size_t p = 0; p < n; ++p) {
      const auto& list = list_of(p);
      bool same = list.size() == last_names_.size();
      for (std::size_t i = 0; same && i < list.size(); ++i) same = list[i].first == last_names_[i];
      if (!same) {
        last_names_.clear();
        last_columns_.clear();
        for (const auto& [name, value] : list) {
          last_names_.push_back(name);
          last_columns_.push_back(column_of(name));
        }
      }
      columns[p] = last_columns_;
    }
    s.columns = r_.names.size();
    s.values.assign(n * s.columns, std::numeric_limits<double>::quiet_NaN());
    for (std::size_t p = 0; p < n; ++p)
      for (std::size_t i = 0; i < columns[p].size(); ++i) {
        const auto& [name, value] = list_of(p)[i];
        double& slot = s.values[p * s.columns + columns[p][i]];
        if (!std::isnan(slot))
          throw std::runtime_error("tyche::smc: predict(\"" + name + "\", ...) was called twice in one run "
                                   "of the program (particle " + std::to_string(p) + "); give each value "
                                   "its own name, e.g. predict(\"x\", i, value) for x[i]");
        slot = value;
      }
    return s;
  }

  /// Records a sweep: its evidence and the set it outputs.
  void emit(const particle_set& s, double proposal_log_evidence) {
    r_.sweeps.push_back(s.record);
    evidences_.push_back(proposal_log_evidence);
    if (cfg_.on_sweep) cfg_.on_sweep(s);
    if (cfg_.keep_sweeps) r_.sets.push_back(s);
  }

  /// Sets log_evidence and the run time.
  void finish(double seconds) {
    r_.seconds = seconds;
    if (evidences_.empty()) return;
    if (r_.method == algorithm::pg) {
      r_.log_evidence = evidences_.front();
    } else {
      r_.log_evidence = log_sum_exp(evidences_) - std::log(static_cast<double>(evidences_.size()));
    }
  }

 private:
  std::size_t column_of(const std::string& name) {
    auto it = columns_.find(name);
    if (it != columns_.end()) return it->second;
    r_.names.push_back(name);
    return columns_.emplace(name, r_.names.size() - 1).first->second;
  }

  result& r_;
  const config& cfg_;
  std::map<std::string, std::size_t, std::less<>> columns_;
  std::vector<double> evidences_;
  std::vector<std::string> last_names_;
  std::vector<std::size_t> last_columns_;
};

/// Checks the arguments every run_* shares.
inline void check_config(const config& cfg, const char* function) {
  const std::string f = function;
  if (cfg.particles < 1)
    throw std::invalid_argument(f + ": particles must be at least 1 (got " + std::to_string(cfg.particles) + ")");
  if (cfg.particles >= (std::size_t{1} << 24) - 1)
    throw std::invalid_argument(f + ": particles must be below 2^24 - 1 (got " + std::to_string(cfg.particles) + ")");
  if (cfg.sweeps < 1)
    throw std::invalid_argument(f + ": sweeps must be at least 1 (got " + std::to_string(cfg.sweeps) + ")");
  if (!(cfg.ess_threshold >= 0 && cfg.ess_threshold <= 1))
    throw std::invalid_argument(f + ": ess_threshold must lie in [0, 1] (got " + std::to_string(cfg.ess_threshold) + ")");
  if (!(cfg.timeout_seconds > 0))
    throw std::invalid_argument(f + ": timeout_seconds must be positive (got " + std::to_string(cfg.timeout_seconds) + ")");
}

/// The error for a NaN or +∞ log-likelihood.
inline std::runtime_error bad_weight(double value, std::size_t particle, std::size_t observe) {
  return std::runtime_error("tyche::smc: particle " + std::to_string(particle) + " passed " +
                            (std::isnan(value) ? std::string("NaN") : std::string("+inf")) +
                            " to observe " + std::to_string(observe) +
                            " (0-based); a log-likelihood must be a number or -inf");
}

inline std::runtime_error all_zero(std::size_t observe) {
  return std::runtime_error("tyche::smc: every particle has log weight -inf after observe " +
                            std::to_string(observe) + " (0-based): no particle is consistent with the "
                            "data; use more particles or check the model");
}

/// Random streams. Particle p of sweep m draws from counter_rng(seed, stream(m, p)), starting
/// at position n · 2^32 for the stretch of program between observe n − 1 and observe n; the
/// engine's own draws (resampling after observe n, the final accept/select) use particle
/// number 2^24 − 1 of the same sweep.
inline std::uint64_t particle_stream(std::size_t sweep, std::size_t particle) {
  return (static_cast<std::uint64_t>(sweep) << 24) | static_cast<std::uint64_t>(particle);
}
inline counter_rng particle_rng(std::uint64_t seed, std::size_t sweep, std::size_t particle, std::size_t step) {
  return counter_rng(seed, particle_stream(sweep, particle), static_cast<std::uint64_t>(step) << 32);
}
inline constexpr std::size_t engine_particle = (std::size_t{1} << 24) - 1;
inline constexpr std::size_t final_step = 0xFFFFFFFFu;
inline counter_rng engine_rng(std::uint64_t seed, std::size_t sweep, std::size_t step) {
  return particle_rng(seed, sweep, engine_particle, step);
}

}  // namespace tyche::smc::detail
// ----- end tyche/samplers/smc/detail/collector.hpp -----
// ----- begin tyche/samplers/smc/program.hpp -----
// tyche/samplers/smc/program.hpp — the two ways to write a program for forward inference,
// and the small densities and draws the paper's programs use.
//
// 1. A plain C++ callable (the fork engine; Paige & Wood's probabilistic C):
//
//      auto gaussian = [] {
//        using namespace tyche::smc;
//        const double mu = sample_normal(1, std::sqrt(5.0));
//        observe(normal_lpdf(9, mu, std::sqrt(2.0)));
//        observe(normal_lpdf(8, mu, std::sqrt(2.0)));
//        predict("mu", mu);
//      };
//
//    observe, predict and rng() are in <tyche/samplers/smc/fork.hpp>. Draw random choices
//    from rng() (the sample_* functions without a generator do): the engine gives every
//    particle its own stream after each observe. A generator of your own, copied by fork,
//    would make sibling particles draw the same numbers.
//
// 2. A stepwise program (both engines; the in-process engine needs this form): a copyable
//    state, the number of observes N, a step function that advances the state from observe
//    n − 1 to observe n and returns the log-likelihood observed there, and a predict function
//    of the final state:
//
//      auto gaussian = tyche::smc::stepwise(
//          0.0, 2,
//          [](double& mu, std::size_t n, tyche::counter_rng& g) {
//            if (n == 0) mu = sample_normal(g, 1, std::sqrt(5.0));
//            return normal_lpdf(n == 0 ? 9 : 8, mu, std::sqrt(2.0));
//          },
//          [](const double& mu, tyche::smc::predictions& p) { p("mu", mu); });
//
//    The fork engine runs a stepwise program as `state s = initial; for n: observe(step(s, n,
//    rng())); predict(s)`, with the same random streams as the in-process engine, so both
//    engines give identical results for it (tests/smc/engines_test.cpp).

#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace tyche::smc {

/// A copyable state, N observes, step(state&, n, counter_rng&) → log-likelihood at observe n,
/// predict(const state&, predictions&).
template <class State, class Step, class Predict>
struct stepwise_program {
  using state_type = State;
  State initial;
  std::size_t observations;
  Step step;
  Predict predict;
};

template <class T>
struct is_stepwise_program : std::false_type {};
template <class S, class St, class P>
struct is_stepwise_program<stepwise_program<S, St, P>> : std::true_type {};

/// The stepwise program (initial, observations, step, predict); see the top of this file.
template <class State, class Step, class Predict>
auto stepwise(State initial, std::size_t observations, Step step, Predict predict) {
  static_assert(std::is_copy_constructible_v<State> && std::is_copy_assignable_v<State>,
                "tyche::smc::stepwise(initial, ...) requires a copyable state: resampling copies it");
  static_assert(std::is_invocable_r_v<double, const Step&, State&, std::size_t, counter_rng&>,
                "tyche::smc::stepwise(initial, n, step, predict) requires 'step' callable as "
                "step(State&, std::size_t observe, tyche::counter_rng&) and returning the "
                "log-likelihood (double)");
  static_assert(std::is_invocable_v<const Predict&, const State&, predictions&>,
                "tyche::smc::stepwise(initial, n, step, predict) requires 'predict' callable as "
                "predict(const State&, tyche::smc::predictions&)");
  return stepwise_program<State, Step, Predict>{std::move(initial), observations, std::move(step),
                                                std::move(predict)};
}

// --- densities on plain doubles -------------------------------------------------------------------

namespace detail {
/// Throws std::invalid_argument "tyche::smc::<call>: <name> must be <domain>, but it is <v>"
/// unless ok (the support check of the forward-inference densities and samplers).
inline void check_smc_argument(bool ok, const char* call, const char* name, const char* domain, double v) {
  if (ok) return;
  char value[32];
  std::snprintf(value, sizeof value, "%.17g", v);
  throw std::invalid_argument(std::string("tyche::smc::") + call + ": " + name + " must be " + domain +
                              ", but it is " + value);
}
}  // namespace detail

/// log N(x | mean, sd²). sd must be > 0; x and mean must not be NaN (a NaN log-likelihood is
/// reported by observe with the particle and the observation).
inline double normal_lpdf(double x, double mean, double sd) {
  detail::check_smc_argument(sd > 0 && sd < HUGE_VAL, "normal_lpdf(x, mean, sd)", "sd", "> 0 and finite", sd);
  constexpr double half_log_two_pi = 0.91893853320467274178;
  const double z = (x - mean) / sd;
  return -0.5 * z * z - std::log(sd) - half_log_two_pi;
}

// --- draws from a generator -----------------------------------------------------------------------

/// N(mean, sd²): one position of g.
inline double sample_normal(counter_rng& g, double mean, double sd) {
  detail::check_smc_argument(sd >= 0 && sd < HUGE_VAL, "sample_normal(g, mean, sd)", "sd", ">= 0 and finite", sd);
  return mean + sd * g.normal();
}
/// Uniform on (0, 1).
inline double sample_uniform(counter_rng& g) { return g.uniform01(); }
/// Gamma(shape, rate) (Marsaglia & Tsang 2000; shape < 1 by the u^(1/shape) boost).
inline double sample_gamma(counter_rng& g, double shape, double rate) {
  detail::check_smc_argument(shape > 0 && shape < HUGE_VAL, "sample_gamma(g, shape, rate)", "shape", "> 0 and finite", shape);
  detail::check_smc_argument(rate > 0 && rate < HUGE_VAL, "sample_gamma(g, shape, rate)", "rate", "> 0 and finite", rate);
  if (shape < 1) return sample_gamma(g, shape + 1, rate) * std::pow(g.uniform01(), 1 / shape);
  const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9 * d);
  for (;;) {
    double x, v;
    do {
      x = g.normal();
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = g.uniform01();
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v / rate;
  }
}
/// An index drawn with probability proportional to weights[i] (need not sum to 1).
template <class Weights>
std::size_t sample_discrete(counter_rng& g, const Weights& weights) {
  double total = 0;
  for (double w : weights) total += w;
  double u = g.uniform01() * total;
  std::size_t i = 0, last = 0;
  for (double w : weights) {
    if (w > 0) last = i;
    if (u < w) return i;
    u -= w;
    ++i;
  }
  return last;  // rounding
}

}  // namespace tyche::smc
// ----- end tyche/samplers/smc/program.hpp -----

#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#if TYCHE_SMC_FORK_ENGINE
#include <fcntl.h>
#include <semaphore.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

namespace tyche::smc {

#if TYCHE_SMC_FORK_ENGINE

namespace detail {

enum class arrival : int { none = 0, observe = 1, finished = 2, error = 3 };

struct shared_header {
  sem_t arrived;
  sem_t departed;
  pid_t manager;
  std::uint64_t seed;
  std::size_t sweep;
};

struct slot_record {
  // Two semaphores, used at even and odd observes: a particle that reaches observe n + 1 in a
  // slot must not take the post meant for the slot's previous holder at observe n.
  sem_t go[2];
  pid_t pid;
  arrival kind;
  std::size_t observes;   // observes made before this arrival (the index of this observe)
  double log_likelihood;
  // The manager's instruction, written before go is posted.
  std::size_t offspring;  // copies to continue with; 0: end
  std::size_t first;      // the slot of the first copy (the particle itself)
  std::ptrdiff_t keeper;  // particle Gibbs: the keeper to fork here, or −1
  std::size_t length;     // bytes used in the buffer that follows
};

struct keeper_record {
  sem_t go;
  pid_t pid;
  int end;                // 1: end; 0: fork `children` particles into slots first, first + 1, ...
  std::size_t children;
  std::size_t first;
};

/// The shared segment: header, slots (each followed by its buffer), keepers.
class shared_segment {
 public:
  shared_segment(std::size_t slots, std::size_t buffer_bytes, std::size_t keepers)
      : slots_(slots), keepers_(keepers) {
    slot_stride_ = round_up(sizeof(slot_record) + buffer_bytes);
    buffer_bytes_ = slot_stride_ - sizeof(slot_record);
    bytes_ = round_up(sizeof(shared_header)) + slots * slot_stride_ + keepers * round_up(sizeof(keeper_record));
    void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      throw std::runtime_error(std::string("tyche::smc (fork engine): mmap of shared memory failed: ") +
                               std::strerror(errno));
    base_ = static_cast<char*>(p);
    std::memset(base_, 0, bytes_);
    bool ok = ::sem_init(&header().arrived, 1, 0) == 0 && ::sem_init(&header().departed, 1, 0) == 0;
    for (std::size_t s = 0; s < slots; ++s)
      ok = ok && ::sem_init(&slot(s).go[0], 1, 0) == 0 && ::sem_init(&slot(s).go[1], 1, 0) == 0;
    for (std::size_t k = 0; k < keepers; ++k) ok = ok && ::sem_init(&keeper(k).go, 1, 0) == 0;
    if (!ok) {
      ::munmap(base_, bytes_);
      throw std::runtime_error("tyche::smc (fork engine): sem_init failed");
    }
  }
  shared_segment(const shared_segment&) = delete;
  shared_segment& operator=(const shared_segment&) = delete;
  ~shared_segment() { ::munmap(base_, bytes_); }

  shared_header& header() const { return *reinterpret_cast<shared_header*>(base_); }
  slot_record& slot(std::size_t s) const {
    return *reinterpret_cast<slot_record*>(base_ + round_up(sizeof(shared_header)) + s * slot_stride_);
  }
  char* buffer(std::size_t s) const { return reinterpret_cast<char*>(&slot(s)) + sizeof(slot_record); }
  std::size_t buffer_bytes() const { return buffer_bytes_; }
  keeper_record& keeper(std::size_t k) const {
    return *reinterpret_cast<keeper_record*>(base_ + round_up(sizeof(shared_header)) + slots_ * slot_stride_ +
                                             k * round_up(sizeof(keeper_record)));
  }
  std::size_t slots() const { return slots_; }
  std::size_t keepers() const { return keepers_; }

 private:
  static std::size_t round_up(std::size_t n) { return (n + 63) / 64 * 64; }
  char* base_ = nullptr;
  std::size_t slots_, keepers_, slot_stride_ = 0, buffer_bytes_ = 0, bytes_ = 0;
};

/// What a particle process knows about itself (one per process; inert outside a run).
struct particle_context {
  const shared_segment* shared = nullptr;
  std::size_t slot = 0;
  std::size_t observes = 0;
  counter_rng rng{0};
  std::vector<std::pair<std::string, double>> predicted;
};

inline particle_context*& current_particle() {
  static particle_context* c = nullptr;
  return c;
}

inline particle_context& require_particle(const char* function) {
  particle_context* c = current_particle();
  if (c == nullptr)
    throw std::logic_error(std::string(function) +
                           " was called outside a fork-engine run: call it from a program given to "
                           "tyche::smc::run_smc, run_pimh or run_pg");
  return *c;
}

/// An error of the shared checks (detail/collector.hpp) without its "tyche::smc: ": the fork
/// engine's message starts with the run_* function's name and "(fork engine): " instead.
inline std::string without_prefix(const std::exception& e) {
  const std::string what = e.what(), prefix = "tyche::smc: ";
  return what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what;
}

/// Exit codes of particle processes that the manager translates.
inline constexpr int exit_fork_failed = 70;
inline constexpr int exit_manager_gone = 71;

inline constexpr int exit_controller_gone = 72;

/// The manager's process group, for its signal handler (0 until the group exists).
inline volatile std::sig_atomic_t& manager_group() {
  static volatile std::sig_atomic_t g = 0;
  return g;
}

/// The manager's handler of SIGTERM, its parent-death signal: the controller is gone (killed,
/// even by SIGKILL, or ended), so every particle and keeper of the run is killed with the group
/// (a busy one would otherwise compute on, and a waiting one notice only after seconds). Only
/// async-signal-safe calls.
inline void manager_orphaned(int) {
  const pid_t g = static_cast<pid_t>(manager_group());
  if (g > 0) ::killpg(g, SIGKILL);
  ::_exit(exit_controller_gone);
}

/// The intermediate process this process was forked through by spawn() (below), or 0: until
/// that intermediate has fully exited, it, not the manager, is this process's parent.
inline pid_t& spawn_intermediate() {
  static pid_t p = 0;
  return p;
}

/// Waits on a semaphore, checking every second that the manager is still alive: every
/// particle and keeper is the manager's child (directly, or reparented to it when the
/// intermediate of its fork exits), so a parent that is neither the manager nor that
/// intermediate, seen twice in a row, means the manager is gone. The intermediate exits at once,
/// but on a loaded machine it can stay in the kernel's exit path (state D) for seconds, and until
/// it is gone it is still the parent; counting it as a stranger made particles exit (status 71)
/// in busy test runs. (Probing the manager's pid with kill(pid, 0) is not enough: a busy machine
/// reuses pids within a second; a parent pid equal to the old intermediate's cannot be a reused
/// one, since a process is only reparented to a process that already exists.)
inline void particle_wait(sem_t* s, pid_t manager) {
  int strange_parent = 0;
  for (;;) {
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 1;
    if (::sem_timedwait(s, &ts) == 0) return;
    if (errno != ETIMEDOUT) continue;
    const pid_t parent = ::getppid();
    const bool expected = parent == manager || (spawn_intermediate() != 0 && parent == spawn_intermediate());
    strange_parent = expected ? 0 : strange_parent + 1;
    if (strange_parent >= 2) ::_exit(exit_manager_gone);
  }
}

/// Forks a process that is reparented to the manager at once (through an intermediate that
/// exits). Returns true in the new process, false in the caller; the new process's pid is
/// stored in *pid before this returns in the caller.
inline bool spawn(pid_t* pid) {
  const pid_t middle = ::fork();
  if (middle < 0) ::_exit(exit_fork_failed);
  if (middle == 0) {
    const pid_t child = ::fork();
    if (child < 0) ::_exit(exit_fork_failed);
    if (child > 0) {
      *pid = child;
      ::_exit(0);
    }
    *pid = ::getpid();
    spawn_intermediate() = ::getppid();  // the intermediate, or the manager if it has already gone
    return true;
  }
  int status = 0;
  while (::waitpid(middle, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ::_exit(exit_fork_failed);
  return false;
}

/// The keeper loop (the paper's Algorithm 4). Returns only in a forked child, with the slot
/// that child continues as.
inline std::size_t keeper_loop(particle_context& c, std::size_t k) {
  const shared_segment& sh = *c.shared;
  keeper_record& rec = sh.keeper(k);
  for (;;) {
    particle_wait(&rec.go, sh.header().manager);
    if (rec.end) ::_exit(0);
    const std::size_t children = rec.children, first = rec.first;
    for (std::size_t j = 0; j < children; ++j)
      if (spawn(&sh.slot(first + j).pid)) return first + j;
    ::sem_post(&sh.header().departed);
  }
}

/// Writes the predictions (or an error text) into the particle's buffer.
inline bool write_buffer(const particle_context& c, const std::string& bytes) {
  const shared_segment& sh = *c.shared;
  if (bytes.size() > sh.buffer_bytes()) return false;
  std::memcpy(sh.buffer(c.slot), bytes.data(), bytes.size());
  sh.slot(c.slot).length = bytes.size();
  return true;
}

template <class T>
void put(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}
template <class T>
T get(const char*& p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  p += sizeof(T);
  return v;
}

inline std::string serialise(const std::vector<std::pair<std::string, double>>& list) {
  std::string out;
  put(out, static_cast<std::uint32_t>(list.size()));
  for (const auto& [name, value] : list) {
    put(out, static_cast<std::uint32_t>(name.size()));
    out += name;
    put(out, value);
  }
  return out;
}

inline prediction_list deserialise(std::string_view bytes) {
  prediction_list out;
  const char* p = bytes.data();
  const auto n = get<std::uint32_t>(p);
  out.reserve(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    const auto len = get<std::uint32_t>(p);
    std::string name(p, len);
    p += len;
    out.emplace_back(std::move(name), get<double>(p));
  }
  return out;
}

/// Reports an arrival of the given kind (with the buffer already written) and, for an observe,
/// waits for and carries out the manager's instruction.
inline void arrive(particle_context& c, arrival kind, double log_likelihood) {
  const shared_segment& sh = *c.shared;
  slot_record& rec = sh.slot(c.slot);
  rec.log_likelihood = log_likelihood;
  rec.observes = c.observes;
  rec.kind = kind;
  ::sem_post(&sh.header().arrived);
  if (kind != arrival::observe) ::_exit(0);
  particle_wait(&rec.go[c.observes % 2], sh.header().manager);
  const std::size_t offspring = rec.offspring, first = rec.first;
  const std::ptrdiff_t keeper = rec.keeper;
  if (offspring == 0) {
    ::sem_post(&sh.header().departed);
    ::_exit(0);
  }
  std::size_t slot = first;
  bool is_new = false;
  if (keeper >= 0) {
    if (spawn(&sh.keeper(static_cast<std::size_t>(keeper)).pid)) {
      slot = keeper_loop(c, static_cast<std::size_t>(keeper));
      is_new = true;
    }
  }
  for (std::size_t j = 1; j < offspring && !is_new; ++j)
    if (spawn(&sh.slot(first + j).pid)) {
      slot = first + j;
      is_new = true;
    }
  if (!is_new) {
    sh.slot(first).pid = ::getpid();
    ::sem_post(&sh.header().departed);
  }
  c.slot = slot;
  ++c.observes;
  c.rng = particle_rng(sh.header().seed, sh.header().sweep, slot, c.observes);
}

[[noreturn]] inline void report_and_exit(particle_context& c, const std::string& what) {
  std::string text = what;
  if (text.size() > c.shared->buffer_bytes()) text.resize(c.shared->buffer_bytes());
  write_buffer(c, text);
  arrive(c, arrival::error, 0);
  ::_exit(0);
}

inline void restore_default_signals() {
  for (int s : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT, SIGPIPE, SIGCHLD})
    ::signal(s, SIG_DFL);
}

/// A particle process from the top of the program.
template <class Program>
[[noreturn]] void particle_main(const Program& program, const shared_segment& sh, std::size_t slot) {
  static particle_context c;
  c.shared = &sh;
  c.slot = slot;
  c.observes = 0;
  c.predicted.clear();
  c.rng = particle_rng(sh.header().seed, sh.header().sweep, slot, 0);
  current_particle() = &c;
  sh.slot(slot).pid = ::getpid();
  try {
    program();
  } catch (const std::exception& e) {
    report_and_exit(c, std::string("threw: ") + e.what());
  } catch (...) {
    report_and_exit(c, "threw an exception not derived from std::exception");
  }
  const std::string bytes = serialise(c.predicted);
  if (!write_buffer(c, bytes))
    report_and_exit(c, "made " + std::to_string(bytes.size()) + " bytes of predictions, more than "
                       "config::predict_bytes = " + std::to_string(sh.buffer_bytes()));
  arrive(c, arrival::finished, 0);
  ::_exit(0);
}

// --- the manager ------------------------------------------------------------------------------

struct fork_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    const int s = WTERMSIG(status);
    const char* name = ::strsignal(s);
    return "was killed by signal " + std::to_string(s) + " (" + (name ? name : "?") + ")";
  }
  if (WIFEXITED(status)) {
    const int code = WEXITSTATUS(status);
    if (code == exit_fork_failed) return "could not fork (exit status 70: a process or memory limit?)";
    return "exited with status " + std::to_string(code) + " before the end of the program";
  }
  return "stopped (status " + std::to_string(status) + ")";
}

inline std::string format_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

/// The pipe from manager to controller: one message per sweep, then done or an error.
enum message_type : char { message_sweep = 'S', message_error = 'E', message_done = 'D', message_group = 'G' };

inline bool write_all(int fd, const std::string& bytes) {
  std::size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t w = ::write(fd, bytes.data() + off, bytes.size() - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    off += static_cast<std::size_t>(w);
  }
  return true;
}

inline bool read_all(int fd, char* out, std::size_t n) {
  std::size_t off = 0;
  while (off < n) {
    const ssize_t r = ::read(fd, out + off, n - off);
    if (r < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (r == 0) return false;
    off += static_cast<std::size_t>(r);
  }
  return true;
}

inline void send(int fd, message_type type, const std::string& payload) {
  std::string m;
  put(m, type);
  put(m, static_cast<std::uint64_t>(payload.size()));
  m += payload;
  if (!write_all(fd, m)) throw fork_error("the controller stopped listening");
}

template <class Program>
class manager {
 public:
  manager(const Program& program, algorithm method, const config& cfg, int pipe,
          std::chrono::steady_clock::time_point start, const char* function)
      : program_(program), method_(method), cfg_(cfg), pipe_(pipe), controller_(::getppid()), start_(start),
        function_(function),
        L_(cfg.particles),
        shared_(cfg.particles, cfg.predict_bytes, method == algorithm::pg ? cfg.max_processes : 0) {}

  [[noreturn]] void main() {
    int code = 0;
    try {
      setup();
      for (std::size_t m = 0; m < cfg_.sweeps; ++m) {
        if (m > 0 && seconds_since(start_) >= cfg_.max_seconds) break;
        sweep(m);
      }
      cleanup();
      send(pipe_, message_done, {});
    } catch (const std::exception& e) {
      cleanup();
      try {
        send(pipe_, message_error, std::string(function_) + " (fork engine): " + e.what());
      } catch (...) {
        code = 1;
      }
    }
    ::_exit(code);
  }

 private:
  void setup() {
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    ::signal(SIGPIPE, SIG_IGN);
    ::signal(SIGCHLD, SIG_DFL);
    shared_.header().manager = ::getpid();
    shared_.header().seed = cfg_.seed;
    const pid_t anchor = ::fork();
    if (anchor < 0) throw fork_error(std::string("fork failed: ") + std::strerror(errno));
    if (anchor == 0) {
      ::close(pipe_);  // the controller sees end-of-file when the manager alone has ended
      ::setpgid(0, 0);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      for (;;) ::pause();
    }
    ::setpgid(anchor, anchor);
    group_ = anchor;
    // From here a dead controller takes the whole group with it (manager_orphaned).
    manager_group() = static_cast<std::sig_atomic_t>(group_);
    struct sigaction on_term {};
    on_term.sa_handler = manager_orphaned;
    ::sigemptyset(&on_term.sa_mask);
    ::sigaction(SIGTERM, &on_term, nullptr);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != controller_) manager_orphaned(0);  // it died before the prctl
    std::string g;
    put(g, static_cast<std::int64_t>(group_));
    send(pipe_, message_group, g);
  }

  /// Kills the group and reaps every process of the run. A process the program forked that left
  /// the group (setsid) is this subreaper's child once its parent has ended: it is killed by
  /// pid, from /proc's list of this process's children, so it cannot hold the report back.
  /// Where that list is missing, the wait is bounded (2 s) and such a process is left running.
  void cleanup() {
    if (group_ > 0) ::killpg(group_, SIGKILL);
    const auto start = std::chrono::steady_clock::now();
    const std::string children = "/proc/self/task/" + std::to_string(::getpid()) + "/children";
    int status = 0;
    for (;;) {
      const pid_t p = ::waitpid(-1, &status, WNOHANG);
      if (p > 0 || (p < 0 && errno == EINTR)) continue;
      if (p < 0) break;  // ECHILD: none left
      if (std::FILE* f = std::fopen(children.c_str(), "r")) {
        long pid = 0;
        while (std::fscanf(f, "%ld", &pid) == 1)
          if (pid > 1) ::kill(static_cast<pid_t>(pid), SIGKILL);
        std::fclose(f);
      }
      if (std::chrono::steady_clock::now() - start > std::chrono::seconds(2)) break;
      ::usleep(1000);
    }
    group_ = 0;
    manager_group() = 0;
  }

  void launch(std::size_t slot) {
    slot_record& rec = shared_.slot(slot);
    rec.kind = arrival::none;
    rec.length = 0;
    const pid_t pid = ::fork();
    if (pid < 0) throw fork_error(std::string("fork failed: ") + std::strerror(errno));
    if (pid == 0) {
      ::setpgid(0, group_);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // dies with the manager (its offspring poll, above)
      if (::getppid() != shared_.header().manager) ::_exit(exit_manager_gone);
      ::close(pipe_);
      restore_default_signals();
      particle_main(program_, shared_, slot);
    }
    ::setpgid(pid, group_);
    rec.pid = pid;
    owner_[pid] = {slot, false};
  }

  // Who a pid is, for the reaper: a particle slot or a keeper, and whether its end is expected.
  struct process {
    std::size_t index;
    bool keeper;
    bool ending = false;
  };

  std::string who(std::size_t slot) const { return "particle " + std::to_string(slot); }
  /// Where the running particles are: between the last barrier passed and the next.
  std::string where() const {
    return passed_ == 0 ? "before its first observe"
                        : "after observe " + std::to_string(passed_ - 1) + " (0-based)";
  }

  /// Reaps every ended process; throws for one that ended unexpectedly.
  void reap() {
    for (;;) {
      int status = 0;
      const pid_t p = ::waitpid(-1, &status, WNOHANG);
      if (p <= 0) return;
      auto it = owner_.find(p);
      if (it == owner_.end()) {
        // Not yet registered: a new particle or keeper (its pid is in shared memory).
        for (std::size_t s = 0; s < L_ && it == owner_.end(); ++s)
          if (shared_.slot(s).pid == p) it = owner_.emplace(p, process{s, false}).first;
        for (std::size_t k = 0; k < shared_.keepers() && it == owner_.end(); ++k)
          if (shared_.keeper(k).pid == p && keeper_used_[k]) it = owner_.emplace(p, process{k, true}).first;
      }
      if (it == owner_.end()) {
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
        throw fork_error("a particle process (pid " + std::to_string(p) + ") " + describe_status(status) +
                         " " + where() + " (sweep " + std::to_string(sweep_) + ")");
      }
      const process proc = it->second;
      owner_.erase(it);
      if (proc.keeper) {
        if (proc.ending && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
          release_keeper(proc.index);
          continue;
        }
        throw fork_error("the keeper of observe " + std::to_string(keeper_observe_[proc.index]) +
                         " (pid " + std::to_string(p) + ") " + describe_status(status));
      }
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && proc.ending) continue;
      // The process may have moved to another slot since it was registered (a parent continues
      // in the first slot of its offspring, and may finish before the manager re-registers it).
      // While offspring are being forked, a slot may still show the pid of its previous holder.
      std::size_t slot = proc.index;
      bool reported = false;
      for (std::size_t s = 0; s < L_ && !reported; ++s) {
        const slot_record& rec = shared_.slot(s);
        if (rec.pid != p) continue;
        slot = s;
        reported = rec.kind == arrival::finished || rec.kind == arrival::error;
      }
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && reported) continue;
      throw fork_error(who(slot) + " (pid " + std::to_string(p) + ") " + describe_status(status) +
                       " " + where() + " (sweep " + std::to_string(sweep_) + ")");
    }
  }

  /// Waits for n posts of a semaphore, reaping meanwhile; throws after the timeout.
  template <class Missing>
  void collect(sem_t* s, std::size_t n, const char* what, Missing missing) {
    const auto begin = std::chrono::steady_clock::now();
    for (std::size_t got = 0; got < n;) {
      timespec ts{};
      ::clock_gettime(CLOCK_REALTIME, &ts);
      ts.tv_nsec += 5'000'000;
      if (ts.tv_nsec >= 1'000'000'000) {
        ts.tv_sec += 1;
        ts.tv_nsec -= 1'000'000'000;
      }
      if (::sem_timedwait(s, &ts) == 0) {
        ++got;
        continue;
      }
      reap();
      if (seconds_since(begin) > cfg_.timeout_seconds)
        throw fork_error("timed out after " + format_seconds(cfg_.timeout_seconds) + " s waiting for " +
                         missing() + " " + what + " (config::timeout_seconds)");
    }
  }

  std::size_t allocate_keeper(std::size_t observe) {
    if (free_keepers_.empty())
      throw fork_error("particle Gibbs needs more than config::max_processes = " +
                       std::to_string(cfg_.max_processes) + " keeper processes; raise it or use fewer particles");
    const std::size_t k = free_keepers_.back();
    free_keepers_.pop_back();
    keeper_used_[k] = true;
    keeper_observe_[k] = observe;
    shared_.keeper(k).pid = 0;
    shared_.keeper(k).end = 0;
    return k;
  }
  void release_keeper(std::size_t k) {
    keeper_used_[k] = false;
    free_keepers_.push_back(k);
  }
  void end_keeper(std::size_t k) {
    keeper_record& rec = shared_.keeper(k);
    rec.end = 1;
    for (auto& [pid, p] : owner_)
      if (p.keeper && p.index == k && pid == rec.pid) p.ending = true;
    if (owner_.find(rec.pid) == owner_.end()) owner_[rec.pid] = {k, true, true};
    ::sem_post(&rec.go);
  }

  void sweep(std::size_t m) {
    sweep_ = m;
    passed_ = 0;
    shared_.header().sweep = m;
    const bool pg = method_ == algorithm::pg, conditional = pg && m > 0;
    const std::size_t first_running = conditional ? 1 : 0;
    std::vector<double> log_w(L_, 0.0), increment(L_, 0.0);
    double log_evidence = 0, log_total = std::log(static_cast<double>(L_));  // log Σ w
    for (std::size_t s = first_running; s < L_; ++s) launch(s);

    // Particle Gibbs bookkeeping for this sweep.
    std::vector<std::vector<std::size_t>> ancestors;         // per observe: parent of each new slot
    std::vector<std::vector<std::ptrdiff_t>> keeper_of;       // per observe: keeper of each old slot
    std::vector<std::vector<double>> increments;              // per observe

    for (;;) {
      collect(&shared_.header().arrived, L_ - first_running, "to reach the next observe or the end", [&] {
        std::string s;
        for (std::size_t l = first_running; l < L_; ++l)
          if (shared_.slot(l).kind == arrival::none) s += (s.empty() ? "particle " : ", ") + std::to_string(l);
        return s.empty() ? std::string("a particle") : s;
      });
      // What arrived.
      const std::size_t n = shared_.slot(first_running).observes;
      for (std::size_t l = first_running; l < L_; ++l) {
        const slot_record& rec = shared_.slot(l);
        if (rec.kind == arrival::error)
          throw fork_error(who(l) + " " + std::string(shared_.buffer(l), rec.length) + " (after " +
                           std::to_string(rec.observes) + " observes; sweep " + std::to_string(m) + ")");
      }
      const arrival kind = shared_.slot(first_running).kind;
      for (std::size_t l = first_running; l < L_; ++l) {
        const slot_record& rec = shared_.slot(l);
        if (rec.kind != kind || rec.observes != n)
          throw fork_error(mismatch(first_running, kind, n, l, rec.kind, rec.observes));
      }
      if (kind == arrival::finished) {
        for (std::size_t l = first_running; l < L_; ++l) owner_[shared_.slot(l).pid] = {l, false, true};
        if (known_observes_ != npos && n != known_observes_)
          throw fork_error("the program called observe " + std::to_string(n) + " times in sweep " +
                           std::to_string(m) + " but " + std::to_string(known_observes_) +
                           " times before; a program must call observe the same number of times on every run");
        known_observes_ = n;
        break;
      }
      if (conditional && n >= known_observes_)
        throw fork_error("the program called observe more than " + std::to_string(known_observes_) +
                         " times in sweep " + std::to_string(m) + "; a program must call observe the same "
                         "number of times on every run");
      for (std::size_t l = first_running; l < L_; ++l) {
        const double v = shared_.slot(l).log_likelihood;
        if (std::isnan(v) || v == std::numeric_limits<double>::infinity()) {
          throw fork_error(without_prefix(bad_weight(v, l, n)));
        }
        increment[l] = v;
      }
      if (conditional) increment[0] = retained_increment_[n];
      for (std::size_t l = 0; l < L_; ++l) log_w[l] += increment[l];
      const weight_summary after = summarise_weights(log_w);
      if (after.log_sum == -std::numeric_limits<double>::infinity()) throw fork_error(without_prefix(all_zero(n)));
      log_evidence += after.log_sum - log_total;
      log_total = after.log_sum;

      // Offspring.
      std::vector<std::size_t> ancestor;
      const bool resample_now = pg || after.ess < cfg_.ess_threshold * static_cast<double>(L_);
      if (resample_now) {
        counter_rng g = engine_rng(cfg_.seed, m, n);
        if (conditional) {
          ancestor.push_back(0);
          // Multinomial: see the note in in_process.hpp.
          const auto rest = resample(log_w, L_ - 1, resampling_scheme::multinomial, g);
          ancestor.insert(ancestor.end(), rest.begin(), rest.end());
        } else {
          ancestor = resample(log_w, L_, cfg_.resampling, g);
        }
        std::fill(log_w.begin(), log_w.end(), 0.0);
        log_total = std::log(static_cast<double>(L_));
      } else {
        for (std::size_t l = 0; l < L_; ++l) ancestor.push_back(l);
      }
      std::vector<std::size_t> count(L_, 0), first(L_, 0);
      for (std::size_t i = L_; i-- > 0;) {
        ++count[ancestor[i]];
        first[ancestor[i]] = i;
      }
      // Instructions.
      std::vector<std::ptrdiff_t> keepers(L_, -1);
      if (conditional) keepers[0] = static_cast<std::ptrdiff_t>(retained_keeper_[n]);
      std::size_t posts = 0;
      for (std::size_t l = first_running; l < L_; ++l) {
        slot_record& rec = shared_.slot(l);
        rec.offspring = count[l];
        rec.first = first[l];
        rec.keeper = pg && count[l] > 0 ? keepers[l] = static_cast<std::ptrdiff_t>(allocate_keeper(n)) : -1;
        if (count[l] == 0) {
          auto it = owner_.find(rec.pid);
          if (it != owner_.end()) it->second.ending = true;
          else owner_[rec.pid] = {l, false, true};
        }
      }
      for (std::size_t l = first_running; l < L_; ++l) {
        shared_.slot(l).kind = arrival::none;
        shared_.slot(l).length = 0;
      }
      for (std::size_t l = first_running; l < L_; ++l) {
        ::sem_post(&shared_.slot(l).go[n % 2]);
        passed_ = n + 1;
        ++posts;
      }
      if (conditional) {
        keeper_record& rec = shared_.keeper(retained_keeper_[n]);
        rec.end = 0;
        rec.children = count[0] - 1;  // the retained trace itself continues in the next keeper
        rec.first = 1;
        ::sem_post(&rec.go);
        ++posts;
      }
      collect(&shared_.header().departed, posts, "to finish forking", [] { return std::string("a particle"); });
      for (std::size_t l = first_running; l < L_; ++l) owner_[shared_.slot(l).pid] = {l, false};
      if (pg) {
        for (std::size_t l = 0; l < L_; ++l)
          if (keepers[l] >= 0 && !(conditional && l == 0))
            owner_[shared_.keeper(static_cast<std::size_t>(keepers[l])).pid] = {static_cast<std::size_t>(keepers[l]), true};
        ancestors.push_back(std::move(ancestor));
        keeper_of.push_back(std::move(keepers));
        increments.push_back(increment);
        prune(ancestors, keeper_of, conditional);
      }
      reap();
    }

    // The sweep's particle set.
    const std::vector<double> w = normalised_weights(log_w);
    std::vector<std::string> bytes(L_);
    for (std::size_t l = first_running; l < L_; ++l) bytes[l].assign(shared_.buffer(l), shared_.slot(l).length);
    if (conditional) bytes[0] = retained_predictions_;
    bool accepted = true;
    if (method_ == algorithm::pimh && m > 0) {
      counter_rng g = engine_rng(cfg_.seed, m, final_step);
      accepted = std::log(g.uniform01()) < log_evidence - current_log_evidence_;
    }
    if (accepted) current_log_evidence_ = log_evidence;
    if (pg) {
      counter_rng g = engine_rng(cfg_.seed, m, final_step);
      std::size_t b = sample_discrete(g, w);
      retained_predictions_ = bytes[b];
      const std::size_t N = ancestors.size();
      std::vector<std::size_t> keep(N);
      retained_increment_.assign(N, 0.0);
      for (std::size_t n = N; n-- > 0;) {
        b = ancestors[n][b];
        keep[n] = static_cast<std::size_t>(keeper_of[n][b]);
        retained_increment_[n] = increments[n][b];
      }
      // keeper_of holds only live keepers (prune clears the entries of those it ends).
      for (std::size_t n = 0; n < N; ++n)
        for (std::size_t l = 0; l < L_; ++l)
          if (keeper_of[n][l] >= 0 && static_cast<std::size_t>(keeper_of[n][l]) != keep[n])
            end_keeper(static_cast<std::size_t>(keeper_of[n][l]));
      retained_keeper_ = std::move(keep);
    }
    std::string payload;
    put(payload, static_cast<std::uint64_t>(m));
    put(payload, log_evidence);
    put(payload, static_cast<std::uint8_t>(accepted ? 1 : 0));
    put(payload, seconds_since(start_));
    put(payload, static_cast<std::uint64_t>(L_));
    for (std::size_t l = 0; l < L_; ++l) {
      put(payload, w[l]);
      put(payload, static_cast<std::uint64_t>(bytes[l].size()));
      payload += bytes[l];
    }
    send(pipe_, message_sweep, payload);
    reap();
  }

  /// Ends the keepers whose lineage has no particle left (slot 0 of a conditional sweep is
  /// the retained trace, never pruned: its keepers are the retained keepers).
  void prune(const std::vector<std::vector<std::size_t>>& ancestors,
             std::vector<std::vector<std::ptrdiff_t>>& keeper_of, bool conditional) {
    std::vector<char> alive(L_, 1);
    for (std::size_t n = ancestors.size(); n-- > 0;) {
      std::vector<char> parent(L_, 0);
      for (std::size_t i = 0; i < L_; ++i)
        if (alive[i]) parent[ancestors[n][i]] = 1;
      for (std::size_t l = 0; l < L_; ++l) {
        const std::ptrdiff_t k = keeper_of[n][l];
        if (k < 0 || parent[l] || (conditional && l == 0)) continue;
        end_keeper(static_cast<std::size_t>(k));
        keeper_of[n][l] = -1;  // its id may be reused
      }
      alive = std::move(parent);
    }
  }

  std::string mismatch(std::size_t a, arrival ka, std::size_t na, std::size_t b, arrival kb, std::size_t nb) const {
    auto where = [](arrival k, std::size_t n) {
      return k == arrival::finished ? "reached the end of the program after " + std::to_string(n) + " observes"
                                    : "is at observe " + std::to_string(n) + " (0-based)";
    };
    return "particle " + std::to_string(b) + " " + where(kb, nb) + " while particle " + std::to_string(a) + " " +
           where(ka, na) + " (sweep " + std::to_string(sweep_) +
           "); a program must call observe the same number of times on every run";
  }

  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  const Program& program_;
  algorithm method_;
  const config& cfg_;
  int pipe_;
  pid_t controller_;  // the process that called run_fork (checked as the parent before this runs)
  std::chrono::steady_clock::time_point start_;
  const char* function_;
  std::size_t L_;
  shared_segment shared_;
  pid_t group_ = 0;
  std::unordered_map<pid_t, process> owner_;
  std::size_t sweep_ = 0, passed_ = 0, known_observes_ = npos;
  double current_log_evidence_ = 0;
  // Particle Gibbs.
  std::vector<std::size_t> free_keepers_ = [this] {
    std::vector<std::size_t> v;
    for (std::size_t k = shared_.keepers(); k-- > 0;) v.push_back(k);
    return v;
  }();
  std::vector<char> keeper_used_ = std::vector<char>(shared_.keepers(), 0);
  std::vector<std::size_t> keeper_observe_ = std::vector<std::size_t>(shared_.keepers(), 0);
  std::vector<std::size_t> retained_keeper_;
  std::vector<double> retained_increment_;
  std::string retained_predictions_;
};

/// The fork engine: see the top of this file.
template <class Program>
result run_fork(const Program& program, algorithm method, const config& cfg,
                const char* function = "tyche::smc::run") {
  const auto start = std::chrono::steady_clock::now();
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string(function) + " (fork engine): pipe failed: " + std::strerror(errno));
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string(function) + " (fork engine): fork failed: " + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    restore_default_signals();
    int code = 1;
    try {
      manager<Program> mgr(program, method, cfg, fds[1], start, function);
      mgr.main();
    } catch (const std::exception& e) {
      try {
        send(fds[1], message_error, std::string(function) + " (fork engine): " + e.what());
      } catch (...) {
      }
    }
    ::_exit(code);
  }
  ::close(fds[1]);

  result r;
  collector out(r, cfg, method);
  particle_set current;
  std::string error;
  bool done = false;
  pid_t group = 0;
  auto stop = [&] {  // the manager first, so that it forks no particle after the killpg
    ::kill(pid, SIGKILL);
    if (group > 0) ::killpg(group, SIGKILL);
  };
  try {
    for (;;) {
      char header[1 + sizeof(std::uint64_t)];
      if (!read_all(fds[0], header, sizeof header)) break;
      const char* p = header;
      const auto type = get<char>(p);
      const auto length = get<std::uint64_t>(p);
      std::string payload(length, '\0');
      if (!read_all(fds[0], payload.data(), length)) break;
      p = payload.data();
      if (type == message_group) {
        group = static_cast<pid_t>(get<std::int64_t>(p));
      } else if (type == message_error) {
        error = payload;
      } else if (type == message_done) {
        done = true;
      } else if (type == message_sweep) {
        sweep_record rec;
        rec.index = get<std::uint64_t>(p);
        rec.log_evidence = get<double>(p);
        rec.accepted = get<std::uint8_t>(p) != 0;
        rec.seconds = get<double>(p);
        const auto n = static_cast<std::size_t>(get<std::uint64_t>(p));
        std::vector<double> w(n);
        std::vector<prediction_list> lists(n);
        for (std::size_t l = 0; l < n; ++l) {
          w[l] = get<double>(p);
          const auto len = get<std::uint64_t>(p);
          if (len > 0) lists[l] = deserialise(std::string_view(p, len));
          p += len;
        }
        particle_set set = out.make_set(rec, std::move(w), n, [&](std::size_t l) -> const auto& { return lists[l]; });
        if (method == algorithm::pimh) {
          if (rec.accepted || rec.index == 0) current = std::move(set);
          current.record = rec;
          out.emit(current, rec.log_evidence);
        } else {
          out.emit(set, rec.log_evidence);
        }
      }
    }
  } catch (...) {
    stop();
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    throw;
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!error.empty()) throw std::runtime_error(error);
  if (!done) {
    if (group > 0) ::killpg(group, SIGKILL);
    throw std::runtime_error(std::string(function) + " (fork engine): the manager process " +
                             describe_status(status));
  }
  out.finish(seconds_since(start));
  return r;
}

}  // namespace detail

/// Weights the current run of the program by exp(log_likelihood): the paper's observe.
/// The particle waits here until every particle has arrived, and may be resampled.
inline void observe(double log_likelihood) {
  detail::arrive(detail::require_particle("tyche::smc::observe"), detail::arrival::observe, log_likelihood);
}

/// Records `value` under `name` for the posterior (once per name per run).
inline void predict(std::string_view name, double value) {
  detail::require_particle("tyche::smc::predict").predicted.emplace_back(std::string(name), value);
}
/// Records `value` under "name[index]".
inline void predict(std::string_view name, std::size_t index, double value) {
  detail::require_particle("tyche::smc::predict")
      .predicted.emplace_back(predictions::indexed_name(name, index), value);
}

/// This particle's random number generator: its own stream, reseeded after every observe.
inline counter_rng& rng() { return detail::require_particle("tyche::smc::rng").rng; }

#else  // no fork engine: a program that calls these still compiles, and says why it cannot run

namespace detail {
[[noreturn]] inline void no_fork_engine(const char* function) {
  throw std::logic_error(std::string(function) +
                         " was called, but this build has no fork engine (it needs Linux: fork, POSIX "
                         "semaphores and shared memory, prctl); write the program as "
                         "tyche::smc::stepwise(...), which runs on the in-process engine");
}
}  // namespace detail

inline void observe(double) { detail::no_fork_engine("tyche::smc::observe"); }
inline void predict(std::string_view, double) { detail::no_fork_engine("tyche::smc::predict"); }
inline void predict(std::string_view, std::size_t, double) { detail::no_fork_engine("tyche::smc::predict"); }
inline counter_rng& rng() { detail::no_fork_engine("tyche::smc::rng"); }

#endif  // TYCHE_SMC_FORK_ENGINE

/// Draws from rng().
inline double sample_normal(double mean, double sd) { return mean + sd * rng().normal(); }
inline double sample_uniform() { return rng().uniform01(); }

}  // namespace tyche::smc
// ----- end tyche/samplers/smc/fork.hpp -----
// ----- begin tyche/samplers/smc/in_process.hpp -----
// tyche/samplers/smc/in_process.hpp — the in-process engine: SMC, PIMH and particle Gibbs
// over a stepwise program (tyche/samplers/smc/program.hpp). Particles are values of the
// program's state; resampling copies them; the step of every particle runs on
// config::threads threads.
//
// One sweep, for observe n = 0 .. N−1:
//   every particle l: log g_l = step(state_l, n, rng(seed, sweep, l, n))   (parallel)
//   log w_l += log g_l;  log Ẑ += log Σ_l w_l − log Σ_l w_l(before)        (serial)
//   if PG or ESS < τ: ancestors a = resample(w), state_i = state_{a_i}, w = 1
// (after the last observe too, as in the paper's Algorithm 1: the fork engine cannot know
// which observe is the last, and both engines follow the same rule)
// then every particle predicts from its final state; the set is weighted by w.
//
//   SMC   sweeps are independent.
//   PIMH  sweep m is a proposal, accepted with probability min(1, Ẑ_m / Ẑ_current)
//         (Andrieu, Doucet & Holenstein 2010, §2.4.1); the output is the current set.
//   PG    sweep 0 is SMC; sweep m > 0 is conditional SMC: slot 0 holds the retained trace
//         (its states and log-likelihoods at every observe), slots 1..L−1 draw L − 1
//         ancestors among all L, independently (multinomial; ibid. §2.4.3). After each sweep a particle b ~ w is drawn
//         and its lineage, traced back through the ancestors, becomes the retained trace.
//
// Random numbers are keyed by (seed, sweep, particle, observe), never by thread, so results
// do not depend on config::threads. An exception thrown by step or predict propagates
// unchanged (the one from the lowest-numbered chunk of particles when several throw).
// ----- begin tyche/samplers/smc/detail/worker_pool.hpp -----
// tyche/samplers/smc/detail/worker_pool.hpp — a fixed set of threads that run a loop body
// over [0, n) in contiguous chunks; the calling thread runs the first chunk. One pool lives
// for a whole run, so a step costs a wake-up, not a thread start.
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tyche::smc::detail {

class worker_pool {
 public:
  explicit worker_pool(std::size_t threads) : size_(threads < 1 ? 1 : threads) {
    for (std::size_t t = 1; t < size_; ++t) workers_.emplace_back([this, t] { work(t); });
  }
  worker_pool(const worker_pool&) = delete;
  worker_pool& operator=(const worker_pool&) = delete;
  ~worker_pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }

  std::size_t size() const { return size_; }

  /// body(begin, end) over chunks of [0, n); rethrows the first chunk's exception.
  void run(std::size_t n, const std::function<void(std::size_t, std::size_t)>& body) {
    if (size_ == 1 || n < 2) {
      body(0, n);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      body_ = &body;
      n_ = n;
      pending_ = size_ - 1;
      errors_.assign(size_, nullptr);
      ++generation_;
    }
    wake_.notify_all();
    chunk(0);
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
    body_ = nullptr;
    for (auto& e : errors_)
      if (e) std::rethrow_exception(e);
  }

 private:
  void chunk(std::size_t t) {
    const std::size_t begin = n_ * t / size_, end = n_ * (t + 1) / size_;
    try {
      (*body_)(begin, end);
    } catch (...) {
      errors_[t] = std::current_exception();
    }
  }
  void work(std::size_t t) {
    std::size_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      chunk(t);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (--pending_ == 0) done_.notify_one();
      }
    }
  }

  std::size_t size_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(std::size_t, std::size_t)>* body_ = nullptr;
  std::size_t n_ = 0, pending_ = 0, generation_ = 0;
  std::vector<std::exception_ptr> errors_;
  bool stop_ = false;
};

}  // namespace tyche::smc::detail
// ----- end tyche/samplers/smc/detail/worker_pool.hpp -----

#include <chrono>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

namespace tyche::smc::detail {

template <class Program>
result run_in_process(const Program& program, algorithm method, const config& cfg) {
  using state = typename Program::state_type;
  const auto start = std::chrono::steady_clock::now();
  const std::size_t L = cfg.particles, N = program.observations;
  const bool pg = method == algorithm::pg;

  result r;
  collector out(r, cfg, method);
  worker_pool pool(cfg.threads);

  std::vector<state> states(L, program.initial), next(L, program.initial);
  std::vector<double> log_w(L), increment(L);
  std::vector<predictions> predicted(L);

  // Particle Gibbs: every observe's states, log-likelihoods and ancestors, and the retained trace.
  std::vector<std::vector<state>> history(pg ? N : 0);
  std::vector<std::vector<double>> history_increment(pg ? N : 0);
  std::vector<std::vector<std::size_t>> history_ancestor(pg ? N : 0);
  std::vector<state> retained;
  std::vector<double> retained_increment;
  state retained_final = program.initial;

  // PIMH: the set the chain holds.
  particle_set current;
  double current_log_evidence = 0;

  for (std::size_t m = 0; m < cfg.sweeps; ++m) {
    if (m > 0 && seconds_since(start) >= cfg.max_seconds) break;
    const bool conditional = pg && m > 0;
    const std::size_t first = conditional ? 1 : 0;
    for (auto& s : states) s = program.initial;
    std::fill(log_w.begin(), log_w.end(), 0.0);
    double log_evidence = 0, log_total = std::log(static_cast<double>(L));  // log Σ w

    for (std::size_t n = 0; n < N; ++n) {
      pool.run(L, [&](std::size_t begin, std::size_t end) {
        for (std::size_t l = std::max(begin, first); l < end; ++l) {
          counter_rng g = particle_rng(cfg.seed, m, l, n);
          increment[l] = program.step(states[l], n, g);
        }
      });
      if (conditional) {
        states[0] = retained[n];
        increment[0] = retained_increment[n];
      }
      for (std::size_t l = 0; l < L; ++l)
        if (std::isnan(increment[l]) || increment[l] == std::numeric_limits<double>::infinity())
          throw bad_weight(increment[l], l, n);
      for (std::size_t l = 0; l < L; ++l) log_w[l] += increment[l];
      const weight_summary after = summarise_weights(log_w);
      if (after.log_sum == -std::numeric_limits<double>::infinity()) throw all_zero(n);
      log_evidence += after.log_sum - log_total;
      log_total = after.log_sum;
      if (pg) {
        history[n] = states;
        history_increment[n] = increment;
      }
      const bool resample_now = pg || after.ess < cfg.ess_threshold * static_cast<double>(L);
      if (resample_now) {
        counter_rng g = engine_rng(cfg.seed, m, n);
        std::vector<std::size_t> ancestor;
        if (conditional) {
          ancestor.push_back(0);
          // The free particles' ancestors are drawn independently (multinomial), whatever
          // config::resampling says: conditional SMC keeps the posterior invariant with
          // multinomial resampling; systematic and residual resampling would need their
          // conditional variants (Chopin & Singh 2015), and plain systematic resampling of the
          // L - 1 free particles biased the CRP posterior (KL stalled at 2e-4).
          const auto rest = resample(log_w, L - 1, resampling_scheme::multinomial, g);
          ancestor.insert(ancestor.end(), rest.begin(), rest.end());
        } else {
          ancestor = resample(log_w, L, cfg.resampling, g);
        }
        for (std::size_t i = 0; i < L; ++i) next[i] = states[ancestor[i]];
        std::swap(states, next);
        std::fill(log_w.begin(), log_w.end(), 0.0);
        log_total = std::log(static_cast<double>(L));
        if (pg) history_ancestor[n] = std::move(ancestor);
      }
    }
    if (conditional) states[0] = retained_final;

    for (std::size_t l = 0; l < L; ++l) {
      predicted[l].clear();
      program.predict(states[l], predicted[l]);
    }
    const sweep_record record{m, log_evidence, true, seconds_since(start)};
    particle_set set = out.make_set(record, normalised_weights(log_w), L,
                                    [&](std::size_t p) -> const auto& { return predicted[p].entries(); });

    if (method == algorithm::pimh) {
      bool accept = m == 0;
      if (!accept) {
        counter_rng g = engine_rng(cfg.seed, m, final_step);
        accept = std::log(g.uniform01()) < log_evidence - current_log_evidence;
      }
      if (accept) {
        current = std::move(set);
        current_log_evidence = log_evidence;
      }
      current.record = record;
      current.record.accepted = accept;
      out.emit(current, log_evidence);
    } else {
      if (pg) {
        counter_rng g = engine_rng(cfg.seed, m, final_step);
        // b indexes the particles after the last resampling; its parent before resampling at
        // observe n is history_ancestor[n][b].
        std::size_t b = sample_discrete(g, set.weights);
        retained.resize(N, program.initial);
        retained_increment.resize(N);
        retained_final = states[b];
        for (std::size_t n = N; n-- > 0;) {
          b = history_ancestor[n][b];
          retained[n] = history[n][b];
          retained_increment[n] = history_increment[n][b];
        }
      }
      out.emit(set, log_evidence);
    }
  }
  out.finish(seconds_since(start));
  return r;
}

}  // namespace tyche::smc::detail
// ----- end tyche/samplers/smc/in_process.hpp -----
// ----- begin tyche/samplers/smc/mem.hpp -----
// tyche/samplers/smc/mem.hpp — stochastic memoisation and the Pólya urn (Chinese restaurant
// process), as in the paper's Figure 3 (after Church's `mem`, Goodman et al. 2008).
//
//   tyche::smc::polya_urn urn(1.0);                          // CRP with concentration α = 1
//   auto class_of = tyche::smc::mem([&](int n) { return urn.draw(tyche::smc::rng()); });
//   class_of(3) == class_of(3)                               // drawn once, then remembered
//
// mem(f) returns a callable that calls f the first time it sees an argument list and returns
// the remembered value afterwards. The table lives in the program's memory, so in the fork
// engine every particle inherits its ancestor's table. In a stepwise program, where the
// state is copied, keep a memo_table in the state instead (a mem whose function captured a
// reference into another particle's state would be wrong after a copy):
//
//   value = state.table(key, [&] { return draw(g); });

#include <cstddef>
#include <map>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace tyche::smc {

/// A memo table: table(key, make) returns the value remembered for key, calling make() once.
template <class Key, class Value>
class memo_table {
 public:
  template <class Make>
  const Value& operator()(const Key& key, Make&& make) {
    auto it = values_.find(key);
    if (it == values_.end()) it = values_.emplace(key, std::forward<Make>(make)()).first;
    return it->second;
  }
  bool contains(const Key& key) const { return values_.count(key) != 0; }
  std::size_t size() const { return values_.size(); }

 private:
  std::map<Key, Value> values_;
};

namespace detail {
template <class M>
struct call_signature;
template <class C, class R, class... A>
struct call_signature<R (C::*)(A...) const> {
  using result = R;
  using key = std::tuple<std::decay_t<A>...>;
};
template <class C, class R, class... A>
struct call_signature<R (C::*)(A...)> : call_signature<R (C::*)(A...) const> {};
}  // namespace detail

/// Stochastic memoisation of f: the returned callable remembers f's value per argument list.
template <class F>
class memoised {
  using signature = detail::call_signature<decltype(&F::operator())>;
  using key = typename signature::key;
  using value = std::decay_t<typename signature::result>;

 public:
  explicit memoised(F f) : f_(std::move(f)) {}
  template <class... Args>
  const value& operator()(const Args&... args) {
    return table_(key(args...), [&] { return f_(args...); });
  }
  std::size_t size() const { return table_.size(); }

 private:
  F f_;
  memo_table<key, value> table_;
};

/// mem(f): f (a callable with one non-template call operator) memoised on its arguments
/// (Goodman et al. 2008).
template <class F>
memoised<F> mem(F f) {
  static_assert(requires { &F::operator(); },
                "tyche::smc::mem(f) requires a callable with exactly one, non-template call "
                "operator (a lambda with typed parameters)");
  return memoised<F>(std::move(f));
}

/// A Pólya urn: draw() returns an existing class k with probability n_k / (n + α) and a new
/// class (numbered from 0 in order of creation) with probability α / (n + α): the Chinese
/// restaurant process (Blackwell & MacQueen 1973). Copyable, so it can live in a state.
class polya_urn {
 public:
  explicit polya_urn(double alpha) : alpha_(alpha) {}
  /// Draws the class of the next customer and seats it.
  int draw(counter_rng& g) {
    const double total = static_cast<double>(customers_) + alpha_;
    double u = g.uniform01() * total;
    for (std::size_t k = 0; k < counts_.size(); ++k) {
      if (u < static_cast<double>(counts_[k])) return seat(static_cast<int>(k));
      u -= static_cast<double>(counts_[k]);
    }
    return seat(static_cast<int>(counts_.size()));
  }
  /// Seats a customer at class k (k == classes() opens a new class).
  int seat(int k) {
    if (static_cast<std::size_t>(k) == counts_.size()) counts_.push_back(0);
    ++counts_[static_cast<std::size_t>(k)];
    ++customers_;
    return k;
  }
  /// The number of occupied classes (the paper's urn.len_buckets).
  std::size_t classes() const { return counts_.size(); }
  std::size_t customers() const { return customers_; }
  const std::vector<std::size_t>& counts() const { return counts_; }
  double alpha() const { return alpha_; }

 private:
  double alpha_;
  std::size_t customers_ = 0;
  std::vector<std::size_t> counts_;
};

}  // namespace tyche::smc
// ----- end tyche/samplers/smc/mem.hpp -----
// ----- begin tyche/samplers/smc/run.hpp -----
// tyche/samplers/smc/run.hpp — run_smc, run_pimh, run_pg: forward inference over a program.
//
//   auto r = tyche::smc::run_smc(program, {.particles = 1000, .seed = 1});
//   r.log_evidence; r.mean("mu"); std::cout << summary(r);
//
// The engine follows from the program unless config::engine names one:
//   a stepwise program (tyche::smc::stepwise)  →  in-process engine (or fork, if asked);
//   a plain callable `void()` that calls observe/predict  →  fork engine.

#include <stdexcept>
#include <string>
#include <type_traits>

namespace tyche::smc {

namespace detail {

template <class Program>
result run_program(const Program& program, algorithm method, const config& cfg, const char* function) {
  check_config(cfg, function);
  if constexpr (is_stepwise_program<Program>::value) {
    if (cfg.engine == engine_kind::fork) {
#if TYCHE_SMC_FORK_ENGINE
      const auto as_callable = [&program] {
        typename Program::state_type s = program.initial;
        for (std::size_t n = 0; n < program.observations; ++n) observe(program.step(s, n, rng()));
        predictions p;
        program.predict(s, p);
        for (const auto& [name, value] : p.entries()) predict(name, value);
      };
      return run_fork(as_callable, method, cfg, function);
#else
      throw std::invalid_argument(std::string(function) +
                                  ": engine_kind::fork, but this build has no fork engine (it needs Linux); "
                                  "engine_kind::in_process or automatic runs stepwise programs");
#endif
    }
    return run_in_process(program, method, cfg);
  } else {
#if TYCHE_SMC_FORK_ENGINE
    if (cfg.engine == engine_kind::in_process)
      throw std::invalid_argument(std::string(function) +
                                  ": the in-process engine runs stepwise programs (tyche::smc::stepwise); "
                                  "a plain callable runs on the fork engine (engine_kind::fork or automatic)");
    return run_fork(program, method, cfg, function);
#else
    static_assert(sizeof(Program) == 0,
                  "tyche::smc::run_smc/run_pimh/run_pg(program, config): a plain callable program runs on "
                  "the fork engine, which this build does not have (it needs Linux: fork, POSIX semaphores "
                  "and shared memory, prctl); write the program as tyche::smc::stepwise(...), which runs "
                  "on the in-process engine");
#endif
  }
}

template <class Program>
result run(const Program& program, algorithm method, const config& cfg, const char* function) {
  if constexpr (!smc_program<Program>) {
    static_assert(smc_program<Program>,
                  "tyche::smc::run_smc/run_pimh/run_pg(program, config) requires 'program' to be a "
                  "tyche::smc::stepwise(...) program or a callable taking no arguments that calls "
                  "tyche::smc::observe and tyche::smc::predict");
    return {};
  } else {
    return run_program(program, method, cfg, function);
  }
}

}  // namespace detail

/// Sequential Monte Carlo: config::sweeps independent particle filters.
template <class Program>
result run_smc(const Program& program, const config& cfg = {}) {
  return detail::run(program, algorithm::smc, cfg, "tyche::smc::run_smc");
}

/// Particle independent Metropolis–Hastings: config::sweeps iterations.
template <class Program>
result run_pimh(const Program& program, const config& cfg = {}) {
  return detail::run(program, algorithm::pimh, cfg, "tyche::smc::run_pimh");
}

/// Particle Gibbs (conditional SMC with a retained trace): config::sweeps iterations.
template <class Program>
result run_pg(const Program& program, const config& cfg = {}) {
  return detail::run(program, algorithm::pg, cfg, "tyche::smc::run_pg");
}

}  // namespace tyche::smc
// ----- end tyche/samplers/smc/run.hpp -----
// ----- end tyche/samplers/smc.hpp -----
// ----- end tyche/tyche.hpp -----
