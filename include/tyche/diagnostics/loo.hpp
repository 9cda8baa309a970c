// tyche/diagnostics/loo.hpp — leave-one-out cross-validation by Pareto-smoothed importance
// sampling (PSIS-LOO; Vehtari, Gelman & Gabry 2017, "Practical Bayesian model evaluation using
// leave-one-out cross-validation and WAIC", Statistics and Computing 27; the smoothing of
// Vehtari, Simpson, Gelman, Yao & Gabry 2024, inference/psis.hpp): what R's loo package computes
// from a fit's log-likelihood matrix, here from the model and its NUTS fit directly.
//
// For each observation i and posterior draw s, log p(yᵢ | θˢ) (model::pointwise_log_likelihood).
// The importance ratios 1 / p(yᵢ | θˢ) turn posterior draws into draws of the posterior
// without yᵢ; PSIS smooths their largest values (a tail of min(S/5, 3·√(S / r_eff)) for the
// relative efficiency r_eff of exp(log p(yᵢ | θ)), as loo does) and gives k̂ᵢ, which says
// whether the estimate for yᵢ can be trusted: k̂ above min(1 − 1/log₁₀ S, 0.7) is not.
//   elpd_loo,i = log Σₛ wₛ p(yᵢ | θˢ) − log Σₛ wₛ     (w: the smoothed weights)
//   lpd_i      = log (1/S) Σₛ p(yᵢ | θˢ),     p_loo,i = lpd_i − elpd_loo,i
//   elpd_loo = Σᵢ elpd_loo,i, SE = √(n · Var(elpd_loo,i)); p_loo likewise; looic = −2 elpd_loo.
// The Monte Carlo SE of elpd_loo is the delta method's for the sum: each draw's influence
// ψₛ = Σᵢ w̃ᵢₛ (p(yᵢ | θˢ) − Êᵢ) / Êᵢ (w̃: normalised weights, Êᵢ their estimate of p(yᵢ | y₋ᵢ)),
// Var(elpd_loo) ≈ Σₛ ψₛ² / r_eff(ψ). The observations' errors are summed draw by draw because
// they share the draws: loo's mcse_elpd_loo adds the observations' variances as if independent.
// On a normal model with 20 observations (tests/diagnostics/loo_test.cpp's), over 12 seeds of
// 4 × 1000 draws: the estimate's error against exact LOO had sd 0.038; this MCSE averaged 0.033,
// the independent sum 0.028.
// r_eff is ess_basic (split chains) of exp(log p(yᵢ | θ)) over S, where loo uses its own ESS of
// the unsplit chains.
// loo_moment_match (below) recomputes the observations whose k̂ is too high from draws moved by
// affine maps (Paananen, Piironen, Bürkner & Vehtari 2021).
#pragma once
#include <tyche/config.hpp>
#include <tyche/diagnostics/convergence.hpp>
#include <tyche/inference/fit.hpp>
#include <tyche/inference/model_density.hpp>
#include <tyche/inference/psis.hpp>
#include <tyche/scalar/format.hpp>
#include <tyche/samplers/nuts/config.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <ostream>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tyche {

/// What loo(...) returns: the estimates with their standard errors, and per observation the
/// pieces they add up from (in the order of model::observation_names()).
struct loo_result {
  double elpd_loo = 0, se_elpd_loo = 0;  ///< expected log predictive density, leave-one-out
  double p_loo = 0, se_p_loo = 0;        ///< effective number of parameters
  double looic = 0, se_looic = 0;        ///< −2 elpd_loo (the deviance scale)
  double mcse_elpd_loo = 0;              ///< Monte Carlo SE of elpd_loo (delta method, the draws shared)
  std::size_t draws = 0;                 ///< S: the posterior draws used
  std::vector<std::string> observations; ///< a name per observation (y[3], term 2[5], …)
  std::vector<double> elpd;              ///< elpd_loo,i
  std::vector<double> p;                 ///< p_loo,i
  std::vector<double> pareto_k;          ///< k̂ᵢ
  std::vector<double> r_eff;             ///< relative efficiency of exp(log p(yᵢ | θ))
  double k_threshold = 0.7;              ///< min(1 − 1/log₁₀ S, 0.7): above it, k̂ᵢ is not to be trusted
  std::size_t bad_k = 0;                 ///< observations with k̂ᵢ above the threshold
  /// loo_moment_match: the observations whose estimate it recomputed (k̂ᵢ above the threshold,
  /// and at least one transformation accepted), and per observation the transformations
  /// accepted (empty from loo()).
  std::size_t moment_matched = 0;
  std::vector<int> moment_match_steps;
  std::vector<std::string> warnings;
};

