// expect: to_matrix\(v, m, n, col_major\) takes a vector \(Stan's array form\)
// to_matrix with col_major of a data matrix: Stan's col_major form is for arrays; the message
// says a data matrix is reshaped by to_matrix(X, m, n).
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  static const std::vector<double> x{1.0, 2.0, 3.0, 4.0, 5.0, 6.0};
  auto a = std_normal<"a">();
  const auto m = model(joint(a, target(a * sum(to_matrix(matrix(x, 3, 2), 2, 3, 0)))));
  return static_cast<int>(m.dim());
}
