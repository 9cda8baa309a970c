// expect: tyche::segment\(v, i, n\) requires 'v' to be a vector expression with elements i \.\.\. i \+ n - 1
// segment<i, n>(v), i 1-based, reaching past the end of a vector of static size: elements 3, 4 of 3.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  vector_param<"u", 3> u;
  auto f = segment<3, 2>(u);
  (void)f;
}
