// tyche/inference/advi.hpp — advi(model, config): automatic differentiation variational inference
// (Kucukelbir, Tran, Ranganath, Gelman & Blei 2017, "Automatic differentiation variational
// inference", JMLR 18(14)) as CmdStan's variational method: a Gaussian on the unconstrained
// scale, mean-field (independent coordinates, sd = exp(ω)) or full-rank (covariance L L'),
// fitted by stochastic gradient ascent on the ELBO with reparameterised gradients and the
// paper's adaptive step-size sequence; η chosen from {100, 10, 1, 0.1, 0.01} by a short
// adaptation; stopped when the mean or the median of the recent relative ELBO changes falls
// below tol_rel_obj (docs/inference.md).
//
//     const auto approx = tyche::advi(m, {.algorithm = tyche::advi_algorithm::fullrank});
#pragma once
#include <tyche/concepts.hpp>
#include <tyche/inference/fit.hpp>
#include <tyche/inference/model_density.hpp>
#include <tyche/inference/psis.hpp>
#include <tyche/model/quantities.hpp>
#include <tyche/random/philox.hpp>
#include <tyche/scalar/format.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace tyche {

/// The family of ADVI's Gaussian.
enum class advi_algorithm { meanfield, fullrank };

/// Settings of advi(): CmdStan's variational method, with its defaults.
struct advi_config {
  advi_algorithm algorithm = advi_algorithm::meanfield;
  int iterations = 10000;     // iter: the most gradient steps
  int grad_samples = 1;       // draws per gradient estimate
  int elbo_samples = 100;     // draws per ELBO estimate
  double eta = 1.0;           // the step-size scale, when adapt_engaged is false
  bool adapt_engaged = true;  // choose eta from {100, 10, 1, 0.1, 0.01}
  int adapt_iterations = 50;  // steps per eta tried
  double tol_rel_obj = 0.01;
  int eval_elbo = 100;        // steps between ELBO estimates (the convergence test)
  int output_samples = 1000;  // draws returned
  /// Return the mean of the last iterates (the last half of the windows of eval_elbo steps
  /// the convergence test keeps) instead of the last one: the stochastic steps' noise averages
  /// out (Polyak & Juditsky 1992). CmdStan returns the last iterate (false).
  bool average = true;
  std::uint64_t seed = 1;
  double init_radius = 2.0;
  /// The Gaussian's initial mean on the constrained scale; empty: random (θ uniform on
  /// (−init_radius, init_radius)).
  std::vector<double> init = {};
};

namespace inference {

/// The variational Gaussian: mean mu, and either log-sds omega (mean-field) or a lower
/// triangular factor l (full-rank, row-major d × d).
template <class = void>
struct basic_advi_gaussian {
  bool fullrank = false;
  std::vector<double> mu, omega, l;

