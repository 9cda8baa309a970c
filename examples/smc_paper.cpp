// Forward inference over plain C++ programs: the paper's Figure 1 (unknown Gaussian mean, two
// observations) on the fork engine, the same model as a stepwise program on the in-process
// engine, and Figure 3 (CRP mixture with mem and a Pólya urn). See docs/smc.md.
#include <tyche/samplers/smc.hpp>

#include <cmath>
#include <cstddef>
#include <iostream>
#include <string>
#include <vector>

using namespace tyche::smc;

// [figure-1]
void gaussian() {                                   // mu ~ N(1, 5); 9, 8 ~ N(mu, 2) (variances)
  const double mu = sample_normal(1, std::sqrt(5.0));
  observe(normal_lpdf(9, mu, std::sqrt(2.0)));
  observe(normal_lpdf(8, mu, std::sqrt(2.0)));
  predict("mu", mu);
}
// [figure-1]

// [figure-3]
const double data[] = {1.0, 1.1, 1.2, -1.0, -1.5, -2.0, 0.001, 0.01, 0.005, 0.0};

void crp_mixture() {
  struct theta { double mu, var; };
  polya_urn urn(1.0);                                // CRP, alpha = 1
  auto class_of = mem([&urn](std::size_t) { return urn.draw(rng()); });
  std::vector<theta> params;
  for (std::size_t n = 0; n < std::size(data); ++n) {
    const auto k = static_cast<std::size_t>(class_of(n));
    if (k == params.size()) {                        // a new class: draw its parameters
      const double var = 1 / sample_gamma(rng(), 1, 1);
      params.push_back({sample_normal(0, std::sqrt(var)), var});
    }
    observe(normal_lpdf(data[n], params[k].mu, std::sqrt(params[k].var)));
  }
  predict("num_classes", static_cast<double>(urn.classes()));
}
// [figure-3]

// smc_paper [sweeps]: the particle Gibbs sweeps of Figure 3 (10; the test suite runs 2: each
// sweep's forks take seconds on a small virtual machine).
int main(int argc, char** argv) {
  const std::size_t crp_sweeps = argc > 1 ? static_cast<std::size_t>(std::stoul(argv[1])) : 10;
  // [run]
  const auto r = run_smc(gaussian, {.particles = 1000, .seed = 1});   // fork engine
  std::cout << summary(r) << "exact: mean 7.25, sd 0.913, log evidence -8.24\n\n";
  // [run]

  // [stepwise]
  const auto gaussian_steps = stepwise(
      0.0, 2,                                        // state: mu; 2 observes
      [](double& mu, std::size_t n, tyche::counter_rng& g) {
        if (n == 0) mu = sample_normal(g, 1, std::sqrt(5.0));
        return normal_lpdf(n == 0 ? 9 : 8, mu, std::sqrt(2.0));
      },
      [](const double& mu, predictions& p) { p("mu", mu); });
  const auto chain = run_pg(gaussian_steps, {.particles = 100, .sweeps = 1000, .seed = 1, .threads = 2});
  std::cout << summary(chain) << "\n";
  // [stepwise]

  std::cout << summary(run_pg(crp_mixture, {.particles = 100, .sweeps = crp_sweeps, .seed = 1}));
}
