// expect: tyche::gp_dot_prod_cov\(x, sigma\): sigma must be >= 0, but its support
// sigma is a standard deviation: a parameter on the whole line is refused at compile time (exp(a)
// or a half_normal random variable is accepted).
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  static const std::vector<double> x{0.0, 1.0, 2.0};
  param<"a"> a;
  auto k = gp_dot_prod_cov(data(x), a);
  (void)k;
}
