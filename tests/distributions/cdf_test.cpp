// The *_lcdf / *_lccdf functions (tyche/distributions/log_densities.hpp): log P(Y ≤ y) and
// log P(Y > y) of the families with a closed-form CDF, against Boost.Math's cdf and its complement
// (Fréchet and log-logistic through the Weibull and logistic distributions of 1/X and log X), with
// gradients against finite differences; sums over a data vector; the data checks observe() makes;
// and a censored Weibull model's log density against one written by hand. The gamma family and
// the Poisson counts through log_gamma_p / log_gamma_q (scalar/inc_gamma.hpp), checked against
// Boost's gamma_p and gamma_q on both sides of its switch from series to continued fraction.
#include "support/continuous_checks.hpp"

#include <tyche/tyche.hpp>

#include <boost/math/distributions/beta.hpp>
#include <boost/math/distributions/bernoulli.hpp>
#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/cauchy.hpp>
#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/exponential.hpp>
#include <boost/math/distributions/extreme_value.hpp>
#include <boost/math/distributions/gamma.hpp>
#include <boost/math/distributions/inverse_chi_squared.hpp>
#include <boost/math/distributions/inverse_gamma.hpp>
#include <boost/math/distributions/laplace.hpp>
#include <boost/math/distributions/logistic.hpp>
#include <boost/math/distributions/negative_binomial.hpp>
#include <boost/math/distributions/lognormal.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/pareto.hpp>
#include <boost/math/distributions/poisson.hpp>
#include <boost/math/distributions/skew_normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <boost/math/distributions/uniform.hpp>
#include <boost/math/distributions/weibull.hpp>
#include <boost/math/special_functions/beta.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <boost/math/special_functions/owens_t.hpp>
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

using namespace tyche;
namespace bm = boost::math;

namespace {
// log of P(X ≤ x) (upper = false) or P(X > x) (true) under a Boost.Math distribution.
template <class D>
double log_cdf(const D& d, double x, bool upper) {
  return std::log(upper ? bm::cdf(bm::complement(d, x)) : bm::cdf(d, x));
}
}  // namespace

// Each family on points where both probabilities stay far above the smallest double (Boost's
// cdf would underflow to 0 where the log CDF is −10⁵); scales are exp(·) of a parameter, so that
// their supports are known to be positive.
TEST_CASE("lcdf, lccdf: closed-form families against Boost.Math, gradients by finite differences",
          "[distributions][lcdf]") {
  param<"x"> x;
  param<"a"> a;
  param<"b"> b;
  for (const bool upper : {false, true}) {
    const std::string side = upper ? "_lccdf" : "_lcdf";
    {
      const auto pts = tyche_test::points_in(25, {{-2.0, 3.0}, {-1.0, 1.5}, {-1.0, 1.0}}, 81);
      auto ref = [upper](const std::vector<double>& p) {
        return log_cdf(bm::normal_distribution<double>(p[1], std::exp(p[2])), p[0], upper);
      };
      if (upper) tyche_test::check_log_density(compile(normal_lccdf(x, a, exp(b)), x, a, b), pts, ref, "normal" + side);
      else tyche_test::check_log_density(compile(normal_lcdf(x, a, exp(b)), x, a, b), pts, ref, "normal" + side);
      // The standard normal's, elementwise: log Φ(−x) and log Φ(x).
      const auto std_pts = tyche_test::points_in(10, {{-6.0, 6.0}}, 82);
      auto std_ref = [upper](const std::vector<double>& p) {
        return log_cdf(bm::normal_distribution<double>(0.0, 1.0), p[0], upper);
      };
      if (upper) tyche_test::check_log_density(compile(std_normal_lccdf(x), x), std_pts, std_ref, "std_normal_lccdf");
      else tyche_test::check_log_density(compile(std_normal_lcdf(x), x), std_pts, std_ref, "std_normal_lcdf");
    }
    {
      const auto pts = tyche_test::points_in(25, {{0.1, 6.0}, {-1.0, 1.5}, {-1.0, 1.0}}, 83);
      auto ref = [upper](const std::vector<double>& p) {
        return log_cdf(bm::lognormal_distribution<double>(p[1], std::exp(p[2])), p[0], upper);
      };
      if (upper) tyche_test::check_log_density(compile(lognormal_lccdf(x, a, exp(b)), x, a, b), pts, ref, "lognormal" + side);
      else tyche_test::check_log_density(compile(lognormal_lcdf(x, a, exp(b)), x, a, b), pts, ref, "lognormal" + side);
    }
    {
      // From λx = 0.004 to 16 (the tails where 1 − e^{−λx} would lose digits: the next case).
      const auto pts = tyche_test::points_in(25, {{0.01, 6.0}, {-1.0, 1.0}}, 84);
      auto ref = [upper](const std::vector<double>& p) {
        return log_cdf(bm::exponential_distribution<double>(std::exp(p[1])), p[0], upper);
      };
      if (upper) tyche_test::check_log_density(compile(exponential_lccdf(x, exp(a)), x, a), pts, ref, "exponential" + side);
      else tyche_test::check_log_density(compile(exponential_lcdf(x, exp(a)), x, a), pts, ref, "exponential" + side);
    }
    {
      const auto pts = tyche_test::points_in(25, {{0.1, 3.0}, {-1.0, 1.0}, {-0.5, 1.0}}, 85);
      auto ref = [upper](const std::vector<double>& p) {
        return log_cdf(bm::weibull_distribution<double>(std::exp(p[1]), std::exp(p[2])), p[0], upper);
      };
      if (upper) tyche_test::check_log_density(compile(weibull_lccdf(x, exp(a), exp(b)), x, a, b), pts, ref, "weibull" + side);
      else tyche_test::check_log_density(compile(weibull_lcdf(x, exp(a), exp(b)), x, a, b), pts, ref, "weibull" + side);
    }
    {
      const auto pts = tyche_test::points_in(25, {{-2.0, 3.0}, {-1.0, 1.5}, {-1.0, 1.0}}, 86);
      auto ref = [upper](const std::vector<double>& p) {
        return log_cdf(bm::logistic_distribution<double>(p[1], std::exp(p[2])), p[0], upper);
      };
      if (upper) tyche_test::check_log_density(compile(logistic_lccdf(x, a, exp(b)), x, a, b), pts, ref, "logistic" + side);
      else tyche_test::check_log_density(compile(logistic_lcdf(x, a, exp(b)), x, a, b), pts, ref, "logistic" + side);
    }
    {
      // loglogistic(α, β): log X ~ logistic(log α, 1/β).
      const auto pts = tyche_test::points_in(25, {{0.1, 6.0}, {-1.0, 1.0}, {-1.0, 1.0}}, 87);
      auto ref = [upper](const std::vector<double>& p) {
        return log_cdf(bm::logistic_distribution<double>(p[1], std::exp(-p[2])), std::log(p[0]), upper);
      };
      if (upper) tyche_test::check_log_density(compile(loglogistic_lccdf(x, exp(a), exp(b)), x, a, b), pts, ref, "loglogistic" + side);
      else tyche_test::check_log_density(compile(loglogistic_lcdf(x, exp(a), exp(b)), x, a, b), pts, ref, "loglogistic" + side);
    }
    {
      // gumbel(μ, β) is Boost's extreme_value(location μ, scale β).
      const auto pts = tyche_test::points_in(25, {{-2.0, 3.0}, {-1.0, 1.5}, {-0.3, 1.0}}, 88);
      auto ref = [upper](const std::vector<double>& p) {
        return log_cdf(bm::extreme_value_distribution<double>(p[1], std::exp(p[2])), p[0], upper);
      };
      if (upper) tyche_test::check_log_density(compile(gumbel_lccdf(x, a, exp(b)), x, a, b), pts, ref, "gumbel" + side);
      else tyche_test::check_log_density(compile(gumbel_lcdf(x, a, exp(b)), x, a, b), pts, ref, "gumbel" + side);
    }
    {
      // frechet(α, σ): 1/X ~ weibull(α, 1/σ), so P(X ≤ x) = P(1/X ≥ 1/x).
      const auto pts = tyche_test::points_in(25, {{0.5, 6.0}, {-1.0, 1.0}, {-1.0, 0.5}}, 89);
      auto ref = [upper](const std::vector<double>& p) {
        return log_cdf(bm::weibull_distribution<double>(std::exp(p[1]), std::exp(-p[2])), 1 / p[0], !upper);
      };
      if (upper) tyche_test::check_log_density(compile(frechet_lccdf(x, exp(a), exp(b)), x, a, b), pts, ref, "frechet" + side);
      else tyche_test::check_log_density(compile(frechet_lcdf(x, exp(a), exp(b)), x, a, b), pts, ref, "frechet" + side);
    }
    {
      // half_normal(σ): P(X > x) = 2 P(N(0, σ) > x).
      const auto pts = tyche_test::points_in(25, {{0.05, 4.0}, {-0.5, 1.0}}, 90);
      auto ref = [upper](const std::vector<double>& p) {
        const double tail = bm::cdf(bm::complement(bm::normal_distribution<double>(0.0, std::exp(p[1])), p[0]));
        return upper ? std::log(2 * tail) : std::log1p(-2 * tail);
      };
      if (upper) tyche_test::check_log_density(compile(half_normal_lccdf(x, exp(a)), x, a), pts, ref, "half_normal" + side);
      else tyche_test::check_log_density(compile(half_normal_lcdf(x, exp(a)), x, a), pts, ref, "half_normal" + side);
    }
  }
}

