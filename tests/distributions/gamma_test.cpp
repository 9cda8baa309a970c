// gamma(alpha, beta): shape α, rate β.
#include "support/continuous_checks.hpp"

#include <tyche/tyche.hpp>

#include <boost/math/distributions/gamma.hpp>
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using namespace tyche;

namespace {
double boost_log_pdf(double x, double a, double b) {
  return std::log(boost::math::pdf(boost::math::gamma_distribution<double>(a, 1.0 / b), x));
}
}  // namespace

TEST_CASE("gamma: log density against Boost.Math, and its gradient", "[distributions][gamma]") {
  param<"x"> x;
  param<"a"> a;
  param<"b"> b;
  const auto prog = compile(gamma(a, b).log_prob(x), x, a, b);
  const auto pts = tyche_test::points_in(60, {{0.05, 10.0}, {0.2, 8.0}, {0.1, 5.0}}, 101);
  tyche_test::check_log_density(
      prog, pts, [](const std::vector<double>& p) { return boost_log_pdf(p[0], p[1], p[2]); },
      "gamma(a, b).log_prob(x)");
}

TEST_CASE("gamma: draws against mean, variance and Boost's cdf", "[distributions][gamma]") {
  using D = decltype(gamma(1.0, 1.0));
  for (const auto& [a, b] : std::vector<std::pair<double, double>>{{2.5, 3.0}, {0.5, 0.7}}) {
    const auto draws = tyche_test::draws_of<D>(102, a, b);
    const std::string what = "gamma(" + std::to_string(a) + ", " + std::to_string(b) + ")";
    tyche_test::check_moments(draws, D::mean(a, b), D::variance(a, b), what);
    const boost::math::gamma_distribution<double> ref(a, 1.0 / b);
    tyche_test::check_ks(draws, [&](double v) { return boost::math::cdf(ref, v); }, what);
  }
}

TEST_CASE("gamma: a named variable lives on (0, inf)", "[distributions][gamma]") {
  const auto m = model(joint(gamma<"g">(2.0, 3.0)));
  tyche_test::check_support(
      m, "g", {0.7, 1e-3, 4.2}, {-1.0, 0.0},
      [](double v) { return boost_log_pdf(v, 2.0, 3.0); }, tyche_test::log_jacobian_positive);
  const std::vector<double> y{1.0, -0.5};
  CHECK_THROWS_WITH(gamma(2.0, 3.0).observe(data(y)),
                    Catch::Contains("y[2]") && Catch::Contains("not positive"));
}
