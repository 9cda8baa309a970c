// Five more of Stan's families in one translation unit: rayleigh, scaled_inv_chi_square,
// skew_double_exponential (asymmetric Laplace), neg_binomial(alpha, beta) and
// beta_neg_binomial(r, alpha, beta) (its pmf against the beta mixture of negative binomials,
// integrated by Gauss–Kronrod quadrature). For each: the log
// density and its gradient against Boost.Math where Boost has the distribution (rayleigh,
// inverse_chi_squared with scale s², negative_binomial with r = α, p = β/(1 + β)), else against
// the closed form in long double; the log CDF and survival function (the *_lcdf / *_lccdf
// functions) the same way, the asymmetric Laplace's far tails included; draws against mean,
// variance and the cdf (KS; χ² for the counts); a named variable's support; the data and argument
// checks; the *_lpdf / *_lpmf functions. poisson_binomial(theta) against the sum over the 2^N
// subsets of trials, and against binomial where every θⱼ is one p. hypergeometric(N, a, b) against
// Boost.Math, discrete_range(lower, upper) against its closed form: values, draws (moments and χ²
// against the pmf), data and argument checks.
#include "support/continuous_checks.hpp"
#include "support/discrete_checks.hpp"

#include <tyche/tyche.hpp>

#include <boost/math/distributions/hypergeometric.hpp>
#include <boost/math/distributions/inverse_chi_squared.hpp>
#include <boost/math/distributions/negative_binomial.hpp>
#include <boost/math/distributions/rayleigh.hpp>
#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace tyche;
namespace bm = boost::math;
namespace dc = tyche_test::discrete;

namespace {

using P = std::vector<double>;
const double nan_value = std::numeric_limits<double>::quiet_NaN();

double rayleigh_log_pdf(double x, double s) { return std::log(bm::pdf(bm::rayleigh_distribution<double>(s), x)); }
/// Stan's scaled inverse chi-square(ν, s) is Boost's inverse_chi_squared(ν, scale s²).
double scaled_inv_chi_square_log_pdf(double x, double n, double s) {
  return std::log(bm::pdf(bm::inverse_chi_squared_distribution<double>(n, s * s), x));
}
/// log(2τ(1 − τ)/σ) − (2/σ)((1 − τ)(μ − x) below μ, τ(x − μ) above), in long double.
double sde_log_pdf(double x, double m, double s, double t) {
  const long double d = static_cast<long double>(x) - m, tl = t, sl = s;
  const long double loss = d < 0 ? (1 - tl) * -d : tl * d;
  return static_cast<double>(std::log(2 * tl * (1 - tl) / sl) - 2 * loss / sl);
}
/// log P(X ≤ x) (upper: log P(X > x)) of skew_double_exponential, in long double.
double sde_log_cdf(double x, double m, double s, double t, bool upper) {
  const long double d = static_cast<long double>(x) - m, tl = t, sl = s;
  if (d < 0) {
    const long double below = std::log(tl) + 2 * (1 - tl) * d / sl;  // log F
    return static_cast<double>(upper ? std::log1p(-std::exp(below)) : below);
  }
  const long double above = std::log1p(-tl) - 2 * tl * d / sl;  // log(1 − F)
  return static_cast<double>(upper ? above : std::log1p(-std::exp(above)));
}
long double neg_binomial_log_pmf(double a, double b, double y) {
  return std::log(bm::pdf(bm::negative_binomial_distribution<long double>(a, static_cast<long double>(b) / (1 + b)), y));
}
double log_cdf_of(double cdf, double ccdf, bool upper) { return std::log(upper ? ccdf : cdf); }
/// log ∫₀¹ NB(y | r successes, p) beta(p | α, β) dp: the mixture that defines the beta negative
/// binomial, integrated numerically (α, β ≥ 1: the integrand is bounded). The integrand is the
/// product of the two densities written out, Γ(y + r)/(y! Γ(r)) p^r (1 − p)^y · p^(α−1)
/// (1 − p)^(β−1) / B(α, β) (Boost's pdfs, in long double, made this case take 30 s under the
/// sanitizers at -O0).
double beta_neg_binomial_mixture(double y, double r, double a, double b) {
  const double log_c = std::lgamma(y + r) - std::lgamma(y + 1) - std::lgamma(r) -
                       (std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b));
  auto f = [&](double p) {
    if (p <= 0 || p >= 1) return 0.0;
    return std::exp(log_c + (r + a - 1) * std::log(p) + (y + b - 1) * std::log1p(-p));
  };
  return std::log(bm::quadrature::gauss_kronrod<double, 61>::integrate(f, 0.0, 1.0, 15, 1e-14));
}

