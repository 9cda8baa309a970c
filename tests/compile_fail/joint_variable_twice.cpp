// expect: tyche::joint\(terms\.\.\.\): a random variable is listed twice
#include <tyche/tyche.hpp>
int main() {
  using namespace tyche;
  auto mu = normal<"mu">(0.0, 1.0);
  auto j = joint(mu, mu);
  return sizeof(j) > 0 ? 0 : 1;
}
