// tyche/distributions/multi_normal_prec.hpp — multi_normal_prec(mu, Omega): a normal by its precision.
// The multivariate normal given its precision matrix Ω = Σ⁻¹ (Stan Functions Reference,
// "Multivariate normal distribution, precision parameterization"):
//   log p(x | μ, Ω) = −½ (x − μ)ᵀ Ω (x − μ) + ½ log det Ω − (K/2) log 2π,   x ∈ ℝᴷ,
// Ω symmetric positive definite, K × K; only its lower triangle is read. The quadratic form is
// one op (autodiff/multivariate_ops.hpp's precision_quadratic_map, O(K²) per row, no
// factorisation). As data (tyche::matrix(ptr, K, K), row-major), Ω is copied, checked symmetric
// and positive definite (an error names the entry or the pivot) and factored once, for
// ½ log det Ω = Σᵢ log Lᵢᵢ (Ω = L Lᵀ) and for draws. As an expression of parameters (the K·K
// entries, row major: a CAR model's tau * (D − alpha * W) with D and W data, a cov_matrix
// variable), ½ log det Ω comes from cholesky_decompose(Omega) at every evaluation (O(K³); NaN,
// a rejected point, where Ω is not positive definite). x is a named K-vector, J named K-vectors
// (multi_normal_prec<"b">(mu, Omega, shape_of(J * K)), vector j at j·K), or N observed rows of K
// (`observe(data(y))`, row n at n·K); μ a scalar, a vector of K (every row) or of N·K; the log
// density is the sum over the rows. Draws: μ + L⁻ᵀ z, z standard normal (covariance Ω⁻¹).
// `multi_normal_prec_lpdf(y, mu, Omega)` for free terms.
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/matrix_ops.hpp>
#include <tyche/autodiff/multivariate_ops.hpp>
#include <tyche/autodiff/vector_ops.hpp>
#include <tyche/distributions/detail/family.hpp>
#include <tyche/distributions/multi_normal.hpp>
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

namespace ops {
/// precision_quadratic_map over a data Ω that the distribution copied: the owner of the copy
/// travels with the node until folding moves it into the model's storage (as
/// lower_triangular_solve_map's).
struct precision_quadratic_owning_map : precision_quadratic_map {
  host_owner<std::vector<double>> owner;
  template <class Storage>
  precision_quadratic_map release_into(Storage& storage) const {
    if (owner.ptr) storage.keep(owner.ptr);
    return *this;
  }
};
}  // namespace ops

