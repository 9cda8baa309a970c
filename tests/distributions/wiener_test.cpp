// wiener(alpha, tau, beta, delta[, sv]) (tyche/distributions/wiener.hpp, scalar/wiener.hpp): the
// log density against RWiener's dwiener (the values Stan's own tests use), the drift-variability
// form against numerical integration of the four-argument density over the drift, the two
// boundaries' densities integrating to 1 and the upper one to its closed-form probability (both
// series, both tails), gradients through the property check, draws against the CDF integrated here
// (Kolmogorov–Smirnov), a model, and the errors.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <span>
#include <stdexcept>
#include <vector>

#include "support/continuous_checks.hpp"
#include "support/property.hpp"

using namespace tyche;
using Catch::Matchers::Contains;

namespace {
double log_wiener(double y, double a, double t, double b, double d, double sv = 0.0) {
  return math::wiener_log_density(y, a, t, b, d, sv).value;
}

/// ∫ f(t) dt over t > 0 of the upper boundary's density (y = τ + t), by Simpson's rule in log t
/// over [log t_lo, log t_hi] with n intervals (n even).
double integral_upper(double a, double b, double d, double sv, double t_hi, int n = 20000) {
  const double lo = std::log(1e-7), hi = std::log(t_hi), h = (hi - lo) / n;
  double s = 0;
  for (int i = 0; i <= n; ++i) {
    const double lt = lo + h * i;
    const double f = std::exp(log_wiener(std::exp(lt), a, 0.0, b, d, sv) + lt);
    s += f * (i == 0 || i == n ? 1 : (i % 2 ? 4 : 2));
  }
  return s * h / 3;
}
}  // namespace

TEST_CASE("wiener: log density against RWiener's dwiener", "[distributions][wiener]") {
  // RWiener::dwiener(y, alpha, tau, beta, delta, give_log = TRUE) (upper boundary), the values
  // of Stan's wiener tests: small- and large-time regimes, a start near either boundary, a long
  // response (u = 2.65) and a large drift.
  const double cases[][6] = {{1.1, 2.1, 0.3, 0.55, 0.4, -0.892976431870503},
                             {2.1, 4.1, 0.6, 0.05, 0.1, -5.28933922584833},
                             {1.2, 10.1, 0.35, 0.95, 0.5, -1.36212169454714},
                             {50.1, 4.3, 1.05, 0.65, 0.15, -15.3049368722015},
                             {1.51, 1.1, 0.9, 0.2, 10.5, -26.4531852275477},
                             {2.1, 4.1, 1.9, 0.05, 0.1, -34.6843978137965}};
  param<"a"> a;
  param<"t"> t;
  param<"b"> b;
  param<"d"> d;
  param<"y"> y;
  const auto f = compile(wiener(a, t, b, d).log_prob(y), y, a, t, b, d);
  // wiener_lpdf checks its arguments' supports: alpha = e^a, tau = e^t, beta = logistic(b).
  const auto fl = compile(wiener_lpdf(y, exp(a), exp(t), logistic(b), d), y, a, t, b, d);
  for (const auto& c : cases) {
    const std::vector<double> p(c, c + 5);
    const std::vector<double> q{c[0], std::log(c[1]), std::log(c[2]), std::log(c[3] / (1 - c[3])), c[4]};
    INFO("wiener(" << c[0] << " | " << c[1] << ", " << c[2] << ", " << c[3] << ", " << c[4] << ")");
    CHECK(f.value(p) == Approx(c[5]).epsilon(1e-13));
    CHECK(fl.value(q) == Approx(c[5]).epsilon(1e-12));
    tyche_test::check_gradient_at(f, p, "wiener");
  }
  // Below tau: −∞.
  CHECK(f.value(std::vector<double>{0.2, 1.0, 0.3, 0.5, 0.0}) == -HUGE_VAL);
  // Just above tau (u = 1e-110 and 1e-160, where u³ underflows) and for a huge boundary: finite
  // and far below 0 (−w²/(2u) dominates); β near 0 keeps its precision.
  for (const double t : {1e-110, 1e-160}) {
    const auto r = math::wiener_log_density(t, 1.0, 0.0, 0.5, 0.5, 0.0);
    INFO("y - tau = " << t << ": " << r.value);
    CHECK(std::isfinite(r.value));
    CHECK(r.value < -1e100);
    if (t > 1e-150) {  // (at 1e-160 the derivative, w²/(2u²) ≈ 1e319, is beyond the doubles)
      CHECK(std::isfinite(r.dy));
      CHECK(std::isfinite(r.dalpha));
    }
  }
  CHECK(std::isfinite(math::wiener_log_density(1.0, 1e55, 0.0, 0.5, 0.1, 0.0).value));
  // β = 1e-9 and 1e-12 (a start at the lower boundary): the large-time series reads sin(kπβ)
  // directly; against the series in long double.
  for (const double b : {1e-9, 1e-12}) {
    const long double u = 2.0L, w = 1.0L - (long double)b;
    long double s = 0;
    for (int k = 1; k < 40; ++k) s += k * std::exp(-(long double)(k * k) * 3.14159265358979323846L * 3.14159265358979323846L * u / 2) * std::sin(k * 3.14159265358979323846L * (long double)b) * (k % 2 ? 1 : -1);
    const long double ref = std::log(3.14159265358979323846L * s) + 0.0L;  // a = 1, v = 0: log g(u, w)
    (void)w;
    CHECK(math::wiener_log_density(2.0, 1.0, 0.0, b, 0.0, 0.0).value == Approx(double(ref)).epsilon(1e-12));
  }
}

