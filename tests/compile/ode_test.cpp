// ode_rk45(f, y0, t0, ts) (tyche/compile/ode.hpp): ODE solutions and their gradients against
// closed forms — exponential decay, a forced linear equation (f depends on t), one-compartment
// oral absorption (two states, parameters in f and in y0) —, a nonlinear system (Lotka–Volterra)
// against finite differences of tightly solved values, the tolerances doing what they say, SIMD
// lanes and float, bad input named, and a solve that runs out of steps giving NaN. ode_stiff
// (Rosenbrock-W): the same closed forms, a stiff absorption that ode_rk45 cannot solve in the
// steps ode_stiff needs, Robertson's chemical kinetics against published values and ode_rk45,
// and its LU factorisation.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <stdexcept>
#include <vector>

#include "support/closed_form_check.hpp"
#include "support/property.hpp"
#include "support/reference_math.hpp"

using namespace tyche;
using tyche_test::normal_log;

namespace {
using tyche_test::check_against;
using tyche_test::derivative;

const std::vector<double> decay_times{0.25, 0.5, 1.0, 1.0, 2.0, 4.5, 8.0};
const std::vector<double> decay_obs{4.1, 3.4, 2.2, 2.3, 1.0, 0.15, 0.02};

// y' = -k y, y(0) = y0: y(t) = y0 e^(-kt).
auto decay_model(double rtol, double atol) {
  auto k = normal<"k">(0.5, 0.2);
  auto y0 = normal<"y0">(5.0, 1.0);
  auto y = ode_rk45_tol([&](const auto&, const auto& yt) { return -k * yt; }, y0, 0.0, data(decay_times), rtol,
                        atol, 100000);
  return model(joint(k, y0, normal(y, 0.1).observe(data(decay_obs))));
}
double decay_reference(const std::vector<double>& th) {
  double lp = normal_log(th[0], 0.5, 0.2) + normal_log(th[1], 5.0, 1.0);
  for (std::size_t r = 0; r < decay_times.size(); ++r)
    lp += normal_log(decay_obs[r], th[1] * std::exp(-th[0] * decay_times[r]), 0.1);
  return lp;
}
}  // namespace

TEST_CASE("ode_rk45: exponential decay against its closed form, value and gradient", "[compile][ode]") {
  const auto m = decay_model(1e-10, 1e-10);
  REQUIRE(m.dim() == 2);
  for (const auto& th : tyche_test::random_points(6, 2, 0.1, 1.5, 71)) {
    std::vector<double> p{th[0], 3.0 + 2 * th[1]};
    check_against(m, decay_reference, p, 1e-8, "decay, tolerances 1e-10");
  }
}

TEST_CASE("ode_rk45: the tolerances bound the error", "[compile][ode]") {
  // The solution's error at each tolerance: within a small multiple of it (the local errors add
  // up over the steps), and smaller as the tolerance shrinks.
  const std::vector<double> th{0.7, 4.0};
  double previous = 1.0;
  std::vector<double> truth(decay_times.size());
  for (std::size_t r = 0; r < truth.size(); ++r) truth[r] = 4.0 * std::exp(-0.7 * decay_times[r]);
  for (double tol : {1e-4, 1e-6, 1e-8, 1e-10}) {
    auto k = flat<"k">();
    auto y0 = flat<"y0">();
    auto y = ode_rk45_tol([&](const auto&, const auto& yt) { return -k * yt; }, y0, 0.0, data(decay_times), tol,
                          tol, 100000);
    // the squared error summed over the output times, as the log density (flat priors)
    const auto m = model(joint(k, y0, target(sum(square(y - data(truth))))));
    const double err = std::sqrt(m.log_prob(th));
    INFO("tolerance " << tol << ": error " << err);
    CHECK(err <= 50 * tol * 4.0);
    CHECK(err < previous);
    previous = err;
  }
}

namespace {
// y' = cos(t) − k y, y(0) = y0: y(t) = (k cos t + sin t)/(1 + k²) + (y0 − k/(1 + k²)) e^(−kt),
// observed at five times; k ~ normal(1, 0.5), y0 ~ normal(1, 1).
const std::vector<double> forced_times{0.3, 1.1, 2.0, 3.7, 6.0};
const std::vector<double> forced_obs{1.2, 0.9, 0.4, -0.5, 0.6};
double forced_reference(const std::vector<double>& th) {
  const double kk = th[0], a = th[1], c = 1 + kk * kk;
  double lp = normal_log(kk, 1.0, 0.5) + normal_log(a, 1.0, 1.0);
  for (std::size_t r = 0; r < forced_times.size(); ++r) {
    const double t = forced_times[r];
    const double yt = (kk * std::cos(t) + std::sin(t)) / c + (a - kk / c) * std::exp(-kk * t);
    lp += normal_log(forced_obs[r], yt, 0.3);
  }
  return lp;
}
}  // namespace

