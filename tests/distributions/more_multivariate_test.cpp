// ordered_logistic and ordered_probit (tyche/distributions/ordered_logistic.hpp), multinomial and
// multinomial_logit (multinomial.hpp), multi_student_t and multi_student_t_cholesky
// (multi_student_t.hpp), wishart and inv_wishart (wishart.hpp), wishart_cholesky and
// inv_wishart_cholesky (wishart_cholesky.hpp), multi_gp and multi_gp_cholesky (multi_gp.hpp), in one
// translation unit.
// Each: the log density against a computation written here with plain doubles and (ordinal,
// multinomial) against Boost.Math in long double, relative error ≤ 1e-12; gradients against
// Richardson-extrapolated finite differences (tests/support/property.hpp, relative 1e-7); the
// tails where the family computes logs of differences; moments or frequencies of draws
// (z-tests at 4.5 standard errors, chi-square at p ≥ 1e-6); the data checks, whose messages
// name the variable, the index and the value.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <boost/math/distributions/logistic.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/special_functions/gamma.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/discrete_checks.hpp"
#include "support/property.hpp"

using namespace tyche;
using Catch::Matchers::Contains;

namespace {

// ---- ordinal references ---------------------------------------------------------------------

/// log P(y | eta, c) written out with plain doubles, as the Stan Functions Reference states it:
/// 1 − F(eta − c₁), F(eta − c_{k−1}) − F(eta − c_k), F(eta − c_{K−1}), with F(x) = 1/(1 + e^−x)
/// or Φ(x) = erfc(−x/√2)/2, and 1 − F(x) = F(−x) (both are symmetric), so that a difference of
/// two values close to 1 is taken as the difference of their complements.
double ordinal_plain(bool probit, double y, double eta, const std::vector<double>& c) {
  auto cdf = [&](double x) { return probit ? 0.5 * std::erfc(-x / std::sqrt(2.0)) : 1.0 / (1.0 + std::exp(-x)); };
  const auto k = static_cast<std::size_t>(y);
  if (k == 1) return std::log(cdf(c[0] - eta));
  if (k == c.size() + 1) return std::log(cdf(eta - c[k - 2]));
  const double a = eta - c[k - 2], b = eta - c[k - 1];
  return std::log(a + b > 0 ? cdf(-b) - cdf(-a) : cdf(a) - cdf(b));
}

/// The same through Boost.Math's logistic and normal distributions in long double, each
/// probability written as a difference of the upper or the lower tails, whichever are smaller
/// (so that the reference itself does not cancel): P(y = k) = P(Y* ∈ (c_{k−1}, c_k]) with
/// Y* = eta + ε, ε logistic or standard normal; through log1p(−(the two tails outside the
/// category)) when P is close to 1.
long double ordinal_boost(bool probit, double y, double eta, const std::vector<double>& c) {
  const auto k = static_cast<std::size_t>(y);
  const long double inf = std::numeric_limits<long double>::infinity();
  const long double lo = k == 1 ? -inf : static_cast<long double>(c[k - 2]) - eta;  // ε range
  const long double hi = k == c.size() + 1 ? inf : static_cast<long double>(c[k - 1]) - eta;
  auto lower_tail = [&](long double x) -> long double {  // P(ε ≤ x)
    if (x == -inf) return 0;
    if (x == inf) return 1;
    if (probit) return boost::math::cdf(boost::math::normal_distribution<long double>(0, 1), x);
    return boost::math::cdf(boost::math::logistic_distribution<long double>(0, 1), x);
  };
  auto upper_tail = [&](long double x) -> long double {  // P(ε > x)
    if (x == -inf) return 1;
    if (x == inf) return 0;
    if (probit) return boost::math::cdf(boost::math::complement(boost::math::normal_distribution<long double>(0, 1), x));
    return boost::math::cdf(boost::math::complement(boost::math::logistic_distribution<long double>(0, 1), x));
  };
  // P = 1 − P(ε ≤ lo) − P(ε > hi): through log1p when the two tails are small (P close to 1).
  const long double outside = lower_tail(lo) + upper_tail(hi);
  if (outside < 0.5L) return std::log1p(-outside);
  return std::log(lo + hi > 0 ? upper_tail(lo) - upper_tail(hi) : lower_tail(hi) - lower_tail(lo));
}

std::vector<double> sorted_cutpoints(std::mt19937_64& rng, std::size_t n, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> c(n);
  for (auto& v : c) v = u(rng);
  std::sort(c.begin(), c.end());
  for (std::size_t k = 1; k < n; ++k) c[k] = std::max(c[k], c[k - 1] + 0.05);
  return c;
}

}  // namespace

// ---- ordered_logistic, ordered_probit ------------------------------------------------------------

TEST_CASE("ordered_logistic / ordered_probit: log pmf against plain doubles and Boost.Math, gradients",
          "[distributions][ordered_logistic]") {
  constexpr std::size_t n = 12, cuts = 3;  // K = 4
  const std::vector<double> y{1, 2, 3, 4, 4, 3, 2, 1, 2, 2, 3, 1};
  vector_param<"eta", n> eta;
  vector_param<"c", cuts> c;
  param<"e"> e;
  const auto fl = compile(ordered_logistic(eta, c).log_prob(data(y)), eta, c);
  const auto fp = compile(ordered_probit(eta, c).log_prob(data(y)), eta, c);
  const auto sl = compile(ordered_logistic(e, c).log_prob(data(y)), e, c);  // one eta for all
  const auto sp = compile(ordered_probit(e, c).log_prob(data(y)), e, c);
  std::mt19937_64 rng(101);
  std::uniform_real_distribution<double> ueta(-4, 4);
  for (int r = 0; r < 40; ++r) {
    std::vector<double> p(n);
    for (auto& v : p) v = ueta(rng);
    const auto cv = sorted_cutpoints(rng, cuts, -3, 3);
    p.insert(p.end(), cv.begin(), cv.end());
    std::vector<double> ps{p[0]};
    ps.insert(ps.end(), cv.begin(), cv.end());
    for (bool probit : {false, true}) {
      long double ref = 0, ref_s = 0;
      double plain = 0, plain_s = 0;
      for (std::size_t i = 0; i < n; ++i) {
        ref += ordinal_boost(probit, y[i], p[i], cv);
        ref_s += ordinal_boost(probit, y[i], p[0], cv);
        plain += ordinal_plain(probit, y[i], p[i], cv);
        plain_s += ordinal_plain(probit, y[i], p[0], cv);
      }
      const char* what = probit ? "ordered_probit" : "ordered_logistic";
      const double v = probit ? fp.value(p) : fl.value(p);
      const double vs = probit ? sp.value(ps) : sl.value(ps);
      tyche_test::discrete::check_log_pmf(v, ref, std::string(what) + " (Boost)");
      tyche_test::discrete::check_log_pmf(v, plain, std::string(what) + " (plain doubles)");
      tyche_test::discrete::check_log_pmf(vs, ref_s, std::string(what) + ", scalar eta (Boost)");
      tyche_test::discrete::check_log_pmf(vs, plain_s, std::string(what) + ", scalar eta (plain doubles)");
    }
    if (r < 6) {
      tyche_test::check_gradient_at(fl, p, "ordered_logistic");
      tyche_test::check_gradient_at(fp, p, "ordered_probit");
      tyche_test::check_gradient_at(sl, ps, "ordered_logistic, scalar eta");
      tyche_test::check_gradient_at(sp, ps, "ordered_probit, scalar eta");
    }
  }
  // One observation given as a number, cutpoints as data.
  const std::vector<double> cd{-1.0, 0.5, 2.0};
  const auto one = compile(ordered_probit(e, data(cd)).log_prob(constant{3.0}), e);
  for (double x : {-2.0, 0.3, 1.7}) {
    tyche_test::discrete::check_log_pmf(one.value(std::vector<double>{x}), ordinal_boost(true, 3, x, cd),
                                        "ordered_probit, one observation");
    tyche_test::check_gradient_at(one, {x}, "ordered_probit, one observation");
  }
  // K = 2 (one cutpoint: the logit / probit model), eta = X beta through matvec.
  const std::vector<double> y2{1, 2, 2, 1, 2};
  const std::vector<double> xd{0.5, -1.0, 2.0, 0.1, -0.3, 1.2, 1.5, 0.7, -2.0, 0.0};  // 5 × 2
  vector_param<"beta", 2> beta;
  vector_param<"c1", 1> c1;
  const auto two = compile(ordered_logistic(matvec(matrix(xd.data(), 5, 2), beta), c1).log_prob(data(y2)) +
                               ordered_probit(matvec(matrix(xd.data(), 5, 2), beta), c1).log_prob(data(y2)),
                           beta, c1);
  for (const auto& p : tyche_test::random_points(10, 3, -2, 2, 105)) {
    long double ref = 0;
    for (std::size_t i = 0; i < 5; ++i) {
      const double e = xd[2 * i] * p[0] + xd[2 * i + 1] * p[1];
      ref += ordinal_boost(false, y2[i], e, {p[2]}) + ordinal_boost(true, y2[i], e, {p[2]});
    }
    tyche_test::discrete::check_log_pmf(two.value(p), ref, "ordered_logistic + ordered_probit, K = 2, matvec");
    tyche_test::check_gradient_at(two, p, "ordered_logistic + ordered_probit, K = 2, matvec");
  }
  // SIMD lanes (chains) and float against the scalar double evaluation.
  std::vector<std::vector<double>> pts;
  for (int r = 0; r < 8; ++r) {
    std::vector<double> p(n);
    for (auto& v : p) v = ueta(rng);
    const auto cv = sorted_cutpoints(rng, cuts, -3, 3);
    p.insert(p.end(), cv.begin(), cv.end());
    pts.push_back(p);
  }
  tyche_test::check_lanes(fl, pts, "ordered_logistic (lanes)");
  tyche_test::check_lanes(fp, pts, "ordered_probit (lanes)");
  tyche_test::check_float(fl, pts[0], "ordered_logistic (float)");
  tyche_test::check_float(fp, pts[0], "ordered_probit (float)");
}

