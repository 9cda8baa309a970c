// tyche/distributions/exponential.hpp — exponential(lambda), lambda the rate.
//   log p(x | λ) = log λ − λ x,   x ≥ 0, λ > 0.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <random>
#include <tuple>

namespace tyche {

template <class Lambda>
struct exponential_distribution : distribution<exponential_distribution<Lambda>> {
  static constexpr const char* family = "exponential";
  Lambda lambda;
  auto transform() const { return transforms::lower_bound<literal<0>>{}; }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(log(lambda) - lambda * x);
  }
  /// log P(X ≤ x) and log P(X > x), summed over x: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored observations.
  template <class X>
  auto log_cdf(const X& x) const {
    return detail::total(log1m_exp(-(lambda * x)));
  }
  template <class X>
  auto log_ccdf(const X& x) const {
    return detail::total(-(lambda * x));
  }
  auto arguments() const { return std::tuple{lambda}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<Lambda, domains::positive>::ok,
                  "tyche::exponential(lambda): lambda must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("exponential(lambda)", "lambda", lambda);
  }
  template <class G>
  static double draw(G& rng, double l) { return std::exponential_distribution<double>(l)(rng); }
  static double mean(double l) { return 1.0 / l; }
  static double variance(double l) { return 1.0 / (l * l); }
  static const char* observation_problem(double v) { return detail::nonnegative_problem(v); }
  /// P(X ≤ 0) = 0: a left-censored observation at 0 has no probability (log_densities.hpp's lcdf).
  static const char* lcdf_problem(double v) {
    return v == 0 ? "is 0, the lower bound of the support, where P(Y <= y) = 0 for every parameter value" : nullptr;
  }
};

/// Name ~ exponential(lambda) (rate lambda), support (0, ∞), sampled as log Name.
template <fixed_string Name, detail::operand Lambda, shape_tag Shape = scalar_shape>
auto exponential(const Lambda& lambda, Shape shape = {}) {
  return detail::make_named<Name, exponential_distribution>(shape, lambda);
}
template <detail::operand Lambda>
auto exponential(const Lambda& lambda) {
  return detail::make_distribution<exponential_distribution>(lambda);
}

}  // namespace tyche
