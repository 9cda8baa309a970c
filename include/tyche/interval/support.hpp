// tyche/interval/support.hpp — the support of every expression node: at compile time from the types
// (support_of<N>, support_known_v<N>), and at model construction from the values of constants
// and data (support(node), support_at(node, i)); the argument domains distributions and
// operations require (domains::positive, …), the check of an argument against its domain, and
// the escape hatch assume_support. Rules: docs/design/partial-evaluation.md, "Supports and
// checks".
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/arithmetic.hpp>
#include <tyche/autodiff/exp_log.hpp>
#include <tyche/autodiff/logistic.hpp>
#include <tyche/autodiff/special.hpp>
#include <tyche/core/expr.hpp>
#include <tyche/core/leaves.hpp>
#include <tyche/interval/interval.hpp>
#include <tyche/scalar/traits.hpp>

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace tyche {

// ---- the escape hatch: a support the user vouches for ----------------------------------------

/// Supports for assume_support<S>(x). A support is a type with `static constexpr interval value`.
namespace supports {
struct positive {
  static constexpr interval value = interval::positive();
};
struct nonnegative {
  static constexpr interval value = interval::nonnegative();
};
struct unit_interval {
  static constexpr interval value = interval::closed(0.0, 1.0);
};
/// [Lo, Hi] with integer bounds; Lo < Hi.
template <std::intmax_t Lo, std::intmax_t Hi>
struct closed {
  static_assert(Lo < Hi, "tyche::supports::closed<Lo, Hi> requires Lo < Hi");
  static constexpr interval value = interval::closed(static_cast<double>(Lo), static_cast<double>(Hi));
};
}  // namespace supports

namespace rules {
/// The identity, carrying a support that the user vouches for (assume_support): value x,
/// derivative 1. The support of the node is Support::value, whatever its operand's is.
template <class Support>
struct assume_support {
  static constexpr const char* name = "assume_support";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return x; }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = lift<T>(1.0);
    return x;
  }
};
}  // namespace rules

// ---- the image of every operation --------------------------------------------------------------

