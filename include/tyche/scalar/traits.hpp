// tyche/scalar/traits.hpp — what the expression core needs to know about a scalar type T:
// its element type (double for a SIMD batch of doubles), its lane count, and how data (always
// stored as double) becomes a T. The SIMD backend (backends/simd/batch.hpp) specialises these
// traits for its batches; this header knows nothing of it.
#pragma once
#include <tyche/config.hpp>

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
  template <class F>
    requires(!std::is_same_v<F, element_type_t<U>>)
  TYCHE_HD TYCHE_INLINE static U load(const F* p) {
    return static_cast<U>(*p);
  }
  TYCHE_HD TYCHE_INLINE static void store(element_type_t<U>* p, const U& v) { *p = v; }
  TYCHE_HD TYCHE_INLINE static element_type_t<U> sum(const U& v) { return v; }
};

/// A tile of a streamed matvec's rows for chains in the lanes of U, when U is narrower than the
/// machine's widest vector (compile/evaluate.hpp, "rows in tiles"): none by default, so the tile
/// uses U's own operations. backends/simd/batch.hpp specialises it for a batch of 4 doubles under
/// AVX-512 (two columns per 512-bit operation, the same sums in the same order).
template <class U>
struct column_pair_tiles {
  static constexpr bool available = false;
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