TEST_CASE("ode_rk45: f that depends on t (a forced linear equation)", "[compile][ode]") {
  auto k = normal<"k">(1.0, 0.5);
  auto y0 = normal<"y0">(1.0, 1.0);
  auto y = ode_rk45_tol([&](const auto& t, const auto& yt) { return cos(t) - k * yt; }, y0, 0.0, data(forced_times),
                        1e-11, 1e-11, 100000);
  const auto m = model(joint(k, y0, normal(y, 0.3).observe(data(forced_obs))));
  for (const auto& th : tyche_test::random_points(5, 2, 0.2, 2.0, 72))
    check_against(m, forced_reference, th, 1e-8, "forced");
}

namespace {
// One-compartment oral absorption: gut a₀' = −ka a₀, central a₁' = ka a₀ − (CL/V) a₁, a(0) =
// (D, 0); the concentration a₁/V observed with lognormal error. Closed form: a₁(t) = D ka/(ka − ke)
// (e^(−ke t) − e^(−ka t)), ke = CL/V. Parameters on the log scale (lognormal priors).
const std::vector<double> pk_times{0.5, 1.0, 2.0, 4.0, 6.0, 8.0, 12.0, 24.0};
const std::vector<double> pk_conc{2.1, 3.0, 3.2, 2.6, 1.9, 1.4, 0.75, 0.12};
constexpr double pk_dose = 100.0;

template <bool Stiff = false, class Dose, class... Extra>
auto pk_model(const Dose& dose, double tol, const Extra&... extra) {
  auto CL = lognormal<"CL">(std::log(5.0), 0.5);
  auto V = lognormal<"V">(std::log(30.0), 0.5);
  auto ka = lognormal<"ka">(0.0, 0.5);
  auto sigma = lognormal<"sigma">(std::log(0.2), 0.5);
  const std::size_t n = pk_times.size();
  auto f = [&](const auto&, const auto& a) { return std::tuple{-ka * a[0], ka * a[0] - CL / V * a[1]}; };
  auto sol = [&] {
    if constexpr (Stiff) return ode_stiff_tol(f, std::tuple{dose, 0.0}, 0.0, data(pk_times), tol, tol, 100000);
    else return ode_rk45_tol(f, std::tuple{dose, 0.0}, 0.0, data(pk_times), tol, tol, 100000);
  }();
  auto conc = segment(sol, n + 1, n) / V;
  return model(joint(extra..., CL, V, ka, sigma, lognormal(log(assume_positive(conc)), sigma).observe(data(pk_conc))));
}
double pk_reference(const std::vector<double>& th, double dose) {
  const double lcl = th[0], lv = th[1], lka = th[2], ls = th[3];
  const double cl = std::exp(lcl), v = std::exp(lv), ka = std::exp(lka), s = std::exp(ls), ke = cl / v;
  auto lognormal_log = [](double y, double mu, double sd) { return normal_log(std::log(y), mu, sd) - std::log(y); };
  // each lognormal prior on the log scale: the density of log x is the lognormal's times x
  double lp = lognormal_log(cl, std::log(5.0), 0.5) + lcl + lognormal_log(v, std::log(30.0), 0.5) + lv +
              lognormal_log(ka, 0.0, 0.5) + lka + lognormal_log(s, std::log(0.2), 0.5) + ls;
  for (std::size_t r = 0; r < pk_times.size(); ++r) {
    const double t = pk_times[r];
    const double a1 = dose * ka / (ka - ke) * (std::exp(-ke * t) - std::exp(-ka * t));
    lp += lognormal_log(pk_conc[r], std::log(a1 / v), s);
  }
  return lp;
}
}  // namespace

TEST_CASE("ode_rk45: oral absorption (two states) against its closed form", "[compile][ode]") {
  const auto m = pk_model(pk_dose, 1e-10);
  REQUIRE(m.dim() == 4);
  for (const auto& th : tyche_test::random_points(5, 4, -0.4, 0.4, 73)) {
    const std::vector<double> p{std::log(5.0) + th[0], std::log(30.0) + th[1], th[2], std::log(0.2) + th[3]};
    check_against(m, [](const std::vector<double>& x) { return pk_reference(x, pk_dose); }, p, 1e-7, "pk");
  }
}

TEST_CASE("ode_rk45: an initial state that is a parameter gets its gradient", "[compile][ode]") {
  // The dose a random variable: y0's sensitivities (S(t0) = I) carry its gradient.
  auto D = lognormal<"D">(std::log(100.0), 0.2);
  const auto m = pk_model(D, 1e-10, D);
  REQUIRE(m.dim() == 5);
  const std::vector<double> p{std::log(90.0), std::log(4.5), std::log(28.0), 0.2, std::log(0.25)};
  auto reference = [](const std::vector<double>& x) {
    const double d = std::exp(x[0]);
    return normal_log(x[0], std::log(100.0), 0.2) + pk_reference({x[1], x[2], x[3], x[4]}, d);
  };
  check_against(m, reference, p, 1e-7, "pk with the dose a parameter");
}

