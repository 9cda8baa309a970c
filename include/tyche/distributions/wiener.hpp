// tyche/distributions/wiener.hpp — wiener(alpha, tau, beta, delta[, sv]): drift diffusion response times.
// The drift diffusion model of two-choice response times (Ratcliff 1978), as Stan's wiener and
// brms's family wiener: the density that a Wiener process with drift δ, started at β·α between
// absorbing boundaries 0 and α, first reaches the upper boundary α at time y − τ,
//   p(y | α, τ, β, δ, sv) = α⁻² (1 + sv² t)^(−½) exp((sv² α² w² − 2αvw − v² t) / (2(1 + sv² t))) g(t/α², w),
//   t = y − τ, w = 1 − β, v = −δ, g the standard process's density (scalar/wiener.hpp),
// α > 0 the boundary separation, τ ≥ 0 the non-decision time (y > τ), 0 < β < 1 the relative
// starting point (a priori bias), δ the drift rate, sv ≥ 0 the trial-to-trial standard deviation
// of the drift (integrated out in closed form; sv = 0 in the four-argument form). The density is
// defective: it integrates to the probability of the upper response. A response at the lower
// boundary is the upper one of the mirrored process, `wiener(alpha, tau, 1 - beta, -delta)` (as
// Stan users write it). The log density and its derivatives in every argument and y are
// scalar/wiener.hpp's (Navarro & Fuss 2009's small- and large-time series, each summed where it
// converges fast and without cancellation; checked against RWiener's dwiener). y ≤ τ gives −∞
// where τ is a parameter, and an error naming the index where τ is known. Draws are of the upper
// boundary's time given that boundary (the posterior predictive of a response time given its
// response): by inversion of the CDF integrated numerically over 512 points in log time where
// the density is above e^(−46) of its peak (the table kept per thread for the next draw with the
// same arguments). Observations only: there is
// no named form. `wiener_lpdf(y, alpha, tau, beta, delta[, sv])` for free terms.
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/special.hpp>
#include <tyche/distributions/detail/family.hpp>
#include <tyche/scalar/format.hpp>
#include <tyche/scalar/wiener.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>

