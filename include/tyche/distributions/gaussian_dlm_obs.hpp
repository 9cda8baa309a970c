// tyche/distributions/gaussian_dlm_obs.hpp — gaussian_dlm_obs(F, G, V, W, m0, C0): a Gaussian dynamic linear model.
// The observations y (r × T, column t the observation at time t + 1) of the state-space model
//   yₜ ~ N(Fᵀ θₜ, V),  θₜ ~ N(G θₜ₋₁, W),  θ₀ ~ N(m0, C0)
// with the states θ (n-vectors) integrated out (Stan Functions Reference, "Gaussian dynamic
// linear models"): log p(y | F, G, V, W, m0, C0) = Σₜ log N(yₜ | fₜ, Qₜ), the one-step forecasts
// fₜ and their covariances Qₜ from the Kalman filter (autodiff/kalman.hpp, which also computes
// the gradient in every argument, by the filter's steps run backwards). F is n × r, G n × n, V
// r × r or a vector of its r diagonal entries (independent observation errors), W and C0 n × n,
// m0 an n-vector. Each matrix is a data matrix (tyche::matrix(ptr, rows, cols); V, W and C0
// checked symmetric and positive semi-definite: a W with zero rows, for states that do not
// evolve, is allowed) or an expression of its entries (row major: a cov_matrix variable,
// `diag_matrix(sigma)`; where n or r is 1, also a number or a scalar expression: the local level
// model is gaussian_dlm_obs(1.0, 1.0, square(sigma_v), square(sigma_w), m0, C0)); V, W and C0 are
// read through their lower triangles. y is observed as a
// data matrix of r rows (`observe(matrix(y, r, T))`), as the r·T values of one (row major, `data(y)`)
// or is a variable (`gaussian_dlm_obs<"y">(F, G, V, W, m0, C0, shape_of(r * T))`; draws simulate
// the states). Row major means the r values of one time are T apart: Stan's to_vector(y) is
// column major (the observations of one time together), so a flattened y from a Stan program
// with r > 1 must be transposed. C0 may be singular (a known initial state), as W may; where that
// makes a forecast covariance Qₜ singular the log density is NaN (Stan requires C0 positive
// definite). `gaussian_dlm_obs_lpdf(y, F, G, V, W, m0, C0)` for free terms.
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/kalman.hpp>
#include <tyche/distributions/detail/family.hpp>
#include <tyche/operations/matrices.hpp>
#include <tyche/operations/vectors.hpp>

#include <cmath>
#include <cstddef>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace tyche {

