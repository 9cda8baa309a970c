// zero_inflated(d, theta) and hurdle(d, theta) (tyche/distributions/inflated.hpp): log densities
// against the formulas computed here (Poisson, negative binomial, gamma and lognormal bases; θ and
// d's arguments scalars or one per observation), gradients through the property check (zeros and
// positive values together: no NaN from the branch not taken), the probabilities summing to 1,
// draws against P(0) and the mean, the free-term functions, do_, and the errors.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <span>
#include <stdexcept>
#include <vector>

#include "support/property.hpp"

using namespace tyche;
using Catch::Matchers::Contains;

namespace {
double poisson_lp(double y, double lambda) { return y * std::log(lambda) - lambda - std::lgamma(y + 1); }
double nb2_lp(double y, double mu, double phi) {
  return std::lgamma(y + phi) - std::lgamma(y + 1) - std::lgamma(phi) + phi * std::log(phi / (mu + phi)) +
         y * std::log(mu / (mu + phi));
}
double zi_lp(double y, double theta, double lp0, double lpy) {
  return y == 0 ? std::log(theta + (1 - theta) * std::exp(lp0)) : std::log1p(-theta) + lpy;
}
double hurdle_lp(double y, double theta, double lp0, double lpy) {
  return y == 0 ? std::log(theta) : std::log1p(-theta) + lpy - std::log1p(-std::exp(lp0));
}
double logistic(double u) { return 1 / (1 + std::exp(-u)); }
}  // namespace

TEST_CASE("zero_inflated: Poisson and negative binomial against the formula, with gradients",
          "[distributions][inflated]") {
  const std::vector<double> y{0, 3, 0, 1, 0, 7, 2, 0}, x{0.1, -0.3, 1.2, 0.4, -1.0, 1.5, 0.8, -0.2};
  param<"b0"> b0;
  param<"b1"> b1;
  param<"u"> u;
  param<"lphi"> lphi;
  vector_param<"g", 8> g;
  // θ = logistic(u) one for all; λ = exp(b0 + b1 x) per observation.
  const auto f = compile(zero_inflated(poisson(exp(b0 + b1 * data(x))), logistic(u)).log_prob(data(y)), b0, b1, u);
  // θ one per observation, λ one for all.
  const auto fv = compile(zero_inflated(poisson(exp(b0)), logistic(g)).log_prob(data(y)), b0, g);
  // neg_binomial_2 with φ = e^lphi.
  const auto fn = compile(zero_inflated(neg_binomial_2(exp(b0 + b1 * data(x)), exp(lphi)), logistic(u)).log_prob(data(y)),
                          b0, b1, u, lphi);
  const auto fl = compile(zero_inflated_lpmf(data(y), poisson(exp(b0 + b1 * data(x))), logistic(u)), b0, b1, u);
  for (const auto& p : tyche_test::random_points(10, 12, -1.5, 1.5, 3)) {
    double ref = 0, refv = 0, refn = 0;
    for (std::size_t i = 0; i < y.size(); ++i) {
      const double lam = std::exp(p[0] + p[1] * x[i]), th = logistic(p[2]);
      ref += zi_lp(y[i], th, -lam, poisson_lp(y[i], lam));
      refv += zi_lp(y[i], logistic(p[4 + i]), -std::exp(p[0]), poisson_lp(y[i], std::exp(p[0])));
      const double phi = std::exp(p[3]);
      refn += zi_lp(y[i], th, nb2_lp(0, lam, phi), nb2_lp(y[i], lam, phi));
    }
    const std::vector<double> p3(p.begin(), p.begin() + 3), p4(p.begin(), p.begin() + 4);
    std::vector<double> pv{p[0]};
    pv.insert(pv.end(), p.begin() + 4, p.end());
    CHECK(f.value(p3) == Approx(ref).epsilon(1e-13));
    CHECK(fl.value(p3) == Approx(ref).epsilon(1e-13));
    CHECK(fv.value(pv) == Approx(refv).epsilon(1e-13));
    CHECK(fn.value(p4) == Approx(refn).epsilon(1e-13));
    tyche_test::check_gradient_at(f, p3, "zero_inflated(poisson(exp(b0 + b1 x)), logistic(u))");
    tyche_test::check_gradient_at(fv, pv, "zero_inflated(poisson(exp(b0)), logistic(g))");
    tyche_test::check_gradient_at(fn, p4, "zero_inflated(neg_binomial_2(...), logistic(u))");
  }
  tyche_test::check_lanes(f, tyche_test::random_points(8, 3, -1.5, 1.5, 4), "zero_inflated (lanes)");
  tyche_test::check_float(f, std::vector<double>{0.2, 0.5, -0.3}, "zero_inflated (float)");
  // One value per observation: pointwise_log_density.
  const std::vector<double> at{0.3, -0.4, 0.8};
  const auto pw = compile(sum(data(x) * pointwise_log_density(zero_inflated(poisson(exp(b0 + b1 * data(x))),
                                                                            logistic(u)),
                                                              data(y))),
                          b0, b1, u);
  double ref = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double lam = std::exp(at[0] + at[1] * x[i]);
    ref += x[i] * zi_lp(y[i], logistic(at[2]), -lam, poisson_lp(y[i], lam));
  }
  CHECK(pw.value(at) == Approx(ref).epsilon(1e-13));
}