namespace detail {

template <class Rule>
struct is_assume_rule : std::false_type {};
template <class S>
struct is_assume_rule<rules::assume_support<S>> : std::true_type {};

/// True for the rules whose image is computed below; any other rule (a new one) is (−∞, ∞).
template <class Rule>
inline constexpr bool known_unary_rule_v =
    std::is_same_v<Rule, rules::negate> || std::is_same_v<Rule, rules::square> ||
    std::is_same_v<Rule, rules::inverse> || std::is_same_v<Rule, rules::sqrt> ||
    std::is_same_v<Rule, rules::abs> || std::is_same_v<Rule, rules::pow_constant> ||
    std::is_same_v<Rule, rules::step> || std::is_same_v<Rule, rules::log_step> ||
    std::is_same_v<Rule, rules::exp> || std::is_same_v<Rule, rules::log> ||
    std::is_same_v<Rule, rules::log1p> || std::is_same_v<Rule, rules::expm1> ||
    std::is_same_v<Rule, rules::log1p_exp> || std::is_same_v<Rule, rules::logistic> ||
    std::is_same_v<Rule, rules::log_logistic> || std::is_same_v<Rule, rules::log1m_logistic> ||
    std::is_same_v<Rule, rules::tanh> || std::is_same_v<Rule, rules::lgamma> ||
    std::is_same_v<Rule, rules::digamma> || std::is_same_v<Rule, rules::trigamma> ||
    std::is_same_v<Rule, rules::erf> ||
    std::is_same_v<Rule, rules::Phi> || std::is_same_v<Rule, rules::log_Phi> ||
    std::is_same_v<Rule, rules::log_bessel_i0> || std::is_same_v<Rule, rules::cos> ||
    std::is_same_v<Rule, rules::sin> || std::is_same_v<Rule, rules::atan> ||
    std::is_same_v<Rule, rules::asin> ||
    std::is_same_v<Rule, rules::acos> ||
    std::is_same_v<Rule, rules::sinh> ||
    std::is_same_v<Rule, rules::cosh> ||
    std::is_same_v<Rule, rules::asinh> ||
    std::is_same_v<Rule, rules::acosh> ||
    std::is_same_v<Rule, rules::atanh> ||
    std::is_same_v<Rule, rules::erfc> ||
    std::is_same_v<Rule, rules::cbrt> ||
    std::is_same_v<Rule, rules::inv_Phi> || is_assume_rule<Rule>::value;

template <class Rule>
inline constexpr bool known_binary_rule_v =
    std::is_same_v<Rule, rules::add> || std::is_same_v<Rule, rules::subtract> ||
    std::is_same_v<Rule, rules::multiply> || std::is_same_v<Rule, rules::divide> ||
    std::is_same_v<Rule, rules::pow> || std::is_same_v<Rule, rules::fmin> || std::is_same_v<Rule, rules::fmax> ||
    std::is_same_v<Rule, rules::atan2> || std::is_same_v<Rule, rules::owens_t>;

template <class S>
constexpr interval assumed_support(rules::assume_support<S>) { return S::value; }

/// The image of a under the unary rule r.
template <class Rule>
constexpr interval unary_image(const Rule& r, const interval& a) {
  if constexpr (std::is_same_v<Rule, rules::negate>) return -a;
  else if constexpr (std::is_same_v<Rule, rules::square>) return square(a);
  else if constexpr (std::is_same_v<Rule, rules::inverse>) return inverse(a);
  else if constexpr (std::is_same_v<Rule, rules::sqrt>) return sqrt(a);
  else if constexpr (std::is_same_v<Rule, rules::abs>) return abs(a);
  else if constexpr (std::is_same_v<Rule, rules::step>) return step(a);
  else if constexpr (std::is_same_v<Rule, rules::log_step>) return log_step(a);
  else if constexpr (std::is_same_v<Rule, rules::pow_constant>) return pow(a, r.exponent);
  else if constexpr (std::is_same_v<Rule, rules::exp>) return exp(a);
  else if constexpr (std::is_same_v<Rule, rules::log>) return log(a);
  else if constexpr (std::is_same_v<Rule, rules::log1p>) return log1p(a);
  else if constexpr (std::is_same_v<Rule, rules::expm1>) return expm1(a);
  else if constexpr (std::is_same_v<Rule, rules::log1p_exp>) return log1p_exp(a);
  else if constexpr (std::is_same_v<Rule, rules::logistic>) return logistic(a);
  else if constexpr (std::is_same_v<Rule, rules::log_logistic>) return log_logistic(a);
  else if constexpr (std::is_same_v<Rule, rules::log1m_logistic>) return log1m_logistic(a);
  else if constexpr (std::is_same_v<Rule, rules::tanh>) return tanh(a);
  else if constexpr (std::is_same_v<Rule, rules::lgamma>) return lgamma(a);
  else if constexpr (std::is_same_v<Rule, rules::digamma>) return digamma(a);
  else if constexpr (std::is_same_v<Rule, rules::trigamma>) return trigamma(a);
  else if constexpr (std::is_same_v<Rule, rules::erf>) return erf(a);
  else if constexpr (std::is_same_v<Rule, rules::Phi>) return Phi(a);
  else if constexpr (std::is_same_v<Rule, rules::log_Phi>) return log_Phi(a);
  else if constexpr (std::is_same_v<Rule, rules::log_bessel_i0>) return log_bessel_i0(a);
  else if constexpr (std::is_same_v<Rule, rules::cos>) return cos(a);
  else if constexpr (std::is_same_v<Rule, rules::sin>) return sin(a);
  else if constexpr (std::is_same_v<Rule, rules::atan>) return atan(a);
  else if constexpr (std::is_same_v<Rule, rules::asin>) return asin(a);
  else if constexpr (std::is_same_v<Rule, rules::acos>) return acos(a);
  else if constexpr (std::is_same_v<Rule, rules::sinh>) return sinh(a);
  else if constexpr (std::is_same_v<Rule, rules::cosh>) return cosh(a);
  else if constexpr (std::is_same_v<Rule, rules::asinh>) return asinh(a);
  else if constexpr (std::is_same_v<Rule, rules::acosh>) return acosh(a);
  else if constexpr (std::is_same_v<Rule, rules::atanh>) return atanh(a);
  else if constexpr (std::is_same_v<Rule, rules::erfc>) return erfc(a);
  else if constexpr (std::is_same_v<Rule, rules::cbrt>) return cbrt(a);
  else if constexpr (std::is_same_v<Rule, rules::inv_Phi>) return inv_Phi(a);
  else if constexpr (is_assume_rule<Rule>::value) return assumed_support(r);
  else return interval::whole();
}

template <class Rule>
constexpr interval binary_image(const interval& a, const interval& b) {
  if constexpr (std::is_same_v<Rule, rules::add>) return a + b;
  else if constexpr (std::is_same_v<Rule, rules::subtract>) return a - b;
  else if constexpr (std::is_same_v<Rule, rules::multiply>) return a * b;
  else if constexpr (std::is_same_v<Rule, rules::divide>) return a / b;
  else if constexpr (std::is_same_v<Rule, rules::pow>) return pow(a, b);
  else if constexpr (std::is_same_v<Rule, rules::fmin>) return fmin(a, b);
  else if constexpr (std::is_same_v<Rule, rules::fmax>) return fmax(a, b);
  else if constexpr (std::is_same_v<Rule, rules::atan2>) return interval::closed(-3.14159265358979323846, 3.14159265358979323846);
  else if constexpr (std::is_same_v<Rule, rules::owens_t>) return interval::closed(-0.25, 0.25);
  else return interval::whole();
}

/// Σ of n elements of e (n known).
constexpr interval sum_image(std::size_t n, const interval& e) { return scale(static_cast<double>(n), e); }

/// Σ of an unknown number n ≥ 0 of elements of e: 0 when n = 0.
constexpr interval sum_image_any_size(const interval& e) {
  if (e.is_empty()) return interval::point(0.0);
  interval r;
  if (e.lo >= 0) r = {0.0, e.hi <= 0 ? 0.0 : interval::inf, true, e.hi <= 0};
  else if (e.hi <= 0) r = {-interval::inf, 0.0, false, true};
  return r;
}

}  // namespace detail

