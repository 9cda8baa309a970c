// expect: the values w must be doubles, the column indices and row starts \(c and u; Stan.s v and u\) ints
#include <tyche/tyche.hpp>
#include <vector>
// Column indices as std::vector<long> (scipy's int64 arrays copied as they came).
int main() {
  using namespace tyche;
  static const std::vector<double> y(3, 1.0), w{1.0, 2.0};
  static const std::vector<long> c{0, 1};
  static const std::vector<int> u{0, 1, 2, 2};
  auto b = normal<"b">(0.0, 1.0, shape<2>);
  auto m = model(joint(b, normal(sparse_matrix(3, 2, w, c, u) * b, 1.0).observe(data(y))));
  return static_cast<int>(m.dim());
}
