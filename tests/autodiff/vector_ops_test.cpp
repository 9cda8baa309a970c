// Non-elementwise vectors (their ops in tyche/autodiff/vector_ops.hpp, the functions that make
// them in tyche/operations/vectors.hpp): ordered maps, cumulative sums, linear recurrences and
// gathers — values against loops written here, gradients through the shared property check,
// SIMD lanes, element access, sharing, folding, and index/size errors.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "support/property.hpp"

using namespace tyche;
using Catch::Matchers::Contains;

namespace {
// The ordered map written plainly.
std::vector<double> ordered_values(const std::vector<double>& u, bool positive) {
  std::vector<double> x(u.size());
  for (std::size_t k = 0; k < u.size(); ++k)
    x[k] = k == 0 ? (positive ? std::exp(u[0]) : u[0]) : x[k - 1] + std::exp(u[k]);
  return x;
}
}  // namespace

TEST_CASE("vector_ops: values against plain loops", "[core][vector_ops]") {
  vector_param<"u", 5> u;
  param<"b"> b;
  param<"s"> s;
  const std::vector<double> w{0.3, -1.2, 0.7, 2.0, -0.4};
  const std::vector<double> theta{0.3, -1.2, 0.7, 2.0, -0.4, 0.6, 1.5};  // u, b, s
  const auto x = ordered_values(w, false);
  const auto xp = ordered_values(w, true);

  const std::vector<double> weights{1.0, -2.0, 0.5, 3.0, 0.25};
  const auto wd = data(weights);
  const auto f_ord = compile(sum(wd * make_vector_op(ops::ordered_map<false>{}, 5, u)), u);
  const auto f_pos = compile(sum(wd * make_vector_op(ops::ordered_map<true>{}, 5, u)), u);
  const auto f_cum = compile(sum(wd * cumulative_sum(u)), u);
  const auto f_rec = compile(sum(wd * linear_recurrence(u, b, s)), u, b, s);
  double e_ord = 0, e_pos = 0, e_cum = 0, e_rec = 0, c = 0, r = theta[6];
  for (std::size_t k = 0; k < 5; ++k) {
    e_ord += weights[k] * x[k];
    e_pos += weights[k] * xp[k];
    c += w[k];
    e_cum += weights[k] * c;
    r = w[k] + theta[5] * r;
    e_rec += weights[k] * r;
  }
  CHECK(f_ord.value(w) == Approx(e_ord).epsilon(1e-14));
  CHECK(f_pos.value(w) == Approx(e_pos).epsilon(1e-14));
  CHECK(f_cum.value(w) == Approx(e_cum).epsilon(1e-14));
  CHECK(f_rec.value(theta) == Approx(e_rec).epsilon(1e-14));

  const std::vector<int> idx{4, 0, 0, 2, 4, 1, 3};
  const auto f_gather = compile(sum(square(gather(u, idx)) * s), u, s);
  double e_gather = 0;
  for (int i : idx) e_gather += w[i] * w[i] * theta[6];
  CHECK(f_gather.value(std::vector<double>{0.3, -1.2, 0.7, 2.0, -0.4, theta[6]}) ==
        Approx(e_gather).epsilon(1e-14));
  // A gather of something that is not elementwise over v goes through gather_map.
  const auto f_gather_op = compile(sum(gather(cumulative_sum(u), idx)), u);
  double e_gather_op = 0;
  for (int i : idx) {
    double cs = 0;
    for (int j = 0; j <= i; ++j) cs += w[j];
    e_gather_op += cs;
  }
  CHECK(f_gather_op.value(w) == Approx(e_gather_op).epsilon(1e-14));
}

