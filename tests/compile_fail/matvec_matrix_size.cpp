// expect: tyche::matvec\(M, v\) requires 'M' to be a vector expression of the K\*K entries of a square matrix \(row major\) and 'v' one of K values \(or of J\*K: J vectors of K\)
// A 3 x 3 matrix (9 entries, static) times a vector of 4 values (neither 3 nor a multiple of 3).
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  vector_param<"m", 9> m;
  vector_param<"v", 4> v;
  auto f = matvec(m, v);
  (void)f;
}