TEST_CASE("ode_rk45: Lotka-Volterra against finite differences; SIMD lanes and float", "[compile][ode]") {
  // u' = (α − β v) u, v' = (−γ + δ u) v: no closed form. The gradient against Richardson
  // differences of the model's own log density solved to 1e-12 (its values smooth to ~1e-11).
  static const std::vector<double> ts{1.0, 2.0, 3.0, 4.0, 5.0, 6.0};
  static const std::vector<double> u_obs{0.8, 0.5, 0.7, 1.6, 2.4, 0.9};
  auto theta = lognormal<"theta">(0.0, 0.5, shape<4>);
  auto z0 = lognormal<"z0">(0.0, 0.5, shape<2>);
  auto sol = ode_rk45_tol(
      [&](const auto&, const auto& z) {
        return std::tuple{(theta[0] - theta[1] * z[1]) * z[0], (theta[3] * z[0] - theta[2]) * z[1]};
      },
      z0, 0.0, data(ts), 1e-12, 1e-12, 1000000);
  const auto m = model(joint(theta, z0, normal(head(sol, 6), 0.2).observe(data(u_obs))));
  REQUIRE(m.dim() == 6);
  const std::vector<double> th{0.1, -0.3, 0.05, -0.2, 0.15, -0.4};
  // The log density against the classical Runge–Kutta method written here with 20,000 steps per
  // unit of time (error ~1e-15): a check of the model itself, which the finite differences of its
  // own log density below are not (θ's four values share a type: a solver that took them for one
  // parameter would pass those).
  auto reference = [](const std::vector<double>& x) {
    double p[4], z[2] = {std::exp(x[4]), std::exp(x[5])};
    for (int i = 0; i < 4; ++i) p[i] = std::exp(x[i]);
    auto f = [&](const double* y, double* d) {
      d[0] = (p[0] - p[1] * y[1]) * y[0];
      d[1] = (p[3] * y[0] - p[2]) * y[1];
    };
    double lp = 0;
    for (int i = 0; i < 6; ++i) lp += normal_log(x[i], 0.0, 0.5);  // lognormal priors on the log scale
    const int per_unit = 20000;
    const double h = 1.0 / per_unit;
    for (std::size_t r = 0; r < ts.size(); ++r) {
      for (int s = 0; s < per_unit; ++s) {
        double k1[2], k2[2], k3[2], k4[2], t[2];
        f(z, k1);
        for (int j = 0; j < 2; ++j) t[j] = z[j] + 0.5 * h * k1[j];
        f(t, k2);
        for (int j = 0; j < 2; ++j) t[j] = z[j] + 0.5 * h * k2[j];
        f(t, k3);
        for (int j = 0; j < 2; ++j) t[j] = z[j] + h * k3[j];
        f(t, k4);
        for (int j = 0; j < 2; ++j) z[j] += h / 6 * (k1[j] + 2 * k2[j] + 2 * k3[j] + k4[j]);
      }
      lp += normal_log(u_obs[r], z[0], 0.2);
    }
    return lp;
  };
  CHECK(m.log_prob(th) == Approx(reference(th)).epsilon(1e-9));
  auto value = [&](const std::vector<double>& x) { return m.log_prob(x); };
  check_against(m, value, th, 1e-6, "Lotka-Volterra");
  // Lanes: each lane's solve is the double one, so lanes equal it (to the property's 1e-12).
  tyche_test::check_lanes(m.program(), tyche_test::random_points(8, 6, -0.3, 0.3, 74), "Lotka-Volterra lanes");
  tyche_test::check_float(m.program(), th, "Lotka-Volterra float");
}

TEST_CASE("ode_rk45: a vector state (shape<K>) and a vector returned by f", "[compile][ode]") {
  // y' = −k ∘ y for a vector y0 of 3 values, f returning a vector expression.
  static const std::vector<double> ts{0.5, 1.5};
  auto k = lognormal<"k">(0.0, 0.5, shape<3>);
  auto y0 = normal<"y0">(2.0, 0.5, shape<3>);
  auto sol = ode_rk45_tol([&](const auto&, const auto& y) { return -k * y; }, y0, 0.0, data(ts), 1e-11, 1e-11,
                          100000);
  const auto m = model(joint(k, y0, target(-0.5 * sum(square(sol)))));
  const std::vector<double> th{0.1, -0.2, 0.3, 1.8, 2.1, 2.4};
  // against the same model written by hand: sum of squares of y0 e^(−k t)
  auto k2 = lognormal<"k">(0.0, 0.5, shape<3>);
  auto y02 = normal<"y0">(2.0, 0.5, shape<3>);
  const auto hand = model(joint(k2, y02,
                                target(-0.5 * (sum(square(y02 * exp(-k2 * 0.5))) + sum(square(y02 * exp(-k2 * 1.5)))))));
  check_against(m, [&](const std::vector<double>& x) { return hand.log_prob(x); }, th, 1e-8, "vector state");
}

