// tyche/inference/fit.hpp — approximate_fit: the draws of an approximation of the posterior
// (laplace, pathfinder, advi), with the model's and the approximation's log density of each
// draw. summary(fit) (diagnostics/summary.hpp) and write_stan_csv (io/stan_csv.hpp) take it as
// they take a nuts_fit; its draws are laid out as a nuts_fit's.
#pragma once
#include <tyche/scalar/format.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tyche {

/// Draws from an approximation of the posterior, on the constrained scale.
struct approximate_fit {
  /// The method, as CmdStan names it: "laplace", "pathfinder" or "variational".
  std::string method;
  /// The method's settings as CmdStan names them (variational: algorithm, iter, eta, …;
  /// pathfinder: num_paths, num_draws, …; laplace: jacobian, draws), in CmdStan's order, as
  /// text: write_stan_csv writes them under the method, where stan_csv::config_value reads them.
  std::vector<std::pair<std::string, std::string>> settings;
  std::vector<std::string> names;  // the constrained values' names, as nuts_fit's
  int chains = 1, draws = 0;       // one "chain" of independent draws
  std::vector<std::vector<double>> values;  // [chain][draw * dim + k], constrained
  /// The last `quantities` names and values of each draw are the model's quantities
  /// (quantity<"name">(e) terms, computed from the draw), as in nuts_fit.
  int quantities = 0;
  /// Per draw: log p, the model's log density on the unconstrained scale (CmdStan's log_p__ /
  /// lp__; with the log-Jacobian, except for laplace at a mode found without it), and log q,
  /// the approximation's normalised log density there (log_g__ / lp_approx__, which CmdStan
  /// writes without the Gaussian's constants: the columns differ from CmdStan's by a constant).
  std::vector<std::vector<double>> log_p, log_q;  // [chain][draw]
  /// On the unconstrained scale: the Gaussian the draws come from (laplace, advi, single-path
  /// pathfinder), or the mean and covariance of the resampled draws (multi-path pathfinder):
  /// mean (d), covariance (d × d row-major; left empty by pathfinder beyond d = 1000) and its
  /// diagonal, variance (d, always).
  std::vector<double> mean, covariance, variance;
  /// The constrained values of that mean (advi: the first row CmdStan's variational CSV holds).
  std::vector<double> mean_values;
  /// Pareto k̂ of the importance weights log p − log q (pathfinder's PSIS; for laplace and advi
  /// the diagnostic of Yao et al. 2018, log p with the log-Jacobian even where laplace's mode and
  /// log_p are without it): above 0.7 the approximation is
  /// too far from the posterior for its draws to be trusted (a warning says so).
  double pareto_k = std::nan("");
  /// True when the draws were resampled by importance weights (multi-path pathfinder with
  /// psis_resample): they stand for the posterior itself, not for q (loo uses them as such).
  bool resampled = false;
  long long gradient_evaluations = 0;
  std::uint64_t seed = 1;
  double seconds = 0;
  /// What the method found worth saying (printed by summary): e.g. a high Pareto k̂, paths
  /// that failed.
  std::vector<std::string> warnings;

  [[nodiscard]] std::size_t dim() const { return names.size(); }
  /// Draw d of chain c (both from 0): its dim() values — the parameters' constrained values,
  /// then the quantities' (the model's m.constrained_dim() + m.quantity_count(), not m.dim()) —
  /// as a view into `values`. m.sample_observations_at(fit.draw(c, d), rng) is a posterior
  /// predictive draw. Throws std::out_of_range naming the chain and draw.
  [[nodiscard]] std::span<const double> draw(int c, int d) const {
    return detail::draw_of(values, chains, draws, dim(), c, d, "tyche::approximate_fit");
  }

