// expect: multi_student_t_cholesky\(nu, mu, L\): nu must be > 0, but its support
// multi_student_t_cholesky(nu, mu, L) with nu a parameter on the whole line (and L a parameter):
// the message names the family, the argument and the domain.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  const auto nu = normal<"nu">(0.0, 1.0);
  const auto l = lkj_corr_cholesky<"L">(2.0, 2);
  const auto m = model(joint(nu, l, multi_student_t_cholesky<"x">(nu, 0.0, l)));
  return static_cast<int>(m.dim());
}
