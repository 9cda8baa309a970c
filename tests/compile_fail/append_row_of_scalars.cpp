// expect: tyche::append_row\(a, b\) requires 'a' or 'b' to be a vector expression
// Two scalars make a vector with to_vector(a, b), not append_row.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  param<"a"> a;
  param<"b"> b;
  auto f = append_row(a, b);
  (void)f;
}
