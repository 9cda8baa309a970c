// tyche/distributions/poisson.hpp — poisson(lambda), for observations only.
//   log p(y | λ) = y log λ − λ − log y!,   y ∈ {0, 1, 2, …}, λ > 0.
// log y! = lgamma(y + 1) depends on the data only: it is folded when the model is built. The data
// must be non-negative integer counts: observe throws "... y[i] = v is not a non-negative
// integer count" otherwise.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <cmath>
#include <random>
#include <tuple>

namespace tyche {

template <class Lambda>
struct poisson_distribution : distribution<poisson_distribution<Lambda>> {
  static constexpr const char* family = "poisson";
  Lambda lambda;
  template <class X>
  auto log_prob(const X& y) const {
    return detail::total(y * log(lambda) - lambda - lgamma(y + lit<1>));
  }
  /// log P(Y ≤ y) and log P(Y > y) for counts y, summed over y: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored counts. (P(Y ≤ y) = Q(y + 1, λ), the regularised upper
  /// incomplete gamma function.)
  template <class X>
  auto log_cdf(const X& y) const {
    return detail::total(log_gamma_q(y + lit<1>, lambda));
  }
  template <class X>
  auto log_ccdf(const X& y) const {
    return detail::total(log_gamma_p(y + lit<1>, lambda));
  }
  auto arguments() const { return std::tuple{lambda}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<Lambda, domains::positive>::ok,
                  "tyche::poisson(lambda): lambda must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("poisson(lambda)", "lambda", lambda);
  }
  template <class G>
  static double draw(G& rng, double l) {
    return static_cast<double>(std::poisson_distribution<long long>(l)(rng));
  }
  static double mean(double l) { return l; }
  static double variance(double l) { return l; }
  static const char* observation_problem(double v) { return detail::count_problem(v); }
};

/// The distribution poisson(lambda), to observe counts: `poisson(lambda).observe(data(y))`.
template <detail::operand Lambda>
auto poisson(const Lambda& lambda) {
  return detail::make_distribution<poisson_distribution>(lambda);
}

TYCHE_OBSERVED_ONLY_FAMILY(poisson)

}  // namespace tyche
