// The model object (tyche/model/model.hpp) on eight schools: the log density with every
// normalising constant against a hand-written one, the Jacobian switch, names, constrain /
// unconstrain, initialisation, batched evaluation, and errors.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <span>
#include <vector>

#include "support/property.hpp"

using namespace tyche;
using Catch::Matchers::Contains;

namespace {
const std::vector<double> y{28, 8, -3, 7, -1, 1, 18, 12};
const std::vector<double> sigma{15, 10, 16, 11, 9, 11, 10, 18};

auto eight_schools() {
  return model([&] {
    auto mu = normal<"mu">(0.0, 5.0);
    auto tau = half_cauchy<"tau">(5.0);
    auto theta_raw = std_normal<"theta_raw">(shape<8>);
    auto theta = mu + tau * theta_raw;
    return joint(mu, tau, theta_raw, normal(theta, data(sigma)).observe(data(y)));
  });
}

/// log p(mu, tau, theta_raw, y) with every constant, written out; θ = (mu, log tau, raw).
double eight_schools_log_density(const std::vector<double>& th, bool jacobian) {
  const double pi = 3.14159265358979323846;
  const double mu = th[0], tau = std::exp(th[1]);
  double lp = -0.5 * (mu / 5) * (mu / 5) - std::log(5.0) - 0.5 * std::log(2 * pi);  // normal(0, 5)
  lp += std::log(2.0) - std::log(pi) - std::log(5.0) - std::log1p((tau / 5) * (tau / 5));
  for (int j = 0; j < 8; ++j) {
    const double raw = th[2 + j], theta = mu + tau * raw;
    lp += -0.5 * raw * raw - 0.5 * std::log(2 * pi);
    const double z = (y[j] - theta) / sigma[j];
    lp += -0.5 * z * z - std::log(sigma[j]) - 0.5 * std::log(2 * pi);
  }
  return jacobian ? lp + th[1] : lp;
}
}  // namespace

TEST_CASE("model: eight schools log density equals the written one, constants included",
          "[model]") {
  const auto m = eight_schools();
  REQUIRE(m.dim() == 10);
  for (const auto& th : tyche_test::random_points(20, 10, -2, 2, 31)) {
    CHECK(m.log_prob(th) == Approx(eight_schools_log_density(th, true)).epsilon(1e-13));
    CHECK(m.log_prob(th, false) == Approx(eight_schools_log_density(th, false)).epsilon(1e-13));
    tyche_test::check_gradient_at(m.program(), th, "eight schools (model API)");
    tyche_test::check_gradient_at(m.program_without_jacobian(), th, "eight schools, no Jacobian");
  }
}

TEST_CASE("model: names, constrain and unconstrain", "[model]") {
  const auto m = eight_schools();
  const auto names = m.parameter_names();
  REQUIRE(names.size() == 10);
  CHECK(names[0] == "mu");
  CHECK(names[1] == "tau");
  CHECK(names[2] == "theta_raw[1]");
  CHECK(names[9] == "theta_raw[8]");
  const std::vector<double> th{0.3, -0.7, 1, 2, 3, 4, 5, 6, 7, 8};
  const auto x = m.constrain(th);
  CHECK(x[0] == 0.3);
  CHECK(x[1] == Approx(std::exp(-0.7)).epsilon(1e-15));
  CHECK(x[9] == 8);
  const auto back = m.unconstrain(x);
  for (std::size_t k = 0; k < th.size(); ++k) CHECK(back[k] == Approx(th[k]).epsilon(1e-14));
  std::vector<double> bad = x;
  bad[1] = -1.5;
  CHECK_THROWS_WITH(m.unconstrain(bad), Contains("tau") && Contains("-1.5") && Contains("support"));
  CHECK_THROWS_WITH(m.constrain(std::vector<double>(3)), Contains("got 3 values, expected 10"));
}

TEST_CASE("model: Stan-style initialisation is uniform on (-2, 2)", "[model]") {
  const auto m = eight_schools();
  std::mt19937_64 rng(7);
  double lo = 0, hi = 0, sum = 0;
  const int n = 2000;
  for (int i = 0; i < n; ++i) {
    for (double v : m.initial_point(rng)) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      sum += v;
    }
  }
  CHECK(lo >= -2.0);
  CHECK(hi <= 2.0);
  CHECK(lo < -1.99);
  CHECK(hi > 1.99);
  // Mean of 20000 uniform(-2, 2) draws: sd 4/sqrt(12)/sqrt(20000) = 0.0082; 4.5 standard errors.
  CHECK(std::fabs(sum / (n * 10)) < 4.5 * 0.0082);
}

