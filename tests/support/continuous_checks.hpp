// tests/support/continuous_checks.hpp — the checks every continuous distribution family passes:
// its log density (with every normalising constant) against a reference (Boost.Math) at random
// points, with the gradient against finite differences at the same points; its draw() against
// its mean() and variance() (z-tests) and against the reference cdf (one-sample
// Kolmogorov–Smirnov); and the support of a named random variable (the transform: unconstrain
// rejects values outside it, constrain ∘ unconstrain is the identity, and the model's log
// density is log p(x) + log|J|).
#pragma once
#include "support/property.hpp"

#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace tyche_test {

/// Tolerance of a log density against its reference: |value − reference| ≤ tol · max(1, |reference|)
/// (relative, with an absolute floor where the log density crosses 0).
inline constexpr double log_density_tolerance = 1e-12;

/// Sample size of the sampling checks, and their thresholds: |z| < 4.5 for the moments and
/// D·√n < 1.95 for the Kolmogorov–Smirnov statistic (p ≈ 0.001).
inline constexpr std::size_t sample_size = 100000;
inline constexpr double z_limit = 4.5;
inline constexpr double ks_limit = 1.95;

/// count points, coordinate k uniform on box[k] = {lo, hi}, from a fixed seed.
inline std::vector<std::vector<double>> points_in(std::size_t count,
                                                  const std::vector<std::pair<double, double>>& box,
                                                  unsigned seed) {
  auto pts = random_points(count, box.size(), 0.0, 1.0, seed);
  for (auto& p : pts)
    for (std::size_t k = 0; k < box.size(); ++k)
      p[k] = box[k].first + (box[k].second - box[k].first) * p[k];
  return pts;
}

/// |value − reference| / max(1, |reference|).
inline double log_density_error(double value, double reference) {
  return std::fabs(value - reference) / std::max(1.0, std::fabs(reference));
}

/// The compiled log density prog (parameters: x, then the arguments) against reference(point)
/// at every point, and its gradient against finite differences. Returns the largest error.
template <class Prog, class Reference>
double check_log_density(const Prog& prog, const std::vector<std::vector<double>>& points,
                         Reference reference, const std::string& what,
                         double tol = log_density_tolerance) {
  std::vector<double> ws(prog.workspace_size());
  double worst = 0.0;
  for (const auto& pt : points) {
    const double v = prog.value(std::span<const double>(pt), std::span<double>(ws));
    const double ref = reference(pt);
    const double err = log_density_error(v, ref);
    worst = std::max(worst, err);
    INFO(what << " at (" << [&] {
      std::string s;
      for (double c : pt) s += (s.empty() ? "" : ", ") + std::to_string(c);
      return s;
    }() << "): tyche " << v << ", reference " << ref);
    CHECK(err <= tol);
    check_gradient_at(prog, pt, what);
  }
  return worst;
}

/// n draws of Dist::draw(rng, args...) from std::mt19937_64 seeded with seed.
template <class Dist, class... Args>
std::vector<double> draws_of(std::uint64_t seed, Args... args) {
  std::mt19937_64 rng(seed);
  std::vector<double> out(sample_size);
  for (auto& v : out) v = Dist::draw(rng, args...);
  return out;
}

/// z-tests of the sample mean against mean (standard error √(variance/n)) and of the sample
/// variance against variance (standard error √((m₄ − s⁴)/n), m₄ the sample fourth central
/// moment): both |z| < z_limit.
inline void check_moments(const std::vector<double>& draws, double mean, double variance,
                          const std::string& what) {
  const double n = static_cast<double>(draws.size());
  double m = 0.0;
  for (double d : draws) m += d;
  m /= n;
  double m2 = 0.0, m4 = 0.0;
  for (double d : draws) {
    const double c = (d - m) * (d - m);
    m2 += c;
    m4 += c * c;
  }
  m4 /= n;
  const double s2 = m2 / (n - 1);
  const double z_mean = (m - mean) / std::sqrt(variance / n);
  const double z_var = (s2 - variance) / std::sqrt((m4 - s2 * s2) / n);
  INFO(what << ": sample mean " << m << " (expected " << mean << ", z = " << z_mean
            << "), sample variance " << s2 << " (expected " << variance << ", z = " << z_var << ")");
  CHECK(std::fabs(z_mean) < z_limit);
  CHECK(std::fabs(z_var) < z_limit);
}

/// One-sample Kolmogorov–Smirnov test of the draws against cdf: D·√n < ks_limit.
template <class Cdf>
void check_ks(std::vector<double> draws, Cdf cdf, const std::string& what) {
  std::sort(draws.begin(), draws.end());
  const double n = static_cast<double>(draws.size());
  double d = 0.0;
  for (std::size_t i = 0; i < draws.size(); ++i) {
    const double f = cdf(draws[i]);
    d = std::max({d, f - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - f});
  }
  INFO(what << ": Kolmogorov–Smirnov D·√n = " << d * std::sqrt(n));
  CHECK(d * std::sqrt(n) < ks_limit);
}

/// The model m of one named scalar random variable `name`: at every x in inside,
/// constrain(unconstrain(x)) = x, and the log density at θ = unconstrain(x) is
/// log_pdf(x) + log_jacobian(x) (log_pdf(x) without the Jacobian); every x in outside is
/// rejected by unconstrain, naming the variable.
template <class Model, class LogPdf, class LogJacobian>
void check_support(const Model& m, const std::string& name, const std::vector<double>& inside,
                   const std::vector<double>& outside, LogPdf log_pdf, LogJacobian log_jacobian) {
  REQUIRE(m.dim() == 1);
  REQUIRE(m.parameter_names() == std::vector<std::string>{name});
  for (double x : inside) {
    INFO(name << " = " << x);
    const std::vector<double> theta = m.unconstrain(std::vector<double>{x});
    const std::vector<double> back = m.constrain(theta);
    CHECK(back[0] == Approx(x).epsilon(1e-12).margin(1e-300));
    const double lp = log_pdf(x), lj = log_jacobian(x);
    CHECK(log_density_error(m.log_prob(theta, true), lp + lj) <= log_density_tolerance);
    CHECK(log_density_error(m.log_prob(theta, false), lp) <= log_density_tolerance);
  }
  for (double x : outside) {
    INFO(name << " = " << x);
    CHECK_THROWS_WITH(m.unconstrain(std::vector<double>{x}), Catch::Contains(name + " = "));
  }
}

/// log|J| of the transforms: identity, (0, ∞) by exp, (a, b) by a + (b − a)·logistic.
inline double log_jacobian_real(double) { return 0.0; }
inline double log_jacobian_positive(double x) { return std::log(x); }
inline double log_jacobian_interval(double x, double a, double b) {
  return std::log(x - a) + std::log(b - x) - std::log(b - a);
}

}  // namespace tyche_test
