// expect: Returned = 3; long unsigned int State = 2|scan_step_size_mismatch<3UL, 2UL>
// The diagnostic shows both sizes: the step returns 3 values, the state holds 2.
#include <tyche/tyche.hpp>
#include <tuple>
#include <vector>
int main() {
  using namespace tyche;
  static const std::vector<double> y{1.0, 2.0};
  auto mu = normal<"mu">(0.0, 1.0);
  // The state has two values, the step returns three.
  auto s = scan([&](const auto& a, const auto& x) { return std::tuple{a[0] + x, a[1] * mu, x}; },
                std::tuple{0.0, mu}, data(y));
  return sizeof(s) > 0 ? 0 : 1;
}
