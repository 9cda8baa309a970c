// tyche/distributions/wishart_cholesky.hpp — wishart_cholesky(nu, L_S) and
// inv_wishart_cholesky(nu, L_S) on lower Cholesky factors L_W of K × K covariance matrices:
//   log WishartCholesky(L_W | ν, L_S) = log Wishart(L_W L_Wᵀ | ν, L_S L_Sᵀ) + log |J|,
//   log InvWishartCholesky(L_W | ν, L_S) = log InvWishart(L_W L_Wᵀ | ν, L_S L_Sᵀ) + log |J|,
//   |J| = 2^K Π_{i=1..K} L_W,ii^(K−i+1) (the Jacobian of W = L_W L_Wᵀ), ν > K − 1,
// Stan's wishart_cholesky and inv_wishart_cholesky (Stan Functions Reference, "Wishart
// distribution, Cholesky parameterization"): the factor's density, so that a model that works
// with L_W (a multi_normal_cholesky likelihood) needs no factorisation of W. L_W and L_S are
// K·K vectors (row major, lower triangular with positive diagonals; only the lower triangles
// are read). A named variable takes the cholesky_factor_cov transform
// (transforms/matrix.hpp): `auto L = wishart_cholesky<"L">(5.0, matrix(LS.data(), 3, 3));`, θ
// holds K(K + 1)/2 coordinates. L_S is a data matrix (viewed: it must outlive the model;
// checked lower triangular with a positive diagonal) or an expression of K·K parameters (a
// cholesky_factor_cov variable, `cholesky_decompose(Sigma)`); ν may be a parameter. Observed
// data is one factor: `wishart_cholesky(nu, L_S).observe(data(l))`, checked the same way. The
// density is one vector_op (autodiff/multivariate_ops.hpp, wishart_cholesky_map) with its
// gradient in ν, L_W and L_S: one triangular inverse and two triangular products, O(K³), no
// factorisation. Draws: L_W = L_S A for wishart_cholesky (Bartlett: A lower triangular with
// Aᵢᵢ² ~ χ²(ν − i + 1) and N(0, 1) below the diagonal); inv_wishart_cholesky the Cholesky factor
// of the inverse of a Wishart(ν, S⁻¹) draw.
//
// Data checks (std::invalid_argument naming the entry and the value):
//   L_S[i, j] = v must be 0 (the matrix is lower triangular)             (data L_S)
//   L_W[i, i] = v must be > 0 (a diagonal entry of a Cholesky factor)    (observed L_W)
//   nu = v must be > K - 1 = k                                           (ν known)
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/multivariate_ops.hpp>
#include <tyche/distributions/detail/family.hpp>
#include <tyche/distributions/multi_normal.hpp>
#include <tyche/distributions/wishart.hpp>
#include <tyche/interval/support.hpp>
#include <tyche/operations/matrices.hpp>
#include <tyche/transforms/matrix.hpp>

#include <cstddef>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace tyche {

namespace detail {
/// A lower-triangular factor with a positive diagonal (K·K values), or throws naming the entry.
inline void check_cholesky_factor(const double* x, std::size_t k, const std::string& who, const char* name) {
  std::size_t bad = 0;
  const std::string problem = transforms::detail::check_lower_triangular(x, k, bad);
  if (!problem.empty())
    throw std::invalid_argument("tyche::" + who + ": " + name + "[" + std::to_string(bad / k + 1) + ", " +
                                std::to_string(bad % k + 1) + "] = " + format_number(x[bad]) + " " + problem);
}
/// L Lᵀ (K·K values) of a lower-triangular factor l.
inline std::vector<double> factor_product(const std::vector<double>& l, std::size_t k) {
  std::vector<double> m(k * k);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      double acc = 0;
      for (std::size_t p = 0; p <= j; ++p) acc += l[i * k + p] * l[j * k + p];
      m[i * k + j] = m[j * k + i] = acc;
    }
  return m;
}
}  // namespace detail

