// Stan's vector functions as expressions (tyche/operations/vectors.hpp, matrices.hpp,
// functions.hpp): softmax, log_softmax, rep_vector, append_row / append, to_vector, head, tail,
// segment, rows_dot_product, columns_dot_product, gp_exp_quad_cov (with a length-scale per
// dimension too) and the other stationary kernels, add_diag, max, min, prod, reverse, sort_asc,
// sort_desc, diag_matrix, matvec with a matrix or a vector that is
// not a bare parameter, sparse (CSR) matrices times vectors (operations/sparse.hpp), and the
// linear algebra of square matrices (matmul, transpose, diagonal, trace, diag_post_multiply,
// quad_form_diag, quad_form, tcrossprod, crossprod, the triangular and SPD solves, inverse_spd,
// log_determinant_spd, and of general matrices inverse, determinant, log_determinant,
// mdivide_left, mdivide_right, matrix_exp and its products, matrix_power, eigenvalues_sym,
// eigenvectors_sym). Each: values against plain loops written here, gradients through the
// shared property check (Richardson finite differences), SIMD lanes against scalar, float against
// double; static sizes, size errors, and a multinomial-logit model against its log density
// computed directly.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/property.hpp"

using namespace tyche;
using Catch::Matchers::Contains;

namespace {

using vec = std::vector<double>;

vec log_softmax_ref(const vec& v) {
  const double top = *std::max_element(v.begin(), v.end());
  double acc = 0;
  for (double x : v) acc += std::exp(x - top);
  const double lse = top + std::log(acc);
  vec out(v.size());
  for (std::size_t k = 0; k < v.size(); ++k) out[k] = v[k] - lse;
  return out;
}
vec softmax_ref(const vec& v) {
  vec out = log_softmax_ref(v);
  for (double& x : out) x = std::exp(x);
  return out;
}
double dot_ref(const vec& a, const vec& b) {
  double acc = 0;
  for (std::size_t k = 0; k < a.size(); ++k) acc += a[k] * b[k];
  return acc;
}
vec slice(const vec& v, std::size_t first, std::size_t len) {  // 0-based
  return vec(v.begin() + static_cast<std::ptrdiff_t>(first), v.begin() + static_cast<std::ptrdiff_t>(first + len));
}
// A (rows × cols, row major) times v.
vec matvec_ref(const vec& a, std::size_t rows, std::size_t cols, const vec& v) {
  vec out(rows, 0.0);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) out[i] += a[i * cols + j] * v[j];
  return out;
}
vec dot_products_ref(const vec& a, const vec& b, std::size_t rows, std::size_t cols, bool columns) {
  vec out(columns ? cols : rows, 0.0);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) out[columns ? j : i] += a[i * cols + j] * b[i * cols + j];
  return out;
}

// The whole property check of one program: gradient at every point, lanes, float.
template <class Prog>
void check_program(const Prog& p, const std::vector<vec>& pts, const std::string& what) {
  for (const auto& x : pts) tyche_test::check_gradient_at(p, x, what);
  tyche_test::check_lanes(p, pts, what + " (lanes)");
  tyche_test::check_float(p, pts[0], what + " (float)");
}

}  // namespace

TEST_CASE("softmax and log_softmax: values, stability, gradients", "[operations][vector_functions]") {
  vector_param<"u", 4> u;
  param<"s"> s;
  const vec w{1.0, -2.0, 0.5, 3.0};
  const vec y{0.3, 1.1, -0.4, 0.9};
  const auto f = compile(sum(data(w) * softmax(u)) + square(at(log_softmax(u * s), 2)), u, s);
  // softmax of an elementwise expression with data, used twice; log_softmax in log_sum_exp.
  const auto g = compile(sum(square(softmax(data(y) * s + u))) * s + log_sum_exp(log_softmax(u) * s), u, s);
  auto expected_f = [&](const vec& x) {
    const vec uu = slice(x, 0, 4);
    vec us = uu;
    for (double& v : us) v *= x[4];
    const double l = log_softmax_ref(us)[2];
    return dot_ref(w, softmax_ref(uu)) + l * l;
  };
  auto expected_g = [&](const vec& x) {
    vec e(4);
    for (std::size_t k = 0; k < 4; ++k) e[k] = y[k] * x[4] + x[k];
    double sq = 0;
    for (double p : softmax_ref(e)) sq += p * p;
    vec ls = log_softmax_ref(slice(x, 0, 4));
    for (double& v : ls) v *= x[4];
    const double top = *std::max_element(ls.begin(), ls.end());
    double acc = 0;
    for (double v : ls) acc += std::exp(v - top);
    return sq * x[4] + top + std::log(acc);
  };
  const auto pts = tyche_test::random_points(25, 5, -2.0, 2.0, 101);
  for (const auto& x : pts) {
    CHECK(f.value(x) == Approx(expected_f(x)).epsilon(1e-13));
    CHECK(g.value(x) == Approx(expected_g(x)).epsilon(1e-13));
  }
  check_program(f, pts, "softmax, log_softmax");
  check_program(g, pts, "softmax of data * s + u, log_softmax inside log_sum_exp");

  // Stable: logits near 1000 (exp overflows) give the same numbers as the shifted reference.
  const vec big{1000.0, 999.0, -1000.0, 1001.0, 1.0};
  const double fb = f.value(big);
  REQUIRE(std::isfinite(fb));
  CHECK(fb == Approx(expected_f(big)).epsilon(1e-13));
  std::vector<double> grad(5), ws(f.workspace_size());
  CHECK(std::isfinite(f.value_and_gradient(std::span<const double>(big), std::span<double>(grad),
                                           std::span<double>(ws))));
  for (double gk : grad) CHECK(std::isfinite(gk));

  // softmax is a probability vector for the support checks; log_softmax is a vector of its size.
  STATIC_REQUIRE(support_of<decltype(softmax(u))>.lo >= 0.0);
  STATIC_REQUIRE(support_of<decltype(softmax(u))>.hi <= 1.0);
  STATIC_REQUIRE(extent_v<decltype(log_softmax(u))> == 4);
}

TEST_CASE("rep_vector, append_row and to_vector: values, static sizes, gradients",
          "[operations][vector_functions]") {
  vector_param<"u", 3> u;
  param<"x"> x;
  param<"b"> b;
  STATIC_REQUIRE(extent_v<decltype(rep_vector<3>(x))> == 3);
  STATIC_REQUIRE(extent_v<decltype(rep_vector(x, shape<3>))> == 3);
  STATIC_REQUIRE(extent_v<decltype(rep_vector(x, 3))> == dynamic_extent);
  STATIC_REQUIRE(extent_v<decltype(append_row(u, x))> == 4);
  STATIC_REQUIRE(extent_v<decltype(append(x, append_row(u, u)))> == 7);
  STATIC_REQUIRE(extent_v<decltype(to_vector(x, b * x, 2.0))> == 3);
  CHECK(rep_vector(x, shape_of(5)).size() == 5);
  CHECK(append_row(u, vector_param<"d">(4)).size() == 7);

  const vec w4{0.5, -1.0, 2.0, 0.25};
  const vec w3{1.5, -0.5, 0.75};
  // rep_vector static and run-time, broadcast against a vector and inside elementwise code;
  // append_row of a vector and a scalar on either side, of a vector_op; to_vector of scalars,
  // a number and an element, read element by element.
  const auto f = compile(sum(data(w4) * append_row(u * x, b)) + dot(rep_vector<3>(x), u) +
                             sum(exp(rep_vector(b, 2)) * x) + sum(data(w4) * square(to_vector(x, b * x, at(u, 0), 2.0))) +
                             at(append(x, cumulative_sum(u)), 3) * b + sum(data(w3) * rep_vector(x * b, shape<3>)),
                         u, x, b);
  auto expected = [&](const vec& t) {
    const double x0 = t[3], b0 = t[4];
    double e = 0;
    for (std::size_t k = 0; k < 3; ++k) e += w4[k] * t[k] * x0 + x0 * t[k] + w3[k] * x0 * b0;
    e += w4[3] * b0 + 2 * std::exp(b0) * x0;
    const vec tv{x0, b0 * x0, t[0], 2.0};
    for (std::size_t k = 0; k < 4; ++k) e += w4[k] * tv[k] * tv[k];
    e += (t[0] + t[1] + t[2]) * b0;  // append(x, cumulative_sum(u))[3] (0-based) = u0 + u1 + u2
    return e;
  };
  const auto pts = tyche_test::random_points(25, 5, -1.5, 1.5, 202);
  for (const auto& t : pts) CHECK(f.value(t) == Approx(expected(t)).epsilon(1e-13));
  check_program(f, pts, "rep_vector, append_row, to_vector");

  // Two run-time rep_vectors of one x but different sizes are two values, not one shared.
  const auto two = compile(sum(rep_vector(x, 2)) + sum(rep_vector(x, 5)) * b, x, b);
  CHECK(two.value(vec{1.5, 2.0}) == Approx(1.5 * 2 + 1.5 * 5 * 2.0));
  // Data only: folded when compiled.
  const vec d{1.0, 2.0};
  const auto folded = compile(sum(append_row(data(d), rep_vector(3.0, 2)) * x), x);
  CHECK(folded.workspace_size() == 0);
  CHECK(folded.value(vec{2.0}) == Approx((1.0 + 2.0 + 3.0 + 3.0) * 2.0));
}