TEST_CASE("ordered_logistic / ordered_probit: the tails", "[distributions][ordered_logistic]") {
  // Far from the cutpoints every category's probability is a difference of two numbers close to
  // 1 or close to 0, or underflows: the log is still accurate to 1e-12 against Boost in long
  // double, and the gradient against finite differences.
  const std::vector<double> cv{-1.0, 0.0, 1.5};
  param<"e"> e;
  for (double cat : {1.0, 2.0, 3.0, 4.0}) {
    const auto fl = compile(ordered_logistic(e, data(cv)).log_prob(constant{cat}), e);
    const auto fp = compile(ordered_probit(e, data(cv)).log_prob(constant{cat}), e);
    for (double x : {-700.0, -60.0, -39.0, -36.0, -20.0, -8.0, 8.0, 20.0, 36.0, 39.0, 60.0, 700.0}) {
      INFO("category " << cat << ", eta = " << x);
      tyche_test::discrete::check_log_pmf(fl.value(std::vector<double>{x}), ordinal_boost(false, cat, x, cv),
                                          "ordered_logistic tail");
      if (std::fabs(x) < 100) {
        tyche_test::discrete::check_log_pmf(fp.value(std::vector<double>{x}), ordinal_boost(true, cat, x, cv),
                                            "ordered_probit tail");
        tyche_test::check_gradient_at(fp, {x}, "ordered_probit tail");
      }
      tyche_test::check_gradient_at(fl, {x}, "ordered_logistic tail");
    }
  }
}

TEST_CASE("ordered_logistic / ordered_probit: draws have the category probabilities",
          "[distributions][ordered_logistic]") {
  const std::vector<double> cv{-1.0, 0.2, 1.5, 1.6};
  for (bool probit : {false, true}) {
    for (double eta : {-0.7, 1.1}) {
      std::mt19937_64 rng(probit ? 7 : 8);
      const std::vector<double> ev{eta};
      const auto xs = probit ? ordered_probit_distribution<constant, data_vector<>>::draw_all(
                                   rng, tyche_test::discrete::sample_size, ev, cv)
                             : ordered_logistic_distribution<constant, data_vector<>>::draw_all(
                                   rng, tyche_test::discrete::sample_size, ev, cv);
      tyche_test::discrete::check_chi_square(
          xs,
          [&](long long k) {
            return k >= 1 && k <= 5 ? std::exp(double(ordinal_boost(probit, double(k), eta, cv))) : 0.0;
          },
          probit ? "ordered_probit draws" : "ordered_logistic draws");
    }
  }
}

TEST_CASE("ordered_logistic: a regression model with ordered cutpoints", "[distributions][ordered_logistic]") {
  // beta ~ normal(0, 2), c ~ ordered normal(0, 5), y ~ ordered_logistic(x * beta, c), and the
  // same likelihood as a free term through ordered_probit_lpmf / ordered_logistic_lpmf.
  const std::vector<double> x{-1.2, 0.3, 0.8, 2.0, -0.4, 1.1, -2.2};
  const std::vector<double> y{1, 2, 3, 4, 2, 3, 1};
  auto m = model([&] {
    auto beta = normal<"beta">(0.0, 2.0);
    auto c = ordered<"c">(normal(0.0, 5.0), shape<3>);
    return joint(beta, c, ordered_logistic(beta * data(x), c).observe(data(y)));
  });
  auto mt = model([&] {
    auto beta = normal<"beta">(0.0, 2.0);
    auto c = ordered<"c">(normal(0.0, 5.0), shape<3>);
    return joint(beta, c, target(ordered_logistic_lpmf(data(y), beta * data(x), c)),
                 target(ordered_probit_lpmf(data(y), beta * data(x), c)));
  });
  REQUIRE(m.dim() == 4);
  for (const auto& theta : tyche_test::random_points(5, 4, -1, 1, 111)) {
    const auto v = m.constrain(theta);
    const double beta = v[0];
    const std::vector<double> cv(v.begin() + 1, v.end());
    long double lik = 0, lik_probit = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      lik += ordinal_boost(false, y[i], beta * x[i], cv);
      lik_probit += ordinal_boost(true, y[i], beta * x[i], cv);
    }
    double prior = -0.5 * beta * beta / 4 - std::log(2.0) - 0.5 * std::log(2 * M_PI);
    for (double cc : cv) prior += -0.5 * cc * cc / 25 - std::log(5.0) - 0.5 * std::log(2 * M_PI);
    CHECK(m.log_prob(theta, false) == Approx(double(lik) + prior).epsilon(1e-12));
    CHECK(mt.log_prob(theta, false) == Approx(double(lik + lik_probit) + prior).epsilon(1e-12));
    tyche_test::check_gradient_at(m.program(), theta, "ordered_logistic model");
    tyche_test::check_gradient_at(mt.program(), theta, "ordered lpmf model");
  }
  std::mt19937_64 rng(3);
  const auto obs = m.sample_observations(std::vector<double>{0.5, -1.0, 0.0, 0.3}, rng);
  REQUIRE(obs.size() == 1);
  REQUIRE(obs[0].size() == y.size());
  for (double v : obs[0]) CHECK((v == 1 || v == 2 || v == 3 || v == 4));
}

TEST_CASE("ordered_logistic / ordered_probit: data errors name the index and value",
          "[distributions][ordered_logistic]") {
  vector_param<"c", 3> c;
  param<"e"> e;
  const std::vector<double> zero{1, 0};
  CHECK_THROWS_WITH(ordered_logistic(e, c).observe(data(zero)),
                    Contains("tyche::ordered_logistic(...).observe(y): y[2] = 0 is not a category 1 … 4 (categories "
                             "count from 1, as in Stan"));
  const std::vector<double> big{1, 2, 5};
  CHECK_THROWS_WITH(ordered_probit(e, c).observe(data(big)),
                    Contains("tyche::ordered_probit(...).observe(y): y[3] = 5 is not a category 1 … 4"));
  CHECK_THROWS_WITH(ordered_logistic(e, c).log_prob(data(big)), Contains("y[3] = 5 is not a category 1 … 4"));
  const std::vector<double> fractional{2.5};
  CHECK_THROWS_WITH(ordered_logistic(e, c).observe(data(fractional)), Contains("y[1] = 2.5 is not a category"));
  vector_param<"eta", 3> eta;
  const std::vector<double> y2{1, 2};
  CHECK_THROWS_WITH(ordered_logistic(eta, c).observe(data(y2)), Contains("eta has size 3 but y has size 2"));
  const std::vector<double> unordered{-1.0, 0.5, 0.5};
  CHECK_THROWS_WITH(ordered_probit(e, data(unordered)).observe(data(y2)),
                    Contains("c[3] = 0.5 is not greater than c[2] = 0.5"));
  const std::vector<double> none;
  CHECK_THROWS_WITH(ordered_logistic(e, data(none)).observe(data(y2)), Contains("c has no cutpoints"));
  CHECK_THROWS_WITH(ordered_logistic_lpmf(data(big), e, c), Contains("y[3] = 5 is not a category 1 … 4"));
  // Cutpoints declared without the ordered transform: NaN where they are out of order, and the
  // message that names the term says why.
  static const std::vector<double> y5{1, 3, 2, 4};
  auto b = normal<"b">(0.0, 1.0);
  auto plain = normal<"c">(0.0, 5.0, shape<3>);
  const auto m = model(joint(b, plain, ordered_probit(b, plain).observe(data(y5))));
  const std::vector<double> out_of_order{0.1, -1.0, 1.0, 0.5};
  CHECK(std::isnan(m.log_prob(out_of_order)));
  CHECK_THAT(m.non_finite_terms(out_of_order),
             Contains("term 3 of joint(...), ordered_probit(...).observe(y)") &&
                 Contains("NaN where the cutpoints c do not increase: declare them with ordered<\"c\">(...)"));
  CHECK(m.non_finite_terms(std::vector<double>{0.1, -1.0, 0.5, 1.0}).empty());
}

// ---- multinomial, multinomial_logit ---------------------------------------------------------------

namespace {
/// log multinomial(y | theta) with plain doubles: lgamma(N + 1) − Σ lgamma(yₖ + 1) + Σ yₖ log θₖ.
double multinomial_plain(const std::vector<double>& y, const std::vector<double>& theta) {
  double n = 0, lp = 0;
  for (std::size_t k = 0; k < y.size(); ++k) {
    n += y[k];
    lp += y[k] * std::log(theta[k]) - std::lgamma(y[k] + 1);
  }
  return lp + std::lgamma(n + 1);
}
/// The same with Boost.Math's lgamma in long double.
long double multinomial_boost(const std::vector<double>& y, const std::vector<long double>& theta) {
  long double n = 0, lp = 0;
  for (std::size_t k = 0; k < y.size(); ++k) {
    n += y[k];
    lp += y[k] * std::log(theta[k]) - boost::math::lgamma(static_cast<long double>(y[k]) + 1);
  }
  return lp + boost::math::lgamma(n + 1);
}
/// softmax(g) in long double.
std::vector<long double> softmax(const std::vector<double>& g) {
  long double z = 0;
  for (double v : g) z += std::exp(static_cast<long double>(v));
  std::vector<long double> p;
  for (double v : g) p.push_back(std::exp(static_cast<long double>(v)) / z);
  return p;
}
}  // namespace

