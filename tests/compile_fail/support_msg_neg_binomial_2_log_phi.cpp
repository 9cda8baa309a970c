// expect: neg_binomial_2_log\(eta, phi\): phi must be > 0, but its support
// neg_binomial_2_log(eta, phi) with a negative dispersion: the types prove phi is not > 0; the message names the family, the
// argument and the domain (one compile-fail test per support message).
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> k{1.0, 2.0};
  const auto a = normal<"a">(0.0, 1.0);
  const auto m = model(joint(a, neg_binomial_2_log(a, lit<-2>).observe(data(k))));
  return static_cast<int>(m.dim() + k.size());
}
