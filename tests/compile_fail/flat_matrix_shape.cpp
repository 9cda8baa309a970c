// expect: a matrix support \(cholesky_factor_corr\(K\), cov_matrix\(K\), \.\.\.\) has its size already; give no shape
// A flat prior on a matrix support with a shape: the support's K fixes the number of values.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  const auto s = flat<"Sigma">(cov_matrix(3), shape<9>);
  return static_cast<int>(s.size());
}
