// tyche/diagnostics/summary.hpp — summary(fit): the table Stan and posterior print for a fit
// (mean, sd, MCSE, 5/50/95% quantiles, bulk- and tail-ESS, R̂) and the sampler warnings:
// divergences, tree depth saturation, E-BFMI < 0.3, R̂ > 1.01.
#pragma once
#include <tyche/config.hpp>
#include <tyche/diagnostics/convergence.hpp>
#include <tyche/inference/fit.hpp>
#include <tyche/scalar/format.hpp>
#include <tyche/samplers/nuts/config.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

namespace tyche {

/// One row of the summary.
struct summary_row {
  std::string name;
  double mean, sd, mcse, q5, q50, q95, ess_bulk, ess_tail, rhat;
};

/// The summary of a fit, printable with <<.
struct fit_summary {
  std::vector<summary_row> rows;
  std::vector<std::string> warnings;
  int chains = 0, draws = 0;
  std::string method = "sample";  // or the approximation's: "laplace", "pathfinder", "variational"
  /// NUTS only (−1 for an approximation): divergent transitions and transitions at the maximum
  /// tree depth among the draws, and that depth — printed even when 0, so that "checked, none"
  /// reads differently from "not reported".
  int divergent = -1, at_max_depth = -1, max_depth = 0;
  /// An approximation only: the Pareto k̂ of its draws' p / q (approximate_fit::pareto_k; NaN
  /// when not computed).
  double pareto_k = std::numeric_limits<double>::quiet_NaN();
  /// Draws resampled with replacement (multi-path pathfinder): how many of them differ (−1
  /// otherwise). Repeats are not new information, so the table's ess columns are at most this,
  /// and each mcse at least sd / √(this).
  int distinct_draws = -1;
  /// NUTS only: what the run used and cost, from the fit (nuts_fit's seconds, device_seconds,
  /// gradient_evaluations, threads, helper_threads, lanes, split), printed under the table
  /// ("ran 0.08 s, 71234 gradient evaluations: 4 chains on 2 threads, one at a time"), so that a
  /// table pasted into a report says how it was made. gradient_evaluations −1: not reported.
  double seconds = 0, device_seconds = 0;
  bool emulated_device = false;  // nuts_fit's: the device executor emulated on the host
  long long gradient_evaluations = -1;
  int threads = 0, helper_threads = 0, lanes = 0, split = 0, ranks = 1;
  long long split_parts = 0, split_parts_by_helpers = 0;  // nuts_fit's: the share the helpers ran

  /// The largest R̂ and the smallest bulk and tail ESS over the rows (the checks every fit
  /// gets: R̂ < 1.01, ESS > 100 per chain), NaN rows left out (a constant value has no R̂);
  /// NaN when no row has one. worst_row(&summary_row::rhat) names the row.
  [[nodiscard]] double max_rhat() const { return worst(&summary_row::rhat); }
  [[nodiscard]] double min_ess_bulk() const { return worst(&summary_row::ess_bulk); }
  [[nodiscard]] double min_ess_tail() const { return worst(&summary_row::ess_tail); }
  /// The summary with only the rows of the values named: a name is a value's ("theta[2]") or a
  /// whole variable's ("theta": its elements, in order) — Stan's `pars`. The counts and warnings
  /// stay those of the whole fit. Throws std::out_of_range for a name no row has, listing names.
  [[nodiscard]] fit_summary only(const std::vector<std::string>& names) const {
    fit_summary out = *this;
    out.rows.clear();
    std::vector<std::string> all;
    for (const auto& r : rows) all.push_back(r.name);
    for (const auto& name : names) {
      std::size_t found = 0;
      for (const auto& r : rows)
        if (r.name == name || (r.name.size() > name.size() && r.name.compare(0, name.size(), name) == 0 &&
                               r.name[name.size()] == '[')) {
          out.rows.push_back(r);
          ++found;
        }
      if (found == 0) (void)detail::index_of_name(all, name, "tyche::fit_summary::only");  // throws, listing names
    }
    return out;
  }
  /// The row whose column `column` is worst (largest for rhat, else smallest), NaN rows left
  /// out; nullptr when none has a value.
  [[nodiscard]] const summary_row* worst_row(double summary_row::*column) const {
    const bool largest = column == &summary_row::rhat;
    const summary_row* found = nullptr;
    for (const auto& r : rows) {
      const double v = r.*column;
      if (std::isnan(v)) continue;
      if (found == nullptr || (largest ? v > found->*column : v < found->*column)) found = &r;
    }
    return found;
  }