TEST_CASE("head, tail and segment: every kind of operand, values, gradients, sizes",
          "[operations][vector_functions]") {
  vector_param<"u", 6> u;
  param<"s"> s;
  const vec y{0.5, -1.0, 2.0, 0.1, 1.3, -0.7};
  const std::vector<int> idx{5, 0, 3, 3, 1};
  const vec xm{1.0, 0.5, -1.0, 2.0, 0.0, 1.5,  -0.5, 1.0, 0.25, 1.0, 2.0, -1.0,
               0.3, 0.3, 0.3,  0.3, 0.3, 0.3,  1.0,  -2.0, 0.0, 0.5, 0.5, 1.0};
  const auto xmat = matrix(xm, 4, 6);

  // Static sizes where the arguments are static; the kinds that segments keep.
  STATIC_REQUIRE(extent_v<decltype(head<2>(u))> == 2);
  STATIC_REQUIRE(extent_v<decltype(tail<3>(exp(u) * s))> == 3);
  STATIC_REQUIRE(extent_v<decltype(segment<2, 4>(u))> == 4);
  STATIC_REQUIRE(extent_v<decltype(head(u, 2))> == dynamic_extent);
  STATIC_REQUIRE(std::is_same_v<decltype(head<6>(u)), vector_param<"u", 6>>);  // all of it: v itself
  STATIC_REQUIRE(kind_of<decltype(segment(data(y), 2, 3))> == node_kind::data_vector);
  STATIC_REQUIRE(kind_of<decltype(tail(gather(u, idx), 2))> == node_kind::param_gather);
  STATIC_REQUIRE(kind_of<decltype(segment(matvec(xmat, u), 2, 2))> == node_kind::matvec);
  STATIC_REQUIRE(kind_of<decltype(tail(exp(u) * s, 3))> == node_kind::binary);
  // A segment of a segment is one segment.
  using seg2 = decltype(head(segment(u, 2, 4), 2));
  STATIC_REQUIRE(std::is_same_v<meta::at<0, children_t<seg2>>, vector_param<"u", 6>>);
  CHECK(head(segment(u, 2, 4), 2).op.offset == 1);

  const vec y2 = slice(y, 0, 2);
  const auto f = compile(sum(head<2>(u) * data(y2)) + sum(square(tail(exp(u) * s, 3))) +
                             sum(segment(u + data(y), 2, 3) * s) + sum(square(segment<2, 3>(cumulative_sum(u)))) +
                             sum(head(segment(u, 2, 4), 2) * s) + log_sum_exp(tail(gather(u, idx), 2)) +
                             sum(segment(matvec(xmat, u), 2, 2)) + sum(head<3>(data(y)) * at(u, 0)),
                         u, s);
  auto expected = [&](const vec& t) {
    const vec uu = slice(t, 0, 6);
    const double s0 = t[6];
    double e = uu[0] * y[0] + uu[1] * y[1];
    for (std::size_t k = 3; k < 6; ++k) e += std::exp(2 * uu[k]) * s0 * s0;
    for (std::size_t k = 1; k < 4; ++k) e += (uu[k] + y[k]) * s0;
    double c = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      c += uu[k];
      if (k >= 1) e += c * c;
    }
    e += (uu[1] + uu[2]) * s0;
    e += std::log(std::exp(uu[3]) + std::exp(uu[1]));  // gather(u, idx)[3], [4] = u3, u1
    const vec xu = matvec_ref(xm, 4, 6, uu);
    e += xu[1] + xu[2];
    e += (y[0] + y[1] + y[2]) * uu[0];
    return e;
  };
  const auto pts = tyche_test::random_points(25, 7, -1.5, 1.5, 303);
  for (const auto& t : pts) CHECK(f.value(t) == Approx(expected(t)).epsilon(1e-13));
  check_program(f, pts, "head, tail, segment");

  // Run-time sizes are checked, naming the function and both sizes.
  vector_param<"d"> d(5);
  CHECK_THROWS_AS(head(d, 6), std::invalid_argument);
  CHECK_THROWS_WITH(head(d, 6), Contains("tyche::head(v, n): n = 6 but v has size 5"));
  CHECK_THROWS_WITH(tail(u, 7), Contains("tyche::tail(v, n): n = 7 but v has size 6"));
  CHECK_THROWS_WITH(head<6>(d), Contains("tyche::head<n>(v): n = 6 but v has size 5"));
  CHECK_THROWS_WITH(segment(d, 4, 3), Contains("tyche::segment(v, i, n): elements 4 ... 6 (1-based; n = 3) "
                                               "were asked for, but v has size 5"));
  CHECK_THROWS_WITH(segment(d, 0, 2), Contains("i = 0, but i is 1-based"));
  CHECK_THROWS_WITH((segment<5, 2>(d)), Contains("tyche::segment<i, n>(v): elements 5 ... 6"));
  CHECK(segment(d, 5, 1).size() == 1);
}

TEST_CASE("matvec: a data matrix times any vector, a matrix of parameters times a vector",
          "[operations][vector_functions]") {
  vector_param<"b", 4> b;
  vector_param<"z", 3> z;
  vector_param<"m", 9> mm;
  const vec xm{1.0, 0.5, -1.0, 2.0, 0.0, 1.5, -0.5, 1.0, 0.25, 1.0, 2.0, -1.0};
  const auto x = matrix(xm, 3, 4);
  const vec v4{0.2, -0.4, 1.0, 0.5};
  const vec v3{1.0, -2.0, 0.5};
  const vec w3{0.5, 1.5, -1.0};
  // X · (elementwise), X · (vector_op), X · data (computed once), M · z, M · data, and a matrix
  // built from parameters (diag_pre_multiply) times a vector.
  const auto f = compile(sum(data(w3) * matvec(x, exp(b))) + sum(square(x * cumulative_sum(b))) * lit<1, 10> +
                             sum(matvec(x, data(v4)) * at(z, 0)) + sum(data(w3) * matvec(mm, z)) +
                             log_sum_exp(matvec(mm, data(v3))) + sum(square(matvec(diag_pre_multiply(exp(z), mm), z))),
                         b, z, mm);
  STATIC_REQUIRE(extent_v<decltype(matvec(mm, z))> == 3);
  STATIC_REQUIRE(kind_of<decltype(matvec(x, b))> == node_kind::matvec);  // a bare parameter: as before
  STATIC_REQUIRE(kind_of<decltype(matvec(x, exp(b)))> == node_kind::vector_op);
  auto expected = [&](const vec& t) {
    const vec bb = slice(t, 0, 4), zz = slice(t, 4, 3), m = slice(t, 7, 9);
    vec eb = bb, cb = bb;
    for (double& v : eb) v = std::exp(v);
    for (std::size_t k = 1; k < 4; ++k) cb[k] += cb[k - 1];
    double e = dot_ref(w3, matvec_ref(xm, 3, 4, eb));
    for (double v : matvec_ref(xm, 3, 4, cb)) e += v * v / 10;
    for (double v : matvec_ref(xm, 3, 4, v4)) e += v * zz[0];
    e += dot_ref(w3, matvec_ref(m, 3, 3, zz));
    const vec mv = matvec_ref(m, 3, 3, v3);
    double acc = 0;
    for (double v : mv) acc += std::exp(v);
    e += std::log(acc);
    vec dm = m;
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < 3; ++j) dm[i * 3 + j] *= std::exp(zz[i]);
    for (double v : matvec_ref(dm, 3, 3, zz)) e += v * v;
    return e;
  };
  const auto pts = tyche_test::random_points(25, 16, -1.0, 1.0, 404);
  for (const auto& t : pts) CHECK(f.value(t) == Approx(expected(t)).epsilon(1e-13));
  check_program(f, pts, "matvec");

  // The Cholesky factor of a matrix of parameters times z: the same as cholesky_multiply.
  param<"a"> a;
  const vec d2{0.0, -0.5, -2.0, -0.5, 0.0, -0.5, -2.0, -0.5, 0.0};
  const vec jitter{0.1, 0.0, 0.0, 0.0, 0.1, 0.0, 0.0, 0.0, 0.1};
  const auto c = square(a) * exp(data(d2)) + data(jitter);
  const auto via_matvec = compile(sum(data(w3) * matvec(cholesky_decompose(c), z)), a, z);
  const auto via_multiply = compile(sum(data(w3) * cholesky_multiply(c, z)), a, z);
  const auto cpts = tyche_test::random_points(10, 4, 0.5, 1.5, 405);
  for (const auto& t : cpts) {
    CHECK(via_matvec.value(t) == Approx(via_multiply.value(t)).epsilon(1e-13));
    std::vector<double> g1(4), g2(4), ws1(via_matvec.workspace_size()), ws2(via_multiply.workspace_size());
    via_matvec.value_and_gradient(std::span<const double>(t), std::span<double>(g1), std::span<double>(ws1));
    via_multiply.value_and_gradient(std::span<const double>(t), std::span<double>(g2), std::span<double>(ws2));
    for (std::size_t k = 0; k < 4; ++k) CHECK(g1[k] == Approx(g2[k]).epsilon(1e-12).margin(1e-14));
  }
  check_program(via_matvec, cpts, "matvec(cholesky_decompose(C), z)");

  // Data times data is folded; sizes are checked.
  param<"s"> s;
  const auto folded = compile(sum(matvec(x, data(v4)) * s), s);
  CHECK(folded.workspace_size() == 0);
  double total = 0;
  for (double v : matvec_ref(xm, 3, 4, v4)) total += v;
  CHECK(folded.value(vec{2.0}) == Approx(2.0 * total).epsilon(1e-14));
  CHECK_THROWS_WITH(matvec(x, exp(z)), Contains("tyche::matvec(X, v): X has 4 columns but v has size 3"));
  vector_param<"q"> q(4);
  CHECK_THROWS_AS(matvec(mm, q), std::invalid_argument);
  CHECK_THROWS_WITH(matvec(mm, q), Contains("tyche::matvec(M, v): 'M' is 3 x 3 but 'v' has size 4"));
  vector_param<"p"> p8(8);
  CHECK_THROWS_WITH(matvec(p8, z), Contains("'M' has 8 values") && Contains("square matrix"));
}

TEST_CASE("matvec(M, v) with v of J vectors of K: M times each (non-centred group effects)",
          "[operations][vector_functions]") {
  // b = matvec(diag_pre_multiply(exp(t), M), z) for z of 4 vectors of 3: Stan's
  // (diag_pre_multiply(tau, L) * Z)' with Z 3 x 4, against four matvecs of 3, and its gradient.
  vector_param<"t", 3> t;
  vector_param<"m", 9> mm;
  vector_param<"z", 12> z;
  const vec w12{0.5, 1.5, -1.0, 0.25, 2.0, -0.5, 1.0, 0.75, -2.0, 0.3, -0.1, 1.2};
  const auto f = compile(sum(data(w12) * matvec(diag_pre_multiply(exp(t), mm), z)) +
                             log_sum_exp(matvec(mm, exp(z))),
                         t, mm, z);
  STATIC_REQUIRE(extent_v<decltype(matvec(mm, z))> == 12);
  auto expected = [&](const vec& p) {
    const vec tt = slice(p, 0, 3), m = slice(p, 3, 9), zz = slice(p, 12, 12);
    vec dm = m;
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < 3; ++j) dm[i * 3 + j] *= std::exp(tt[i]);
    double e = 0, acc = 0;
    for (std::size_t r = 0; r < 4; ++r) {
      const vec block = slice(zz, 3 * r, 3);
      vec eblock = block;
      for (double& v : eblock) v = std::exp(v);
      const vec b = matvec_ref(dm, 3, 3, block), c = matvec_ref(m, 3, 3, eblock);
      for (std::size_t i = 0; i < 3; ++i) {
        e += w12[3 * r + i] * b[i];
        acc += std::exp(c[i]);
      }
    }
    return e + std::log(acc);
  };
  const auto pts = tyche_test::random_points(20, 24, -1.0, 1.0, 406);
  for (const auto& p : pts) CHECK(f.value(p) == Approx(expected(p)).epsilon(1e-13));
  check_program(f, pts, "matvec(M, v) of J vectors");
}

