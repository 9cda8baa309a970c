// tests/support/small_regression.hpp — a small hierarchical regression with a matvec (a data
// matrix times a vector parameter), a positive scale and a workspace-free reduction: the model
// the executor tests run when they need more than eight schools' sums.
#pragma once
#include <tyche/tyche.hpp>

#include <vector>

namespace tyche_test {

/// y ~ normal(alpha + X beta, sigma), X 10 × 2; θ = (log sigma, beta[2], alpha).
inline auto small_regression() {
  using namespace tyche;
  static const std::vector<double> x = {0.5, -1.2, 0.3, 2.0, -0.7, 1.1, -0.4, 0.9, 1.6, -2.1,
                                        0.2, 0.8, -1.5, 0.6, 1.3, -0.1, 0.4, -0.9, 1.8, -0.3};
  static const std::vector<double> y = {1.1, -0.8, 0.9, 2.9, -0.2, 1.9, 0.1, 1.5, 2.6, -1.9};
  auto sigma = half_normal<"sigma">(1.0);
  auto beta = normal<"beta">(0.0, 2.0, shape<2>);
  auto alpha = normal<"alpha">(0.0, 2.0);
  return model(joint(sigma, beta, alpha, normal(alpha + matvec(matrix(x, 10, 2), beta), sigma).observe(data(y))));
}

}  // namespace tyche_test
