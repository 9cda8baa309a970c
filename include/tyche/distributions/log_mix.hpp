// tyche/distributions/log_mix.hpp — log_mix(theta, lp1, lp2): the log density of a two-component
// mixture from the components' log densities (Stan's log_mix),
//   log_mix(θ, λ₁, λ₂) = log(θ e^λ₁ + (1 − θ) e^λ₂),   0 ≤ θ ≤ 1,
// elementwise for vector operands (sum the result for a vector of observations): θ, λ₁ and λ₂
// may each be a scalar or a vector of the common size, a scalar standing for every element
// (a zero-inflated Poisson's zeros by hand: log_mix(logistic(g0 + g1 * data(z0)), 0.0,
// -exp(a0 + a1 * data(x0))), θ and λ₂ per observation, λ₁ = log 1; ## inflated's
// zero_inflated(poisson(lambda), theta) does the whole model). To mix each
// observation of a vector y separately, observe the mixture of two distributions (## mixture
// below): log_mix(θ, normal(m1, s), normal(m2, s)).observe(data(y)); or pass elementwise log
// densities, target(sum(log_mix(θ, pointwise_log_density(normal(m1, s), data(y)),
// pointwise_log_density(normal(m2, s), data(y))))). A family's log_prob(y) is summed over y, so
// log_mix(θ, normal(m1, s).log_prob(data(y)), …) would mix the whole data set at once.
//
// Computed as log_add_exp(log θ + λ₁, log(1 − θ) + λ₂) (rules::log_add_exp: max(a, b) +
// log1p(e^−|a − b|)): per element one exp and one log1p, nothing overflows, and log θ and
// log(1 − θ) of a scalar θ are computed once, outside the loop over observations. For θ =
// logistic(u) (a beta or uniform(0, 1) variable) they are log_logistic(u) and log1m_logistic(u),
// finite for every u. At θ = 0 (θ = 1) the result is exactly λ₂ (λ₁). Not defined when λ₁ and λ₂
// are both −∞.
// θ is checked as a distribution's argument: compilation fails when its support, known from the
// types, is not inside [0, 1], and the call throws when its support with data and constants read
// is not (an unconstrained variable, 2.0 + exp(u), data outside [0, 1]). A θ inside [0, 1] by
// construction that the interval arithmetic cannot follow: assume_probability(θ).
#pragma once
#include <tyche/config.hpp>
#include <tyche/operations/functions.hpp>

namespace tyche {

/// log(θ e^lp1 + (1 − θ) e^lp2), without overflow: `sum(log_mix(theta, lp1_vector, lp2_vector))`.
template <detail::operand Theta, detail::operand Lp1, detail::operand Lp2>
  requires(expression<Theta> || expression<Lp1> || expression<Lp2>)
auto log_mix(const Theta& theta, const Lp1& lp1, const Lp2& lp2) {
  using T = detail::node_t<Theta>;
  static_assert(argument_support_t<T, domains::probability>::ok,
                "tyche::log_mix(theta, lp1, lp2): theta must be in [0, 1], but its support (spelled "
                "out in tyche::support_is<...> in this diagnostic) is not inside [0, 1]" TYCHE_SUPPORT_HINT);
  const auto t = detail::as_node(theta);
  // θ's support with its data and constants read (2.0 + exp(u): (2, inf); an unconstrained
  // variable: (-inf, inf)) must be inside [0, 1], as a distribution's argument must be inside its
  // domain: outside it the log density is NaN, which the sampler could only report as a term
  // that is not finite.
  detail::check_argument<domains::probability>("log_mix(theta, lp1, lp2)", "theta", t);
  return log_add_exp(log(t) + detail::as_node(lp1), log1m(t) + detail::as_node(lp2));
}

}  // namespace tyche
