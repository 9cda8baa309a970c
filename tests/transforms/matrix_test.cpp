// The matrix transforms (tyche/transforms/matrix.hpp): cholesky_factor_corr, cholesky_factor_cov,
// cov_matrix, corr_matrix. For K = 2, 3, 4: the value is a valid matrix of its kind, the
// log-Jacobian equals the log-determinant of a Richardson finite-difference Jacobian of the map
// from the unconstrained values to the free entries, unconstrain inverts constrain, and the value
// and log-Jacobian pass the gradient property check (finite differences, SIMD lanes, float).
// Then the model layer: names L[i,j], constrain/unconstrain with K² values per matrix, the
// error texts, and flat priors' log densities.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/property.hpp"

using namespace tyche;
using Catch::Matchers::Contains;

namespace {
/// log |det A| by Gaussian elimination with partial pivoting.
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

/// True when the symmetric matrix x (k × k) is positive definite (plain Cholesky).
bool positive_definite(const std::vector<double>& x, std::size_t k) {
  std::vector<double> l(k * k, 0.0);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      double s = x[i * k + j];
      for (std::size_t p = 0; p < j; ++p) s -= l[i * k + p] * l[j * k + p];
      if (i == j) {
        if (!(s > 0)) return false;
        l[i * k + i] = std::sqrt(s);
      } else {
        l[i * k + j] = s / l[j * k + j];
      }
    }
  return true;
}

enum class kind { cholesky_corr, cholesky_cov, cov, corr };

/// The value x (k² entries) is a matrix of the kind.
void check_valid(const std::vector<double>& x, std::size_t k, kind what) {
  for (double v : x) REQUIRE(std::isfinite(v));
  if (what == kind::cholesky_corr || what == kind::cholesky_cov) {
    for (std::size_t i = 0; i < k; ++i) {
      CHECK(x[i * k + i] > 0);
      for (std::size_t j = i + 1; j < k; ++j) CHECK(x[i * k + j] == 0.0);
      if (what == kind::cholesky_corr) {
        double norm2 = 0;
        for (std::size_t j = 0; j <= i; ++j) norm2 += x[i * k + j] * x[i * k + j];
        CHECK(norm2 == Approx(1.0).epsilon(1e-13));
      }
    }
  } else {
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) CHECK(x[i * k + j] == Approx(x[j * k + i]).epsilon(1e-14));
    CHECK(positive_definite(x, k));
    if (what == kind::corr)
      for (std::size_t i = 0; i < k; ++i) CHECK(x[i * k + i] == Approx(1.0).epsilon(1e-13));
  }
}

/// The free entries of a k × k value: the strictly lower triangle for the correlation kinds,
/// the lower triangle for the others, row by row.
std::vector<std::size_t> free_entries(std::size_t k, kind what) {
  const bool strict = what == kind::cholesky_corr || what == kind::corr;
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < (strict ? i : i + 1); ++j) out.push_back(i * k + j);
  return out;
}