TEST_CASE("multinomial / multinomial_logit: log pmf against plain doubles and Boost.Math, gradients",
          "[distributions][multinomial]") {
  const std::vector<double> y{3, 0, 5, 2, 11};
  vector_param<"u", 5> u;
  const auto theta = exp(u - log_sum_exp(u));  // a simplex, as the simplex transform makes it
  const auto f = compile(multinomial(theta).log_prob(data(y)), u);
  const auto g = compile(multinomial_logit(u).log_prob(data(y)), u);
  const auto h = compile(multinomial_lpmf(data(y), theta) + multinomial_logit_lpmf(data(y), u), u);
  for (const auto& p : tyche_test::random_points(40, 5, -3, 3, 201)) {
    const auto th = softmax(p);
    const std::vector<double> thd(th.begin(), th.end());
    const long double ref = multinomial_boost(y, th);
    tyche_test::discrete::check_log_pmf(f.value(p), ref, "multinomial (Boost)");
    tyche_test::discrete::check_log_pmf(f.value(p), multinomial_plain(y, thd), "multinomial (plain doubles)");
    tyche_test::discrete::check_log_pmf(g.value(p), ref, "multinomial_logit (Boost)");
    tyche_test::discrete::check_log_pmf(g.value(p), multinomial_plain(y, thd), "multinomial_logit (plain doubles)");
    tyche_test::discrete::check_log_pmf(h.value(p), 2 * ref, "multinomial_lpmf + multinomial_logit_lpmf");
  }
  for (const auto& p : tyche_test::random_points(6, 5, -3, 3, 202)) {
    tyche_test::check_gradient_at(f, p, "multinomial");
    tyche_test::check_gradient_at(g, p, "multinomial_logit");
  }
  tyche_test::check_lanes(g, tyche_test::random_points(8, 5, -3, 3, 203), "multinomial_logit (lanes)");
  // Data theta: the whole term is a constant, folded when the program is built.
  const std::vector<double> td{0.1, 0.2, 0.3, 0.15, 0.25};
  param<"s"> s;
  const auto c = compile(multinomial(data(td)).log_prob(data(y)) + s, s);
  tyche_test::discrete::check_log_pmf(c.value(std::vector<double>{0.0}),
                                      multinomial_boost(y, {0.1L, 0.2L, 0.3L, 0.15L, 0.25L}), "multinomial, data theta");
}

TEST_CASE("multinomial / multinomial_logit: draws keep the observed total and have the moments",
          "[distributions][multinomial]") {
  const std::vector<double> y{4, 1, 0, 15};  // N = 20
  const std::vector<double> theta{0.1, 0.25, 0.05, 0.6};
  std::vector<double> gamma;
  for (double t : theta) gamma.push_back(std::log(t) + 0.7);  // softmax(gamma) = theta
  const auto d = multinomial(data(theta)).observe(data(y)).distribution;
  const auto dl = multinomial_logit(data(gamma)).observe(data(y)).distribution;
  for (int logit = 0; logit < 2; ++logit) {
    std::mt19937_64 rng(31 + logit);
    std::vector<std::vector<double>> counts(4);
    for (std::size_t r = 0; r < tyche_test::discrete::sample_size; ++r) {
      const auto x = logit ? dl.draw_all(rng, 4, gamma) : d.draw_all(rng, 4, theta);
      REQUIRE(x[0] + x[1] + x[2] + x[3] == 20.0);
      for (int k = 0; k < 4; ++k) counts[k].push_back(x[k]);
    }
    for (int k = 0; k < 4; ++k)
      tyche_test::discrete::check_moments(counts[k], 20 * theta[k], 20 * theta[k] * (1 - theta[k]),
                                          logit ? "multinomial_logit draws" : "multinomial draws");
  }
}

TEST_CASE("multinomial: a model with a Dirichlet prior", "[distributions][multinomial]") {
  const std::vector<double> alpha{1.0, 2.0, 0.5};
  const std::vector<double> y{7, 2, 1};
  auto m = model([&] {
    auto theta = dirichlet<"theta">(data(alpha));
    return joint(theta, multinomial(theta).observe(data(y)));
  });
  REQUIRE(m.dim() == 3);
  for (const auto& p : tyche_test::random_points(5, 3, -1, 1, 211)) {
    const auto th = m.constrain(p);
    long double expected = multinomial_boost(y, {th[0], th[1], th[2]});
    expected += std::lgamma(3.5L) - std::lgamma(1.0L) - std::lgamma(2.0L) - std::lgamma(0.5L) +
                std::log(static_cast<long double>(th[1])) - 0.5L * std::log(static_cast<long double>(th[2]));
    CHECK(m.log_prob(p, false) == Approx(double(expected)).epsilon(1e-12));
    tyche_test::check_gradient_at(m.program(), p, "dirichlet + multinomial model");
  }
  std::mt19937_64 rng(5);
  const auto obs = m.sample_observations(std::vector<double>{0.2, -0.3, 0.1}, rng);
  REQUIRE(obs.size() == 1);
  REQUIRE(obs[0].size() == 3);
  CHECK(obs[0][0] + obs[0][1] + obs[0][2] == 10.0);
}

TEST_CASE("multinomial / multinomial_logit: data errors name the index and value", "[distributions][multinomial]") {
  vector_param<"g", 3> g;
  const std::vector<double> negative{1, -2, 3};
  CHECK_THROWS_WITH(multinomial_logit(g).observe(data(negative)),
                    Contains("tyche::multinomial_logit(...).observe(y): y[2] = -2 is not a non-negative integer count"));
  const std::vector<double> fractional{1, 2, 0.5};
  CHECK_THROWS_WITH(multinomial(exp(g)).observe(data(fractional)),
                    Contains("tyche::multinomial(...).observe(y): y[3] = 0.5 is not a non-negative integer count"));
  const std::vector<double> four{1, 2, 3, 4};
  CHECK_THROWS_WITH(multinomial(exp(g)).observe(data(four)), Contains("y has size 4 but theta has size 3"));
  CHECK_THROWS_WITH(multinomial_logit_lpmf(data(four), g), Contains("y has size 4 but gamma has size 3"));
  const std::vector<double> y{1, 2, 3};
  const std::vector<double> not_simplex{0.2, 0.2, 0.2};
  CHECK_THROWS_WITH(multinomial_lpmf(data(y), data(not_simplex)), Contains("theta sums to 0.6, not 1"));
  const std::vector<double> negative_theta{0.7, -0.2, 0.5};
  CHECK_THROWS_WITH(multinomial_lpmf(data(y), data(negative_theta)),
                    Contains("theta must be >= 0, but theta[2] = -0.2"));
}

TEST_CASE("multinomial / multinomial_logit of N rows of K counts (a data matrix): each row its own multinomial",
          "[distributions][multinomial]") {
  // Stan's for (n) y[n] ~ multinomial_logit(gamma[n]): rows of different totals.
  const std::vector<double> y{3, 0, 5, 1, 1, 1, 0, 7, 2, 4, 4, 0};  // 4 rows of 3
  const auto ym = matrix(y, 4, 3);
  vector_param<"g", 12> g;  // a γ per row, row after row
  vector_param<"h", 3> h;   // one γ for every row
  const auto by_row = compile(multinomial_logit(g).log_prob(ym), g);
  const auto shared = compile(multinomial_logit(h).log_prob(ym), h);
  const auto theta_rows = compile(multinomial(exp(g)).log_prob(ym), g);  // θ need not sum to 1 here
  auto rows_ref = [&](const std::vector<double>& a, bool logit, bool per_row) {
    long double total = 0;
    for (std::size_t r = 0; r < 4; ++r) {
      const std::vector<double> yr(y.begin() + 3 * r, y.begin() + 3 * r + 3);
      const std::size_t at = per_row ? 3 * r : 0;
      const std::vector<double> ar(a.begin() + at, a.begin() + at + 3);
      std::vector<long double> th;
      if (logit) th = softmax(ar);
      else
        for (double v : ar) th.push_back(std::exp(static_cast<long double>(v)));
      total += multinomial_boost(yr, th);
    }
    return total;
  };
  for (const auto& p : tyche_test::random_points(10, 12, -2, 2, 221)) {
    tyche_test::discrete::check_log_pmf(by_row.value(p), rows_ref(p, true, true), "multinomial_logit, N rows of K");
    tyche_test::discrete::check_log_pmf(theta_rows.value(p), rows_ref(p, false, true), "multinomial, N rows of K");
    tyche_test::check_gradient_at(by_row, p, "multinomial_logit, N rows of K");
    tyche_test::check_gradient_at(theta_rows, p, "multinomial, N rows of K");
  }
  for (const auto& p : tyche_test::random_points(10, 3, -2, 2, 222)) {
    tyche_test::discrete::check_log_pmf(shared.value(p), rows_ref(p, true, false), "multinomial_logit, one gamma");
    tyche_test::check_gradient_at(shared, p, "multinomial_logit, one gamma");
  }
  tyche_test::check_lanes(by_row, tyche_test::random_points(8, 12, -2, 2, 223), "multinomial_logit rows (lanes)");
  // Not the same as one multinomial over the 12 counts (what a flat vector means).
  const auto flat = compile(multinomial_logit(g).log_prob(data(y)), g);
  const std::vector<double> p0(12, 0.3);
  CHECK(std::fabs(flat.value(p0) - by_row.value(p0)) > 1.0);

  // Predictive draws (what posterior_predictive calls) keep each row's observed total.
  const std::vector<double> shared_gamma{0.2, -0.3, 0.1};
  const auto d = multinomial_logit(data(shared_gamma)).observe(ym).distribution;
  std::mt19937_64 rng(7);
  const auto obs = d.draw_all(rng, 1, shared_gamma);
  REQUIRE(obs.size() == 12);
  for (std::size_t r = 0; r < 4; ++r) CHECK(obs[3 * r] + obs[3 * r + 1] + obs[3 * r + 2] == y[3 * r] + y[3 * r + 1] + y[3 * r + 2]);

  // Errors name the size, the row and the column.
  vector_param<"five", 5> five;
  CHECK_THROWS_WITH(multinomial_logit(five).observe(ym),
                    Contains("gamma has size 5 but y is 4 rows of 3 counts: it needs 3 values (shared by the rows) or 12"));
  std::vector<double> bad = y;
  bad[5] = 0.5;
  CHECK_THROWS_WITH(multinomial_logit(h).observe(matrix(bad, 4, 3)), Contains("y[2, 3] = 0.5 is not a non-negative integer count"));
  const std::vector<double> theta_rows_data{0.2, 0.3, 0.5, 0.2, 0.2, 0.2, 0.1, 0.1, 0.8, 1.0, 0.0, 0.0};
  CHECK_THROWS_WITH(multinomial(data(theta_rows_data)).observe(ym), Contains("theta row 2 sums to 0.6, not 1"));
}

