// tyche/model/quantities.hpp — a model's quantities (quantity<"name">(e) terms of its joint:
// model/joint.hpp) added to a fit's draws after the parameters. Here, apart from model.hpp, so
// that the samplers and the other inference methods, which only call it, need no model headers.
#pragma once
#include <tyche/config.hpp>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tyche::detail {

/// Adds a model's quantities (quantity<"name">(e) terms) to a fit's draws (nuts_fit,
/// approximate_fit): each draw's θ from its parameters' values (model.unconstrain_draw), the
/// quantities at θ after them, and their names after the parameters'; fit.quantities counts the
/// columns added. A value that the sampler's transform rounded onto a finite bound is taken as
/// the nearest double inside (model.unconstrain_draw); a draw whose values still cannot be mapped
/// back to θ (a simplex's element rounded to 0) gets NaN quantities. Nothing for a model without
/// quantities.
template <class Model, class Fit>
void append_model_quantities(const Model& m, Fit& fit) {
  const std::vector<std::string> q = m.quantity_names();
  if (q.empty() || fit.quantities > 0) return;
  const std::size_t p = fit.names.size(), k = q.size();
  if (p != m.constrained_dim())
    throw std::logic_error("tyche: a fit of " + std::to_string(p) + " values for a model of " +
                           std::to_string(m.constrained_dim()) + " (append_quantities)");
  const std::size_t draws = static_cast<std::size_t>(fit.draws);
  for (auto& chain : fit.values) {
    const std::size_t rows = p > 0 ? chain.size() / p : draws;
    std::vector<double> out(rows * (p + k));
    for (std::size_t d = 0; d < rows; ++d) {
      const double* row = chain.data() + d * p;
      std::copy(row, row + p, out.data() + d * (p + k));
      double* dest = out.data() + d * (p + k) + p;
      try {
        const std::span<const double> draw(row, p);
        std::vector<double> theta;
        if constexpr (requires { m.unconstrain_draw(draw); }) theta = m.unconstrain_draw(draw);
        else theta = m.unconstrain(draw);
        const std::vector<double> values = m.quantities(theta);
        std::copy(values.begin(), values.end(), dest);
      } catch (const std::invalid_argument&) {
        std::fill(dest, dest + k, std::numeric_limits<double>::quiet_NaN());
      }
    }
    chain = std::move(out);
  }
  // An approximation's centre on the constrained scale (advi's first CSV row) gets the
  // quantities at that centre (fit.mean, on the unconstrained scale).
  if constexpr (requires { fit.mean_values; fit.mean; }) {
    if (fit.mean_values.size() == p) {
      std::vector<double> at_mean(k, std::numeric_limits<double>::quiet_NaN());
      if (fit.mean.size() == m.dim()) at_mean = m.quantities(fit.mean);
      fit.mean_values.insert(fit.mean_values.end(), at_mean.begin(), at_mean.end());
    }
  }
  fit.names.insert(fit.names.end(), q.begin(), q.end());
  fit.quantities = static_cast<int>(k);
}
/// A mode's quantities (optimize_result): the model's quantities at the mode's θ, after the
/// parameters' values and names; mode.quantities counts them.
template <class Model, class Mode>
void append_mode_quantities(const Model& m, Mode& mode) {
  if constexpr (requires { m.quantity_names(); }) {
    const std::vector<std::string> q = m.quantity_names();
    if (q.empty() || mode.quantities > 0 || mode.unconstrained.size() != m.dim()) return;
    const std::vector<double> values = m.quantities(mode.unconstrained);
    mode.names.insert(mode.names.end(), q.begin(), q.end());
    mode.values.insert(mode.values.end(), values.begin(), values.end());
    mode.quantities = static_cast<int>(q.size());
  }
}
/// append_model_quantities for a model built with tyche::model (other log-density targets have
/// no quantities).
template <class Model, class Fit>
void append_quantities(const Model& m, Fit& fit) {
  if constexpr (requires { m.quantity_names(); }) append_model_quantities(m, fit);
}

}  // namespace tyche::detail
