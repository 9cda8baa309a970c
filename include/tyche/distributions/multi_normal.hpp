// tyche/distributions/multi_normal.hpp — multi_normal_cholesky(mu, L) and multi_normal(mu, Sigma).
//   log p(x | μ, L) = −½ ‖L⁻¹(x − μ)‖² − Σᵢ log Lᵢᵢ − (K/2) log 2π,   Σ = L Lᵀ, x ∈ ℝᴷ.
// L (lower triangular, positive diagonal) and Σ (symmetric positive definite) are K × K data
// matrices (tyche::matrix(ptr, K, K), row-major); μ is a vector of K, or a scalar for all. The
// solve L⁻¹(x − μ) is a vector_op (core/vector_ops.hpp): O(K²) per evaluation, with its
// gradient by back substitution. multi_normal factors Σ once, when it is called (the factor is
// owned by the distribution and the model built from it); multi_normal_cholesky views the
// user's L, which must outlive the model, like data. x is a named K-vector, or one observed
// vector of K.
#pragma once
#include <tyche/config.hpp>
#include <tyche/core/vector_ops.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <cmath>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace tyche {

namespace detail {
/// The Cholesky factor of a K × K symmetric positive-definite row-major matrix (lower triangle
/// of the result; zeros above). Throws, naming the pivot, when it is not positive definite or
/// not symmetric.
inline std::vector<double> cholesky_lower(const double* a, std::size_t k, const char* who) {
  std::vector<double> l(k * k, 0.0);
  for (std::size_t i = 0; i < k; ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      const double aij = a[i * k + j], aji = a[j * k + i];
      if (!(std::fabs(aij - aji) <= 1e-8 * (std::fabs(aij) + std::fabs(aji) + 1e-300)))
        throw std::invalid_argument(std::string("tyche::") + who + ": Sigma is not symmetric: Sigma[" +
                                    std::to_string(i + 1) + ", " + std::to_string(j + 1) + "] = " +
                                    std::to_string(aij) + " but Sigma[" + std::to_string(j + 1) +
                                    ", " + std::to_string(i + 1) + "] = " + std::to_string(aji));
    }
    for (std::size_t j = 0; j <= i; ++j) {
      double s = a[i * k + j];
      for (std::size_t p = 0; p < j; ++p) s -= l[i * k + p] * l[j * k + p];
      if (i == j) {
        if (!(s > 0))
          throw std::invalid_argument(std::string("tyche::") + who +
                                      ": Sigma is not positive definite (pivot " + std::to_string(i + 1) +
                                      " is " + std::to_string(s) + ")");
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
                                  std::to_string(i + 1) + "] = " + std::to_string(l.ptr[i * l.cols + i]) +
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
      {}, m, ops::lower_triangular_solve_map{l, k, std::move(owner)}, log_det_half};
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
