// Compile-time properties of nodes (tyche/core/expr.hpp): parameter dependencies, shape,
// shareability. Checked with static_assert; the TEST_CASE only makes the file a test.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <type_traits>
#include <vector>

using namespace tyche;

namespace expr_test {
// Named (not anonymous) namespace and inline: these are only used inside decltype.
inline const std::vector<double> y(3, 1.0);
inline const std::array<double, 4> fixed{1, 2, 3, 4};
inline param<"mu"> mu;
inline param<"tau"> tau;
inline vector_param<"v", 3> v;

using sum_of_two = decltype(mu + exp(tau));
static_assert(depends_on_v<sum_of_two, "mu"> && depends_on_v<sum_of_two, "tau">);
static_assert(!depends_on_v<sum_of_two, "v">);
static_assert(params_of<sum_of_two>::size == 2);
// First appearance order, each parameter once.
static_assert(std::is_same_v<params_of<decltype(exp(tau) * mu + tau * mu)>,
                             meta::list<param<"tau">, param<"mu">>>);
static_assert(std::is_same_v<params_of<decltype(sum(v * mu))>,
                             meta::list<vector_param<"v", 3>, param<"mu">>>);

// Data and constants only: no parameter, so compile() folds it.
using data_only = decltype(log(data(y)) * 2.0 + 1.0);
static_assert(!depends_on_params_v<data_only>);
static_assert(depends_on_params_v<decltype(data(y) * mu)>);

// Shapes: a scalar broadcast against a vector is a vector of the vector's size.
static_assert(is_vector_v<decltype(mu * v)> && extent_v<decltype(mu * v)> == 3);
static_assert(!is_vector_v<decltype(sum(mu * v))>);
static_assert(extent_v<decltype(data(fixed))> == 4);
static_assert(extent_v<decltype(data(y))> == dynamic_extent);
static_assert(extent_v<decltype(data(y) + v)> == 3);
static_assert(extent_v<decltype(data(y) - mu)> == dynamic_extent);  // a scalar does not fix it
static_assert(extent_v<decltype(mu * data(y))> == dynamic_extent);
static_assert(extent_v<decltype(data(fixed) - mu)> == 4 && extent_v<decltype(mu - v)> == 3);
static_assert(is_elementwise_v<decltype(exp(v))> && !is_elementwise_v<decltype(exp(mu))>);

// Shareable: the type alone determines the value.
static_assert(shareable_v<sum_of_two>);
static_assert(shareable_v<decltype(mu * lit<2>)>);
static_assert(!shareable_v<decltype(mu * 2.0)>);       // 2.0 is a run-time constant
static_assert(!shareable_v<decltype(sum(data(y) * v))>);  // a data view is a payload
static_assert(shareable_v<decltype(pow(mu, tau))>);
static_assert(!shareable_v<decltype(pow(mu, 2.5))>);   // the exponent is a payload

// Literal values.
static_assert(literal<1, 4>::value == 0.25 && decltype(lit<-3>)::value == -3.0);
}  // namespace expr_test

TEST_CASE("expr: compile-time node properties hold (static_assert)", "[core][expr]") {
  CHECK(params_of<expr_test::sum_of_two>::size == 2);
}
