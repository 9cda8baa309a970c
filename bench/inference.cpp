// bench/inference.cpp — the inference methods beside NUTS on the nine shared posteriors (bash
// bench/run.sh inference [--quick]): for each posterior, NUTS (4 chains × (1000 + 1000), Stan's
// defaults), optimize (MAP), pathfinder (CmdStan's defaults: 4 paths, 1000 draws resampled), advi
// (mean-field, CmdStan's defaults) and optimize + laplace (the unconstrained mode, 1000 draws), each with
// fixed seeds; one CSV row per posterior and method:
//
//   posterior,method,seeds,seconds,gradients,max_z,median_sd_ratio,pareto_k,typical,reached
//
//   seeds            runs averaged over (seeds 1 … seeds)
//   seconds          mean wall time of one call
//   gradients        mean log-density-and-gradient evaluations of one call (NUTS: its leapfrog
//                    gradients, warm-up included)
//   max_z            the worst |mean − reference mean| / reference sd over the parameters the
//                    reference reports and the model names alike (the mean of the draws of one
//                    call, averaged over the seeds); NaN for optimize (a point)
//   median_sd_ratio  median over those parameters of sd(draws) / reference sd
//   pareto_k         pathfinder's k̂ (mean over seeds); NaN for the others
//   typical          pathfinder, one path per run (num_paths = 1, 4 runs per seed): the fraction
//                    of paths whose first draw has a log density inside the central 90 % of the
//                    NUTS draws' lp__ — issue 19's "Pathfinder initial points reach the typical
//                    set" (an exact posterior draw is inside with probability 0.9); NaN for the
//                    others
//   reached          optimize: the fraction of seeds whose MAP has a log density within 0.01 of
//                    the best found (all seeds, and a run with tolerances that leave only the
//                    gradient's norm): how often the run ends at the mode (row optimize: the
//                    default, L-BFGS then Newton steps; row optimize_lbfgs_only: newton_steps = 0,
//                    where CmdStan's convergence tests stop; optimize_bfgs_only: algorithm = bfgs,
//                    newton_steps = 0; optimize_newton: algorithm = newton, CmdStan's Newton).
//                    pathfinder: the fraction of those paths whose first draw's log density is at least the
//                    5 % quantile of the NUTS draws' lp__: not left in the tails (an exact draw:
//                    0.95; an approximation too concentrated near the mode counts here, not in
//                    typical)
//   pathfinder_init  typical and reached of what pathfinder_init gives nuts(): the 4 distinct
//                    draws (initial_values(4)) of each seed's multi-path run (4 paths, PSIS
//                    resampling); seconds and gradients are that run's
//
// The reference is reference_summary.csv of each posterior (../shared/posteriors, posteriordb).
// --quick: 2 seeds, NUTS 4 × (300 + 300); --seeds=N: N seeds (10). Progress on stderr. docs/inference.md has the table.
#include "../examples/posteriordb.hpp"

#include <tyche/tyche.hpp>

#include "reference_summary.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct reference {
  std::map<std::string, std::pair<double, double>> rows;  // name → (mean, sd)
};

reference read_reference(const std::filesystem::path& csv) {
  reference r{tyche_bench::read_reference_summary(csv)};
  if (r.rows.empty()) throw std::runtime_error("cannot read " + csv.string());
  return r;
}

struct accuracy {
  double max_z = 0, median_sd_ratio = 0;
};

