// student_t(nu, mu, sigma).
#include "support/continuous_checks.hpp"

#include <tyche/tyche.hpp>

#include <boost/math/distributions/students_t.hpp>
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

using namespace tyche;

namespace {
double boost_log_pdf(double x, double n, double m, double s) {
  return std::log(boost::math::pdf(boost::math::students_t_distribution<double>(n), (x - m) / s) / s);
}
}  // namespace

TEST_CASE("student_t: log density against Boost.Math, and its gradient", "[distributions][student_t]") {
  param<"x"> x;
  param<"n"> n;
  param<"m"> m;
  param<"s"> s;
  const auto prog = compile(student_t(n, m, s).log_prob(x), x, n, m, s);
  const auto pts = tyche_test::points_in(60, {{-10.0, 10.0}, {0.5, 30.0}, {-3.0, 3.0}, {0.3, 4.0}}, 601);
  tyche_test::check_log_density(
      prog, pts, [](const std::vector<double>& p) { return boost_log_pdf(p[0], p[1], p[2], p[3]); },
      "student_t(n, m, s).log_prob(x)");
}

TEST_CASE("student_t: draws against mean, variance and Boost's cdf", "[distributions][student_t]") {
  using D = decltype(student_t(1.0, 0.0, 1.0));
  // ν = 12 > 8: the sample variance's standard error needs the 8th moment.
  const double n = 12.0, m = -1.5, s = 2.0;
  const auto draws = tyche_test::draws_of<D>(602, n, m, s);
  tyche_test::check_moments(draws, D::mean(n, m, s), D::variance(n, m, s), "student_t(12, -1.5, 2)");
  const boost::math::students_t_distribution<double> ref(n);
  tyche_test::check_ks(draws, [&](double v) { return boost::math::cdf(ref, (v - m) / s); }, "student_t(12, -1.5, 2)");
  const auto heavy = tyche_test::draws_of<D>(603, 1.5, 0.5, 0.7);  // no variance: the cdf only
  const boost::math::students_t_distribution<double> heavy_ref(1.5);
  tyche_test::check_ks(heavy, [&](double v) { return boost::math::cdf(heavy_ref, (v - 0.5) / 0.7); },
                       "student_t(1.5, 0.5, 0.7)");
  CHECK(std::isnan(D::mean(0.8, 0.0, 1.0)));
  CHECK(D::variance(1.5, 0.0, 1.0) == std::numeric_limits<double>::infinity());
}

TEST_CASE("student_t: a named variable lives on the real line", "[distributions][student_t]") {
  const auto m = model(joint(student_t<"t">(4.0, 1.0, 2.0)));
  tyche_test::check_support(
      m, "t", {-3.5, 0.0, 1.0, 7.25}, {std::numeric_limits<double>::quiet_NaN()},
      [](double v) { return boost_log_pdf(v, 4.0, 1.0, 2.0); }, tyche_test::log_jacobian_real);
}