/// The same law in closed form, log[Γ(y + r) / (y! Γ(r))] + log B(α + r, β + y) − log B(α, β),
/// with the standard library's lgamma: checked against the mixture below, then the chi-square
/// test's reference (the quadrature at every count of two samples' range took 30 of the 32 s of
/// this case under the sanitizers at -O0).
double beta_neg_binomial_closed_form(double y, double r, double a, double b) {
  const auto lbeta = [](double p, double q) { return std::lgamma(p) + std::lgamma(q) - std::lgamma(p + q); };
  return std::lgamma(y + r) - std::lgamma(y + 1) - std::lgamma(r) + lbeta(a + r, b + y) - lbeta(a, b);
}

}  // namespace

TEST_CASE("stan families: log densities against Boost.Math or closed forms, and gradients",
          "[distributions][stan_families]") {
  param<"x"> x;
  param<"a"> a;
  param<"b"> b;
  param<"c"> c;
  tyche_test::check_log_density(compile(rayleigh(a).log_prob(x), x, a),
                                tyche_test::points_in(60, {{0.05, 8.0}, {0.3, 4.0}}, 3101),
                                [](const P& p) { return rayleigh_log_pdf(p[0], p[1]); }, "rayleigh(a).log_prob(x)");
  tyche_test::check_log_density(
      compile(scaled_inv_chi_square(a, b).log_prob(x), x, a, b),
      tyche_test::points_in(60, {{0.1, 8.0}, {0.5, 12.0}, {0.3, 3.0}}, 3201),
      [](const P& p) { return scaled_inv_chi_square_log_pdf(p[0], p[1], p[2]); },
      "scaled_inv_chi_square(a, b).log_prob(x)");
  // Both sides of μ: the check loss's two slopes.
  tyche_test::check_log_density(
      compile(skew_double_exponential(a, b, c).log_prob(x), x, a, b, c),
      tyche_test::points_in(60, {{-6.0, 6.0}, {-1.0, 1.0}, {0.3, 3.0}, {0.05, 0.95}}, 3301),
      [](const P& p) { return sde_log_pdf(p[0], p[1], p[2], p[3]); },
      "skew_double_exponential(a, b, c).log_prob(x)");
  // τ = ½ is double_exponential(μ, σ).
  tyche_test::check_log_density(
      compile(skew_double_exponential(a, b, 0.5).log_prob(x) - double_exponential(a, b).log_prob(x), x, a, b),
      tyche_test::points_in(20, {{-6.0, 6.0}, {-1.0, 1.0}, {0.3, 3.0}}, 3302), [](const P&) { return 0.0; },
      "skew_double_exponential(a, b, 1/2) - double_exponential(a, b)");

  // neg_binomial(α, β): random counts, and neg_binomial_2(α/β, α) at the same point.
  param<"alpha"> alpha;
  param<"beta"> beta;
  std::mt19937_64 rng(3401);
  std::uniform_real_distribution<double> ua(0.1, 30.0), ub(0.05, 5.0);
  using NB = neg_binomial_distribution<constant, constant>;
  for (int t = 0; t < dc::log_pmf_points; ++t) {
    const double av = ua(rng), bv = ub(rng);
    std::vector<double> y{t % 2 == 0 ? NB::draw(rng, av, bv)
                                     : dc::uniform_count(rng, NB::mean(av, bv) + 5 * std::sqrt(NB::variance(av, bv)) + 5)};
    const auto prog = compile(neg_binomial(alpha, beta).observe(data(y)).log_density(), alpha, beta);
    dc::check_log_pmf(dc::value_at(prog, {av, bv}), neg_binomial_log_pmf(av, bv, y[0]),
                      "neg_binomial(" + std::to_string(av) + ", " + std::to_string(bv) + ") at y = " + std::to_string(y[0]));
    const auto two = compile(neg_binomial_2(alpha / beta, alpha).observe(data(y)).log_density(), alpha, beta);
    dc::check_log_pmf(dc::value_at(prog, {av, bv}), dc::value_at(two, {av, bv}), "neg_binomial against neg_binomial_2",
                      1e-11);
  }
  const std::vector<double> ys{0, 3, 11, 40};
  const auto nb = compile(neg_binomial(alpha, beta).observe(data(ys)).log_density(), alpha, beta);
  for (const auto& pt : tyche_test::random_points(12, 2, 0.2, 8.0, 3402)) tyche_test::check_gradient_at(nb, pt, "neg_binomial(alpha, beta)");
}