  /// n sets of initial values for nuts() (nuts_config::init): draws spread evenly over the fit
  /// (draw ⌊k·draws/n⌋ for k = 0 … n − 1), on the constrained scale. Throws when the fit has no
  /// draws.
  /// Resampled draws repeat (pathfinder's PSIS resampling): from ⌊k·draws/n⌋ on, the first
  /// draw not already given is taken; only when the fit has fewer than n distinct draws do
  /// chains share one.
  [[nodiscard]] std::vector<std::vector<double>> initial_values(int n) const {
    if (draws < 1 || values.empty() || values[0].size() < static_cast<std::size_t>(draws) * dim())
      throw std::invalid_argument("tyche::approximate_fit::initial_values: the fit has no draws");
    if (n < 1) throw std::invalid_argument("tyche::approximate_fit::initial_values: n = " + std::to_string(n) + " must be >= 1");
    // The parameters' values of draw d (its quantities, after them, are not initial values).
    const std::size_t parameters = dim() - static_cast<std::size_t>(quantities);
    auto draw = [&](std::size_t d) {
      return std::vector<double>(values[0].begin() + static_cast<std::ptrdiff_t>(d * dim()),
                                 values[0].begin() + static_cast<std::ptrdiff_t>(d * dim() + parameters));
    };
    std::vector<std::vector<double>> out;
    for (int k = 0; k < n; ++k) {
      const auto first = static_cast<std::size_t>(static_cast<long long>(k) * draws / n);
      std::vector<double> pick = draw(first);
      for (std::size_t step = 0; step < static_cast<std::size_t>(draws); ++step) {
        std::vector<double> candidate = draw((first + step) % static_cast<std::size_t>(draws));
        bool seen = false;
        for (const auto& v : out) seen = seen || v == candidate;
        if (!seen) {
          pick = std::move(candidate);
          break;
        }
      }
      out.push_back(std::move(pick));
    }
    return out;
  }

  /// An inverse metric for nuts() (nuts_config::init_inv_metric) from the approximation's
  /// covariance on the unconstrained scale: its diagonal, or (dense) the whole d × d matrix.
  /// Throws when the fit has none (dense: pathfinder beyond d = 1000).
  [[nodiscard]] std::vector<double> inverse_metric(bool dense = false) const {
    std::vector<double> m = dense ? covariance : variance;
    if (m.empty())
      throw std::invalid_argument(std::string("tyche::approximate_fit::inverse_metric: the fit holds no ") +
                                  (dense ? "covariance" : "variance"));
    if (dense) {  // symmetric to the last bit, as nuts() requires
      const auto d = static_cast<std::size_t>(std::llround(std::sqrt(static_cast<double>(m.size()))));
      for (std::size_t i = 0; i < d; ++i)
        for (std::size_t j = 0; j < i; ++j) m[i * d + j] = m[j * d + i] = 0.5 * (m[i * d + j] + m[j * d + i]);
    }
    return m;
  }
  /// The column of the value named `name` ("mu", "theta[2]"); throws std::out_of_range naming
  /// the names there are when there is none.
  [[nodiscard]] std::size_t index(std::string_view name) const {
    return detail::index_of_name(names, name, "tyche::approximate_fit");
  }
  /// Draws of the value named `name`, chain by chain: [chain][draw].
  [[nodiscard]] std::vector<std::vector<double>> parameter(std::string_view name) const {
    return parameter(index(name));
  }
  /// The mean of the draws of the value named `name` (constrained; `mean` is the Gaussian's
  /// centre on the unconstrained scale, `mean_values` that centre constrained).
  [[nodiscard]] double mean_of(std::string_view name) const {
    double sum = 0;
    long long n = 0;
    for (const auto& chain : parameter(name))
      for (double v : chain) {
        sum += v;
        ++n;
      }
    return n > 0 ? sum / static_cast<double>(n) : std::nan("");
  }
  /// Draws of value k, chain by chain: [chain][draw].
  [[nodiscard]] std::vector<std::vector<double>> parameter(std::size_t k) const {
    if (k >= dim())
      throw std::out_of_range("tyche::approximate_fit::parameter: index " + std::to_string(k) + ", but the fit has " +
                              std::to_string(dim()) + " values");
    std::vector<std::vector<double>> out(static_cast<std::size_t>(chains));
    for (int c = 0; c < chains; ++c) {
      out[static_cast<std::size_t>(c)].resize(static_cast<std::size_t>(draws));
      for (int d = 0; d < draws; ++d)
        out[static_cast<std::size_t>(c)][static_cast<std::size_t>(d)] =
            values[static_cast<std::size_t>(c)][static_cast<std::size_t>(d) * dim() + k];
    }
    return out;
  }
};

}  // namespace tyche
