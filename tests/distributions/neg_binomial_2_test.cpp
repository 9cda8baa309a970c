// neg_binomial_2(mu, phi) and neg_binomial_2_log(eta, phi): log pmf against Boost.Math's
// negative_binomial(r = φ, p = φ/(μ + φ)), gradients, draws (gamma–Poisson), data checks.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <boost/math/distributions/negative_binomial.hpp>

#include "support/discrete_checks.hpp"
#include "support/property.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace tyche;
namespace dc = tyche_test::discrete;

namespace {
long double boost_log_pmf(long double mu, long double phi, double y) {
  return std::log(boost::math::pdf(boost::math::negative_binomial_distribution<long double>(phi, phi / (mu + phi)), y));
}
double boost_pmf(double mu, double phi, long long k) {
  return boost::math::pdf(boost::math::negative_binomial_distribution<double>(phi, phi / (mu + phi)),
                          static_cast<double>(k));
}
std::string at(double a, double phi, double y) {
  return "(" + std::to_string(a) + ", " + std::to_string(phi) + ") at y = " + std::to_string(y);
}
}  // namespace

TEST_CASE("neg_binomial_2: log pmf against Boost", "[discrete][neg_binomial_2]") {
  using NB = neg_binomial_2_distribution<constant, constant>;
  std::mt19937_64 rng(701);
  std::uniform_real_distribution<double> umu(0.1, 40.0), uphi(0.1, 60.0);
  param<"mu"> mu;
  param<"phi"> phi;
  for (int t = 0; t < dc::log_pmf_points; ++t) {
    const double m = umu(rng), f = uphi(rng);
    std::vector<double> y{t % 2 == 0 ? NB::draw(rng, m, f) : dc::uniform_count(rng, m + 5 * std::sqrt(NB::variance(m, f)) + 5)};
    const auto prog = compile(neg_binomial_2(mu, phi).observe(data(y)).log_density(), mu, phi);
    dc::check_log_pmf(dc::value_at(prog, {m, f}), boost_log_pmf(m, f, y[0]), "neg_binomial_2" + at(m, f, y[0]));
  }
  // φ ≪ μ and φ ≫ μ: the log1p forms keep full precision, but log C(y + φ − 1, y) is a difference
  // of lgammas, accurate only to about ε (lgamma(y + φ) + lgamma(φ) + lgamma(y + 1)) in absolute
  // terms (Stan's formula has the same limit): for large y or φ the relative tolerance is that
  // bound (times 4) over |log p|, e.g. 1.6·10⁻¹¹ at y = 20000.
  for (auto [m, f, yv] : {std::tuple{1e4, 0.05, 3.0}, std::tuple{1e4, 0.05, 20000.0}, std::tuple{0.02, 5e3, 1.0},
                          std::tuple{3.0, 1e4, 2.0}}) {
    std::vector<double> y{yv};
    const auto prog = compile(neg_binomial_2(mu, phi).observe(data(y)).log_density(), mu, phi);
    const long double ref = boost_log_pmf(m, f, yv);
    const double bound = 4 * 2.220446049250313e-16 *
                         (std::fabs(std::lgamma(yv + f)) + std::fabs(std::lgamma(f)) + std::lgamma(yv + 1)) /
                         std::fabs(static_cast<double>(ref));
    dc::check_log_pmf(dc::value_at(prog, {m, f}), ref, "neg_binomial_2" + at(m, f, yv),
                      std::max(dc::log_pmf_tolerance, bound));
  }
  std::vector<double> ys{0, 7, 2, 31};
  const auto prog = compile(neg_binomial_2(mu, phi).observe(data(ys)).log_density(), mu, phi);
  long double ref = 0;
  for (double v : ys) ref += boost_log_pmf(6.5, 1.5, v);
  dc::check_log_pmf(dc::value_at(prog, {6.5, 1.5}), ref, "neg_binomial_2(6.5, 1.5) at y = {0, 7, 2, 31}");
}

