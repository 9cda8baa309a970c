// tyche/distributions/ordered_logistic.hpp — ordered_logistic(eta, c) and ordered_probit(eta, c), for observations only.
//   P(y = 1 | η, c) = 1 − F(η − c₁),   P(y = k | η, c) = F(η − c_{k−1}) − F(η − c_k)  (1 < k < K),
//   P(y = K | η, c) = F(η − c_{K−1}),   y ∈ {1, …, K}, η ∈ ℝ, c ∈ ℝᴷ⁻¹ increasing,
// with F the logistic function (ordered_logistic) or the standard normal CDF Φ (ordered_probit),
// as in the Stan Functions Reference, "Ordered logistic distribution" and "Ordered probit
// distribution". y is 1-based. eta is a scalar (every observation) or a vector with one value
// per observation; c is the vector of the K − 1 cutpoints, typically a parameter with the
// ordered transform: `auto c = ordered<"c">(normal(0.0, 5.0), shape<3>);
// ordered_logistic(matvec(X, beta), c).observe(data(y))`.
// The log probabilities are one vector_op with a hand-written vector–Jacobian product
// (autodiff/ordinal_ops.hpp), without cancellation or underflow in the tails: for logistic,
// log σ(a) + log σ(−b) + log(1 − e^{c_{k−1} − c_k}) with a = η − c_{k−1}, b = η − c_k; for probit,
// log Φ through erfc and the asymptotic series of the normal tail, a middle category as
// log Φ(hi) + log(1 − Φ(lo)/Φ(hi)) after reflecting the pair so that Φ(hi) is not close to 1.
// Cutpoints from parameters that are not increasing give NaN (a rejected point): declare them
// with the ordered transform. A plain vector of cutpoints compiles and fails only where its
// values are out of order (at a random start with probability 1 − 1/(K − 1)!); when no initial
// point is finite, nuts' message names the term and says to declare them with ordered<"c">.
//
// Data checks (std::invalid_argument naming the index and the value):
//   y[i] = v is not a category 1 … K
//   eta has size n but y has size m               (eta a vector)
//   c[k] = v is not greater than c[k−1] = w       (c data: the cutpoints must increase)
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/ordinal_ops.hpp>
#include <tyche/distributions/detail/family.hpp>
#include <tyche/scalar/format.hpp>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace tyche {

namespace detail {
/// The checks of an ordinal observation y (a node: data or a number) against η and c; returns
/// the number of observations.
template <class Eta, class C, class Y>
auto check_ordinal(const char* family, const Eta& eta, const C& c, const Y& y) {
  static_assert(is_vector_v<C>, "tyche::ordered_logistic(eta, c) / ordered_probit(eta, c): c must be a "
                                "vector of the K - 1 cutpoints");
  static_assert(kind_of<Y> == node_kind::data_vector || kind_of<Y> == node_kind::constant,
                "tyche::ordered_logistic / ordered_probit: only data can be observed (y must be data)");
  if constexpr (!is_vector_v<C> || !(kind_of<Y> == node_kind::data_vector || kind_of<Y> == node_kind::constant)) {
    return std::size_t{0};  // the static_assert above has said why
  } else {
    const std::string head = std::string("tyche::") + family + "(...).observe(y): ";
    const std::size_t cuts = c.size();
    if (cuts == 0) throw std::invalid_argument(head + "c has no cutpoints (K - 1 >= 1 are needed)");
    const std::size_t n = operand_size(y);
    for (std::size_t i = 0; i < n; ++i) {
      double v;
      if constexpr (kind_of<Y> == node_kind::data_vector) v = y.ptr[i];
      else v = y.value;
      if (!(v >= 1 && v <= double(cuts + 1) && v == std::floor(v)))
        throw std::invalid_argument(head + "y[" + std::to_string(i + 1) + "] = " + tyche::detail::format_number(v) +
                                    " is not a category 1 … " + std::to_string(cuts + 1) +
                                    (v < 1 ? " (categories count from 1, as in Stan: 0-based codes need + 1)" : ""));
    }
    if constexpr (is_vector_v<Eta>) {
      if (eta.size() != n)
        throw std::invalid_argument(head + "eta has size " + std::to_string(eta.size()) + " but y has size " +
                                    std::to_string(n) + " (eta is one value, or one per observation)");
    }
    if constexpr (kind_of<C> == node_kind::data_vector) {
      for (std::size_t k = 1; k < cuts; ++k)
        if (!(c.ptr[k] > c.ptr[k - 1]))
          throw std::invalid_argument(head + "c[" + std::to_string(k + 1) + "] = " + tyche::detail::format_number(c.ptr[k]) +
                                      " is not greater than c[" + std::to_string(k) + "] = " +
                                      tyche::detail::format_number(c.ptr[k - 1]) + " (the cutpoints must increase)");
    }
    return n;
  }
}

/// Σᵢ log P(yᵢ | ηᵢ, c), the categories checked.
template <bool Probit, class Eta, class C, class X>
auto ordinal_log_prob(const char* family, const Eta& eta, const C& c, const X& x) {
  using Y = node_t<X>;
  const Y y = as_node(x);
  const std::size_t n = check_ordinal(family, eta, c, y);
  ops::ordinal_map<Probit> op{};
  if constexpr (kind_of<Y> == node_kind::data_vector) op.y = y.ptr;
  else if constexpr (kind_of<Y> == node_kind::constant) op.y0 = y.value;
  return sum(make_vector_op(op, n, eta, c));
}

/// n draws of the latent-variable form: y = 1 + #{k : c_k < η + ε}, ε ~ F (logistic or normal).
template <bool Probit, class G>
std::vector<double> draw_ordinal(G& rng, std::size_t n, const std::vector<double>& eta,
                                 const std::vector<double>& c) {
  std::vector<double> out(n);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::normal_distribution<double> z01;
  for (std::size_t i = 0; i < n; ++i) {
    double eps;
    if constexpr (Probit) {
      eps = z01(rng);
    } else {
      double u = unit(rng);
      while (u <= 0.0 || u >= 1.0) u = unit(rng);
      eps = std::log(u) - std::log1p(-u);
    }
    const double latent = (eta.size() == 1 ? eta[0] : eta[i]) + eps;
    double k = 1;
    for (double cut : c) k += cut < latent ? 1 : 0;
    out[i] = k;
  }
  return out;
}
}  // namespace detail

