// expect: gp_periodic_cov\(x, alpha, rho\[, period\]\): alpha and period must be scalars
// One marginal standard deviation for the whole kernel.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  std::vector<double> x{0.0, 1.0, 2.5, 1.0};
  auto alpha = lognormal<"alpha">(0.0, 1.0, shape<2>);
  auto k = gp_matern32_cov(matrix(x, 2, 2), alpha, 1.5);
  (void)k;
}