 private:
  [[nodiscard]] double worst(double summary_row::*column) const {
    const summary_row* r = worst_row(column);
    return r != nullptr ? r->*column : std::numeric_limits<double>::quiet_NaN();
  }
};

/// E-BFMI of one chain (Betancourt 2016): Σ (E_n − E_{n−1})² / Σ (E_n − Ē)².
inline double e_bfmi(const std::vector<samplers::transition_stats>& chain) {
  if (chain.size() < 2) return std::nan("");
  double mean = 0;
  for (const auto& s : chain) mean += s.energy / static_cast<double>(chain.size());
  double num = 0, den = 0;
  for (std::size_t i = 0; i < chain.size(); ++i) {
    den += (chain[i].energy - mean) * (chain[i].energy - mean);
    if (i > 0) num += (chain[i].energy - chain[i - 1].energy) * (chain[i].energy - chain[i - 1].energy);
  }
  return num / den;
}

namespace detail::diagnostics {

/// The table's rows of a fit's draws, and the warnings about the draws themselves (too few for
/// MCSE/ESS/R-hat; NaN draws): what every fit type shares.
template <class Fit>
void parameter_rows(const Fit& fit, fit_summary& out) {
  out.chains = fit.chains;
  out.draws = fit.draws;
  for (std::size_t k = 0; k < fit.dim(); ++k) {
    const auto chains = fit.parameter(k);
    std::vector<double> all;
    for (const auto& c : chains) all.insert(all.end(), c.begin(), c.end());
    // As R's mean and sd (long double sums): no draws, mean NaN; one draw, sd NaN.
    const double mean = all.empty() ? std::nan("") : r_mean(all.data(), all.size());
    const double var = all.size() < 2 ? std::nan("") : r_var(all.data(), all.size());
    out.rows.push_back({fit.names[k], mean, std::sqrt(var), mcse_mean(chains), quantile(all, 0.05),
                        quantile(all, 0.5), quantile(all, 0.95), ess_bulk(chains), ess_tail(chains),
                        rhat(chains)});
  }
  // What cannot be estimated is NaN in the table, and said once here (posterior prints NA).
  if (fit.draws < static_cast<int>(min_draws)) {
    out.warnings.push_back(std::to_string(fit.draws) + " draws per chain: MCSE, ESS and R-hat need at least " +
                           std::to_string(min_draws) + " and are NaN");
  } else {
    // A parameter constant in every draw (L[1,1] of a Cholesky factor of a correlation matrix)
    // has NaN R-hat and ESS in the table and no warning, as in Stan; NaN draws are warned of.
    std::string with_nan;
    int count = 0;
    for (std::size_t k = 0; k < fit.dim(); ++k) {
      bool nan = false;
      for (const auto& chain : fit.values)
        for (std::size_t d = k; d < chain.size() && !nan; d += fit.dim()) nan = std::isnan(chain[d]);
      if (!nan) continue;
      if (count < 5) with_nan += (count > 0 ? ", " : "") + fit.names[k];
      ++count;
    }
    if (count > 5) with_nan += ", … (" + std::to_string(count) + " in all)";
    if (count > 0) out.warnings.push_back("NaN draws of " + with_nan + ": their MCSE, ESS and R-hat are NaN");
    // Draws that are finite and not all equal (posterior's test), and still a NaN estimate: with
    // 4 or 5 draws per chain every ESS and MCSE (a split chain needs 3 draws); beyond, the tail
    // ESS when 5 % or more of the draws tie at a tail (a stuck chain, resampled draws).
    std::string unestimated;
    int without = 0;
    for (std::size_t k = 0; k < out.rows.size(); ++k) {
      const auto& r = out.rows[k];
      if (!(std::isnan(r.mcse) || std::isnan(r.ess_bulk) || std::isnan(r.ess_tail) || std::isnan(r.rhat))) continue;
      std::vector<double> all;
      for (const auto& c : fit.parameter(k)) all.insert(all.end(), c.begin(), c.end());
      if (should_return_na(all)) continue;  // constant, or NaN draws (warned of above)
      if (without < 5) unestimated += (without > 0 ? ", " : "") + r.name;
      ++without;
    }
    if (without > 5) unestimated += ", … (" + std::to_string(without) + " in all)";
    if (without > 0)
      out.warnings.push_back(
          "the MCSE, ESS or R-hat of " + unestimated + " could not be estimated from " + std::to_string(fit.draws) +
          " draws per chain (NaN in the table): " +
          (fit.draws < 6 ? std::string("ESS needs 3 draws per split chain; run more draws")
                         : std::string("too many draws tie at a tail or repeat (a stuck chain, or resampled draws)")));
  }
}

}  // namespace detail::diagnostics

/// The summary table and warnings of a NUTS fit.
TYCHE_DRIVER_INLINE fit_summary summary(const nuts_fit& fit, int max_depth = 0)
#if TYCHE_DRIVER_BODIES
{
  if (max_depth <= 0) max_depth = fit.max_depth;  // 0: the depth the fit was run with
  fit_summary out;
  detail::diagnostics::parameter_rows(fit, out);
  const int divergent = fit.divergences();
  int non_finite = 0;  // of them, those whose trajectory met a log density that was NaN or −∞
  for (const auto& chain : fit.stats)
    for (const auto& s : chain) non_finite += s.divergent && s.non_finite ? 1 : 0;
  if (divergent > 0)
    out.warnings.push_back(std::to_string(divergent) + " of " + std::to_string(fit.chains * fit.draws) +
                           " transitions ended with a divergence: the posterior may be biased; "
                           "reparameterise, or raise adapt_delta");
  if (non_finite > 0)
    out.warnings.push_back(
        std::to_string(non_finite) + " of the " + std::to_string(divergent) +
        " divergent transitions met a log density that was NaN or -inf: the sampler stepped where the model "
        "is not defined (m.log_prob_terms(theta) names the term), often a variable whose prior allows values "
        "its use does not (an AR coefficient with |phi| < 1 intended, given an unbounded prior; a scale "
        "that can be negative): give it a family or transform with that support (uniform(-1, 1), "
        "half_normal), or, if only an edge of the support is reached, raise adapt_delta");
  int saturated = 0;
  for (const auto& chain : fit.stats)
    for (const auto& s : chain) saturated += s.tree_depth >= max_depth ? 1 : 0;
  if (saturated > 0)
    out.warnings.push_back(std::to_string(saturated) + " transitions hit the maximum tree depth " +
                           std::to_string(max_depth));
  if (fit.warmup > 0 && fit.warmup < 20)  // samplers/nuts/adaptation.hpp: no metric window under 20
    out.warnings.push_back("warm-up of " + std::to_string(fit.warmup) +
                           " iterations is under 20: only the step size was adapted, not the metric (the "
                           "identity, or init_inv_metric, was used); use warmup >= 150 (Stan's default is 1000)");
  out.divergent = divergent;
  out.at_max_depth = saturated;
  out.max_depth = max_depth;
  out.seconds = fit.seconds;
  out.device_seconds = fit.device_seconds;
  out.emulated_device = fit.emulated_device;
  out.gradient_evaluations = fit.gradient_evaluations;
  out.threads = fit.threads;
  out.helper_threads = fit.helper_threads;
  out.split_parts = fit.split_parts;
  out.split_parts_by_helpers = fit.split_parts_by_helpers;
  out.lanes = fit.lanes;
  out.split = fit.split;
  out.ranks = fit.ranks;
  for (std::size_t c = 0; c < fit.warmup_restarted_from.size() && c < fit.warmup_restarted_at.size(); ++c)
    if (fit.warmup_restarted_from[c] >= 0)
      out.warnings.push_back("chain " + std::to_string(c + 1) + ": stuck at the end of a metric window of warm-up "
                             "(iteration " + std::to_string(fit.warmup_restarted_at[c] + 1) +
                             ": step size under a thousandth of another chain's, log density below all of the "
                             "others'); it went on from chain " + std::to_string(fit.warmup_restarted_from[c] + 1) +
                             "'s state there (nuts_config::restart_stuck_chains)");
  for (std::size_t c = 0; c < fit.restarted_from.size(); ++c)
    if (fit.restarted_from[c] >= 0)
      out.warnings.push_back("chain " + std::to_string(c + 1) +
                             ": warm-up left it stuck (step size under a thousandth of another chain's, log density "
                             "below all of the others'); its draws are a second run from chain " +
                             std::to_string(fit.restarted_from[c] + 1) +
                             "'s last draw (nuts_config::restart_stuck_chains)");
  for (int c = 0; c < fit.chains; ++c) {
    const double b = e_bfmi(fit.stats[static_cast<std::size_t>(c)]);
    if (b < 0.3) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "chain %d: E-BFMI = %.3f < 0.3", c + 1, b);
      out.warnings.emplace_back(buf);
    }
  }
  // R-hat above 1.01: a warning per value, or, for more than 3 values (a vector's elements), one
  // that names the worst 3, largest first.
  auto rhat_text = [](double rhat) {
    char buf[32];
    // Digits enough that the value printed is above 1.01 (1.0104 is not "1.010 > 1.01").
    int digits = 3;
    for (double scale = 1e3; digits < 8 && std::round(rhat * scale) / scale <= 1.01; scale *= 10) ++digits;
    std::snprintf(buf, sizeof buf, "%.*f", digits, rhat);
    return std::string(buf);
  };
  std::vector<const summary_row*> unmixed;
  for (const auto& r : out.rows)
    if (r.rhat > 1.01) unmixed.push_back(&r);
  if (unmixed.size() <= 3) {
    for (const summary_row* r : unmixed)
      out.warnings.push_back(r->name + ": R-hat = " + rhat_text(r->rhat) + " > 1.01: the chains have not mixed");
  } else {
    std::stable_sort(unmixed.begin(), unmixed.end(),
                     [](const summary_row* a, const summary_row* b) { return a->rhat > b->rhat; });
    std::string worst;
    for (std::size_t k = 0; k < 3; ++k) worst += (k > 0 ? ", " : "") + unmixed[k]->name + " " + rhat_text(unmixed[k]->rhat);
    out.warnings.push_back(std::to_string(unmixed.size()) + " values have R-hat > 1.01 (" + worst +
                           ", …: the table has each): the chains have not mixed");
  }
  return out;
}
#else
;  // defined in the driver's source file (TYCHE_SEPARATE_DRIVER)
#endif

