// expect: tyche::columns_dot_product\(A, B\) requires 'A' and 'B' to be matrices of one shape
// A vector of 6 entries, fixed at compile time, is not the K*K entries of a square matrix.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  vector_param<"a", 6> a;
  vector_param<"b", 6> b;
  auto f = columns_dot_product(a, b);
  (void)f;
}
