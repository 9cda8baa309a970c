// expect: tyche::compile\(f, params\.\.\.\): a parameter is listed twice
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  param<"x"> x;
  param<"y"> y;
  auto prog = compile(x * y, x, y, x);
  (void)prog;
}
