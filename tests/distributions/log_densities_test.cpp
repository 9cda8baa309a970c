// The *_lpdf / *_lpmf functions (tyche/distributions/log_densities.hpp): values against
// Boost.Math, gradients, sums over a data vector, and the checks they share with observe().
#include "support/continuous_checks.hpp"

#include <tyche/tyche.hpp>

#include <boost/math/distributions/gamma.hpp>
#include <boost/math/distributions/negative_binomial.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/poisson.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <boost/math/distributions/weibull.hpp>
#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>
#include <vector>

using namespace tyche;

// Scales are written exp(·) of a parameter, so that their supports are known to be positive
// (the functions check their arguments' domains as observe() does).
TEST_CASE("lpdf: continuous families against Boost.Math", "[distributions][lpdf]") {
  param<"x"> x;
  param<"a"> a;
  param<"b"> b;
  param<"c"> c;
  const auto pts = tyche_test::points_in(40, {{0.1, 6.0}, {-1.0, 1.5}, {-1.0, 1.0}}, 71);
  const auto pts4 = tyche_test::points_in(40, {{0.1, 6.0}, {-1.0, 1.5}, {-1.0, 1.0}, {-0.8, 0.8}}, 73);

  const auto normal_prog = compile(normal_lpdf(x, a, exp(b)), x, a, b);
  tyche_test::check_log_density(
      normal_prog, pts, [](const std::vector<double>& p) {
        return std::log(boost::math::pdf(boost::math::normal_distribution<double>(p[1], std::exp(p[2])), p[0]));
      }, "normal_lpdf(x, a, exp(b))");

  const auto t_prog = compile(student_t_lpdf(x, exp(c) + 1.0, a, exp(b)), x, a, b, c);
  tyche_test::check_log_density(
      t_prog, pts4, [](const std::vector<double>& p) {
        const double nu = std::exp(p[3]) + 1.0, s = std::exp(p[2]);
        return std::log(boost::math::pdf(boost::math::students_t_distribution<double>(nu), (p[0] - p[1]) / s) / s);
      }, "student_t_lpdf(x, exp(c) + 1, a, exp(b))");

  // gamma(alpha, beta) with rate beta; Boost's gamma takes the scale 1/beta.
  const auto gamma_prog = compile(gamma_lpdf(x, exp(a), exp(b)), x, a, b);
  tyche_test::check_log_density(
      gamma_prog, pts, [](const std::vector<double>& p) {
        return std::log(boost::math::pdf(boost::math::gamma_distribution<double>(std::exp(p[1]), std::exp(-p[2])), p[0]));
      }, "gamma_lpdf(x, exp(a), exp(b))");

  const auto weibull_prog = compile(weibull_lpdf(x, exp(a), exp(b)), x, a, b);
  tyche_test::check_log_density(
      weibull_prog, pts, [](const std::vector<double>& p) {
        // Boost's pdf underflows to 0 where the log density is near −2000: its closed form.
        const double k = std::exp(p[1]), lambda = std::exp(p[2]), z = p[0] / lambda;
        const double pdf = boost::math::pdf(boost::math::weibull_distribution<double>(k, lambda), p[0]);
        return pdf > 1e-300 ? std::log(pdf) : std::log(k / lambda) + (k - 1) * std::log(z) - std::pow(z, k);
      }, "weibull_lpdf(x, exp(a), exp(b))");
}

TEST_CASE("lpmf: discrete families over a data vector, summed, against Boost.Math",
          "[distributions][lpdf]") {
  const std::vector<double> k{0, 3, 1, 7, 2};
  param<"a"> a;
  param<"b"> b;
  const auto pts = tyche_test::points_in(30, {{-1.0, 2.0}, {-1.0, 2.0}}, 72);

  const auto poisson_prog = compile(poisson_lpmf(data(k), exp(a)), a);
  const auto poisson_log_prog = compile(poisson_log_lpmf(data(k), a), a);
  const auto nb_prog = compile(neg_binomial_2_lpmf(data(k), exp(a), exp(b)), a, b);
  for (const auto& p : pts) {
    const double lambda = std::exp(p[0]), mu = std::exp(p[0]), phi = std::exp(p[1]);
    double want_poisson = 0, want_nb = 0;
    for (double v : k) {
      want_poisson += std::log(boost::math::pdf(boost::math::poisson_distribution<double>(lambda), v));
      // neg_binomial_2(mu, phi): Boost's negative_binomial(r = phi, p = phi / (mu + phi)).
      want_nb += std::log(boost::math::pdf(boost::math::negative_binomial_distribution<double>(phi, phi / (mu + phi)), v));
    }
    const std::vector<double> th1{p[0]}, th2{p[0], p[1]};
    CHECK(poisson_prog.value(th1) == Approx(want_poisson).epsilon(1e-12));
    CHECK(poisson_log_prog.value(th1) == Approx(want_poisson).epsilon(1e-12));
    CHECK(nb_prog.value(th2) == Approx(want_nb).epsilon(1e-10));
    tyche_test::check_gradient_at(poisson_prog, th1, "poisson_lpmf(k, exp(a))");
    tyche_test::check_gradient_at(nb_prog, th2, "neg_binomial_2_lpmf(k, exp(a), exp(b))");
  }
}

TEST_CASE("lpdf: arguments and data are checked as observe() checks them", "[distributions][lpdf]") {
  param<"a"> a;
  const std::vector<double> negative{1.0, -2.0}, counts{1.0, 2.5}, scales{1.0, -0.5};
  // A data value outside the support names the family, the index (1-based) and the value.
  CHECK_THROWS_WITH(poisson_lpmf(data(negative), exp(a)),
                    Catch::Matchers::Contains("poisson") && Catch::Matchers::Contains("y[2] = -2"));
  CHECK_THROWS_WITH(poisson_lpmf(data(counts), exp(a)), Catch::Matchers::Contains("y[2] = 2.5"));
  CHECK_THROWS_AS(normal_lpdf(a, 0.0, -1.0), std::invalid_argument);
  CHECK_THROWS_WITH(normal_lpdf(a, 0.0, data(scales)), Catch::Matchers::Contains("sigma"));
}