TEST_CASE("lcdf, lccdf: summed over a data vector; its values and the arguments checked as observe() checks them",
          "[distributions][lcdf]") {
  const std::vector<double> t{0.4, 1.3, 2.2, 0.9};
  param<"a"> a;
  param<"b"> b;
  const auto summed = compile(weibull_lccdf(data(t), exp(a), exp(b)), a, b);
  const auto lower = compile(weibull_lcdf(data(t), exp(a), exp(b)), a, b);
  for (const auto& p : tyche_test::points_in(10, {{-0.5, 0.8}, {-0.5, 0.8}}, 91)) {
    const bm::weibull_distribution<double> w(std::exp(p[0]), std::exp(p[1]));
    double want = 0, want_lower = 0;
    for (const double v : t) {
      want += log_cdf(w, v, true);
      want_lower += log_cdf(w, v, false);
    }
    CHECK(summed.value(p) == Approx(want).epsilon(1e-12));
    CHECK(lower.value(p) == Approx(want_lower).epsilon(1e-12));
  }
  // A time outside the family's support names the index and the value, as observe() does.
  const std::vector<double> bad{0.4, -1.5};
  CHECK_THROWS_WITH(weibull_lccdf(data(bad), exp(a), exp(b)), Catch::Contains("y[2] = -1.5"));
  const std::vector<double> not_finite{0.4, NAN};
  CHECK_THROWS_WITH(lognormal_lcdf(data(not_finite), a, exp(b)), Catch::Contains("y[2]") && Catch::Contains("not finite"));
  // An argument outside its domain, known from data: the family's message.
  const std::vector<double> scale{-2.0};
  CHECK_THROWS_WITH(exponential_lccdf(data(t), data(scale)), Catch::Contains("exponential") && Catch::Contains("lambda"));
}

TEST_CASE("lccdf: a right-censored Weibull model's log density is the one written by hand", "[distributions][lcdf]") {
  // Times observed, and times at which observation stopped with the event not yet seen.
  const std::vector<double> observed{0.7, 1.9, 1.1, 2.6, 0.3}, censored{1.5, 3.0};
  auto alpha = lognormal<"alpha">(0.0, 1.0);
  auto sigma = lognormal<"sigma">(0.0, 1.0);
  const auto m = model(joint(alpha, sigma, weibull(alpha, sigma).observe(data(observed)),
                             target(weibull_lccdf(data(censored), alpha, sigma))));
  for (const auto& p : tyche_test::points_in(10, {{-0.7, 0.9}, {-0.7, 0.9}}, 92)) {
    const double k = std::exp(p[0]), s = std::exp(p[1]);
    const bm::weibull_distribution<double> w(k, s);
    const bm::lognormal_distribution<double> prior(0.0, 1.0);
    // The priors on the unconstrained scale (log alpha, log sigma) with their log-Jacobians.
    double want = std::log(bm::pdf(prior, k)) + p[0] + std::log(bm::pdf(prior, s)) + p[1];
    for (const double v : observed) want += std::log(bm::pdf(w, v));
    for (const double v : censored) want += log_cdf(w, v, true);
    CHECK(m.log_prob(p) == Approx(want).epsilon(1e-12));
  }
}

TEST_CASE("log_gamma_p, log_gamma_q: against Boost.Math's gamma_p and gamma_q, gradients in a and x",
          "[distributions][lcdf]") {
  param<"a"> a;
  param<"x"> x;
  const auto lower = compile(log_gamma_p(a, x), a, x);
  const auto upper = compile(log_gamma_q(a, x), a, x);
  // Shapes from 0.05 to 40 and points from far below the mean to far above it: the series
  // (x < a + 1) and the continued fraction (x ≥ a + 1), P and Q from 1e-60 to near 1.
  std::vector<std::vector<double>> pts;
  for (const double av : {0.05, 0.3, 1.0, 2.5, 7.0, 40.0})
    for (const double ratio : {0.02, 0.3, 0.9, 1.0, 1.3, 3.0, 8.0}) pts.push_back({av, std::max(ratio * av, 0.01) + 0.5 * ratio});
  tyche_test::check_log_density(lower, pts, [](const std::vector<double>& p) { return std::log(bm::gamma_p(p[0], p[1])); },
                                "log_gamma_p(a, x)");
  tyche_test::check_log_density(upper, pts, [](const std::vector<double>& p) { return std::log(bm::gamma_q(p[0], p[1])); },
                                "log_gamma_q(a, x)");
  // At x = 0: P = 0, Q = 1.
  CHECK(lower.value(std::vector<double>{2.0, 0.0}) == -INFINITY);
  CHECK(upper.value(std::vector<double>{2.0, 0.0}) == 0.0);
}

TEST_CASE("lcdf, lccdf of the gamma family and the Poisson counts against Boost.Math", "[distributions][lcdf]") {
  param<"x"> x;
  param<"a"> a;
  param<"b"> b;
  for (const bool upper : {false, true}) {
    const std::string side = upper ? "_lccdf" : "_lcdf";
    const auto pts = tyche_test::points_in(25, {{0.1, 6.0}, {-1.0, 1.5}, {-1.0, 1.0}}, 93);
    {
      // gamma(α, β) with rate β; Boost's gamma takes the scale 1/β.
      auto ref = [upper](const std::vector<double>& p) {
        return log_cdf(bm::gamma_distribution<double>(std::exp(p[1]), std::exp(-p[2])), p[0], upper);
      };
      if (upper) tyche_test::check_log_density(compile(gamma_lccdf(x, exp(a), exp(b)), x, a, b), pts, ref, "gamma" + side);
      else tyche_test::check_log_density(compile(gamma_lcdf(x, exp(a), exp(b)), x, a, b), pts, ref, "gamma" + side);
    }
    {
      auto ref = [upper](const std::vector<double>& p) {
        return log_cdf(bm::inverse_gamma_distribution<double>(std::exp(p[1]), std::exp(p[2])), p[0], upper);
      };
      if (upper) tyche_test::check_log_density(compile(inv_gamma_lccdf(x, exp(a), exp(b)), x, a, b), pts, ref, "inv_gamma" + side);
      else tyche_test::check_log_density(compile(inv_gamma_lcdf(x, exp(a), exp(b)), x, a, b), pts, ref, "inv_gamma" + side);
    }
    {
      const auto pts2 = tyche_test::points_in(25, {{0.1, 8.0}, {-1.0, 1.5}}, 94);
      auto ref = [upper](const std::vector<double>& p) {
        return log_cdf(bm::chi_squared_distribution<double>(std::exp(p[1])), p[0], upper);
      };
      if (upper) tyche_test::check_log_density(compile(chi_square_lccdf(x, exp(a)), x, a), pts2, ref, "chi_square" + side);
      else tyche_test::check_log_density(compile(chi_square_lcdf(x, exp(a)), x, a), pts2, ref, "chi_square" + side);
      // inv_chi_square(ν): 1/X ~ chi_square(ν), Boost's inverse_chi_squared with its default scale 1/ν.
      auto inv_ref = [upper](const std::vector<double>& p) {
        return log_cdf(bm::inverse_chi_squared_distribution<double>(std::exp(p[1])), p[0], upper);
      };
      if (upper) tyche_test::check_log_density(compile(inv_chi_square_lccdf(x, exp(a)), x, a), pts2, inv_ref, "inv_chi_square" + side);
      else tyche_test::check_log_density(compile(inv_chi_square_lcdf(x, exp(a)), x, a), pts2, inv_ref, "inv_chi_square" + side);
    }
  }
  // Counts: P(Y ≤ k) and P(Y > k) summed over the data, for λ = e^a from 0.37 to 20.
  const std::vector<double> k{0, 3, 1, 7, 2, 15};
  const auto cdf = compile(poisson_lcdf(data(k), exp(a)), a);
  const auto ccdf = compile(poisson_lccdf(data(k), exp(a)), a);
  const auto cdf_log = compile(poisson_log_lcdf(data(k), a), a);
  const auto ccdf_log = compile(poisson_log_lccdf(data(k), a), a);
  std::vector<std::vector<double>> lambdas;
  for (const auto& p : tyche_test::points_in(15, {{-1.0, 3.0}}, 95)) lambdas.push_back(p);
  for (const bool upper : {false, true}) {
    auto ref = [&k, upper](const std::vector<double>& p) {
      double total = 0;
      for (const double v : k) total += log_cdf(bm::poisson_distribution<double>(std::exp(p[0])), v, upper);
      return total;
    };
    if (upper) {
      tyche_test::check_log_density(ccdf, lambdas, ref, "poisson_lccdf");
      tyche_test::check_log_density(ccdf_log, lambdas, ref, "poisson_log_lccdf");
    } else {
      tyche_test::check_log_density(cdf, lambdas, ref, "poisson_lcdf");
      tyche_test::check_log_density(cdf_log, lambdas, ref, "poisson_log_lcdf");
    }
  }
  // A count that is not one names it, as observe() does.
  const std::vector<double> not_counts{1, 2.5};
  CHECK_THROWS_WITH(poisson_lccdf(data(not_counts), exp(a)), Catch::Contains("y[2] = 2.5"));
}

