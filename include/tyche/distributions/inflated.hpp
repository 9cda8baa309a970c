// tyche/distributions/inflated.hpp — zero_inflated(d, theta), hurdle(d, theta): counts with extra zeros.
// Observations y ≥ 0 from d with zeros added (the zero-inflated and hurdle models of brms, PyMC
// and NumPyro; θ is brms's zi / hu, NumPyro's gate: the probability of a structural zero):
//   zero_inflated(d, θ):  P(0) = θ + (1 − θ) p_d(0),   P(y) = (1 − θ) p_d(y) for y > 0, d discrete;
//   hurdle(d, θ):         P(0) = θ,   P(y) = (1 − θ) p_d(y) / (1 − p_d(0)) for y > 0, d discrete
//                         (d truncated at zero), or density (1 − θ) f_d(y) for y > 0, d continuous
//                         on the positive numbers (gamma, lognormal, weibull, exponential, …).
// θ in [0, 1] is a scalar or one per observation (e.g. logistic(z0 + z1 * data(x))); d's
// arguments likewise (poisson(exp(eta)) with eta of N). The log density is one op over the
// observations (ops::inflated_map) from d's pointwise log densities at y and at 0: the zeros
// take log(θ + (1 − θ) e^{log p_d(0)}) (by log-sum-exp) or log θ, the others log(1 − θ) + log p_d(y)
// (− log(1 − p_d(0)) for a discrete hurdle); each observation's derivatives reach only the branch
// it takes. A continuous d is evaluated at max(y, 1e-300), so that its log density at a zero
// (−∞, unused) puts no NaN into the derivatives. d's data checks apply to the positive values.
// Draws: 0 with probability θ, else a draw of d (for a discrete hurdle, a draw of d given y > 0,
// by rejection). Observations only; `zero_inflated_lpmf(y, d, theta)` and `hurdle_lpmf(y, d,
// theta)` (`hurdle_lpdf` for a continuous d) for free terms.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>
#include <tyche/operations/vectors.hpp>
#include <tyche/scalar/math.hpp>
#include <tyche/scalar/traits.hpp>

#include <cmath>
#include <random>
#include <tuple>
#include <type_traits>
#include <utility>

namespace tyche {

/// Which model: zero_inflated (a discrete d), hurdle of a discrete d, hurdle of a continuous d.
enum class inflation { zero_inflated, hurdle_discrete, hurdle_continuous };

namespace ops {
/// The log probability of each observation of an inflated model, elementwise over m values, of
/// the operands y, θ, lp0 = log p_d(0), lpy = log p_d(y) in that order, each a scalar or m values
/// (lane by lane: the branch depends on y):
///   y = 0: log(θ + (1 − θ) e^{lp0}) (zero_inflated), log θ (hurdle);
///   y > 0: log(1 − θ) + lpy, − log(1 − e^{lp0}) more for a discrete hurdle.
/// Derivatives reach θ and the operands of the branch taken; none reaches y.
template <inflation Kind>
struct inflated_map {
  static constexpr const char* name = Kind == inflation::zero_inflated ? "zero_inflated" : "hurdle";
  static constexpr bool has_payload = false;
  template <class Y, class Theta, class Lp0, class Lpy>
  static constexpr std::size_t extent = dynamic_extent;
  bool operator==(const inflated_map&) const = default;

  /// One observation's log probability, given y, θ, log θ, log(1 − θ), lp0 and lpy.
  TYCHE_HD static double value_of(double y, double t, double log_t, double log1m_t, double p0, double py) {
    if (y == 0.0) {
      if constexpr (Kind == inflation::zero_inflated) {
        // log(θ + (1 − θ) e^{lp0}): as log1p((1 − θ) expm1(lp0)) where e^{lp0} > ½ (no
        // cancellation near lp0 = 0), else log_add_exp(log θ, log(1 − θ) + lp0).
        if (p0 > -0.693147180559945309) return ::log1p((1.0 - t) * ::expm1(p0));
        const double a = log_t, b = log1m_t + p0;
        const double hi = a > b ? a : b;
        return hi == -HUGE_VAL ? -HUGE_VAL : hi + ::log1p(::exp(-(a > b ? a - b : b - a)));
      } else {
        return log_t;
      }
    }
    if constexpr (Kind == inflation::hurdle_discrete) return log1m_t + py - math::log1m_exp_scalar(p0);
    else return log1m_t + py;
  }

