// expect: scaled_inv_chi_square\(nu, s\): nu must be > 0, but its support
// scaled_inv_chi_square(nu, s) with negative degrees of freedom: the types prove nu is not > 0; the message names the
// family, the argument and the domain (one compile-fail test per support message).
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> k{1.0, 2.0};
  const auto a = normal<"a">(0.0, 1.0);
  const auto m = model(joint(a, scaled_inv_chi_square<"x">(lit<-1>, lit<2>)));
  return static_cast<int>(m.dim() + k.size());
}