TEST_CASE("lcdf, lccdf: finite in the tails where e^w underflows or overflows, with finite gradients",
          "[distributions][lcdf]") {
  // log(1 − exp(−eʷ)) is w where eʷ underflows (w < −745) and 0 where it overflows (w > 709),
  // with derivative 1 and 0: a Weibull left-censored far below its scale, a Gumbel or Fréchet
  // right-censored far above it.
  param<"a"> a;
  auto value_and_slope = [](const auto& prog, double at) {
    std::vector<double> g(1), ws(prog.workspace_size());
    const std::vector<double> th{at};
    const double v = prog.value_and_gradient(std::span<const double>(th), std::span<double>(g), std::span<double>(ws));
    return std::pair{v, g[0]};
  };
  const auto weibull_low = compile(weibull_lcdf(exp(a), 2.0, 1.0), a);  // w = 2a
  const auto gumbel_high = compile(gumbel_lccdf(a, 0.0, 1.0), a);        // w = −a
  const auto frechet_high = compile(frechet_lccdf(exp(a), 3.0, 1.0), a);  // w = −3a
  struct expect { double at, value, slope; };
  for (const auto& [at, value, slope] : {expect{-400.0, -800.0, 2.0}, expect{-15.0, -30.0, 2.0}}) {
    const auto [v, g] = value_and_slope(weibull_low, at);
    CHECK(v == Approx(value).epsilon(1e-14));
    CHECK(g == Approx(slope).epsilon(1e-12));
  }
  for (const auto& [at, value, slope] : {expect{800.0, -800.0, -1.0}, expect{30.0, -30.0, -1.0}}) {
    const auto [v, g] = value_and_slope(gumbel_high, at);
    CHECK(v == Approx(value).epsilon(1e-12));
    CHECK(g == Approx(slope).epsilon(1e-12));
  }
  {
    const auto [v, g] = value_and_slope(frechet_high, 300.0);
    CHECK(v == Approx(-900.0).epsilon(1e-14));
    CHECK(g == Approx(-3.0).epsilon(1e-12));
  }
  // Where eʷ overflows the probability is 1: log 0 with slope 0, not NaN.
  {
    const auto [v, g] = value_and_slope(weibull_low, 400.0);
    CHECK(v == 0.0);
    CHECK(g == 0.0);
  }
  {
    const auto [v, g] = value_and_slope(gumbel_high, -800.0);
    CHECK(v == 0.0);
    CHECK(g == 0.0);
  }
  // Between the tails, against Boost (the switch at w = −20 and the slope's at eʷ = 30).
  for (const double at : {-10.5, -9.5, 0.0, 1.6, 1.8}) {
    const double y = std::exp(at);
    CHECK(value_and_slope(weibull_low, at).first ==
          Approx(log_cdf(bm::weibull_distribution<double>(2.0, 1.0), y, false)).epsilon(1e-13));
  }
  tyche_test::check_log_density(weibull_low, {{-10.5}, {-9.5}, {0.0}, {1.6}, {1.8}},
                                [](const std::vector<double>& p) {
                                  return log_cdf(bm::weibull_distribution<double>(2.0, 1.0), std::exp(p[0]), false);
                                },
                                "weibull_lcdf(exp(a), 2, 1) near the switches");
}

TEST_CASE("lcdf: a left-censored observation at a support's closed lower bound is refused", "[distributions][lcdf]") {
  param<"a"> a;
  const std::vector<double> t{0.5, 0.0};
  CHECK_THROWS_WITH(exponential_lcdf(data(t), exp(a)), Catch::Contains("exponential(...).observe(y): y[2] = 0") &&
                                                          Catch::Contains("P(Y <= y) = 0"));
  CHECK_THROWS_WITH(half_normal_lcdf(data(t), exp(a)), Catch::Contains("half_normal(...).observe(y): y[2] = 0"));
  // The survival function at 0 is 1: allowed.
  const auto survival = compile(exponential_lccdf(data(t), exp(a)), a);
  CHECK(survival.value(std::vector<double>{0.3}) == Approx(-0.5 * std::exp(0.3)).epsilon(1e-14));
  // A bound that is data: uniform's a (left) and b (right), pareto's y_min, pareto_type_2's mu.
  const std::vector<double> at_one{1.5, 1.0}, at_three{2.0, 3.0};
  CHECK_THROWS_WITH(uniform_lcdf(data(at_one), 1.0, 3.0),
                    Catch::Contains("uniform(...).observe(y): y[2] = 1 is the support's lower bound a") &&
                        Catch::Contains("P(Y <= y) = 0"));
  CHECK_THROWS_WITH(uniform_lccdf(data(at_three), 1.0, 3.0),
                    Catch::Contains("y[2] = 3 is the support's upper bound b") && Catch::Contains("P(Y > y) = 0"));
  CHECK_THROWS_WITH(pareto_lcdf(data(at_one), 1.0, exp(a)), Catch::Contains("y[2] = 1 is the support's lower bound y_min"));
  CHECK_THROWS_WITH(pareto_type_2_lcdf(data(at_one), 1.0, exp(a), exp(a)),
                    Catch::Contains("y[2] = 1 is the support's lower bound mu"));
  // The other side at those bounds is 1: allowed.
  CHECK_NOTHROW(uniform_lccdf(data(at_one), 1.0, exp(a) + 3.0));
  CHECK_NOTHROW(pareto_lccdf(data(at_one), 1.0, exp(a)));
}

