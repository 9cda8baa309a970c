// bench/adapt.cpp — warm-up schemes against each other (bash bench/run.sh adapt [--quick]):
// Stan's (the metric from the draws' variances in each window) and nutpie's estimator
// (√(var θ / var ∇log p) in the same windows: nuts_config::metric_estimator =
// draws_and_gradients), on the nine shared posteriors and a 100-d AR(1) Gaussian
// (Σᵢⱼ = 0.9^|i−j|), 4 chains × (1000 warm-up + 1000 draws) and × (300 + 1000), seeds 1 … 10
// (--quick: 3 seeds). The measure is issue 19's: the smallest bulk-ESS over the parameters per
// gradient evaluation, warm-up gradients included. One CSV row per posterior, warm-up and
// scheme, and a ratio row per posterior and warm-up:
//
//   posterior,warmup,scheme,seeds,median_ess_per_gradient,median_gradients,median_min_ess
//   posterior,warmup,ratio,seeds,<median over seeds of draws_and_gradients / draws>,,
//
// The seeds are paired (the same seed runs both schemes). The last rows, posterior "all",
// give the median over the posteriors of the per-posterior ratios. Progress on stderr.
#include "../examples/posteriordb.hpp"

#include <tyche/tyche.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <string>
#include <vector>

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct outcome {
  double ess_per_gradient = 0, gradients = 0, min_ess = 0;
};

template <class Model>
outcome run_once(const Model& m, int warmup, tyche::samplers::metric_estimator scheme, std::uint64_t seed,
                 int max_depth) {
  tyche::nuts_config cfg{.chains = 4, .warmup = warmup, .draws = 1000, .seed = seed, .max_depth = max_depth};
  cfg.metric_estimator = scheme;
  const tyche::nuts_fit fit = tyche::nuts(m, cfg);
  double min_ess = INFINITY;
  for (std::size_t k = 0; k < fit.dim(); ++k) {
    const double e = tyche::ess_bulk(fit.parameter(k));
    if (std::isfinite(e)) min_ess = std::min(min_ess, e);
  }
  outcome o;
  o.min_ess = min_ess;
  o.gradients = static_cast<double>(fit.gradient_evaluations);
  o.ess_per_gradient = min_ess / o.gradients;
  return o;
}

std::map<int, std::vector<double>> all_ratios;  // warm-up → the posteriors' median ratios

template <class Model>
void run(const char* name, const Model& m, int seeds, int max_depth = 10) {
  using tyche::samplers::metric_estimator;
  for (const int warmup : {1000, 300}) {
    std::map<metric_estimator, std::vector<outcome>> by;
    std::vector<double> ratios;
    for (int seed = 1; seed <= seeds; ++seed) {
      const auto s = static_cast<std::uint64_t>(seed);
      const outcome a = run_once(m, warmup, metric_estimator::draws, s, max_depth);
      const outcome b = run_once(m, warmup, metric_estimator::draws_and_gradients, s, max_depth);
      by[metric_estimator::draws].push_back(a);
      by[metric_estimator::draws_and_gradients].push_back(b);
      ratios.push_back(b.ess_per_gradient / a.ess_per_gradient);
      std::fprintf(stderr, "adapt: %s warmup %d seed %d: %.4g vs %.4g ESS/gradient\n", name, warmup, seed,
                   a.ess_per_gradient, b.ess_per_gradient);
    }
    for (const auto& [scheme, list] : by) {
      std::vector<double> epg, grads, ess;
      for (const auto& o : list) {
        epg.push_back(o.ess_per_gradient);
        grads.push_back(o.gradients);
        ess.push_back(o.min_ess);
      }
      std::printf("%s,%d,%s,%d,%.5g,%.0f,%.0f\n", name, warmup,
                  scheme == metric_estimator::draws ? "draws" : "draws_and_gradients", seeds, median(epg),
                  median(grads), median(ess));
    }
    const double r = median(ratios);
    all_ratios[warmup].push_back(r);
    std::printf("%s,%d,ratio,%d,%.3f,,\n", name, warmup, seeds, r);
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
    } else if (argv[i][0] == '-') {
      std::fprintf(stderr, "usage: %s [--quick] [posterior ...]\n", argv[0]);
      return 2;
    } else {
      only.emplace_back(argv[i]);
    }
  }
  auto wanted = [&](const char* n) { return only.empty() || std::find(only.begin(), only.end(), n) != only.end(); };
  try {
    std::printf("posterior,warmup,scheme,seeds,median_ess_per_gradient,median_gradients,median_min_ess\n");
    const auto dir = te::posteriors_dir(__FILE__);
    auto data_of = [&](const char* p) { return tyche::read_json_data((dir / p / "data.json").string()); };
#define TYCHE_BENCH_POSTERIOR(folder, fn, depth) \
  if (wanted(folder)) {                          \
    const auto d = data_of(folder);              \
    const auto p = te::fn(d);                    \
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
      run("ar1_gaussian_100", m, seeds);
    }
    for (const auto& [warmup, ratios] : all_ratios)
      std::printf("all,%d,ratio,%d,%.3f,,\n", warmup, static_cast<int>(ratios.size()), median(ratios));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "adapt: %s\n", e.what());
    return 1;
  }
  return 0;
}
