// expect: solve_newton/solve_powell\(f, guess\): f returns a scalar but there is more than one unknown
// Two unknowns, but f returns one scalar expression (a residual of the system, the other forgotten).
#include <tyche/tyche.hpp>
int main() {
  using namespace tyche;
  auto c = lognormal<"c">(0.0, 1.0);
  auto x = solve_powell([&](const auto& x) { return x[0] * x[1] - c; }, std::tuple{1.0, 2.0});
  return sizeof(x) > 0 ? 0 : 1;
}
