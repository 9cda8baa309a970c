// expect: beta_proportion\(mu, kappa\): kappa must be > 0, but its support
// beta_proportion(mu, kappa) with a negative precision: the types prove kappa is not > 0; the message names the
// family, the argument and the domain (one compile-fail test per support message).
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> k{1.0, 2.0};
  const auto a = normal<"a">(0.0, 1.0);
  const auto m = model(joint(a, beta_proportion<"x">(lit<1, 2>, lit<-2>)));
  return static_cast<int>(m.dim() + k.size());
}