namespace detail {
inline constexpr const char* dlm_call = "gaussian_dlm_obs(F, G, V, W, m0, C0)";

/// The lower factor L (k × k) of a symmetric positive semi-definite matrix read through its lower
/// triangle a, with L Lᵀ = A: Cholesky with a zero column where a pivot is zero to within
/// 1e-10 of A's largest entry. Returns the 1-based index of the pivot that shows A is not
/// positive semi-definite (a negative pivot, or a non-zero entry below a zero one), 0 if it is.
inline std::size_t semidefinite_cholesky(const double* a, std::size_t k, std::vector<double>& l) {
  l.assign(k * k, 0.0);
  double big = 0;
  for (std::size_t e = 0; e < k * k; ++e) big = std::max(big, std::fabs(a[e]));
  const double tol = 1e-10 * big;
  for (std::size_t j = 0; j < k; ++j) {
    double v = a[j * k + j];
    for (std::size_t p = 0; p < j; ++p) v -= l[j * k + p] * l[j * k + p];
    if (!(v >= -tol)) return j + 1;
    l[j * k + j] = v > tol ? std::sqrt(v) : 0.0;
    for (std::size_t i = j + 1; i < k; ++i) {
      double u = a[i * k + j];
      for (std::size_t p = 0; p < j; ++p) u -= l[i * k + p] * l[j * k + p];
      if (l[j * k + j] > 0) l[i * k + j] = u / l[j * k + j];
      else if (std::fabs(u) > 1e-8 * big + 1e-300) return j + 1;
    }
  }
  return 0;
}

/// A data covariance argument of gaussian_dlm_obs: symmetric and positive semi-definite, or throws
/// naming the argument and the entry.
inline void check_spsd_data(const double* a, std::size_t k, const char* fn, const char* arg) {
  if (a == nullptr) return;
  check_symmetric_data(a, k, fn, arg);
  std::vector<double> l;
  if (const std::size_t bad = semidefinite_cholesky(a, k, l); bad != 0)
    throw std::invalid_argument(std::string("tyche::") + fn + ": " + arg + " is not positive semi-definite (pivot " +
                                std::to_string(bad) + " of its Cholesky factorisation is negative, or zero with a "
                                "non-zero entry below it)");
}

/// An argument of gaussian_dlm_obs as a node of its entries: a data matrix (checked finite; with
/// rows given, it must have that many) or a vector expression as matrix_entries makes them, a
/// scalar (a number or a scalar expression) as itself, a 1 × 1 matrix.
template <class M>
auto dlm_matrix(const M& m, const char* arg, std::size_t rows = 0) {
  using N = node_t<M>;
  if constexpr (is_data_matrix_v<N> || is_vector_v<N>) return matrix_entries(m, dlm_call, arg, rows);
  else return as_node(m);
}
/// The values of an argument node when they are known (data, or a constant), else null.
template <class N>
const double* dlm_known_values(const N& n) {
  if constexpr (kind_of<N> == node_kind::constant) return &n.value;
  else return data_values(n);
}

/// Every known value of an argument (data, or a number) finite, or throws naming the argument,
/// the entry (1-based) and the value.
template <class N>
void check_dlm_finite(const N& node, const char* arg) {
  const double* x = dlm_known_values(node);
  if (x == nullptr) return;
  for (std::size_t i = 0; i < operand_size(node); ++i)
    if (!std::isfinite(x[i]))
      throw std::invalid_argument(std::string("tyche::") + dlm_call + ": " + arg + "[" + std::to_string(i + 1) +
                                  "] = " + format_number(x[i]) + "; data must be finite");
}

/// L z for L lower triangular (k × k) and z standard normal: a draw from N(0, L Lᵀ).
template <class G>
void add_correlated_normal(G& rng, const std::vector<double>& l, std::size_t k, double* out) {
  std::normal_distribution<double> z01;
  std::vector<double> z(k);
  for (auto& v : z) v = z01(rng);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j <= i; ++j) out[i] += l[i * k + j] * z[j];
}
}  // namespace detail