TEST_CASE("right_censored(d), left_censored(d): observations through the CDF, counted by loo one by one",
          "[distributions][lcdf]") {
  const std::vector<double> observed{0.7, 1.9, 1.1, 2.6, 0.3}, censored{1.5, 3.0}, early{0.2};
  auto alpha = lognormal<"alpha">(0.0, 1.0);
  auto sigma = lognormal<"sigma">(0.0, 1.0);
  const auto as_terms = model(joint(alpha, sigma, weibull(alpha, sigma).observe(data(observed)),
                                    right_censored(weibull(alpha, sigma)).observe(data(censored, "t_censored")),
                                    left_censored(weibull(alpha, sigma)).observe(data(early, "t_early"))));
  const auto as_targets = model(joint(alpha, sigma, weibull(alpha, sigma).observe(data(observed)),
                                      target(weibull_lccdf(data(censored), alpha, sigma)),
                                      target(weibull_lcdf(data(early), alpha, sigma))));
  for (const auto& p : tyche_test::points_in(8, {{-0.7, 0.9}, {-0.7, 0.9}}, 96)) {
    CHECK(as_terms.log_prob(p) == Approx(as_targets.log_prob(p)).epsilon(1e-14));
    // One log-likelihood value per observation, the censored ones log P(T > t) and log P(T ≤ t).
    const auto ll = as_terms.pointwise_log_likelihood(p);
    REQUIRE(ll.size() == observed.size() + censored.size() + early.size());
    const bm::weibull_distribution<double> w(std::exp(p[0]), std::exp(p[1]));
    for (std::size_t i = 0; i < censored.size(); ++i)
      CHECK(ll[observed.size() + i] == Approx(log_cdf(w, censored[i], true)).epsilon(1e-12));
    CHECK(ll.back() == Approx(log_cdf(w, early[0], false)).epsilon(1e-12));
  }
  const auto names = as_terms.observation_names();
  REQUIRE(names.size() == 8);
  CHECK(names[5] == "t_censored[1]");
  CHECK(names[7] == "t_early[1]");
  // The family's data checks, and left censoring's refusal of a value with probability 0.
  const std::vector<double> negative{1.0, -2.0}, zero{0.0};
  CHECK_THROWS_WITH(right_censored(weibull(alpha, sigma)).observe(data(negative)), Catch::Contains("y[2] = -2"));
  auto rate = lognormal<"rate">(0.0, 1.0);
  CHECK_THROWS_WITH(left_censored(exponential(rate)).observe(data(zero)), Catch::Contains("y[1] = 0"));
  CHECK_NOTHROW(right_censored(exponential(rate)).observe(data(zero)));
  // A replicate of a censored term is a draw of T (here: positive, as a Weibull's).
  std::mt19937_64 rng(7);
  const auto reps = as_terms.sample_observations(std::vector<double>{0.2, 0.1}, rng);
  REQUIRE(reps.size() == 3);
  REQUIRE(reps[1].size() == censored.size());
  for (const double v : reps[1]) CHECK(v > 0);
}

TEST_CASE("log_inc_beta, log1m_inc_beta: against Boost.Math's ibeta and ibetac, gradients in a, b and x",
          "[distributions][lcdf]") {
  param<"a"> a;
  param<"b"> b;
  param<"x"> x;
  const auto lower = compile(sum(log_inc_beta(a, b, x)), a, b, x);
  const auto upper = compile(sum(log1m_inc_beta(a, b, x)), a, b, x);
  // Both sides of the switch at x = (a + 1)/(a + b + 2), integer and fractional b, I from 1e-40 to
  // near 1.
  std::vector<std::vector<double>> pts;
  for (const double av : {0.3, 1.0, 2.5, 12.0})
    for (const double bv : {0.5, 1.0, 3.0, 20.0})
      for (const double xv : {0.02, 0.3, 0.6, 0.97}) pts.push_back({av, bv, xv});
  tyche_test::check_log_density(lower, pts, [](const std::vector<double>& p) { return std::log(bm::ibeta(p[0], p[1], p[2])); },
                                "log_inc_beta(a, b, x)");
  tyche_test::check_log_density(upper, pts, [](const std::vector<double>& p) { return std::log(bm::ibetac(p[0], p[1], p[2])); },
                                "log1m_inc_beta(a, b, x)");
  // Operands of different sizes are refused, naming them.
  vector_param<"v", 3> v;
  vector_param<"w", 2> w;
  CHECK_THROWS_WITH(log_inc_beta(v, w, x), Catch::Contains("log_inc_beta(a, b, x)") && Catch::Contains("3, 2, 1"));
}

TEST_CASE("lcdf, lccdf of beta and of the binomial and negative binomial counts against Boost.Math",
          "[distributions][lcdf]") {
  param<"x"> x;
  param<"a"> a;
  param<"b"> b;
  const auto pts = tyche_test::points_in(20, {{0.03, 0.97}, {-1.0, 1.5}, {-1.0, 1.5}}, 97);
  for (const bool upper : {false, true}) {
    auto ref = [upper](const std::vector<double>& p) {
      return log_cdf(bm::beta_distribution<double>(std::exp(p[1]), std::exp(p[2])), p[0], upper);
    };
    if (upper) tyche_test::check_log_density(compile(beta_lccdf(x, exp(a), exp(b)), x, a, b), pts, ref, "beta_lccdf");
    else tyche_test::check_log_density(compile(beta_lcdf(x, exp(a), exp(b)), x, a, b), pts, ref, "beta_lcdf");
  }
  // Counts, summed over the data: neg_binomial_2(μ, φ) is Boost's negative_binomial(r = φ,
  // p = φ/(μ + φ)); binomial(n, p) with n = 12 (a count at n: P(Y ≤ n) = 1).
  const std::vector<double> k{0, 3, 1, 7, 2, 12};
  const auto lam = tyche_test::points_in(12, {{-1.0, 2.0}, {-1.0, 2.0}}, 98);
  const auto logits = tyche_test::points_in(12, {{-2.0, 2.0}}, 99);
  for (const bool upper : {false, true}) {
    auto nb_ref = [&k, upper](const std::vector<double>& p) {
      const double mu = std::exp(p[0]), phi = std::exp(p[1]);
      double total = 0;
      for (const double v : k) total += log_cdf(bm::negative_binomial_distribution<double>(phi, phi / (mu + phi)), v, upper);
      return total;
    };
    auto bin_ref = [&k, upper](const std::vector<double>& p) {
      const double prob = 1 / (1 + std::exp(-p[0]));
      double total = 0;
      for (const double v : k) {
        if (upper && v == 12) return -std::numeric_limits<double>::infinity();
        total += v == 12 ? 0.0 : log_cdf(bm::binomial_distribution<double>(12, prob), v, upper);
      }
      return total;
    };
    if (upper) {
      tyche_test::check_log_density(compile(neg_binomial_2_lccdf(data(k), exp(a), exp(b)), a, b), lam, nb_ref, "neg_binomial_2_lccdf");
      tyche_test::check_log_density(compile(neg_binomial_2_log_lccdf(data(k), a, exp(b)), a, b), lam, nb_ref, "neg_binomial_2_log_lccdf");
    } else {
      tyche_test::check_log_density(compile(neg_binomial_2_lcdf(data(k), exp(a), exp(b)), a, b), lam, nb_ref, "neg_binomial_2_lcdf");
      tyche_test::check_log_density(compile(neg_binomial_2_log_lcdf(data(k), a, exp(b)), a, b), lam, nb_ref, "neg_binomial_2_log_lcdf");
      // (P(Y > 12) = 0 makes the upper sum −∞: the binomial's survival function is checked below
      // without the count at n.)
      tyche_test::check_log_density(compile(binomial_logit_lcdf(data(k), 12.0, a), a), logits, bin_ref, "binomial_logit_lcdf");
      tyche_test::check_log_density(compile(binomial_lcdf(data(k), 12.0, logistic(a)), a), logits, bin_ref, "binomial_lcdf");
    }
  }
  // The trials checked as observe() checks them; a count at n right-censored is refused
  // (P(Y > n) = 0), and no data at all is no term.
  const std::vector<double> above_n{2, 13};
  CHECK_THROWS_WITH(binomial_lcdf(data(above_n), 12.0, logistic(a)), Catch::Contains("exceeds the number of trials"));
  CHECK_THROWS_WITH(binomial_lccdf(data(k), 12.0, logistic(a)), Catch::Contains("y[6] = 12 is the number of trials"));
  CHECK_NOTHROW(binomial_lcdf(data(k), 12.0, logistic(a)));
  const std::vector<double> none;
  CHECK(compile(binomial_logit_lcdf(data(none), 12.0, a) + a, a).value(std::vector<double>{0.5}) == 0.5);
  // A rare event keeps its digits: P(Y > 0) = 1 − (1 − p)^1000 at p = logistic(−25), ~1.4e-8,
  // from the complement p given beside 1 − p (1 − p rounded would leave it ~1e-5 off).
  const std::vector<double> zero_count{0};
  const auto rare = compile(binomial_logit_lccdf(data(zero_count), 1000.0, a), a);
  for (const double at : {-25.0, -18.0, -12.0}) {
    const double prob = 1 / (1 + std::exp(-at));
    CHECK(rare.value(std::vector<double>{at}) == Approx(std::log(-std::expm1(1000 * std::log1p(-prob)))).epsilon(1e-12));
  }
  const std::vector<double> below_n{0, 3, 11};
  const auto bin_upper = compile(binomial_lccdf(data(below_n), 12.0, logistic(a)), a);
  tyche_test::check_log_density(bin_upper, logits, [&below_n](const std::vector<double>& p) {
    double total = 0;
    for (const double v : below_n) total += log_cdf(bm::binomial_distribution<double>(12, 1 / (1 + std::exp(-p[0]))), v, true);
    return total;
  }, "binomial_lccdf");
}

