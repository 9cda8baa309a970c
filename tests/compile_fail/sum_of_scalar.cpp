// expect: tyche::sum\(a\) requires 'a' to be a vector expression; it is a scalar
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  param<"x"> x;
  auto f = sum(x * x);
  (void)f;
}
