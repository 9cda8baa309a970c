// expect: wishart\(nu, S\): nu must be > 0, but its support
// wishart(nu, S) with nu a parameter on the whole line: the types prove nu can be <= 0; the
// message names the family, the argument and the domain.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> s{1.0, 0.0, 0.0, 1.0};
  const auto nu = normal<"nu">(0.0, 1.0);
  const auto m = model(joint(nu, wishart<"Sigma">(nu, matrix(s.data(), 2, 2))));
  return static_cast<int>(m.dim());
}
