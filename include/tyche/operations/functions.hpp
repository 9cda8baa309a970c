// tyche/operations/functions.hpp — the functions and operators that build expressions (exp,
// log, +, −, ×, ÷, pow, sum, dot, log_sum_exp, at, matvec, …), with the rewrites applied as
// nodes are built: identities and literal folding (operations/identities.hpp), and the Line and
// LogLine normal forms (operations/linear.hpp). The node types themselves are in core/nodes.hpp,
// their value and derivative rules in autodiff/.
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/arithmetic.hpp>
#include <tyche/autodiff/exp_log.hpp>
#include <tyche/autodiff/logistic.hpp>
#include <tyche/autodiff/matrix_ops.hpp>
#include <tyche/autodiff/special.hpp>
#include <tyche/core/leaves.hpp>
#include <tyche/core/nodes.hpp>
#include <tyche/interval/support.hpp>
#include <tyche/operations/identities.hpp>
#include <tyche/operations/linear.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace tyche {

namespace detail {

template <class Rule, class A, class B>
auto make_binary(const A& a, const B& b) {
  using NA = node_t<A>;
  using NB = node_t<B>;
  if constexpr (binary_identity_v<Rule, NA, NB> == 3) {
    return fold_literal_pair<Rule, NA, NB>();
  } else if constexpr (binary_identity_v<Rule, NA, NB> == 1) {
    return as_node(a);
  } else if constexpr (binary_identity_v<Rule, NA, NB> == 2) {
    return as_node(b);
  } else if constexpr (std::is_same_v<Rule, rules::add> || std::is_same_v<Rule, rules::subtract> ||
                       std::is_same_v<Rule, rules::multiply> || std::is_same_v<Rule, rules::divide> ||
                       std::is_same_v<Rule, rules::pow>) {
    return line_normal_form(make_binary_node<Rule>(a, b));
  } else {
    return make_binary_node<Rule>(a, b);
  }
}


}  // namespace detail

// clang-format off
template <detail::operand A> requires expression<A> auto expm1(const A& a) { return detail::make_unary<rules::expm1>(a); }
template <detail::operand A> requires expression<A> auto square(const A& a) { return detail::line_normal_form(detail::make_unary<rules::square>(a)); }
// clang-format on
/// 1/x of a scalar expression (Stan's inv; inv(v) is 1/x elementwise on a vector too). inverse of
/// a vector expression or a data matrix is Stan's matrix inverse (operations/matrices.hpp).
template <detail::operand A>
  requires(expression<A> && !is_vector_v<detail::node_t<A>> && kind_of<detail::node_t<A>> != node_kind::data_matrix)