/// wishart_cholesky(nu, L_S) (Inverse = false) or inv_wishart_cholesky(nu, L_S) (Inverse =
/// true): L_S a node of K·K values.
template <class Nu, class LS, bool Inverse = false>
struct wishart_cholesky_distribution : distribution<wishart_cholesky_distribution<Nu, LS, Inverse>> {
  static constexpr const char* family = Inverse ? "inv_wishart_cholesky" : "wishart_cholesky";
  static constexpr const char* call = Inverse ? "inv_wishart_cholesky(nu, L_S)" : "wishart_cholesky(nu, L_S)";
  Nu nu;
  LS ls;
  std::size_t k = 1;
  auto transform() const { return transforms::cholesky_factor_cov{k}; }
  template <class X>
  auto log_prob(const X& x) const {
    using N = detail::node_t<X>;
    static_assert(is_vector_v<N>,
                  "tyche::wishart_cholesky(nu, L_S) / inv_wishart_cholesky(nu, L_S): x must be a vector of K*K values");
    if constexpr (!is_vector_v<N>) {
      return constant{0.0};  // the static_assert has said why
    } else {
      const N lw = detail::as_node(x);
      if (lw.size() != k * k)
        throw std::invalid_argument(std::string("tyche::") + call + ": x has " + std::to_string(lw.size()) +
                                    " values but L_S is " + std::to_string(k) + " x " + std::to_string(k) +
                                    " (x needs " + std::to_string(k * k) + ", the factor, row major)");
      return at(make_vector_op(ops::wishart_cholesky_map<Inverse>{k}, 1, nu, lw, ls), 0);
    }
  }
  /// Checks an observed factor (data; finite: distribution::observe): K·K values, lower
  /// triangular, positive diagonal.
  template <class Y>
  void check_observed(const Y& y) const {
    if constexpr (kind_of<Y> == node_kind::data_vector) {
      if (y.size() != k * k)
        throw std::invalid_argument(std::string("tyche::") + family + "(...).observe(y): y has " +
                                    std::to_string(y.size()) + " values but L_S is " + std::to_string(k) + " x " +
                                    std::to_string(k) + " (y needs " + std::to_string(k * k) + ", the factor, row major)");
      detail::check_cholesky_factor(y.ptr, k, std::string(family) + "(...).observe(y)", "L_W");
    }
  }
  auto arguments() const { return std::tuple{nu, ls}; }
  template <class N2, class S2>
  auto with_arguments(const N2& n, const S2& s2) const {
    return wishart_cholesky_distribution<N2, S2, Inverse>{{}, n, s2, k};
  }
  auto check_supports() const {
    if constexpr (Inverse)
      static_assert(argument_support_t<Nu, domains::positive>::ok,
                    "tyche::inv_wishart_cholesky(nu, L_S): nu must be > 0, but its support (spelled out in "
                    "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    else
      static_assert(argument_support_t<Nu, domains::positive>::ok,
                    "tyche::wishart_cholesky(nu, L_S): nu must be > 0, but its support (spelled out in "
                    "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>(call, "nu", nu);
    detail::check_wishart_nu(nu, k, call);
  }
  static constexpr bool whole_arguments = true;
  /// One draw of L_W (K·K values, zeros above the diagonal).
  template <class G>
  std::vector<double> draw_all(G& rng, std::size_t, const std::vector<double>& nv,
                               const std::vector<double>& lsv) const {
    if constexpr (Inverse) {
      const auto s_inv = detail::spd_inverse(detail::factor_product(lsv, k), k, call, "L_S L_S'");
      const auto x = detail::draw_wishart_from_factor(rng, k, nv[0], detail::cholesky_lower(s_inv.data(), k, call, "S"));
      const auto w = detail::spd_inverse(x, k, call, "W");
      return detail::cholesky_lower(w.data(), k, call, "W");
    } else {
      const auto w = detail::draw_wishart_from_factor(rng, k, nv[0], lsv);
      return detail::cholesky_lower(w.data(), k, call, "W");
    }
  }
};

namespace detail {
template <bool Inverse, class Nu>
auto make_wishart_cholesky(const Nu& nu, const data_matrix& ls) {
  static_assert(!is_vector_v<node_t<Nu>>, "tyche::wishart_cholesky(nu, L_S) / inv_wishart_cholesky(nu, L_S): nu must be a scalar");
  const char* who = Inverse ? "inv_wishart_cholesky(nu, L_S)" : "wishart_cholesky(nu, L_S)";
  if (ls.rows != ls.cols || ls.rows == 0)
    throw std::invalid_argument(std::string("tyche::") + who + ": L_S must be square and non-empty; it is " +
                                std::to_string(ls.rows) + " x " + std::to_string(ls.cols));
  check_cholesky_factor(ls.ptr, ls.rows, who, "L_S");
  const auto sn = data(ls.ptr, ls.rows * ls.cols);
  const auto n = as_node(nu);
  check_wishart_nu(n, ls.rows, who);
  return wishart_cholesky_distribution<node_t<Nu>, std::remove_cvref_t<decltype(sn)>, Inverse>{{}, n, sn, ls.rows};
}
template <bool Inverse, class Nu, class Lx>
auto make_wishart_cholesky(const Nu& nu, const Lx& ls) {
  static_assert(!is_vector_v<node_t<Nu>>, "tyche::wishart_cholesky(nu, L_S) / inv_wishart_cholesky(nu, L_S): nu must be a scalar");
  const char* who = Inverse ? "inv_wishart_cholesky(nu, L_S)" : "wishart_cholesky(nu, L_S)";
  const auto sn = as_node(ls);
  const std::size_t k = matrix_order(sn.size(), who, "L_S");
  const auto n = as_node(nu);
  check_wishart_nu(n, k, who);
  return wishart_cholesky_distribution<node_t<Nu>, node_t<Lx>, Inverse>{{}, n, sn, k};
}
}  // namespace detail

/// The distribution wishart_cholesky(nu, L_S) for a data factor L_S (viewed), e.g. to observe one.
template <detail::operand Nu>
auto wishart_cholesky(const Nu& nu, const data_matrix& ls) {
  return detail::make_wishart_cholesky<false>(nu, ls);
}
/// The distribution wishart_cholesky(nu, L_S) for L_S an expression of K·K values (row major).
template <detail::operand Nu, class Lx>
  requires detail::matrix_expression<Lx>
auto wishart_cholesky(const Nu& nu, const Lx& ls) {
  return detail::make_wishart_cholesky<false>(nu, ls);
}
/// Name ~ wishart_cholesky(nu, L_S): the Cholesky factor of a K × K covariance matrix
/// (cholesky_factor_cov transform).
template <fixed_string Name, detail::operand Nu, class Lx>
auto wishart_cholesky(const Nu& nu, const Lx& ls) {
  const auto d = wishart_cholesky(nu, ls);
  return detail::make_random_variable<Name>(d, detail::wishart_variable_shape(d));
}
/// The distribution inv_wishart_cholesky(nu, L_S) for a data factor L_S (viewed).
template <detail::operand Nu>
auto inv_wishart_cholesky(const Nu& nu, const data_matrix& ls) {
  return detail::make_wishart_cholesky<true>(nu, ls);
}
/// The distribution inv_wishart_cholesky(nu, L_S) for L_S an expression of K·K values (row major).
template <detail::operand Nu, class Lx>
  requires detail::matrix_expression<Lx>
auto inv_wishart_cholesky(const Nu& nu, const Lx& ls) {
  return detail::make_wishart_cholesky<true>(nu, ls);
}
/// Name ~ inv_wishart_cholesky(nu, L_S): the Cholesky factor of a K × K covariance matrix
/// (cholesky_factor_cov transform).
template <fixed_string Name, detail::operand Nu, class Lx>
auto inv_wishart_cholesky(const Nu& nu, const Lx& ls) {
  const auto d = inv_wishart_cholesky(nu, ls);
  return detail::make_random_variable<Name>(d, detail::wishart_variable_shape(d));
}

}  // namespace tyche
