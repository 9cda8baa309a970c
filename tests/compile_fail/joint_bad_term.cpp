// expect: tyche::joint\(terms\.\.\.\) requires every term to be a named random variable
#include <tyche/tyche.hpp>
int main() {
  using namespace tyche;
  auto mu = normal<"mu">(0.0, 1.0);
  auto j = joint(mu, normal(mu, 1.0));  // a distribution, not observed: forgot .observe(...)
  return sizeof(j) > 0 ? 0 : 1;
}
