// expect: tyche::nuts\(model, config, executor\) requires an executor
#include <tyche/tyche.hpp>
int main() {
  using namespace tyche;
  auto m = model(joint(normal<"mu">(0.0, 1.0)));
  return nuts(m, {.chains = 2}, 4).chains;  // a number of threads, not tyche::cpu{.threads = 4}
}