TEST_CASE("dirichlet_multinomial: log pmf against Boost.Math's lgamma, gradients, N rows, draws, errors",
          "[distributions][multinomial]") {
  auto reference = [](const std::vector<double>& y, const std::vector<double>& alpha) {
    long double n = 0, a0 = 0, lp = 0;
    for (std::size_t k = 0; k < y.size(); ++k) {
      const long double yk = y[k], ak = alpha[k];
      n += yk;
      a0 += ak;
      lp += boost::math::lgamma(yk + ak) - boost::math::lgamma(ak) - boost::math::lgamma(yk + 1);
    }
    return lp + boost::math::lgamma(a0) + boost::math::lgamma(n + 1) - boost::math::lgamma(n + a0);
  };
  const std::vector<double> y{3, 0, 5, 2};
  vector_param<"u", 4> u;
  const auto f = compile(dirichlet_multinomial(exp(u)).log_prob(data(y)) + dirichlet_multinomial_lpmf(data(y), exp(u)), u);
  const std::vector<double> y_rows{3, 0, 5, 2, 1, 1, 0, 7, 0, 0, 0, 1};  // 3 rows of 4
  const auto rows = compile(dirichlet_multinomial(exp(u)).log_prob(matrix(y_rows, 3, 4)), u);
  for (const auto& p : tyche_test::random_points(20, 4, -2, 2, 231)) {
    std::vector<double> a;
    for (double v : p) a.push_back(std::exp(v));
    tyche_test::discrete::check_log_pmf(f.value(p), 2 * reference(y, a), "dirichlet_multinomial");
    long double by_row = 0;
    for (std::size_t r = 0; r < 3; ++r)
      by_row += reference(std::vector<double>(y_rows.begin() + 4 * r, y_rows.begin() + 4 * r + 4), a);
    tyche_test::discrete::check_log_pmf(rows.value(p), by_row, "dirichlet_multinomial, N rows");
  }
  for (const auto& p : tyche_test::random_points(6, 4, -2, 2, 232)) {
    tyche_test::check_gradient_at(f, p, "dirichlet_multinomial");
    tyche_test::check_gradient_at(rows, p, "dirichlet_multinomial, N rows");
  }
  tyche_test::check_lanes(rows, tyche_test::random_points(8, 4, -2, 2, 233), "dirichlet_multinomial (lanes)");
  // Draws: the observed total, and the mean N αₖ / A.
  const std::vector<double> alpha{1.0, 2.0, 0.5, 4.5};  // A = 8
  const std::vector<double> y20{4, 1, 0, 15};          // N = 20
  const auto d = dirichlet_multinomial(data(alpha)).observe(data(y20)).distribution;
  std::mt19937_64 rng(41);
  std::vector<std::vector<double>> counts(4);
  for (std::size_t r = 0; r < tyche_test::discrete::sample_size; ++r) {
    const auto x = d.draw_all(rng, 4, alpha);
    REQUIRE(x[0] + x[1] + x[2] + x[3] == 20.0);
    for (int k = 0; k < 4; ++k) counts[k].push_back(x[k]);
  }
  for (int k = 0; k < 4; ++k) {
    // Var = N pₖ (1 − pₖ) (N + A) / (1 + A).
    const double pk = alpha[k] / 8.0;
    tyche_test::discrete::check_moments(counts[k], 20 * pk, 20 * pk * (1 - pk) * 28.0 / 9.0, "dirichlet_multinomial draws");
  }
  // alpha must be positive; sizes and counts are named.
  const std::vector<double> zero_alpha{1.0, 0.0, 1.0, 1.0};
  CHECK_THROWS_WITH(dirichlet_multinomial_lpmf(data(y), data(zero_alpha)), Contains("alpha must be > 0"));
  vector_param<"three", 3> three;
  CHECK_THROWS_WITH(dirichlet_multinomial(exp(three)).observe(data(y)), Contains("y has size 4 but alpha has size 3"));
}

// ---- multi_student_t, multi_student_t_cholesky ----------------------------------------------------

namespace {
using matrix_ld = std::vector<long double>;

/// The lower Cholesky factor of a K × K symmetric positive-definite matrix, in long double.
matrix_ld cholesky_ld(const std::vector<double>& a, std::size_t k) {
  matrix_ld l(k * k, 0.0L);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      long double s = a[i * k + j];
      for (std::size_t p = 0; p < j; ++p) s -= l[i * k + p] * l[j * k + p];
      l[i * k + j] = i == j ? std::sqrt(s) : s / l[j * k + j];
    }
  return l;
}

/// log multi_student_t(x | nu, mu, Sigma) by the closed form, with Sigma = L Lᵀ factored here:
/// lgamma((ν + K)/2) − lgamma(ν/2) − (K/2) log(νπ) − Σ log Lᵢᵢ − ((ν + K)/2) log(1 + ‖L⁻¹(x − μ)‖²/ν).
long double multi_student_t_ref(const std::vector<double>& x, double nu, const std::vector<double>& mu,
                                const std::vector<double>& sigma) {
  const std::size_t k = x.size();
  const auto l = cholesky_ld(sigma, k);
  std::vector<long double> z(k);
  long double q = 0, log_det_half = 0;
  for (std::size_t i = 0; i < k; ++i) {
    long double acc = static_cast<long double>(x[i]) - mu[i];
    for (std::size_t j = 0; j < i; ++j) acc -= l[i * k + j] * z[j];
    z[i] = acc / l[i * k + i];
    q += z[i] * z[i];
    log_det_half += std::log(l[i * k + i]);
  }
  const long double kd = static_cast<long double>(k), n = nu;
  return std::lgamma((n + kd) / 2) - std::lgamma(n / 2) - kd / 2 * std::log(n * 3.14159265358979323846L) -
         log_det_half - (n + kd) / 2 * std::log1p(q / n);
}

/// Σᵢⱼ = sᵢ sⱼ ρ^|i−j|, K = 3.
std::vector<double> covariance3() {
  const double s[3] = {1.0, 2.0, 0.5};
  std::vector<double> c(9);
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j) c[i * 3 + j] = s[i] * s[j] * std::pow(0.6, std::fabs(double(i) - double(j)));
  return c;
}

/// The cholesky_factor_cov map written out: u fills the lower triangle row by row, the diagonal
/// exponentiated; and L Lᵀ (the cov_matrix map).
std::vector<double> cov_factor_of(const std::vector<double>& u, std::size_t k) {
  std::vector<double> l(k * k, 0.0);
  std::size_t p = 0;
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j <= i; ++j, ++p) l[i * k + j] = j == i ? std::exp(u[p]) : u[p];
  return l;
}
std::vector<double> cov_of(const std::vector<double>& u, std::size_t k) {
  const auto l = cov_factor_of(u, k);
  std::vector<double> s(k * k);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j) {
      double acc = 0;
      for (std::size_t p = 0; p < k; ++p) acc += l[i * k + p] * l[j * k + p];
      s[i * k + j] = acc;
    }
  return s;
}

std::vector<double> slice(const std::vector<double>& v, std::size_t from, std::size_t n) {
  return std::vector<double>(v.begin() + long(from), v.begin() + long(from + n));
}
}  // namespace

TEST_CASE("multi_student_t: log density against a closed form with a Cholesky written here, data matrix",
          "[distributions][multi_student_t]") {
  constexpr std::size_t K = 3;
  const auto sigma = covariance3();
  const auto lld = cholesky_ld(sigma, K);
  const std::vector<double> l(lld.begin(), lld.end());
  vector_param<"x", K> x;
  vector_param<"m", K> m;
  param<"nu"> nu;
  const auto f = compile(multi_student_t(nu, m, matrix(sigma.data(), K, K)).log_prob(x), x, m, nu);
  const auto g = compile(multi_student_t_cholesky(nu, m, matrix(l.data(), K, K)).log_prob(x), x, m, nu);
  const auto h = compile(multi_student_t_lpdf(x, 4.5, 0.25, matrix(sigma.data(), K, K)), x);
  std::mt19937_64 rng(301);
  std::uniform_real_distribution<double> unu(0.3, 25);
  for (const auto& xm : tyche_test::random_points(40, 2 * K, -3, 3, 302)) {
    auto p = xm;
    p.push_back(unu(rng));
    const long double ref = multi_student_t_ref(slice(p, 0, K), p[2 * K], slice(p, K, K), sigma);
    tyche_test::discrete::check_log_pmf(f.value(p), ref, "multi_student_t");
    tyche_test::discrete::check_log_pmf(g.value(p), ref, "multi_student_t_cholesky");
    tyche_test::discrete::check_log_pmf(h.value(slice(p, 0, K)),
                                        multi_student_t_ref(slice(p, 0, K), 4.5, {0.25, 0.25, 0.25}, sigma),
                                        "multi_student_t_lpdf");
  }
  for (int r = 0; r < 5; ++r) {
    auto p = tyche_test::random_points(1, 2 * K, -3, 3, 303 + unsigned(r))[0];
    p.push_back(unu(rng));
    tyche_test::check_gradient_at(f, p, "multi_student_t");
    tyche_test::check_gradient_at(g, p, "multi_student_t_cholesky");
  }
  std::vector<std::vector<double>> pts;
  for (auto p : tyche_test::random_points(8, 2 * K, -3, 3, 309)) {
    p.push_back(unu(rng));
    pts.push_back(p);
  }
  tyche_test::check_lanes(f, pts, "multi_student_t (lanes)");
}

