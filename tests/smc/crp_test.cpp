// The CRP mixture of Paige & Wood (2014) Figure 3 (N = 10 data points, α = 1; per class
// 1/σ² ~ Gamma(1, 1), μ ~ N(0, σ²)), against the exact posterior of the number of classes by
// enumeration of all Bell(10) = 115,975 set partitions with the normal–gamma marginal
// likelihood (paper_programs.hpp).
//
// Thresholds: E KL(p̂ ‖ p) ≈ (K − 1) / (2 S) with K ≈ 6 classes of non-negligible mass and S
// effective draws; 200 sweeps of 100 particles give S in the thousands (measured KL ≈ 5e-4
// for SMC and PIMH, 6e-4 for PG), so KL < 0.005 is about 8× the expected value; the fork
// engine's 10 sweeps give KL ≈ 4e-3 and are held to 0.05 (the issue's --quick target).
#include <tyche/tyche.hpp>

#include "paper_programs.hpp"

#include "support/sanitized.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

namespace {
namespace smc = tyche::smc;
using namespace smc_programs;
}  // namespace

TEST_CASE("CRP: the enumeration visits Bell(10) partitions and gives a distribution", "[smc]") {
  std::size_t partitions = 0;
  const auto p = crp_posterior_classes(&partitions);
  CHECK(partitions == 115975);
  double total = 0;
  for (const auto& [k, v] : p) total += v;
  CHECK(total == Approx(1.0).epsilon(1e-12));
  CHECK(p.size() == 10);
}

TEST_CASE("CRP: the normal-gamma marginal likelihood matches 2-d quadrature", "[smc]") {
  // p(y1, y2) = ∫∫ Π N(y_i | μ, 1/τ) N(μ | 0, 1/τ) Gamma(τ | 1, 1) dμ dτ, midpoint rule.
  const std::vector<double> ys{0.3, -1.2};
  double integral = 0;
  const double dt = 0.01, dm = 0.01;
  for (double tau = dt / 2; tau < 30; tau += dt)
    for (double mu = -12 + dm / 2; mu < 12; mu += dm) {
      const double sd = 1 / std::sqrt(tau);
      double f = std::exp(-tau) * std::exp(smc::normal_lpdf(mu, 0, sd));
      for (double y : ys) f *= std::exp(smc::normal_lpdf(y, mu, sd));
      integral += f * dt * dm;
    }
  CHECK(std::log(integral) == Approx(crp_cluster_log_marginal(ys)).epsilon(1e-3));
}

TEST_CASE("CRP: SMC, PIMH and PG with 100 particles approach the exact posterior (in-process)", "[smc]") {
  const auto exact = crp_posterior_classes();
  for (int a = 0; a < 3; ++a) {
    const smc::config cfg{.particles = 100, .sweeps = 200, .seed = 11};
    const auto r = a == 0 ? smc::run_smc(crp_stepwise(), cfg)
                   : a == 1 ? smc::run_pimh(crp_stepwise(), cfg)
                            : smc::run_pg(crp_stepwise(), cfg);
    const double kl = crp_kl(r.histogram("num_classes"), exact);
    INFO("algorithm " << a << ": KL " << kl);
    CHECK(kl < 0.005);
  }
}

TEST_CASE("CRP: Figure 3's program (mem, Pólya urn) on the fork engine", "[smc][fork]") {
  // The two engines' equality holds at any size, and the in-process engine's KL to the exact
  // posterior is checked at full size above, so the fork engine's follows: 100 particles and 2
  // sweeps (20 under ASan, tests/support/sanitized.hpp). Until 2026-12-01 the g++ tree ran 10
  // and 4 sweeps and checked the fork engine's KL itself (36 s alone; gaussian_test.cpp).
  constexpr bool reduced = tyche_test::address_sanitized;
  for (int a = 0; a < 3; ++a) {
    const smc::config cfg{.particles = reduced ? 20u : 100u, .sweeps = 2u, .seed = 12,
                          .engine = smc::engine_kind::fork};
    const auto r = a == 0 ? smc::run_smc(crp_program, cfg)
                   : a == 1 ? smc::run_pimh(crp_program, cfg)
                            : smc::run_pg(crp_program, cfg);
    smc::config in_cfg = cfg;
    in_cfg.engine = smc::engine_kind::in_process;
    const auto same = a == 0 ? smc::run_smc(crp_stepwise(), in_cfg)
                      : a == 1 ? smc::run_pimh(crp_stepwise(), in_cfg)
                               : smc::run_pg(crp_stepwise(), in_cfg);
    INFO("algorithm " << a);
    // The callable and the stepwise program draw the same numbers in the same order.
    CHECK(r.samples("num_classes") == same.samples("num_classes"));
    CHECK(r.weights() == same.weights());
  }
}

TEST_CASE("mem and polya_urn", "[smc]") {
  tyche::counter_rng g(3, 0);
  smc::polya_urn urn(1.0);
  int calls = 0;
  auto class_of = smc::mem([&](int) {
    ++calls;
    return urn.draw(g);
  });
  const int a = class_of(1), b = class_of(2);
  CHECK(class_of(1) == a);
  CHECK(class_of(2) == b);
  CHECK(calls == 2);
  CHECK(urn.customers() == 2);
  // Pólya urn: the number of classes among n customers has mean Σ_{i<n} α / (α + i).
  double mean = 0;
  const int reps = 20000, n = 10;
  for (int r = 0; r < reps; ++r) {
    smc::polya_urn u(1.0);
    tyche::counter_rng h(5, static_cast<std::uint64_t>(r));
    for (int i = 0; i < n; ++i) u.draw(h);
    mean += double(u.classes()) / reps;
  }
  double expected = 0;
  for (int i = 0; i < n; ++i) expected += 1.0 / (1.0 + i);
  // sd of the class count ≈ 1.1, so the MCSE of the mean is ≈ 1.1 / √20000 = 0.008.
  CHECK(std::fabs(mean - expected) < 4 * 0.008);
}
