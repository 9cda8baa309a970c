// qr_thin_Q, qr_thin_R, qr_Q and qr_R (the op in tyche/autodiff/qr.hpp, the functions in
// tyche/operations/matrices.hpp): for tall, wide and square matrices, the thin factors against
// Gram–Schmidt in long double (unique where R's diagonal is positive), Q R = A and the
// orthogonality of a full Q (1e-13); a full Q's completion worked by hand from Eigen's
// Householder convention (Stan's); gradients of each factor against Richardson-extrapolated
// finite differences and SIMD lanes (tests/support/property.hpp), with lanes where a column
// needs no reflection beside lanes where it does; data matrices (a QR reparameterised
// regression), scaling, errors.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "support/property.hpp"

using namespace tyche;
using Catch::Matchers::Contains;

namespace {
using vec = std::vector<double>;

using tyche_test::values_of;

/// The thin QR of an R × K matrix by modified Gram–Schmidt in long double on its first k =
/// min(R, K) columns (the others projected onto Q): Q (R × k), R (k × K), R's diagonal positive.
void gram_schmidt(const vec& a, std::size_t rows, std::size_t cols, vec& q, vec& r) {
  const std::size_t k = std::min(rows, cols);
  std::vector<long double> qq(rows * k, 0.0L), rr(k * cols, 0.0L);
  for (std::size_t j = 0; j < cols; ++j) {
    std::vector<long double> v(rows);
    for (std::size_t i = 0; i < rows; ++i) v[i] = a[i * cols + j];
    for (std::size_t l = 0; l < std::min(j, k); ++l) {
      long double d = 0;
      for (std::size_t i = 0; i < rows; ++i) d += qq[i * k + l] * v[i];
      rr[l * cols + j] = d;
      for (std::size_t i = 0; i < rows; ++i) v[i] -= d * qq[i * k + l];
    }
    if (j < k) {
      long double n = 0;
      for (std::size_t i = 0; i < rows; ++i) n += v[i] * v[i];
      n = std::sqrt(n);
      rr[j * cols + j] = n;
      for (std::size_t i = 0; i < rows; ++i) qq[i * k + j] = v[i] / n;
    }
  }
  q.assign(qq.begin(), qq.end());
  r.assign(rr.begin(), rr.end());
}

void check_close(const vec& got, const vec& want, double tol, const char* what) {
  REQUIRE(got.size() == want.size());
  for (std::size_t e = 0; e < got.size(); ++e) {
    INFO(what << " entry " << e);
    CHECK(got[e] == Approx(want[e]).margin(tol));
  }
}

/// Q (R × R) orthogonal and Q R = A for R (R × K).
void check_full(const vec& a, const vec& q, const vec& r, std::size_t rows, std::size_t cols) {
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < rows; ++j) {
      double d = 0;
      for (std::size_t l = 0; l < rows; ++l) d += q[l * rows + i] * q[l * rows + j];
      CHECK(d == Approx(i == j ? 1.0 : 0.0).margin(1e-13));
    }
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t c = 0; c < cols; ++c) {
      double d = 0;
      for (std::size_t l = 0; l < rows; ++l) d += q[i * rows + l] * r[l * cols + c];
      CHECK(d == Approx(a[i * cols + c]).margin(1e-13));
    }
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t c = 0; c < std::min(i, cols); ++c) CHECK(r[i * cols + c] == 0.0);
}
}  // namespace

