// inv_chi_square(nu): 1/x ~ chi_square(nu).
#include "support/continuous_checks.hpp"

#include <tyche/tyche.hpp>

#include <boost/math/distributions/inverse_chi_squared.hpp>
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using namespace tyche;

namespace {
/// Boost's inverse_chi_squared(ν) has scale 1/ν by default: the unscaled inverse chi-square.
double boost_log_pdf(double x, double n) {
  return std::log(boost::math::pdf(boost::math::inverse_chi_squared_distribution<double>(n), x));
}
}  // namespace

TEST_CASE("inv_chi_square: log density against Boost.Math, and its gradient",
          "[distributions][inv_chi_square]") {
  param<"x"> x;
  param<"n"> n;
  const auto prog = compile(inv_chi_square(n).log_prob(x), x, n);
  const auto pts = tyche_test::points_in(60, {{0.02, 5.0}, {0.5, 20.0}}, 1401);
  tyche_test::check_log_density(
      prog, pts, [](const std::vector<double>& p) { return boost_log_pdf(p[0], p[1]); },
      "inv_chi_square(n).log_prob(x)");
}

TEST_CASE("inv_chi_square: draws against mean, variance and Boost's cdf", "[distributions][inv_chi_square]") {
  using D = decltype(inv_chi_square(1.0));
  // ν = 20: the sample variance's standard error needs the 8th moment (ν > 16).
  const double n = 20.0;
  const auto draws = tyche_test::draws_of<D>(1402, n);
  tyche_test::check_moments(draws, D::mean(n), D::variance(n), "inv_chi_square(20)");
  const boost::math::inverse_chi_squared_distribution<double> ref(n);
  tyche_test::check_ks(draws, [&](double v) { return boost::math::cdf(ref, v); }, "inv_chi_square(20)");
  const auto heavy = tyche_test::draws_of<D>(1403, 3.0);  // no variance: the cdf only
  const boost::math::inverse_chi_squared_distribution<double> heavy_ref(3.0);
  tyche_test::check_ks(heavy, [&](double v) { return boost::math::cdf(heavy_ref, v); }, "inv_chi_square(3)");
}

TEST_CASE("inv_chi_square: a named variable lives on (0, inf)", "[distributions][inv_chi_square]") {
  const auto m = model(joint(inv_chi_square<"ic2">(3.0)));
  tyche_test::check_support(
      m, "ic2", {0.7, 2e-2, 4.2}, {-1.0, 0.0}, [](double v) { return boost_log_pdf(v, 3.0); },
      tyche_test::log_jacobian_positive);
  const std::vector<double> y{1.0, -1.0};
  CHECK_THROWS_WITH(inv_chi_square(3.0).observe(data(y)), Catch::Contains("y[2]") && Catch::Contains("not positive"));
}