// ---- vector ops (autodiff/vector_ops.hpp) -------------------------------------------------------

/// x ≥ 0 (closed at 0 allowed) / x > 0 for every point of a.
constexpr bool all_nonnegative(const interval& a) { return !a.is_empty() && a.lo >= 0; }
constexpr bool all_positive(const interval& a) {
  return !a.is_empty() && (a.lo > 0 || (a.lo == 0 && !a.lo_closed));
}

/// The support of the values of a vector_op with op Op, from its operands' supports (in order).
/// ordered_map<true> is positive; a linear recurrence sₜ = aₜ + bₜ sₜ₋₁ stays ≥ 0 (> 0) when a
/// is > 0 (≥ 0) and b and s₋₁ are ≥ 0 (GARCH variances); a gather, a segment and a rep_vector
/// take their operand's support, and so do a reversal, a sort and a vector's max and min (of one
/// element or more: tyche::max and tyche::min refuse an empty vector); a stack
/// (append_row, to_vector) the hull of its operands'; a diag_matrix its operand's and 0's; a
/// cumulative sum of non-negative terms is non-negative, a product of positive (non-negative)
/// terms positive (non-negative), and at most 1 where every term is; anything else is the whole
/// line.
template <class Op, std::size_t Arity>
constexpr interval vector_op_image(const interval (&in)[Arity]) {
  if constexpr (requires { Op::positive_result; }) {
    return Op::positive_result ? interval::positive() : interval::whole();
  } else if constexpr (std::string_view(Op::name) == "linear_recurrence") {
    if (all_nonnegative(in[1]) && all_nonnegative(in[2])) {
      if (all_positive(in[0])) return interval::positive();
      if (all_nonnegative(in[0])) return interval::nonnegative();
    }
    return interval::whole();
  } else if constexpr (std::string_view(Op::name) == "gather" ||
                       std::string_view(Op::name) == "segment" ||
                       std::string_view(Op::name) == "rep_vector" ||
                       std::string_view(Op::name) == "reverse" || std::string_view(Op::name) == "max" ||
                       std::string_view(Op::name) == "min" || std::string_view(Op::name) == "sort_asc" ||
                       std::string_view(Op::name) == "sort_desc") {
    return in[0];
  } else if constexpr (std::string_view(Op::name) == "prod") {
    // Of any number of elements, the empty product 1 included: in (0, 1] or [0, 1] where every
    // element is (a product of probabilities), else positive or non-negative where they are.
    const bool unit = in[0].hi <= 1;
    if (all_positive(in[0])) return unit ? interval::open_closed(0.0, 1.0) : interval::positive();
    if (all_nonnegative(in[0])) return unit ? interval::closed(0.0, 1.0) : interval::nonnegative();
    return interval::whole();
  } else if constexpr (std::string_view(Op::name) == "diag_matrix") {
    return hull(in[0], interval::point(0.0));
  } else if constexpr (std::string_view(Op::name) == "stack") {
    interval r = interval::empty();
    for (const interval& a : in) r = hull(r, a);
    return r;
  } else if constexpr (std::string_view(Op::name) == "cumulative_sum") {
    return all_nonnegative(in[0]) ? interval::nonnegative() : interval::whole();
  } else {
    return interval::whole();
  }
}

