// expect: requires the output times ts as data
// The output times as a bare std::vector (Stan's array ts) instead of data(ts).
#include <tyche/tyche.hpp>
#include <vector>
int main() {
  using namespace tyche;
  static const std::vector<double> ts{1.0, 2.0};
  auto k = lognormal<"k">(0.0, 1.0);
  auto sol = ode_rk45([&](const auto&, const auto& y) { return -k * y; }, 1.0, 0.0, ts);
  return sizeof(sol) > 0 ? 0 : 1;
}
