// Reductions and matrix × vector (tyche/operations/functions.hpp): gradients through the shared
// property check, numerical stability, and size errors.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "support/property.hpp"

using namespace tyche;
using Catch::Matchers::Contains;

TEST_CASE("operations: sum, dot and log_sum_exp pass the property check", "[core][operations]") {
  vector_param<"u", 4> u;
  vector_param<"w", 4> w;
  param<"s"> s;
  const auto pts = tyche_test::random_points(30, 9, -2, 2, 99);
  const auto f_dot = compile(dot(u, w) + s, u, w, s);
  const auto f_lse = compile(log_sum_exp(u * s + w), u, w, s);
  const auto f_lse_unfused = compile(exp(log_sum_exp(u - w) * lit<1, 4>) * s, u, w, s);
  const auto f_nested = compile(sum(u * sum(w * s)), u, w, s);  // a sum inside a loop body
  for (const auto& p : pts) {
    tyche_test::check_gradient_at(f_dot, p, "dot(u, w) + s");
    tyche_test::check_gradient_at(f_lse, p, "log_sum_exp(u * s + w)");
    tyche_test::check_gradient_at(f_lse_unfused, p, "exp(log_sum_exp(u - w) / 4) * s");
    tyche_test::check_gradient_at(f_nested, p, "sum(u * sum(w * s))");
  }
  tyche_test::check_lanes(f_lse, pts, "log_sum_exp(u * s + w)");
}

TEST_CASE("operations: log_sum_exp does not overflow", "[core][operations]") {
  vector_param<"v", 3> v;
  const auto f = compile(log_sum_exp(v));
  CHECK(f.value(std::vector<double>{1000, 1000, -5}) == Approx(1000 + std::log(2.0)));
  CHECK(f.value(std::vector<double>{-1000, -1001, -1002}) ==
        Approx(-1000 + std::log(1 + std::exp(-1.0) + std::exp(-2.0))));
}

TEST_CASE("operations: matvec passes the property check and matches a plain loop",
          "[core][operations]") {
  constexpr std::size_t rows = 7, cols = 5;
  std::mt19937_64 rng(5);
  std::normal_distribution<double> n01;
  std::vector<double> x(rows * cols), y(rows);
  for (auto& v : x) v = n01(rng);
  for (auto& v : y) v = rng() % 2;
  vector_param<"beta", cols> beta;
  param<"alpha"> alpha;
  auto eta = alpha + matvec(matrix(x.data(), rows, cols), beta);
  const auto f = compile(sum(data(y) * eta - log1p_exp(eta)) - lit<1, 2> * square(alpha), beta,
                         alpha);
  // y·eta leaves the loop as alpha·Σy + (Xᵀy)·beta (compile/reduce_sum.hpp): eta's one other use
  // is streamed, no buffer.
  CHECK(f.workspace_size() == 0);
  const auto pts = tyche_test::random_points(20, cols + 1, -1, 1, 3);
  for (const auto& p : pts) tyche_test::check_gradient_at(f, p, "logistic regression");
  tyche_test::check_lanes(f, pts, "logistic regression");
  // Against a plain loop.
  const auto& p = pts[0];
  double expected = -0.5 * p[cols] * p[cols];
  for (std::size_t r = 0; r < rows; ++r) {
    double e = p[cols];
    for (std::size_t c = 0; c < cols; ++c) e += x[r * cols + c] * p[c];
    expected += y[r] * e - std::log1p(std::exp(e));
  }
  std::vector<double> ws(f.workspace_size());
  CHECK(f.value(p, ws) == Approx(expected).epsilon(1e-13));
}

TEST_CASE("operations: mismatched sizes are refused with both sizes named",
          "[core][operations]") {
  const std::vector<double> a(3), b(4), flat(12);
  vector_param<"v"> v(5);
  CHECK_THROWS_WITH(data(a) + data(b), Contains("add") && Contains("3") && Contains("4"));
  CHECK_THROWS_WITH(data(a) * v, Contains("multiply") && Contains("3") && Contains("5"));
  CHECK_THROWS_WITH(matvec(matrix(flat.data(), 3, 4), v),
                    Contains("4 columns") && Contains("size 5"));
}

TEST_CASE("operations: at(v, k) picks an element, through elementwise operations",
          "[core][operations]") {
  vector_param<"v", 3> v;
  param<"m"> m;
  const auto f = compile(square(at(v, 0)) * at(v, 2) + exp(at(exp(v) * m, 1)) + sum(v * at(v, 1)), v, m);
  for (const auto& p : tyche_test::random_points(20, 4, -1, 1, 3)) tyche_test::check_gradient_at(f, p, "at");
  const std::vector<double> x{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  CHECK(f.value(std::vector<double>{1, 2, 3, 0.5}) ==
        Approx(1 * 3 + std::exp(std::exp(2.0) * 0.5) + 2 * (1 + 2 + 3)));
  const std::vector<double> d{4.0, 5.0};
  CHECK(compile(at(data(d), 1) * m).value(std::vector<double>{2.0}) == 10.0);
  CHECK_THROWS_WITH(at(v, 3), Contains("index 3") && Contains("size 3"));
}
