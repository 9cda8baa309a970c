// tyche/autodiff/ordinal_ops.hpp — value and vector–Jacobian rules of the ordinal regression
// likelihoods, ordered_logistic and ordered_probit (distributions/ordered_logistic.hpp), as one
// vector_op (the op contract: autodiff/vector_ops.hpp; docs/design/vector-ops.md):
//
//   ordinal_map<Probit>   (η, c) → log P(yᵢ | ηᵢ, c), one value per observation yᵢ ∈ {1 … K}
//
// with F the logistic or the standard normal CDF and the K − 1 cutpoints c increasing (Stan
// Functions Reference, "Ordered logistic distribution" and "Ordered probit distribution"):
//   P(y = 1) = 1 − F(η − c₁) = F(c₁ − η),   P(y = K) = F(η − c_{K−1}),
//   P(y = k) = F(η − c_{k−1}) − F(η − c_k)  (1 < k < K).
// The categories are data (the op's payload), so the branch on yᵢ is the same in every SIMD
// lane; within a branch the rules are branch-free (math::select), for batches of chains.
//
// Each log is computed without cancellation or underflow:
//   logistic, middle categories: σ(a) − σ(b) = σ(a) σ(−b) (1 − e^{b−a}) (expand both fractions
//     over (1 + e^a)(1 + e^b)), so log P = log σ(a) + log σ(−b) + log(1 − e^{c_{k−1} − c_k}),
//     a = η − c_{k−1}, b = η − c_k, the last term from the cutpoints' difference directly;
//   probit: log Φ and φ/Φ from scalar/math.hpp (math::log_Phi, math::phi_over_Phi: erfc, and a
//     continued fraction where erfc underflows); a middle category reflected (Φ(a) − Φ(b) = Φ(−b) − Φ(−a)) so that
//     neither term is close to 1 unless the other is tiny, then log Φ(hi) + log(1 − e^{log Φ(lo)
//     − log Φ(hi)}).
// Gradients (a, b as above, P the category's probability):
//   logistic: ∂ log P/∂a = σ(−a) + 1/expm1(c_k − c_{k−1}),  ∂ log P/∂b = −σ(b) − 1/expm1(c_k − c_{k−1});
//   probit:   ∂ log P/∂a = φ(a)/P = exp(log φ(a) − log P),   ∂ log P/∂b = −exp(log φ(b) − log P)
//             (φ(x)/Φ(x) for the end categories),
//   and ∂/∂η = ∂/∂a + ∂/∂b, ∂/∂c_{k−1} = −∂/∂a, ∂/∂c_k = −∂/∂b (the end categories have one term).
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/logistic.hpp>
#include <tyche/backends/simd/batch.hpp>
#include <tyche/core/expr.hpp>
#include <tyche/scalar/math.hpp>
#include <tyche/scalar/traits.hpp>

#include <cstddef>

namespace tyche {

namespace detail {

/// log(1 − e^z) for z < 0: log(−expm1 z) for z > −log 2, log1p(−e^z) below (Mächler,
/// "Accurately computing log(1 − exp(−|a|))", 2012). −inf at z = 0.
template <class T>
TYCHE_HD T log1m_exp_negative(const T& z) {
  return math::select(z > lift<T>(-0.69314718055994530942), math::log(-math::expm1(z)),
                      math::log1p(-math::exp(z)));
}

/// log φ(x), the standard normal log density.
template <class T>
TYCHE_HD T log_std_normal_density(const T& x) {
  return lift<T>(-0.5) * x * x - lift<T>(0.91893853320467274178);
}

/// log(Φ(a) − Φ(b)) for a > b, reflected (Φ(a) − Φ(b) = Φ(−b) − Φ(−a)) so that hi + lo ≤ 0:
/// then Φ(hi) is close to 1 only when Φ(lo) is tiny, and log Φ(hi) + log(1 − e^{log Φ(lo) −
/// log Φ(hi)}) loses nothing to cancellation (except, as any formula on Φ alone, for cutpoints
/// closer than about 10⁻⁸ relative).
template <class T>
TYCHE_HD T log_Phi_difference(const T& a, const T& b) {
  const auto flip = a + b > lift<T>(0.0);
  const T hi = math::select(flip, -b, a);
  const T lo = math::select(flip, -a, b);
  const T log_hi = math::log_Phi(hi);
  return log_hi + log1m_exp_negative(math::log_Phi(lo) - log_hi);
}

}  // namespace detail

namespace ops {

/// log P(yᵢ | ηᵢ, c) for the observations i = 0 … m − 1 of an ordinal regression (see the top of
/// this file): operands η (one value, or one per observation) and c (the K − 1 increasing
/// cutpoints); the categories 1 … K are the payload (data, checked when the op is made), y[i],
/// or y0 for a single observation given as a number. Cutpoints that are not increasing give NaN.
template <bool Probit>
struct ordinal_map {
  static constexpr const char* name = Probit ? "ordered_probit" : "ordered_logistic";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = true;
  const double* y = nullptr;
  double y0 = 1.0;
  template <class Eta, class C>
  static constexpr std::size_t extent = dynamic_extent;
  bool operator==(const ordinal_map&) const = default;
  /// f(y, m), one category per observation, when y is data (compile/relocate.hpp).
  template <class F>
  void for_each_data_buffer(std::size_t m, F&& f) {
    if (y != nullptr) f(y, m);
  }
  TYCHE_HD std::size_t category(std::size_t i) const { return static_cast<std::size_t>(y ? y[i] : y0); }

