// The *_lcdf / *_lccdf functions (tyche/distributions/log_densities.hpp): log P(Y ≤ y) and
// log P(Y > y) of the families with a closed-form CDF, against Boost.Math's cdf and its complement
// (Fréchet and log-logistic through the Weibull and logistic distributions of 1/X and log X), with
// gradients against finite differences; sums over a data vector; the data checks observe() makes;
// and a censored Weibull model's log density against one written by hand.
#include "support/continuous_checks.hpp"

#include <tyche/tyche.hpp>

#include <boost/math/distributions/exponential.hpp>
#include <boost/math/distributions/extreme_value.hpp>
#include <boost/math/distributions/logistic.hpp>
#include <boost/math/distributions/lognormal.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/weibull.hpp>
#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>
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
      // From far in the lower tail (λx = 0.004: log(1 − e^{−λx}) needs expm1) to e^{−16}.
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
