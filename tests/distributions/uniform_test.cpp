// uniform(a, b).
#include "support/continuous_checks.hpp"

#include <tyche/tyche.hpp>

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/uniform.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
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
    CHECK(std::string(e.what()) ==
          "tyche::joint(...): the random variable 'u' (uniform): tyche::uniform(a, b): b - a must be > 0, but it is -1");
  }
  // Bounds that move with a parameter: b − a is read as a Line, 0·mu + 2, and proven positive.
  const auto mu = normal<"mu">(0.0, 1.0);
  const auto m = model(joint(mu, uniform<"u">(mu - 1.0, mu + 1.0)));
  CHECK(m.dim() == 2);
}

TEST_CASE("uniform: an observation outside bounds that depend on a parameter has density 0", "[distributions][uniform]") {
  using Catch::Matchers::Contains;
  // The German tank problem: y ~ uniform(0, θ), θ ~ pareto(1, 1); the posterior is θ ≥ max y = 2.
  const std::vector<double> y{0.4, 1.7, 2.0, 0.9, 1.2};
  const auto theta = pareto<"theta">(1.0, 1.0);
  const auto m = model(joint(theta, uniform(0.0, theta).observe(data(y))));
  const auto at = [&](double v) { return m.unconstrain(std::vector<double>{v}); };
  // θ = 1.5 leaves y[2], y[3] above b: −∞, with a finite gradient, and the term is named.
  std::vector<double> grad(1);
  CHECK(m.log_prob_and_gradient(at(1.5), grad) == -std::numeric_limits<double>::infinity());
  CHECK(std::isfinite(grad[0]));
  CHECK_THAT(m.non_finite_terms(at(1.5)), Contains("term 2 of joint(...), uniform(...).observe(y)") && Contains("is -inf"));
  // θ = 1.99999: just below max y, still −∞; θ = 2 (y = b is in the support) and θ = 2.5: pareto(1, 1) and 5 × −log θ.
  CHECK(m.log_prob(at(1.99999), false) == -std::numeric_limits<double>::infinity());
  for (double v : {2.0, 2.5}) CHECK(m.log_prob(at(v), false) == Approx(-2 * std::log(v) - 5 * std::log(v)).epsilon(1e-12));
  // NUTS never leaves the support, and the posterior mean is Pareto(2, 6)'s, 2.4 (within 4 MCSE).
  const auto fit = nuts(m, {.chains = 2, .warmup = 300, .draws = 500, .seed = 905});
  const auto chains = fit.parameter(0);
  double sum = 0, n = 0, lowest = 1e300;
  for (const auto& c : chains)
    for (double v : c) {
      sum += v;
      n += 1;
      lowest = std::min(lowest, v);
    }
  INFO("mean " << sum / n << ", MCSE " << mcse_mean(chains) << ", lowest draw " << lowest);
  CHECK(lowest >= 2.0);
  CHECK(std::fabs(sum / n - 2.4) < 4 * mcse_mean(chains));
}

TEST_CASE("uniform: an observation outside constant or data bounds is an error when the model is built",
          "[distributions][uniform]") {
  using Catch::Matchers::Contains;
  const std::vector<double> y{0.2, 1.5, 0.7};
  CHECK_THROWS_WITH(uniform(0.0, 1.0).observe(data(y)),
                    Contains("tyche::uniform(...).observe(y): y[2] = 1.5 is above b = 1, outside the family's support"));
  const std::vector<double> lower{0.0, 1.0, 0.8};
  CHECK_THROWS_WITH(uniform(data(lower), 2.0).observe(data(y)), Contains("y[3] = 0.7 is below a[3] = 0.8"));
  CHECK_NOTHROW(uniform(0.0, 1.5).observe(data(y)));  // the bounds are in the support
  // pareto and pareto_type_2: below y_min / mu.
  CHECK_THROWS_WITH(pareto(0.5, 3.0).observe(data(y)), Contains("tyche::pareto(...).observe(y): y[1] = 0.2 is below y_min = 0.5"));
  CHECK_THROWS_WITH(pareto_type_2(0.3, 1.0, 3.0).observe(data(y)),
                    Contains("tyche::pareto_type_2(...).observe(y): y[1] = 0.2 is below mu = 0.3"));
}