// ---- compile time: from the types ------------------------------------------------------------

namespace detail {
template <class N>
constexpr interval compute_support();
template <class N>
constexpr bool compute_support_known();
}  // namespace detail

/// The support of node N as far as its type tells: exact for literals, from the transform for
/// a random variable's value (exp(u) → (0, ∞), logistic(u) → (0, 1), …), (−∞, ∞) for a bare
/// parameter, and (−∞, ∞) for run-time constants and data, whose values the type does not
/// hold (see support_known_v). Computed once per node type.
template <class N>
inline constexpr interval support_of = detail::compute_support<std::remove_cvref_t<N>>();

/// True when support_of<N> depends on no run-time value (no constant, data, run-time size or
/// run-time exponent below N, and no node kind this header does not know): then a support
/// that is not inside a domain is a proof, and the checks fail at compile time.
template <class N>
inline constexpr bool support_known_v = detail::compute_support_known<std::remove_cvref_t<N>>();

namespace detail {

/// Whether two nodes of type N always hold the same value: N is built from literals and
/// parameters (a parameter is its name's) by rules, ops and reductions that carry no run-time
/// value of their own. Not so for constants, data, an element or gather of a vector (the index),
/// or anything above them: two `2.0 * v` may hold different 2.0s.
template <class N>
constexpr bool value_fixed_by_type();
template <class L>
struct all_values_fixed;
template <class... Cs>
struct all_values_fixed<meta::list<Cs...>> : std::bool_constant<(value_fixed_by_type<Cs>() && ...)> {};
template <class N>
constexpr bool value_fixed_by_type() {
  constexpr node_kind k = kind_of<N>;
  if constexpr (k == node_kind::literal || k == node_kind::param || k == node_kind::vector_param) return true;
  else if constexpr (k == node_kind::constant || k == node_kind::data_vector || k == node_kind::data_matrix ||
                     k == node_kind::param_element || k == node_kind::param_gather || k == node_kind::element)
    return false;
  else if constexpr (N::has_payload) return false;
  else return all_values_fixed<children_t<N>>::value;
}

/// N is x − log_sum_exp(x) for one vector x (log_softmax(x); exp of it is softmax and the
/// simplex transform's value): each element is ≤ 0, since log Σ exp x ≥ max x, which interval
/// arithmetic cannot see (it treats the two x as unrelated). The two x are known to be one
/// value only when their type says so (value_fixed_by_type): `2.0 * v - log_sum_exp(0.5 * v)`
/// has two constants of one type, and its elements can be positive.
template <class N>
constexpr bool is_log_softmax() {
  if constexpr (kind_of<N> != node_kind::binary) {
    return false;
  } else if constexpr (!std::is_same_v<typename N::rule_type, rules::subtract>) {
    return false;
  } else {
    using A = meta::at<0, children_t<N>>;
    using B = meta::at<1, children_t<N>>;
    if constexpr (kind_of<B> != node_kind::log_sum_exp) return false;
    else return std::is_same_v<meta::at<0, children_t<B>>, A> && value_fixed_by_type<A>();
  }
}
template <class N>
inline constexpr bool is_log_softmax_v = is_log_softmax<N>();

template <class N>
constexpr interval compute_support() {
  constexpr node_kind k = kind_of<N>;
  if constexpr (k == node_kind::literal) {
    return interval::point(N::value);
  } else if constexpr (k == node_kind::unary) {
    using Rule = typename N::rule_type;
    using A = meta::at<0, children_t<N>>;
    if constexpr (is_assume_rule<Rule>::value) return assumed_support(Rule{});
    else if constexpr (std::is_same_v<Rule, rules::pow_constant>) {
      // The exponent is a run-time value: only the sign is known, for a ≥ 0.
      constexpr interval a = support_of<A>;
      if constexpr (a.lo >= 0) return interval{0.0, interval::inf, true, true};
      else return interval::whole();
    } else if constexpr (known_unary_rule_v<Rule>) {
      return unary_image(Rule{}, support_of<A>);
    } else {
      return interval::whole();
    }
  } else if constexpr (k == node_kind::binary) {
    using A = meta::at<0, children_t<N>>;
    using B = meta::at<1, children_t<N>>;
    if constexpr (is_log_softmax_v<N>) return interval{-interval::inf, 0.0, false, true};
    else return binary_image<typename N::rule_type>(support_of<A>, support_of<B>);
  } else if constexpr (k == node_kind::sum) {
    using A = meta::at<0, children_t<N>>;
    if constexpr (extent_v<A> != dynamic_extent) return sum_image(extent_v<A>, support_of<A>);
    else return sum_image_any_size(support_of<A>);
  } else if constexpr (k == node_kind::log_sum_exp) {
    // max ≤ log Σ exp ≤ max + log n, and log n ≤ n − 1.
    using A = meta::at<0, children_t<N>>;
    constexpr interval e = support_of<A>;
    if constexpr (extent_v<A> == 1) return e;
    else if constexpr (extent_v<A> != dynamic_extent)
      return e.is_empty() ? e : e + interval::closed(0.0, static_cast<double>(extent_v<A> - 1));
    else return interval::whole();
  } else if constexpr (k == node_kind::residual_squares) {
    return interval::nonnegative();
  } else if constexpr (k == node_kind::element) {
    return support_of<meta::at<0, children_t<N>>>;
  } else if constexpr (k == node_kind::vector_op) {
    return []<class... Cs>(meta::list<Cs...>) {
      const interval in[sizeof...(Cs)] = {support_of<Cs>...};
      return vector_op_image<typename N::op_type>(in);
    }(children_t<N>{});
  } else {
    // constant, data, parameters (unconstrained), gathered parameters, matvec (data), and any
    // kind added later
    return interval::whole();
  }
}

template <class L>
struct all_children_known;
template <class... Cs>
struct all_children_known<meta::list<Cs...>> : std::bool_constant<(support_known_v<Cs> && ...)> {};

template <class N>
constexpr bool compute_support_known() {
  constexpr node_kind k = kind_of<N>;
  if constexpr (k == node_kind::literal || k == node_kind::param ||
                k == node_kind::vector_param || k == node_kind::param_element ||
                k == node_kind::residual_squares) {
    return true;  // a residual sum of squares is ≥ 0 whatever the data
  } else if constexpr (k == node_kind::unary) {
    using Rule = typename N::rule_type;
    if constexpr (is_assume_rule<Rule>::value) return true;
    else if constexpr (!known_unary_rule_v<Rule> || Rule::has_payload) return false;
    else return all_children_known<children_t<N>>::value;
  } else if constexpr (k == node_kind::binary) {
    return known_binary_rule_v<typename N::rule_type> && !N::rule_type::has_payload &&
           all_children_known<children_t<N>>::value;
  } else if constexpr (k == node_kind::sum || k == node_kind::log_sum_exp) {
    using A = meta::at<0, children_t<N>>;
    return extent_v<A> != dynamic_extent && support_known_v<A>;
  } else if constexpr (k == node_kind::param_gather) {
    return true;  // a parameter: the whole line
  } else if constexpr (k == node_kind::element || k == node_kind::vector_op) {
    return all_children_known<children_t<N>>::value;
  } else {
    return false;  // constant, data, matvec, and any kind added later
  }
}

}  // namespace detail