TEST_CASE("model: the compiled density evaluates for SIMD batches and float", "[model]") {
  const auto m = eight_schools();
  const auto pts = tyche_test::random_points(8, 10, -1, 1, 5);
  tyche_test::check_lanes(m.program(), pts, "eight schools (model API)");
  tyche_test::check_float(m.program(), pts[0], "eight schools (model API)");
}

TEST_CASE("model: prior predictive moments of a small hierarchy match the closed form",
          "[model]") {
  // mu ~ normal(1, 2), x ~ normal(mu, 0.5): E[x] = 1, Var[x] = 4 + 0.25.
  auto mu = normal<"mu">(1.0, 2.0);
  auto x = normal<"x">(mu, 0.5);
  const auto m = model(joint(mu, x));
  std::mt19937_64 rng(2026);
  const int n = 100000;
  double s = 0, ss = 0, smu = 0;
  for (int i = 0; i < n; ++i) {
    const auto draw = m.sample_prior(rng);
    s += draw[1];
    ss += draw[1] * draw[1];
    smu += draw[0];
  }
  const double mean = s / n, var = ss / n - mean * mean;
  // Standard errors: sqrt(Var/n) for the mean; sqrt(2 Var² / n) for a normal variance.
  CHECK(std::fabs(mean - 1.0) < 4.5 * std::sqrt(4.25 / n));
  CHECK(std::fabs(var - 4.25) < 4.5 * std::sqrt(2 * 4.25 * 4.25 / n));
  CHECK(std::fabs(smu / n - 1.0) < 4.5 * std::sqrt(4.0 / n));
}

TEST_CASE("model: posterior predictive draws follow the likelihood at θ", "[model]") {
  const std::vector<double> obs{0, 0, 0};
  auto mu = normal<"mu">(0.0, 1.0);
  const auto m = model(joint(mu, normal(mu, 2.0).observe(data(obs))));
  std::mt19937_64 rng(3);
  const std::vector<double> th{1.5};
  double s = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const auto rep = m.sample_observations(std::span<const double>(th), rng);
    REQUIRE(rep.size() == 1);
    REQUIRE(rep[0].size() == 3);
    s += rep[0][0] + rep[0][1] + rep[0][2];
  }
  CHECK(std::fabs(s / (3 * n) - 1.5) < 4.5 * 2.0 / std::sqrt(3.0 * n));
}

TEST_CASE("model: sample_observations_at takes constrained values (a fit's draw, sample_prior's)", "[model]") {
  // A new user (2026-12-04) passed a constrained draw to sample_observations, which takes θ
  // unconstrained: tau = 3 was read as log tau, and the predictive means came out at 1e18.
  const std::vector<double> obs{0, 0};
  auto mu = normal<"mu">(0.0, 1.0);
  auto tau = half_normal<"tau">(1.0);
  const auto m = model(joint(mu, tau, normal(mu, tau).observe(data(obs))));
  std::mt19937_64 rng(5);
  const std::vector<double> values{1.0, 3.0};  // mu = 1, tau = 3
  double s = 0, s2 = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const auto rep = m.sample_observations_at(values, rng);
    REQUIRE(rep.size() == 1);
    s += rep[0][0];
    s2 += rep[0][0] * rep[0][0];
  }
  const double mean = s / n, sd = std::sqrt(s2 / n - mean * mean);
  CHECK(std::fabs(mean - 1.0) < 4.5 * 3.0 / std::sqrt(double(n)));
  CHECK(std::fabs(sd - 3.0) < 4.5 * 3.0 / std::sqrt(2.0 * n));
  // The same stream through the unconstrained form gives the same draws.
  std::mt19937_64 a(7), b(7);
  CHECK(m.sample_observations_at(values, a) == m.sample_observations(m.unconstrain(values), b));
  CHECK_THROWS_WITH(m.sample_observations_at(std::vector<double>{1.0}, rng),
                    Catch::Matchers::Contains("sample_observations_at: got 1 values, expected 2"));
  CHECK_THROWS_WITH(m.sample_observations_at(std::vector<double>{1.0, -3.0}, rng),
                    Catch::Matchers::Contains("tau = -3 is outside its support"));
}

TEST_CASE("model: observed data outside the support or not finite is refused", "[model]") {
  const std::vector<double> with_nan{1.0, std::nan(""), 2.0};
  const std::vector<double> negative{1.0, 2.0, -0.5};
  param<"mu"> mu;
  CHECK_THROWS_WITH(normal(mu, 1.0).observe(data(with_nan)),
                    Contains("normal") && Contains("y[2]") && Contains("not finite"));
  CHECK_THROWS_WITH(half_cauchy(1.0).observe(data(negative)),
                    Contains("half_cauchy") && Contains("y[3]") && Contains("-0.5"));
}