/// gaussian_dlm_obs(F, G, V, W, m0, C0): the arguments as vector nodes of their entries (row
/// major), n the state's dimension, r the observations'.
template <class F, class G, class V, class W, class M0, class C0>
struct gaussian_dlm_obs_distribution : distribution<gaussian_dlm_obs_distribution<F, G, V, W, M0, C0>> {
  static constexpr const char* family = "gaussian_dlm_obs";
  F f;
  G g;
  V v;
  W w;
  M0 m0;
  C0 c0;
  std::size_t n = 1, r = 1;
  bool diagonal_v = false;
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    using N = detail::node_t<X>;
    if constexpr (detail::is_data_matrix_v<N>) {
      return log_prob(detail::matrix_entries(detail::as_node(x), detail::dlm_call, "y", r));
    } else if constexpr (!is_vector_v<N>) {
      static_assert(is_vector_v<N>, "tyche::gaussian_dlm_obs(F, G, V, W, m0, C0): y must be a data matrix of r rows "
                                    "(matrix(y, r, T)) or the r*T values of one (row major)");
      return constant{0.0};  // no further errors
    } else {
      const N yn = detail::as_node(x);
      const std::size_t steps = yn.size() / r;
      if (yn.size() % r != 0 || steps == 0)
        throw std::invalid_argument(std::string("tyche::") + detail::dlm_call + ": y has " +
                                    std::to_string(yn.size()) + " values, which is not a positive multiple of r = " +
                                    std::to_string(r) + " (F is " + std::to_string(n) + " x " + std::to_string(r) +
                                    "; y is r x T, row major)");
      return at(make_vector_op(ops::gaussian_dlm_map{n, r, steps, diagonal_v}, 1, yn, f, g, v, w, m0, c0), 0);
    }
  }
  auto arguments() const { return std::tuple{f, g, v, w, m0, c0}; }
  template <class F2, class G2, class V2, class W2, class M02, class C02>
  auto with_arguments(const F2& f2, const G2& g2, const V2& v2, const W2& w2, const M02& m02, const C02& c02) const {
    return gaussian_dlm_obs_distribution<F2, G2, V2, W2, M02, C02>{{}, f2, g2, v2, w2, m02, c02, n, r, diagonal_v};
  }
  static constexpr bool whole_arguments = true;
  /// m values (T = m / r steps): θ₀ from N(m0, C0), θₜ = G θₜ₋₁ + N(0, W), yₜ = Fᵀ θₜ + N(0, V).
  template <class Gen>
  std::vector<double> draw_all(Gen& rng, std::size_t m, const std::vector<double>& fv, const std::vector<double>& gv,
                               const std::vector<double>& vv, const std::vector<double>& wv,
                               const std::vector<double>& m0v, const std::vector<double>& c0v) const {
    const std::size_t steps = m / r;
    std::vector<double> lv, lw, lc;
    auto factor = [&](const std::vector<double>& a, std::size_t k, std::vector<double>& l, const char* arg) {
      std::vector<double> full(k * k);
      for (std::size_t i = 0; i < k; ++i)
        for (std::size_t j = 0; j < k; ++j) full[i * k + j] = i >= j ? a[i * k + j] : a[j * k + i];
      if (detail::semidefinite_cholesky(full.data(), k, l) != 0)
        throw std::invalid_argument(std::string("tyche::") + detail::dlm_call + ": cannot draw: " + arg +
                                    " is not positive semi-definite");
    };
    if (diagonal_v) {
      lv.assign(r * r, 0.0);
      for (std::size_t j = 0; j < r; ++j) lv[j * r + j] = std::sqrt(vv[j]);
    } else {
      factor(vv, r, lv, "V");
    }
    factor(wv, n, lw, "W");
    factor(c0v, n, lc, "C0");
    std::vector<double> theta(m0v.size() == 1 ? std::vector<double>(n, m0v[0]) : m0v), next(n), y(m, 0.0), obs(r);
    detail::add_correlated_normal(rng, lc, n, theta.data());
    for (std::size_t t = 0; t < steps; ++t) {
      for (std::size_t i = 0; i < n; ++i) {
        next[i] = 0;
        for (std::size_t j = 0; j < n; ++j) next[i] += gv[i * n + j] * theta[j];
      }
      detail::add_correlated_normal(rng, lw, n, next.data());
      theta.swap(next);
      for (std::size_t j = 0; j < r; ++j) {
        obs[j] = 0;
        for (std::size_t i = 0; i < n; ++i) obs[j] += fv[i * r + j] * theta[i];
      }
      detail::add_correlated_normal(rng, lv, r, obs.data());
      for (std::size_t j = 0; j < r; ++j) y[j * steps + t] = obs[j];
    }
    return y;
  }
};