TEST_CASE("hurdle: discrete (truncated at zero) and continuous bases against the formula",
          "[distributions][inflated]") {
  const std::vector<double> y{0, 3, 0, 1, 0, 7, 2, 0}, x{0.1, -0.3, 1.2, 0.4, -1.0, 1.5, 0.8, -0.2};
  const std::vector<double> r{0.0, 1.3, 0.0, 2.2, 0.7, 0.05};
  param<"b0"> b0;
  param<"b1"> b1;
  param<"u"> u;
  param<"la"> la;
  const auto fp = compile(hurdle(poisson(exp(b0 + b1 * data(x))), logistic(u)).log_prob(data(y)), b0, b1, u);
  const auto fpl = compile(hurdle_lpmf(data(y), poisson(exp(b0 + b1 * data(x))), logistic(u)), b0, b1, u);
  const auto fg = compile(hurdle(gamma(exp(la), exp(b0)), logistic(u)).log_prob(data(r)), la, b0, u);
  const auto fgl = compile(hurdle_lpdf(data(r), gamma(exp(la), exp(b0)), logistic(u)), la, b0, u);
  const auto fln = compile(hurdle(lognormal(b0, exp(la)), logistic(u)).log_prob(data(r)), b0, la, u);
  for (const auto& p : tyche_test::random_points(10, 3, -1.2, 1.2, 5)) {
    double refp = 0, refg = 0, refln = 0;
    const double th = logistic(p[2]);
    for (std::size_t i = 0; i < y.size(); ++i) {
      const double lam = std::exp(p[0] + p[1] * x[i]);
      refp += hurdle_lp(y[i], th, -lam, poisson_lp(y[i], lam));
    }
    const double a = std::exp(p[0]), b = std::exp(p[1]);  // gamma(shape e^la, rate e^b0): p = (la, b0, u)
    const double s = std::exp(p[1]);                        // lognormal(b0 = p[0], sigma = e^la = e^p[1])
    for (double v : r) {
      refg += v == 0 ? std::log(th)
                     : std::log1p(-th) + a * std::log(b) - std::lgamma(a) + (a - 1) * std::log(v) - b * v;
      refln += v == 0 ? std::log(th)
                      : std::log1p(-th) - std::log(v * s * std::sqrt(2 * 3.14159265358979323846)) -
                            (std::log(v) - p[0]) * (std::log(v) - p[0]) / (2 * s * s);
    }
    CHECK(fp.value(p) == Approx(refp).epsilon(1e-13));
    CHECK(fpl.value(p) == Approx(refp).epsilon(1e-13));
    CHECK(fg.value(p) == Approx(refg).epsilon(1e-13));
    CHECK(fgl.value(p) == Approx(refg).epsilon(1e-13));
    CHECK(fln.value(p) == Approx(refln).epsilon(1e-13));
    tyche_test::check_gradient_at(fp, p, "hurdle(poisson(...), logistic(u))");
    // Zeros among the observations: the gamma's and lognormal's densities at 0 are not used and
    // put no NaN into the gradient.
    tyche_test::check_gradient_at(fg, p, "hurdle(gamma(...), logistic(u))");
    tyche_test::check_gradient_at(fln, p, "hurdle(lognormal(...), logistic(u))");
  }
  tyche_test::check_lanes(fg, tyche_test::random_points(8, 3, -1.2, 1.2, 6), "hurdle(gamma) (lanes)");
}