TEST_CASE("model: flat priors on the line, (0, inf) and a parameter-dependent interval",
          "[model]") {
  auto beta = flat<"beta">(shape<3>);
  auto sigma = flat<"sigma">(positive());
  auto p = flat<"p">(between(0.0, sigma));  // 0 < p < sigma
  const std::vector<double> y{1.0, 2.0, 0.5};
  const auto m = model(joint(beta, sigma, p, normal(beta * p, sigma).observe(data(y))));
  REQUIRE(m.dim() == 5);
  for (const auto& q : tyche_test::random_points(10, 5, -1, 1, 3))
    tyche_test::check_gradient_at(m.program(), q, "flat priors");
  const std::vector<double> th{0.1, 0.2, 0.3, 0.4, 0.5};
  const auto x = m.constrain(th);
  CHECK(x[4] > 0);
  CHECK(x[4] < x[3]);  // p < sigma
  const auto back = m.unconstrain(x);
  for (std::size_t k = 0; k < th.size(); ++k) CHECK(back[k] == Approx(th[k]).epsilon(1e-12));
  std::vector<double> outside = x;
  outside[4] = x[3] + 0.1;
  CHECK_THROWS_WITH(m.unconstrain(outside), Contains("p = ") && Contains("support"));
}

TEST_CASE("model: a variable that occurs only in a constant prior keeps its place in theta",
          "[model]") {
  auto a = flat<"a">(between(-1.0, 3.0));
  auto b = normal<"b">(0.0, 1.0);
  const auto m = model(joint(a, b));  // a occurs nowhere without the Jacobian
  REQUIRE(m.dim() == 2);
  std::vector<double> g(2);
  const double lp = m.log_prob_and_gradient(std::vector<double>{0.3, 0.5}, g, false);
  CHECK(lp == Approx(-0.125 - 0.5 * std::log(2 * 3.14159265358979323846)));
  CHECK(g[0] == 0.0);
  CHECK(g[1] == Approx(-0.5));
  tyche_test::check_gradient_at(m.program(), {0.3, 0.5}, "flat interval + normal");
  // θ or grad of the wrong length: the model's message, as docs/errors.md gives it (log_prob
  // said "tyche::program::value: theta has size 1" before 2026-12-04).
  using Catch::Matchers::Equals;
  CHECK_THROWS_WITH(m.log_prob(std::vector<double>{0.3}), Equals("tyche::model::log_prob: got 1 values, expected 2"));
  CHECK_THROWS_WITH(m.log_prob_and_gradient(std::vector<double>{0.3, 0.5, 0.1}, g),
                    Equals("tyche::model::log_prob_and_gradient: got 3 values, expected 2"));
  std::vector<double> g1(1);
  CHECK_THROWS_WITH(m.log_prob_and_gradient(std::vector<double>{0.3, 0.5}, g1),
                    Equals("tyche::model::log_prob_and_gradient: grad has 1 values, expected 2"));
}

