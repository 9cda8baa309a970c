// expect: tyche::multi_normal_prec\(mu, Omega\): x must be a vector
// multi_normal_prec(mu, Omega).observe(x) with x one number: the variable is a vector of K.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> omega{2.0, 0.5, 0.5, 1.0};
  const auto mu = normal<"mu">(0.0, 1.0);
  const auto m = model(joint(mu, multi_normal_prec(mu, matrix(omega.data(), 2, 2)).observe(1.5)));
  return static_cast<int>(m.dim());
}
