// expect: (sqrt\(x\): x must be >= 0 somewhere, but its support.*support_is<'\(', '-', 'i', 'n', 'f', ',', ' ', '-', '1', '\]'>|support_is<'\(', '-', 'i', 'n', 'f', ',', ' ', '-', '1', '\]'>.*sqrt\(x\): x must be >= 0 somewhere, but its support)
// sqrt of an expression the types prove negative: -1 - x² has support (-inf, -1].
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  param<"x"> x;
  const auto e = sqrt(lit<-1> - square(x));
  return static_cast<int>(sizeof e);
}