/// Draws [draw][k] of the names against the reference.
accuracy compare(const std::vector<std::string>& names, const std::vector<double>& values, std::size_t draws,
                 const reference& ref) {
  accuracy a;
  std::vector<double> ratios;
  const std::size_t dim = names.size();
  for (std::size_t k = 0; k < dim; ++k) {
    const auto it = ref.rows.find(names[k]);
    if (it == ref.rows.end()) continue;
    double m = 0, s = 0;
    for (std::size_t d = 0; d < draws; ++d) m += values[d * dim + k] / static_cast<double>(draws);
    for (std::size_t d = 0; d < draws; ++d) s += (values[d * dim + k] - m) * (values[d * dim + k] - m);
    s = std::sqrt(s / static_cast<double>(draws > 1 ? draws - 1 : 1));
    a.max_z = std::max(a.max_z, std::fabs(m - it->second.first) / it->second.second);
    ratios.push_back(s / it->second.second);
  }
  if (!ratios.empty()) {
    std::sort(ratios.begin(), ratios.end());
    a.median_sd_ratio = ratios[ratios.size() / 2];
  } else {
    a.max_z = a.median_sd_ratio = std::nan("");
  }
  return a;
}

struct row {
  double seconds = 0, gradients = 0, max_z = 0, sd_ratio = 0, pareto_k = 0, typical = std::nan(""),
         reached = std::nan("");
};

void print(const char* posterior, const char* method, int seeds, const row& r) {
  std::printf("%s,%s,%d,%.4f,%.0f,%.3f,%.3f,%.3f,%.3f,%.3f\n", posterior, method, seeds, r.seconds, r.gradients,
              r.max_z, r.sd_ratio, r.pareto_k, r.typical, r.reached);
  std::fflush(stdout);
}

double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

