// do_ (tyche/model/intervention.hpp): the intervened variable's prior and Jacobian disappear,
// it leaves θ, and every expression that used it sees the value.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <numbers>
#include <vector>

#include "support/property.hpp"

using namespace tyche;

TEST_CASE("do_: the log joint of an intervened model equals the hand-computed one",
          "[model][do]") {
  const std::vector<double> y{28, 8, -3, 7, -1, 1, 18, 12}, sigma{15, 10, 16, 11, 9, 11, 10, 18};
  auto mu = normal<"mu">(0.0, 5.0);
  auto tau = half_cauchy<"tau">(5.0);
  auto theta_raw = std_normal<"theta_raw">(shape<8>);
  auto theta = mu + tau * theta_raw;
  const auto m = model(joint(mu, tau, theta_raw, normal(theta, data(sigma)).observe(data(y))));
  const auto fixed = do_<"tau">(m, 2.0);
  REQUIRE(fixed.dim() == 9);
  CHECK(fixed.parameter_names()[1] == "theta_raw[1]");
  const double pi = 3.14159265358979323846;
  for (const auto& th : tyche_test::random_points(10, 9, -2, 2, 17)) {
    double lp = -0.5 * (th[0] / 5) * (th[0] / 5) - std::log(5.0) - 0.5 * std::log(2 * pi);
    for (int j = 0; j < 8; ++j) {
      const double raw = th[1 + j], z = (y[j] - th[0] - 2.0 * raw) / sigma[j];
      lp += -0.5 * raw * raw - 0.5 * std::log(2 * pi) - 0.5 * z * z - std::log(sigma[j]) -
            0.5 * std::log(2 * pi);
    }
    CHECK(fixed.log_prob(th) == Approx(lp).epsilon(1e-13));
    tyche_test::check_gradient_at(fixed.program(), th, "do_<tau>(eight schools, 2)");
  }
}

TEST_CASE("do_: descendants see the value in their prior arguments", "[model][do]") {
  auto a = normal<"a">(0.0, 1.0);
  auto b = normal<"b">(a, 1.0);
  auto c = normal<"c">(b, 1.0);
  const auto m = do_<"b">(model(joint(a, b, c)), 3.0);
  REQUIRE(m.dim() == 2);
  const std::vector<double> th{0.5, 2.0};  // a, c
  const double k = -0.5 * std::log(2 * 3.14159265358979323846);
  // a ~ N(0,1), c ~ N(3, 1); b's own term is gone.
  CHECK(m.log_prob(th) == Approx(-0.5 * 0.25 + k - 0.5 * 1.0 + k).epsilon(1e-14));
  // Prior sampling of the intervened model: c centred at 3.
  std::mt19937_64 rng(9);
  double s = 0;
  for (int i = 0; i < 20000; ++i) s += m.sample_prior(rng)[1];
  CHECK(std::fabs(s / 20000 - 3.0) < 4.5 / std::sqrt(20000.0));
}

TEST_CASE("do_: a positive variable whose log the density uses directly (log(exp(u)) = u)",
          "[model][do]") {
  // normal(mu, sigma)'s log density has −log σ, which for σ = exp(u) is built as −u: the
  // intervention must replace u by log(value) as well as σ by the value.
  const std::vector<double> y{0.4, -1.1, 2.3};
  auto mu = normal<"mu">(0.0, 2.0);
  auto sigma = lognormal<"sigma">(0.0, 1.0);
  auto p = beta<"p">(2.0, 3.0);
  const auto m = model(joint(mu, sigma, p, normal(mu, sigma * p).observe(data(y))));
  const auto fixed_sigma = do_<"sigma">(m, 1.7);
  const auto fixed_p = do_<"p">(m, 0.25);
  const double pi = 3.14159265358979323846;
  for (const auto& th : tyche_test::random_points(8, 2, -1.5, 1.5, 3)) {
    {  // θ = (mu, logit p)
      const double pp = 1 / (1 + std::exp(-th[1])), s = 1.7 * pp;
      double lp = -0.5 * (th[0] / 2) * (th[0] / 2) - std::log(2.0) - 0.5 * std::log(2 * pi);
      lp += std::log(pp) + 2 * std::log(1 - pp) + std::lgamma(5.0) - std::lgamma(2.0) - std::lgamma(3.0);
      lp += std::log(pp) + std::log(1 - pp);  // the logit transform's log-Jacobian
      for (double v : y) lp += -0.5 * ((v - th[0]) / s) * ((v - th[0]) / s) - std::log(s) - 0.5 * std::log(2 * pi);
      CHECK(fixed_sigma.log_prob(th) == Approx(lp).epsilon(1e-12));
    }
    {  // θ = (mu, log sigma)
      const double sg = std::exp(th[1]), s = sg * 0.25;
      double lp = -0.5 * (th[0] / 2) * (th[0] / 2) - std::log(2.0) - 0.5 * std::log(2 * pi);
      lp += -0.5 * th[1] * th[1] - th[1] - 0.5 * std::log(2 * pi) + th[1];  // lognormal(0, 1), Jacobian
      for (double v : y) lp += -0.5 * ((v - th[0]) / s) * ((v - th[0]) / s) - std::log(s) - 0.5 * std::log(2 * pi);
      CHECK(fixed_p.log_prob(th) == Approx(lp).epsilon(1e-12));
    }
    tyche_test::check_gradient_at(fixed_sigma.program(), th, "do_<sigma>");
    tyche_test::check_gradient_at(fixed_p.program(), th, "do_<p>");
  }
}

