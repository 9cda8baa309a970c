// bernoulli(p) and bernoulli_logit(alpha): log pmf against Boost.Math, gradients, draws, data checks.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <boost/math/distributions/bernoulli.hpp>

#include "support/discrete_checks.hpp"
#include "support/property.hpp"

#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace tyche;
namespace dc = tyche_test::discrete;

namespace {
long double boost_log_pmf(long double p, double y) {
  return std::log(boost::math::pdf(boost::math::bernoulli_distribution<long double>(p), y));
}
/// σ(α) in long double.
long double logistic_ld(double a) { return 1.0L / (1.0L + std::exp(-static_cast<long double>(a))); }
}  // namespace

TEST_CASE("bernoulli: log pmf against Boost", "[discrete][bernoulli]") {
  std::mt19937_64 rng(301);
  std::uniform_real_distribution<double> up(0.01, 0.99);
  param<"p"> p;
  for (int t = 0; t < dc::log_pmf_points; ++t) {
    const double pr = up(rng);
    std::vector<double> y{static_cast<double>(t % 2)};
    const auto prog = compile(bernoulli(p).observe(data(y)).log_density(), p);
    dc::check_log_pmf(dc::value_at(prog, {pr}), boost_log_pmf(pr, y[0]),
                      "bernoulli(" + std::to_string(pr) + ") at y = " + std::to_string(y[0]));
  }
  std::vector<double> ys{1, 0, 0, 1, 1};
  const auto prog = compile(bernoulli(p).observe(data(ys)).log_density(), p);
  dc::check_log_pmf(dc::value_at(prog, {0.3}), 3 * boost_log_pmf(0.3, 1) + 2 * boost_log_pmf(0.3, 0),
                    "bernoulli(0.3) at y = {1, 0, 0, 1, 1}");
}

TEST_CASE("bernoulli_logit: log pmf against Boost", "[discrete][bernoulli_logit]") {
  std::mt19937_64 rng(302);
  std::uniform_real_distribution<double> ua(-15.0, 15.0);
  param<"alpha"> alpha;
  for (int t = 0; t < dc::log_pmf_points; ++t) {
    const double a = ua(rng);
    std::vector<double> y{static_cast<double>(t % 2)};
    const auto prog = compile(bernoulli_logit(alpha).observe(data(y)).log_density(), alpha);
    dc::check_log_pmf(dc::value_at(prog, {a}), boost_log_pmf(logistic_ld(a), y[0]),
                      "bernoulli_logit(" + std::to_string(a) + ") at y = " + std::to_string(y[0]));
  }
  // Far tails, where σ(α) rounds to 1 in double: log(1 − σ(α)) = −α − log(1 + e^−α) exactly.
  for (double a : {40.0, 200.0, 800.0}) {
    std::vector<double> zero{0}, one{1};
    const auto p0 = compile(bernoulli_logit(alpha).observe(data(zero)).log_density(), alpha);
    const auto p1 = compile(bernoulli_logit(alpha).observe(data(one)).log_density(), alpha);
    dc::check_log_pmf(dc::value_at(p0, {a}), -a - std::log1p(std::exp(-a)), "bernoulli_logit(" + std::to_string(a) + ") at y = 0");
    dc::check_log_pmf(dc::value_at(p1, {-a}), -a - std::log1p(std::exp(-a)), "bernoulli_logit(" + std::to_string(-a) + ") at y = 1");
    CHECK(dc::value_at(p1, {a}) == Approx(-std::exp(-a)).epsilon(1e-12).margin(0));
  }
}

TEST_CASE("bernoulli, bernoulli_logit: gradients", "[discrete][bernoulli][bernoulli_logit]") {
  std::vector<double> y{1, 0, 1, 1};
  param<"p"> p;
  param<"alpha"> alpha;
  const auto p1 = compile(bernoulli(p).observe(data(y)).log_density(), p);
  const auto p2 = compile(bernoulli_logit(alpha).observe(data(y)).log_density(), alpha);
  for (const auto& pt : tyche_test::random_points(20, 1, 0.02, 0.98, 31))
    tyche_test::check_gradient_at(p1, pt, "bernoulli(p), y = {1, 0, 1, 1}");
  for (const auto& pt : tyche_test::random_points(20, 1, -20.0, 20.0, 32))
    tyche_test::check_gradient_at(p2, pt, "bernoulli_logit(alpha), y = {1, 0, 1, 1}");
  // Logistic regression: alpha = a + b x.
  std::vector<double> x{-1.0, 0.5, 2.0, 3.0};
  param<"a"> a;
  param<"b"> b;
  const auto p3 = compile(bernoulli_logit(a + b * data(x)).observe(data(y)).log_density(), a, b);
  for (const auto& pt : tyche_test::random_points(10, 2, -3.0, 3.0, 33))
    tyche_test::check_gradient_at(p3, pt, "bernoulli_logit(a + b x)");
}

TEST_CASE("bernoulli, bernoulli_logit: draws", "[discrete][bernoulli][bernoulli_logit]") {
  using B = bernoulli_distribution<constant>;
  using BL = bernoulli_logit_distribution<constant>;
  for (double pr : {0.03, 0.5, 0.8}) {
    const auto xs = dc::draws<B>(401, pr);
    const std::string what = "bernoulli(" + std::to_string(pr) + ")";
    dc::check_moments(xs, B::mean(pr), B::variance(pr), what);
    dc::check_chi_square(
        xs, [&](long long k) { return k > 1 ? 0.0 : boost::math::pdf(boost::math::bernoulli_distribution<double>(pr), static_cast<double>(k)); },
        what);
  }
  for (double a : {-2.0, 0.7}) {
    const auto xs = dc::draws<BL>(402, a);
    const std::string what = "bernoulli_logit(" + std::to_string(a) + ")";
    dc::check_moments(xs, BL::mean(a), BL::variance(a), what);
    const double pr = static_cast<double>(logistic_ld(a));
    dc::check_chi_square(
        xs, [&](long long k) { return k > 1 ? 0.0 : boost::math::pdf(boost::math::bernoulli_distribution<double>(pr), static_cast<double>(k)); },
        what);
  }
}

TEST_CASE("bernoulli, bernoulli_logit: data checks", "[discrete][bernoulli][bernoulli_logit]") {
  param<"p"> p;
  const std::string problem = "is not 0 or 1";
  std::vector<double> two{1, 2, 0}, negative{0, -1, 1}, fractional{0, 0.5, 1};
  for (const auto* y : {&two, &negative, &fractional}) {
    dc::check_observation_error([&] { return bernoulli(p).observe(data(*y)); }, "bernoulli", "y[2]", (*y)[1], problem);
    dc::check_observation_error([&] { return bernoulli_logit(p).observe(data(*y)); }, "bernoulli_logit", "y[2]", (*y)[1], problem);
  }
  std::vector<double> nan{0, NAN, 1};
  dc::check_observation_error([&] { return bernoulli(p).observe(data(nan)); }, "bernoulli", "y[2]", NAN, "is not finite");
  std::vector<double> fine{0, 1, 1, 0};
  CHECK_NOTHROW(bernoulli(p).observe(data(fine)));
  CHECK_NOTHROW(bernoulli_logit(p).observe(data(fine)));
}
