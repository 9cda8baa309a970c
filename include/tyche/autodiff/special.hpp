// tyche/autodiff/special.hpp — value and derivative rules for special functions: lgamma,
// digamma, erf, Phi (the standard normal CDF), log_Phi (its logarithm, without underflow),
// log_bessel_i0 (log of the modified Bessel function I₀), cos, sin, atan, log_gamma_p /
// log_gamma_q (the logarithms of the regularised incomplete gamma functions P(a, x) and Q(a, x)),
// and the log CDFs of the standard Cauchy, Laplace and Student's t (cauchy_lcdf, laplace_lcdf,
// student_t_lcdf); and the vector ops ops::log_inc_beta_map (log I_x(a, b), the regularised
// incomplete beta function, of three operands), beta_binomial_lcdf_map and wiener_map (the
// log density of the Wiener first-passage time, of six operands).
#pragma once
#include <tyche/config.hpp>
#include <tyche/backends/simd/batch.hpp>
#include <tyche/core/expr.hpp>
#include <tyche/scalar/inc_beta.hpp>
#include <tyche/scalar/inc_gamma.hpp>
#include <tyche/scalar/math.hpp>
#include <tyche/scalar/owens_t.hpp>
#include <tyche/scalar/traits.hpp>
#include <tyche/scalar/wiener.hpp>

#include <cstddef>

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

/// ψ₁(x), d/dx = ψ₂(x) (scalar/math.hpp).
struct trigamma {
  static constexpr const char* name = "trigamma";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::trigamma(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = math::tetragamma(x);
    return math::trigamma(x);
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

/// sin x; d/dx = cos x.
struct sin {
  static constexpr const char* name = "sin";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::sin(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = math::cos(x);
    return math::sin(x);
  }
};

/// atan x; d/dx = 1/(1 + x²).
struct atan {
  static constexpr const char* name = "atan";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::atan(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = lift<T>(1.0) / (lift<T>(1.0) + x * x);
    return math::atan(x);
  }
};

/// tan x; d/dx = 1 + tan² x.
struct tan {
  static constexpr const char* name = "tan";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::tan(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    const T y = math::tan(x);
    dx = lift<T>(1.0) + y * y;
    return y;
  }
};

/// asin x, |x| ≤ 1; d/dx = 1/√(1 − x²).
struct asin {
  static constexpr const char* name = "asin";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::asin(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = lift<T>(1.0) / math::sqrt(lift<T>(1.0) - x * x);
    return math::asin(x);
  }
};

/// acos x, |x| ≤ 1; d/dx = −1/√(1 − x²).
struct acos {
  static constexpr const char* name = "acos";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::acos(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = -(lift<T>(1.0) / math::sqrt(lift<T>(1.0) - x * x));
    return math::acos(x);
  }
};

/// sinh x; d/dx = cosh x.
struct sinh {
  static constexpr const char* name = "sinh";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::sinh(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = math::cosh(x);
    return math::sinh(x);
  }
};

/// cosh x; d/dx = sinh x.
struct cosh {
  static constexpr const char* name = "cosh";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::cosh(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = math::sinh(x);
    return math::cosh(x);
  }
};

/// asinh x; d/dx = 1/√(x² + 1).
struct asinh {
  static constexpr const char* name = "asinh";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::asinh(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = lift<T>(1.0) / math::sqrt(x * x + lift<T>(1.0));
    return math::asinh(x);
  }
};

/// acosh x, x ≥ 1; d/dx = 1/√(x² − 1).
struct acosh {
  static constexpr const char* name = "acosh";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::acosh(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = lift<T>(1.0) / math::sqrt(x * x - lift<T>(1.0));
    return math::acosh(x);
  }
};

/// atanh x, |x| < 1; d/dx = 1/(1 − x²).
struct atanh {
  static constexpr const char* name = "atanh";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::atanh(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = lift<T>(1.0) / (lift<T>(1.0) - x * x);
    return math::atanh(x);
  }
};

/// erfc x = 1 − erf x, accurate where it is small; d/dx = −2/√π e^(−x²).
struct erfc {
  static constexpr const char* name = "erfc";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::erfc(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = -(lift<T>(math::two_over_sqrt_pi) * math::exp(-(x * x)));
    return math::erfc(x);
  }
};

/// ∛x; d/dx = 1/(3 ∛x²).
struct cbrt {
  static constexpr const char* name = "cbrt";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::cbrt(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    const T y = math::cbrt(x);
    dx = lift<T>(1.0) / (lift<T>(3.0) * y * y);
    return y;
  }
};

/// Φ⁻¹(p), the standard normal quantile (scalar/math.hpp), 0 ≤ p ≤ 1; d/dp = 1/φ(Φ⁻¹(p)) =
/// √(2π) e^(z²/2).
struct inv_Phi {
  static constexpr const char* name = "inv_Phi";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::inv_Phi(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    const T z = math::inv_Phi(x);
    dx = lift<T>(2.50662827463100050242) * math::exp(lift<T>(0.5) * z * z);
    return z;
  }
};

/// atan2(y, x), the angle of the point (x, y); ∂/∂y = x/(x² + y²), ∂/∂x = −y/(x² + y²).
struct atan2 {
  static constexpr const char* name = "atan2";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& y, const T& x) const { return math::atan2(y, x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& y, const T& x, T& dy, T& dx) const {
    const T r = lift<T>(1.0) / (x * x + y * y);
    dy = x * r;
    dx = -(y * r);
    return math::atan2(y, x);
  }
};

/// log P(Z ≤ z) of the standard Cauchy: log(1/2 + atan(z)/π), and atan(−1/z)/π for z < 0 (the
/// same number without the cancellation in the lower tail); d/dz = 1/(π (1 + z²) P).
struct cauchy_lcdf {
  static constexpr const char* name = "cauchy_lcdf";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T probability(const T& z) const {
    const T inv_pi = lift<T>(0.31830988618379067154);
    return math::select(z < lift<T>(0.0), math::atan(-lift<T>(1.0) / z) * inv_pi,
                        lift<T>(0.5) + math::atan(z) * inv_pi);
  }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& z) const { return math::log(probability(z)); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& z, T& dz) const {
    const T p = probability(z);
    dz = lift<T>(0.31830988618379067154) / ((lift<T>(1.0) + z * z) * p);
    return math::log(p);
  }
};

/// log P(Z ≤ z) of the standard Laplace (double exponential): z − log 2 for z < 0,
/// log(1 − e^(−z)/2) for z ≥ 0; d/dz = 1 and e^(−z)/(2 − e^(−z)).
struct laplace_lcdf {
  static constexpr const char* name = "laplace_lcdf";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& z) const {
    const T e = math::exp(-math::abs(z));
    return math::select(z < lift<T>(0.0), z - lift<T>(0.69314718055994530942), math::log1p(lift<T>(-0.5) * e));
  }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& z, T& dz) const {
    const T e = math::exp(-math::abs(z));
    const auto below = z < lift<T>(0.0);
    dz = math::select(below, lift<T>(1.0), e / (lift<T>(2.0) - e));
    return math::select(below, z - lift<T>(0.69314718055994530942), math::log1p(lift<T>(-0.5) * e));
  }
};