TEST_CASE("multi_student_t: a parameter Sigma or L, N observations", "[distributions][multi_student_t][matrix]") {
  // Sigma = L Lᵀ from a cholesky_factor_cov parameter u; y holds N = 5 observations of K; mu is
  // one vector for every row, or one per row; ν a parameter.
  constexpr std::size_t K = 3, n = 5, U = K * (K + 1) / 2;
  const auto y = tyche_test::random_points(1, n * K, -3, 3, 311)[0];
  vector_param<"u", U> u;
  vector_param<"m", K> m;
  vector_param<"mm", n * K> mm;
  param<"nu"> nu;
  const transforms::cholesky_factor_cov factor{K};
  const transforms::cov_matrix cov{K};
  const auto f = compile(multi_student_t(nu, m, cov.constrain(u)).log_prob(data(y)), u, m, nu);
  const auto fc = compile(multi_student_t_cholesky(nu, m, factor.constrain(u)).log_prob(data(y)), u, m, nu);
  const auto fn = compile(multi_student_t(nu, mm, cov.constrain(u)).log_prob(data(y)), u, mm, nu);
  std::mt19937_64 rng(312);
  std::uniform_real_distribution<double> unu(0.5, 15);
  for (const auto& q : tyche_test::random_points(12, U + n * K, -1, 1, 313)) {
    const auto uu = slice(q, 0, U);
    const auto sigma = cov_of(uu, K);
    const double nv = unu(rng);
    long double ref = 0, refn = 0;
    for (std::size_t r = 0; r < n; ++r) {
      ref += multi_student_t_ref(slice(y, r * K, K), nv, slice(q, U, K), sigma);
      refn += multi_student_t_ref(slice(y, r * K, K), nv, slice(q, U + r * K, K), sigma);
    }
    auto pm = uu;
    for (std::size_t i = 0; i < K; ++i) pm.push_back(q[U + i]);
    pm.push_back(nv);
    auto pn = q;
    pn.push_back(nv);
    tyche_test::discrete::check_log_pmf(f.value(pm), ref, "multi_student_t(nu, m, L Lᵀ), 5 rows");
    tyche_test::discrete::check_log_pmf(fc.value(pm), ref, "multi_student_t_cholesky(nu, m, L), 5 rows");
    tyche_test::discrete::check_log_pmf(fn.value(pn), refn, "multi_student_t(nu, mm, L Lᵀ), a mean per row");
    tyche_test::check_gradient_at(f, pm, "multi_student_t(nu, m, L Lᵀ)");
    tyche_test::check_gradient_at(fc, pm, "multi_student_t_cholesky(nu, m, L)");
    tyche_test::check_gradient_at(fn, pn, "multi_student_t(nu, mm, L Lᵀ)");
  }
}

TEST_CASE("multi_student_t: prior draws have the mean and covariance", "[distributions][multi_student_t]") {
  // x ~ multi_student_t(8, mu, Sigma): mean mu, covariance 8/6 Sigma; the standard error of each
  // sample moment estimated from the draws (t tails: the sample's own fourth moments).
  constexpr std::size_t K = 3;
  const auto sigma = covariance3();
  const std::vector<double> mu{1.0, -2.0, 0.5};
  const auto lld = cholesky_ld(sigma, K);
  const std::vector<double> l(lld.begin(), lld.end());
  auto full = model([&] { return joint(multi_student_t<"x">(8.0, data(mu), matrix(sigma.data(), K, K))); });
  auto chol = model([&] {
    auto lp = flat<"L">(cholesky_factor_cov(K));
    return joint(lp, multi_student_t_cholesky<"x">(8.0, data(mu), lp));
  });
  auto fixed = do_<"L">(chol, data(l));
  REQUIRE(full.dim() == K);
  REQUIRE(fixed.dim() == K);
  for (const auto& p : tyche_test::random_points(3, K, -2, 2, 321))
    CHECK(fixed.log_prob(p) == Approx(full.log_prob(p)).epsilon(1e-13));
  for (int which = 0; which < 2; ++which) {
    std::mt19937_64 rng(322 + which);
    const std::size_t draws = 60000;
    std::vector<std::vector<double>> xs;
    for (std::size_t r = 0; r < draws; ++r) xs.push_back(which ? fixed.sample_prior(rng) : full.sample_prior(rng));
    std::vector<double> mean(K, 0.0);
    for (const auto& x : xs)
      for (std::size_t i = 0; i < K; ++i) mean[i] += x[i] / double(draws);
    for (std::size_t i = 0; i < K; ++i) {
      CHECK(std::fabs(mean[i] - mu[i]) < 4.5 * std::sqrt(8.0 / 6.0 * sigma[i * K + i] / double(draws)));
      for (std::size_t j = 0; j <= i; ++j) {
        std::vector<double> prod;
        for (const auto& x : xs) prod.push_back((x[i] - mean[i]) * (x[j] - mean[j]));
        double c = 0, v = 0;
        for (double pr : prod) c += pr / double(draws);
        for (double pr : prod) v += (pr - c) * (pr - c) / double(draws);
        INFO((which ? "multi_student_t_cholesky" : "multi_student_t") << " covariance " << i << ", " << j << ": " << c
                                                                      << " against " << 8.0 / 6.0 * sigma[i * K + j]);
        CHECK(std::fabs(c - 8.0 / 6.0 * sigma[i * K + j]) < 4.5 * std::sqrt(v / double(draws)));
      }
    }
  }
}

TEST_CASE("multi_student_t: errors name the argument and the entry", "[distributions][multi_student_t]") {
  vector_param<"x", 2> x;
  const std::vector<double> eye2{1, 0, 0, 1}, eye3{1, 0, 0, 0, 1, 0, 0, 0, 1};
  const std::vector<double> not_pd{1.0, 2.0, 2.0, 1.0};
  CHECK_THROWS_WITH(multi_student_t(3.0, x, matrix(not_pd.data(), 2, 2)),
                    Contains("tyche::multi_student_t(nu, mu, Sigma): Sigma is not positive definite (pivot 2"));
  CHECK_THROWS_WITH(multi_student_t(3.0, x, matrix(eye3.data(), 3, 3)), Contains("mu has size 2 but the matrix is 3 x 3"));
  vector_param<"y", 3> y;
  CHECK_THROWS_WITH(multi_student_t(3.0, 0.0, matrix(eye2.data(), 2, 2)).log_prob(y),
                    Contains("multi_student_t(nu, mu, Sigma): x has size 3 but the matrix is 2 x 2"));
  CHECK_THROWS_WITH(multi_student_t_lpdf(x, -1.0, 0.0, matrix(eye2.data(), 2, 2)),
                    Contains("tyche::multi_student_t(nu, mu, Sigma): nu must be > 0"));
  const std::vector<double> bad_l{1.0, 0.0, 0.3, -1.0};
  CHECK_THROWS_WITH(multi_student_t_cholesky(3.0, x, matrix(bad_l.data(), 2, 2)),
                    Contains("L[2, 2] = -1 must be a positive number"));
  vector_param<"l4", 4> l4;
  CHECK_THROWS_WITH(multi_student_t_cholesky(3.0, 0.0, l4).log_prob(y),
                    Contains("multi_student_t_cholesky(nu, mu, L): x has size 3, which is not a multiple of K = 2"));
  vector_param<"l5", 5> l5;
  CHECK_THROWS_WITH(multi_student_t(3.0, 0.0, l5), Contains("'Sigma' has 5 values"));
}

// ---- wishart, inv_wishart -------------------------------------------------------------------------

namespace {
/// log det A and A⁻¹ by Gauss–Jordan elimination with partial pivoting, in long double.
long double log_det_and_inverse(const std::vector<double>& a, std::size_t k, matrix_ld& inv) {
  matrix_ld m(a.begin(), a.end());
  inv.assign(k * k, 0.0L);
  for (std::size_t i = 0; i < k; ++i) inv[i * k + i] = 1;
  long double log_det = 0;
  for (std::size_t c = 0; c < k; ++c) {
    std::size_t piv = c;
    for (std::size_t r = c + 1; r < k; ++r)
      if (std::fabs(m[r * k + c]) > std::fabs(m[piv * k + c])) piv = r;
    for (std::size_t j = 0; j < k; ++j) {
      std::swap(m[c * k + j], m[piv * k + j]);
      std::swap(inv[c * k + j], inv[piv * k + j]);
    }
    const long double d = m[c * k + c];
    log_det += std::log(std::fabs(d));  // A is positive definite: the sign is +
    for (std::size_t j = 0; j < k; ++j) {
      m[c * k + j] /= d;
      inv[c * k + j] /= d;
    }
    for (std::size_t r = 0; r < k; ++r) {
      if (r == c) continue;
      const long double f = m[r * k + c];
      for (std::size_t j = 0; j < k; ++j) {
        m[r * k + j] -= f * m[c * k + j];
        inv[r * k + j] -= f * inv[c * k + j];
      }
    }
  }
  return log_det;
}

/// log Γ_K(a) = K(K − 1)/4 log π + Σ_{j=1..K} log Γ(a + (1 − j)/2).
long double log_multi_gamma(long double a, std::size_t k) {
  long double r = 0.25L * k * (k - 1.0L) * std::log(3.14159265358979323846L);
  for (std::size_t j = 1; j <= k; ++j) r += std::lgamma(a + (1.0L - j) / 2);
  return r;
}

/// log wishart(W | ν, S) and log inv_wishart(W | ν, S) by their closed forms (see wishart.hpp).
long double wishart_ref(bool inverse, const std::vector<double>& w, double nu, const std::vector<double>& s,
                        std::size_t k) {
  matrix_ld w_inv, s_inv;
  const long double ldw = log_det_and_inverse(w, k, w_inv), lds = log_det_and_inverse(s, k, s_inv);
  long double trace = 0;  // tr(S⁻¹W) or tr(S W⁻¹)
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j) trace += inverse ? s[i * k + j] * w_inv[j * k + i] : s_inv[i * k + j] * w[j * k + i];
  const long double n = nu, kd = static_cast<long double>(k), log2 = std::log(2.0L);
  if (inverse)
    return n / 2 * lds - n * kd / 2 * log2 - log_multi_gamma(n / 2, k) - (n + kd + 1) / 2 * ldw - trace / 2;
  return (n - kd - 1) / 2 * ldw - trace / 2 - n * kd / 2 * log2 - n / 2 * lds - log_multi_gamma(n / 2, k);
}
}  // namespace

