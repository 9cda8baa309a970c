// Nine univariate continuous families in one translation unit (compile time): gumbel, frechet,
// pareto, pareto_type_2, beta_proportion, loglogistic, skew_normal, exp_mod_normal, von_mises.
// For each: the log density and its gradient against Boost.Math where Boost has the
// distribution (extreme_value, pareto, beta, skew_normal), else against a closed form written
// here (von_mises with std::cyl_bessel_i); draws against mean, variance and the cdf (KS); the
// support of a named variable; the data and argument checks; the *_lpdf functions.
#include "support/continuous_checks.hpp"

#include <tyche/tyche.hpp>

#include <boost/math/distributions/beta.hpp>
#include <boost/math/distributions/extreme_value.hpp>
#include <boost/math/distributions/pareto.hpp>
#include <boost/math/distributions/skew_normal.hpp>
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace tyche;

namespace {

constexpr double k_pi = std::numbers::pi;
const double nan_value = std::numeric_limits<double>::quiet_NaN();

double std_normal_cdf(double x) { return 0.5 * std::erfc(-x / std::numbers::sqrt2); }

double gumbel_log_pdf(double x, double m, double b) {
  return std::log(boost::math::pdf(boost::math::extreme_value_distribution<double>(m, b), x));
}
/// Stan's Frechet density: (α/σ)(x/σ)^{−1−α} exp(−(x/σ)^{−α}).
double frechet_log_pdf(double x, double a, double s) {
  return std::log(a / s) - (1 + a) * std::log(x / s) - std::pow(x / s, -a);
}
double pareto_log_pdf(double x, double y0, double a) {
  return std::log(boost::math::pdf(boost::math::pareto_distribution<double>(y0, a), x));
}
/// Stan's Pareto type 2 density: (α/λ)(1 + (x − μ)/λ)^{−(α+1)}.
double pareto_type_2_log_pdf(double x, double m, double l, double a) {
  return std::log(a / l * std::pow(1 + (x - m) / l, -(a + 1)));
}
double beta_proportion_log_pdf(double x, double m, double k) {
  return std::log(boost::math::pdf(boost::math::beta_distribution<double>(m * k, (1 - m) * k), x));
}
/// Stan's log-logistic density: (β/α)(x/α)^{β−1} / (1 + (x/α)^β)².
double loglogistic_log_pdf(double x, double a, double b) {
  const double z = x / a;
  return std::log(b / a * std::pow(z, b - 1) / ((1 + std::pow(z, b)) * (1 + std::pow(z, b))));
}
double skew_normal_log_pdf(double x, double xi, double omega, double alpha) {
  return std::log(boost::math::pdf(boost::math::skew_normal_distribution<double>(xi, omega, alpha), x));
}
/// Stan's form: log(λ/2) + λ(μ + λσ²/2 − x) + log erfc((μ + λσ² − x)/(√2 σ)).
double exp_mod_normal_log_pdf(double x, double m, double s, double l) {
  return std::log(l / 2) + l * (m + l * s * s / 2 - x) +
         std::log(std::erfc((m + l * s * s - x) / (std::numbers::sqrt2 * s)));
}
double von_mises_log_pdf(double x, double m, double k) {
  return k * std::cos(x - m) - std::log(2 * k_pi * std::cyl_bessel_i(0.0, k));
}
/// The von Mises cdf on (μ − π, μ + π): ((x − μ) + π)/(2π) + (1/π) Σₙ Iₙ(κ)/I₀(κ) sin(n(x − μ))/n.
/// The Bessel functions depend on κ only: computed once, not at each of a KS test's 10⁵ points
/// (61 of them per point were 7 of the 11 s this file's draws took under the sanitizers at -O0).
struct von_mises_cdf {
  double m;
  std::vector<double> bessel;  // Iₙ(κ), n = 0 … 60
  von_mises_cdf(double m_, double k) : m(m_) {
    for (int n = 0; n <= 60; ++n) bessel.push_back(std::cyl_bessel_i(double(n), k));
  }
  double operator()(double x) const {
    const double t = x - m;
    double s = 0.0;
    for (int n = 1; n <= 60; ++n) s += bessel[std::size_t(n)] * std::sin(n * t) / n;
    return (t + k_pi) / (2 * k_pi) + s / (k_pi * bessel[0]);
  }
};

}  // namespace

