// inv_gamma(alpha, beta): shape α, scale β.
#include "support/continuous_checks.hpp"

#include <tyche/tyche.hpp>

#include <boost/math/distributions/inverse_gamma.hpp>
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using namespace tyche;

namespace {
double boost_log_pdf(double x, double a, double b) {
  return std::log(boost::math::pdf(boost::math::inverse_gamma_distribution<double>(a, b), x));
}
}  // namespace

TEST_CASE("inv_gamma: log density against Boost.Math, and its gradient", "[distributions][inv_gamma]") {
  param<"x"> x;
  param<"a"> a;
  param<"b"> b;
  const auto prog = compile(inv_gamma(a, b).log_prob(x), x, a, b);
  const auto pts = tyche_test::points_in(60, {{0.1, 10.0}, {0.2, 8.0}, {0.1, 5.0}}, 501);
  tyche_test::check_log_density(
      prog, pts, [](const std::vector<double>& p) { return boost_log_pdf(p[0], p[1], p[2]); },
      "inv_gamma(a, b).log_prob(x)");
}

TEST_CASE("inv_gamma: draws against mean, variance and Boost's cdf", "[distributions][inv_gamma]") {
  using D = decltype(inv_gamma(1.0, 1.0));
  // α > 8: the sample variance's standard error needs the 8th moment.
  const double a = 10.0, b = 4.0;
  const auto draws = tyche_test::draws_of<D>(502, a, b);
  tyche_test::check_moments(draws, D::mean(a, b), D::variance(a, b), "inv_gamma(10, 4)");
  const boost::math::inverse_gamma_distribution<double> ref(a, b);
  tyche_test::check_ks(draws, [&](double v) { return boost::math::cdf(ref, v); }, "inv_gamma(10, 4)");
  const auto heavy = tyche_test::draws_of<D>(503, 1.5, 2.0);  // no variance: the cdf only
  const boost::math::inverse_gamma_distribution<double> heavy_ref(1.5, 2.0);
  tyche_test::check_ks(heavy, [&](double v) { return boost::math::cdf(heavy_ref, v); }, "inv_gamma(1.5, 2)");
}

TEST_CASE("inv_gamma: a named variable lives on (0, inf)", "[distributions][inv_gamma]") {
  const auto m = model(joint(inv_gamma<"ig">(3.0, 2.0)));
  tyche_test::check_support(
      m, "ig", {0.7, 1e-2, 4.2}, {-1.0, 0.0}, [](double v) { return boost_log_pdf(v, 3.0, 2.0); },
      tyche_test::log_jacobian_positive);
  const std::vector<double> y{1.0, -2.0};
  CHECK_THROWS_WITH(inv_gamma(2.0, 1.0).observe(data(y)), Catch::Contains("y[2]") && Catch::Contains("not positive"));
}
