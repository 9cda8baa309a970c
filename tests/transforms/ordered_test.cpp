// The ordered and positive_ordered transforms (tyche/transforms/ordered.hpp) and the random
// variables that use them (tyche/distributions/constrained.hpp): values land in the support,
// the log-Jacobian equals the log-determinant of a finite-difference Jacobian, unconstrain
// inverts constrain and names the offending element, prior draws are sorted, and a model's
// log density equals one written by hand.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "support/property.hpp"

using namespace tyche;
using Catch::Matchers::Contains;

namespace {
/// log |det A| of a small dense matrix by Gaussian elimination with partial pivoting.
double log_abs_det(std::vector<std::vector<double>> a) {
  const std::size_t n = a.size();
  double log_det = 0;
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t pivot = c;
    for (std::size_t r = c + 1; r < n; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[pivot][c])) pivot = r;
    std::swap(a[c], a[pivot]);
    log_det += std::log(std::fabs(a[c][c]));
    for (std::size_t r = c + 1; r < n; ++r) {
      const double f = a[r][c] / a[c][c];
      for (std::size_t k = c; k < n; ++k) a[r][k] -= f * a[c][k];
    }
  }
  return log_det;
}

template <class Tr>
void check_increasing(const Tr& tr, bool positive, const char* what) {
  constexpr std::size_t n = 4;
  vector_param<"u", n> u;
  const auto jac = compile(tr.log_jacobian(u), u);
  for (const auto& p : tyche_test::random_points(30, n, -3, 3, 77)) {
    INFO(what);
    // Component r of x is the scalar program sum(e_r * x); the Jacobian dx/du row by row by
    // Richardson-extrapolated central differences.
    std::vector<double> x(n);
    std::vector<std::vector<double>> j(n, std::vector<double>(n));
    for (std::size_t r = 0; r < n; ++r) {
      std::vector<double> pick(n, 0.0);
      pick[r] = 1.0;
      const auto xr = compile(sum(data(pick) * tr.constrain(u)), u);
      std::vector<double> ws(xr.workspace_size());
      x[r] = xr.value(std::span<const double>(p), std::span<double>(ws));
      for (std::size_t c = 0; c < n; ++c) j[r][c] = tyche_test::richardson_derivative(xr, p, c, ws);
    }
    for (std::size_t k = 0; k < n; ++k) {
      if (k > 0) CHECK(x[k] > x[k - 1]);
      if (positive) CHECK(x[k] > 0);
    }
    CHECK(jac.value(p) == Approx(log_abs_det(j)).epsilon(1e-8).margin(1e-8));
    // The inverse.
    std::vector<double> back(n);
    std::size_t bad = 0;
    CHECK(Tr::unconstrain_vector(x.data(), back.data(), n, bad).empty());
    for (std::size_t k = 0; k < n; ++k) CHECK(back[k] == Approx(p[k]).epsilon(1e-10).margin(1e-10));
  }
}
}  // namespace

TEST_CASE("ordered transforms: support, log-Jacobian, inverse", "[transforms][ordered]") {
  check_increasing(transforms::ordered{}, false, "ordered");
  check_increasing(transforms::positive_ordered{}, true, "positive_ordered");
}

