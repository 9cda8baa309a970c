// expect: tyche::sparse_matrix\(csr\): csr is a temporary
#include <tyche/tyche.hpp>
#include <vector>
// csr_extract's result passed straight to sparse_matrix: the model would keep a view of it.
int main() {
  using namespace tyche;
  static const std::vector<double> y(3, 1.0), x{1.0, 0.0, 0.0, 2.0, 0.0, 0.0};
  auto b = normal<"b">(0.0, 1.0, shape<2>);
  auto m = model(joint(b, normal(sparse_matrix(csr_extract(matrix(x, 3, 2))) * b, 1.0).observe(data(y))));
  return static_cast<int>(m.dim());
}
