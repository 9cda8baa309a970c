// tyche/distributions/multi_normal.hpp — multi_normal_cholesky(mu, L) and multi_normal(mu, Sigma).
//   log p(x | μ, L) = −½ ‖L⁻¹(x − μ)‖² − Σᵢ log Lᵢᵢ − (K/2) log 2π,   Σ = L Lᵀ, x ∈ ℝᴷ.
// L (lower triangular, positive diagonal) and Σ (symmetric positive definite) are K × K.
// As data (tyche::matrix(ptr, K, K), row-major): μ is a vector of K, or a scalar for all. The
// solve L⁻¹(x − μ) is a vector_op (its op in autodiff/vector_ops.hpp): O(K²) per evaluation,
// with its gradient by back substitution. multi_normal factors Σ once, when it is called (the
// factor is owned by the distribution and the model built from it); multi_normal_cholesky views
// the user's L, which must outlive the model, like data. x is a named K-vector, or one observed
// vector of K.
// As expressions of parameters (a vector of the K·K entries, row major, e.g. a
// cholesky_factor_cov variable, diag_pre_multiply(tau, L_Omega) or a cov_matrix variable; only
// the lower triangle is read): the solve is autodiff/matrix_ops.hpp's cholesky_residual, whose
// gradient reaches L too, and multi_normal factors Σ at every evaluation (cholesky_decompose,
// O(K³), NaN when Σ is not positive definite). x is a named K-vector, or N observations of K
// values (N·K, row n at n·K); μ is a scalar, a vector of K (every row) or of N·K (one per row),
// and the log density is the sum over the rows. J named vectors of K together (Stan's
// array[J] vector[K] b, e.g. correlated group effects): multi_normal_cholesky<"b">(mu, L,
// shape_of(J * K)) and multi_normal<"b">(mu, Sigma, shape_of(J * K)), vector j at j·K;
// multi_normal_cholesky's form takes a data L (tyche::matrix) too.
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/matrix_ops.hpp>
#include <tyche/autodiff/vector_ops.hpp>
#include <tyche/distributions/detail/family.hpp>
#include <tyche/operations/matrices.hpp>
#include <tyche/operations/vectors.hpp>
#include <tyche/scalar/format.hpp>

#include <cmath>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace tyche {

namespace detail {
/// The Cholesky factor of a K × K symmetric positive-definite row-major matrix (lower triangle
/// of the result; zeros above). Throws, naming the matrix (name) and the pivot, when it is not
/// positive definite or not symmetric.
inline std::vector<double> cholesky_lower(const double* a, std::size_t k, const char* who,
                                          const char* name = "Sigma") {
  std::vector<double> l(k * k, 0.0);
  for (std::size_t i = 0; i < k; ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      const double aij = a[i * k + j], aji = a[j * k + i];
      if (!(std::fabs(aij - aji) <= 1e-8 * (std::fabs(aij) + std::fabs(aji) + 1e-300)))
        throw std::invalid_argument(std::string("tyche::") + who + ": " + name + " is not symmetric: " + name +
                                    "[" + std::to_string(i + 1) + ", " + std::to_string(j + 1) + "] = " +
                                    tyche::detail::format_number(aij) + " but " + name + "[" + std::to_string(j + 1) +
                                    ", " + std::to_string(i + 1) + "] = " + tyche::detail::format_number(aji));
    }
    for (std::size_t j = 0; j <= i; ++j) {
      double s = a[i * k + j];
      for (std::size_t p = 0; p < j; ++p) s -= l[i * k + p] * l[j * k + p];
      if (i == j) {
        if (!(s > 0))
          throw std::invalid_argument(std::string("tyche::") + who + ": " + name +
                                      " is not positive definite (pivot " + std::to_string(i + 1) +
                                      " is " + tyche::detail::format_number(s) + ")");
        l[i * k + i] = std::sqrt(s);
      } else {
        l[i * k + j] = s / l[j * k + j];
      }
    }
  }
  return l;
}

inline void check_cholesky_factor(const data_matrix& l, const char* who) {
  if (l.rows != l.cols || l.rows == 0)
    throw std::invalid_argument(std::string("tyche::") + who + ": L must be square and non-empty; it is " +
                                std::to_string(l.rows) + " x " + std::to_string(l.cols));
  for (std::size_t i = 0; i < l.rows; ++i)
    if (!(l.ptr[i * l.cols + i] > 0) || !std::isfinite(l.ptr[i * l.cols + i]))
      throw std::invalid_argument(std::string("tyche::") + who + ": L[" + std::to_string(i + 1) + ", " +
                                  std::to_string(i + 1) + "] = " + tyche::detail::format_number(l.ptr[i * l.cols + i]) +
                                  " must be a positive number (L is a Cholesky factor)");
}
}  // namespace detail

