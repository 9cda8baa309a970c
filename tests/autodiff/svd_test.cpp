// singular_values, svd_U and svd_V (the op in tyche/autodiff/svd.hpp, the functions in
// tyche/operations/matrices.hpp): for tall, wide and square matrices, U diag(σ) Vᵀ against A and
// the orthonormality of U and V (1e-13), σ descending and against the square roots of the
// eigenvalues of the 2 × 2 AᵀA or AAᵀ in long double; gradients of each part against
// Richardson-extrapolated finite differences and SIMD lanes (tests/support/property.hpp);
// a small singular value's absolute accuracy; data checks.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "support/property.hpp"

using namespace tyche;
using Catch::Matchers::Contains;

namespace {
using vec = std::vector<double>;

using tyche_test::values_of;

/// The singular values of an R × K matrix with min(R, K) = 2: √ of the eigenvalues of the 2 × 2
/// Gram matrix of its two short-side vectors, in long double, descending.
vec two_singular_values(const vec& a, std::size_t rows, std::size_t cols) {
  long double g00 = 0, g01 = 0, g11 = 0;
  const bool tall = rows >= cols;
  const std::size_t n = tall ? rows : cols;
  for (std::size_t i = 0; i < n; ++i) {
    const long double x = tall ? a[i * cols + 0] : a[0 * cols + i];
    const long double y = tall ? a[i * cols + 1] : a[1 * cols + i];
    g00 += x * x, g01 += x * y, g11 += y * y;
  }
  const long double mean = (g00 + g11) / 2, root = std::sqrt((g00 - g11) * (g00 - g11) / 4 + g01 * g01);
  return {static_cast<double>(std::sqrt(mean + root)), static_cast<double>(std::sqrt(std::max(mean - root, 0.0L)))};
}

/// A = U diag(σ) Vᵀ, UᵀU = I, VᵀV = I, σ descending and non-negative.
void check_decomposition(const vec& a, const vec& s, const vec& u, const vec& v, std::size_t rows, std::size_t cols) {
  const std::size_t k = std::min(rows, cols);
  for (std::size_t j = 0; j + 1 < k; ++j) CHECK(s[j] >= s[j + 1]);
  CHECK(s[k - 1] >= 0.0);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t b = 0; b < cols; ++b) {
      double acc = 0;
      for (std::size_t j = 0; j < k; ++j) acc += u[i * k + j] * s[j] * v[b * k + j];
      CHECK(acc == Approx(a[i * cols + b]).margin(1e-13));
    }
  for (std::size_t j = 0; j < k; ++j)
    for (std::size_t l = 0; l < k; ++l) {
      double uu = 0, vv = 0;
      for (std::size_t i = 0; i < rows; ++i) uu += u[i * k + j] * u[i * k + l];
      for (std::size_t b = 0; b < cols; ++b) vv += v[b * k + j] * v[b * k + l];
      CHECK(uu == Approx(j == l ? 1.0 : 0.0).margin(1e-13));
      CHECK(vv == Approx(j == l ? 1.0 : 0.0).margin(1e-13));
    }
}
}  // namespace

