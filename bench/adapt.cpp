// bench/adapt.cpp — warm-up schemes against each other (bash bench/run.sh adapt [--quick]
// [--seeds=n] [--chains=n] [--schemes a,b,…] [posterior …]): Stan's diagonal (the metric from the draws' variances in each
// window; "draws", the default), nutpie's diagonal (√(var θ / var ∇log p) in the same windows:
// metric_estimator = draws_and_gradients; "gradients"; on nutpie's schedule, metric_estimator =
// nutpie: "nutpie"), nutpie's low-rank + diagonal (metric =
// low_rank; "low_rank") and Stan's dense (metric = dense; "dense"), and the diagonal and dense
// schemes with the chains' estimates pooled (nuts_config::pool_metric; "draws_pooled",
// "gradients_pooled", "nutpie_pooled", "dense_pooled", "low_rank_pooled"), and Stan's diagonal without
// restart_stuck_chains ("draws_no_restart": the chains do not meet at the windows' ends), on the nine shared posteriors
// and a 100-d AR(1) Gaussian (Σᵢⱼ = 0.9^|i−j|) and 100-d and 600-d Gaussians with a diagonal
// covariance (diag_gaussian_100, diag_gaussian_600: nothing for a low-rank metric to find), 4 chains × (1000 warm-up + 1000 draws) and
// × (300 + 1000), seeds 1 … 10 (--quick: 3 seeds). The measure is issue 19's: the smallest
// bulk-ESS over the parameters per gradient evaluation, warm-up gradients included; seconds are
// wall-clock per run, and the ESS per second the smallest bulk-ESS over them (run it on an
// otherwise idle machine). One CSV row per posterior, warm-up and scheme, and a ratio row per
// posterior, warm-up and scheme other than Stan's:
//
//   posterior,warmup,scheme,seeds,median_ess_per_gradient,median_gradients,median_min_ess,median_seconds,median_ess_per_second,median_divergent,median_max_z,median_max_sd_error,seeds_off_reference,total_seconds
//   posterior,warmup,<scheme>/draws,seeds,<median over seeds of the scheme's / Stan's ESS per gradient>,,,,<… per second>,,,,,<total seconds / Stan's>
//
// total_seconds sums the nuts() calls' wall-clock seconds (the schemes alternate run by run,
// seed by seed; median_seconds is nuts_fit::seconds, the executor's part); its ratio is steadier than the median of per-run ratios for runs of milliseconds — what
// `--chains 16 --schemes draws,draws_no_restart` uses to price restart_stuck_chains' check.
//
// An ESS-per-gradient gain is no gain if the draws are wrong, so every run is also compared with
// the posterior's reference (shared/posteriors/<name>/reference_summary.csv), parameter by
// parameter where the reference has the parameter's name, as the tests compare
// (tests/support/reference_summary.hpp): z = |mean − ref.mean| / (ref.sd · √(1/ESS + 1/10000))
// and |sd / ref.sd − 1|. median_max_z and median_max_sd_error are the medians over seeds of each
// run's largest; seeds_off_reference counts the runs with some parameter at z ≥ 4 or an sd off
// by 10 % or more (the tests' limits), or a NaN. Only parameters the reference names are
// compared: eight schools' mu and tau (the reference reports theta, derived), gp_pois_regr's rho
// and alpha (it reports f, derived; tests/samplers compares f too), every parameter elsewhere.
//
// The seeds are paired (the same seed runs every scheme). The last rows, posterior "all", give
// the median over the posteriors of the per-posterior ratios. Progress on stderr.
#include "../examples/posteriordb.hpp"
#include "reference_summary.hpp"

#include <tyche/tyche.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <exception>
#include <filesystem>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct outcome {
  double ess_per_gradient = 0, gradients = 0, min_ess = 0, seconds = 0, ess_per_second = 0;
  double divergent = 0;  // the fraction of the draws' transitions that diverged
  double call_seconds = 0;  // the nuts() call's wall-clock seconds (total_seconds)
  // Against the reference (NaN without one): the largest z and |sd / ref.sd − 1| over the
  // parameters the reference names.
  double max_z = std::nan(""), max_sd_error = std::nan("");
};

// The posterior's reference_summary.csv: name → (mean, sd); empty when the posterior has none.
std::map<std::string, std::pair<double, double>> reference;