TEST_CASE("wiener: drift variability sv against the four-argument density integrated over the drift",
          "[distributions][wiener]") {
  // f(y | α, τ, β, δ, sv) = ∫ f(y | α, τ, β, δ') N(δ' | δ, sv) dδ': Simpson's rule over δ ± 12 sv.
  const double cases[][6] = {
      {1.1, 2.1, 0.3, 0.55, 0.4, 0.8}, {0.7, 1.5, 0.2, 0.3, -1.2, 1.5}, {3.0, 2.0, 0.4, 0.6, 2.0, 0.3}, {0.45, 1.0, 0.4, 0.8, 1.0, 2.0}};
  for (const auto& c : cases) {
    const int n = 4000;
    const double lo = c[4] - 12 * c[5], h = 24 * c[5] / n;
    double s = 0;
    for (int i = 0; i <= n; ++i) {
      const double dd = lo + h * i;
      const double z = (dd - c[4]) / c[5];
      s += std::exp(log_wiener(c[0], c[1], c[2], c[3], dd) - 0.5 * z * z) * (i == 0 || i == n ? 1 : (i % 2 ? 4 : 2));
    }
    const double reference = std::log(s * h / 3 / (c[5] * std::sqrt(2 * 3.14159265358979323846)));
    CHECK(log_wiener(c[0], c[1], c[2], c[3], c[4], c[5]) == Approx(reference).epsilon(1e-9));
  }
  // The five-argument form, its function and its gradient (sv a parameter too).
  param<"a"> a;
  param<"t"> t;
  param<"b"> b;
  param<"d"> d;
  param<"s"> s;
  const std::vector<double> y{1.1, 0.6, 2.4};
  const auto f = compile(wiener(a, t, b, d, s).log_prob(data(y)), a, t, b, d, s);
  const auto fl = compile(wiener_lpdf(data(y), exp(a), exp(t), logistic(b), d, exp(s)), a, t, b, d, s);
  const auto pts = tyche_test::points_in(12, {{0.6, 3.0}, {0.0, 0.55}, {0.1, 0.9}, {-3.0, 3.0}, {0.0, 2.0}}, 5);
  for (const auto& p : pts) {
    double ref = 0;
    for (double yi : y) ref += log_wiener(yi, p[0], p[1], p[2], p[3], p[4]);
    const std::vector<double> q{std::log(p[0]), std::log(p[1]), std::log(p[2] / (1 - p[2])), p[3], std::log(p[4])};
    CHECK(f.value(p) == Approx(ref).epsilon(1e-14));
    CHECK(fl.value(q) == Approx(ref).epsilon(1e-12));
    tyche_test::check_gradient_at(f, p, "wiener(a, t, b, d, s)");
  }
  tyche_test::check_lanes(f, pts, "wiener(a, t, b, d, s) (lanes)");
  tyche_test::check_float(f, pts[0], "wiener(a, t, b, d, s) (float)");
}

