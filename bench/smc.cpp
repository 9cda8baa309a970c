// bench/smc.cpp — forward inference against exact posteriors: KL(p̂ ‖ p) as a function of
// wall-clock time, after Paige & Wood (2014) Figures 4 and 5.
//
//   smc [--quick] [--budget SECONDS] [--trace FILE] [--only SUBSTRING]
//
// For each model (HMM: KL summed over the 50 time points' marginals; CRP: KL of the number
// of classes), engine (fork, in_process), algorithm (smc, pimh, pg) and particle count (100,
// 1000), runs sweeps until the budget is spent (default 60 s, --quick 3 s; a sweep that has
// started always finishes, so a row takes at least one sweep; a quick run skips the HMM on
// the fork engine with 1000 particles, whose single sweep takes 10 s to minutes, and prints
// that row with empty seconds and kl) and prints
//
//   model,engine,algorithm,particles,seconds,kl,sweeps,seconds_to_kl_0.01
//
// seconds: wall-clock time used; kl: KL of the estimate from every sweep so far (each sweep's
// weighted particles, sweeps weighted equally, as in the paper); seconds_to_kl_0.01: when
// the KL first fell to 0.01 or below (empty if never). --trace writes (seconds, kl) after
// every sweep, thinned to about 200 points per row, for bench/smc_plot.gp.
//
// The estimate is accumulated in on_sweep from each particle set's columns: predicted names
// get columns in the order the program first predicts them, so column t is z[t] for the HMM
// and column 0 is num_classes for the CRP.
#include <tyche/samplers/smc.hpp>

#include "../tests/smc/paper_programs.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace {
namespace smc = tyche::smc;
using namespace smc_programs;

struct row {
  std::string model, engine, algorithm;
  std::size_t particles;
};

/// Runs one row; returns (seconds, kl, sweeps, seconds to 0.01 or NaN) and appends the trace.
struct outcome {
  double seconds = 0, kl = NAN, first_below = NAN;
  std::size_t sweeps = 0;
  std::string error;
};

