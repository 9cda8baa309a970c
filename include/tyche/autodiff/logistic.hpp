// tyche/autodiff/logistic.hpp — value and derivative rules for the sigmoid family: logistic
// (inverse logit), log_logistic (log inv-logit), log1m_logistic (log(1 − inv-logit)), tanh.
// All are computed from e^−|x| so that no intermediate overflows.
#pragma once
#include <tyche/config.hpp>
#include <tyche/backends/simd/batch.hpp>
#include <tyche/scalar/math.hpp>
#include <tyche/scalar/traits.hpp>

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