namespace {
/// log multi_gp(y | Σ, w) = Σₖ log N(yₖ | 0, Σ/wₖ), y K rows of N, by a Cholesky written here.
long double multi_gp_ref(const std::vector<double>& y, const std::vector<double>& sigma, const std::vector<double>& w,
                         std::size_t n) {
  const auto l = cholesky_ld(sigma, n);
  long double log_det_half = 0;
  for (std::size_t i = 0; i < n; ++i) log_det_half += std::log(l[i * n + i]);
  long double r = 0;
  for (std::size_t k = 0; k * n < y.size(); ++k) {
    const long double wk = w.size() == 1 ? w[0] : w[k];
    std::vector<long double> z(n);
    long double q = 0;
    for (std::size_t i = 0; i < n; ++i) {
      long double acc = y[k * n + i];
      for (std::size_t j = 0; j < i; ++j) acc -= l[i * n + j] * z[j];
      z[i] = acc / l[i * n + i];
      q += z[i] * z[i];
    }
    r += -0.5L * wk * q + 0.5L * n * std::log(wk) - log_det_half - 0.5L * n * std::log(2 * 3.14159265358979323846L);
  }
  return r;
}
}  // namespace

TEST_CASE("multi_gp / multi_gp_cholesky: log density against the rows' normals, data and parameter matrices, "
          "gradients, lanes, draws, errors",
          "[distributions][multi_gp]") {
  constexpr std::size_t N = 3, K = 2, U = N * (N + 1) / 2;
  const auto sigma = covariance3();
  const auto lld = cholesky_ld(sigma, N);
  const std::vector<double> l(lld.begin(), lld.end());
  // Data Σ or L, w = exp(lw) parameters, y a parameter of K·N; the lpdf with data y and w.
  vector_param<"y", K * N> y;
  vector_param<"lw", K> lw;
  const std::vector<double> wd{0.5, 3.0};
  const auto f = compile(multi_gp(matrix(sigma.data(), N, N), exp(lw)).log_prob(y), y, lw);
  const auto g = compile(multi_gp_cholesky(matrix(l.data(), N, N), exp(lw)).log_prob(y), y, lw);
  const auto h = compile(multi_gp_lpdf(y, matrix(sigma.data(), N, N), data(wd)), y);
  for (const auto& p : tyche_test::random_points(20, K * N + K, -2, 2, 341)) {
    const std::vector<double> w{std::exp(p[K * N]), std::exp(p[K * N + 1])};
    const long double ref = multi_gp_ref(slice(p, 0, K * N), sigma, w, N);
    tyche_test::discrete::check_log_pmf(f.value(p), ref, "multi_gp, data Sigma");
    tyche_test::discrete::check_log_pmf(g.value(p), ref, "multi_gp_cholesky, data L");
    tyche_test::discrete::check_log_pmf(h.value(slice(p, 0, K * N)), multi_gp_ref(slice(p, 0, K * N), sigma, wd, N),
                                        "multi_gp_lpdf");
  }
  const auto pts = tyche_test::random_points(8, K * N + K, -2, 2, 342);
  for (const auto& p : pts) {
    tyche_test::check_gradient_at(f, p, "multi_gp, data Sigma");
    tyche_test::check_gradient_at(g, p, "multi_gp_cholesky, data L");
  }
  tyche_test::check_lanes(f, pts, "multi_gp (lanes)");

  // Σ = L Lᵀ of a parameter (cholesky_factor_cov u), data y of K = 2 rows; w one scalar exp(s).
  const auto yd = tyche_test::random_points(1, K * N, -2, 2, 343)[0];
  vector_param<"u", U> u;
  param<"s"> s;
  const transforms::cholesky_factor_cov factor{N};
  const transforms::cov_matrix cov{N};
  const auto fp = compile(multi_gp(cov.constrain(u), exp(lw)).log_prob(data(yd)), u, lw);
  const auto gp = compile(multi_gp_cholesky_lpdf(data(yd), factor.constrain(u), exp(s)), u, s);
  for (const auto& q : tyche_test::random_points(8, U + K, -1, 1, 344)) {
    const auto sig = cov_of(slice(q, 0, U), N);
    tyche_test::discrete::check_log_pmf(fp.value(q), multi_gp_ref(yd, sig, {std::exp(q[U]), std::exp(q[U + 1])}, N),
                                        "multi_gp, parameter Sigma");
    const auto qs = slice(q, 0, U + 1);
    tyche_test::discrete::check_log_pmf(gp.value(qs), multi_gp_ref(yd, sig, {std::exp(q[U])}, N),
                                        "multi_gp_cholesky, parameter L, one w");
    tyche_test::check_gradient_at(fp, q, "multi_gp, parameter Sigma");
    tyche_test::check_gradient_at(gp, qs, "multi_gp_cholesky, parameter L");
  }

  // Draws: row k has covariance Σ/wₖ (w = 0.5, 3), rows independent; 4.5 standard errors of each
  // sample moment, estimated from the draws.
  auto m = model([&] { return joint(multi_gp<"y">(matrix(sigma.data(), N, N), data(wd))); });
  REQUIRE(m.dim() == K * N);
  std::mt19937_64 rng(345);
  const std::size_t draws = 40000;
  std::vector<std::vector<double>> xs;
  for (std::size_t r = 0; r < draws; ++r) xs.push_back(m.sample_prior(rng));
  for (std::size_t a = 0; a < K * N; ++a)
    for (std::size_t b = 0; b <= a; ++b) {
      const std::size_t ka = a / N, kb = b / N, i = a % N, j = b % N;
      const double expected = ka == kb ? sigma[i * N + j] / wd[ka] : 0.0;
      double c = 0, v = 0;
      for (const auto& x : xs) c += x[a] * x[b] / double(draws);
      for (const auto& x : xs) v += (x[a] * x[b] - c) * (x[a] * x[b] - c) / double(draws);
      INFO("multi_gp draws: E[y" << a << " y" << b << "] = " << c << " against " << expected);
      CHECK(std::fabs(c - expected) < 4.5 * std::sqrt(v / double(draws)));
    }

  // Errors: shapes, a data Sigma that is not positive definite, a data L with a zero diagonal, w ≤ 0 data.
  const std::vector<double> not_pd{1.0, 2.0, 2.0, 1.0};
  const std::vector<double> bad_l{1.0, 0.0, 0.5, 0.0};
  const std::vector<double> w_bad{1.0, -2.0};
  vector_param<"y5", 5> y5;
  CHECK_THROWS_WITH(multi_gp(matrix(sigma.data(), N, N), exp(lw)).log_prob(y5),
                    Contains("tyche::multi_gp(Sigma, w): y has 5 values but Sigma is 3 x 3 and w has 2"));
  CHECK_THROWS_WITH(multi_gp(matrix(not_pd.data(), 2, 2), exp(lw)), Contains("tyche::multi_gp(Sigma, w): Sigma is not positive definite"));
  CHECK_THROWS_WITH(multi_gp_cholesky(matrix(bad_l.data(), 2, 2), exp(lw)),
                    Contains("tyche::multi_gp_cholesky(L, w): L[2, 2] = 0 must be a positive number"));
  CHECK_THROWS_WITH(multi_gp(matrix(sigma.data(), N, N), data(w_bad)), Contains("tyche::multi_gp(Sigma, w): w must be"));
  // A vector w must have one value per row (a single number is given as a number).
  const std::vector<double> w_one{2.0};
  CHECK_THROWS_WITH(multi_gp(matrix(sigma.data(), N, N), data(w_one)).log_prob(y),
                    Contains("tyche::multi_gp(Sigma, w): y has 6 values but Sigma is 3 x 3 and w has 1"));
}

TEST_CASE("wishart / inv_wishart: log density against the closed form, gradients in W, S and nu",
          "[distributions][wishart]") {
  constexpr std::size_t K = 3, U = K * (K + 1) / 2;
  const auto s = covariance3();
  const transforms::cov_matrix cov{K};
  vector_param<"u", U> u;
  param<"nu"> nu;
  // W a parameter (cov_matrix), S data.
  const auto fw = compile(wishart(nu, matrix(s.data(), K, K)).log_prob(cov.constrain(u)), u, nu);
  const auto fi = compile(inv_wishart(nu, matrix(s.data(), K, K)).log_prob(cov.constrain(u)), u, nu);
  // S a parameter, W data.
  const std::vector<double> w{2.0, 0.3, -0.4, 0.3, 1.5, 0.2, -0.4, 0.2, 0.8};
  const auto gw = compile(wishart(nu, cov.constrain(u)).log_prob(data(w)), u, nu);
  const auto gi = compile(inv_wishart(nu, cov.constrain(u)).log_prob(data(w)), u, nu);
  const auto lp = compile(wishart_lpdf(data(w), 5.0, cov.constrain(u)) + inv_wishart_lpdf(cov.constrain(u), 6.0, matrix(s.data(), K, K)), u);
  std::mt19937_64 rng(401);
  std::uniform_real_distribution<double> unu(double(K) - 0.5, double(K) + 8);
  for (const auto& uu : tyche_test::random_points(30, U, -1, 1, 402)) {
    const auto m = cov_of(uu, K);
    auto p = uu;
    p.push_back(unu(rng));
    tyche_test::discrete::check_log_pmf(fw.value(p), wishart_ref(false, m, p[U], s, K), "wishart, W a parameter");
    tyche_test::discrete::check_log_pmf(fi.value(p), wishart_ref(true, m, p[U], s, K), "inv_wishart, W a parameter");
    tyche_test::discrete::check_log_pmf(gw.value(p), wishart_ref(false, w, p[U], m, K), "wishart, S a parameter");
    tyche_test::discrete::check_log_pmf(gi.value(p), wishart_ref(true, w, p[U], m, K), "inv_wishart, S a parameter");
    tyche_test::discrete::check_log_pmf(lp.value(uu), wishart_ref(false, w, 5.0, m, K) + wishart_ref(true, m, 6.0, s, K),
                                        "wishart_lpdf + inv_wishart_lpdf");
  }
  for (const auto& uu : tyche_test::random_points(5, U, -1, 1, 403)) {
    auto p = uu;
    p.push_back(unu(rng));
    tyche_test::check_gradient_at(fw, p, "wishart, W a parameter");
    tyche_test::check_gradient_at(fi, p, "inv_wishart, W a parameter");
    tyche_test::check_gradient_at(gw, p, "wishart, S a parameter");
    tyche_test::check_gradient_at(gi, p, "inv_wishart, S a parameter");
  }
  std::vector<std::vector<double>> pts;
  for (auto p : tyche_test::random_points(8, U, -1, 1, 404)) {
    p.push_back(unu(rng));
    pts.push_back(p);
  }
  tyche_test::check_lanes(fw, pts, "wishart (lanes)");
  tyche_test::check_lanes(gi, pts, "inv_wishart (lanes)");
  tyche_test::check_float(fi, pts[0], "inv_wishart (float)");
}

