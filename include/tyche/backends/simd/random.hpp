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
#pragma once
#include <tyche/backends/simd/batch.hpp>
#include <tyche/config.hpp>
#include <tyche/random/philox.hpp>
#include <tyche/random/variates.hpp>

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
