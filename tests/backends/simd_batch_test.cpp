// tyche/backends/simd/batch.hpp: the batch overloads of tyche::math, lane by lane against the
// scalar functions, with lanes holding different arguments (the case xsimd 8.1's float lgamma
// gets wrong, which the per-lane fallback fixes).
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#if TYCHE_HAS_XSIMD
TEST_CASE("simd batch: math functions agree with scalar lane by lane", "[backends][simd]") {
  using namespace tyche;
  auto run = [&]<class B>(B, double tol) {
    using E = typename B::value_type;
    std::mt19937_64 rng(4);
    std::uniform_real_distribution<double> u(0.3, 20);
    for (int i = 0; i < 2000; ++i) {
      alignas(64) E xs[B::size];
      for (auto& x : xs) x = static_cast<E>(u(rng));
      const B b = B::load_aligned(xs);
      const B lg = math::lgamma(b), dg = math::digamma(b), lg1p = math::log1p(b);
      for (std::size_t l = 0; l < B::size; ++l) {
        INFO("x = " << xs[l]);
        CHECK(std::fabs(lg.get(l) - math::lgamma(xs[l])) <=
              tol * std::max<double>(1, std::fabs(math::lgamma(xs[l]))));
        CHECK(std::fabs(dg.get(l) - math::digamma(xs[l])) <=
              tol * std::max<double>(1, std::fabs(math::digamma(xs[l]))));
        CHECK(std::fabs(lg1p.get(l) - math::log1p(xs[l])) <= tol * std::fabs(math::log1p(xs[l])));
      }
    }
  };
  run(xsimd::batch<double>{}, 1e-13);
  run(xsimd::batch<float>{}, 1e-5);
}
#else
TEST_CASE("simd batch: not built with xsimd", "[backends][simd]") { WARN("TYCHE_USE_XSIMD off"); }
#endif
