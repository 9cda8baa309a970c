// poisson(lambda) and poisson_log(alpha): log pmf against Boost.Math, gradients, draws, data checks.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <boost/math/distributions/poisson.hpp>

#include "support/discrete_checks.hpp"
#include "support/property.hpp"

#include <cmath>
#include <numbers>
#include <random>
#include <string>
#include <vector>

using namespace tyche;
namespace dc = tyche_test::discrete;

namespace {
long double boost_log_pmf(double lambda, double y) {
  return std::log(boost::math::pdf(boost::math::poisson_distribution<long double>(lambda), y));
}
}  // namespace

TEST_CASE("poisson: log pmf against Boost", "[discrete][poisson]") {
  std::mt19937_64 rng(101);
  std::uniform_real_distribution<double> ulam(0.05, 60.0);
  param<"lam"> lam;
  for (int t = 0; t < dc::log_pmf_points; ++t) {
    const double l = ulam(rng);
    std::vector<double> y{t % 2 == 0 ? poisson_distribution<constant>::draw(rng, l)
                                     : dc::uniform_count(rng, 3 * l + 10)};
    const auto prog = compile(poisson(lam).observe(data(y)).log_density(), lam);
    dc::check_log_pmf(dc::value_at(prog, {l}), boost_log_pmf(l, y[0]),
                      "poisson(" + std::to_string(l) + ") at y = " + std::to_string(y[0]));
  }
  // Several observations at once: the sum.
  std::vector<double> ys{0, 3, 17, 4};
  const auto prog = compile(poisson(lam).observe(data(ys)).log_density(), lam);
  long double ref = 0;
  for (double v : ys) ref += boost_log_pmf(4.5, v);
  dc::check_log_pmf(dc::value_at(prog, {4.5}), ref, "poisson(4.5) at y = {0, 3, 17, 4}");
}

TEST_CASE("poisson_log: log pmf against Boost", "[discrete][poisson_log]") {
  std::mt19937_64 rng(102);
  std::uniform_real_distribution<double> ualpha(-3.0, 4.0);
  param<"alpha"> alpha;
  for (int t = 0; t < dc::log_pmf_points; ++t) {
    const double a = ualpha(rng);
    std::vector<double> y{t % 2 == 0 ? poisson_log_distribution<constant>::draw(rng, a)
                                     : dc::uniform_count(rng, 3 * std::exp(a) + 10)};
    const auto prog = compile(poisson_log(alpha).observe(data(y)).log_density(), alpha);
    dc::check_log_pmf(dc::value_at(prog, {a}), boost_log_pmf(std::exp(a), y[0]),
                      "poisson_log(" + std::to_string(a) + ") at y = " + std::to_string(y[0]));
  }
  // Large α, y near e^α: y α ≈ 2.2·10⁵, e^α ≈ 2.2·10⁴ and lgamma(y + 1) ≈ 2.0·10⁵ cancel to
  // −5.9, so the condition number is κ = (|y α| + e^α + lgamma(y + 1)) / |log p| ≈ 7·10⁴ and
  // the attainable relative accuracy of this (and Stan's) formula is about κ ε ≈ 2·10⁻¹¹:
  // the check allows 2 κ ε.
  std::vector<double> y{std::floor(std::exp(10.0))};
  const auto prog = compile(poisson_log(alpha).observe(data(y)).log_density(), alpha);
  const long double ref = boost_log_pmf(std::exp(10.0), y[0]);
  const double kappa = (y[0] * 10.0 + std::exp(10.0) + std::lgamma(y[0] + 1)) / std::fabs(static_cast<double>(ref));
  dc::check_log_pmf(dc::value_at(prog, {10.0}), ref, "poisson_log(10) at y = floor(e^10)",
                    2 * kappa * 2.220446049250313e-16);
}

TEST_CASE("poisson, poisson_log: gradients", "[discrete][poisson][poisson_log]") {
  std::vector<double> y{0, 2, 9};
  param<"lam"> lam;
  param<"alpha"> alpha;
  const auto p1 = compile(poisson(lam).observe(data(y)).log_density(), lam);
  const auto p2 = compile(poisson_log(alpha).observe(data(y)).log_density(), alpha);
  for (const auto& pt : tyche_test::random_points(20, 1, 0.1, 30.0, 11))
    tyche_test::check_gradient_at(p1, pt, "poisson(lam), y = {0, 2, 9}");
  for (const auto& pt : tyche_test::random_points(20, 1, -4.0, 5.0, 12))
    tyche_test::check_gradient_at(p2, pt, "poisson_log(alpha), y = {0, 2, 9}");
  // A vector rate: one λ per observation.
  vector_param<"lams", 3> lams;
  const auto p3 = compile(poisson(lams).observe(data(y)).log_density(), lams);
  for (const auto& pt : tyche_test::random_points(10, 3, 0.1, 30.0, 13))
    tyche_test::check_gradient_at(p3, pt, "poisson(lams), y = {0, 2, 9}");
}

