// expect: tyche::compile\(f\) requires 'f' to be a scalar expression; reduce vectors with tyche::sum\(\.\.\.\)
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  vector_param<"v", 3> v;
  auto prog = compile(-0.5 * square(v));
  (void)prog;
}
