// tyche/autodiff/special.hpp — value and derivative rules for special functions: lgamma,
// digamma, erf and Phi (the standard normal CDF).
#pragma once
#include <tyche/config.hpp>
#include <tyche/backends/simd/batch.hpp>
#include <tyche/scalar/math.hpp>
#include <tyche/scalar/traits.hpp>

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

}  // namespace tyche::rules
