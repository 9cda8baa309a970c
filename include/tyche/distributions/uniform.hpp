// tyche/distributions/uniform.hpp — uniform(a, b).
//   log p(x | a, b) = −log(b − a),   a < x < b.
// The support depends on the arguments: a named variable is sampled as logit((x − a)/(b − a)).
// b − a must be > 0 (checked from the types, else when the model is built). Observed values
// y are checked against a and b when the model is built where both are known then (numbers,
// data); where a bound depends on parameters, the observation's log density is −∞ where y is
// outside [a, b] (as Stan's uniform_lpdf), and so is a log_mix component's for any bounds. A bound the data imply (N ≥ max y for
// uniform(0, N).observe(y)) is best declared on the variable as well, e.g.
// flat<"N">(greater_than(max_y)) with its prior as target(pareto_lpdf(N, 10, 0.5)): without it,
// NUTS meets the edge of the posterior as divergences.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <random>
#include <tuple>

namespace tyche {

template <class A, class B>
struct uniform_distribution : distribution<uniform_distribution<A, B>> {
  static constexpr const char* family = "uniform";
  A a;
  B b;
  auto transform() const { return transforms::interval<A, B>{a, b}; }
  template <class X>
  auto log_prob(const X& x) const {
    // 0·x: the density does not depend on x inside (a, b), but x must occur in it, so that a
    // vector x counts −log(b − a) once per element and a model's log density without the
    // Jacobian still contains the variable's parameter (compile requires every parameter of
    // the layout to occur).
    return detail::total(lit<0> * x - log(b - a));
  }
  /// An observation's log density: log_prob(y), −∞ where y < a or y > b for bounds that depend
  /// on parameters (Always: for any bounds, as a mixture's component needs).
  template <bool Always = false, class X>
  auto observed_log_prob(const X& x) const {
    return detail::support_guard<X, B, Always>(detail::support_guard<X, A, Always>(log_prob(x), x - a), b - x);
  }
  template <class Y>
  void check_observed(const Y& y) const {
    detail::check_observed_bound(family, y, detail::as_node(a), "a", true);
    detail::check_observed_bound(family, y, detail::as_node(b), "b", false);
  }
  /// check_observed's checks, refusing also y = a for left censoring and y = b for right
  /// censoring where the bound is known (censored.hpp): probability 0 for every parameter value.
  template <class Y>
  void check_left_censored(const Y& y) const {
    detail::check_observed_bound(family, y, detail::as_node(a), "a", true, true);
    detail::check_observed_bound(family, y, detail::as_node(b), "b", false);
  }
  template <class Y>
  void check_right_censored(const Y& y) const {
    detail::check_observed_bound(family, y, detail::as_node(a), "a", true);
    detail::check_observed_bound(family, y, detail::as_node(b), "b", false, true);
  }
  /// log P(X ≤ x) and log P(X > x), summed over x: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored observations.
  /// log((x − a)/(b − a)) and log((b − x)/(b − a)); where a bound depends on parameters, x is
  /// first clamped to [a, b] (fmin, fmax: P(X ≤ x) is 0 below a and 1 above b), elsewhere
  /// check_observed refused an x outside.
  template <class X>
  auto log_cdf(const X& x) const {
    return detail::total(log(clamped(x) - a) - log(b - a));
  }
  template <class X>
  auto log_ccdf(const X& x) const {
    return detail::total(log(b - clamped(x)) - log(b - a));
  }
  template <class X>
  auto clamped(const X& x) const {
    using namespace detail;
    if constexpr (known_leaf_v<node_t<X>> && known_leaf_v<node_t<A>> && known_leaf_v<node_t<B>>) return as_node(x);
    else return fmin(fmax(x, a), b);
  }
  auto arguments() const { return std::tuple{a, b}; }
  /// b − a > 0. Read as a Line, b − a often proves it where a and b alone do not:
  /// uniform(mu − 1, mu + 1) has b − a = 0·mu + 2, support [2, 2].
  auto check_supports() const {
    using Width = decltype(b - a);
    static_assert(argument_support_t<Width, domains::positive>::ok,
                  "tyche::uniform(a, b): b - a must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("uniform(a, b)", "b - a", b - a);
  }
  template <class G>
  static double draw(G& rng, double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng); }
  static double mean(double a, double b) { return (a + b) / 2; }
  static double variance(double a, double b) { return (b - a) * (b - a) / 12; }
};

/// Name ~ uniform(a, b), support (a, b) (a and b may be expressions of other variables).
template <fixed_string Name, detail::operand A, detail::operand B, shape_tag Shape = scalar_shape>
auto uniform(const A& a, const B& b, Shape shape = {}) {
  return detail::make_named<Name, uniform_distribution>(shape, a, b);
}
template <detail::operand A, detail::operand B>
auto uniform(const A& a, const B& b) {
  return detail::make_distribution<uniform_distribution>(a, b);
}

}  // namespace tyche
