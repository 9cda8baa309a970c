// expect: tyche::gp_periodic_cov\(x, alpha, rho, period\): rho must be a scalar \(one length-scale per dimension is for gp_exp_quad_cov
// A vector of length-scales (Stan's automatic relevance determination form) is taken by the
// squared-exponential, exponential and Matérn kernels, not by the periodic one (nor by Stan's).
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  std::vector<double> x{0.0, 1.0, 2.5, 1.0};
  auto rho = lognormal<"rho">(0.0, 1.0, shape<2>);
  auto k = gp_periodic_cov(matrix(x, 2, 2), 1.0, rho, 2.0);
  (void)k;
}
