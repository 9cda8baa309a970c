// tyche/operations/stan_functions.hpp — the rest of Stan's real-valued functions under Stan's
// names: trigonometric and hyperbolic functions, erfc, Φ⁻¹ (inv_Phi), atan2 (each one node,
// rules in autodiff/special.hpp, supports in interval/interval.hpp), and the ones that are
// compositions of existing nodes (logit, log_diff_exp, lbeta, lchoose, log10, hypot, …, whose
// gradients and supports come from their parts), Stan's constants (pi(), sqrt2(), log2(),
// log10(); not e(), a name too short to take from users' code) and the summaries of a vector (mean, variance, sd, dot_self, squared_distance,
// norm1, norm2). docs/reference/functions.md lists them with the Stan functions still missing.
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/special.hpp>
#include <tyche/core/nodes.hpp>
#include <tyche/operations/functions.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace tyche {

// Stan's constants, as doubles (an operand like any number).
constexpr double pi() { return 3.14159265358979323846; }
constexpr double sqrt2() { return 1.41421356237309504880; }
constexpr double log2() { return 0.69314718055994530942; }
constexpr double log10() { return 2.30258509299404568402; }

// clang-format off
// One node each.
template <detail::operand A> requires expression<A> auto tan(const A& a) { return detail::make_unary<rules::tan>(a); }
template <detail::operand A> requires expression<A> auto asin(const A& a) { return detail::make_unary<rules::asin>(a); }
template <detail::operand A> requires expression<A> auto acos(const A& a) { return detail::make_unary<rules::acos>(a); }
template <detail::operand A> requires expression<A> auto sinh(const A& a) { return detail::make_unary<rules::sinh>(a); }
template <detail::operand A> requires expression<A> auto cosh(const A& a) { return detail::make_unary<rules::cosh>(a); }
template <detail::operand A> requires expression<A> auto asinh(const A& a) { return detail::make_unary<rules::asinh>(a); }
template <detail::operand A> requires expression<A> auto acosh(const A& a) { return detail::make_unary<rules::acosh>(a); }
template <detail::operand A> requires expression<A> auto atanh(const A& a) { return detail::make_unary<rules::atanh>(a); }
template <detail::operand A> requires expression<A> auto cbrt(const A& a) { return detail::make_unary<rules::cbrt>(a); }
/// 1 − erf(a), accurate where it is small (erfc(10) = 2e-45).
template <detail::operand A> requires expression<A> auto erfc(const A& a) { return detail::make_unary<rules::erfc>(a); }
/// Φ⁻¹(p), the standard normal quantile, 0 ≤ p ≤ 1 (scalar/math.hpp: Newton's method on log Φ
/// in the tails and on erf in the centre, to the double's relative precision).
template <detail::operand A> requires expression<A> auto inv_Phi(const A& a) { return detail::make_unary<rules::inv_Phi>(a); }
// clang-format on

/// atan2(y, x), the angle of (x, y) in [−π, π], elementwise.
template <detail::operand Y, detail::operand X>
  requires(expression<Y> || expression<X>)
auto atan2(const Y& y, const X& x) {
  return detail::make_binary<rules::atan2>(y, x);
}

/// Owen's T function T(h, a) = (1/2π) ∫₀ᵃ e^(−h²(1+x²)/2) / (1 + x²) dx, elementwise
/// (scalar/owens_t.hpp: to the double's relative precision), |T| ≤ 1/4.
template <detail::operand H, detail::operand A>
  requires(expression<H> || expression<A>)
auto owens_t(const H& h, const A& a) {
  return detail::make_binary<rules::owens_t>(h, a);
}

// Compositions. Operands are numbers, data or expressions; at least one an expression.

/// log(u / (1 − u)), 0 < u < 1.
template <detail::operand U>
  requires expression<U>
auto logit(const U& u) {
  return log(u) - log1m(u);
}
/// log inv_logit(x) and log(1 − inv_logit(x)): log_logistic, log1m_logistic.
template <detail::operand X>
  requires expression<X>
auto log_inv_logit(const X& x) {
  return log_logistic(x);
}
template <detail::operand X>
  requires expression<X>
auto log1m_inv_logit(const X& x) {
  return log1m_logistic(x);
}
/// log(eᵃ − eᵇ), a ≥ b: a + log(1 − e^(b − a)).
template <detail::operand A, detail::operand B>
  requires(expression<A> || expression<B>)