// ---- log densities against references, with gradients ---------------------------------------

TEST_CASE("more continuous: log densities against Boost.Math or closed forms, and gradients",
          "[distributions][more_continuous]") {
  param<"x"> x;
  param<"a"> a;
  param<"b"> b;
  param<"c"> c;
  using P = std::vector<double>;

  // (x − μ)/β ≥ −4: Boost's pdf does not underflow.
  tyche_test::check_log_density(
      compile(gumbel(a, b).log_prob(x), x, a, b),
      tyche_test::points_in(60, {{-3.0, 10.0}, {-1.0, 1.0}, {1.0, 3.0}}, 2101),
      [](const P& p) { return gumbel_log_pdf(p[0], p[1], p[2]); }, "gumbel(a, b).log_prob(x)");
  tyche_test::check_log_density(
      compile(frechet(a, b).log_prob(x), x, a, b),
      tyche_test::points_in(60, {{0.2, 8.0}, {0.5, 5.0}, {0.5, 3.0}}, 2201),
      [](const P& p) { return frechet_log_pdf(p[0], p[1], p[2]); }, "frechet(a, b).log_prob(x)");
  // x > y_min at every point.
  tyche_test::check_log_density(
      compile(pareto(a, b).log_prob(x), x, a, b),
      tyche_test::points_in(60, {{2.0, 10.0}, {0.3, 1.9}, {0.5, 5.0}}, 2301),
      [](const P& p) { return pareto_log_pdf(p[0], p[1], p[2]); }, "pareto(a, b).log_prob(x)");
  tyche_test::check_log_density(
      compile(pareto_type_2(a, b, c).log_prob(x), x, a, b, c),
      tyche_test::points_in(60, {{0.1, 10.0}, {-2.0, 0.0}, {0.3, 3.0}, {0.5, 5.0}}, 2401),
      [](const P& p) { return pareto_type_2_log_pdf(p[0], p[1], p[2], p[3]); },
      "pareto_type_2(a, b, c).log_prob(x)");
  tyche_test::check_log_density(
      compile(beta_proportion(a, b).log_prob(x), x, a, b),
      tyche_test::points_in(60, {{0.02, 0.98}, {0.05, 0.95}, {0.5, 20.0}}, 2501),
      [](const P& p) { return beta_proportion_log_pdf(p[0], p[1], p[2]); },
      "beta_proportion(a, b).log_prob(x)");
  tyche_test::check_log_density(
      compile(loglogistic(a, b).log_prob(x), x, a, b),
      tyche_test::points_in(60, {{0.05, 10.0}, {0.3, 3.0}, {0.5, 6.0}}, 2601),
      [](const P& p) { return loglogistic_log_pdf(p[0], p[1], p[2]); },
      "loglogistic(a, b).log_prob(x)");
  // |α z| ≤ 26: Boost's pdf does not underflow (the tail is checked below).
  tyche_test::check_log_density(
      compile(skew_normal(a, b, c).log_prob(x), x, a, b, c),
      tyche_test::points_in(60, {{-5.0, 5.0}, {-1.0, 1.0}, {0.7, 3.0}, {-3.0, 3.0}}, 2701),
      [](const P& p) { return skew_normal_log_pdf(p[0], p[1], p[2], p[3]); },
      "skew_normal(a, b, c).log_prob(x)");
  tyche_test::check_log_density(
      compile(exp_mod_normal(a, b, c).log_prob(x), x, a, b, c),
      tyche_test::points_in(60, {{-4.0, 8.0}, {-1.0, 1.0}, {0.3, 2.0}, {0.2, 3.0}}, 2801),
      [](const P& p) { return exp_mod_normal_log_pdf(p[0], p[1], p[2], p[3]); },
      "exp_mod_normal(a, b, c).log_prob(x)");
  tyche_test::check_log_density(
      compile(von_mises(a, b).log_prob(x), x, a, b),
      tyche_test::points_in(60, {{-6.0, 6.0}, {-3.0, 3.0}, {0.05, 30.0}}, 2901),
      [](const P& p) { return von_mises_log_pdf(p[0], p[1], p[2]); }, "von_mises(a, b).log_prob(x)");
}

