// expect: multi_student_t\(nu, mu, Sigma\): nu must be > 0, but its support
// multi_student_t(nu, mu, Sigma) with nu a parameter on the whole line: the types prove nu can be
// <= 0; the message names the family, the argument and the domain.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> sigma{1.0, 0.0, 0.0, 1.0};
  const auto nu = normal<"nu">(0.0, 1.0);
  const auto m = model(joint(nu, multi_student_t<"x">(nu, 0.0, matrix(sigma.data(), 2, 2))));
  return static_cast<int>(m.dim());
}
