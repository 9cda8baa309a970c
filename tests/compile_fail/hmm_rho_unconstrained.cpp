// expect: hmm_marginal\(log_omega, Gamma, rho\): rho must hold probabilities in \[0, 1\]
#include <tyche/tyche.hpp>
#include <tuple>
#include <vector>
// The initial distribution as exp of a normal vector: positive, but not a probability vector.
int main() {
  using namespace tyche;
  static const std::vector<double> y{0.1, 2.3, 1.9, -0.4}, gamma{0.9, 0.1, 0.2, 0.8};
  auto mu = ordered<"mu">(normal(0.0, 3.0), shape<2>);
  auto u = normal<"u">(0.0, 1.0, shape<2>);
  auto m = model(joint(mu, u,
                       target(hmm_marginal(std::tuple{pointwise_log_density(normal(mu[0], 1.0), data(y)),
                                                      pointwise_log_density(normal(mu[1], 1.0), data(y))},
                                           data(gamma), exp(u)))));
  return static_cast<int>(m.dim());
}