template <class Mu>
struct multi_normal_cholesky_distribution : distribution<multi_normal_cholesky_distribution<Mu>> {
  static constexpr const char* family = "multi_normal_cholesky";
  Mu mu;
  ops::lower_triangular_solve_map solve;  // L, K, and the owner of L when multi_normal made it
  double log_det_half = 0;                 // Σᵢ log Lᵢᵢ
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    static_assert(is_vector_v<X>, "tyche::multi_normal_cholesky(mu, L): x must be a vector");
    if (x.size() != solve.k)
      throw std::invalid_argument(std::string("tyche::") + family + "(mu, L): x has size " +
                                  std::to_string(x.size()) + " but L is " + std::to_string(solve.k) +
                                  " x " + std::to_string(solve.k));
    const auto r = x - mu;
    const auto z = make_vector_op(solve, solve.k, r);
    return lit<-1, 2> * sum(square(z)) -
           constant{log_det_half + 0.5 * double(solve.k) * 1.83787706640934548356};
  }
  auto arguments() const { return std::tuple{mu}; }
  /// The same distribution with another mu (do_ substitutes into it); L is kept.
  template <class M2>
  auto with_arguments(const M2& m) const {
    return multi_normal_cholesky_distribution<M2>{{}, m, solve, log_det_half};
  }
  static constexpr bool whole_arguments = true;
  /// n = K values: μ + L z for z standard normal.
  template <class G>
  std::vector<double> draw_all(G& rng, std::size_t n, const std::vector<double>& m) const {
    std::normal_distribution<double> z01;
    std::vector<double> z(solve.k), x(solve.k);
    for (auto& v : z) v = z01(rng);
    for (std::size_t i = 0; i < solve.k; ++i) {
      double acc = m.size() == 1 ? m[0] : m[i];
      for (std::size_t j = 0; j <= i; ++j) acc += solve.l[i * solve.k + j] * z[j];
      x[i] = acc;
    }
    x.resize(n);
    return x;
  }
};

namespace detail {
template <class Mu>
auto make_multi_normal(const char* who, const Mu& mu, const double* l, std::size_t k,
                       std::shared_ptr<const std::vector<double>> owner) {
  using N = node_t<Mu>;
  const N m = as_node(mu);
  if constexpr (is_vector_v<N>) {
    if (m.size() != k)
      throw std::invalid_argument(std::string("tyche::") + who + ": mu has size " + std::to_string(m.size()) +
                                  " but the matrix is " + std::to_string(k) + " x " + std::to_string(k));
  }
  double log_det_half = 0;
  for (std::size_t i = 0; i < k; ++i) log_det_half += std::log(l[i * k + i]);
  return multi_normal_cholesky_distribution<N>{
      {}, m, ops::lower_triangular_solve_map{{l, k}, std::move(owner)}, log_det_half};
}
template <class Mu>
auto shape_for_multi_normal(const Mu&, std::size_t k) {
  if constexpr (is_vector_v<node_t<Mu>> && extent_v<node_t<Mu>> != dynamic_extent)
    return static_shape<extent_v<node_t<Mu>>>{};
  else
    return dynamic_shape{k};
}
}  // namespace detail

/// The distribution multi_normal_cholesky(mu, L) for a data Cholesky factor L (viewed).
template <detail::operand Mu>
auto multi_normal_cholesky(const Mu& mu, const data_matrix& l) {
  detail::check_cholesky_factor(l, "multi_normal_cholesky(mu, L)");
  return detail::make_multi_normal("multi_normal_cholesky(mu, L)", mu, l.ptr, l.rows, nullptr);
}
/// Name ~ multi_normal_cholesky(mu, L): a vector of K = L.rows.
template <fixed_string Name, detail::operand Mu>
auto multi_normal_cholesky(const Mu& mu, const data_matrix& l) {
  return detail::make_random_variable<Name>(multi_normal_cholesky(mu, l),
                                            detail::shape_for_multi_normal(mu, l.rows));
}

