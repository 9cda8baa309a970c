// tyche/backends/simd/batch.hpp — the only header that includes xsimd. It teaches tyche's
// scalar vocabulary (scalar/traits.hpp, scalar/math.hpp) about xsimd::batch, so that a model
// evaluates one chain per SIMD lane. Compiled only when TYCHE_USE_XSIMD is set (the
// tyche::simd CMake target sets it); otherwise it defines TYCHE_HAS_XSIMD 0 and nothing else.
//
// Layers above the scalar one (the expression core, autodiff rules, compile) include this
// header wherever their templates call tyche::math on a generic scalar or use the traits:
// math::exp(x) is a qualified name, looked up where the template is defined, so the batch
// overloads must be declared before it (see docs/design/expression-core.md, "Layers").
#pragma once
#include <tyche/config.hpp>
#include <tyche/scalar/math.hpp>
#include <tyche/scalar/traits.hpp>

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
#include <type_traits>
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
  /// Loads from values of another type (a float data matrix into a batch of doubles), converted.
  template <class F>
    requires(!std::is_same_v<F, E>)
  TYCHE_INLINE static U load(const F* p) {
    return U::load_unaligned(p);
  }
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
xsimd::batch<E, A> log_step(const xsimd::batch<E, A>& x) {
  using B = xsimd::batch<E, A>;
  return xsimd::select(x >= B(E(0)), B(E(0)), B(E(-HUGE_VAL)));
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