TEST_CASE("more continuous: skew_normal and exp_mod_normal stay finite where Phi underflows",
          "[distributions][more_continuous]") {
  param<"x"> x;
  // skew_normal(0, 1, 10) at x = −6: α z = −60, Φ(−60) ≈ 1e-784 is 0 in double. Reference in
  // long double: log 2 − ½ log 2π − z²/2 + log(erfc(−α z/√2)/2).
  const auto sn = compile(skew_normal(0.0, 1.0, 10.0).log_prob(x), x);
  for (double v : {-6.0, -4.5, -4.0}) {
    const long double z = v, t = 10.0L * z;
    const long double ref = std::log(2.0L) - 0.5L * std::log(2 * std::numbers::pi_v<long double>) -
                            z * z / 2 + std::log(std::erfc(-t / std::numbers::sqrt2_v<long double>) / 2);
    INFO("skew_normal(0, 1, 10) at x = " << v);
    CHECK(tyche_test::log_density_error(sn.value(std::vector<double>{v}), static_cast<double>(ref)) <=
          tyche_test::log_density_tolerance);
    tyche_test::check_gradient_at(sn, {v}, "skew_normal(0, 1, 10).log_prob(x)");
  }
  // exp_mod_normal(0, 1, 50) at x = −3: the erfc argument is (50 + 3)/√2, erfc underflows.
  const auto emn = compile(exp_mod_normal(0.0, 1.0, 50.0).log_prob(x), x);
  for (double v : {-3.0, 0.0, 2.0}) {
    const long double l = 50, w = (l - v) / std::numbers::sqrt2_v<long double>;
    const long double ref = std::log(l / 2) + l * (l / 2 - v) + std::log(std::erfc(w));
    INFO("exp_mod_normal(0, 1, 50) at x = " << v);
    CHECK(tyche_test::log_density_error(emn.value(std::vector<double>{v}), static_cast<double>(ref)) <=
          tyche_test::log_density_tolerance);
    tyche_test::check_gradient_at(emn, {v}, "exp_mod_normal(0, 1, 50).log_prob(x)");
  }
}

// ---- draws against mean, variance and the cdf ------------------------------------------------

