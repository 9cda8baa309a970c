// nuts() on 100-dimensional Gaussians: the standard normal, and the correlated Gaussian with
// Σᵢⱼ = 0.9^|i−j| written as its AR(1) factorisation (x₁ ~ N(0, 1), xᵢ − 0.9 xᵢ₋₁ ~ N(0, √0.19),
// a unit-triangular map, so its Jacobian is 1). Each coordinate's mean within 4 MCSE of 0 and
// its variance within 10 % of 1. 4 chains, 1000 warm-up, 1000 draws, Stan's defaults, fixed seeds.
// Under AddressSanitizer (the clang tree of tools/test.sh) the correlated Gaussian runs 4 chains of
// 100 + 100 and checks only that every draw is finite (43 s at full size there, for a statistical
// check the g++ tree makes in full; as posteriordb_nuts_test's reference runs).
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "support/sanitized.hpp"

namespace {
template <class Model>
void check_standard_marginals(const Model& m, std::uint64_t seed, const char* what) {
  const auto fit = tyche::nuts(m, {.chains = 4, .warmup = 1000, .draws = 1000, .seed = seed});
  int worst = 0;
  double worst_z = 0;
  for (std::size_t k = 0; k < fit.dim(); ++k) {
    const auto chains = fit.parameter(k);
    double mean = 0, var = 0, n = 0;
    for (const auto& c : chains)
      for (double v : c) {
        mean += v;
        n += 1;
      }
    mean /= n;
    for (const auto& c : chains)
      for (double v : c) var += (v - mean) * (v - mean) / (n - 1);
    const double mcse = tyche::mcse_mean(chains);
    const double z = std::fabs(mean) / mcse;
    if (z > worst_z) {
      worst_z = z;
      worst = static_cast<int>(k);
    }
    INFO(what << " " << fit.names[k] << ": mean " << mean << " (MCSE " << mcse << "), variance " << var);
    CHECK(z < 4.0);
    CHECK(std::fabs(var - 1.0) < 0.10);
  }
  WARN(what << ": largest |mean| / MCSE = " << worst_z << " at " << fit.names[static_cast<std::size_t>(worst)]
            << "; " << fit.divergences() << " divergences");
}
}  // namespace

TEST_CASE("nuts: 100-d standard normal", "[nuts]") {
  using namespace tyche;
  check_standard_marginals(model(joint(std_normal<"x">(shape<100>))), 7001, "standard normal");
}

TEST_CASE("nuts: 100-d correlated Gaussian, Sigma_ij = 0.9^|i-j|", "[nuts]") {
  using namespace tyche;
  constexpr std::size_t d = 100;
  const double rho = 0.9;
  static std::vector<double> shift(d * d, 0.0), zero(d, 0.0), scale(d, std::sqrt(1 - rho * rho));
  for (std::size_t i = 1; i < d; ++i) shift[i * d + (i - 1)] = 1.0;  // (S x)_i = x_{i−1}
  scale[0] = 1.0;
  auto x = flat<"x">(shape<d>);
  const auto m = model(joint(x, normal(data(zero), data(scale))
                                    .observe(x - rho * matvec(matrix(shift.data(), d, d), x))));
  if constexpr (tyche_test::address_sanitized) {
    const auto fit = nuts(m, {.chains = 4, .warmup = 100, .draws = 100, .seed = 7002});
    for (const auto& chain : fit.values)
      for (const double v : chain) REQUIRE(std::isfinite(v));
    REQUIRE(fit.values.size() == 4);
    REQUIRE(fit.values[0].size() == 100 * d);
    return;
  }
  check_standard_marginals(m, 7002, "correlated Gaussian");
}
