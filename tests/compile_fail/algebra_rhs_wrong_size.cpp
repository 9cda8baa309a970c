// expect: solve_newton/solve_powell\(f, guess\): f\(x\) returns a tuple whose size is not the number of unknowns
// f returns one residual for two unknowns (the guess has two values).
#include <tyche/tyche.hpp>
int main() {
  using namespace tyche;
  auto c = lognormal<"c">(0.0, 1.0);
  auto x = solve_newton([&](const auto& x) { return std::tuple{x[0] * x[1] - c}; }, std::tuple{1.0, 1.0});
  return sizeof(x) > 0 ? 0 : 1;
}
