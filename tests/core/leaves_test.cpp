// Leaves (tyche/core/leaves.hpp): every way data comes in, and the errors for bad shapes.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>
#include <xtensor/xarray.hpp>
#include <xtensor/xtensor.hpp>

#include <array>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

using namespace tyche;
using Catch::Matchers::Contains;

namespace {
/// Σ_i d_i v_i through the given data view, at v = (1, 2, 3).
template <class D>
double weighted_sum(const D& d) {
  vector_param<"v", 3> v;
  return compile(sum(d * v)).value(std::vector<double>{1, 2, 3});
}
}  // namespace

TEST_CASE("leaves: data from every supported container gives the same model", "[core][leaves]") {
  const std::vector<double> vec{0.5, -1, 2};
  const std::array<double, 3> arr{0.5, -1, 2};
  const std::span<const double> spn(vec);
  const xt::xtensor<double, 1> xt1{0.5, -1, 2};
  const xt::xarray<double> xa{0.5, -1, 2};
  const double expected = 0.5 * 1 - 1 * 2 + 2 * 3;
  CHECK(weighted_sum(data(vec)) == expected);
  CHECK(weighted_sum(data(arr)) == expected);
  CHECK(weighted_sum(data(spn)) == expected);
  CHECK(weighted_sum(data(xt1)) == expected);
  CHECK(weighted_sum(data(xa)) == expected);
  CHECK(weighted_sum(data(vec.data(), 3)) == expected);
  STATIC_REQUIRE(extent_v<decltype(data(arr))> == 3);
  // A data scalar is a run-time constant.
  param<"x"> x;
  CHECK(compile(x * data(2.5)).value(std::vector<double>{2.0}) == 5.0);
}

TEST_CASE("leaves: a run-time-size data vector minus a scalar loops over every element",
          "[core][leaves]") {
  const std::vector<double> y{1.0, 2.0, 4.0};
  param<"mu"> mu;
  const auto f = compile(sum(lit<-1, 2> * square(data(y) - mu)) + sum(mu * data(y)));
  std::vector<double> g(1);
  CHECK(f.value_and_gradient(std::vector<double>{1.5}, g) == Approx(-3.375 + 1.5 * 7));
  CHECK(g[0] == Approx(2.5 + 7));
}

TEST_CASE("leaves: data is a view, so later changes to the container are seen",
          "[core][leaves]") {
  std::vector<double> y{1, 1, 1};
  vector_param<"v", 3> v;
  const auto f = compile(sum(data(y) * v));
  y[2] = 10;
  CHECK(f.value(std::vector<double>{1, 1, 1}) == 12.0);
}

TEST_CASE("leaves: matrices from xtensor and pointers", "[core][leaves]") {
  const xt::xtensor<double, 2> x{{1, 2}, {3, 4}, {5, 6}};
  vector_param<"b", 2> b;
  const auto f = compile(sum(matrix(x) * b));
  CHECK(f.value(std::vector<double>{1, -1}) == Approx((1 - 2) + (3 - 4) + (5 - 6)));
  const std::vector<double> flat{1, 2, 3, 4, 5, 6};
  const auto g = compile(sum(matvec(matrix(flat.data(), 3, 2), b)));
  CHECK(g.value(std::vector<double>{2, 1}) == Approx(4 + 10 + 16));
}

TEST_CASE("leaves: bad shapes are refused with a message that says what is wrong",
          "[core][leaves]") {
  const xt::xarray<double> two_d{{1, 2}, {3, 4}};
  CHECK_THROWS_WITH(data(two_d), Contains("one-dimensional") && Contains("2 dimensions"));
  const xt::xarray<double> one_d{1, 2, 3};
  CHECK_THROWS_WITH(matrix(one_d), Contains("two-dimensional") && Contains("1 dimensions"));
  const xt::xarray<double, xt::layout_type::column_major> col_major{{1, 2}, {3, 4}};
  CHECK_THROWS_WITH(matrix(col_major), Contains("row-major"));
}

TEST_CASE("fixed_string: names up to 63 bytes, any bytes, compared by their characters", "[core][leaves]") {
  using tyche::fixed_string;
  constexpr fixed_string longest = "a_name_of_exactly_sixty_three_bytes_which_is_the_longestallowed";
  static_assert(longest.size() == 63);
  tyche::param<longest> p;
  REQUIRE(decltype(p)::name.str() == "a_name_of_exactly_sixty_three_bytes_which_is_the_longestallowed");
  // UTF-8: bytes above 0x7f survive the packing into words.
  constexpr fixed_string mu = "μ_σ";
  REQUIRE(mu.str() == "μ_σ");
  static_assert(mu.size() == 5);
  static_assert(fixed_string("mu") == fixed_string("mu"));
  static_assert(!(fixed_string("mu") == fixed_string("mv")));
  static_assert(!(fixed_string("mu") == fixed_string("mu_")));
  static_assert(fixed_string("__scan_x0").starts_with("__scan_"));
  static_assert(!fixed_string("__sca").starts_with("__scan_"));
  // The packed form nvcc's generated code spells: bytes past the length are cleared, so the
  // same name gives the same template argument.
  static_assert(std::is_same_v<tyche::param<fixed_string<3>(0x756dULL)>, tyche::param<"mu">>);
  static_assert(std::is_same_v<tyche::param<fixed_string<3>(0xff00756dULL)>, tyche::param<"mu">>);
}
