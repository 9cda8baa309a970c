// expect: tyche::matvec\(X, v\) requires 'v' to be a vector expression
// A data matrix times a scalar: matvec needs a vector (X * s is not a matrix product).
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> x(6, 1.0);
  param<"s"> s;
  auto f = sum(matvec(matrix(x.data(), 2, 3), s));
  (void)f;
}
