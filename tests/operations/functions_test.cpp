// Reductions and matrix × vector (tyche/operations/functions.hpp): gradients through the shared
// property check, numerical stability, and size errors.
#include <tyche/tyche.hpp>

#include <boost/math/special_functions/beta.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <span>
#include <random>
#include <stdexcept>
#include <vector>

#include "support/property.hpp"
#include "support/reference_math.hpp"

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

TEST_CASE("operations: Stan's compositions (logit, log_diff_exp, lbeta, lchoose, log10, hypot, mean, sd, ...) and "
          "an element by [] "
          "against the same formulas in double, with gradients",
          "[core][operations]") {
  param<"a"> a;
  param<"b"> b;
  vector_param<"v", 4> v;
  // a ∈ (0.1, 0.9), b ∈ (1.2, 3): every function inside its domain; weights 1, 2, 3, … so that
  // no error hides behind another.
  // Three programs of about nine terms (one program of all of them compiled 2.5x longer: the
  // cost of a type grows faster than its size).
  const auto p1 = compile(logit(a) + 2 * log_diff_exp(b, a) + 3 * lbeta(a, b) + 4 * lchoose(b + 3.0, a) +
                              5 * log10(b) + 6 * log2(b) + 7 * exp2(a) + 8 * inv(b) + 9 * inv_sqrt(b),
                          a, b);
  const auto p2 = compile(10 * inv_square(b) + 11 * fabs(a - 0.5) + 12 * fdim(b, 2.0) + 13 * hypot(a, b) +
                              14 * lmultiply(a, b) + 15 * Phi_approx(a - b) + 16 * tgamma(b) + 17 * log_inv_logit(a) +
                              18 * log1m_inv_logit(b) + pi() * a + sqrt2() * b + log2() + log10(),
                          a, b);
  const auto p3 = compile(19 * mean(v) + 20 * sd(v) + 21 * variance(v) + 22 * dot_self(v) + 23 * squared_distance(v, a) +
                              24 * norm1(v) + 25 * norm2(v) + 26 * (v * a)[2],
                          a, v);
  // Stan's inc_beta, gamma_p / gamma_q, fma, int_step, log_inv_logit_diff, binary_log_loss
  // (inc_beta of three scalars is a scalar).
  const auto p4 = compile(27 * inc_beta(a, b, 0.3) + 28 * gamma_p(b, a) + 29 * gamma_q(b, a + 1.0) +
                              30 * fma(a, b, 2.0) + 31 * int_step(a - 0.5) + 32 * log_inv_logit_diff(b, a) +
                              33 * binary_log_loss(1.0, a) + 34 * binary_log_loss(0.0, a),
                          a, b);
  auto reference = [](const std::vector<double>& x) {
    const double av = x[0], bv = x[1];
    const double* w = &x[2];
    const double m = (w[0] + w[1] + w[2] + w[3]) / 4;
    double ss = 0, sq = 0, sd2 = 0, l1 = 0;
    for (int i = 0; i < 4; ++i) {
      ss += (w[i] - m) * (w[i] - m);
      sq += w[i] * w[i];
      sd2 += (w[i] - av) * (w[i] - av);
      l1 += std::fabs(w[i]);
    }
    const double var = ss / 3;
    const double pa = 1 / (1 + std::exp(-av)), pb = 1 / (1 + std::exp(-bv));
    const double z = av - bv;
    const double r1 = std::log(av / (1 - av)) + 2 * std::log(std::exp(bv) - std::exp(av)) +
                      3 * (std::lgamma(av) + std::lgamma(bv) - std::lgamma(av + bv)) +
                      4 * (std::lgamma(bv + 4) - std::lgamma(av + 1) - std::lgamma(bv + 3 - av + 1)) +
                      5 * std::log10(bv) + 6 * std::log2(bv) + 7 * std::exp2(av) + 8 / bv + 9 / std::sqrt(bv);
    const double r2 = 10 / (bv * bv) + 11 * std::fabs(av - 0.5) + 12 * std::fdim(bv, 2.0) + 13 * std::hypot(av, bv) +
                      14 * av * std::log(bv) + 15 / (1 + std::exp(-(0.07056 * z * z * z + 1.5976 * z))) +
                      16 * std::tgamma(bv) + 17 * std::log(pa) + 18 * std::log1p(-pb) + std::numbers::pi * av +
                      std::sqrt(2.0) * bv + std::log(2.0) + std::log(10.0);
    const double r3 = 19 * m + 20 * std::sqrt(var) + 21 * var + 22 * sq + 23 * sd2 + 24 * l1 + 25 * std::sqrt(sq) +
                      26 * w[2] * av;
    const double r4 = 27 * boost::math::ibeta(av, bv, 0.3) + 28 * boost::math::gamma_p(bv, av) +
                      29 * boost::math::gamma_q(bv, av + 1) + 30 * (av * bv + 2) + 31 * (av > 0.5 ? 1.0 : 0.0) +
                      32 * std::log(pb - pa) - 33 * std::log(av) - 34 * std::log1p(-av);
    return std::vector<double>{r1, r2, r3, r4};
  };
  std::mt19937_64 rng(31);
  std::uniform_real_distribution<double> ua(0.1, 0.9), ub(1.2, 3.0), uv(-2, 2);
  std::vector<double> ws(std::max({p1.workspace_size(), p2.workspace_size(), p3.workspace_size(), p4.workspace_size()}));
  for (int k = 0; k < 20; ++k) {
    std::vector<double> x{ua(rng), ub(rng), uv(rng), uv(rng), uv(rng), uv(rng)};
    if (std::fabs(x[1] - 2.0) < 0.01) x[1] += 0.05;  // away from fdim's kink
    const std::vector<double> want = reference(x);
    const std::vector<double> ab{x[0], x[1]}, av{x[0], x[2], x[3], x[4], x[5]};
    CHECK(p1.value(std::span<const double>(ab), std::span<double>(ws)) == Approx(want[0]).epsilon(1e-12));
    CHECK(p2.value(std::span<const double>(ab), std::span<double>(ws)) == Approx(want[1]).epsilon(1e-12));
    CHECK(p3.value(std::span<const double>(av), std::span<double>(ws)) == Approx(want[2]).epsilon(1e-12));
    tyche_test::check_gradient_at(p1, ab, "Stan's compositions, first nine");
    tyche_test::check_gradient_at(p2, ab, "Stan's compositions, second nine");
    tyche_test::check_gradient_at(p3, av, "summaries of a vector and v[k]");
    CHECK(p4.value(std::span<const double>(ab), std::span<double>(ws)) == Approx(want[3]).epsilon(1e-12));
    if (std::fabs(x[0] - 0.5) > 0.01) tyche_test::check_gradient_at(p4, ab, "inc_beta, gamma_p, fma, ...");
  }
  // The summaries need enough elements; the sizes are named.
  const std::vector<double> one{1.0};
  CHECK_THROWS_WITH(variance(data(one)), Contains("variance(v): the vector has 1 elements; it needs at least 2"));
  // Supports follow the parts: inv(exp(a)) > 0, so its log compiles; tgamma > 0.
  STATIC_REQUIRE(support_of<decltype(inv(exp(a)))> == interval::positive());
  STATIC_REQUIRE(support_of<decltype(norm2(v))> == interval::nonnegative());
}

