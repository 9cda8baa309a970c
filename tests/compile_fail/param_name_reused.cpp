// expect: tyche::compile\(f\): a parameter name is used for two different parameters
// "x" names both a scalar and a vector parameter.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  param<"x"> x;
  vector_param<"x", 3> xs;
  auto prog = compile(x + sum(xs));
  (void)prog;
}
