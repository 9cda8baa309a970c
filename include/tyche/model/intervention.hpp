// tyche/model/intervention.hpp — do_<"name">(model, value): the model in which the random
// variable `name` is fixed to `value` (Edward2's `do`, Pearl's intervention). Its prior term
// and log-Jacobian disappear, it leaves θ, and every expression that used it (other variables'
// arguments, likelihoods) sees the value instead.
#pragma once
#include <tyche/config.hpp>
#include <tyche/compile/substitute.hpp>
#include <tyche/core/meta.hpp>
#include <tyche/model/joint.hpp>
#include <tyche/model/model.hpp>
#include <tyche/scalar/format.hpp>

#include <cmath>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>

namespace tyche {

namespace detail {

template <class Dist, class Replace>
auto substitute_distribution(const Dist& d, const Replace& replace) {
  if constexpr (std::tuple_size_v<decltype(d.arguments())> == 0) {
    return d;
  } else {
    return std::apply([&](const auto&... a) { return with_arguments(d, replace(a)...); }, d.arguments());
  }
}

template <fixed_string Name, class Replace, class T>
auto intervene_term(const T& t, const Replace& replace) {
  if constexpr (is_random_variable<T>::value) {
    if constexpr (T::name == Name) {
      return std::tuple<>{};  // the intervened variable leaves the joint
    } else {
      auto d = substitute_distribution(t.distribution, replace);
      using V = random_variable<T::name, decltype(d), typename T::shape_type>;
      V v(d, typename T::shape_type{});
      v.parameter = t.parameter;  // keeps a run-time size
      return std::tuple<V>{v};
    }
  } else if constexpr (is_log_density_term<T>::value) {
    auto e = replace(t.value);
    return std::tuple<log_density_term<decltype(e)>>{{e}};
  } else if constexpr (is_quantity_term<T>::value) {
    auto e = detail::as_node(replace(t.value));
    return std::tuple<quantity_term<T::name, decltype(e)>>{{e, t.rows, t.cols}};
  } else {
    auto d = substitute_distribution(t.distribution, replace);
    auto x = replace(t.value);
    // A bound that is now a number (uniform(0, N) with N fixed) is checked against y as
    // observe() checks one (its log density has no guard then).
    if constexpr (requires { d.check_observed(x); }) d.check_observed(x);
    return std::tuple<observed<decltype(d), decltype(x)>>{{d, x}};
  }
}

/// e with random variable v fixed to r: its value expression (the transform applied to its
/// parameter) replaced by r, then any use of the parameter itself — left where an expression
/// was simplified as it was built, log(exp(u)) = u for a positive variable — by the
/// unconstrained value, an expression of r (transforms/bounds.hpp's unconstrain_expression).
template <class V, class R, class E>
auto replace_variable(const V& v, const R& r, const E& e) {
  using Value = decltype(detail::as_node(v.value_expression()));
  using P = typename V::param_type;
  auto replaced = substitute<Value>(e, r);
  if constexpr (depends_on_v<node_t<decltype(replaced)>, V::name>) {
    constexpr bool invertible = requires { v.transform().unconstrain_expression(r); };
    static_assert(invertible,
                  "tyche::do_<name>(model, value): the model uses the unconstrained parameter of "
                  "'name' directly, and its transform has no unconstrain_expression(x) to express "
                  "it in the value");
    if constexpr (invertible) return substitute<P>(replaced, v.transform().unconstrain_expression(r));
  } else {
    return replaced;
  }
}

template <fixed_string Name, class T>
constexpr bool is_variable_named() {
  if constexpr (is_random_variable<T>::value) return T::name == Name;
  else return false;
}

/// Index of the random variable called Name among Terms (sizeof...(Terms) when absent).
template <fixed_string Name, class... Terms>
constexpr std::size_t variable_index_v = [] {
  constexpr bool hit[] = {is_variable_named<Name, Terms>()..., true};
  std::size_t i = 0;
  while (!hit[i]) ++i;
  return i;
}();

/// The names of a joint's random variables, spelled (random_variable_named<...>), for do_'s
/// diagnostic.
template <class... Names>
struct model_variables {};
template <class T, bool = is_random_variable<T>::value>
struct spelled_variable {
  using type = meta::list<>;
};
template <class T>
struct spelled_variable<T, true> {
  using type = meta::list<typename spelled_name<T::name>::type>;
};
template <class L>
struct as_model_variables;
template <class... Names>
struct as_model_variables<meta::list<Names...>> {
  using type = model_variables<Names...>;
};

/// Instantiated when do_<Name> names no random variable of the model: Name and Variables spell
/// the name given and the model's random variables as characters (one error, nothing after it).
template <class Name, class Variables>
constexpr bool do_variable_not_in_model() {
  static_assert(sizeof(Name) == 0,
                "tyche::do_<name>(model, value) requires 'name' to be a random variable of the model. The "
                "name given is spelled out, a character at a time, in random_variable_named<...> (Name) of this "
                "diagnostic, the model's random variables in model_variables<...> (Variables)");
  return false;
}

/// A number that do_ fixes variable v to, checked against v's support where its bounds are
/// numbers (phi ~ uniform(-1, 1) fixed to 1.2 would give a model whose density is NaN or
/// -inf everywhere): throws std::invalid_argument naming the variable, the value and the support.
/// Element i of the value (`at` "" for a number, "[i + 1]" for element i of a vector value;
/// `element`, the variable's element checked: `at`, or "[i + 1]" for a number that fixes every
/// element of a vector variable). Bounds that are data vectors are read at i.
template <fixed_string Name, class V>
void check_intervention_value(const V& v, double x, std::size_t i = 0, const std::string& at = "",
                              const std::string& element = "") {
  const auto tr = v.transform();
  using Tr = decltype(tr);
  if (!std::isfinite(x))
    throw std::invalid_argument("tyche::do_<\"" + Name.str() + "\">(model, value): " +
                                (at.empty() ? std::string("the value") : "value" + at) + " is " + format_number(x) +
                                "; an intervention sets the variable to a finite number" +
                                (at.empty() ? "" : " (indices count from 1)"));
  double l = -HUGE_VAL, h = HUGE_VAL;
  bool inside = true;
  if constexpr (requires { tr.lower; tr.upper; }) {
    if (known_value(as_node(tr.lower), i, &l) && known_value(as_node(tr.upper), i, &h)) inside = Tr::contains(x, l, h);
  } else if constexpr (requires { tr.lower; }) {
    if (known_value(as_node(tr.lower), i, &l)) inside = Tr::contains(x, l);
  } else if constexpr (requires { tr.upper; }) {
    if (known_value(as_node(tr.upper), i, &h)) inside = Tr::contains(x, h);
  }
  if (!inside)
    throw std::invalid_argument("tyche::do_<\"" + Name.str() + "\">(model, value): " +
                                (at.empty() ? std::string("the value ") : "value" + at + " = ") + format_number(x) +
                                " is outside " + Name.str() + (at.empty() ? element : at) + "'s support (" +
                                format_number(l) + ", " + format_number(h) + ")" +
                                (at.empty() && element.empty() ? "" : " (indices count from 1)"));
}

/// A number that do_ fixes every element of vector variable v to: checked against each
/// element's bounds (data bounds differ from element to element; a number bound is checked once).
template <fixed_string Name, class V>
void check_intervention_number(const V& v, double x) {
  if constexpr (is_vector_v<node_t<decltype(v.value_expression())>>) {
    const std::size_t n = operand_size(as_node(v.value_expression()));
    for (std::size_t i = 0; i < n; ++i)
      check_intervention_value<Name>(v, x, i, "", "[" + std::to_string(i + 1) + "]");
  } else {
    check_intervention_value<Name>(v, x);
  }
}

/// A data vector that do_ fixes vector variable v to: as many values as the variable has
/// (its constrained values: K × K for a K × K matrix variable), each finite and, where its
/// bounds are numbers or data, inside them. Without this a wrong size or a NaN was reported
/// by the first observed term that read the variable, as that term's error.
template <fixed_string Name, class V, class R>
void check_intervention_values(const V& v, const R& r) {
  const std::size_t want = operand_size(as_node(v.value_expression())), got = r.size();
  if (got != want)
    throw std::invalid_argument("tyche::do_<\"" + Name.str() + "\">(model, value): the value has " +
                                std::to_string(got) + (got == 1 ? " value; " : " values; ") + Name.str() + " has " +
                                std::to_string(want));
  for (std::size_t i = 0; i < got; ++i)
    check_intervention_value<Name>(v, static_cast<double>(r.ptr[i]), i, "[" + std::to_string(i + 1) + "]");
}

}  // namespace detail

/// The joint with random variable Name fixed to value (a number, or a data vector for a vector
/// variable: `do_<"theta">(j, data(v))`, which keeps a view of v).
template <fixed_string Name, class... Terms, class Value>
auto do_(const joint_t<Terms...>& j, const Value& value) {
  constexpr std::size_t index = detail::variable_index_v<Name, Terms...>;
  if constexpr (index >= sizeof...(Terms)) {
    (void)detail::do_variable_not_in_model<
        typename detail::spelled_name<Name>::type,
        typename detail::as_model_variables<meta::concat<typename detail::spelled_variable<Terms>::type...>>::type>();
    return j;
  } else if constexpr (!std::is_arithmetic_v<Value> && !detail::operand<Value>) {
    static_assert(std::is_arithmetic_v<Value> || detail::operand<Value>,
                  "tyche::do_<name>(model, value): the value is a number, or data(v) for a vector or matrix "
                  "variable's values (a view of a std::vector v, row major, which must outlive the model): "
                  "wrap a std::vector in data(...)");
    return j;
  } else {
    const auto& v = std::get<index>(j.terms);
    const auto r = detail::as_node(value);
    if constexpr (std::is_arithmetic_v<Value>)
      detail::check_intervention_number<Name>(v, static_cast<double>(value));
    else if constexpr (kind_of<decltype(r)> == node_kind::data_vector)
      detail::check_intervention_values<Name>(v, r);
    const auto replace = [&](const auto& e) { return detail::replace_variable(v, r, e); };
    auto terms = std::apply(
        [&](const auto&... t) { return std::tuple_cat(detail::intervene_term<Name>(t, replace)...); },
        j.terms);
    return std::apply([](const auto&... t) { return joint(t...); }, terms);
  }
}

/// The model with random variable Name fixed to value.
template <fixed_string Name, class Joint, class Value>
auto do_(const model_t<Joint>& m, const Value& value) {
  return model(do_<Name>(m.joint(), value));
}

}  // namespace tyche