TEST_CASE("neg_binomial_2_log: log pmf against Boost", "[discrete][neg_binomial_2_log]") {
  using NBL = neg_binomial_2_log_distribution<constant, constant>;
  std::mt19937_64 rng(702);
  std::uniform_real_distribution<double> ueta(-2.0, 3.5), uphi(0.1, 60.0);
  param<"eta"> eta;
  param<"phi"> phi;
  for (int t = 0; t < dc::log_pmf_points; ++t) {
    const double e = ueta(rng), f = uphi(rng);
    std::vector<double> y{t % 2 == 0 ? NBL::draw(rng, e, f) : dc::uniform_count(rng, std::exp(e) + 5 * std::sqrt(NBL::variance(e, f)) + 5)};
    const auto prog = compile(neg_binomial_2_log(eta, phi).observe(data(y)).log_density(), eta, phi);
    dc::check_log_pmf(dc::value_at(prog, {e, f}), boost_log_pmf(std::exp(static_cast<long double>(e)), f, y[0]),
                      "neg_binomial_2_log" + at(e, f, y[0]));
  }
  // Large |η|: e^η would overflow in the naive form for η > 709.
  std::vector<double> zero{0};
  const auto prog = compile(neg_binomial_2_log(eta, phi).observe(data(zero)).log_density(), eta, phi);
  // log p(0 | η, φ) = −φ log(1 + e^η/φ) = −φ (η − log φ + log1p(φ e^−η)).
  dc::check_log_pmf(dc::value_at(prog, {800.0, 2.0}), -2.0 * (800.0 - std::log(2.0) + std::log1p(2.0 * std::exp(-800.0))),
                    "neg_binomial_2_log(800, 2) at y = 0");
  dc::check_log_pmf(dc::value_at(prog, {-30.0, 2.0}), -2.0 * std::log1p(std::exp(-30.0) / 2.0),
                    "neg_binomial_2_log(-30, 2) at y = 0");
}

TEST_CASE("neg_binomial_2, neg_binomial_2_log: gradients", "[discrete][neg_binomial_2][neg_binomial_2_log]") {
  std::vector<double> y{0, 4, 13};
  param<"mu"> mu;
  param<"eta"> eta;
  param<"phi"> phi;
  const auto p1 = compile(neg_binomial_2(mu, phi).observe(data(y)).log_density(), mu, phi);
  const auto p2 = compile(neg_binomial_2_log(eta, phi).observe(data(y)).log_density(), eta, phi);
  auto pts = tyche_test::random_points(20, 2, 0.1, 30.0, 71);
  for (const auto& pt : pts) tyche_test::check_gradient_at(p1, pt, "neg_binomial_2(mu, phi)");
  for (auto pt : pts) {
    pt[0] = std::log(pt[0]);
    tyche_test::check_gradient_at(p2, pt, "neg_binomial_2_log(eta, phi)");
  }
}

TEST_CASE("neg_binomial_2, neg_binomial_2_log: draws", "[discrete][neg_binomial_2][neg_binomial_2_log]") {
  using NB = neg_binomial_2_distribution<constant, constant>;
  using NBL = neg_binomial_2_log_distribution<constant, constant>;
  // The lambdas init-capture the structured bindings: clang 14 cannot capture them.
  for (auto [m, f] : {std::pair{0.8, 0.5}, std::pair{5.0, 2.0}, std::pair{30.0, 40.0}}) {
    const auto xs = dc::draws<NB>(801, m, f);
    const std::string what = "neg_binomial_2(" + std::to_string(m) + ", " + std::to_string(f) + ")";
    dc::check_moments(xs, NB::mean(m, f), NB::variance(m, f), what);
    dc::check_chi_square(xs, [m = m, f = f](long long k) { return boost_pmf(m, f, k); }, what);
  }
  for (auto [e, f] : {std::pair{-0.5, 3.0}, std::pair{2.0, 0.7}}) {
    const auto xs = dc::draws<NBL>(802, e, f);
    const std::string what = "neg_binomial_2_log(" + std::to_string(e) + ", " + std::to_string(f) + ")";
    dc::check_moments(xs, NBL::mean(e, f), NBL::variance(e, f), what);
    dc::check_chi_square(xs, [e = e, f = f](long long k) { return boost_pmf(std::exp(e), f, k); }, what);
  }
}

TEST_CASE("neg_binomial_2, neg_binomial_2_log: data checks", "[discrete][neg_binomial_2][neg_binomial_2_log]") {
  param<"mu"> mu;
  param<"phi"> phi;
  const std::string problem = "is not a non-negative integer count";
  std::vector<double> negative{1, -3, 2}, fractional{1, 0.25, 2};
  for (const auto* y : {&negative, &fractional}) {
    dc::check_observation_error([&] { return neg_binomial_2(mu, phi).observe(data(*y)); }, "neg_binomial_2", "y[2]", (*y)[1], problem);
    dc::check_observation_error([&] { return neg_binomial_2_log(mu, phi).observe(data(*y)); }, "neg_binomial_2_log", "y[2]", (*y)[1], problem);
  }
  std::vector<double> fine{0, 1, 1000};
  CHECK_NOTHROW(neg_binomial_2(mu, phi).observe(data(fine)));
  CHECK_NOTHROW(neg_binomial_2_log(mu, phi).observe(data(fine)));
}
