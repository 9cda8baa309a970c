// The identities applied as nodes are built (operations/identities.hpp, operations/functions.hpp):
// x + 0, x − 0, x·1, 1·x, x/1, x¹ vanish; literal ∘ literal folds in exact rational arithmetic;
// −(−x) is x; x², x^½, x⁻¹ of a literal exponent become square, sqrt, inverse; log(exp(x)) is x;
// log(logistic(x)) and log(1 − logistic(x)) become log_logistic and log1m_logistic. Checked on
// the types (the node is gone), and on values and gradients against the same expression written
// without them.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <type_traits>
#include <vector>

#include "support/property.hpp"

using namespace tyche;

namespace {
param<"x"> x;
param<"y"> y;
using X = param<"x">;
}  // namespace

// The node is gone from the type.
static_assert(std::is_same_v<decltype(x + lit<0>), X>);
static_assert(std::is_same_v<decltype(lit<0> + x), X>);
static_assert(std::is_same_v<decltype(x - lit<0>), X>);
static_assert(std::is_same_v<decltype(x * lit<1>), X>);
static_assert(std::is_same_v<decltype(lit<1> * x), X>);
static_assert(std::is_same_v<decltype(x / lit<1>), X>);
static_assert(std::is_same_v<decltype(x * lit<2, 2>), X>);  // 2/2 is 1
static_assert(std::is_same_v<decltype(pow(x, lit<1>)), X>);
static_assert(std::is_same_v<decltype(-(-x)), X>);
static_assert(std::is_same_v<decltype(log(exp(x))), X>);
// Literals fold exactly, in lowest terms.
static_assert(std::is_same_v<decltype(lit<1, 2> + lit<1, 3>), literal<5, 6>>);
static_assert(std::is_same_v<decltype(lit<1, 2> - lit<1, 2>), literal<0>>);
static_assert(std::is_same_v<decltype(lit<2, 4> * lit<-3>), literal<-3, 2>>);
static_assert(std::is_same_v<decltype(lit<3> / lit<-6>), literal<-1, 2>>);
static_assert(std::is_same_v<decltype(-lit<3, 4>), literal<-3, 4>>);
static_assert(std::is_same_v<decltype(x + (lit<1, 2> - lit<1, 2>)), X>);  // folds, then vanishes
// Cheaper nodes.
static_assert(std::is_same_v<decltype(pow(x, lit<2>)), decltype(square(x))>);
static_assert(std::is_same_v<decltype(pow(x, lit<1, 2>)), decltype(sqrt(x))>);
static_assert(std::is_same_v<decltype(pow(x, lit<-1>)), decltype(inverse(x))>);
static_assert(std::is_same_v<decltype(log(logistic(x))), decltype(log_logistic(x))>);
static_assert(std::is_same_v<decltype(log1m(logistic(x))), decltype(log1m_logistic(x))>);
// What must not vanish: 0·x (x may be ∞ or NaN), x/0, and run-time constants.
static_assert(!std::is_same_v<decltype(lit<0> * x), literal<0>>);
static_assert(!std::is_same_v<decltype(x + 0.0), X>);

TEST_CASE("identities: values and gradients equal the expressions written without them",
          "[partial_eval][identities]") {
  // Each pair: the expression with identities, and the same function written plainly.
  const auto a1 = compile((x + lit<0>) * lit<1> * (y - lit<0>) / lit<1> + pow(y, lit<1>), x, y);
  const auto b1 = compile(x * y + y, x, y);
  const auto a2 = compile(log(exp(x * y)) + -(-y) * (lit<1, 2> + lit<1, 3>), x, y);
  const auto b2 = compile(x * y + y * 0.8333333333333333703, x, y);
  const auto a3 = compile(log(logistic(x)) + log1m(logistic(y)), x, y);
  const auto b3 = compile(-log1p_exp(-x) - log1p_exp(y), x, y);
  const auto a4 = compile(pow(exp(x), lit<2>) + pow(exp(y), lit<1, 2>) + pow(exp(x + y), lit<-1>), x, y);
  const auto b4 = compile(exp(2.0 * x) + exp(0.5 * y) + exp(-(x + y)), x, y);
  for (const auto& p : tyche_test::random_points(30, 2, -2, 2, 5)) {
    auto same = [&](const auto& fa, const auto& fb, const char* what) {
      std::vector<double> g1(2), g2(2);
      const double v1 = fa.value_and_gradient(p, g1), v2 = fb.value_and_gradient(p, g2);
      INFO(what << " at (" << p[0] << ", " << p[1] << ")");
      CHECK(v1 == Approx(v2).epsilon(1e-12));
      CHECK(g1[0] == Approx(g2[0]).epsilon(1e-12).margin(1e-12));
      CHECK(g1[1] == Approx(g2[1]).epsilon(1e-12).margin(1e-12));
    };
    same(a1, b1, "x + 0, x * 1, x - 0, x / 1, y^1");
    same(a2, b2, "log(exp(.)), -(-y), 1/2 + 1/3");
    same(a3, b3, "log(logistic(x)), log1m(logistic(y))");
    same(a4, b4, "pow(., 2), pow(., 1/2), pow(., -1)");
  }
  // log(logistic(x)) stays finite where the plain composition underflows.
  CHECK(std::isfinite(a3.value(std::vector<double>{-800.0, 800.0})));
  CHECK(explain(a1) == explain(b1));
}