TEST_CASE("stan families: beta_neg_binomial against the beta mixture, gradients, draws",
          "[distributions][stan_families][beta_neg_binomial]") {
  param<"r"> r;
  param<"a"> a;
  param<"b"> b;
  using BNB = beta_neg_binomial_distribution<constant, constant, constant>;
  std::mt19937_64 rng(3801);
  std::uniform_real_distribution<double> ur(0.3, 12.0), ua(1.5, 9.0), ub(1.0, 6.0);
  for (int t = 0; t < 40; ++t) {
    const double rv = ur(rng), av = ua(rng), bv = ub(rng);
    std::vector<double> y{std::min(BNB::draw(rng, rv, av, bv), 200.0)};
    const auto prog = compile(beta_neg_binomial(r, a, b).observe(data(y)).log_density(), r, a, b);
    const double mixture = beta_neg_binomial_mixture(y[0], rv, av, bv);
    const std::string what = "beta_neg_binomial(" + std::to_string(rv) + ", " + std::to_string(av) + ", " +
                             std::to_string(bv) + ") at y = " + std::to_string(y[0]);
    dc::check_log_pmf(dc::value_at(prog, {rv, av, bv}), mixture, what, 1e-9);
    dc::check_log_pmf(beta_neg_binomial_closed_form(y[0], rv, av, bv), mixture, what + " (the test's closed form)", 1e-9);
  }
  const std::vector<double> ys{0, 1, 5, 30};
  const auto prog = compile(beta_neg_binomial(r, a, b).observe(data(ys)).log_density(), r, a, b);
  for (const auto& pt : tyche_test::random_points(10, 3, 0.4, 7.0, 3802))
    tyche_test::check_gradient_at(prog, pt, "beta_neg_binomial(r, alpha, beta)");
  // Draws: α = 9, so the variance and the fourth moment its z-test needs are finite.
  for (auto [rv, av, bv] : {std::tuple{2.0, 9.0, 3.0}, std::tuple{0.6, 12.0, 20.0}}) {
    const auto xs = dc::draws<BNB>(3803, rv, av, bv);
    const std::string what = "beta_neg_binomial(" + std::to_string(rv) + ", " + std::to_string(av) + ", " + std::to_string(bv) + ")";
    dc::check_moments(xs, BNB::mean(rv, av, bv), BNB::variance(rv, av, bv), what);
    dc::check_chi_square(
        xs, [rv = rv, av = av, bv = bv](long long k) { return std::exp(beta_neg_binomial_closed_form(double(k), rv, av, bv)); },
        what);
  }
  CHECK(BNB::mean(1.0, 1.0, 2.0) == std::numeric_limits<double>::infinity());
  CHECK(BNB::variance(1.0, 2.0, 2.0) == std::numeric_limits<double>::infinity());
  std::vector<double> fractional{1, 0.25, 2};
  dc::check_observation_error([&] { return beta_neg_binomial(1.0, 2.0, 1.0).observe(data(fractional)); },
                              "beta_neg_binomial", "y[2]", 0.25, "is not a non-negative integer count");
  CHECK_THROWS_WITH(beta_neg_binomial_lpmf(data(ys), 1.0, 0.0, 1.0),
                    Catch::Contains("beta_neg_binomial(r, alpha, beta): alpha must be > 0"));
  // The lpmf function, against the family observed.
  const auto f = compile(beta_neg_binomial_lpmf(data(ys), exp(r), exp(a), exp(b)), r, a, b);
  const auto g = compile(beta_neg_binomial(exp(r), exp(a), exp(b)).observe(data(ys)).log_density(), r, a, b);
  const std::vector<double> th{0.2, 1.1, 0.4};
  CHECK(f.value(th) == g.value(th));
}