TEST_CASE("gp_exp_quad_cov and add_diag: a Gaussian process's covariance, values and gradients",
          "[operations][vector_functions]") {
  // Points on a line (data(x)) and in two dimensions (matrix(x2, 4, 2)); the covariance weighted
  // by data (every entry's derivative reaches alpha and rho) and a GP regression's log density
  // (add_diag of the noise variance, cholesky_decompose, multi_normal_cholesky) against a
  // Cholesky factor and a determinant computed here.
  const vec x{-1.0, 0.3, 0.9, 2.5}, x2{0.0, 0.0, 1.0, 0.5, -0.5, 1.5, 2.0, -1.0}, y{0.4, -0.2, 0.8, 1.1};
  vec w16(16);
  for (std::size_t i = 0; i < 16; ++i) w16[i] = 0.1 * double(i) - 0.7;
  param<"a"> a;
  param<"r"> r;
  param<"s"> s;
  const auto f = compile(sum(data(w16) * gp_exp_quad_cov(data(x), exp(a), exp(r))) +
                             sum(data(w16) * gp_exp_quad_cov(matrix(x2, 4, 2), exp(a), exp(r))),
                         a, r);
  auto cov = [](const vec& pts, std::size_t d, double alpha, double rho) {
    const std::size_t n = pts.size() / d;
    vec k(n * n);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        double d2 = 0;
        for (std::size_t c = 0; c < d; ++c) d2 += (pts[i * d + c] - pts[j * d + c]) * (pts[i * d + c] - pts[j * d + c]);
        k[i * n + j] = alpha * alpha * std::exp(-d2 / (2 * rho * rho));
      }
    return k;
  };
  const auto pts = tyche_test::random_points(15, 2, -1.0, 1.0, 407);
  for (const auto& p : pts) {
    const vec k1 = cov(x, 1, std::exp(p[0]), std::exp(p[1])), k2 = cov(x2, 2, std::exp(p[0]), std::exp(p[1]));
    CHECK(f.value(p) == Approx(dot_ref(w16, k1) + dot_ref(w16, k2)).epsilon(1e-13));
  }
  check_program(f, pts, "gp_exp_quad_cov");
  const auto gp = compile(
      multi_normal_cholesky(0.0, cholesky_decompose(add_diag(gp_exp_quad_cov(data(x), exp(a), exp(r)), square(exp(s)))))
          .log_prob(data(y)),
      a, r, s);
  const auto gp_pts = tyche_test::random_points(10, 3, -1.0, 1.0, 408);
  for (const auto& p : gp_pts) {
    vec k = cov(x, 1, std::exp(p[0]), std::exp(p[1]));
    for (std::size_t i = 0; i < 4; ++i) k[i * 4 + i] += std::exp(2 * p[2]);
    vec l(16, 0.0);  // Cholesky factor
    for (std::size_t i = 0; i < 4; ++i)
      for (std::size_t j = 0; j <= i; ++j) {
        double acc = k[i * 4 + j];
        for (std::size_t q = 0; q < j; ++q) acc -= l[i * 4 + q] * l[j * 4 + q];
        l[i * 4 + j] = i == j ? std::sqrt(acc) : acc / l[j * 4 + j];
      }
    vec z(4);
    double log_det = 0, quad = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      double acc = y[i];
      for (std::size_t q = 0; q < i; ++q) acc -= l[i * 4 + q] * z[q];
      z[i] = acc / l[i * 4 + i];
      log_det += std::log(l[i * 4 + i]);
      quad += z[i] * z[i];
    }
    CHECK(gp.value(p) == Approx(-0.5 * quad - log_det - 2 * std::log(2 * 3.14159265358979323846)).epsilon(1e-12));
    tyche_test::check_gradient_at(gp, p, "a GP regression's log density");
  }
  // add_diag with a vector of K values; sizes and data are checked.
  vector_param<"v", 4> v;
  vector_param<"m", 16> m;
  const auto ad = compile(sum(data(w16) * add_diag(m, exp(v))), m, v);
  check_program(ad, tyche_test::random_points(5, 20, -1.0, 1.0, 409), "add_diag(M, v)");
  vector_param<"three", 3> three;
  CHECK_THROWS_WITH(add_diag(m, three), Contains("'M' is 4 x 4 but 'v' has size 3"));
  const vec bad{0.0, std::nan(""), 1.0};
  CHECK_THROWS_WITH(gp_exp_quad_cov(data(bad, "x"), 1.0, exp(a)), Contains("x[2] = nan; data must be finite"));
  // One length-scale per dimension (Stan's automatic relevance determination form): against the
  // formula with each dimension scaled by its own rho; the sizes must agree.
  vector_param<"rho", 2> rho2;
  const auto ard = compile(sum(data(w16) * gp_exp_quad_cov(matrix(x2, 4, 2), exp(a), exp(rho2))), a, rho2);
  const auto ard_pts = tyche_test::random_points(8, 3, -1.0, 1.0, 411);
  for (const auto& p : ard_pts) {
    vec scaled(x2);
    for (std::size_t i = 0; i < 4; ++i)
      for (std::size_t c = 0; c < 2; ++c) scaled[i * 2 + c] /= std::exp(p[1 + c]);
    CHECK(ard.value(p) == Approx(dot_ref(w16, cov(scaled, 2, std::exp(p[0]), 1.0))).epsilon(1e-13));
  }
  check_program(ard, ard_pts, "gp_exp_quad_cov with a length-scale per dimension");
  vector_param<"rho3", 3> rho3;
  CHECK_THROWS_WITH(gp_exp_quad_cov(matrix(x2, 4, 2, "pts"), 1.0, exp(rho3)),
                    Contains("rho has 3 length-scales but the points of pts have 2 dimensions"));
}

TEST_CASE("max, min, prod, reverse, sort_asc, sort_desc and diag_matrix of vector expressions: values, ties, "
          "gradients",
          "[operations][vector_functions]") {
  // One program of all seven (compile time), each weighted differently: its value against loops
  // written here, its gradient by finite differences, lanes and float (the lanes' max picks its
  // element, and their sorts their order, lane by lane: each lane has its own point).
  vector_param<"u", 4> u;
  param<"s"> s;
  const vec w4{0.5, -1.0, 2.0, 0.25};
  vec w16(16);
  for (std::size_t i = 0; i < 16; ++i) w16[i] = 0.1 * double(i) - 0.7;
  const auto f = compile(max(u * s) - 0.7 * min(exp(u) - s) + 0.3 * prod(u + s) +
                             sum(data(w4) * reverse(u * s)) + sum(data(w16) * diag_matrix(u - s)) +
                             sum(data(w4) * sort_asc(u * s)) - 0.5 * sum(data(w4) * sort_desc(exp(u) - s)),
                         u, s);
  const auto pts = tyche_test::random_points(12, 5, -1.5, 1.5, 412);
  for (const auto& p : pts) {
    double top = -HUGE_VAL, low = HUGE_VAL, product = 1, rev = 0, diag = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      top = std::max(top, p[k] * p[4]);
      low = std::min(low, std::exp(p[k]) - p[4]);
      product *= p[k] + p[4];
      rev += w4[k] * p[3 - k] * p[4];
      diag += w16[k * 4 + k] * (p[k] - p[4]);
    }
    vec up(4), down(4);
    for (std::size_t k = 0; k < 4; ++k) {
      up[k] = p[k] * p[4];
      down[k] = std::exp(p[k]) - p[4];
    }
    std::sort(up.begin(), up.end());
    std::sort(down.begin(), down.end(), [](double a, double b) { return a > b; });
    const double sorted = dot_ref(w4, up) - 0.5 * dot_ref(w4, down);
    CHECK(f.value(p) == Approx(top - 0.7 * low + 0.3 * product + rev + diag + sorted).epsilon(1e-13));
  }
  check_program(f, pts, "max, min, prod, reverse, diag_matrix");
  // Ties: the derivative goes to one element (the first), not to each; a product with a zero
  // element has the exact gradient; NaN is not hidden; empty vectors; supports (log of a
  // product of positive values compiles: the support is known to be positive).
  const auto m = compile(max(u) + 10.0 * min(u) + prod(u), u);
  vec g(4);
  CHECK(m.value_and_gradient(vec{1.0, 3.0, 3.0, 1.0}, g) == 1.0 * 3.0 + 10.0 + 9.0);
  CHECK(g == vec{10.0 + 9.0, 1.0 + 3.0, 3.0, 9.0});
  CHECK(m.value_and_gradient(vec{2.0, 0.0, 1.5, 1.0}, g) == 2.0);
  CHECK(g == vec{1.0, 10.0 + 3.0, 0.0, 0.0});
  CHECK(std::isnan(compile(max(u), u).value(vec{1.0, std::nan(""), 0.0, 2.0})));
  CHECK(std::isnan(compile(min(u), u).value(vec{1.0, 0.5, 0.0, std::nan("")})));
  const auto last = compile(at(sort_asc(u), 3) + at(sort_desc(u), 0), u);  // NaN last either way
  CHECK(std::isnan(last.value(vec{1.0, std::nan(""), 0.0, 2.0})));
  CHECK(compile(at(sort_asc(u), 0) + 10.0 * at(sort_desc(u), 2), u).value(vec{1.0, std::nan(""), 0.0, 2.0}) ==
        0.0 + 10.0 * 0.0);
  // An empty vector: its product is 1; its max and min are refused (Stan's ∓∞ would be outside
  // the elements' support, which the checks trust).
  const vec none;
  CHECK(compile(s * prod(data(none)), s).value(vec{2.0}) == 2.0);
  CHECK_THROWS_WITH(max(data(none)), Contains("tyche::max(v): v is empty"));
  CHECK_THROWS_WITH(min(s * data(none)), Contains("tyche::min(v): v is empty"));
  // A product of probabilities is a probability (a series system's reliability: an argument of
  // binomial); of positive values positive; of anything, anything.
  static_assert(support_of<decltype(prod(inv_logit(u)))> == interval::open_closed(0.0, 1.0));
  static_assert(support_of<decltype(min(inv_logit(u)))> == interval::open(0.0, 1.0));
  static_assert(support_of<decltype(prod(exp(u)))> == interval::positive());
  static_assert(support_of<decltype(prod(u))> == interval::whole());
  const auto lp = compile(log(prod(exp(u))) + sqrt(max(exp(u))), u);
  CHECK(lp.value(vec{0.1, 0.2, 0.3, 0.4}) == Approx(1.0 + std::exp(0.2)).epsilon(1e-14));
}

