// Property check for the sigmoid rules of tyche/autodiff/logistic.hpp.
#include <tyche/tyche.hpp>

#include "support/property.hpp"

using namespace tyche;
using tyche_test::check_unary;

TEST_CASE("logistic: rules pass the property check", "[autodiff][logistic]") {
  check_unary("logistic", [](auto e) { return logistic(e); }, -15, 15);
  check_unary("log_logistic", [](auto e) { return log_logistic(e); }, -30, 30);
  check_unary("log1m_logistic", [](auto e) { return log1m_logistic(e); }, -30, 30);
  check_unary("tanh", [](auto e) { return tanh(e); }, -4, 4);
}

TEST_CASE("logistic: tails are exact where 1 - logistic(x) would cancel", "[autodiff][logistic]") {
  param<"x"> x;
  CHECK(compile(log_logistic(x)).value(std::vector<double>{-700.0}) == Approx(-700.0));
  CHECK(compile(log1m_logistic(x)).value(std::vector<double>{700.0}) == Approx(-700.0));
  CHECK(compile(logistic(x)).value(std::vector<double>{-50.0}) ==
        Approx(std::exp(-50.0)).epsilon(1e-12));
  CHECK(compile(inv_logit(x)).value(std::vector<double>{0.0}) == 0.5);
}
