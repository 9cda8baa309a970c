// log_mix(theta, lp1, lp2) = log(θ e^lp1 + (1 − θ) e^lp2): value against a direct long double
// computation, gradients, stability at extreme differences lp1 − lp2, elementwise mixtures.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include "support/discrete_checks.hpp"
#include "support/property.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <span>
#include <string>
#include <vector>

using namespace tyche;
namespace dc = tyche_test::discrete;

namespace {
long double direct(long double t, long double a, long double b) {
  return std::log(t * std::exp(a) + (1 - t) * std::exp(b));
}
std::string at(double t, double a, double b) {
  return "log_mix(" + std::to_string(t) + ", " + std::to_string(a) + ", " + std::to_string(b) + ")";
}
/// The value and gradient of a program at x.
template <class Prog>
double value_and_gradient(const Prog& p, const std::vector<double>& x, std::vector<double>& g) {
  g.assign(p.dim(), 0.0);
  std::vector<double> ws(p.workspace_size());
  return p.value_and_gradient(std::span<const double>(x), std::span<double>(g), std::span<double>(ws));
}
}  // namespace

TEST_CASE("log_mix: value against a direct computation", "[discrete][log_mix]") {
  param<"theta"> theta;
  param<"a"> a;
  param<"b"> b;
  const auto prog = compile(log_mix(assume_probability(theta), a, b), theta, a, b);
  std::mt19937_64 rng(1101);
  std::uniform_real_distribution<double> ut(0.01, 0.99), ulp(-30.0, 30.0);
  for (int t = 0; t < 100; ++t) {
    const double th = ut(rng), la = ulp(rng), lb = ulp(rng);
    const long double ref = direct(th, la, lb);
    // The inputs are known to ε |lp| only, so the error is measured against the largest of |ref|,
    // |lp1|, |lp2| (the result may cross 0 where lp1 and lp2 do not).
    const double scale = std::max({std::fabs(static_cast<double>(ref)), std::fabs(la), std::fabs(lb)});
    const double got = dc::value_at(prog, {th, la, lb});
    INFO(at(th, la, lb) << ": tyche " << got << ", direct " << static_cast<double>(ref));
    CHECK(std::fabs(got - static_cast<double>(ref)) <= dc::log_pmf_tolerance * scale);
  }
  // Plain numbers as components, and the endpoints θ = 0 and θ = 1.
  const auto fixed = compile(log_mix(assume_probability(theta), -1.5, b), theta, b);
  CHECK(dc::value_at(fixed, {0.25, 2.0}) == Approx(static_cast<double>(direct(0.25, -1.5, 2.0))).epsilon(1e-13));
  CHECK(dc::value_at(prog, {0.0, 3.0, -4.0}) == Approx(-4.0).epsilon(1e-14));
  CHECK(dc::value_at(prog, {1.0, 3.0, -4.0}) == Approx(3.0).epsilon(1e-14));
  CHECK(dc::value_at(prog, {0.0, -4.0, 3.0}) == Approx(3.0).epsilon(1e-14));
  CHECK(dc::value_at(prog, {1.0, -4.0, 3.0}) == Approx(-4.0).epsilon(1e-14));
  // Equal components: log_mix(θ, λ, λ) = λ.
  CHECK(dc::value_at(prog, {0.3, -7.25, -7.25}) == Approx(-7.25).epsilon(1e-15));
}

TEST_CASE("log_mix: gradients", "[discrete][log_mix]") {
  param<"theta"> theta;
  param<"a"> a;
  param<"b"> b;
  const auto prog = compile(log_mix(assume_probability(theta), a, b), theta, a, b);
  auto pts = tyche_test::random_points(40, 3, -20.0, 20.0, 1102);
  for (auto& pt : pts) pt[0] = 0.02 + 0.96 * (pt[0] + 20.0) / 40.0;
  for (const auto& pt : pts) tyche_test::check_gradient_at(prog, pt, at(pt[0], pt[1], pt[2]));
  // lp1 = lp2, where |lp1 − lp2| has its kink: the result is smooth there.
  tyche_test::check_gradient_at(prog, {0.3, 1.5, 1.5}, "log_mix(0.3, 1.5, 1.5)");
  std::vector<double> g;
  const double v = value_and_gradient(prog, {0.3, 1.5, 1.5}, g);
  CHECK(v == Approx(1.5));
  CHECK(g[0] == Approx(0.0).margin(1e-15));  // (e^λ − e^λ) / e^λ
  CHECK(g[1] == Approx(0.3).epsilon(1e-14));
  CHECK(g[2] == Approx(0.7).epsilon(1e-14));
}

