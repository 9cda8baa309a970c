// The Line and LogLine normal forms (operations/linear.hpp) and the rewrites that need a support
// (log of a product of positive powers, exp(log x)). Each expression is written once: built
// through tyche's operators (the rewrites) and through `raw`, a builder in this file that makes
// the plain node of every operation (no rewrite at all), compiled without rewrites. Values and
// gradients must agree to 1e-12 relative at random points, and the types show which rewrites
// happened.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "support/property.hpp"

using namespace tyche;

namespace {

// ---- the plain builder ----------------------------------------------------------------------

template <class N>
struct raw {
  N n;
};
template <class N>
raw(N) -> raw<N>;
template <class T>
auto to_raw(const T& t) {
  if constexpr (requires { t.n; }) return t;
  else if constexpr (arithmetic<T>) return raw<constant>{constant{static_cast<double>(t)}};
  else return raw<T>{t};
}
template <class A, class B>
concept one_raw = requires(const A& a) { a.n; } || requires(const B& b) { b.n; };

#define TYCHE_TEST_RAW_BINARY(op, rule)                                     \
  template <class A, class B>                                               \
    requires one_raw<A, B>                                                  \
  auto operator op(const A& a, const B& b) {                                \
    return raw{detail::plain_binary<rules::rule>(to_raw(a).n, to_raw(b).n)};        \
  }
TYCHE_TEST_RAW_BINARY(+, add)
TYCHE_TEST_RAW_BINARY(-, subtract)
TYCHE_TEST_RAW_BINARY(*, multiply)
TYCHE_TEST_RAW_BINARY(/, divide)
#undef TYCHE_TEST_RAW_BINARY

template <class A>
auto operator-(const raw<A>& a) {
  return raw{detail::plain_unary<rules::negate>(a.n)};
}
template <class A>
auto square(const raw<A>& a) {
  return raw{detail::plain_unary<rules::square>(a.n)};
}
template <class A>
auto sqrt(const raw<A>& a) {
  return raw{detail::plain_unary<rules::sqrt>(a.n)};
}
template <class A>
auto inverse(const raw<A>& a) {
  return raw{detail::plain_unary<rules::inverse>(a.n)};
}
template <class A>
auto log(const raw<A>& a) {
  return raw{detail::plain_unary<rules::log>(a.n)};
}
template <class A>
auto exp(const raw<A>& a) {
  return raw{detail::plain_unary<rules::exp>(a.n)};
}
template <class A, class P>
auto pow(const raw<A>& a, P p) {
  return raw{detail::plain_binary<rules::pow>(a.n, p)};
}
template <class A>
auto sum(const raw<A>& a) {
  return raw{sum_node<A>{{}, a.n}};
}

template <class T>
decltype(auto) node_of(const T& t) {
  if constexpr (requires { t.n; }) return (t.n);
  else return detail::as_node(t);
}

param<"x"> x;
param<"y"> y;
param<"z"> z;
vector_param<"v", 3> v;

/// f written with tyche's operators and with the plain builder: values and gradients agree.
template <class F>
void same_function(F f, const char* what) {
  // Every parameter appears in both (the rewritten form may have dropped one), through a term
  // that is 0 at every point: 0·(x·y·z·Σv).
  auto all = [](auto a, auto b, auto c, auto w) { return lit<0> * (a * b * c * sum(w)); };
  const auto rewritten = compile(node_of(f(x, y, z, v) + all(x, y, z, v)), x, y, z, v);
  const auto plain = compile_without_rewrites(
      node_of(f(raw{x}, raw{y}, raw{z}, raw{v}) + all(raw{x}, raw{y}, raw{z}, raw{v})), x, y, z, v);
  for (const auto& p : tyche_test::random_points(25, 6, -1.5, 1.5, 31)) {
    std::vector<double> g1(6), g2(6);
    const double v1 = rewritten.value_and_gradient(p, g1);
    const double v2 = plain.value_and_gradient(p, g2);
    INFO(what << "\n  rewritten: " << explain(rewritten) << "\n  plain: " << explain(plain));
    if (std::isnan(v2)) {  // outside the domain (√x for x < 0): NaN both ways
      CHECK(std::isnan(v1));
      continue;
    }
    CHECK(v1 == Approx(v2).epsilon(1e-12).margin(1e-12));
    for (std::size_t i = 0; i < 6; ++i) CHECK(g1[i] == Approx(g2[i]).epsilon(1e-12).margin(1e-12));
  }
}

template <class F>
std::string explained(F f) {
  return explain(compile(node_of(f(x, y, z, v))));
}

}  // namespace

// clang-format off
#define EXPR(...) [](auto x, auto y, auto z, auto v) { (void)x; (void)y; (void)z; (void)v; return __VA_ARGS__; }
// clang-format on

