// tyche/distributions/hypergeometric.hpp — hypergeometric(N, a, b), for observations only.
// The number of successes in N draws without replacement from an urn of a successes and b
// failures (Stan Functions Reference, "Hypergeometric distribution"):
//   log p(y | N, a, b) = log C(a, y) + log C(b, N − y) − log C(a + b, N),
//   y ∈ {max(0, N − b), …, min(a, N)},
// N, a, b non-negative integers with N ≤ a + b, numbers or data (a vector: one triple per
// observation); the log density depends on the data only (Stan's arguments are integers too).
// observe throws, naming the index and the value, for a y that is not a count or cannot happen,
// and for N, a, b that are not counts or have N > a + b. Draws: N draws from the urn, one by one.
// `hypergeometric_lpmf(y, N, a, b)` for free terms.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/binomial.hpp>
#include <tyche/distributions/detail/family.hpp>
#include <tyche/operations/stan_functions.hpp>
#include <tyche/scalar/format.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>

namespace tyche {

template <class Draws, class A, class B>
struct hypergeometric_distribution : distribution<hypergeometric_distribution<Draws, A, B>> {
  static constexpr const char* family = "hypergeometric";
  Draws n;
  A a;
  B b;
  template <class X>
  auto log_prob(const X& y) const {
    return detail::total(lchoose(a, y) + lchoose(b, n - y) - lchoose(a + b, n));
  }
  auto arguments() const { return std::tuple{n, a, b}; }
  auto check_supports() const {
    static_assert(detail::known_values_v<Draws> && detail::known_values_v<A> && detail::known_values_v<B>,
                  "tyche::hypergeometric(N, a, b): N, a and b must be counts given as numbers or data (data(v)), "
                  "not expressions of parameters");
    const std::size_t nn = detail::known_size(n), na = detail::known_size(a), nb = detail::known_size(b);
    const std::size_t count = detail::check_argument_sizes("hypergeometric(N, a, b)", {"N", "a", "b"}, {nn, na, nb});
    for (std::size_t i = 0; i < count; ++i) {
      const double draws = detail::known_value(n, nn == 1 ? 0 : i), av = detail::known_value(a, na == 1 ? 0 : i),
                   bv = detail::known_value(b, nb == 1 ? 0 : i);
      const std::string at = "[" + std::to_string(i + 1) + "] = ";
      if (detail::count_problem(draws) != nullptr)
        throw std::invalid_argument("tyche::hypergeometric(N, a, b): N" + at + detail::format_number(draws) +
                                    " is not a non-negative integer count");
      if (detail::count_problem(av) != nullptr)
        throw std::invalid_argument("tyche::hypergeometric(N, a, b): a" + at + detail::format_number(av) +
                                    " is not a non-negative integer count");
      if (detail::count_problem(bv) != nullptr)
        throw std::invalid_argument("tyche::hypergeometric(N, a, b): b" + at + detail::format_number(bv) +
                                    " is not a non-negative integer count");
      if (draws > av + bv)
        throw std::invalid_argument("tyche::hypergeometric(N, a, b): N" + at + detail::format_number(draws) +
                                    " exceeds a + b = " + detail::format_number(av + bv) + " (draws without replacement)");
    }
  }
  /// Each y (a count, see distribution::observe) between max(0, N − b) and min(a, N).
  template <class Y>
  void check_observed(const Y& y) const {
    if constexpr (detail::known_values_v<Y>) {
      const std::size_t ny = detail::known_size(y), nn = detail::known_size(n), na = detail::known_size(a),
                        nb = detail::known_size(b);
      detail::check_argument_sizes("hypergeometric(N, a, b).observe(y)", {"N", "a", "b"}, {nn, na, nb}, ny);
      for (std::size_t i = 0; i < ny; ++i) {
        const double v = detail::known_value(y, i), draws = detail::known_value(n, nn == 1 ? 0 : i),
                     av = detail::known_value(a, na == 1 ? 0 : i), bv = detail::known_value(b, nb == 1 ? 0 : i);
        const double lo = std::max(0.0, draws - bv), hi = std::min(av, draws);
        if (v < lo || v > hi)
          throw std::invalid_argument("tyche::hypergeometric(...).observe(y): y[" + std::to_string(i + 1) + "] = " +
                                      detail::format_number(v) + " cannot happen: with N = " +
                                      detail::format_number(draws) + ", a = " + detail::format_number(av) +
                                      " and b = " + detail::format_number(bv) + " the count is in [" +
                                      detail::format_number(lo) + ", " + detail::format_number(hi) + "]");
      }
    }
  }
  /// N draws from the urn, one at a time.
  template <class G>
  static double draw(G& rng, double draws, double av, double bv) {
    std::uniform_real_distribution<double> u01;
    double succ = av, fail = bv, y = 0;
    for (long long d = 0; d < std::llround(draws); ++d) {
      if (u01(rng) * (succ + fail) < succ) {
        y += 1;
        succ -= 1;
      } else {
        fail -= 1;
      }
    }
    return y;
  }
  static double mean(double draws, double av, double bv) { return av + bv > 0 ? draws * av / (av + bv) : 0.0; }
  static double variance(double draws, double av, double bv) {
    const double t = av + bv;
    return t > 1 ? draws * av * bv * (t - draws) / (t * t * (t - 1)) : 0.0;
  }
  static const char* observation_problem(double v) { return detail::count_problem(v); }
};

/// The distribution hypergeometric(N, a, b), to observe counts of successes:
/// `hypergeometric(10, 20, 30).observe(data(y))`.
template <detail::operand Draws, detail::operand A, detail::operand B>
auto hypergeometric(const Draws& n, const A& a, const B& b) {
  return detail::make_distribution<hypergeometric_distribution>(n, a, b);
}

TYCHE_OBSERVED_ONLY_FAMILY(hypergeometric)

}  // namespace tyche
