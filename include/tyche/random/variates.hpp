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
// scalar stream of its chain).
#pragma once
#include <tyche/config.hpp>
#include <tyche/backends/simd/batch.hpp>

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

#if TYCHE_HAS_XSIMD
template <class A>
struct variate_as<xsimd::batch<double, A>> {
  using batch = xsimd::batch<double, A>;
  template <std::size_t L>
  static batch from(const std::array<double, L>& x) {
    static_assert(L == batch::size,
                  "tyche: a counter_rng_lanes<L> draws batches of exactly L lanes");
    return batch::load_unaligned(x.data());
  }
};
#endif

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