namespace {
/// Each lower-triangle entry's draws (entries[i·K + j]) against the Wishart(ν, S) moments, or the
/// inverse Wishart's (ν > K + 3); the formulas in the test case below.
void check_wishart_moments(const std::vector<std::vector<double>>& entries, const std::vector<double>& s,
                           std::size_t k, double nu, bool inverse, const char* what) {
  const double kd = double(k);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      const double sij = s[i * k + j], sii = s[i * k + i], sjj = s[j * k + j];
      const double mean = inverse ? sij / (nu - kd - 1) : nu * sij;
      const double var = inverse ? ((nu - kd + 1) * sij * sij + (nu - kd - 1) * sii * sjj) /
                                       ((nu - kd) * (nu - kd - 1) * (nu - kd - 1) * (nu - kd - 3))
                                 : nu * (sij * sij + sii * sjj);
      tyche_test::discrete::check_moments(entries[i * k + j], mean, var, what);
    }
}
}  // namespace

TEST_CASE("wishart / inv_wishart: draws have the mean and variance", "[distributions][wishart]") {
  // Wishart(ν, S): E Wᵢⱼ = ν Sᵢⱼ, Var Wᵢⱼ = ν (Sᵢⱼ² + Sᵢᵢ Sⱼⱼ). Inverse Wishart (ν > K + 3):
  // E Wᵢⱼ = Sᵢⱼ / (ν − K − 1), Var Wᵢⱼ = ((ν − K + 1) Sᵢⱼ² + (ν − K − 1) Sᵢᵢ Sⱼⱼ) /
  // ((ν − K)(ν − K − 1)²(ν − K − 3)) (Press, Applied Multivariate Analysis, 1972, §5.2).
  constexpr std::size_t K = 3;
  const auto s = covariance3();
  const double nu = 9.0;
  const auto dw = wishart(nu, matrix(s.data(), K, K));
  const auto di = inv_wishart(nu, matrix(s.data(), K, K));
  for (int inverse = 0; inverse < 2; ++inverse) {
    std::mt19937_64 rng(411 + inverse);
    std::vector<std::vector<double>> entries(K * K);
    for (std::size_t r = 0; r < tyche_test::discrete::sample_size; ++r) {
      const auto x = inverse ? di.draw_all(rng, K * K, {nu}, s) : dw.draw_all(rng, K * K, {nu}, s);
      for (std::size_t e = 0; e < K * K; ++e) entries[e].push_back(x[e]);
    }
    check_wishart_moments(entries, s, K, nu, inverse, inverse ? "inv_wishart draws" : "wishart draws");
  }
}

TEST_CASE("wishart: a covariance matrix with a Wishart prior in a multi_student_t model",
          "[distributions][wishart][multi_student_t]") {
  // Sigma ~ wishart(5, S), nu ~ gamma(2, 0.1), y ~ multi_student_t(nu, 0, Sigma) for 4 rows;
  // Omega ~ inv_wishart(6, S) with a free term wishart_lpdf(W | 5, Omega): the log density
  // (without the Jacobian) against the closed forms at the constrained values.
  constexpr std::size_t K = 3, n = 4, U = K * (K + 1) / 2;
  const auto s = covariance3();
  const std::vector<double> w{2.0, 0.3, -0.4, 0.3, 1.5, 0.2, -0.4, 0.2, 0.8};
  const auto y = tyche_test::random_points(1, n * K, -2, 2, 421)[0];
  auto m = model([&] {
    auto sigma = wishart<"Sigma">(5.0, matrix(s.data(), K, K));
    auto nu = gamma<"nu">(2.0, 0.1);
    auto omega = inv_wishart<"Omega">(6.0, matrix(s.data(), K, K));
    return joint(sigma, nu, omega, multi_student_t(nu, 0.0, sigma).observe(data(y)),
                 target(wishart_lpdf(data(w), 5.0, omega)));
  });
  REQUIRE(m.dim() == 2 * U + 1);
  REQUIRE(m.constrained_dim() == 2 * K * K + 1);
  for (const auto& theta : tyche_test::random_points(5, m.dim(), -1, 1, 422)) {
    const auto v = m.constrain(theta);
    const auto sigma = slice(v, 0, K * K), omega = slice(v, K * K + 1, K * K);
    const double nu = v[K * K];
    long double expected = wishart_ref(false, sigma, 5.0, s, K) + wishart_ref(true, omega, 6.0, s, K) +
                            wishart_ref(false, w, 5.0, omega, K);
    expected += std::log(0.1L) * 2 - std::lgamma(2.0L) + std::log(static_cast<long double>(nu)) - 0.1L * nu;
    for (std::size_t r = 0; r < n; ++r) expected += multi_student_t_ref(slice(y, r * K, K), nu, {0.0, 0.0, 0.0}, sigma);
    CHECK(m.log_prob(theta, false) == Approx(double(expected)).epsilon(1e-12));
    tyche_test::check_gradient_at(m.program(), theta, "wishart + multi_student_t model");
  }
  // Prior draws are covariance matrices, and unconstrain inverts constrain.
  std::mt19937_64 rng(423);
  const auto prior = m.sample_prior(rng);
  REQUIRE(prior.size() == m.constrained_dim());
  const auto back = m.constrain(m.unconstrain(prior));
  for (std::size_t e = 0; e < prior.size(); ++e) CHECK(back[e] == Approx(prior[e]).epsilon(1e-10));
  const auto obs = m.sample_observations(m.unconstrain(prior), rng);
  REQUIRE(obs.size() == 1);
  CHECK(obs[0].size() == n * K);
}

TEST_CASE("wishart / inv_wishart: errors name the matrix, the entry and the value", "[distributions][wishart]") {
  const std::vector<double> eye{1, 0, 0, 0, 1, 0, 0, 0, 1};
  const std::vector<double> not_sym{1, 0.5, 0, 0.4, 1, 0, 0, 0, 1};
  CHECK_THROWS_WITH(wishart(4.0, matrix(eye.data(), 3, 3)).observe(data(not_sym)),
                    Contains("tyche::wishart(...).observe(y): W is not symmetric: W[2, 1] = 0.4 but W[1, 2] = 0.5"));
  const std::vector<double> not_pd{1, 2, 0, 2, 1, 0, 0, 0, 1};
  CHECK_THROWS_WITH(inv_wishart(4.0, matrix(eye.data(), 3, 3)).observe(data(not_pd)),
                    Contains("tyche::inv_wishart(...).observe(y): W is not positive definite (pivot 2 is -3)"));
  CHECK_THROWS_WITH(wishart(4.0, matrix(not_pd.data(), 3, 3)), Contains("tyche::wishart(nu, S): S is not positive definite (pivot 2"));
  CHECK_THROWS_WITH(wishart(1.5, matrix(eye.data(), 3, 3)), Contains("tyche::wishart(nu, S): nu = 1.5 must be > K - 1 = 2"));
  CHECK_THROWS_WITH(inv_wishart_lpdf(data(eye), -1.0, matrix(eye.data(), 3, 3)), Contains("inv_wishart(nu, S): nu"));
  const std::vector<double> four{1, 0, 0, 1};
  CHECK_THROWS_WITH(wishart(4.0, matrix(eye.data(), 3, 3)).observe(data(four)), Contains("y has 4 values but S is 3 x 3"));
  vector_param<"s5", 5> s5;
  CHECK_THROWS_WITH(inv_wishart(4.0, s5), Contains("'S' has 5 values"));
  const std::vector<double> rect{1, 0, 0, 1, 0, 0};
  CHECK_THROWS_WITH(wishart(4.0, matrix(rect.data(), 2, 3)), Contains("S must be square and non-empty; it is 2 x 3"));
}

// ---- wishart_cholesky, inv_wishart_cholesky ----------------------------------------------------

namespace {
/// L Lᵀ of a lower-triangular factor (K·K values).
std::vector<double> times_transpose(const std::vector<double>& l, std::size_t k) {
  std::vector<double> m(k * k, 0.0);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j)
      for (std::size_t p = 0; p < k; ++p) m[i * k + j] += l[i * k + p] * l[j * k + p];
  return m;
}
/// Stan's definition: log (inv_)wishart(L_W L_Wᵀ | ν, L_S L_Sᵀ) + K log 2 + Σ_{i=1..K} (K − i + 1) log L_W,ii.
long double wishart_cholesky_ref(bool inverse, const std::vector<double>& lw, double nu, const std::vector<double>& ls,
                                 std::size_t k) {
  long double r = wishart_ref(inverse, times_transpose(lw, k), nu, times_transpose(ls, k), k) +
                  static_cast<long double>(k) * std::log(2.0L);
  for (std::size_t i = 0; i < k; ++i) r += static_cast<long double>(k - i) * std::log(static_cast<long double>(lw[i * k + i]));
  return r;
}
}  // namespace