template <class Eta, class C>
struct ordered_logistic_distribution : distribution<ordered_logistic_distribution<Eta, C>> {
  static constexpr const char* family = "ordered_logistic";
  /// Said beside the term when its log density is not finite (model::non_finite_terms).
  static constexpr const char* non_finite_hint =
      "NaN where the cutpoints c do not increase: declare them with ordered<\"c\">(...), or build them "
      "from increasing pieces (cumulative_sum of positive values)";
  Eta eta;
  C c;
  template <class X>
  auto log_prob(const X& y) const {
    return detail::ordinal_log_prob<false>(family, eta, c, y);
  }
  /// Checks y (finite, see distribution::observe), then the categories against K and eta's size.
  template <class Y>
  void check_observed(const Y& y) const {
    (void)detail::check_ordinal(family, eta, c, y);
  }
  auto arguments() const { return std::tuple{eta, c}; }
  /// The arguments are whole vectors (model.hpp draws with draw_all, not element by element).
  static constexpr bool whole_arguments = true;
  template <class G>
  static std::vector<double> draw_all(G& rng, std::size_t n, const std::vector<double>& e,
                                      const std::vector<double>& cuts) {
    return detail::draw_ordinal<false>(rng, n, e, cuts);
  }
};

template <class Eta, class C>
struct ordered_probit_distribution : distribution<ordered_probit_distribution<Eta, C>> {
  static constexpr const char* family = "ordered_probit";
  /// Said beside the term when its log density is not finite (model::non_finite_terms).
  static constexpr const char* non_finite_hint =
      "NaN where the cutpoints c do not increase: declare them with ordered<\"c\">(...), or build them "
      "from increasing pieces (cumulative_sum of positive values)";
  Eta eta;
  C c;
  template <class X>
  auto log_prob(const X& y) const {
    return detail::ordinal_log_prob<true>(family, eta, c, y);
  }
  template <class Y>
  void check_observed(const Y& y) const {
    (void)detail::check_ordinal(family, eta, c, y);
  }
  auto arguments() const { return std::tuple{eta, c}; }
  static constexpr bool whole_arguments = true;
  template <class G>
  static std::vector<double> draw_all(G& rng, std::size_t n, const std::vector<double>& e,
                                      const std::vector<double>& cuts) {
    return detail::draw_ordinal<true>(rng, n, e, cuts);
  }
};

/// The distribution ordered_logistic(eta, c), to observe categories 1 … K:
/// `ordered_logistic(eta, c).observe(data(y))`.
template <detail::operand Eta, detail::operand C>
auto ordered_logistic(const Eta& eta, const C& c) {
  return detail::make_distribution<ordered_logistic_distribution>(eta, c);
}
/// The distribution ordered_probit(eta, c), to observe categories 1 … K:
/// `ordered_probit(eta, c).observe(data(y))`.
template <detail::operand Eta, detail::operand C>
auto ordered_probit(const Eta& eta, const C& c) {
  return detail::make_distribution<ordered_probit_distribution>(eta, c);
}

TYCHE_OBSERVED_ONLY_FAMILY(ordered_logistic)
TYCHE_OBSERVED_ONLY_FAMILY(ordered_probit)

}  // namespace tyche
