// examples/quickstart.cpp — the README's main example: eight schools (non-centred), written as
// a function of its data, fitted with NUTS (4 chains of 1000 warm-up and 1000 draws), and its
// summary.
#include <tyche/tyche.hpp>

#include <iostream>
#include <vector>

struct schools {
  std::vector<double> y, sigma;  // each school's estimated effect and its standard error
};

int main() {
  using namespace tyche;
  const schools d{{28, 8, -3, 7, -1, 1, 18, 12}, {15, 10, 16, 11, 9, 11, 10, 18}};

  const auto eight_schools = model([](const schools& d) {
    auto mu = normal<"mu">(0.0, 5.0);
    auto tau = half_cauchy<"tau">(5.0);                 // support (0, ∞): sampled as log tau
    auto theta_raw = std_normal<"theta_raw">(shape<8>);
    auto theta = mu + tau * theta_raw;                  // an expression, not a value
    return joint(mu, tau, theta_raw, normal(theta, data(d.sigma)).observe(data(d.y)));
  }, d);                                                // d must outlive the model

  const auto fit = nuts(eight_schools, {.chains = 4, .warmup = 1000, .draws = 1000, .seed = 1});
  std::cout << summary(fit);                          // mean, sd, quantiles, R-hat, ESS
}
