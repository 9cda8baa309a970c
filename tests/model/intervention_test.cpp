// do_ (tyche/model/intervention.hpp): the intervened variable's prior and Jacobian disappear,
// it leaves θ, and every expression that used it sees the value.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
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
