// expect: tyche::wishart\(nu, S\) / inv_wishart\(nu, S\): nu must be a scalar
// inv_wishart(nu, S) with a vector nu: the degrees of freedom are one number.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> s{1.0, 0.0, 0.0, 1.0};
  const auto nu = gamma<"nu">(2.0, 1.0, shape<2>);
  const auto m = model(joint(nu, inv_wishart<"Sigma">(nu, matrix(s.data(), 2, 2))));
  return static_cast<int>(m.dim());
}