struct scheme {
  const char* name;
  tyche::samplers::metric_kind metric;
  tyche::samplers::metric_estimator estimator;
  bool pooled = false;  // nuts_config::pool_metric
  bool restart = true;  // nuts_config::restart_stuck_chains
};
const scheme all_schemes[] = {
    {"draws", tyche::samplers::metric_kind::diagonal, tyche::samplers::metric_estimator::draws},
    {"gradients", tyche::samplers::metric_kind::diagonal, tyche::samplers::metric_estimator::draws_and_gradients},
    {"nutpie", tyche::samplers::metric_kind::diagonal, tyche::samplers::metric_estimator::nutpie},
    {"low_rank", tyche::samplers::metric_kind::low_rank, tyche::samplers::metric_estimator::draws},
    {"dense", tyche::samplers::metric_kind::dense, tyche::samplers::metric_estimator::draws},
    {"draws_pooled", tyche::samplers::metric_kind::diagonal, tyche::samplers::metric_estimator::draws, true},
    {"gradients_pooled", tyche::samplers::metric_kind::diagonal,
     tyche::samplers::metric_estimator::draws_and_gradients, true},
    {"nutpie_pooled", tyche::samplers::metric_kind::diagonal, tyche::samplers::metric_estimator::nutpie, true},
    {"dense_pooled", tyche::samplers::metric_kind::dense, tyche::samplers::metric_estimator::draws, true},
    {"low_rank_pooled", tyche::samplers::metric_kind::low_rank, tyche::samplers::metric_estimator::draws, true},
    // Stan's diagonal without restart_stuck_chains: the chains do not meet at each window's end
    // (draws the same as "draws" where no chain is stuck: the ratio of seconds is the meetings').
    {"draws_no_restart", tyche::samplers::metric_kind::diagonal, tyche::samplers::metric_estimator::draws, false, false},
};
std::vector<scheme> schemes(std::begin(all_schemes), std::begin(all_schemes) + 2);  // --schemes
int chains = 4;                                                                       // --chains

template <class Model>
outcome run_once(const Model& m, int warmup, const scheme& sc, std::uint64_t seed, int max_depth) {
  tyche::nuts_config cfg{.chains = chains, .warmup = warmup, .draws = 1000, .seed = seed, .max_depth = max_depth};
  cfg.metric = sc.metric;
  cfg.metric_estimator = sc.estimator;
  cfg.pool_metric = sc.pooled;
  cfg.restart_stuck_chains = sc.restart;
  const auto start = std::chrono::steady_clock::now();
  const tyche::nuts_fit fit = tyche::nuts(m, cfg);
  const double call_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double min_ess = INFINITY;
  outcome o;
  for (std::size_t k = 0; k < fit.dim(); ++k) {
    const auto chains = fit.parameter(k);
    const double e = tyche::ess_bulk(chains);
    if (std::isfinite(e)) min_ess = std::min(min_ess, e);
    const auto ref = reference.find(fit.names[k]);
    if (ref == reference.end()) continue;
    double n = 0, mean = 0, m2 = 0;
    for (const auto& c : chains)
      for (const double v : c) {
        n += 1;
        const double delta = v - mean;
        mean += delta / n;
        m2 += delta * (v - mean);
      }
    const double sd = std::sqrt(m2 / (n - 1));
    double z = std::fabs(mean - ref->second.first) / (ref->second.second * std::sqrt(1 / e + 1.0 / 10000));
    double sd_error = std::fabs(sd / ref->second.second - 1);
    if (!(z >= 0)) z = INFINITY;  // NaN draws or ESS (a constant chain): off, as the tests would say
    if (!(sd_error >= 0)) sd_error = INFINITY;
    o.max_z = std::isnan(o.max_z) ? z : std::max(o.max_z, z);
    o.max_sd_error = std::isnan(o.max_sd_error) ? sd_error : std::max(o.max_sd_error, sd_error);
  }
  o.min_ess = min_ess;
  o.gradients = static_cast<double>(fit.gradient_evaluations);
  o.ess_per_gradient = min_ess / o.gradients;
  o.seconds = fit.seconds;
  o.ess_per_second = min_ess / fit.seconds;
  o.divergent = static_cast<double>(fit.divergences()) / (static_cast<double>(fit.chains) * fit.draws);
  o.call_seconds = call_seconds;
  return o;
}

std::map<std::pair<int, std::string>, std::vector<double>> all_ratios, all_time_ratios;  // (warm-up, scheme) → per posterior

