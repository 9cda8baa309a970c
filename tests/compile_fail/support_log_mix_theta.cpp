// expect: (log_mix\(theta, lp1, lp2\): theta must be in \[0, 1\], but its support.*support_is<'\(', '2', ',', ' ', 'i', 'n', 'f', '\)'>|support_is<'\(', '2', ',', ' ', 'i', 'n', 'f', '\)'>.*log_mix\(theta, lp1, lp2\): theta must be in \[0, 1\], but its support)
// A mixing weight the types prove above 1: 2 + exp(t) has support (2, inf).
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  param<"t"> t;
  param<"a"> a;
  param<"b"> b;
  const auto e = log_mix(lit<2> + exp(t), a, b);
  return static_cast<int>(sizeof e);
}
