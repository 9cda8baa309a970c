// tyche/transforms/simplex.hpp — simplex (K positive values summing to 1) and unit_vector (K
// values of norm 1), each from K unconstrained values with one auxiliary dimension, so that a
// variable keeps one θ coordinate per value:
//
// simplex: x = softmax(u) = exp(u − log Σ e^u), with the auxiliary r = Σₖ e^uₖ. The map
//   u ↦ (x₁ … x_{K−1}, r) is a bijection of ℝᴷ; with y = e^u (|∂y/∂u| = Π yₖ) and y = r·x
//   (|∂y/∂(x₁…x_{K−1}, r)| = r^{K−1}), giving r the proper density Gamma(K, 1) makes the term
//   added to the log density
//     Σₖ uₖ − (K − 1) log r + log Gamma(r | K, 1) = Σₖ (uₖ − e^uₖ) − log Γ(K),
//   elementwise in u (the constant is dropped). x keeps exactly the prior it is given; r is
//   independent of x and Gamma(K, 1) distributed. (This is the "normalised Gammas" construction
//   of the Dirichlet turned into a transform; Stan uses stick-breaking with K − 1 coordinates.)
//
// unit_vector: x = u / |u|, adding −½ |u|² (Stan's unit_vector: the radius |u| is the auxiliary,
//   χ-distributed with K degrees of freedom, independent of x).
//
// Both are whole-vector transforms for model.hpp: unconstrain_vector(x) returns u = log x (r = 1)
// or u = x (|u| = 1), so constrain(unconstrain(x)) = x while unconstrain(constrain(θ)) keeps
// only θ's direction. log_prob(θ, false) (no Jacobian) leaves the auxiliary direction flat.
#pragma once
#include <tyche/config.hpp>
#include <tyche/operations/functions.hpp>
#include <tyche/scalar/format.hpp>

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

namespace tyche::transforms {

struct simplex {
  static constexpr const char* name = "simplex";
  static constexpr bool whole_vector = true;
  template <class U>
  auto constrain(const U& u) const {
    static_assert(is_vector_v<tyche::detail::node_t<U>>,
                  "tyche: a simplex random variable must be a vector: give it a shape");
    return exp(u - log_sum_exp(u));
  }
  template <class U>
  auto log_jacobian(const U& u) const {
    return sum(u - exp(u));
  }
  static std::string unconstrain_vector(const double* x, double* u, std::size_t n, std::size_t& k) {
    double total = 0;
    for (k = 0; k < n; ++k) {
      if (!(x[k] > 0)) return "must be > 0 (simplex)";
      total += x[k];
      u[k] = std::log(x[k]);
    }
    if (!(std::fabs(total - 1) <= 1e-8 * double(n))) {
      k = n - 1;
      return "ends a vector whose sum is " + tyche::detail::format_number(total) + ", not 1 (simplex)";
    }
    return {};
  }
  template <class Redraw>
  static void restrict_draws(std::vector<double>&, Redraw&&) {}
};

struct unit_vector {
  static constexpr const char* name = "unit_vector";
  static constexpr bool whole_vector = true;
  template <class U>
  auto constrain(const U& u) const {
    static_assert(is_vector_v<tyche::detail::node_t<U>>,
                  "tyche: a unit_vector random variable must be a vector: give it a shape");
    return u / sqrt(sum(square(u)));
  }
  template <class U>
  auto log_jacobian(const U& u) const {
    return lit<-1, 2> * sum(square(u));
  }
  static std::string unconstrain_vector(const double* x, double* u, std::size_t n, std::size_t& k) {
    double norm2 = 0;
    for (k = 0; k < n; ++k) {
      if (std::isnan(x[k])) return "is not a number";
      norm2 += x[k] * x[k];
      u[k] = x[k];
    }
    if (!(std::fabs(norm2 - 1) <= 1e-8 * double(n))) {
      k = n - 1;
      return "ends a vector whose squared norm is " + tyche::detail::format_number(norm2) + ", not 1 (unit_vector)";
    }
    return {};
  }
  template <class Redraw>
  static void restrict_draws(std::vector<double>&, Redraw&&) {}
};

}  // namespace tyche::transforms