TEST_CASE("log_mix: stable at extreme differences lp1 - lp2", "[discrete][log_mix]") {
  param<"theta"> theta;
  param<"a"> a;
  param<"b"> b;
  const auto prog = compile(log_mix(assume_probability(theta), a, b), theta, a, b);
  for (double th : {1e-3, 0.3, 0.999}) {
    for (double d : {700.0, -700.0, 1e4, -1e4, 1e300, -1e300}) {
      const double lb = 5.0, la = lb + d;
      std::vector<double> g;
      const double v = value_and_gradient(prog, {th, la, lb}, g);
      INFO(at(th, la, lb) << " = " << v << ", gradient " << g[0] << ", " << g[1] << ", " << g[2]);
      REQUIRE(std::isfinite(v));
      for (double gi : g) REQUIRE(std::isfinite(gi));
      if (d > 0) {  // e^lp1 dominates: lp1 + log θ, gradient (1/θ, 1, 0)
        CHECK(v == Approx(la + std::log(th)).epsilon(1e-15));
        CHECK(g[0] == Approx(1.0 / th).epsilon(1e-15));
        CHECK(g[1] == Approx(1.0).epsilon(1e-15));
        CHECK(g[2] == Approx(0.0).margin(1e-290));
      } else {  // e^lp2 dominates: lp2 + log(1 − θ), gradient (−1/(1 − θ), 0, 1)
        CHECK(v == Approx(lb + std::log1p(-th)).epsilon(1e-15));
        CHECK(g[0] == Approx(-1.0 / (1.0 - th)).epsilon(1e-13));
        CHECK(g[1] == Approx(0.0).margin(1e-290));
        CHECK(g[2] == Approx(1.0).epsilon(1e-15));
      }
    }
  }
  // At d = ±700 the subdominant component still counts: log1p((1 − θ)/θ e^−700) is below ε, so
  // compare with the long double formula where it is not: d = ±30.
  for (double d : {30.0, -30.0}) {
    const double v = dc::value_at(prog, {0.3, 5.0 + d, 5.0});
    CHECK(v == Approx(static_cast<double>(direct(0.3, 5.0 + d, 5.0))).epsilon(1e-15));
  }
}

TEST_CASE("log_mix: elementwise two-component normal mixture", "[discrete][log_mix]") {
  std::vector<double> y{-2.1, -1.7, 0.3, 2.2, 2.9, 3.4};
  param<"theta"> theta;
  param<"mu1"> mu1;
  param<"mu2"> mu2;
  const double c = 0.91893853320467274178;  // ½ log 2π
  auto lp1 = lit<-1, 2> * square(data(y) - mu1) - c;
  auto lp2 = lit<-1, 2> * square(data(y) - mu2) - c;
  const auto prog = compile(sum(log_mix(assume_probability(theta), lp1, lp2)), theta, mu1, mu2);
  const double th = 0.4, m1 = -1.8, m2 = 2.7;
  long double ref = 0;
  for (double v : y) {
    const long double l1 = -0.5L * (v - m1) * (v - m1) - c, l2 = -0.5L * (v - m2) * (v - m2) - c;
    ref += direct(th, l1, l2);
  }
  dc::check_log_pmf(dc::value_at(prog, {th, m1, m2}), ref, "mixture of normal(mu1, 1), normal(mu2, 1)");
  for (auto pt : tyche_test::random_points(15, 3, -3.0, 3.0, 1103)) {
    pt[0] = 0.05 + 0.9 * (pt[0] + 3.0) / 6.0;
    tyche_test::check_gradient_at(prog, pt, "sum(log_mix(theta, lp1(y), lp2(y)))");
  }
}

