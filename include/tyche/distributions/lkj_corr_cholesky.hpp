// tyche/distributions/lkj_corr_cholesky.hpp — lkj_corr_cholesky(eta, K) on Cholesky factors of K × K correlation matrices.
//   log p(L | η) = Σ_{k=2..K} (K − k + 2η − 2) log Lₖₖ − log c_K(η),   η > 0, K ≥ 2,
//   log c_K(η) = Σ_{j=1..K−1} (K − j) [(2η + K − j − 2) log 2 + 2 log Γ(η + (K − j − 1)/2)
//                                      − log Γ(2η + K − j − 1)],
// L lower triangular with positive diagonal and rows of norm 1 (a K·K vector, row major). It
// is the density of L = cholesky(Ω), with respect to L's strictly lower entries, when Ω has
// the LKJ density det(Ω)^{η−1} / c_K(η) (Lewandowski, Kurowicka & Joe 2009; the kernel is
// Stan's, functions reference "LKJ Cholesky distribution"; c_K is computed through the
// canonical partial correlations, independent Beta(aⱼ, aⱼ) on (−1, 1) with aⱼ = η + (K − j − 1)/2
// in column j). η = 1 is uniform over correlation matrices; each correlation Ωᵢⱼ then has the
// law 2·Beta(η − 1 + K/2, η − 1 + K/2) − 1 (mean 0, variance 1/(2η + K − 1)).
// A named variable takes the cholesky_factor_corr transform (transforms/matrix.hpp):
// `auto L_Omega = lkj_corr_cholesky<"L_Omega">(2.0, K);`, θ holds K(K−1)/2 coordinates and the
// value is the K·K matrix (names L_Omega[1,1] … L_Omega[K,K]). η may be a parameter. The code's
// sum also takes k = 1, whose term is 0 since L₁₁ = 1.
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/matrix_ops.hpp>
#include <tyche/distributions/detail/family.hpp>
#include <tyche/interval/support.hpp>
#include <tyche/operations/matrices.hpp>
#include <tyche/transforms/matrix.hpp>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace tyche {

namespace detail {
inline void check_lkj_order(std::size_t k, const char* who = "lkj_corr_cholesky(eta, K)") {
  if (k < 2)
    throw std::invalid_argument(std::string("tyche::") + who + ": K = " + std::to_string(k) + " must be at least 2");
}

/// One draw of the Cholesky factor of an LKJ(η) correlation matrix (K·K values): the canonical
/// partial correlations of column j are independent 2·Beta(aⱼ, aⱼ) − 1, aⱼ = η + (K − 2 − j)/2
/// (0-based j), and L is built from them as the cholesky_factor_corr transform does.
template <class G>
std::vector<double> draw_lkj_cholesky(G& rng, std::size_t k, double eta) {
  std::vector<double> l(k * k, 0.0);
  l[0] = 1.0;
  for (std::size_t i = 1; i < k; ++i) {
    double rest = 1.0;  // 1 − Σ_{j'<j} Lᵢⱼ'²
    for (std::size_t j = 0; j < i; ++j) {
      const double a = eta + 0.5 * (double(k) - 2.0 - double(j));
      const double g1 = std::gamma_distribution<double>(a, 1.0)(rng);
      const double g2 = std::gamma_distribution<double>(a, 1.0)(rng);
      const double z = (g1 - g2) / (g1 + g2);  // 2·Beta(a, a) − 1
      l[i * k + j] = z * std::sqrt(rest);
      rest *= 1.0 - z * z;
    }
    l[i * k + i] = std::sqrt(rest);
  }
  return l;
}
}  // namespace detail

template <class Eta>
struct lkj_corr_cholesky_distribution : distribution<lkj_corr_cholesky_distribution<Eta>> {
  static constexpr const char* family = "lkj_corr_cholesky";
  Eta eta;
  std::size_t k = 2;
  auto transform() const { return transforms::cholesky_factor_corr{k}; }
  template <class X>
  auto log_prob(const X& x) const {
    using N = detail::node_t<X>;
    static_assert(is_vector_v<N>, "tyche::lkj_corr_cholesky(eta, K): x must be a vector of K*K values");
    const N l = detail::as_node(x);
    if (l.size() != k * k)
      throw std::invalid_argument("tyche::lkj_corr_cholesky(eta, K): x has " + std::to_string(l.size()) +
                                  " values but K = " + std::to_string(k) + " needs " + std::to_string(k * k) +
                                  " (the matrix, row major)");
    // Σᵢ (K − 3 − i) log Lᵢᵢ + 2η Σᵢ log Lᵢᵢ, i = k − 1 (0-based): Stan's Σₖ (K − k + 2η − 2) log Lₖₖ.
    const auto fixed = make_vector_op(ops::diagonal_sum_map<false, true>{k, double(k) - 3.0, -1.0}, 1, l);
    const auto log_diagonal = make_vector_op(ops::diagonal_sum_map<false, true>{k, 1.0, 0.0}, 1, l);
    const auto log_c = make_vector_op(ops::lkj_log_normaliser_map{k}, 1, eta);
    return at(fixed, 0) + lit<2> * eta * at(log_diagonal, 0) - at(log_c, 0);
  }
  auto arguments() const { return std::tuple{eta}; }
  /// The same distribution with other arguments (do_ substitutes into them).
  template <class E>
  auto with_arguments(const E& e) const {
    return lkj_corr_cholesky_distribution<E>{{}, e, k};
  }
  auto check_supports() const {
    static_assert(argument_support_t<Eta, domains::positive>::ok,
                  "tyche::lkj_corr_cholesky(eta, K): eta must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("lkj_corr_cholesky(eta, K)", "eta", eta);
  }
  static constexpr bool whole_arguments = true;
  /// One draw of L (K·K values), detail::draw_lkj_cholesky.
  template <class G>
  std::vector<double> draw_all(G& rng, std::size_t, const std::vector<double>& e) const {
    return detail::draw_lkj_cholesky(rng, k, e[0]);
  }
};

/// The distribution lkj_corr_cholesky(eta, K), e.g. to observe a Cholesky factor (K·K values).
template <detail::operand Eta>
auto lkj_corr_cholesky(const Eta& eta, std::size_t k) {
  static_assert(!is_vector_v<detail::node_t<Eta>>, "tyche::lkj_corr_cholesky(eta, K): eta must be a scalar");
  detail::check_lkj_order(k);
  return lkj_corr_cholesky_distribution<detail::node_t<Eta>>{{}, detail::as_node(eta), k};
}
/// Name ~ lkj_corr_cholesky(eta, K): the Cholesky factor of a K × K correlation matrix,
/// `lkj_corr_cholesky<"L_Omega">(2.0, 3)` (Stan: `cholesky_factor_corr[3] L_Omega;
/// L_Omega ~ lkj_corr_cholesky(2);`).
template <fixed_string Name, detail::operand Eta>
auto lkj_corr_cholesky(const Eta& eta, std::size_t k) {
  const auto d = lkj_corr_cholesky(eta, k);
  return detail::make_random_variable<Name>(d, dynamic_shape{d.transform().parameter_size()});
}

}  // namespace tyche
