// expect: tyche: an elementwise operation on two vectors requires equal sizes
// Two vectors whose sizes are fixed at compile time and differ cannot be combined elementwise.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  vector_param<"a", 3> a;
  vector_param<"b", 4> b;
  auto f = a + b;
  (void)f;
}
