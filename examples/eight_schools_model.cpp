// examples/eight_schools_model.cpp — eight schools written with random variables: the model API
// chooses tau's transform from its support, adds the log-Jacobian, names the parameters, and
// gives constrain/unconstrain, prior draws and intervention (do_).
#include <tyche/tyche.hpp>

#include <cstdio>
#include <random>
#include <vector>

struct schools {
  std::vector<double> y, sigma;
};

int main() {
  using namespace tyche;
  const schools d{{28, 8, -3, 7, -1, 1, 18, 12}, {15, 10, 16, 11, 9, 11, 10, 18}};

  // [model]
  const auto eight_schools = model([](const schools& d) {
    auto mu = normal<"mu">(0.0, 5.0);
    auto tau = half_cauchy<"tau">(5.0);                 // support (0, ∞): sampled as log tau
    auto theta_raw = std_normal<"theta_raw">(shape<8>);
    auto theta = mu + tau * theta_raw;                  // an expression of random variables
    return joint(mu, tau, theta_raw, normal(theta, data(d.sigma)).observe(data(d.y)));
  }, d);
  // [model]

  std::printf("parameters (%zu):", eight_schools.dim());
  for (const auto& name : eight_schools.parameter_names()) std::printf(" %s", name.c_str());
  std::printf("\n");

  // A point given on the constrained scale, mapped to θ (log tau for tau).
  std::vector<double> values{4.0, 3.0, 0.5, 0, -0.5, 0.2, -1, 0.1, 1, 0.3};
  const auto th = eight_schools.unconstrain(values);
  std::vector<double> gradient(eight_schools.dim());
  const double lp = eight_schools.log_prob_and_gradient(th, gradient);
  std::printf("log density at mu = 4, tau = 3: %.6f (without the log-Jacobian: %.6f)\n", lp,
              eight_schools.log_prob(th, false));
  std::printf("d/dmu = %.6f, d/dlog(tau) = %.6f\n", gradient[0], gradient[1]);

  // Intervention: tau fixed at 3 leaves 9 parameters and drops tau's prior.
  const auto fixed_tau = do_<"tau">(eight_schools, 3.0);
  std::printf("do(tau = 3): %zu parameters\n", fixed_tau.dim());

  // Prior draws, given the variables before each one.
  std::mt19937_64 rng(2026);
  double mean_mu = 0;
  const int draws = 4000;
  for (int i = 0; i < draws; ++i) mean_mu += eight_schools.sample_prior(rng)[0] / draws;
  std::printf("prior mean of mu over %d draws: %.1f (exact: 0)\n", draws, mean_mu);
}