/// The distribution gaussian_dlm_obs(F, G, V, W, m0, C0) of the r × T observations y of a Gaussian
/// dynamic linear model (see the top of this file): F (n × r), G (n × n), V (r × r, or the r
/// variances of independent observation errors), W (n × n), C0 (n × n) data matrices or
/// expressions of their entries (row major), m0 the n prior means of the state.
template <class Fx, class Gx, class Vx, class Wx, detail::operand M0, class C0x>
auto gaussian_dlm_obs(const Fx& f, const Gx& g, const Vx& v, const Wx& w, const M0& m0, const C0x& c0) {
  const char* fn = detail::dlm_call;
  const auto gn = detail::dlm_matrix(g, "G");
  const std::size_t n = detail::matrix_order(detail::operand_size(gn), fn, "G");
  const auto fnode = detail::dlm_matrix(f, "F", n);
  if (detail::operand_size(fnode) % n != 0 || detail::operand_size(fnode) == 0)
    throw std::invalid_argument(std::string("tyche::") + fn + ": F has " + std::to_string(detail::operand_size(fnode)) +
                                " values, which is not a positive multiple of n = " + std::to_string(n) +
                                " (G is n x n; F is n x r, row major)");
  const std::size_t r = detail::operand_size(fnode) / n;
  const auto vn = detail::dlm_matrix(v, "V", detail::is_data_matrix_v<detail::node_t<Vx>> ? r : 0);
  const bool diagonal_v = !detail::is_data_matrix_v<detail::node_t<Vx>> && detail::operand_size(vn) == r && r > 1;
  if (!diagonal_v && detail::operand_size(vn) != r * r)
    throw std::invalid_argument(std::string("tyche::") + fn + ": V has " + std::to_string(detail::operand_size(vn)) +
                                " values but must be r x r = " + std::to_string(r) + " x " + std::to_string(r) +
                                ", or a vector of its r diagonal entries (F is " + std::to_string(n) + " x " +
                                std::to_string(r) + ")");
  const auto wn = detail::dlm_matrix(w, "W");
  const auto cn = detail::dlm_matrix(c0, "C0");
  const auto mn = detail::as_node(m0);
  if (detail::operand_size(wn) != n * n || detail::operand_size(cn) != n * n || detail::operand_size(mn) != n)
    throw std::invalid_argument(std::string("tyche::") + fn + ": G is " + std::to_string(n) + " x " +
                                std::to_string(n) + " but W has " + std::to_string(detail::operand_size(wn)) + " values, m0 " +
                                std::to_string(detail::operand_size(mn)) + " and C0 " + std::to_string(detail::operand_size(cn)) +
                                " (W and C0 must be n x n, m0 an n-vector)");
  detail::check_dlm_finite(fnode, "F");
  detail::check_dlm_finite(gn, "G");
  detail::check_dlm_finite(vn, "V");
  detail::check_dlm_finite(wn, "W");
  detail::check_dlm_finite(mn, "m0");
  detail::check_dlm_finite(cn, "C0");
  if (const double* vd = detail::dlm_known_values(vn); vd != nullptr && diagonal_v) {
    for (std::size_t j = 0; j < r; ++j)
      if (!(vd[j] >= 0.0))
        throw std::invalid_argument(std::string("tyche::") + fn + ": V[" + std::to_string(j + 1) +
                                    "] = " + detail::format_number(vd[j]) +
                                    " must be a variance (>= 0): a vector V holds the diagonal of V");
  } else {
    detail::check_spsd_data(vd, r, fn, "V");
  }
  detail::check_spsd_data(detail::dlm_known_values(wn), n, fn, "W");
  detail::check_spsd_data(detail::dlm_known_values(cn), n, fn, "C0");
  return gaussian_dlm_obs_distribution<std::remove_const_t<decltype(fnode)>, std::remove_const_t<decltype(gn)>,
                                       std::remove_const_t<decltype(vn)>, std::remove_const_t<decltype(wn)>,
                                       detail::node_t<M0>, std::remove_const_t<decltype(cn)>>{
      {}, fnode, gn, vn, wn, mn, cn, n, r, diagonal_v};
}

/// Name ~ gaussian_dlm_obs(F, G, V, W, m0, C0): the r·T values of y (row major: y[i·T + t] is
/// Stan's y[i + 1, t + 1]), shape_of(r * T).
template <fixed_string Name, class Fx, class Gx, class Vx, class Wx, detail::operand M0, class C0x, shape_tag Shape>
auto gaussian_dlm_obs(const Fx& f, const Gx& g, const Vx& v, const Wx& w, const M0& m0, const C0x& c0, Shape shape) {
  const auto d = gaussian_dlm_obs(f, g, v, w, m0, c0);
  if (shape.size == 0 || shape.size % d.r != 0)
    throw std::invalid_argument(std::string("tyche::gaussian_dlm_obs<\"name\">(F, G, V, W, m0, C0, shape): ") +
                                Name.str() + " has " + std::to_string(shape.size) +
                                " values, which is not a positive multiple of r = " + std::to_string(d.r) +
                                " (shape_of(r * T): the r x T observations, row major)");
  return detail::make_random_variable<Name>(d, shape);
}

}  // namespace tyche
