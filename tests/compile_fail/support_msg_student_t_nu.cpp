// expect: student_t\(nu, mu, sigma\): nu must be > 0, but its support
// student_t(nu, mu, sigma) with zero degrees of freedom: the types prove nu is not > 0; the message names the family, the
// argument and the domain (one compile-fail test per support message).
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> k{1.0, 2.0};
  const auto a = normal<"a">(0.0, 1.0);
  const auto m = model(joint(a, student_t<"x">(lit<0>, lit<0>, lit<1>)));
  return static_cast<int>(m.dim() + k.size());
}