TEST_CASE("ode_rk45: bad input is named", "[compile][ode]") {
  auto k = normal<"k">(0.5, 0.2);
  auto f = [&](const auto&, const auto& y) { return -k * y; };
  static const std::vector<double> unordered{1.0, 3.0, 2.0}, early{0.0, 1.0}, bad{1.0, NAN};
  static const std::vector<double> ok{1.0, 2.0}, none{};
  CHECK_THROWS_WITH(ode_rk45(f, 1.0, 0.0, data(unordered, "times")),
                    Catch::Matchers::Contains("ts ('times') have value 2 at index 3 (1-based), before the one at index 2 (3)"));
  CHECK_THROWS_WITH(ode_rk45(f, 1.0, 0.0, data(early)),
                    Catch::Matchers::Contains("value 0 at index 1 (1-based), not after t0 = 0"));
  CHECK_THROWS_WITH(ode_rk45(f, 1.0, 0.0, data(bad)),
                    Catch::Matchers::Contains("value nan at index 2 (1-based); output times must be finite"));
  CHECK_THROWS_WITH(ode_rk45(f, 1.0, 0.0, data(none)), Catch::Matchers::Contains("are empty"));
  CHECK_THROWS_WITH(ode_stiff(f, 1.0, 0.0, data(early)),
                    Catch::Matchers::Contains("tyche::ode_stiff(f, y0, t0, ts): the output times ts have value 0"));
  CHECK_THROWS_WITH(ode_stiff_tol(f, 1.0, 0.0, data(ok), 1e-6, 1e-6, -3), Catch::Matchers::Contains("max_num_steps is -3"));
  CHECK_THROWS_WITH(ode_rk45(f, 1.0, NAN, data(ok)), Catch::Matchers::Contains("t0 is nan"));
  CHECK_THROWS_WITH(ode_rk45_tol(f, 1.0, 0.0, data(ok), 0.0, 1e-6, 100),
                    Catch::Matchers::Contains("relative_tolerance is 0; it must be positive"));
  CHECK_THROWS_WITH(ode_rk45_tol(f, 1.0, 0.0, data(ok), 1e-6, -1.0, 100),
                    Catch::Matchers::Contains("absolute_tolerance is -1"));
  CHECK_THROWS_WITH(ode_rk45_tol(f, 1.0, 0.0, data(ok), 1e-6, 1e-6, 0),
                    Catch::Matchers::Contains("max_num_steps is 0"));
  auto z0 = normal<"z0">(0.0, 1.0, shape<2>);
  auto v = normal<"v">(0.0, 1.0, shape_of(3));  // a size known at run time only
  CHECK_THROWS_WITH(ode_rk45([&](const auto&, const auto&) { return v; }, z0, 0.0, data(ok)),
                    Catch::Matchers::Contains("f returns a vector of size 3, the state has size 2"));
}

TEST_CASE("ode_rk45: a solve that runs out of steps gives NaN, not an error or a wrong value", "[compile][ode]") {
  // A stiff decay (k = 1e4) over [0, 10] with at most 50 steps between output times.
  static const std::vector<double> ts{10.0};
  auto k = normal<"k">(1e4, 1.0);
  auto y = ode_rk45_tol([&](const auto&, const auto& yt) { return -k * yt; }, 1.0, 0.0, data(ts), 1e-6, 1e-6, 50);
  const auto m = model(joint(k, target(-square(at(y, 0)))));
  std::vector<double> g(1);
  CHECK(std::isnan(m.log_prob_and_gradient(std::vector<double>{1e4}, g)));
  // Enough steps: the value (about 0) and a finite gradient.
  auto y2 = ode_rk45_tol([&](const auto&, const auto& yt) { return -k * yt; }, 1.0, 0.0, data(ts), 1e-6, 1e-6, 100000);
  const auto m2 = model(joint(k, target(-square(at(y2, 0)))));
  const double v = m2.log_prob_and_gradient(std::vector<double>{1e4}, g);
  CHECK(std::isfinite(v));
  CHECK(std::isfinite(g[0]));
}

