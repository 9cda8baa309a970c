// expect: a matrix of floats \(tyche::matrix\(const float\*, \.\.\.\)\) needs 'v' to be a vector parameter
// A float data matrix times a vector expression that is not a bare vector parameter: the float
// path is the streamed matvec of a parameter vector; other products take the matrix as doubles.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<float> x(6, 1.0f);
  vector_param<"b", 3> b;
  auto f = sum(matvec(matrix(x.data(), 2, 3), b * 2.0));
  (void)f;
}