/// multi_normal_cholesky(mu, L) with L an expression: the K·K entries of the Cholesky factor,
/// row major (only the lower triangle is read). Family is multi_normal_cholesky, or
/// multi_normal when L is cholesky_decompose(Sigma) of the user's Sigma.
template <class Mu, class L, bool FromCovariance = false>
struct multi_normal_factor_distribution : distribution<multi_normal_factor_distribution<Mu, L, FromCovariance>> {
  static constexpr const char* family = FromCovariance ? "multi_normal" : "multi_normal_cholesky";
  Mu mu;
  L l;
  std::size_t k = 1;
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    using N = detail::node_t<X>;
    static_assert(is_vector_v<N>, "tyche::multi_normal_cholesky(mu, L): x must be a vector");
    const N xn = detail::as_node(x);
    const std::size_t rows = xn.size() / k;
    if (xn.size() % k != 0 || rows == 0)
      throw std::invalid_argument(std::string("tyche::") + family + "(mu, " + (FromCovariance ? "Sigma" : "L") +
                                  "): x has size " + std::to_string(xn.size()) + ", which is not a multiple of K = " +
                                  std::to_string(k) + " (N observations of K values, row major)");
    const std::size_t mn = detail::operand_size(mu);
    if (mn != 1 && mn != k && mn != xn.size())
      throw std::invalid_argument(std::string("tyche::") + family + "(mu, " + (FromCovariance ? "Sigma" : "L") +
                                  "): mu has size " + std::to_string(mn) + " but x has " + std::to_string(rows) +
                                  " rows of K = " + std::to_string(k) + " (mu must have 1, K or N*K values)");
    const auto z = make_vector_op(ops::cholesky_residual_map{k}, xn.size(), l, xn, mu);
    const auto log_det_half = make_vector_op(ops::diagonal_sum_map<false, true>{k, 1.0, 0.0}, 1, l);
    return lit<-1, 2> * sum(square(z)) - constant{double(rows)} * at(log_det_half, 0) -
           constant{double(rows) * double(k) * detail::half_log_two_pi};
  }
  auto arguments() const { return std::tuple{mu, l}; }
  template <class M2, class L2>
  auto with_arguments(const M2& m, const L2& l2) const {
    return multi_normal_factor_distribution<M2, L2, FromCovariance>{{}, m, l2, k};
  }
  static constexpr bool whole_arguments = true;
  /// n values (n/K rows): row r is μᵣ + L z, z standard normal.
  template <class G>
  std::vector<double> draw_all(G& rng, std::size_t n, const std::vector<double>& m,
                               const std::vector<double>& lv) const {
    std::normal_distribution<double> z01;
    std::vector<double> z(k), x(n);
    for (std::size_t r = 0; r * k < n; ++r) {
      for (auto& v : z) v = z01(rng);
      for (std::size_t i = 0; i < k; ++i) {
        double acc = m.size() == 1 ? m[0] : (m.size() == k ? m[i] : m[r * k + i]);
        for (std::size_t j = 0; j <= i; ++j) acc += lv[i * k + j] * z[j];
        x[r * k + i] = acc;
      }
    }
    return x;
  }
};

namespace detail {
template <class Lx>
inline constexpr bool matrix_expression =
    expression<Lx> && !std::is_same_v<std::remove_cvref_t<Lx>, data_matrix> && is_vector_v<node_t<Lx>>;

template <bool FromCovariance, class Mu, class LN>
auto make_multi_normal_factor(const Mu& mu, const LN& l, std::size_t k) {
  using M = node_t<Mu>;
  const M m = as_node(mu);
  if constexpr (is_vector_v<M>) {
    if (m.size() != k && m.size() % k != 0)
      throw std::invalid_argument(std::string("tyche::") + (FromCovariance ? "multi_normal(mu, Sigma)" : "multi_normal_cholesky(mu, L)") +
                                  ": mu has size " + std::to_string(m.size()) + " but the matrix is " +
                                  std::to_string(k) + " x " + std::to_string(k));
  }
  return multi_normal_factor_distribution<M, LN, FromCovariance>{{}, m, l, k};
}
}  // namespace detail

/// The distribution multi_normal_cholesky(mu, L) for L an expression of K·K values (row major):
/// `multi_normal_cholesky(mu, diag_pre_multiply(tau, L_Omega)).observe(data(y))`.
template <detail::operand Mu, class Lx>
  requires detail::matrix_expression<Lx>
auto multi_normal_cholesky(const Mu& mu, const Lx& l) {
  const auto ln = detail::as_node(l);
  const std::size_t k = detail::matrix_order(ln.size(), "multi_normal_cholesky(mu, L)", "L");
  return detail::make_multi_normal_factor<false>(mu, ln, k);
}
/// Name ~ multi_normal_cholesky(mu, L) for L an expression: a vector of K.
template <fixed_string Name, detail::operand Mu, class Lx>
  requires detail::matrix_expression<Lx>
auto multi_normal_cholesky(const Mu& mu, const Lx& l) {
  const auto d = multi_normal_cholesky(mu, l);
  return detail::make_random_variable<Name>(d, detail::shape_for_multi_normal(mu, d.k));
}