TEST_CASE("pareto, pareto_type_2: an observation below a lower bound that depends on a parameter has density 0",
          "[distributions][uniform]") {
  const std::vector<double> y{1.5, 3.0, 2.2};
  const auto lo = lognormal<"lo">(0.0, 1.0);
  const auto m = model(joint(lo, pareto(lo, 2.0).observe(data(y))));
  const auto m2 = model(joint(lo, pareto_type_2(lo, 1.0, 2.0).observe(data(y))));
  const std::vector<double> inside{std::log(1.4)}, outside{std::log(1.6)};
  CHECK(std::isfinite(m.log_prob(inside)));
  CHECK(m.log_prob(outside) == -std::numeric_limits<double>::infinity());
  CHECK(std::isfinite(m2.log_prob(inside)));
  CHECK(m2.log_prob(outside) == -std::numeric_limits<double>::infinity());
  // Inside, the guard adds nothing: the likelihood is pareto's log density summed.
  double lik = 0;
  for (double v : y) lik += std::log(2.0) + 2 * std::log(1.4) - 3 * std::log(v);
  CHECK(m.log_prob_terms(inside)[1] == Approx(lik).epsilon(1e-12));
}

TEST_CASE("uniform: every way a bound can stop being a parameter keeps the observation checked",
          "[distributions][uniform]") {
  using Catch::Matchers::Contains;
  const std::vector<double> y{0.4, 1.7, 2.0, 0.9, 1.2};
  const auto theta = pareto<"theta">(1.0, 1.0);
  auto mu = normal<"mu">(0.0, 1.0);
  const auto m = model(joint(mu, theta, uniform(0.0, theta).observe(data(y)), normal(mu, 1.0).observe(data(y))));
  // do_ fixes the bound at a number below max y: an error naming y's index, as observe() gives.
  CHECK_THROWS_WITH(do_<"theta">(m, 1.5), Contains("tyche::uniform(...).observe(y): y[2] = 1.7 is above b = 1.5"));
  CHECK_NOTHROW(do_<"theta">(m, 2.5));
  // A bound computed from data (not a number or data itself): the guard stays, so y outside
  // makes the log density -inf (and the term is named), never a finite value.
  const std::vector<double> lo{1.0};
  const auto shifted = model(joint(mu, uniform(sum(data(lo)) * 0.5, 1.0 + exp(mu)).observe(data(y))));
  CHECK(shifted.log_prob(std::vector<double>{0.0}) == -std::numeric_limits<double>::infinity());  // y[1] = 0.4 < 0.5
  CHECK_THAT(shifted.non_finite_terms(std::vector<double>{0.0}), Contains("term 2 of joint(...), uniform(...)"));
  // A scalar y against data bounds: every bound checked, not only the first.
  const std::vector<double> lower{0.0, 0.8};
  CHECK_THROWS_WITH(uniform(data(lower), 2.0).observe(0.5), Contains("is below a[2] = 0.8"));
  // pointwise_log_density keeps one term per element, -inf where that element is outside.
  auto b = lognormal<"b">(0.0, 1.0);
  const auto pw = model(joint(b, target(sum(pointwise_log_density(uniform(0.0, b), data(y))))));
  CHECK(pw.log_prob(std::vector<double>{std::log(1.8)}, false) == -std::numeric_limits<double>::infinity());
  CHECK(pw.log_prob(std::vector<double>{std::log(2.5)}, false) ==
        Approx(-0.5 * std::log(2 * 3.14159265358979323846) - 0.5 * std::log(2.5) * std::log(2.5) - std::log(2.5) -
               5 * std::log(2.5))
            .epsilon(1e-12));
}

TEST_CASE("uniform as a mixture component: density 0 outside its bounds, for data bounds too",
          "[distributions][uniform]") {
  // y ~ 0.3 uniform(0, 1) + 0.7 normal(mu, 1): an observation at 1.5 has only the normal's density.
  const std::vector<double> y{0.5, 1.5};
  auto mu = normal<"mu">(0.0, 1.0);
  const auto m = model(joint(mu, log_mix(0.3, uniform(0.0, 1.0), normal(mu, 1.0)).observe(data(y))));
  const double at = 0.2, log_2pi = std::log(2 * 3.14159265358979323846);
  auto normal_log = [&](double v) { return -0.5 * log_2pi - 0.5 * (v - at) * (v - at); };
  const double want = std::log(0.3 + 0.7 * std::exp(normal_log(0.5))) + std::log(0.7) + normal_log(1.5);
  CHECK(m.log_prob_terms(std::vector<double>{at})[1] == Approx(want).epsilon(1e-12));
}
