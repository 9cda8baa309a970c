// tyche/distributions/multi_student_t.hpp — multi_student_t(nu, mu, Sigma) and multi_student_t_cholesky(nu, mu, L).
//   log p(x | ν, μ, Σ) = log Γ((ν + K)/2) − log Γ(ν/2) − (K/2) log(νπ) − ½ log det Σ
//                        − ((ν + K)/2) log(1 + (x − μ)ᵀ Σ⁻¹ (x − μ) / ν),   x ∈ ℝᴷ, ν > 0,
// Σ = L Lᵀ symmetric positive definite, K × K (Stan Functions Reference, "Multivariate
// Student-t distribution"; multi_student_t_cholesky is the same law given L). It is built on
// multi_normal's machinery (distributions/multi_normal.hpp): the quadratic form is ‖L⁻¹(x − μ)‖²
// and ½ log det Σ = Σᵢ log Lᵢᵢ. As data (tyche::matrix(ptr, K, K), row-major), Σ is factored
// once when the distribution is made and L is viewed (it must outlive the model); x is a named
// K-vector or one observed vector of K, μ a vector of K or a scalar. As expressions of
// parameters (the K·K entries, row major, only the lower triangle read: a cov_matrix variable,
// diag_pre_multiply(tau, L_Omega)), Σ is factored at every evaluation and x is a named K-vector
// or N observations of K values (row n at n·K), μ a scalar, a vector of K or of N·K; the log
// density is the sum over the rows (each row's quadratic form by autodiff/multivariate_ops.hpp's
// row_sums_of_squares). ν may be a parameter. Draws: μ + √(ν/W) L z, W ~ χ²(ν), z standard
// normal (mean μ for ν > 1, covariance ν/(ν − 2) Σ for ν > 2).
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/matrix_ops.hpp>
#include <tyche/autodiff/multivariate_ops.hpp>
#include <tyche/autodiff/vector_ops.hpp>
#include <tyche/distributions/detail/family.hpp>
#include <tyche/distributions/multi_normal.hpp>
#include <tyche/interval/support.hpp>
#include <tyche/operations/matrices.hpp>
#include <tyche/operations/vectors.hpp>

#include <cmath>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace tyche {