namespace detail {
/// A value and its two partial derivatives, in double (what lanes_of_binary's f returns).
struct value_and_partials {
  double v = 0, d0 = 0, d1 = 0;
};
/// f(x, y) → value_and_partials applied lane by lane to the lanes of x and y (for the scalar
/// functions whose iteration or branches depend on the arguments: scalar/inc_gamma.hpp,
/// inc_beta.hpp, owens_t.hpp); the partial derivatives into dx, dy.
template <class T, class F>
TYCHE_HD T lanes_of_binary(const T& x, const T& y, T& dx, T& dy, F f) {
  using E = element_type_t<T>;
  using ops = tyche::detail::lane_ops<T>;
  constexpr std::size_t lanes = ops::size;
  E xv[lanes], yv[lanes], v[lanes], d0[lanes], d1[lanes];
  ops::store(xv, x);
  ops::store(yv, y);
  for (std::size_t i = 0; i < lanes; ++i) {
    const value_and_partials r = f(static_cast<double>(xv[i]), static_cast<double>(yv[i]));
    v[i] = static_cast<E>(r.v);
    d0[i] = static_cast<E>(r.d0);
    d1[i] = static_cast<E>(r.d1);
  }
  dx = ops::load(d0);
  dy = ops::load(d1);
  return ops::load(v);
}

/// log P(a, x) (Upper = false) or log Q(a, x) (true) and its derivatives, lane by lane
/// (scalar/inc_gamma.hpp computes one pair in double: an iteration whose length depends on the
/// arguments).
template <bool Upper, class T>
TYCHE_HD T log_inc_gamma_lanes(const T& a, const T& x, T& da, T& dx) {
  return lanes_of_binary(a, x, da, dx, [](double av, double xv) {
    const math::log_inc_gamma_result r = math::log_inc_gamma(av, xv);
    return Upper ? value_and_partials{r.log_q, r.log_q_da, r.log_q_dx}
                 : value_and_partials{r.log_p, r.log_p_da, r.log_p_dx};
  });
}
}  // namespace detail