// Thirty-two expressions: each is checked for value and gradient, and its normal form.
TEST_CASE("Line and LogLine: rewritten expressions equal the plain ones", "[partial_eval][line]") {
  struct row {
    std::string expected;  // what explain prints for the rewritten expression
    std::string got;
  };
  std::vector<row> rows;
#define CASE(expected, ...)                                   \
  do {                                                        \
    auto f = EXPR(__VA_ARGS__);                               \
    same_function(f, #__VA_ARGS__);                           \
    rows.push_back({expected, explained(f)});                 \
  } while (false)

  // Line: terms over one node merge, constants fold, the cheaper tree is emitted.
  CASE("(2 * x)", x + x);
  CASE("(0 * x)", x - x);  // 0·x, not 0: x − x is NaN where x is infinite
  CASE("((x + y) + 3)", (x + lit<1>) + (y + lit<2>));
  CASE("(6 * x)", lit<2> * (lit<3> * x));
  CASE("(2 * (x + y))", lit<2> * (x + y));  // distributing would cost a multiply
  CASE("(((3 * y) - (9/4 * x)) + 1/2)", -(lit<2> * x) + y * lit<3> - x / lit<4> + lit<1, 2>);
  CASE("(y - x)", -(x - y));
  CASE("(((1.5 * x) + y) - 3)", (x - lit<1>) + (y - lit<2>) + x * 0.5);
  CASE("((x - y) - 4)", (x - lit<3>) - (y + lit<1>));
  CASE("(3 * (x * y))", x * y + lit<2> * (x * y));
  CASE("(x + (y * z))", x + y * z);  // nothing to merge: as written
  CASE("(z - (3 * x))", (z - x) - lit<2> * x);
  CASE("(2.5 * exp(x))", exp(x) * 2.0 + exp(x) / lit<2>);
  CASE("((x + z) + -7.5)", (x + 0.5) + (z - 8.0));  // a run-time constant's sign is not in its type
  CASE("((0 * x) - y)", -(x + y) + x);
  // Vector Lines: scalar terms first (computed once), then one operation per vector term.
  CASE("((3 * x) + sum[3]((2 * v[3])))", sum((v + x) + v));  // and Σ(A + s) = ΣA + n·s
  CASE("((3 * (x + y)) + sum[3]((2 * v[3])))", sum((v + x) + (v + y)));
  CASE("sum[3]((v[3] - (exp(v[3]) * 3)))", sum(v - exp(v) * lit<3>));
  // Loops over one static length become one loop (when the model is compiled).
  CASE("sum[3]((square(v[3]) - (exp(v[3]) * x)))", sum(square(v)) - sum(exp(v) * x));
  CASE("(sum[3]((v[3] + (2 * square(v[3])))) + y)", sum(v) + y + lit<2> * sum(square(v)));
  // LogLine: exponents over one node merge when that is exact (integer powers of one sign, or
  // a positive base), and the cheaper tree is emitted.
  CASE("square(x)", x * x);
  CASE("(2 * square(x))", x * (lit<2> * x));
  CASE("((x * y) / x)", x * y / x);  // x may be 0 or infinite: not rewritten
  CASE("y", exp(z) * y / exp(z));
  CASE("exp(z)", sqrt(exp(z)) * sqrt(exp(z)));
  CASE("(sqrt(x) * sqrt(x))", sqrt(x) * sqrt(x));  // x may be negative: √x·√x ≠ x
  CASE("exp(z)", square(exp(z)) * inverse(exp(z)));
  CASE("pow(exp(z), 5/2)", pow(exp(z), lit<3>) * pow(exp(z), lit<-1, 2>));
  CASE("(square(x) * x)", square(x) * x);  // x³ as pow would cost more
  CASE("inv((x * y))", inverse(x) * inverse(y));
  // Logs of products of positive powers become Lines of logs (when that needs at most one log).
  CASE("(2 * z)", log(square(exp(z))));
  CASE("(z + x)", log(exp(z) * exp(x)));
  CASE("(-0.6931471806 + (1/2 * x))", log(sqrt(exp(x)) / lit<2>));
  CASE("(z - (1/2 * x))", z - log(sqrt(exp(x))));
  CASE("(x - (2 * z))", x - log(square(exp(z))) + lit<0> * z);
  // exp(log(u)) is u when u ≥ 0 by its support.
  CASE("exp(x)", exp(log(exp(x))));
  CASE("exp(log(x))", exp(log(x)));
#undef CASE
  REQUIRE(rows.size() >= 30);
  for (const auto& r : rows) CHECK(r.got == r.expected);
}

// The types: a merge leaves one node where the plain tree had several.
static_assert(std::is_same_v<decltype(x + x), decltype(lit<2> * x)>);
static_assert(std::is_same_v<decltype(x * x), decltype(square(x))>);
static_assert(std::is_same_v<decltype(sqrt(exp(x)) * sqrt(exp(x))), decltype(exp(x))>);
static_assert(std::is_same_v<decltype(log(exp(x) * exp(y))), decltype(x + y)>);
static_assert(!std::is_same_v<decltype(sqrt(x) * sqrt(x)), param<"x">>);

TEST_CASE("Line: a model's constants fold into one when it is built", "[partial_eval][line]") {
  // Two priors with normalising constants: the joint adds them once.
  const auto model = tyche::model(joint(normal<"a">(0.0, 1.0), normal<"b">(1.0, 2.0)));
  const std::string e = explain(model);
  INFO(e);
  // The density ends with one constant: −log 1 − ½ log 2π − log 2 − ½ log 2π, the sum of both.
  char c[32];
  std::snprintf(c, sizeof c, "%.10g", -std::log(2.0) - std::log(2 * M_PI));
  CHECK(e.ends_with(std::string(" + ") + c + ")"));
  CHECK(std::count(e.begin(), e.end(), '.') == 3);  // −0.5, −0.125 and that constant
  const std::vector<double> p{0.3, -0.7};
  const double expected = -0.5 * 0.3 * 0.3 - 0.5 * std::log(2 * M_PI) +
                          (-0.5 * std::pow((-0.7 - 1.0) / 2.0, 2) - std::log(2.0) - 0.5 * std::log(2 * M_PI));
  CHECK(model.log_prob(p) == Approx(expected).epsilon(1e-13));
}
