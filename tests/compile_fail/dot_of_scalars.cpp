// expect: tyche::dot\(a, b\) requires 'a' and 'b' to be vector expressions
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  param<"x"> x;
  param<"y"> y;
  auto f = dot(x, y);
  (void)f;
}