TEST_CASE("ordered random variables: log density, constrain/unconstrain, errors, prior draws",
          "[transforms][ordered]") {
  const std::vector<double> y{-1.0, 0.5, 2.5};
  auto m = model([&] {
    auto mu = ordered<"mu">(normal(0.0, 2.0), shape<3>);
    auto c = positive_ordered<"c">(exponential(1.5), shape<2>);
    return joint(mu, c, normal(mu, at(c, 1)).observe(data(y)));
  });
  REQUIRE(m.dim() == 5);
  CHECK(m.parameter_names() == std::vector<std::string>{"mu[1]", "mu[2]", "mu[3]", "c[1]", "c[2]"});
  const std::vector<double> theta{0.2, -0.5, 0.3, -0.7, 0.4};
  const std::vector<double> x = m.constrain(theta);
  const double mu1 = 0.2, mu2 = mu1 + std::exp(-0.5), mu3 = mu2 + std::exp(0.3);
  const double c1 = std::exp(-0.7), c2 = c1 + std::exp(0.4);
  CHECK(x[0] == Approx(mu1));
  CHECK(x[1] == Approx(mu2));
  CHECK(x[2] == Approx(mu3));
  CHECK(x[3] == Approx(c1));
  CHECK(x[4] == Approx(c2));
  auto normal_lpdf = [](double v, double m_, double s) {
    return -0.5 * ((v - m_) / s) * ((v - m_) / s) - std::log(s) - 0.5 * std::log(2 * M_PI);
  };
  double expected = 0;
  for (double v : {mu1, mu2, mu3}) expected += normal_lpdf(v, 0.0, 2.0);
  for (double v : {c1, c2}) expected += std::log(1.5) - 1.5 * v;
  const double mus[3] = {mu1, mu2, mu3};
  for (std::size_t i = 0; i < 3; ++i) expected += normal_lpdf(y[i], mus[i], c2);
  CHECK(m.log_prob(theta, false) == Approx(expected).epsilon(1e-13));
  const double log_jacobian = -0.5 + 0.3 + -0.7 + 0.4;
  CHECK(m.log_prob(theta) == Approx(expected + log_jacobian).epsilon(1e-13));
  tyche_test::check_gradient_at(m.program(), theta, "ordered model");

  const std::vector<double> back = m.unconstrain(x);
  for (std::size_t k = 0; k < 5; ++k) CHECK(back[k] == Approx(theta[k]).epsilon(1e-12).margin(1e-12));
  CHECK_THROWS_WITH(m.unconstrain(std::vector<double>{0.0, 1.0, 1.0, 0.5, 1.0}),
                    Contains("mu[3] = 1 must exceed the element before it"));
  CHECK_THROWS_WITH(m.unconstrain(std::vector<double>{0.0, 1.0, 2.0, -0.5, 1.0}),
                    Contains("c[1] = -0.5 must be > 0 (positive_ordered)"));

  std::mt19937_64 rng(5);
  for (int r = 0; r < 200; ++r) {
    const auto v = m.sample_prior(rng);
    CHECK(v[0] < v[1]);
    CHECK(v[1] < v[2]);
    CHECK(0 < v[3]);
    CHECK(v[3] < v[4]);
  }
}

TEST_CASE("ordered random variables: prior draws are the order statistics", "[transforms][ordered]") {
  // mu ~ normal(0, 1) on ordered pairs (no data): the prior is the law of the sorted pair of
  // two independent standard normals, whose mean is ∓1/√π. 20000 draws: standard error of each
  // mean below 0.0061; tolerance 4 standard errors.
  auto m = model([] { return joint(ordered<"mu">(std_normal(), shape<2>)); });
  std::mt19937_64 rng(11);
  double s0 = 0, s1 = 0;
  const int n = 20000;
  for (int r = 0; r < n; ++r) {
    const auto v = m.sample_prior(rng);
    s0 += v[0];
    s1 += v[1];
  }
  const double expected = 1 / std::sqrt(M_PI);
  const double se = std::sqrt(1 - 1 / M_PI) / std::sqrt(double(n));
  CHECK(std::fabs(s0 / n + expected) < 4 * se);
  CHECK(std::fabs(s1 / n - expected) < 4 * se);
}

TEST_CASE("ordered random variables: do_ on a variable their prior depends on", "[transforms][ordered]") {
  // do_<"s"> rebuilds mu's constrained distribution with s replaced (with_arguments): the
  // density of mu is then normal(0, 2) on increasing pairs, plus the log-Jacobian.
  auto m = model([] {
    auto s = half_normal<"s">(1.0);
    auto mu = ordered<"mu">(normal(0.0, s), shape<2>);
    return joint(s, mu);
  });
  auto fixed = do_<"s">(m, 2.0);
  REQUIRE(fixed.dim() == 2);
  const std::vector<double> theta{0.1, 0.2};
  const double mu1 = 0.1, mu2 = mu1 + std::exp(0.2);
  auto normal_lpdf = [](double v) { return -0.5 * (v / 2) * (v / 2) - std::log(2.0) - 0.5 * std::log(2 * M_PI); };
  CHECK(fixed.log_prob(theta) == Approx(normal_lpdf(mu1) + normal_lpdf(mu2) + 0.2).epsilon(1e-13));
}
