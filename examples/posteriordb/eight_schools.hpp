// examples/posteriordb/eight_schools.hpp — posteriordb's eight_schools-eight_schools_noncentered (../shared/posteriors) written with
// tyche's model API (see examples/posteriordb/common.hpp for posterior<Storage, Model>).
#pragma once
#include "common.hpp"

namespace tyche_examples {

// ---- eight_schools-eight_schools_noncentered ---------------------------------------------------

struct eight_schools_data {
  std::vector<double> y, sigma;
};

/// θ = (theta_trans[1..8], mu, log tau). The reported theta[j] = mu + tau * theta_trans[j].
inline auto eight_schools_noncentered(const tyche::data_file& d) {
  using namespace tyche;
  detail::require(d.integer("J") == 8, "eight_schools: J must be 8 (a compile-time shape)");
  auto s = std::make_unique<const eight_schools_data>(
      eight_schools_data{d.vector("y", 8), d.vector("sigma", 8)});
  return detail::make_posterior(std::move(s), [](const eight_schools_data& s) {
    auto theta_trans = std_normal<"theta_trans">(shape<8>);
    auto mu = normal<"mu">(0.0, 5.0);
    auto tau = half_cauchy<"tau">(5.0);
    auto theta = mu + tau * theta_trans;
    return model(joint(theta_trans, mu, tau, normal(theta, data(s.sigma)).observe(data(s.y))));
  });
}

}  // namespace tyche_examples
