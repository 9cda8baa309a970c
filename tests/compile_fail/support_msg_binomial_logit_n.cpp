// expect: binomial_logit\(n, alpha\): n must be >= 0, but its support
// binomial_logit(n, alpha) with a negative number of trials: the types prove n is not >= 0; the message names the family, the
// argument and the domain (one compile-fail test per support message).
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> k{1.0, 2.0};
  const auto a = normal<"a">(0.0, 1.0);
  const auto m = model(joint(a, binomial_logit(lit<-1>, a).observe(data(k))));
  return static_cast<int>(m.dim() + k.size());
}
