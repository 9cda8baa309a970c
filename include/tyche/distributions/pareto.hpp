// tyche/distributions/pareto.hpp — pareto(y_min, alpha): scale y_min, shape α (as in Stan).
//   log p(x | y_min, α) = log α + α log y_min − (α + 1) log x,   x ≥ y_min, y_min > 0, α > 0.
// The support depends on an argument: a named variable is sampled as log(x − y_min) (y_min may
// be an expression of other variables). Observed values are checked to be > 0, and against
// y_min when the model is built where y_min is known then; where y_min depends on parameters,
// the observation's log density is −∞ below it (as Stan's pareto_lpdf).
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <tuple>

namespace tyche {

template <class YMin, class Alpha>
struct pareto_distribution : distribution<pareto_distribution<YMin, Alpha>> {
  static constexpr const char* family = "pareto";
  YMin y_min;
  Alpha alpha;
  auto transform() const { return transforms::lower_bound<YMin>{y_min}; }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(log(alpha) + alpha * log(y_min) - (alpha + lit<1>) * log(x));
  }
  /// An observation's log density: log_prob(y), −∞ where y < y_min for a y_min that depends on
  /// parameters.
  template <bool Always = false, class X>
  auto observed_log_prob(const X& x) const {
    return detail::support_guard<X, YMin, Always>(log_prob(x), x - y_min);
  }
  template <class Y>
  void check_observed(const Y& y) const {
    detail::check_observed_bound(family, y, detail::as_node(y_min), "y_min", true);
  }
  /// check_observed's check, refusing also y = y_min for left censoring where it is known
  /// (censored.hpp): P(Y ≤ y_min) = 0 for every parameter value.
  template <class Y>
  void check_left_censored(const Y& y) const {
    detail::check_observed_bound(family, y, detail::as_node(y_min), "y_min", true, true);
  }
  /// log P(X ≤ x) and log P(X > x), summed over x: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored observations.
  /// log P(X > x) = α log(y_min / x), and 0 below y_min (fmin, where y_min depends on parameters;
  /// else check_observed refused such an x); log P(X ≤ x) = log(1 − P(X > x)).
  template <class X>
  auto log_cdf(const X& x) const {
    return detail::total(log1m_exp(upper_tail(x)));
  }
  template <class X>
  auto log_ccdf(const X& x) const {
    return detail::total(upper_tail(x));
  }
  template <class X>
  auto upper_tail(const X& x) const {
    using namespace detail;
    if constexpr (known_leaf_v<node_t<X>> && known_leaf_v<node_t<YMin>>) return alpha * log(y_min / x);
    else return alpha * fmin(log(y_min / x), lit<0>);
  }
  auto arguments() const { return std::tuple{y_min, alpha}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<YMin, domains::positive>::ok,
                  "tyche::pareto(y_min, alpha): y_min must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    static_assert(argument_support_t<Alpha, domains::positive>::ok,
                  "tyche::pareto(y_min, alpha): alpha must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("pareto(y_min, alpha)", "y_min", y_min);
    detail::check_argument<domains::positive>("pareto(y_min, alpha)", "alpha", alpha);
  }
  /// By inversion of the cdf 1 − (y_min/x)^α: y_min u^{−1/α}, u ~ uniform(0, 1).
  template <class G>
  static double draw(G& rng, double y0, double a) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    double u = unit(rng);
    while (u <= 0.0 || u >= 1.0) u = unit(rng);
    return y0 * std::exp(-std::log(u) / a);
  }
  /// α y_min/(α − 1) for α > 1, infinite otherwise.
  static double mean(double y0, double a) {
    return a > 1 ? a * y0 / (a - 1) : std::numeric_limits<double>::infinity();
  }
  /// y_min² α/((α − 1)²(α − 2)) for α > 2, infinite otherwise.
  static double variance(double y0, double a) {
    return a > 2 ? y0 * y0 * a / ((a - 1) * (a - 1) * (a - 2)) : std::numeric_limits<double>::infinity();
  }
  static const char* observation_problem(double v) { return detail::positive_problem(v); }
};

/// Name ~ pareto(y_min, alpha), support [y_min, ∞), sampled as log(Name − y_min).
template <fixed_string Name, detail::operand YMin, detail::operand Alpha, shape_tag Shape = scalar_shape>
auto pareto(const YMin& y_min, const Alpha& alpha, Shape shape = {}) {
  return detail::make_named<Name, pareto_distribution>(shape, y_min, alpha);
}
template <detail::operand YMin, detail::operand Alpha>
auto pareto(const YMin& y_min, const Alpha& alpha) {
  return detail::make_distribution<pareto_distribution>(y_min, alpha);
}

}  // namespace tyche
