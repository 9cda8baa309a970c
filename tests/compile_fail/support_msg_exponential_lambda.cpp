// expect: exponential\(lambda\): lambda must be > 0, but its support
// exponential(lambda) with a rate that is -a^2, never positive: the types prove lambda is not > 0; the message names the family, the
// argument and the domain (one compile-fail test per support message).
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> k{1.0, 2.0};
  const auto a = normal<"a">(0.0, 1.0);
  const auto m = model(joint(a, exponential<"x">(-square(a))));
  return static_cast<int>(m.dim() + k.size());
}