/// multi_normal_prec(mu, Omega). DataOmega: Ω was data, copied into owner (Ω's K² entries, then
/// its Cholesky factor's), and log_det_half is Σᵢ log Lᵢᵢ; otherwise Om is the expression of Ω's
/// entries and ½ log det Ω is computed from it in log_prob.
template <class Mu, class Om, bool DataOmega>
struct multi_normal_prec_distribution : distribution<multi_normal_prec_distribution<Mu, Om, DataOmega>> {
  static constexpr const char* family = "multi_normal_prec";
  Mu mu;
  Om omega;
  std::size_t k = 1;
  double log_det_half = 0;
  std::shared_ptr<const std::vector<double>> owner;  // DataOmega: Ω then L, 2K² values
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    using N = detail::node_t<X>;
    static_assert(is_vector_v<N>, "tyche::multi_normal_prec(mu, Omega): x must be a vector");
    const N xn = detail::as_node(x);
    const std::size_t rows = xn.size() / k;
    if (xn.size() % k != 0 || rows == 0)
      throw std::invalid_argument("tyche::multi_normal_prec(mu, Omega): x has size " + std::to_string(xn.size()) +
                                  ", which is not a multiple of K = " + std::to_string(k) +
                                  " (N observations of K values, row major)");
    const std::size_t mn = detail::operand_size(mu);
    if (mn != 1 && mn != k && mn != xn.size())
      throw std::invalid_argument("tyche::multi_normal_prec(mu, Omega): mu has size " + std::to_string(mn) +
                                  " but x has " + std::to_string(rows) + " rows of K = " + std::to_string(k) +
                                  " (mu must have 1, K or N*K values)");
    const double norm = double(rows) * double(k) * detail::half_log_two_pi;
    if constexpr (DataOmega) {
      const auto q = make_vector_op(ops::precision_quadratic_owning_map{{k}, owner}, 1, omega, xn, mu);
      return lit<-1, 2> * at(q, 0) - constant{norm - double(rows) * log_det_half};
    } else {
      const auto q = make_vector_op(ops::precision_quadratic_map{k}, 1, omega, xn, mu);
      const auto half_log_det =
          make_vector_op(ops::diagonal_sum_map<false, true>{k, 1.0, 0.0}, 1, cholesky_decompose(omega));
      return lit<-1, 2> * at(q, 0) + constant{double(rows)} * at(half_log_det, 0) - constant{norm};
    }
  }
  auto arguments() const {
    if constexpr (DataOmega)
      return std::tuple{mu};
    else
      return std::tuple{mu, omega};
  }
  /// The same distribution with other arguments (do_ substitutes into them); a data Ω is kept.
  template <class M2>
  auto with_arguments(const M2& m) const {
    return multi_normal_prec_distribution<M2, Om, DataOmega>{{}, m, omega, k, log_det_half, owner};
  }
  template <class M2, class O2>
  auto with_arguments(const M2& m, const O2& o) const {
    return multi_normal_prec_distribution<M2, O2, DataOmega>{{}, m, o, k, log_det_half, owner};
  }
  static constexpr bool whole_arguments = true;
  /// n values (n/K rows) from the Cholesky factor l of Ω: row r is μᵣ + L⁻ᵀ z, z standard normal.
  template <class G>
  std::vector<double> draw_rows(G& rng, std::size_t n, const std::vector<double>& m, const double* l) const {
    std::normal_distribution<double> z01;
    std::vector<double> x(n);
    std::vector<double> w(k);
    for (std::size_t r = 0; r * k < n; ++r) {
      for (auto& v : w) v = z01(rng);
      for (std::size_t i = k; i-- > 0;) {  // back substitution: Lᵀ w = z
        double acc = w[i];
        for (std::size_t j = i + 1; j < k; ++j) acc -= l[j * k + i] * w[j];
        w[i] = acc / l[i * k + i];
      }
      for (std::size_t i = 0; i < k && r * k + i < n; ++i)
        x[r * k + i] = (m.size() == 1 ? m[0] : (m.size() == k ? m[i] : m[r * k + i])) + w[i];
    }
    return x;
  }
  template <class G>
  std::vector<double> draw_all(G& rng, std::size_t n, const std::vector<double>& m) const {
    return draw_rows(rng, n, m, owner->data() + k * k);
  }
  template <class G>
  std::vector<double> draw_all(G& rng, std::size_t n, const std::vector<double>& m,
                               const std::vector<double>& om) const {
    std::vector<double> sym = om;  // the symmetric matrix of Omega's lower triangle, as log_prob reads it
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = i + 1; j < k; ++j) sym[i * k + j] = sym[j * k + i];
    const auto l = detail::cholesky_lower(sym.data(), k, "multi_normal_prec(mu, Omega)", "Omega");
    return draw_rows(rng, n, m, l.data());
  }
};

namespace detail {
template <class Mu>
auto multi_normal_prec_mu(const Mu& mu, std::size_t k) {
  using M = node_t<Mu>;
  const M m = as_node(mu);
  if constexpr (is_vector_v<M>) {
    if (m.size() % k != 0)
      throw std::invalid_argument("tyche::multi_normal_prec(mu, Omega): mu has size " + std::to_string(m.size()) +
                                  " but Omega is " + std::to_string(k) + " x " + std::to_string(k) +
                                  " (mu must have 1, K or N*K values)");
  }
  return m;
}
}  // namespace detail