// The rest of the families with a CDF in closed form or through the incomplete beta function.
// Each program is log P(X ≤ x) + 2 log P(X > x) (one compile for both functions; a wrong one
// cannot hide behind the other with the weights unequal), against Boost.Math: Student's t and
// its half (P(|T| ≤ z) = 1 − 2 P(T ≤ −z)), Cauchy and its half, Laplace (double exponential),
// Pareto, Pareto type II (Lomax of x − μ: P(X > x) = (1 + (x − μ)/λ)^−α), uniform, beta_proportion
// (beta(μκ, (1 − μ)κ)), the exponentially modified normal (by quadrature of its density below),
// and Bernoulli counts.
TEST_CASE("lcdf + 2 lccdf of student_t, cauchy, double_exponential, pareto, uniform and the rest, against Boost.Math",
          "[distributions][lcdf]") {
  param<"x"> x;
  param<"a"> a;
  param<"b"> b;
  param<"c"> c;
  auto both = [](auto&& d, double v) {
    return std::log(bm::cdf(d, v)) + 2 * std::log(bm::cdf(bm::complement(d, v)));
  };
  {
    // ν from 0.37 to 20; t from −8 to 8 (both tails), μ and σ parameters.
    const auto pts = tyche_test::points_in(30, {{-6.0, 6.0}, {-1.0, 3.0}, {-1.0, 1.0}, {-0.7, 0.7}}, 101);
    auto ref = [&](const std::vector<double>& p) {
      const double nu = std::exp(p[1]), mu = p[2], sigma = std::exp(p[3]);
      return both(bm::students_t_distribution<double>(nu), (p[0] - mu) / sigma);
    };
    const auto t = compile(student_t_lcdf(x, exp(a), b, exp(c)) + 2 * student_t_lccdf(x, exp(a), b, exp(c)), x, a, b, c);
    tyche_test::check_log_density(t, pts, ref, "student_t_lcdf + 2 student_t_lccdf");
    tyche_test::check_lanes(t, pts, "student_t_lcdf + 2 student_t_lccdf");  // SIMD chains, lane by lane
  }
  {
    const auto pts = tyche_test::points_in(20, {{0.05, 6.0}, {-1.0, 3.0}, {-0.7, 0.7}}, 102);
    auto ref = [](const std::vector<double>& p) {
      const double nu = std::exp(p[1]), z = p[0] / std::exp(p[2]);
      const double tail = bm::cdf(bm::students_t_distribution<double>(nu), -z);  // P(T ≤ −z)
      return std::log1p(-2 * tail) + 2 * std::log(2 * tail);
    };
    tyche_test::check_log_density(
        compile(half_student_t_lcdf(x, exp(a), exp(b)) + 2 * half_student_t_lccdf(x, exp(a), exp(b)), x, a, b), pts, ref,
        "half_student_t_lcdf + 2 half_student_t_lccdf");
  }
  {
    const auto pts = tyche_test::points_in(20, {{-30.0, 30.0}, {-1.0, 1.5}, {-1.0, 1.0}}, 103);
    auto ref = [&](const std::vector<double>& p) {
      return both(bm::cauchy_distribution<double>(p[1], std::exp(p[2])), p[0]);
    };
    const auto cy = compile(cauchy_lcdf(x, a, exp(b)) + 2 * cauchy_lccdf(x, a, exp(b)), x, a, b);
    tyche_test::check_log_density(cy, pts, ref, "cauchy_lcdf + 2 cauchy_lccdf");
    tyche_test::check_lanes(cy, pts, "cauchy_lcdf + 2 cauchy_lccdf");
    const auto half_pts = tyche_test::points_in(20, {{0.05, 30.0}, {-1.0, 1.0}}, 104);
    auto half_ref = [](const std::vector<double>& p) {
      const double tail = bm::cdf(bm::cauchy_distribution<double>(0.0, std::exp(p[1])), -p[0]);
      return std::log1p(-2 * tail) + 2 * std::log(2 * tail);
    };
    tyche_test::check_log_density(compile(half_cauchy_lcdf(x, exp(a)) + 2 * half_cauchy_lccdf(x, exp(a)), x, a),
                                  half_pts, half_ref, "half_cauchy_lcdf + 2 half_cauchy_lccdf");
  }
  {
    const auto pts = tyche_test::points_in(20, {{-5.0, 5.0}, {-1.0, 1.5}, {-1.0, 1.0}}, 105);
    auto ref = [&](const std::vector<double>& p) {
      return both(bm::laplace_distribution<double>(p[1], std::exp(p[2])), p[0]);
    };
    const auto de = compile(double_exponential_lcdf(x, a, exp(b)) + 2 * double_exponential_lccdf(x, a, exp(b)), x, a, b);
    tyche_test::check_log_density(de, pts, ref, "double_exponential_lcdf + 2 double_exponential_lccdf");
    tyche_test::check_lanes(de, pts, "double_exponential_lcdf + 2 double_exponential_lccdf");
  }
  {
    // pareto(y_min, α) with y_min = 0.5 (data) and as a parameter e^b ∈ (0.37, 0.45).
    const auto pts = tyche_test::points_in(20, {{0.6, 8.0}, {-1.0, 1.5}, {-1.0, -0.8}}, 106);
    auto ref = [&](const std::vector<double>& p) {
      return both(bm::pareto_distribution<double>(std::exp(p[2]), std::exp(p[1])), p[0]);
    };
    tyche_test::check_log_density(
        compile(pareto_lcdf(x, exp(b), exp(a)) + 2 * pareto_lccdf(x, exp(b), exp(a)), x, a, b), pts, ref,
        "pareto_lcdf + 2 pareto_lccdf");
    // pareto_type_2(μ, λ, α): 1 + (x − μ)/λ is a Pareto(1, α) variable.
    const auto pts2 = tyche_test::points_in(20, {{0.1, 8.0}, {-1.0, 1.0}, {-1.0, 1.0}, {-2.0, 0.0}}, 107);
    auto ref2 = [&](const std::vector<double>& p) {
      const double mu = p[3], lambda = std::exp(p[2]), alpha = std::exp(p[1]);
      return both(bm::pareto_distribution<double>(1.0, alpha), 1 + (p[0] - mu) / lambda);
    };
    tyche_test::check_log_density(
        compile(pareto_type_2_lcdf(x, c, exp(b), exp(a)) + 2 * pareto_type_2_lccdf(x, c, exp(b), exp(a)), x, a, b, c),
        pts2, ref2, "pareto_type_2_lcdf + 2 pareto_type_2_lccdf");
  }
  {
    // uniform(−e^a, e^b) with parameter bounds in (−0.6, −0.37) and (2, 3), x inside.
    const auto pts = tyche_test::points_in(20, {{-0.35, 1.9}, {-1.0, -0.5}, {0.7, 1.1}}, 108);
    auto ref = [&](const std::vector<double>& p) {
      return both(bm::uniform_distribution<double>(-std::exp(p[1]), std::exp(p[2])), p[0]);
    };
    tyche_test::check_log_density(compile(uniform_lcdf(x, -exp(a), exp(b)) + 2 * uniform_lccdf(x, -exp(a), exp(b)), x, a, b),
                                  pts, ref, "uniform_lcdf + 2 uniform_lccdf");
  }
  {
    // beta_proportion(μ, κ): μ = logistic(a), κ = e^b.
    const auto pts = tyche_test::points_in(20, {{0.03, 0.97}, {-1.5, 1.5}, {0.0, 3.0}}, 109);
    auto ref = [&](const std::vector<double>& p) {
      const double mu = 1 / (1 + std::exp(-p[1])), kappa = std::exp(p[2]);
      return both(bm::beta_distribution<double>(mu * kappa, (1 - mu) * kappa), p[0]);
    };
    tyche_test::check_log_density(
        compile(beta_proportion_lcdf(x, logistic(a), exp(b)) + 2 * beta_proportion_lccdf(x, logistic(a), exp(b)), x, a, b),
        pts, ref, "beta_proportion_lcdf + 2 beta_proportion_lccdf");
  }
  {
    // exp_mod_normal(μ, σ, λ): P(X ≤ x) = Φ(z) − exp(−λ(x − μ) + λ²σ²/2) Φ(z − λσ), z = (x − μ)/σ,
    // evaluated in long double where it does not cancel much (the points keep P ≥ 1e-4).
    const auto pts = tyche_test::points_in(20, {{-1.0, 4.0}, {-0.5, 0.5}, {-0.7, 0.3}, {-0.7, 0.7}}, 110);
    auto ref = [](const std::vector<double>& p) {
      const long double v = p[0], mu = p[1], sigma = std::exp(p[2]), lambda = std::exp(p[3]);
      const long double z = (v - mu) / sigma;
      auto phi = [](long double t) { return 0.5L * std::erfc(-t / std::sqrt(2.0L)); };
      const long double cdf =
          phi(z) - std::exp(-lambda * (v - mu) + lambda * lambda * sigma * sigma / 2) * phi(z - lambda * sigma);
      return static_cast<double>(std::log(cdf) + 2 * std::log1p(-cdf));
    };
    tyche_test::check_log_density(
        compile(exp_mod_normal_lcdf(x, a, exp(b), exp(c)) + 2 * exp_mod_normal_lccdf(x, a, exp(b), exp(c)), x, a, b, c),
        pts, ref, "exp_mod_normal_lcdf + 2 exp_mod_normal_lccdf", 1e-9);
  }
  {
    // Bernoulli counts: P(Y ≤ 0) = 1 − p, P(Y ≤ 1) = 1, P(Y > 0) = p; right-censoring a 1 is
    // refused (P(Y > 1) = 0), naming the index.
    const std::vector<double> y{0, 1, 0, 0, 1};
    const std::vector<double> zeros{0, 0};
    const auto logits = tyche_test::points_in(10, {{-3.0, 3.0}}, 111);
    auto ref = [&](const std::vector<double>& p) {
      const double prob = 1 / (1 + std::exp(-p[0]));
      double total = 0;
      for (const double v : y) total += std::log(bm::cdf(bm::bernoulli_distribution<double>(prob), v));
      for (const double v : zeros) total += 2 * std::log(bm::cdf(bm::complement(bm::bernoulli_distribution<double>(prob), v)));
      return total;
    };
    tyche_test::check_log_density(
        compile(bernoulli_lcdf(data(y), logistic(a)) + 2 * bernoulli_lccdf(data(zeros), logistic(a)), a), logits, ref,
        "bernoulli_lcdf + 2 bernoulli_lccdf");
    tyche_test::check_log_density(
        compile(bernoulli_logit_lcdf(data(y), a) + 2 * bernoulli_logit_lccdf(data(zeros), a), a), logits, ref,
        "bernoulli_logit_lcdf + 2 bernoulli_logit_lccdf");
    CHECK_THROWS_WITH(bernoulli_lccdf(data(y), logistic(a)), Catch::Contains("y[2] = 1 is 1, the upper bound"));
    CHECK_THROWS_WITH(bernoulli_logit_lccdf(data(y), a), Catch::Contains("y[2] = 1"));
  }
  // A left-censored observation at 0 of a half family has no probability.
  const std::vector<double> at_zero{1.0, 0.0};
  CHECK_THROWS_WITH(half_student_t_lcdf(data(at_zero), 3.0, exp(a)), Catch::Contains("y[2] = 0 is 0"));
  CHECK_THROWS_WITH(half_cauchy_lcdf(data(at_zero), exp(a)), Catch::Contains("y[2] = 0 is 0"));
}

