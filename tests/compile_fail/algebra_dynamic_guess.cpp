// expect: solve_newton/solve_powell\(f, guess\) requires the number of unknowns to be known at compile time
// The guess as data(v): its size is known only at run time, so the number of unknowns cannot be.
#include <tyche/tyche.hpp>
#include <vector>
int main() {
  using namespace tyche;
  static const std::vector<double> guess{1.0, 1.0};
  auto c = lognormal<"c">(0.0, 1.0);
  auto x = solve_newton([&](const auto& x) { return x * x - c; }, data(guess));
  return sizeof(x) > 0 ? 0 : 1;
}
