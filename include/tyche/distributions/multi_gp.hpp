// tyche/distributions/multi_gp.hpp — multi_gp(Sigma, w) and multi_gp_cholesky(L, w): K Gaussian processes.
// The multivariate Gaussian process distribution of a K × N matrix y whose rows are independent
// normals with covariances Σ/wₖ (Stan Functions Reference, "Multivariate Gaussian process
// distribution"; multi_gp_cholesky is the same law given the Cholesky factor L of Σ):
//   log p(y | Σ, w) = Σₖ [ −½ wₖ yₖᵀ Σ⁻¹ yₖ + (N/2) log wₖ ] − (K/2) log det Σ − (K N/2) log 2π,
// Σ = L Lᵀ symmetric positive definite N × N (only its lower triangle is read), w > 0 a vector of
// K inverse scales (or one number, for every row). y is the K·N values, row k at k·N (a named vector of
// K·N, or `observe(data(y))`); yₖᵀ Σ⁻¹ yₖ = ‖L⁻¹ yₖ‖² by the triangular solve of multi_normal's
// rows (autodiff/matrix_ops.hpp's cholesky_residual_map) and multi_student_t's row sums of squares,
// ½ log det Σ = Σᵢ log Lᵢᵢ. Σ and L are data matrices (tyche::matrix(ptr, N, N); a data Σ is
// checked symmetric and positive definite, a data L for a positive diagonal) or expressions of
// their N² entries (row major: a GP kernel, `cholesky_decompose(add_diag(gp_exp_quad_cov(x,
// alpha, rho), 1e-9))`), Σ factored at every evaluation (NaN, a rejected point, where it is not
// positive definite). Draws: row k is L z / √wₖ, z standard normal.
// `multi_gp_lpdf(y, Sigma, w)`, `multi_gp_cholesky_lpdf(y, L, w)` for free terms.
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/matrix_ops.hpp>
#include <tyche/autodiff/multivariate_ops.hpp>
#include <tyche/distributions/detail/family.hpp>
#include <tyche/distributions/multi_normal.hpp>
#include <tyche/interval/support.hpp>
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
template <bool FromCovariance, class W>
void check_multi_gp_w(const W& w) {
  if constexpr (FromCovariance)
    static_assert(argument_support_t<W, domains::positive>::ok,
                  "tyche::multi_gp(Sigma, w): w must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
  else
    static_assert(argument_support_t<W, domains::positive>::ok,
                  "tyche::multi_gp_cholesky(L, w): w must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
  check_argument<domains::positive>(FromCovariance ? "multi_gp(Sigma, w)" : "multi_gp_cholesky(L, w)", "w", w);
}
}  // namespace detail

/// multi_gp(Sigma, w) (FromCovariance: L = cholesky_decompose(Sigma)) or multi_gp_cholesky(L, w):
/// L the expression of the N × N factor's entries (row major), w the K inverse scales (or one).
template <class W, class L, bool FromCovariance>
struct multi_gp_distribution : distribution<multi_gp_distribution<W, L, FromCovariance>> {
  static constexpr const char* family = FromCovariance ? "multi_gp" : "multi_gp_cholesky";
  static constexpr const char* call = FromCovariance ? "multi_gp(Sigma, w)" : "multi_gp_cholesky(L, w)";
  W w;
  L l;
  std::size_t n = 1;  // the order of Σ: each row's length
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    using N = detail::node_t<X>;
    static_assert(is_vector_v<N>, "tyche::multi_gp(Sigma, w) / multi_gp_cholesky(L, w): y must be a vector of the "
                                  "K*N values of a K x N matrix (row major)");
    const N yn = detail::as_node(x);
    const std::size_t rows = yn.size() / n;
    const std::size_t wn = detail::operand_size(w);
    if (yn.size() % n != 0 || rows == 0 || (is_vector_v<detail::node_t<W>> ? wn != rows : wn != 1))
      throw std::invalid_argument(std::string("tyche::") + call + ": y has " + std::to_string(yn.size()) +
                                  " values but " + (FromCovariance ? "Sigma" : "L") + " is " + std::to_string(n) +
                                  " x " + std::to_string(n) + " and w has " + std::to_string(wn) +
                                  " (y must be K x N, row major, with K the size of w)");
    const auto z = make_vector_op(ops::cholesky_residual_map{n}, yn.size(), l, yn, constant{0.0});
    const auto q = make_vector_op(ops::row_sums_of_squares_map{n}, rows, z);
    const auto log_det_half = make_vector_op(ops::diagonal_sum_map<false, true>{n, 1.0, 0.0}, 1, l);
    const double norm = double(rows) * double(n) * detail::half_log_two_pi;
    if constexpr (is_vector_v<detail::node_t<W>>)
      return lit<-1, 2> * dot(w, q) + constant{0.5 * double(n)} * sum(log(w)) -
             constant{double(rows)} * at(log_det_half, 0) - constant{norm};
    else
      return lit<-1, 2> * w * sum(q) + constant{0.5 * double(n) * double(rows)} * log(w) -
             constant{double(rows)} * at(log_det_half, 0) - constant{norm};
  }
  auto arguments() const { return std::tuple{w, l}; }
  template <class W2, class L2>
  auto with_arguments(const W2& w2, const L2& l2) const {
    return multi_gp_distribution<W2, L2, FromCovariance>{{}, w2, l2, n};
  }
  auto check_supports() const { detail::check_multi_gp_w<FromCovariance>(w); }
  static constexpr bool whole_arguments = true;
  /// m values (m/N rows): row r is L z / √w_r, z standard normal.
  template <class G>
  std::vector<double> draw_all(G& rng, std::size_t m, const std::vector<double>& wv,
                               const std::vector<double>& lv) const {
    std::normal_distribution<double> z01;
    std::vector<double> z(n), y(m);
    for (std::size_t r = 0; r * n < m; ++r) {
      for (auto& v : z) v = z01(rng);
      const double scale = 1.0 / std::sqrt(wv.size() == 1 ? wv[0] : wv[r]);
      for (std::size_t i = 0; i < n && r * n + i < m; ++i) {
        double acc = 0;
        for (std::size_t j = 0; j <= i; ++j) acc += lv[i * n + j] * z[j];
        y[r * n + i] = scale * acc;
      }
    }
    return y;
  }
};

