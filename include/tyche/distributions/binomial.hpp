// tyche/distributions/binomial.hpp — binomial(n, p), for observations only.
//   log p(y | n, p) = log C(n, y) + y log p + (n − y) log(1 − p),   y ∈ {0, …, n}, 0 ≤ p ≤ 1,
// with log C(n, y) = lgamma(n + 1) − lgamma(y + 1) − lgamma(n − y + 1). The number of trials n is
// data (a number, data(v) or a literal): log C(n, y) and n − y then depend on the data only and
// are folded when the model is built.
//
// Data checks (observe throws std::invalid_argument naming the index and the value):
//   y[i] = v is not a non-negative integer count
//   n[i] = v is not a non-negative integer count                 (n known: number, data, literal)
//   y[i] = v exceeds the number of trials n[i] = m                (n known)
// When n is an expression of parameters (not data) the last two checks cannot be made.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>
#include <tyche/scalar/format.hpp>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>

namespace tyche {

namespace detail {

/// Whether node N's values are known when the model is built (a number, a literal, data).
template <class N>
inline constexpr bool known_values_v = kind_of<N> == node_kind::constant ||
                                       kind_of<N> == node_kind::literal ||
                                       kind_of<N> == node_kind::data_vector;

/// Element i of a known node (a scalar is broadcast).
template <class N>
double known_value(const N& n, std::size_t i) {
  if constexpr (kind_of<N> == node_kind::constant) return n.value;
  else if constexpr (kind_of<N> == node_kind::literal) return N::value;
  else return n.ptr[i];
}

template <class N>
std::size_t known_size(const N& n) {
  if constexpr (kind_of<N> == node_kind::data_vector) return n.size();
  else return 1;
}

/// Per-observation arguments of a family whose arguments are data (hypergeometric,
/// discrete_range): each of `sizes` (the arguments' numbers of values, named by `names`) is 1 or
/// the common size; with observations (ny > 0), that size is ny. Returns the common size.
inline std::size_t check_argument_sizes(const char* call, std::initializer_list<const char*> names,
                                        std::initializer_list<std::size_t> sizes, std::size_t ny = 0) {
  std::size_t common = ny == 0 ? 1 : ny;
  const char* first = ny == 0 ? nullptr : "y";
  auto name = names.begin();
  for (std::size_t n : sizes) {
    if (n != 1) {
      if (common != 1 && n != common)
        throw std::invalid_argument(std::string("tyche::") + call + ": " + *name + " has " + std::to_string(n) +
                                    " values but " + (first != nullptr ? first : "another argument") + " has " +
                                    std::to_string(common) + " (each argument one value, or one per observation)");
      if (common == 1) first = *name;
      common = n;
    }
    ++name;
  }
  return common;
}

/// The checks on the number of trials n of a count family observed at y (both nodes): n is a
/// non-negative integer and y ≤ n, elementwise. Nothing is checked unless both are known.
/// at_n_impossible: a count equal to n is refused too (right censoring: P(Y > n) = 0).
template <class Y, class N>
void check_trials(const char* family, const Y& y, const N& n, bool at_n_impossible = false) {
  if constexpr (known_values_v<Y> && known_values_v<N>) {
    const std::size_t ny = known_size(y), nn = known_size(n);
    const std::size_t count = ny == 0 || nn == 0 ? 0 : std::max(ny, nn);  // no data: nothing to compare
    auto fail = [&](const std::string& what) {
      throw std::invalid_argument(std::string("tyche::") + family + "(...).observe(y): " + what);
    };
    auto at = [](const char* name, std::size_t i, double v) {
      return std::string(name) + "[" + std::to_string(i + 1) + "] = " + tyche::detail::format_number(v);
    };
    for (std::size_t i = 0; i < nn; ++i) {
      const double m = known_value(n, i);
      if (!std::isfinite(m) || m < 0 || m != std::floor(m))
        fail(at("n", i, m) + " is not a non-negative integer count");
    }
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t iy = ny == 1 ? 0 : i, in = nn == 1 ? 0 : i;
      const double v = known_value(y, iy), m = known_value(n, in);
      if (v > m) fail(at("y", iy, v) + " exceeds the number of trials " + at("n", in, m));
      if (at_n_impossible && v == m)
        fail(at("y", iy, v) + " is the number of trials " + at("n", in, m) +
             ": right-censored there, P(Y > y) = 0 for every parameter value");
    }
  }
}

}  // namespace detail

template <class N, class P>
struct binomial_distribution : distribution<binomial_distribution<N, P>> {
  static constexpr const char* family = "binomial";
  N n;
  P p;
  template <class X>
  auto log_prob(const X& y) const {
    return detail::total(y * log(p) + (n - y) * log1p(-p) +
                         (lgamma(n + lit<1>) - lgamma(y + lit<1>) - lgamma(n - y + lit<1>)));
  }
  /// log P(Y ≤ y) and log P(Y > y) for counts y, summed over y: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored counts.
  /// (P(Y ≤ y) = I_{1−p}(n − y, y + 1); 1 at y = n.)
  template <class X>
  auto log_cdf(const X& y) const {
    return detail::total(detail::log_inc_beta_of<false>(n - y, y + lit<1>, lit<1> - p, p, "binomial_lcdf"));
  }
  template <class X>
  auto log_ccdf(const X& y) const {
    return detail::total(detail::log_inc_beta_of<true>(n - y, y + lit<1>, lit<1> - p, p, "binomial_lccdf"));
  }
  auto arguments() const { return std::tuple{n, p}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<N, domains::nonnegative>::ok,
                  "tyche::binomial(n, p): n must be >= 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside [0, inf)" TYCHE_SUPPORT_HINT);
    static_assert(argument_support_t<P, domains::probability>::ok,
                  "tyche::binomial(n, p): p must be in [0, 1], but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside [0, 1]" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::nonnegative>("binomial(n, p)", "n", n);
    detail::check_argument<domains::probability>("binomial(n, p)", "p", p);
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
  template <class G>
  static double draw(G& rng, double trials, double pr) {
    return static_cast<double>(std::binomial_distribution<long long>(std::llround(trials), pr)(rng));
  }
  static double mean(double trials, double pr) { return trials * pr; }
  static double variance(double trials, double pr) { return trials * pr * (1.0 - pr); }
  static const char* observation_problem(double v) { return detail::count_problem(v); }
};

/// The distribution binomial(n, p), to observe counts of successes in n trials:
/// `binomial(data(trials), p).observe(data(y))`.
template <detail::operand N, detail::operand P>
auto binomial(const N& n, const P& p) {
  return detail::make_distribution<binomial_distribution>(n, p);
}

TYCHE_OBSERVED_ONLY_FAMILY(binomial)

}  // namespace tyche
