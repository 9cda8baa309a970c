// tyche/distributions/random_variable.hpp — named random variables: parameters with a prior,
// made by a distribution's named form (`normal<"mu">(0.0, 5.0)`), of a shape (scalar_shape,
// shape<N>, shape_of(n)). A random variable is used in expressions as its value: the transform
// (chosen from the distribution's support) of an unconstrained parameter. It lives beside the
// distributions that make it; model/ gathers random variables and likelihood terms into a
// joint density.
#pragma once
#include <tyche/concepts.hpp>
#include <tyche/config.hpp>
#include <tyche/core/expr.hpp>
#include <tyche/core/leaves.hpp>
#include <tyche/core/meta.hpp>
#include <tyche/operations/functions.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace tyche {

// ---- shapes ---------------------------------------------------------------------------------

struct scalar_shape {};
/// A vector of N values, N fixed at compile time: `std_normal<"z">(shape<8>)`.
template <std::size_t N>
struct static_shape {
  static constexpr std::size_t size = N;
};
template <std::size_t N>
inline constexpr static_shape<N> shape{};
/// A vector whose size is given at run time: `std_normal<"z">(shape_of(n))`.
struct dynamic_shape {
  std::size_t size;
};
inline dynamic_shape shape_of(std::size_t n) { return {n}; }

template <class S>
concept shape_tag = std::is_same_v<S, scalar_shape> || std::is_same_v<S, dynamic_shape> ||
                    requires { S::size; };

namespace detail {
// Specialised on the shape alone: nvcc's front end does not match a partial specialisation
// that deduces a class-type template argument (the name) beside another argument.
template <class Shape>
struct param_maker;
template <>
struct param_maker<scalar_shape> {
  template <fixed_string Name>
  using type = param<Name>;
  template <class P>
  static P make(scalar_shape) { return {}; }
};
template <std::size_t N>
struct param_maker<static_shape<N>> {
  template <fixed_string Name>
  using type = vector_param<Name, N>;
  template <class P>
  static P make(static_shape<N>) { return {}; }
};
template <>
struct param_maker<dynamic_shape> {
  template <fixed_string Name>
  using type = vector_param<Name>;
  template <class P>
  static P make(dynamic_shape s) { return P(s.size); }
};
template <fixed_string Name, class Shape>
struct param_for {
  using type = typename param_maker<Shape>::template type<Name>;
  static type make(Shape s) { return param_maker<Shape>::template make<type>(s); }
};
}  // namespace detail

// ---- random variables ---------------------------------------------------------------------------

/// A named random variable: a parameter with a prior. In expressions it is its value.
template <fixed_string Name, class Dist, class Shape>
struct random_variable : expr<random_variable<Name, Dist, Shape>> {
  static_assert(continuous_family<Dist>,
                "tyche: a named random variable needs a continuous family as its distribution: a "
                "struct with `family`, `arguments()`, `log_prob(x)` and `transform()` (the bijection "
                "onto its support; tyche/concepts.hpp, continuous_family). Discrete families "
                "(poisson, bernoulli, ...) can only be observed");
  static constexpr auto name = Name;
  static constexpr bool is_named_random_variable = true;  // what detail::is_random_variable reads
  using distribution_type = Dist;
  using shape_type = Shape;
  using param_type = typename detail::param_for<Name, Shape>::type;

  Dist distribution;
  param_type parameter;
  static_assert(transform_of<decltype(std::declval<const Dist&>().transform()), param_type>,
                "tyche: a named random variable's transform (its family's transform()) must have "
                "`name`, `constrain(u)` and `log_jacobian(u)` for the unconstrained parameter u "
                "(tyche/concepts.hpp, transform_of)");

  random_variable(Dist d, Shape s)
      : distribution(d), parameter(detail::param_for<Name, Shape>::make(s)) {}

  /// The transform from the unconstrained line to the distribution's support.
  auto transform() const { return distribution.transform(); }
  /// The variable's value: transform(parameter), a core expression.
  auto value_expression() const { return transform().constrain(parameter); }
  /// log p(value | arguments), summed over the elements of a vector variable.
  auto log_prior() const { return distribution.log_prob(value_expression()); }
  /// log |d value / d parameter|, summed over the elements.
  auto log_jacobian() const { return transform().log_jacobian(parameter); }
  /// Element k (0-based) of a vector variable: `theta[0]` is Stan's theta[1].
  auto operator[](std::size_t k) const { return at(value_expression(), k); }
  /// Number of scalar parameters.
  std::size_t size() const {
    if constexpr (std::is_same_v<Shape, scalar_shape>) return 1;
    else return parameter.size();
  }
};

namespace detail {
/// Builds random_variable<Name, Dist, Shape>. With no shape given and a vector argument, the
/// variable takes the argument's shape.
template <fixed_string Name, class Dist, class Shape>
auto make_random_variable(const Dist& d, Shape s) {
  return random_variable<Name, Dist, Shape>(d, s);
}
}  // namespace detail

/// The named random variable Name with distribution d (of the given shape; a scalar by
/// default): `named<"mu">(normal(0.0, 5.0))` is `normal<"mu">(0.0, 5.0)`. The way to give a
/// family of your own (tyche/concepts.hpp, continuous_family) a named variable.
template <fixed_string Name, class Dist, shape_tag Shape = scalar_shape>
auto named(const Dist& d, Shape shape = {}) {
  if constexpr (!continuous_family<Dist>) {
    static_assert(continuous_family<Dist>,
                  "tyche::named<\"name\">(d) requires d to be a distribution of a continuous family: "
                  "a struct with `family`, `arguments()`, `log_prob(x)` and `transform()` "
                  "(tyche/concepts.hpp, continuous_family), e.g. tyche::normal(0.0, 1.0); discrete "
                  "families can only be observed");
    return 0;
  } else {
    return detail::make_random_variable<Name>(d, shape);
  }
}

}  // namespace tyche