TEST_CASE("ode_rk45: sensitivity columns — loop invariants hoisted only where that saves columns", "[compile][ode]") {
  // The solver carries ∂y/∂(y0, p) for f's parameters p: K + P columns, or P where y0 is a
  // constant. CL / V is hoisted (one column for two parameters); ka's exp(θ) is hoisted once
  // for −ka and ka (the same subexpression); in the SIR form −beta beside beta likewise.
  static const std::vector<double> ts{1.0, 2.0};
  auto CL = lognormal<"CL">(0.0, 1.0);
  auto V = lognormal<"V">(0.0, 1.0);
  auto ka = lognormal<"ka">(0.0, 1.0);
  auto pk = ode_rk45([&](const auto&, const auto& y) { return std::tuple{-ka * y[0], ka * y[0] - CL / V * y[1]}; },
                     std::tuple{100.0, 0.0}, 0.0, data(ts));
  CHECK(detail::as_node(pk).op.columns() == 2);
  CHECK(detail::as_node(pk).op.inputs() == 2 + 2);
  auto D = lognormal<"D">(std::log(100.0), 0.2);  // y0 a parameter: its K columns too
  auto pk_dose = ode_rk45([&](const auto&, const auto& y) { return std::tuple{-ka * y[0], ka * y[0] - CL / V * y[1]}; },
                          std::tuple{D, 0.0}, 0.0, data(ts));
  CHECK(detail::as_node(pk_dose).op.columns() == 2 + 2);
  auto beta = lognormal<"beta">(0.0, 1.0);
  auto gamma = lognormal<"gamma">(0.0, 1.0);
  auto sir = ode_rk45(
      [&](const auto&, const auto& y) {
        return std::tuple{-beta * y[0] * y[1], beta * y[0] * y[1] - gamma * y[1], gamma * y[1]};
      },
      std::tuple{0.99, 0.01, 0.0}, 0.0, data(ts));
  CHECK(detail::as_node(sir).op.columns() == 2);
  // ka = CL / V + kd, a function of three parameters: −ka and ka are hoisted whole, −ka as ka's
  // placeholder negated, so the columns are (ka, CL / V), not three.
  auto kd = lognormal<"kd">(0.0, 1.0);
  auto ka2 = CL / V + kd;
  auto pk_sum = ode_stiff([&](const auto&, const auto& y) { return std::tuple{-ka2 * y[0], ka2 * y[0] - CL / V * y[1]}; },
                          std::tuple{100.0, 0.0}, 0.0, data(ts));
  CHECK(detail::as_node(pk_sum).op.columns() == 2);
  // −ka twice (a repeat of the negation: the same placeholder negated; found by review).
  auto three = ode_stiff(
      [&](const auto&, const auto& y) {
        return std::tuple{-ka2 * y[0], ka2 * y[0] - CL / V * y[1], -ka2 * y[2]};
      },
      std::tuple{100.0, 0.0, 1.0}, 0.0, data(ts));
  CHECK(detail::as_node(three).op.columns() == 2);
  // The same system with the negation on the state (ka hoisted alone): the same values and
  // gradient.
  auto pk_sum2 = ode_stiff([&](const auto&, const auto& y) { return std::tuple{ka2 * (-y[0]), ka2 * y[0] - CL / V * y[1]}; },
                           std::tuple{100.0, 0.0}, 0.0, data(ts));
  static const std::vector<double> obs{60.0, 45.0, 5.0, 9.0};
  const auto m = model(joint(CL, V, kd, normal(pk_sum, 1.0).observe(data(obs))));
  const auto m2 = model(joint(CL, V, kd, normal(pk_sum2, 1.0).observe(data(obs))));
  const std::vector<double> th{0.2, -0.1, 0.3};
  std::vector<double> g(3), g2(3);
  CHECK(m.log_prob_and_gradient(th, g) == Approx(m2.log_prob_and_gradient(th, g2)).epsilon(1e-12));
  for (std::size_t i = 0; i < 3; ++i) CHECK(g[i] == Approx(g2[i]).epsilon(1e-10));
}

TEST_CASE("ode_rk45: a stage where f is not finite makes the step's error NaN (a rejection)", "[compile][ode]") {
  // f NaN in the first value's row only (a trial point outside f's domain), the rows after it
  // finite and small: the norm must be NaN, not the largest finite value after the NaN (which
  // accepted the step and carried the NaN into every later one; found by review).
  const double nan = std::nan("");
  const double u[3] = {0.4, 1.0, 2.0}, unew[3] = {nan, 1.0, 2.0};
  const double k[3] = {nan, 1e-3, 1e-3}, zero[3] = {0, 0, 0};
  const double err = detail::ode_error_norm(3, 0.1, k, zero, zero, zero, zero, zero, u, unew, 1e-6, 1e-6);
  CHECK(std::isnan(err));
  const double finite = detail::ode_error_norm(2, 0.1, zero, zero, zero, zero, zero, k + 1, u + 1, unew + 1, 1e-6, 1e-6);
  CHECK(std::isfinite(finite));
}

TEST_CASE("ode_rk45: two doses by two solves, the second starting from the first's state", "[compile][ode]") {
  // Oral doses of 100 at t = 0 and 60 at t = 6: the first solve runs to the second dose's time,
  // the second starts from its state with the dose added to the gut (y0 an expression of the
  // first solve: its sensitivities carry the gradient through). The system is linear, so the
  // concentration is the sum of the single-dose curves.
  static const std::vector<double> ts1{1.0, 2.0, 4.0, 6.0}, ts2{8.0, 12.0, 24.0};
  static const std::vector<double> obs1{2.2, 3.0, 2.6}, obs2{3.4, 2.1, 0.4};
  auto CL = lognormal<"CL">(std::log(5.0), 0.5);
  auto V = lognormal<"V">(std::log(30.0), 0.5);
  auto ka = lognormal<"ka">(0.0, 0.5);
  auto f = [&](const auto&, const auto& y) { return std::tuple{-ka * y[0], ka * y[0] - CL / V * y[1]}; };
  auto sol1 = ode_rk45_tol(f, std::tuple{100.0, 0.0}, 0.0, data(ts1), 1e-10, 1e-10, 100000);
  auto sol2 = ode_rk45_tol(f, std::tuple{at(sol1, 3) + 60.0, at(sol1, 7)}, 6.0, data(ts2), 1e-10, 1e-10, 100000);
  auto c1 = assume_positive(segment(sol1, 5, 3) / V);  // the central amount at t = 1, 2, 4
  auto c2 = assume_positive(segment(sol2, 4, 3) / V);  // at t = 8, 12, 24
  const auto m = model(joint(CL, V, ka, lognormal(log(c1), 0.2).observe(data(obs1)),
                             lognormal(log(c2), 0.2).observe(data(obs2))));
  auto reference = [](const std::vector<double>& x) {
    const double cl = std::exp(x[0]), v = std::exp(x[1]), k_a = std::exp(x[2]), ke = cl / v;
    auto curve = [&](double dose, double t) { return dose * k_a / (k_a - ke) * (std::exp(-ke * t) - std::exp(-k_a * t)); };
    auto lognormal_log = [](double y, double mu, double sd) { return normal_log(std::log(y), mu, sd) - std::log(y); };
    double lp = normal_log(x[0], std::log(5.0), 0.5) + normal_log(x[1], std::log(30.0), 0.5) + normal_log(x[2], 0.0, 0.5);
    for (int r = 0; r < 3; ++r) lp += lognormal_log(obs1[r], std::log(curve(100.0, ts1[r]) / v), 0.2);
    for (int r = 0; r < 3; ++r)
      lp += lognormal_log(obs2[r], std::log((curve(100.0, ts2[r]) + curve(60.0, ts2[r] - 6.0)) / v), 0.2);
    return lp;
  };
  for (const auto& th : tyche_test::random_points(3, 3, -0.3, 0.3, 75)) {
    const std::vector<double> p{std::log(5.0) + th[0], std::log(30.0) + th[1], th[2]};
    check_against(m, reference, p, 1e-7, "two doses");
  }
}

