// expect: tyche::sort_asc\(v\) requires 'v' to be a vector expression; it is a scalar
// sort_asc and sort_desc sort the elements of a vector expression.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  param<"a"> a;
  auto s = sort_asc(a + 1.0);
  (void)s;
}
