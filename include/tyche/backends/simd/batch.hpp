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
// GCC 12's AVX-512 intrinsics pass `_mm512_undefined_pd()` (a self-initialised `__Y = __Y`)
// through as the unused source of their masked builtins; once xsimd's AVX-512 kernels (exp,
// log1p, hadd, shifts) are inlined into a program built with -march=native -O1 or more and
// -Wall, GCC reports dozens of "'__Y' may be used uninitialized" warnings inside
// <avx512fintrin.h>, errors under -Werror (quickstart: 40 of them). The intrinsic headers are
// first read here, inside this push, so the two warnings are off for their lines only; a program
// that includes <immintrin.h> or xsimd before tyche keeps GCC's behaviour.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
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
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include <array>
#include <cstddef>
#include <limits>
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

// The column pairs below need AVX-512F and DQ (vbroadcastf64x2), FMA (so that the 4-lane code
// they stand for fuses its products as they do), and __builtin_shufflevector (GCC 12, clang).
#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__FMA__) && defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define TYCHE_COLUMN_PAIR_TILES 1
#endif
#endif
#if defined(TYCHE_COLUMN_PAIR_TILES)
/// Chains in a batch of 4 doubles (the half-width lanes of an AVX-512 build: 4 chains on a
/// thread) sharing a tile of a streamed matvec's rows. A 256-bit operation does half the work of
/// a 512-bit one at the same instruction rate (measured on the AMD EPYC of docs/benchmarks.md: two
/// 512-bit FMAs per cycle), so each 512-bit operation here takes two columns: lanes 2j and 2j + 1
/// hold chain j's terms of columns c and c + 1 ([x_c, x_c+1] broadcast to every pair of lanes,
/// the chains' coefficients interleaved to match). Every lane computes the sums of the 4-lane
/// tile (compile/evaluate.hpp, tile_row_dots and tile_add_rows) from the same terms in the same
/// order, each product and its sum written as separate statements as there. Whether a product is
/// fused into its sum is the compiler's choice for each width, and GCC 12 chooses differently for
/// 256- and 512-bit accumulations in some loops (it avoids chains of 256-bit FMAs under generic
/// tuning), so the last bits can differ from the 4-lane code's; under the README's build on the
/// machine of docs/benchmarks.md they did not (tests/headers/avx512_tiles_test.cpp checks the sums
/// to rounding).
template <class A>
  requires(xsimd::batch<double, A>::size == 4)
struct column_pair_tiles<xsimd::batch<double, A>> {
  using U = xsimd::batch<double, A>;
  static constexpr bool available = true;
  // The lane moves, written with __builtin_shufflevector or zero-masked intrinsics: GCC 12's
  // _mm512_insertf64x4, _mm512_castpd512_pd256 and _mm512_broadcast_f64x2 pass an
  // _mm512_undefined_pd() through, which -Wmaybe-uninitialized flags at -O1.
  using wide = __m512d;
  // lo and hi (chains 0-3 of two columns) interleaved: [lo0 hi0 lo1 hi1 lo2 hi2 lo3 hi3].
  TYCHE_INLINE static wide interleave(const U& lo, const U& hi) {
    const __m256d l = lo, h = hi;
    return __builtin_shufflevector(l, h, 0, 4, 1, 5, 2, 6, 3, 7);
  }
  // The even and the odd lanes of an interleaved vector.
  TYCHE_INLINE static U even(const wide& v) { return U(__m256d(__builtin_shufflevector(v, v, 0, 2, 4, 6))); }
  TYCHE_INLINE static U odd(const wide& v) { return U(__m256d(__builtin_shufflevector(v, v, 1, 3, 5, 7))); }
  // Each lane of a twice: [a0 a0 a1 a1 a2 a2 a3 a3].
  TYCHE_INLINE static wide twice(const U& a) {
    const __m256d v = a;
    return __builtin_shufflevector(v, v, 0, 0, 1, 1, 2, 2, 3, 3);
  }
  // [x[0], x[1]] in every pair of lanes: one vbroadcastf64x2 (the zero-masked form with every
  // lane kept; a shufflevector from 2 to 8 lanes went through the stack).
  TYCHE_INLINE static wide pair(const double* x) { return _mm512_maskz_broadcast_f64x2(0xff, _mm_loadu_pd(x)); }