// ---- construction time: from the values -------------------------------------------------------

namespace detail {
/// [min, max] of n values, double or float (NaN makes it the whole line).
template <class E>
interval range_of(const E* p, std::size_t n) {
  if (n == 0) return interval::empty();
  double lo = p[0], hi = p[0];
  for (std::size_t i = 0; i < n; ++i) {
    const double v = p[i];
    if (std::isnan(v)) return interval{-interval::inf, interval::inf, true, true};
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  }
  return interval::closed(lo, hi);
}

/// log n, as an interval that contains it.
inline interval log_count(std::size_t n) {
  const double l = std::log(static_cast<double>(n));
  return interval::closed(iv::next_down(iv::next_down(l)), iv::next_up(iv::next_up(l)));
}

/// The support of node n with its data read: all elements (Index == false), or only element i
/// of every vector below n (Index == true).
template <bool Index, class N>
interval support_impl(const N& n, std::size_t i) {
  constexpr node_kind k = kind_of<N>;
  if constexpr (k == node_kind::literal) {
    return interval::point(N::value);
  } else if constexpr (k == node_kind::constant) {
    return interval::point(n.value);
  } else if constexpr (k == node_kind::data_vector) {
    if constexpr (Index) return interval::point(n.ptr[i]);
    else return range_of(n.ptr, n.size());
  } else if constexpr (k == node_kind::data_matrix) {
    return range_of(n.ptr, n.rows * n.cols);
  } else if constexpr (k == node_kind::unary) {
    using Rule = typename N::rule_type;
    if constexpr (is_assume_rule<Rule>::value) return assumed_support(Rule{});
    else if constexpr (known_unary_rule_v<Rule>) return unary_image(n.rule, support_impl<Index>(n.a, i));
    else return interval::whole();
  } else if constexpr (k == node_kind::binary && is_log_softmax_v<N>) {
    return interval{-interval::inf, 0.0, false, true};
  } else if constexpr (k == node_kind::binary) {
    auto child = [&](const auto& c) {
      using C = std::remove_cvref_t<decltype(c)>;
      if constexpr (is_vector_v<C>) return support_impl<Index>(c, i);
      else return support_impl<false>(c, 0);
    };
    return binary_image<typename N::rule_type>(child(n.a), child(n.b));
  } else if constexpr (k == node_kind::sum) {
    return sum_image(n.a.size(), support_impl<false>(n.a, 0));
  } else if constexpr (k == node_kind::log_sum_exp) {
    const std::size_t count = n.a.size();
    if (count == 0) return interval::point(-interval::inf);
    return support_impl<false>(n.a, 0) + log_count(count);
  } else if constexpr (k == node_kind::matvec) {
    // Row i (or any row) of X times v: Σⱼ Xᵢⱼ vⱼ.
    const interval v = support_impl<false>(n.v, 0);
    if constexpr (Index) {
      interval r = interval::point(0.0);
      for (std::size_t j = 0; j < n.x.cols; ++j) r = r + interval::point(n.x.ptr[i * n.x.cols + j]) * v;
      return r;
    } else {
      return scale(static_cast<double>(n.x.cols), range_of(n.x.ptr, n.x.rows * n.x.cols) * v);
    }
  } else if constexpr (k == node_kind::residual_squares) {
    return interval::nonnegative();
  } else if constexpr (k == node_kind::element) {
    return support_impl<false>(n.v, 0);
  } else if constexpr (k == node_kind::vector_op) {
    return [&]<std::size_t... J>(std::index_sequence<J...>) {
      const interval in[sizeof...(J)] = {support_impl<false>(n.template child<J>(), 0)...};
      return vector_op_image<typename N::op_type>(in);
    }(std::make_index_sequence<children_t<N>::size>{});
  } else {
    return interval::whole();  // parameters, and any kind added later
  }
}
}  // namespace detail

