// tyche/distributions/pareto_type_2.hpp — pareto_type_2(mu, lambda, alpha), as in Stan.
// Location μ, scale λ, shape α: the Lomax distribution shifted by μ.
//   log p(x | μ, λ, α) = log α − log λ − (α + 1) log(1 + (x − μ)/λ),   x ≥ μ, λ > 0, α > 0.
// The support depends on an argument: a named variable is sampled as log(x − μ) (μ may be an
// expression of other variables). Observed values are checked against μ when the model is
// built where μ is known then; where μ depends on parameters, the observation's log density is
// −∞ below it (as Stan's pareto_type_2_lpdf).
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <tuple>

namespace tyche {

template <class Mu, class Lambda, class Alpha>
struct pareto_type_2_distribution : distribution<pareto_type_2_distribution<Mu, Lambda, Alpha>> {
  static constexpr const char* family = "pareto_type_2";
  Mu mu;
  Lambda lambda;
  Alpha alpha;
  auto transform() const { return transforms::lower_bound<Mu>{mu}; }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(log(alpha) - log(lambda) - (alpha + lit<1>) * log1p((x - mu) / lambda));
  }
  /// An observation's log density: log_prob(y), −∞ where y < μ for a μ that depends on parameters.
  template <bool Always = false, class X>
  auto observed_log_prob(const X& x) const {
    return detail::support_guard<X, Mu, Always>(log_prob(x), x - mu);
  }
  template <class Y>
  void check_observed(const Y& y) const {
    detail::check_observed_bound(family, y, detail::as_node(mu), "mu", true);
  }
  /// check_observed's check, refusing also y = mu for left censoring where it is known
  /// (censored.hpp): P(Y ≤ mu) = 0 for every parameter value.
  template <class Y>
  void check_left_censored(const Y& y) const {
    detail::check_observed_bound(family, y, detail::as_node(mu), "mu", true, true);
  }
  /// log P(X ≤ x) and log P(X > x), summed over x: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored observations.
  /// log P(X > x) = −α log(1 + (x − μ)/λ), and 0 below μ (fmax, where μ depends on parameters;
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
    if constexpr (known_leaf_v<node_t<X>> && known_leaf_v<node_t<Mu>>) return -(alpha * log1p((x - mu) / lambda));
    else return -(alpha * log1p(fmax(x - mu, lit<0>) / lambda));
  }
  auto arguments() const { return std::tuple{mu, lambda, alpha}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<Lambda, domains::positive>::ok,
                  "tyche::pareto_type_2(mu, lambda, alpha): lambda must be > 0, but its support "
                  "(spelled out in tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    static_assert(argument_support_t<Alpha, domains::positive>::ok,
                  "tyche::pareto_type_2(mu, lambda, alpha): alpha must be > 0, but its support "
                  "(spelled out in tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("pareto_type_2(mu, lambda, alpha)", "lambda", lambda);
    detail::check_argument<domains::positive>("pareto_type_2(mu, lambda, alpha)", "alpha", alpha);
  }
  /// By inversion of the cdf 1 − (1 + (x − μ)/λ)^{−α}: μ + λ (u^{−1/α} − 1), u ~ uniform(0, 1).
  template <class G>
  static double draw(G& rng, double m, double l, double a) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    double u = unit(rng);
    while (u <= 0.0 || u >= 1.0) u = unit(rng);
    return m + l * std::expm1(-std::log(u) / a);
  }
  /// μ + λ/(α − 1) for α > 1, infinite otherwise.
  static double mean(double m, double l, double a) {
    return a > 1 ? m + l / (a - 1) : std::numeric_limits<double>::infinity();
  }
  /// λ² α/((α − 1)²(α − 2)) for α > 2, infinite otherwise.
  static double variance(double, double l, double a) {
    return a > 2 ? l * l * a / ((a - 1) * (a - 1) * (a - 2)) : std::numeric_limits<double>::infinity();
  }
};

/// Name ~ pareto_type_2(mu, lambda, alpha), support [mu, ∞), sampled as log(Name − mu).
template <fixed_string Name, detail::operand Mu, detail::operand Lambda, detail::operand Alpha,
          shape_tag Shape = scalar_shape>
auto pareto_type_2(const Mu& mu, const Lambda& lambda, const Alpha& alpha, Shape shape = {}) {
  return detail::make_named<Name, pareto_type_2_distribution>(shape, mu, lambda, alpha);
}
template <detail::operand Mu, detail::operand Lambda, detail::operand Alpha>
auto pareto_type_2(const Mu& mu, const Lambda& lambda, const Alpha& alpha) {
  return detail::make_distribution<pareto_type_2_distribution>(mu, lambda, alpha);
}

}  // namespace tyche