auto inverse(const A& a) {
  return detail::line_normal_form(detail::make_unary<rules::inverse>(a));
}
// clang-format off
template <detail::operand A> requires expression<A> auto lgamma(const A& a) { return detail::make_unary<rules::lgamma>(a); }
template <detail::operand A> requires expression<A> auto digamma(const A& a) { return detail::make_unary<rules::digamma>(a); }
template <detail::operand A> requires expression<A> auto trigamma(const A& a) { return detail::make_unary<rules::trigamma>(a); }
template <detail::operand A> requires expression<A> auto logistic(const A& a) { return detail::make_unary<rules::logistic>(a); }
template <detail::operand A> requires expression<A> auto inv_logit(const A& a) { return detail::make_unary<rules::logistic>(a); }
template <detail::operand A> requires expression<A> auto log_logistic(const A& a) { return detail::make_unary<rules::log_logistic>(a); }
template <detail::operand A> requires expression<A> auto log1m_logistic(const A& a) { return detail::make_unary<rules::log1m_logistic>(a); }
template <detail::operand A> requires expression<A> auto log1p_exp(const A& a) { return detail::make_unary<rules::log1p_exp>(a); }
template <detail::operand A> requires expression<A> auto tanh(const A& a) { return detail::make_unary<rules::tanh>(a); }
template <detail::operand A> requires expression<A> auto erf(const A& a) { return detail::make_unary<rules::erf>(a); }
template <detail::operand A> requires expression<A> auto Phi(const A& a) { return detail::make_unary<rules::Phi>(a); }
/// log Φ(a), finite where Φ(a) underflows (a < −38); std_normal_lcdf is Stan's name for it.
template <detail::operand A> requires expression<A> auto log_Phi(const A& a) { return detail::make_unary<rules::log_Phi>(a); }
template <detail::operand A> requires expression<A> auto std_normal_lcdf(const A& a) { return detail::make_unary<rules::log_Phi>(a); }
/// log(1 − Φ(a)) = log Φ(−a), elementwise as std_normal_lcdf.
template <detail::operand A> requires expression<A> auto std_normal_lccdf(const A& a) { return detail::make_unary<rules::log_Phi>(-detail::as_node(a)); }
/// log I₀(a), I₀ the modified Bessel function of the first kind of order 0 (Stan's
/// log_modified_bessel_first_kind(0, a)), without overflow for large a.
template <detail::operand A> requires expression<A> auto log_bessel_i0(const A& a) { return detail::make_unary<rules::log_bessel_i0>(a); }
template <detail::operand A> requires expression<A> auto cos(const A& a) { return detail::make_unary<rules::cos>(a); }
template <detail::operand A> requires expression<A> auto sin(const A& a) { return detail::make_unary<rules::sin>(a); }
template <detail::operand A> requires expression<A> auto atan(const A& a) { return detail::make_unary<rules::atan>(a); }
template <detail::operand A> requires expression<A> auto abs(const A& a) { return detail::make_unary<rules::abs>(a); }
/// Stan's step(a): 0 where a < 0, else 1, with derivative 0 (an indicator: step(s - t - 0.5) is 1
/// where t < s for integers s, t).
template <detail::operand A> requires expression<A> auto step(const A& a) { return detail::make_unary<rules::step>(a); }
/// log(step(a)): 0 where a ≥ 0, −∞ elsewhere, derivative 0: a hard constraint in a free term,
/// target(log_step(b - x)) (what uniform(a, b).observe(y) adds when a or b are parameters).
template <detail::operand A> requires expression<A> auto log_step(const A& a) { return detail::make_unary<rules::log_step>(a); }

// clang-format on

// log (below, with its rewrites), log1p and sqrt check their operand's support
// (interval/support.hpp): compilation fails when the types prove that no value of the operand is
// in the function's domain, e.g. log(-exp(x)). An operand that may leave the domain (log of a bare
// parameter) is allowed: see docs/design/partial-evaluation.md, "Supports and checks", for why
// operations are checked less strictly than distribution arguments.
template <detail::operand A> requires expression<A> auto log1p(const A& a) {
  static_assert(operand_support_t<detail::node_t<A>, domains::greater_than_minus_one>::ok,
                "tyche::log1p(x): x must be > -1 somewhere, but its support (the interval spelled "
                "out in tyche::support_is<...> in this diagnostic) has no value > -1");
  return detail::make_unary<rules::log1p>(a);
}
template <detail::operand A> requires expression<A> auto sqrt(const A& a) {
  static_assert(operand_support_t<detail::node_t<A>, domains::nonnegative>::ok,
                "tyche::sqrt(x): x must be >= 0 somewhere, but its support (the interval spelled "
                "out in tyche::support_is<...> in this diagnostic) has no value >= 0");
  return detail::line_normal_form(detail::make_unary<rules::sqrt>(a));
}

// clang-format off
template <detail::operand A, detail::operand B> requires (expression<A> || expression<B>)
auto operator+(const A& a, const B& b) { return detail::make_binary<rules::add>(a, b); }
template <detail::operand A, detail::operand B> requires (expression<A> || expression<B>)
auto operator-(const A& a, const B& b) { return detail::make_binary<rules::subtract>(a, b); }
template <detail::operand A, detail::operand B> requires (expression<A> || expression<B>)
auto operator*(const A& a, const B& b) { return detail::make_binary<rules::multiply>(a, b); }
template <detail::operand A, detail::operand B> requires (expression<A> || expression<B>)
auto operator/(const A& a, const B& b) { return detail::make_binary<rules::divide>(a, b); }
// clang-format on

/// log a. log of a product of powers with positive bases becomes a sum of logs when that needs
/// no more logs than one (log(σ²) is 2·log σ, log(e^a·σ) is a + log σ; operations/linear.hpp).
/// log(logistic(x)) becomes log_logistic(x) (finite for every x). log(exp(x)) is x itself (exact where the two nodes would round, and finite where
/// exp(x) under- or overflows): the rewrite of the partial-evaluation rules that needs no support.
template <detail::operand A>
  requires expression<A>
