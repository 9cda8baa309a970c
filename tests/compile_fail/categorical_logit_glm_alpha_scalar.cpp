// expect: categorical_logit_glm\(X, alpha, beta\): alpha must be a vector of the K categories' intercepts
// categorical_logit_glm with one intercept: alpha holds one value per category.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  static const std::vector<double> x{0.5, -1.0, 2.0, 0.1}, y{1.0, 2.0};
  const auto alpha = normal<"alpha">(0.0, 1.0);
  const auto beta = normal<"beta">(0.0, 1.0, shape<6>);
  const auto m = model(joint(alpha, beta, categorical_logit_glm(matrix(x, 2, 2, "X"), alpha, beta).observe(data(y))));
  return static_cast<int>(m.dim());
}