TEST_CASE("gp_exponential_cov, gp_matern32_cov, gp_matern52_cov, gp_periodic_cov, gp_dot_prod_cov: values and gradients",
          "[operations][vector_functions]") {
  // Each kernel on points on a line and in two dimensions, weighted by data (every entry's
  // derivative reaches alpha, rho and the period): values against the formulas written here
  // (Stan's functions' definitions), gradients, lanes and float through the property check. x2
  // repeats a point (r = 0: no division by the distance).
  const vec x{-1.0, 0.3, 0.9, 2.5}, x2{0.0, 0.0, 1.0, 0.5, -0.5, 1.5, 0.0, 0.0};
  vec w16(16);
  for (std::size_t i = 0; i < 16; ++i) w16[i] = 0.1 * double(i) - 0.7;
  param<"a"> a;
  param<"r"> r;
  param<"p"> per;
  const double pi = 3.14159265358979323846;
  // kind 0 exponential, 1 Matérn 3/2, 2 Matérn 5/2, 3 periodic
  auto cov = [&](int kind, const vec& pts, std::size_t d, double alpha, double rho, double period) {
    const std::size_t n = pts.size() / d;
    vec k(n * n);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        double d2 = 0;
        for (std::size_t c = 0; c < d; ++c) d2 += (pts[i * d + c] - pts[j * d + c]) * (pts[i * d + c] - pts[j * d + c]);
        const double dist = std::sqrt(d2), s3 = std::sqrt(3.0) * dist / rho, s5 = std::sqrt(5.0) * dist / rho;
        const double e = kind == 0   ? std::exp(-dist / rho)
                         : kind == 1 ? (1 + s3) * std::exp(-s3)
                         : kind == 2 ? (1 + s5 + 5 * d2 / (3 * rho * rho)) * std::exp(-s5)
                                     : std::exp(-2 * std::pow(std::sin(pi * dist / period), 2) / (rho * rho));
        k[i * n + j] = alpha * alpha * e;
      }
    return k;
  };
  // The four kernels in one program (one instantiation of the property check: compile time),
  // each weighted differently, points on a line and in 2-d; its value against the sum of the
  // formulas', its gradient by finite differences (a wrong derivative of any kernel changes it).
  const auto f = compile(sum(data(w16) * gp_exponential_cov(data(x), exp(a), exp(r))) +
                             0.7 * sum(data(w16) * gp_matern32_cov(matrix(x2, 4, 2), exp(a), exp(r))) -
                             1.3 * sum(data(w16) * gp_matern52_cov(matrix(x2, 4, 2), exp(a), exp(r))) +
                             0.4 * sum(data(w16) * gp_periodic_cov(matrix(x2, 4, 2), exp(a), exp(r), exp(per))) +
                             0.9 * sum(data(w16) * gp_periodic_cov(data(x), exp(a), exp(r), exp(per))) +
                             0.6 * sum(data(w16) * gp_dot_prod_cov(matrix(x2, 4, 2), exp(per))),
                         a, r, per);
  const auto pts = tyche_test::random_points(8, 3, -1.0, 1.0, 410);
  for (const auto& p : pts) {
    const double alpha = std::exp(p[0]), rho = std::exp(p[1]), period = std::exp(p[2]);
    const double want = dot_ref(w16, cov(0, x, 1, alpha, rho, period)) +
                        0.7 * dot_ref(w16, cov(1, x2, 2, alpha, rho, period)) -
                        1.3 * dot_ref(w16, cov(2, x2, 2, alpha, rho, period)) +
                        0.4 * dot_ref(w16, cov(3, x2, 2, alpha, rho, period)) +
                        0.9 * dot_ref(w16, cov(3, x, 1, alpha, rho, period));
    double dot_prod = 0;  // gp_dot_prod_cov(x2, sigma = period): σ² + xᵢ·xⱼ
    for (std::size_t i = 0; i < 4; ++i)
      for (std::size_t j = 0; j < 4; ++j)
        dot_prod += w16[i * 4 + j] * (period * period + x2[2 * i] * x2[2 * j] + x2[2 * i + 1] * x2[2 * j + 1]);
    CHECK(f.value(p) == Approx(want + 0.6 * dot_prod).epsilon(1e-12));
  }
  check_program(f, pts, "gp_exponential_cov, gp_matern32_cov, gp_matern52_cov, gp_periodic_cov, gp_dot_prod_cov");
  // A length-scale per dimension (Stan's ARD forms) for the exponential and Matérn kernels: the
  // formulas on the points scaled dimension by dimension with rho = 1; x2's repeated point (s = 0)
  // contributes no derivative.
  vector_param<"rho", 2> rho2;
  const auto ard = compile(sum(data(w16) * gp_exponential_cov(matrix(x2, 4, 2), exp(a), exp(rho2))) +
                               0.7 * sum(data(w16) * gp_matern32_cov(matrix(x2, 4, 2), exp(a), exp(rho2))) -
                               1.3 * sum(data(w16) * gp_matern52_cov(matrix(x2, 4, 2), exp(a), exp(rho2))),
                           a, rho2);
  const auto ard_pts = tyche_test::random_points(8, 3, -1.0, 1.0, 413);
  for (const auto& p : ard_pts) {
    vec scaled(x2);
    for (std::size_t i = 0; i < 4; ++i)
      for (std::size_t c = 0; c < 2; ++c) scaled[i * 2 + c] /= std::exp(p[1 + c]);
    const double alpha = std::exp(p[0]);
    const double want = dot_ref(w16, cov(0, scaled, 2, alpha, 1.0, 1.0)) +
                        0.7 * dot_ref(w16, cov(1, scaled, 2, alpha, 1.0, 1.0)) -
                        1.3 * dot_ref(w16, cov(2, scaled, 2, alpha, 1.0, 1.0));
    CHECK(ard.value(p) == Approx(want).epsilon(1e-12));
  }
  check_program(ard, ard_pts, "gp_exponential_cov, gp_matern32_cov, gp_matern52_cov with a length-scale per dimension");
  vector_param<"rho3", 3> rho3;
  CHECK_THROWS_WITH(gp_matern32_cov(matrix(x2, 4, 2, "pts"), 1.0, exp(rho3)),
                    Contains("gp_matern32_cov(x, alpha, rho): rho has 3 length-scales but the points of pts have 2"));
  // Bad input named: data not finite, a number that is not positive.
  const vec bad{0.0, std::nan(""), 1.0};
  CHECK_THROWS_WITH(gp_matern32_cov(data(bad, "x"), 1.0, exp(a)),
                    Contains("gp_matern32_cov(x, alpha, rho): x[2] = nan; data must be finite"));
  CHECK_THROWS_WITH(gp_periodic_cov(data(x), 1.0, exp(a), -2.0),
                    Contains("gp_periodic_cov(x, alpha, rho, period): period must be") && Contains("it is -2"));
  CHECK_THROWS_WITH(gp_dot_prod_cov(data(x), -0.5), Contains("gp_dot_prod_cov(x, sigma): sigma must be >= 0"));
}

TEST_CASE("rows_dot_product and columns_dot_product: parameter and data matrices",
          "[operations][vector_functions]") {
  vector_param<"a", 9> a;
  vector_param<"c", 9> c;
  vector_param<"p", 6> p;
  const vec xm{1.0, 0.5, -1.0, 2.0, 0.0, 1.5};  // 2 x 3
  const vec ym{0.5, 0.5, 1.0, -1.0, 2.0, 0.25};
  const auto x = matrix(xm, 2, 3);
  const auto ymat = matrix(ym, 2, 3);
  const vec w3{0.5, 1.5, -1.0};
  const vec w2{2.0, -0.5};
  // Two matrices of parameters (square), a data matrix with a vector of parameters on either
  // side (the data matrix gives the shape 2 x 3), and two data matrices (computed once).
  const auto f = compile(sum(data(w3) * rows_dot_product(a, c)) + sum(square(columns_dot_product(a, exp(c)))) +
                             sum(data(w2) * rows_dot_product(x, p)) + log_sum_exp(columns_dot_product(p * p, x)) +
                             sum(rows_dot_product(x, ymat) * at(p, 0)) + sum(columns_dot_product(x, ymat)) * at(p, 1),
                         a, c, p);
  auto expected = [&](const vec& t) {
    const vec aa = slice(t, 0, 9), cc = slice(t, 9, 9), pp = slice(t, 18, 6);
    vec ec = cc, p2 = pp;
    for (double& v : ec) v = std::exp(v);
    for (double& v : p2) v *= v;
    double e = dot_ref(w3, dot_products_ref(aa, cc, 3, 3, false));
    for (double v : dot_products_ref(aa, ec, 3, 3, true)) e += v * v;
    e += dot_ref(w2, dot_products_ref(xm, pp, 2, 3, false));
    double acc = 0;
    for (double v : dot_products_ref(p2, xm, 2, 3, true)) acc += std::exp(v);
    e += std::log(acc);
    for (double v : dot_products_ref(xm, ym, 2, 3, false)) e += v * pp[0];
    for (double v : dot_products_ref(xm, ym, 2, 3, true)) e += v * pp[1];
    return e;
  };
  STATIC_REQUIRE(kind_of<decltype(rows_dot_product(x, ymat))> == node_kind::vector_op);
  CHECK(rows_dot_product(x, p).size() == 2);
  CHECK(columns_dot_product(p, x).size() == 3);
  const auto pts = tyche_test::random_points(25, 24, -1.0, 1.0, 505);
  for (const auto& t : pts) CHECK(f.value(t) == Approx(expected(t)).epsilon(1e-13));
  check_program(f, pts, "rows_dot_product, columns_dot_product");

  vector_param<"q"> q(6);
  CHECK_THROWS_AS(rows_dot_product(a, q), std::invalid_argument);
  CHECK_THROWS_WITH(rows_dot_product(a, q),
                    Contains("tyche::rows_dot_product(A, B): 'A' is a vector of 9 entries but 'B' is a vector of 6 entries"));
  CHECK_THROWS_WITH(columns_dot_product(x, a), Contains("tyche::columns_dot_product(A, B): 'A' is 2 x 3 but 'B' is a vector of 9 entries"));
  const auto xt = matrix(xm, 3, 2);
  CHECK_THROWS_WITH(rows_dot_product(x, xt), Contains("'A' is 2 x 3 but 'B' is 3 x 2"));
  vector_param<"r"> r(6);
  CHECK_THROWS_WITH(rows_dot_product(r, r), Contains("'A' has 6 values, which is not the number of entries of a square matrix"));
}

TEST_CASE("a multinomial-logit model with log_softmax and softmax, against its log density",
          "[operations][vector_functions][model]") {
  // Three groups with a covariate x_g and counts over K = 4 categories; logits (0, α + β x_g)
  // (the first category the reference), counts scored with log_softmax through target(), and
  // single observations of group 0 through categorical(softmax(...)).
  constexpr std::size_t G = 3;
  const double xg[G] = {-1.0, 0.5, 2.0};
  const std::vector<vec> counts{{3, 5, 0, 2}, {1, 4, 6, 2}, {0, 2, 3, 9}};
  const vec z{2, 1, 4, 2, 2, 3};  // categories 1 … 4
  auto alpha = normal<"alpha">(0.0, 2.0, shape<3>);
  auto beta = normal<"beta">(0.0, 1.0, shape<3>);
  auto logits = [&](std::size_t g) { return append_row(0.0, alpha + xg[g] * beta); };
  const auto m = model(joint(alpha, beta,
                             target(dot(data(counts[0]), log_softmax(logits(0))) +
                                    dot(data(counts[1]), log_softmax(logits(1))) +
                                    dot(data(counts[2]), log_softmax(logits(2)))),
                             categorical(softmax(logits(0))).observe(data(z))));
  REQUIRE(m.dim() == 6);
  auto direct = [&](const vec& t) {
    const double log_sqrt_2pi = 0.5 * std::log(2 * M_PI);
    double lp = 0;
    for (std::size_t k = 0; k < 3; ++k) {
      lp += -0.5 * (t[k] / 2.0) * (t[k] / 2.0) - std::log(2.0) - log_sqrt_2pi;
      lp += -0.5 * t[3 + k] * t[3 + k] - log_sqrt_2pi;
    }
    for (std::size_t g = 0; g < G; ++g) {
      vec eta{0.0, 0.0, 0.0, 0.0};
      for (std::size_t k = 0; k < 3; ++k) eta[k + 1] = t[k] + xg[g] * t[3 + k];
      double norm = 0;
      for (double e : eta) norm += std::exp(e);
      for (std::size_t k = 0; k < 4; ++k) lp += counts[g][k] * (eta[k] - std::log(norm));
      if (g == 0)
        for (double c : z) lp += std::log(std::exp(eta[static_cast<std::size_t>(c) - 1]) / norm);
    }
    return lp;
  };
  const auto pts = tyche_test::random_points(20, 6, -2.0, 2.0, 606);
  for (const auto& t : pts) {
    CHECK(m.log_prob(t) == Approx(direct(t)).epsilon(1e-12));
    tyche_test::check_gradient_at(m.program(), t, "multinomial logit");
  }
  tyche_test::check_lanes(m.program(), pts, "multinomial logit (lanes)");
}

