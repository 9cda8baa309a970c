// expect: ode_stiff\(f, y0, t0, ts\) requires the state's size to be known at compile time
// y0 as data(v): its size is known only at run time, so the state's cannot be.
#include <tyche/tyche.hpp>
#include <vector>
int main() {
  using namespace tyche;
  static const std::vector<double> ts{1.0, 2.0}, start{1.0, 0.0};
  auto k = lognormal<"k">(0.0, 1.0);
  auto sol = ode_rk45([&](const auto&, const auto& a) { return -k * a; }, data(start), 0.0, data(ts));
  return sizeof(sol) > 0 ? 0 : 1;
}