template <class Model>
void run(const char* name, const Model& m, const std::filesystem::path& dir, int seeds, int nuts_iterations) {
  const reference ref = read_reference(dir / "reference_summary.csv");
  const double n = seeds;
  std::fprintf(stderr, "inference: %s (dimension %zu)\n", name, m.dim());
  // NUTS, one seed: the yardstick for time and for the typical set.
  auto start = std::chrono::steady_clock::now();
  const tyche::nuts_fit fit = tyche::nuts(m, {.warmup = nuts_iterations, .draws = nuts_iterations, .seed = 1});
  row nuts_row;
  nuts_row.seconds = since(start);
  nuts_row.gradients = static_cast<double>(fit.gradient_evaluations);
  std::vector<double> all;
  for (const auto& c : fit.values) all.insert(all.end(), c.begin(), c.end());
  const accuracy na = compare(fit.names, all, all.size() / fit.dim(), ref);
  nuts_row.max_z = na.max_z;
  nuts_row.sd_ratio = na.median_sd_ratio;
  nuts_row.pareto_k = std::nan("");
  print(name, "nuts", 1, nuts_row);
  std::vector<double> lp;
  for (const auto& chain : fit.stats)
    for (const auto& s : chain) lp.push_back(s.log_density);
  std::sort(lp.begin(), lp.end());
  const double lo = lp[lp.size() / 20], hi = lp[lp.size() - 1 - lp.size() / 20];

  row pf, single, vi, la, init;
  pf.typical = 0;
  int paths = 0, typical = 0, reached = 0, points = 0, init_typical = 0, init_reached = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    const auto s = static_cast<std::uint64_t>(seed);
    try {
      start = std::chrono::steady_clock::now();
      const tyche::approximate_fit a = tyche::pathfinder(m, {.seed = s});
      pf.seconds += since(start) / n;
      pf.gradients += static_cast<double>(a.gradient_evaluations) / n;
      const accuracy acc = compare(a.names, a.values[0], static_cast<std::size_t>(a.draws), ref);
      pf.max_z += acc.max_z / n;
      pf.sd_ratio += acc.median_sd_ratio / n;
      pf.pareto_k += a.pareto_k / n;
      // What pathfinder_init gives nuts(): 4 distinct draws of the multi-path fit.
      for (const auto& values : a.initial_values(4)) {
        const double at = m.log_prob(m.unconstrain(values));
        ++points;
        if (at >= lo && at <= hi) ++init_typical;
        if (at >= lo) ++init_reached;
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "  pathfinder seed %d: %s\n", seed, e.what());
      pf.max_z = std::nan("");
    }
    for (int path = 0; path < 4; ++path) {  // single paths: the typical set
      try {
        const tyche::approximate_fit a =
            tyche::pathfinder(m, {.num_paths = 1, .num_draws = 1, .seed = s * 100 + static_cast<std::uint64_t>(path)});
        ++paths;
        const double at = a.log_p[0][0];  // log p (with the log-Jacobian) of the path's first draw
        if (at >= lo && at <= hi) ++typical;
        if (at >= lo) ++reached;
      } catch (const std::exception& e) {
        ++paths;
        std::fprintf(stderr, "  single path: %s\n", e.what());
      }
    }
    try {
      start = std::chrono::steady_clock::now();
      const tyche::approximate_fit a = tyche::advi(m, {.seed = s});
      vi.seconds += since(start) / n;
      vi.gradients += static_cast<double>(a.gradient_evaluations) / n;
      const accuracy acc = compare(a.names, a.values[0], static_cast<std::size_t>(a.draws), ref);
      vi.max_z += acc.max_z / n;
      vi.sd_ratio += acc.median_sd_ratio / n;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "  advi seed %d: %s\n", seed, e.what());
      vi.max_z = std::nan("");
    }
    try {
      start = std::chrono::steady_clock::now();
      const tyche::optimize_result mode = tyche::optimize(m, {.jacobian = true, .seed = s});
      const tyche::approximate_fit a = tyche::laplace(m, mode, {.seed = s});
      la.seconds += since(start) / n;
      la.gradients += static_cast<double>(mode.gradient_evaluations + a.gradient_evaluations) / n;
      const accuracy acc = compare(a.names, a.values[0], static_cast<std::size_t>(a.draws), ref);
      la.max_z += acc.max_z / n;
      la.sd_ratio += acc.median_sd_ratio / n;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "  optimize+laplace seed %d: %s\n", seed, e.what());
      la.max_z = std::nan("");
    }
  }
  // optimize (MAP, CmdStan's defaults) from each seed's random initial point: how often it
  // reaches the mode (its log density within 0.01 of the best of all seeds and of a run with
  // tolerances that leave only the gradient's norm); `reached` is that fraction. Row
  // optimize_lbfgs_only: the same without the Newton steps after L-BFGS (newton_steps = 0, the
  // point Stan's L-BFGS returns).
  // Rows optimize_bfgs_only and optimize_newton: CmdStan's other algorithms (algorithm = bfgs
  // without the Newton steps after it; algorithm = newton).
  struct variant {
    const char* name;
    tyche::optimize_algorithm algorithm;
    int newton_steps;
    row r;
    std::vector<double> found;
  };
  variant variants[] = {{"optimize", tyche::optimize_algorithm::lbfgs, 20, {}, {}},
                        {"optimize_lbfgs_only", tyche::optimize_algorithm::lbfgs, 0, {}, {}},
                        {"optimize_bfgs_only", tyche::optimize_algorithm::bfgs, 0, {}, {}},
                        {"optimize_newton", tyche::optimize_algorithm::newton, 0, {}, {}}};
  for (int seed = 1; seed <= seeds; ++seed)
    for (variant& v : variants) {
      try {
        start = std::chrono::steady_clock::now();
        const tyche::optimize_result o = tyche::optimize(
            m, {.algorithm = v.algorithm, .seed = static_cast<std::uint64_t>(seed), .newton_steps = v.newton_steps});
        v.r.seconds += since(start) / n;
        v.r.gradients += static_cast<double>(o.gradient_evaluations) / n;
        v.found.push_back(o.log_density);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "  %s seed %d: %s\n", v.name, seed, e.what());
        v.found.push_back(-INFINITY);
      }
    }
  double best = -INFINITY;
  for (const variant& v : variants)
    for (double x : v.found) best = std::max(best, x);
  try {
    best = std::max(best, tyche::optimize(m, {.iterations = 100000, .tol_obj = 1e-30, .tol_rel_obj = 1e-10,
                                              .tol_rel_grad = 1e-10, .tol_param = 1e-30})
                              .log_density);
  } catch (const std::exception&) {
  }
  auto fraction_at_mode = [&](const std::vector<double>& found) {
    int at_mode = 0;
    for (double v : found) at_mode += v >= best - 0.01 ? 1 : 0;
    return static_cast<double>(at_mode) / static_cast<double>(found.size());
  };
  for (variant& v : variants) {
    v.r.max_z = v.r.sd_ratio = v.r.pareto_k = std::nan("");
    v.r.reached = fraction_at_mode(v.found);
    print(name, v.name, seeds, v.r);
  }
  pf.typical = paths > 0 ? static_cast<double>(typical) / paths : std::nan("");
  pf.reached = paths > 0 ? static_cast<double>(reached) / paths : std::nan("");
  vi.pareto_k = la.pareto_k = std::nan("");
  print(name, "pathfinder", seeds, pf);
  init.seconds = pf.seconds;
  init.gradients = pf.gradients;
  init.max_z = init.sd_ratio = init.pareto_k = std::nan("");
  init.typical = points > 0 ? static_cast<double>(init_typical) / points : std::nan("");
  init.reached = points > 0 ? static_cast<double>(init_reached) / points : std::nan("");
  print(name, "pathfinder_init", seeds, init);
  print(name, "advi", seeds, vi);
  print(name, "optimize+laplace", seeds, la);
}

}  // namespace

