// expect: f returns a scalar but the state has more than one value
// A two-state system whose f returns one scalar expression where a std::tuple of two was meant.
#include <tyche/tyche.hpp>
#include <vector>
int main() {
  using namespace tyche;
  static const std::vector<double> ts{1.0, 2.0};
  auto k = lognormal<"k">(0.0, 1.0);
  auto sol = ode_rk45([&](const auto&, const auto& a) { return -k * a[0]; }, std::tuple{1.0, 0.0}, 0.0, data(ts));
  return sizeof(sol) > 0 ? 0 : 1;
}