TEST_CASE("stan families: log CDFs and survival functions", "[distributions][stan_families][lcdf]") {
  param<"x"> x;
  param<"a"> a;
  param<"b"> b;
  param<"c"> c;
  for (const bool upper : {false, true}) {
    const std::string side = upper ? "_lccdf" : "_lcdf";
    {
      const auto pts = tyche_test::points_in(25, {{0.05, 6.0}, {-1.0, 1.0}}, 3501);
      auto ref = [upper](const P& p) {
        const bm::rayleigh_distribution<double> d(std::exp(p[1]));
        return log_cdf_of(bm::cdf(d, p[0]), bm::cdf(bm::complement(d, p[0])), upper);
      };
      if (upper) tyche_test::check_log_density(compile(rayleigh_lccdf(x, exp(a)), x, a), pts, ref, "rayleigh" + side);
      else tyche_test::check_log_density(compile(rayleigh_lcdf(x, exp(a)), x, a), pts, ref, "rayleigh" + side);
    }
    {
      const auto pts = tyche_test::points_in(25, {{0.1, 6.0}, {-0.5, 2.0}, {-1.0, 1.0}}, 3502);
      auto ref = [upper](const P& p) {
        const double s = std::exp(p[2]);
        const bm::inverse_chi_squared_distribution<double> d(std::exp(p[1]), s * s);
        return log_cdf_of(bm::cdf(d, p[0]), bm::cdf(bm::complement(d, p[0])), upper);
      };
      // 1e-11: the incomplete gamma function's series and continued fraction (scalar/inc_gamma.hpp)
      // against Boost's, near its documented 1e-14 at moderate arguments, less where the log is of
      // a probability near 1 (relative precision lost in the log, not in the function).
      if (upper)
        tyche_test::check_log_density(compile(scaled_inv_chi_square_lccdf(x, exp(a), exp(b)), x, a, b), pts, ref,
                                      "scaled_inv_chi_square" + side, 1e-11);
      else
        tyche_test::check_log_density(compile(scaled_inv_chi_square_lcdf(x, exp(a), exp(b)), x, a, b), pts, ref,
                                      "scaled_inv_chi_square" + side, 1e-11);
    }
    {
      // Both sides of μ and far out in either tail (|x − μ| up to 40σ: P or 1 − P near e^-80).
      // θ = (x, μ, log σ, logit τ).
      const auto pts = tyche_test::points_in(40, {{-40.0, 40.0}, {-1.0, 1.0}, {0.0, 0.7}, {-2.5, 2.5}}, 3503);
      auto ref = [upper](const P& p) { return sde_log_cdf(p[0], p[1], std::exp(p[2]), 1 / (1 + std::exp(-p[3])), upper); };
      if (upper)
        tyche_test::check_log_density(compile(skew_double_exponential_lccdf(x, a, exp(b), logistic(c)), x, a, b, c), pts, ref,
                                      "skew_double_exponential" + side);
      else
        tyche_test::check_log_density(compile(skew_double_exponential_lcdf(x, a, exp(b), logistic(c)), x, a, b, c), pts, ref,
                                      "skew_double_exponential" + side);
    }
    {
      // At x = μ exactly (fmin and fmax tie there): the CDF is continuously differentiable, its
      // log's slope in x is 2(1 − τ)/σ (lcdf) or −2τ/σ (lccdf), and the slope in μ the negation.
      param<"m"> m;
      for (const double t : {0.3, 0.8}) {
        const double sd = 1.5, want = upper ? -2 * t / sd : 2 * (1 - t) / sd;
        auto at_mu = [&](const auto& prog) {
          std::vector<double> g(2);
          prog.value_and_gradient(std::vector<double>{0.25, 0.25}, g);
          INFO("skew_double_exponential" << side << " at x = mu, tau = " << t);
          CHECK(g[0] == Approx(want).epsilon(1e-14));
          CHECK(g[1] == Approx(-want).epsilon(1e-14));
        };
        if (upper) at_mu(compile(skew_double_exponential_lccdf(x, m, sd, t), x, m));
        else at_mu(compile(skew_double_exponential_lcdf(x, m, sd, t), x, m));
      }
    }
    {
      std::vector<double> ys{0, 2, 9};
      param<"alpha"> alpha;
      param<"beta"> beta;
      // θ = (log α, log β).
      auto run = [&](const auto& prog) {
        for (const auto& pt : tyche_test::random_points(10, 2, -1.2, 1.8, 3504)) {
          const double av = std::exp(pt[0]), bv = std::exp(pt[1]);
          const bm::negative_binomial_distribution<double> d(av, bv / (1 + bv));
          double ref = 0;
          for (double v : ys) ref += log_cdf_of(bm::cdf(d, v), bm::cdf(bm::complement(d, v)), upper);
          INFO("neg_binomial" << side << " at (" << av << ", " << bv << ")");
          CHECK(tyche_test::log_density_error(prog.value(pt), ref) <= 1e-11);  // the continued fraction of log_inc_beta
          tyche_test::check_gradient_at(prog, pt, "neg_binomial" + side);
        }
      };
      if (upper) run(compile(neg_binomial_lccdf(data(ys), exp(alpha), exp(beta)), alpha, beta));
      else run(compile(neg_binomial_lcdf(data(ys), exp(alpha), exp(beta)), alpha, beta));
    }
  }
}

