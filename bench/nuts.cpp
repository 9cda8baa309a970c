// bench/nuts.cpp — NUTS end to end (bash bench/run.sh nuts [--quick]): for each model, one
// nuts() call of 4 chains, 1000 warm-up + 1000 draws each (--quick: 200 + 200), Stan's defaults
// otherwise, fixed seeds; prints one CSV row per model:
//
//   model,chains,draws,seconds,grad_evals,min_bulk_ess,min_tail_ess,ess_per_second,divergences,max_rhat
//
//   draws          draws per chain after warm-up
//   seconds        wall time of the nuts() call (warm-up and sampling of all chains; chains run on
//                  min(4, hardware threads) threads). stderr also gives the CPU time of the call
//                  (all threads), which a loaded machine inflates less.
//   grad_evals     nuts_fit::gradient_evaluations: the leapfrog gradients of all chains, warm-up
//                  included (Σ n_leapfrog__ over warm-up and sampling; the few gradients of the
//                  initial point and of the step-size searches are not counted). Chains run as
//                  SIMD lanes (nuts_config::lanes = 0: the build's batch width; printed on
//                  stderr with the lane utilisation); a lane slot evaluated for a finished chain
//                  is not counted.
//   min_bulk_ess   the smallest bulk-ESS over the parameters (Vehtari et al. 2021; as posterior)
//   min_tail_ess   the smallest tail-ESS
//   ess_per_second min_bulk_ess / seconds
//   divergences    divergent transitions after warm-up, all chains
//   max_rhat       the largest R̂ (max of bulk and tail) over the parameters
//
// Models: eight_schools_noncentered and kidiq-kidscore_interaction as posteriordb writes them
// (examples/posteriordb.hpp, data from ../shared/posteriors); logistic_regression, 10,000 rows ×
// 100 predictors, synthetic with a fixed seed (bench/synthetic.hpp, the data of the gradient and
// batching suites), alpha, beta ~ N(0, 1), y ~ bernoulli_logit(alpha + X beta);
// ar1_gaussian_100, the 100-d Gaussian with Σᵢⱼ = 0.9^|i−j| as its AR(1) factorisation
// (tests/samplers/gaussian_nuts_test.cpp).
//
// Usage: nuts [--quick] [--lanes=N] [model ...]: no model runs all four, in the order above;
// --lanes sets nuts_config::lanes (default 0). Progress goes to stderr. See docs/benchmarks.md.
#include "../examples/posteriordb.hpp"
#include "synthetic.hpp"

#include <tyche/tyche.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <string>
#include <vector>

namespace {

struct settings {
  int chains = 4, warmup = 1000, draws = 1000;
  int lanes = 0;  // nuts_config::lanes
};

template <class Model>
void run(const char* name, const Model& m, const settings& s, std::uint64_t seed) {
  std::fprintf(stderr, "nuts: %s (dimension %zu): %d chains, %d warm-up + %d draws ...\n", name, m.dim(),
               s.chains, s.warmup, s.draws);
  const tyche::nuts_config cfg{
      .chains = s.chains, .warmup = s.warmup, .draws = s.draws, .seed = seed, .executor = tyche::cpu{.lanes = s.lanes}};
  const auto start = std::chrono::steady_clock::now();
  const std::clock_t cpu_start = std::clock();
  const auto fit = tyche::nuts(m, cfg);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu_seconds = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  const long long grads = fit.gradient_evaluations;
  long long sampling_grads = 0;
  for (const auto& chain : fit.stats)
    for (const auto& st : chain) sampling_grads += st.n_leapfrog;
  std::fprintf(stderr,
               "nuts: %s: %.3f s wall, %.3f s CPU (all threads), %d lanes, utilisation %.3f, %lld gradients "
               "(%lld after warm-up)\n",
               name, seconds, cpu_seconds, fit.lanes, fit.utilization, grads, sampling_grads);
  double min_bulk = INFINITY, min_tail = INFINITY, max_rhat = 0;
  for (std::size_t k = 0; k < fit.dim(); ++k) {
    const auto chains = fit.parameter(k);
    min_bulk = std::min(min_bulk, tyche::ess_bulk(chains));
    min_tail = std::min(min_tail, tyche::ess_tail(chains));
    max_rhat = std::max(max_rhat, tyche::rhat(chains));
  }
  std::printf("%s,%d,%d,%.3f,%lld,%.0f,%.0f,%.1f,%d,%.4f\n", name, s.chains, s.draws, seconds, grads, min_bulk,
              min_tail, min_bulk / seconds, fit.divergences(), max_rhat);
  std::fflush(stdout);
}

bool wanted(const std::vector<std::string>& only, const char* name) {
  return only.empty() || std::find(only.begin(), only.end(), name) != only.end();
}

}  // namespace

int main(int argc, char** argv) {
  namespace te = tyche_examples;
  settings s;
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      s.warmup = 200;
      s.draws = 200;
    } else if (std::strncmp(argv[i], "--lanes=", 8) == 0) {
      s.lanes = std::atoi(argv[i] + 8);
    } else if (argv[i][0] == '-') {
      std::fprintf(stderr, "usage: %s [--quick] [--lanes=N] [eight_schools_noncentered|kidiq-kidscore_interaction|"
                           "logistic_regression|ar1_gaussian_100 ...]\n", argv[0]);
      return 2;
    } else {
      only.emplace_back(argv[i]);
    }
  }
  try {
    std::printf("model,chains,draws,seconds,grad_evals,min_bulk_ess,min_tail_ess,ess_per_second,divergences,max_rhat\n");
    std::fflush(stdout);
    const auto posteriors = te::posteriors_dir(__FILE__);
    if (wanted(only, "eight_schools_noncentered")) {
      const auto d = tyche::read_json_data((posteriors / "eight_schools-eight_schools_noncentered" / "data.json").string());
      const auto p = te::eight_schools_noncentered(d);
      run("eight_schools_noncentered", p.model, s, 1);
    }
    if (wanted(only, "kidiq-kidscore_interaction")) {
      const auto d = tyche::read_json_data((posteriors / "kidiq-kidscore_interaction" / "data.json").string());
      const auto p = te::kidiq_kidscore_interaction(d);
      run("kidiq-kidscore_interaction", p.model, s, 2);
    }
    if (wanted(only, "logistic_regression")) {
      using namespace tyche;
      const tyche_bench::logistic_data lr;
      auto alpha = normal<"alpha">(0.0, 1.0);
      auto beta = normal<"beta">(0.0, 1.0, shape<100>);
      const auto m = model(joint(alpha, beta,
                                 bernoulli_logit(alpha + matvec(matrix(lr.X.data(), lr.n, lr.p), beta))
                                     .observe(data(lr.y))));
      run("logistic_regression", m, s, 3);
    }
    if (wanted(only, "ar1_gaussian_100")) {
      using namespace tyche;
      constexpr std::size_t d = 100;
      const double rho = 0.9;
      std::vector<double> shift(d * d, 0.0), zero(d, 0.0), scale(d, std::sqrt(1 - rho * rho));
      for (std::size_t i = 1; i < d; ++i) shift[i * d + (i - 1)] = 1.0;  // (S x)_i = x_{i−1}
      scale[0] = 1.0;
      auto x = flat<"x">(shape<d>);
      const auto m = model(joint(x, normal(data(zero), data(scale))
                                        .observe(x - rho * matvec(matrix(shift.data(), d, d), x))));
      run("ar1_gaussian_100", m, s, 4);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nuts: %s\n", e.what());
    return 1;
  }
  return 0;
}
