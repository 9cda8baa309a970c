// expect: tyche::gp_exp_quad_cov\(x, alpha, rho\): alpha must be a scalar
// A vector rho is one length-scale per dimension; alpha is one marginal standard deviation.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  static const std::vector<double> x{0.0, 1.0, 2.0, 0.5};
  vector_param<"a", 2> a;
  param<"r"> r;
  auto k = gp_exp_quad_cov(matrix(x, 2, 2), exp(a), exp(r));
  (void)k;
}