TEST_CASE("poisson, poisson_log: draws", "[discrete][poisson][poisson_log]") {
  using P = poisson_distribution<constant>;
  using PL = poisson_log_distribution<constant>;
  for (double l : {0.7, 6.0, 45.0}) {
    const auto xs = dc::draws<P>(201, l);
    const std::string what = "poisson(" + std::to_string(l) + ")";
    dc::check_moments(xs, P::mean(l), P::variance(l), what);
    dc::check_chi_square(
        xs, [&](long long k) { return boost::math::pdf(boost::math::poisson_distribution<double>(l), static_cast<double>(k)); },
        what);
  }
  for (double a : {-1.0, 2.5}) {
    const auto xs = dc::draws<PL>(202, a);
    const std::string what = "poisson_log(" + std::to_string(a) + ")";
    dc::check_moments(xs, PL::mean(a), PL::variance(a), what);
    dc::check_chi_square(
        xs, [&](long long k) { return boost::math::pdf(boost::math::poisson_distribution<double>(std::exp(a)), static_cast<double>(k)); },
        what);
  }
}

TEST_CASE("poisson, poisson_log: data checks", "[discrete][poisson][poisson_log]") {
  param<"lam"> lam;
  const std::string problem = "is not a non-negative integer count";
  std::vector<double> negative{1, -1, 2}, fractional{1, 2.5, 2}, infinite{0, INFINITY, 1};
  dc::check_observation_error([&] { return poisson(lam).observe(data(negative)); }, "poisson", "y[2]", -1, problem);
  dc::check_observation_error([&] { return poisson(lam).observe(data(fractional)); }, "poisson", "y[2]", 2.5, problem);
  dc::check_observation_error([&] { return poisson_log(lam).observe(data(negative)); }, "poisson_log", "y[2]", -1, problem);
  dc::check_observation_error([&] { return poisson_log(lam).observe(data(fractional)); }, "poisson_log", "y[2]", 2.5, problem);
  dc::check_observation_error([&] { return poisson(lam).observe(data(infinite)); }, "poisson", "y[2]", INFINITY, "is not finite");
  dc::check_observation_error([&] { return poisson(lam).observe(3.5); }, "poisson", "y[1]", 3.5, problem);
  std::vector<double> fine{0, 1, 40};
  CHECK_NOTHROW(poisson(lam).observe(data(fine)));
  CHECK_NOTHROW(poisson_log(lam).observe(data(fine)));
}

TEST_CASE("poisson: in a model, with predictive draws", "[discrete][poisson]") {
  std::vector<double> y{1, 4, 2, 0, 3};
  auto lam = half_cauchy<"lam">(5.0);
  auto m = model(joint(lam, poisson(lam).observe(data(y))));
  // θ = log λ; log p = log half_cauchy(λ | 5) + log λ (Jacobian) + Σ log poisson(y | λ).
  const double l = 2.2;
  long double ref = std::log(2.0 / (std::numbers::pi * 5.0 * (1.0 + (l / 5.0) * (l / 5.0)))) + std::log(l);
  for (double v : y) ref += boost_log_pmf(l, v);
  dc::check_log_pmf(m.log_prob(std::vector<double>{std::log(l)}), ref, "model: half_cauchy prior, poisson likelihood");
  std::mt19937_64 rng(7);
  const auto sim = m.sample_observations(std::vector<double>{std::log(l)}, rng);
  REQUIRE(sim.size() == 1);
  REQUIRE(sim[0].size() == y.size());
  for (double v : sim[0]) CHECK((v >= 0 && v == std::floor(v)));
}

TEST_CASE("poisson_log, bernoulli_logit: a vector linear predictor (one fused node per element)",
          "[discrete][poisson_log][bernoulli_logit]") {
  // The vector path writes the log density as one node per element (rules::poisson_log_term,
  // rules::bernoulli_logit_term): values against Boost.Math, gradients by the property check.
  const std::vector<double> x{-1.0, 0.5, 2.0, 3.0, -2.5};
  const std::vector<double> counts{0, 2, 9, 30, 1};
  const std::vector<double> bits{1, 0, 1, 1, 0};
  param<"a"> a;
  param<"b"> b;
  const auto pl = compile(poisson_log(a + b * data(x)).observe(data(counts)).log_density(), a, b);
  const auto bl = compile(bernoulli_logit(a + b * data(x)).observe(data(bits)).log_density(), a, b);
  for (const auto& pt : tyche_test::random_points(40, 2, -1.5, 1.5, 71)) {
    long double ref_p = 0, ref_b = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double eta = pt[0] + pt[1] * x[i];
      ref_p += std::log(static_cast<long double>(
          boost::math::pdf(boost::math::poisson_distribution<double>(std::exp(eta)), counts[i])));
      const long double p1 = 1 / (1 + std::exp(-static_cast<long double>(eta)));
      ref_b += bits[i] == 1 ? std::log(p1) : std::log1p(-p1);
    }
    dc::check_log_pmf(dc::value_at(pl, pt), ref_p, "poisson_log(a + b x)", 1e-11);
    dc::check_log_pmf(dc::value_at(bl, pt), ref_b, "bernoulli_logit(a + b x)", 1e-11);
  }
  for (const auto& pt : tyche_test::random_points(10, 2, -1.5, 1.5, 72)) {
    tyche_test::check_gradient_at(pl, pt, "poisson_log(a + b x)");
    tyche_test::check_gradient_at(bl, pt, "bernoulli_logit(a + b x)");
  }
}
