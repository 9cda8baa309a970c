// expect: alpha, rho and period must be scalars
// A vector of length-scales (Stan's automatic relevance determination form) is not supported:
// one rho for all dimensions.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  std::vector<double> x{0.0, 1.0, 2.5, 1.0};
  auto rho = lognormal<"rho">(0.0, 1.0, shape<2>);
  auto k = gp_matern52_cov(matrix(x, 2, 2), 1.0, rho);
  (void)k;
}