namespace detail {
/// log Γ((ν + K)/2) − log Γ(ν/2) − (K/2) log ν − (K/2) log π, the terms of one row that do not
/// depend on x or on the matrix.
template <class Nu>
auto multi_student_t_normaliser(const Nu& nu, std::size_t k) {
  return lgamma((nu + constant{double(k)}) * lit<1, 2>) - lgamma(nu * lit<1, 2>) -
         constant{0.5 * double(k)} * log(nu) - constant{0.5 * double(k) * log_pi};
}

/// n values (n/K rows): row r is μᵣ + √(ν/W) L z, W ~ χ²(ν), z standard normal, L the K × K
/// lower triangle in l.
template <class G>
std::vector<double> draw_multi_student_t(G& rng, std::size_t n, std::size_t k, double nu,
                                         const std::vector<double>& m, const double* l) {
  std::normal_distribution<double> z01;
  std::chi_squared_distribution<double> chi(nu);
  std::vector<double> z(k), x(n);
  for (std::size_t r = 0; r * k < n; ++r) {
    for (auto& v : z) v = z01(rng);
    const double scale = std::sqrt(nu / chi(rng));
    for (std::size_t i = 0; i < k && r * k + i < n; ++i) {
      double acc = 0;
      for (std::size_t j = 0; j <= i; ++j) acc += l[i * k + j] * z[j];
      x[r * k + i] = (m.size() == 1 ? m[0] : (m.size() == k ? m[i] : m[r * k + i])) + scale * acc;
    }
  }
  return x;
}

/// nu > 0, the one argument domain of both forms: at compile time where the types decide, else
/// against the data.
template <bool FromCovariance, class Nu>
auto check_multi_student_t_nu(const Nu& nu) {
  if constexpr (FromCovariance)
    static_assert(argument_support_t<Nu, domains::positive>::ok,
                  "tyche::multi_student_t(nu, mu, Sigma): nu must be > 0, but its support (spelled out "
                  "in tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
  else
    static_assert(argument_support_t<Nu, domains::positive>::ok,
                  "tyche::multi_student_t_cholesky(nu, mu, L): nu must be > 0, but its support (spelled "
                  "out in tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
  check_argument<domains::positive>(FromCovariance ? "multi_student_t(nu, mu, Sigma)"
                                                   : "multi_student_t_cholesky(nu, mu, L)",
                                    "nu", nu);
}
}  // namespace detail

/// multi_student_t(nu, mu, Sigma) (FromCovariance) or multi_student_t_cholesky(nu, mu, L) for a
/// data matrix: L⁻¹(x − μ) by the triangular solve of multi_normal, L viewed or owned by the op.
template <class Nu, class Mu, bool FromCovariance = false>
struct multi_student_t_data_distribution : distribution<multi_student_t_data_distribution<Nu, Mu, FromCovariance>> {
  static constexpr const char* family = FromCovariance ? "multi_student_t" : "multi_student_t_cholesky";
  Nu nu;
  Mu mu;
  ops::lower_triangular_solve_map solve;  // L, K, and the owner of L when Σ was factored here
  double log_det_half = 0;                 // Σᵢ log Lᵢᵢ
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    static_assert(is_vector_v<X>, "tyche::multi_student_t(nu, mu, Sigma) / multi_student_t_cholesky(nu, mu, L): "
                                  "x must be a vector");
    if constexpr (!is_vector_v<X>) {
      return constant{0.0};  // the static_assert has said why
    } else {
      if (x.size() != solve.k)
        throw std::invalid_argument(std::string("tyche::") + family + (FromCovariance ? "(nu, mu, Sigma)" : "(nu, mu, L)") +
                                    ": x has size " + std::to_string(x.size()) + " but the matrix is " +
                                    std::to_string(solve.k) + " x " + std::to_string(solve.k));
      const auto z = make_vector_op(solve, solve.k, x - mu);
      return detail::multi_student_t_normaliser(nu, solve.k) - constant{log_det_half} -
             (nu + constant{double(solve.k)}) * lit<1, 2> * log1p(sum(square(z)) / nu);
    }
  }
  auto arguments() const { return std::tuple{nu, mu}; }
  /// The same distribution with other ν and μ (do_ substitutes into them); L is kept.
  template <class N2, class M2>
  auto with_arguments(const N2& n, const M2& m) const {
    return multi_student_t_data_distribution<N2, M2, FromCovariance>{{}, n, m, solve, log_det_half};
  }
  auto check_supports() const { detail::check_multi_student_t_nu<FromCovariance>(nu); }
  static constexpr bool whole_arguments = true;
  template <class G>
  std::vector<double> draw_all(G& rng, std::size_t n, const std::vector<double>& nv,
                               const std::vector<double>& m) const {
    return detail::draw_multi_student_t(rng, n, solve.k, nv[0], m, solve.l);
  }
};

/// multi_student_t(nu, mu, Sigma) (FromCovariance, L = cholesky_decompose(Sigma)) or
/// multi_student_t_cholesky(nu, mu, L) with L an expression of K·K values (row major).
template <class Nu, class Mu, class L, bool FromCovariance = false>
struct multi_student_t_factor_distribution
    : distribution<multi_student_t_factor_distribution<Nu, Mu, L, FromCovariance>> {
  static constexpr const char* family = FromCovariance ? "multi_student_t" : "multi_student_t_cholesky";
  static constexpr const char* call = FromCovariance ? "(nu, mu, Sigma)" : "(nu, mu, L)";
  Nu nu;
  Mu mu;
  L l;
  std::size_t k = 1;
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    using N = detail::node_t<X>;
    static_assert(is_vector_v<N>, "tyche::multi_student_t(nu, mu, Sigma) / multi_student_t_cholesky(nu, mu, L): "
                                  "x must be a vector");
    const N xn = detail::as_node(x);
    const std::size_t rows = xn.size() / k;
    if (xn.size() % k != 0 || rows == 0)
      throw std::invalid_argument(std::string("tyche::") + family + call + ": x has size " + std::to_string(xn.size()) +
                                  ", which is not a multiple of K = " + std::to_string(k) +
                                  " (N observations of K values, row major)");
    const std::size_t mn = detail::operand_size(mu);
    if (mn != 1 && mn != k && mn != xn.size())
      throw std::invalid_argument(std::string("tyche::") + family + call + ": mu has size " + std::to_string(mn) +
                                  " but x has " + std::to_string(rows) + " rows of K = " + std::to_string(k) +
                                  " (mu must have 1, K or N*K values)");
    const auto z = make_vector_op(ops::cholesky_residual_map{k}, xn.size(), l, xn, mu);
    const auto q = make_vector_op(ops::row_sums_of_squares_map{k}, rows, z);
    const auto log_det_half = make_vector_op(ops::diagonal_sum_map<false, true>{k, 1.0, 0.0}, 1, l);
    return constant{double(rows)} * (detail::multi_student_t_normaliser(nu, k) - at(log_det_half, 0)) -
           (nu + constant{double(k)}) * lit<1, 2> * sum(log1p(q / nu));
  }
  auto arguments() const { return std::tuple{nu, mu, l}; }
  template <class N2, class M2, class L2>
  auto with_arguments(const N2& n, const M2& m, const L2& l2) const {
    return multi_student_t_factor_distribution<N2, M2, L2, FromCovariance>{{}, n, m, l2, k};
  }
  auto check_supports() const { detail::check_multi_student_t_nu<FromCovariance>(nu); }
  static constexpr bool whole_arguments = true;
  template <class G>
  std::vector<double> draw_all(G& rng, std::size_t n, const std::vector<double>& nv, const std::vector<double>& m,
                               const std::vector<double>& lv) const {
    return detail::draw_multi_student_t(rng, n, k, nv[0], m, lv.data());
  }
};