TEST_CASE("qr_thin_Q, qr_thin_R, qr_Q, qr_R: tall, wide and square matrices against Gram-Schmidt, gradients, lanes",
          "[autodiff][qr][linear_algebra]") {
  vector_param<"A", 6> a;
  const vec w6{0.5, -1.0, 1.5, 0.25, 2.0, -0.5}, w4{0.75, -1.25, 0.5, 2.0}, w9{0.5, -1.0, 1.5, 0.25, 2.0,
                                                                              -0.5, 1.0, 0.75, -1.25};
  auto pts = tyche_test::random_points(12, 6, -1.0, 1.0, 911);
  for (const std::size_t rows : {3, 2}) {  // 3 × 2 (tall) and 2 × 3 (wide)
    const std::size_t cols = 6 / rows, k = 2;
    INFO(rows << " x " << cols);
    for (const auto& p : pts) {
      vec q, r;
      gram_schmidt(p, rows, cols, q, r);
      check_close(values_of(qr_thin_Q(a, cols), rows * k, p, a), q, 1e-13, "thin Q");
      check_close(values_of(qr_thin_R(a, cols), k * cols, p, a), r, 1e-13, "thin R");
    }
    // A lane whose first column needs no reflection (zeros below its first entry, which is
    // negative: no reflection, then the sign flipped) beside lanes that need one.
    vec upper(6, 0.0);
    upper[0] = -1.5, upper[1] = 0.5, upper[rows == 3 ? 3 : 4] = 0.75, upper[rows == 3 ? 5 : 2] = -0.25;
    auto lane_pts = pts;
    lane_pts[1] = upper;
    const vec wq(w6.begin(), w6.begin() + static_cast<std::ptrdiff_t>(rows * k));
    const vec wr(w6.begin(), w6.begin() + static_cast<std::ptrdiff_t>(k * cols));
    const auto f = compile(dot(data(wq), qr_thin_Q(a, cols)) + dot(data(wr), qr_thin_R(a, cols)) * 0.5, a);
    for (std::size_t i = 0; i < 6; ++i) tyche_test::check_gradient_at(f, pts[i], "qr of a matrix with 6 entries");
    tyche_test::check_gradient_at(f, upper, "qr of a matrix whose first column needs no reflection");
    tyche_test::check_lanes(f, lane_pts, "qr (lanes)");
    // The full R: the thin R's gradient (its zero rows are constants).
    const auto full_r = compile(dot(data(w6), qr_R(a, cols)), a);
    for (std::size_t i = 0; i < 3; ++i) tyche_test::check_gradient_at(full_r, pts[i], "qr_R");
    if (rows == 2) {  // wide: the full Q is the thin one
      const auto full_q = compile(dot(data(w4), qr_Q(a, cols)), a);
      for (std::size_t i = 0; i < 3; ++i) tyche_test::check_gradient_at(full_q, pts[i], "qr_Q of a wide matrix");
    }
  }
  // Square 3 × 3, every part; a full Q and R against each other.
  vector_param<"B", 9> b;
  const auto sq = compile(dot(data(w9), qr_thin_Q(b)) + dot(data(w9), qr_R(b)) * 0.5 + dot(data(w9), qr_Q(b)), b);
  const auto pts9 = tyche_test::random_points(10, 9, -1.0, 1.0, 912);
  for (const auto& p : pts9) {
    vec q, r;
    gram_schmidt(p, 3, 3, q, r);
    check_close(values_of(qr_Q(b), 9, p, b), q, 1e-13, "Q of a square matrix");
    check_close(values_of(qr_thin_R(b), 9, p, b), r, 1e-13, "R of a square matrix");
  }
  for (std::size_t i = 0; i < 5; ++i) tyche_test::check_gradient_at(sq, pts9[i], "qr of a 3 x 3 matrix");
  tyche_test::check_lanes(sq, pts9, "qr of a 3 x 3 matrix (lanes)");
  // One row, one column.
  vector_param<"r3", 3> r3;
  const vec row{-1.0, 2.0, 0.5}, w3{0.5, -1.0, 2.0};
  const auto one_row = compile(sum(qr_thin_Q(r3, 3)) + dot(data(w3), qr_thin_R(r3, 3)), r3);
  const auto one_col = compile(dot(data(w3), qr_thin_Q(r3, 1)) + sum(qr_thin_R(r3, 1)), r3);
  CHECK(one_row.value(row) == Approx(-1.0 + (0.5 * 1.0 + 2.0 - 1.0)).epsilon(1e-14));  // Q = −1, R = −row
  CHECK(one_col.value(row) == Approx((-0.5 - 2.0 + 1.0) / std::sqrt(5.25) + std::sqrt(5.25)).epsilon(1e-14));
  tyche_test::check_gradient_at(one_row, row, "qr of a 1 x 3 matrix");
  tyche_test::check_gradient_at(one_col, row, "qr of a 3 x 1 matrix");
}

