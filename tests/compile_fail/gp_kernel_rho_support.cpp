// expect: gp_periodic_cov\(x, alpha, rho\[, period\]\): rho \(the length-scale\) must be > 0
// A Matérn length-scale on the whole line (normal, not lognormal): the message names rho.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  std::vector<double> x{0.0, 1.0, 2.5};
  auto rho = normal<"rho">(0.0, 1.0);
  auto k = gp_matern32_cov(data(x), 1.0, rho);
  (void)k;
}