  /// log F(x) and d log F(x) / dx: σ(−x), or φ(x)/Φ(x) (scalar/math.hpp, finite in the tail).
  template <class T>
  TYCHE_HD static T log_cdf(const T& x) {
    if constexpr (Probit) return math::log_Phi(x);
    else return rules::log_logistic{}.value(x);
  }
  template <class T>
  TYCHE_HD static T log_cdf_slope(const T& x) {
    if constexpr (Probit) {
      return math::phi_over_Phi(x);
    } else {
      T dx;
      (void)rules::log_logistic{}.value(x, dx);  // σ(−x)
      return dx;
    }
  }

  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t* in_n) const {
    const T* c = in[1];
    const std::size_t cuts = in_n[1];
    for (std::size_t i = 0; i < m; ++i) {
      const T eta = in[0][in_n[0] > 1 ? i : 0];
      const std::size_t k = category(i);
      if (k == 1) {
        out[i] = log_cdf(c[0] - eta);
      } else if (k == cuts + 1) {
        out[i] = log_cdf(eta - c[cuts - 1]);
      } else if constexpr (Probit) {
        out[i] = detail::log_Phi_difference(eta - c[k - 2], eta - c[k - 1]);
      } else {
        out[i] = rules::log_logistic{}.value(eta - c[k - 2]) + rules::log_logistic{}.value(c[k - 1] - eta) +
                 detail::log1m_exp_negative(c[k - 2] - c[k - 1]);
      }
    }
  }

  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T* out, const T* adj, const T* const* in,
                        const std::size_t* in_n, T* const* in_adj) const {
    const T* c = in[1];
    const std::size_t cuts = in_n[1];
    for (std::size_t i = 0; i < m; ++i) {
      const std::size_t e = in_n[0] > 1 ? i : 0;
      const T eta = in[0][e];
      const std::size_t k = category(i);
      if (k == 1) {
        const T g = adj[i] * log_cdf_slope(c[0] - eta);
        in_adj[0][e] -= g;
        in_adj[1][0] += g;
      } else if (k == cuts + 1) {
        const T g = adj[i] * log_cdf_slope(eta - c[cuts - 1]);
        in_adj[0][e] += g;
        in_adj[1][cuts - 1] -= g;
      } else {
        const T a = eta - c[k - 2], b = eta - c[k - 1];
        T da, db;
        if constexpr (Probit) {
          da = math::exp(detail::log_std_normal_density(a) - out[i]);
          db = -math::exp(detail::log_std_normal_density(b) - out[i]);
        } else {
          T sa, sb;  // σ(−a), σ(b)
          (void)rules::log_logistic{}.value(a, sa);
          (void)rules::log_logistic{}.value(-b, sb);
          const T r = lift<T>(1.0) / math::expm1(c[k - 1] - c[k - 2]);
          da = sa + r;
          db = -sb - r;
        }
        in_adj[0][e] += adj[i] * (da + db);
        in_adj[1][k - 2] -= adj[i] * da;
        in_adj[1][k - 1] -= adj[i] * db;
      }
    }
  }
};

}  // namespace ops

}  // namespace tyche
