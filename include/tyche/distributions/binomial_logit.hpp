// tyche/distributions/binomial_logit.hpp — binomial_logit(n, alpha) = binomial(n, logistic(alpha)),
// for observations only.
//   log p(y | n, α) = log C(n, y) + y log σ(α) + (n − y) log(1 − σ(α))
//                   = log C(n, y) + y·α + n·log(1 − σ(α)),   y ∈ {0, …, n}, α ∈ ℝ,
// with log1m_logistic (stable for large |α|). n is data, as in binomial: log C(n, y)
// and n − y are folded when the model is built. Data checks as binomial's (binomial.hpp).
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/binomial.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <cmath>
#include <random>
#include <tuple>

namespace tyche {

template <class N, class Alpha>
struct binomial_logit_distribution : distribution<binomial_logit_distribution<N, Alpha>> {
  static constexpr const char* family = "binomial_logit";
  N n;
  Alpha alpha;
  template <class X>
  auto log_prob(const X& y) const {
    // y log σ(α) + (n − y) log(1 − σ(α)) = y·α + n·log(1 − σ(α)), since log σ(α) = α + log(1 − σ(α)):
    // one log1m_logistic per element, and y·α linear in α, so that Σ y·(s + Xv) becomes
    // s·Σy + (Xᵀy)·v (compile/reduce_sum.hpp) and the loop reads a linear predictor's matvec once
    // (streamed: one read of X per gradient).
    return detail::total(y * alpha + n * log1m_logistic(alpha) +
                         (lgamma(n + lit<1>) - lgamma(y + lit<1>) - lgamma(n - y + lit<1>)));
  }
  /// log P(Y ≤ y) and log P(Y > y) for counts y, summed over y: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored counts.
  /// (P(Y ≤ y) = I_{1−p}(n − y, y + 1), 1 − p = logistic(−α); 1 at y = n.)
  template <class X>
  auto log_cdf(const X& y) const {
    return detail::total(detail::log_inc_beta_of<false>(n - y, y + lit<1>, logistic(-alpha), logistic(alpha), "binomial_logit_lcdf"));
  }
  template <class X>
  auto log_ccdf(const X& y) const {
    return detail::total(detail::log_inc_beta_of<true>(n - y, y + lit<1>, logistic(-alpha), logistic(alpha), "binomial_logit_lccdf"));
  }
  auto arguments() const { return std::tuple{n, alpha}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<N, domains::nonnegative>::ok,
                  "tyche::binomial_logit(n, alpha): n must be >= 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside [0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::nonnegative>("binomial_logit(n, alpha)", "n", n);
  }
  /// Checks y (non-negative integers, see distribution::observe), then n and y ≤ n.
  template <class Y>
  void check_observed(const Y& y) const {
    detail::check_trials(family, y, n);
  }
  /// check_observed's checks and, for right censoring (censored.hpp), y < n.
  template <class Y>
  void check_right_censored(const Y& y) const {
    detail::check_trials(family, y, n, true);
  }
  static double probability(double a) { return 1.0 / (1.0 + std::exp(-a)); }
  template <class G>
  static double draw(G& rng, double trials, double a) {
    return static_cast<double>(
        std::binomial_distribution<long long>(std::llround(trials), probability(a))(rng));
  }
  static double mean(double trials, double a) { return trials * probability(a); }
  static double variance(double trials, double a) { return trials * probability(a) * probability(-a); }
  static const char* observation_problem(double v) { return detail::count_problem(v); }
};

/// The distribution binomial_logit(n, alpha): `binomial_logit(data(trials), a + b * x).observe(data(y))`.
template <detail::operand N, detail::operand Alpha>
auto binomial_logit(const N& n, const Alpha& alpha) {
  return detail::make_distribution<binomial_logit_distribution>(n, alpha);
}

TYCHE_OBSERVED_ONLY_FAMILY(binomial_logit)

}  // namespace tyche
