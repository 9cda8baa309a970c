// expect: solve_newton/solve_powell\(f, guess\): a tuple 'guess' must hold numbers or scalar expressions
// A tuple guess holding a vector expression (the guess of all unknowns at once, wrapped in a tuple).
#include <tyche/tyche.hpp>
int main() {
  using namespace tyche;
  auto c = lognormal<"c">(0.0, 1.0, shape<2>);
  auto x = solve_newton([&](const auto& x) { return x * x - c; }, std::tuple{c});
  return sizeof(x) > 0 ? 0 : 1;
}