TEST_CASE("singular_values, svd_U, svd_V: the decomposition of tall, wide and square matrices, the 2 x 2 Gram "
          "matrix's eigenvalues, gradients, lanes",
          "[autodiff][svd][linear_algebra]") {
  vector_param<"A", 6> a;
  const vec w2{1.5, -0.5}, w3{0.5, -1.0, 2.0}, w6{0.5, -1.0, 1.5, 0.25, 2.0, -0.5}, w9{0.5, -1.0, 1.5, 0.25, 2.0,
                                                                                       -0.5, 1.0, 0.75, -1.25};
  const auto pts = tyche_test::random_points(12, 6, -1.0, 1.0, 901);
  for (const std::size_t rows : {3, 2}) {  // 3 × 2 (tall) and 2 × 3 (wide)
    const std::size_t cols = 6 / rows;
    INFO(rows << " x " << cols);
    for (const auto& p : pts) {
      const vec s = values_of(singular_values(a, cols), 2, p, a);
      const vec u = values_of(svd_U(a, cols), rows * 2, p, a);
      const vec v = values_of(svd_V(a, cols), cols * 2, p, a);
      const vec ref = two_singular_values(p, rows, cols);
      CHECK(s[0] == Approx(ref[0]).epsilon(1e-13));
      CHECK(s[1] == Approx(ref[1]).epsilon(1e-12));
      check_decomposition(p, s, u, v, rows, cols);
    }
    // Squares of U's and V's entries: independent of each pair's sign.
    const vec wu(w6.begin(), w6.begin() + static_cast<std::ptrdiff_t>(rows * 2));
    const vec wv(w6.begin(), w6.begin() + static_cast<std::ptrdiff_t>(cols * 2));
    const auto f = compile(dot(data(wu), square(svd_U(a, cols))) + dot(data(w2), singular_values(a, cols)) +
                               dot(data(wv), square(svd_V(a, cols))) * 0.5,
                           a);
    for (std::size_t i = 0; i < 6; ++i) tyche_test::check_gradient_at(f, pts[i], "svd of a matrix with 6 entries");
    tyche_test::check_lanes(f, pts, "svd (lanes)");
  }
  // Square: 3 × 3, every part.
  vector_param<"B", 9> b;
  const auto sq = compile(dot(data(w3), singular_values(b)) + dot(data(w9), square(svd_U(b))) +
                              dot(data(w9), square(svd_V(b))) * 0.5,
                          b);
  const auto pts9 = tyche_test::random_points(10, 9, -1.0, 1.0, 902);
  for (const auto& p : pts9) {
    check_decomposition(p, values_of(singular_values(b), 3, p, b), values_of(svd_U(b), 9, p, b),
                        values_of(svd_V(b), 9, p, b), 3, 3);
  }
  for (std::size_t i = 0; i < 5; ++i) tyche_test::check_gradient_at(sq, pts9[i], "svd of a 3 x 3 matrix");
  tyche_test::check_lanes(sq, pts9, "svd of a 3 x 3 matrix (lanes)");
}