/// The support of node n, with the values of its constants and data: what a model built from
/// it can produce. A vector node's support contains all its elements. At least as tight as
/// support_of<N>.
template <class N>
interval support(const N& n) {
  return intersect(detail::support_impl<false>(n, 0), support_of<N>);
}

/// The support of element i of a vector node n (every vector below it taken at index i).
template <class N>
interval support_at(const N& n, std::size_t i) {
  return intersect(detail::support_impl<true>(n, i), support_of<N>);
}

// ---- domains and checks --------------------------------------------------------------------------

/// What an argument of a distribution or operation requires. Each has the interval and the
/// words of the messages.
namespace domains {
struct positive {
  static constexpr interval value = interval::positive();
  static constexpr const char* text = "> 0";
};
struct nonnegative {
  static constexpr interval value = interval::nonnegative();
  static constexpr const char* text = ">= 0";
};
struct probability {
  static constexpr interval value = interval::closed(0.0, 1.0);
  static constexpr const char* text = "in [0, 1]";
};
/// A proportion strictly between 0 and 1 (beta_proportion's mean).
struct open_unit_interval {
  static constexpr interval value = interval::open(0.0, 1.0);
  static constexpr const char* text = "in (0, 1)";
};
/// log1p(x) needs x > −1.
struct greater_than_minus_one {
  static constexpr interval value = interval::open(-1.0, interval::inf);
  static constexpr const char* text = "> -1";
};
}  // namespace domains

