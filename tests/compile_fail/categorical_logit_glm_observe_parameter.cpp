// expect: categorical_logit_glm\(X, alpha, beta\).observe\(y\): y must be data, one category per row of X
// categorical_logit_glm observing a parameter: the categories are data.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  static const std::vector<double> x{0.5, -1.0, 2.0, 0.1};
  const auto alpha = normal<"alpha">(0.0, 1.0, shape<3>);
  const auto beta = normal<"beta">(0.0, 1.0, shape<6>);
  const auto z = normal<"z">(0.0, 1.0, shape<2>);
  const auto m = model(joint(alpha, beta, z, categorical_logit_glm(matrix(x, 2, 2, "X"), alpha, beta).observe(z)));
  return static_cast<int>(m.dim());
}
