// expect: tyche::max\(v\) requires 'v' to be a vector expression; the larger of two scalars is fmax\(a, b\)
// Stan's max(v) is a vector's largest element; tyche::max of one scalar is refused (the larger of
// two scalars is fmax).
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  param<"a"> a;
  auto m = max(exp(a));
  (void)m;
}