TEST_CASE("ode_stiff: closed forms — f that depends on t, oral absorption with the dose a parameter",
          "[compile][ode]") {
  // The forced linear equation y' = cos t − k y (∂f/∂t enters the stages), k from 0.2 to 2 and
  // a stiff k = 500.
  auto k = normal<"k">(1.0, 0.5);
  auto y0 = normal<"y0">(1.0, 1.0);
  auto y = ode_stiff_tol([&](const auto& t, const auto& yt) { return cos(t) - k * yt; }, y0, 0.0,
                         data(forced_times), 1e-11, 1e-11, 1000000);
  const auto m = model(joint(k, y0, normal(y, 0.3).observe(data(forced_obs))));
  for (const auto& th : tyche_test::random_points(3, 2, 0.2, 2.0, 76))
    check_against(m, forced_reference, th, 1e-7, "forced");
  check_against(m, forced_reference, {500.0, 1.5}, 1e-7, "forced, stiff");
  // Oral absorption, the dose a parameter (y0's sensitivity columns).
  auto D = lognormal<"D">(std::log(100.0), 0.2);
  const auto pk = pk_model<true>(D, 1e-11, D);
  auto pk_ref = [](const std::vector<double>& x) {
    return normal_log(x[0], std::log(100.0), 0.2) + pk_reference({x[1], x[2], x[3], x[4]}, std::exp(x[0]));
  };
  check_against(pk, pk_ref, {std::log(90.0), std::log(4.5), std::log(28.0), 0.2, std::log(0.25)}, 1e-7, "pk, dose");
}

TEST_CASE("ode_stiff: a stiff absorption in the steps ode_rk45 runs out of", "[compile][ode]") {
  // ka = 1e5 against an elimination rate of 0.3: the explicit method's step is bound by 3.3 / ka
  // over the whole interval (about 1.4e5 steps to t = 4), the Rosenbrock-W method's only while
  // the fast component moves (60–250 steps here at tolerances 1e-4 … 1e-6).
  static const std::vector<double> ts{0.5, 1.0, 2.0, 4.0};
  static const std::vector<double> obs{9.0, 7.5, 5.4, 3.0};
  auto lka = normal<"lka">(std::log(1e5), 1.0);
  auto lke = normal<"lke">(std::log(0.3), 1.0);
  auto ka = exp(lka);
  auto ke = exp(lke);
  auto f = [&](const auto&, const auto& a) { return std::tuple{-ka * a[0], ka * a[0] - ke * a[1]}; };
  auto stiff = ode_stiff_tol(f, std::tuple{10.0, 0.0}, 0.0, data(ts), 1e-6, 1e-6, 1000);
  auto explicit_ = ode_rk45_tol(f, std::tuple{10.0, 0.0}, 0.0, data(ts), 1e-6, 1e-6, 1000);
  const auto m = model(joint(lka, lke, normal(segment(stiff, 5, 4), 0.5).observe(data(obs))));
  const auto m_explicit = model(joint(lka, lke, normal(segment(explicit_, 5, 4), 0.5).observe(data(obs))));
  auto reference = [](const std::vector<double>& x) {
    const double Ka = std::exp(x[0]), Ke = std::exp(x[1]);
    double lp = normal_log(x[0], std::log(1e5), 1.0) + normal_log(x[1], std::log(0.3), 1.0);
    for (std::size_t r = 0; r < ts.size(); ++r)
      lp += normal_log(obs[r], 10 * Ka / (Ka - Ke) * (std::exp(-Ke * ts[r]) - std::exp(-Ka * ts[r])), 0.5);
    return lp;
  };
  const std::vector<double> th{std::log(1.2e5), std::log(0.25)};
  std::vector<double> g(2);
  CHECK(std::isnan(m_explicit.log_prob_and_gradient(th, g)));
  // At tolerances 1e-6 (the error of the values about 1e-6 relative, so the log density's
  // about 1e-4 absolute here): the closed form and its gradient.
  const double v = m.log_prob_and_gradient(th, g);
  CHECK(v == Approx(reference(th)).margin(1e-3));
  CHECK(g[0] == Approx(derivative(reference, th, 0)).margin(1e-3));
  CHECK(g[1] == Approx(derivative(reference, th, 1)).epsilon(1e-4));
}