TEST_CASE("wiener: the two boundaries' densities integrate to 1, the upper one to its probability",
          "[distributions][wiener]") {
  // P(upper) = (1 − e^(−2δαβ)) / (1 − e^(−2δα)) (β for δ = 0); the lower boundary's density is
  // the upper one of the mirrored process (1 − β, −δ). The integrals run through both series
  // and both tails (t from 1e-7 to 60 α²).
  const double cases[][3] = {{1.0, 0.5, 0.0}, {2.0, 0.3, 1.5}, {0.8, 0.7, -2.0}, {3.0, 0.1, 0.4}, {1.5, 0.95, 3.0}};
  for (const auto& c : cases) {
    const double a = c[0], b = c[1], d = c[2];
    const double up = integral_upper(a, b, d, 0.0, 60 * a * a);
    const double down = integral_upper(a, 1 - b, -d, 0.0, 60 * a * a);
    const double p_up = d == 0 ? b : (1 - std::exp(-2 * d * a * b)) / (1 - std::exp(-2 * d * a));
    INFO("alpha " << a << ", beta " << b << ", delta " << d << ": upper " << up << ", lower " << down);
    CHECK(up == Approx(p_up).epsilon(1e-9));
    CHECK(up + down == Approx(1.0).epsilon(1e-9));
  }
  // With drift variability the two still sum to 1.
  const double up = integral_upper(1.2, 0.4, 0.8, 1.3, 90.0), down = integral_upper(1.2, 0.6, -0.8, 1.3, 90.0);
  CHECK(up + down == Approx(1.0).epsilon(1e-8));
}

TEST_CASE("wiener: draws of the upper boundary's time follow its conditional CDF", "[distributions][wiener]") {
  // Draw against the CDF P(T ≤ t | upper) integrated here (Simpson in log t, 20,000 intervals,
  // normalised by the closed-form probability of the upper boundary), Kolmogorov–Smirnov over
  // 20,000 draws; and the table's reuse across calls changes nothing (a second run, interleaved
  // with draws of other arguments, gives the same numbers).
  const double a = 1.6, tau = 0.25, b = 0.4, d = 0.9;
  const double p_up = (1 - std::exp(-2 * d * a * b)) / (1 - std::exp(-2 * d * a));
  const auto cdf = [&](double y) { return y <= tau ? 0.0 : integral_upper(a, b, d, 0.0, y - tau, 4000) / p_up; };
  std::mt19937_64 rng(91);
  std::vector<double> draws(20000);
  for (auto& v : draws) v = wiener_distribution<constant, constant, constant, constant, constant>::draw(rng, a, tau, b, d, 0.0);
  std::vector<double> sorted = draws;
  std::sort(sorted.begin(), sorted.end());
  double dmax = 0;
  const double n = double(sorted.size());
  for (std::size_t i = 0; i < sorted.size(); i += 1) {
    if (i % 50 != 0 && i + 1 != sorted.size()) continue;  // the CDF at every 50th order statistic
    const double f = cdf(sorted[i]);
    dmax = std::max({dmax, f - double(i) / n, double(i + 1) / n - f});
  }
  INFO("Kolmogorov-Smirnov D sqrt(n) = " << dmax * std::sqrt(n));
  CHECK(dmax * std::sqrt(n) < tyche_test::ks_limit);
  // A large drift: the mass near the mean time (1 − β)α/δ = 0.005, far below the no-drift scale
  // α²(1 − β)² = 1; the draws' mean against the mean integrated here, within 4.5 standard errors.
  {
    const double a2 = 2.0, b2 = 0.5, d2 = 200.0;
    double m0 = 0, m1 = 0, m2 = 0;
    const double lo = std::log(1e-5), hi = std::log(1.0), hh = (hi - lo) / 20000;
    for (int i = 0; i <= 20000; ++i) {
      const double lt = lo + hh * i, t = std::exp(lt);
      const double f = std::exp(log_wiener(t, a2, 0.0, b2, d2) + lt) * (i == 0 || i == 20000 ? 1 : (i % 2 ? 4 : 2));
      m0 += f, m1 += f * t, m2 += f * t * t;
    }
    const double mean = m1 / m0, sd = std::sqrt(m2 / m0 - mean * mean);
    std::mt19937_64 r2(92);
    const int nd = 4000;
    double s = 0;
    for (int i = 0; i < nd; ++i) s += wiener_distribution<constant, constant, constant, constant, constant>::draw(r2, a2, 0.0, b2, d2, 0.0);
    INFO("large drift: draws' mean " << s / nd << " against " << mean << " (sd " << sd << ")");
    CHECK(std::fabs(s / nd - mean) < 4.5 * sd / std::sqrt(double(nd)));
  }
  std::mt19937_64 again(91), other(3);
  for (std::size_t i = 0; i < 200; ++i) {
    (void)wiener_distribution<constant, constant, constant, constant, constant>::draw(other, 2.0, 0.1, 0.5, -1.0, 0.5);
    CHECK(wiener_distribution<constant, constant, constant, constant, constant>::draw(again, a, tau, b, d, 0.0) ==
          draws[i]);
  }
}

