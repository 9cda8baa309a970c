// expect: Component = 2\].*depends on nothing that changes|depends on nothing that changes.*scan_step_returns_constant<2UL>
#include <tyche/tyche.hpp>
#include <tuple>
#include <vector>
// A Kalman filter's step that returns 0.0 for the log-likelihood it should accumulate
// (st[2] + normal_lpdf(...) was meant): without the check the model compiled and its log density
// was the prior's alone. One error, naming the component.
int main() {
  using namespace tyche;
  static const std::vector<double> y{0.3, 1.2, 0.8};
  auto sigma = half_normal<"sigma">(1.0);
  auto s = scan([&](const auto& st, const auto& yt) {
    auto v = assume_positive(st[1] + square(sigma));
    return std::tuple{st[0] + st[1] / v * (yt - st[0]), st[1] - st[1] / v * st[1] + square(sigma), 0.0};
  }, std::tuple{0.0, 1.0, 0.0}, data(y));
  auto m = model(joint(sigma, target(at(s, 2))));
  return static_cast<int>(m.dim());
}
