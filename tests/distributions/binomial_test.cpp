// binomial(n, p) and binomial_logit(n, alpha): log pmf against Boost.Math, gradients, draws,
// data checks (counts, trials, y ≤ n).
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <boost/math/distributions/binomial.hpp>

#include "support/discrete_checks.hpp"
#include "support/property.hpp"

#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace tyche;
namespace dc = tyche_test::discrete;

namespace {
long double boost_log_pmf(double n, long double p, double y) {
  return std::log(boost::math::pdf(boost::math::binomial_distribution<long double>(n, p), y));
}
long double logistic_ld(double a) { return 1.0L / (1.0L + std::exp(-static_cast<long double>(a))); }
double boost_pmf(double n, double p, long long k) {
  return static_cast<double>(k) > n ? 0.0
                                    : boost::math::pdf(boost::math::binomial_distribution<double>(n, p),
                                                       static_cast<double>(k));
}
std::string at(double n, double arg, double y) {
  return "(" + std::to_string(n) + ", " + std::to_string(arg) + ") at y = " + std::to_string(y);
}
}  // namespace

TEST_CASE("binomial: log pmf against Boost", "[discrete][binomial]") {
  std::mt19937_64 rng(501);
  std::uniform_real_distribution<double> up(0.02, 0.98);
  param<"p"> p;
  for (int t = 0; t < dc::log_pmf_points; ++t) {
    const double pr = up(rng);
    std::vector<double> n{dc::uniform_count(rng, 80)};
    std::vector<double> y{t % 2 == 0 ? binomial_distribution<constant, constant>::draw(rng, n[0], pr)
                                     : dc::uniform_count(rng, n[0])};
    const auto prog = compile(binomial(data(n), p).observe(data(y)).log_density(), p);
    dc::check_log_pmf(dc::value_at(prog, {pr}), boost_log_pmf(n[0], pr, y[0]), "binomial" + at(n[0], pr, y[0]));
  }
  // Vectors of trials and counts, and a plain number of trials.
  std::vector<double> ns{10, 3, 25, 0}, ys{4, 3, 0, 0};
  const auto prog = compile(binomial(data(ns), p).observe(data(ys)).log_density(), p);
  long double ref = 0;
  for (std::size_t i = 0; i < ns.size(); ++i) ref += boost_log_pmf(ns[i], 0.35, ys[i]);
  dc::check_log_pmf(dc::value_at(prog, {0.35}), ref, "binomial({10, 3, 25, 0}, 0.35) at y = {4, 3, 0, 0}");
  std::vector<double> ys2{4, 7, 0};
  const auto prog2 = compile(binomial(12, p).observe(data(ys2)).log_density(), p);
  ref = boost_log_pmf(12, 0.35, 4) + boost_log_pmf(12, 0.35, 7) + boost_log_pmf(12, 0.35, 0);
  dc::check_log_pmf(dc::value_at(prog2, {0.35}), ref, "binomial(12, 0.35) at y = {4, 7, 0}");
}

TEST_CASE("binomial_logit: log pmf against Boost", "[discrete][binomial_logit]") {
  std::mt19937_64 rng(502);
  std::uniform_real_distribution<double> ua(-6.0, 6.0);
  param<"alpha"> alpha;
  for (int t = 0; t < dc::log_pmf_points; ++t) {
    const double a = ua(rng);
    std::vector<double> n{dc::uniform_count(rng, 80)};
    std::vector<double> y{t % 2 == 0 ? binomial_logit_distribution<constant, constant>::draw(rng, n[0], a)
                                     : dc::uniform_count(rng, n[0])};
    const auto prog = compile(binomial_logit(data(n), alpha).observe(data(y)).log_density(), alpha);
    dc::check_log_pmf(dc::value_at(prog, {a}), boost_log_pmf(n[0], logistic_ld(a), y[0]),
                      "binomial_logit" + at(n[0], a, y[0]));
  }
  // Far tail, where σ(α) rounds to 1: log p(y = 0 | n, α) = −n log(1 + e^α) exactly.
  std::vector<double> n{7}, zero{0};
  const auto prog = compile(binomial_logit(data(n), alpha).observe(data(zero)).log_density(), alpha);
  dc::check_log_pmf(dc::value_at(prog, {60.0}), -7 * (60.0 + std::log1p(std::exp(-60.0))), "binomial_logit(7, 60) at y = 0");
}