auto log_diff_exp(const A& a, const B& b) {
  return detail::as_node(a) + log1m_exp(detail::as_node(b) - detail::as_node(a));
}
/// log₁₀ a, log₂ a, 2ᵃ.
template <detail::operand A>
  requires expression<A>
auto log10(const A& a) {
  return log(a) * (1 / log10());
}
template <detail::operand A>
  requires expression<A>
auto log2(const A& a) {
  return log(a) * (1 / log2());
}
template <detail::operand A>
  requires expression<A>
auto exp2(const A& a) {
  return exp(detail::as_node(a) * log2());
}
/// 1/a, 1/√a, 1/a².
template <detail::operand A>
  requires expression<A>
auto inv(const A& a) {
  return detail::make_unary<rules::inverse>(a);
}
template <detail::operand A>
  requires expression<A>
auto inv_sqrt(const A& a) {
  return inv(sqrt(a));
}
template <detail::operand A>
  requires expression<A>
auto inv_square(const A& a) {
  return inv(square(a));
}
/// |a| (Stan's fabs), max(a − b, 0) (fdim), √(a² + b²) (hypot).
template <detail::operand A>
  requires expression<A>
auto fabs(const A& a) {
  return abs(a);
}
template <detail::operand A, detail::operand B>
  requires(expression<A> || expression<B>)
auto fdim(const A& a, const B& b) {
  return fmax(detail::as_node(a) - detail::as_node(b), lit<0>);
}
template <detail::operand A, detail::operand B>
  requires(expression<A> || expression<B>)
auto hypot(const A& a, const B& b) {
  return sqrt(square(detail::as_node(a)) + square(detail::as_node(b)));
}
/// log B(a, b) = log Γ(a) + log Γ(b) − log Γ(a + b).
template <detail::operand A, detail::operand B>
  requires(expression<A> || expression<B>)
auto lbeta(const A& a, const B& b) {
  const auto an = detail::as_node(a);
  const auto bn = detail::as_node(b);
  return lgamma(an) + lgamma(bn) - lgamma(an + bn);
}
/// log of the binomial coefficient (n choose k), real n ≥ k ≥ 0 (Stan's lchoose and
/// binomial_coefficient_log).
template <detail::operand N, detail::operand K>
  requires(expression<N> || expression<K>)
auto lchoose(const N& n, const K& k) {
  const auto nn = detail::as_node(n);
  const auto kn = detail::as_node(k);
  return lgamma(nn + lit<1>) - lgamma(kn + lit<1>) - lgamma(nn - kn + lit<1>);
}
/// a log b (Stan's lmultiply, multiply_log). Unlike Stan's it is NaN, not 0, at a = b = 0.
template <detail::operand A, detail::operand B>
  requires(expression<A> || expression<B>)
auto lmultiply(const A& a, const B& b) {
  return detail::as_node(a) * log(detail::as_node(b));
}
template <detail::operand A, detail::operand B>
  requires(expression<A> || expression<B>)
auto multiply_log(const A& a, const B& b) {
  return lmultiply(a, b);
}
/// Stan's logistic approximation of Φ: inv_logit(0.07056 x³ + 1.5976 x).
template <detail::operand X>
  requires expression<X>
auto Phi_approx(const X& x) {
  const auto xn = detail::as_node(x);
  return logistic(0.07056 * (xn * square(xn)) + 1.5976 * xn);
}
/// Γ(a) = exp(log Γ(a)), a > 0.
template <detail::operand A>
  requires expression<A>
auto tgamma(const A& a) {
  return exp(lgamma(a));
}

/// The regularised incomplete beta function I_x(a, b) and the regularised incomplete gamma
/// functions P(a, x), Q(a, x) (Stan's inc_beta, gamma_p, gamma_q): the exponentials of
/// log_inc_beta, log_gamma_p, log_gamma_q (functions.hpp). inc_beta of three scalars is a scalar.
template <detail::operand A, detail::operand B, detail::operand X>
  requires(expression<A> || expression<B> || expression<X>)
auto inc_beta(const A& a, const B& b, const X& x) {
  if constexpr (is_vector_v<detail::node_t<A>> || is_vector_v<detail::node_t<B>> ||
                is_vector_v<detail::node_t<X>>)
    return exp(log_inc_beta(a, b, x));
  else
    return exp(at(log_inc_beta(a, b, x), 0));
}
template <detail::operand A, detail::operand X>
  requires(expression<A> || expression<X>)
