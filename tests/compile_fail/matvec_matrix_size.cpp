// expect: tyche::matvec\(M, v\) requires 'v' to be a vector expression of K values and 'M' one of the K\*K entries
// A 3 x 3 matrix (9 entries, static) times a vector of 4 values.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  vector_param<"m", 9> m;
  vector_param<"v", 4> v;
  auto f = matvec(m, v);
  (void)f;
}
