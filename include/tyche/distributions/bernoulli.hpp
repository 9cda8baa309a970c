// tyche/distributions/bernoulli.hpp — bernoulli(p), for observations only.
//   log p(y | p) = y log p + (1 − y) log(1 − p),   y ∈ {0, 1}, 0 ≤ p ≤ 1.
// The data (y) must be 0 or 1: observe throws "... y[i] = v is not 0 or 1" otherwise. At p = 0 or
// p = 1 the term 0 · log 0 evaluates to NaN (not 0), as in the naive formula: use bernoulli_logit
// where p may reach the boundary.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <random>
#include <tuple>

namespace tyche {

template <class P>
struct bernoulli_distribution : distribution<bernoulli_distribution<P>> {
  static constexpr const char* family = "bernoulli";
  P p;
  template <class X>
  auto log_prob(const X& y) const {
    return detail::total(y * log(p) + (lit<1> - y) * log1p(-p));
  }
  /// log P(Y ≤ y) and log P(Y > y), summed over y: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored observations.
  /// P(Y ≤ 0) = 1 − p, P(Y ≤ 1) = 1; P(Y > 0) = p (and P(Y > 1) = 0, refused: lccdf_problem).
  template <class X>
  auto log_cdf(const X& y) const {
    return detail::total((lit<1> - y) * log1m(p));
  }
  template <class X>
  auto log_ccdf(const X& y) const {
    return detail::total((lit<1> - y) * log(p));
  }
  auto arguments() const { return std::tuple{p}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<P, domains::probability>::ok,
                  "tyche::bernoulli(p): p must be in [0, 1], but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside [0, 1]" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::probability>("bernoulli(p)", "p", p);
  }
  template <class G>
  static double draw(G& rng, double pr) { return std::bernoulli_distribution(pr)(rng) ? 1.0 : 0.0; }
  static double mean(double pr) { return pr; }
  static double variance(double pr) { return pr * (1.0 - pr); }
  static const char* observation_problem(double v) { return detail::binary_problem(v); }
  /// P(Y > 1) = 0: a right-censored observation at 1 has no probability (log_densities.hpp's lccdf).
  static const char* lccdf_problem(double v) {
    return v == 1 ? "is 1, the upper bound of the support, where P(Y > y) = 0 for every parameter value" : nullptr;
  }
};

/// The distribution bernoulli(p), to observe data: `bernoulli(p).observe(data(y))`.
template <detail::operand P>
auto bernoulli(const P& p) {
  return detail::make_distribution<bernoulli_distribution>(p);
}

TYCHE_OBSERVED_ONLY_FAMILY(bernoulli)

}  // namespace tyche