template <class Tr>
void check_transform(const Tr& tr, kind what, const char* label) {
  const std::size_t k = tr.order();
  const std::size_t n = tr.parameter_size();
  INFO(label << ", K = " << k);
  vector_param<"u"> u(n);
  const auto jac = compile(tr.log_jacobian(u), u);
  // Entry e of the value as the scalar program sum(pick_e * value).
  std::vector<std::vector<double>> picks(k * k, std::vector<double>(k * k, 0.0));
  for (std::size_t e = 0; e < k * k; ++e) picks[e][e] = 1.0;
  using P = decltype(compile(sum(data(picks[0]) * tr.constrain(u)), u));
  std::vector<P> entry;
  for (std::size_t e = 0; e < k * k; ++e) entry.push_back(compile(sum(data(picks[e]) * tr.constrain(u)), u));
  const auto free = free_entries(k, what);
  REQUIRE(free.size() == n);
  std::vector<double> ws(entry[0].workspace_size() + 64);
  for (const auto& p : tyche_test::random_points(12, n, -2, 2, 31 + unsigned(k))) {
    std::vector<double> x(k * k);
    for (std::size_t e = 0; e < k * k; ++e) x[e] = entry[e].value(std::span<const double>(p), std::span<double>(ws));
    check_valid(x, k, what);
    std::vector<std::vector<double>> j(n, std::vector<double>(n));
    for (std::size_t r = 0; r < n; ++r)
      for (std::size_t c = 0; c < n; ++c) j[r][c] = tyche_test::richardson_derivative(entry[free[r]], p, c, ws);
    CHECK(jac.value(p) == Approx(log_abs_det(j)).epsilon(1e-8).margin(1e-8));
    std::vector<double> back(n, 0.0);
    std::size_t bad = 0;
    CHECK(tr.unconstrain_matrix(x.data(), back.data(), bad).empty());
    for (std::size_t c = 0; c < n; ++c) CHECK(back[c] == Approx(p[c]).epsilon(1e-9).margin(1e-9));
  }
  // Gradients of a weighted sum of the value plus the log-Jacobian.
  std::vector<double> w = tyche_test::random_points(1, k * k, -1, 1, 5)[0];
  const auto f = compile(sum(data(w) * tr.constrain(u)) + tr.log_jacobian(u), u);
  const auto pts = tyche_test::random_points(8, n, -2, 2, 41 + unsigned(k));
  for (const auto& p : pts) tyche_test::check_gradient_at(f, p, label);
  tyche_test::check_lanes(f, pts, label);
  tyche_test::check_float(f, pts[0], label);
}
}  // namespace

TEST_CASE("matrix transforms: valid values, log-Jacobian, inverse, gradients", "[transforms][matrix]") {
  for (std::size_t k : {2, 3, 4}) {
    check_transform(transforms::cholesky_factor_corr{k}, kind::cholesky_corr, "cholesky_factor_corr");
    check_transform(transforms::cholesky_factor_cov{k}, kind::cholesky_cov, "cholesky_factor_cov");
    check_transform(transforms::cov_matrix{k}, kind::cov, "cov_matrix");
    check_transform(transforms::corr_matrix{k}, kind::corr, "corr_matrix");
  }
  check_transform(transforms::cholesky_factor_cov{1}, kind::cholesky_cov, "cholesky_factor_cov");
  check_transform(transforms::cov_matrix{1}, kind::cov, "cov_matrix");
}

TEST_CASE("matrix transforms: far from the origin the rows keep norm 1 and the log-Jacobian is finite",
          "[transforms][matrix]") {
  // tanh(±30) is ±1 to 13 digits: the factor stays valid; sech(800) underflows to 0, which
  // makes a diagonal entry 0 but keeps the rows' norm 1. The log-Jacobian stays finite (log sech²
  // is computed without cosh).
  const std::size_t k = 3;
  vector_param<"u", 3> u;
  const transforms::cholesky_factor_corr tr{k};
  const auto jac = compile(tr.log_jacobian(u), u);
  for (double big : {30.0, -30.0, 800.0}) {
    const std::vector<double> p{big, -big, 0.5};
    CHECK(std::isfinite(jac.value(p)));
    std::vector<std::vector<double>> picks(9, std::vector<double>(9, 0.0));
    std::vector<double> x(9);
    for (std::size_t e = 0; e < 9; ++e) {
      picks[e][e] = 1.0;
      x[e] = compile(sum(data(picks[e]) * tr.constrain(u)), u).value(p);
    }
    INFO("u = (" << big << ", " << -big << ", 0.5)");
    if (std::fabs(big) < 700) {
      check_valid(x, k, kind::cholesky_corr);
    } else {  // sech 800 underflows: a diagonal entry is 0, but the rows keep norm 1
      for (std::size_t i = 0; i < k; ++i) {
        double norm2 = 0;
        for (std::size_t j = 0; j < k; ++j) norm2 += x[i * k + j] * x[i * k + j];
        CHECK(norm2 == Approx(1.0).epsilon(1e-13));
        CHECK(x[i * k + i] >= 0);
      }
    }
  }
}

