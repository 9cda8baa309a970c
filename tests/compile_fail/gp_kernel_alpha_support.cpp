// expect: gp_periodic_cov\(x, alpha, rho\[, period\]\): alpha \(the marginal standard deviation\) must be > 0
// A marginal standard deviation that may be negative (normal): the message names alpha.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  std::vector<double> x{0.0, 1.0, 2.5};
  auto alpha = normal<"alpha">(0.0, 1.0);
  auto k = gp_exponential_cov(data(x), alpha, 1.0);
  (void)k;
}
