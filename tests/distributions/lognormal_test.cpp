// lognormal(mu, sigma): log x ~ normal(mu, sigma).
#include "support/continuous_checks.hpp"

#include <tyche/tyche.hpp>

#include <boost/math/distributions/lognormal.hpp>
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using namespace tyche;

namespace {
double boost_log_pdf(double x, double m, double s) {
  return std::log(boost::math::pdf(boost::math::lognormal_distribution<double>(m, s), x));
}
}  // namespace

TEST_CASE("lognormal: log density against Boost.Math, and its gradient", "[distributions][lognormal]") {
  param<"x"> x;
  param<"m"> m;
  param<"s"> s;
  const auto prog = compile(lognormal(m, s).log_prob(x), x, m, s);
  const auto pts = tyche_test::points_in(60, {{0.05, 10.0}, {-2.0, 2.0}, {0.2, 3.0}}, 401);
  tyche_test::check_log_density(
      prog, pts, [](const std::vector<double>& p) { return boost_log_pdf(p[0], p[1], p[2]); },
      "lognormal(m, s).log_prob(x)");
}

TEST_CASE("lognormal: draws against mean, variance and Boost's cdf", "[distributions][lognormal]") {
  using D = decltype(lognormal(0.0, 1.0));
  const double mu = 0.3, s = 0.5;
  const auto draws = tyche_test::draws_of<D>(402, mu, s);
  tyche_test::check_moments(draws, D::mean(mu, s), D::variance(mu, s), "lognormal(0.3, 0.5)");
  const boost::math::lognormal_distribution<double> ref(mu, s);
  tyche_test::check_ks(draws, [&](double v) { return boost::math::cdf(ref, v); }, "lognormal(0.3, 0.5)");
}

TEST_CASE("lognormal: a named variable lives on (0, inf)", "[distributions][lognormal]") {
  const auto m = model(joint(lognormal<"ln">(0.5, 1.2)));
  tyche_test::check_support(
      m, "ln", {0.7, 1e-3, 4.2}, {-1.0, 0.0}, [](double v) { return boost_log_pdf(v, 0.5, 1.2); },
      tyche_test::log_jacobian_positive);
  const std::vector<double> y{1.0, 0.0};
  CHECK_THROWS_WITH(lognormal(0.0, 1.0).observe(data(y)), Catch::Contains("y[2]") && Catch::Contains("not positive"));
}