TEST_CASE("stan families: draws against mean, variance and the cdf", "[distributions][stan_families]") {
  {
    using D = decltype(rayleigh(1.0));
    const double s = 1.7;
    const auto draws = tyche_test::draws_of<D>(3601, s);
    tyche_test::check_moments(draws, D::mean(s), D::variance(s), "rayleigh(1.7)");
    tyche_test::check_ks(draws, [&](double v) { return bm::cdf(bm::rayleigh_distribution<double>(s), v); }, "rayleigh(1.7)");
  }
  {
    // ν = 12: the fourth moment the variance's z-test needs is finite.
    using D = decltype(scaled_inv_chi_square(1.0, 1.0));
    const double n = 12.0, s = 0.8;
    const auto draws = tyche_test::draws_of<D>(3602, n, s);
    tyche_test::check_moments(draws, D::mean(n, s), D::variance(n, s), "scaled_inv_chi_square(12, 0.8)");
    tyche_test::check_ks(draws, [&](double v) { return bm::cdf(bm::inverse_chi_squared_distribution<double>(n, s * s), v); },
                         "scaled_inv_chi_square(12, 0.8)");
  }
  for (const double t : {0.2, 0.5, 0.9}) {
    using D = decltype(skew_double_exponential(0.0, 1.0, 0.5));
    const double m = 0.5, s = 1.5;
    const std::string what = "skew_double_exponential(0.5, 1.5, " + std::to_string(t) + ")";
    const auto draws = tyche_test::draws_of<D>(3603, m, s, t);
    tyche_test::check_moments(draws, D::mean(m, s, t), D::variance(m, s, t), what);
    tyche_test::check_ks(draws, [&](double v) { return std::exp(sde_log_cdf(v, m, s, t, false)); }, what);
    // μ is the τ-quantile.
    std::size_t below = 0;
    for (double d : draws) below += d <= m;
    const double n = static_cast<double>(draws.size());
    CHECK(std::fabs(below / n - t) < 4.5 * std::sqrt(t * (1 - t) / n));
  }
  using NB = neg_binomial_distribution<constant, constant>;
  for (auto [a, b] : {std::pair{0.7, 0.4}, std::pair{6.0, 1.5}, std::pair{30.0, 2.0}}) {
    const auto xs = dc::draws<NB>(3604, a, b);
    const std::string what = "neg_binomial(" + std::to_string(a) + ", " + std::to_string(b) + ")";
    dc::check_moments(xs, NB::mean(a, b), NB::variance(a, b), what);
    dc::check_chi_square(
        xs,
        [a = a, b = b](long long k) {
          return bm::pdf(bm::negative_binomial_distribution<double>(a, b / (1 + b)), static_cast<double>(k));
        },
        what);
  }
  using S = decltype(scaled_inv_chi_square(1.0, 1.0));
  CHECK(S::mean(2.0, 1.0) == std::numeric_limits<double>::infinity());
  CHECK(S::variance(4.0, 1.0) == std::numeric_limits<double>::infinity());
}

TEST_CASE("stan families: named variables live on their supports", "[distributions][stan_families]") {
  using tyche_test::check_support;
  check_support(
      model(joint(rayleigh<"r">(1.5))), "r", {0.2, 1.5, 6.0}, {-1.0, 0.0},
      [](double v) { return rayleigh_log_pdf(v, 1.5); }, tyche_test::log_jacobian_positive);
  check_support(
      model(joint(scaled_inv_chi_square<"v">(5.0, 0.7))), "v", {0.1, 0.5, 4.0}, {-1.0, 0.0},
      [](double v) { return scaled_inv_chi_square_log_pdf(v, 5.0, 0.7); }, tyche_test::log_jacobian_positive);
  check_support(
      model(joint(skew_double_exponential<"q">(0.5, 2.0, 0.25))), "q", {-4.0, 0.5, 3.0}, {nan_value},
      [](double v) { return sde_log_pdf(v, 0.5, 2.0, 0.25); }, tyche_test::log_jacobian_real);
}

TEST_CASE("stan families: a quantile regression by skew_double_exponential", "[distributions][stan_families]") {
  // y = 1 + 2x + e with e ~ normal(0, 1): the 0.9 quantile of y given x is 1 + 2x + z₀.₉.
  // The model's log density at the true line is higher than at lines shifted by ±0.3 (the check
  // loss is minimised at the quantile), and it is the sum of the family's terms.
  const std::size_t n = 4000;
  std::vector<double> x(n), y(n);
  std::mt19937_64 rng(3701);
  std::normal_distribution<double> z;
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = -1 + 2.0 * static_cast<double>(i) / n;
    y[i] = 1 + 2 * x[i] + z(rng);
  }
  auto a = normal<"a">(0.0, 10.0);
  auto b = normal<"b">(0.0, 10.0);
  const auto m = model(joint(a, b, skew_double_exponential(a + b * data(x), 1.0, 0.9).observe(data(y))));
  const double q = 1.2815515655446004;  // Φ⁻¹(0.9)
  const double at_quantile = m.log_prob(std::vector<double>{1 + q, 2.0});
  CHECK(at_quantile > m.log_prob(std::vector<double>{1 + q + 0.3, 2.0}));
  CHECK(at_quantile > m.log_prob(std::vector<double>{1 + q - 0.3, 2.0}));
  double want = 0;
  for (std::size_t i = 0; i < n; ++i) want += sde_log_pdf(y[i], 1 + q + 2 * x[i], 1.0, 0.9);
  want += 2 * (-0.5 * std::log(2 * 3.141592653589793) - std::log(10.0)) - 0.5 * ((1 + q) * (1 + q) + 4) / 100;
  CHECK(tyche_test::log_density_error(at_quantile, want) <= 1e-11);
}

