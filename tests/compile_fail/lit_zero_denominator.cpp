// expect: tyche::lit<Num, Den> requires a non-zero denominator 'Den'
// lit<1, 0> would be a division by zero carried in the type.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  param<"x"> x;
  auto f = x * lit<1, 0>;
  (void)f;
}
