// tyche/transforms/matrix.hpp — the transforms to K × K matrices (Stan's cholesky_factor_corr,
// cholesky_factor_cov, cov_matrix, corr_matrix). A matrix variable is a vector parameter of the
// unconstrained size (θ holds only free coordinates) whose value is a vector_op of K² values,
// the matrix in row-major order (the ops in autodiff/matrix_ops.hpp):
//
//   cholesky_factor_corr  K(K−1)/2  L = corr_cholesky(u): zᵢⱼ = tanh uᵢⱼ, canonical partial
//                                   correlations; Lᵢⱼ = zᵢⱼ √(1 − Σ_{j'<j} Lᵢⱼ'²), Lᵢᵢ the rest
//                                   of row i's unit norm.
//                                   log|J| = Σ_{i>j} [log(1 − zᵢⱼ²) + ½ log(1 − Σ_{j'<j} Lᵢⱼ'²)]
//   cholesky_factor_cov   K(K+1)/2  L lower triangular, Lᵢⱼ = u (j < i), Lᵢᵢ = e^u.
//                                   log|J| = Σᵢ uᵢᵢ
//   cov_matrix            K(K+1)/2  Σ = L Lᵀ with L as for cholesky_factor_cov.
//                                   log|J| = K log 2 + Σ_{k=1..K} (K − k + 2) log Lₖₖ
//   corr_matrix           K(K−1)/2  Ω = L Lᵀ with L as for cholesky_factor_corr.
//                                   log|J| = Σ_{i>j} [log(1 − zᵢⱼ²) + ((K − 2 − j)/2) log(1 − zᵢⱼ²)]
//                                   (j 0-based)
//
// The log-Jacobians are those of the map from u to the free entries of the value (the strictly
// lower triangle for the correlation types, the lower triangle for the others), as in Stan's
// reference manual, chapter "Constraint Transforms" (sections on Cholesky factors of
// correlation and covariance matrices, covariance and correlation matrices); the correlation
// ones come from the canonical partial correlations of Lewandowski, Kurowicka and Joe (2009).
//
// model.hpp finds these by `matrix_valued`: constrain() writes the K² entries, parameter names
// are `L[i,j]` (1-based row, column, row-major order), and unconstrain() reads K² entries with
// unconstrain_matrix, which checks them (triangular, positive diagonal, unit rows or diagonal,
// symmetric, positive definite) and names the first bad entry.
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/matrix_ops.hpp>
#include <tyche/operations/functions.hpp>
#include <tyche/operations/matrices.hpp>
#include <tyche/scalar/format.hpp>

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