namespace tyche {

namespace detail {
/// The CDF of the upper boundary's first-passage time given that boundary (Stan's arguments),
/// integrated by the trapezoidal rule in log time over 512 points, unnormalised. The points span
/// where the density is above e^(−46) of its peak: found on a first grid of 512 points from
/// t = min(α²(1 − β)², (1 − β)α/|δ|)/100 (below the small-time series' e^(−w²/2u) = e^(−50), and a
/// hundredth of the mean time under a large drift) to t = 40α² (the large-time series' factor
/// e^(−π²u/2) = e^(−197)).
struct wiener_time_table {
  static constexpr int n = 512;
  double args[5] = {HUGE_VAL, 0, 0, 0, 0};
  double lo = 0, h = 0;
  double cum[n] = {};
  /// log(f(t) t) at the n points lo + h i (log t).
  static void log_density_times_t(double lo, double h, const double* a, double* logf, double& top) {
    top = -HUGE_VAL;
    for (int i = 0; i < n; ++i) {
      const double lt = lo + h * i;
      logf[i] = math::wiener_log_density(a[1] + std::exp(lt), a[0], a[1], a[2], a[3], a[4]).value + lt;
      top = std::max(top, logf[i]);
    }
  }
  void build(double alpha, double tau, double beta, double delta, double sv) {
    const double a[5] = {alpha, tau, beta, delta, sv};
    const double w = 1.0 - beta;
    double t_lo = alpha * alpha * w * w / 100.0;
    if (delta != 0) t_lo = std::min(t_lo, w * alpha / std::fabs(delta) / 100.0);
    const double lo0 = std::log(std::max(t_lo, 1e-300)), hi0 = std::log(40.0 * alpha * alpha);
    const double h0 = (hi0 - lo0) / (n - 1);
    double logf[n];
    double top;
    log_density_times_t(lo0, h0, a, logf, top);
    int first = 0, last = n - 1;
    while (first < n - 1 && !(logf[first] > top - 46)) ++first;
    while (last > 0 && !(logf[last] > top - 46)) --last;
    first = std::max(first - 1, 0);
    last = std::min(last + 1, n - 1);
    lo = lo0 + h0 * first;
    h = h0 * (last - first) / (n - 1);
    log_density_times_t(lo, h, a, logf, top);
    cum[0] = 0;
    for (int i = 1; i < n; ++i) cum[i] = cum[i - 1] + 0.5 * h * (std::exp(logf[i - 1] - top) + std::exp(logf[i] - top));
    std::copy(a, a + 5, args);
  }
  /// τ + t with t the u-quantile (u ∈ (0, 1)), linear in the CDF between the points.
  double quantile(double u) const {
    const double target = u * cum[n - 1];
    const int i = static_cast<int>(std::upper_bound(cum, cum + n, target) - cum);  // cum[i-1] ≤ target < cum[i]
    if (i <= 0) return args[1] + std::exp(lo);
    if (i >= n) return args[1] + std::exp(lo + h * (n - 1));
    const double frac = (target - cum[i - 1]) / (cum[i] - cum[i - 1]);
    return args[1] + std::exp(lo + h * (i - 1 + frac));
  }
};

/// A time of first passage of the upper boundary given that boundary, plus τ, by inversion at u
/// of wiener_time_table's CDF; the last arguments' table is kept per thread (draws for many
/// observations of one condition, or of one posterior draw, build it once).
inline double wiener_upper_time(double u, double alpha, double tau, double beta, double delta, double sv) {
  thread_local wiener_time_table table;
  const double a[5] = {alpha, tau, beta, delta, sv};
  if (!std::equal(a, a + 5, table.args)) table.build(alpha, tau, beta, delta, sv);
  return table.quantile(u);
}
}  // namespace detail

template <class Alpha, class Tau, class Beta, class Delta, class Sv>
struct wiener_distribution : distribution<wiener_distribution<Alpha, Tau, Beta, Delta, Sv>> {
  static constexpr const char* family = "wiener";
  Alpha alpha;
  Tau tau;
  Beta beta;
  Delta delta;
  Sv sv;
  template <class X>
  auto log_prob(const X& x) const {
    const auto xn = detail::as_node(x);
    const std::size_t sizes[6] = {detail::operand_size(xn),   detail::operand_size(alpha), detail::operand_size(tau),
                                  detail::operand_size(beta), detail::operand_size(delta), detail::operand_size(sv)};
    std::size_t m = 1;
    for (const std::size_t s : sizes) m = s != 1 ? s : m;
    static const char* const names[6] = {"y", "alpha", "tau", "beta", "delta", "sv"};
    for (std::size_t j = 0; j < 6; ++j)
      if (sizes[j] != 1 && sizes[j] != m)
        throw std::invalid_argument(std::string("tyche::wiener(alpha, tau, beta, delta, sv): ") + names[j] +
                                    " has size " + std::to_string(sizes[j]) + " but another operand has " +
                                    std::to_string(m) + " (each a scalar or a vector of one size)");
    return sum(make_vector_op(ops::wiener_map{}, m, xn, alpha, tau, beta, delta, sv));
  }
  auto arguments() const { return std::tuple{alpha, tau, beta, delta, sv}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<Alpha, domains::positive>::ok,
                  "tyche::wiener(alpha, tau, beta, delta): alpha (the boundary separation) must be > 0, but its "
                  "support (spelled out in tyche::support_is<...> in this diagnostic) is not inside (0, inf)"
                  TYCHE_SUPPORT_HINT);
    static_assert(argument_support_t<Tau, domains::nonnegative>::ok,
                  "tyche::wiener(alpha, tau, beta, delta): tau (the non-decision time) must be >= 0, but its "
                  "support (spelled out in tyche::support_is<...> in this diagnostic) is not inside [0, inf)"
                  TYCHE_SUPPORT_HINT);
    static_assert(argument_support_t<Beta, domains::open_unit_interval>::ok,
                  "tyche::wiener(alpha, tau, beta, delta): beta (the relative starting point) must be in (0, 1), "
                  "but its support (spelled out in tyche::support_is<...> in this diagnostic) is not inside (0, 1)"
                  TYCHE_SUPPORT_HINT);
    static_assert(argument_support_t<Sv, domains::nonnegative>::ok,
                  "tyche::wiener(alpha, tau, beta, delta, sv): sv (the standard deviation of the drift) must be "
                  ">= 0, but its support (spelled out in tyche::support_is<...> in this diagnostic) is not inside "
                  "[0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("wiener(alpha, tau, beta, delta)", "alpha", alpha);
    detail::check_argument<domains::nonnegative>("wiener(alpha, tau, beta, delta)", "tau", tau);
    detail::check_argument<domains::open_unit_interval>("wiener(alpha, tau, beta, delta)", "beta", beta);
    detail::check_argument<domains::nonnegative>("wiener(alpha, tau, beta, delta, sv)", "sv", sv);
  }
  /// A response time is positive.
  static const char* observation_problem(double v) { return v > 0 ? nullptr : "must be a positive response time"; }
  /// y[i] > tau[i] where both are known: a response time is the non-decision time plus the
  /// diffusion's first-passage time.
  template <class Y>
  void check_observed(const Y& y) const {
    const auto tn = detail::as_node(tau);
    const std::size_t ny = detail::operand_size(y), nt = detail::operand_size(tn);
    for (std::size_t i = 0; i < std::max(ny, nt); ++i) {
      double yi = 0, ti = 0;
      if (!detail::known_value(y, is_vector_v<Y> ? i : 0, &yi) ||
          !detail::known_value(tn, is_vector_v<detail::node_t<Tau>> ? i : 0, &ti))
        return;
      if (!(yi > ti))
        throw std::invalid_argument("tyche::wiener(...).observe(y): y[" + std::to_string(i + 1) + "] = " +
                                    detail::format_number(yi) + " is not above tau" +
                                    (is_vector_v<detail::node_t<Tau>> ? "[" + std::to_string(i + 1) + "]" : "") +
                                    " = " + detail::format_number(ti) +
                                    " (a response time is the non-decision time tau plus a first-passage time)");
    }
  }
  /// The upper boundary's first-passage time given that boundary, plus tau.
  template <class G>
  static double draw(G& rng, double a, double t, double b, double d, double s) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    return detail::wiener_upper_time(unit(rng), a, t, b, d, s);
  }
};

