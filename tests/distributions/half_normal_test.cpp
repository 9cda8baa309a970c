// half_normal(sigma): normal(0, sigma) folded onto x ≥ 0.
#include "support/continuous_checks.hpp"

#include <tyche/tyche.hpp>

#include <boost/math/distributions/normal.hpp>
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using namespace tyche;

namespace {
/// 2 × the normal(0, σ) density, for x > 0.
double boost_log_pdf(double x, double s) {
  return std::log(2 * boost::math::pdf(boost::math::normal_distribution<double>(0.0, s), x));
}
}  // namespace

TEST_CASE("half_normal: log density against Boost.Math, and its gradient", "[distributions][half_normal]") {
  param<"x"> x;
  param<"s"> s;
  const auto prog = compile(half_normal(s).log_prob(x), x, s);
  const auto pts = tyche_test::points_in(60, {{0.01, 10.0}, {0.5, 5.0}}, 201);
  tyche_test::check_log_density(
      prog, pts, [](const std::vector<double>& p) { return boost_log_pdf(p[0], p[1]); },
      "half_normal(s).log_prob(x)");
}

TEST_CASE("half_normal: draws against mean, variance and Boost's cdf", "[distributions][half_normal]") {
  using D = decltype(half_normal(1.0));
  const double s = 1.7;
  const auto draws = tyche_test::draws_of<D>(202, s);
  tyche_test::check_moments(draws, D::mean(s), D::variance(s), "half_normal(1.7)");
  const boost::math::normal_distribution<double> ref(0.0, s);
  tyche_test::check_ks(draws, [&](double v) { return 2 * boost::math::cdf(ref, v) - 1; }, "half_normal(1.7)");
}

TEST_CASE("half_normal: a named variable lives on (0, inf)", "[distributions][half_normal]") {
  const auto m = model(joint(half_normal<"hn">(2.0)));
  tyche_test::check_support(
      m, "hn", {0.7, 1e-3, 4.2}, {-1.0, 0.0}, [](double v) { return boost_log_pdf(v, 2.0); },
      tyche_test::log_jacobian_positive);
  const std::vector<double> y{1.0, -0.5};
  CHECK_THROWS_WITH(half_normal(2.0).observe(data(y)), Catch::Contains("y[2]") && Catch::Contains("negative"));
}