namespace tyche::transforms {

namespace detail {
inline std::string number(double v) { return tyche::detail::format_number(v); }

/// Entries above the diagonal must be 0 and diagonal entries positive and finite, every entry
/// finite. Returns the problem, with bad the index of the entry, or "".
inline std::string check_lower_triangular(const double* x, std::size_t k, std::size_t& bad) {
  for (std::size_t i = 0; i < k; ++i) {
    for (std::size_t j = 0; j < k; ++j) {
      bad = i * k + j;
      if (!std::isfinite(x[bad])) return "is not finite";
      if (j > i && x[bad] != 0) return "must be 0 (the matrix is lower triangular)";
      if (j == i && !(x[bad] > 0)) return "must be > 0 (a diagonal entry of a Cholesky factor)";
    }
  }
  return {};
}

/// Symmetric, finite; on success l holds the lower Cholesky factor. Returns the problem, with
/// bad the index of the entry, or "".
inline std::string cholesky_of_symmetric(const double* x, std::size_t k, std::vector<double>& l,
                                         std::size_t& bad) {
  for (std::size_t i = 0; i < k; ++i) {
    for (std::size_t j = 0; j < k; ++j) {
      bad = i * k + j;
      if (!std::isfinite(x[bad])) return "is not finite";
      const double a = x[i * k + j], b = x[j * k + i];
      if (j < i && !(std::fabs(a - b) <= 1e-8 * (std::fabs(a) + std::fabs(b)) + 1e-300))
        return "differs from the entry across the diagonal, " + number(b) + " (the matrix must be symmetric)";
    }
  }
  l.assign(k * k, 0.0);
  for (std::size_t i = 0; i < k; ++i) {
    for (std::size_t j = 0; j <= i; ++j) {
      double s = x[i * k + j];
      for (std::size_t p = 0; p < j; ++p) s -= l[i * k + p] * l[j * k + p];
      if (i == j) {
        if (!(s > 0)) {
          bad = i * k + i;
          return "ends pivot " + std::to_string(i + 1) + " of the Cholesky factorisation at " + number(s) +
                 " (the matrix must be positive definite)";
        }
        l[i * k + i] = std::sqrt(s);
      } else {
        l[i * k + j] = s / l[j * k + j];
      }
    }
  }
  return {};
}

/// u of a correlation Cholesky factor l (checked): zᵢⱼ = Lᵢⱼ / √(Σ_{m=j..i} Lᵢₘ²) (the rest of
/// row i's norm, which is 1 − Σ_{j'<j} Lᵢⱼ'² without the cancellation), u = atanh z.
inline std::string corr_cholesky_inverse(const double* l, std::size_t k, double* u, std::size_t& bad) {
  std::size_t p = 0;
  for (std::size_t i = 1; i < k; ++i) {
    for (std::size_t j = 0; j < i; ++j, ++p) {
      double rest = 0;
      for (std::size_t m = j; m <= i; ++m) rest += l[i * k + m] * l[i * k + m];
      const double z = l[i * k + j] / std::sqrt(rest);
      if (!(std::fabs(z) < 1)) {
        bad = i * k + j;
        return "leaves no room for the rest of its row (a partial correlation of " + number(z) + ")";
      }
      u[p] = std::atanh(z);
    }
  }
  return {};
}
}  // namespace detail

/// Lower-triangular K × K matrices with positive diagonal and rows of norm 1: Cholesky factors
/// of correlation matrices. K(K−1)/2 unconstrained coordinates.
struct cholesky_factor_corr {
  static constexpr const char* name = "cholesky_factor_corr";
  static constexpr bool whole_vector = true;
  static constexpr bool matrix_valued = true;
  std::size_t k = 2;
  [[nodiscard]] std::size_t order() const { return k; }
  [[nodiscard]] std::size_t parameter_size() const { return k * (k - 1) / 2; }
  template <class U>
  auto constrain(const U& u) const {
    return make_vector_op(ops::corr_cholesky_map{k}, k * k, tyche::detail::as_node(u));
  }
  template <class U>
  auto log_jacobian(const U& u) const {
    return at(make_vector_op(ops::cpc_log_jacobian_map<false>{k}, 1, tyche::detail::as_node(u)), 0);
  }
  std::string unconstrain_matrix(const double* x, double* u, std::size_t& bad) const {
    std::string problem = detail::check_lower_triangular(x, k, bad);
    if (!problem.empty()) return problem;
    for (std::size_t i = 0; i < k; ++i) {
      double norm2 = 0;
      for (std::size_t j = 0; j <= i; ++j) norm2 += x[i * k + j] * x[i * k + j];
      if (!(std::fabs(norm2 - 1) <= 1e-8)) {
        bad = i * k + i;
        return "ends row " + std::to_string(i + 1) + ", whose squared norm is " + detail::number(norm2) +
               ", not 1 (cholesky_factor_corr)";
      }
    }
    return detail::corr_cholesky_inverse(x, k, u, bad);
  }
};

/// Lower-triangular K × K matrices with positive diagonal: Cholesky factors of covariance
/// matrices. K(K+1)/2 unconstrained coordinates.
struct cholesky_factor_cov {
  static constexpr const char* name = "cholesky_factor_cov";
  static constexpr bool whole_vector = true;
  static constexpr bool matrix_valued = true;
  std::size_t k = 1;
  [[nodiscard]] std::size_t order() const { return k; }
  [[nodiscard]] std::size_t parameter_size() const { return k * (k + 1) / 2; }
  template <class U>
  auto constrain(const U& u) const {
    return make_vector_op(ops::cov_cholesky_map{k}, k * k, tyche::detail::as_node(u));
  }
  template <class U>
  auto log_jacobian(const U& u) const {
    return at(make_vector_op(ops::diagonal_sum_map<true, false>{k, 1.0, 0.0}, 1, tyche::detail::as_node(u)), 0);
  }
  std::string unconstrain_matrix(const double* x, double* u, std::size_t& bad) const {
    std::string problem = detail::check_lower_triangular(x, k, bad);
    if (!problem.empty()) return problem;
    std::size_t p = 0;
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j <= i; ++j) u[p++] = j < i ? x[i * k + j] : std::log(x[i * k + i]);
    return {};
  }
};