  /// Lane by lane (the branch depends on y); log θ and log(1 − θ) once for a scalar θ.
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t* in_n) const {
    using E = element_type_t<T>;
    using lanes_of = tyche::detail::lane_ops<T>;
    constexpr std::size_t lanes = lanes_of::size;
    E y[lanes], th[lanes], l0[lanes], ly[lanes], v[lanes];
    double lt[lanes], l1t[lanes];
    const bool scalar_theta = in_n[1] <= 1;
    if (scalar_theta) {
      lanes_of::store(th, in[1][0]);
      for (std::size_t l = 0; l < lanes; ++l) {
        lt[l] = ::log(static_cast<double>(th[l]));
        l1t[l] = ::log1p(-static_cast<double>(th[l]));
      }
    }
    for (std::size_t i = 0; i < m; ++i) {
      lanes_of::store(y, in[0][in_n[0] > 1 ? i : 0]);
      lanes_of::store(l0, in[2][in_n[2] > 1 ? i : 0]);
      lanes_of::store(ly, in[3][in_n[3] > 1 ? i : 0]);
      if (!scalar_theta) lanes_of::store(th, in[1][i]);
      for (std::size_t l = 0; l < lanes; ++l) {
        const double t = static_cast<double>(th[l]);
        const double log_t = scalar_theta ? lt[l] : ::log(t), log1m_t = scalar_theta ? l1t[l] : ::log1p(-t);
        v[l] = static_cast<E>(value_of(static_cast<double>(y[l]), t, log_t, log1m_t, static_cast<double>(l0[l]),
                                       static_cast<double>(ly[l])));
      }
      out[i] = lanes_of::load(v);
    }
  }

  /// From the forward values (out), without evaluating them again: at a zero, ∂/∂θ =
  /// (1 − e^{lp0})/P(0) and ∂/∂lp0 = (1 − θ) e^{lp0}/P(0) (zero_inflated), 1/θ (hurdle); elsewhere
  /// ∂/∂θ = −1/(1 − θ), ∂/∂lpy = 1, and for a discrete hurdle ∂/∂lp0 = e^{lp0}/(1 − e^{lp0}).
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T* out, const T* adj, const T* const* in, const std::size_t* in_n,
                        T* const* in_adj) const {
    using E = element_type_t<T>;
    using lanes_of = tyche::detail::lane_ops<T>;
    constexpr std::size_t lanes = lanes_of::size;
    E y[lanes], th[lanes], l0[lanes], v[lanes], dth[lanes], dl0[lanes], dly[lanes];
    for (std::size_t i = 0; i < m; ++i) {
      lanes_of::store(y, in[0][in_n[0] > 1 ? i : 0]);
      lanes_of::store(th, in[1][in_n[1] > 1 ? i : 0]);
      lanes_of::store(l0, in[2][in_n[2] > 1 ? i : 0]);
      lanes_of::store(v, out[i]);
      for (std::size_t l = 0; l < lanes; ++l) {
        const double t = static_cast<double>(th[l]), p0 = static_cast<double>(l0[l]), val = static_cast<double>(v[l]);
        double d_t = 0, d_0 = 0, d_y = 0;
        if (static_cast<double>(y[l]) == 0.0) {
          if constexpr (Kind == inflation::zero_inflated) {
            const double inv_p = ::exp(-val), em1 = ::expm1(p0);  // 1/P(0), e^{lp0} − 1
            d_t = -em1 * inv_p;
            d_0 = (1.0 - t) * (1.0 + em1) * inv_p;
          } else {
            d_t = 1.0 / t;
          }
        } else {
          d_t = -1.0 / (1.0 - t);
          d_y = 1.0;
          if constexpr (Kind == inflation::hurdle_discrete) d_0 = 1.0 / ::expm1(-p0);
        }
        dth[l] = static_cast<E>(d_t);
        dl0[l] = static_cast<E>(d_0);
        dly[l] = static_cast<E>(d_y);
      }
      const T a = adj[i];
      in_adj[1][in_n[1] > 1 ? i : 0] += a * lanes_of::load(dth);
      in_adj[2][in_n[2] > 1 ? i : 0] += a * lanes_of::load(dl0);
      in_adj[3][in_n[3] > 1 ? i : 0] += a * lanes_of::load(dly);
    }
  }
};
}  // namespace ops