TEST_CASE("sparse matrices: matvec(S, v), S * v and csr_matrix_times_vector against the dense product; "
          "csr_extract, csr_from_triplets; the CSR arrays checked, naming the array, index and value",
          "[operations][vector_functions][sparse]") {
  // 5 x 4, row 2 empty, row 3 with its columns out of order and column 1 twice (they add).
  const vec dense{1.5, 0.0, 0.0, -2.0,  //
                  0.0, 0.5, 0.0, 0.0,   //
                  0.0, 0.0, 0.0, 0.0,   //
                  0.25, 3.0, -1.0, 0.0,  //
                  0.0, 0.0, 0.0, 0.75};
  const vec w{1.5, -2.0, 0.5, -1.0, 1.0, 0.25, 2.0, 0.75};
  const std::vector<int> c{0, 3, 1, 2, 1, 0, 1, 3};
  const std::vector<int> u{0, 2, 3, 3, 7, 8};
  const auto s = sparse_matrix(5, 4, w, c, u, "S");
  // Stan's 1-based arrays of the same matrix.
  std::vector<int> c1(c), u1(u);
  for (int& i : c1) ++i;
  for (int& i : u1) ++i;
  const csr_matrix extracted = csr_extract(matrix(dense, 5, 4));
  CHECK(extracted.w == vec{1.5, -2.0, 0.5, 0.25, 3.0, -1.0, 0.75});
  CHECK(extracted.c == std::vector<int>{0, 3, 1, 0, 1, 2, 3});
  CHECK(extracted.u == std::vector<int>{0, 2, 3, 3, 6, 7});
  // Triplets in any order, (3, 1) in three parts: the same CSR arrays as csr_extract's.
  const std::vector<int> ti{4, 3, 0, 3, 1, 3, 0, 3};
  const std::vector<int> tj{3, 1, 3, 0, 1, 2, 0, 1};
  const vec tx{0.75, 1.0, -2.0, 0.25, 0.5, -1.0, 1.5, 2.0};
  const csr_matrix triplets = csr_from_triplets(5, 4, ti, tj, tx);
  CHECK(triplets.w == extracted.w);
  CHECK(triplets.c == extracted.c);
  CHECK(triplets.u == extracted.u);

  vector_param<"b", 4> b;
  const vec w5{0.5, -1.0, 2.0, 1.0, -0.5};
  const auto f = compile(sum(data(w5) * matvec(s, exp(b))) + log_sum_exp(s * b) +
                             sum(square(csr_matrix_times_vector(5, 4, w, c1, u1, b * b))) +
                             dot(data(w5), sparse_matrix(extracted) * b),
                         b);
  STATIC_REQUIRE(kind_of<decltype(matvec(s, b))> == node_kind::vector_op);
  CHECK(matvec(s, b).size() == 5);
  auto expected = [&](const vec& t) {
    vec e = t, sq = t;
    for (double& v : e) v = std::exp(v);
    for (double& v : sq) v *= v;
    double r = dot_ref(w5, matvec_ref(dense, 5, 4, e));
    double acc = 0;
    for (double v : matvec_ref(dense, 5, 4, t)) acc += std::exp(v);
    r += std::log(acc);
    for (double v : matvec_ref(dense, 5, 4, sq)) r += v * v;
    return r + dot_ref(w5, matvec_ref(dense, 5, 4, t));
  };
  const auto pts = tyche_test::random_points(25, 4, -1.0, 1.0, 606);
  for (const auto& t : pts) CHECK(f.value(t) == Approx(expected(t)).epsilon(1e-13));
  check_program(f, pts, "sparse matvec");

  // The CSR checks, each naming the array, the index and the value.
  const std::vector<int> short_u{0, 2, 3, 3, 7};
  CHECK_THROWS_WITH(sparse_matrix(5, 4, w, c, short_u, "S"),
                    Contains("S's u has 5 values; a 5-row matrix needs rows + 1 = 6 row starts"));
  const std::vector<int> late_u{1, 2, 3, 3, 7, 8};
  CHECK_THROWS_WITH(sparse_matrix(5, 4, w, c, late_u), Contains("u[0] = 1; the row starts begin at 0"));
  const std::vector<int> down_u{0, 2, 1, 3, 7, 8};
  CHECK_THROWS_WITH(sparse_matrix(5, 4, w, c, down_u),
                    Contains("u[2] = 1 is less than u[1] = 2 (row starts must not decrease)"));
  const std::vector<int> end_u{0, 2, 3, 3, 7, 7};
  CHECK_THROWS_WITH(sparse_matrix(5, 4, w, c, end_u), Contains("u[5] = 7 but w has 8 values (the last row start is 8)"));
  const std::vector<int> short_c{0, 3, 1, 2, 1, 0, 1};
  CHECK_THROWS_WITH(sparse_matrix(5, 4, w, short_c, u), Contains("column indices c have 7 values but w has 8"));
  const std::vector<int> wide_c{0, 3, 1, 2, 4, 0, 1, 3};
  CHECK_THROWS_AS(sparse_matrix(5, 4, w, wide_c, u, "S"), std::out_of_range);
  CHECK_THROWS_WITH(sparse_matrix(5, 4, w, wide_c, u, "S"), Contains("S's c[4] = 4 is outside 0 … 3 (the matrix has 4 columns)"));
  vec nan_w = w;
  nan_w[6] = std::nan("");
  CHECK_THROWS_WITH(sparse_matrix(5, 4, nan_w, c, u), Contains("w[6] = nan; data must be finite"));
  // Stan's spelling counts from 1 in its messages, and calls the column indices v.
  std::vector<int> wide_c1(c1);
  wide_c1[2] = 5;
  CHECK_THROWS_WITH(csr_matrix_times_vector(5, 4, w, wide_c1, u1, b),
                    Contains("csr_matrix_times_vector(m, n, w, v, u, b): v[3] = 5 is outside 1 … 4"));
  CHECK_THROWS_WITH(csr_matrix_times_vector(5, 4, w, c, u, b), Contains("u[1] = 0; the row starts begin at 1"));
  vector_param<"q"> q(3);
  CHECK_THROWS_WITH(matvec(s, q), Contains("tyche::matvec(S, v): S has 4 columns but v has size 3"));
  CHECK_THROWS_WITH(csr_matrix_times_vector(5, 4, w, c1, u1, q), Contains("n = 4 columns but b has size 3"));
  vec nan_dense = dense;
  nan_dense[9] = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH(csr_extract(matrix(nan_dense, 5, 4, "X")), Contains("X[3, 2] = inf; data must be finite"));
  const std::vector<int> bad_i{0, 5};
  const std::vector<int> two_j{0, 1};
  const vec two_x{1.0, 2.0};
  CHECK_THROWS_WITH(csr_from_triplets(5, 4, bad_i, two_j, two_x), Contains("i[1] = 5 is outside 0 … 5 - 1"));
  CHECK_THROWS_WITH(csr_from_triplets(5, 4, two_j, two_j, tx), Contains("i, j and x have 2, 2 and 8 values"));
}

TEST_CASE("sparse matrices: a regression on a sparse design matrix, its log density against the model written out",
          "[operations][vector_functions][sparse][model]") {
  // 40 observations, 6 coefficients, about a quarter of the design matrix non-zero.
  constexpr std::size_t n = 40, k = 6;
  vec x(n * k, 0.0), y(n);
  counter_rng g(11, 0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < k; ++j)
      if (g.uniform01() < 0.25) x[i * k + j] = g.normal();
    y[i] = g.normal();
  }
  const csr_matrix sx = csr_extract(matrix(x, n, k));
  CHECK(sx.w.size() < n * k / 2);
  auto m = model([&] {
    auto alpha = normal<"alpha">(0.0, 2.0);
    auto beta = normal<"beta">(0.0, 1.0, shape<k>);
    auto sigma = half_normal<"sigma">(1.0);
    return joint(alpha, beta, sigma, normal(alpha + sparse_matrix(sx, "X") * beta, sigma).observe(data(y)));
  });
  REQUIRE(m.dim() == k + 2);
  const double half_log_2pi = 0.5 * std::log(2 * 3.14159265358979323846);
  for (const auto& t : tyche_test::random_points(10, k + 2, -1.0, 1.0, 707)) {
    const double alpha = t[0], sigma = std::exp(t[k + 1]);
    double lp = -0.5 * alpha * alpha / 4 - std::log(2.0) - half_log_2pi;
    for (std::size_t j = 0; j < k; ++j) lp += -0.5 * t[1 + j] * t[1 + j] - half_log_2pi;
    lp += std::log(2.0) - 0.5 * sigma * sigma - half_log_2pi;  // half_normal(1)
    for (std::size_t i = 0; i < n; ++i) {
      double mu = alpha;
      for (std::size_t j = 0; j < k; ++j) mu += x[i * k + j] * t[1 + j];
      const double z = (y[i] - mu) / sigma;
      lp += -0.5 * z * z - std::log(sigma) - half_log_2pi;
    }
    CHECK(m.log_prob(t, false) == Approx(lp).epsilon(1e-12));
    tyche_test::check_gradient_at(m.program(), t, "a regression on a sparse design matrix");
  }
}

namespace {
using mat = std::vector<double>;
mat mul_ref(const mat& a, const mat& b, std::size_t k) {  // K x K times K x J
  const std::size_t j_cols = b.size() / k;
  mat out(k * j_cols, 0.0);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < j_cols; ++j)
      for (std::size_t p = 0; p < k; ++p) out[i * j_cols + j] += a[i * k + p] * b[p * j_cols + j];
  return out;
}
mat transpose_ref(const mat& a, std::size_t k) {
  mat out(k * k);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j) out[i * k + j] = a[j * k + i];
  return out;
}
/// A x = b by Gaussian elimination with partial pivoting (b one vector).
vec solve_ref(mat a, vec b, std::size_t k) {
  for (std::size_t c = 0; c < k; ++c) {
    std::size_t piv = c;
    for (std::size_t r = c + 1; r < k; ++r)
      if (std::fabs(a[r * k + c]) > std::fabs(a[piv * k + c])) piv = r;
    for (std::size_t j = 0; j < k; ++j) std::swap(a[c * k + j], a[piv * k + j]);
    std::swap(b[c], b[piv]);
    for (std::size_t r = c + 1; r < k; ++r) {
      const double f = a[r * k + c] / a[c * k + c];
      for (std::size_t j = c; j < k; ++j) a[r * k + j] -= f * a[c * k + j];
      b[r] -= f * b[c];
    }
  }
  vec x(k);
  for (std::size_t i = k; i-- > 0;) {
    double acc = b[i];
    for (std::size_t j = i + 1; j < k; ++j) acc -= a[i * k + j] * x[j];
    x[i] = acc / a[i * k + i];
  }
  return x;
}
/// det A by elimination with partial pivoting: the pivots' product, its sign flipped per swap.
double det_ref(mat a, std::size_t k) {
  double r = 1;
  for (std::size_t c = 0; c < k; ++c) {
    std::size_t piv = c;
    for (std::size_t rr = c + 1; rr < k; ++rr)
      if (std::fabs(a[rr * k + c]) > std::fabs(a[piv * k + c])) piv = rr;
    if (piv != c) r = -r;
    for (std::size_t j = 0; j < k; ++j) std::swap(a[c * k + j], a[piv * k + j]);
    r *= a[c * k + c];
    for (std::size_t rr = c + 1; rr < k; ++rr) {
      const double f = a[rr * k + c] / a[c * k + c];
      for (std::size_t j = c; j < k; ++j) a[rr * k + j] -= f * a[c * k + j];
    }
  }
  return r;
}
/// log |det A| by the same elimination.
double log_det_ref(mat a, std::size_t k) {
  double r = 0;
  for (std::size_t c = 0; c < k; ++c) {
    std::size_t piv = c;
    for (std::size_t rr = c + 1; rr < k; ++rr)
      if (std::fabs(a[rr * k + c]) > std::fabs(a[piv * k + c])) piv = rr;
    for (std::size_t j = 0; j < k; ++j) std::swap(a[c * k + j], a[piv * k + j]);
    r += std::log(std::fabs(a[c * k + c]));
    for (std::size_t rr = c + 1; rr < k; ++rr) {
      const double f = a[rr * k + c] / a[c * k + c];
      for (std::size_t j = c; j < k; ++j) a[rr * k + j] -= f * a[c * k + j];
    }
  }
  return r;
}
}  // namespace

