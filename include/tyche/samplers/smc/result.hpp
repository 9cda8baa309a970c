// tyche/samplers/smc/result.hpp — what a forward-inference run returns.
//
// Every sweep outputs a particle_set: L particles, their normalised weights and the values
// they predicted (one column per predicted name; NaN where a particle did not predict that
// name). The result keeps the sets (unless config::keep_sweeps is off) and answers questions
// about the posterior of each name, weighting each sweep's set equally, as the paper does
// for repeated SMC and as PIMH and particle Gibbs require:
//
//   r.samples("mu"), r.weights()       weighted samples (weights sum to 1 over all sweeps)
//   r.unweighted_samples("mu")         each sweep's set resampled to L equal-weight draws
//   r.mean("mu"), r.sd("mu"), r.quantile("mu", 0.95), r.histogram("k")
//   r.log_evidence                     the estimate of log p(y) (see below)
//   std::cout << summary(r)
//
// log_evidence: SMC and PIMH, log of the mean of the sweeps' estimates Ẑ (each unbiased);
// PG, the first sweep's (the conditional sweeps' Ẑ are not estimates of p(y)).
#pragma once
#include <tyche/samplers/smc/config.hpp>
#include <tyche/samplers/smc/resampling.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <map>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tyche::smc {

/// What one sweep produced.
struct sweep_record {
  std::size_t index = 0;      ///< 0-based sweep number
  double log_evidence = 0;    ///< log Ẑ of this sweep's particle filter
  bool accepted = true;       ///< PIMH: whether the proposal was accepted
  double seconds = 0;         ///< wall-clock time from the start of the run to the end of the sweep
  /// The effective sample size 1 / Σ wᵢ² of the normalised weights after the last observe,
  /// before the resampling there (after it the weights are equal, and 1 / Σ wᵢ² would be the
  /// particle count): what the sweep's set is worth. NaN where not recorded.
  double final_ess = std::numeric_limits<double>::quiet_NaN();
};

/// One sweep's output: weighted particles and what they predicted.
struct particle_set {
  sweep_record record;
  std::vector<double> weights;  ///< normalised, one per particle
  std::size_t columns = 0;      ///< names known when the set was made
  std::vector<double> values;   ///< particle-major: values[particle · columns + column]
  std::size_t size() const { return weights.size(); }
  /// The value particle p predicted for column c (NaN if it did not).
  double value(std::size_t p, std::size_t c) const {
    return c < columns ? values[p * columns + c] : std::numeric_limits<double>::quiet_NaN();
  }
};

/// Values a program predicts: predictions("mu", mu), predictions("z", t, z) names "z[t]".
class predictions {
 public:
  void operator()(std::string_view name, double value) { entries_.emplace_back(std::string(name), value); }
  void operator()(std::string_view name, std::size_t index, double value) {
    entries_.emplace_back(indexed_name(name, index), value);
  }
  const std::vector<std::pair<std::string, double>>& entries() const { return entries_; }
  void clear() { entries_.clear(); }
  static std::string indexed_name(std::string_view name, std::size_t index) {
    std::string s(name);
    s += '[';
    s += std::to_string(index);
    s += ']';
    return s;
  }

 private:
  std::vector<std::pair<std::string, double>> entries_;
};

class result {
 public:
  algorithm method = algorithm::smc;
  std::size_t particles = 0;
  /// Predicted names, in the order first seen.
  std::vector<std::string> names;
  /// One record per sweep run.
  std::vector<sweep_record> sweeps;
  /// Each sweep's particle set (empty when config::keep_sweeps is off).
  std::vector<particle_set> sets;
  double log_evidence = 0;
  double seconds = 0;  ///< wall-clock time of the whole run
  /// config::domain_error_zero_weight: the particle steps that threw std::domain_error (each
  /// gave its particle weight 0), and the first one's sweep, particle, observe and message.
  std::size_t domain_errors = 0;
  std::string first_domain_error;