auto log(const A& a) {
  using N = detail::node_t<A>;
  static_assert(operand_support_t<N, domains::positive>::ok,
                "tyche::log(x): x must be > 0 somewhere, but its support (the interval spelled "
                "out in tyche::support_is<...> in this diagnostic) has no positive value");
  if constexpr (detail::log_splits<N>()) {
    return detail::log_of_product(detail::as_node(a));  // log(k·Π xᵢ^pᵢ) = log k + Σ pᵢ log xᵢ
  } else if constexpr (kind_of<N> == node_kind::unary) {
    if constexpr (std::is_same_v<typename N::rule_type, rules::exp>) return detail::as_node(a).a;
    else if constexpr (std::is_same_v<typename N::rule_type, rules::logistic>)
      return detail::make_unary<rules::log_logistic>(detail::as_node(a).a);  // log σ(x), stable
    else return detail::make_unary<rules::log>(a);
  } else {
    return detail::make_unary<rules::log>(a);
  }
}

/// eᵃ. exp(log(x)) is x where the support of x is inside [0, ∞) (interval/support.hpp): there the
/// two are equal (exp(log 0) = 0), elsewhere log(x) would be NaN, so the rewrite needs it.
template <detail::operand A>
  requires expression<A>
auto exp(const A& a) {
  using N = detail::node_t<A>;
  if constexpr (detail::is_unary_log_of_nonnegative<N>()) return detail::as_node(a).a;
  else return detail::make_unary<rules::exp>(a);
}

/// −a; −(−x) is x and −lit<n, d> is lit<−n, d>.
template <detail::operand A>
  requires expression<A>
auto operator-(const A& a) {
  using N = detail::node_t<A>;
  if constexpr (detail::literal_parts<N>::is_literal) {
    return literal<-detail::literal_parts<N>::num, detail::literal_parts<N>::den>{};
  } else if constexpr (kind_of<N> == node_kind::unary) {
    if constexpr (std::is_same_v<typename N::rule_type, rules::negate>) return detail::as_node(a).a;
    else return detail::line_normal_form(detail::make_unary<rules::negate>(a));
  } else {
    return detail::line_normal_form(detail::make_unary<rules::negate>(a));
  }
}

/// log(1 − a); log1m(logistic(x)) is log1m_logistic(x), finite for every x.
template <detail::operand A>
  requires expression<A>
auto log1m(const A& a) {
  using N = detail::node_t<A>;
  if constexpr (kind_of<N> == node_kind::unary) {
    if constexpr (std::is_same_v<typename N::rule_type, rules::logistic>)
      return detail::make_unary<rules::log1m_logistic>(detail::as_node(a).a);
    else return log1p(-detail::as_node(a));
  } else {
    return log1p(-detail::as_node(a));
  }
}

/// log(1 − eᵃ), a ≤ 0 (Stan's log1m_exp), as log(−expm1(a)): accurate where eᵃ is near 1
/// (a log CDF near its upper end, P(X ≤ x) = 1 − e^{−t} for small t).
template <detail::operand A>
  requires expression<A>
auto log1m_exp(const A& a) {
  return log(-expm1(a));
}

namespace detail {
/// log I_x(a, b) (Upper = false) or log(1 − I_x(a, b)) of the operands a, b, x and y = 1 − x
/// (given separately where the caller has it more accurately: a binomial's p), each a scalar or a
/// vector of the common size (checked, naming fn): a vector of that size (1 for scalars).
template <bool Upper, class A, class B, class X, class Y>
auto log_inc_beta_of(const A& a, const B& b, const X& x, const Y& y, const char* fn) {
  const auto an = as_node(a);
  const auto bn = as_node(b);
  const auto xn = as_node(x);
  const auto yn = as_node(y);
  const std::size_t sizes[4] = {operand_size(an), operand_size(bn), operand_size(xn), operand_size(yn)};
  std::size_t m = 1;
  for (const std::size_t n : sizes) m = n != 1 ? n : m;
  for (const std::size_t n : sizes)
    if (n != 1 && n != m)
      throw std::invalid_argument(std::string("tyche::") + fn + ": the operands' sizes " + std::to_string(sizes[0]) +
                                  ", " + std::to_string(sizes[1]) + ", " + std::to_string(sizes[2]) +
                                  " differ (each a scalar or a vector of one size)");
  return make_vector_op(ops::log_inc_beta_map<Upper>{}, m, an, bn, xn, yn);
}
}  // namespace detail

