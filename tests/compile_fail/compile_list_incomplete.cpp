// expect: tyche::compile\(f, params\.\.\.\) requires the list to name every parameter of 'f' exactly once
// "y" occurs in f but is not in the list.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  param<"x"> x;
  param<"y"> y;
  auto prog = compile(x * y, x);
  (void)prog;
}