namespace detail {
/// Whether every element of a tuple of arguments is a scalar.
template <class Tuple>
inline constexpr bool scalar_arguments_v = false;
template <class... A>
inline constexpr bool scalar_arguments_v<std::tuple<A...>> = (!is_vector_v<node_t<A>> && ...);

/// d's log density of each element of x (a vector of x's size; a scalar for a scalar x).
template <class Dist, class X>
auto elementwise_log_prob(const Dist& d, const X& x) {
  const auto summed = d.log_prob(x);
  if constexpr (is_vector_v<node_t<X>>) {
    static_assert(kind_of<std::remove_cvref_t<decltype(summed)>> == node_kind::sum,
                  "tyche::zero_inflated(d, theta) / hurdle(d, theta): d's log density of a vector is not a sum "
                  "of elementwise terms (a multivariate family)");
    return summed.a;
  } else {
    return summed;
  }
}
}  // namespace detail

/// d with extra zeros: Kind says how (zero_inflated, hurdle of a discrete or continuous d).
template <class Dist, class Theta, inflation Kind>
struct inflated_distribution : distribution<inflated_distribution<Dist, Theta, Kind>> {
  static constexpr const char* family = Kind == inflation::zero_inflated ? "zero_inflated" : "hurdle";
  Dist base;
  Theta theta;
  template <class X>
  auto log_prob(const X& x) const {
    const auto xn = detail::as_node(x);
    // The sizes of y, θ and d's arguments: each 1 or the common m (checked here, before d's own
    // arithmetic could report them in its words).
    const std::size_t n = detail::operand_size(xn);
    std::size_t m = n;
    bool mismatch = false;
    const auto see = [&](std::size_t s) {
      if (s == 1) return;
      if (m != 1 && s != m) mismatch = true;
      m = s;
    };
    see(detail::operand_size(theta));
    std::apply([&](const auto&... a) { (see(detail::operand_size(detail::as_node(a))), ...); }, base.arguments());
    if (mismatch)
      throw std::invalid_argument(std::string("tyche::") + family + "(d, theta): y has " + std::to_string(n) +
                                  " values, theta " + std::to_string(detail::operand_size(theta)) +
                                  "; theta and each of d's arguments must have 1 value or one per observation");
    constexpr bool scalar_arguments = detail::scalar_arguments_v<decltype(base.arguments())>;
    if constexpr (!is_vector_v<detail::node_t<X>> && !scalar_arguments) {
      // One y for vectors of d's arguments: y for each of them (as the other families broadcast).
      return log_prob(rep_vector(xn, m));
    } else {
      // log p_d(0): one value where d's arguments are scalars, else one per observation (unused,
      // and not computed, for a continuous d: its density at 0 may be infinite).
      const auto lp0 = [&] {
        if constexpr (Kind == inflation::hurdle_continuous)
          return constant{0.0};
        else if constexpr (scalar_arguments)
          return detail::elementwise_log_prob(base, constant{0.0});
        else
          return detail::elementwise_log_prob(base, rep_vector(constant{0.0}, m));
      }();
      const auto lpy = [&] {
        if constexpr (Kind == inflation::hurdle_continuous)
          return detail::elementwise_log_prob(base, fmax(xn, constant{1e-300}));
        else
          return detail::elementwise_log_prob(base, xn);
      }();
      return detail::total(make_vector_op(ops::inflated_map<Kind>{}, m, xn, theta, lp0, lpy));
    }
  }
  auto arguments() const { return std::tuple_cat(base.arguments(), std::tuple{theta}); }
  /// The same model with other arguments (do_ substitutes into them): d's, then θ.
  template <class... A>
  auto with_arguments(const A&... a) const {
    const auto all = std::forward_as_tuple(a...);
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      auto b = detail::with_arguments(base, std::get<I>(all)...);
      const auto t = detail::as_node(std::get<sizeof...(A) - 1>(all));
      return inflated_distribution<decltype(b), std::remove_const_t<decltype(t)>, Kind>{{}, b, t};
    }(std::make_index_sequence<sizeof...(A) - 1>{});
  }
  auto check_supports() const {
    static_assert(argument_support_t<Theta, domains::probability>::ok,
                  "tyche::zero_inflated(d, theta) / hurdle(d, theta): theta (the probability of a structural zero) "
                  "must be in [0, 1], but its support (spelled out in tyche::support_is<...> in this diagnostic) is "
                  "not inside [0, 1]" TYCHE_SUPPORT_HINT);
    if constexpr (requires { base.check_supports(); }) base.check_supports();
    detail::check_argument<domains::probability>(Kind == inflation::zero_inflated ? "zero_inflated(d, theta)"
                                                                                   : "hurdle(d, theta)",
                                                 "theta", theta);
  }
  /// A zero is always possible; other values as d allows.
  static const char* observation_problem(double v) {
    if (v == 0.0) return nullptr;
    if constexpr (requires { Dist::observation_problem(v); }) return Dist::observation_problem(v);
    return nullptr;
  }
  /// d's checks of the observed values that read its arguments (a binomial's y ≤ n).
  template <class Y>
  void check_observed(const Y& y) const {
    if constexpr (Kind != inflation::hurdle_continuous && requires { base.check_observed(y); }) base.check_observed(y);
  }
  /// 0 with probability θ (the last argument), else a draw of d (given y > 0 for a discrete
  /// hurdle: by rejection, at most 10⁶ tries, then 1).
  template <class G, class... A>
  static double draw(G& rng, A... a) {
    const double args[] = {static_cast<double>(a)...};
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    if (unit(rng) < args[sizeof...(A) - 1]) return 0.0;
    const auto base_draw = [&]<std::size_t... I>(std::index_sequence<I...>) { return Dist::draw(rng, args[I]...); };
    if constexpr (Kind == inflation::hurdle_discrete) {
      for (int k = 0; k < 1000000; ++k)
        if (const double y = base_draw(std::make_index_sequence<sizeof...(A) - 1>{}); y > 0) return y;
      return 1.0;
    } else {
      return base_draw(std::make_index_sequence<sizeof...(A) - 1>{});
    }
  }
};

