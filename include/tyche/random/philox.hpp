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
#pragma once
#include <tyche/config.hpp>
#include <tyche/random/variates.hpp>

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

  /// Uniform on [lo, hi) from next_u64(), as libstdc++'s std::uniform_real_distribution<double>
  /// draws it from this generator (generate_canonical<double, 53> with one 64-bit draw: x / 2⁶⁴,
  /// below 1; then u · (hi − lo) + lo), so that a chain's random initial point is the same in
  /// device code (model::initial_point, device_chain_initialise), tested against <random>.
  TYCHE_HD double uniform(double lo, double hi) { return uniform_from_bits(next_u64(), lo, hi); }
  /// uniform()'s value for the 64 bits x.
  TYCHE_HD static double uniform_from_bits(std::uint64_t x, double lo, double hi) {
    double u = static_cast<double>(x) * 0x1p-64;
    if (u >= 1.0) u = 0x1.fffffffffffffp-1;  // x ≥ 2⁶⁴ − 2¹⁰ rounds to 2⁶⁴: the largest double below 1
    return u * (hi - lo) + lo;
  }

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
