// beta_binomial(n, a, b): log pmf against C(n, y) B(y + a, n − y + b) / B(a, b) from Boost.Math's
// binomial_coefficient and beta (long double; Boost 1.74 has no beta-binomial distribution),
// gradients, draws (beta then binomial), data checks (counts, trials, y ≤ n).
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <boost/math/special_functions/beta.hpp>
#include <boost/math/special_functions/binomial.hpp>

#include "support/discrete_checks.hpp"
#include "support/property.hpp"

#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace tyche;
namespace dc = tyche_test::discrete;

namespace {
long double reference_pmf(double n, long double a, long double b, double y) {
  const auto un = static_cast<unsigned>(n), uy = static_cast<unsigned>(y);
  return boost::math::binomial_coefficient<long double>(un, uy) * boost::math::beta(y + a, n - y + b) /
         boost::math::beta(a, b);
}
long double reference_log_pmf(double n, double a, double b, double y) { return std::log(reference_pmf(n, a, b, y)); }
std::string at(double n, double a, double b, double y) {
  return "(" + std::to_string(n) + ", " + std::to_string(a) + ", " + std::to_string(b) + ") at y = " + std::to_string(y);
}
}  // namespace

TEST_CASE("beta_binomial: log pmf against Boost", "[discrete][beta_binomial]") {
  using BB = beta_binomial_distribution<constant, constant, constant>;
  std::mt19937_64 rng(901);
  std::uniform_real_distribution<double> ushape(0.2, 20.0);
  param<"a"> a;
  param<"b"> b;
  for (int t = 0; t < dc::log_pmf_points; ++t) {
    const double sa = ushape(rng), sb = ushape(rng);
    std::vector<double> n{dc::uniform_count(rng, 60)};
    std::vector<double> y{t % 2 == 0 ? BB::draw(rng, n[0], sa, sb) : dc::uniform_count(rng, n[0])};
    const auto prog = compile(beta_binomial(data(n), a, b).observe(data(y)).log_density(), a, b);
    dc::check_log_pmf(dc::value_at(prog, {sa, sb}), reference_log_pmf(n[0], sa, sb, y[0]),
                      "beta_binomial" + at(n[0], sa, sb, y[0]));
  }
  std::vector<double> ns{10, 3, 25, 1}, ys{4, 3, 0, 1};
  const auto prog = compile(beta_binomial(data(ns), a, b).observe(data(ys)).log_density(), a, b);
  long double ref = 0;
  for (std::size_t i = 0; i < ns.size(); ++i) ref += reference_log_pmf(ns[i], 2.5, 0.8, ys[i]);
  dc::check_log_pmf(dc::value_at(prog, {2.5, 0.8}), ref, "beta_binomial({10, 3, 25, 1}, 2.5, 0.8) at y = {4, 3, 0, 1}");
}

TEST_CASE("beta_binomial: gradients", "[discrete][beta_binomial]") {
  std::vector<double> n{10, 4, 30}, y{3, 4, 0};
  param<"a"> a;
  param<"b"> b;
  const auto prog = compile(beta_binomial(data(n), a, b).observe(data(y)).log_density(), a, b);
  for (const auto& pt : tyche_test::random_points(20, 2, 0.2, 20.0, 91))
    tyche_test::check_gradient_at(prog, pt, "beta_binomial(n, a, b)");
  // Mean–precision parameterisation: a = m κ, b = (1 − m) κ.
  param<"m"> m;
  param<"kappa"> kappa;
  const auto prog2 = compile(beta_binomial(12, m * kappa, (lit<1> - m) * kappa).observe(data(y)).log_density(), m, kappa);
  for (auto pt : tyche_test::random_points(10, 2, 0.1, 0.9, 92)) {
    pt[1] *= 30;
    tyche_test::check_gradient_at(prog2, pt, "beta_binomial(12, m kappa, (1 - m) kappa)");
  }
}

TEST_CASE("beta_binomial: draws", "[discrete][beta_binomial]") {
  using BB = beta_binomial_distribution<constant, constant, constant>;
  // The lambdas init-capture the structured bindings: clang 14 cannot capture them.
  for (auto [n, sa, sb] : {std::tuple{1.0, 2.0, 3.0}, std::tuple{20.0, 0.6, 0.9}, std::tuple{50.0, 8.0, 3.0}}) {
    const auto xs = dc::draws<BB>(1001, n, sa, sb);
    const std::string what =
        "beta_binomial(" + std::to_string(n) + ", " + std::to_string(sa) + ", " + std::to_string(sb) + ")";
    dc::check_moments(xs, BB::mean(n, sa, sb), BB::variance(n, sa, sb), what);
    dc::check_chi_square(
        xs, [n = n, sa = sa, sb = sb](long long k) { return static_cast<double>(k) > n ? 0.0 : static_cast<double>(reference_pmf(n, sa, sb, static_cast<double>(k))); },
        what);
  }
}

TEST_CASE("beta_binomial: data checks", "[discrete][beta_binomial]") {
  param<"a"> a;
  param<"b"> b;
  const std::string count = "is not a non-negative integer count";
  std::vector<double> n{5, 5, 5}, negative{1, -1, 2}, fractional{1, 2.5, 2}, over{1, 6, 2};
  dc::check_observation_error([&] { return beta_binomial(data(n), a, b).observe(data(negative)); }, "beta_binomial", "y[2]", -1, count);
  dc::check_observation_error([&] { return beta_binomial(data(n), a, b).observe(data(fractional)); }, "beta_binomial", "y[2]", 2.5, count);
  dc::check_observation_error([&] { return beta_binomial(data(n), a, b).observe(data(over)); }, "beta_binomial", "y[2]", 6,
                              "exceeds the number of trials n[2] = " + std::string("5"));
  dc::check_observation_error([&] { return beta_binomial(5, a, b).observe(data(over)); }, "beta_binomial", "y[2]", 6,
                              "exceeds the number of trials n[1] = " + std::string("5"));
  std::vector<double> bad_n{5, 7.5, 5}, y{0, 0, 0};
  dc::check_observation_error([&] { return beta_binomial(data(bad_n), a, b).observe(data(y)); }, "beta_binomial", "n[2]", 7.5, count);
  std::vector<double> fine{0, 5, 3};
  CHECK_NOTHROW(beta_binomial(data(n), a, b).observe(data(fine)));
}