/// log P(a, x), P the regularised lower incomplete gamma function (the CDF of gamma(a, 1) at x),
/// a > 0, x ≥ 0; ∂/∂a by differentiating its series or continued fraction, ∂/∂x = x^(a−1) e^(−x)
/// / (Γ(a) P).
struct log_gamma_p {
  static constexpr const char* name = "log_gamma_p";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD T value(const T& a, const T& x) const {
    T da, dx;
    return detail::log_inc_gamma_lanes<false>(a, x, da, dx);
  }
  template <class T> TYCHE_HD T value(const T& a, const T& x, T& da, T& dx) const {
    return detail::log_inc_gamma_lanes<false>(a, x, da, dx);
  }
};

/// log Q(a, x) = log(1 − P(a, x)), the upper one (the survival function of gamma(a, 1)).
struct log_gamma_q {
  static constexpr const char* name = "log_gamma_q";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD T value(const T& a, const T& x) const {
    T da, dx;
    return detail::log_inc_gamma_lanes<true>(a, x, da, dx);
  }
  template <class T> TYCHE_HD T value(const T& a, const T& x, T& da, T& dx) const {
    return detail::log_inc_gamma_lanes<true>(a, x, da, dx);
  }
};

/// log P(T ≤ t) (Upper = false) or log P(T > t) (true) of Student's t with ν degrees of freedom,
/// operands (ν, t), lane by lane (scalar/inc_beta.hpp's student_t_log_cdf: the regularised
/// incomplete beta function, an iteration whose length depends on the arguments).
template <bool Upper>
struct student_t_lcdf {
  static constexpr const char* name = Upper ? "student_t_lccdf" : "student_t_lcdf";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD T value(const T& nu, const T& t, T& dnu, T& dt) const {
    return detail::lanes_of_binary(nu, t, dnu, dt, [](double n, double tv) {
      const math::student_t_log_cdf_result r = math::student_t_log_cdf(n, tv);
      return Upper ? detail::value_and_partials{r.lccdf, r.lccdf_dnu, r.lccdf_dt}
                   : detail::value_and_partials{r.lcdf, r.lcdf_dnu, r.lcdf_dt};
    });
  }
  template <class T> TYCHE_HD T value(const T& nu, const T& t) const {
    T dnu, dt;
    return value(nu, t, dnu, dt);
  }
};

/// Owen's T function T(h, a) (scalar/owens_t.hpp), lane by lane; ∂/∂h = −φ(h)(Φ(ah) − ½),
/// ∂/∂a = e^(−h²(1+a²)/2) / (2π(1 + a²)).
struct owens_t {
  static constexpr const char* name = "owens_t";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD T value(const T& h, const T& a, T& dh, T& da) const {
    return detail::lanes_of_binary(h, a, dh, da, [](double hv, double av) {
      const math::owens_t_result r = math::owens_t_with_derivatives(hv, av);
      return detail::value_and_partials{r.v, r.dh, r.da};
    });
  }
  template <class T> TYCHE_HD T value(const T& h, const T& a) const {
    T dh, da;
    return value(h, a, dh, da);
  }
};

/// log F(z; α) of the standard skew normal, F(z; α) = Φ(z) − 2T(z, α), operands (z, α), lane by
/// lane (scalar/owens_t.hpp: the light tail without cancellation); the log survival function
/// is log F(−z; −α).
struct skew_normal_lcdf {
  static constexpr const char* name = "skew_normal_lcdf";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD T value(const T& z, const T& alpha, T& dz, T& dalpha) const {
    return detail::lanes_of_binary(z, alpha, dz, dalpha, [](double zv, double av) {
      const math::skew_normal_log_cdf_result r = math::skew_normal_log_cdf(zv, av);
      return detail::value_and_partials{r.v, r.dz, r.dalpha};
    });
  }
  template <class T> TYCHE_HD T value(const T& z, const T& alpha) const {
    T dz, dalpha;
    return value(z, alpha, dz, dalpha);
  }
};

}  // namespace tyche::rules

