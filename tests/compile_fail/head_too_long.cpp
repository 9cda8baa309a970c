// expect: tyche::head\(v, n\) requires 'v' to be a vector expression of at least n elements
// head<n>(v) of a vector whose size is fixed at compile time and smaller than n.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  vector_param<"u", 3> u;
  auto f = head<4>(u);
  (void)f;
}
