// expect: beta_binomial\(n, a, b\): n must be >= 0, but its support
// beta_binomial(n, a, b) with a negative number of trials: the types prove n is not >= 0; the message names the family, the
// argument and the domain (one compile-fail test per support message).
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> k{1.0, 2.0};
  const auto a = normal<"a">(0.0, 1.0);
  const auto m = model(joint(a, beta_binomial(lit<-3>, lit<1>, lit<1>).observe(data(k))));
  return static_cast<int>(m.dim() + k.size());
}