TEST_CASE("binomial, binomial_logit: gradients", "[discrete][binomial][binomial_logit]") {
  std::vector<double> n{10, 4, 30}, y{3, 4, 0};
  param<"p"> p;
  param<"alpha"> alpha;
  const auto p1 = compile(binomial(data(n), p).observe(data(y)).log_density(), p);
  const auto p2 = compile(binomial_logit(data(n), alpha).observe(data(y)).log_density(), alpha);
  for (const auto& pt : tyche_test::random_points(20, 1, 0.02, 0.98, 51))
    tyche_test::check_gradient_at(p1, pt, "binomial(n, p)");
  for (const auto& pt : tyche_test::random_points(20, 1, -8.0, 8.0, 52))
    tyche_test::check_gradient_at(p2, pt, "binomial_logit(n, alpha)");
  vector_param<"ps", 3> ps;
  const auto p3 = compile(binomial(data(n), ps).observe(data(y)).log_density(), ps);
  for (const auto& pt : tyche_test::random_points(10, 3, 0.02, 0.98, 53))
    tyche_test::check_gradient_at(p3, pt, "binomial(n, ps)");
}

TEST_CASE("binomial, binomial_logit: draws", "[discrete][binomial][binomial_logit]") {
  using B = binomial_distribution<constant, constant>;
  using BL = binomial_logit_distribution<constant, constant>;
  // The lambdas init-capture the structured bindings: clang 14 cannot capture them.
  for (auto [n, pr] : {std::pair{1.0, 0.4}, std::pair{20.0, 0.3}, std::pair{200.0, 0.97}}) {
    const auto xs = dc::draws<B>(601, n, pr);
    const std::string what = "binomial(" + std::to_string(n) + ", " + std::to_string(pr) + ")";
    dc::check_moments(xs, B::mean(n, pr), B::variance(n, pr), what);
    dc::check_chi_square(xs, [n = n, pr = pr](long long k) { return boost_pmf(n, pr, k); }, what);
  }
  for (auto [n, a] : {std::pair{15.0, -1.5}, std::pair{60.0, 0.4}}) {
    const auto xs = dc::draws<BL>(602, n, a);
    const std::string what = "binomial_logit(" + std::to_string(n) + ", " + std::to_string(a) + ")";
    dc::check_moments(xs, BL::mean(n, a), BL::variance(n, a), what);
    const double pr = static_cast<double>(logistic_ld(a));
    dc::check_chi_square(xs, [n = n, pr](long long k) { return boost_pmf(n, pr, k); }, what);
  }
}

TEST_CASE("binomial, binomial_logit: data checks", "[discrete][binomial][binomial_logit]") {
  param<"p"> p;
  const std::string count = "is not a non-negative integer count";
  std::vector<double> n{5, 5, 5}, negative{1, -1, 2}, fractional{1, 2.5, 2}, over{1, 6, 2};
  for (const auto* y : {&negative, &fractional}) {
    dc::check_observation_error([&] { return binomial(data(n), p).observe(data(*y)); }, "binomial", "y[2]", (*y)[1], count);
    dc::check_observation_error([&] { return binomial_logit(data(n), p).observe(data(*y)); }, "binomial_logit", "y[2]", (*y)[1], count);
  }
  // y ≤ n: n as data, a plain number and a literal.
  const std::string exceeds = "exceeds the number of trials n[2] = " + std::string("5");
  dc::check_observation_error([&] { return binomial(data(n), p).observe(data(over)); }, "binomial", "y[2]", 6, exceeds);
  dc::check_observation_error([&] { return binomial_logit(data(n), p).observe(data(over)); }, "binomial_logit", "y[2]", 6, exceeds);
  const std::string exceeds_scalar = "exceeds the number of trials n[1] = " + std::string("5");
  dc::check_observation_error([&] { return binomial(5, p).observe(data(over)); }, "binomial", "y[2]", 6, exceeds_scalar);
  dc::check_observation_error([&] { return binomial(lit<5>, p).observe(data(over)); }, "binomial", "y[2]", 6, exceeds_scalar);
  std::vector<double> ns{5, 3, 5}, ys{1, 4, 2};
  dc::check_observation_error([&] { return binomial(data(ns), p).observe(data(ys)); }, "binomial", "y[2]", 4,
                              "exceeds the number of trials n[2] = " + std::string("3"));
  // The number of trials itself.
  std::vector<double> bad_n{5, 4.5, 5}, neg_n{5, -2, 5}, y{0, 0, 0};
  dc::check_observation_error([&] { return binomial(data(bad_n), p).observe(data(y)); }, "binomial", "n[2]", 4.5, count);
  dc::check_observation_error([&] { return binomial(data(neg_n), p).observe(data(y)); }, "binomial", "n[2]", -2, count);
  std::vector<double> fine{0, 5, 3};
  CHECK_NOTHROW(binomial(data(n), p).observe(data(fine)));
  CHECK_NOTHROW(binomial_logit(5, p).observe(data(fine)));
  // n depending on a parameter: cannot be checked when the model is built (documented).
  param<"m"> m;
  CHECK_NOTHROW(binomial(m, p).observe(data(over)));
}
