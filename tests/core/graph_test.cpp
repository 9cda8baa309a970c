// Sharing, hoisting and fused reverse passes (tyche/core/graph.hpp), observed by counting how
// often a node's rule runs. The rules are in docs/design/expression-core.md.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <vector>

#include "support/counting_rule.hpp"
#include "support/property.hpp"

using namespace tyche;
using tyche_test::counted;
using tyche_test::counting_square;

namespace {
template <class Prog>
int calls_per_value(const Prog& p, const std::vector<double>& x) {
  std::vector<double> ws(p.workspace_size());
  counting_square::calls = 0;
  p.value(std::span<const double>(x), std::span<double>(ws));
  return counting_square::calls;
}
template <class Prog>
int calls_per_gradient(const Prog& p, const std::vector<double>& x) {
  std::vector<double> g(p.dim()), ws(p.workspace_size());
  counting_square::calls = 0;
  p.value_and_gradient(std::span<const double>(x), std::span<double>(g), std::span<double>(ws));
  return counting_square::calls;
}
}  // namespace

TEST_CASE("graph: a shareable subexpression used many times is evaluated once", "[core][graph]") {
  param<"mu"> mu;
  const auto s = counted(mu);
  const auto f = compile(s * s + exp(s) + s);
  // Slots: s, s*s, exp(s), (s*s + exp(s)), (… + s).
  STATIC_REQUIRE(detail::outer_entries_t<decltype(s * s + exp(s) + s)>::size == 5);
  CHECK(calls_per_value(f, {0.7}) == 1);
  CHECK(calls_per_gradient(f, {0.7}) == 1);
  tyche_test::check_gradient_at(f, {0.7}, "s*s + exp(s) + s");
}

TEST_CASE("graph: literals keep sharing, run-time constants do not", "[core][graph]") {
  param<"mu"> mu;
  const auto with_literal = counted(mu * lit<2>);
  CHECK(calls_per_value(compile(with_literal + with_literal), {0.3}) == 1);
  // A run-time constant is a payload: two occurrences of the type may hold different values, so
  // they are two nodes (the documented, conservative rule).
  const auto with_constant = counted(mu * 2.0);
  CHECK(calls_per_value(compile(with_constant + with_constant), {0.3}) == 2);
  const auto a = counted(mu * 2.0);
  const auto b = counted(mu * 3.0);
  const auto f = compile(a + b);
  CHECK(f.value(std::vector<double>{1.0}) == Approx(4.0 + 9.0));
}

TEST_CASE("graph: a scalar inside a vector loop is hoisted out of it", "[core][graph]") {
  param<"mu"> mu;
  vector_param<"v", 5> v;
  const auto f = compile(sum(counted(mu) * v), mu, v);
  const std::vector<double> x{0.5, 1, 2, 3, 4, 5};
  CHECK(calls_per_value(f, x) == 1);
  CHECK(calls_per_gradient(f, x) == 1);
  tyche_test::check_gradient_at(f, x, "sum(counted(mu) * v)");
}

TEST_CASE("graph: loop bodies share within an element; fused sums run once", "[core][graph]") {
  vector_param<"v", 5> v;
  const std::vector<double> x{0.1, 0.2, 0.3, 0.4, 0.5};
  const auto t = counted(v);
  const auto fused = compile(sum(t * t + t));
  CHECK(calls_per_value(fused, x) == 5);
  CHECK(calls_per_gradient(fused, x) == 5);  // adjoint known (+1): one pass does both
  const auto negated = compile(lit<3> - sum(t));
  CHECK(calls_per_gradient(negated, x) == 5);  // adjoint −1, still fused
  // Under a non-linear parent the sum's adjoint is known only in the reverse pass, which
  // recomputes the loop body rather than storing it: 5 + 5.
  const auto unfused = compile(square(sum(t)));
  CHECK(calls_per_gradient(unfused, x) == 10);
  tyche_test::check_gradient_at(fused, x, "fused");
  tyche_test::check_gradient_at(negated, x, "negated");
  tyche_test::check_gradient_at(unfused, x, "unfused");
}

TEST_CASE("graph: a sum used twice is not fused and still correct", "[core][graph]") {
  vector_param<"v", 4> v;
  const auto s = sum(exp(v) * lit<1, 3>);
  const auto f = compile(s + s * s);
  STATIC_REQUIRE(detail::fused_sign_v<decltype(s + s * s),
                                      detail::entry<decltype(s), path<0>>> == 0);
  STATIC_REQUIRE(detail::fused_sign_v<decltype(s + square(param<"mu">{})),
                                      detail::entry<decltype(s), path<0>>> == 1);
  STATIC_REQUIRE(detail::fused_sign_v<decltype(square(param<"mu">{}) - s),
                                      detail::entry<decltype(s), path<1>>> == -1);
  tyche_test::check_gradient_at(f, {0.1, -0.4, 0.8, 0.3}, "s + s*s");
}