namespace detail {
/// Name ~ d (a multi_normal of K-vectors) as J vectors of K together, shape the J·K values: the
/// size is checked to be a positive multiple of K, naming the variable.
template <fixed_string Name, class D, class Shape>
auto multi_normal_rows(const char* who, const D& d, Shape shape) {
  static_assert(!std::is_same_v<Shape, scalar_shape>,
                "tyche::multi_normal_cholesky<\"name\">(mu, L, shape) / multi_normal<\"name\">(mu, Sigma, shape): "
                "shape gives the J*K values of J vectors of K (shape<J * K> or shape_of(J * K)); "
                "without it the variable is one K-vector");
  const std::size_t n = shape.size;
  if (n == 0 || n % d.k != 0)
    throw std::invalid_argument(std::string("tyche::") + who + ": " + Name.str() + " has " +
                                std::to_string(n) + " values, which is not a positive multiple of K = " +
                                std::to_string(d.k) + " (shape_of(J * K) holds J vectors of K, vector j at j*K)");
  return make_random_variable<Name>(d, shape);
}
}  // namespace detail

/// Name ~ multi_normal_cholesky(mu, L) for L an expression, J vectors of K together — Stan's
/// `array[J] vector[K] Name; Name ~ multi_normal_cholesky(mu, L);`, e.g. correlated group
/// effects: shape gives the J·K values (shape_of(J * K)), vector j at j·K (Name[j·K + k] is
/// Stan's Name[j+1, k+1]); mu is one K-vector for all, a scalar, or J·K means.
template <fixed_string Name, detail::operand Mu, class Lx, shape_tag Shape>
  requires detail::matrix_expression<Lx>
auto multi_normal_cholesky(const Mu& mu, const Lx& l, Shape shape) {
  return detail::multi_normal_rows<Name>("multi_normal_cholesky<\"name\">(mu, L, shape)", multi_normal_cholesky(mu, l),
                                         shape);
}

/// The distribution multi_normal(mu, Sigma) for Sigma an expression of K·K values (row major;
/// only the lower triangle is read), e.g. a cov_matrix variable. Σ is factored at every
/// evaluation (cholesky_decompose).
template <detail::operand Mu, class Sx>
  requires detail::matrix_expression<Sx>
auto multi_normal(const Mu& mu, const Sx& sigma) {
  const auto sn = detail::as_node(sigma);
  const std::size_t k = detail::matrix_order(sn.size(), "multi_normal(mu, Sigma)", "Sigma");
  return detail::make_multi_normal_factor<true>(mu, cholesky_decompose(sn), k);
}
/// Name ~ multi_normal(mu, Sigma) for Sigma an expression: a vector of K.
template <fixed_string Name, detail::operand Mu, class Sx>
  requires detail::matrix_expression<Sx>
auto multi_normal(const Mu& mu, const Sx& sigma) {
  const auto d = multi_normal(mu, sigma);
  return detail::make_random_variable<Name>(d, detail::shape_for_multi_normal(mu, d.k));
}

/// The same with a data L (tyche::matrix(ptr, K, K), viewed: it must outlive the model), through
/// the expression form's solve.
template <fixed_string Name, detail::operand Mu, shape_tag Shape>
auto multi_normal_cholesky(const Mu& mu, const data_matrix& l, Shape shape) {
  detail::check_cholesky_factor(l, "multi_normal_cholesky<\"name\">(mu, L, shape)");
  return multi_normal_cholesky<Name>(mu, data_vector<>{{}, l.ptr, l.rows * l.cols}, shape);
}

/// Name ~ multi_normal(mu, Sigma) for Sigma an expression, J vectors of K together (shape_of(J * K);
/// as multi_normal_cholesky's three-argument form).
template <fixed_string Name, detail::operand Mu, class Sx, shape_tag Shape>
  requires detail::matrix_expression<Sx>
auto multi_normal(const Mu& mu, const Sx& sigma, Shape shape) {
  return detail::multi_normal_rows<Name>("multi_normal<\"name\">(mu, Sigma, shape)", multi_normal(mu, sigma), shape);
}

/// The distribution multi_normal(mu, Sigma) for a data covariance Sigma (factored now, copied).
template <detail::operand Mu>
auto multi_normal(const Mu& mu, const data_matrix& sigma) {
  if (sigma.rows != sigma.cols || sigma.rows == 0)
    throw std::invalid_argument("tyche::multi_normal(mu, Sigma): Sigma must be square and non-empty; it is " +
                                std::to_string(sigma.rows) + " x " + std::to_string(sigma.cols));
  auto l = std::make_shared<const std::vector<double>>(
      detail::cholesky_lower(sigma.ptr, sigma.rows, "multi_normal(mu, Sigma)"));
  return detail::make_multi_normal("multi_normal(mu, Sigma)", mu, l->data(), sigma.rows, l);
}
/// Name ~ multi_normal(mu, Sigma): a vector of K = Sigma.rows.
template <fixed_string Name, detail::operand Mu>
auto multi_normal(const Mu& mu, const data_matrix& sigma) {
  return detail::make_random_variable<Name>(multi_normal(mu, sigma),
                                            detail::shape_for_multi_normal(mu, sigma.rows));
}

}  // namespace tyche