TEST_CASE("linear algebra of square matrices: matmul, transpose, diagonal, trace, diag_post_multiply, quad_form_diag, "
          "quad_form, tcrossprod, crossprod against plain loops; values and gradients",
          "[operations][vector_functions][linear_algebra]") {
  constexpr std::size_t K = 3;
  vector_param<"a", 9> a;
  vector_param<"b", 9> b;
  vector_param<"v", 3> v;
  const mat dm{1.0, 0.5, -0.25, 2.0, -1.0, 0.75, 0.5, 0.25, 1.5};  // a data matrix
  const vec w9{0.5, -1.0, 1.5, 0.25, 2.0, -0.5, 1.0, 0.75, -1.25};
  const vec w3{0.5, -1.5, 1.0};
  const vec w6{1.0, -0.5, 0.25, 2.0, -1.0, 0.5};
  const auto f = compile(dot(data(w9), matmul(a, b)) + dot(data(w3), matmul(a, v)) +
                             dot(data(w6), matmul(matrix(dm, K, K), append_row(v, exp(v)) * 1.0)) +
                             dot(data(w9), transpose(a)) * at(v, 0) + trace(matmul(a, a)) +
                             dot(data(w3), diagonal(b)) + dot(data(w9), diag_post_multiply(a, exp(v))) +
                             dot(data(w9), quad_form_diag(b, v)) + quad_form(a, v) +
                             dot(data(w9), tcrossprod(a)) + dot(data(w9), crossprod(b)),
                         a, b, v);
  auto expected = [&](const vec& t) {
    const mat aa = slice(t, 0, 9), bb = slice(t, 9, 9);
    const vec vv = slice(t, 18, 3);
    vec ev = vv;
    for (double& x : ev) x = std::exp(x);
    double r = dot_ref(w9, mul_ref(aa, bb, K)) + dot_ref(w3, mul_ref(aa, vv, K));
    // append_row(v, exp(v)) is 6 values: the 3 x 2 matrix [v₀ v₁; v₂ e^v₀; e^v₁ e^v₂] row major.
    vec six = vv;
    six.insert(six.end(), ev.begin(), ev.end());
    r += dot_ref(w6, mul_ref(dm, six, K));
    r += dot_ref(w9, transpose_ref(aa, K)) * vv[0];
    const mat a2 = mul_ref(aa, aa, K);
    r += a2[0] + a2[4] + a2[8];
    r += w3[0] * bb[0] + w3[1] * bb[4] + w3[2] * bb[8];
    for (std::size_t i = 0; i < K; ++i)
      for (std::size_t j = 0; j < K; ++j) {
        r += w9[i * K + j] * aa[i * K + j] * ev[j];
        r += w9[i * K + j] * vv[i] * bb[i * K + j] * vv[j];
        r += vv[i] * aa[i * K + j] * vv[j];
      }
    r += dot_ref(w9, mul_ref(aa, transpose_ref(aa, K), K)) + dot_ref(w9, mul_ref(transpose_ref(bb, K), bb, K));
    return r;
  };
  const auto pts = tyche_test::random_points(20, 21, -1.0, 1.0, 808);
  for (const auto& t : pts) CHECK(f.value(t) == Approx(expected(t)).epsilon(1e-12));
  check_program(f, pts, "matmul, transpose, diagonal, trace, diag_post_multiply, quad_form_diag, quad_form, tcrossprod");

  vector_param<"q", 4> q;
  CHECK_THROWS_WITH(matmul(a, q), Contains("tyche::matmul(A, B): 'A' is 3 x 3 but 'B' has 4 values (K*J: a K x J matrix, row major)"));
  CHECK_THROWS_WITH(diag_post_multiply(a, q), Contains("'M' has 9 entries but 'v' has size 4"));
  vector_param<"r", 5> r5;
  CHECK_THROWS_WITH(transpose(r5), Contains("tyche::transpose(A): 'A' has 5 values, which is not the number of entries of a square matrix"));
}

TEST_CASE("linear algebra of square matrices: mdivide_left_tri_low, mdivide_right_tri_low, mdivide_left_spd, "
          "inverse_spd and log_determinant_spd against elimination; values and gradients",
          "[operations][vector_functions][linear_algebra]") {
  constexpr std::size_t K = 3;
  // L a Cholesky factor of parameters (positive diagonal), b vectors; C = L Lᵀ + I, SPD.
  vector_param<"u", 6> u;
  vector_param<"b", 6> b;
  const transforms::cholesky_factor_cov chol{K};
  const auto l = chol.constrain(u);
  const auto c = add_diag(multiply_lower_tri_self_transpose(l), 1.0);
  const vec w3{0.5, -1.5, 1.0};
  const vec w6{1.0, -0.5, 0.25, 2.0, -1.0, 0.5};
  const vec w9{0.5, -1.0, 1.5, 0.25, 2.0, -0.5, 1.0, 0.75, -1.25};
  const auto f = compile(dot(data(w6), mdivide_left_tri_low(l, b)) + dot(data(w3), mdivide_right_tri_low(head<3>(b), l)) +
                             dot(data(w6), mdivide_right_tri_low(b * b, l)) +
                             dot(data(w6), mdivide_left_spd(c, exp(b))) + dot(data(w9), inverse_spd(c)) +
                             log_determinant_spd(c) + 0.5 * log_determinant_spd(matmul(l, transpose(l))),
                         u, b);
  auto factor = [&](const vec& uu) {
    mat lm(K * K, 0.0);
    std::size_t p = 0;
    for (std::size_t i = 0; i < K; ++i)
      for (std::size_t j = 0; j <= i; ++j, ++p) lm[i * K + j] = j == i ? std::exp(uu[p]) : uu[p];
    return lm;
  };
  auto expected = [&](const vec& t) {
    const mat lm = factor(slice(t, 0, 6));
    const vec bb = slice(t, 6, 6);
    mat cm = mul_ref(lm, transpose_ref(lm, K), K);
    for (std::size_t i = 0; i < K; ++i) cm[i * K + i] += 1.0;
    double r = 0;
    for (std::size_t j = 0; j < 2; ++j) {  // B = b as a 3 x 2 matrix, row major: column j at stride 2
      vec col(K), ecol(K);
      for (std::size_t i = 0; i < K; ++i) {
        col[i] = bb[i * 2 + j];
        ecol[i] = std::exp(col[i]);
      }
      const vec x = solve_ref(lm, col, K);
      const vec y = solve_ref(cm, ecol, K);
      for (std::size_t i = 0; i < K; ++i) r += w6[i * 2 + j] * (x[i] + y[i]);
      // (b * b) as a 2 x 3 matrix, row major: row j solved as L⁻ᵀ rowᵀ.
      vec row = slice(bb, j * K, K);
      for (double& e : row) e *= e;
      const vec z = solve_ref(transpose_ref(lm, K), row, K);
      for (std::size_t i = 0; i < K; ++i) r += w6[j * K + i] * z[i];
    }
    r += dot_ref(w3, solve_ref(transpose_ref(lm, K), slice(bb, 0, K), K));  // b L⁻¹ = (L⁻ᵀ bᵀ)ᵀ
    for (std::size_t j = 0; j < K; ++j) {
      vec e(K, 0.0);
      e[j] = 1.0;
      const vec col = solve_ref(cm, e, K);
      for (std::size_t i = 0; i < K; ++i) r += w9[i * K + j] * col[i];
    }
    return r + log_det_ref(cm, K) + 0.5 * log_det_ref(mul_ref(lm, transpose_ref(lm, K), K), K);
  };
  const auto pts = tyche_test::random_points(20, 12, -1.0, 1.0, 809);
  for (const auto& t : pts) CHECK(f.value(t) == Approx(expected(t)).epsilon(1e-11));
  check_program(f, pts, "mdivide_left_tri_low, mdivide_right_tri_low, mdivide_left_spd, inverse_spd, log_determinant_spd");

  // A matrix that is not positive definite gives NaN (a rejected point), not an exception.
  const auto g = compile(log_determinant_spd(add_diag(multiply_lower_tri_self_transpose(l), -5.0)) +
                             sum(inverse_spd(add_diag(multiply_lower_tri_self_transpose(l), -5.0))),
                         u);
  CHECK(std::isnan(g.value(vec(6, 0.0))));
  vector_param<"q", 4> q;
  CHECK_THROWS_WITH(mdivide_left_tri_low(l, q),
                    Contains("tyche::mdivide_left_tri_low(L, B): 'L' is 3 x 3 but 'B' has 4 values (K*J: a K x J matrix, row major)"));
  // Data arguments are checked: shapes, a zero on a triangular factor's diagonal, an A that is
  // not symmetric or not positive definite; quad_form takes a vector of K.
  const vec zero_diag{1.0, 0.0, 0.0, 0.5, 0.0, 0.0, 0.2, 0.1, 2.0};
  CHECK_THROWS_WITH(mdivide_left_tri_low(data(zero_diag), b),
                    Contains("tyche::mdivide_left_tri_low(L, B): L[2, 2] = 0: a triangular matrix to solve with needs a non-zero diagonal"));
  const vec not_sym{2.0, 0.5, 0.0, 0.4, 2.0, 0.0, 0.0, 0.0, 2.0};
  CHECK_THROWS_WITH(inverse_spd(matrix(not_sym, K, K)), Contains("tyche::inverse_spd(A): A is not symmetric: A[2, 1] = 0.4 but A[1, 2] = 0.5"));
  const vec not_pd{1.0, 2.0, 0.0, 2.0, 1.0, 0.0, 0.0, 0.0, 1.0};
  CHECK_THROWS_WITH(log_determinant_spd(data(not_pd)) + at(b, 0), Contains("tyche::log_determinant_spd(A): A is not positive definite (pivot 2 is -3)"));
  CHECK_THROWS_WITH(mdivide_left_spd(matrix(not_pd, K, K), b), Contains("A is not positive definite"));
  const vec wide(16, 1.0);
  CHECK_THROWS_WITH(matmul(matrix(wide, 2, 8), q), Contains("tyche::matmul(A, B): 'A' is 2 x 8 but must be square"));
  CHECK_THROWS_WITH(matmul(l, matrix(w6, 2, 3)), Contains("tyche::matmul(A, B): 'B' is 2 x 3 but must be 3 x J"));
  vector_param<"m9", 9> m9;
  CHECK_THROWS_WITH(quad_form(l, m9), Contains("tyche::quad_form(A, v): 'A' is 3 x 3 but 'v' has size 9"));
}

