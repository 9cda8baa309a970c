// expect: beta\(a, b\): b must be > 0, but its support
// beta(a, b) with a shape that is -exp(a), never positive: the types prove b is not > 0; the message names the family, the
// argument and the domain (one compile-fail test per support message).
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> k{1.0, 2.0};
  const auto a = normal<"a">(0.0, 1.0);
  const auto m = model(joint(a, beta<"x">(lit<2>, -exp(a))));
  return static_cast<int>(m.dim() + k.size());
}