namespace {
using mat = std::vector<double>;
using tyche_test::product;
using tyche_test::transposed;
mat lower_symmetric(const mat& a, std::size_t k) {
  mat s(k * k);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j) s[i * k + j] = i >= j ? a[i * k + j] : a[j * k + i];
  return s;
}
}  // namespace

TEST_CASE("operations: quad_form with a matrix, quad_form_sym, trace_quad_form, trace_gen_quad_form, "
          "mdivide_right_spd, chol2inv, symmetrize_from_lower_tri, rows/columns_dot_self, distance against plain "
          "loops; gradients; errors",
          "[operations][linear_algebra]") {
  constexpr std::size_t K = 3, J = 2;
  vector_param<"A", K * K> a;  // its lower triangle is a symmetric A for the _sym and _spd forms
  vector_param<"B", K * J> b;
  vector_param<"D", J * J> d;
  const auto pts = tyche_test::random_points(8, K * K + K * J + J * J, -1.0, 1.0, 1201);
  // A symmetric positive-definite matrix from the lower triangle: M = S + 3 I for the _spd forms.
  static const std::vector<double> three_i{3.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 3.0};
  const auto spd = a + data(three_i);
  for (const auto& p : pts) {
    const mat av(p.begin(), p.begin() + 9), bv(p.begin() + 9, p.begin() + 15), dv(p.begin() + 15, p.end());
    const mat btab = product(product(transposed(bv, K, J), av, J, K, K), bv, J, K, J);
    const mat ab(p.begin(), p.begin() + 15);
    const mat qf = tyche_test::values_of(quad_form(a, b, J), J * J, ab, a, b);
    const mat as = lower_symmetric(av, K);
    const mat btasb = product(product(transposed(bv, K, J), as, J, K, K), bv, J, K, J);
    const mat qfs = tyche_test::values_of(quad_form_sym(symmetrize_from_lower_tri(a), b, J), J * J, ab, a, b);
    double tqf = 0, tgqf = 0;
    for (std::size_t e = 0; e < J * J; ++e) {
      CHECK(qf[e] == Approx(btab[e]).margin(1e-13));
      CHECK(qfs[e] == Approx(btasb[e]).margin(1e-13));
      tqf += e % (J + 1) == 0 ? btab[e] : 0.0;
    }
    for (std::size_t i = 0; i < J; ++i)
      for (std::size_t j = 0; j < J; ++j) tgqf += dv[i * J + j] * btab[j * J + i];
    CHECK(compile(trace_quad_form(a, b), a, b).value(ab) == Approx(tqf).margin(1e-13));
    CHECK(compile(trace_gen_quad_form(d, a, b), a, b, d).value(p) == Approx(tgqf).margin(1e-13));
    // mdivide_right_spd(Bᵀ, M) M = Bᵀ; chol2inv(L) L Lᵀ = I for L = cholesky_decompose(M).
    mat m = as;
    for (std::size_t i = 0; i < K; ++i) m[i * K + i] += 3.0;
    const mat x = tyche_test::values_of(mdivide_right_spd(transpose(b, K), spd), J * K, ab, a, b);
    const mat xm = product(x, m, J, K, K), bt = transposed(bv, K, J);
    for (std::size_t e = 0; e < J * K; ++e) CHECK(xm[e] == Approx(bt[e]).margin(1e-12));
    const mat inv = tyche_test::values_of(chol2inv(cholesky_decompose(spd)), K * K, av, a);
    const mat id = product(inv, m, K, K, K);
    for (std::size_t e = 0; e < K * K; ++e) CHECK(id[e] == Approx(e % (K + 1) == 0 ? 1.0 : 0.0).margin(1e-12));
    // Row and column sums of squares of B (3 × 2) and of A (3 × 3).
    const mat rs = tyche_test::values_of(rows_dot_self(b, J), K, bv, b), cs = tyche_test::values_of(columns_dot_self(b, J), J, bv, b);
    for (std::size_t i = 0; i < K; ++i) CHECK(rs[i] == Approx(bv[i * J] * bv[i * J] + bv[i * J + 1] * bv[i * J + 1]).margin(1e-14));
    for (std::size_t j = 0; j < J; ++j) {
      double acc = 0;
      for (std::size_t i = 0; i < K; ++i) acc += bv[i * J + j] * bv[i * J + j];
      CHECK(cs[j] == Approx(acc).margin(1e-14));
    }
    const mat ra = tyche_test::values_of(rows_dot_self(a), K, av, a), ca = tyche_test::values_of(columns_dot_self(a), K, av, a);
    for (std::size_t i = 0; i < K; ++i) {
      double r = 0, c = 0;
      for (std::size_t j = 0; j < K; ++j) r += av[i * K + j] * av[i * K + j], c += av[j * K + i] * av[j * K + i];
      CHECK(ra[i] == Approx(r).margin(1e-14));
      CHECK(ca[i] == Approx(c).margin(1e-14));
    }
    double dist = 0;
    for (std::size_t i = 0; i < K; ++i) dist += (av[i] - av[K + i]) * (av[i] - av[K + i]);
    CHECK(compile(distance(segment(a, 1, K), segment(a, K + 1, K)), a).value(av) == Approx(std::sqrt(dist)).epsilon(1e-14));
  }
  // Gradients of one scalar that uses every function.
  const mat w2{1.0, -2.0}, w4{0.5, -1.0, 1.5, 0.25}, w6{0.5, -1.0, 1.5, 0.25, 2.0, -0.5}, w9{0.5, -1.0, 1.5, 0.25, 2.0, -0.5, 1.0, 0.75, -1.25};
  const auto f = compile(dot(data(w4), quad_form(a, b, J)) + dot(data(w4), quad_form_sym(symmetrize_from_lower_tri(a), b, J)) +
                             trace_quad_form(a, b) + trace_gen_quad_form(d, a, b) +
                             dot(data(w6), mdivide_right_spd(transpose(b, K), spd)) +
                             dot(data(w9), chol2inv(cholesky_decompose(spd))) + sum(rows_dot_self(b, J)) * 0.3 +
                             dot(data(w2), columns_dot_self(b, J)) +
                             sum(columns_dot_self(a)) * 0.2 + distance(segment(a, 1, K), segment(a, K + 1, K)),
                         a, b, d);
  for (const auto& p : pts) tyche_test::check_gradient_at(f, p, "the matrix forms");
  tyche_test::check_lanes(f, pts, "the matrix forms (lanes)");
  // quad_form with a data matrix B is B' A B; errors.
  const mat bd{1.0, 2.0, 0.5, -1.0, 0.0, 3.0};
  const auto g = compile(sum(quad_form(a, matrix(bd.data(), K, J))) - sum(quad_form(a, data(bd), J)), a);
  CHECK(g.value(mat(pts[0].begin(), pts[0].begin() + 9)) == Approx(0.0).margin(1e-12));
  vector_param<"b5", 5> b5;
  CHECK_THROWS_WITH(quad_form(a, b5, 2), Contains("tyche::quad_form(A, B, J): 'A' is 3 x 3 but 'B' has 5 values, not K*J = 3*2"));
  CHECK_THROWS_WITH(quad_form(a, b), Contains("for a K x J matrix B, B' A B is quad_form(A, B, J)"));
  const mat not_sym{1.0, 2.0, 0.0, 1.0};
  CHECK_THROWS_WITH(quad_form_sym(matrix(not_sym.data(), 2, 2), b, 3), Contains("tyche::quad_form_sym(A, B, J): A is not symmetric"));
  CHECK_THROWS_WITH(trace_gen_quad_form(d, a, b5), Contains("'B' has 5 values, not K*J"));
  const mat zero_diag{1.0, 0.0, 0.5, 0.0};
  CHECK_THROWS_WITH(chol2inv(matrix(zero_diag.data(), 2, 2)), Contains("tyche::chol2inv(L): L[2, 2] = 0"));
}

