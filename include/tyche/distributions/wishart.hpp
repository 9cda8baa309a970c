// tyche/distributions/wishart.hpp — wishart(nu, S) and inv_wishart(nu, S) on K × K covariance matrices.
//   log W(W | ν, S)  = ((ν − K − 1)/2) log det W − ½ tr(S⁻¹W) − (νK/2) log 2 − (ν/2) log det S − log Γ_K(ν/2),
//   log IW(W | ν, S) = (ν/2) log det S − (νK/2) log 2 − log Γ_K(ν/2) − ((ν + K + 1)/2) log det W − ½ tr(S W⁻¹),
//   W, S symmetric positive definite, ν > K − 1,
// with log Γ_K(a) = (K(K − 1)/4) log π + Σ_{j=1..K} log Γ(a + (1 − j)/2) (Stan Functions
// Reference, "Wishart distribution" and "Inverse Wishart distribution"); the density is with
// respect to W's lower triangle. W and S are K·K vectors (row major; only the lower triangles
// are read). A named variable takes the cov_matrix transform (transforms/matrix.hpp):
// `auto Sigma = wishart<"Sigma">(4.0, matrix(S.data(), 3, 3));`, θ holds K(K + 1)/2
// coordinates. S is a data matrix (viewed: it must outlive the model; checked symmetric and
// positive definite) or an expression of K·K parameters; ν may be a parameter. Observed data
// is one matrix: `wishart(nu, S).observe(data(w))` with w the K·K values, checked symmetric and
// positive definite. The whole density is one vector_op (autodiff/multivariate_ops.hpp) with
// its gradient in ν, W and S: two Cholesky factorisations and inverses, O(K³). Draws: the
// Bartlett decomposition W = L A Aᵀ Lᵀ (S = L Lᵀ, A lower triangular with Aᵢᵢ² ~ χ²(ν − i + 1)
// and N(0, 1) below the diagonal); inv_wishart draws X ~ wishart(ν, S⁻¹) and returns X⁻¹.
//
// Data checks (std::invalid_argument naming the entry and the value):
//   W[i, j] = v but W[j, i] = w          W is not positive definite (pivot i is v)   (observed W)
//   S[i, j] = v but S[j, i] = w          S is not positive definite (pivot i is v)   (data S)
//   nu = v must be > K - 1 = k                                                       (ν known)
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/multivariate_ops.hpp>
#include <tyche/distributions/detail/family.hpp>
#include <tyche/distributions/multi_normal.hpp>
#include <tyche/interval/support.hpp>
#include <tyche/operations/matrices.hpp>
#include <tyche/transforms/matrix.hpp>
#include <tyche/scalar/format.hpp>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace tyche {

namespace detail {
/// One draw of a Wishart(ν, S) matrix (K·K values, row major) from the Cholesky factor l of S:
/// Bartlett's decomposition.
template <class G>
std::vector<double> draw_wishart_from_factor(G& rng, std::size_t k, double nu, const std::vector<double>& l) {
  std::normal_distribution<double> z01;
  std::vector<double> a(k * k, 0.0), la(k * k, 0.0), w(k * k);
  for (std::size_t i = 0; i < k; ++i) {
    a[i * k + i] = std::sqrt(std::chi_squared_distribution<double>(nu - double(i))(rng));
    for (std::size_t j = 0; j < i; ++j) a[i * k + j] = z01(rng);
  }
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      double acc = 0;
      for (std::size_t p = j; p <= i; ++p) acc += l[i * k + p] * a[p * k + j];
      la[i * k + j] = acc;
    }
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      double acc = 0;
      for (std::size_t p = 0; p <= j; ++p) acc += la[i * k + p] * la[j * k + p];
      w[i * k + j] = w[j * k + i] = acc;
    }
  return w;
}

/// The inverse of a symmetric positive-definite matrix (K·K values), through its Cholesky factor.
inline std::vector<double> spd_inverse(const std::vector<double>& m, std::size_t k, const char* who,
                                       const char* name) {
  const auto l = cholesky_lower(m.data(), k, who, name);
  std::vector<double> work(k * k), inv(k * k);
  inverse_from_cholesky(k, l.data(), work.data(), inv.data());
  return inv;
}

