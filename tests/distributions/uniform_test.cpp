// uniform(a, b).
#include "support/continuous_checks.hpp"

#include <tyche/tyche.hpp>

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/uniform.hpp>
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using namespace tyche;

namespace {
double boost_log_pdf(double x, double a, double b) {
  return std::log(boost::math::pdf(boost::math::uniform_distribution<double>(a, b), x));
}
}  // namespace

TEST_CASE("uniform: log density against Boost.Math, and its gradient", "[distributions][uniform]") {
  param<"x"> x;
  param<"a"> a;
  param<"b"> b;
  const auto prog = compile(uniform(a, b).log_prob(x), x, a, b);
  // x = a + t (b − a), t ∈ (0.01, 0.99): inside the support.
  auto pts = tyche_test::points_in(60, {{0.01, 0.99}, {-5.0, 0.0}, {0.5, 5.0}}, 901);
  for (auto& p : pts) p[0] = p[1] + p[0] * (p[2] - p[1]);
  tyche_test::check_log_density(
      prog, pts, [](const std::vector<double>& p) { return boost_log_pdf(p[0], p[1], p[2]); },
      "uniform(a, b).log_prob(x)");
}

TEST_CASE("uniform: draws against mean, variance and Boost's cdf", "[distributions][uniform]") {
  using D = decltype(uniform(0.0, 1.0));
  const double a = -2.0, b = 3.5;
  const auto draws = tyche_test::draws_of<D>(902, a, b);
  tyche_test::check_moments(draws, D::mean(a, b), D::variance(a, b), "uniform(-2, 3.5)");
  const boost::math::uniform_distribution<double> ref(a, b);
  tyche_test::check_ks(draws, [&](double v) { return boost::math::cdf(ref, v); }, "uniform(-2, 3.5)");
}

TEST_CASE("uniform: a named variable lives on (a, b)", "[distributions][uniform]") {
  const auto m = model(joint(uniform<"u">(-1.0, 3.0)));
  tyche_test::check_support(
      m, "u", {0.3, -0.999, 2.999}, {-1.5, -1.0, 3.0, 4.0},
      [](double v) { return boost_log_pdf(v, -1.0, 3.0); },
      [](double v) { return tyche_test::log_jacobian_interval(v, -1.0, 3.0); });
}

TEST_CASE("uniform: a vector variable counts −log(b − a) once per element", "[distributions][uniform]") {
  const auto m = model(joint(uniform<"v">(-1.0, 3.0, shape<3>)));
  const std::vector<double> theta = m.unconstrain(std::vector<double>{0.0, 1.0, 2.5});
  CHECK(m.log_prob(theta, false) == Approx(-3 * std::log(4.0)).epsilon(1e-14));
}

TEST_CASE("uniform: bounds given by another variable", "[distributions][uniform]") {
  const auto lo = normal<"lo">(0.0, 1.0);
  const auto m = model(joint(lo, uniform<"u">(lo, lo + 2.0)));
  const std::vector<double> theta = m.unconstrain(std::vector<double>{0.5, 1.75});
  const std::vector<double> back = m.constrain(theta);
  CHECK(back[0] == Approx(0.5).epsilon(1e-14));
  CHECK(back[1] == Approx(1.75).epsilon(1e-12));
  const double expected = std::log(boost::math::pdf(boost::math::normal_distribution<double>(0.0, 1.0), 0.5)) +
                          boost_log_pdf(1.75, 0.5, 2.5) + tyche_test::log_jacobian_interval(1.75, 0.5, 2.5);
  CHECK(m.log_prob(theta, true) == Approx(expected).epsilon(1e-12));
  CHECK_THROWS_WITH(m.unconstrain(std::vector<double>{0.5, 2.75}), Catch::Contains("u = "));
}

TEST_CASE("uniform: b - a must be > 0", "[distributions][uniform][support]") {
  using namespace tyche;
  // Constants decide when the model is built; the message names the argument and its support.
  try {
    const auto m = model(joint(uniform<"u">(2.0, 1.0)));
    FAIL("uniform(2, 1) was accepted");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()) == "tyche::uniform(a, b): b - a must be > 0, but its support is [-1, -1]");
  }
  // Bounds that move with a parameter: b − a is read as a Line, 0·mu + 2, and proven positive.
  const auto mu = normal<"mu">(0.0, 1.0);
  const auto m = model(joint(mu, uniform<"u">(mu - 1.0, mu + 1.0)));
  CHECK(m.dim() == 2);
}
