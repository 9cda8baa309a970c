// tyche/inference/psis.hpp — Pareto-smoothed importance sampling (Vehtari, Simpson, Gelman, Yao &
// Gabry 2024, "Pareto smoothed importance sampling", JMLR 25(72)): the largest
// min(S/5, 3·√S) log importance weights are replaced by the expected order statistics of a
// generalised Pareto distribution fitted to them (Zhang & Stephens 2009, with the weakly
// informative prior on k of the paper), truncated at the largest raw weight; k̂ says how far
// the proposal is from the target (≤ 0.7: usable). And multinomial resampling by such weights.
#pragma once
#include <tyche/random/philox.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

namespace tyche::inference {

/// Smoothed log weights (unnormalised, in the input's order) and the Pareto k̂ of the tail.
struct psis_result {
  std::vector<double> log_weights;
  double pareto_k = std::nan("");
};

/// Zhang & Stephens (2009) fit of a generalised Pareto distribution to x (sorted ascending,
/// positive): k and σ, with k shrunk towards 0.5 by the prior of Vehtari et al. (weight 10).
template <class = void>
void fit_generalized_pareto(const std::vector<double>& x, double& k, double& sigma) {
  const std::size_t n = x.size();
  const double prior = 3;
  const std::size_t m = 30 + static_cast<std::size_t>(std::sqrt(static_cast<double>(n)));
  const double quartile = x[static_cast<std::size_t>(std::floor(static_cast<double>(n) / 4 + 0.5)) - 1];
  std::vector<double> theta(m), log_lik(m);
  for (std::size_t j = 0; j < m; ++j) {
    theta[j] = 1 / x[n - 1] + (1 - std::sqrt(static_cast<double>(m) / (static_cast<double>(j + 1) - 0.5))) /
                                  (prior * quartile);
    double kj = 0;
    for (double v : x) kj += std::log1p(-theta[j] * v);
    kj /= static_cast<double>(n);
    log_lik[j] = static_cast<double>(n) * (std::log(-theta[j] / kj) - kj - 1);
  }
  std::vector<double> w(m);
  for (std::size_t j = 0; j < m; ++j) {
    double s = 0;
    for (std::size_t i = 0; i < m; ++i) s += std::exp(log_lik[i] - log_lik[j]);
    w[j] = 1 / s;
  }
  double theta_hat = 0, total = 0;
  for (std::size_t j = 0; j < m; ++j)
    if (w[j] >= 10 * std::numeric_limits<double>::epsilon()) {
      theta_hat += theta[j] * w[j];
      total += w[j];
    }
  theta_hat /= total;
  double khat = 0;
  for (double v : x) khat += std::log1p(-theta_hat * v);
  khat /= static_cast<double>(n);
  sigma = -khat / theta_hat;
  const double nd = static_cast<double>(n);
  k = (nd * khat + 10 * 0.5) / (nd + 10);
}

/// PSIS of log weights (any finite or −∞ values; at least one finite). r_eff: the relative
/// efficiency of the draws (ESS / S; 1 for independent draws, less for a Markov chain's), which
/// lengthens the tail to min(S/5, 3·√(S / r_eff)) as the loo package does.
template <class = void>
psis_result psis(const std::vector<double>& log_w, double r_eff = 1) {
  const std::size_t s = log_w.size();
  psis_result out;
  out.log_weights = log_w;
  const double max_lw = *std::max_element(log_w.begin(), log_w.end());
  if (!std::isfinite(max_lw)) return out;
  for (double& v : out.log_weights) v -= max_lw;  // the largest is 0
  const std::size_t tail =
      std::min(static_cast<std::size_t>(std::ceil(0.2 * static_cast<double>(s))),
               static_cast<std::size_t>(std::ceil(3 * std::sqrt(static_cast<double>(s) / r_eff))));
  if (tail < 5 || tail >= s) return out;  // too few draws to fit a tail
  std::vector<std::size_t> order(s);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return out.log_weights[a] < out.log_weights[b]; });
  const double cutoff = out.log_weights[order[s - tail - 1]];
  if (!std::isfinite(cutoff)) return out;
  // A tail spanning more than e^700 (the largest weight is 0 after the shift): the weights are
  // degenerate, k̂ is +∞ and they are left as they are (loo reports Inf where it cannot fit).
  if (-cutoff > 700) {
    out.pareto_k = std::numeric_limits<double>::infinity();
    return out;
  }
  // The exceedances over the cutoff, scaled by e^cutoff (k̂ does not depend on the scale, and
  // nothing underflows): y = e^(lw − cutoff) − 1. Values tied with the cutoff (y = 0) stay.
  std::vector<double> exceed;
  std::vector<std::size_t> tail_index;
  for (std::size_t i = s - tail; i < s; ++i) {
    const double y = std::expm1(out.log_weights[order[i]] - cutoff);
    if (y <= 0) continue;
    exceed.push_back(y);
    tail_index.push_back(order[i]);
  }
  if (exceed.size() < 5) {  // the largest weights (nearly) all equal: a bounded tail
    out.pareto_k = 0;
    return out;
  }
  double k = 0, sigma = 0;
  fit_generalized_pareto(exceed, k, sigma);
  out.pareto_k = k;
  if (!std::isfinite(k) || !std::isfinite(sigma)) return out;
  // Replace the tail by the GPD's quantiles at (i − 0.5) / m, truncated at the largest raw
  // weight (0 after the shift).
  const std::size_t m = exceed.size();
  for (std::size_t i = 0; i < m; ++i) {
    const double p = (static_cast<double>(i) + 0.5) / static_cast<double>(m);
    const double q = std::fabs(k) < 1e-12 ? -sigma * std::log1p(-p) : sigma * std::expm1(-k * std::log1p(-p)) / k;
    out.log_weights[tail_index[i]] = std::min(0.0, cutoff + std::log1p(q));
  }
  return out;
}

