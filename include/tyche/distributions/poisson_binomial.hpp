// tyche/distributions/poisson_binomial.hpp — poisson_binomial(theta), for observations only.
//   P(Y = y | θ) = Σ_{A ⊆ {1..N}, |A| = y} Π_{j∈A} θⱼ Π_{j∉A} (1 − θⱼ),   y ∈ {0, …, N},
// the number of successes in N independent trials with probabilities θ₁ … θ_N (Stan's
// poisson_binomial; binomial(N, p) when every θⱼ = p). θ is one vector of N values in [0, 1]
// (parameters, e.g. `inv_logit(alpha + matvec(X, beta))` for trials with covariates, or data),
// shared by every observation; the log probabilities of all N + 1 counts come from the
// recursion over trials in log space (autodiff/multivariate_ops.hpp, poisson_binomial_map), once
// per evaluation whatever the number of observations, O(N²) with its gradient. The data must be
// integer counts 0 … N: observe throws "... y[i] = v is not a count 0 … N" otherwise.
// poisson_binomial_lpmf(y, theta), poisson_binomial_lcdf (Σ log P(Y ≤ yᵢ)) and
// poisson_binomial_lccdf (Σ log P(Y > yᵢ)) are the same recursion. Draws: the sum of N Bernoulli
// draws.
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/multivariate_ops.hpp>
#include <tyche/distributions/detail/family.hpp>
#include <tyche/scalar/format.hpp>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace tyche {

namespace detail {
/// The counts y (data or one number) checked against 0 … N; then the op's node.
template <ops::count_event Mode, class Theta, class Y>
auto poisson_binomial_term(const Theta& theta, const Y& y) {
  static_assert(is_vector_v<Theta>, "tyche::poisson_binomial(theta): theta must be a vector of N probabilities");
  static_assert(kind_of<Y> == node_kind::data_vector || kind_of<Y> == node_kind::constant,
                "tyche::poisson_binomial(theta): only data can be observed (y must be data)");
  const std::size_t n = theta.size();
  auto check = [&](double c, std::size_t i) {
    if (!(c >= 0 && c <= double(n) && c == std::floor(c)))
      throw std::invalid_argument("tyche::poisson_binomial(theta).observe(y): y[" + std::to_string(i + 1) +
                                  "] = " + tyche::detail::format_number(c) + " is not a count 0 … " +
                                  std::to_string(n) + " (theta has " + std::to_string(n) + " trials)");
  };
  if constexpr (kind_of<Y> == node_kind::data_vector) {
    for (std::size_t i = 0; i < y.size(); ++i) check(y.ptr[i], i);
    return at(make_vector_op(ops::poisson_binomial_map<Mode>{y.ptr, y.size()}, 1, theta), 0);
  } else {
    check(y.value, 0);
    return at(make_vector_op(ops::poisson_binomial_map<Mode>{nullptr, 1, y.value}, 1, theta), 0);  // held by value
  }
}
}  // namespace detail

template <class Theta>
struct poisson_binomial_distribution : distribution<poisson_binomial_distribution<Theta>> {
  static constexpr const char* family = "poisson_binomial";
  Theta theta;
  template <class X>
  auto log_prob(const X& y) const {
    return detail::poisson_binomial_term<ops::count_event::equal>(theta, detail::as_node(y));
  }
  template <class X>
  auto log_cdf(const X& y) const {
    return detail::poisson_binomial_term<ops::count_event::at_most>(theta, detail::as_node(y));
  }
  template <class X>
  auto log_ccdf(const X& y) const {
    return detail::poisson_binomial_term<ops::count_event::above>(theta, detail::as_node(y));
  }
  auto arguments() const { return std::tuple{theta}; }
  auto check_supports() const {
    static_assert(argument_support_t<Theta, domains::probability>::ok,
                  "tyche::poisson_binomial(theta): theta must be in [0, 1], but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside [0, 1]" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::probability>("poisson_binomial(theta)", "theta", theta);
  }
  /// The argument is one whole vector (model.hpp draws with draw_all).
  static constexpr bool whole_arguments = true;
  template <class G>
  static std::vector<double> draw_all(G& rng, std::size_t n, const std::vector<double>& theta) {
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::vector<double> out(n);
    for (auto& o : out) {
      double count = 0;
      for (double p : theta) count += u(rng) < p ? 1.0 : 0.0;
      o = count;
    }
    return out;
  }
  static const char* observation_problem(double v) { return detail::count_problem(v); }
};

/// The distribution poisson_binomial(theta), to observe counts of successes in N trials with
/// probabilities theta (a vector of N): `poisson_binomial(theta).observe(data(y))`.
template <detail::operand Theta>
auto poisson_binomial(const Theta& theta) {
  return detail::make_distribution<poisson_binomial_distribution>(theta);
}

TYCHE_OBSERVED_ONLY_FAMILY(poisson_binomial)

}  // namespace tyche
