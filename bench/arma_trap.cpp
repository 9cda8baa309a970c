// bench/arma_trap.cpp — chains trapped in an ARMA(1,1) model's non-invertible region (issue 19; bash bench/run.sh
// arma_trap): examples/arma.cpp's model and 200 simulated values with theta ~ normal(0, 2)
// unconstrained, Stan's defaults (4 chains, 1000 + 1000, init uniform(-2, 2) on theta), seeds
// 1 ... N (default 60; argument 2: init_radius). Prints each chain whose mean |theta| > 1, each
// chain caught stuck during warm-up or run again because warm-up left it stuck
// (nuts_config::restart_stuck_chains), and the counts. Stan 2.21 on the same model and data: Rscript bench/stan/arma_trap.R (docs/nuts.md).
#include <tyche/tyche.hpp>

#include "support/arma.hpp"  // tests/support: the model and the series

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>
int main(int argc, char** argv) {
  using namespace tyche;
  static const tyche_test::arma_data d(tyche_test::arma_series());
  const std::vector<double>& y = d.y;
  if (argc > 1 && std::string(argv[1]) == "--json") {  // the data, for bench/stan/arma_trap.R
    std::printf("{\"T\": %zu, \"y\": [", y.size());
    for (std::size_t t = 0; t < y.size(); ++t) std::printf("%s%.17g", t ? ", " : "", y[t]);
    std::printf("]}\n");
    return 0;
  }
  const auto arma = tyche_test::arma_trap_model(d);
  const int seeds = argc > 1 ? std::atoi(argv[1]) : 60;
  const double radius = argc > 2 ? std::atof(argv[2]) : 2.0;
  int trapped = 0, total = 0, restarted = 0, warmup_restarted = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    const auto fit = nuts(arma, {.chains = 4, .seed = (std::uint64_t)seed, .init_radius = radius});
    for (int c = 0; c < 4; ++c) {
      if (fit.restarted_from[c] >= 0) {
        ++restarted;
        std::printf("seed %d chain %d: stuck after warm-up, run again from chain %d\n", seed, c + 1, fit.restarted_from[c] + 1);
      }
      if (fit.warmup_restarted_from[c] >= 0) {
        ++warmup_restarted;
        std::printf("seed %d chain %d: stuck at warm-up iteration %d, went on from chain %d's state\n", seed, c + 1,
                    fit.warmup_restarted_at[c] + 1, fit.warmup_restarted_from[c] + 1);
      }
      double m = 0; for (int d = 0; d < fit.draws; ++d) m += std::fabs(fit.values[c][d * 4 + 2]) / fit.draws;
      ++total; if (m > 1) { ++trapped; std::printf("seed %d chain %d: mean |theta| %.3g step %.3g\n", seed, c + 1, m, fit.step_size[c]); }
    }
  }
  std::printf("trapped %d of %d (nuts_config::restart_stuck_chains: %d caught during warm-up, %d run again after it)\n",
              trapped, total, warmup_restarted, restarted);
}
