// expect: beta_neg_binomial\(r, alpha, beta\): r must be > 0, but its support
// beta_neg_binomial(r, alpha, beta) with a negative number of successes: the types prove r is not
// > 0; the message names the family, the argument and the domain (one compile-fail test per support message).
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> k{1.0, 2.0};
  const auto a = normal<"a">(0.0, 1.0);
  const auto m = model(joint(a, beta_neg_binomial(lit<-2>, lit<2>, lit<3>).observe(data(k))));
  return static_cast<int>(m.dim() + k.size());
}
