// expect: beta_proportion\(mu, kappa\): mu must be in \(0, 1\), but its support
// beta_proportion(mu, kappa) with a mean of 3/2: the types prove mu is not in (0, 1); the message names the
// family, the argument and the domain (one compile-fail test per support message).
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> k{1.0, 2.0};
  const auto a = normal<"a">(0.0, 1.0);
  const auto m = model(joint(a, beta_proportion<"x">(lit<3, 2>, lit<2>)));
  return static_cast<int>(m.dim() + k.size());
}