/// log I_x(a, b) and log(1 − I_x(a, b)), I the regularised incomplete beta function (Stan's
/// inc_beta, in log form): the log CDF and survival function of beta(a, b) at x, a > 0, b > 0,
/// 0 ≤ x ≤ 1; differentiable in a, b and x (scalar/inc_beta.hpp). Elementwise, each operand a
/// scalar or a vector of the common size; the values are a vector (of 1 for three scalars).
template <detail::operand A, detail::operand B, detail::operand X>
  requires(expression<A> || expression<B> || expression<X>)
auto log_inc_beta(const A& a, const B& b, const X& x) {
  return detail::log_inc_beta_of<false>(a, b, x, lit<1> - x, "log_inc_beta(a, b, x)");
}
template <detail::operand A, detail::operand B, detail::operand X>
  requires(expression<A> || expression<B> || expression<X>)
auto log1m_inc_beta(const A& a, const B& b, const X& x) {
  return detail::log_inc_beta_of<true>(a, b, x, lit<1> - x, "log1m_inc_beta(a, b, x)");
}

namespace detail {
/// log(1 − exp(−eʷ)), elementwise, accurate in both tails (rules::log1m_exp_neg_exp): the Weibull
/// log CDF and the Gumbel and Fréchet survival functions.
template <class W>
auto log1m_exp_neg_exp(const W& w) {
  return make_unary<rules::log1m_exp_neg_exp>(w);
}
}  // namespace detail

/// log P(a, x) and log Q(a, x) = log(1 − P(a, x)), elementwise, P the regularised lower
/// incomplete gamma function (Stan's gamma_p and gamma_q are their exponentials): the log CDF and
/// survival function of gamma(a, 1) at x, a > 0, x ≥ 0; differentiable in both (scalar/
/// inc_gamma.hpp). A scalar operand is broadcast.
template <detail::operand A, detail::operand X>
  requires(expression<A> || expression<X>)
auto log_gamma_p(const A& a, const X& x) {
  return detail::make_binary<rules::log_gamma_p>(a, x);
}
template <detail::operand A, detail::operand X>
  requires(expression<A> || expression<X>)
auto log_gamma_q(const A& a, const X& x) {
  return detail::make_binary<rules::log_gamma_q>(a, x);
}

/// fmin(a, b) / fmax(a, b): the smaller / larger of a and b, elementwise (a scalar operand is
/// broadcast); the derivative goes to the operand chosen (a where they are equal).
template <detail::operand A, detail::operand B>
  requires(expression<A> || expression<B>)
auto fmin(const A& a, const B& b) {
  return detail::make_binary<rules::fmin>(a, b);
}
template <detail::operand A, detail::operand B>
  requires(expression<A> || expression<B>)
auto fmax(const A& a, const B& b) {
  return detail::make_binary<rules::fmax>(a, b);
}

namespace detail {
/// log P(Z ≤ z) of the standard Cauchy and the standard Laplace, elementwise (the cauchy,
/// half_cauchy and double_exponential log CDFs; rules::cauchy_lcdf, rules::laplace_lcdf).
template <class Z>
auto cauchy_lcdf(const Z& z) {
  return make_unary<rules::cauchy_lcdf>(z);
}
template <class Z>
auto laplace_lcdf(const Z& z) {
  return make_unary<rules::laplace_lcdf>(z);
}
/// log P(T ≤ t) (Upper = false) or log P(T > t) of Student's t with nu degrees of freedom,
/// elementwise (rules::student_t_lcdf).
template <bool Upper, class Nu, class T>
auto student_t_lcdf(const Nu& nu, const T& t) {
  return make_binary<rules::student_t_lcdf<Upper>>(nu, t);
}
/// log F(z; α) of the standard skew normal, elementwise (rules::skew_normal_lcdf).
template <class Z, class Alpha>
auto skew_normal_lcdf(const Z& z, const Alpha& alpha) {
  return make_binary<rules::skew_normal_lcdf>(z, alpha);
}
}  // namespace detail

/// log(eᵃ + eᵇ), elementwise (a scalar operand is broadcast).
template <detail::operand A, detail::operand B>
  requires(expression<A> || expression<B>)