namespace detail {
/// A transform onto (0, ∞) or (0, b): the support of a continuous hurdle's d.
template <class Tr>
inline constexpr bool positive_transform_v = false;
template <>
inline constexpr bool positive_transform_v<transforms::lower_bound<literal<0>>> = true;
template <class U>
inline constexpr bool positive_transform_v<transforms::interval<literal<0>, U>> = true;

template <inflation Kind, class Dist, class Theta>
auto make_inflated(const Dist& d, const Theta& theta) {
  const auto t = as_node(theta);
  return inflated_distribution<Dist, std::remove_const_t<decltype(t)>, Kind>{{}, d, t};
}
}  // namespace detail

/// y ~ zero_inflated(d, theta): d a discrete family (poisson, neg_binomial_2, binomial, …), θ
/// the probability of a structural zero: `zero_inflated(poisson(exp(eta)), zi).observe(data(y))`.
template <class Dist, detail::operand Theta>
  requires distribution_family<Dist>
auto zero_inflated(const Dist& d, const Theta& theta) {
  static_assert(!continuous_family<Dist>,
                "tyche::zero_inflated(d, theta): d must be a discrete family (counts: poisson, neg_binomial_2, "
                "binomial, ...); for a continuous d with zeros use hurdle(d, theta)");
  return detail::make_inflated<inflation::zero_inflated>(d, theta);
}

/// y ~ hurdle(d, theta): zeros with probability θ, else d (a discrete d truncated at zero, or a
/// continuous d on the positive numbers): `hurdle(gamma(a, b), hu).observe(data(y))`.
template <class Dist, detail::operand Theta>
  requires distribution_family<Dist>
auto hurdle(const Dist& d, const Theta& theta) {
  if constexpr (continuous_family<Dist>) {
    static_assert(detail::positive_transform_v<decltype(d.transform())>,
                  "tyche::hurdle(d, theta): a continuous d must live on the positive numbers (gamma, lognormal, "
                  "weibull, exponential, half_normal, beta, ...: its support's lower bound 0), else the zeros and "
                  "d's values would overlap");
    return detail::make_inflated<inflation::hurdle_continuous>(d, theta);
  } else {
    return detail::make_inflated<inflation::hurdle_discrete>(d, theta);
  }
}

/// zero_inflated<"name">(...) / hurdle<"name">(...): no named form; the message says why.
template <fixed_string Name, class... Arguments>
auto zero_inflated(const Arguments&...) {
  static_assert(!detail::is_named_v<decltype(Name)>,
                "tyche: zero_inflated<\"name\">(...): zero-inflated counts can only be observed: "
                "zero_inflated(d, theta).observe(data(y))");
  return 0;
}
template <fixed_string Name, class... Arguments>
auto hurdle(const Arguments&...) {
  static_assert(!detail::is_named_v<decltype(Name)>,
                "tyche: hurdle<\"name\">(...): a hurdle model's values can only be observed: "
                "hurdle(d, theta).observe(data(y))");
  return 0;
}

}  // namespace tyche
