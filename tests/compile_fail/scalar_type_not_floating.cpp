// expect: tyche: a scalar type must be float, double or an xsimd::batch of them
// Evaluating with int parameters.
#include <tyche/tyche.hpp>

#include <span>
#include <vector>

int main() {
  using namespace tyche;
  param<"x"> x;
  auto prog = compile(-0.5 * square(x));
  const std::vector<int> theta{1};
  return static_cast<int>(prog.value(std::span<const int>(theta)));
}