  [[nodiscard]] std::size_t dim() const { return mu.size(); }
  /// ζ = μ + (exp(ω) ∘ η, or L η).
  void transform(const std::vector<double>& eta, std::vector<double>& zeta) const {
    const std::size_t d = dim();
    zeta.assign(d, 0.0);
    for (std::size_t i = 0; i < d; ++i) {
      double v = mu[i];
      if (fullrank)
        for (std::size_t j = 0; j <= i; ++j) v += l[i * d + j] * eta[j];
      else
        v += std::exp(omega[i]) * eta[i];
      zeta[i] = v;
    }
  }
  [[nodiscard]] double entropy() const {
    const std::size_t d = dim();
    double h = 0.5 * static_cast<double>(d) * (1 + detail::log_two_pi);
    for (std::size_t i = 0; i < d; ++i) h += fullrank ? std::log(std::fabs(l[i * d + i])) : omega[i];
    return h;
  }
  /// log q(ζ) for ζ = transform(η).
  [[nodiscard]] double log_density(const std::vector<double>& eta) const {
    double s = 0;
    for (double e : eta) s += e * e;
    return -(entropy() - 0.5 * static_cast<double>(dim())) - 0.5 * s;
  }
  /// The parameters as one vector (μ, then ω or L's lower triangle), and back.
  [[nodiscard]] std::vector<double> flat() const {
    std::vector<double> out = mu;
    if (fullrank) {
      for (std::size_t i = 0; i < dim(); ++i)
        for (std::size_t j = 0; j <= i; ++j) out.push_back(l[i * dim() + j]);
    } else {
      out.insert(out.end(), omega.begin(), omega.end());
    }
    return out;
  }
  /// flat() with the columns of L whose diagonal entry is negative negated: LLᵀ, and so the
  /// Gaussian, is the same, and iterates that differ only in those signs average to it (their
  /// L's would average towards 0). Mean-field: flat().
  [[nodiscard]] std::vector<double> canonical_flat() const {
    std::vector<double> out = flat();
    if (!fullrank) return out;
    const std::size_t d = dim();
    for (std::size_t j = 0; j < d; ++j) {
      if (!(l[j * d + j] < 0)) continue;
      for (std::size_t i = j; i < d; ++i) out[d + i * (i + 1) / 2 + j] = -out[d + i * (i + 1) / 2 + j];
    }
    return out;
  }
  void add(const std::vector<double>& step) {
    const std::size_t d = dim();
    for (std::size_t i = 0; i < d; ++i) mu[i] += step[i];
    std::size_t k = d;
    if (fullrank) {
      for (std::size_t i = 0; i < d; ++i)
        for (std::size_t j = 0; j <= i; ++j) l[i * d + j] += step[k++];
    } else {
      for (std::size_t i = 0; i < d; ++i) omega[i] += step[k++];
    }
  }
};
using advi_gaussian = basic_advi_gaussian<>;

template <class = void>
class basic_advi_run {
 public:
  basic_advi_run(const log_density_function& density, const advi_config& cfg)
      : density_(density), cfg_(cfg), workspace_(density.workspace_size), grad_(density.dim) {}

  long long evaluations = 0;

  /// The ELBO by elbo_samples draws: E[log p(ζ)] + entropy. Draws where log p is not finite
  /// are dropped, up to a tenth of them; beyond that the ELBO is −∞.
  double elbo(const advi_gaussian& q, counter_rng& rng) {
    const std::size_t d = q.dim();
    std::vector<double> eta(d), zeta;
    double sum = 0;
    int used = 0, dropped = 0;
    for (int n = 0; n < cfg_.elbo_samples; ++n) {
      for (double& e : eta) e = rng.normal();
      q.transform(eta, zeta);
      const double lp = density_(zeta.data(), grad_.data(), workspace_.data());
      ++evaluations;
      if (!std::isfinite(lp)) {
        ++dropped;
        continue;
      }
      sum += lp;
      ++used;
    }
    if (used == 0 || dropped * 10 > cfg_.elbo_samples) return -std::numeric_limits<double>::infinity();
    return sum / used + q.entropy();
  }

  /// The ELBO's gradient by grad_samples reparameterised draws, in flat() order; false when a
  /// draw's gradient is not finite.
  bool gradient(const advi_gaussian& q, counter_rng& rng, std::vector<double>& out) {
    const std::size_t d = q.dim();
    out.assign(q.flat().size(), 0.0);
    std::vector<double> eta(d), zeta;
    const double scale = 1.0 / cfg_.grad_samples;
    for (int n = 0; n < cfg_.grad_samples; ++n) {
      for (double& e : eta) e = rng.normal();
      q.transform(eta, zeta);
      const double lp = density_(zeta.data(), grad_.data(), workspace_.data());
      ++evaluations;
      if (!std::isfinite(lp)) return false;
      for (double g : grad_)
        if (!std::isfinite(g)) return false;
      for (std::size_t i = 0; i < d; ++i) out[i] += scale * grad_[i];
      std::size_t k = d;
      if (q.fullrank) {
        for (std::size_t i = 0; i < d; ++i)
          for (std::size_t j = 0; j <= i; ++j) out[k++] += scale * grad_[i] * eta[j];
      } else {
        for (std::size_t i = 0; i < d; ++i) out[k++] += scale * grad_[i] * eta[i] * std::exp(q.omega[i]);
      }
    }
    // The entropy's gradient.
    std::size_t k = d;
    if (q.fullrank) {
      for (std::size_t i = 0; i < d; ++i)
        for (std::size_t j = 0; j <= i; ++j, ++k)
          if (i == j) out[k] += 1 / q.l[i * d + i];
    } else {
      for (std::size_t i = 0; i < d; ++i) out[d + i] += 1;
    }
    return true;
  }