TEST_CASE("zero_inflated and hurdle: the probabilities of 0, 1, 2, ... sum to 1", "[distributions][inflated]") {
  param<"l"> l;
  param<"t"> t;
  for (int k = 0; k < 3; ++k) {
    std::vector<double> one{0.0};
    double zi_total = 0, hu_total = 0;
    for (int yv = 0; yv < 150; ++yv) {
      one[0] = yv;
      const auto zi = compile(zero_inflated(neg_binomial_2(exp(l), 3.0), logistic(t)).log_prob(data(one)), l, t);
      const auto hu = compile(hurdle(poisson(exp(l)), logistic(t)).log_prob(data(one)), l, t);
      const std::vector<double> p{0.5 * k + 0.3, -0.5 + 0.7 * k};
      zi_total += std::exp(zi.value(p));
      hu_total += std::exp(hu.value(p));
    }
    CHECK(zi_total == Approx(1.0).epsilon(1e-12));
    CHECK(hu_total == Approx(1.0).epsilon(1e-12));
  }
}

TEST_CASE("zero_inflated and hurdle: draws have P(0) and the mean", "[distributions][inflated]") {
  // zero_inflated(poisson(λ), θ): P(0) = θ + (1 − θ)e^{−λ}, mean (1 − θ)λ;
  // hurdle(poisson(λ), θ): P(0) = θ, mean (1 − θ)λ/(1 − e^{−λ}); hurdle(gamma(a, b), θ): P(0) = θ,
  // mean (1 − θ)a/b. z-tests within 4.5 standard errors over 100,000 draws.
  const double lam = 1.7, th = 0.3, a = 2.5, b = 1.5;
  std::mt19937_64 rng(17);
  const std::size_t n = 100000;
  using zip = inflated_distribution<poisson_distribution<constant>, constant, inflation::zero_inflated>;
  using hup = inflated_distribution<poisson_distribution<constant>, constant, inflation::hurdle_discrete>;
  using hug = inflated_distribution<gamma_distribution<constant, constant>, constant, inflation::hurdle_continuous>;
  const auto check = [&](auto draw, double p0, double mean, double var, const char* what) {
    double zeros = 0, sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double v = draw();
      zeros += v == 0;
      sum += v;
    }
    INFO(what << ": P(0) " << zeros / n << " against " << p0 << ", mean " << sum / n << " against " << mean);
    CHECK(std::fabs(zeros / n - p0) < 4.5 * std::sqrt(p0 * (1 - p0) / n));
    CHECK(std::fabs(sum / n - mean) < 4.5 * std::sqrt(var / n));
  };
  const double p0_zi = th + (1 - th) * std::exp(-lam), m_zi = (1 - th) * lam;
  check([&] { return zip::draw(rng, lam, th); }, p0_zi, m_zi, (1 - th) * lam * (1 + th * lam), "zero_inflated poisson");
  const double trunc = 1 - std::exp(-lam), m_hu = (1 - th) * lam / trunc;
  const double ex2 = (1 - th) * (lam + lam * lam) / trunc;
  check([&] { return hup::draw(rng, lam, th); }, th, m_hu, ex2 - m_hu * m_hu, "hurdle poisson");
  const double m_g = (1 - th) * a / b, ex2_g = (1 - th) * (a * (a + 1)) / (b * b);
  check([&] { return hug::draw(rng, a, b, th); }, th, m_g, ex2_g - m_g * m_g, "hurdle gamma");
}

TEST_CASE("zero_inflated: a model, do_ on theta, posterior predictive draws", "[distributions][inflated]") {
  const std::vector<double> y{0, 0, 3, 1, 0, 5, 2, 0, 0, 1};
  auto full = model([&] {
    auto lambda = gamma<"lambda">(2.0, 1.0);
    auto zi = beta<"zi">(1.0, 1.0);
    return joint(lambda, zi, zero_inflated(poisson(lambda), zi).observe(data(y)));
  });
  auto fixed = do_<"zi">(full, 0.3);
  auto written = model([&] {
    auto lambda = gamma<"lambda">(2.0, 1.0);
    return joint(lambda, zero_inflated(poisson(lambda), 0.3).observe(data(y)));
  });
  REQUIRE(fixed.dim() == 1);
  for (const auto& p : tyche_test::random_points(5, 1, -1, 1, 7))
    CHECK(fixed.log_prob(p) == Approx(written.log_prob(p)).epsilon(1e-13));
  std::mt19937_64 rng(8);
  const auto sim = full.sample_observations_at(std::vector<double>{1.5, 0.4}, rng);
  REQUIRE(sim.size() == 1);
  REQUIRE(sim[0].size() == y.size());
  for (double v : sim[0]) CHECK((v >= 0 && v == std::floor(v)));
}