TEST_CASE("more continuous: draws against mean, variance and the cdf",
          "[distributions][more_continuous]") {
  {
    using D = decltype(gumbel(0.0, 1.0));
    const double m = 0.5, b = 2.0;
    const auto draws = tyche_test::draws_of<D>(2102, m, b);
    tyche_test::check_moments(draws, D::mean(m, b), D::variance(m, b), "gumbel(0.5, 2)");
    const boost::math::extreme_value_distribution<double> ref(m, b);
    tyche_test::check_ks(draws, [&](double v) { return boost::math::cdf(ref, v); }, "gumbel(0.5, 2)");
  }
  {
    // α = 8: the fourth moment the variance's z-test needs is finite.
    using D = decltype(frechet(1.0, 1.0));
    const double a = 8.0, s = 1.5;
    const auto draws = tyche_test::draws_of<D>(2202, a, s);
    tyche_test::check_moments(draws, D::mean(a, s), D::variance(a, s), "frechet(8, 1.5)");
    tyche_test::check_ks(draws, [&](double v) { return std::exp(-std::pow(v / s, -a)); }, "frechet(8, 1.5)");
  }
  {
    using D = decltype(pareto(1.0, 1.0));
    const double y0 = 1.5, a = 8.0;
    const auto draws = tyche_test::draws_of<D>(2302, y0, a);
    tyche_test::check_moments(draws, D::mean(y0, a), D::variance(y0, a), "pareto(1.5, 8)");
    const boost::math::pareto_distribution<double> ref(y0, a);
    tyche_test::check_ks(draws, [&](double v) { return boost::math::cdf(ref, v); }, "pareto(1.5, 8)");
  }
  {
    using D = decltype(pareto_type_2(0.0, 1.0, 1.0));
    const double m = 0.5, l = 2.0, a = 8.0;
    const auto draws = tyche_test::draws_of<D>(2402, m, l, a);
    tyche_test::check_moments(draws, D::mean(m, l, a), D::variance(m, l, a), "pareto_type_2(0.5, 2, 8)");
    tyche_test::check_ks(draws, [&](double v) { return 1 - std::pow(1 + (v - m) / l, -a); },
                         "pareto_type_2(0.5, 2, 8)");
  }
  {
    using D = decltype(beta_proportion(0.5, 1.0));
    const double m = 0.3, k = 12.0;
    const auto draws = tyche_test::draws_of<D>(2502, m, k);
    tyche_test::check_moments(draws, D::mean(m, k), D::variance(m, k), "beta_proportion(0.3, 12)");
    const boost::math::beta_distribution<double> ref(m * k, (1 - m) * k);
    tyche_test::check_ks(draws, [&](double v) { return boost::math::cdf(ref, v); }, "beta_proportion(0.3, 12)");
  }
  {
    using D = decltype(loglogistic(1.0, 1.0));
    const double a = 2.0, b = 8.0;
    const auto draws = tyche_test::draws_of<D>(2602, a, b);
    tyche_test::check_moments(draws, D::mean(a, b), D::variance(a, b), "loglogistic(2, 8)");
    tyche_test::check_ks(draws, [&](double v) { return 1 / (1 + std::pow(v / a, -b)); }, "loglogistic(2, 8)");
  }
  for (const double alpha : {3.0, -0.7}) {
    using D = decltype(skew_normal(0.0, 1.0, 0.0));
    const double xi = 0.5, omega = 1.5;
    const std::string what = "skew_normal(0.5, 1.5, " + std::to_string(alpha) + ")";
    const auto draws = tyche_test::draws_of<D>(2702, xi, omega, alpha);
    tyche_test::check_moments(draws, D::mean(xi, omega, alpha), D::variance(xi, omega, alpha), what);
    const boost::math::skew_normal_distribution<double> ref(xi, omega, alpha);
    tyche_test::check_ks(draws, [&](double v) { return boost::math::cdf(ref, v); }, what);
  }
  {
    // F(x) = Φ(u) − exp(−λ(x − μ) + (λσ)²/2) Φ(u − λσ), u = (x − μ)/σ.
    using D = decltype(exp_mod_normal(0.0, 1.0, 1.0));
    const double m = -0.5, s = 1.0, l = 0.8;
    const auto draws = tyche_test::draws_of<D>(2802, m, s, l);
    tyche_test::check_moments(draws, D::mean(m, s, l), D::variance(m, s, l), "exp_mod_normal(-0.5, 1, 0.8)");
    tyche_test::check_ks(
        draws,
        [&](double v) {
          const double u = (v - m) / s;
          return std_normal_cdf(u) - std::exp(-l * (v - m) + l * l * s * s / 2) * std_normal_cdf(u - l * s);
        },
        "exp_mod_normal(-0.5, 1, 0.8)");
  }
  for (const double k : {2.0, 0.05, 40.0}) {
    using D = decltype(von_mises(0.0, 1.0));
    const double m = 0.7;
    const std::string what = "von_mises(0.7, " + std::to_string(k) + ")";
    const auto draws = tyche_test::draws_of<D>(2902, m, k);
    bool inside = true;
    for (double d : draws) inside = inside && d > m - k_pi && d < m + k_pi;
    CHECK(inside);
    tyche_test::check_moments(draws, D::mean(m, k), D::variance(m, k), what);
    tyche_test::check_ks(draws, von_mises_cdf(m, k), what);
  }
}

