// examples/posteriordb/garch.hpp — posteriordb's garch-garch11 (../shared/posteriors) written with
// tyche's model API (see examples/posteriordb/common.hpp for posterior<Storage, Model>).
#pragma once
#include "common.hpp"

namespace tyche_examples {

// ---- garch-garch11 -------------------------------------------------------------------------------

struct garch_data {
  std::vector<double> first;     // y[1]
  std::vector<double> rest;      // y[2..T]
  std::vector<double> previous;  // y[1..T−1]
  double sigma1 = 0;
};

/// θ = (mu, log alpha0, logit alpha1, logit(beta1 / (1 − alpha1))). The variances
/// s[t]² = alpha0 + alpha1 (y[t−1] − mu)² + beta1 s[t−1]², s[1] = sigma1, are a linear
/// recurrence in s²: linear_recurrence(a, beta1, sigma1²) gives s[2..T]².
inline auto garch11(const tyche::data_file& d) {
  using namespace tyche;
  const auto t_len = static_cast<std::size_t>(d.integer("T"));
  detail::require(t_len >= 2, "garch11: T must be at least 2");
  const auto& y = d.vector("y", t_len);
  auto s = std::make_unique<garch_data>();
  s->first.assign(y.begin(), y.begin() + 1);
  s->rest.assign(y.begin() + 1, y.end());
  s->previous.assign(y.begin(), y.end() - 1);
  s->sigma1 = d.scalar("sigma1");
  detail::require(s->sigma1 > 0, "garch11: sigma1 must be > 0");
  return detail::make_posterior(std::unique_ptr<const garch_data>(std::move(s)),
                                [](const garch_data& s) {
    auto mu = flat<"mu">();
    auto alpha0 = flat<"alpha0">(positive());
    auto alpha1 = flat<"alpha1">(between(0.0, 1.0));
    auto beta1 = flat<"beta1">(between(0.0, 1.0 - alpha1));
    auto variance = linear_recurrence(alpha0 + alpha1 * square(data(s.previous) - mu), beta1,
                                      s.sigma1 * s.sigma1);
    return model(joint(mu, alpha0, alpha1, beta1, normal(mu, s.sigma1).observe(data(s.first)),
                       normal(mu, sqrt(variance)).observe(data(s.rest))));
  });
}

}  // namespace tyche_examples
