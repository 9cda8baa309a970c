// beta(a, b).
#include "support/continuous_checks.hpp"

#include <tyche/tyche.hpp>

#include <boost/math/distributions/beta.hpp>
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using namespace tyche;

namespace {
double boost_log_pdf(double x, double a, double b) {
  return std::log(boost::math::pdf(boost::math::beta_distribution<double>(a, b), x));
}
}  // namespace

TEST_CASE("beta: log density against Boost.Math, and its gradient", "[distributions][beta]") {
  param<"x"> x;
  param<"a"> a;
  param<"b"> b;
  const auto prog = compile(tyche::beta(a, b).log_prob(x), x, a, b);
  const auto pts = tyche_test::points_in(60, {{0.02, 0.98}, {0.3, 10.0}, {0.3, 10.0}}, 801);
  tyche_test::check_log_density(
      prog, pts, [](const std::vector<double>& p) { return boost_log_pdf(p[0], p[1], p[2]); },
      "beta(a, b).log_prob(x)");
}

TEST_CASE("beta: draws against mean, variance and Boost's cdf", "[distributions][beta]") {
  using D = decltype(tyche::beta(1.0, 1.0));
  for (const auto& [a, b] : std::vector<std::pair<double, double>>{{2.0, 5.0}, {0.5, 0.5}}) {
    const auto draws = tyche_test::draws_of<D>(802, a, b);
    const std::string what = "beta(" + std::to_string(a) + ", " + std::to_string(b) + ")";
    tyche_test::check_moments(draws, D::mean(a, b), D::variance(a, b), what);
    const boost::math::beta_distribution<double> ref(a, b);
    tyche_test::check_ks(draws, [&](double v) { return boost::math::cdf(ref, v); }, what);
  }
}

TEST_CASE("beta: a named variable lives on (0, 1)", "[distributions][beta]") {
  const auto m = model(joint(tyche::beta<"p">(2.0, 3.0)));
  tyche_test::check_support(
      m, "p", {0.3, 1e-3, 0.999}, {-0.5, 0.0, 1.0, 1.5},
      [](double v) { return boost_log_pdf(v, 2.0, 3.0); },
      [](double v) { return tyche_test::log_jacobian_interval(v, 0.0, 1.0); });
  const std::vector<double> y{0.5, 1.0};
  CHECK_THROWS_WITH(tyche::beta(2.0, 2.0).observe(data(y)), Catch::Contains("y[2]") && Catch::Contains("outside"));
}