/// Pareto k̂ of the importance ratios p / q of draws from an approximation q (Yao, Vehtari,
/// Simpson & Gelman 2018, "Yes, but did it work?: evaluating variational inference"): from
/// log_p − log_q per draw (constants in either cancel). Above 0.7 the approximation is too far
/// from p for its draws, or importance sampling with them, to be trusted; NaN with too few draws.
template <class = void>
double importance_pareto_k(const std::vector<double>& log_p, const std::vector<double>& log_q) {
  std::vector<double> log_w(log_p.size());
  bool finite = false;
  for (std::size_t i = 0; i < log_p.size(); ++i) {
    log_w[i] = std::isnan(log_p[i]) ? -std::numeric_limits<double>::infinity() : log_p[i] - log_q[i];
    finite = finite || std::isfinite(log_w[i]);
  }
  if (!finite) return std::numeric_limits<double>::quiet_NaN();
  return psis(log_w).pareto_k;
}

/// The warning for an approximation whose draws fall where the log density is NaN or −∞
/// (outside where the model is defined, or outside a support the model does not declare); empty
/// when none does. k̂ alone missed it: a Laplace approximation with 263 of 1,000 draws where
/// log(x) of an unbounded x was NaN reported k̂ = 0.47, "usable" (a new user, 2026-12-05).
/// `kept`: whether those draws are among the draws returned (laplace, advi, a pathfinder run
/// without resampling), or were left out by the importance weights (resampled pathfinder).
inline std::string undefined_draws_warning(const std::vector<double>& log_p, bool kept) {
  std::size_t bad = 0;
  for (const double v : log_p) bad += std::isnan(v) || v == -std::numeric_limits<double>::infinity() ? 1 : 0;
  if (bad == 0) return {};
  return std::to_string(bad) + " of the " + std::to_string(log_p.size()) +
         (kept ? " draws" : " draws of the paths (before resampling)") +
         " fall where the log density is NaN or -inf: the approximation puts mass where the model is not defined "
         "or the posterior has none (often a variable whose declared support is wider than where its use is "
         "defined, such as log(x) with x unbounded)" +
         (kept ? "; the table's means, sds and quantiles include those draws"
               : "; the resampled draws leave them out, but the approximation is unreliable") +
         ". Declare the variable's support (a family or transform with that support: lognormal, half_normal, "
         "uniform(a, b)), or use nuts()";
}

/// n indices drawn with replacement with probabilities ∝ exp(log_w).
template <class = void>
std::vector<std::size_t> resample(const std::vector<double>& log_w, std::size_t n, counter_rng& rng) {
  const double max_lw = *std::max_element(log_w.begin(), log_w.end());
  std::vector<double> cumulative(log_w.size());
  double total = 0;
  for (std::size_t i = 0; i < log_w.size(); ++i) {
    total += std::isfinite(log_w[i]) ? std::exp(log_w[i] - max_lw) : 0.0;
    cumulative[i] = total;
  }
  std::vector<std::size_t> out(n);
  for (auto& pick : out) {
    const double u = rng.uniform01() * total;
    pick = static_cast<std::size_t>(std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin());
    if (pick >= log_w.size()) pick = log_w.size() - 1;
  }
  return out;
}

}  // namespace tyche::inference
