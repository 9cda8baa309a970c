// expect: tyche::gp_exp_quad_cov\(x, alpha, rho\): rho must be > 0
// A length-scale on the whole line: the kernel is even in rho, so the posterior would have two
// mirror-image modes; rho must be a positive expression (lognormal, exp(...), ...).
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  std::vector<double> x{0.0, 1.0, 2.5};
  auto rho = normal<"rho">(0.0, 1.0);
  auto k = gp_exp_quad_cov(data(x), 1.0, rho);
  (void)k;
}
