// expect: (log\(x\): x must be > 0 somewhere, but its support.*support_is<'\(', '-', 'i', 'n', 'f', ',', ' ', '0', '\)'>|support_is<'\(', '-', 'i', 'n', 'f', ',', ' ', '0', '\)'>.*log\(x\): x must be > 0 somewhere, but its support)
// log of an expression the types prove negative: -exp(x) has support (-inf, 0).
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  param<"x"> x;
  const auto e = log(-exp(x));
  return static_cast<int>(sizeof e);
}