template <class Model>
void run(const char* name, const Model& m, int seeds, int max_depth = 10) {
  for (const int warmup : {1000, 300}) {
    std::vector<std::vector<outcome>> by(schemes.size());
    for (int seed = 1; seed <= seeds; ++seed) {
      std::fprintf(stderr, "adapt: %s warmup %d seed %d:", name, warmup, seed);
      for (std::size_t k = 0; k < schemes.size(); ++k) {
        by[k].push_back(run_once(m, warmup, schemes[k], static_cast<std::uint64_t>(seed), max_depth));
        std::fprintf(stderr, " %s %.4g", schemes[k].name, by[k].back().ess_per_gradient);
      }
      std::fprintf(stderr, " ESS/gradient\n");
    }
    for (std::size_t k = 0; k < schemes.size(); ++k) {
      std::vector<double> epg, grads, ess, secs, eps, divergent, max_z, max_sd_error, ratios, time_ratios;
      int off = 0;
      for (std::size_t i = 0; i < by[k].size(); ++i) {
        const outcome& o = by[k][i];
        epg.push_back(o.ess_per_gradient);
        grads.push_back(o.gradients);
        ess.push_back(o.min_ess);
        secs.push_back(o.seconds);
        eps.push_back(o.ess_per_second);
        divergent.push_back(o.divergent);
        if (!std::isnan(o.max_z)) {
          max_z.push_back(o.max_z);
          max_sd_error.push_back(o.max_sd_error);
          off += o.max_z >= 4 || o.max_sd_error >= 0.10 ? 1 : 0;
        }
        ratios.push_back(o.ess_per_gradient / by[0][i].ess_per_gradient);
        time_ratios.push_back(o.ess_per_second / by[0][i].ess_per_second);
      }
      double total = 0, total_first = 0;
      for (std::size_t i = 0; i < by[k].size(); ++i) {
        total += by[k][i].call_seconds;
        total_first += by[0][i].call_seconds;
      }
      std::printf("%s,%d,%s,%d,%.5g,%.0f,%.0f,%.3g,%.4g,%.4f,", name, warmup, schemes[k].name, seeds, median(epg),
                  median(grads), median(ess), median(secs), median(eps), median(divergent));
      if (max_z.empty()) std::printf(",,,%.4g\n", total);  // no reference
      else std::printf("%.2f,%.3f,%d,%.4g\n", median(max_z), median(max_sd_error), off, total);
      if (k == 0) continue;
      const double r = median(ratios), rt = median(time_ratios);
      all_ratios[{warmup, schemes[k].name}].push_back(r);
      all_time_ratios[{warmup, schemes[k].name}].push_back(rt);
      std::printf("%s,%d,%s/%s,%d,%.3f,,,,%.3f,,,,,%.3f\n", name, warmup, schemes[k].name, schemes[0].name, seeds, r, rt,
                  total / total_first);
    }
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  namespace te = tyche_examples;
  int seeds = 10;
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      seeds = 3;
    } else if (std::strcmp(argv[i], "--seeds") == 0 && i + 1 < argc) {
      seeds = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--chains") == 0 && i + 1 < argc) {
      chains = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--schemes") == 0 && i + 1 < argc) {
      schemes.clear();
      std::string list = argv[++i];
      for (std::size_t at = 0; at <= list.size();) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        const std::string name = list.substr(at, comma - at);
        const auto it = std::find_if(std::begin(all_schemes), std::end(all_schemes),
                                     [&](const scheme& s) { return name == s.name; });
        if (it == std::end(all_schemes)) {
          std::fprintf(stderr, "adapt: unknown scheme '%s' (draws, gradients, nutpie, low_rank, dense, draws_pooled, gradients_pooled, nutpie_pooled, dense_pooled, low_rank_pooled, draws_no_restart)\n", name.c_str());
          return 2;
        }
        schemes.push_back(*it);
        at = comma + 1;
      }
      if (schemes.front().name != std::string("draws")) schemes.insert(schemes.begin(), all_schemes[0]);
    } else if (argv[i][0] == '-') {
      std::fprintf(stderr, "usage: %s [--quick] [--seeds n] [--chains n] [--schemes draws,gradients,nutpie,low_rank,dense,draws_pooled,gradients_pooled,nutpie_pooled,dense_pooled,low_rank_pooled,draws_no_restart] [posterior ...]\n",
                   argv[0]);
      return 2;
    } else {
      only.emplace_back(argv[i]);
    }
  }
  auto wanted = [&](const char* n) { return only.empty() || std::find(only.begin(), only.end(), n) != only.end(); };
  try {
    std::printf(
        "posterior,warmup,scheme,seeds,median_ess_per_gradient,median_gradients,median_min_ess,median_seconds,"
        "median_ess_per_second,median_divergent,median_max_z,median_max_sd_error,seeds_off_reference,total_seconds\n");
    const auto dir = te::posteriors_dir(__FILE__);
    auto data_of = [&](const char* p) { return tyche::read_json_data((dir / p / "data.json").string()); };
#define TYCHE_BENCH_POSTERIOR(folder, fn, depth) \
  if (wanted(folder)) {                          \
    const auto d = data_of(folder);              \
    const auto p = te::fn(d);                    \
    reference = tyche_bench::read_reference_summary(dir / folder / "reference_summary.csv"); \
    run(folder, p.model, seeds, depth);          \
  }
    TYCHE_BENCH_POSTERIOR("eight_schools-eight_schools_noncentered", eight_schools_noncentered, 10)
    TYCHE_BENCH_POSTERIOR("kidiq-kidscore_interaction", kidiq_kidscore_interaction, 10)
    TYCHE_BENCH_POSTERIOR("arK-arK", ark, 10)
    TYCHE_BENCH_POSTERIOR("mesquite-logmesquite", mesquite_logmesquite, 10)
    TYCHE_BENCH_POSTERIOR("sblrc-blr", sblrc_blr, 10)
    TYCHE_BENCH_POSTERIOR("diamonds-diamonds", diamonds, 10)
    TYCHE_BENCH_POSTERIOR("low_dim_gauss_mix-low_dim_gauss_mix", low_dim_gauss_mix, 10)
    TYCHE_BENCH_POSTERIOR("garch-garch11", garch11, 10)
    TYCHE_BENCH_POSTERIOR("gp_pois_regr-gp_pois_regr", gp_pois_regr, 10)
#undef TYCHE_BENCH_POSTERIOR
    if (wanted("ar1_gaussian_100")) {
      using namespace tyche;
      constexpr std::size_t d = 100;
      const double rho = 0.9;
      std::vector<double> shift(d * d, 0.0), zero(d, 0.0), scale(d, std::sqrt(1 - rho * rho));
      for (std::size_t i = 1; i < d; ++i) shift[i * d + (i - 1)] = 1.0;
      scale[0] = 1.0;
      auto x = flat<"x">(shape<d>);
      const auto m = model(joint(x, normal(data(zero), data(scale)).observe(x - rho * matvec(matrix(shift.data(), d, d), x))));
      reference.clear();  // exact: every x[i] is N(0, 1) (a stationary AR(1) started at its stationary law)
      for (const auto& name : m.parameter_names()) reference[name] = {0.0, 1.0};
      run("ar1_gaussian_100", m, seeds);
    }
    // No correlation to find: Gaussians with a diagonal covariance, sds log-spaced from 0.1 to 10,
    // in 100 dimensions and in more than the longest window has draws (600 > 500): what the
    // low-rank estimate must leave alone (it made ~100 spurious directions at 600 and 1,000
    // before 2026-12-05), and where its O(min(d, 2n)³) work per window is not paid back.
    auto diagonal_gaussian = [&](auto dimension, const char* name) {
      if (!wanted(name)) return;
      using namespace tyche;
      constexpr std::size_t d = decltype(dimension)::value;
      static std::vector<double> zero(d, 0.0), scale(d);
      for (std::size_t i = 0; i < d; ++i)
        scale[i] = std::pow(10.0, -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(d - 1));
      auto x = flat<"x">(shape<d>);
      const auto m = model(joint(x, normal(data(zero), data(scale)).observe(x)));
      reference.clear();  // exact: x[i] ~ N(0, scale[i]²)
      const auto names = m.parameter_names();
      for (std::size_t i = 0; i < d; ++i) reference[names[i]] = {0.0, scale[i]};
      run(name, m, seeds);
    };
    diagonal_gaussian(std::integral_constant<std::size_t, 100>{}, "diag_gaussian_100");
    diagonal_gaussian(std::integral_constant<std::size_t, 600>{}, "diag_gaussian_600");
    for (const auto& [key, ratios] : all_ratios)
      std::printf("all,%d,%s/draws,%d,%.3f,,,,%.3f,,,,\n", key.first, key.second.c_str(), static_cast<int>(ratios.size()),
                  median(ratios), median(all_time_ratios[key]));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "adapt: %s\n", e.what());
    return 1;
  }
  return 0;
}
