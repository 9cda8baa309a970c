// tyche/model/intervention.hpp — do_<"name">(model, value): the model in which the random
// variable `name` is fixed to `value` (Edward2's `do`, Pearl's intervention). Its prior term
// and log-Jacobian disappear, it leaves θ, and every expression that used it (other variables'
// arguments, likelihoods) sees the value instead.
#pragma once
#include <tyche/config.hpp>
#include <tyche/compile/substitute.hpp>
#include <tyche/model/joint.hpp>
#include <tyche/model/model.hpp>

#include <tuple>
#include <type_traits>

namespace tyche {

namespace detail {

template <class Target, class Dist, class R>
auto substitute_distribution(const Dist& d, const R& r) {
  if constexpr (std::tuple_size_v<decltype(d.arguments())> == 0) {
    return d;
  } else {
    return std::apply([&](const auto&... a) { return with_arguments(d, substitute<Target>(a, r)...); },
                      d.arguments());
  }
}

template <fixed_string Name, class Target, class R, class T>
auto intervene_term(const T& t, const R& r) {
  if constexpr (is_random_variable<T>::value) {
    if constexpr (T::name == Name) {
      return std::tuple<>{};  // the intervened variable leaves the joint
    } else {
      auto d = substitute_distribution<Target>(t.distribution, r);
      using V = random_variable<T::name, decltype(d), typename T::shape_type>;
      V v(d, typename T::shape_type{});
      v.parameter = t.parameter;  // keeps a run-time size
      return std::tuple<V>{v};
    }
  } else {
    auto d = substitute_distribution<Target>(t.distribution, r);
    auto x = substitute<Target>(t.value, r);
    return std::tuple<observed<decltype(d), decltype(x)>>{{d, x}};
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

}  // namespace detail

/// The joint with random variable Name fixed to value (a number, or a data vector for a vector
/// variable: `do_<"theta">(j, data(v))`, which keeps a view of v).
template <fixed_string Name, class... Terms, class Value>
auto do_(const joint_t<Terms...>& j, const Value& value) {
  constexpr std::size_t index = detail::variable_index_v<Name, Terms...>;
  static_assert(index < sizeof...(Terms),
                "tyche::do_<name>(model, value) requires 'name' to be a random variable of the "
                "model");
  // What stands for the variable in every expression: its value expression.
  using V = std::tuple_element_t<(index < sizeof...(Terms) ? index : 0), std::tuple<Terms...>>;
  using Target = decltype(detail::as_node(std::declval<const V&>().value_expression()));
  const auto r = detail::as_node(value);
  auto terms = std::apply(
      [&](const auto&... t) { return std::tuple_cat(detail::intervene_term<Name, Target>(t, r)...); },
      j.terms);
  return std::apply([](const auto&... t) { return joint(t...); }, terms);
}

/// The model with random variable Name fixed to value.
template <fixed_string Name, class Joint, class Value>
auto do_(const model_t<Joint>& m, const Value& value) {
  return model(do_<Name>(m.joint(), value));
}

}  // namespace tyche