/// The distribution multi_normal_prec(mu, Omega) for a data precision matrix Omega
/// (tyche::matrix(ptr, K, K), row major): copied, checked symmetric and positive definite, and
/// factored once.
template <detail::operand Mu>
auto multi_normal_prec(const Mu& mu, const data_matrix& omega) {
  const char* who = "multi_normal_prec(mu, Omega)";
  if (omega.rows != omega.cols || omega.rows == 0)
    throw std::invalid_argument(std::string("tyche::") + who + ": Omega must be square and non-empty; it is " +
                                std::to_string(omega.rows) + " x " + std::to_string(omega.cols));
  const std::size_t k = omega.rows;
  for (std::size_t e = 0; e < k * k; ++e)
    if (!std::isfinite(omega.ptr[e]))
      throw std::invalid_argument(std::string("tyche::") + who + ": Omega[" + std::to_string(e / k + 1) + ", " +
                                  std::to_string(e % k + 1) + "] = " + detail::format_number(omega.ptr[e]) +
                                  " must be finite");
  const auto l = detail::cholesky_lower(omega.ptr, k, who, "Omega");
  auto owner = std::make_shared<std::vector<double>>(omega.ptr, omega.ptr + k * k);
  owner->insert(owner->end(), l.begin(), l.end());
  double log_det_half = 0;
  for (std::size_t i = 0; i < k; ++i) log_det_half += std::log(l[i * k + i]);
  const auto m = detail::multi_normal_prec_mu(mu, k);
  return multi_normal_prec_distribution<std::remove_const_t<decltype(m)>, data_vector<>, true>{
      {}, m, data_vector<>{{}, owner->data(), k * k}, k, log_det_half, std::move(owner)};
}

/// The distribution multi_normal_prec(mu, Omega) for Omega an expression of K·K values (row
/// major; only the lower triangle is read), e.g. `tau * (data(D) - alpha * data(W))`.
template <detail::operand Mu, class Ox>
  requires detail::matrix_expression<Ox>
auto multi_normal_prec(const Mu& mu, const Ox& omega) {
  const auto on = detail::as_node(omega);
  const std::size_t k = detail::matrix_order(on.size(), "multi_normal_prec(mu, Omega)", "Omega");
  const auto m = detail::multi_normal_prec_mu(mu, k);
  return multi_normal_prec_distribution<std::remove_const_t<decltype(m)>, std::remove_const_t<decltype(on)>, false>{
      {}, m, on, k, 0.0, nullptr};
}

namespace detail {
template <class Ox>
inline constexpr bool precision_matrix_argument =
    std::is_same_v<std::remove_cvref_t<Ox>, data_matrix> || matrix_expression<Ox>;
}  // namespace detail

/// Any other Omega (a number, a scalar expression): the error says what Omega must be.
template <detail::operand Mu, class Ox>
  requires(!detail::precision_matrix_argument<Ox>)
auto multi_normal_prec(const Mu&, const Ox&) {
  static_assert(detail::precision_matrix_argument<Ox>,
                "tyche::multi_normal_prec(mu, Omega): Omega must be a data matrix (tyche::matrix(ptr, K, K)) "
                "or a vector expression of the K*K entries of the precision matrix (row major)");
}

/// Name ~ multi_normal_prec(mu, Omega): a vector of K.
template <fixed_string Name, detail::operand Mu, class Ox>
auto multi_normal_prec(const Mu& mu, const Ox& omega) {
  const auto d = multi_normal_prec(mu, omega);
  return detail::make_random_variable<Name>(d, detail::shape_for_multi_normal(mu, d.k));
}

/// Name ~ multi_normal_prec(mu, Omega), J vectors of K together (shape_of(J * K), vector j at
/// j·K; as multi_normal_cholesky's three-argument form).
template <fixed_string Name, detail::operand Mu, class Ox, shape_tag Shape>
auto multi_normal_prec(const Mu& mu, const Ox& omega, Shape shape) {
  return detail::multi_normal_rows<Name>("multi_normal_prec<\"name\">(mu, Omega, shape)", multi_normal_prec(mu, omega),
                                         shape);
}

}  // namespace tyche