/// What a failed compile-time check shows: the support as characters, e.g.
/// support_is<'(', '-', 'i', 'n', 'f', ',', ' ', 'i', 'n', 'f', ')'>. (A string literal cannot
/// be computed into a static_assert message in C++20, and a character pack is the one form both
/// GCC and Clang print readably.)
template <char... C>
struct support_is {
  static constexpr bool ok = false;
};
/// What a passed check gives.
struct support_inside {
  static constexpr bool ok = true;
};

namespace detail {
template <class N>
struct support_is_of {
  static constexpr interval_text text = to_text(support_of<N>);
  template <std::size_t... I>
  static auto make(std::index_sequence<I...>) -> support_is<text.chars[I]...>;
  using type = decltype(make(std::make_index_sequence<text.size>{}));
};

/// A distribution argument fails at compile time when its support is known from the types and
/// is not inside the domain.
template <class N, class Domain>
inline constexpr bool argument_outside_v =
    support_known_v<N> && !support_of<N>.subset_of(Domain::value);

/// An operation's operand fails at compile time when its support is known from the types and
/// has no point in the domain (every value would be outside it).
template <class N, class Domain>
inline constexpr bool operand_never_inside_v =
    support_known_v<N> && support_of<N>.disjoint_from(Domain::value);

template <class N, bool Fails>
struct verdict {
  using type = support_inside;
};
template <class N>
struct verdict<N, true> {
  using type = typename support_is_of<N>::type;
};
}  // namespace detail

/// support_inside when node N may be a distribution argument with domain Domain; else
/// support_is<…> with N's support spelled out. Use as static_assert(argument_support_t<N, D>::ok, "…").
template <class N, class Domain>
using argument_support_t =
    typename detail::verdict<std::remove_cvref_t<N>,
                             detail::argument_outside_v<std::remove_cvref_t<N>, Domain>>::type;

/// support_inside unless the types prove that no value of node N is in Domain.
template <class N, class Domain>
using operand_support_t =
    typename detail::verdict<std::remove_cvref_t<N>,
                             detail::operand_never_inside_v<std::remove_cvref_t<N>, Domain>>::type;

