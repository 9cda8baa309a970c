// half_student_t(nu, sigma): student_t(nu, 0, sigma) folded onto x ≥ 0.
#include "support/continuous_checks.hpp"

#include <tyche/tyche.hpp>

#include <boost/math/distributions/students_t.hpp>
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using namespace tyche;

namespace {
/// 2 × the student_t(ν, 0, σ) density, for x > 0.
double boost_log_pdf(double x, double n, double s) {
  return std::log(2 * boost::math::pdf(boost::math::students_t_distribution<double>(n), x / s) / s);
}
}  // namespace

TEST_CASE("half_student_t: log density against Boost.Math, and its gradient",
          "[distributions][half_student_t]") {
  param<"x"> x;
  param<"n"> n;
  param<"s"> s;
  const auto prog = compile(half_student_t(n, s).log_prob(x), x, n, s);
  const auto pts = tyche_test::points_in(60, {{0.01, 10.0}, {0.5, 30.0}, {0.3, 4.0}}, 701);
  tyche_test::check_log_density(
      prog, pts, [](const std::vector<double>& p) { return boost_log_pdf(p[0], p[1], p[2]); },
      "half_student_t(n, s).log_prob(x)");
}

TEST_CASE("half_student_t: draws against mean, variance and Boost's cdf", "[distributions][half_student_t]") {
  using D = decltype(half_student_t(1.0, 1.0));
  const double n = 12.0, s = 2.0;  // ν > 8: see student_t
  const auto draws = tyche_test::draws_of<D>(702, n, s);
  tyche_test::check_moments(draws, D::mean(n, s), D::variance(n, s), "half_student_t(12, 2)");
  const boost::math::students_t_distribution<double> ref(n);
  tyche_test::check_ks(draws, [&](double v) { return 2 * boost::math::cdf(ref, v / s) - 1; }, "half_student_t(12, 2)");
  const auto heavy = tyche_test::draws_of<D>(703, 1.5, 0.7);  // no variance: the cdf only
  const boost::math::students_t_distribution<double> heavy_ref(1.5);
  tyche_test::check_ks(heavy, [&](double v) { return 2 * boost::math::cdf(heavy_ref, v / 0.7) - 1; },
                       "half_student_t(1.5, 0.7)");
}

TEST_CASE("half_student_t: a named variable lives on (0, inf)", "[distributions][half_student_t]") {
  const auto m = model(joint(half_student_t<"hst">(3.0, 2.5)));
  tyche_test::check_support(
      m, "hst", {0.7, 1e-3, 4.2}, {-1.0, 0.0}, [](double v) { return boost_log_pdf(v, 3.0, 2.5); },
      tyche_test::log_jacobian_positive);
  const std::vector<double> y{1.0, -0.5};
  CHECK_THROWS_WITH(half_student_t(3.0, 1.0).observe(data(y)), Catch::Contains("y[2]") && Catch::Contains("negative"));
}
