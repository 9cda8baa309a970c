// expect: csr_matrix_times_vector\(m, n, w, v, u, b\): an array is a temporary
#include <tyche/tyche.hpp>
#include <vector>
// The row starts built in the call: the model would keep a view of a vector that is gone.
int main() {
  using namespace tyche;
  static const std::vector<double> y(3, 1.0), w{1.0, 2.0};
  static const std::vector<int> c{0, 1};
  auto b = normal<"b">(0.0, 1.0, shape<2>);
  auto m = model(joint(b, normal(sparse_matrix(3, 2, w, c, std::vector<int>{0, 1, 2, 2}) * b, 1.0).observe(data(y))));
  return static_cast<int>(m.dim());
}
