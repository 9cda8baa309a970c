// The HMM of Paige & Wood (2014) Section 4 (K = 10 states, 50 observations, y_t ~ N(z_t, 2²);
// transition matrix and data in paper_programs.hpp), against its exact marginals by
// forward–backward.
//
// Thresholds. For an estimate from S effectively independent draws, E KL(p̂ ‖ p) ≈
// Σ_t (K_t − 1) / (2 S), K_t the number of states with non-negligible mass at t; the sweeps of
// 100 particles give a few effective draws each. The thresholds below are about 3× the KL
// measured with these seeds (SMC 0.08, PIMH 0.16, PG 0.21 after 1000 sweeps), so a failure
// means a bias or a loss of efficiency well beyond Monte Carlo noise. The [.long] case runs
// 20 000 sweeps to KL < 0.02.
#include <tyche/tyche.hpp>

#include "paper_programs.hpp"

#include "support/sanitized.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

namespace {
namespace smc = tyche::smc;
using namespace smc_programs;

smc::result run(int algorithm, const smc::config& cfg) {
  if (algorithm == 0) return smc::run_smc(hmm_stepwise(), cfg);
  if (algorithm == 1) return smc::run_pimh(hmm_stepwise(), cfg);
  return smc::run_pg(hmm_stepwise(), cfg);
}
}  // namespace

TEST_CASE("HMM: forward-backward matches brute-force enumeration on the first 5 observations", "[smc]") {
  const std::size_t T = 5, K = hmm_states;
  const auto fb = hmm_marginals(T);
  const hmm_model& h = hmm();
  std::vector<std::array<double, hmm_states>> brute(T);
  for (auto& b : brute) b.fill(0);
  std::array<std::size_t, 5> z{};
  double total = 0;
  for (std::size_t code = 0; code < 100000; ++code) {
    std::size_t c = code;
    for (auto& v : z) {
      v = c % K;
      c /= K;
    }
    double p = h.initial[z[0]];
    for (std::size_t t = 0; t < T; ++t) {
      if (t > 0) p *= h.transition[z[t - 1]][z[t]];
      p *= std::exp(smc::normal_lpdf(h.data[t], double(z[t]), hmm_sd));
    }
    total += p;
    for (std::size_t t = 0; t < T; ++t) brute[t][z[t]] += p;
  }
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t k = 0; k < K; ++k) CHECK(fb[t][k] == Approx(brute[t][k] / total).epsilon(1e-10).margin(1e-14));
}

TEST_CASE("HMM: SMC, PIMH and PG with 100 particles approach the exact marginals (in-process)", "[smc]") {
  const auto exact = hmm_marginals();
  const double threshold[] = {0.25, 0.5, 0.6};
  for (int a = 0; a < 3; ++a) {
    const auto r = run(a, {.particles = 100, .sweeps = 1000, .seed = 1});
    const double kl = hmm_kl(hmm_estimate(r), exact);
    INFO("algorithm " << a << ": KL " << kl);
    CHECK(kl < threshold[a]);
  }
}

TEST_CASE("HMM: 20000 sweeps of 100 particles reach KL < 0.02 (in-process)", "[smc][.long]") {
  const auto exact = hmm_marginals();
  for (int a = 0; a < 3; ++a) {
    const auto r = run(a, {.particles = 100, .sweeps = 20000, .seed = 1});
    const double kl = hmm_kl(hmm_estimate(r), exact);
    INFO("algorithm " << a << ": KL " << kl);
    CHECK(kl < 0.02);
  }
}

TEST_CASE("HMM: the fork engine gives the in-process engine's answer, bit for bit", "[smc][fork]") {
  // Both engines draw from the same streams and resample the same way (sorted ancestors), so
  // on the same program their outputs are identical; the hand-written callable (the paper's
  // Figure 2 form) is the same program as the stepwise one.
  for (int a = 0; a < 3; ++a) {
    // Under ASan (tests/support/sanitized.hpp) a fifth of the particles: equality holds at any size.
    const std::size_t scale = tyche_test::address_sanitized ? 5 : 1;
    const smc::config cfg{.particles = (a == 0 ? 50u : 10u) / scale, .sweeps = a == 0 ? 1u : 2u, .seed = 7};
    const auto in_process = run(a, cfg);
    smc::config fork_cfg = cfg;
    fork_cfg.engine = smc::engine_kind::fork;
    const auto stepwise_on_fork = run(a, fork_cfg);
    const auto callable_on_fork = a == 0 ? smc::run_smc(hmm_program, fork_cfg)
                                  : a == 1 ? smc::run_pimh(hmm_program, fork_cfg)
                                           : smc::run_pg(hmm_program, fork_cfg);
    INFO("algorithm " << a);
    for (const auto* f : {&stepwise_on_fork, &callable_on_fork}) {
      CHECK(f->log_evidence == in_process.log_evidence);
      CHECK(f->weights() == in_process.weights());
      for (std::size_t t : {0u, 17u, 49u}) {
        const auto name = smc::predictions::indexed_name("z", t);
        CHECK(f->samples(name) == in_process.samples(name));
      }
      CHECK(f->sweeps.size() == in_process.sweeps.size());
    }
  }
}
