// tyche/transforms/ordered.hpp — the transforms to increasing vectors (Stan's ordered and
// positive_ordered): x₀ = u₀ (or e^u₀), xₖ = xₖ₋₁ + e^uₖ. Not elementwise: the constrained
// vector is a vector_op (its op in autodiff/vector_ops.hpp). The Jacobian is triangular with
// diagonal (1 or e^u₀, e^u₁, …), so log|J| = Σ_{k ≥ 1} uₖ (+ u₀ when positive).
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/vector_ops.hpp>
#include <tyche/operations/functions.hpp>
#include <tyche/operations/vectors.hpp>
#include <tyche/scalar/format.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace tyche::transforms {

template <bool Positive>
struct increasing {
  static constexpr const char* name = Positive ? "positive_ordered" : "ordered";
  /// Marks a transform of a whole vector (model.hpp unconstrains it with unconstrain_vector).
  static constexpr bool whole_vector = true;

  template <class U>
  auto constrain(const U& u) const {
    using N = tyche::detail::node_t<U>;
    static_assert(is_vector_v<N>, "tyche: an ordered or positive_ordered random variable must be a "
                                  "vector: give it a shape, e.g. ordered<\"mu\">(normal(0.0, 2.0), shape<2>)");
    const N n = tyche::detail::as_node(u);
    return make_vector_op(ops::ordered_map<Positive>{}, n.size(), n);
  }
  template <class U>
  auto log_jacobian(const U& u) const {
    if constexpr (Positive) return sum(u);
    else return sum(u) - at(u, 0);
  }

  /// u from x[0 .. n): u₀ = x₀ (log x₀), uₖ = log(xₖ − xₖ₋₁). Returns an empty string when x
  /// is inside the support, else what is wrong with it, for element k (0-based).
  static std::string unconstrain_vector(const double* x, double* u, std::size_t n, std::size_t& k) {
    for (k = 0; k < n; ++k) {
      if (std::isnan(x[k])) return "is not a number";
      if (k == 0) {
        if (Positive && !(x[0] > 0)) return "must be > 0 (positive_ordered)";
        u[0] = Positive ? std::log(x[0]) : x[0];
      } else {
        const double step = x[k] - x[k - 1];
        if (!(step > 0))
          return "must exceed the element before it, " + tyche::detail::format_number(x[k - 1]) + " (" + name + ")";
        u[k] = std::log(step);
      }
    }
    return {};
  }

  /// Independent draws from the prior, made a draw from the prior restricted to the support:
  /// sorted (the restriction of an exchangeable density to increasing vectors is the law of
  /// its order statistics). positive_ordered redraws each non-positive element first
  /// (redraw(i) gives a fresh draw), i.e. rejection from the prior truncated to (0, ∞).
  template <class Redraw>
  static void restrict_draws(std::vector<double>& x, Redraw&& redraw) {
    if constexpr (Positive) {
      for (std::size_t i = 0; i < x.size(); ++i) {
        for (int tries = 0; !(x[i] > 0); ++tries) {
          if (tries == 10000)
            throw std::runtime_error("tyche: positive_ordered prior draw: 10000 draws in a row were "
                                     "not positive; the prior puts almost no mass on (0, inf)");
          x[i] = redraw(i);
        }
      }
    }
    std::sort(x.begin(), x.end());
  }
};

/// Increasing vectors: x₀ < x₁ < … (Stan's ordered).
using ordered = increasing<false>;
/// Positive increasing vectors: 0 < x₀ < x₁ < … (Stan's positive_ordered).
using positive_ordered = increasing<true>;

}  // namespace tyche::transforms