  /// The column of a name, or throws std::out_of_range naming it.
  std::size_t column(std::string_view name) const {
    for (std::size_t c = 0; c < names.size(); ++c)
      if (names[c] == name) return c;
    throw std::out_of_range("tyche::smc::result: nothing was predicted under the name '" +
                            std::string(name) + "'");
  }
  bool has(std::string_view name) const {
    return std::find(names.begin(), names.end(), name) != names.end();
  }
  /// Every particle's value of `name`, sweep after sweep (NaN where not predicted).
  std::vector<double> samples(std::string_view name) const {
    const std::size_t c = column(name);
    std::vector<double> out;
    for (const auto& s : sets)
      for (std::size_t p = 0; p < s.size(); ++p) out.push_back(s.value(p, c));
    return out;
  }
  /// The weight of every sample: each sweep's normalised weights divided by the number of sweeps.
  std::vector<double> weights() const {
    std::vector<double> out;
    const double per = sets.empty() ? 0 : 1.0 / static_cast<double>(sets.size());
    for (const auto& s : sets)
      for (double w : s.weights) out.push_back(w * per);
    return out;
  }
  /// Each sweep's set resampled (systematically, with a fixed stream) to as many equally
  /// weighted draws as it has particles.
  std::vector<double> unweighted_samples(std::string_view name) const {
    const std::size_t c = column(name);
    std::vector<double> out;
    for (const auto& s : sets) {
      counter_rng g(0x7e5a3b1d, s.record.index);
      const auto count = offspring_counts(s.weights, s.size(), resampling_scheme::systematic, g);
      for (std::size_t p = 0; p < s.size(); ++p) out.insert(out.end(), count[p], s.value(p, c));
    }
    return out;
  }
  /// True when there is more than one particle, something was predicted, and in every kept
  /// sweep all particles predicted the same values: the set collapsed to copies of one particle
  /// (every weight on one of them before the last resampling), or the particles never differed
  /// (a random number generator of the program's own, copied into every particle, instead of
  /// tyche's draws: docs/smc.md, "Writing a program"). summary(r) warns about it.
  bool particles_identical() const {
    if (particles < 2 || names.empty() || sets.empty()) return false;
    for (const auto& s : sets) {
      if (s.size() < 2) return false;
      for (std::size_t c = 0; c < s.columns; ++c)
        for (std::size_t p = 1; p < s.size(); ++p) {
          const double a = s.value(0, c), b = s.value(p, c);
          if (!(a == b) && !(std::isnan(a) && std::isnan(b))) return false;
        }
    }
    return true;
  }
  /// Each kept sweep's weighted mean of `name` (over its particles that predicted it; NaN for a
  /// sweep where none did), in sweep order. For PIMH and particle Gibbs the sweeps are a Markov
  /// chain and mean(name) averages these: its ESS and MCSE are those of this series, e.g.
  /// tyche::ess_mean(m, 1, m.size()) and tyche::mcse_mean(m, 1, m.size())
  /// (<tyche/diagnostics/convergence.hpp>), which w_ess is not.
  std::vector<double> sweep_means(std::string_view name) const {
    const std::size_t c = column(name);
    std::vector<double> out;
    out.reserve(sets.size());
    for (const auto& s : sets) {
      double m = 0, total = 0;
      for (std::size_t p = 0; p < s.size(); ++p) {
        const double v = s.value(p, c);
        if (std::isnan(v)) continue;
        m += s.weights[p] * v;
        total += s.weights[p];
      }
      out.push_back(total > 0 ? m / total : std::numeric_limits<double>::quiet_NaN());
    }
    return out;
  }
  /// Weighted mean of `name` over the particles that predicted it.
  double mean(std::string_view name) const {
    const auto [x, w] = weighted(name);
    double m = 0;
    for (std::size_t i = 0; i < x.size(); ++i) m += w[i] * x[i];
    return m;
  }
  double variance(std::string_view name) const {
    const auto [x, w] = weighted(name);
    double m = 0, v = 0;
    for (std::size_t i = 0; i < x.size(); ++i) m += w[i] * x[i];
    for (std::size_t i = 0; i < x.size(); ++i) v += w[i] * (x[i] - m) * (x[i] - m);
    return v;
  }
  double sd(std::string_view name) const { return std::sqrt(variance(name)); }
  /// The weighted quantile: the smallest value whose cumulative weight reaches p.
  double quantile(std::string_view name, double p) const {
    const auto xw = weighted(name);
    const std::vector<double>& x = xw.first;
    const std::vector<double>& w = xw.second;
    std::vector<std::size_t> order(x.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return x[a] < x[b]; });
    double cumulative = 0;
    for (std::size_t i : order)
      if ((cumulative += w[i]) >= p) return x[i];
    return order.empty() ? std::numeric_limits<double>::quiet_NaN() : x[order.back()];
  }
  /// The weighted distribution of the distinct values of `name` (for discrete quantities).
  std::map<double, double> histogram(std::string_view name) const {
    const auto [x, w] = weighted(name);
    std::map<double, double> h;
    for (std::size_t i = 0; i < x.size(); ++i) h[x[i]] += w[i];
    return h;
  }
  /// PIMH: the fraction of proposals accepted (sweeps after the first).
  double acceptance_rate() const {
    if (sweeps.size() < 2) return std::numeric_limits<double>::quiet_NaN();
    double a = 0;
    for (std::size_t i = 1; i < sweeps.size(); ++i) a += sweeps[i].accepted ? 1 : 0;
    return a / static_cast<double>(sweeps.size() - 1);
  }

 private:
  /// Values of `name` and their weights renormalised over the particles that predicted it.
  std::pair<std::vector<double>, std::vector<double>> weighted(std::string_view name) const {
    const std::size_t c = column(name);
    std::vector<double> x, w;
    const double per = sets.empty() ? 0 : 1.0 / static_cast<double>(sets.size());
    double total = 0;
    for (const auto& s : sets)
      for (std::size_t p = 0; p < s.size(); ++p) {
        const double v = s.value(p, c);
        if (std::isnan(v)) continue;
        x.push_back(v);
        w.push_back(s.weights[p] * per);
        total += s.weights[p] * per;
      }
    for (double& v : w) v /= total;
    return {std::move(x), std::move(w)};
  }
};

