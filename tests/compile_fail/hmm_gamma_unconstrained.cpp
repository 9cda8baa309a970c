// expect: hmm_marginal\(log_omega, Gamma, rho\): Gamma must hold probabilities in \[0, 1\] .*support of a row
#include <tyche/tyche.hpp>
#include <tuple>
#include <vector>
// A new user's HMM (2026-12-04): the rows of the transition matrix declared as normal
// variables. It compiled and sampled a likelihood from a matrix that was not stochastic; rows
// must be simplexes (dirichlet<"g0">(...), softmax(...)), as Stan's hmm_marginal requires.
int main() {
  using namespace tyche;
  static const std::vector<double> y{0.1, 2.3, 1.9, -0.4}, rho{0.5, 0.5};
  auto mu = ordered<"mu">(normal(0.0, 3.0), shape<2>);
  auto g0 = normal<"g0">(0.5, 0.1, shape<2>);
  auto g1 = normal<"g1">(0.5, 0.1, shape<2>);
  auto m = model(joint(mu, g0, g1,
                       target(hmm_marginal(std::tuple{pointwise_log_density(normal(mu[0], 1.0), data(y)),
                                                      pointwise_log_density(normal(mu[1], 1.0), data(y))},
                                           std::tuple{g0, g1}, data(rho)))));
  return static_cast<int>(m.dim());
}