namespace detail::loo_impl {

inline double log_sum_exp(const std::vector<double>& v) {
  double m = -std::numeric_limits<double>::infinity();
  for (double x : v) m = std::max(m, x);
  if (!std::isfinite(m)) return m;
  double s = 0;
  for (double x : v) s += std::exp(x - m);
  return m + std::log(s);
}

inline void mean_and_se(const std::vector<double>& x, double& total, double& se) {
  const double n = static_cast<double>(x.size());
  total = 0;
  for (double v : x) total += v;
  const double mean = total / n;
  double ss = 0;
  for (double v : x) ss += (v - mean) * (v - mean);
  se = x.size() > 1 ? std::sqrt(n * ss / (n - 1)) : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace detail::loo_impl

namespace detail::loo_impl {

/// The log-likelihood matrix's checks and default names, shared by loo and waic.
inline void check_matrix(const std::string& fn, std::span<const double> log_lik, std::size_t chains, std::size_t draws,
                         std::size_t observations, std::vector<std::string>& names) {
  if (chains == 0 || draws == 0 || observations == 0)
    throw std::invalid_argument(fn + "needs at least one chain, one draw and one observation (got " +
                                std::to_string(chains) + ", " + std::to_string(draws) + " and " +
                                std::to_string(observations) + ")");
  if (log_lik.size() != chains * draws * observations)
    throw std::invalid_argument(fn + "the log-likelihood matrix has " + std::to_string(log_lik.size()) +
                                " values, expected " + std::to_string(chains) + " chains x " + std::to_string(draws) +
                                " draws x " + std::to_string(observations) + " observations");
  if (!names.empty() && names.size() != observations)
    throw std::invalid_argument(fn + std::to_string(names.size()) + " names for " + std::to_string(observations) +
                                " observations");
  if (names.empty())
    for (std::size_t i = 0; i < observations; ++i) names.push_back("y[" + std::to_string(i + 1) + "]");
  if (chains * draws < 2) throw std::invalid_argument(fn + "needs at least 2 draws");
  for (std::size_t k = 0; k < log_lik.size(); ++k) {
    const double v = log_lik[k];
    if (std::isnan(v) || v == std::numeric_limits<double>::infinity()) {
      const std::size_t draw = k / observations;
      throw std::invalid_argument(fn + "log p(" + names[k % observations] + " | theta) is " +
                                  (std::isnan(v) ? "nan" : "inf") + " at chain " + std::to_string(draw / draws + 1) +
                                  ", draw " + std::to_string(draw % draws + 1));
    }
  }
  for (std::size_t i = 0; i < observations; ++i) {
    bool finite = false;
    for (std::size_t k = 0; k < chains * draws && !finite; ++k) finite = std::isfinite(log_lik[k * observations + i]);
    if (!finite) throw std::invalid_argument(fn + "log p(" + names[i] + " | theta) is -inf at every draw");
  }
}

/// PSIS-LOO of a checked matrix. log_correction (empty, or one value per draw): the draws come
/// from an approximation q, not the posterior, and log_correction = log p(θ | y) − log q(θ) up
/// to a constant: each ratio 1 / p(yᵢ | θ) is multiplied by p / q, the draws are independent
/// (r_eff 1), and lpd_i is weighted by the smoothed p / q.
/// The warning for observations whose k̂ is above the threshold (empty when there are none).
inline std::string bad_k_warning(const loo_result& r, bool approximate, bool after_moment_matching = false) {
  if (r.bad_k == 0) return {};
  std::string worst;
  std::size_t shown = 0;
  for (std::size_t i = 0; i < r.pareto_k.size() && shown < 5; ++i)
    if (!(r.pareto_k[i] <= r.k_threshold)) {
      char k[32];
      std::snprintf(k, sizeof k, "%.2f", r.pareto_k[i]);
      worst += (shown++ ? ", " : "") + r.observations[i] + " (k = " + k + ")";
    }
  if (r.bad_k > shown) worst += ", ...";
  char t[32];
  std::snprintf(t, sizeof t, "%.2f", r.k_threshold);
  return std::to_string(r.bad_k) + " of " + std::to_string(r.pareto_k.size()) + " Pareto k estimates are above " + t +
         ": " + worst +
         ". The estimates for those observations are unreliable (each is too influential for importance sampling" +
         (approximate ? ", or the approximation too far from the posterior" : "") +
         "): " + (after_moment_matching ? "moment matching did not bring them below it; "
                  : approximate            ? ""
                                           : "try loo_moment_match(model, fit), ") +
         "refit without them (exact LOO for those), use K-fold cross-validation, or a more robust model" +
         (approximate ? " (or fit with nuts())" : "");
}

/// no_influence (empty, or one flag per observation): observations left out of the delta
/// method's sum for mcse_elpd_loo (loo_moment_match adds their own variances).
inline loo_result psis_loo(const std::string& fn, std::span<const double> log_lik, std::size_t chains,
                           std::size_t draws, std::size_t observations, std::vector<std::string> names,
                           std::span<const double> log_correction, std::span<const unsigned char> no_influence = {}) {
  const std::size_t s = chains * draws;
  const bool approximate = !log_correction.empty();
  std::vector<double> lw_post;  // the p / q weights smoothed once, for lpd_i
  if (approximate) {
    lw_post.assign(log_correction.begin(), log_correction.end());
    bool finite = false;
    for (std::size_t k = 0; k < s; ++k) {
      const double v = lw_post[k];
      if (std::isnan(v) || v == std::numeric_limits<double>::infinity())
        throw std::invalid_argument(fn + "log p - log q is " + (std::isnan(v) ? "nan" : "inf") + " at draw " +
                                    std::to_string(k + 1));
      finite = finite || std::isfinite(v);
    }
    if (!finite) throw std::invalid_argument(fn + "log p - log q is -inf at every draw");
    lw_post = inference::psis(lw_post).log_weights;
  }
  loo_result r;
  r.draws = s;
  r.observations = std::move(names);
  r.k_threshold = std::min(1 - 1 / std::log10(static_cast<double>(s)), 0.7);
  std::vector<double> ll(s), ratio(s), lik(s), lw_plus(s), influence(s, 0.0);
  for (std::size_t i = 0; i < observations; ++i) {
    for (std::size_t k = 0; k < s; ++k) {
      ll[k] = log_lik[k * observations + i];
      ratio[k] = approximate ? log_correction[k] - ll[k] : -ll[k];
    }
    double max_ll = -std::numeric_limits<double>::infinity();
    for (double v : ll) max_ll = std::max(max_ll, v);
    for (std::size_t k = 0; k < s; ++k) lik[k] = std::exp(ll[k] - max_ll);  // p(yᵢ | θ) up to e^max
    // Relative efficiency of the likelihood's draws (1 where its ESS is not defined: constant).
    double reff = approximate ? 1.0 : ess_basic(std::span<const double>(lik), chains, draws) / static_cast<double>(s);
    if (!std::isfinite(reff) || reff <= 0) reff = 1;
    const auto smoothed = inference::psis(ratio, reff);
    const std::vector<double>& lw = smoothed.log_weights;
    for (std::size_t k = 0; k < s; ++k) lw_plus[k] = lw[k] + ll[k];
    const double log_norm = log_sum_exp(lw);
    const double elpd_i = log_sum_exp(lw_plus) - log_norm;
    double lpd_i = log_sum_exp(ll) - std::log(static_cast<double>(s));
    if (approximate) {
      std::vector<double> post_plus(s);
      for (std::size_t k = 0; k < s; ++k) post_plus[k] = lw_post[k] + ll[k];
      lpd_i = log_sum_exp(post_plus) - log_sum_exp(lw_post);
    }
    // Each draw's influence on elpd_loo,i (the delta method; p(yᵢ | θ) and Êᵢ both in units
    // of e^max_ll, which cancel), added to its influence on the sum.
    const double e_hat = std::exp(elpd_i - max_ll);
    if (no_influence.empty() || !no_influence[i])
      for (std::size_t k = 0; k < s; ++k) influence[k] += std::exp(lw[k] - log_norm) * (lik[k] - e_hat) / e_hat;
    r.elpd.push_back(elpd_i);
    r.p.push_back(lpd_i - elpd_i);
    r.pareto_k.push_back(smoothed.pareto_k);
    r.r_eff.push_back(reff);
    if (!(smoothed.pareto_k <= r.k_threshold)) ++r.bad_k;
  }
  double influence_ss = 0;
  for (double v : influence) influence_ss += v * v;
  double influence_reff =
      approximate ? 1.0 : ess_basic(std::span<const double>(influence), chains, draws) / static_cast<double>(s);
  if (!std::isfinite(influence_reff) || influence_reff <= 0) influence_reff = 1;
  r.mcse_elpd_loo = std::sqrt(influence_ss / influence_reff);
  mean_and_se(r.elpd, r.elpd_loo, r.se_elpd_loo);
  mean_and_se(r.p, r.p_loo, r.se_p_loo);
  r.looic = -2 * r.elpd_loo;
  r.se_looic = 2 * r.se_elpd_loo;
  if (r.bad_k > 0) r.warnings.push_back(bad_k_warning(r, approximate));
  return r;
}

}  // namespace detail::loo_impl

/// PSIS-LOO from a log-likelihood matrix: log_lik[(c · draws + d) · observations + i] =
/// log p(yᵢ | θ of chain c's draw d) (draws chain by chain, as a fit holds them). Throws
/// std::invalid_argument for a size that does not match, or a value that is NaN or +∞ (naming
/// the observation, chain and draw); −∞ is allowed (that draw cannot have produced yᵢ).
inline loo_result loo(std::span<const double> log_lik, std::size_t chains, std::size_t draws,
                      std::size_t observations, std::vector<std::string> names = {}) {
  const std::string fn = "tyche::loo: ";
  detail::loo_impl::check_matrix(fn, log_lik, chains, draws, observations, names);
  return detail::loo_impl::psis_loo(fn, log_lik, chains, draws, observations, std::move(names), {});
}

/// PSIS-LOO from independent draws of an approximation q of the posterior (R's
/// loo_approximate_posterior; Magnusson, Andersen, Jonasson & Vehtari 2019, "Bayesian
/// leave-one-out cross-validation for large data", ICML): log_lik as loo's matrix form with one
/// chain, and per draw log p (the posterior's unnormalised log density on the scale q is a
/// density on: the unconstrained scale, with the log-Jacobian) and log q (constants in either
/// cancel). Each importance ratio 1 / p(yᵢ | θ) is multiplied by p / q before smoothing; lpd_i,
/// hence p_loo, is weighted by the smoothed p / q (loo takes the plain mean there). A log p of
/// NaN or −∞ is a draw outside the posterior's support (weight 0).
inline loo_result loo_approximate_posterior(std::span<const double> log_lik, std::size_t draws,
                                            std::size_t observations, std::span<const double> log_p,
                                            std::span<const double> log_q, std::vector<std::string> names = {}) {
  const std::string fn = "tyche::loo_approximate_posterior: ";
  detail::loo_impl::check_matrix(fn, log_lik, 1, draws, observations, names);
  if (log_p.size() != draws || log_q.size() != draws)
    throw std::invalid_argument(fn + "log_p has " + std::to_string(log_p.size()) + " values and log_q " +
                                std::to_string(log_q.size()) + ", expected one per draw (" + std::to_string(draws) + ")");
  std::vector<double> correction(draws);
  for (std::size_t k = 0; k < draws; ++k) {
    if (!std::isfinite(log_q[k]))
      throw std::invalid_argument(fn + "log q of draw " + std::to_string(k + 1) + " is " +
                                  tyche::detail::format_number(log_q[k]) +
                                  " (an approximation's density at its own draw is finite)");
    correction[k] = std::isnan(log_p[k]) ? -std::numeric_limits<double>::infinity() : log_p[k] - log_q[k];
  }
  return detail::loo_impl::psis_loo(fn, log_lik, 1, draws, observations, std::move(names), correction);
}

namespace detail::loo_impl {

/// Checks that `names` (a fit's) are the model's and that it observes something; the model's
/// observation names.
template <class Model>
std::vector<std::string> observations_of(const std::string& fn, const Model& m, const std::vector<std::string>& names) {
  // The fit's names: the model's parameters, then its quantities (quantity<"name">(e), which
  // nuts() and the approximations add after them) or none of them (a fit read from a file).
  std::vector<std::string> with_quantities = m.parameter_names();
  if constexpr (requires { m.quantity_names(); }) {
    const std::vector<std::string> q = m.quantity_names();
    with_quantities.insert(with_quantities.end(), q.begin(), q.end());
  }
  if (names != m.parameter_names() && names != with_quantities)
  {
    const std::vector<std::string> model_names = with_quantities;
    std::string which;
    if (names.size() != model_names.size()) {
      which = "the fit has " + std::to_string(names.size()) + " values, the model " + std::to_string(model_names.size());
    } else {
      std::size_t k = 0;
      while (names[k] == model_names[k]) ++k;
      which = "value " + std::to_string(k + 1) + " is '" + names[k] + "' in the fit, '" + model_names[k] +
              "' in the model";
    }
    throw std::invalid_argument(fn + "the fit's values are not this model's (" + which +
                                "); pass the model the fit was made with");
  }
  std::vector<std::string> observations = m.observation_names();
  if (observations.empty())
    throw std::invalid_argument(fn + "the model observes nothing (only observe(...) terms are "
                                     "observations; target(e) terms are not)");
  return observations;
}

/// log p(yᵢ | θ) of every draw, chain by chain (θ: model.unconstrain_draw of the draw's values:
/// a value rounded onto its support's bound is taken as the nearest double inside).
template <class Model>
std::vector<double> log_likelihood_matrix(const Model& m, const std::vector<std::vector<double>>& values,
                                          std::size_t chains, std::size_t draws, std::size_t dim, std::size_t n) {
  std::vector<double> log_lik;
  log_lik.reserve(chains * draws * n);
  for (std::size_t c = 0; c < chains; ++c)
    for (std::size_t d = 0; d < draws; ++d) {
      // The draw's parameters: its first constrained_dim() values (quantities may follow).
      const std::vector<double> theta =
          m.unconstrain_draw(std::span<const double>(values[c].data() + d * dim, m.constrained_dim()));
      const std::vector<double> ll = m.pointwise_log_likelihood(theta);
      log_lik.insert(log_lik.end(), ll.begin(), ll.end());
    }
  return log_lik;
}

template <class Model>
void warn_counted_whole(const Model& m, std::vector<std::string>& warnings) {
  if constexpr (requires { m.observations_counted_whole(); }) {
    for (const std::string& term : m.observations_counted_whole())
      warnings.push_back(term + ": its log density is not a sum over its values, so it counts as one "
                                "observation, left out as a whole (for leave-one-value-out, write the values' "
                                "log-likelihood as a matrix and call loo(log_lik, chains, draws, n))");
  }
}

}  // namespace detail::loo_impl

/// PSIS-LOO of a model from its NUTS fit: each draw's θ (model.unconstrain of the fit's values)
/// through model.pointwise_log_likelihood. The model must be the one the fit was made with
/// (same variables: the fit's names are checked).
template <class Model>
  requires requires(const Model& m, std::span<const double> th) {
    m.pointwise_log_likelihood(th);
    m.observation_names();
  }
loo_result loo(const Model& m, const nuts_fit& fit) {
  const std::string fn = "tyche::loo: ";
  const std::vector<std::string> names = detail::loo_impl::observations_of(fn, m, fit.names);
  const std::size_t chains = static_cast<std::size_t>(fit.chains), draws = static_cast<std::size_t>(fit.draws);
  const std::vector<double> log_lik =
      detail::loo_impl::log_likelihood_matrix(m, fit.values, chains, draws, fit.dim(), names.size());
  loo_result r = loo(log_lik, chains, draws, names.size(), names);
  detail::loo_impl::warn_counted_whole(m, r.warnings);
  return r;
}

/// PSIS-LOO of a model from the draws of laplace, advi or pathfinder: the draws come from an
/// approximation q, so each observation's importance ratios are corrected by p / q
/// (loo_approximate_posterior; log p recomputed with the log-Jacobian at each draw, whatever the
/// fit's log_p holds, and log q the fit's). Pathfinder's resampled draws (several paths, PSIS
/// resampling) already stand for the posterior: they are used as NUTS draws are, as one chain.
template <class Model>
  requires requires(const Model& m, std::span<const double> th) {
    m.pointwise_log_likelihood(th);
    m.observation_names();
  }
loo_result loo(const Model& m, const approximate_fit& fit) {
  const std::string fn = "tyche::loo: ";
  const std::vector<std::string> names = detail::loo_impl::observations_of(fn, m, fit.names);
  const std::size_t draws = static_cast<std::size_t>(fit.draws), dim = fit.dim();
  if (fit.values.size() != 1 || fit.values[0].size() != draws * dim)
    throw std::invalid_argument(fn + "the approximate fit holds no draws (" + std::to_string(fit.draws) +
                                " draws; laplace, advi and pathfinder return them in values)");
  const std::vector<double> log_lik = detail::loo_impl::log_likelihood_matrix(m, fit.values, 1, draws, dim, names.size());
  loo_result r;
  if (fit.resampled) {
    r = loo(log_lik, 1, draws, names.size(), names);
    // Resampled draws repeat the few draws that carried the weight: the per-observation k̂
    // cannot see how far q was from the posterior; the resampling's own k̂ can.
    if (fit.pareto_k > 0.7)
      r.warnings.push_back("the draws were resampled by importance weights p / q whose Pareto k is " +
                           tyche::detail::format_number(std::round(fit.pareto_k * 100) / 100) +
                           " > 0.7: they do not stand for the posterior, and neither does this LOO (fit with nuts())");
  } else {
    if (fit.log_q.size() != 1 || fit.log_q[0].size() != draws)
      throw std::invalid_argument(fn + "the approximate fit has no log q per draw (" + fit.method + ")");
    const inference::model_functions f = inference::functions_of(m);
    std::vector<double> log_p(draws), grad(f.with_jacobian.dim), workspace(f.with_jacobian.workspace_size);
    for (std::size_t d = 0; d < draws; ++d) {
      const std::vector<double> theta = m.unconstrain_draw(std::span<const double>(fit.values[0].data() + d * dim, m.constrained_dim()));
      log_p[d] = f.with_jacobian(theta.data(), grad.data(), workspace.data());
    }
    r = loo_approximate_posterior(log_lik, draws, names.size(), log_p, fit.log_q[0], names);
  }
  detail::loo_impl::warn_counted_whole(m, r.warnings);
  return r;
}

/// Settings of loo_moment_match (R loo's loo_moment_match defaults).
struct loo_moment_match_config {
  /// Transformations accepted per observation, at most.
  int max_iters = 30;
  /// The split step: the final transformation applied to half of the draws, the estimate from
  /// both halves by multiple importance sampling (Paananen et al. 2021, §3.3).
  bool split = true;
  /// Whether a transformation may match the covariance (only with at least 10·d draws).
  bool cov = true;
  /// Observations whose k̂ is above this get moment matching (0: loo's threshold,
  /// min(1 − 1/log₁₀ S, 0.7)).
  double k_threshold = 0;
};

namespace detail::loo_impl {

/// The inverse of a lower-triangular d × d matrix with a positive diagonal (lower triangular).
inline std::vector<double> mm_lower_inverse(const std::vector<double>& l, std::size_t d) {
  std::vector<double> inv(d * d, 0.0);
  for (std::size_t c = 0; c < d; ++c) {
    inv[c * d + c] = 1 / l[c * d + c];
    for (std::size_t r = c + 1; r < d; ++r) {
      double v = 0;
      for (std::size_t k = c; k < r; ++k) v += l[r * d + k] * inv[k * d + c];
      inv[r * d + c] = -v / l[r * d + r];
    }
  }
  return inv;
}

/// Normalised log weights (Σ exp = 1).
inline void mm_normalise(std::vector<double>& lw) {
  const double z = log_sum_exp(lw);
  for (double& v : lw) v -= z;
}

}  // namespace detail::loo_impl

/// PSIS-LOO with moment matching for the observations whose k̂ is too high (Paananen, Piironen,
/// Bürkner & Vehtari 2021, "Implicitly adaptive importance sampling", Statistics and Computing
/// 31:16; R's loo::loo_moment_match). For each such observation i the posterior draws θ (on the
/// unconstrained scale) are moved by affine maps θ' = A(θ − m) + m_w that match their mean
/// (A = I), their marginal variances (A diagonal) or their covariance (A = L_w L⁻¹, Cholesky
/// factors of the weighted and unweighted covariances) to those of the leave-one-out posterior
/// under the current importance weights; a map is kept when the k̂ of the new weights,
/// log p(θ' | y) − log p(yᵢ | θ') − log p(θ | y) (the proposal is the posterior moved by an
/// affine map, whose constant Jacobian cancels), is lower, tried in that order until k̂ is below
/// the threshold, no map helps, or max_iters maps are kept. With split, the maps' composition T
/// is applied to the first half of the draws only and the estimate weighs all of them against the
/// mixture ½p(z) + ½p(T⁻¹z)/|det T| (multiple importance sampling), which keeps it consistent.
/// elpd_loo,ᵢ is then log Σₛ wₛ p(yᵢ | zₛ) with those weights, lpd_i stays the plain draws', k̂ᵢ
/// is the last kept map's, and mcse_elpd_loo adds the matched observations' own variances to the
/// delta method's sum over the others. Each evaluation is the model's log density (with the
/// log-Jacobian) and pointwise log-likelihood at a moved draw. Departures from R's code, where
/// its arithmetic is not the method's: T is composed exactly (R applies every scaling before
/// every covariance map, and its inverse is not T's once a shift is mixed with a scaling), and
/// the marginal-variance map uses the weighted variance's correction 1/(1 − Σw²) as the
/// covariance map does (R: S/(S − 1)).
template <class Model>
  requires requires(const Model& m, std::span<const double> th) {
    m.pointwise_log_likelihood(th);
    m.observation_names();
  }
loo_result loo_moment_match(const Model& m, const nuts_fit& fit, const loo_moment_match_config& cfg = {}) {
  namespace li = detail::loo_impl;
  const std::string fn = "tyche::loo_moment_match: ";
  if (cfg.max_iters < 1)
    throw std::invalid_argument(fn + "max_iters = " + std::to_string(cfg.max_iters) + " must be >= 1");
  if (!(cfg.k_threshold >= 0) || !std::isfinite(cfg.k_threshold))
    throw std::invalid_argument(fn + "k_threshold = " + tyche::detail::format_number(cfg.k_threshold) +
                                " must be >= 0 (0: loo's threshold)");
  std::vector<std::string> names = li::observations_of(fn, m, fit.names);
  const std::size_t chains = static_cast<std::size_t>(fit.chains), draws = static_cast<std::size_t>(fit.draws);
  const std::size_t S = chains * draws, n = names.size(), dim = fit.dim();
  // The draws on the unconstrained scale (row s: draw s, chain after chain) and their
  // log-likelihood matrix.
  std::vector<double> theta, log_lik;
  std::size_t d = 0;
  for (std::size_t c = 0; c < chains; ++c)
    for (std::size_t k = 0; k < draws; ++k) {
      const std::vector<double> t = m.unconstrain_draw(std::span<const double>(fit.values[c].data() + k * dim, m.constrained_dim()));
      d = t.size();
      theta.insert(theta.end(), t.begin(), t.end());
      const std::vector<double> ll = m.pointwise_log_likelihood(t);
      log_lik.insert(log_lik.end(), ll.begin(), ll.end());
    }
  li::check_matrix(fn, log_lik, chains, draws, n, names);
  loo_result r = li::psis_loo(fn, log_lik, chains, draws, n, names, {});
  r.moment_match_steps.assign(n, 0);
  const double threshold = cfg.k_threshold > 0 ? cfg.k_threshold : r.k_threshold;

  const inference::model_functions f = inference::functions_of(m);
  const inference::log_density_function& density = f.with_jacobian;
  std::vector<double> grad(density.dim), workspace(density.workspace_size);
  const auto log_p = [&](const double* t) {
    const double v = density(t, grad.data(), workspace.data());
    return std::isnan(v) ? -std::numeric_limits<double>::infinity() : v;
  };
  const auto log_lik_at = [&](const double* t, std::size_t i) {
    const double v = m.pointwise_log_likelihood(std::span<const double>(t, d))[i];
    return std::isnan(v) ? -std::numeric_limits<double>::infinity() : v;
  };
  std::vector<double> orig_lp(S);
  bool have_lp = false;
  const bool use_cov = cfg.cov && S >= 10 * d;
  std::vector<unsigned char> matched(n, 0);
  std::vector<double> matched_var(n, 0.0);  // the matched observations' own MCSE², log scale
  std::vector<std::string> split_warnings;   // split = false: observations whose draws moved too far
  std::vector<std::string> limit_reached, failed_evaluations;
  const double ninf = -std::numeric_limits<double>::infinity();

  for (std::size_t i = 0; i < n; ++i) {
    if (r.pareto_k[i] <= threshold) continue;
    if (!have_lp) {
      for (std::size_t s = 0; s < S; ++s) orig_lp[s] = log_p(theta.data() + s * d);
      have_lp = true;
    }
    const double r_eff = r.r_eff[i];
    std::vector<double> ll(S), lw(S), cur = theta, next(S * d), ll_next(S), ratio(S), lp_cur = orig_lp, lp_next(S);
    for (std::size_t s = 0; s < S; ++s) {
      ll[s] = log_lik[s * n + i];
      ratio[s] = -ll[s];
    }
    const double lpd_i = li::log_sum_exp(ll) - std::log(static_cast<double>(S));
    lw = inference::psis(ratio, r_eff).log_weights;
    li::mm_normalise(lw);
    double k_i = r.pareto_k[i];
    // T(x) = A x + b, the composition of the kept maps (lower triangular A).
    std::vector<double> A(d * d, 0.0), b(d, 0.0);
    for (std::size_t j = 0; j < d; ++j) A[j * d + j] = 1;
    int steps = 0;
    bool stop = false;
    while (steps < cfg.max_iters && k_i > threshold && !stop) {
      // The moments under the current weights.
      std::vector<double> w(S), mean(d, 0.0), wmean(d, 0.0);
      double w2 = 0;
      for (std::size_t s = 0; s < S; ++s) {
        w[s] = std::exp(lw[s]);
        w2 += w[s] * w[s];
        for (std::size_t j = 0; j < d; ++j) {
          mean[j] += cur[s * d + j] / static_cast<double>(S);
          wmean[j] += w[s] * cur[s * d + j];
        }
      }
      bool kept = false;
      for (int kind = 0; kind < 3 && !kept; ++kind) {
        std::vector<double> map(d * d, 0.0);  // the candidate's A (lower triangular)
        if (kind == 0) {
          for (std::size_t j = 0; j < d; ++j) map[j * d + j] = 1;
        } else if (kind == 1) {
          bool ok = true;
          for (std::size_t j = 0; j < d && ok; ++j) {
            double v = 0, vw = 0;
            for (std::size_t s = 0; s < S; ++s) {
              const double x = cur[s * d + j];
              v += (x - mean[j]) * (x - mean[j]);
              vw += w[s] * (x - wmean[j]) * (x - wmean[j]);
            }
            v /= static_cast<double>(S - 1);
            vw /= 1 - w2;
            ok = v > 0 && vw > 0 && std::isfinite(vw);
            if (ok) map[j * d + j] = std::sqrt(vw / v);
          }
          if (!ok) continue;
        } else {
          if (!use_cov) continue;
          std::vector<double> cv(d * d, 0.0), cw(d * d, 0.0);
          for (std::size_t s = 0; s < S; ++s)
            for (std::size_t p = 0; p < d; ++p)
              for (std::size_t q = 0; q <= p; ++q) {
                cv[p * d + q] += (cur[s * d + p] - mean[p]) * (cur[s * d + q] - mean[q]);
                cw[p * d + q] += w[s] * (cur[s * d + p] - wmean[p]) * (cur[s * d + q] - wmean[q]);
              }
          for (std::size_t p = 0; p < d; ++p)
            for (std::size_t q = 0; q <= p; ++q) {
              cv[p * d + q] = cv[q * d + p] = cv[p * d + q] / static_cast<double>(S - 1);
              cw[p * d + q] = cw[q * d + p] = cw[p * d + q] / (1 - w2);
            }
          std::vector<double> l = cv, lw_chol = cw;  // the Cholesky factors, in place
          if (!inference::detail::cholesky(l, d) || !inference::detail::cholesky(lw_chol, d)) continue;
          const std::vector<double> l_inv = li::mm_lower_inverse(l, d);
          for (std::size_t p = 0; p < d; ++p)
            for (std::size_t q = 0; q <= p; ++q) {
              double v = 0;
              for (std::size_t k = q; k <= p; ++k) v += lw_chol[p * d + k] * l_inv[k * d + q];
              map[p * d + q] = v;
            }
        }
        // θ' = map·(θ − mean) + wmean, and the new log ratios. A model that throws at a moved
        // draw ends the iterations (as R's does), keeping the maps accepted before.
        try {
          for (std::size_t s = 0; s < S; ++s) {
            for (std::size_t p = 0; p < d; ++p) {
              double v = wmean[p];
              for (std::size_t q = 0; q <= p; ++q) v += map[p * d + q] * (cur[s * d + q] - mean[q]);
              next[s * d + p] = v;
            }
            ll_next[s] = log_lik_at(next.data() + s * d, i);
            lp_next[s] = log_p(next.data() + s * d);
            const double v = -ll_next[s] + lp_next[s] - orig_lp[s];
            ratio[s] = std::isnan(v) ? ninf : v;
          }
        } catch (const std::exception& e) {
          failed_evaluations.push_back(names[i] + ": " + e.what());
          stop = true;
          break;
        }
        const inference::psis_result smoothed = inference::psis(ratio, r_eff);
        if (!(smoothed.pareto_k < k_i)) continue;
        kept = true;
        ++steps;
        k_i = smoothed.pareto_k;
        lw = smoothed.log_weights;
        li::mm_normalise(lw);
        cur.swap(next);
        ll.swap(ll_next);
        lp_cur.swap(lp_next);
        // T ← map·(T − mean) + wmean: A ← map·A, b ← map·(b − mean) + wmean.
        std::vector<double> a2(d * d, 0.0), b2(d);
        for (std::size_t p = 0; p < d; ++p) {
          for (std::size_t q = 0; q <= p; ++q) {
            double v = 0;
            for (std::size_t k = q; k <= p; ++k) v += map[p * d + k] * A[k * d + q];
            a2[p * d + q] = v;
          }
          double v = wmean[p];
          for (std::size_t q = 0; q <= p; ++q) v += map[p * d + q] * (b[q] - mean[q]);
          b2[p] = v;
        }
        A.swap(a2);
        b.swap(b2);
      }
      if (!kept) break;
    }
    if (steps == cfg.max_iters && k_i > threshold) limit_reached.push_back(names[i]);
    r.moment_match_steps[i] = steps;
    if (steps == 0) continue;  // nothing helped: the plain estimate stays
    if (cfg.split) {
      // z: T(θ) for the first ⌊S/2⌋ draws, θ for the rest; the mixture
      // (S − H)/S·p(z) + H/S·p(T⁻¹z)/|det A| (½ and ½ for an even S).
      const std::size_t half = S / 2;
      const double log_share_moved = std::log(static_cast<double>(half) / static_cast<double>(S)),
                   log_share_kept = std::log(static_cast<double>(S - half) / static_cast<double>(S));
      double log_det = 0;
      for (std::size_t j = 0; j < d; ++j) log_det += std::log(A[j * d + j]);
      std::vector<double> z(d), u(d);
      for (std::size_t s = 0; s < S; ++s) {
        const double* t = theta.data() + s * d;
        double lp_z, lp_inv, ll_z;
        if (s < half) {
          for (std::size_t p = 0; p < d; ++p) {
            double v = b[p];
            for (std::size_t q = 0; q <= p; ++q) v += A[p * d + q] * t[q];
            z[p] = v;
          }
          lp_z = log_p(z.data());
          ll_z = log_lik_at(z.data(), i);
          lp_inv = orig_lp[s] - log_det;  // T⁻¹(T θ) = θ
        } else {
          for (std::size_t p = 0; p < d; ++p) {  // u = A⁻¹(θ − b), forward substitution
            double v = t[p] - b[p];
            for (std::size_t q = 0; q < p; ++q) v -= A[p * d + q] * u[q];
            u[p] = v / A[p * d + p];
          }
          lp_z = orig_lp[s];
          ll_z = log_lik[s * n + i];
          lp_inv = log_p(u.data()) - log_det;
        }
        const double kept_part = lp_z + log_share_kept, moved_part = lp_inv + log_share_moved;
        const double hi = std::max(kept_part, moved_part), lo = std::min(kept_part, moved_part);
        const double mix = hi == ninf ? ninf : hi + std::log1p(std::exp(lo - hi));
        const double v = -ll_z + lp_z - mix;
        ratio[s] = std::isnan(v) ? ninf : v;
        ll[s] = ll_z;
      }
      lw = inference::psis(ratio, r_eff).log_weights;
      li::mm_normalise(lw);
    } else {
      // Without the split the moved draws stand for the leave-one-out posterior only; where
      // p(yᵢ | θ) puts its mass elsewhere (in that posterior's tail) the estimate is biased. How
      // far they are from the full posterior (R's kfi): k̂ of log p(θ' | y) − log p(θ | y).
      for (std::size_t s = 0; s < S; ++s) {
        const double v = lp_cur[s] - orig_lp[s];
        ratio[s] = std::isnan(v) ? ninf : v;
      }
      const double k_full = inference::psis(ratio, r_eff).pareto_k;
      if (!(k_full <= threshold)) {
        char k[32];
        std::snprintf(k, sizeof k, "%.2f", k_full);
        split_warnings.push_back(names[i] + " (k = " + k + ")");
      }
    }
    std::vector<double> plus(S);
    for (std::size_t s = 0; s < S; ++s) plus[s] = lw[s] + ll[s];
    const double elpd_i = li::log_sum_exp(plus);
    double max_ll = ninf;
    for (double v : ll) max_ll = std::max(max_ll, v);
    const double e_hat = std::exp(elpd_i - max_ll);
    double var = 0;
    for (std::size_t s = 0; s < S; ++s) {
      const double wt = std::exp(lw[s]), dev = std::exp(ll[s] - max_ll) - e_hat;
      var += wt * wt * dev * dev;
    }
    matched_var[i] = var / r_eff / (e_hat * e_hat);
    r.elpd[i] = elpd_i;
    r.p[i] = lpd_i - elpd_i;
    r.pareto_k[i] = k_i;
    matched[i] = 1;
    ++r.moment_matched;
  }
  if (r.moment_matched == 0) {
    li::warn_counted_whole(m, r.warnings);
    return r;
  }
  // Totals, the Monte Carlo SE (the delta method over the observations left as they were, plus
  // the matched ones' own variances) and the k̂ warning, again.
  const loo_result rest = li::psis_loo(fn, log_lik, chains, draws, n, names, {}, matched);
  double mcse2 = rest.mcse_elpd_loo * rest.mcse_elpd_loo;
  for (double v : matched_var) mcse2 += v;
  r.mcse_elpd_loo = std::sqrt(mcse2);
  li::mean_and_se(r.elpd, r.elpd_loo, r.se_elpd_loo);
  li::mean_and_se(r.p, r.p_loo, r.se_p_loo);
  r.looic = -2 * r.elpd_loo;
  r.se_looic = 2 * r.se_elpd_loo;
  r.bad_k = 0;
  for (double k : r.pareto_k) r.bad_k += k <= r.k_threshold ? 0 : 1;
  r.warnings.clear();
  if (r.bad_k > 0) r.warnings.push_back(li::bad_k_warning(r, false, true));
  if (!limit_reached.empty()) {
    std::string list;
    for (std::size_t k = 0; k < limit_reached.size(); ++k) list += (k ? ", " : "") + limit_reached[k];
    r.warnings.push_back("moment matching kept max_iters = " + std::to_string(cfg.max_iters) + " maps for " + list +
                         " and stopped there: raise max_iters");
  }
  if (!failed_evaluations.empty()) {
    std::string list;
    for (std::size_t k = 0; k < failed_evaluations.size(); ++k) list += (k ? "; " : "") + failed_evaluations[k];
    r.warnings.push_back("moment matching stopped early where the model could not be evaluated at a moved draw "
                         "(the maps kept before stand): " + list);
  }
  if (!split_warnings.empty()) {
    std::string list;
    for (std::size_t k = 0; k < split_warnings.size(); ++k) list += (k ? ", " : "") + split_warnings[k];
    r.warnings.push_back("moment matching without the split step: the moved draws of " + list +
                         " no longer stand for the full posterior (Pareto k of their weights to it above " +
                         tyche::detail::format_number(std::round(threshold * 100) / 100) +
                         "), so those estimates may be biased: use split = true (the default)");
  }
  li::warn_counted_whole(m, r.warnings);
  return r;
}

/// What waic(...) returns (Watanabe 2010; the computation of Vehtari, Gelman & Gabry 2017, as
/// R's loo::waic): per observation lpd_i = log (1/S) Σₛ p(yᵢ | θˢ), p_waic,i = the variance of
/// log p(yᵢ | θˢ) over the draws, elpd_waic,i = lpd_i − p_waic,i; sums with SE = √(n · Var(·ᵢ)),
/// waic = −2 elpd_waic. PSIS-LOO is the better estimate of the same quantity and says when it
/// fails (k̂); WAIC is here to compare with results reported as WAIC.
struct waic_result {
  double elpd_waic = 0, se_elpd_waic = 0;
  double p_waic = 0, se_p_waic = 0;
  double waic = 0, se_waic = 0;
  std::size_t draws = 0;
  std::vector<std::string> observations;
  std::vector<double> elpd;  ///< elpd_waic,i
  std::vector<double> p;     ///< p_waic,i
  std::size_t large_p = 0;   ///< observations with p_waic,i > 0.4 (loo's rule: WAIC unreliable, use loo)
  std::vector<std::string> warnings;
};

/// WAIC from a log-likelihood matrix laid out as loo's (draws chain by chain); the same checks.
inline waic_result waic(std::span<const double> log_lik, std::size_t chains, std::size_t draws,
                        std::size_t observations, std::vector<std::string> names = {}) {
  using namespace detail::loo_impl;
  const std::string fn = "tyche::waic: ";
  check_matrix(fn, log_lik, chains, draws, observations, names);
  const std::size_t s = chains * draws;
  waic_result r;
  r.draws = s;
  r.observations = std::move(names);
  std::vector<double> ll(s);
  for (std::size_t i = 0; i < observations; ++i) {
    double mean = 0;
    for (std::size_t k = 0; k < s; ++k) {
      ll[k] = log_lik[k * observations + i];
      mean += ll[k] / static_cast<double>(s);
    }
    double var = 0;
    for (double v : ll) var += (v - mean) * (v - mean);
    var /= static_cast<double>(s - 1);
    if (!std::isfinite(var)) var = std::numeric_limits<double>::infinity();  // a draw with p(yᵢ | θ) = 0
    const double lpd = log_sum_exp(ll) - std::log(static_cast<double>(s));
    r.elpd.push_back(lpd - var);
    r.p.push_back(var);
    if (!(var <= 0.4)) ++r.large_p;
  }
  mean_and_se(r.elpd, r.elpd_waic, r.se_elpd_waic);
  mean_and_se(r.p, r.p_waic, r.se_p_waic);
  r.waic = -2 * r.elpd_waic;
  r.se_waic = 2 * r.se_elpd_waic;
  if (r.large_p > 0)
    r.warnings.push_back(std::to_string(r.large_p) + " of " + std::to_string(observations) +
                         " p_waic estimates are above 0.4: WAIC is unreliable for them; use loo()");
  return r;
}

/// WAIC of a model from its NUTS fit (the log-likelihood matrix as loo(model, fit) builds it).
template <class Model>
  requires requires(const Model& m, std::span<const double> th) {
    m.pointwise_log_likelihood(th);
    m.observation_names();
  }
waic_result waic(const Model& m, const nuts_fit& fit) {
  const std::string fn = "tyche::waic: ";
  const std::vector<std::string> names = detail::loo_impl::observations_of(fn, m, fit.names);
  const std::size_t chains = static_cast<std::size_t>(fit.chains), draws = static_cast<std::size_t>(fit.draws);
  const std::vector<double> log_lik =
      detail::loo_impl::log_likelihood_matrix(m, fit.values, chains, draws, fit.dim(), names.size());
  waic_result r = waic(log_lik, chains, draws, names.size(), names);
  detail::loo_impl::warn_counted_whole(m, r.warnings);
  return r;
}

/// One model's row of loo_compare: its elpd_loo minus the best model's, and the SE of that
/// difference (from the pointwise differences, which share the observations).
struct loo_comparison_row {
  std::string name;
  double elpd_diff = 0, se_diff = 0;
  double elpd_loo = 0, se_elpd_loo = 0, p_loo = 0, looic = 0;
};
/// loo_compare's table, best model first (loo's loo_compare).
struct loo_comparison {
  std::vector<loo_comparison_row> rows;
};

/// Compares models fitted to the same observations by elpd_loo (loo's loo_compare): the rows in
/// decreasing elpd_loo, each with elpd_diff = its elpd_loo − the best one's (0 for the best) and
/// se_diff = √(n · Var(elpd_loo,i − best's elpd_loo,i)). A difference within a couple of se_diff
/// (and under ~4 in all) does not tell the models apart. Throws std::invalid_argument when the
/// results do not have the same observations.
inline loo_comparison loo_compare(const std::vector<std::pair<std::string, loo_result>>& models) {
  const std::string fn = "tyche::loo_compare: ";
  if (models.size() < 2) throw std::invalid_argument(fn + "needs at least two models (got " + std::to_string(models.size()) + ")");
  const auto& first = models.front().second;
  for (const auto& [name, r] : models) {
    if (r.elpd.size() != first.elpd.size())
      throw std::invalid_argument(fn + "'" + name + "' has " + std::to_string(r.elpd.size()) + " observations, '" +
                                  models.front().first + "' " + std::to_string(first.elpd.size()) +
                                  ": the models must be fitted to the same observations");
    if (r.observations != first.observations)
      throw std::invalid_argument(fn + "'" + name + "' and '" + models.front().first +
                                  "' name their observations differently (e.g. '" +
                                  (r.observations.empty() ? std::string() : r.observations[0]) + "' and '" +
                                  (first.observations.empty() ? std::string() : first.observations[0]) +
                                  "'): the models must be fitted to the same observations, in the same order");
  }
  std::size_t best = 0;
  for (std::size_t m = 1; m < models.size(); ++m)
    if (models[m].second.elpd_loo > models[best].second.elpd_loo) best = m;
  loo_comparison out;
  const std::size_t n = first.elpd.size();
  for (const auto& [name, r] : models) {
    std::vector<double> diff(n);
    for (std::size_t i = 0; i < n; ++i) diff[i] = r.elpd[i] - models[best].second.elpd[i];
    double total = 0, se = 0;
    detail::loo_impl::mean_and_se(diff, total, se);
    if (&r == &models[best].second) se = 0;
    out.rows.push_back({name, total, se, r.elpd_loo, r.se_elpd_loo, r.p_loo, r.looic});
  }
  std::stable_sort(out.rows.begin(), out.rows.end(),
                   [](const loo_comparison_row& a, const loo_comparison_row& b) { return a.elpd_diff > b.elpd_diff; });
  return out;
}

inline std::ostream& operator<<(std::ostream& os, const loo_comparison& c) {
  char line[200];
  std::snprintf(line, sizeof line, "%-16s %9s %8s %9s %8s %7s\n", "", "elpd_diff", "se_diff", "elpd_loo", "se", "p_loo");
  os << line;
  for (const auto& r : c.rows) {
    std::snprintf(line, sizeof line, "%-16s %9.1f %8.1f %9.1f %8.1f %7.1f\n", r.name.c_str(), r.elpd_diff, r.se_diff,
                  r.elpd_loo, r.se_elpd_loo, r.p_loo);
    os << line;
  }
  return os;
}

/// The table R's loo package prints.
inline std::ostream& operator<<(std::ostream& os, const loo_result& r) {
  char line[160];
  std::snprintf(line, sizeof line, "Computed from %zu by %zu log-likelihood matrix\n\n", r.draws,
                r.observations.size());
  os << line;
  std::snprintf(line, sizeof line, "%-9s %9s %7s\n", "", "Estimate", "SE");
  os << line;
  std::snprintf(line, sizeof line, "%-9s %9.1f %7.1f\n", "elpd_loo", r.elpd_loo, r.se_elpd_loo);
  os << line;
  std::snprintf(line, sizeof line, "%-9s %9.1f %7.1f\n", "p_loo", r.p_loo, r.se_p_loo);
  os << line;
  std::snprintf(line, sizeof line, "%-9s %9.1f %7.1f\n", "looic", r.looic, r.se_looic);
  os << line;
  std::snprintf(line, sizeof line, "------\nMonte Carlo SE of elpd_loo is %.1f.\n", r.mcse_elpd_loo);
  os << line;
  if (r.moment_matched > 0) {
    std::snprintf(line, sizeof line, "Moment matching recomputed %zu observation%s.\n", r.moment_matched,
                  r.moment_matched == 1 ? "" : "s");
    os << line;
  }
  if (r.bad_k == 0) {
    std::snprintf(line, sizeof line, "All Pareto k estimates are good (k < %.2f).\n", r.k_threshold);
    os << line;
  }
  for (const auto& w : r.warnings) os << "warning: " << w << "\n";
  return os;
}

/// The table R's loo::waic prints.
inline std::ostream& operator<<(std::ostream& os, const waic_result& r) {
  char line[160];
  std::snprintf(line, sizeof line, "Computed from %zu by %zu log-likelihood matrix\n\n", r.draws,
                r.observations.size());
  os << line;
  std::snprintf(line, sizeof line, "%-9s %9s %7s\n", "", "Estimate", "SE");
  os << line;
  std::snprintf(line, sizeof line, "%-9s %9.1f %7.1f\n", "elpd_waic", r.elpd_waic, r.se_elpd_waic);
  os << line;
  std::snprintf(line, sizeof line, "%-9s %9.1f %7.1f\n", "p_waic", r.p_waic, r.se_p_waic);
  os << line;
  std::snprintf(line, sizeof line, "%-9s %9.1f %7.1f\n", "waic", r.waic, r.se_waic);
  os << line;
  for (const auto& w : r.warnings) os << "warning: " << w << "\n";
  return os;
}

}  // namespace tyche