/// One row of an SMC summary.
struct smc_summary_row {
  std::string name;
  double mean, sd, q5, q50, q95, ess;
  std::map<double, double> histogram;  ///< filled when the name takes few distinct integer values
  /// The number of distinct values among a sweep's particles, mean over sweeps: far below w_ess
  /// for a quantity drawn once and resampled at every observe (path degeneracy).
  double distinct = std::numeric_limits<double>::quiet_NaN();
};

/// The summary of a forward-inference result, printable with <<: mean, sd and quantiles of
/// every predicted name, the mean effective sample size of the sweeps' weights, and a
/// histogram for discrete quantities (at most 12 distinct integer values).
struct smc_summary {
  std::vector<smc_summary_row> rows;
  algorithm method = algorithm::smc;
  std::size_t sweeps = 0, particles = 0;
  double log_evidence = 0, acceptance = 0;
  bool particles_identical = false;  ///< result::particles_identical(): a warning line
  /// Other warnings: a continuous quantity with fewer than w_ess / 10 distinct values per sweep.
  std::vector<std::string> warnings;
};

inline smc_summary summary(const result& r) {
  smc_summary out;
  out.method = r.method;
  out.sweeps = r.sweeps.size();
  out.particles = r.particles;
  out.log_evidence = r.log_evidence;
  out.acceptance = r.acceptance_rate();
  out.particles_identical = r.particles_identical();
  std::vector<std::size_t> degenerate;  // rows of continuous names with few distinct values
  double ess = 0;
  for (const auto& s : r.sets) {  // before the last observe's resampling, where recorded
    double q = 0;
    for (double w : s.weights) q += w * w;
    const double e = std::isnan(s.record.final_ess) ? 1.0 / q : s.record.final_ess;
    ess += e / static_cast<double>(r.sets.size());
  }
  for (const auto& name : r.names) {
    smc_summary_row row{name, r.mean(name), r.sd(name), r.quantile(name, 0.05),
                        r.quantile(name, 0.5), r.quantile(name, 0.95), ess, {}};
    auto h = r.histogram(name);
    const bool integral = std::all_of(h.begin(), h.end(), [](const auto& kv) {
      return kv.first == std::floor(kv.first);
    });
    if (integral && h.size() <= 12) row.histogram = std::move(h);
    const std::size_t c = r.column(name);
    double distinct = 0;
    for (const auto& set : r.sets) {
      std::vector<double> v;
      for (std::size_t p = 0; p < set.size(); ++p)
        if (!std::isnan(set.value(p, c))) v.push_back(set.value(p, c));
      std::sort(v.begin(), v.end());
      distinct += static_cast<double>(std::unique(v.begin(), v.end()) - v.begin()) / static_cast<double>(r.sets.size());
    }
    if (!r.sets.empty()) row.distinct = distinct;
    // A continuous quantity whose particles share a few values: the weights' ESS says nothing
    // about it (integer-valued quantities, class counts, take few values by nature). SMC only:
    // PIMH and PG move such a parameter between sweeps, which is their point.
    if (r.method == algorithm::smc && !integral && !r.sets.empty() && r.particles >= 10 && distinct < ess / 10 &&
        !out.particles_identical)
      degenerate.push_back(out.rows.size());
    out.rows.push_back(std::move(row));
  }
  // One warning per name, and one for all the entries of an indexed name (x[1], x[2], … of a
  // predicted path, whose early states share a few ancestors by the end: a warning each would
  // bury the table).
  const auto base_of = [](const std::string& n) { return n.substr(0, n.find('[')); };
  const auto entries_of = [&](const std::string& base) {
    std::size_t count = 0;
    for (const auto& n : r.names) count += n.find('[') != std::string::npos && base_of(n) == base ? 1 : 0;
    return count;
  };
  // Groups in the order their first row appears: a name alone, or every entry of an indexed
  // name wherever its entries sit among the others (x[1], v[1], x[2], … of two paths).
  struct group {
    std::string base;
    bool indexed = false;
    std::vector<std::size_t> rows;
  };
  std::vector<group> groups;
  for (const std::size_t row : degenerate) {
    const std::string& name = out.rows[row].name;
    const bool indexed = name.find('[') != std::string::npos;
    const std::string base = base_of(name);
    auto g = std::find_if(groups.begin(), groups.end(),
                          [&](const group& x) { return indexed && x.indexed && x.base == base; });
    if (g == groups.end()) groups.push_back({indexed ? base : name, indexed, {row}});
    else g->rows.push_back(row);
  }
  for (const group& g : groups) {
    const smc_summary_row& first = out.rows[g.rows.front()];
    char text[200];
    std::string head;
    if (g.rows.size() == 1) {
      std::snprintf(text, sizeof text, "%.1f distinct values per sweep among %zu particles (w_ess %.0f)",
                    first.distinct, r.particles, ess);
      head = first.name + ": " + text;
    } else {
      std::size_t fewest = g.rows.front();
      for (const std::size_t row : g.rows)
        if (out.rows[row].distinct < out.rows[fewest].distinct) fewest = row;
      std::snprintf(text, sizeof text,
                    "%zu of its %zu entries have fewer than w_ess / 10 distinct values per sweep among %zu particles "
                    "(w_ess %.0f; %s the fewest, %.1f)",
                    g.rows.size(), entries_of(g.base), r.particles, ess, out.rows[fewest].name.c_str(),
                    out.rows[fewest].distinct);
      head = g.base + ": " + text + " (" + first.name + " … " + out.rows[g.rows.back()].name + ")";
    }
    out.warnings.push_back(
        head +
        ": the particles descend from a few ancestors here (path degeneracy: a value fixed long before the last "
        "observe — a parameter drawn once at the start, or an early state of a path — and copied by every "
        "resampling since), so its estimate rests on about that many values per sweep. For a parameter use "
        "run_pimh or run_pg, which move it between sweeps, or NUTS (docs/smc.md, \"Static parameters\"); for an "
        "early state (smoothing) the same, or more particles");
  }
  return out;
}

