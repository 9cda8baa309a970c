// expect: a named random variable needs a continuous family; poisson is discrete and can only be observed
// A discrete family named as a random variable: the reason, not a failed deduction of "k" as a
// type (every observed-only family has the same message: TYCHE_OBSERVED_ONLY_FAMILY).
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  auto k = poisson<"k">(3.0);
  (void)k;
  return 0;
}
