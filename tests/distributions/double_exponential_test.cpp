// double_exponential(mu, sigma) (Laplace).
#include "support/continuous_checks.hpp"

#include <tyche/tyche.hpp>

#include <boost/math/distributions/laplace.hpp>
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

using namespace tyche;

namespace {
double boost_log_pdf(double x, double m, double s) {
  return std::log(boost::math::pdf(boost::math::laplace_distribution<double>(m, s), x));
}
}  // namespace

TEST_CASE("double_exponential: log density against Boost.Math, and its gradient",
          "[distributions][double_exponential]") {
  param<"x"> x;
  param<"m"> m;
  param<"s"> s;
  const auto prog = compile(double_exponential(m, s).log_prob(x), x, m, s);
  auto pts = tyche_test::points_in(80, {{-10.0, 10.0}, {-3.0, 3.0}, {0.3, 4.0}}, 1001);
  // Away from the kink at x = μ, where finite differences are meaningless.
  std::erase_if(pts, [](const std::vector<double>& p) { return std::fabs(p[0] - p[1]) < 0.05; });
  REQUIRE(pts.size() >= 50);
  tyche_test::check_log_density(
      prog, pts, [](const std::vector<double>& p) { return boost_log_pdf(p[0], p[1], p[2]); },
      "double_exponential(m, s).log_prob(x)");
}

TEST_CASE("double_exponential: draws against mean, variance and Boost's cdf",
          "[distributions][double_exponential]") {
  using D = decltype(double_exponential(0.0, 1.0));
  const double m = 1.5, s = 0.8;
  const auto draws = tyche_test::draws_of<D>(1002, m, s);
  tyche_test::check_moments(draws, D::mean(m, s), D::variance(m, s), "double_exponential(1.5, 0.8)");
  const boost::math::laplace_distribution<double> ref(m, s);
  tyche_test::check_ks(draws, [&](double v) { return boost::math::cdf(ref, v); }, "double_exponential(1.5, 0.8)");
}

TEST_CASE("double_exponential: a named variable lives on the real line", "[distributions][double_exponential]") {
  const auto m = model(joint(double_exponential<"lap">(-1.0, 2.0)));
  tyche_test::check_support(
      m, "lap", {-3.5, 0.0, 1.0, 7.25}, {std::numeric_limits<double>::quiet_NaN()},
      [](double v) { return boost_log_pdf(v, -1.0, 2.0); }, tyche_test::log_jacobian_real);
}
