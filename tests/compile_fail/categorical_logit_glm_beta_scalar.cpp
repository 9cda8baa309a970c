// expect: categorical_logit_glm\(X, alpha, beta\): beta must be a vector of P\*K coefficients, category by category
// categorical_logit_glm with a scalar beta: beta holds P coefficients per category.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  static const std::vector<double> x{0.5, -1.0, 2.0, 0.1}, y{1.0, 2.0};
  const auto alpha = normal<"alpha">(0.0, 1.0, shape<3>);
  const auto beta = normal<"beta">(0.0, 1.0);
  const auto m = model(joint(alpha, beta, categorical_logit_glm(matrix(x, 2, 2, "X"), alpha, beta).observe(data(y))));
  return static_cast<int>(m.dim());
}