TEST_CASE("wishart_cholesky / inv_wishart_cholesky: log density against Stan's definition, the same density in u "
          "as wishart's through cov_matrix, gradients in L_W, L_S and nu",
          "[distributions][wishart]") {
  constexpr std::size_t K = 3, U = K * (K + 1) / 2;
  const auto s = covariance3();
  std::vector<double> ls(K * K);
  {
    const auto l = detail::cholesky_lower(s.data(), K, "test");
    ls.assign(l.begin(), l.end());
  }
  const transforms::cholesky_factor_cov chol{K};
  const transforms::cov_matrix cov{K};
  vector_param<"u", U> u;
  param<"nu"> nu;
  // L_W a parameter (cholesky_factor_cov), L_S data; then L_S a parameter, L_W data.
  const auto fw = compile(wishart_cholesky(nu, matrix(ls.data(), K, K)).log_prob(chol.constrain(u)), u, nu);
  const auto fi = compile(inv_wishart_cholesky(nu, matrix(ls.data(), K, K)).log_prob(chol.constrain(u)), u, nu);
  const std::vector<double> lw{1.4, 0.0, 0.0, 0.3, 1.2, 0.0, -0.4, 0.2, 0.7};
  const auto gw = compile(wishart_cholesky(nu, chol.constrain(u)).log_prob(data(lw)), u, nu);
  const auto gi = compile(inv_wishart_cholesky(nu, chol.constrain(u)).log_prob(data(lw)), u, nu);
  const auto lp = compile(wishart_cholesky_lpdf(data(lw), 5.0, chol.constrain(u)) +
                              inv_wishart_cholesky_lpdf(chol.constrain(u), 6.0, matrix(ls.data(), K, K)),
                          u);
  // The density of u: the factor's with cholesky_factor_cov's Jacobian is the matrix's with
  // cov_matrix's (an independent check of the factor's Jacobian |J|): their differences are 0.
  const auto differences =
      compile(wishart_cholesky(nu, matrix(ls.data(), K, K)).log_prob(chol.constrain(u)) + chol.log_jacobian(u) -
                  (wishart(nu, matrix(s.data(), K, K)).log_prob(cov.constrain(u)) + cov.log_jacobian(u)) +
                  1e3 * (inv_wishart_cholesky(nu, matrix(ls.data(), K, K)).log_prob(chol.constrain(u)) -
                         inv_wishart(nu, matrix(s.data(), K, K)).log_prob(cov.constrain(u)) +
                         chol.log_jacobian(u) - cov.log_jacobian(u)),
              u, nu);
  std::mt19937_64 rng(431);
  std::uniform_real_distribution<double> unu(double(K) - 0.5, double(K) + 8);
  for (const auto& uu : tyche_test::random_points(30, U, -1, 1, 432)) {
    const auto l = cov_factor_of(uu, K);
    auto p = uu;
    p.push_back(unu(rng));
    tyche_test::discrete::check_log_pmf(fw.value(p), wishart_cholesky_ref(false, l, p[U], ls, K), "wishart_cholesky, L_W a parameter");
    tyche_test::discrete::check_log_pmf(fi.value(p), wishart_cholesky_ref(true, l, p[U], ls, K), "inv_wishart_cholesky, L_W a parameter");
    tyche_test::discrete::check_log_pmf(gw.value(p), wishart_cholesky_ref(false, lw, p[U], l, K), "wishart_cholesky, L_S a parameter");
    tyche_test::discrete::check_log_pmf(gi.value(p), wishart_cholesky_ref(true, lw, p[U], l, K), "inv_wishart_cholesky, L_S a parameter");
    tyche_test::discrete::check_log_pmf(lp.value(uu),
                                        wishart_cholesky_ref(false, lw, 5.0, l, K) + wishart_cholesky_ref(true, l, 6.0, ls, K),
                                        "wishart_cholesky_lpdf + inv_wishart_cholesky_lpdf");
    CHECK(std::fabs(differences.value(p)) < 1e-8 * (1 + std::fabs(fw.value(p)) + 1e3 * std::fabs(fi.value(p))));
  }
  for (const auto& uu : tyche_test::random_points(5, U, -1, 1, 433)) {
    auto p = uu;
    p.push_back(unu(rng));
    tyche_test::check_gradient_at(fw, p, "wishart_cholesky, L_W a parameter");
    tyche_test::check_gradient_at(fi, p, "inv_wishart_cholesky, L_W a parameter");
    tyche_test::check_gradient_at(gw, p, "wishart_cholesky, L_S a parameter");
    tyche_test::check_gradient_at(gi, p, "inv_wishart_cholesky, L_S a parameter");
  }
  std::vector<std::vector<double>> pts;
  for (auto p : tyche_test::random_points(8, U, -1, 1, 434)) {
    p.push_back(unu(rng));
    pts.push_back(p);
  }
  // ν ≤ K − 1 (a parameter outside the family's domain) is NaN, not lgamma's finite value there.
  auto below = pts[0];
  below[U] = double(K) - 1.5;
  CHECK(std::isnan(fw.value(below)));
  CHECK(std::isnan(gi.value(below)));
  tyche_test::check_lanes(fw, pts, "wishart_cholesky (lanes)");
  tyche_test::check_lanes(gi, pts, "inv_wishart_cholesky (lanes)");
  tyche_test::check_float(fi, pts[0], "inv_wishart_cholesky (float)");
}

TEST_CASE("wishart_cholesky / inv_wishart_cholesky: draws are factors whose products have the Wishart moments",
          "[distributions][wishart]") {
  constexpr std::size_t K = 3;
  const auto s = covariance3();
  const auto l = detail::cholesky_lower(s.data(), K, "test");
  const std::vector<double> ls(l.begin(), l.end());
  const double nu = 9.0;
  const auto dw = wishart_cholesky(nu, matrix(ls.data(), K, K));
  const auto di = inv_wishart_cholesky(nu, matrix(ls.data(), K, K));
  for (int inverse = 0; inverse < 2; ++inverse) {
    std::mt19937_64 rng(441 + inverse);
    std::vector<std::vector<double>> entries(K * K);
    for (std::size_t r = 0; r < tyche_test::discrete::sample_size; ++r) {
      const auto x = inverse ? di.draw_all(rng, K * K, {nu}, ls) : dw.draw_all(rng, K * K, {nu}, ls);
      REQUIRE(x.size() == K * K);
      for (std::size_t i = 0; i < K; ++i) {
        REQUIRE(x[i * K + i] > 0);
        for (std::size_t j = i + 1; j < K; ++j) REQUIRE(x[i * K + j] == 0.0);
      }
      const auto w = times_transpose(x, K);
      for (std::size_t e = 0; e < K * K; ++e) entries[e].push_back(w[e]);
    }
    check_wishart_moments(entries, s, K, nu, inverse, inverse ? "inv_wishart_cholesky draws" : "wishart_cholesky draws");
  }
}

TEST_CASE("wishart_cholesky: a covariance factor with a Wishart prior in a multi_normal_cholesky model; errors",
          "[distributions][wishart]") {
  // L ~ wishart_cholesky(5, L_S), y ~ multi_normal_cholesky(0, L) for 4 rows: the log density
  // without the Jacobian against the closed forms at the constrained values; prior draws invert.
  constexpr std::size_t K = 3, n = 4, U = K * (K + 1) / 2;
  const auto s = covariance3();
  const auto lsv = detail::cholesky_lower(s.data(), K, "test");
  const std::vector<double> ls(lsv.begin(), lsv.end());
  const auto y = tyche_test::random_points(1, n * K, -2, 2, 451)[0];
  auto m = model([&] {
    auto l = wishart_cholesky<"L">(5.0, matrix(ls.data(), K, K));
    return joint(l, multi_normal_cholesky(0.0, l).observe(data(y)));
  });
  REQUIRE(m.dim() == U);
  REQUIRE(m.constrained_dim() == K * K);
  for (const auto& theta : tyche_test::random_points(5, m.dim(), -1, 1, 452)) {
    const auto l = m.constrain(theta);
    const auto sigma = times_transpose(l, K);
    long double expected = wishart_cholesky_ref(false, l, 5.0, ls, K);
    matrix_ld inv;
    const long double log_det = log_det_and_inverse(sigma, K, inv);
    for (std::size_t r = 0; r < n; ++r) {
      long double q = 0;
      for (std::size_t i = 0; i < K; ++i)
        for (std::size_t j = 0; j < K; ++j) q += y[r * K + i] * inv[i * K + j] * y[r * K + j];
      expected += -0.5L * K * std::log(2 * 3.14159265358979323846L) - 0.5L * log_det - 0.5L * q;
    }
    CHECK(m.log_prob(theta, false) == Approx(double(expected)).epsilon(1e-12));
    tyche_test::check_gradient_at(m.program(), theta, "wishart_cholesky + multi_normal_cholesky model");
  }
  std::mt19937_64 rng(453);
  const auto prior = m.sample_prior(rng);
  REQUIRE(prior.size() == K * K);
  const auto back = m.constrain(m.unconstrain(prior));
  for (std::size_t e = 0; e < prior.size(); ++e) CHECK(back[e] == Approx(prior[e]).margin(1e-12));

  // Errors: a data L_S or an observed L_W that is not a Cholesky factor, ν too small, sizes.
  const std::vector<double> upper{1, 0.5, 0, 0, 1, 0, 0, 0, 1};
  CHECK_THROWS_WITH(wishart_cholesky(4.0, matrix(upper.data(), 3, 3)),
                    Contains("tyche::wishart_cholesky(nu, L_S): L_S[1, 2] = 0.5 must be 0 (the matrix is lower triangular)"));
  const std::vector<double> negative{1, 0, 0, 0.2, -1, 0, 0, 0, 1};
  CHECK_THROWS_WITH(inv_wishart_cholesky(4.0, matrix(ls.data(), 3, 3)).observe(data(negative)),
                    Contains("tyche::inv_wishart_cholesky(...).observe(y): L_W[2, 2] = -1 must be > 0 (a diagonal entry "
                             "of a Cholesky factor)"));
  CHECK_THROWS_WITH(wishart_cholesky(1.5, matrix(ls.data(), 3, 3)),
                    Contains("tyche::wishart_cholesky(nu, L_S): nu = 1.5 must be > K - 1 = 2"));
  const std::vector<double> four{1, 0, 0, 1};
  CHECK_THROWS_WITH(wishart_cholesky(4.0, matrix(ls.data(), 3, 3)).observe(data(four)),
                    Contains("y has 4 values but L_S is 3 x 3"));
  vector_param<"s5", 5> s5;
  CHECK_THROWS_WITH(inv_wishart_cholesky(4.0, s5), Contains("'L_S' has 5 values"));
  const std::vector<double> rect{1, 0, 0, 1, 0, 0};
  CHECK_THROWS_WITH(wishart_cholesky(4.0, matrix(rect.data(), 2, 3)), Contains("L_S must be square and non-empty; it is 2 x 3"));
}
