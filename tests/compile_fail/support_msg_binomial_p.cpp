// expect: binomial\(n, p\): p must be in \[0, 1\], but its support
// binomial(n, p) with a probability of 3/2: the types prove p is not in [0, 1]; the message names the family, the
// argument and the domain (one compile-fail test per support message).
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> k{1.0, 2.0};
  const auto a = normal<"a">(0.0, 1.0);
  const auto m = model(joint(a, binomial(lit<10>, lit<3, 2>).observe(data(k))));
  return static_cast<int>(m.dim() + k.size());
}