  /// Two rows of a tile at once for the loop body (the likelihood term and its adjoint): lanes
  /// 0-3 hold the 4 chains at row i, lanes 4-7 at row i + 1, in the build's 8-lane batch.
  using rows2 = xsimd::batch<double>;
  static_assert(rows2::size == 8, "tyche: an AVX-512 build's widest batch holds 8 doubles");
  // [t | t]: a value of the 4 chains, the same at both rows.
  TYCHE_INLINE static rows2 both(const U& t) {
    const __m256d v = t;
    return rows2(__m512d(__builtin_shufflevector(v, v, 0, 1, 2, 3, 0, 1, 2, 3)));
  }
  // [a | b]: the 4 chains' values at row i and at row i + 1.
  TYCHE_INLINE static rows2 rows(const U& a, const U& b) {
    const __m256d x = a, y = b;
    return rows2(__m512d(__builtin_shufflevector(x, y, 0, 1, 2, 3, 4, 5, 6, 7)));
  }
  TYCHE_INLINE static U first(const rows2& p) {
    const __m512d v = p;
    return U(__m256d(__builtin_shufflevector(v, v, 0, 1, 2, 3)));
  }
  TYCHE_INLINE static U second(const rows2& p) {
    const __m512d v = p;
    return U(__m256d(__builtin_shufflevector(v, v, 4, 5, 6, 7)));
  }

  /// out[r] = row r of x (Rows rows of `cols` values) times v: four partial sums per row over
  /// the columns c mod 4, the columns after the last group of four added to the first, then
  /// (s0 + s1) + (s2 + s3), as tile_row_dots sums them.
  template <std::size_t Rows>
  TYCHE_INLINE static void row_dots(const double* x, const U* v, std::size_t cols, U* out) {
    wide s01[Rows], s23[Rows];
    for (std::size_t r = 0; r < Rows; ++r) s01[r] = s23[r] = wide{};
    std::size_t c = 0;
    for (; c + 4 <= cols; c += 4) {
      const wide v01 = interleave(v[c], v[c + 1]), v23 = interleave(v[c + 2], v[c + 3]);
      for (std::size_t r = 0; r < Rows; ++r) {
        const double* row = x + r * cols + c;
        const wide p01 = pair(row) * v01;
        const wide p23 = pair(row + 2) * v23;
        s01[r] = s01[r] + p01;
        s23[r] = s23[r] + p23;
      }
    }
    for (std::size_t r = 0; r < Rows; ++r) {
      U a0 = even(s01[r]);
      const U a1 = odd(s01[r]), a2 = even(s23[r]), a3 = odd(s23[r]);
      for (std::size_t k = c; k < cols; ++k) a0 += U(x[r * cols + k]) * v[k];
      out[r] = (a0 + a1) + (a2 + a3);
    }
  }