TEST_CASE("matrix variables in a model: names, constrain/unconstrain, log density, errors",
          "[transforms][matrix]") {
  auto m = model([] {
    auto mu = normal<"mu">(0.0, 1.0);
    auto l = flat<"L">(cholesky_factor_corr(3));
    auto c = flat<"C">(cholesky_factor_cov(2));
    auto s = flat<"S">(cov_matrix(2));
    auto r = flat<"R">(corr_matrix(3));
    return joint(mu, l, c, s, r);
  });
  REQUIRE(m.dim() == 1 + 3 + 3 + 3 + 3);
  REQUIRE(m.constrained_dim() == 1 + 9 + 4 + 4 + 9);
  const auto names = m.parameter_names();
  REQUIRE(names.size() == m.constrained_dim());
  CHECK(names[0] == "mu");
  CHECK(names[1] == "L[1,1]");
  CHECK(names[2] == "L[1,2]");
  CHECK(names[4] == "L[2,1]");
  CHECK(names[9] == "L[3,3]");
  CHECK(names[10] == "C[1,1]");
  CHECK(names[14] == "S[1,1]");
  CHECK(names[26] == "R[3,3]");
  CHECK(stan_csv_name(names[4]) == "L.2.1");

  const auto theta = tyche_test::random_points(1, m.dim(), -1.5, 1.5, 3)[0];
  const auto x = m.constrain(theta);
  REQUIRE(x.size() == m.constrained_dim());
  const auto back = m.unconstrain(x);
  REQUIRE(back.size() == m.dim());
  for (std::size_t i = 0; i < m.dim(); ++i) CHECK(back[i] == Approx(theta[i]).epsilon(1e-10).margin(1e-10));

  // Flat priors: without the Jacobian only mu's normal term; with it, the transforms' terms.
  const double mu_term = -0.5 * theta[0] * theta[0] - 0.5 * std::log(2 * M_PI);
  CHECK(m.log_prob(theta, false) == Approx(mu_term).epsilon(1e-13));
  vector_param<"u3", 3> u3;
  vector_param<"u3b", 3> u3b;
  const auto jl = compile(transforms::cholesky_factor_corr{3}.log_jacobian(u3), u3);
  const auto jc = compile(transforms::cholesky_factor_cov{2}.log_jacobian(u3), u3);
  const auto js = compile(transforms::cov_matrix{2}.log_jacobian(u3b), u3b);
  const auto jr = compile(transforms::corr_matrix{3}.log_jacobian(u3b), u3b);
  auto part = [&](std::size_t from) { return std::vector<double>(theta.begin() + long(from), theta.begin() + long(from) + 3); };
  const double jacobians = jl.value(part(1)) + jc.value(part(4)) + js.value(part(7)) + jr.value(part(10));
  CHECK(m.log_prob(theta) == Approx(mu_term + jacobians).epsilon(1e-13));
  tyche_test::check_gradient_at(m.program(), theta, "matrix model");

  auto with = [&](std::size_t at, double v) {
    auto y = x;
    y[at] = v;
    return y;
  };
  CHECK_THROWS_WITH(m.unconstrain(with(2, 0.1)), Contains("L[1,2] = 0.1 must be 0 (the matrix is lower triangular)"));
  CHECK_THROWS_WITH(m.unconstrain(with(5, 0.5)), Contains("L[2,2] = 0.5 ends row 2, whose squared norm is"));
  CHECK_THROWS_WITH(m.unconstrain(with(13, -1.0)), Contains("C[2,2] = -1 must be > 0"));
  CHECK_THROWS_WITH(m.unconstrain(with(16, x[16] + 0.25)), Contains("S[2,1] = "));
  CHECK_THROWS_WITH(m.unconstrain(with(16, x[16] + 0.25)), Contains("differs from the entry across the diagonal"));
  {
    auto y = x;  // S = [[1, 2], [2, 1]] is symmetric but not positive definite
    y[14] = 1.0, y[15] = 2.0, y[16] = 2.0, y[17] = 1.0;
    CHECK_THROWS_WITH(m.unconstrain(y), Contains("S[2,2] = 1 ends pivot 2 of the Cholesky factorisation"));
  }
  CHECK_THROWS_WITH(m.unconstrain(with(22, 0.9)), Contains("R[2,2] = 0.9 must be 1"));
  CHECK_THROWS_WITH(m.unconstrain(std::vector<double>(m.dim(), 0.0)), Contains("got 13 values, expected 27"));
  CHECK_THROWS_WITH(flat<"L">(cholesky_factor_corr(1)), Contains("cholesky_factor_corr(K): K = 1 must be at least 2"));
}
