// expect: a hurdle model.s values can only be observed: hurdle\(d, theta\)\.observe\(data\(y\)\)
// hurdle<"y">(...) as if it made a random variable.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  const auto m = model(joint(hurdle<"y">(poisson(2.0), 0.3)));
  return static_cast<int>(m.dim());
}
