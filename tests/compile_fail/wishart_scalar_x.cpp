// expect: tyche::wishart\(nu, S\) / inv_wishart\(nu, S\): x must be a vector of K\*K values
// wishart(nu, S).observe(x) with x one number: the variable is a K x K matrix (K*K values).
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> s{1.0, 0.0, 0.0, 1.0};
  const auto nu = gamma<"nu">(2.0, 1.0);
  const auto m = model(joint(nu, wishart(nu, matrix(s.data(), 2, 2)).observe(1.5)));
  return static_cast<int>(m.dim());
}
