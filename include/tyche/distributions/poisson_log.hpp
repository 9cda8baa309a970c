// tyche/distributions/poisson_log.hpp — poisson_log(alpha) = poisson(exp(alpha)), for
// observations only.
//   log p(y | α) = y α − e^α − log y!,   y ∈ {0, 1, 2, …}, α ∈ ℝ.
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

template <class Alpha>
struct poisson_log_distribution : distribution<poisson_log_distribution<Alpha>> {
  static constexpr const char* family = "poisson_log";
  Alpha alpha;
  template <class X>
  auto log_prob(const X& y) const {
    if constexpr (is_vector_v<Alpha>) {
      // A vector log rate (a linear predictor) enters once per element: y·α − e^α as one node.
      return detail::total(detail::make_binary<rules::poisson_log_term>(y, alpha) - lgamma(y + lit<1>));
    } else {
      // A scalar α: Σ (y α − e^α) reduces to α Σy − n e^α (compile/reduce_sum.hpp).
      return detail::total(y * alpha - exp(alpha) - lgamma(y + lit<1>));
    }
  }
  /// log P(Y ≤ y) and log P(Y > y) for counts y, summed over y: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored counts. (P(Y ≤ y) = Q(y + 1, e^α), the regularised upper
  /// incomplete gamma function.)
  template <class X>
  auto log_cdf(const X& y) const {
    return detail::total(log_gamma_q(y + lit<1>, exp(alpha)));
  }
  template <class X>
  auto log_ccdf(const X& y) const {
    return detail::total(log_gamma_p(y + lit<1>, exp(alpha)));
  }
  auto arguments() const { return std::tuple{alpha}; }
  template <class G>
  static double draw(G& rng, double a) {
    return static_cast<double>(std::poisson_distribution<long long>(std::exp(a))(rng));
  }
  static double mean(double a) { return std::exp(a); }
  static double variance(double a) { return std::exp(a); }
  static const char* observation_problem(double v) { return detail::count_problem(v); }
};

/// The distribution poisson_log(alpha): `poisson_log(a + b * x).observe(data(y))`.
template <detail::operand Alpha>
auto poisson_log(const Alpha& alpha) {
  return detail::make_distribution<poisson_log_distribution>(alpha);
}

TYCHE_OBSERVED_ONLY_FAMILY(poisson_log)

}  // namespace tyche
