// logistic(mu, sigma), the distribution; logistic(e) with one argument stays the inverse logit.
#include "support/continuous_checks.hpp"

#include <tyche/tyche.hpp>

#include <boost/math/distributions/logistic.hpp>
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <span>
#include <vector>

using namespace tyche;

namespace {
double boost_log_pdf(double x, double m, double s) {
  return std::log(boost::math::pdf(boost::math::logistic_distribution<double>(m, s), x));
}
}  // namespace

TEST_CASE("logistic: log density against Boost.Math, and its gradient", "[distributions][logistic]") {
  param<"x"> x;
  param<"m"> m;
  param<"s"> s;
  const auto prog = compile(logistic(m, s).log_prob(x), x, m, s);
  const auto pts = tyche_test::points_in(60, {{-10.0, 10.0}, {-3.0, 3.0}, {0.3, 4.0}}, 1101);
  tyche_test::check_log_density(
      prog, pts, [](const std::vector<double>& p) { return boost_log_pdf(p[0], p[1], p[2]); },
      "logistic(m, s).log_prob(x)");
}

TEST_CASE("logistic: draws against mean, variance and Boost's cdf", "[distributions][logistic]") {
  using D = decltype(logistic(0.0, 1.0));
  const double m = -0.5, s = 1.3;
  const auto draws = tyche_test::draws_of<D>(1102, m, s);
  tyche_test::check_moments(draws, D::mean(m, s), D::variance(m, s), "logistic(-0.5, 1.3)");
  const boost::math::logistic_distribution<double> ref(m, s);
  tyche_test::check_ks(draws, [&](double v) { return boost::math::cdf(ref, v); }, "logistic(-0.5, 1.3)");
}

TEST_CASE("logistic: a named variable lives on the real line", "[distributions][logistic]") {
  const auto m = model(joint(logistic<"lg">(1.0, 0.5)));
  tyche_test::check_support(
      m, "lg", {-3.5, 0.0, 1.0, 7.25}, {std::numeric_limits<double>::quiet_NaN()},
      [](double v) { return boost_log_pdf(v, 1.0, 0.5); }, tyche_test::log_jacobian_real);
}

TEST_CASE("logistic: with one argument it is still the inverse logit", "[distributions][logistic]") {
  param<"x"> x;
  const auto prog = compile(logistic(x));
  std::vector<double> ws(prog.workspace_size());
  const std::vector<double> at{0.3};
  CHECK(prog.value(std::span<const double>(at), std::span<double>(ws)) ==
        Approx(1 / (1 + std::exp(-0.3))).epsilon(1e-15));
  // The distribution of a variable whose location is logistic(x) of another.
  const auto mu = normal<"mu">(0.0, 1.0);
  const auto md = model(joint(mu, logistic<"y">(logistic(mu), 2.0)));
  CHECK(md.dim() == 2);
}
