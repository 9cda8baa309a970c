// expect: tyche::gp_periodic_cov\(x, alpha, rho, period\): period must be > 0
// A period that may be negative: the message names the period.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  std::vector<double> x{0.0, 1.0, 2.5};
  auto p = normal<"p">(1.0, 1.0);
  auto k = gp_periodic_cov(data(x), 1.0, 1.0, p);
  (void)k;
}