TEST_CASE("stan families: data and argument checks, and the *_lpdf functions", "[distributions][stan_families]") {
  const std::vector<double> pos{0.4, 1.7, 3.2}, real{-1.3, 0.2, 2.4}, bad_pos{1.0, 0.0}, counts{0, 4, 1};
  CHECK_THROWS_WITH(rayleigh(1.0).observe(data(bad_pos)), Catch::Contains("y[2]") && Catch::Contains("not positive"));
  CHECK_THROWS_WITH(scaled_inv_chi_square(1.0, 1.0).observe(data(bad_pos)),
                    Catch::Contains("y[2]") && Catch::Contains("not positive"));
  std::vector<double> fractional{1, 0.25, 2};
  dc::check_observation_error([&] { return neg_binomial(1.0, 1.0).observe(data(fractional)); }, "neg_binomial", "y[2]", 0.25,
                              "is not a non-negative integer count");
  CHECK_NOTHROW(skew_double_exponential(0.0, 1.0, 0.3).observe(data(real)));
  CHECK_THROWS_WITH(rayleigh_lpdf(data(pos), -1.0), Catch::Contains("rayleigh(sigma): sigma must be > 0"));
  CHECK_THROWS_WITH(scaled_inv_chi_square_lpdf(data(pos), 2.0, 0.0), Catch::Contains("s must be > 0"));
  CHECK_THROWS_WITH(skew_double_exponential_lpdf(data(real), 0.0, 1.0, 1.0), Catch::Contains("tau must be in (0, 1)"));
  CHECK_THROWS_WITH(skew_double_exponential_lpdf(data(real), 0.0, -1.0, 0.5), Catch::Contains("sigma must be > 0"));
  CHECK_THROWS_WITH(neg_binomial_lpmf(data(counts), 2.0, -1.0), Catch::Contains("neg_binomial(alpha, beta): beta must be > 0"));

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
  check(compile(rayleigh_lpdf(data(pos), exp(a)) + 0 * b, a, b),
        sum_of(pos, [&](double v) { return rayleigh_log_pdf(v, ea); }), "rayleigh_lpdf");
  check(compile(scaled_inv_chi_square_lpdf(data(pos), exp(a) + 1.0, exp(b)), a, b),
        sum_of(pos, [&](double v) { return scaled_inv_chi_square_log_pdf(v, ea + 1, eb); }), "scaled_inv_chi_square_lpdf");
  check(compile(skew_double_exponential_lpdf(data(real), a, exp(b), logistic(a)), a, b),
        sum_of(real, [&](double v) { return sde_log_pdf(v, at[0], eb, 1 / (1 + std::exp(-at[0]))); }),
        "skew_double_exponential_lpdf");
  check(compile(neg_binomial_lpmf(data(counts), exp(a), exp(b)), a, b),
        sum_of(counts, [&](double v) { return static_cast<double>(neg_binomial_log_pmf(ea, eb, v)); }), "neg_binomial_lpmf");
}

// ---- poisson_binomial -------------------------------------------------------------------------

namespace {
/// P(Y = y) for every y by the sum over the 2^N subsets of trials, in long double.
std::vector<long double> poisson_binomial_by_subsets(const P& theta) {
  const std::size_t n = theta.size();
  std::vector<long double> p(n + 1, 0.0L);
  for (std::size_t mask = 0; mask < (std::size_t{1} << n); ++mask) {
    long double prob = 1;
    std::size_t count = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const bool success = (mask >> j) & 1u;
      prob *= success ? theta[j] : 1.0L - theta[j];
      count += success;
    }
    p[count] += prob;
  }
  return p;
}
}  // namespace

