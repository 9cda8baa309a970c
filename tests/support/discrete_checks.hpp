// tests/support/discrete_checks.hpp — the checks every discrete (observation-only) family
// passes: the log pmf against a reference (Boost.Math, in long double), draws against the
// family's mean and variance (z-tests) and against the pmf (chi-square goodness of fit), and
// the data checks of observe (the error names the index and the value).
#pragma once
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <boost/math/distributions/chi_squared.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <vector>

namespace tyche_test::discrete {

/// |log pmf − reference| / |reference|. The references are computed in long double, so the
/// error measured is tyche's (double, with lgamma differences for the normalising constants).
inline constexpr double log_pmf_tolerance = 1e-12;
/// Points (y, arguments) per family in the log pmf check.
inline constexpr int log_pmf_points = 60;
/// Draws per sampling check.
inline constexpr std::size_t sample_size = 100000;
/// |z| bound of the mean and variance z-tests.
inline constexpr double z_limit = 4.5;
/// The chi-square goodness-of-fit test fails when its p-value is below this.
inline constexpr double chi_square_p_min = 1e-6;

/// The value of a compiled program at x.
template <class Prog>
double value_at(const Prog& p, const std::vector<double>& x) {
  std::vector<double> ws(p.workspace_size());
  return p.value(std::span<const double>(x), std::span<double>(ws));
}

/// |got − ref| ≤ tolerance · |ref| (log_pmf_tolerance unless a check says why not).
inline void check_log_pmf(double got, long double ref, const std::string& what,
                          double tolerance = log_pmf_tolerance) {
  const double r = static_cast<double>(ref);
  const double err = std::fabs(got - r) / std::max(std::fabs(r), 1e-300);
  std::ostringstream s;
  s.precision(17);
  s << what << ": tyche " << got << ", reference " << r << ", relative error " << err;
  INFO(s.str());
  REQUIRE(std::isfinite(got));
  CHECK(err <= tolerance);
}

/// A non-negative integer uniform on [0, hi].
inline double uniform_count(std::mt19937_64& rng, double hi) {
  return static_cast<double>(std::uniform_int_distribution<long long>(0, std::llround(std::floor(hi)))(rng));
}

/// sample_size draws of Dist::draw(rng, args...) from a fixed seed.
template <class Dist, class... Args>
std::vector<double> draws(unsigned seed, Args... args) {
  std::mt19937_64 rng(seed);
  std::vector<double> out(sample_size);
  for (auto& x : out) x = Dist::draw(rng, args...);
  return out;
}

/// z-tests of the sample mean and variance against the family's mean and variance. The
/// variance of the sample variance is estimated from the sample's fourth central moment.
inline void check_moments(const std::vector<double>& xs, double mean, double variance,
                          const std::string& what) {
  const double n = static_cast<double>(xs.size());
  double m = 0;
  for (double x : xs) m += x;
  m /= n;
  double m2 = 0, m4 = 0;
  for (double x : xs) {
    const double d2 = (x - m) * (x - m);
    m2 += d2;
    m4 += d2 * d2;
  }
  m2 /= n;
  m4 /= n;
  const double s2 = m2 * n / (n - 1);
  const double z_mean = (m - mean) / std::sqrt(variance / n);
  const double z_var = (s2 - variance) / std::sqrt(std::max(m4 - m2 * m2, 1e-300) / n);
  INFO(what << ": sample mean " << m << " (expected " << mean << ", z = " << z_mean
            << "), sample variance " << s2 << " (expected " << variance << ", z = " << z_var << ")");
  CHECK(std::fabs(z_mean) < z_limit);
  CHECK(std::fabs(z_var) < z_limit);
}

/// Chi-square goodness of fit of integer draws to pmf(k), k = 0, 1, 2, …: consecutive values are
/// pooled into bins of expected count ≥ 5 (the lower tail into the first bin), and the values
/// beyond the point where less than 10 draws are expected into the last. Fails when the p-value
/// is below chi_square_p_min (statistic above the 1 − 10⁻⁶ quantile of χ²(bins − 1)).
template <class Pmf>
void check_chi_square(const std::vector<double>& xs, Pmf pmf, const std::string& what) {
  const double n = static_cast<double>(xs.size());
  std::vector<long long> lows;  // bin b holds [lows[b], lows[b + 1]) (the last: [lows.back(), ∞))
  std::vector<double> expected;
  double cumulative = 0, open = 0;
  long long open_low = 0;
  long long k = 0;
  for (; n * (1.0 - cumulative) >= 10.0 && k < 100000000; ++k) {
    const double p = pmf(k);
    cumulative += p;
    open += p;
    if (n * open >= 5.0) {
      lows.push_back(open_low);
      expected.push_back(n * open);
      open = 0;
      open_low = k + 1;
    }
  }
  const double tail = n * std::max(0.0, 1.0 - cumulative);
  if (open > 0 || expected.empty()) {
    lows.push_back(open_low);
    expected.push_back(n * open + tail);
  } else {
    expected.back() += tail;
  }
  std::vector<double> observed(expected.size(), 0.0);
  for (double x : xs) {
    const auto v = static_cast<long long>(x);
    const auto b = std::upper_bound(lows.begin(), lows.end(), v) - lows.begin() - 1;
    observed[static_cast<std::size_t>(b)] += 1;
  }
  double stat = 0;
  for (std::size_t b = 0; b < expected.size(); ++b)
    stat += (observed[b] - expected[b]) * (observed[b] - expected[b]) / expected[b];
  const auto df = static_cast<double>(expected.size() - 1);
  INFO(what << ": " << expected.size() << " bins, chi-square " << stat << " on " << df
            << " degrees of freedom");
  REQUIRE(expected.size() >= 2);
  const double threshold =
      boost::math::quantile(boost::math::chi_squared_distribution<double>(df), 1.0 - chi_square_p_min);
  INFO("threshold " << threshold);
  CHECK(stat < threshold);
}

/// make() throws std::invalid_argument whose message names the family, "y[index]" (or the
/// given name[index]), the value (an integer as an integer, else as %g writes it: 2, -1, 0.5,
/// 2.5) and the problem.
template <class Make>
void check_observation_error(Make make, const std::string& family, const std::string& where,
                             double value, const std::string& problem) {
  using Catch::Matchers::Contains;
  INFO(family << ": " << where << " = " << value);
  char text[64];
  if (value == std::floor(value) && std::abs(value) < 1e15)
    std::snprintf(text, sizeof text, "%lld", static_cast<long long>(value));
  else
    std::snprintf(text, sizeof text, "%g", value);
  REQUIRE_THROWS_AS(make(), std::invalid_argument);
  REQUIRE_THROWS_WITH(make(), Contains("tyche::" + family + "(...).observe(y)") && Contains(where) &&
                                  Contains(where + " = " + text + " ") &&
                                  Contains(problem));
}

}  // namespace tyche_test::discrete
