// expect: two different random variables have the same name
// Two variables of different families with one name would share a parameter.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  auto mu = normal<"mu">(0.0, 1.0);
  auto scale = half_normal<"mu">(2.0);
  auto m = model(joint(mu, scale));
  return static_cast<int>(m.dim());
}