namespace detail {
template <bool FromCovariance, class Nu, class Mu>
auto make_multi_student_t(const char* who, const Nu& nu, const Mu& mu, const double* l, std::size_t k,
                          std::shared_ptr<const std::vector<double>> owner) {
  using M = node_t<Mu>;
  const M m = as_node(mu);
  if constexpr (is_vector_v<M>) {
    if (m.size() != k)
      throw std::invalid_argument(std::string("tyche::") + who + ": mu has size " + std::to_string(m.size()) +
                                  " but the matrix is " + std::to_string(k) + " x " + std::to_string(k));
  }
  double log_det_half = 0;
  for (std::size_t i = 0; i < k; ++i) log_det_half += std::log(l[i * k + i]);
  return multi_student_t_data_distribution<node_t<Nu>, M, FromCovariance>{
      {}, as_node(nu), m, ops::lower_triangular_solve_map{{l, k}, std::move(owner)}, log_det_half};
}

template <bool FromCovariance, class Nu, class Mu, class LN>
auto make_multi_student_t_factor(const Nu& nu, const Mu& mu, const LN& l, std::size_t k) {
  using M = node_t<Mu>;
  const M m = as_node(mu);
  if constexpr (is_vector_v<M>) {
    if (m.size() != k && m.size() % k != 0)
      throw std::invalid_argument(std::string("tyche::") +
                                  (FromCovariance ? "multi_student_t(nu, mu, Sigma)" : "multi_student_t_cholesky(nu, mu, L)") +
                                  ": mu has size " + std::to_string(m.size()) + " but the matrix is " +
                                  std::to_string(k) + " x " + std::to_string(k));
  }
  return multi_student_t_factor_distribution<node_t<Nu>, M, LN, FromCovariance>{{}, as_node(nu), m, l, k};
}
}  // namespace detail

