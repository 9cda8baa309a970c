// weibull(alpha, sigma): shape α, scale σ.
#include "support/continuous_checks.hpp"

#include <tyche/tyche.hpp>

#include <boost/math/distributions/weibull.hpp>
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using namespace tyche;

namespace {
double boost_log_pdf(double x, double a, double s) {
  return std::log(boost::math::pdf(boost::math::weibull_distribution<double>(a, s), x));
}
}  // namespace

TEST_CASE("weibull: log density against Boost.Math, and its gradient", "[distributions][weibull]") {
  param<"x"> x;
  param<"a"> a;
  param<"s"> s;
  const auto prog = compile(weibull(a, s).log_prob(x), x, a, s);
  const auto pts = tyche_test::points_in(60, {{0.05, 5.0}, {0.3, 3.0}, {1.0, 4.0}}, 1201);
  tyche_test::check_log_density(
      prog, pts, [](const std::vector<double>& p) { return boost_log_pdf(p[0], p[1], p[2]); },
      "weibull(a, s).log_prob(x)");
}

TEST_CASE("weibull: draws against mean, variance and Boost's cdf", "[distributions][weibull]") {
  using D = decltype(weibull(1.0, 1.0));
  for (const auto& [a, s] : std::vector<std::pair<double, double>>{{1.5, 2.0}, {0.7, 0.5}}) {
    const auto draws = tyche_test::draws_of<D>(1202, a, s);
    const std::string what = "weibull(" + std::to_string(a) + ", " + std::to_string(s) + ")";
    tyche_test::check_moments(draws, D::mean(a, s), D::variance(a, s), what);
    const boost::math::weibull_distribution<double> ref(a, s);
    tyche_test::check_ks(draws, [&](double v) { return boost::math::cdf(ref, v); }, what);
  }
}

TEST_CASE("weibull: a named variable lives on (0, inf)", "[distributions][weibull]") {
  const auto m = model(joint(weibull<"w">(1.5, 2.0)));
  tyche_test::check_support(
      m, "w", {0.7, 1e-3, 4.2}, {-1.0, 0.0}, [](double v) { return boost_log_pdf(v, 1.5, 2.0); },
      tyche_test::log_jacobian_positive);
  const std::vector<double> y{1.0, 0.0};
  CHECK_THROWS_WITH(weibull(1.5, 1.0).observe(data(y)), Catch::Contains("y[2]") && Catch::Contains("not positive"));
}