namespace tyche::ops {

/// log I_x(a, b) (Upper = false) or log(1 − I_x(a, b)) (Upper = true), elementwise over m values,
/// of the operands a, b, x, y in that order, y = 1 − x (the caller's complement, accurate where
/// 1 − x is small: scalar/inc_beta.hpp), each a scalar or m values (lane by lane). An op of four
/// operands, so a vector op: its values held in a buffer; the reverse pass evaluates the
/// derivatives again (the iteration is not kept). The derivative in x is the total one along
/// y = 1 − x, so none goes to y.
/// log P(Y ≤ y) (Upper = false) or log P(Y > y) (true) of beta_binomial(n, a, b), elementwise
/// over m values, of the operands n, a, b, y in that order, each a scalar or m values (scalar/
/// inc_beta.hpp's beta_binomial_log_cdf, lane by lane: a sum whose length depends on the
/// arguments). n and y are counts (data): no derivative goes to them.
template <bool Upper>
struct beta_binomial_lcdf_map {
  static constexpr const char* name = Upper ? "beta_binomial_lccdf" : "beta_binomial_lcdf";
  static constexpr bool has_payload = false;
  template <class N, class A, class B, class Y>
  static constexpr std::size_t extent = dynamic_extent;
  bool operator==(const beta_binomial_lcdf_map&) const = default;

  template <class T>
  TYCHE_HD static T at(std::size_t i, const T* const* in, const std::size_t* in_n, T* d) {
    using E = element_type_t<T>;
    using lanes_of = tyche::detail::lane_ops<T>;
    constexpr std::size_t lanes = lanes_of::size;
    E n[lanes], a[lanes], b[lanes], y[lanes], v[lanes], da[lanes], db[lanes];
    lanes_of::store(n, in[0][in_n[0] > 1 ? i : 0]);
    lanes_of::store(a, in[1][in_n[1] > 1 ? i : 0]);
    lanes_of::store(b, in[2][in_n[2] > 1 ? i : 0]);
    lanes_of::store(y, in[3][in_n[3] > 1 ? i : 0]);
    for (std::size_t l = 0; l < lanes; ++l) {
      const math::beta_binomial_log_cdf_result r = math::beta_binomial_log_cdf(
          static_cast<double>(n[l]), static_cast<double>(a[l]), static_cast<double>(b[l]), static_cast<double>(y[l]));
      v[l] = static_cast<E>(Upper ? r.lccdf : r.lcdf);
      da[l] = static_cast<E>(Upper ? r.lccdf_da : r.lcdf_da);
      db[l] = static_cast<E>(Upper ? r.lccdf_db : r.lcdf_db);
    }
    if (d != nullptr) {
      d[0] = lift<T>(0.0);
      d[1] = lanes_of::load(da);
      d[2] = lanes_of::load(db);
      d[3] = lift<T>(0.0);
    }
    return lanes_of::load(v);
  }
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t* in_n) const {
    for (std::size_t i = 0; i < m; ++i) out[i] = at<T>(i, in, in_n, nullptr);
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const* in, const std::size_t* in_n,
                        T* const* in_adj) const {
    for (std::size_t i = 0; i < m; ++i) {
      T d[4];
      (void)at<T>(i, in, in_n, d);
      for (std::size_t j = 1; j < 3; ++j) in_adj[j][in_n[j] > 1 ? i : 0] += adj[i] * d[j];
    }
  }
};

template <bool Upper>
struct log_inc_beta_map {
  static constexpr const char* name = Upper ? "log1m_inc_beta" : "log_inc_beta";
  static constexpr bool has_payload = false;
  template <class A, class B, class X, class Y>
  static constexpr std::size_t extent = dynamic_extent;
  bool operator==(const log_inc_beta_map&) const = default;

