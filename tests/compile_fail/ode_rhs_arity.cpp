// expect: requires f\(t, y\) to take the time and the state
// f written as Stan's f(t, y, theta) with a parameter argument, or as scan's step f(y): one
// message naming what ode_rk45 calls f with.
#include <tyche/tyche.hpp>
#include <vector>
int main() {
  using namespace tyche;
  static const std::vector<double> ts{1.0, 2.0};
  auto k = lognormal<"k">(0.0, 1.0);
  auto sol = ode_rk45([&](const auto& y) { return -k * y; }, 1.0, 0.0, data(ts));
  return sizeof(sol) > 0 ? 0 : 1;
}