TEST_CASE("linear algebra of general square matrices: inverse, determinant, log_determinant, mdivide_left and "
          "mdivide_right against elimination with partial pivoting; values, gradients, lanes that pivot differently",
          "[operations][vector_functions][linear_algebra]") {
  constexpr std::size_t K = 3;
  // u: a general 3 x 3 matrix of parameters (random points: each lane of a batch pivots on its own
  // rows); A = u + 3 P with P a cyclic permutation: well conditioned, and its zero diagonal makes
  // every elimination swap rows.
  vector_param<"u", 9> u;
  vector_param<"b", 6> b;
  const vec perm3{0.0, 0.0, 3.0, 3.0, 0.0, 0.0, 0.0, 3.0, 0.0};
  const vec m_data{2.0, 1.0, 0.5, -1.0, 0.25, 3.0, 0.5, 4.0, -1.0};  // data, not symmetric
  const auto a = u + data(perm3);
  const vec w3{0.5, -1.5, 1.0};
  const vec w6{1.0, -0.5, 0.25, 2.0, -1.0, 0.5};
  const vec w9{0.5, -1.0, 1.5, 0.25, 2.0, -0.5, 1.0, 0.75, -1.25};
  const auto f = compile(determinant(u) + log_determinant(a) - 0.5 * determinant(a) + dot(data(w9), inverse(a)) +
                             dot(data(w6), mdivide_left(a, b)) + dot(data(w6), mdivide_right(b, a)) +
                             dot(data(w3), mdivide_right(head<3>(b), transpose(a))) +
                             dot(data(w6), mdivide_left(matrix(m_data, K, K), exp(b))),
                         u, b);
  auto expected = [&](const vec& t) {
    const mat uu = slice(t, 0, 9);
    const vec bb = slice(t, 9, 6);
    mat am = uu;
    for (std::size_t e = 0; e < K * K; ++e) am[e] += perm3[e];
    double r = det_ref(uu, K) + log_det_ref(am, K) - 0.5 * det_ref(am, K);
    for (std::size_t j = 0; j < K; ++j) {  // A⁻¹ column by column
      vec e(K, 0.0);
      e[j] = 1.0;
      const vec col = solve_ref(am, e, K);
      for (std::size_t i = 0; i < K; ++i) r += w9[i * K + j] * col[i];
    }
    for (std::size_t j = 0; j < 2; ++j) {
      vec col(K), ecol(K);  // B as a 3 x 2 matrix: column j at stride 2
      for (std::size_t i = 0; i < K; ++i) {
        col[i] = bb[i * 2 + j];
        ecol[i] = std::exp(col[i]);
      }
      const vec x = solve_ref(am, col, K);
      const vec y = solve_ref(m_data, ecol, K);
      for (std::size_t i = 0; i < K; ++i) r += w6[i * 2 + j] * (x[i] + y[i]);
      const vec z = solve_ref(transpose_ref(am, K), slice(bb, j * K, K), K);  // row j of B (2 x 3): zᵀ = A⁻ᵀ rowᵀ
      for (std::size_t i = 0; i < K; ++i) r += w6[j * K + i] * z[i];
    }
    return r + dot_ref(w3, solve_ref(am, slice(bb, 0, K), K));  // b (Aᵀ)⁻¹ = (A⁻¹ bᵀ)ᵀ
  };
  const auto pts = tyche_test::random_points(20, 15, -1.0, 1.0, 811);
  for (const auto& t : pts) CHECK(f.value(t) == Approx(expected(t)).epsilon(1e-11));
  check_program(f, pts, "inverse, determinant, log_determinant, mdivide_left, mdivide_right");

  // Pivoting: without it, [[1e-20, 1], [1, 1]] loses its inverse ([[-1, 1], [1, -1e-20]] to
  // rounding) to the tiny first pivot, and its determinant (-1) too.
  vector_param<"t", 4> t4;
  const vec tiny{1e-20, 1.0, 1.0, 1.0};
  const vec tiny_inverse{-1.0, 1.0, 1.0, -1e-20};
  for (std::size_t e = 0; e < 4; ++e)
    CHECK(compile(at(inverse(t4), e), t4).value(tiny) == Approx(tiny_inverse[e]).margin(1e-15));
  CHECK(compile(determinant(t4), t4).value(tiny) == Approx(-1.0).epsilon(1e-15));
  // A singular matrix: determinant 0, log_determinant −∞, the inverse non-finite (a rejected point).
  const auto g = compile(determinant(u), u);
  const auto h = compile(log_determinant(u), u);
  const auto q = compile(sum(inverse(u)), u);
  const vec singular{1.0, 2.0, 3.0, 2.0, 4.0, 6.0, 0.5, -1.0, 2.0};  // row 2 = 2 row 1
  CHECK(g.value(singular) == Approx(0.0).margin(1e-12));
  CHECK(h.value(singular) == -std::numeric_limits<double>::infinity());
  CHECK(!std::isfinite(q.value(singular)));
  // An exactly zero pivot: the determinant 0 and its log −∞, not NaN (a zero column; a zero matrix).
  CHECK(compile(determinant(t4), t4).value(vec{0.0, 1.0, 0.0, 1.0}) == 0.0);
  CHECK(compile(log_determinant(t4), t4).value(vec{0.0, 1.0, 0.0, 1.0}) == -std::numeric_limits<double>::infinity());
  CHECK(compile(determinant(t4), t4).value(vec(4, 0.0)) == 0.0);
  CHECK(compile(determinant(u), u).value(vec{1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0}) == 0.0);
  // Data arguments are checked: a singular A of a solve or inverse (exactly, or to working
  // precision: [[1, 2, 3], [4, 5, 6], [7, 8, 9]] has a last pivot of 1.1e-16), shapes.
  const vec near_singular{1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0};
  CHECK_THROWS_WITH(mdivide_left(matrix(near_singular, K, K), b),
                    Contains("tyche::mdivide_left(A, B): A is singular (pivot 3 of elimination with partial pivoting is"));
  const vec sing_data{1.0, 2.0, 0.0, 2.0, 4.0, 0.0, 0.0, 0.0, 1.0};
  CHECK_THROWS_WITH(inverse(matrix(sing_data, K, K)),
                    Contains("tyche::inverse(A): A is singular (pivot 2 of elimination with partial pivoting is 0, against 4"));
  CHECK_THROWS_WITH(mdivide_left(data(sing_data), b), Contains("tyche::mdivide_left(A, B): A is singular"));
  CHECK_THROWS_WITH(mdivide_right(b, matrix(sing_data, K, K)), Contains("tyche::mdivide_right(B, A): A is singular"));
  vector_param<"q4", 4> q4;
  CHECK_THROWS_WITH(mdivide_left(a, q4), Contains("tyche::mdivide_left(A, B): 'A' is 3 x 3 but 'B' has 4 values"));
  CHECK_THROWS_WITH(mdivide_right(q4, a), Contains("tyche::mdivide_right(B, A): 'B' has 4 values, which is not a multiple of K = 3"));
  // B a data matrix (J x K) in mdivide_right too.
  const vec b_data{1.0, 2.0, 3.0, -1.0, 0.5, 2.0};
  const auto rd = compile(sum(mdivide_right(matrix(b_data.data(), 2, 3), a)), u);
  CHECK(rd.value(slice(pts[0], 0, 9)) ==
        Approx(compile(sum(mdivide_right(data(b_data), a)), u).value(slice(pts[0], 0, 9))).epsilon(1e-14));
  vector_param<"r5", 5> r5;
  CHECK_THROWS_WITH(log_determinant(r5), Contains("tyche::log_determinant(A): 'A' has 5 values, which is not"));
  CHECK_THROWS_WITH(inverse(r5), Contains("inverse of a vector is Stan's matrix inverse; 1/x elementwise is inv(v)"));
}

namespace {
/// e^A by its power series in long double, without scaling (for ‖A‖ of a few units: 80 terms).
mat exp_series_ref(const mat& a, std::size_t k) {
  std::vector<long double> term(k * k, 0.0L), sum(k * k, 0.0L), next(k * k);
  for (std::size_t i = 0; i < k; ++i) term[i * k + i] = sum[i * k + i] = 1.0L;
  for (int j = 1; j <= 80; ++j) {
    for (std::size_t r = 0; r < k; ++r)
      for (std::size_t c = 0; c < k; ++c) {
        long double acc = 0;
        for (std::size_t p = 0; p < k; ++p) acc += term[r * k + p] * a[p * k + c];
        next[r * k + c] = acc / j;
      }
    term = next;
    for (std::size_t e = 0; e < k * k; ++e) sum[e] += term[e];
  }
  return mat(sum.begin(), sum.end());
}
}  // namespace

TEST_CASE("matrix_exp, matrix_exp_multiply, scale_matrix_exp_multiply, matrix_power: values against series, closed "
          "forms and products; gradients, lanes with different numbers of squarings",
          "[operations][vector_functions][linear_algebra]") {
  constexpr std::size_t K = 3;
  vector_param<"u", 9> u;
  vector_param<"b", 6> b;
  param<"t"> t;
  const vec w9{0.5, -1.0, 1.5, 0.25, 2.0, -0.5, 1.0, 0.75, -1.25};
  const vec w6{1.0, -0.5, 0.25, 2.0, -1.0, 0.5};
  // u scaled by 2: entries in [-2, 2], ‖A‖₁ up to 6, so the lanes of a batch square 0 to 4 times.
  const auto f = compile(dot(data(w9), matrix_exp(2.0 * u)) + dot(data(w6), matrix_exp_multiply(u, b)) +
                             dot(data(w6), scale_matrix_exp_multiply(t, u, b)) + dot(data(w9), matrix_power(u, 3)) +
                             sum(matrix_power(u, 1)) + sum(matrix_power(u, 0)),
                         u, b, t);
  auto expected = [&](const vec& p) {
    const mat uu = slice(p, 0, 9);
    const vec bb = slice(p, 9, 6);
    mat u2 = uu, ut = uu;
    for (double& e : u2) e *= 2.0;
    for (double& e : ut) e *= p[15];
    const mat e2 = exp_series_ref(u2, K), e1 = exp_series_ref(uu, K), et = exp_series_ref(ut, K);
    double r = dot_ref(w9, e2) + dot_ref(w6, mul_ref(e1, bb, K)) + dot_ref(w6, mul_ref(et, bb, K)) +
               dot_ref(w9, mul_ref(mul_ref(uu, uu, K), uu, K));
    for (double e : uu) r += e;
    return r + 3.0;  // A⁰ = I
  };
  const auto pts = tyche_test::random_points(20, 16, -1.0, 1.0, 812);
  for (const auto& p : pts) CHECK(f.value(p) == Approx(expected(p)).epsilon(1e-12));
  check_program(f, pts, "matrix_exp, matrix_exp_multiply, scale_matrix_exp_multiply, matrix_power");

  // Closed forms where the norm needs many squarings: e^{θJ} for J = [[0, 1], [-1, 0]] is the
  // rotation [[cos θ, sin θ], [-sin θ, cos θ]]; e^{[[a, c], [0, d]]} = [[eᵃ, c (eᵃ − eᵈ)/(a − d)], [0, eᵈ]].
  vector_param<"v", 4> v;
  const auto rot = [&](std::size_t e) { return compile(at(matrix_exp(v), e), v); };
  for (double theta : {0.1, 3.0, 40.0}) {
    const vec j{0.0, theta, -theta, 0.0};
    const vec want{std::cos(theta), std::sin(theta), -std::sin(theta), std::cos(theta)};
    for (std::size_t e = 0; e < 4; ++e) CHECK(rot(e).value(j) == Approx(want[e]).margin(1e-12 * theta));
  }
  // A norm that overflows although the entries are finite: [[−c, 0], [−c, 0]] has A² = −c A, so
  // e^A = I + (e^{−c} − 1)/(−c) A, [[0, 0], [−1, 1]] to rounding for c = 1e308.
  const vec huge{-1e308, 0.0, -1e308, 0.0};
  const vec huge_exp{0.0, 0.0, -1.0, 1.0};
  for (std::size_t e = 0; e < 4; ++e) CHECK(rot(e).value(huge) == Approx(huge_exp[e]).margin(1e-12));
  // t a number in scale_matrix_exp_multiply.
  CHECK(compile(sum(scale_matrix_exp_multiply(0.5, u, b)), u, b).value(slice(pts[0], 0, 15)) ==
        Approx(compile(sum(matrix_exp_multiply(0.5 * u, b)), u, b).value(slice(pts[0], 0, 15))).epsilon(1e-14));
  const vec tri{2.5, -7.0, 0.0, -1.5};
  const vec tri_exp{std::exp(2.5), -7.0 * (std::exp(2.5) - std::exp(-1.5)) / 4.0, 0.0, std::exp(-1.5)};
  for (std::size_t e = 0; e < 4; ++e) CHECK(rot(e).value(tri) == Approx(tri_exp[e]).epsilon(1e-13).margin(1e-300));
  // A non-finite matrix gives a non-finite exponential (a rejected point), and no endless loop.
  CHECK(!std::isfinite(compile(sum(matrix_exp(v)), v).value(vec{1.0, std::numeric_limits<double>::infinity(), 0.0, 1.0})));
  CHECK(std::isnan(compile(sum(matrix_exp(v)), v).value(vec{1.0, std::nan(""), 0.0, 1.0})));
  // Errors: a negative power, shapes.
  CHECK_THROWS_WITH(matrix_power(v, -1), Contains("tyche::matrix_power(A, n): n = -1 must be >= 0"));
  vector_param<"q5", 5> q5;
  CHECK_THROWS_WITH(matrix_exp(q5), Contains("tyche::matrix_exp(A): 'A' has 5 values, which is not"));
  CHECK_THROWS_WITH(matrix_exp_multiply(u, q5), Contains("tyche::matrix_exp_multiply(A, B): 'A' is 3 x 3 but 'B' has 5 values"));
}