/// The summary of draws from an approximation (laplace, pathfinder, advi): the same table, on
/// independent draws (one "chain": R-hat is the split-chain R-hat of that one), with the
/// method's own warnings (a high Pareto k̂, failed paths).
TYCHE_DRIVER_INLINE fit_summary summary(const approximate_fit& fit)
#if TYCHE_DRIVER_BODIES
{
  fit_summary out;
  detail::diagnostics::parameter_rows(fit, out);
  out.method = fit.method;
  out.pareto_k = fit.pareto_k;
  const std::size_t d = fit.dim();
  if (fit.resampled && d > 0 && !fit.values.empty() && fit.values[0].size() >= static_cast<std::size_t>(fit.draws) * d) {
    // Rows compared byte for byte (a total order, NaN included): a repeat is a copy.
    const double* v = fit.values[0].data();
    std::vector<const double*> rows(static_cast<std::size_t>(fit.draws));
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = v + i * d;
    std::sort(rows.begin(), rows.end(),
              [d](const double* a, const double* b) { return std::memcmp(a, b, d * sizeof(double)) < 0; });
    int distinct = rows.empty() ? 0 : 1;
    for (std::size_t i = 1; i < rows.size(); ++i)
      distinct += std::memcmp(rows[i - 1], rows[i], d * sizeof(double)) != 0 ? 1 : 0;
    out.distinct_draws = distinct;
    const double cap = distinct;
    for (auto& r : out.rows) {
      r.ess_bulk = std::min(r.ess_bulk, cap);
      r.ess_tail = std::min(r.ess_tail, cap);
      if (cap > 0) r.mcse = std::max(r.mcse, r.sd / std::sqrt(cap));
    }
  }
  out.warnings.insert(out.warnings.end(), fit.warnings.begin(), fit.warnings.end());
  return out;
}
#else
;
#endif

