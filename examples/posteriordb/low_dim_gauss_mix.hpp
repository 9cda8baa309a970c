// examples/posteriordb/low_dim_gauss_mix.hpp — posteriordb's low_dim_gauss_mix-low_dim_gauss_mix (../shared/posteriors) written with
// tyche's model API (see examples/posteriordb/common.hpp for posterior<Storage, Model>).
#pragma once
#include "common.hpp"

namespace tyche_examples {

// ---- low_dim_gauss_mix-low_dim_gauss_mix -------------------------------------------------------

struct gauss_mix_data {
  std::vector<double> y;
};

/// θ = (mu[1], log(mu[2] − mu[1]), log sigma[1], log sigma[2], logit theta): mu is ordered.
inline auto low_dim_gauss_mix(const tyche::data_file& d) {
  using namespace tyche;
  const auto n = static_cast<std::size_t>(d.integer("N"));
  auto s = std::make_unique<const gauss_mix_data>(gauss_mix_data{d.vector("y", n)});
  return detail::make_posterior(std::move(s), [](const gauss_mix_data& s) {
    auto mu = ordered<"mu">(normal(0.0, 2.0), shape<2>);
    auto sigma = half_normal<"sigma">(2.0, shape<2>);
    auto theta = beta<"theta">(5.0, 5.0);
    return model(joint(mu, sigma, theta,
                       log_mix(theta, normal(mu[0], sigma[0]), normal(mu[1], sigma[1]))
                           .observe(data(s.y))));
  });
}

}  // namespace tyche_examples