TEST_CASE("model: non-finite data anywhere, and sizes that do not match, are named when the model is built",
          "[model][errors]") {
  static const std::vector<double> y8{1, 2, 3, 4, 5, 6, 7, 8}, y7{1, 2, 3, 4, 5, 6, 7};
  static const std::vector<double> x_nan{1, 2, NAN, 4, 5, 6, 7, 8}, s_inf{1, 1, 1, INFINITY, 1, 1, 1, 1};
  static const std::vector<double> grid{0.5, 1.5, NAN, 2.5};
  auto a = normal<"a">(0.0, 1.0);
  auto b = normal<"b">(0.0, 1.0);
  // A covariate: the term, the argument, the data (by place, then by its name) and the index.
  CHECK_THROWS_WITH(joint(a, b, normal(a + b * data(x_nan), 1.0).observe(data(y8))),
                    Contains("term 3, normal(...).observe(y)") && Contains("argument 1 reads data#1[3] = nan") &&
                        Contains("indices count from 1"));
  CHECK_THROWS_WITH(joint(a, b, normal(a + b * data(x_nan, "x"), 1.0).observe(data(y8))),
                    Contains("argument 1 reads x[3] = nan"));
  // A scale of data, and a prior's argument.
  CHECK_THROWS_WITH(joint(a, normal(a, data(s_inf, "s")).observe(data(y8))), Contains("argument 2 reads s[4] = inf"));
  CHECK_THROWS_WITH(joint(normal<"v">(data(grid, "grid"), 1.0)),
                    Contains("term 1, the random variable 'v' (normal)") && Contains("grid[3] = nan"));
  // A free term, and a data matrix.
  CHECK_THROWS_WITH(joint(a, target(sum(data(x_nan)) * a)), Contains("target(...): it reads data#1[3] = nan"));
  static const std::vector<double> xm{1, 2, 3, NAN};
  auto beta = normal<"beta">(0.0, 1.0, shape<2>);
  static const std::vector<double> y2{0.5, 1.0};
  CHECK_THROWS_WITH(joint(beta, normal(matvec(matrix(xm, 2, 2, "X"), beta), 1.0).observe(data(y2))),
                    Contains("X[2, 2] = nan"));
  // 7 observations for a vector of 8: the family, the sizes and the variable the argument uses.
  auto theta = normal<"theta">(0.0, 1.0, shape<8>);
  CHECK_THROWS_WITH(model(joint(theta, normal(theta, 1.0).observe(data(y7)))),
                    Contains("normal(...).observe(y) (y has 7 values, argument 1 has 8 values (uses theta), "
                             "argument 2 is a scalar): every vector argument must have as many values as y") &&
                        !Contains("vector operands"));  // the internal operation's repetition left out
  // y a scalar, two vector arguments of different sizes.
  static const std::vector<double> x7(7, 1.0);
  CHECK_THROWS_WITH(model(joint(theta, normal(theta, data(x7, "s")).observe(1.0))),
                    Contains("argument 1 has 8 values (uses theta), argument 2 has 7 values (data 's')): "
                             "its vector arguments must have the same number of values"));
  // Named data and named gather indices inside an argument are named too.
  static const std::vector<int> group8{0, 1, 2, 0, 1, 2, 0, 1};
  auto g3 = normal<"g">(0.0, 1.0, shape<3>);
  CHECK_THROWS_WITH(model(joint(g3, normal(gather(g3, group8, "group"), 1.0).observe(data(y7)))),
                    Contains("argument 1 has 8 values (data 'group' with g)"));
  // Vectors that meet in an expression built before joint(...): the operation, the sizes and
  // what each operand reads.
  static const std::vector<double> x9(9, 1.0);
  CHECK_THROWS_WITH(theta + data(x9, "x"),
                    Contains("tyche::add: vector operands have sizes 8 and 9 (the first: uses theta; the second: data 'x')"));
  CHECK_THROWS_WITH(data(x9) * (a + theta),
                    Contains("tyche::multiply: vector operands have sizes 9 and 8 (the first: data; the second: uses a, theta)"));
  // Named data inside an operand that also uses a variable (an offset, a matrix): both named.
  static const std::vector<double> offset7(7, 0.5), xm16(16, 1.0);
  CHECK_THROWS_WITH(data(offset7, "log_expo") + a + matvec(matrix(xm16, 8, 2, "X"), beta),
                    Contains("tyche::add: vector operands have sizes 7 and 8 (the first: data 'log_expo' with a; "
                             "the second: data 'X' with beta)"));
  // Finite data pass.
  CHECK_NOTHROW(model(joint(a, b, normal(a + b * data(y8, "x"), 1.0).observe(data(y8)))));
}

namespace {
struct school_data {
  std::vector<double> y, sigma;
};
auto schools_of(const school_data& d) {
  auto mu = normal<"mu">(0.0, 5.0);
  auto tau = half_cauchy<"tau">(5.0);
  auto theta_raw = std_normal<"theta_raw">(shape<8>);
  return joint(mu, tau, theta_raw, normal(mu + tau * theta_raw, data(d.sigma)).observe(data(d.y)));
}
}  // namespace

TEST_CASE("model: a function of the data builds the model, once per data set", "[model]") {
  const school_data d{y, sigma};
  const auto from_function = model([](const school_data& s) { return schools_of(s); }, d);
  const auto from_joint = model(schools_of(d));
  // Other data, the same function: the log density follows the data it was given.
  school_data shifted = d;
  for (auto& v : shifted.y) v += 5;
  const auto from_shifted = model(schools_of, shifted);
  for (const auto& th : tyche_test::random_points(5, 10, -1.0, 1.0, 71)) {
    CHECK(from_function.log_prob(th) == from_joint.log_prob(th));
    CHECK(from_shifted.log_prob(th) != from_joint.log_prob(th));
  }
}

TEST_CASE("model: a data matrix held by an op (matvec of an expression, rows_dot_product) is checked when it is made",
          "[model][errors]") {
  static const std::vector<double> xm{1, 2, 3, NAN};
  auto beta = normal<"beta">(0.0, 1.0, shape<2>);
  CHECK_THROWS_WITH(matvec(matrix(xm, 2, 2, "X"), exp(beta)), Contains("matvec(X, v): X[2, 2] = nan"));
  vector_param<"b4", 4> b4;
  CHECK_THROWS_WITH(rows_dot_product(matrix(xm, 2, 2), exp(b4)), Contains("A[2, 2] = nan"));
}
