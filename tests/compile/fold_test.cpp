// Data folding (tyche/compile/fold.hpp): subexpressions of data and constants are evaluated once,
// when the program is built, and replaced by their values.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <type_traits>
#include <vector>

#include "support/counting_rule.hpp"
#include "support/property.hpp"

using namespace tyche;
using tyche_test::counted;
using tyche_test::counting_square;

TEST_CASE("fold: a data-only vector subexpression is computed at construction only",
          "[core][fold]") {
  const std::vector<double> y{1, 2, 3};
  vector_param<"v", 3> v;
  counting_square::calls = 0;
  const auto f = compile(sum(counted(data(y)) * v));
  CHECK(counting_square::calls == 3);  // once per element, at construction
  counting_square::calls = 0;
  std::vector<double> g(3);
  const double value = f.value_and_gradient(std::vector<double>{1, 1, 2}, g);
  CHECK(counting_square::calls == 0);
  CHECK(value == 1 + 4 + 18);
  CHECK(g == std::vector<double>{1, 4, 9});
  // The folded expression holds a plain data view where the subexpression was.
  using folded = typename decltype(f)::view_type::expression_type;
  STATIC_REQUIRE(std::is_same_v<folded, sum_node<binary_node<rules::multiply, data_vector<>,
                                                             vector_param<"v", 3>>>>);
}

TEST_CASE("fold: a data-only scalar subexpression becomes a constant", "[core][fold]") {
  const std::vector<double> y{1, 2, 3};
  param<"mu"> mu;
  const auto f = compile(mu * sum(log(data(y))) + exp(lit<1>));
  using folded = typename decltype(f)::view_type::expression_type;
  STATIC_REQUIRE(std::is_same_v<folded, binary_node<rules::add,
                                                    binary_node<rules::multiply, param<"mu">,
                                                                constant>,
                                                    constant>>);
  CHECK(f.value(std::vector<double>{2.0}) == Approx(2 * std::log(6.0) + std::exp(1.0)));
  tyche_test::check_gradient_at(f, {0.4}, "mu * sum(log(y)) + e");
}