/// ν > K − 1 when ν's value is known (a number, a literal, data).
template <class Nu>
void check_wishart_nu(const Nu& nu, std::size_t k, const char* who) {
  double v = 0;
  if constexpr (kind_of<Nu> == node_kind::constant) v = nu.value;
  else if constexpr (kind_of<Nu> == node_kind::literal) v = Nu::value;
  else return;
  if (!(v > double(k) - 1.0))
    throw std::invalid_argument(std::string("tyche::") + who + ": nu = " + tyche::detail::format_number(v) + " must be > K - 1 = " +
                                std::to_string(k - 1));
}
}  // namespace detail

/// wishart(nu, S) (Inverse = false) or inv_wishart(nu, S) (Inverse = true): S a node of K·K values.
template <class Nu, class S, bool Inverse = false>
struct wishart_distribution : distribution<wishart_distribution<Nu, S, Inverse>> {
  static constexpr const char* family = Inverse ? "inv_wishart" : "wishart";
  static constexpr const char* call = Inverse ? "inv_wishart(nu, S)" : "wishart(nu, S)";
  Nu nu;
  S s;
  std::size_t k = 1;
  auto transform() const { return transforms::cov_matrix{k}; }
  template <class X>
  auto log_prob(const X& x) const {
    using N = detail::node_t<X>;
    static_assert(is_vector_v<N>, "tyche::wishart(nu, S) / inv_wishart(nu, S): x must be a vector of K*K values");
    if constexpr (!is_vector_v<N>) {
      return constant{0.0};  // the static_assert has said why
    } else {
      const N w = detail::as_node(x);
      if (w.size() != k * k)
        throw std::invalid_argument(std::string("tyche::") + call + ": x has " + std::to_string(w.size()) +
                                    " values but S is " + std::to_string(k) + " x " + std::to_string(k) +
                                    " (x needs " + std::to_string(k * k) + ", the matrix, row major)");
      return at(make_vector_op(ops::wishart_map<Inverse>{k}, 1, nu, w, s), 0);
    }
  }
  /// Checks an observed matrix (data; finite: distribution::observe): K·K values, symmetric,
  /// positive definite.
  template <class Y>
  void check_observed(const Y& y) const {
    if constexpr (kind_of<Y> == node_kind::data_vector) {
      if (y.size() != k * k)
        throw std::invalid_argument(std::string("tyche::") + family + "(...).observe(y): y has " +
                                    std::to_string(y.size()) + " values but S is " + std::to_string(k) + " x " +
                                    std::to_string(k) + " (y needs " + std::to_string(k * k) + ", the matrix, row major)");
      (void)detail::cholesky_lower(y.ptr, k, (std::string(family) + "(...).observe(y)").c_str(), "W");
    }
  }
  auto arguments() const { return std::tuple{nu, s}; }
  template <class N2, class S2>
  auto with_arguments(const N2& n, const S2& s2) const {
    return wishart_distribution<N2, S2, Inverse>{{}, n, s2, k};
  }
  auto check_supports() const {
    if constexpr (Inverse)
      static_assert(argument_support_t<Nu, domains::positive>::ok,
                    "tyche::inv_wishart(nu, S): nu must be > 0, but its support (spelled out in "
                    "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    else
      static_assert(argument_support_t<Nu, domains::positive>::ok,
                    "tyche::wishart(nu, S): nu must be > 0, but its support (spelled out in "
                    "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>(call, "nu", nu);
    detail::check_wishart_nu(nu, k, call);
  }
  static constexpr bool whole_arguments = true;
  /// One draw of W (K·K values).
  template <class G>
  std::vector<double> draw_all(G& rng, std::size_t, const std::vector<double>& nv,
                               const std::vector<double>& sv) const {
    if constexpr (Inverse) {
      const auto s_inv = detail::spd_inverse(sv, k, call, "S");
      const auto x = detail::draw_wishart_from_factor(rng, k, nv[0], detail::cholesky_lower(s_inv.data(), k, call, "S"));
      return detail::spd_inverse(x, k, call, "W");
    } else {
      return detail::draw_wishart_from_factor(rng, k, nv[0], detail::cholesky_lower(sv.data(), k, call, "S"));
    }
  }
};

namespace detail {
template <bool Inverse, class Nu>
auto make_wishart(const Nu& nu, const data_matrix& s) {
  static_assert(!is_vector_v<node_t<Nu>>, "tyche::wishart(nu, S) / inv_wishart(nu, S): nu must be a scalar");
  const char* who = Inverse ? "inv_wishart(nu, S)" : "wishart(nu, S)";
  if (s.rows != s.cols || s.rows == 0)
    throw std::invalid_argument(std::string("tyche::") + who + ": S must be square and non-empty; it is " +
                                std::to_string(s.rows) + " x " + std::to_string(s.cols));
  (void)cholesky_lower(s.ptr, s.rows, who, "S");  // symmetric and positive definite, or throws
  const auto sn = data(s.ptr, s.rows * s.cols);
  const auto n = as_node(nu);
  check_wishart_nu(n, s.rows, who);
  return wishart_distribution<node_t<Nu>, std::remove_cvref_t<decltype(sn)>, Inverse>{{}, n, sn, s.rows};
}
template <bool Inverse, class Nu, class Sx>
auto make_wishart(const Nu& nu, const Sx& s) {
  static_assert(!is_vector_v<node_t<Nu>>, "tyche::wishart(nu, S) / inv_wishart(nu, S): nu must be a scalar");
  const auto sn = as_node(s);
  const std::size_t k = matrix_order(sn.size(), Inverse ? "inv_wishart(nu, S)" : "wishart(nu, S)", "S");
  const auto n = as_node(nu);
  check_wishart_nu(n, k, Inverse ? "inv_wishart(nu, S)" : "wishart(nu, S)");
  return wishart_distribution<node_t<Nu>, node_t<Sx>, Inverse>{{}, n, sn, k};
}
template <class D>
auto wishart_variable_shape(const D& d) {
  return dynamic_shape{d.transform().parameter_size()};
}
}  // namespace detail

/// The distribution wishart(nu, S) for a data scale matrix S (viewed), e.g. to observe a matrix.
template <detail::operand Nu>
auto wishart(const Nu& nu, const data_matrix& s) {
  return detail::make_wishart<false>(nu, s);
}
/// The distribution wishart(nu, S) for S an expression of K·K values (row major).
template <detail::operand Nu, class Sx>
  requires detail::matrix_expression<Sx>
auto wishart(const Nu& nu, const Sx& s) {
  return detail::make_wishart<false>(nu, s);
}
/// Name ~ wishart(nu, S): a K × K covariance matrix (cov_matrix transform).
template <fixed_string Name, detail::operand Nu, class Sx>
auto wishart(const Nu& nu, const Sx& s) {
  const auto d = wishart(nu, s);
  return detail::make_random_variable<Name>(d, detail::wishart_variable_shape(d));
}
/// The distribution inv_wishart(nu, S) for a data scale matrix S (viewed).
template <detail::operand Nu>
auto inv_wishart(const Nu& nu, const data_matrix& s) {
  return detail::make_wishart<true>(nu, s);
}
/// The distribution inv_wishart(nu, S) for S an expression of K·K values (row major).
template <detail::operand Nu, class Sx>
  requires detail::matrix_expression<Sx>
auto inv_wishart(const Nu& nu, const Sx& s) {
  return detail::make_wishart<true>(nu, s);
}
/// Name ~ inv_wishart(nu, S): a K × K covariance matrix (cov_matrix transform).
template <fixed_string Name, detail::operand Nu, class Sx>
auto inv_wishart(const Nu& nu, const Sx& s) {
  const auto d = inv_wishart(nu, s);
  return detail::make_random_variable<Name>(d, detail::wishart_variable_shape(d));
}

}  // namespace tyche
