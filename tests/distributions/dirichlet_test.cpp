// dirichlet(alpha) and the simplex and unit_vector transforms (tyche/distributions/dirichlet.hpp,
// tyche/transforms/simplex.hpp): log densities against lgamma sums in long double, gradients,
// draws against the exact moments, the transforms' inverses and errors, and — since the
// transforms carry an auxiliary dimension — NUTS on three targets whose law is known: a
// Dirichlet prior, its conjugate posterior after categorical data, and the uniform law on the
// sphere. Tolerances: means within 4 Monte Carlo standard errors (from tyche::ess_bulk),
// variances within 10 %; fixed seeds.
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

namespace {
long double dirichlet_lpdf(const std::vector<double>& x, const std::vector<double>& a) {
  long double a0 = 0, lp = 0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    a0 += a[k];
    lp += (a[k] - 1.0L) * std::log(static_cast<long double>(x[k])) - std::lgamma(static_cast<long double>(a[k]));
  }
  return lp + std::lgamma(a0);
}

/// Each coordinate's posterior mean within 4 MCSE of mean[k] and variance within 10 % of var[k].
template <class Model>
void check_nuts_moments(const Model& m, const std::vector<double>& mean, const std::vector<double>& var,
                        std::uint64_t seed, const char* what) {
  const auto fit = nuts(m, {.chains = 4, .warmup = 1000, .draws = 2000, .seed = seed});
  REQUIRE(fit.dim() == mean.size());
  for (std::size_t k = 0; k < fit.dim(); ++k) {
    const auto chains = fit.parameter(k);
    std::vector<double> all;
    for (const auto& c : chains) all.insert(all.end(), c.begin(), c.end());
    double mu = 0, v = 0;
    for (double x : all) mu += x / double(all.size());
    for (double x : all) v += (x - mu) * (x - mu) / double(all.size() - 1);
    const double mcse = std::sqrt(v / ess_bulk(chains));
    INFO(what << " " << fit.names[k] << ": mean " << mu << " (exact " << mean[k] << ", MCSE " << mcse
              << "), variance " << v << " (exact " << var[k] << ")");
    CHECK(std::fabs(mu - mean[k]) < 4 * mcse);
    CHECK(std::fabs(v / var[k] - 1) < 0.10);
  }
}
}  // namespace

TEST_CASE("dirichlet: log density and gradient", "[distributions][dirichlet]") {
  vector_param<"x", 3> xp;  // the density at a point given directly (not through the transform)
  const std::vector<double> alpha{0.7, 2.0, 3.5};
  const auto f = compile(dirichlet(data(alpha)).log_prob(exp(xp)), xp);
  const auto g = compile(dirichlet(constant{1.7}).log_prob(exp(xp)), xp);
  for (const auto& p : tyche_test::random_points(60, 3, -3, 0, 12)) {
    std::vector<double> x(3);
    for (int k = 0; k < 3; ++k) x[k] = std::exp(p[k]);
    tyche_test::discrete::check_log_pmf(f.value(p), dirichlet_lpdf(x, alpha), "dirichlet");
    tyche_test::discrete::check_log_pmf(g.value(p), dirichlet_lpdf(x, {1.7, 1.7, 1.7}), "symmetric dirichlet");
  }
  for (const auto& p : tyche_test::random_points(5, 3, -2, 0, 13)) {
    tyche_test::check_gradient_at(f, p, "dirichlet");
    tyche_test::check_gradient_at(g, p, "symmetric dirichlet");
  }
}

TEST_CASE("dirichlet: draws have the exact moments", "[distributions][dirichlet]") {
  const std::vector<double> a{0.5, 1.5, 3.0};
  std::mt19937_64 rng(17);
  std::vector<std::vector<double>> xs(3);
  for (std::size_t r = 0; r < tyche_test::discrete::sample_size; ++r) {
    const auto x = dirichlet_distribution<constant>::draw_all(rng, 3, a);
    double total = 0;
    for (int k = 0; k < 3; ++k) {
      xs[k].push_back(x[k]);
      total += x[k];
    }
    REQUIRE(total == Approx(1.0).epsilon(1e-12));
  }
  for (int k = 0; k < 3; ++k)
    tyche_test::discrete::check_moments(xs[k], a[k] / 5.0, a[k] * (5.0 - a[k]) / (25.0 * 6.0),
                                        "dirichlet draws");
}

