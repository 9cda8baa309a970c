// tyche/diagnostics/pmmh_summary.hpp — summary(pmmh_result): the table of a particle marginal
// Metropolis–Hastings run (samplers/smc/pmmh.hpp) with the chains' convergence diagnostics.
//
//   std::cout << tyche::smc::summary(r);   // r = tyche::smc::run_pmmh(...)
//
// Rows: each parameter, then each predicted name: mean, sd, 5/50/95 % quantiles, bulk- and
// tail-ESS and R̂ (diagnostics/convergence.hpp, over the chains). Warnings: sd(log Ẑ) at the
// posterior mean above 2 (use more particles) or below 0.5 (fewer would do) — for correlated
// PMMH the sd of the log-likelihood ratio at a fixed θ above 2√2 or below 0.5√2, the same rule
// on the quantity that decides the acceptance (with independent estimates the ratio's sd is
// √2 sd(log Ẑ)) —, draws beyond randoms_per_step, and R̂ above 1.01.
#pragma once
#include <tyche/diagnostics/convergence.hpp>
#include <tyche/samplers/smc/pmmh.hpp>

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

namespace tyche::smc {

/// One row of a PMMH summary: a parameter or a predicted name.
struct pmmh_summary_row {
  std::string name;
  double mean, sd, q5, q50, q95, ess_bulk, ess_tail, rhat;
};

/// The summary of a PMMH run, printable with <<: the parameters and predicted names with the
/// chains' convergence diagnostics (tyche/diagnostics/convergence.hpp), the acceptance rates and
/// sd(log Ẑ), with warnings where they call for another particle count.
struct pmmh_summary {
  std::vector<pmmh_summary_row> rows;
  std::size_t chains = 0, iterations = 0, particles = 0;
  double acceptance = 0, log_likelihood_sd = std::numeric_limits<double>::quiet_NaN();
  /// Correlated PMMH (correlation > 0): ρ and the sd of the log-likelihood ratio at a fixed θ.
  double correlation = 0, log_likelihood_ratio_sd = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::string> warnings;
};

inline pmmh_summary summary(const pmmh_result& r) {
  pmmh_summary out;
  out.chains = r.chains;
  out.iterations = r.iterations;
  out.particles = r.particles;
  for (double a : r.acceptance) out.acceptance += a / static_cast<double>(r.acceptance.size());
  out.log_likelihood_sd = r.log_likelihood_sd;
  out.correlation = r.correlation;
  out.log_likelihood_ratio_sd = r.log_likelihood_ratio_sd;
  const auto row = [&](const std::string& name, const std::vector<double>& v) {
    std::vector<double> finite;
    for (double x : v)
      if (!std::isnan(x)) finite.push_back(x);
    pmmh_summary_row w{name, 0, 0, 0, 0, 0, 0, 0, 0};
    const double nan = std::numeric_limits<double>::quiet_NaN();
    if (finite.empty()) {
      w.mean = w.sd = w.q5 = w.q50 = w.q95 = w.ess_bulk = w.ess_tail = w.rhat = nan;
      return w;
    }
    double s = 0, s2 = 0;
    for (double x : finite) s += x;
    w.mean = s / static_cast<double>(finite.size());
    for (double x : finite) s2 += (x - w.mean) * (x - w.mean);
    w.sd = finite.size() > 1 ? std::sqrt(s2 / static_cast<double>(finite.size() - 1)) : nan;
    w.q5 = quantile(finite, 0.05);
    w.q50 = quantile(finite, 0.5);
    w.q95 = quantile(finite, 0.95);
    const bool complete = finite.size() == v.size();  // diagnostics need every chain whole
    w.ess_bulk = complete ? ess_bulk(v, r.chains, r.iterations) : nan;
    w.ess_tail = complete ? ess_tail(v, r.chains, r.iterations) : nan;
    w.rhat = complete ? rhat(v, r.chains, r.iterations) : nan;
    return w;
  };
  for (std::size_t k = 0; k < r.dim; ++k) out.rows.push_back(row(r.parameter_names[k], r.samples(k)));
  for (const auto& name : r.names) out.rows.push_back(row(name, r.samples(name)));
  char text[300];
  if (r.correlation > 0) {
    if (r.log_likelihood_ratio_sd > 2 * std::sqrt(2.0)) {
      std::snprintf(text, sizeof text,
                    "sd(log Z(theta, U') - log Z(theta, U)) at the posterior mean is %.2f with %zu particles and "
                    "correlation %.4g: the chain sticks where an estimate was high; use more particles or a "
                    "correlation closer to 1 (aim for 1.7-2.5)",
                    r.log_likelihood_ratio_sd, r.particles, r.correlation);
      out.warnings.push_back(text);
    } else if (r.log_likelihood_ratio_sd < 0.5 * std::sqrt(2.0)) {
      std::snprintf(text, sizeof text,
                    "sd(log Z(theta, U') - log Z(theta, U)) at the posterior mean is %.2f with %zu particles: fewer "
                    "particles would mix almost as well for less time (aim for 1.7-2.5)",
                    r.log_likelihood_ratio_sd, r.particles);
      out.warnings.push_back(text);
    }
    if (r.randoms_beyond > 0)
      out.warnings.push_back(std::to_string(r.randoms_beyond) +
                             " draws of the steps came after the randoms_per_step stored normals, fresh in every "
                             "sweep: exact, but they weaken the correlation; raise randoms_per_step to the draws "
                             "one step makes");
  } else if (r.log_likelihood_sd > 2) {
    std::snprintf(text, sizeof text,
                  "sd(log Z) at the posterior mean is %.2f with %zu particles: the chain sticks where an estimate was "
                  "high; use more particles (the sd falls about as 1/sqrt(particles); aim for 1.2-1.8)",
                  r.log_likelihood_sd, r.particles);
    out.warnings.push_back(text);
  } else if (r.log_likelihood_sd < 0.5) {
    std::snprintf(text, sizeof text,
                  "sd(log Z) at the posterior mean is %.2f with %zu particles: fewer particles would mix almost as "
                  "well for less time (aim for 1.2-1.8)",
                  r.log_likelihood_sd, r.particles);
    out.warnings.push_back(text);
  }
  if (r.domain_errors > 0)
    out.warnings.push_back(std::to_string(r.domain_errors) +
                           " particle steps threw std::domain_error (a value outside a density's support) and gave "
                           "their particle weight 0, as if that path's likelihood were 0; if that is not what the "
                           "model means, bound the state or the parameters; the first: " +
                           r.first_domain_error);
  for (const auto& w : out.rows)
    if (w.rhat > 1.01) {
      std::snprintf(text, sizeof text, "%s: R-hat %.3f above 1.01: run longer (more warmup or iterations)",
                    w.name.c_str(), w.rhat);
      out.warnings.push_back(text);
    }
  return out;
}

inline std::ostream& operator<<(std::ostream& os, const pmmh_summary& s) {
  char line[256];
  std::snprintf(line, sizeof line, "%-14s %9s %9s %9s %9s %9s %8s %8s %6s\n", "", "mean", "sd", "5%", "50%", "95%",
                "ess_bulk", "ess_tail", "rhat");
  os << line;
  for (const auto& r : s.rows) {
    std::snprintf(line, sizeof line, "%-14s %9.3g %9.3g %9.3g %9.3g %9.3g %8.0f %8.0f %6.3f\n", r.name.c_str(),
                  r.mean, r.sd, r.q5, r.q50, r.q95, r.ess_bulk, r.ess_tail, r.rhat);
    os << line;
  }
  std::snprintf(line, sizeof line, "PMMH: %zu chains of %zu iterations, %zu particles; acceptance %.2f; sd(log Z) %.2f\n",
                s.chains, s.iterations, s.particles, s.acceptance, s.log_likelihood_sd);
  os << line;
  if (s.correlation > 0) {
    std::snprintf(line, sizeof line, "correlated: rho %.4g; sd(log Z(theta, U') - log Z(theta, U)) %.2f\n",
                  s.correlation, s.log_likelihood_ratio_sd);
    os << line;
  }
  for (const auto& w : s.warnings) os << "warning: " << w << "\n";
  return os;
}

}  // namespace tyche::smc
