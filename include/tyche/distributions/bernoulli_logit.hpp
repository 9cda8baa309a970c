// tyche/distributions/bernoulli_logit.hpp — bernoulli_logit(alpha) = bernoulli(logistic(alpha)),
// for observations only.
//   log p(y | α) = y log σ(α) + (1 − y) log(1 − σ(α)),   y ∈ {0, 1}, α ∈ ℝ,
// computed as y·α − log(1 + e^α) with a stable softplus when α is a vector (one transcendental
// per element), with log_logistic and log1m_logistic for a scalar α (whose sums over y the
// partial evaluation reduces); neither overflows nor loses precision for large |α|. The data (y) must be 0 or 1: observe throws "... y[i] = v is not 0 or 1" otherwise.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <cmath>
#include <random>
#include <tuple>

namespace tyche {

template <class Alpha>
struct bernoulli_logit_distribution : distribution<bernoulli_logit_distribution<Alpha>> {
  static constexpr const char* family = "bernoulli_logit";
  Alpha alpha;
  template <class X>
  auto log_prob(const X& y) const {
    if constexpr (is_vector_v<Alpha>) {
      // A vector logit (a linear predictor): y·α − log(1 + e^α) as one node, one softplus.
      return detail::total(detail::make_binary<rules::bernoulli_logit_term>(y, alpha));
    } else {
      return detail::total(y * log_logistic(alpha) + (lit<1> - y) * log1m_logistic(alpha));
    }
  }
  /// log P(Y ≤ y) and log P(Y > y), summed over y: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored observations.
  /// As bernoulli's with p = logistic(α): P(Y ≤ 0) = 1 − p, P(Y > 0) = p.
  template <class X>
  auto log_cdf(const X& y) const {
    return detail::total((lit<1> - y) * log1m_logistic(alpha));
  }
  template <class X>
  auto log_ccdf(const X& y) const {
    return detail::total((lit<1> - y) * log_logistic(alpha));
  }
  auto arguments() const { return std::tuple{alpha}; }
  static double probability(double a) { return 1.0 / (1.0 + std::exp(-a)); }
  template <class G>
  static double draw(G& rng, double a) { return std::bernoulli_distribution(probability(a))(rng) ? 1.0 : 0.0; }
  static double mean(double a) { return probability(a); }
  static double variance(double a) { return probability(a) * probability(-a); }
  static const char* observation_problem(double v) { return detail::binary_problem(v); }
  /// P(Y > 1) = 0: a right-censored observation at 1 has no probability (log_densities.hpp's lccdf).
  static const char* lccdf_problem(double v) {
    return v == 1 ? "is 1, the upper bound of the support, where P(Y > y) = 0 for every parameter value" : nullptr;
  }
};

/// The distribution bernoulli_logit(alpha): `bernoulli_logit(a + b * x).observe(data(y))`.
template <detail::operand Alpha>
auto bernoulli_logit(const Alpha& alpha) {
  return detail::make_distribution<bernoulli_logit_distribution>(alpha);
}

TYCHE_OBSERVED_ONLY_FAMILY(bernoulli_logit)

}  // namespace tyche
