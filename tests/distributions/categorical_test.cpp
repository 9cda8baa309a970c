// categorical(theta) and categorical_logit(beta) (tyche/distributions/categorical.hpp): log
// densities against sums written here (in long double), gradients through the property check,
// predictive draws against the probabilities (chi-square), and the data errors.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "support/discrete_checks.hpp"
#include "support/property.hpp"

using namespace tyche;
using Catch::Matchers::Contains;

TEST_CASE("categorical_logit: log density, gradient, draws", "[distributions][categorical]") {
  const std::vector<double> y{1, 3, 3, 2, 4, 3, 1};
  vector_param<"beta", 4> beta;
  const auto f = compile(categorical_logit(beta).log_prob(data(y)), beta);
  const auto one = compile(categorical_logit(beta).log_prob(constant{2.0}), beta);
  for (const auto& b : tyche_test::random_points(60, 4, -3, 3, 31)) {
    long double lse = 0;
    for (double v : b) lse += std::exp(static_cast<long double>(v));
    lse = std::log(lse);
    long double expected = 0;
    for (double c : y) expected += b[static_cast<std::size_t>(c) - 1] - lse;
    tyche_test::discrete::check_log_pmf(f.value(b), expected, "categorical_logit");
    tyche_test::discrete::check_log_pmf(one.value(b), b[1] - lse, "categorical_logit, one observation");
  }
  for (const auto& b : tyche_test::random_points(10, 4, -3, 3, 32))
    tyche_test::check_gradient_at(f, b, "categorical_logit");

  // Predictive draws: categories with probability softmax(beta).
  const std::vector<double> b{0.5, -1.0, 2.0, 0.0};
  std::mt19937_64 rng(3);
  const auto xs = categorical_logit_distribution<constant>::draw_all(rng, tyche_test::discrete::sample_size, b);
  double z = 0;
  for (double v : b) z += std::exp(v);
  tyche_test::discrete::check_chi_square(
      xs, [&](long long k) { return k >= 1 && k <= 4 ? std::exp(b[std::size_t(k - 1)]) / z : 0.0; },
      "categorical_logit draws");
}

TEST_CASE("categorical: log density and gradient through an expression", "[distributions][categorical]") {
  const std::vector<double> y{2, 2, 1, 3};
  vector_param<"a", 3> a;
  // theta = exp(a) / Σ exp(a), written out: the gather goes through the elementwise ops.
  const auto theta = exp(a - log_sum_exp(a));
  const auto f = compile(categorical(theta).log_prob(data(y)), a);
  for (const auto& p : tyche_test::random_points(30, 3, -2, 2, 41)) {
    long double s = 0;
    for (double v : p) s += std::exp(static_cast<long double>(v));
    long double expected = 0;
    for (double c : y) expected += std::log(std::exp(static_cast<long double>(p[std::size_t(c) - 1])) / s);
    tyche_test::discrete::check_log_pmf(f.value(p), expected, "categorical");
  }
  tyche_test::check_gradient_at(f, {0.3, -0.2, 1.1}, "categorical");
}

TEST_CASE("categorical: a model with predictive draws", "[distributions][categorical]") {
  const std::vector<double> y{1, 2, 2, 3, 3, 3};
  auto m = model([&] {
    auto beta = normal<"beta">(0.0, 1.0, shape<3>);
    return joint(beta, categorical_logit(beta).observe(data(y)));
  });
  std::mt19937_64 rng(9);
  const auto obs = m.sample_observations(std::vector<double>{0.0, 0.0, 0.0}, rng);
  REQUIRE(obs.size() == 1);
  REQUIRE(obs[0].size() == 6);
  for (double v : obs[0]) CHECK((v == 1 || v == 2 || v == 3));
  tyche_test::check_gradient_at(m.program(), {0.1, -0.4, 0.8}, "categorical_logit model");
}

TEST_CASE("categorical: data errors name the index and value", "[distributions][categorical]") {
  vector_param<"beta", 3> beta;
  const std::vector<double> zero{1, 0};
  CHECK_THROWS_WITH(categorical_logit(beta).observe(data(zero)),
                    Contains("categorical_logit(...).observe(y): y[2] = 0 is not a category"));
  const std::vector<double> big{1, 2, 4};
  CHECK_THROWS_WITH(categorical_logit(beta).log_prob(data(big)),
                    Contains("y[3] = 4 is not a category 1 … 3"));
  const std::vector<double> fractional{1.5};
  CHECK_THROWS_WITH(categorical(exp(beta)).observe(data(fractional)),
                    Contains("categorical(...).observe(y): y[1] = 1.5 is not a category"));
}

TEST_CASE("categorical_logit: one value per observation from a data matrix is the regression mistake, and says so",
          "[distributions][categorical]") {
  using namespace tyche;
  // matvec(X, w) of a 6-row X: six values, one per observation, where categorical_logit wants one
  // vector of K values for all of them; y's categories (1 … 3) would be read among 6.
  static const std::vector<double> x{1, 0, 0, 1, 1, 1, 0.5, 0.5, 2, 0, 0, 2}, y{1, 2, 3, 1, 2, 3};
  auto w = normal<"w">(0.0, 1.0, shape<2>);
  CHECK_THROWS_WITH(model(joint(w, categorical_logit(matvec(matrix(x, 6, 2, "X"), w)).observe(data(y)))),
                    Contains("categorical_logit(v).observe(y): v has 6 values, one per observation, computed from a "
                             "data matrix, and y's categories go up to 3") &&
                        Contains("categorical_logit_glm(X, alpha, beta).observe(data(y))"));
  // K values from a data matrix of K rows, as many as the observations, with the top category seen: allowed.
  static const std::vector<double> y6{1, 6, 3, 1, 2, 5};
  CHECK_NOTHROW(model(joint(w, categorical_logit(matvec(matrix(x, 6, 2, "X"), w)).observe(data(y6)))));
  // K values not from a data matrix: allowed whatever K is.
  auto g = normal<"g">(0.0, 1.0, shape<6>);
  CHECK_NOTHROW(model(joint(g, categorical_logit(g).observe(data(y)))));
}