namespace detail {
template <bool FromCovariance, class W, class LN>
auto make_multi_gp(const W& w, const LN& l, std::size_t n) {
  using WN = node_t<W>;
  const WN wn = as_node(w);
  check_multi_gp_w<FromCovariance>(wn);
  return multi_gp_distribution<WN, LN, FromCovariance>{{}, wn, l, n};
}
template <class W>
auto multi_gp_shape(const W& w, std::size_t n) {
  return dynamic_shape{operand_size(w) * n};
}
}  // namespace detail

/// The distribution multi_gp(Sigma, w): Sigma a data matrix (N × N, checked symmetric and
/// positive definite) or an expression of its N² entries (row major; lower triangle read), w the
/// K inverse scales of the rows (a vector, or one for every row).
template <class Sx, detail::operand W>
  requires(std::is_same_v<std::remove_cvref_t<Sx>, data_matrix> || detail::matrix_expression<Sx>)
auto multi_gp(const Sx& sigma, const W& w) {
  const auto sn = detail::matrix_entries(sigma, "multi_gp(Sigma, w)", "Sigma");
  const std::size_t n = detail::matrix_order(sn.size(), "multi_gp(Sigma, w)", "Sigma");
  detail::check_spd_data(detail::data_values(sn), n, "multi_gp(Sigma, w)", "Sigma");
  return detail::make_multi_gp<true>(w, cholesky_decompose(sn), n);
}
/// The distribution multi_gp_cholesky(L, w): L a data Cholesky factor (N × N, positive diagonal)
/// or an expression of its N² entries (row major; the part above the diagonal is not read).
template <class Lx, detail::operand W>
  requires(std::is_same_v<std::remove_cvref_t<Lx>, data_matrix> || detail::matrix_expression<Lx>)
auto multi_gp_cholesky(const Lx& l, const W& w) {
  if constexpr (std::is_same_v<std::remove_cvref_t<Lx>, data_matrix>)
    detail::check_cholesky_factor(l, "multi_gp_cholesky(L, w)");
  const auto ln = detail::matrix_entries(l, "multi_gp_cholesky(L, w)", "L");
  const std::size_t n = detail::matrix_order(ln.size(), "multi_gp_cholesky(L, w)", "L");
  return detail::make_multi_gp<false>(w, ln, n);
}
/// Name ~ multi_gp(Sigma, w): K·N values, K the size of w (row k at k·N).
template <fixed_string Name, class Sx, detail::operand W>
auto multi_gp(const Sx& sigma, const W& w) {
  const auto d = multi_gp(sigma, w);
  return detail::make_random_variable<Name>(d, detail::multi_gp_shape(w, d.n));
}
/// Name ~ multi_gp_cholesky(L, w): K·N values, K the size of w (row k at k·N).
template <fixed_string Name, class Lx, detail::operand W>
auto multi_gp_cholesky(const Lx& l, const W& w) {
  const auto d = multi_gp_cholesky(l, w);
  return detail::make_random_variable<Name>(d, detail::multi_gp_shape(w, d.n));
}

}  // namespace tyche