TEST_CASE("do_: a value that is not finite is refused, naming the variable", "[model][do]") {
  // A new user's do_<"sigma">(m, NAN) was reported as a term reading "a constant = nan" with
  // advice to impute data (2026-12-04).
  static const std::vector<double> y{0.3, -0.2};
  auto mu = normal<"mu">(0.0, 1.0);
  auto sigma = half_normal<"sigma">(1.0);
  const auto m = model(joint(mu, sigma, normal(mu, sigma).observe(data(y))));
  CHECK_THROWS_WITH(do_<"sigma">(m, NAN),
                    "tyche::do_<\"sigma\">(model, value): the value is nan; an intervention sets the variable to a "
                    "finite number");
  CHECK_THROWS_AS(do_<"mu">(m, INFINITY), std::invalid_argument);
  CHECK(do_<"sigma">(m, 1.5).dim() == 1);
  // A value outside the variable's support, where its bounds are numbers: the model would have
  // no point with a finite density (a new user's do_<"phi">(m, 1.2), 2026-12-05).
  CHECK_THROWS_WITH(do_<"sigma">(m, -0.5),
                    "tyche::do_<\"sigma\">(model, value): the value -0.5 is outside sigma's support (0, inf)");
  auto phi = uniform<"phi">(-1.0, 1.0);
  const auto ar = model(joint(mu, phi, normal(mu * phi, 1.0).observe(data(y))));
  CHECK_THROWS_WITH(do_<"phi">(ar, 1.2), Catch::Matchers::Contains("the value 1.2 is outside phi's support (-1, 1)"));
  CHECK(do_<"phi">(ar, 0.95).dim() == 1);
  // A bound that is another variable is not known here: the value passes (its density decides).
  auto upper = lognormal<"upper">(0.0, 1.0);
  auto bounded = uniform<"b">(0.0, upper);
  const auto nested = model(joint(upper, bounded, normal(bounded, 1.0).observe(data(y))));
  CHECK(do_<"b">(nested, 5.0).dim() == 1);
}

