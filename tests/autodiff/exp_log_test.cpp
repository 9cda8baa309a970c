// Property check for the exp/log rules of tyche/autodiff/exp_log.hpp.
#include <tyche/tyche.hpp>

#include "support/property.hpp"

using namespace tyche;
using tyche_test::check_unary;

TEST_CASE("exp_log: rules pass the property check", "[autodiff][exp_log]") {
  check_unary("exp", [](auto e) { return exp(e); }, -4, 4);
  check_unary("log", [](auto e) { return log(e); }, 0.05, 20);
  check_unary("log1p", [](auto e) { return log1p(e); }, -0.9, 20);
  check_unary("expm1", [](auto e) { return expm1(e); }, -4, 4);
  check_unary("log1p_exp", [](auto e) { return log1p_exp(e); }, -30, 30);
}

TEST_CASE("exp_log: log1p_exp is stable where the naive formula is not", "[autodiff][exp_log]") {
  param<"x"> x;
  const auto f = compile(log1p_exp(x));
  CHECK(f.value(std::vector<double>{800.0}) == Approx(800.0));  // log(1 + e^800) overflows naively
  CHECK(f.value(std::vector<double>{-800.0}) == Approx(std::exp(-800.0)).margin(1e-300));
  std::vector<double> g(1);
  f.value_and_gradient(std::vector<double>{-40.0}, g);
  CHECK(g[0] == Approx(std::exp(-40.0) / (1 + std::exp(-40.0))).epsilon(1e-12));
}
