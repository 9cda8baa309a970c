// expect: f\(t, y\) returns a tuple whose size is not the state's size
// A two-state system whose f returns one derivative: the message says so (the sizes are in the
// diagnostic's template arguments), not a wall of template noise.
#include <tyche/tyche.hpp>
#include <vector>
int main() {
  using namespace tyche;
  static const std::vector<double> ts{1.0, 2.0};
  auto k = lognormal<"k">(0.0, 1.0);
  auto sol = ode_rk45([&](const auto&, const auto& a) { return std::tuple{-k * a[0]}; }, std::tuple{1.0, 0.0}, 0.0,
                      data(ts));
  return sizeof(sol) > 0 ? 0 : 1;
}