TEST_CASE("poisson_binomial: lpmf, lcdf and lccdf against the sum over subsets, gradients, binomial as a special "
          "case, exact at theta 0 and 1, draws, checks",
          "[distributions][stan_families][poisson_binomial]") {
  constexpr std::size_t N = 7;
  vector_param<"u", N> u;
  const auto theta = inv_logit(u);
  const P y{0, 3, 7, 2, 3};
  const auto f = compile(poisson_binomial_lpmf(data(y), theta), u);
  const auto fc = compile(poisson_binomial_lcdf(data(y), theta) + 2.0 * poisson_binomial_lccdf(data(y), theta), u);
  for (const auto& uu : tyche_test::random_points(20, N, -3.0, 3.0, 3501)) {
    P th(N);
    for (std::size_t j = 0; j < N; ++j) th[j] = 1 / (1 + std::exp(-uu[j]));
    const auto p = poisson_binomial_by_subsets(th);
    long double lp = 0, lc = 0;
    for (double yi : y) {
      const std::size_t k = static_cast<std::size_t>(yi);
      lp += std::log(p[k]);
      long double below = 0, above = 0;
      for (std::size_t j = 0; j <= N; ++j) (j <= k ? below : above) += p[j];
      lc += std::log(below) + (k < N ? 2 * std::log(above) : 0.0L);
    }
    dc::check_log_pmf(f.value(uu), lp, "poisson_binomial_lpmf");
    if (y[2] < N) dc::check_log_pmf(fc.value(uu), lc, "poisson_binomial_lcdf + lccdf");
  }
  // P(Y > N) = 0: lccdf at y = N is -inf; so is the lpmf of a count no subset gives.
  CHECK(fc.value(P(N, 0.3)) == -HUGE_VAL);
  static const P below_n{0, 3, 2};
  const auto fs = compile(poisson_binomial_lcdf(data(y), theta) + 2.0 * poisson_binomial_lccdf(data(below_n), theta), u);
  for (const auto& uu : tyche_test::random_points(5, N, -3.0, 3.0, 3502)) {
    tyche_test::check_gradient_at(f, uu, "poisson_binomial_lpmf");
    tyche_test::check_gradient_at(fs, uu, "poisson_binomial_lcdf + lccdf");
  }
  const auto pts = tyche_test::random_points(8, N, -3.0, 3.0, 3503);
  tyche_test::check_lanes(f, pts, "poisson_binomial (lanes)");
  tyche_test::check_float(fs, pts[0], "poisson_binomial lcdf (float)");

  // Every θⱼ = p: binomial(N, p), the value and the gradient in p.
  param<"a"> a;
  const auto pb = compile(poisson_binomial_lpmf(data(y), rep_vector(inv_logit(a), N)), a);
  const auto bin = compile(binomial_lpmf(data(y), double(N), inv_logit(a)), a);
  for (double av : {-2.0, -0.3, 0.4, 1.7}) {
    CHECK(pb.value(P{av}) == Approx(bin.value(P{av})).epsilon(1e-12));
    P g1(1), g2(1);
    pb.value_and_gradient(P{av}, g1);
    bin.value_and_gradient(P{av}, g2);
    CHECK(g1[0] == Approx(g2[0]).epsilon(1e-10));
  }
  // θ with a 0 and a 1 among the trials: exact, and the derivative in the free trial is finite.
  static const P one_two{1, 2}, zero{0};
  const auto edge = compile(poisson_binomial_lpmf(data(one_two), to_vector(0.0, 1.0, inv_logit(a))), a);
  const double pa = 1 / (1 + std::exp(-0.5));
  CHECK(edge.value(P{0.5}) == Approx(std::log(1 - pa) + std::log(pa)).epsilon(1e-13));
  P ge(1);
  edge.value_and_gradient(P{0.5}, ge);
  CHECK(ge[0] == Approx(-pa + (1 - pa)).epsilon(1e-12));  // d/da [log(1 − σ(a)) + log σ(a)]
  CHECK(compile(poisson_binomial_lpmf(data(zero), to_vector(0.0, 1.0, inv_logit(a))), a).value(P{0.5}) == -HUGE_VAL);

  // Draws: mean Σθ, variance Σθ(1 − θ).
  const P th{0.1, 0.5, 0.9, 0.3, 0.7, 0.2, 0.95};
  std::mt19937_64 rng(3504);
  const P draws = poisson_binomial_distribution<vector_param<"t", N>>::draw_all(rng, dc::sample_size, th);
  double mean = 0, var = 0;
  for (double t : th) {
    mean += t;
    var += t * (1 - t);
  }
  dc::check_moments(draws, mean, var, "poisson_binomial draws");

  // Checks: counts 0 … N, named; a named variable is refused at compile time (observations only).
  const P bad{0, 8};
  CHECK_THROWS_WITH(poisson_binomial_lpmf(data(bad), theta),
                    Catch::Contains("tyche::poisson_binomial(theta).observe(y): y[2] = 8 is not a count 0 … 7 (theta has 7 trials)"));
  const P half{1.5};
  CHECK_THROWS_WITH(poisson_binomial_lpmf(data(half), theta), Catch::Contains("y[1] = 1.5 is not a non-negative integer count"));
  const P outside{0.2, 1.2, 0.5};
  CHECK_THROWS_WITH(poisson_binomial_lpmf(data(y), data(outside)), Catch::Contains("poisson_binomial(theta)") && Catch::Contains("1.2"));
}