TEST_CASE("log_mix: K = 3 components with a vector of weights", "[discrete][log_mix]") {
  using namespace tyche;
  const std::vector<double> y{-2.1, 0.3, 0.9, 4.2, 5.5, -0.7};
  const std::vector<double> w{0.2, 0.5, 0.3};
  auto mu1 = normal<"mu1">(0.0, 5.0);
  auto mu2 = normal<"mu2">(0.0, 5.0);
  auto mu3 = normal<"mu3">(0.0, 5.0);
  const auto m = model(joint(mu1, mu2, mu3,
                             log_mix(data(w), normal(mu1, 1.0), normal(mu2, 2.0), normal(mu3, 0.5)).observe(data(y))));
  auto npdf = [](double x, double m0, double s) {
    return std::exp(-0.5 * (x - m0) * (x - m0) / (s * s)) / (s * std::sqrt(2 * M_PI));
  };
  for (const auto& th : tyche_test::random_points(20, 3, -3, 3, 17)) {
    double expected = 0;
    for (double x : y)
      expected += std::log(w[0] * npdf(x, th[0], 1.0) + w[1] * npdf(x, th[1], 2.0) + w[2] * npdf(x, th[2], 0.5));
    for (double t : th) expected += std::log(npdf(t, 0.0, 5.0));
    CHECK(m.log_prob(th) == Approx(expected).epsilon(1e-12));
    tyche_test::check_gradient_at(m.program(), th, "log_mix of three normals");
  }
  // A simplex of weights as a parameter: its gradient too.
  const std::vector<double> alpha{2.0, 2.0, 2.0};
  auto theta = dirichlet<"theta">(data(alpha));
  const auto m2 = model(joint(theta, mu1, log_mix(theta, normal(mu1, 1.0), normal(0.0, 2.0), normal(3.0, 0.5)).observe(data(y))));
  for (const auto& th : tyche_test::random_points(10, m2.dim(), -1, 1, 23))
    tyche_test::check_gradient_at(m2.program(), th, "log_mix with simplex weights");
  // Bad weights: the size and the values, named.
  const std::vector<double> two{0.5, 0.5}, bad{0.5, 1.5, -1.0};
  CHECK_THROWS_WITH(log_mix(data(two), normal(0.0, 1.0), normal(1.0, 1.0), normal(2.0, 1.0)),
                    "tyche::log_mix(theta, d1, ..., dK): theta has size 2 but there are 3 components");
  CHECK_THROWS_WITH(log_mix(data(bad), normal(0.0, 1.0), normal(1.0, 1.0), normal(2.0, 1.0)),
                    Catch::Contains("theta must be in [0, 1], but theta[2] = 1.5"));
}

TEST_CASE("log_mix: K = 3 draws have the mixture's mean and variance", "[discrete][log_mix]") {
  using namespace tyche;
  const std::vector<double> w{0.2, 0.5, 0.3};
  const auto d = log_mix(data(w), normal(-2.0, 1.0), normal(1.0, 0.5), normal(4.0, 2.0));
  std::mt19937_64 rng(99);
  const std::size_t n = 100000;
  const auto draws = d.draw_all(rng, n, w, std::vector<double>{-2.0}, std::vector<double>{1.0},
                                std::vector<double>{1.0}, std::vector<double>{0.5}, std::vector<double>{4.0},
                                std::vector<double>{2.0});
  const double mean = 0.2 * -2.0 + 0.5 * 1.0 + 0.3 * 4.0;
  const double second = 0.2 * (4.0 + 1.0) + 0.5 * (1.0 + 0.25) + 0.3 * (16.0 + 4.0);
  tyche_test::discrete::check_moments(draws, mean, second - mean * mean, "log_mix of three normals");
  // Through a model: predictive draws of the observations, arguments evaluated at θ.
  const std::vector<double> y(20000, 0.0);
  auto mu = normal<"mu">(0.0, 1.0);
  const auto m = model(joint(mu, log_mix(data(w), normal(mu, 1.0), normal(1.0, 0.5), normal(4.0, 2.0)).observe(data(y))));
  const std::vector<double> at_mu{-2.0};
  const auto obs = m.sample_observations(at_mu, rng);
  REQUIRE(obs.size() == 1);
  REQUIRE(obs[0].size() == y.size());
  tyche_test::discrete::check_moments(obs[0], mean, second - mean * mean, "sample_observations of log_mix");
}
