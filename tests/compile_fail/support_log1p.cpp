// expect: (log1p\(x\): x must be > -1 somewhere, but its support.*support_is<'\(', '-', 'i', 'n', 'f', ',', ' ', '-', '2', '\)'>|support_is<'\(', '-', 'i', 'n', 'f', ',', ' ', '-', '2', '\)'>.*log1p\(x\): x must be > -1 somewhere, but its support)
// log1p of an expression the types prove below -1: -2 - exp(x) has support (-inf, -2).
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  param<"x"> x;
  const auto e = log1p(lit<-2> - exp(x));
  return static_cast<int>(sizeof e);
}
