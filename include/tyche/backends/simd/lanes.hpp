// tyche/backends/simd/lanes.hpp — the lane vocabulary of code that runs several chains as the
// lanes of one value: lane_traits<T> for T = float or double (one chain: width 1, the mask is a
// bool; host and CUDA device code) and, with the SIMD backend, for an xsimd batch (one chain per
// lane, the mask a batch_bool). The NUTS kernel (samplers/nuts/kernel.hpp) is written once over
// this vocabulary. Also the batch widths the CPU executor chooses from (lane_batch, the build's
// widest batch of doubles, and half_lane_batch).
#pragma once
#include <tyche/backends/simd/batch.hpp>
#include <tyche/config.hpp>

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
/// A batch of half that width where the build has one of 4 lanes (AVX2 with FMA under AVX-512),
/// void where it has none: fewer chains than the wide batch's lanes (4 chains on one thread of an
/// AVX-512 build) run at the half width rather than with half of a wide batch empty. An AVX or
/// AVX2 build has no half batch: SSE2's 2 lanes were no faster than one chain at a time on any
/// model measured (bench/run.sh lanes), so lanes = 0 never chose them, and compiling every model
/// and the NUTS driver for them cost each file that calls nuts() about 3 s of g++ -O2
/// (examples/quickstart.cpp, -march=x86-64-v3: 18.8 -> 15.5 s, 2026-12-04).
#if XSIMD_WITH_AVX512F && XSIMD_WITH_FMA3_AVX2
using half_lane_batch = xsimd::batch<double, xsimd::fma3<xsimd::avx2>>;
#elif XSIMD_WITH_AVX512F && XSIMD_WITH_AVX2
using half_lane_batch = xsimd::batch<double, xsimd::avx2>;
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