TEST_CASE("more continuous: moments that are infinite", "[distributions][more_continuous]") {
  const double inf = std::numeric_limits<double>::infinity();
  using F = decltype(frechet(1.0, 1.0));
  using P = decltype(pareto(1.0, 1.0));
  using P2 = decltype(pareto_type_2(0.0, 1.0, 1.0));
  using L = decltype(loglogistic(1.0, 1.0));
  CHECK(F::mean(1.0, 2.0) == inf);
  CHECK(F::variance(2.0, 2.0) == inf);
  CHECK(std::isfinite(F::variance(2.5, 2.0)));
  CHECK(P::mean(1.5, 0.5) == inf);
  CHECK(P::variance(1.5, 2.0) == inf);
  CHECK(P2::mean(0.0, 1.0, 1.0) == inf);
  CHECK(P2::variance(0.0, 1.0, 2.0) == inf);
  CHECK(L::mean(1.0, 1.0) == inf);
  CHECK(L::variance(1.0, 2.0) == inf);
  CHECK(L::mean(1.0, 1.5) == Approx(1.0 * (k_pi / 1.5) / std::sin(k_pi / 1.5)).epsilon(1e-15));
  // von_mises: the variance tends to π²/3 (uniform on (−π, π)) as κ → 0 and to 1/κ as κ → ∞.
  using V = decltype(von_mises(0.0, 1.0));
  CHECK(V::variance(0.0, 1e-12) == Approx(k_pi * k_pi / 3).epsilon(1e-11));
  CHECK(V::variance(0.0, 1e4) == Approx(1e-4).epsilon(1e-3));
}

// ---- the support of a named variable, and data checks ----------------------------------------

TEST_CASE("more continuous: named variables live on their supports", "[distributions][more_continuous]") {
  using tyche_test::check_support;
  check_support(
      model(joint(gumbel<"g">(1.0, 0.5))), "g", {-1.5, 0.0, 1.0, 7.25}, {nan_value},
      [](double v) { return gumbel_log_pdf(v, 1.0, 0.5); }, tyche_test::log_jacobian_real);
  check_support(
      model(joint(frechet<"f">(2.5, 1.5))), "f", {0.3, 1.0, 4.2}, {-1.0, 0.0},
      [](double v) { return frechet_log_pdf(v, 2.5, 1.5); }, tyche_test::log_jacobian_positive);
  check_support(
      model(joint(pareto<"p">(1.5, 3.0))), "p", {1.6, 2.0, 10.0}, {1.5, 1.0, -1.0},
      [](double v) { return pareto_log_pdf(v, 1.5, 3.0); }, [](double v) { return std::log(v - 1.5); });
  check_support(
      model(joint(pareto_type_2<"q">(0.5, 2.0, 3.0))), "q", {0.6, 1.0, 7.0}, {0.5, -1.0},
      [](double v) { return pareto_type_2_log_pdf(v, 0.5, 2.0, 3.0); },
      [](double v) { return std::log(v - 0.5); });
  check_support(
      model(joint(beta_proportion<"b">(0.3, 8.0))), "b", {0.3, 1e-3, 0.999}, {-0.5, 0.0, 1.0, 1.5},
      [](double v) { return beta_proportion_log_pdf(v, 0.3, 8.0); },
      [](double v) { return tyche_test::log_jacobian_interval(v, 0.0, 1.0); });
  check_support(
      model(joint(loglogistic<"l">(2.0, 3.0))), "l", {0.3, 2.0, 9.0}, {-1.0, 0.0},
      [](double v) { return loglogistic_log_pdf(v, 2.0, 3.0); }, tyche_test::log_jacobian_positive);
  check_support(
      model(joint(skew_normal<"s">(0.5, 1.5, -2.0))), "s", {-3.0, 0.5, 2.0}, {nan_value},
      [](double v) { return skew_normal_log_pdf(v, 0.5, 1.5, -2.0); }, tyche_test::log_jacobian_real);
  check_support(
      model(joint(exp_mod_normal<"e">(0.5, 1.0, 2.0))), "e", {-2.0, 0.5, 4.0}, {nan_value},
      [](double v) { return exp_mod_normal_log_pdf(v, 0.5, 1.0, 2.0); }, tyche_test::log_jacobian_real);
  check_support(
      model(joint(von_mises<"v">(0.7, 2.0))), "v", {0.7, 0.7 - 3.0, 0.7 + 3.0}, {0.7 + 3.2, 0.7 - 3.2},
      [](double v) { return von_mises_log_pdf(v, 0.7, 2.0); },
      [](double v) { return tyche_test::log_jacobian_interval(v, 0.7 - k_pi, 0.7 + k_pi); });
}

