// Property check for the exp/log rules of tyche/autodiff/exp_log.hpp.
#include <tyche/tyche.hpp>

#include "support/property.hpp"

#include <cmath>
#include <limits>
#include <random>
#include <vector>

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

#if TYCHE_HAS_XSIMD
TEST_CASE("exp_log: a batch's log1p sharing 1 / (1 + e) is xsimd's log1p to the bit", "[autodiff][exp_log]") {
  // math::log1p_unit (backends/simd/batch.hpp) takes log1p's correction term with the caller's
  // r = 1 / (1 + e) instead of a division: the same value wherever the product and the quotient
  // round alike, which over these arguments (both sides of the reduction's threshold √2 − 1, the
  // ends of [0, 1], tiny and subnormal e) is everywhere. A NaN stays NaN.
  auto run = [](auto batch) {
    using B = decltype(batch);
    constexpr std::size_t L = B::size;
    std::vector<double> args = {0.0, 1.0, 0x1p-1074, 1e-300, 1e-18, 1e-9, 0.4142135623730950, 0x1.6a09ep+0 - 1.0,
                                std::nextafter(0x1.6a09ep+0 - 1.0, 0.0), std::nextafter(0x1.6a09ep+0 - 1.0, 1.0),
                                std::nextafter(1.0, 0.0)};
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> u(0.0, 1.0), decades(-20.0, 0.0);
    for (int i = 0; i < 20000; ++i) args.push_back(i % 2 ? u(rng) : std::pow(10.0, decades(rng)));
    while (args.size() % L != 0) args.push_back(0.5);
    std::size_t differ = 0;
    for (std::size_t i = 0; i < args.size(); i += L) {
      const B e = B::load_unaligned(&args[i]);
      const B one(1.0);
      const B got = math::log1p_unit(e, one + e, one / (one + e));
      const B want = xsimd::log1p(e);
      alignas(64) double g[L], w[L];
      got.store_aligned(g);
      want.store_aligned(w);
      for (std::size_t l = 0; l < L; ++l)
        if (g[l] != w[l]) {
          ++differ;
          INFO("e = " << args[i + l] << ": " << g[l] << " against " << w[l]);
          CHECK(std::fabs(g[l] - w[l]) <= 2e-16 * std::fabs(w[l]));
        }
    }
    CHECK(differ == 0);
    const B nan(std::numeric_limits<double>::quiet_NaN());
    CHECK(xsimd::all(xsimd::isnan(math::log1p_unit(nan, B(1.0) + nan, B(1.0) / (B(1.0) + nan)))));
  };
  run(xsimd::batch<double>{});
  [&]<class H>(std::type_identity<H>) {  // the half width, where the build has one
    if constexpr (!std::is_void_v<H>) run(H{});
  }(std::type_identity<half_lane_batch>{});
}
#endif
