// Sharing, hoisting and fused reverse passes (tyche/compile/graph.hpp), observed by counting how
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

TEST_CASE("graph: literals share by type, run-time constants by a check of their values",
          "[core][graph]") {
  param<"mu"> mu;
  const auto with_literal = counted(mu * lit<2>);
  CHECK(calls_per_value(compile(with_literal + with_literal), {0.3}) == 1);
  STATIC_REQUIRE(detail::outer_entries_t<decltype(with_literal + with_literal)>::size == 3);
  // A run-time constant is a payload: two occurrences of the type may hold different values, so
  // they get two slots, and the second aliases the first once the program has compared them.
  const auto with_constant = counted(mu * 2.0);
  STATIC_REQUIRE(detail::outer_entries_t<decltype(with_constant + with_constant)>::size == 5);
  CHECK(calls_per_value(compile(with_constant + with_constant), {0.3}) == 1);
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
  // recomputes the loop body rather than storing it: 5 + 5 element evaluations. With
  // observation batches of w lanes the reverse loop evaluates the body once per whole batch and
  // once per element left over (the forward loop batches only whole groups of 8 elements).
  const auto unfused = compile(square(sum(t)));
  constexpr std::size_t w = detail::lane_ops<detail::observation_batch_t<double>>::size;
  CHECK(calls_per_gradient(unfused, x) == 5 + (5 / w + 5 % w));
  tyche_test::check_gradient_at(fused, x, "fused");
  tyche_test::check_gradient_at(negated, x, "negated");
  tyche_test::check_gradient_at(unfused, x, "unfused");
}

TEST_CASE("graph: a sum used twice is not fused and still correct", "[core][graph]") {
  vector_param<"v", 4> v;
  const auto s = sum(exp(v) * lit<1, 3>);
  const auto f = compile(s + s * s);
  using S = std::remove_const_t<decltype(s)>;
  STATIC_REQUIRE(detail::fused_sign_v<decltype(s + s * s), detail::entry<S, path<0>>> == 0);
  STATIC_REQUIRE(detail::fused_sign_v<decltype(s + square(param<"mu">{})),
                                      detail::entry<S, path<0>>> == 1);
  STATIC_REQUIRE(detail::fused_sign_v<decltype(square(param<"mu">{}) - s),
                                      detail::entry<S, path<1>>> == -1);
  tyche_test::check_gradient_at(f, {0.1, -0.4, 0.8, 0.3}, "s + s*s");
}

TEST_CASE("graph: equal nodes with payloads are shared after a run-time check",
          "[core][graph]") {
  param<"mu"> mu;
  // Same type, same constant: one evaluation. Same type, different constants: two.
  const auto same = compile(counted(mu * 2.0) + exp(counted(mu * 2.0)));
  CHECK(calls_per_value(same, {0.3}) == 1);
  CHECK(calls_per_gradient(same, {0.3}) == 1);
  tyche_test::check_gradient_at(same, {0.3}, "counted(2 mu) + exp(counted(2 mu))");
  const auto different = compile(counted(mu * 2.0) + exp(counted(mu * 3.0)));
  CHECK(calls_per_value(different, {0.3}) == 2);
  CHECK(different.value(std::vector<double>{0.3}) == Approx(0.36 + std::exp(0.81)));
  tyche_test::check_gradient_at(different, {0.3}, "counted(2 mu) + exp(counted(3 mu))");
}

TEST_CASE("graph: a matvec used twice is computed once", "[core][graph]") {
  const std::vector<double> x{1, 2, 3, 4, 5, 6}, other{6, 5, 4, 3, 2, 1};
  vector_param<"b", 2> b;
  auto eta = matvec(matrix(x.data(), 3, 2), b);
  // (Both uses non-linear: a term linear in eta, such as y·eta, would leave the loop as (Xᵀy)·b,
  // compile/reduce_sum.hpp, and the one use left would be streamed.)
  const auto shared = compile(sum(exp(eta) - log1p_exp(eta)));
  CHECK(shared.workspace_size() == 6);  // one buffer pair, not two
  tyche_test::check_gradient_at(shared, {0.2, -0.3}, "shared matvec");
  // Same type, different matrix: two buffers, and still correct.
  auto eta2 = matvec(matrix(other.data(), 3, 2), b);
  const auto distinct = compile(sum(exp(eta) - log1p_exp(eta2)));
  CHECK(distinct.workspace_size() == 12);
  tyche_test::check_gradient_at(distinct, {0.2, -0.3}, "distinct matvecs");
}
