// expect: 'step' returns something that is not a number .*tyche::smc::normal_lpdf\(\.\.\.\) or pass 9\.0
#include <tyche/tyche.hpp>
#include <cmath>
using namespace tyche;
using namespace tyche::smc;
int main() {
  // docs/smc.md's stepwise snippet under both using-directives: the int 9 makes the NUTS
  // expression tyche::normal_lpdf the better match, and the step returns a graph node.
  const auto program = stepwise(
      0.0, 2,
      [](double& mu, std::size_t n, tyche::counter_rng& g) {
        if (n == 0) mu = sample_normal(g, 1, std::sqrt(5.0));
        return normal_lpdf(n == 0 ? 9 : 8, mu, std::sqrt(2.0));
      },
      [](const double& mu, predictions& p) { p("mu", mu); });
  return static_cast<int>(program.observations);
}