// The tails where the CDF itself would round to 0 or 1: Student's t and Cauchy far out (the far
// tail computed as such, never as 1 − P), Laplace on both sides; values against Boost (in long
// double for Student's t), gradients finite.
TEST_CASE("lcdf, lccdf: Student's t, Cauchy and Laplace in the far tails", "[distributions][lcdf]") {
  param<"x"> x;
  param<"a"> a;
  const auto t_lo = compile(student_t_lcdf(x, exp(a), 0.0, 1.0), x, a);
  const auto t_hi = compile(student_t_lccdf(x, exp(a), 0.0, 1.0), x, a);
  for (const double nu : {0.5, 1.0, 3.0, 30.0, 300.0})
    for (const double at : {-1e6, -1e3, -40.0, -9.0, -1e-3, 0.0, 2.5}) {
      INFO("nu = " << nu << ", t = " << at);
      // In long double, which holds P(T ≤ −1000) = e^−1221 at ν = 300.
      const bm::students_t_distribution<long double> d(nu);
      const double expected = static_cast<double>(std::log(bm::cdf(d, static_cast<long double>(at))));
      const std::vector<double> pt{at, std::log(nu)};
      CHECK(t_lo.value(pt) == Approx(expected).epsilon(1e-11));
      CHECK(t_hi.value(std::vector<double>{-at, std::log(nu)}) == Approx(expected).epsilon(1e-11));
      std::vector<double> g(2), ws(t_lo.workspace_size());
      t_lo.value_and_gradient(std::span<const double>(pt), std::span<double>(g), std::span<double>(ws));
      CHECK(std::isfinite(g[0]));
      CHECK(std::isfinite(g[1]));
    }
  const auto c_lo = compile(cauchy_lcdf(x, 0.0, 1.0), x);
  const auto l_lo = compile(double_exponential_lcdf(x, 0.0, 1.0) + double_exponential_lccdf(x, 0.0, 1.0), x);
  for (const double at : {-1e12, -1e5, -30.0, 0.0, 30.0, 1e5}) {
    INFO("x = " << at);
    CHECK(c_lo.value(std::vector<double>{at}) ==
          Approx(std::log(bm::cdf(bm::cauchy_distribution<double>(0.0, 1.0), at))).epsilon(1e-13));
  }
  for (const double at : {-700.0, -40.0, -0.5, 0.0, 0.5, 40.0, 700.0}) {
    INFO("x = " << at);
    const double expected = at < 0 ? at - std::log(2.0) + std::log1p(-0.5 * std::exp(at))
                                   : std::log1p(-0.5 * std::exp(-at)) - at - std::log(2.0);
    CHECK(l_lo.value(std::vector<double>{at}) == Approx(expected).epsilon(1e-13));
  }
}

// Large shapes: the normalising terms by Loader's Stirling-error and deviance forms
// (scalar/math.hpp), not as differences of lgamma values of size a log a. Against Boost.Math,
// whose gamma_p / gamma_q and ibeta keep full precision there: a Poisson count of 10⁴–10⁶ near
// its mean, a negative binomial with φ = 10⁸ (before: 3e-11 and 1e-7 relative), Student's t
// with ν = 10⁶.
TEST_CASE("log_gamma_p, log_inc_beta: full precision at large shapes", "[distributions][lcdf]") {
  for (const double a : {1e3, 1e4, 1e5, 1e6})
    for (const double k : {-3.0, -0.5, 0.0, 2.0}) {
      const double x = a + k * std::sqrt(a);
      INFO("a = " << a << ", x = " << x);
      const math::log_inc_gamma_result r = math::log_inc_gamma(a, x);
      CHECK(r.log_p == Approx(std::log(bm::gamma_p(a, x))).epsilon(1e-12));
      CHECK(r.log_q == Approx(std::log(bm::gamma_q(a, x))).epsilon(1e-12));
    }
  for (const double phi : {1e4, 1e6, 1e8})
    for (const double y : {3.0, 10.0, 18.0}) {
      // neg_binomial_2(μ = 10, φ): P(Y ≤ y) = I_{φ/(μ+φ)}(φ, y + 1) = 1 − I_q(y + 1, φ) with the
      // complement q = μ/(μ + φ) given exactly (the rounding of 1 − q alone moves I by 1e-9 at
      // φ = 10⁸: the reference takes q).
      const double q = 10 / (10 + phi);
      INFO("phi = " << phi << ", y = " << y);
      const math::log_inc_beta_result r = math::log_inc_beta(phi, y + 1, phi / (10 + phi), q);
      // What is left is the continued fraction's own cancellation where x is within q of 1
      // (its first term 1 − (a + b)x/(a + 1) is of size q): about ε/q relative, 2e-10 at φ = 10⁸.
      const double tol = std::max(1e-12, 4 * 2.2e-16 / q);
      CHECK(r.log_i == Approx(std::log(bm::ibetac(y + 1, phi, q))).epsilon(tol));
      CHECK(r.log_1m_i == Approx(std::log(bm::ibeta(y + 1, phi, q))).epsilon(tol));
    }
  for (const double nu : {1e3, 1e6})
    for (const double t : {-4.0, -0.3, 1.5}) {
      INFO("nu = " << nu << ", t = " << t);
      const bm::students_t_distribution<double> d(nu);
      // The same ε/(1 − x), 1 − x = t²/(ν + t²), where the fraction runs on x (t = −4: 1.2e-12 and
      // 1.3e-11 relative against mpmath); on the complement (t = −0.3) it is 1e-16.
      const double tol = std::max(1e-12, 4 * 2.2e-16 * (nu + t * t) / (t * t));
      CHECK(math::student_t_log_cdf(nu, t).lcdf == Approx(std::log(bm::cdf(d, t))).epsilon(tol));
      CHECK(math::student_t_log_cdf(nu, t).lccdf == Approx(std::log(bm::cdf(bm::complement(d, t)))).epsilon(tol).margin(1e-16));
    }
}