TEST_CASE("do_: a vector value is checked for its size, each element's finiteness and support", "[model][do]") {
  // Before 2026-12-05 these were reported by the first observed term that read the variable, as
  // that term's error ("normal(...).observe(y) ... argument 2 has 2 values"), not do_'s.
  static const std::vector<double> y{0.3, -0.2, 0.1};
  auto mu = normal<"mu">(0.0, 1.0);
  auto sigma = half_normal<"sigma">(1.0, shape<3>);
  const auto m = model(joint(mu, sigma, normal(mu, sigma).observe(data(y))));
  static const std::vector<double> good{1.0, 2.0, 3.0}, shorter{1.0, 2.0}, longer{1.0, 2.0, 3.0, 4.0},
      with_nan{1.0, NAN, 3.0}, negative{1.0, -2.0, 3.0};
  const auto fixed = do_<"sigma">(m, data(good));
  REQUIRE(fixed.dim() == 1);
  // The value is used: y's density with sigma = (1, 2, 3) and mu's prior.
  double expected = -0.5 * 0.1 * 0.1 - 0.5 * std::log(2 * std::numbers::pi);
  for (std::size_t i = 0; i < 3; ++i)
    expected += -0.5 * std::pow((y[i] - 0.1) / good[i], 2) - std::log(good[i]) - 0.5 * std::log(2 * std::numbers::pi);
  CHECK(fixed.log_prob(std::vector<double>{0.1}) == Approx(expected).epsilon(1e-12));
  CHECK_THROWS_WITH(do_<"sigma">(m, data(shorter)),
                    "tyche::do_<\"sigma\">(model, value): the value has 2 values; sigma has 3");
  CHECK_THROWS_WITH(do_<"sigma">(m, data(longer)),
                    "tyche::do_<\"sigma\">(model, value): the value has 4 values; sigma has 3");
  CHECK_THROWS_WITH(do_<"sigma">(m, data(with_nan)),
                    "tyche::do_<\"sigma\">(model, value): value[2] is nan; an intervention sets the variable to a "
                    "finite number (indices count from 1)");
  CHECK_THROWS_WITH(do_<"sigma">(m, data(negative)),
                    "tyche::do_<\"sigma\">(model, value): value[2] = -2 is outside sigma[2]'s support (0, inf) "
                    "(indices count from 1)");
  // Bounds that are data are read element by element.
  static const std::vector<double> lo{0.0, 1.0, 2.0}, hi{1.0, 2.0, 3.0}, inside{0.5, 1.5, 2.5},
      outside{0.5, 1.5, 3.5};
  auto u = uniform<"u">(data(lo), data(hi));
  const auto bounded = model(joint(u, normal(u, 1.0).observe(data(y))));
  CHECK(do_<"u">(bounded, data(inside)).dim() == 0);
  CHECK_THROWS_WITH(do_<"u">(bounded, data(outside)),
                    Catch::Matchers::Contains("value[3] = 3.5 is outside u[3]'s support (2, 3)"));
  // A number fixes every element: each element's bounds are checked (only u[1]'s were).
  CHECK_THROWS_WITH(do_<"u">(bounded, 0.5),
                    "tyche::do_<\"u\">(model, value): the value 0.5 is outside u[2]'s support (1, 2) (indices count "
                    "from 1)");
  CHECK_THROWS_WITH(do_<"sigma">(m, -1.0), Catch::Matchers::Contains("the value -1 is outside sigma[1]'s support (0, inf)"));
  const auto all_two = do_<"sigma">(m, 2.0);
  double expected_two = -0.5 * 0.1 * 0.1 - 0.5 * std::log(2 * std::numbers::pi);
  for (std::size_t i = 0; i < 3; ++i)
    expected_two += -0.5 * std::pow((y[i] - 0.1) / 2.0, 2) - std::log(2.0) - 0.5 * std::log(2 * std::numbers::pi);
  CHECK(all_two.log_prob(std::vector<double>{0.1}) == Approx(expected_two).epsilon(1e-12));
}

TEST_CASE("do_: a vector variable used by element, by gather and through a data matrix", "[model][do]") {
  // Each use reads the vector's elements another way (param_element, param_gather, matvec); the
  // intervened model must read the value there, as the model written with the value does.
  // (These uses were left holding the parameter: do_ did not compile, 2026-12-07.)
  const std::vector<double> y{0.5, -1.0, 2.0, 0.25}, b{0.1, -0.2, 0.3}, x{0.5, 1.0, -1.5, 2.0, 0.0, 1.0,
                                                                           -0.5, 0.25, 1.0, 1.5, -2.0, 0.5};
  const std::vector<int> idx{2, 0, 1, 2};
  auto beta = normal<"beta">(0.0, 1.0, shape<3>);
  auto s = lognormal<"s">(0.0, 1.0);
  const auto X = matrix(x, 4, 3, "X");
  const auto by_element = do_<"beta">(model(joint(beta, s, normal(beta[1], s).observe(data(y)))), data(b));
  const auto by_gather = do_<"beta">(model(joint(beta, s, normal(gather(beta, idx), s).observe(data(y)))), data(b));
  const auto by_matvec = do_<"beta">(model(joint(beta, s, normal(matvec(X, beta), s).observe(data(y)))), data(b));
  REQUIRE(by_element.dim() == 1);
  REQUIRE(by_gather.dim() == 1);
  REQUIRE(by_matvec.dim() == 1);
  const double pi = std::numbers::pi;
  for (const double t : {-0.7, 0.0, 0.4}) {
    const double sd = std::exp(t);
    auto lp = [&](auto mean_of) {
      double v = -0.5 * t * t - 0.5 * std::log(2 * pi);  // lognormal(0, 1) at e^t, with the Jacobian t
      for (std::size_t i = 0; i < y.size(); ++i) {
        const double z = (y[i] - mean_of(i)) / sd;
        v += -0.5 * z * z - t - 0.5 * std::log(2 * pi);
      }
      return v;
    };
    const std::vector<double> th{t};
    CHECK(by_element.log_prob(th) == Approx(lp([&](std::size_t) { return b[1]; })).epsilon(1e-13));
    CHECK(by_gather.log_prob(th) == Approx(lp([&](std::size_t i) { return b[static_cast<std::size_t>(idx[i])]; })).epsilon(1e-13));
    CHECK(by_matvec.log_prob(th) ==
          Approx(lp([&](std::size_t i) { return x[3 * i] * b[0] + x[3 * i + 1] * b[1] + x[3 * i + 2] * b[2]; })).epsilon(1e-13));
  }
}

