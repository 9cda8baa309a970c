// tyche/transforms/bounds.hpp — the transforms from the unconstrained line to a support given
// by bounds: none (identity), a lower bound, an upper bound, both. Each gives the constrained
// value as a core expression of the unconstrained parameter u, the log-Jacobian log|dx/du| as
// a core expression, and the inverse for unconstrain(). Bounds are core expressions too, so a
// bound may depend on another parameter (beta1 < 1 − alpha1).
#pragma once
#include <tyche/config.hpp>
#include <tyche/operations/functions.hpp>

#include <cmath>

namespace tyche::transforms {

/// The real line: x = u, log|J| = 0.
struct identity {
  static constexpr const char* name = "identity";
  template <class U> auto constrain(const U& u) const { return u; }
  template <class U> auto log_jacobian(const U&) const { return lit<0>; }
  static double unconstrain(double x) { return x; }
  /// u as an expression of x (do_ needs it where the model's log density uses u itself).
  template <class X> auto unconstrain_expression(const X& x) const { return tyche::detail::as_node(x); }
  static bool contains(double x) { return !std::isnan(x); }
};

/// (L, ∞): x = L + eᵘ, log|J| = u. With L = 0 this is the positive half-line (x = eᵘ).
template <class Lower>
struct lower_bound {
  static constexpr const char* name = "lower bound";
  Lower lower;
  template <class U> auto constrain(const U& u) const {
    if constexpr (std::is_same_v<Lower, literal<0>>) return exp(u);
    else return lower + exp(u);
  }
  template <class U> auto log_jacobian(const U& u) const { return tyche::detail::total(u); }
  static double unconstrain(double x, double l) { return std::log(x - l); }
  template <class X> auto unconstrain_expression(const X& x) const {
    if constexpr (std::is_same_v<Lower, literal<0>>) return log(x);
    else return log(x - lower);
  }
  static bool contains(double x, double l) { return x > l; }
};

/// (−∞, U): x = U − eᵘ, log|J| = u.
template <class Upper>
struct upper_bound {
  static constexpr const char* name = "upper bound";
  Upper upper;
  template <class U> auto constrain(const U& u) const { return upper - exp(u); }
  template <class U> auto log_jacobian(const U& u) const { return tyche::detail::total(u); }
  static double unconstrain(double x, double h) { return std::log(h - x); }
  template <class X> auto unconstrain_expression(const X& x) const { return log(upper - x); }
  static bool contains(double x, double h) { return x < h; }
};

/// (L, U): x = L + (U − L)·logistic(u), log|J| = log(U − L) + log σ(u) + log(1 − σ(u)).
template <class Lower, class Upper>
struct interval {
  static constexpr const char* name = "interval";
  Lower lower;
  Upper upper;
  template <class U> auto constrain(const U& u) const {
    if constexpr (std::is_same_v<Lower, literal<0>> && std::is_same_v<Upper, literal<1>>)
      return logistic(u);
    else return lower + (upper - lower) * logistic(u);
  }
  template <class U> auto log_jacobian(const U& u) const {
    auto per_element = log_logistic(u) + log1m_logistic(u);
    if constexpr (std::is_same_v<Lower, literal<0>> && std::is_same_v<Upper, literal<1>>)
      return tyche::detail::total(per_element);
    else return tyche::detail::total(per_element + log(upper - lower));
  }
  static double unconstrain(double x, double l, double h) {
    const double p = (x - l) / (h - l);
    return std::log(p) - std::log1p(-p);
  }
  /// logit((x − L)/(U − L)) = log(x − L) − log(U − x).
  template <class X> auto unconstrain_expression(const X& x) const { return log(x - lower) - log(upper - x); }
  static bool contains(double x, double l, double h) { return x > l && x < h; }
};

}  // namespace tyche::transforms