// Arguments near the ends: Student's t and its half near 0 (x = ν/(ν + t²) rounds to 1, the
// complement t²/(ν + t²) keeps the digits; before, the half's log CDF was −∞ below x = 1e-8), the
// clamps of pareto, pareto_type_2 and uniform where a bound is a parameter and y lies outside
// the support, and pareto with its bound as data against Boost.Math.
TEST_CASE("lcdf, lccdf: near the centre of Student's t, and outside a support whose bound is a parameter",
          "[distributions][lcdf]") {
  param<"x"> x;
  param<"a"> a;
  const auto half = compile(half_student_t_lcdf(x, 3.0, exp(a)), x, a);
  const auto whole = compile(student_t_lcdf(x, 3.0, 0.0, exp(a)), x, a);
  for (const double v : {1e-12, 1e-9, 1e-8, 2e-8, 1e-5}) {
    INFO("x = " << v);
    const double u = v * v / (3 + v * v);
    // P(|T| ≤ v) = I_u(1/2, 3/2); P(T ≤ −v) = (1 − I_u(1/2, 3/2)) / 2.
    CHECK(half.value(std::vector<double>{v, 0.0}) == Approx(std::log(bm::ibeta(0.5, 1.5, u))).epsilon(1e-13));
    CHECK(whole.value(std::vector<double>{-v, 0.0}) == Approx(std::log(0.5) + std::log1p(-bm::ibeta(0.5, 1.5, u))).epsilon(1e-15));
    // P(|T| ≤ x/σ) ∝ x/σ here: ∂/∂x = 1/x and ∂/∂log σ = −1 (finite differences cannot step
    // below x).
    std::vector<double> g(2), ws(half.workspace_size());
    half.value_and_gradient(std::span<const double>(std::vector<double>{v, 0.0}), std::span<double>(g), std::span<double>(ws));
    CHECK(g[0] * v == Approx(1.0).epsilon(1e-6));
    CHECK(g[1] == Approx(-1.0).epsilon(1e-6));
  }
  tyche_test::check_gradient_at(whole, {-1e-8, 0.0}, "student_t_lcdf near 0");
  // A y below a bound that is a parameter: P(Y ≤ y) = 0, P(Y > y) = 1 (pareto's y_min = e^a,
  // pareto_type_2's μ = a, uniform's a = −e^a); above uniform's b: P(Y ≤ y) = 1.
  // Two programs (one compile each): the log probabilities that are 0 summed with weights, and
  // the probabilities that are 0 as exp of the log ones (any −∞ missed would leave a weight).
  const std::vector<double> at{0.0};
  CHECK(compile(pareto_lccdf(0.5, exp(a), 2.0) + 2 * pareto_type_2_lccdf(-0.5, a, 1.0, 2.0) +
                    3 * uniform_lccdf(-1.5, -exp(a), exp(a)) + 4 * uniform_lcdf(1.5, -exp(a), exp(a)),
                a)
            .value(at) == 0.0);
  CHECK(compile(exp(pareto_lcdf(0.5, exp(a), 2.0)) + 2 * exp(pareto_type_2_lcdf(-0.5, a, 1.0, 2.0)) +
                    3 * exp(uniform_lcdf(-1.5, -exp(a), exp(a))) + 4 * exp(uniform_lccdf(1.5, -exp(a), exp(a))),
                a)
            .value(at) == 0.0);
  // The bound as data (no clamp): pareto(0.5, e^a) over data above it, against Boost.
  const std::vector<double> y{0.7, 1.3, 6.0};
  const auto pts = tyche_test::points_in(10, {{-1.0, 1.0}}, 112);
  tyche_test::check_log_density(compile(pareto_lcdf(data(y), 0.5, exp(a)) + 2 * pareto_lccdf(data(y), 0.5, exp(a)), a), pts,
                                [&](const std::vector<double>& p) {
                                  const bm::pareto_distribution<double> d(0.5, std::exp(p[0]));
                                  double total = 0;
                                  for (const double v : y) total += std::log(bm::cdf(d, v)) + 2 * std::log(bm::cdf(bm::complement(d, v)));
                                  return total;
                                },
                                "pareto_lcdf + 2 pareto_lccdf, y_min data");
  // half_cauchy's survival function at 0 is 1, with a finite gradient (atan2).
  const std::vector<double> zero{0.0};
  const auto hc = compile(half_cauchy_lccdf(data(zero), exp(a)), a);
  CHECK(hc.value(at) == Approx(0.0).margin(1e-15));
  tyche_test::check_gradient_at(hc, {0.3}, "half_cauchy_lccdf at 0");
}

// beta_binomial(n, a, b): log P(Y ≤ y) + 2 log P(Y > y) summed over counts on both sides of the
// mean, a and b from 0.37 (U-shaped) to 7, against the sum of the probabilities in long double
// written here (lgamma per term); with gradients. A count at n right-censored is refused.
TEST_CASE("lcdf + 2 lccdf of beta_binomial against a direct sum", "[distributions][lcdf]") {
  param<"a"> a;
  param<"b"> b;
  const std::vector<double> k{0, 3, 11, 7, 1, 12};
  const std::vector<double> upper_k{0, 3, 11, 7, 1};
  auto log_pmf = [](long double n, long double sa, long double sb, long double j) {
    return std::lgamma(n + 1) - std::lgamma(j + 1) - std::lgamma(n - j + 1) + std::lgamma(j + sa) +
           std::lgamma(n - j + sb) - std::lgamma(n + sa + sb) + std::lgamma(sa + sb) - std::lgamma(sa) - std::lgamma(sb);
  };
  auto side = [&](double n, double sa, double sb, double y, bool upper) {
    long double total = 0;
    for (double j = 0; j <= n; ++j)
      if (upper ? j > y : j <= y) total += std::exp(log_pmf(n, sa, sb, j));
    return static_cast<double>(std::log(total));
  };
  const auto pts = tyche_test::points_in(15, {{-1.0, 2.0}, {-1.0, 2.0}}, 113);
  tyche_test::check_log_density(
      compile(beta_binomial_lcdf(data(k), 12.0, exp(a), exp(b)) + 2 * beta_binomial_lccdf(data(upper_k), 12.0, exp(a), exp(b)),
              a, b),
      pts,
      [&](const std::vector<double>& p) {
        double total = 0;
        for (const double v : k) total += side(12, std::exp(p[0]), std::exp(p[1]), v, false);
        for (const double v : upper_k) total += 2 * side(12, std::exp(p[0]), std::exp(p[1]), v, true);
        return total;
      },
      "beta_binomial_lcdf + 2 beta_binomial_lccdf");
  // 2,000 trials, counts on both sides of the mean (P(Y ≤ 100) = 3.8e-5 at a = b = 5); the
  // long double reference holds log P to about 1e-15 absolute.
  for (const double y : {100.0, 900.0, 1000.0, 1700.0}) {
    INFO("y = " << y);
    const math::beta_binomial_log_cdf_result r = math::beta_binomial_log_cdf(2000, 5, 5, y);
    CHECK(r.lcdf == Approx(side(2000, 5, 5, y, false)).epsilon(1e-11).margin(1e-14));
    CHECK(r.lccdf == Approx(side(2000, 5, 5, y, true)).epsilon(1e-11).margin(1e-14));
  }
  CHECK_THROWS_WITH(beta_binomial_lccdf(data(k), 12.0, exp(a), exp(b)), Catch::Contains("y[6] = 12 is the number of trials"));
  CHECK(std::isnan(math::beta_binomial_log_cdf(10, 1, 1, 2.5).lcdf));
}

