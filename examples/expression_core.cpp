// examples/expression_core.cpp — the eight-schools model (non-centred) written directly with
// tyche's expression core (parameters, data, operations; no random variables), its log density
// and gradient at one point. The output is checked by the test suite
// (examples/expression_core.expected).
#include <tyche/tyche.hpp>

#include <cstdio>
#include <vector>

int main() {
  using namespace tyche;
  // Data: estimated coaching effects and their standard errors (Rubin 1981).
  const std::vector<double> y{28, 8, -3, 7, -1, 1, 18, 12};
  const std::vector<double> sigma{15, 10, 16, 11, 9, 11, 10, 18};

  // Parameters, by name; tau > 0 is sampled as log_tau.
  param<"mu"> mu;
  param<"log_tau"> log_tau;
  vector_param<"theta_raw", 8> theta_raw;

  // The model is an expression: its type is the computation graph.
  auto tau = exp(log_tau);
  auto theta = mu + tau * theta_raw;
  auto log_density = sum(-0.5 * square(theta_raw))                    // theta_raw ~ normal(0, 1)
                     + sum(-0.5 * square((data(y) - theta) / data(sigma)))  // y ~ normal(theta, sigma)
                     - square(mu) / 50.0                              // mu ~ normal(0, 5)
                     - log1p(square(tau / 5.0))                       // tau ~ half-Cauchy(0, 5)
                     + log_tau;                                       // log |d tau / d log_tau|

  // Compiling fixes the parameter layout and folds what depends on data only (1/sigma).
  const auto model = compile(log_density, mu, log_tau, theta_raw);

  std::vector<double> point(model.dim(), 0.0), gradient(model.dim());
  point[0] = 4.0;  // mu
  point[1] = 1.0;  // log_tau
  for (std::size_t j = 0; j < 8; ++j) point[2 + j] = 0.25 * (double(j) - 3.5);
  const double lp = model.value_and_gradient(point, gradient);

  std::printf("eight schools (non-centred): %zu parameters\n", model.dim());
  std::printf("log density: %.6f\n", lp);
  std::size_t k = 0;
  for (const auto& [name, size] : model.parameters()) {
    for (std::size_t i = 0; i < size; ++i, ++k) {
      if (size == 1) std::printf("  d/d%-12s % .6f\n", name.c_str(), gradient[k]);
      else std::printf("  d/d%s[%zu]%*s % .6f\n", name.c_str(), i + 1, int(9 - name.size()), "", gradient[k]);
    }
  }
}
