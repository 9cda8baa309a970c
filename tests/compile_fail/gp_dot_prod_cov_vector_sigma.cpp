// expect: tyche::gp_dot_prod_cov\(x, sigma\): sigma must be a scalar
// One sigma for the whole kernel (Stan's gp_dot_prod_cov(x, real sigma)).
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  static const std::vector<double> x{0.0, 1.0, 2.0};
  vector_param<"s", 3> s;
  auto k = gp_dot_prod_cov(data(x), exp(s));
  (void)k;
}