namespace detail {

/// Appends "data[i] = v" for every data vector below n (by its name, data(y, "y"): "y[i] = v";
/// unnamed ones numbered data#1, data#2, … when there are several).
template <class N>
TYCHE_COLD void describe_data_at(const N& n, std::size_t i, std::string& out, std::size_t& count) {
  if constexpr (kind_of<N> == node_kind::data_vector) {
    ++count;
    out += (out.empty() ? "" : ", ") +
           (n.name != nullptr ? std::string(n.name) : std::string("data#") + std::to_string(count)) + "[" +
           std::to_string(i + 1) + "] = " + number_to_string(n.ptr[i]);
  } else if constexpr (kind_of<N> == node_kind::matvec) {
    ++count;
    out += (out.empty() ? "" : ", ") + std::string("matrix#") + std::to_string(count) + " row " +
           std::to_string(i + 1);
  } else if constexpr (children_t<N>::size > 0 && kind_of<N> != node_kind::sum &&
                       kind_of<N> != node_kind::log_sum_exp &&
                       requires { n.template child<0>(); }) {
    meta::static_for<children_t<N>::size>([&](auto c) {
      const auto& child = n.template child<decltype(c)::value>();
      if constexpr (is_vector_v<std::remove_cvref_t<decltype(child)>>) describe_data_at(child, i, out, count);
    });
  }
}

template <class Domain, class N>
TYCHE_COLD void check_argument_slowly(const char* call, const char* name, const N& n, interval s);

/// The construction-time check of a distribution argument (call: "normal(mu, sigma)", name:
/// "sigma"). Throws std::invalid_argument when the support of node, with its data and constants
/// read, is not inside Domain: for a vector argument over data, at the first index whose
/// support is not, naming the index and the data values there.
template <class Domain, class N>
void check_argument(const char* call, const char* name, const N& n) {
  if constexpr (!support_known_v<N>) {  // else decided at compile time (argument_support_t)
    const interval s = support(n);
    if (!s.subset_of(Domain::value)) check_argument_slowly<Domain>(call, name, n, s);
  }
}

/// check_argument where the support s of the whole argument is not inside Domain (out of line
/// and cold: the messages' code): a scalar's message is thrown; a vector's elements are checked
/// one by one, and the message of the first outside Domain thrown — or nothing, where each
/// element's support is inside and only their hull, s, was not.
template <class Domain, class N>
TYCHE_COLD void check_argument_slowly(const char* call, const char* name, const N& n, const interval s) {
  const std::string head =
      std::string("tyche::") + call + ": " + name + " must be " + Domain::text + ", but ";
  if constexpr (is_vector_v<N>) {
    for (std::size_t i = 0; i < n.size(); ++i) {
      const interval si = support_at(n, i);
      if (si.subset_of(Domain::value)) continue;
      if constexpr (kind_of<N> == node_kind::data_vector) {  // (data 's' when data(s, "s"))
        throw std::invalid_argument(head + name + "[" + std::to_string(i + 1) + "] = " +
                                    number_to_string(n.ptr[i]) +
                                    (n.name != nullptr ? " (data '" + std::string(n.name) + "')" : std::string(" (data)")));
      }
      std::string where;
      std::size_t count = 0;
      describe_data_at(n, i, where, count);
      if (count == 1 && where.rfind("data#1[", 0) == 0) where.erase(4, 2);  // data[i]
      // A support of one point is the element's value, computed from data and constants.
      // An element whose support is an interval depends on parameters: the escape hatch too.
      throw std::invalid_argument(head + name + "[" + std::to_string(i + 1) + "]" +
                                  (si.lo == si.hi ? " = " + number_to_string(si.lo) : " has support " + to_string(si)) +
                                  (where.empty() ? "" : " (computed from " + where + ")") +
                                  (si.lo == si.hi ? "" : TYCHE_SUPPORT_HINT));
    }
    return;  // every element is inside; only the hull of all of them was not
  } else {
    // A support of one point is a constant's: nothing to vouch for. Otherwise the argument
    // depends on parameters, and the user may know more than the interval arithmetic.
    if (s.lo == s.hi) throw std::invalid_argument(head + "it is " + number_to_string(s.lo));
    throw std::invalid_argument(head + "its support is " + to_string(s) + TYCHE_SUPPORT_HINT);
  }
}

}  // namespace detail

}  // namespace tyche
