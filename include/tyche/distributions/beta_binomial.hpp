// tyche/distributions/beta_binomial.hpp — beta_binomial(n, a, b), for observations only.
//   log p(y | n, a, b) = log C(n, y) + log B(y + a, n − y + b) − log B(a, b),
//   y ∈ {0, …, n}, a > 0, b > 0, with log B(u, v) = lgamma(u) + lgamma(v) − lgamma(u + v).
// n is data, as in binomial: log C(n, y) is folded when the model is built. Data checks as
// binomial's (binomial.hpp). log B is a difference of lgammas: for a + b ≫ 10⁶ it loses
// accuracy (absolute error about ε · (a + b) log(a + b)).
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/binomial.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <cmath>
#include <cstddef>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>

namespace tyche {

template <class N, class A, class B>
struct beta_binomial_distribution : distribution<beta_binomial_distribution<N, A, B>> {
  static constexpr const char* family = "beta_binomial";
  N n;
  A a;
  B b;
  template <class X>
  auto log_prob(const X& y) const {
    return detail::total(lgamma(y + a) + lgamma(n - y + b) - lgamma(n + a + b) + lgamma(a + b) -
                         lgamma(a) - lgamma(b) +
                         (lgamma(n + lit<1>) - lgamma(y + lit<1>) - lgamma(n - y + lit<1>)));
  }
  /// log P(Y ≤ y) and log P(Y > y), summed over y: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored counts. By summing the probabilities on the side of y
  /// away from the mean (rules in autodiff/special.hpp, ops::beta_binomial_lcdf_map;
  /// scalar/inc_beta.hpp): O(min(y, n − y)) terms per count.
  template <class X>
  auto log_cdf(const X& y) const {
    return detail::total(tail<false>(y));
  }
  template <class X>
  auto log_ccdf(const X& y) const {
    return detail::total(tail<true>(y));
  }
  template <bool Upper, class X>
  auto tail(const X& y) const {
    const auto nn = detail::as_node(n);
    const auto an = detail::as_node(a);
    const auto bn = detail::as_node(b);
    const auto yn = detail::as_node(y);
    const std::size_t sizes[4] = {detail::operand_size(nn), detail::operand_size(an), detail::operand_size(bn),
                                  detail::operand_size(yn)};
    std::size_t m = 1;
    for (const std::size_t s : sizes) m = s != 1 ? s : m;
    for (const std::size_t s : sizes)
      if (s != 1 && s != m)
        throw std::invalid_argument(std::string("tyche::beta_binomial_") + (Upper ? "lccdf" : "lcdf") +
                                    "(y, n, a, b): the sizes of y (" + std::to_string(sizes[3]) + "), n (" +
                                    std::to_string(sizes[0]) + "), a (" + std::to_string(sizes[1]) + ") and b (" +
                                    std::to_string(sizes[2]) + ") differ (each a scalar or a vector of one size)");
    return make_vector_op(ops::beta_binomial_lcdf_map<Upper>{}, m, nn, an, bn, yn);
  }
  auto arguments() const { return std::tuple{n, a, b}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<N, domains::nonnegative>::ok,
                  "tyche::beta_binomial(n, a, b): n must be >= 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside [0, inf)" TYCHE_SUPPORT_HINT);
    static_assert(argument_support_t<A, domains::positive>::ok,
                  "tyche::beta_binomial(n, a, b): a must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    static_assert(argument_support_t<B, domains::positive>::ok,
                  "tyche::beta_binomial(n, a, b): b must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::nonnegative>("beta_binomial(n, a, b)", "n", n);
    detail::check_argument<domains::positive>("beta_binomial(n, a, b)", "a", a);
    detail::check_argument<domains::positive>("beta_binomial(n, a, b)", "b", b);
  }
  /// Checks y (non-negative integers, see distribution::observe), then n and y ≤ n.
  template <class Y>
  void check_observed(const Y& y) const {
    detail::check_trials(family, y, n);
  }
  /// check_observed's checks and, for right censoring (censored.hpp), y < n (P(Y > n) = 0).
  template <class Y>
  void check_right_censored(const Y& y) const {
    detail::check_trials(family, y, n, true);
  }
  /// p ~ beta(a, b) (as X / (X + Y) for X ~ gamma(a), Y ~ gamma(b)), then binomial(n, p).
  template <class G>
  static double draw(G& rng, double trials, double sa, double sb) {
    const double x = std::gamma_distribution<double>(sa, 1.0)(rng);
    const double z = std::gamma_distribution<double>(sb, 1.0)(rng);
    const double pr = x + z > 0 ? x / (x + z) : sa / (sa + sb);
    return static_cast<double>(std::binomial_distribution<long long>(std::llround(trials), pr)(rng));
  }
  static double mean(double trials, double sa, double sb) { return trials * sa / (sa + sb); }
  static double variance(double trials, double sa, double sb) {
    const double s = sa + sb;
    return trials * sa * sb * (s + trials) / (s * s * (s + 1.0));
  }
  static const char* observation_problem(double v) { return detail::count_problem(v); }
};

/// The distribution beta_binomial(n, a, b): `beta_binomial(data(trials), a, b).observe(data(y))`.
template <detail::operand N, detail::operand A, detail::operand B>
auto beta_binomial(const N& n, const A& a, const B& b) {
  return detail::make_distribution<beta_binomial_distribution>(n, a, b);
}

TYCHE_OBSERVED_ONLY_FAMILY(beta_binomial)

}  // namespace tyche