namespace {
/// The eigenvalues of a symmetric 3 × 3 matrix (lower triangle of a), ascending, by the
/// trigonometric solution of its characteristic cubic (Smith, Comm. ACM 4, 1961).
vec eigenvalues3_ref(const vec& a) {
  const double a00 = a[0], a11 = a[4], a22 = a[8], a10 = a[3], a20 = a[6], a21 = a[7];
  const double q = (a00 + a11 + a22) / 3;
  const double p1 = a10 * a10 + a20 * a20 + a21 * a21;
  const double p = std::sqrt(((a00 - q) * (a00 - q) + (a11 - q) * (a11 - q) + (a22 - q) * (a22 - q) + 2 * p1) / 6);
  const double b00 = (a00 - q) / p, b11 = (a11 - q) / p, b22 = (a22 - q) / p, b10 = a10 / p, b20 = a20 / p,
               b21 = a21 / p;
  const double r = (b00 * (b11 * b22 - b21 * b21) - b10 * (b10 * b22 - b21 * b20) + b20 * (b10 * b21 - b11 * b20)) / 2;
  const double phi = std::acos(std::clamp(r, -1.0, 1.0)) / 3;
  const double hi = q + 2 * p * std::cos(phi), lo = q + 2 * p * std::cos(phi + 2.0943951023931954923);
  return {lo, 3 * q - hi - lo, hi};
}
}  // namespace

TEST_CASE("eigenvalues_sym and eigenvectors_sym: values against the cubic's closed form, A V = V diag(lambda), "
          "orthonormal V, gradients, lanes that converge in different numbers of sweeps",
          "[operations][vector_functions][linear_algebra]") {
  constexpr std::size_t K = 3;
  vector_param<"u", 9> u;  // the lower triangle is the matrix; the upper is not read
  const vec w3{0.5, -1.5, 1.0};
  const vec w9{0.5, -1.0, 1.5, 0.25, 2.0, -0.5, 1.0, 0.75, -1.25};
  // Squares of the eigenvectors' components: independent of each column's sign.
  const auto f = compile(dot(data(w3), eigenvalues_sym(u)) + dot(data(w9), square(eigenvectors_sym(u))), u);
  const auto pts = tyche_test::random_points(20, 9, -1.0, 1.0, 813);
  const auto lam = [&](std::size_t i) { return compile(at(eigenvalues_sym(u), i), u); };
  const auto vec_at = [&](std::size_t e) { return compile(at(eigenvectors_sym(u), e), u); };
  for (const auto& p : pts) {
    const vec ref = eigenvalues3_ref(p);
    vec l(K), v(K * K);
    for (std::size_t i = 0; i < K; ++i) {
      l[i] = lam(i).value(p);
      CHECK(l[i] == Approx(ref[i]).margin(1e-13));
    }
    for (std::size_t e = 0; e < K * K; ++e) v[e] = vec_at(e).value(p);
    for (std::size_t i = 0; i < K; ++i)
      for (std::size_t m = 0; m < K; ++m) {
        double av = 0, vv = 0;  // (A V)ᵢₘ against λₘ Vᵢₘ; (Vᵀ V)ᵢₘ against δᵢₘ
        for (std::size_t j = 0; j < K; ++j) {
          av += (i >= j ? p[i * K + j] : p[j * K + i]) * v[j * K + m];
          vv += v[j * K + i] * v[j * K + m];
        }
        CHECK(av == Approx(l[m] * v[i * K + m]).margin(1e-13));
        CHECK(vv == Approx(i == m ? 1.0 : 0.0).margin(1e-14));
      }
  }
  check_program(f, pts, "eigenvalues_sym, eigenvectors_sym");

  // A diagonal matrix (no rotation at all), a repeated eigenvalue's values, a data matrix that
  // is not symmetric, a non-finite entry.
  const vec diag{3.0, 9.0, 9.0, 0.0, -1.0, 9.0, 0.0, 0.0, 2.0};  // upper triangle ignored
  CHECK(lam(0).value(diag) == -1.0);
  CHECK(lam(1).value(diag) == 2.0);
  CHECK(lam(2).value(diag) == 3.0);
  const vec repeated{2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 0.0, 3.0};  // eigenvalues 1, 3, 3
  CHECK(lam(0).value(repeated) == Approx(1.0).epsilon(1e-14));
  CHECK(lam(1).value(repeated) == Approx(3.0).epsilon(1e-14));
  CHECK(lam(2).value(repeated) == Approx(3.0).epsilon(1e-14));
  // Scale: s [[0, 1], [1, 0]] has eigenvalues ±s and vectors at 45° for tiny and huge s (the
  // stopping test's squared norms neither underflow nor overflow).
  vector_param<"e4", 4> e4;
  for (double sc : {1e-170, 1e160}) {
    const vec m2{0.0, sc, sc, 0.0};
    CHECK(compile(at(eigenvalues_sym(e4), 0), e4).value(m2) == Approx(-sc).epsilon(1e-14));
    CHECK(compile(at(eigenvalues_sym(e4), 1), e4).value(m2) == Approx(sc).epsilon(1e-14));
    CHECK(std::fabs(compile(at(eigenvectors_sym(e4), 0), e4).value(m2)) == Approx(std::sqrt(0.5)).epsilon(1e-14));
  }
  const vec not_sym{1.0, 0.5, 0.0, 0.4, 1.0, 0.0, 0.0, 0.0, 1.0};
  CHECK_THROWS_WITH(eigenvalues_sym(matrix(not_sym, K, K)),
                    Contains("tyche::eigenvalues_sym(A): A is not symmetric: A[2, 1] = 0.4 but A[1, 2] = 0.5"));
  CHECK(std::isnan(lam(0).value(vec{1.0, 0.0, 0.0, std::nan(""), 1.0, 0.0, 0.0, 0.0, 1.0})));
}

TEST_CASE("rectangular matrices: matmul(A, B, K), transpose(A, R), tcrossprod(A, K), crossprod(A, K) against loops; "
          "a data design matrix times a coefficient matrix; gradients, lanes, shape errors",
          "[operations][vector_functions][linear_algebra]") {
  // A: 3 x 2 parameters (loadings), B: 2 x 4 parameters, X: 5 x 2 data.
  vector_param<"a", 6> a;
  vector_param<"b", 8> b;
  const vec x{1.0, -2.0, 0.5, 3.0, -1.5, 0.25, 2.0, 1.0, -0.5, -1.0};
  const vec w4{0.5, -1.0, 2.0, 0.25};
  vec w(20), w9(9), w6(6);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.1 * double(i) - 0.7;
  for (std::size_t i = 0; i < w9.size(); ++i) w9[i] = 0.3 * double(i) - 1.1;
  for (std::size_t i = 0; i < w6.size(); ++i) w6[i] = 0.5 - 0.2 * double(i);
  const auto f = compile(dot(data(w), matmul(matrix(x.data(), 5, 2), b, 2)) + dot(data(w9), tcrossprod(a, 2)) +
                             dot(data(w4), crossprod(a, 2)) + dot(data(w6), transpose(a, 3)) +
                             sum(square(matmul(a, b, 2))),
                         a, b);
  auto mul = [](const vec& p, const vec& q, std::size_t r, std::size_t k) {  // (r x k)(k x j)
    const std::size_t j = q.size() / k;
    vec out(r * j, 0.0);
    for (std::size_t i = 0; i < r; ++i)
      for (std::size_t c = 0; c < j; ++c)
        for (std::size_t t = 0; t < k; ++t) out[i * j + c] += p[i * k + t] * q[t * j + c];
    return out;
  };
  auto tr = [](const vec& p, std::size_t r) {
    const std::size_t c = p.size() / r;
    vec out(p.size());
    for (std::size_t i = 0; i < r; ++i)
      for (std::size_t j = 0; j < c; ++j) out[j * r + i] = p[i * c + j];
    return out;
  };
  auto expected = [&](const vec& p) {
    const vec aa = slice(p, 0, 6), bb = slice(p, 6, 8);
    double r = dot_ref(w, mul(x, bb, 5, 2)) + dot_ref(w9, mul(aa, tr(aa, 3), 3, 2)) + dot_ref(w4, mul(tr(aa, 3), aa, 2, 3)) +
               dot_ref(w6, tr(aa, 3));
    for (double e : mul(aa, bb, 3, 2)) r += e * e;
    return r;
  };
  const auto pts = tyche_test::random_points(20, 14, -1.0, 1.0, 814);
  for (const auto& p : pts) CHECK(f.value(p) == Approx(expected(p)).epsilon(1e-12));
  check_program(f, pts, "matmul(A, B, K), transpose(A, R), tcrossprod(A, K), crossprod(A, K)");

  vector_param<"q5", 5> q5;
  CHECK_THROWS_WITH(matmul(a, q5, 2), Contains("tyche::matmul(A, B, K): 'B' has 5 values, which is not a multiple of K = 2"));
  CHECK_THROWS_WITH(matmul(q5, b, 2), Contains("tyche::matmul(A, B, K): 'A' has 5 values, which is not a multiple of K = 2"));
  CHECK_THROWS_WITH(matmul(matrix(x.data(), 5, 2), b, 4), Contains("tyche::matmul(A, B, K): 'A' is 5 x 2 but K = 4"));
  CHECK_THROWS_WITH(transpose(q5, 2), Contains("tyche::transpose(A, R)"));
  CHECK_THROWS_WITH(tcrossprod(a, 4), Contains("tyche::tcrossprod(A, K): 'A' has 6 values, which is not a multiple of K = 4"));
}