  /// g[c] += x[r][c]·a[r] for r = 0, …, Rows − 1 in order, as tile_add_rows adds them.
  template <std::size_t Rows>
  TYCHE_INLINE static void add_rows(U* g, const double* x, std::size_t cols, const U* a) {
    wide a2[Rows];  // a[r]'s chains, each in two neighbouring lanes
    for (std::size_t r = 0; r < Rows; ++r) a2[r] = twice(a[r]);
    std::size_t c = 0;
    for (; c + 4 <= cols; c += 4) {
      wide g01 = interleave(g[c], g[c + 1]), g23 = interleave(g[c + 2], g[c + 3]);
      for (std::size_t r = 0; r < Rows; ++r) {
        const double* row = x + r * cols + c;
        const wide p01 = pair(row) * a2[r];
        const wide p23 = pair(row + 2) * a2[r];
        g01 = g01 + p01;
        g23 = g23 + p23;
      }
      g[c] = even(g01);
      g[c + 1] = odd(g01);
      g[c + 2] = even(g23);
      g[c + 3] = odd(g23);
    }
    for (; c < cols; ++c) {
      U gc = g[c];
      for (std::size_t r = 0; r < Rows; ++r) gc += U(x[r * cols + c]) * a[r];
      g[c] = gc;
    }
  }
};
#endif

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
/// log(1 + e) for e ∈ [0, 1] (or NaN) with u = 1 + e and r = 1/u given (scalar/math.hpp): the
/// argument reduction and polynomial of fdlibm's log1p (Sun Microsystems, 1993; the method and
/// coefficients xsimd's log1p uses too), with its correction term for the rounding of u,
/// (e − (u − 1)) / u, taken as a product with r. u ∈ [1, 2] needs no exponent extraction: u
/// itself, or u / 2 (k = 1) from the threshold fdlibm uses (the high word of √2), is the reduced
/// argument 1 + f with f ∈ [√2/2 − 1, √2 − 1). Over 2·10⁶ arguments spread from 10⁻¹⁸ to 40
/// log1p_exp's values were those of xsimd::log1p to the bit, one division fewer per element.
template <class A>
TYCHE_INLINE xsimd::batch<double, A> log1p_unit(const xsimd::batch<double, A>& e, const xsimd::batch<double, A>& u,
                                                const xsimd::batch<double, A>& r) {
  using B = xsimd::batch<double, A>;
  constexpr double ln2_hi = 6.93147180369123816490e-01;  // fdlibm's ln2_hi, ln2_lo
  constexpr double ln2_lo = 1.90821492927058770002e-10;
  constexpr double reduce_at = 0x1.6a09ep+0;  // √2 with the low word of its double cleared
  const auto high = u >= B(reduce_at);
  const B dk = xsimd::select(high, B(1.0), B(0.0));
  const B f = xsimd::select(high, u * B(0.5), u) - B(1.0);
  const B c = (e - (u - B(1.0))) * r;
  const B hfsq = B(0.5) * f * f;
  const B s = f / (B(2.0) + f);
  const B z = s * s;
  const B w = z * z;
  // fdlibm's Lg2, Lg4, Lg6 (even) and Lg1, Lg3, Lg5, Lg7 (odd), by Horner's rule with FMAs.
  const B even = w * xsimd::fma(w, xsimd::fma(w, B(1.531383769920937332e-01), B(2.222219843214978396e-01)),
                                B(3.999999999940941908e-01));
  const B odd = z * xsimd::fma(w, xsimd::fma(w, xsimd::fma(w, B(1.479819860511658591e-01), B(1.818357216161805012e-01)),
                                             B(2.857142874366239149e-01)),
                               B(6.666666666666735130e-01));
  const B R = odd + even;
  return xsimd::fma(dk, B(ln2_hi), xsimd::fma(s, hfsq + R, dk * B(ln2_lo) + c) - hfsq + f);
}
template <class A>
TYCHE_INLINE xsimd::batch<float, A> log1p_unit(const xsimd::batch<float, A>& e, const xsimd::batch<float, A>&,
                                               const xsimd::batch<float, A>&) {
  return xsimd::log1p(e);
}
template <class E, class A>
xsimd::batch<E, A> sqrt(const xsimd::batch<E, A>& x) { return xsimd::sqrt(x); }
template <class E, class A>
xsimd::batch<E, A> tanh(const xsimd::batch<E, A>& x) { return xsimd::tanh(x); }
template <class E, class A>
xsimd::batch<E, A> cos(const xsimd::batch<E, A>& x) { return xsimd::cos(x); }
template <class E, class A>
xsimd::batch<E, A> sin(const xsimd::batch<E, A>& x) { return xsimd::sin(x); }
template <class E, class A>
xsimd::batch<E, A> atan(const xsimd::batch<E, A>& x) { return xsimd::atan(x); }
template <class E, class A>
xsimd::batch<E, A> tan(const xsimd::batch<E, A>& x) { return xsimd::tan(x); }
template <class E, class A>
xsimd::batch<E, A> asin(const xsimd::batch<E, A>& x) { return xsimd::asin(x); }
template <class E, class A>
xsimd::batch<E, A> acos(const xsimd::batch<E, A>& x) { return xsimd::acos(x); }
template <class E, class A>
xsimd::batch<E, A> sinh(const xsimd::batch<E, A>& x) { return xsimd::sinh(x); }
template <class E, class A>
xsimd::batch<E, A> cosh(const xsimd::batch<E, A>& x) { return xsimd::cosh(x); }
template <class E, class A>
xsimd::batch<E, A> asinh(const xsimd::batch<E, A>& x) { return xsimd::asinh(x); }
template <class E, class A>
xsimd::batch<E, A> acosh(const xsimd::batch<E, A>& x) { return xsimd::acosh(x); }
template <class E, class A>
xsimd::batch<E, A> atanh(const xsimd::batch<E, A>& x) { return xsimd::atanh(x); }
template <class E, class A>
xsimd::batch<E, A> cbrt(const xsimd::batch<E, A>& x) { return xsimd::cbrt(x); }
template <class E, class A>
xsimd::batch<E, A> atan2(const xsimd::batch<E, A>& y, const xsimd::batch<E, A>& x) { return xsimd::atan2(y, x); }
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
xsimd::batch<E, A> min(const xsimd::batch<E, A>& x, const xsimd::batch<E, A>& y) {
  return xsimd::min(x, y);
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
/// The largest lane of x, NaN lanes ignored (−∞ when every lane is NaN).
template <class E, class A>
E lane_max(const xsimd::batch<E, A>& x) {
  alignas(A::alignment()) E lanes[xsimd::batch<E, A>::size];
  x.store_aligned(lanes);
  E m = -std::numeric_limits<E>::infinity();
  for (E v : lanes)
    if (v > m) m = v;
  return m;
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

/// Φ⁻¹ (scalar/math.hpp's Newton iteration) lane by lane.
template <class E, class A>
xsimd::batch<E, A> inv_Phi(const xsimd::batch<E, A>& x) {
  return per_lane([](E v) { return inv_Phi(v); }, x);
}

/// Digamma, trigamma and tetragamma (scalar/math.hpp) lane by lane: xsimd has none of them.
template <class E, class A>
xsimd::batch<E, A> digamma(const xsimd::batch<E, A>& x) {
  return per_lane([](E v) { return digamma(v); }, x);
}
template <class E, class A>
xsimd::batch<E, A> trigamma(const xsimd::batch<E, A>& x) {
  return per_lane([](E v) { return trigamma(v); }, x);
}
template <class E, class A>
xsimd::batch<E, A> tetragamma(const xsimd::batch<E, A>& x) {
  return per_lane([](E v) { return tetragamma(v); }, x);
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
