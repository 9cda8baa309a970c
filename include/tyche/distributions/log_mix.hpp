// tyche/distributions/log_mix.hpp — log_mix(theta, lp1, lp2): the log density of a two-component
// mixture from the components' log densities (Stan's log_mix),
//   log_mix(θ, λ₁, λ₂) = log(θ e^λ₁ + (1 − θ) e^λ₂),   0 ≤ θ ≤ 1,
// elementwise for vector operands (sum the result for a vector of observations). Note that a
// family's log_prob(y) is already summed over y, so log_mix(θ, normal(m1, s).log_prob(data(y)),
// normal(m2, s).log_prob(data(y))) mixes the whole data set at once; for a mixture per
// observation, pass elementwise log densities written out (e.g. −½((data(y) − m1)/s)² − log s − …).
//
// Computed with the maximum m = max(λ₁, λ₂) = λ₂ + (d + |d|)/2, d = λ₁ − λ₂, factored out:
//   log_mix = λ₂ + (d + |d|)/2 + log(θ e^((d − |d|)/2) + (1 − θ) e^(−(d + |d|)/2)),
// so that the exponents are ≤ 0 (one of them exactly 0): nothing overflows, and the sum inside the
// log has no cancellation, for any difference λ₁ − λ₂ (the core has no max; |d| stands in for
// it). At θ = 0 or θ = 1 it stays finite (and correct) as long as the remaining component's
// e^(−|d|) does not underflow (|d| < 708). The gradient does not depend on the subgradient of
// |d| at d = 0 (the expression is invariant under the shift m). Not defined when λ₁ or λ₂ is
// infinite. θ is checked: compilation fails when its support has no point in [0, 1]; a θ that
// depends on no parameter (a number, data) must lie in [0, 1] or the call throws.
#pragma once
#include <tyche/config.hpp>
#include <tyche/core/operations.hpp>

namespace tyche {

/// log(θ e^lp1 + (1 − θ) e^lp2), without overflow: `sum(log_mix(theta, lp1_vector, lp2_vector))`.
template <detail::operand Theta, detail::operand Lp1, detail::operand Lp2>
  requires(expression<Theta> || expression<Lp1> || expression<Lp2>)
auto log_mix(const Theta& theta, const Lp1& lp1, const Lp2& lp2) {
  using T = detail::node_t<Theta>;
  static_assert(operand_support_t<T, domains::probability>::ok,
                "tyche::log_mix(theta, lp1, lp2): theta must be in [0, 1], but its support (spelled "
                "out in tyche::support_is<...> in this diagnostic) has no point in [0, 1]");
  const auto t = detail::as_node(theta);
  if constexpr (!depends_on_params_v<T>) {
    // θ known when the model is built (a number, data): every value must be in [0, 1].
    detail::check_argument<domains::probability>("log_mix(theta, lp1, lp2)", "theta", t);
  }
  const auto l2 = detail::as_node(lp2);
  const auto d = detail::as_node(lp1) - l2;
  const auto up = lit<1, 2> * (d + abs(d));    // max(d, 0)
  const auto down = lit<1, 2> * (d - abs(d));  // min(d, 0)
  return l2 + up + log(t * exp(down) + (lit<1> - t) * exp(-up));
}

}  // namespace tyche