TEST_CASE("more continuous: supports with a bound that is another variable",
          "[distributions][more_continuous]") {
  // y ~ pareto(y0, 3) with y0 ~ lognormal(0, 1): θ = (log y0, log(y − y0)).
  const auto y0 = lognormal<"y0">(0.0, 1.0);
  const auto mp = model(joint(y0, pareto<"y">(y0, 3.0)));
  // v ~ von_mises(mu, 2) with mu ~ normal(0, 1): θ = (mu, logit((v − mu + π)/(2π))).
  const auto mu = normal<"mu">(0.0, 1.0);
  const auto mv = model(joint(mu, von_mises<"v">(mu, 2.0)));
  for (const auto& [a, b] : std::vector<std::pair<double, double>>{{0.4, 2.5}, {1.3, 1.31}, {2.0, 40.0}}) {
    const std::vector<double> th = mp.unconstrain(std::vector<double>{a, b});
    // lognormal(0, 1) with its Jacobian y0: −½ (log y0)² − ½ log 2π; pareto's Jacobian y − y0.
    const double want = pareto_log_pdf(b, a, 3.0) + std::log(b - a) - 0.5 * std::log(a) * std::log(a) -
                        0.5 * std::log(2 * k_pi);
    CHECK(tyche_test::log_density_error(mp.log_prob(th, true), want) <= tyche_test::log_density_tolerance);
    tyche_test::check_gradient_at(mp.program(), th, "pareto<y>(y0, 3)");
  }
  for (const auto& [m, v] : std::vector<std::pair<double, double>>{{0.3, 0.3}, {-1.0, 1.5}, {2.0, -0.9}}) {
    const std::vector<double> th = mv.unconstrain(std::vector<double>{m, v});
    const double want = -0.5 * m * m - 0.5 * std::log(2 * k_pi) + von_mises_log_pdf(v, m, 2.0) +
                        tyche_test::log_jacobian_interval(v, m - k_pi, m + k_pi);
    CHECK(tyche_test::log_density_error(mv.log_prob(th, true), want) <= tyche_test::log_density_tolerance);
    tyche_test::check_gradient_at(mv.program(), th, "von_mises<v>(mu, 2)");
  }
  CHECK_THROWS_WITH(mv.unconstrain(std::vector<double>{0.0, 3.5}), Catch::Contains("v = "));
  // Prior draws lie inside the supports (sample_prior unconstrains each, which would throw).
  std::mt19937_64 rng(2903);
  for (int i = 0; i < 2000; ++i) {
    const std::vector<double> p = mp.sample_prior(rng), v = mv.sample_prior(rng);
    REQUIRE(p[1] > p[0]);
    REQUIRE(std::fabs(v[1] - v[0]) < k_pi);
  }
}

TEST_CASE("more continuous: data and argument checks", "[distributions][more_continuous]") {
  const std::vector<double> y{1.0, 0.0};
  CHECK_THROWS_WITH(frechet(1.5, 1.0).observe(data(y)), Catch::Contains("y[2]") && Catch::Contains("not positive"));
  CHECK_THROWS_WITH(loglogistic(1.5, 1.0).observe(data(y)), Catch::Contains("y[2]") && Catch::Contains("not positive"));
  CHECK_THROWS_WITH(pareto(0.5, 1.0).observe(data(y)), Catch::Contains("y[2]") && Catch::Contains("not positive"));
  const std::vector<double> p{0.5, 1.0};
  CHECK_THROWS_WITH(beta_proportion(0.5, 2.0).observe(data(p)), Catch::Contains("y[2]") && Catch::Contains("outside"));
  // Angles, locations on the whole line: any finite value.
  const std::vector<double> w{-20.0, 0.0, 7.0};
  CHECK_NOTHROW(von_mises(0.0, 1.0).observe(data(w)));
  CHECK_NOTHROW(gumbel(0.0, 1.0).observe(data(w)));
  // Arguments outside their domains, from numbers: thrown when the log density is built.
  CHECK_THROWS_WITH(beta_proportion_lpdf(data(p), 1.5, 2.0), Catch::Contains("mu must be in (0, 1)"));
  CHECK_THROWS_WITH(beta_proportion_lpdf(data(p), 0.5, -2.0), Catch::Contains("kappa must be > 0"));
  CHECK_THROWS_WITH(von_mises_lpdf(data(w), 0.0, 0.0), Catch::Contains("kappa must be > 0"));
  CHECK_THROWS_WITH(pareto_lpdf(data(w), -1.0, 2.0), Catch::Contains("y_min must be > 0"));
  CHECK_THROWS_WITH(exp_mod_normal_lpdf(data(w), 0.0, 1.0, -1.0), Catch::Contains("lambda must be > 0"));
}

