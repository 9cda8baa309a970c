// expect: tyche::rows_dot_product\(A, B\) requires 'A' and 'B' to be matrices of one shape
// Two matrices given as vectors of entries whose static sizes differ (9 and 4 entries).
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  vector_param<"a", 9> a;
  vector_param<"b", 4> b;
  auto f = rows_dot_product(a, b);
  (void)f;
}