outcome run_row(const row& r, double budget, std::vector<std::pair<double, double>>& trace) {
  const bool hmm = r.model == "hmm";
  const auto hmm_exact = hmm_marginals();
  const auto crp_exact = crp_posterior_classes();
  const std::size_t K = static_cast<std::size_t>(hmm_states);
  std::vector<double> sum(hmm ? hmm_length * K : 16, 0.0);  // Σ over sweeps of weighted histograms
  outcome out;
  std::vector<std::pair<double, double>> all;
  smc::config cfg;
  cfg.particles = r.particles;
  cfg.sweeps = 1u << 30;
  cfg.seed = 20140301;
  cfg.max_seconds = budget;
  cfg.keep_sweeps = false;
  cfg.engine = r.engine == "fork" ? smc::engine_kind::fork : smc::engine_kind::in_process;
  cfg.timeout_seconds = 600;
  cfg.max_processes = 16384;
  cfg.on_sweep = [&](const smc::particle_set& s) {
    ++out.sweeps;
    const double m = static_cast<double>(out.sweeps);
    double kl = 0;
    if (hmm) {
      for (std::size_t p = 0; p < s.size(); ++p)
        for (std::size_t t = 0; t < hmm_length; ++t)
          sum[t * K + static_cast<std::size_t>(s.value(p, t))] += s.weights[p];
      for (std::size_t t = 0; t < hmm_length; ++t)
        for (std::size_t k = 0; k < K; ++k) {
          const double q = sum[t * K + k] / m;
          if (q > 0) kl += q * std::log(q / hmm_exact[t][k]);
        }
    } else {
      for (std::size_t p = 0; p < s.size(); ++p) sum[static_cast<std::size_t>(s.value(p, 0))] += s.weights[p];
      for (std::size_t k = 1; k < sum.size(); ++k) {
        const double q = sum[k] / m;
        if (q > 0) kl += q * std::log(q / crp_exact.at(static_cast<int>(k)));
      }
    }
    out.kl = kl;
    out.seconds = s.record.seconds;
    if (kl <= 0.01 && std::isnan(out.first_below)) out.first_below = s.record.seconds;
    all.emplace_back(s.record.seconds, kl);
  };
  try {
    if (hmm) {
      if (r.engine == "fork") {
        if (r.algorithm == "smc") smc::run_smc(hmm_program, cfg);
        else if (r.algorithm == "pimh") smc::run_pimh(hmm_program, cfg);
        else smc::run_pg(hmm_program, cfg);
      } else {
        if (r.algorithm == "smc") smc::run_smc(hmm_stepwise(), cfg);
        else if (r.algorithm == "pimh") smc::run_pimh(hmm_stepwise(), cfg);
        else smc::run_pg(hmm_stepwise(), cfg);
      }
    } else {
      if (r.engine == "fork") {
        if (r.algorithm == "smc") smc::run_smc(crp_program, cfg);
        else if (r.algorithm == "pimh") smc::run_pimh(crp_program, cfg);
        else smc::run_pg(crp_program, cfg);
      } else {
        if (r.algorithm == "smc") smc::run_smc(crp_stepwise(), cfg);
        else if (r.algorithm == "pimh") smc::run_pimh(crp_stepwise(), cfg);
        else smc::run_pg(crp_stepwise(), cfg);
      }
    }
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  // Thin the trace to about 200 log-spaced points (always keeping the last).
  double next = 0;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i].first >= next || i + 1 == all.size()) {
      trace.push_back(all[i]);
      next = all[i].first * 1.03;
    }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  double budget = 60;
  std::string trace_file, only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") budget = 3;
    else if (a == "--budget" && i + 1 < argc) budget = std::stod(argv[++i]);
    else if (a == "--trace" && i + 1 < argc) trace_file = argv[++i];
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else {
      std::cerr << "usage: smc [--quick] [--budget SECONDS] [--trace FILE] [--only SUBSTRING]\n";
      return 2;
    }
  }
  std::ofstream trace;
  if (!trace_file.empty()) {
    trace.open(trace_file);
    trace << "model,engine,algorithm,particles,seconds,kl\n";
  }
  std::printf("model,engine,algorithm,particles,seconds,kl,sweeps,seconds_to_kl_0.01\n");
  std::fflush(stdout);
  for (const char* model : {"hmm", "crp"})
    for (const char* engine : {"in_process", "fork"})
      for (const char* algorithm : {"smc", "pimh", "pg"})
        for (std::size_t particles : {100u, 1000u}) {
          const row r{model, engine, algorithm, particles};
          const std::string id = r.model + "," + r.engine + "," + r.algorithm + "," + std::to_string(particles);
          if (!only.empty() && id.find(only) == std::string::npos) continue;
          if (budget < 10 && r.model == "hmm" && r.engine == "fork" && particles == 1000) {
            // One fork-engine sweep of the HMM with 1000 particles takes 10 s to minutes on a
            // 2-core machine (PG: a keeper process per distinct ancestor): not a quick row.
            std::fprintf(stderr, "%s: skipped in a quick run (one sweep is longer than the budget)\n", id.c_str());
            std::printf("%s,,,0,\n", id.c_str());
            std::fflush(stdout);
            continue;
          }
          std::vector<std::pair<double, double>> points;
          const outcome o = run_row(r, budget, points);
          if (!o.error.empty()) std::cerr << id << ": " << o.error << "\n";
          char line[256];
          std::snprintf(line, sizeof line, "%s,%.3f,%.5g,%zu,", id.c_str(), o.seconds, o.kl, o.sweeps);
          std::fputs(line, stdout);
          if (!std::isnan(o.first_below)) std::printf("%.3f", o.first_below);
          std::printf("\n");
          std::fflush(stdout);
          for (const auto& [s, kl] : points) trace << id << "," << s << "," << kl << "\n";
          trace.flush();
        }
}
