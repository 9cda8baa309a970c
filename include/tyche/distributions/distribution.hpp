// tyche/distributions/distribution.hpp — the base class of every distribution family
// (distribution<Derived>: observe(data) makes a likelihood term, with the data checked against
// the family's support), the likelihood term itself (observed<Dist, X>), and the rebuilding of a
// distribution with other arguments (do_ substitutes a value into the arguments).
#pragma once
#include <tyche/concepts.hpp>
#include <tyche/config.hpp>
#include <tyche/core/expr.hpp>
#include <tyche/core/nodes.hpp>
#include <tyche/scalar/format.hpp>

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

/// For a discrete family (observed only): family<"name">(...) exists only to say why there is no
/// such random variable, instead of a failed deduction of "name" as a type.
#define TYCHE_OBSERVED_ONLY_FAMILY(family)                                                             \
  template <::tyche::fixed_string Name, class... Arguments>                                          \
  auto family(const Arguments&...) {                                                                  \
    static_assert(!::tyche::detail::is_named_v<decltype(Name)>,                                       \
                  "tyche: " #family "<\"name\">(...): a named random variable needs a continuous "   \
                  "family; " #family " is discrete and can only be observed: " #family                \
                  "(...).observe(data(y))");                                                           \
    return 0;                                                                                          \
  }

namespace tyche {

namespace detail {
/// True for every name (a dependent false for TYCHE_OBSERVED_ONLY_FAMILY's static_assert).
template <class>
inline constexpr bool is_named_v = true;
/// What observe(y) takes: an expression (data(y), a parameter's expression), a random variable
/// or a number; distribution::observe's static_assert says what is wrong with anything else.
template <class X>
inline constexpr bool observable_v = expression<X> || wraps_expression<X> || arithmetic<X>;
}  // namespace detail

// ---- the base class and the likelihood term ---------------------------------------------------

template <class Dist, class X>
struct observed;

/// CRTP base of every distribution: observe(data) makes a likelihood term.
template <class Derived>
struct distribution {
  const Derived& derived() const { return static_cast<const Derived&>(*this); }

  /// The likelihood term log p(x | arguments) for observed x (data, usually). Data values are
  /// checked now: a value outside the family's support throws, naming the index and value.
  template <class X>
  auto observe(const X& x) const {
    if constexpr (!distribution_family<Derived>) {
      static_assert(distribution_family<Derived>,
                    "tyche: observe(x) needs a distribution family: a struct deriving from "
                    "tyche::distribution<itself> with `family` (its name) and `arguments()` "
                    "(tyche/concepts.hpp, distribution_family)");
      return 0;
    } else if constexpr (!detail::observable_v<X>) {
      static_assert(detail::observable_v<X>,
                    "tyche: observe(y) takes data wrapped in tyche::data -- .observe(data(y)) for a "
                    "std::vector<double>, std::array or std::span (a view: y must outlive the model) -- "
                    "a number, or an expression; y here is none of these");
      return observed<Derived, data_vector<>>{derived(), data_vector<>{}};  // no further errors
    } else {
      using N = detail::node_t<X>;
      const N node = detail::as_node(x);
      if constexpr (kind_of<N> == node_kind::data_vector) {
        for (std::size_t i = 0; i < node.size(); ++i) check_observation(node.ptr[i], i);
      } else if constexpr (kind_of<N> == node_kind::constant) {
        check_observation(node.value, 0);
      }
      // The family's own checks of y: a support bounded by an argument (uniform, pareto), trials
      // (binomial), categories (ordered_logistic), a matrix (wishart) — where the values are known.
      if constexpr (requires { derived().check_observed(node); }) derived().check_observed(node);
      // A family that reads a setting from y (multinomial's trials) observes as a copy holding it.
      if constexpr (requires { derived().observing(node); })
        return observed<Derived, N>{derived().observing(node), node};
      else
        return observed<Derived, N>{derived(), node};
    }
  }

 private:
  void check_observation(double v, std::size_t i) const {
    const char* problem = nullptr;
    if (!std::isfinite(v)) problem = "is not finite";
    else if constexpr (requires { Derived::observation_problem(v); }) problem = Derived::observation_problem(v);
    if (problem)
      throw std::invalid_argument(std::string("tyche::") + Derived::family + "(...).observe(y): y[" +
                                  std::to_string(i + 1) + "] = " + tyche::detail::format_number(v) + " " +
                                  problem + " (indices count from 1)");
  }
};

namespace detail {
/// Dist<A...> with its arguments replaced: Dist<B...>{{}, b...}.
template <class Dist>
struct rebuild_distribution;
template <template <class...> class D, class... A>
struct rebuild_distribution<D<A...>> {
  template <class... B>
  static auto make(const B&... b) {
    return D<B...>{{}, b...};
  }
};

/// Distribution d with its arguments (in the order of d.arguments()) replaced by b...: through
/// d.with_arguments(b...) when d holds more than its arguments (a matrix's order, a factored
/// covariance, the family under a constraint), else by rebuilding Dist<B...>.
template <class Dist, class... B>
auto with_arguments(const Dist& d, const B&... b) {
  if constexpr (requires { d.with_arguments(b...); }) return d.with_arguments(b...);
  else return rebuild_distribution<Dist>::make(b...);
}
}  // namespace detail

/// A likelihood term: distribution Dist observed at x.
template <class Dist, class X>
struct observed {
  Dist distribution;
  X value;
  /// log p(value | arguments); for a family whose support is bounded by an argument, −∞ where a
  /// parameter value leaves the observation outside it (observed_log_prob).
  auto log_density() const {
    if constexpr (requires { distribution.observed_log_prob(value); }) return distribution.observed_log_prob(value);
    else return distribution.log_prob(value);
  }
};

}  // namespace tyche