TYCHE_DRIVER_INLINE std::ostream& operator<<(std::ostream& os, const fit_summary& s)
#if TYCHE_DRIVER_BODIES
{
  char line[256];
  std::snprintf(line, sizeof line, "%-14s %9s %9s %8s %9s %9s %9s %8s %8s %6s\n", "", "mean", "sd",
                "mcse", "5%", "50%", "95%", "ess_bulk", "ess_tail", "rhat");
  os << line;
  for (const auto& r : s.rows) {
    std::snprintf(line, sizeof line, "%-14s %9.3g %9.3g %8.2g %9.3g %9.3g %9.3g %8.0f %8.0f %6.3f\n",
                  r.name.c_str(), r.mean, r.sd, r.mcse, r.q5, r.q50, r.q95, r.ess_bulk, r.ess_tail, r.rhat);
    os << line;
  }
  if (s.method == "sample") {
    os << s.chains << (s.chains == 1 ? " chain of " : " chains of ") << s.draws << " draws after warm-up";
    if (s.divergent >= 0)
      os << "; " << s.divergent << " divergent, " << s.at_max_depth << " at the maximum tree depth (" << s.max_depth
         << ")";
    os << "\n";
    if (s.gradient_evaluations > 0) {
      // How the run was laid out: a user who asked for 2 threads and reads "1 thread" sees
      // that the other helped split each evaluation (cpu::split).
      char head[128];
      if (s.device_seconds > 0)
        std::snprintf(head, sizeof head, "ran %.3g s (%.3g s in the %sdevice's kernels%s), %lld gradient evaluations",
                      s.seconds, s.device_seconds, s.emulated_device ? "emulated " : "",
                      s.ranks > 1 ? ", summed over the ranks" : "", s.gradient_evaluations);
      else
        std::snprintf(head, sizeof head, "ran %.3g s, %lld gradient evaluations", s.seconds, s.gradient_evaluations);
      os << head << ": " << s.chains << (s.chains == 1 ? " chain" : " chains");
      if (s.device_seconds > 0)
        os << (s.emulated_device ? " on the device executor emulated on the host (tyche::cuda{.emulate = true})"
                                 : " on the device executor (tyche::cuda)");
      else {
        os << " on " << s.threads << (s.threads == 1 ? " thread" : " threads");
        if (s.ranks > 1) os << " of " << s.ranks << " MPI ranks";
        if (s.lanes > 1)
          os << " in SIMD batches of " << s.lanes << " lanes";
        else
          os << ", one at a time";
        if (s.split > 1) {
          os << "; each evaluation split in " << s.split << " parts";
          if (s.helper_threads > 0) {
            os << " with " << s.helper_threads << (s.helper_threads == 1 ? " helper thread" : " helper threads");
            // What the helpers did, not only that they were there: on a busy machine their
            // cores may run something else, and the chains' threads then run every part.
            if (s.split_parts > 0)
              os << ", which ran " << std::llround(100.0 * static_cast<double>(s.split_parts_by_helpers) /
                                                   static_cast<double>(s.split_parts))
                 << " % of them";
          }
        }
      }
      os << "\n";
    }
  }
  else {
    // The table of an approximation's draws looks like a NUTS table, but its ess and rhat only
    // describe those draws (independent, or resampled): how close the approximation is to the
    // posterior is k̂'s to say.
    os << s.draws << " draws from the " << s.method << " approximation";
    if (!std::isnan(s.pareto_k)) {
      // ≤ 0.7 says the importance weights are reliable, not that the draws are the posterior's:
      // laplace understates a hierarchy's group scale with k̂ below it (docs/inference.md).
      char k[128];
      std::snprintf(k, sizeof k, "; Pareto k %.2f (%s)", s.pareto_k,
                    s.pareto_k <= 0.7 ? "<= 0.7: close enough to reweight, not proof of the posterior" : "> 0.7");
      os << k;
    }
    if (s.distinct_draws >= 0)
      os << "; " << s.distinct_draws << " distinct (resampled with replacement: ess at most that)";
    os << "\n(ess and rhat describe these draws, not how close the approximation is to the posterior)\n";
  }
  for (const auto& w : s.warnings) os << "warning: " << w << "\n";
  return os;
}
#else
;
#endif

}  // namespace tyche