auto gamma_p(const A& a, const X& x) {
  return exp(log_gamma_p(a, x));
}
template <detail::operand A, detail::operand X>
  requires(expression<A> || expression<X>)
auto gamma_q(const A& a, const X& x) {
  return exp(log_gamma_q(a, x));
}
/// a·b + c (Stan's fma; one rounding or two, as the compiler contracts it).
template <detail::operand A, detail::operand B, detail::operand C>
  requires(expression<A> || expression<B> || expression<C>)
auto fma(const A& a, const B& b, const C& c) {
  return detail::as_node(a) * detail::as_node(b) + detail::as_node(c);
}
/// 1 where x > 0, else 0 (Stan's int_step; step(x) is 1 at x = 0), derivative 0.
template <detail::operand X>
  requires expression<X>
auto int_step(const X& x) {
  return lit<1> - step(-detail::as_node(x));
}
/// log(inv_logit(x) − inv_logit(y)), x > y: x + log(1 − e^(y − x)) − log(1 + eˣ) − log(1 + eʸ).
template <detail::operand X, detail::operand Y>
  requires(expression<X> || expression<Y>)
auto log_inv_logit_diff(const X& x, const Y& y) {
  const auto xn = detail::as_node(x);
  const auto yn = detail::as_node(y);
  return xn + log1m_exp(yn - xn) - log1p_exp(xn) - log1p_exp(yn);
}
/// −(y log ŷ + (1 − y) log(1 − ŷ)) for outcomes y in {0, 1} (Stan's binary_log_loss), 0 < ŷ < 1.
template <detail::operand Y, detail::operand P>
  requires(expression<Y> || expression<P>)
auto binary_log_loss(const Y& y, const P& y_hat) {
  const auto yn = detail::as_node(y);
  const auto pn = detail::as_node(y_hat);
  return -(yn * log(pn) + (lit<1> - yn) * log1m(pn));
}

// Summaries of a vector expression (of n ≥ 1 elements; variance and sd need n ≥ 2).
namespace detail {
template <class V>
double vector_count(const V& v, const char* fn, std::size_t at_least) {
  static_assert(is_vector_v<node_t<V>>, "tyche::mean / variance / sd: the operand must be a vector expression");
  const std::size_t n = operand_size(as_node(v));
  if (n < at_least)
    throw std::invalid_argument(std::string("tyche::") + fn + ": the vector has " + std::to_string(n) +
                                " elements; it needs at least " + std::to_string(at_least));
  return static_cast<double>(n);
}
}  // namespace detail
/// (1/n) Σᵢ vᵢ.
template <expression V>
auto mean(const V& v) {
  return sum(v) * (1 / detail::vector_count(v, "mean(v)", 1));
}
/// Σᵢ (vᵢ − v̄)² / (n − 1), the sample variance (Stan's variance), and its square root (sd).
template <expression V>
auto variance(const V& v) {
  const double n = detail::vector_count(v, "variance(v)", 2);
  const auto vn = detail::as_node(v);
  return sum(square(vn - sum(vn) * (1 / n))) * (1 / (n - 1));
}
template <expression V>
auto sd(const V& v) {
  return sqrt(variance(v));
}
/// Σᵢ vᵢ², Σᵢ (aᵢ − bᵢ)², Σᵢ |vᵢ|, √(Σᵢ vᵢ²).
template <expression V>
auto dot_self(const V& v) {
  static_assert(is_vector_v<detail::node_t<V>>, "tyche::dot_self(v) requires a vector expression");
  return sum(square(v));
}
template <detail::operand A, detail::operand B>
  requires(expression<A> || expression<B>)
auto squared_distance(const A& a, const B& b) {
  return sum(square(detail::as_node(a) - detail::as_node(b)));
}
/// √(Σᵢ (aᵢ − bᵢ)²): Stan's distance (its gradient is NaN where a = b).
template <detail::operand A, detail::operand B>
  requires(expression<A> || expression<B>)
auto distance(const A& a, const B& b) {
  return sqrt(squared_distance(a, b));
}
template <expression V>
auto norm1(const V& v) {
  static_assert(is_vector_v<detail::node_t<V>>, "tyche::norm1(v) requires a vector expression");
  return sum(abs(v));
}
template <expression V>
auto norm2(const V& v) {
  return sqrt(dot_self(v));
}

}  // namespace tyche