  /// `steps` steps of the adaptive sequence from q with scale eta (the history s_k restarts).
  /// Every eval_elbo steps (when `converge`), the relative ELBO change enters a circular
  /// buffer; stops when its mean or median is below tol_rel_obj. Returns false when a gradient
  /// or the parameters were not finite.
  bool ascend(advi_gaussian& q, double eta, int steps, bool converge, counter_rng& rng) {
    std::vector<double> g, s;
    const double tau = 1, pre = 0.1, post = 0.9;
    const std::size_t buffer = static_cast<std::size_t>(
        std::max(0.1 * cfg_.iterations / cfg_.eval_elbo, 2.0));
    std::deque<double> changes;
    // The iterates' mean over each window of eval_elbo steps, the last `buffer` windows.
    std::deque<std::vector<double>> windows;
    std::vector<double> window_sum;
    double elbo_prev = std::nan("");
    // Averaging (cfg.average): the Gaussian returned is the mean of the iterates of the last
    // half of the windows kept (Polyak & Juditsky 1992), not the last iterate.
    auto finish = [&] {
      if (!cfg_.average || windows.empty()) return;
      const std::size_t use = (windows.size() + 1) / 2;
      std::vector<double> mean(windows.back().size(), 0.0);
      for (std::size_t w = windows.size() - use; w < windows.size(); ++w)
        for (std::size_t i = 0; i < mean.size(); ++i) mean[i] += windows[w][i] / static_cast<double>(use);
      const std::vector<double> now = q.flat();
      for (std::size_t i = 0; i < mean.size(); ++i) mean[i] -= now[i];
      q.add(mean);
    };
    for (int t = 1; t <= steps; ++t) {
      if (!gradient(q, rng, g)) return false;
      if (t == 1) {
        s.resize(g.size());
        for (std::size_t i = 0; i < g.size(); ++i) s[i] = g[i] * g[i];
      } else {
        for (std::size_t i = 0; i < g.size(); ++i) s[i] = pre * g[i] * g[i] + post * s[i];
      }
      const double scaled = eta * std::pow(t, -0.5 + 1e-16);
      for (std::size_t i = 0; i < g.size(); ++i) g[i] = scaled * g[i] / (tau + std::sqrt(s[i]));
      q.add(g);
      const std::vector<double> now = q.flat();
      for (double v : now)
        if (!std::isfinite(v)) return false;
      iterations = t;
      if (!converge) continue;
      if (window_sum.empty()) window_sum.assign(now.size(), 0.0);
      const std::vector<double> canonical = q.canonical_flat();
      for (std::size_t i = 0; i < now.size(); ++i) window_sum[i] += canonical[i];
      if (t % cfg_.eval_elbo != 0) continue;
      for (double& v : window_sum) v /= cfg_.eval_elbo;
      windows.push_back(window_sum);
      if (windows.size() > buffer) windows.pop_front();
      window_sum.assign(now.size(), 0.0);
      const double e = elbo(q, rng);
      if (!std::isfinite(e)) {
        elbo_failed = true;
        return false;
      }
      if (!std::isnan(elbo_prev)) {
        // CmdStan divides by |ELBO|; tyche keeps every normalising constant, so a model's
        // ELBO can be near 0 (a normalised target: ELBO = −KL), where that ratio is noise: the
        // denominator is at least 1.
        changes.push_back(std::fabs(e - elbo_prev) / std::max(std::fabs(e), 1.0));
        if (changes.size() > buffer) changes.pop_front();
        double mean = 0;
        for (double c : changes) mean += c / static_cast<double>(changes.size());
        std::vector<double> sorted(changes.begin(), changes.end());
        std::sort(sorted.begin(), sorted.end());
        const std::size_t n = sorted.size();
        const double median = n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
        if (mean < cfg_.tol_rel_obj) {
          convergence = "mean ELBO converged";
          finish();
          return true;
        }
        if (median < cfg_.tol_rel_obj) {
          convergence = "median ELBO converged";
          finish();
          return true;
        }
        if (t > 10 * cfg_.eval_elbo && (median > 0.5 || mean > 0.5)) diverging = true;
      }
      elbo_prev = e;
    }
    finish();
    return true;
  }

