// expect: ode_stiff\(f, y0, t0, ts\) requires the output times ts as data
// ode_stiff (its own check, as ode_rk45's) with the output times as a bare std::vector.
#include <tyche/tyche.hpp>
#include <vector>
int main() {
  using namespace tyche;
  static const std::vector<double> ts{1.0, 2.0};
  auto k = lognormal<"k">(0.0, 1.0);
  auto sol = ode_stiff([&](const auto&, const auto& y) { return -k * y; }, 1.0, 0.0, ts);
  return sizeof(sol) > 0 ? 0 : 1;
}