/// The distribution wiener(alpha, tau, beta, delta) of upper-boundary response times.
template <detail::operand Alpha, detail::operand Tau, detail::operand Beta, detail::operand Delta>
auto wiener(const Alpha& alpha, const Tau& tau, const Beta& beta, const Delta& delta) {
  return detail::make_distribution<wiener_distribution>(alpha, tau, beta, delta, 0.0);
}
/// wiener(alpha, tau, beta, delta, sv): with the drift normal(delta, sv) from trial to trial.
template <detail::operand Alpha, detail::operand Tau, detail::operand Beta, detail::operand Delta, detail::operand Sv>
auto wiener(const Alpha& alpha, const Tau& tau, const Beta& beta, const Delta& delta, const Sv& sv) {
  return detail::make_distribution<wiener_distribution>(alpha, tau, beta, delta, sv);
}

/// wiener<"name">(...): there is no named form; the message says why and what to write.
template <fixed_string Name, class... Arguments>
auto wiener(const Arguments&...) {
  static_assert(!detail::is_named_v<decltype(Name)>,
                "tyche: wiener<\"name\">(...): wiener is the density of observed response times (the upper "
                "boundary's; it integrates to that response's probability, not to 1), so it can only be "
                "observed: wiener(alpha, tau, beta, delta).observe(data(rt))");
  return 0;
}

}  // namespace tyche