TEST_CASE("zero_inflated and hurdle: one y for vectors of d's arguments, and P(0) near 1",
          "[distributions][inflated]") {
  // A scalar y with λ one per observation: y for each of them, as poisson_lpmf broadcasts.
  vector_param<"l", 3> l;
  param<"u"> u;
  const auto f0 = compile(zero_inflated_lpmf(0.0, poisson(exp(l)), logistic(u)), l, u);
  const auto f1 = compile(hurdle_lpmf(2.0, poisson(exp(l)), logistic(u)), l, u);
  const std::vector<double> p{0.3, -0.5, 1.1, 0.4};
  double r0 = 0, r1 = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    const double lam = std::exp(p[i]);
    r0 += zi_lp(0, logistic(p[3]), -lam, poisson_lp(0, lam));
    r1 += hurdle_lp(2, logistic(p[3]), -lam, poisson_lp(2, lam));
  }
  CHECK(f0.value(p) == Approx(r0).epsilon(1e-13));
  CHECK(f1.value(p) == Approx(r1).epsilon(1e-13));
  tyche_test::check_gradient_at(f0, p, "zero_inflated_lpmf(0, poisson(exp(l)), logistic(u))");
  // λ = 1e-12: log P(0) = log(1 − (1 − θ)(1 − e^{−λ})) ≈ −(1 − θ)λ, and its derivative in θ
  // (1 − e^{−λ})/P(0) ≈ λ, both to their relative precision (no cancellation near P(0) = 1).
  param<"t"> t;
  const std::vector<double> zero{0.0};
  const auto g = compile(zero_inflated(poisson(1e-12), t).log_prob(data(zero)), t);
  std::vector<double> grad(1), work(g.workspace_size());
  const double v = g.value_and_gradient(std::span<const double>(std::vector<double>{0.3}), std::span<double>(grad),
                                        std::span<double>(work));
  CHECK(v == Approx(std::log1p(-0.7 * -std::expm1(-1e-12))).epsilon(1e-10));
  CHECK(grad[0] == Approx(-std::expm1(-1e-12) / std::exp(v)).epsilon(1e-10));
}

TEST_CASE("zero_inflated and hurdle: errors name the index and the value", "[distributions][inflated]") {
  const std::vector<double> negative{0, 2, -1}, fractional{0, 1.5}, counts{0, 2, 1}, times{0.0, -0.5};
  CHECK_THROWS_WITH(zero_inflated(poisson(2.0), 0.3).observe(data(negative)), Contains("y[3] = -1"));
  CHECK_THROWS_WITH(hurdle(poisson(2.0), 0.3).observe(data(fractional)), Contains("y[2] = 1.5"));
  CHECK_THROWS_WITH(hurdle(gamma(2.0, 1.0), 0.3).observe(data(times)), Contains("y[2] = -0.5"));
  // A binomial count above its trials, checked by the binomial.
  CHECK_THROWS_WITH(zero_inflated(binomial(1.0, 0.5), 0.3).observe(data(counts)), Contains("y[2] = 2"));
  CHECK_THROWS_WITH(zero_inflated_lpmf(data(counts), poisson(2.0), 1.5), Contains("theta"));
  const std::vector<double> thetas{0.1, 0.2};
  param<"l"> l;
  CHECK_THROWS_WITH(zero_inflated(poisson(exp(l)), data(thetas)).log_prob(data(counts)),
                    Contains("zero_inflated(d, theta): y has 3 values, theta 2"));
  // d's arguments of another size than y: named in zero_inflated's words, not d's arithmetic's.
  vector_param<"lv", 2> lv;
  CHECK_THROWS_WITH(zero_inflated_lpmf(data(counts), poisson(exp(lv)), 0.3),
                    Contains("zero_inflated(d, theta): y has 3 values"));
}
