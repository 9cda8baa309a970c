// expect: tyche::rep_vector\(x, n\) requires 'x' to be a scalar expression
// rep_vector repeats one scalar; a vector is not repeated into a longer vector.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  vector_param<"u", 3> u;
  auto f = rep_vector<2>(u);
  (void)f;
}
