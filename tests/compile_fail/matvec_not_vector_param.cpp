// expect: tyche::matvec\(X, v\) requires 'v' to be a vector parameter \(vector_param\)
// matvec takes a vector parameter, not an arbitrary vector expression.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> x(6, 1.0);
  vector_param<"beta", 3> beta;
  auto f = sum(matvec(matrix(x.data(), 2, 3), exp(beta)));
  (void)f;
}