TEST_CASE("qr_Q, qr_R of data: the completion of a tall matrix's Q, rank deficiency, scaling, a QR reparameterised "
          "regression; errors",
          "[autodiff][qr][linear_algebra]") {
  vector_param<"x", 1> x;
  const auto values = [&](const auto& e, std::size_t m) {
    vec out(m);
    for (std::size_t i = 0; i < m; ++i) out[i] = compile(at(e, i) + 0.0 * x[0], x).value(vec{0.0});
    return out;
  };
  // A = (3, 4)ᵀ by hand with Eigen's convention: β = −5, v = (1, 1/2), τ = 8/5, H = [[−0.6, −0.8],
  // [−0.8, 0.6]]; R̃ = −5 < 0, so the first column of Q and R negated: Q = [[0.6, −0.8], [0.8, 0.6]].
  const vec col{3.0, 4.0};
  check_close(values(qr_Q(matrix(col.data(), 2, 1)), 4), vec{0.6, -0.8, 0.8, 0.6}, 1e-15, "qr_Q of (3, 4)");
  check_close(values(qr_R(matrix(col.data(), 2, 1)), 2), vec{5.0, 0.0}, 1e-15, "qr_R of (3, 4)");
  // e₁ needs no reflection: Q = I.
  const vec e1{1.0, 0.0, 0.0};
  check_close(values(qr_Q(matrix(e1.data(), 3, 1)), 9), vec{1, 0, 0, 0, 1, 0, 0, 0, 1}, 0.0, "qr_Q of e1");

  // A tall data matrix: the full Q orthogonal, Q R = A; its first columns the thin Q.
  const vec d{1.0, 2.0, -3.0, 4.0, 5.0, 6.0, 0.5, -1.0, 2.0, 1.0, 0.0, -2.0};  // 4 × 3
  const vec qf = values(qr_Q(matrix(d.data(), 4, 3)), 16), rf = values(qr_R(matrix(d.data(), 4, 3)), 12);
  check_full(d, qf, rf, 4, 3);
  const vec qt = values(qr_thin_Q(matrix(d.data(), 4, 3)), 12);
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 3; ++j) CHECK(qt[i * 3 + j] == Approx(qf[i * 4 + j]).margin(1e-15));

  // Rank deficient data (the second column twice the first): the values are defined, Q R = A.
  const vec rank1{1.0, 2.0, 2.0, 4.0, 3.0, 6.0};
  check_full(rank1, values(qr_Q(matrix(rank1.data(), 3, 2)), 9), values(qr_R(matrix(rank1.data(), 3, 2)), 6), 3, 2);
  // Scaling: a whole matrix of 1e-170 (its squares would underflow: the matrix's largest entry
  // divides it first), and a column 1e-160 times the other (each column's norm is taken on the
  // column divided by its own largest entry; Eigen's, on the squares, takes the tail for zero).
  const vec small{1e-170, 2e-170, 3e-170, 4e-170, 5e-170, 6e-170}, unit{1.0, 2.0, 3.0, 4.0, 5.0, 6.0};
  vec q_unit, r_unit;
  gram_schmidt(unit, 3, 2, q_unit, r_unit);
  const vec rs = values(qr_thin_R(matrix(small.data(), 3, 2)), 4);
  for (std::size_t e = 0; e < 4; ++e) CHECK(rs[e] == Approx(r_unit[e] * 1e-170).epsilon(1e-14).margin(1e-300));
  check_close(values(qr_thin_Q(matrix(small.data(), 3, 2)), 6), q_unit, 1e-14, "Q of a matrix of 1e-170");
  const vec column{1.0, 0.0, 0.0, 1e-160, 0.0, 1e-160};
  const vec rc = values(qr_thin_R(matrix(column.data(), 3, 2)), 4);
  CHECK(rc[3] == Approx(std::sqrt(2.0) * 1e-160).epsilon(1e-14));
  check_close(values(qr_thin_Q(matrix(column.data(), 3, 2)), 6),
              vec{1.0, 0.0, 0.0, std::sqrt(0.5), 0.0, std::sqrt(0.5)}, 1e-15, "Q of a column of 1e-160");

  // Stan's QR reparameterisation: the residuals of y − Q* θ with Q* = qr_thin_Q(X) √(N − 1) are
  // those of y − X β at β = R*⁻¹ θ, R* = qr_thin_R(X) / √(N − 1).
  const vec xs{1.0, 0.5, 1.0, -1.5, 1.0, 2.0, 1.0, 0.25, 1.0, -0.75};  // 5 × 2
  const vec y{0.3, -1.2, 2.5, 0.4, -0.9};
  vector_param<"theta", 2> theta;
  const double s = std::sqrt(4.0);
  const auto ss_q = compile(dot_self(data(y) - matmul(qr_thin_Q(matrix(xs.data(), 5, 2)) * s, theta, 2)), theta);
  const vec rstar = values(qr_thin_R(matrix(xs.data(), 5, 2)) / s, 4);
  const vec th{0.7, -0.4};
  const double b1 = th[1] / rstar[3], b0 = (th[0] - rstar[1] * b1) / rstar[0];
  double direct = 0;
  for (std::size_t i = 0; i < 5; ++i) {
    const double z = y[i] - (xs[i * 2] * b0 + xs[i * 2 + 1] * b1);
    direct += z * z;
  }
  CHECK(ss_q.value(th) == Approx(direct).epsilon(1e-13));

  // Errors: the completion of a tall matrix of parameters; sizes; no rows.
  vector_param<"t", 6> t6;
  CHECK_THROWS_WITH(qr_Q(t6, 2), Contains("tyche::qr_Q(A, K): A is 3 x 2 and depends on parameters: the last 1 "
                                          "columns of its full Q are any orthonormal completion"));
  CHECK_NOTHROW(qr_Q(t6, 3));
  CHECK_NOTHROW(qr_R(t6, 2));
  vector_param<"e", 5> e;
  CHECK_THROWS_WITH(qr_thin_Q(e, 2), Contains("tyche::qr_thin_Q(A, K): 'A' has 5 values, which is not a "
                                              "multiple of K = 2"));
  CHECK_THROWS_WITH(qr_thin_R(e), Contains("tyche::qr_thin_R(A): 'A' has 5 values, which is not the number of "
                                           "entries of a square matrix"));
  CHECK_THROWS_WITH(qr_R(matrix(d.data(), 0, 3), 3), Contains("tyche::qr_R(A, K): A has no rows"));
}
