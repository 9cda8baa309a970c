// tyche/distributions/beta.hpp — beta(a, b).
//   log p(x | a, b) = log Γ(a + b) − log Γ(a) − log Γ(b) + (a − 1) log x + (b − 1) log(1 − x),
//   x ∈ (0, 1), a > 0, b > 0.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <random>
#include <tuple>

namespace tyche {

template <class A, class B>
struct beta_distribution : distribution<beta_distribution<A, B>> {
  static constexpr const char* family = "beta";
  A a;
  B b;
  auto transform() const { return transforms::interval<literal<0>, literal<1>>{}; }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(lgamma(a + b) - lgamma(a) - lgamma(b) + (a - lit<1>) * log(x) +
                         (b - lit<1>) * log1p(-x));
  }
  /// log P(X ≤ x) and log P(X > x), summed over x: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored observations.
  /// (I_x(a, b), the regularised incomplete beta function.)
  template <class X>
  auto log_cdf(const X& x) const {
    return detail::total(log_inc_beta(a, b, x));
  }
  template <class X>
  auto log_ccdf(const X& x) const {
    return detail::total(log1m_inc_beta(a, b, x));
  }
  auto arguments() const { return std::tuple{a, b}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<A, domains::positive>::ok,
                  "tyche::beta(a, b): a must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    static_assert(argument_support_t<B, domains::positive>::ok,
                  "tyche::beta(a, b): b must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("beta(a, b)", "a", a);
    detail::check_argument<domains::positive>("beta(a, b)", "b", b);
  }
  /// x / (x + y) for x ~ gamma(a, 1), y ~ gamma(b, 1).
  template <class G>
  static double draw(G& rng, double a, double b) {
    const double x = std::gamma_distribution<double>(a, 1.0)(rng);
    const double y = std::gamma_distribution<double>(b, 1.0)(rng);
    return x / (x + y);
  }
  static double mean(double a, double b) { return a / (a + b); }
  static double variance(double a, double b) { return a * b / ((a + b) * (a + b) * (a + b + 1)); }
  static const char* observation_problem(double v) {
    return v <= 0 || v >= 1 ? "is outside (0, 1) (support 0 < x < 1)" : nullptr;
  }
};

/// Name ~ beta(a, b), support (0, 1), sampled as logit Name.
template <fixed_string Name, detail::operand A, detail::operand B, shape_tag Shape = scalar_shape>
auto beta(const A& a, const B& b, Shape shape = {}) {
  return detail::make_named<Name, beta_distribution>(shape, a, b);
}
template <detail::operand A, detail::operand B>
auto beta(const A& a, const B& b) {
  return detail::make_distribution<beta_distribution>(a, b);
}

}  // namespace tyche