TEST_CASE("hypergeometric and discrete_range: lpmf against Boost.Math and the closed form, per-observation "
          "arguments, draws, data and argument checks",
          "[distributions][stan_families][hypergeometric]") {
  // hypergeometric(N, a, b): Boost's hypergeometric_distribution(r = a, n = N, total = a + b).
  const P y{3, 5, 4, 0, 10};
  const auto f = compile(hypergeometric_lpmf(data(y), 10.0, 20.0, 30.0));
  long double ref = 0;
  const bm::hypergeometric_distribution<long double> urn(20, 10, 50);
  for (double yi : y) ref += std::log(bm::pdf(urn, static_cast<unsigned>(yi)));
  dc::check_log_pmf(f.value(P{}), ref, "hypergeometric_lpmf");
  // One (N, a, b) per observation.
  const P ns{4, 6}, as{5, 2}, bs{3, 9}, y2{2, 1};
  const auto g = compile(hypergeometric_lpmf(data(y2), data(ns), data(as), data(bs)));
  const long double ref2 = std::log(bm::pdf(bm::hypergeometric_distribution<long double>(5, 4, 8), 2u)) +
                           std::log(bm::pdf(bm::hypergeometric_distribution<long double>(2, 6, 11), 1u));
  dc::check_log_pmf(g.value(P{}), ref2, "hypergeometric_lpmf, arguments per observation");
  // discrete_range(lower, upper): −log(upper − lower + 1) per observation, bounds per observation too.
  const P rolls{1, 6, 3, 3};
  CHECK(compile(discrete_range_lpmf(data(rolls), 1, 6)).value(P{}) == Approx(-4 * std::log(6.0)).epsilon(1e-15));
  const P lo{-3, 0}, hi{2, 0}, z{-3, 0};
  CHECK(compile(discrete_range_lpmf(data(z), data(lo), data(hi))).value(P{}) == Approx(-std::log(6.0)).epsilon(1e-15));

  // Draws: moments, and χ² against the pmf.
  const auto hd = dc::draws<hypergeometric_distribution<constant, constant, constant>>(3601, 10.0, 20.0, 30.0);
  dc::check_moments(hd, hypergeometric_distribution<constant, constant, constant>::mean(10, 20, 30),
                    hypergeometric_distribution<constant, constant, constant>::variance(10, 20, 30),
                    "hypergeometric draws");
  CHECK(hypergeometric_distribution<constant, constant, constant>::variance(10, 20, 30) ==
        Approx(10.0 * 20 * 30 * 40 / (50.0 * 50 * 49)).epsilon(1e-15));
  dc::check_chi_square(hd, [&](double k) { return static_cast<double>(bm::pdf(urn, static_cast<unsigned>(k))); },
                       "hypergeometric draws");
  const auto rd = dc::draws<discrete_range_distribution<constant, constant>>(3602, -2.0, 4.0);
  dc::check_moments(rd, 1.0, 4.0, "discrete_range draws");  // 7 values: ((7)² − 1)/12 = 4
  std::size_t outside = 0;
  for (double x : rd) outside += !(x >= -2 && x <= 4 && x == std::floor(x));
  CHECK(outside == 0);

  // Checks: a count that cannot happen, N > a + b, counts that are not integers, crossing bounds,
  // an observation outside its bounds.
  const P three{3}, one{1}, half{1.5}, seven{7};
  CHECK_THROWS_WITH(hypergeometric_lpmf(data(three), 5.0, 2.0, 30.0),
                    Catch::Contains("tyche::hypergeometric(...).observe(y): y[1] = 3 cannot happen: with N = 5, a = 2 "
                                    "and b = 30 the count is in [0, 2]"));
  CHECK_THROWS_WITH(hypergeometric_lpmf(data(one), 10.0, 20.0, 3.0), Catch::Contains("the count is in [7, 10]"));
  CHECK_THROWS_WITH(hypergeometric_lpmf(data(one), 10.0, 3.0, 4.0),
                    Catch::Contains("tyche::hypergeometric(N, a, b): N[1] = 10 exceeds a + b = 7"));
  CHECK_THROWS_WITH(hypergeometric_lpmf(data(one), 2.5, 3.0, 4.0),
                    Catch::Contains("tyche::hypergeometric(N, a, b): N[1] = 2.5 is not a non-negative integer count"));
  CHECK_THROWS_WITH(hypergeometric_lpmf(data(half), 2.0, 3.0, 4.0), Catch::Contains("y[1] = 1.5 is not a non-negative integer count"));
  CHECK_THROWS_WITH(discrete_range_lpmf(data(one), 3, 1),
                    Catch::Contains("tyche::discrete_range(lower, upper): lower[1] = 3 exceeds upper[1] = 1"));
  CHECK_THROWS_WITH(discrete_range_lpmf(data(seven), 1, 6),
                    Catch::Contains("tyche::discrete_range(...).observe(y): y[1] = 7 is outside [1, 6]"));
  CHECK_THROWS_WITH(discrete_range_lpmf(data(half), 1, 6), Catch::Contains("y[1] = 1.5 is not an integer"));
  CHECK_THROWS_WITH(discrete_range_lpmf(data(one), 0.5, 6), Catch::Contains("lower[1] = 0.5 is not an integer"));
  // Per-observation arguments whose sizes disagree with each other or with y.
  const P n3{4, 5, 6}, a2{5, 6}, y5{1, 1, 1, 1, 1}, lo2{0, 1};
  CHECK_THROWS_WITH(hypergeometric_lpmf(data(y5), data(n3), 5.0, 5.0),
                    Catch::Contains("tyche::hypergeometric(N, a, b).observe(y): N has 3 values but y has 5"));
  CHECK_THROWS_WITH(hypergeometric_lpmf(data(three), data(n3), data(a2), 5.0),
                    Catch::Contains("tyche::hypergeometric(N, a, b): a has 2 values but N has 3"));
  CHECK_THROWS_WITH(discrete_range_lpmf(data(y5), data(lo2), 6),
                    Catch::Contains("tyche::discrete_range(lower, upper).observe(y): lower has 2 values but y has 5"));
}
