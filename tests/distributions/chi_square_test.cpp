// chi_square(nu).
#include "support/continuous_checks.hpp"

#include <tyche/tyche.hpp>

#include <boost/math/distributions/chi_squared.hpp>
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using namespace tyche;

namespace {
double boost_log_pdf(double x, double n) {
  return std::log(boost::math::pdf(boost::math::chi_squared_distribution<double>(n), x));
}
}  // namespace

TEST_CASE("chi_square: log density against Boost.Math, and its gradient", "[distributions][chi_square]") {
  param<"x"> x;
  param<"n"> n;
  const auto prog = compile(chi_square(n).log_prob(x), x, n);
  const auto pts = tyche_test::points_in(60, {{0.05, 30.0}, {0.5, 20.0}}, 1301);
  tyche_test::check_log_density(
      prog, pts, [](const std::vector<double>& p) { return boost_log_pdf(p[0], p[1]); },
      "chi_square(n).log_prob(x)");
}

TEST_CASE("chi_square: draws against mean, variance and Boost's cdf", "[distributions][chi_square]") {
  using D = decltype(chi_square(1.0));
  for (const double n : {4.5, 0.8}) {
    const auto draws = tyche_test::draws_of<D>(1302, n);
    const std::string what = "chi_square(" + std::to_string(n) + ")";
    tyche_test::check_moments(draws, D::mean(n), D::variance(n), what);
    const boost::math::chi_squared_distribution<double> ref(n);
    tyche_test::check_ks(draws, [&](double v) { return boost::math::cdf(ref, v); }, what);
  }
}

TEST_CASE("chi_square: a named variable lives on (0, inf)", "[distributions][chi_square]") {
  const auto m = model(joint(chi_square<"c2">(3.0)));
  tyche_test::check_support(
      m, "c2", {0.7, 1e-3, 4.2}, {-1.0, 0.0}, [](double v) { return boost_log_pdf(v, 3.0); },
      tyche_test::log_jacobian_positive);
  const std::vector<double> y{1.0, 0.0};
  CHECK_THROWS_WITH(chi_square(3.0).observe(data(y)), Catch::Contains("y[2]") && Catch::Contains("not positive"));
}