int main(int argc, char** argv) {
  namespace te = tyche_examples;
  int seeds = 10, nuts_iterations = 1000;
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      seeds = 2;
      nuts_iterations = 300;
    } else if (std::strncmp(argv[i], "--seeds=", 8) == 0 && std::atoi(argv[i] + 8) > 0) {
      seeds = std::atoi(argv[i] + 8);
    } else if (argv[i][0] == '-') {
      std::fprintf(stderr, "usage: %s [--quick] [--seeds=N] [posterior ...]\n", argv[0]);
      return 2;
    } else {
      only.emplace_back(argv[i]);
    }
  }
  auto wanted = [&](const char* name) { return only.empty() || std::find(only.begin(), only.end(), name) != only.end(); };
  try {
    std::printf("posterior,method,seeds,seconds,gradients,max_z,median_sd_ratio,pareto_k,typical,reached\n");
    const auto dir = te::posteriors_dir(__FILE__);
    auto data_of = [&](const char* p) { return tyche::read_json_data((dir / p / "data.json").string()); };
#define TYCHE_BENCH_POSTERIOR(folder, fn)                         \
  if (wanted(folder)) {                                           \
    const auto d = data_of(folder);                               \
    const auto p = te::fn(d);                                     \
    run(folder, p.model, dir / folder, seeds, nuts_iterations);   \
  }
    TYCHE_BENCH_POSTERIOR("eight_schools-eight_schools_noncentered", eight_schools_noncentered)
    TYCHE_BENCH_POSTERIOR("kidiq-kidscore_interaction", kidiq_kidscore_interaction)
    TYCHE_BENCH_POSTERIOR("arK-arK", ark)
    TYCHE_BENCH_POSTERIOR("mesquite-logmesquite", mesquite_logmesquite)
    TYCHE_BENCH_POSTERIOR("sblrc-blr", sblrc_blr)
    TYCHE_BENCH_POSTERIOR("diamonds-diamonds", diamonds)
    TYCHE_BENCH_POSTERIOR("low_dim_gauss_mix-low_dim_gauss_mix", low_dim_gauss_mix)
    TYCHE_BENCH_POSTERIOR("garch-garch11", garch11)
    TYCHE_BENCH_POSTERIOR("gp_pois_regr-gp_pois_regr", gp_pois_regr)
#undef TYCHE_BENCH_POSTERIOR
  } catch (const std::exception& e) {
    std::fprintf(stderr, "inference: %s\n", e.what());
    return 1;
  }
  return 0;
}