TEST_CASE("singular_values: a small singular value keeps its absolute accuracy; data matrices; errors",
          "[autodiff][svd][linear_algebra]") {
  // A = R(0.7) diag(1, 1e-6) R(−0.4)ᵀ: through the eigenvalues of AᵀA the smaller value would be
  // off by about 1e-16/1e-6 = 1e-10; one-sided Jacobi keeps it to about 1e-16 of the larger.
  const double c1 = std::cos(0.7), s1 = std::sin(0.7), c2 = std::cos(-0.4), s2 = std::sin(-0.4), small = 1e-6;
  const vec a{c1 * c2 + small * s1 * s2, c1 * s2 - small * s1 * c2, s1 * c2 - small * c1 * s2,
              s1 * s2 + small * c1 * c2};
  vector_param<"x", 1> x;
  const auto s = compile(at(singular_values(matrix(a.data(), 2, 2)), 1) + 0.0 * x[0], x);
  CHECK(std::fabs(s.value(vec{0.0}) - small) <= 1e-14);
  const auto s0 = compile(at(singular_values(matrix(a.data(), 2, 2)), 0) + 0.0 * x[0], x);
  CHECK(s0.value(vec{0.0}) == Approx(1.0).epsilon(1e-14));

  // A data matrix of R rows and K columns; a zero matrix (σ = 0, no NaN).
  const vec d{1.0, 2.0, 3.0, 4.0, 5.0, 6.0};
  const auto sd = compile(sum(singular_values(matrix(d.data(), 3, 2), 2)) + 0.0 * x[0], x);
  const vec ref = two_singular_values(d, 3, 2);
  CHECK(sd.value(vec{0.0}) == Approx(ref[0] + ref[1]).epsilon(1e-13));
  vector_param<"z", 4> z;
  const auto zero = compile(sum(singular_values(z)), z);
  CHECK(zero.value(vec{0.0, 0.0, 0.0, 0.0}) == 0.0);

  // A column 1e-170 times the other (its squares would underflow): σ = (‖big column‖, ‖small‖),
  // U's columns finite and orthonormal.
  const vec scaled{3.0, 4e-170, 4.0, -3e-170, 0.0, 0.0};
  const auto s_big = compile(at(singular_values(matrix(scaled.data(), 3, 2)), 0) + 0.0 * x[0], x);
  const auto s_small = compile(at(singular_values(matrix(scaled.data(), 3, 2)), 1) + 0.0 * x[0], x);
  CHECK(s_big.value(vec{0.0}) == Approx(5.0).epsilon(1e-15));
  CHECK(s_small.value(vec{0.0}) == Approx(5e-170).epsilon(1e-14));
  vector_param<"t", 6> t6;
  for (std::size_t e = 0; e < 6; ++e) CHECK(std::isfinite(compile(at(svd_U(t6, 2), e), t6).value(scaled)));

  // Gradients of U and V near a singular matrix (σ_min ≈ 1e-11): the term outside U's span is
  // zero for a square factor, not rounding noise over σ_min (which made it wrong by about
  // 1e-16/σ_min); squares, so that finite differences through the singular matrix, where one
  // vector of the pair flips sign, see a smooth function. Shapes with R = 1 and K = 1.
  const vec near_singular{1.0, 2.0, 3.0, 2.0, 4.0, 6.0 + 1e-10, 1.0, 0.0, 1.0};
  vector_param<"n9", 9> n9;
  const vec w9{0.5, -1.0, 1.5, 0.25, 2.0, -0.5, 1.0, 0.75, -1.25};
  const auto uv = compile(dot(data(w9), square(svd_U(n9))) + dot(data(w9), square(svd_V(n9))), n9);
  tyche_test::check_gradient_at(uv, near_singular, "svd_U, svd_V of a nearly singular matrix");
  vector_param<"r3", 3> r3;
  const vec row{1.0, -2.0, 0.5}, w3{0.5, -1.0, 2.0};
  const auto one_row = compile(sum(singular_values(r3, 3)) + dot(data(w3), svd_V(r3, 3)) + sum(svd_U(r3, 3)), r3);
  const auto one_col = compile(sum(singular_values(r3, 1)) + dot(data(w3), svd_U(r3, 1)) + sum(svd_V(r3, 1)), r3);
  CHECK(one_row.value(row) == Approx(std::sqrt(5.25) + (0.5 * 1 + 2 + 1) / std::sqrt(5.25) + 1.0).epsilon(1e-14));
  CHECK(one_col.value(row) == Approx(std::sqrt(5.25) + (0.5 * 1 + 2 + 1) / std::sqrt(5.25) + 1.0).epsilon(1e-14));
  tyche_test::check_gradient_at(one_row, row, "svd of a 1 x 3 matrix");
  tyche_test::check_gradient_at(one_col, row, "svd of a 3 x 1 matrix");

  // A data matrix of any shape without K; the rotations' factor (V of a tall A) of a
  // rank-deficient data matrix is fine, the normalised columns' (U) refused.
  const auto by_shape = compile(sum(singular_values(matrix(d.data(), 3, 2))) + 0.0 * x[0], x);
  CHECK(by_shape.value(vec{0.0}) == Approx(ref[0] + ref[1]).epsilon(1e-13));
  const vec rank1_tall{1.0, 2.0, 2.0, 4.0, 3.0, 6.0};
  CHECK_NOTHROW(svd_V(matrix(rank1_tall.data(), 3, 2)));
  CHECK_THROWS_WITH(svd_U(matrix(rank1_tall.data(), 3, 2)),
                    Contains("tyche::svd_U(A): A is rank deficient (singular value 2 is"));
  CHECK_THROWS_WITH(svd_U(matrix(d.data(), 0, 2), 2), Contains("tyche::svd_U(A, K): A has no rows"));

  // Errors: a size that is not a multiple of K; U of a rank-deficient square data matrix (its
  // vectors are not unique).
  vector_param<"e", 5> e;
  CHECK_THROWS_WITH(singular_values(e, 2), Contains("tyche::singular_values(A, K): 'A' has 5 values, which is not a "
                                                    "multiple of K = 2"));
  const vec rank1{1.0, 2.0, 2.0, 4.0};
  CHECK_THROWS_WITH(svd_U(matrix(rank1.data(), 2, 2)),
                    Contains("tyche::svd_U(A): A is rank deficient (singular value 2 is"));
  CHECK_NOTHROW(singular_values(matrix(rank1.data(), 2, 2)));
}

namespace {
/// C = A B for A (n × m) and B (m × p), row major.
vec times(const vec& a, const vec& b, std::size_t n, std::size_t m, std::size_t p) {
  vec c(n * p, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < p; ++j)
      for (std::size_t l = 0; l < m; ++l) c[i * p + j] += a[i * m + l] * b[l * p + j];
  return c;
}
/// The four Penrose conditions of G (K × R) for A (R × K), to tol.
void check_penrose(const vec& a, const vec& g, std::size_t rows, std::size_t cols, double tol) {
  const vec ag = times(a, g, rows, cols, rows), ga = times(g, a, cols, rows, cols);
  const vec aga = times(ag, a, rows, rows, cols), gag = times(ga, g, cols, cols, rows);
  for (std::size_t e = 0; e < a.size(); ++e) CHECK(aga[e] == Approx(a[e]).margin(tol));
  for (std::size_t e = 0; e < g.size(); ++e) CHECK(gag[e] == Approx(g[e]).margin(tol));
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < rows; ++j) CHECK(ag[i * rows + j] == Approx(ag[j * rows + i]).margin(tol));
  for (std::size_t i = 0; i < cols; ++i)
    for (std::size_t j = 0; j < cols; ++j) CHECK(ga[i * cols + j] == Approx(ga[j * cols + i]).margin(tol));
}
}  // namespace