/// Symmetric positive-definite K × K matrices: Σ = L Lᵀ with L a cholesky_factor_cov.
/// K(K+1)/2 unconstrained coordinates.
struct cov_matrix {
  static constexpr const char* name = "cov_matrix";
  static constexpr bool whole_vector = true;
  static constexpr bool matrix_valued = true;
  std::size_t k = 1;
  [[nodiscard]] std::size_t order() const { return k; }
  [[nodiscard]] std::size_t parameter_size() const { return k * (k + 1) / 2; }
  template <class U>
  auto constrain(const U& u) const {
    return make_vector_op(ops::multiply_lower_tri_self_transpose_map{k}, k * k,
                          cholesky_factor_cov{k}.constrain(u));
  }
  /// The map L ↦ L Lᵀ on lower triangles has |J| = 2ᴷ Π Lₖₖ^{K−k+1}, and Lₖₖ = e^u adds Π Lₖₖ.
  template <class U>
  auto log_jacobian(const U& u) const {
    return at(make_vector_op(ops::diagonal_sum_map<true, false>{k, double(k) + 1.0, -1.0}, 1,
                             tyche::detail::as_node(u)),
              0) +
           constant{double(k) * 0.69314718055994530942};
  }
  std::string unconstrain_matrix(const double* x, double* u, std::size_t& bad) const {
    std::vector<double> l;
    std::string problem = detail::cholesky_of_symmetric(x, k, l, bad);
    if (!problem.empty()) return problem;
    return cholesky_factor_cov{k}.unconstrain_matrix(l.data(), u, bad);
  }
};

/// Correlation matrices (symmetric positive definite with unit diagonal): Ω = L Lᵀ with L a
/// cholesky_factor_corr. K(K−1)/2 unconstrained coordinates.
struct corr_matrix {
  static constexpr const char* name = "corr_matrix";
  static constexpr bool whole_vector = true;
  static constexpr bool matrix_valued = true;
  std::size_t k = 2;
  [[nodiscard]] std::size_t order() const { return k; }
  [[nodiscard]] std::size_t parameter_size() const { return k * (k - 1) / 2; }
  template <class U>
  auto constrain(const U& u) const {
    return make_vector_op(ops::multiply_lower_tri_self_transpose_map{k}, k * k,
                          cholesky_factor_corr{k}.constrain(u));
  }
  template <class U>
  auto log_jacobian(const U& u) const {
    return at(make_vector_op(ops::cpc_log_jacobian_map<true>{k}, 1, tyche::detail::as_node(u)), 0);
  }
  std::string unconstrain_matrix(const double* x, double* u, std::size_t& bad) const {
    for (std::size_t i = 0; i < k; ++i) {
      bad = i * k + i;
      if (!(std::fabs(x[bad] - 1) <= 1e-8)) return "must be 1 (a diagonal entry of a correlation matrix)";
    }
    std::vector<double> l;
    std::string problem = detail::cholesky_of_symmetric(x, k, l, bad);
    if (!problem.empty()) return problem;
    // Rows of L have norm √Ωᵢᵢ = 1 up to rounding; the inverse uses the rest of each row's norm.
    return detail::corr_cholesky_inverse(l.data(), k, u, bad);
  }
};

}  // namespace tyche::transforms
