// expect: tyche::smc::stepwise\(initial, n, step, predict, key\) requires 'key' callable as
#include <tyche/tyche.hpp>
#include <string>
int main() {
  // A key must map a state to a double (the order correlated PMMH sorts particles in); this one
  // gives a string.
  auto p = tyche::smc::stepwise(
      0.0, 3, [](double& x, std::size_t, auto& g) { x = g.normal(); return 0.0; },
      [](const double&, tyche::smc::predictions&) {}, [](const double& x) { return std::to_string(x); });
  return static_cast<int>(p.observations);
}
