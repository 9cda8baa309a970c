// exponential(lambda), lambda the rate.
#include "support/continuous_checks.hpp"

#include <tyche/tyche.hpp>

#include <boost/math/distributions/exponential.hpp>
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using namespace tyche;

namespace {
double boost_log_pdf(double x, double l) {
  return std::log(boost::math::pdf(boost::math::exponential_distribution<double>(l), x));
}
}  // namespace

TEST_CASE("exponential: log density against Boost.Math, and its gradient", "[distributions][exponential]") {
  param<"x"> x;
  param<"l"> l;
  const auto prog = compile(exponential(l).log_prob(x), x, l);
  const auto pts = tyche_test::points_in(60, {{0.01, 10.0}, {0.1, 5.0}}, 301);
  tyche_test::check_log_density(
      prog, pts, [](const std::vector<double>& p) { return boost_log_pdf(p[0], p[1]); },
      "exponential(l).log_prob(x)");
}

TEST_CASE("exponential: draws against mean, variance and Boost's cdf", "[distributions][exponential]") {
  using D = decltype(exponential(1.0));
  const double l = 2.5;
  const auto draws = tyche_test::draws_of<D>(302, l);
  tyche_test::check_moments(draws, D::mean(l), D::variance(l), "exponential(2.5)");
  const boost::math::exponential_distribution<double> ref(l);
  tyche_test::check_ks(draws, [&](double v) { return boost::math::cdf(ref, v); }, "exponential(2.5)");
}

TEST_CASE("exponential: a named variable lives on (0, inf)", "[distributions][exponential]") {
  const auto m = model(joint(exponential<"rate_x">(1.5)));
  tyche_test::check_support(
      m, "rate_x", {0.7, 1e-3, 4.2}, {-1.0, 0.0}, [](double v) { return boost_log_pdf(v, 1.5); },
      tyche_test::log_jacobian_positive);
  const std::vector<double> y{1.0, 0.0, -0.5};
  CHECK_THROWS_WITH(exponential(2.0).observe(data(y)), Catch::Contains("y[3]") && Catch::Contains("negative"));
}