TEST_CASE("operations: Stan's constructors (identity_matrix, rep_matrix, append_col, to_matrix, linspaced_vector, "
          "one_hot_vector, zeros, ones, uniform_simplex) against plain loops; gradients; errors",
          "[operations][linear_algebra]") {
  vector_param<"v", 3> v;
  vector_param<"A", 6> a;  // 3 × 2
  param<"x"> x;
  const auto pts = tyche_test::random_points(6, 10, -1.0, 1.0, 1301);
  for (const auto& p : pts) {
    const mat vv(p.begin(), p.begin() + 3), av(p.begin() + 3, p.begin() + 9);
    const mat vav(p.begin(), p.begin() + 9);
    // rep_matrix(v, C): every column v; rep_matrix(x, R, C): x everywhere.
    const mat rc = tyche_test::values_of(rep_matrix(v, 2), 6, vv, v);
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < 2; ++j) CHECK(rc[i * 2 + j] == vv[i]);
    const mat rx = tyche_test::values_of(rep_matrix(x * 1.0, 2, 3), 6, mat{p[9]}, x);
    for (const double e : rx) CHECK(e == p[9]);
    // Stan's row form: transpose(rep_matrix(rv, R), C), every row rv.
    const mat rr = tyche_test::values_of(transpose(rep_matrix(v, 2), 3), 6, vv, v);
    for (std::size_t i = 0; i < 2; ++i)
      for (std::size_t j = 0; j < 3; ++j) CHECK(rr[i * 3 + j] == vv[j]);
    // append_col: [A v] (3 × 3) and two vectors as the columns of a 3 × 2 matrix.
    const mat av_cat = tyche_test::values_of(append_col(a, v, 3), 9, vav, v, a);
    for (std::size_t i = 0; i < 3; ++i) {
      CHECK(av_cat[i * 3 + 0] == av[i * 2 + 0]);
      CHECK(av_cat[i * 3 + 1] == av[i * 2 + 1]);
      CHECK(av_cat[i * 3 + 2] == vv[i]);
    }
    const mat two = tyche_test::values_of(append_col(v, v * 2.0, 3), 6, vv, v);
    for (std::size_t i = 0; i < 3; ++i) CHECK((two[i * 2] == vv[i] && two[i * 2 + 1] == 2.0 * vv[i]));
    // to_matrix(A, 2, 3): column major (entry (i, j) = A[j·2 + i]); with col_major 0 row major.
    const mat cm = tyche_test::values_of(to_matrix(a, 2, 3), 6, av, a), rm = tyche_test::values_of(to_matrix(a, 2, 3, 0), 6, av, a);
    for (std::size_t i = 0; i < 2; ++i)
      for (std::size_t j = 0; j < 3; ++j) {
        CHECK(cm[i * 3 + j] == av[j * 2 + i]);
        CHECK(rm[i * 3 + j] == av[i * 3 + j]);
      }
  }
  // Constants: identity_matrix, linspaced_vector (Eigen's LinSpaced: both ends exact; n = 1 is
  // the upper end), one_hot_vector (1-based k), zeros, ones, uniform_simplex.
  const auto consts = [&](const auto& e, std::size_t m) { return tyche_test::values_of(e + 0.0 * x, m, mat{0.0}, x); };
  const mat id = consts(identity_matrix(3), 9);
  for (std::size_t e = 0; e < 9; ++e) CHECK(id[e] == (e % 4 == 0 ? 1.0 : 0.0));
  const mat ls = consts(linspaced_vector(5, -1.0, 0.5), 5);
  for (std::size_t i = 0; i < 5; ++i) CHECK(ls[i] == Approx(-1.0 + 0.375 * static_cast<double>(i)).margin(1e-15));
  CHECK(ls[0] == -1.0);
  CHECK(ls[4] == 0.5);
  const mat l3 = consts(linspaced_array(3, 0.1, 0.7), 3);
  CHECK((l3[0] == 0.1 && l3[2] == 0.7));
  CHECK(consts(linspaced_vector(1, 2.0, 3.0), 1)[0] == 3.0);
  const mat oh = consts(one_hot_vector(4, 2), 4);
  CHECK((oh[0] == 0.0 && oh[1] == 1.0 && oh[2] == 0.0 && oh[3] == 0.0));
  CHECK(compile(sum(zeros_vector(3)) + sum(ones_row_vector(4)) + at(uniform_simplex(4), 3) + x, x).value(mat{0.0}) ==
        4.25);
  // Gradients through every constructor that takes expressions, and lanes.
  const mat w6{0.5, -1.0, 1.5, 0.25, 2.0, -0.5}, w9{0.5, -1.0, 1.5, 0.25, 2.0, -0.5, 1.0, 0.75, -1.25};
  const auto f = compile(dot(data(w6), rep_matrix(v, 2)) + dot(data(w6), rep_matrix(x, 2, 3)) +
                             dot(data(w9), append_col(a, v * x, 3)) + dot(data(w6), to_matrix(a, 3, 2)) +
                             dot(data(w9), matmul(identity_matrix(3), append_col(a, v, 3), 3)) +
                             dot(linspaced_vector(3, 0.0, 1.0), v) + dot(one_hot_vector(6, 5), a) +
                             dot(data(w6), linspaced_vector(6, x, x * x + 2.0)) + at(linspaced_vector(1, x, v[1]), 0),
                         v, a, x);
  for (const auto& p : pts) tyche_test::check_gradient_at(f, p, "the constructors");
  tyche_test::check_lanes(f, pts, "the constructors (lanes)");
  // A data matrix gives append_col its rows.
  const mat xd{1.0, 2.0, 3.0, 4.0, 5.0, 6.0};
  const mat cat = tyche_test::values_of(append_col(matrix(xd.data(), 3, 2), v), 9, mat{7.0, 8.0, 9.0}, v);
  CHECK(cat == mat{1.0, 2.0, 7.0, 3.0, 4.0, 8.0, 5.0, 6.0, 9.0});
  // transpose of a data matrix (R given; before stop 90 it read the matrix as one value).
  CHECK(tyche_test::values_of(transpose(matrix(xd.data(), 3, 2), 3) + 0.0 * x, 6, mat{0.0}, x) == mat{1.0, 3.0, 5.0, 2.0, 4.0, 6.0});
  // to_matrix of a data matrix: Stan's reshape, column major in and out (3 × 2 → 2 × 3).
  const mat reshaped = tyche_test::values_of(to_matrix(matrix(xd.data(), 3, 2), 2, 3) + 0.0 * x, 6, mat{0.0}, x);
  CHECK(reshaped == mat{1.0, 5.0, 4.0, 3.0, 2.0, 6.0});  // column major 1 3 5 2 4 6 into 2 × 3
  // Errors.
  CHECK_THROWS_WITH(to_matrix(matrix(xd.data(), 3, 2), 4, 2), Contains("'v' has 6 values but m * n = 8"));
  CHECK_THROWS_WITH(append_col(a, v, 2), Contains("tyche::append_col(A, B, R): 'B' has 3 values, which is not R = 2 "
                                                  "rows of equal length"));
  CHECK_THROWS_WITH(append_col(matrix(xd.data(), 3, 2), v, 2), Contains("'A' is 3 x 2 but R = 2"));
  CHECK_THROWS_WITH(to_matrix(a, 4, 2), Contains("tyche::to_matrix(v, m, n): 'v' has 6 values but m * n = 8"));
  CHECK_THROWS_WITH(one_hot_vector(3, 4), Contains("tyche::one_hot_vector(n, k): k = 4 is outside 1 … 3"));
  CHECK_THROWS_WITH(one_hot_vector(3, 0), Contains("k = 0 is outside"));
  CHECK_THROWS_WITH(linspaced_vector(3, 1.0, 0.0), Contains("lower = 1 and upper = 0 must be finite with lower <= upper"));
  CHECK_THROWS_WITH(identity_matrix(0), Contains("tyche::identity_matrix(K): K must be >= 1"));
  CHECK_THROWS_WITH(rep_matrix(v, 0), Contains("tyche::rep_matrix(v, C): C must be >= 1"));
}