// Owen's T (scalar/owens_t.hpp) against Boost.Math's owens_t; the skew normal's log CDF and log
// survival function against Boost's skew_normal distribution where its cdf keeps its precision,
// and where Φ(z) − 2T(z, α) cancels or underflows (the light tail z < 0 with α > 0, large α, the
// heavy tail past z = −38), against log F from mpmath at 50 digits: for α > 0 by quadrature of
// F(z; α) = (1/π) ∫ from atan α to π/2 of e^(−z²/(2 cos²θ)) dθ, scaled by e^(z²(1+α²)/2) (not the
// code's formulas), for α < 0 as Φ(z) + 2T(|z|, |α|) with T by quadrature.
TEST_CASE("owens_t and skew_normal_lcdf / lccdf: against Boost.Math, and in the light tail against mpmath",
          "[distributions][lcdf]") {
  for (const double h : {0.0, 1e-3, 0.1, 0.5, 1.0, 2.0, 3.0, 5.0, 8.0, 12.0, 20.0, 30.0, -2.0})
    for (const double a : {1e-3, 0.1, 0.5, 0.9, 1.0, 1.1, 2.0, 5.0, 100.0, 1e4, -0.7, -3.0}) {
      INFO("h = " << h << ", a = " << a);
      // The a > 1 side goes through T(ah, 1/a): ah's rounding alone moves T by ~h²a·ε relatively.
      CHECK(math::owens_t(h, a) == Approx(bm::owens_t(h, a)).epsilon(1e-13));
    }
  param<"x"> x;
  param<"a"> a;
  param<"b"> b;
  param<"c"> c;
  {
    const auto pts = tyche_test::points_in(20, {{-2.0, 2.0}, {-3.0, 3.0}}, 211);
    const auto t = compile(owens_t(x, a), x, a);
    for (const auto& pt : pts) {
      CHECK(t.value(pt) == Approx(bm::owens_t(pt[0], pt[1])).epsilon(1e-13));
      tyche_test::check_gradient_at(t, pt, "owens_t(h, a)");
    }
    tyche_test::check_lanes(t, pts, "owens_t(h, a)");
    STATIC_REQUIRE(support_of<decltype(owens_t(x, a))> == interval::closed(-0.25, 0.25));
  }
  {
    // x, α, ξ, log ω where both probabilities stay above 1e-8 (Boost's cdf is Φ(z) − 2T(z, α)).
    const auto pts = tyche_test::points_in(30, {{-2.0, 2.0}, {-2.0, 2.0}, {-0.5, 0.5}, {-0.5, 0.5}}, 212);
    auto ref = [](const std::vector<double>& p) {
      const bm::skew_normal_distribution<double> d(p[2], std::exp(p[3]), p[1]);
      return std::log(bm::cdf(d, p[0])) + 2 * std::log(bm::cdf(bm::complement(d, p[0])));
    };
    const auto sn = compile(skew_normal_lcdf(x, b, exp(c), a) + 2 * skew_normal_lccdf(x, b, exp(c), a), x, a, b, c);
    tyche_test::check_log_density(sn, pts, ref, "skew_normal_lcdf + 2 skew_normal_lccdf");
    tyche_test::check_lanes(sn, pts, "skew_normal_lcdf + 2 skew_normal_lccdf");
  }
  {
    // The light tail: log P(Z ≤ z) for z < 0, α > 0, and the same numbers as log P(Z > −z) at
    // −α; near 1: log P(Z ≤ z) for z > 0, α < 0 (log1p of the light tail's probability).
    const auto lo = compile(skew_normal_lcdf(x, 0.0, 1.0, a), x, a);
    const auto hi = compile(skew_normal_lccdf(x, 0.0, 1.0, a), x, a);
    const struct {
      double z, alpha, log_f;
    } light[] = {{-8.0, 100.0, -320051.11922820933558}, {-5.0, 20.0, -5025.8535988082423918},
                 {-3.0, 5.0, -125.22228881458466483},   {-2.0, 3.5, -32.922411189121691057},
                 {-1.0, 20.0, -210.64184675975793308},  {-0.5, 100.0, -1263.7002443223250936},
                 {-30.0, 5.0, -11712.814788994470167}},
      // Large α with α|z| < 3 (2T(α|z|, 1/α) − Q(α|z|) erf(|z|/√2)), the heavy tail far out (Q
      // and T scaled by e^(z²/2)), and mixed points.
      other[] = {{-2.9e-9, 1e9, -28.469903682479011811},   {-2.9e-12, 1e12, -35.377658961461149726},
                 {-2.9e-14, 1e14, -39.982829147449241442}, {0.0, 1e17, -40.288676466748176802},
                 {-0.2, 10.0, -7.3249895824220386763},     {-39.0, 0.0, -765.0831565643775444},
                 {-39.0, -2.0, -764.39000938381759909},    {-40.0, 0.05, -807.70143898621132829},
                 {-1e4, 0.0, -50000010.129278915181},      {-2.0, 0.7, -6.038343229587575687},
                 {-1.0, -0.5, -1.407376491044598785},      {2.0, 1.5, -0.046547072217272170087}},
      near_one[] = {{1.0, -20.0, -3.3068027820050208674e-92},
                    {4.0, -3.0, -1.1743291252167322314e-38},
                    {30.0, 0.5, -9.813427854296374119067619e-198}};
    for (const auto& p : light) {
      INFO("z = " << p.z << ", alpha = " << p.alpha);
      CHECK(lo.value(std::vector<double>{p.z, p.alpha}) == Approx(p.log_f).epsilon(1e-14));
      CHECK(hi.value(std::vector<double>{-p.z, -p.alpha}) == Approx(p.log_f).epsilon(1e-14));
      tyche_test::check_gradient_at(lo, std::vector<double>{p.z, p.alpha}, "skew_normal_lcdf in the light tail");
    }
    for (const auto& p : other) {
      INFO("z = " << p.z << ", alpha = " << p.alpha);
      CHECK(lo.value(std::vector<double>{p.z, p.alpha}) == Approx(p.log_f).epsilon(1e-13));
      CHECK(hi.value(std::vector<double>{-p.z, -p.alpha}) == Approx(p.log_f).epsilon(1e-13));
    }
    for (const auto& p : near_one) {
      INFO("z = " << p.z << ", alpha = " << p.alpha);
      CHECK(lo.value(std::vector<double>{p.z, p.alpha}) == Approx(p.log_f).epsilon(1e-13));
    }
    // The ends: log F(−∞) = −∞, log F(∞) = 0; Owen's T at h = ±∞ is 0.
    const double inf = std::numeric_limits<double>::infinity();
    CHECK(lo.value(std::vector<double>{-inf, -1.0}) == -inf);
    CHECK(lo.value(std::vector<double>{inf, 1.0}) == 0.0);
    CHECK(math::owens_t(inf, 2.0) == 0.0);
    CHECK(math::owens_t(-inf, 0.5) == 0.0);
    // Where even F underflows (z²(1 + α²)/2 > 745): log F and its gradient stay finite.
    std::vector<double> g(2), ws(lo.workspace_size());
    const std::vector<double> deep{-30.0, 5.0};
    CHECK(lo.value_and_gradient(std::span<const double>(deep), std::span<double>(g), std::span<double>(ws)) ==
          Approx(-11712.814788994470167).epsilon(1e-14));
    CHECK(std::isfinite(g[0]));
    CHECK(std::isfinite(g[1]));
  }
  // right_censored(skew_normal(...)) goes through the same log_ccdf member as skew_normal_lccdf
  // (the censored term's plumbing is checked once, with the Weibull, above).
  STATIC_REQUIRE(requires { right_censored(skew_normal(x, exp(b), a)); });
}