TEST_CASE("wiener: a diffusion model with both responses, and posterior predictive draws", "[distributions][wiener]") {
  const std::vector<double> upper{0.62, 0.81, 0.55, 1.10, 0.74}, lower{0.95, 0.70};
  auto m = model([&] {
    auto a = gamma<"a">(4.0, 2.0);
    auto t = uniform<"t">(0.0, 0.5);
    auto b = beta<"b">(5.0, 5.0);
    auto d = normal<"d">(0.0, 2.0);
    return joint(a, t, b, d, wiener(a, t, b, d).observe(data(upper)), wiener(a, t, 1.0 - b, -d).observe(data(lower)));
  });
  REQUIRE(m.dim() == 4);
  // The model's density is the priors' plus the two likelihoods, computed here.
  const std::vector<double> values{1.3, 0.2, 0.45, 0.7};
  const auto theta = m.unconstrain(values);
  double lik = 0;
  for (double y : upper) lik += log_wiener(y, 1.3, 0.2, 0.45, 0.7);
  for (double y : lower) lik += log_wiener(y, 1.3, 0.2, 0.55, -0.7);
  const double prior = 4 * std::log(2.0) - std::lgamma(4.0) + 3 * std::log(1.3) - 2 * 1.3 + std::log(2.0) +
                       (std::lgamma(10.0) - 2 * std::lgamma(5.0) + 4 * std::log(0.45) + 4 * std::log(0.55)) +
                       (-0.5 * std::log(2 * 3.14159265358979323846 * 4) - 0.7 * 0.7 / 8);
  CHECK(m.log_prob(theta, false) == Approx(prior + lik).epsilon(1e-12));
  // Posterior predictive draws: every time above the non-decision time of its draw.
  std::mt19937_64 rng(5);
  const auto sim = m.sample_observations_at(values, rng);
  REQUIRE(sim.size() == 2);
  CHECK(sim[0].size() == upper.size());
  for (const auto& block : sim)
    for (double v : block) CHECK(v > 0.2);
}

TEST_CASE("wiener: errors name the argument, the index and the value", "[distributions][wiener]") {
  const std::vector<double> below{0.5, 0.25}, negative{0.5, -1.0}, fine{0.5, 0.5}, one{0.5};
  CHECK_THROWS_WITH(wiener(1.0, 0.3, 0.5, 0.0).observe(data(below)),
                    Contains("wiener(...).observe(y): y[2] = 0.25 is not above tau = 0.3"));
  CHECK_THROWS_WITH(wiener(1.0, 0.0, 0.5, 0.0).observe(data(negative)),
                    Contains("y[2] = -1 must be a positive response time"));
  const std::vector<double> taus{0.1, 0.6};
  CHECK_THROWS_WITH(wiener(1.0, data(taus), 0.5, 0.0).observe(data(fine)),
                    Contains("y[2] = 0.5 is not above tau[2] = 0.6"));
  param<"d"> d;
  CHECK_THROWS_WITH(wiener_lpdf(data(one), -1.0, 0.1, 0.5, d), Contains("alpha"));
  CHECK_THROWS_WITH(wiener_lpdf(data(one), 1.0, 0.1, 1.5, d), Contains("beta"));
  CHECK_THROWS_WITH(wiener_lpdf(data(one), 1.0, 0.1, 0.5, d, -0.2), Contains("sv"));
  vector_param<"dd", 3> dd;
  CHECK_THROWS_WITH(wiener(1.0, 0.1, 0.5, dd).log_prob(data(fine)), Contains("y has size 2 but another operand has 3"));
}
