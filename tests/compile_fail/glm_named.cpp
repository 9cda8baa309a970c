// expect: a GLM is the likelihood of observations y given the data X, not a random variable
// normal_id_glm named as a random variable: the reason, not a failed deduction (the other GLMs are
// discrete and say so through TYCHE_OBSERVED_ONLY_FAMILY).
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  auto y = normal_id_glm<"y">(1.0, 2.0, 3.0, 4.0);
  (void)y;
  return 0;
}
