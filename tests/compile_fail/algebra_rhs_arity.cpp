// expect: solve_newton/solve_powell\(f, guess\) requires f\(x\) to take the unknowns
// f written as an ODE's right-hand side f(t, y): one message naming what the solver calls f with.
#include <tyche/tyche.hpp>
int main() {
  using namespace tyche;
  auto c = lognormal<"c">(0.0, 1.0);
  auto x = solve_powell([&](const auto&, const auto& y) { return y * y - c; }, 1.0);
  return sizeof(x) > 0 ? 0 : 1;
}