TEST_CASE("ode_stiff: Robertson's chemical kinetics against published values and ode_rk45", "[compile][ode]") {
  // y₁' = −k₁y₁ + k₃y₂y₃, y₂' = k₁y₁ − k₃y₂y₃ − k₂y₂², y₃' = k₂y₂² (k = 0.04, 3·10⁷, 10⁴): rate
  // constants nine orders apart. The values at t = 40 against Hairer & Wanner, Solving ODEs II
  // (IV.10); at t = 0.4 and 4 against ode_rk45 solved to 1e-12 (about 10⁴ steps, bound by
  // stability: the reason for a stiff solver); the gradient against finite differences of the
  // model's own log density; lanes and float.
  static const std::vector<double> ts{0.4, 4.0, 40.0}, ts_early{0.4, 4.0};
  static const std::vector<double> obs{0.98, 0.9, 0.72, 3e-5, 2e-5, 1e-5, 0.015, 0.09, 0.28};
  static const std::vector<double> scale{0.01, 0.01, 0.01, 1e-5, 1e-5, 1e-5, 0.01, 0.01, 0.01};
  auto lk = normal<"lk">(0.0, 1.0, shape<3>);  // log(k / (0.04, 3e7, 1e4))
  auto k1 = 0.04 * exp(lk[0]);
  auto k2 = 3e7 * exp(lk[1]);
  auto k3 = 1e4 * exp(lk[2]);
  auto f = [&](const auto&, const auto& y) {
    return std::tuple{-k1 * y[0] + k3 * y[1] * y[2], k1 * y[0] - k3 * y[1] * y[2] - k2 * y[1] * y[1],
                      k2 * y[1] * y[1]};
  };
  const std::vector<double> zero{0.0, 0.0, 0.0};
  const double prior = -1.5 * std::log(2 * std::acos(-1.0));  // the three normal(0, 1) priors at 0
  {
    // Values as weighted sums (each term about 1: one solve checks several values), the log
    // density of a model that is the prior plus the sum.
    auto sol = ode_stiff_tol(f, std::tuple{1.0, 0.0, 0.0}, 0.0, data(ts), 1e-10, 1e-14, 100000);
    auto ref = ode_rk45_tol(f, std::tuple{1.0, 0.0, 0.0}, 0.0, data(ts_early), 1e-12, 1e-16, 1000000);
    auto weighted = [&](const auto& solution, const std::vector<double>& w) {
      return model(joint(lk, target(sum(solution * data(w))))).log_prob(zero) - prior;
    };
    static const std::vector<double> w_ref{1.0, 1.0, 3e4, 4e4, 60.0, 10.0};
    static const std::vector<double> w_sol{1.0, 1.0, 1.0, 3e4, 4e4, 1e5, 60.0, 10.0, 1.0};
    const double published = 0.7158270687193 + 1e5 * 9.185534764e-6 + 0.2841637457;  // t = 40
    CHECK(weighted(sol, w_sol) == Approx(weighted(ref, w_ref) + published).epsilon(1e-9));
  }
  // The gradient, lanes and float at tolerances 1e-8 (the gradient's finite differences of the
  // solve's own values: smooth to ~1e-9 there).
  auto sol = ode_stiff_tol(f, std::tuple{1.0, 0.0, 0.0}, 0.0, data(ts), 1e-8, 1e-12, 100000);
  const auto m = model(joint(lk, normal(sol, data(scale)).observe(data(obs))));
  // The gradient along one direction v (cheaper than each coordinate's under the sanitizers):
  // ∇·v against the Richardson difference of s ↦ log p(θ + s v).
  const std::vector<double> th{0.1, -0.2, 0.15}, v{0.6, -0.48, 0.64};
  std::vector<double> g(3);
  m.log_prob_and_gradient(th, g);
  auto along = [&](const std::vector<double>& s) {
    std::vector<double> x = th;
    for (std::size_t i = 0; i < 3; ++i) x[i] += s[0] * v[i];
    return m.log_prob(x);
  };
  const double want = derivative(along, {0.0}, 0);
  CHECK(g[0] * v[0] + g[1] * v[1] + g[2] * v[2] == Approx(want).epsilon(1e-6));
  tyche_test::check_lanes(m.program(), tyche_test::random_points(2, 3, -0.2, 0.2, 77), "Robertson lanes");
  tyche_test::check_float(m.program(), th, "Robertson float");
}

