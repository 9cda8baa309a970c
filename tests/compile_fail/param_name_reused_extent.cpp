// expect: tyche::compile\(f\): a parameter name is used for two different parameters
// "v" names two vector parameters of different compile-time sizes (in separate reductions, so
// no elementwise operation combines them).
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  vector_param<"v", 3> v3;
  vector_param<"v", 4> v4;
  auto prog = compile(sum(v3) + sum(v4));
  (void)prog;
}