TEST_CASE("do_: a vector variable fixed to one number, and a matrix of floats", "[model][do]") {
  // A number for a vector variable stands for that number in every element (tutorial): each way
  // of reading the vector must find as many values as before (a gather read past a one-value
  // buffer, 2026-12-07, found by review).
  const std::vector<double> y{0.5, -1.0, 2.0, 0.25}, x{0.5, 1.0, -1.5, 2.0, 0.0, 1.0, -0.5, 0.25, 1.0, 1.5, -2.0, 0.5};
  const std::vector<float> xf(x.begin(), x.end());  // these values are exact in float
  const std::vector<int> idx{2, 0, 1, 2};
  auto beta = normal<"beta">(0.0, 1.0, shape<3>);
  auto s = lognormal<"s">(0.0, 1.0);
  const auto X = matrix(x, 4, 3, "X");
  const auto Xf = matrix(xf.data(), 4, 3, "X");
  const double v = 0.5, pi = std::numbers::pi;
  const std::vector<double> b{v, v, v};
  const auto by_element = do_<"beta">(model(joint(beta, s, normal(beta[1], s).observe(data(y)))), v);
  const auto by_gather = do_<"beta">(model(joint(beta, s, normal(gather(beta, idx), s).observe(data(y)))), v);
  const auto by_matvec = do_<"beta">(model(joint(beta, s, normal(matvec(X, beta), s).observe(data(y)))), v);
  const auto by_exp_matvec = do_<"beta">(model(joint(beta, s, normal(matvec(X, exp(beta)), s).observe(data(y)))), v);
  const auto by_float_matvec = do_<"beta">(model(joint(beta, s, normal(matvec(Xf, beta), s).observe(data(y)))), data(b));
  for (const double t : {-0.7, 0.4}) {
    const double sd = std::exp(t);
    auto lp = [&](auto mean_of) {
      double lv = -0.5 * t * t - 0.5 * std::log(2 * pi);
      for (std::size_t i = 0; i < y.size(); ++i) {
        const double z = (y[i] - mean_of(i)) / sd;
        lv += -0.5 * z * z - t - 0.5 * std::log(2 * pi);
      }
      return lv;
    };
    const auto row_sum = [&](std::size_t i, double e) { return (x[3 * i] + x[3 * i + 1] + x[3 * i + 2]) * e; };
    const std::vector<double> th{t};
    CHECK(by_element.log_prob(th) == Approx(lp([&](std::size_t) { return v; })).epsilon(1e-13));
    CHECK(by_gather.log_prob(th) == Approx(lp([&](std::size_t) { return v; })).epsilon(1e-13));
    CHECK(by_matvec.log_prob(th) == Approx(lp([&](std::size_t i) { return row_sum(i, v); })).epsilon(1e-13));
    CHECK(by_exp_matvec.log_prob(th) == Approx(lp([&](std::size_t i) { return row_sum(i, std::exp(v)); })).epsilon(1e-13));
    CHECK(by_float_matvec.log_prob(th) == Approx(lp([&](std::size_t i) { return row_sum(i, v); })).epsilon(1e-13));
  }
}