  int iterations = 0;
  bool elbo_failed = false;  // the last failure: the ELBO estimate was −∞ (not a gradient)
  std::string convergence;  // empty: the iterations ran out
  bool diverging = false;

 private:
  const log_density_function& density_;
  const advi_config& cfg_;
  std::vector<double> workspace_, grad_;
};
using advi_run = basic_advi_run<>;

template <class = void>
void check_advi_config(const advi_config& c) {
  const std::string fn = "tyche::advi: ";
  const std::pair<const char*, int> at_least_one[] = {
      {"iterations", c.iterations},           {"grad_samples", c.grad_samples}, {"elbo_samples", c.elbo_samples},
      {"adapt_iterations", c.adapt_iterations}, {"eval_elbo", c.eval_elbo},
  };
  for (const auto& [name, v] : at_least_one)
    if (v < 1) throw std::invalid_argument(fn + name + " = " + std::to_string(v) + " must be >= 1");
  if (c.output_samples < 0)
    throw std::invalid_argument(fn + "output_samples = " + std::to_string(c.output_samples) + " must be >= 0");
  if (!(c.eta > 0) || !std::isfinite(c.eta))
    throw std::invalid_argument(fn + "eta = " + tyche::detail::format_number(c.eta) + " is not a positive finite number");
  if (!(c.tol_rel_obj > 0) || !std::isfinite(c.tol_rel_obj))
    throw std::invalid_argument(fn + "tol_rel_obj = " + tyche::detail::format_number(c.tol_rel_obj) +
                                " is not a positive finite number");
}

/// advi() on a model's functions.
template <class = void>
approximate_fit advi(const model_functions& model, const advi_config& cfg) {
  const std::string fn = "tyche::advi: ";
  check_advi_config(cfg);
  const auto start = std::chrono::steady_clock::now();
  const log_density_function& density = model.with_jacobian;
  const std::size_t d = density.dim;
  counter_rng init_rng(cfg.seed, 0), rng(cfg.seed, 1);
  advi_gaussian init;
  init.fullrank = cfg.algorithm == advi_algorithm::fullrank;
  init.mu = initial_point(model, density, cfg.init, cfg.init_radius, init_rng, fn);
  if (init.fullrank) {
    init.l.assign(d * d, 0.0);
    for (std::size_t i = 0; i < d; ++i) init.l[i * d + i] = 1;
  } else {
    init.omega.assign(d, 0.0);
  }
  advi_run run(density, cfg);
  approximate_fit fit;
  fit.method = "variational";
  {
    using tyche::detail::format_number;
    fit.settings = {{"algorithm", cfg.algorithm == advi_algorithm::fullrank ? "fullrank" : "meanfield"},
                    {"iter", std::to_string(cfg.iterations)},
                    {"grad_samples", std::to_string(cfg.grad_samples)},
                    {"elbo_samples", std::to_string(cfg.elbo_samples)},
                    {"eta", format_number(cfg.eta)},
                    {"engaged", cfg.adapt_engaged ? "1" : "0"},
                    {"adapt_iter", std::to_string(cfg.adapt_iterations)},
                    {"tol_rel_obj", format_number(cfg.tol_rel_obj)},
                    {"eval_elbo", std::to_string(cfg.eval_elbo)},
                    {"output_draws", std::to_string(cfg.output_samples)}};
  }
  fit.names = model.names;
  fit.seed = cfg.seed;
  double eta = cfg.eta;
  const double elbo_init = run.elbo(init, rng);
  if (cfg.adapt_engaged) {
    // Each η from the largest: adapt_iterations steps from the initial Gaussian; keep the best
    // ELBO, and stop at the first η worse than a better one found before (CmdStan's rule).
    double best = -std::numeric_limits<double>::infinity();
    double best_eta = 0;
    for (double candidate : {100.0, 10.0, 1.0, 0.1, 0.01}) {
      advi_gaussian q = init;
      const bool ok = run.ascend(q, candidate, cfg.adapt_iterations, false, rng);
      const double e = ok ? run.elbo(q, rng) : -std::numeric_limits<double>::infinity();
      if (e < best && best > elbo_init) break;
      if (e > best) {
        best = e;
        best_eta = candidate;
      }
    }
    if (best_eta == 0 || !(best > elbo_init))
      throw std::runtime_error(
          fn + "every step size tried in adaptation (eta = 100, 10, 1, 0.1, 0.01, " +
          std::to_string(cfg.adapt_iterations) + " steps each) failed to improve the ELBO from the initial Gaussian (" +
          tyche::detail::format_number(elbo_init) + ")" +
          (std::isfinite(elbo_init)
               ? "; try another init or seed, or adapt_engaged = false with a small eta"
               : ": the log density was NaN or -inf at some of the Gaussians' draws, where the model is not defined "
                 "or has no mass (often a variable whose declared support is wider than where its use is defined, "
                 "such as log(x) with x unbounded): declare the variable's support (a family or transform with "
                 "bounds), or start where the model is defined (init)"));
    eta = best_eta;
  }
  // The run. With adaptation, a run whose gradient or ELBO becomes non-finite, or that ends with
  // an ELBO below the initial Gaussian's, restarts from the initial Gaussian with the next
  // smaller η of the sequence, with a warning (CmdStan stops with an error in the first case and
  // returns the result in the second: a step size that survived adaptation's 50 steps can still
  // overshoot later).
  std::vector<double> etas{eta};
  if (cfg.adapt_engaged)
    for (double smaller : {10.0, 1.0, 0.1, 0.01})
      if (smaller < eta) etas.push_back(smaller);
  advi_gaussian q = init;
  for (std::size_t attempt = 0;; ++attempt) {
    eta = etas[attempt];
    q = init;
    run.convergence.clear();
    run.diverging = run.elbo_failed = false;
    std::string cause;
    if (run.ascend(q, eta, cfg.iterations, true, rng)) {
      // A run that ends worse than it started has failed too (a first step of η = 100 can throw
      // the Gaussian far out, where the relative ELBO change is small enough to "converge").
      const double elbo_final = run.elbo(q, rng);
      if (elbo_final >= elbo_init || !std::isfinite(elbo_init)) break;
      cause = "the ELBO at the end (" + tyche::detail::format_number(elbo_final) +
              ") is below the initial Gaussian's (" + tyche::detail::format_number(elbo_init) + ")";
    } else {
      cause = run.elbo_failed
                  ? "the ELBO estimate at iteration " + std::to_string(run.iterations) +
                        " is -inf: more than a tenth of its " + std::to_string(cfg.elbo_samples) +
                        " draws have a log density that is not finite"
                  : "the stochastic gradient or the Gaussian's parameters became non-finite at iteration " +
                        std::to_string(run.iterations + 1);
    }
    if (attempt + 1 == etas.size())
      throw std::runtime_error(fn + cause + " (eta = " + tyche::detail::format_number(eta) +
                               (attempt > 0 ? ", the smallest tried" : "") +
                               "): try another init or seed, or adapt_engaged = false with a smaller eta");
    fit.warnings.push_back(cause + " with eta = " + tyche::detail::format_number(eta) + ": restarted with eta = " +
                           tyche::detail::format_number(etas[attempt + 1]));
  }
  if (run.convergence.empty())
    fit.warnings.push_back("the maximum number of iterations (" + std::to_string(cfg.iterations) +
                           ") was reached before the ELBO converged: the approximation may be poor");
  if (run.diverging) fit.warnings.push_back("the relative ELBO change stayed above 0.5: the ELBO may be diverging");
  fit.mean = q.mu;
  model.constrain_into(q.mu.data(), fit.mean_values);
  fit.covariance.assign(d * d, 0.0);
  for (std::size_t i = 0; i < d; ++i)
    for (std::size_t j = 0; j < d; ++j) {
      double v = 0;
      if (q.fullrank) {
        for (std::size_t t = 0; t <= std::min(i, j); ++t) v += q.l[i * d + t] * q.l[j * d + t];
      } else if (i == j) {
        v = std::exp(2 * q.omega[i]);
      }
      fit.covariance[i * d + j] = v;
    }
  fit.variance = detail::diagonal(fit.covariance, d);
  // Output: output_samples draws with log p and log q.
  counter_rng out_rng(cfg.seed, 2);
  fit.draws = cfg.output_samples;
  fit.values.assign(1, {});
  fit.log_p.assign(1, {});
  fit.log_q.assign(1, {});
  std::vector<double> eta_draw(d), zeta, grad(d), workspace(density.workspace_size);
  for (int n = 0; n < cfg.output_samples; ++n) {
    for (double& e : eta_draw) e = out_rng.normal();
    q.transform(eta_draw, zeta);
    fit.log_q[0].push_back(q.log_density(eta_draw));
    fit.log_p[0].push_back(density(zeta.data(), grad.data(), workspace.data()));
    model.constrain_into(zeta.data(), fit.values[0]);
  }
  if (std::string w = undefined_draws_warning(fit.log_p[0], true); !w.empty()) fit.warnings.push_back(std::move(w));
  // The PSIS diagnostic of Yao et al. (2018): k̂ of the draws' p / q.
  fit.pareto_k = importance_pareto_k(fit.log_p[0], fit.log_q[0]);
  if (fit.pareto_k > 0.7)
    fit.warnings.push_back("Pareto k = " + tyche::detail::format_number(std::round(fit.pareto_k * 100) / 100) +
                           " > 0.7 for the draws' importance ratios p / q: the fitted Gaussian is far from the "
                           "posterior, so its means and sds may be off (use nuts(), or pathfinder())");
  fit.gradient_evaluations = run.evaluations + cfg.output_samples;
  fit.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return fit;
}

}  // namespace inference

/// ADVI (CmdStan's variational method and defaults): a mean-field or full-rank Gaussian on the
/// unconstrained scale fitted to the posterior by stochastic gradient ascent on the ELBO;
/// output_samples draws from it (fit.mean, fit.covariance: the Gaussian). Not converging within
/// `iterations` is a warning in the fit (as CmdStan's message), not an error.
template <class Model>
approximate_fit advi(const Model& m, const advi_config& cfg = {}) {
  if constexpr (!sampleable_model<Model>) {
    static_assert(sampleable_model<Model>,
                  "tyche::advi(model, config) requires a model built with tyche::model(...); the first argument "
                  "is not one");
    return {};
  } else {
    approximate_fit fit = inference::advi(inference::functions_of(m), cfg);
    tyche::detail::append_quantities(m, fit);
    return fit;
  }
}

}  // namespace tyche