inline std::ostream& operator<<(std::ostream& os, const smc_summary& s) {
  char line[256];
  std::snprintf(line, sizeof line, "%-14s %9s %9s %9s %9s %9s %8s\n", "", "mean", "sd", "5%", "50%",
                "95%", "w_ess");
  os << line;
  for (const auto& r : s.rows) {
    std::snprintf(line, sizeof line, "%-14s %9.3g %9.3g %9.3g %9.3g %9.3g %8.0f\n", r.name.c_str(),
                  r.mean, r.sd, r.q5, r.q50, r.q95, r.ess);
    os << line;
    for (const auto& [v, p] : r.histogram) {
      std::snprintf(line, sizeof line, "  %-12g %9.3f  ", v, p);
      os << line << std::string(static_cast<std::size_t>(std::lround(p * 40)), '#') << "\n";
    }
  }
  const char* method = s.method == algorithm::smc ? "SMC" : s.method == algorithm::pimh ? "PIMH" : "PG";
  std::snprintf(line, sizeof line, "%s: %zu sweeps of %zu particles; log evidence %.4g", method,
                s.sweeps, s.particles, s.log_evidence);
  os << line;
  if (s.method == algorithm::pimh && !std::isnan(s.acceptance)) {
    std::snprintf(line, sizeof line, "; acceptance %.2f", s.acceptance);
    os << line;
  }
  os << "\n";
  if (s.method != algorithm::smc)
    os << "w_ess: the effective sample size of each sweep's weights after its last observe (mean over sweeps), "
          "not an ESS of the "
          "chain of sweeps; that is tyche::ess_mean(m, 1, m.size()) of m = r.sweep_means(name)\n";
  if (s.particles_identical)
    os << "warning: in every sweep all " << s.particles
       << " particles predicted the same values: either the set collapsed to copies of one particle "
          "(one weight took all the mass: more particles, or observations that constrain less at once), "
          "or the particles never differed (a random number generator of the program's own is copied "
          "into every particle; draw with tyche's: docs/smc.md, \"Writing a program\")\n";
  for (const auto& w : s.warnings) os << "warning: " << w << "\n";
  return os;
}

}  // namespace tyche::smc