TEST_CASE("simplex and unit_vector: constrain, unconstrain, errors", "[transforms][simplex]") {
  const std::vector<double> alpha{1.0, 2.0, 3.0, 4.0};
  auto m = model([&] {
    auto p = dirichlet<"p">(data(alpha));
    auto v = flat<"v">(unit_sphere(), shape<3>);
    return joint(p, v);
  });
  REQUIRE(m.dim() == 7);
  CHECK(m.parameter_names()[3] == "p[4]");
  const std::vector<double> theta{0.3, -1.0, 2.0, 0.1, 0.5, -2.0, 1.0};
  const auto x = m.constrain(theta);
  CHECK(x[0] + x[1] + x[2] + x[3] == Approx(1.0).epsilon(1e-14));
  CHECK(x[4] * x[4] + x[5] * x[5] + x[6] * x[6] == Approx(1.0).epsilon(1e-14));
  // constrain(unconstrain(x)) = x (θ itself is not recovered: the auxiliary dimension is lost).
  const auto back = m.constrain(m.unconstrain(x));
  for (std::size_t k = 0; k < x.size(); ++k) CHECK(back[k] == Approx(x[k]).epsilon(1e-13));
  // The log density: Dirichlet at x plus Σ(u − eᵘ) (simplex) and −½|u|² (unit_vector).
  long double expected = dirichlet_lpdf({x[0], x[1], x[2], x[3]}, alpha);
  for (int k = 0; k < 4; ++k) expected += theta[k] - std::exp(theta[k]);
  for (int k = 4; k < 7; ++k) expected -= 0.5 * theta[k] * theta[k];
  CHECK(m.log_prob(theta) == Approx(static_cast<double>(expected)).epsilon(1e-13));
  tyche_test::check_gradient_at(m.program(), theta, "dirichlet + unit_vector model");

  CHECK_THROWS_WITH(m.unconstrain(std::vector<double>{0.5, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0}),
                    Contains("p[3] = 0 must be > 0 (simplex)"));
  CHECK_THROWS_WITH(m.unconstrain(std::vector<double>{0.5, 0.4, 0.05, 0.01, 1.0, 0.0, 0.0}),
                    Contains("whose sum is 0.96, not 1 (simplex)"));
  CHECK_THROWS_WITH(m.unconstrain(std::vector<double>{0.25, 0.25, 0.25, 0.25, 1.0, 1.0, 0.0}),
                    Contains("v[3] = 0 ends a vector whose squared norm is 2"));

  std::mt19937_64 rng(4);
  for (int r = 0; r < 50; ++r) {
    auto prior_only = model([&] { return joint(dirichlet<"p">(data(alpha))); });
    const auto v = prior_only.sample_prior(rng);
    CHECK(v[0] + v[1] + v[2] + v[3] == Approx(1.0).epsilon(1e-12));
  }
}

TEST_CASE("simplex and unit_vector: NUTS samples the right laws", "[transforms][simplex][nuts]") {
  // A Dirichlet(1, 2, 3, 4) prior: mean αₖ/10, variance αₖ(10 − αₖ)/(100·11).
  const std::vector<double> alpha{1.0, 2.0, 3.0, 4.0};
  auto prior = model([&] { return joint(dirichlet<"p">(data(alpha))); });
  std::vector<double> mean, var;
  for (double a : alpha) {
    mean.push_back(a / 10);
    var.push_back(a * (10 - a) / 1100);
  }
  check_nuts_moments(prior, mean, var, 31, "dirichlet prior");

  // Conjugacy: symmetric Dirichlet(1) prior and 12 categorical observations with counts
  // (2, 3, 7): the posterior is Dirichlet(3, 4, 8).
  const std::vector<double> y{1, 1, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3};
  auto posterior = model([&] {
    auto p = dirichlet<"p">(1.0, shape<3>);
    return joint(p, categorical(p).observe(data(y)));
  });
  check_nuts_moments(posterior, {3.0 / 15, 4.0 / 15, 8.0 / 15},
                     {3.0 * 12 / (225 * 16), 4.0 * 11 / (225 * 16), 8.0 * 7 / (225 * 16)}, 32,
                     "dirichlet-categorical posterior");

  // The uniform law on the sphere in ℝ³: each coordinate has mean 0 and variance 1/3.
  auto sphere = model([] { return joint(flat<"v">(unit_sphere(), shape<3>)); });
  check_nuts_moments(sphere, {0, 0, 0}, {1.0 / 3, 1.0 / 3, 1.0 / 3}, 33, "unit sphere");
}