// ---- the *_lpdf functions --------------------------------------------------------------------

TEST_CASE("more continuous: *_lpdf functions sum the log density over data",
          "[distributions][more_continuous][lpdf]") {
  const std::vector<double> pos{0.4, 1.7, 3.2};
  const std::vector<double> unit{0.2, 0.55, 0.9};
  const std::vector<double> real{-1.3, 0.2, 2.4};
  param<"a"> a;
  param<"b"> b;
  const std::vector<double> at{0.3, -0.2};
  const double ea = std::exp(at[0]), eb = std::exp(at[1]);
  auto sum_of = [](const std::vector<double>& ys, auto f) {
    double s = 0.0;
    for (double v : ys) s += f(v);
    return s;
  };
  auto check = [&](const auto& prog, double want, const char* what) {
    INFO(what);
    CHECK(tyche_test::log_density_error(prog.value(at), want) <= tyche_test::log_density_tolerance);
    tyche_test::check_gradient_at(prog, at, what);
  };
  check(compile(gumbel_lpdf(data(real), a, exp(b)), a, b),
        sum_of(real, [&](double v) { return gumbel_log_pdf(v, at[0], eb); }), "gumbel_lpdf");
  check(compile(frechet_lpdf(data(pos), exp(a), exp(b)), a, b),
        sum_of(pos, [&](double v) { return frechet_log_pdf(v, ea, eb); }), "frechet_lpdf");
  check(compile(pareto_lpdf(data(pos), 0.2 * exp(a), exp(b)), a, b),
        sum_of(pos, [&](double v) { return pareto_log_pdf(v, 0.2 * ea, eb); }), "pareto_lpdf");
  check(compile(pareto_type_2_lpdf(data(pos), a - 1.0, exp(b), exp(a)), a, b),
        sum_of(pos, [&](double v) { return pareto_type_2_log_pdf(v, at[0] - 1, eb, ea); }),
        "pareto_type_2_lpdf");
  check(compile(beta_proportion_lpdf(data(unit), logistic(a), exp(b) + 2.0), a, b),
        sum_of(unit, [&](double v) { return beta_proportion_log_pdf(v, 1 / (1 + std::exp(-at[0])), eb + 2); }),
        "beta_proportion_lpdf");
  check(compile(loglogistic_lpdf(data(pos), exp(a), exp(b) + 1.0), a, b),
        sum_of(pos, [&](double v) { return loglogistic_log_pdf(v, ea, eb + 1); }), "loglogistic_lpdf");
  check(compile(skew_normal_lpdf(data(real), a, exp(b), a + b), a, b),
        sum_of(real, [&](double v) { return skew_normal_log_pdf(v, at[0], eb, at[0] + at[1]); }),
        "skew_normal_lpdf");
  check(compile(exp_mod_normal_lpdf(data(real), a, exp(b), exp(a)), a, b),
        sum_of(real, [&](double v) { return exp_mod_normal_log_pdf(v, at[0], eb, ea); }),
        "exp_mod_normal_lpdf");
  check(compile(von_mises_lpdf(data(real), a, exp(b)), a, b),
        sum_of(real, [&](double v) { return von_mises_log_pdf(v, at[0], eb); }), "von_mises_lpdf");
}
