// expect: tyche::to_vector\(x...\) requires every argument to be a scalar expression
// to_vector makes a vector of scalars; vectors are joined with append_row.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  param<"a"> a;
  vector_param<"u", 3> u;
  auto f = to_vector(a, u);
  (void)f;
}
