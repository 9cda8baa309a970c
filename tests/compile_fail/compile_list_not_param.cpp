// expect: tyche::compile\(f, params\.\.\.\) requires every 'params' argument to be a parameter
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  param<"x"> x;
  param<"y"> y;
  auto prog = compile(x * y, x, exp(y));
  (void)prog;
}
