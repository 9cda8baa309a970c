// Property check (gradient vs finite differences, lanes vs scalar, float vs double) for the
// arithmetic rules of tyche/autodiff/arithmetic.hpp.
#include <tyche/tyche.hpp>

#include "support/property.hpp"

using namespace tyche;
using tyche_test::check_binary;
using tyche_test::check_unary;

TEST_CASE("arithmetic: unary rules pass the property check", "[autodiff][arithmetic]") {
  check_unary("negate", [](auto e) { return -e; }, -5, 5);
  check_unary("square", [](auto e) { return square(e); }, -5, 5);
  check_unary("inv", [](auto e) { return inv(e); }, 0.2, 5);  // 1/x elementwise (inverse of a vector is the matrix inverse)
  check_unary("sqrt", [](auto e) { return sqrt(e); }, 0.1, 10);
  check_unary("abs(positive side)", [](auto e) { return abs(e); }, 0.05, 5);
  check_unary("abs(negative side)", [](auto e) { return abs(e); }, -5, -0.05);
  check_unary("pow(x, 2.5)", [](auto e) { return pow(e, 2.5); }, 0.1, 4);
  check_unary("pow(x, -1.5)", [](auto e) { return pow(e, -1.5); }, 0.3, 4);
}

TEST_CASE("arithmetic: binary rules pass the property check", "[autodiff][arithmetic]") {
  check_binary("add", [](auto a, auto b) { return a + b; }, -5, 5, -5, 5);
  check_binary("subtract", [](auto a, auto b) { return a - b; }, -5, 5, -5, 5);
  check_binary("multiply", [](auto a, auto b) { return a * b; }, -3, 3, -3, 3);
  check_binary("divide", [](auto a, auto b) { return a / b; }, -3, 3, 0.3, 3);
  check_binary("pow", [](auto a, auto b) { return pow(a, b); }, 0.2, 3, -2, 2);
}

TEST_CASE("arithmetic: plain numbers and literals on either side", "[autodiff][arithmetic]") {
  param<"x"> x;
  const auto f = compile(2.0 * x + x / 4.0 - 3.0 + lit<1, 2> * square(x) - 1.0 / x + 5 - x * 2);
  const double v = f.value(std::vector<double>{2.0});
  CHECK(v == Approx(2.0 * 2 + 0.5 - 3.0 + 2.0 - 0.5 + 5 - 4));
  for (double at : {-2.0, 0.7, 3.1}) tyche_test::check_gradient_at(f, {at}, "mixed constants");
}