  /// Element i's value, and its derivatives in a, b and x where d is given.
  template <class T>
  TYCHE_HD static T at(std::size_t i, const T* const* in, const std::size_t* in_n, T* d) {
    using E = element_type_t<T>;
    using lanes_of = tyche::detail::lane_ops<T>;
    constexpr std::size_t lanes = lanes_of::size;
    E a[lanes], b[lanes], x[lanes], y[lanes], v[lanes], da[lanes], db[lanes], dx[lanes];
    lanes_of::store(a, in[0][in_n[0] > 1 ? i : 0]);
    lanes_of::store(b, in[1][in_n[1] > 1 ? i : 0]);
    lanes_of::store(x, in[2][in_n[2] > 1 ? i : 0]);
    lanes_of::store(y, in[3][in_n[3] > 1 ? i : 0]);
    for (std::size_t l = 0; l < lanes; ++l) {
      const math::log_inc_beta_result r = math::log_inc_beta(static_cast<double>(a[l]), static_cast<double>(b[l]),
                                                             static_cast<double>(x[l]), static_cast<double>(y[l]));
      v[l] = static_cast<E>(Upper ? r.log_1m_i : r.log_i);
      da[l] = static_cast<E>(Upper ? r.log_1m_i_da : r.log_i_da);
      db[l] = static_cast<E>(Upper ? r.log_1m_i_db : r.log_i_db);
      dx[l] = static_cast<E>(Upper ? r.log_1m_i_dx : r.log_i_dx);
    }
    if (d != nullptr) {
      d[0] = lanes_of::load(da);
      d[1] = lanes_of::load(db);
      d[2] = lanes_of::load(dx);
    }
    return lanes_of::load(v);
  }
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t* in_n) const {
    for (std::size_t i = 0; i < m; ++i) out[i] = at<T>(i, in, in_n, nullptr);
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const* in, const std::size_t* in_n,
                        T* const* in_adj) const {
    for (std::size_t i = 0; i < m; ++i) {
      T d[3];
      (void)at<T>(i, in, in_n, d);
      for (std::size_t j = 0; j < 3; ++j) in_adj[j][in_n[j] > 1 ? i : 0] += adj[i] * d[j];
    }
  }
};

/// log Wiener(y | alpha, tau, beta, delta, sv) elementwise over m values, of the operands y, alpha,
/// tau, beta, delta, sv in that order, each a scalar or m values (scalar/wiener.hpp's
/// wiener_log_density, lane by lane: series whose lengths depend on the arguments). −∞ where
/// y ≤ tau, with no derivative there. The reverse pass evaluates the derivatives again.
struct wiener_map {
  static constexpr const char* name = "wiener";
  static constexpr bool has_payload = false;
  template <class Y, class A, class Tau, class B, class D, class Sv>
  static constexpr std::size_t extent = dynamic_extent;
  bool operator==(const wiener_map&) const = default;

  template <class T>
  TYCHE_HD static T at(std::size_t i, const T* const* in, const std::size_t* in_n, T* d) {
    using E = element_type_t<T>;
    using lanes_of = tyche::detail::lane_ops<T>;
    constexpr std::size_t lanes = lanes_of::size;
    E arg[6][lanes], v[lanes], der[6][lanes];
    for (std::size_t j = 0; j < 6; ++j) lanes_of::store(arg[j], in[j][in_n[j] > 1 ? i : 0]);
    for (std::size_t l = 0; l < lanes; ++l) {
      const math::wiener_log_density_result r = math::wiener_log_density(
          static_cast<double>(arg[0][l]), static_cast<double>(arg[1][l]), static_cast<double>(arg[2][l]),
          static_cast<double>(arg[3][l]), static_cast<double>(arg[4][l]), static_cast<double>(arg[5][l]));
      v[l] = static_cast<E>(r.value);
      der[0][l] = static_cast<E>(r.dy);
      der[1][l] = static_cast<E>(r.dalpha);
      der[2][l] = static_cast<E>(r.dtau);
      der[3][l] = static_cast<E>(r.dbeta);
      der[4][l] = static_cast<E>(r.ddelta);
      der[5][l] = static_cast<E>(r.dsv);
    }
    if (d != nullptr)
      for (std::size_t j = 0; j < 6; ++j) d[j] = lanes_of::load(der[j]);
    return lanes_of::load(v);
  }
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t* in_n) const {
    for (std::size_t i = 0; i < m; ++i) out[i] = at<T>(i, in, in_n, nullptr);
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const* in, const std::size_t* in_n,
                        T* const* in_adj) const {
    for (std::size_t i = 0; i < m; ++i) {
      T d[6];
      (void)at<T>(i, in, in_n, d);
      for (std::size_t j = 0; j < 6; ++j) in_adj[j][in_n[j] > 1 ? i : 0] += adj[i] * d[j];
    }
  }
};


}  // namespace tyche::ops