TEST_CASE("vector_ops: gradients pass the property check", "[core][vector_ops]") {
  vector_param<"u", 4> u;
  vector_param<"v", 4> v;
  param<"b"> b;
  param<"s"> s;
  const std::vector<int> idx{3, 1, 1, 0, 2, 3};
  const std::vector<double> y{0.5, -1.0, 2.0, 0.1};
  const auto yd = data(y);
  // Operands that are elementwise expressions, scalars, vectors; results used by fused and
  // non-fused sums, by log_sum_exp, elementwise twice, and element by element.
  const auto ord = make_vector_op(ops::ordered_map<false>{}, 4, u * s + v);
  const auto pos = make_vector_op(ops::ordered_map<true>{}, 4, u);
  const auto rec_scalar = linear_recurrence(exp(u) + v, tanh(b), s);
  const auto rec_vector = linear_recurrence(u, tanh(v), s * b);
  const auto f1 = compile(sum(square(yd - ord)) + log_sum_exp(pos * b), u, v, b, s);
  const auto f2 = compile(sum(rec_scalar * yd) * s + sum(log1p_exp(rec_vector)), u, v, b, s);
  const auto f3 = compile(sum(cumulative_sum(v * u) * yd) + at(ord, 2) * at(rec_scalar, 3), u, v, b, s);
  const auto f4 = compile(sum(gather(v, idx) * s + square(gather(exp(u) * b, idx))) +
                              log_sum_exp(gather(cumulative_sum(u), idx)),
                          u, v, b, s);
  const auto f5 = compile(exp(sum(ord * lit<1, 10>)) * s + b, u, v, b, s);  // adjoint known in reverse only
  const auto pts = tyche_test::random_points(25, 10, -1.5, 1.5, 2024);
  for (const auto& p : pts) {
    tyche_test::check_gradient_at(f1, p, "ordered, positive_ordered");
    tyche_test::check_gradient_at(f2, p, "linear_recurrence, scalar and vector b");
    tyche_test::check_gradient_at(f3, p, "cumulative_sum, elements of vector_ops");
    tyche_test::check_gradient_at(f4, p, "gather: a parameter, an elementwise expression, a vector_op");
    tyche_test::check_gradient_at(f5, p, "exp(sum(ordered))");
  }
  tyche_test::check_lanes(f1, pts, "ordered (lanes)");
  tyche_test::check_lanes(f2, pts, "linear_recurrence (lanes)");
  tyche_test::check_lanes(f4, pts, "gather (lanes)");
  tyche_test::check_float(f2, pts[0], "linear_recurrence (float)");
}

TEST_CASE("vector_ops: a node used twice is computed once and shares its buffer", "[core][vector_ops]") {
  vector_param<"u", 3> u;
  const auto c = cumulative_sum(u);
  const auto f = compile(sum(c) + sum(square(c)), u);
  // One buffer: result (3 values, 3 adjoints) and the operand (3 and 3).
  CHECK(f.workspace_size() == 12);
  const auto g = compile(sum(c) + sum(square(cumulative_sum(u * lit<2>))), u);
  CHECK(g.workspace_size() == 24);
  tyche_test::check_gradient_at(f, {0.1, 0.2, -0.3}, "shared cumulative_sum");
}

TEST_CASE("vector_ops: data-only operands fold at compile", "[core][vector_ops]") {
  vector_param<"u", 3> u;
  const std::vector<double> y{1.0, 2.0, 4.0};
  const std::vector<int> idx{2, 2, 0};
  // cumulative_sum(y) and gather(y, idx) depend on data only: compile() computes them once.
  const auto f = compile(sum(u * cumulative_sum(data(y))) + sum(gather(data(y), idx)), u);
  CHECK(f.workspace_size() == 0);
  CHECK(f.value(std::vector<double>{1.0, 1.0, 1.0}) == Approx(1 + 3 + 7 + 4 + 4 + 1));
  CHECK(explain(f).find("cumulative_sum") == std::string::npos);
}

TEST_CASE("vector_ops: explain shows the ops", "[core][vector_ops]") {
  vector_param<"u", 3> u;
  param<"b"> b;
  const std::vector<int> idx{0, 2};
  const auto f = compile(sum(linear_recurrence(u, b, lit<0>)) + sum(gather(u, idx)), u, b);
  const std::string e = explain(f);
  CHECK_THAT(e, Contains("linear_recurrence[3](u[3], b, 0)"));
  CHECK_THAT(e, Contains("u[idx[2]]"));
}

