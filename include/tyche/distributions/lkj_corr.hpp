// tyche/distributions/lkj_corr.hpp — lkj_corr(eta, K) on K × K correlation matrices.
//   log p(Ω | η) = (η − 1) log det Ω − log c_K(η),   η > 0, K ≥ 2,
// Ω symmetric positive definite with unit diagonal (a K·K vector, row major), c_K(η) as for
// lkj_corr_cholesky (Lewandowski, Kurowicka & Joe 2009), the density with respect to Ω's
// strictly lower entries. log det Ω = 2 Σ log Lᵢᵢ with L = cholesky_decompose(Ω), O(K³) per
// evaluation: where Ω is only used through its factor, lkj_corr_cholesky on a
// cholesky_factor_corr variable is the cheaper model of the same law. A named variable takes
// the corr_matrix transform (transforms/matrix.hpp): `auto Omega = lkj_corr<"Omega">(2.0, K);`
// (Stan: `corr_matrix[K] Omega; Omega ~ lkj_corr(2);`). η may be a parameter.
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/matrix_ops.hpp>
#include <tyche/distributions/detail/family.hpp>
#include <tyche/distributions/lkj_corr_cholesky.hpp>
#include <tyche/interval/support.hpp>
#include <tyche/operations/matrices.hpp>
#include <tyche/transforms/matrix.hpp>

#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace tyche {

template <class Eta>
struct lkj_corr_distribution : distribution<lkj_corr_distribution<Eta>> {
  static constexpr const char* family = "lkj_corr";
  Eta eta;
  std::size_t k = 2;
  auto transform() const { return transforms::corr_matrix{k}; }
  template <class X>
  auto log_prob(const X& x) const {
    using N = detail::node_t<X>;
    static_assert(is_vector_v<N>, "tyche::lkj_corr(eta, K): x must be a vector of K*K values");
    const N omega = detail::as_node(x);
    if (omega.size() != k * k)
      throw std::invalid_argument("tyche::lkj_corr(eta, K): x has " + std::to_string(omega.size()) +
                                  " values but K = " + std::to_string(k) + " needs " + std::to_string(k * k) +
                                  " (the matrix, row major)");
    const auto l = make_vector_op(ops::cholesky_decompose_map{k}, k * k, omega);
    const auto log_det = make_vector_op(ops::diagonal_sum_map<false, true>{k, 2.0, 0.0}, 1, l);
    const auto log_c = make_vector_op(ops::lkj_log_normaliser_map{k}, 1, eta);
    return (eta - lit<1>) * at(log_det, 0) - at(log_c, 0);
  }
  auto arguments() const { return std::tuple{eta}; }
  template <class E>
  auto with_arguments(const E& e) const {
    return lkj_corr_distribution<E>{{}, e, k};
  }
  auto check_supports() const {
    static_assert(argument_support_t<Eta, domains::positive>::ok,
                  "tyche::lkj_corr(eta, K): eta must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("lkj_corr(eta, K)", "eta", eta);
  }
  static constexpr bool whole_arguments = true;
  /// One draw of Ω = L Lᵀ (K·K values), L from detail::draw_lkj_cholesky.
  template <class G>
  std::vector<double> draw_all(G& rng, std::size_t, const std::vector<double>& e) const {
    const auto l = detail::draw_lkj_cholesky(rng, k, e[0]);
    std::vector<double> omega(k * k);
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) {
        double acc = 0;
        for (std::size_t p = 0; p <= (i < j ? i : j); ++p) acc += l[i * k + p] * l[j * k + p];
        omega[i * k + j] = acc;
      }
    return omega;
  }
};

/// The distribution lkj_corr(eta, K), e.g. to observe a correlation matrix (K·K values).
template <detail::operand Eta>
auto lkj_corr(const Eta& eta, std::size_t k) {
  static_assert(!is_vector_v<detail::node_t<Eta>>, "tyche::lkj_corr(eta, K): eta must be a scalar");
  detail::check_lkj_order(k, "lkj_corr(eta, K)");
  return lkj_corr_distribution<detail::node_t<Eta>>{{}, detail::as_node(eta), k};
}
/// Name ~ lkj_corr(eta, K): a K × K correlation matrix, `lkj_corr<"Omega">(2.0, 3)`.
template <fixed_string Name, detail::operand Eta>
auto lkj_corr(const Eta& eta, std::size_t k) {
  const auto d = lkj_corr(eta, k);
  return detail::make_random_variable<Name>(d, dynamic_shape{d.transform().parameter_size()});
}

}  // namespace tyche
