// expect: a plain callable program runs on the fork engine, which this build does not have
// Without the fork engine (TYCHE_SMC_FORK_ENGINE 0, as on a system without <sys/prctl.h>), a
// plain callable cannot run; the message says to write it as a stepwise program.
#define TYCHE_SMC_FORK_ENGINE 0
#include <tyche/tyche.hpp>

int main() {
  namespace smc = tyche::smc;
  const auto r = smc::run_smc([] { smc::observe(smc::normal_lpdf(1.0, smc::sample_normal(0.0, 1.0), 1.0)); });
  (void)r;
}