/// The distribution multi_student_t(nu, mu, Sigma) for a data covariance Sigma (factored now, copied).
template <detail::operand Nu, detail::operand Mu>
auto multi_student_t(const Nu& nu, const Mu& mu, const data_matrix& sigma) {
  if (sigma.rows != sigma.cols || sigma.rows == 0)
    throw std::invalid_argument("tyche::multi_student_t(nu, mu, Sigma): Sigma must be square and non-empty; it is " +
                                std::to_string(sigma.rows) + " x " + std::to_string(sigma.cols));
  auto l = std::make_shared<const std::vector<double>>(
      detail::cholesky_lower(sigma.ptr, sigma.rows, "multi_student_t(nu, mu, Sigma)"));
  return detail::make_multi_student_t<true>("multi_student_t(nu, mu, Sigma)", nu, mu, l->data(), sigma.rows, l);
}
/// Name ~ multi_student_t(nu, mu, Sigma): a vector of K = Sigma.rows.
template <fixed_string Name, detail::operand Nu, detail::operand Mu>
auto multi_student_t(const Nu& nu, const Mu& mu, const data_matrix& sigma) {
  return detail::make_random_variable<Name>(multi_student_t(nu, mu, sigma),
                                            detail::shape_for_multi_normal(mu, sigma.rows));
}
/// The distribution multi_student_t_cholesky(nu, mu, L) for a data Cholesky factor L (viewed).
template <detail::operand Nu, detail::operand Mu>
auto multi_student_t_cholesky(const Nu& nu, const Mu& mu, const data_matrix& l) {
  detail::check_cholesky_factor(l, "multi_student_t_cholesky(nu, mu, L)");
  return detail::make_multi_student_t<false>("multi_student_t_cholesky(nu, mu, L)", nu, mu, l.ptr, l.rows, nullptr);
}
/// Name ~ multi_student_t_cholesky(nu, mu, L): a vector of K = L.rows.
template <fixed_string Name, detail::operand Nu, detail::operand Mu>
auto multi_student_t_cholesky(const Nu& nu, const Mu& mu, const data_matrix& l) {
  return detail::make_random_variable<Name>(multi_student_t_cholesky(nu, mu, l),
                                            detail::shape_for_multi_normal(mu, l.rows));
}

/// The distribution multi_student_t(nu, mu, Sigma) for Sigma an expression of K·K values (row
/// major; only the lower triangle is read), e.g. a cov_matrix variable; factored at every evaluation.
template <detail::operand Nu, detail::operand Mu, class Sx>
  requires detail::matrix_expression<Sx>
auto multi_student_t(const Nu& nu, const Mu& mu, const Sx& sigma) {
  const auto sn = detail::as_node(sigma);
  const std::size_t k = detail::matrix_order(sn.size(), "multi_student_t(nu, mu, Sigma)", "Sigma");
  return detail::make_multi_student_t_factor<true>(nu, mu, cholesky_decompose(sn), k);
}
/// Name ~ multi_student_t(nu, mu, Sigma) for Sigma an expression: a vector of K.
template <fixed_string Name, detail::operand Nu, detail::operand Mu, class Sx>
  requires detail::matrix_expression<Sx>
auto multi_student_t(const Nu& nu, const Mu& mu, const Sx& sigma) {
  const auto d = multi_student_t(nu, mu, sigma);
  return detail::make_random_variable<Name>(d, detail::shape_for_multi_normal(mu, d.k));
}
/// The distribution multi_student_t_cholesky(nu, mu, L) for L an expression of K·K values (row
/// major; only the lower triangle is read): `multi_student_t_cholesky(nu, mu, diag_pre_multiply(tau, L_Omega))`.
template <detail::operand Nu, detail::operand Mu, class Lx>
  requires detail::matrix_expression<Lx>
auto multi_student_t_cholesky(const Nu& nu, const Mu& mu, const Lx& l) {
  const auto ln = detail::as_node(l);
  const std::size_t k = detail::matrix_order(ln.size(), "multi_student_t_cholesky(nu, mu, L)", "L");
  return detail::make_multi_student_t_factor<false>(nu, mu, ln, k);
}
/// Name ~ multi_student_t_cholesky(nu, mu, L) for L an expression: a vector of K.
template <fixed_string Name, detail::operand Nu, detail::operand Mu, class Lx>
  requires detail::matrix_expression<Lx>
auto multi_student_t_cholesky(const Nu& nu, const Mu& mu, const Lx& l) {
  const auto d = multi_student_t_cholesky(nu, mu, l);
  return detail::make_random_variable<Name>(d, detail::shape_for_multi_normal(mu, d.k));
}

}  // namespace tyche
