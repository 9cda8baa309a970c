// tyche/model/predictive.hpp — posterior_predictive(m, fit, rng): replicated observations for
// every draw of a fit (Stan's y_rep in generated quantities, ArviZ's posterior_predictive group).
#pragma once
#include <tyche/config.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tyche {

/// Replicated observations of observed term `term` (0-based, in the order of the observed terms
/// in joint(...)), one vector per draw of `fit` (a nuts_fit or an approximate_fit of model m),
/// chain by chain: out[c * fit.draws + d] comes from fit.draw(c, d) (m.sample_observations_at).
/// A posterior predictive check compares a statistic of each with the same statistic of y.
/// Throws std::invalid_argument when the model has no observed term `term`, or naming the chain
/// and draw whose values the model refuses.
template <class Model, class Fit, class Generator>
[[nodiscard]] std::vector<std::vector<double>> posterior_predictive(const Model& m, const Fit& fit, Generator& rng,
                                                                    std::size_t term = 0) {
  std::vector<std::vector<double>> out;
  out.reserve(static_cast<std::size_t>(fit.chains) * static_cast<std::size_t>(fit.draws));
  for (int c = 0; c < fit.chains; ++c)
    for (int d = 0; d < fit.draws; ++d) {
      std::vector<std::vector<double>> all;
      try {
        all = m.sample_observations_at(fit.draw(c, d), rng);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("tyche::posterior_predictive: chain " + std::to_string(c) + ", draw " +
                                    std::to_string(d) + ": " + e.what());
      }
      if (term >= all.size())
        throw std::invalid_argument("tyche::posterior_predictive: term = " + std::to_string(term) +
                                    ", but the model has " + std::to_string(all.size()) +
                                    " observed terms (counted from 0, in the order of joint(...))");
      out.push_back(std::move(all[term]));
    }
  return out;
}

}  // namespace tyche