TEST_CASE("vector_ops: bad indices and sizes are refused with the index and value", "[core][vector_ops]") {
  vector_param<"u", 3> u;
  const std::vector<int> bad{0, 3};
  CHECK_THROWS_WITH(gather(u, bad), Contains("tyche::gather(u, idx): idx[1] = 3 is outside 0 … 2 (u has 3 values") &&
                                        Contains("count from 0"));
  const std::vector<int> negative{-1};
  CHECK_THROWS_WITH(gather(u, negative, "group"), Contains("gather(u, group): group[0] = -1"));
  CHECK_THROWS_WITH(gather(exp(u), bad, "group"), Contains("gather(v, group): group[1] = 3 is outside 0 … 2 (v has 3"));
  // Named indices appear in the size messages of what reads them.
  const std::vector<int> two{0, 2};
  static const std::vector<double> x3{1.0, 2.0, 3.0};
  CHECK_THROWS_WITH(gather(u, two, "group") + data(x3, "x"),
                    Contains("sizes 2 and 3 (the first: data 'group' with u; the second: data 'x')"));
  CHECK_THROWS_WITH(gather(square(u + 1.0), two, "grp") * data(x3, "x"), Contains("data 'grp' with u"));
  vector_param<"v"> v(4);
  CHECK_THROWS_WITH(linear_recurrence(u, v, lit<0>), Contains("'b' has size 4 but 'a' has size 3"));
}

TEST_CASE("vector_ops: cholesky_multiply against a plain Cholesky, and its gradient",
          "[core][vector_ops]") {
  // C = a² exp(−d²/(2 r²)) + 0.3 I over 4 points, z a vector: values against L z computed with
  // detail::cholesky_lower; gradients with respect to a, r (through every entry of C) and z.
  constexpr std::size_t K = 4;
  const double x[K] = {-1.0, 0.2, 0.9, 2.5};
  std::vector<double> neg_half_d2(K * K), jitter(K * K, 0.0);
  for (std::size_t i = 0; i < K; ++i) {
    for (std::size_t j = 0; j < K; ++j) neg_half_d2[i * K + j] = -0.5 * (x[i] - x[j]) * (x[i] - x[j]);
    jitter[i * K + i] = 0.3;
  }
  param<"a"> a;
  param<"r"> r;
  vector_param<"z", K> z;
  const std::vector<double> w{1.0, -0.5, 2.0, 0.25};
  const auto c = square(a) * exp(data(neg_half_d2) / square(r)) + data(jitter);
  const auto f = compile(sum(data(w) * cholesky_multiply(c, z)), a, r, z);
  const auto g = compile(sum(exp(cholesky_multiply(c, z)) * data(w)) + at(cholesky_multiply(c, z), 2) * a, a, r, z);
  for (const auto& p : tyche_test::random_points(20, 2 + K, 0.5, 2.0, 55)) {
    std::vector<double> cm(K * K);
    for (std::size_t i = 0; i < K * K; ++i)
      cm[i] = p[0] * p[0] * std::exp(neg_half_d2[i] / (p[1] * p[1])) + jitter[i];
    const auto l = detail::cholesky_lower(cm.data(), K, "test");
    double expected = 0;
    for (std::size_t i = 0; i < K; ++i) {
      double fi = 0;
      for (std::size_t j = 0; j <= i; ++j) fi += l[i * K + j] * p[2 + j];
      expected += w[i] * fi;
    }
    CHECK(f.value(p) == Approx(expected).epsilon(1e-13));
    tyche_test::check_gradient_at(f, p, "cholesky_multiply");
    tyche_test::check_gradient_at(g, p, "cholesky_multiply used twice, element access");
  }
  tyche_test::check_lanes(f, tyche_test::random_points(8, 2 + K, 0.5, 2.0, 56), "cholesky_multiply (lanes)");
  CHECK_THROWS_WITH(cholesky_multiply(c, vector_param<"y", 3>{}), Contains("'c' has 16 entries but 'z' has size 3"));
}
