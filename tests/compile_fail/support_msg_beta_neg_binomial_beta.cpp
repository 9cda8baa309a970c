// expect: beta_neg_binomial\(r, alpha, beta\): beta must be > 0, but its support
// beta_neg_binomial(r, alpha, beta) with a prior failure count on the whole line: the types prove beta is not
// > 0; the message names the family, the argument and the domain (one compile-fail test per support message).
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> k{1.0, 2.0};
  const auto a = normal<"a">(0.0, 1.0);
  const auto m = model(joint(a, beta_neg_binomial(lit<2>, lit<3>, a).observe(data(k))));
  return static_cast<int>(m.dim() + k.size());
}
