// tyche/autodiff/special.hpp — value and derivative rules for special functions: lgamma,
// digamma, erf, Phi (the standard normal CDF), log_Phi (its logarithm, without underflow),
// log_bessel_i0 (log of the modified Bessel function I₀), and cos.
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
