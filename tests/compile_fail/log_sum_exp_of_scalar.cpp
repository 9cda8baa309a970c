// expect: tyche::log_sum_exp\(a\) requires 'a' to be a vector expression; it is a scalar
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  param<"x"> x;
  auto f = log_sum_exp(exp(x));
  (void)f;
}
