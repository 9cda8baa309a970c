// expect: tyche::prod\(v\) requires 'v' to be a vector expression; it is a scalar
// prod, reverse and diag_matrix take a vector expression (the same message for each).
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  param<"a"> a;
  auto p = prod(a * 2.0);
  (void)p;
}
