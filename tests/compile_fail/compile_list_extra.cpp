// expect: tyche::compile\(f, params\.\.\.\) requires the list to name every parameter of 'f' exactly once
// "z" is listed but does not occur in f.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  param<"x"> x;
  param<"y"> y;
  param<"z"> z;
  auto prog = compile(x * y, x, y, z);
  (void)prog;
}