auto log_add_exp(const A& a, const B& b) {
  return detail::make_binary<rules::log_add_exp>(a, b);
}

/// aᵇ. A plain-number exponent makes the cheaper one-operand node x^c.
template <detail::operand A, detail::operand B>
  requires(expression<A> || expression<B>)
auto pow(const A& a, const B& b) {
  using NB = detail::node_t<B>;
  if constexpr (arithmetic<B>) {
    return detail::make_unary(a, rules::pow_constant{static_cast<double>(b)});
  } else if constexpr (detail::is_literal_equal_v<NB, 1>) {  // literal exponents: x¹ is x, and
    return detail::as_node(a);                              // x², x^½, x⁻¹ their cheaper nodes
  } else if constexpr (detail::is_literal_equal_v<NB, 2>) {
    return square(a);
  } else if constexpr (detail::is_literal_equal_v<NB, 1, 2>) {
    return sqrt(a);
  } else if constexpr (detail::is_literal_equal_v<NB, -1>) {
    return detail::line_normal_form(detail::make_unary<rules::inverse>(a));  // elementwise on a vector
  } else {
    return detail::make_binary<rules::pow>(a, b);
  }
}

/// Σᵢ aᵢ.
template <expression A>
auto sum(const A& a) {
  using N = detail::node_t<A>;
  static_assert(is_vector_v<N>,
                "tyche::sum(a) requires 'a' to be a vector expression; it is a scalar");
  return sum_node<N>{{}, detail::as_node(a)};
}

namespace detail {
/// Σ over the elements of a vector expression, the expression itself for a scalar: the log
/// density of a distribution or the log-Jacobian of a transform from its elementwise terms.
template <class E>
auto total(const E& e) {
  if constexpr (is_vector_v<node_t<E>>) return sum(e);
  else return as_node(e);
}
}  // namespace detail

/// Σᵢ aᵢ bᵢ.
template <detail::operand A, detail::operand B>
  requires(expression<A> && expression<B>)
auto dot(const A& a, const B& b) {
  static_assert(is_vector_v<detail::node_t<A>> && is_vector_v<detail::node_t<B>>,
                "tyche::dot(a, b) requires 'a' and 'b' to be vector expressions");
  return sum(a * b);
}

/// log Σᵢ exp(aᵢ).
template <expression A>
auto log_sum_exp(const A& a) {
  using N = detail::node_t<A>;
  static_assert(is_vector_v<N>,
                "tyche::log_sum_exp(a) requires 'a' to be a vector expression; it is a scalar");
  return log_sum_exp_node<N>{{}, detail::as_node(a)};
}

/// log(eᵃ + eᵇ + …) of two or more operands, elementwise (Stan's log_sum_exp(a, b)): log_add_exp
/// applied left to right; a scalar operand is broadcast.
template <detail::operand A, detail::operand B, detail::operand... C>
  requires(expression<A> || expression<B> || (expression<C> || ...))
auto log_sum_exp(const A& a, const B& b, const C&... c) {
  if constexpr (sizeof...(C) == 0) return log_add_exp(a, b);
  else return log_sum_exp(log_add_exp(a, b), c...);
}

/// Element k (0-based) of a vector expression, as a scalar expression: at(theta, 2) is
/// theta[3] in Stan's 1-based notation. Elementwise operations distribute over the index
/// (at(exp(v), k) = exp(at(v, k))); a data element is read now.
template <expression A>
auto at(const A& wrapped, std::size_t k) {
  using N = detail::node_t<A>;
  static_assert(is_vector_v<N>, "tyche::at(v, k) requires 'v' to be a vector expression");
  const N n = detail::as_node(wrapped);
  if (k >= n.size())
    throw std::out_of_range("tyche::at(v, k): index " + std::to_string(k) + " is past the end of a "
                            "vector of size " + std::to_string(n.size()));
  if constexpr (kind_of<N> == node_kind::vector_param) {
    return param_element<N>{{}, n, k};
  } else if constexpr (kind_of<N> == node_kind::data_vector) {
    return constant{n.ptr[k]};
  } else if constexpr (kind_of<N> == node_kind::unary) {
    auto a = at(n.a, k);
    return unary_node<typename N::rule_type, decltype(a)>{{}, n.rule, a};
  } else if constexpr (kind_of<N> == node_kind::binary) {
    auto pick = [k](const auto& x) {
      if constexpr (is_vector_v<std::remove_cvref_t<decltype(x)>>) return at(x, k);
      else return x;
    };
    auto a = pick(n.a);
    auto b = pick(n.b);
    return binary_node<typename N::rule_type, decltype(a), decltype(b)>{{}, n.rule, a, b};
  } else if constexpr (is_buffered_v<N>) {
    return element_node<N>{{}, n, k};
  } else {
    static_assert(kind_of<N> == node_kind::param_gather);
    using V = typename N::vector_type;
    return param_element<V>{{}, n.vector, n.position(k)};
  }
}

