// tyche/autodiff/arithmetic.hpp — value and derivative rules for arithmetic: negation, the
// four operations, square, inverse, sqrt, abs, powers, fmin and fmax.
//
// A unary rule R has `R::value(x)` and `R::value(x, dx)`, the second also setting dy/dx; a
// binary rule has `value(a, b)` and `value(a, b, da, db)`. The evaluator stores the partial
// derivatives in the forward pass and multiplies them by the adjoint in the reverse pass, so
// every rule computes its derivative from quantities it already has (often y itself).
#pragma once
#include <tyche/config.hpp>
#include <tyche/backends/simd/batch.hpp>
#include <tyche/scalar/math.hpp>
#include <tyche/scalar/traits.hpp>

namespace tyche::rules {

struct negate {
  static constexpr const char* name = "negate";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return -x; }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = lift<T>(-1.0);
    return -x;
  }
};

struct square {
  static constexpr const char* name = "square";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return x * x; }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = x + x;
    return x * x;
  }
};

struct inverse {
  static constexpr const char* name = "inv";  // 1/x (explain prints Stan's elementwise name: inverse(A) is the matrix inverse)
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return lift<T>(1.0) / x; }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    const T y = lift<T>(1.0) / x;
    dx = -(y * y);
    return y;
  }
};

struct sqrt {
  static constexpr const char* name = "sqrt";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::sqrt(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    const T y = math::sqrt(x);
    dx = lift<T>(0.5) / y;
    return y;
  }
};

struct abs {
  static constexpr const char* name = "abs";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::abs(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = math::sign_of(x);  // 0 at 0: the subgradient Stan uses
    return math::abs(x);
  }
};

/// Stan's step(x): 0 for x < 0, else 1; its derivative is 0 (everywhere but at 0, where it is
/// taken as 0 too).
struct step {
  static constexpr const char* name = "step";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::step(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = lift<T>(0.0);
    return math::step(x);
  }
};

/// log step(x): 0 for x ≥ 0, −∞ for x < 0 (and NaN); its derivative is 0. The guard of a density
/// whose support depends on its arguments (uniform(a, b).observe(y): −∞ outside [a, b]).
struct log_step {
  static constexpr const char* name = "log_step";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::log_step(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = lift<T>(0.0);
    return math::log_step(x);
  }
};

/// x^c for a constant exponent c known when the model is built.
struct pow_constant {
  static constexpr const char* name = "pow";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;  // compile/relocate.hpp
  double exponent = 1.0;
  TYCHE_HD constexpr bool operator==(const pow_constant& other) const {
    return exponent == other.exponent;
  }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const {
    return math::pow(x, lift<T>(exponent));
  }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    const T c = lift<T>(exponent);
    // x⁰ = 1 has derivative 0 everywhere, also at x = 0 where 0 · 0⁻¹ would give NaN.
    dx = exponent == 0.0 ? lift<T>(0.0) : c * math::pow(x, c - lift<T>(1.0));
    return math::pow(x, c);
  }
};

struct add {
  static constexpr const char* name = "add";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b) const { return a + b; }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b, T& da, T& db) const {
    da = lift<T>(1.0);
    db = lift<T>(1.0);
    return a + b;
  }
};

struct subtract {
  static constexpr const char* name = "subtract";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b) const { return a - b; }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b, T& da, T& db) const {
    da = lift<T>(1.0);
    db = lift<T>(-1.0);
    return a - b;
  }
};

struct multiply {
  static constexpr const char* name = "multiply";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b) const { return a * b; }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b, T& da, T& db) const {
    da = b;
    db = a;
    return a * b;
  }
};

struct divide {
  static constexpr const char* name = "divide";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b) const { return a / b; }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b, T& da, T& db) const {
    const T inv = lift<T>(1.0) / b;
    const T y = a * inv;
    da = inv;
    db = -(y * inv);
    return y;
  }
};

/// a^b with both operands variable: d/da = b a^(b-1), d/db = a^b log a.
struct pow {
  static constexpr const char* name = "pow";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b) const {
    return math::pow(a, b);
  }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b, T& da, T& db) const {
    const T y = math::pow(a, b);
    da = b * math::pow(a, b - lift<T>(1.0));
    db = y * math::log(a);
    return y;
  }
};

/// fmin(a, b), the smaller of the two (Stan's fmin); the derivative goes to the operand chosen,
/// a where they are equal.
struct fmin {
  static constexpr const char* name = "fmin";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b) const { return math::min(a, b); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b, T& da, T& db) const {
    const auto first = a <= b;
    da = math::select(first, lift<T>(1.0), lift<T>(0.0));
    db = lift<T>(1.0) - da;
    return math::select(first, a, b);
  }
};

/// fmax(a, b), the larger of the two (Stan's fmax); the derivative as fmin's.
struct fmax {
  static constexpr const char* name = "fmax";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b) const { return math::max(a, b); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b, T& da, T& db) const {
    const auto first = a >= b;
    da = math::select(first, lift<T>(1.0), lift<T>(0.0));
    db = lift<T>(1.0) - da;
    return math::select(first, a, b);
  }
};

}  // namespace tyche::rules
