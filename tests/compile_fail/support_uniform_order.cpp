// expect: uniform\(a, b\): b - a must be > 0
// Bounds in the wrong order, proven by the literals: b − a is lit<−2>.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  const auto m = model(joint(uniform<"u">(lit<3>, lit<1>)));
  return static_cast<int>(m.dim());
}
