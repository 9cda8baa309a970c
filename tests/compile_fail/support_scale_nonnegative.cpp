// expect: (gamma\(alpha, beta\): beta must be > 0, but its support.*support_is<'\[', '0', ',', ' ', 'i', 'n', 'f', '\)'>|support_is<'\[', '0', ',', ' ', 'i', 'n', 'f', '\)'>.*gamma\(alpha, beta\): beta must be > 0, but its support)
// A rate that can be 0: square(b) has support [0, inf), which is not inside (0, inf). Closed and
// open ends matter.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  const auto b = normal<"b">(0.0, 1.0);
  const auto g = tyche::gamma<"g">(lit<2>, square(b));
  const auto m = model(joint(b, g));
  return static_cast<int>(m.dim());
}