TEST_CASE("ode_stiff: f with an infinite ∂f/∂t at the start (√t at t = 0)", "[compile][ode]") {
  // y' = √t − k y: finite, with ∂f/∂t infinite at t = 0; the W-method takes it as 0 there
  // instead of rejecting every step (NaN before the review found it). Against ode_rk45.
  static const std::vector<double> ts{0.5, 1.0, 2.0};
  auto k = flat<"k">();
  auto f = [&](const auto& t, const auto& y) { return sqrt(t) - k * y; };
  auto stiff = ode_stiff_tol(f, 1.0, 0.0, data(ts), 1e-10, 1e-10, 100000);
  auto explicit_ = ode_rk45_tol(f, 1.0, 0.0, data(ts), 1e-10, 1e-10, 100000);
  const auto m = model(joint(k, target(sum(stiff))));
  const auto m2 = model(joint(k, target(sum(explicit_))));
  const std::vector<double> th{0.1};
  CHECK(m.log_prob(th) == Approx(m2.log_prob(th)).epsilon(1e-8));
}

TEST_CASE("ode_stiff: its LU factorisation pivots and solves", "[compile][ode]") {
  // A first pivot of zero (row exchange needed); M x = b with x = (1, −2, 3), b by hand; a
  // strided right-hand side (a sensitivity column); a singular matrix reported.
  double m[9] = {0, 2, 1, 1, 1, 1, 4, -1, 2};
  std::size_t piv[3];
  REQUIRE(detail::ode_lu<3>(m, piv));
  double b[6] = {-1, 0, 2, 0, 12, 0};  // b = M (1, −2, 3) = (−1, 2, 12), stride 2
  detail::ode_lu_solve<3>(m, piv, b, 2);
  CHECK(b[0] == Approx(1.0).epsilon(1e-14));
  CHECK(b[2] == Approx(-2.0).epsilon(1e-14));
  CHECK(b[4] == Approx(3.0).epsilon(1e-14));
  CHECK(b[1] == 0.0);
  double singular[4] = {1, 2, 2, 4};
  std::size_t piv2[2];
  CHECK_FALSE(detail::ode_lu<2>(singular, piv2));
}

TEST_CASE("ode_rk45: one solve per element of tabulate (a rate per group)", "[compile][ode]") {
  // y' = −k z_j y, y(0) = y0, at t = 1 and 2 for each group j: y0 e^(−k z_j t), each group its own
  // solve inside tabulate's lambda (z_j, the element's placeholder, an operand of the solve).
  static const std::vector<double> z{0.5, 1.0, 2.0};
  static const std::vector<double> ts{1.0, 2.0};
  auto k = lognormal<"k">(0.0, 0.5);
  auto y0 = normal<"y0">(2.0, 0.5);
  auto ends = tabulate(z.size(), [&](const auto&, const auto& zj) {
    auto sol = ode_rk45_tol([&](const auto&, const auto& y) { return -k * zj * y; }, y0, 0.0, data(ts), 1e-11, 1e-11,
                            100000);
    return at(sol, 0) + at(sol, 1);
  }, data(z));
  const auto m = model(joint(k, y0, target(-0.5 * sum(square(ends - 1.0)))));
  auto reference = [](const std::vector<double>& th) {
    const double kk = std::exp(th[0]), a = th[1];
    double lp = normal_log(th[0], 0.0, 0.5) + normal_log(a, 2.0, 0.5);
    for (double zj : z) {
      const double e = a * std::exp(-kk * zj) + a * std::exp(-2.0 * kk * zj) - 1.0;
      lp += -0.5 * e * e;
    }
    return lp;
  };
  check_against(m, reference, {0.2, 1.8}, 1e-8, "tabulate of ODE solves");
}

TEST_CASE("ode_rk45: a solve in scan's step (a dose each interval, the state carried)", "[compile][ode]") {
  // y' = −a y − b over each interval of length 1 (a = k r_n, b = 0.1 y_n: f uses the scan's
  // state y_n), starting from y_n plus dose D_n: y_{n+1} = (y_n + D_n + b/a) e^(−a) − b/a,
  // y_0 = 0. The scan's state and the solve's are both of one value (the same type but for the
  // name: the solve's state placeholder has its own, so the scan's is an operand of the solve, not
  // taken for its state — with one name this model's f would read the solve's state for y_n).
  static const std::vector<double> doses{1.0, 2.0, 0.5, 1.5}, rates{1.0, 0.5, 2.0, 1.0}, tau{1.0};
  auto k = lognormal<"k">(0.0, 0.5);
  auto path = scan_states([&](const auto& s, const auto& dose, const auto& r) {
    auto sol = ode_rk45_tol([&](const auto&, const auto& y) { return -k * r * y - 0.1 * s; }, s + dose, 0.0,
                            data(tau), 1e-11, 1e-11, 100000);
    return at(sol, 0);
  }, 0.0, data(doses), data(rates));
  const auto m = model(joint(k, target(-0.5 * sum(square(path - 1.0)))));
  auto reference = [](const std::vector<double>& th) {
    const double kk = std::exp(th[0]);
    double lp = normal_log(th[0], 0.0, 0.5), y = 0;
    for (std::size_t n = 0; n < doses.size(); ++n) {
      const double a = kk * rates[n], b = 0.1 * y;
      y = (y + doses[n] + b / a) * std::exp(-a) - b / a;
      lp += -0.5 * (y - 1.0) * (y - 1.0);
    }
    return lp;
  };
  for (double th : {-0.4, 0.1, 0.6}) check_against(m, reference, {th}, 1e-8, "scan of ODE solves");
}
