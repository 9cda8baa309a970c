// tyche/autodiff/exp_log.hpp — value and derivative rules for the exponential family of
// functions: exp, log, log1p, expm1, log1p_exp (softplus), log_add_exp.
#pragma once
#include <tyche/config.hpp>
#include <tyche/backends/simd/batch.hpp>
#include <tyche/scalar/math.hpp>
#include <tyche/scalar/traits.hpp>

namespace tyche::rules {

struct exp {
  static constexpr const char* name = "exp";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::exp(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    const T y = math::exp(x);
    dx = y;
    return y;
  }
};

struct log {
  static constexpr const char* name = "log";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::log(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = lift<T>(1.0) / x;
    return math::log(x);
  }
};

struct log1p {
  static constexpr const char* name = "log1p";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::log1p(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = lift<T>(1.0) / (lift<T>(1.0) + x);
    return math::log1p(x);
  }
};

struct expm1 {
  static constexpr const char* name = "expm1";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::expm1(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    const T y = math::expm1(x);
    dx = y + lift<T>(1.0);
    return y;
  }
};

/// log(1 + eˣ) computed as max(x, 0) + log1p(e^−|x|), which neither overflows nor loses
/// precision; its derivative is the logistic function, from the same e^−|x|.
struct log1p_exp {
  static constexpr const char* name = "log1p_exp";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const {
    const T zero = lift<T>(0.0);
    return math::max(x, zero) + math::log1p(math::exp(-math::abs(x)));
  }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    const T zero = lift<T>(0.0);
    const T one = lift<T>(1.0);
    const T e = math::exp(-math::abs(x));
    const T u = one + e;
    const T r = one / u;
    dx = math::select(x >= zero, r, e * r);
    return math::max(x, zero) + math::log1p_unit(e, u, r);  // log1p(e), sharing 1 / (1 + e)
  }
};

/// log(1 − exp(−eʷ)): the log CDF 1 − e^{−t} of a Weibull, or the survival function of a Gumbel
/// or Fréchet, at t = eʷ, one node so that neither tail loses it: log(−expm1(−t)) where t is
/// moderate, w − t/2 where t < 2·10⁻⁹ (and eʷ underflows below w = −745, where the value is w),
/// 0 where t overflows. d/dw = t / (eᵗ − 1), e^{w − t} for t > 30.
struct log1m_exp_neg_exp {
  static constexpr const char* name = "log1m_exp_neg_exp";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& w) const {
    const T t = math::exp(w);
    return math::select(w < lift<T>(-20.0), w - lift<T>(0.5) * t, math::log(-math::expm1(-t)));
  }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& w, T& dw) const {
    const T t = math::exp(w);
    dw = math::select(w < lift<T>(-20.0), lift<T>(1.0) - lift<T>(0.5) * t,
                      math::select(t > lift<T>(30.0), math::exp(w - t), t / math::expm1(t)));
    return math::select(w < lift<T>(-20.0), w - lift<T>(0.5) * t, math::log(-math::expm1(-t)));
  }
};

/// log(eᵃ + eᵇ) = max(a, b) + log1p(e^−|a − b|): one exp and one log1p, never overflowing; one
/// operand −∞ gives the other exactly. ∂/∂a = σ(a − b), ∂/∂b = 1 − σ(a − b).
struct log_add_exp {
  static constexpr const char* name = "log_add_exp";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b) const {
    return math::max(a, b) + math::log1p(math::exp(-math::abs(a - b)));
  }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b, T& da, T& db) const {
    const T one = lift<T>(1.0);
    const T d = a - b;
    const T e = math::exp(-math::abs(d));
    const T u = one + e;
    const T r = one / u;
    da = math::select(d >= lift<T>(0.0), r, e * r);
    db = one - da;
    return math::max(a, b) + math::log1p_unit(e, u, r);
  }
};

/// y·a − eᵃ, the part of the Poisson log density with log rate a that depends on a (poisson_log):
/// one node, so that a vector a (a linear predictor) is computed once per element. ∂/∂y = a,
/// ∂/∂a = y − eᵃ.
struct poisson_log_term {
  static constexpr const char* name = "poisson_log_term";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& y, const T& a) const {
    return y * a - math::exp(a);
  }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& y, const T& a, T& dy, T& da) const {
    const T e = math::exp(a);
    dy = a;
    da = y - e;
    return y * a - e;
  }
};

/// y·a − log(1 + eᵃ) = y log σ(a) + (1 − y) log(1 − σ(a)), the Bernoulli log density with
/// logit a (bernoulli_logit) as one node: one softplus per element, a vector a computed once.
/// ∂/∂y = a, ∂/∂a = y − σ(a).
struct bernoulli_logit_term {
  static constexpr const char* name = "bernoulli_logit_term";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& y, const T& a) const {
    return y * a - log1p_exp{}.value(a);
  }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& y, const T& a, T& dy, T& da) const {
    T sigma;
    const T softplus = log1p_exp{}.value(a, sigma);
    dy = a;
    da = y - sigma;
    return y * a - softplus;
  }
};

}  // namespace tyche::rules