/// x, with the support S::value (a type from tyche::supports, or any type with a
/// `static constexpr interval value`) in place of the one computed for it: the escape hatch of
/// the support checks, for an argument the user knows to be inside its domain where interval
/// arithmetic cannot prove it (e.g. b − a for b > a by construction). The value and the gradient
/// are x's; nothing is checked at run time. `normal(mu, assume_support<supports::positive>(s))`.
template <class S, expression A>
auto assume_support(const A& x) {
  static_assert(requires { S::value; } && std::is_same_v<std::remove_cvref_t<decltype(S::value)>, interval>,
                "tyche::assume_support<S>(x) requires 'S' to have a static constexpr tyche::interval "
                "'value' (see tyche::supports)");
  return detail::make_unary<rules::assume_support<S>>(x);
}
/// assume_support<supports::positive>(x): x > 0.
template <expression A>
auto assume_positive(const A& x) {
  return assume_support<supports::positive>(x);
}
/// assume_support<supports::nonnegative>(x): x ≥ 0.
template <expression A>
auto assume_nonnegative(const A& x) {
  return assume_support<supports::nonnegative>(x);
}
/// assume_support<supports::unit_interval>(x): 0 ≤ x ≤ 1.
template <expression A>
auto assume_probability(const A& x) {
  return assume_support<supports::unit_interval>(x);
}

/// X v: a data matrix times a vector expression. A vector parameter v makes the matvec node
/// (streamed through its loop, or a normal likelihood's sufficient statistics); any other
/// vector (elementwise, a vector_op, data) a vector_op that reads X in place
/// (ops::data_matvec_map); data times data is computed once, when the model is built.
template <expression V>
auto matvec(const data_matrix& x, const V& v) {
  using N = detail::node_t<V>;
  static_assert(is_vector_v<N>, "tyche::matvec(X, v) requires 'v' to be a vector expression");
  const N node = detail::as_node(v);
  if (x.cols != node.size())
    throw std::invalid_argument("tyche::matvec(X, v): X has " + std::to_string(x.cols) +
                                " columns but v has size " + std::to_string(node.size()));
  if constexpr (kind_of<N> == node_kind::vector_param) return matvec_node<N>{{}, x, node};
  else {
    detail::check_matrix_finite(x, "matvec(X, v)", "X");
    return make_vector_op(ops::data_matvec_map{x.ptr, x.rows, x.cols}, x.rows, node);
  }
}
/// X v for a matrix of floats (matrix(const float*, …)): the matvec node for a vector parameter
/// v, else the vector_op that reads X in place (ops::basic_data_matvec_map<float>).
template <expression V>
auto matvec(const data_matrix_f& x, const V& v) {
  using N = detail::node_t<V>;
  static_assert(is_vector_v<N>, "tyche::matvec(X, v) requires 'v' to be a vector expression");
  const N node = detail::as_node(v);
  if (x.cols != node.size())
    throw std::invalid_argument("tyche::matvec(X, v): X has " + std::to_string(x.cols) +
                                " columns but v has size " + std::to_string(node.size()));
  if constexpr (kind_of<N> == node_kind::vector_param) return matvec_node<N, false, data_matrix_f>{{}, x, node};
  else {
    detail::check_matrix_finite(x, "matvec(X, v)", "X");
    return make_vector_op(ops::basic_data_matvec_map<float>{x.ptr, x.rows, x.cols}, x.rows, node);
  }
}
template <expression V>
auto operator*(const data_matrix& x, const V& v) {
  return matvec(x, v);
}
template <expression V>
auto operator*(const data_matrix_f& x, const V& v) {
  return matvec(x, v);
}

}  // namespace tyche