TEST_CASE("generalized_inverse: (A'A)^-1 A' and A'(AA')^-1 of full rank, the Penrose conditions of rank-deficient "
          "data, gradients, lanes",
          "[autodiff][svd][linear_algebra]") {
  vector_param<"A", 6> a;
  const vec w6{0.5, -1.0, 1.5, 0.25, 2.0, -0.5};
  const auto pts = tyche_test::random_points(10, 6, -1.0, 1.0, 931);
  for (const std::size_t rows : {3, 2}) {  // 3 × 2 (tall) and 2 × 3 (wide)
    const std::size_t cols = 6 / rows;
    INFO(rows << " x " << cols);
    for (const auto& p : pts) {
      // The 2 × 2 Gram matrix of the short side, inverted by hand: G = (AᵀA)⁻¹Aᵀ or Aᵀ(AAᵀ)⁻¹.
      const bool tall = rows > cols;
      vec t(6);  // Aᵀ, cols × rows
      for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t j = 0; j < cols; ++j) t[j * rows + i] = p[i * cols + j];
      const vec gram = tall ? times(t, p, 2, rows, 2) : times(p, t, 2, cols, 2);
      const double det = gram[0] * gram[3] - gram[1] * gram[2];
      const vec inv{gram[3] / det, -gram[1] / det, -gram[2] / det, gram[0] / det};
      const vec want = tall ? times(inv, t, 2, 2, rows) : times(t, inv, cols, 2, 2);
      const vec got = values_of(generalized_inverse(a, cols), 6, p, a);
      for (std::size_t e = 0; e < 6; ++e) CHECK(got[e] == Approx(want[e]).epsilon(1e-11).margin(1e-12));
    }
    const auto f = compile(dot(data(w6), generalized_inverse(a, cols)), a);
    for (std::size_t i = 0; i < 5; ++i) tyche_test::check_gradient_at(f, pts[i], "generalized_inverse");
    tyche_test::check_lanes(f, pts, "generalized_inverse (lanes)");
  }
  // Square: the inverse; gradients.
  vector_param<"B", 9> b;
  const vec w9{0.5, -1.0, 1.5, 0.25, 2.0, -0.5, 1.0, 0.75, -1.25};
  const auto pts9 = tyche_test::random_points(6, 9, -1.0, 1.0, 932);
  for (const auto& p : pts9) {
    const vec ga = times(values_of(generalized_inverse(b), 9, p, b), p, 3, 3, 3);
    for (std::size_t e = 0; e < 9; ++e) CHECK(ga[e] == Approx(e % 4 == 0 ? 1.0 : 0.0).margin(1e-11));
  }
  const auto sq = compile(dot(data(w9), generalized_inverse(b)), b);
  for (std::size_t i = 0; i < 4; ++i) tyche_test::check_gradient_at(sq, pts9[i], "generalized_inverse of 3 x 3");
  tyche_test::check_lanes(sq, pts9, "generalized_inverse of 3 x 3 (lanes)");

  // Rank-deficient data: the pseudo-inverse (the Penrose conditions), of a tall rank-1 matrix,
  // a square rank-2 one, and the zero matrix (its pseudo-inverse is zero).
  vector_param<"x", 1> x;
  const auto values = [&](const auto& e, std::size_t m) {
    vec out(m);
    for (std::size_t i = 0; i < m; ++i) out[i] = compile(at(e, i) + 0.0 * x[0], x).value(vec{0.0});
    return out;
  };
  const vec rank1{1.0, 2.0, 2.0, 4.0, 3.0, 6.0};
  check_penrose(rank1, values(generalized_inverse(matrix(rank1.data(), 3, 2)), 6), 3, 2, 1e-13);
  const vec rank2{1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0};
  check_penrose(rank2, values(generalized_inverse(matrix(rank2.data(), 3, 3)), 9), 3, 3, 1e-12);
  const vec zero(4, 0.0);
  for (const double e : values(generalized_inverse(matrix(zero.data(), 2, 2)), 4)) CHECK(e == 0.0);
  vector_param<"e", 5> e5;
  CHECK_THROWS_WITH(generalized_inverse(e5, 2), Contains("tyche::generalized_inverse(A, K): 'A' has 5 values"));
}
