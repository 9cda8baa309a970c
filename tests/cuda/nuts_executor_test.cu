// tests/cuda/nuts_executor_test.cu — nuts() with the executor tyche::cuda on a GPU: the model
// written with the model API (examples/quickstart.cpp's eight schools), the same call as on the
// CPU. Checks:
//   1. the first 20 transitions of 64 chains (no warm-up: the step size is the host's) match the
//      emulated executor (the same code on the host, which is bit for bit the CPU executor's
//      scalar path) to 1e-9 — the device's exp/log differ from the host's in the last bits;
//   2. 256 chains × (1000 warm-up + 1000 draws) against the posteriordb reference
//      (shared/posteriors/eight_schools-eight_schools_noncentered): each quantity's mean within
//      4 combined standard errors, its sd within 10 %;
//   3. 100,000 chains × (150 + 50) run to completion: every chain has its 50 draws, all finite;
//   4. a log density that is NaN beyond x = 1.5 gives divergences and no draw beyond 1.5;
//   5. asking for more device memory than there is gives an error naming the chains and bytes;
//   6. a matvec regression (a data matrix on the device) with the diagonal and the dense metric:
//      posterior means against the emulation's within 4 standard errors.
// Exits 77 (ctest: skipped) without a GPU. The reference directory is found upwards from this
// file, or at $TYCHE_SHARED (the shared/ folder).
#include <cuda_runtime.h>

#include <tyche/tyche.hpp>

#include "support/eight_schools.hpp"
#include "support/reference_summary.hpp"
#include "support/small_regression.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace {

using tyche_test::eight_schools_model;

int failures = 0;
void check(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
  if (!ok) ++failures;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

void first_transitions() {
  const auto m = eight_schools_model();
  tyche::nuts_config cfg{.chains = 64, .warmup = 0, .draws = 20, .seed = 9};
  cfg.executor = tyche::cuda{};
  const auto gpu = tyche::nuts(m, cfg);
  cfg.executor = tyche::cuda{.emulate = true};
  const auto host = tyche::nuts(m, cfg);
  double worst = 0;
  int same = 0, total = 0, stats_differ = 0;
  bool sizes = gpu.values.size() == host.values.size();
  for (int c = 0; sizes && c < cfg.chains; ++c)
    sizes = gpu.values[c].size() == 20 * gpu.dim() && host.values[c].size() == gpu.values[c].size() &&
            gpu.stats[c].size() == 20 && host.stats[c].size() == 20;
  check(sizes, "first transitions: every chain has its 20 draws on both");
  if (!sizes) return;
  for (int c = 0; c < cfg.chains; ++c)
    for (int t = 0; t < 20; ++t)
      stats_differ += gpu.stats[c][t].n_leapfrog != host.stats[c][t].n_leapfrog ||
                      gpu.stats[c][t].divergent != host.stats[c][t].divergent;
  for (int c = 0; c < cfg.chains; ++c)
    for (std::size_t k = 0; k < gpu.values[c].size(); ++k) {
      const double a = gpu.values[c][k], b = host.values[c][k];
      worst = std::fmax(worst, std::fabs(a - b) / std::fmax(1.0, std::fabs(b)));
      same += a == b ? 1 : 0;
      ++total;
    }
  std::printf("     first 20 transitions of 64 chains: largest relative difference %.3g, %d of %d values equal\n", worst,
              same, total);
  check(worst < 1e-9 && stats_differ == 0,
        "first transitions: GPU and emulated executor agree to 1e-9, the same tree sizes and divergences");
}

void reference() {
  const auto dir = tyche_test::shared_dir(__FILE__) / "posteriors" / "eight_schools-eight_schools_noncentered";
  std::map<std::string, tyche_test::reference_row> ref;
  try {
    ref = tyche_test::read_reference_summary(dir);
  } catch (const std::exception& e) {
    check(false, std::string(e.what()) + " (set TYCHE_SHARED to the shared/ folder)");
    return;
  }
  const auto m = eight_schools_model();
  const auto t0 = std::chrono::steady_clock::now();
  const auto fit = tyche::nuts(m, {.chains = 256, .warmup = 1000, .draws = 1000, .seed = 20261126, .adapt_delta = 0.9,
                                   .executor = tyche::cuda{}});
  std::printf("     256 chains x 2000 iterations: %.2f s, %lld gradients, utilisation %.3f, %d divergences\n",
              seconds_since(t0), fit.gradient_evaluations, fit.utilization, fit.divergences());
  const auto mu = fit.parameter(0), tau = fit.parameter(1);
  auto against = [&](const std::string& name, const std::vector<std::vector<double>>& chains) {
    const tyche_test::reference_row& row = ref.at(name);
    const auto r = tyche_test::compare_to_reference(chains, row);
    char text[256];
    std::snprintf(text, sizeof text, "%s: mean %.4f (reference %.4f, z = %.2f), sd %.4f (reference %.4f), ESS %.0f",
                  name.c_str(), r.mean, row.mean, r.z, r.sd, row.sd, r.ess);
    check(r.within(row), text);
  };
  against("mu", mu);
  against("tau", tau);
  for (int j = 0; j < 8; ++j) {
    auto theta = fit.parameter(2 + static_cast<std::size_t>(j));
    for (std::size_t c = 0; c < theta.size(); ++c)
      for (std::size_t i = 0; i < theta[c].size(); ++i) theta[c][i] = mu[c][i] + tau[c][i] * theta[c][i];
    against("theta[" + std::to_string(j + 1) + "]", theta);
  }
  check(fit.divergences() < 0.01 * 256 * 1000, "few divergences");
}

// A matvec regression (a data matrix relocated to the device, a positive scale), with the
// diagonal and the dense metric: warm-up on the device, posterior means against the emulation's
// within 4 standard errors of their difference (chains are independent).
void regression_metrics() {
  const auto m = tyche_test::small_regression();
  for (const auto metric : {tyche::samplers::metric_kind::diagonal, tyche::samplers::metric_kind::dense}) {
    tyche::nuts_config cfg{.chains = 64, .warmup = 300, .draws = 200, .seed = 12, .metric = metric};
    cfg.executor = tyche::cuda{};
    const auto gpu = tyche::nuts(m, cfg);
    cfg.seed = 13;
    cfg.executor = tyche::cuda{.emulate = true};
    const auto host = tyche::nuts(m, cfg);
    bool ok = true;
    std::string worst;
    for (std::size_t k = 0; k < gpu.dim(); ++k) {
      auto moments = [&](const tyche::nuts_fit& f, double& mean, double& se) {
        std::vector<double> chain_means;
        for (const auto& c : f.parameter(k)) {
          double s = 0;
          for (double v : c) s += v;
          chain_means.push_back(s / static_cast<double>(c.size()));
        }
        mean = 0;
        for (double v : chain_means) mean += v / static_cast<double>(chain_means.size());
        double var = 0;
        for (double v : chain_means) var += (v - mean) * (v - mean) / static_cast<double>(chain_means.size() - 1);
        se = std::sqrt(var / static_cast<double>(chain_means.size()));
      };
      double mg, sg, mh, sh;
      moments(gpu, mg, sg);
      moments(host, mh, sh);
      const double z = std::fabs(mg - mh) / std::sqrt(sg * sg + sh * sh);
      ok = ok && z < 4;
      char text[160];
      std::snprintf(text, sizeof text, " %s %.4f vs %.4f (z %.2f)", gpu.names[k].c_str(), mg, mh, z);
      worst += text;
    }
    check(ok, std::string("regression, ") + (metric == tyche::samplers::metric_kind::dense ? "dense" : "diagonal") +
                  " metric: GPU and emulated posterior means agree:" + worst);
  }
}

void many_chains() {
  const auto m = eight_schools_model();
  const int chains = 100000;
  const auto t0 = std::chrono::steady_clock::now();
  const auto fit =
      tyche::nuts(m, {.chains = chains, .warmup = 150, .draws = 50, .seed = 3, .executor = tyche::cuda{}});
  std::printf("     100,000 chains x 200 iterations: %.2f s, %lld gradients, utilisation %.3f\n", seconds_since(t0),
              fit.gradient_evaluations, fit.utilization);
  bool all = static_cast<int>(fit.values.size()) == chains;
  for (int c = 0; all && c < chains; ++c) {
    all = fit.values[c].size() == 50 * fit.dim() && fit.stats[c].size() == 50;
    for (double v : fit.values[c]) all = all && std::isfinite(v);
  }
  check(all, "100,000 chains: every chain has 50 finite draws");
}

void nan_region() {
  using namespace tyche;
  auto x = normal<"x">(0.0, 1.0);
  const auto m = model(joint(x, target(lit<0> * sqrt(lit<3, 2> - x))));
  const auto fit = nuts(m, {.chains = 64, .warmup = 100, .draws = 200, .seed = 4, .executor = cuda{}});
  bool below = true;
  for (const auto& chain : fit.values)
    for (double v : chain) below = below && v < 1.5;
  check(fit.divergences() > 0 && below, "NaN region: " + std::to_string(fit.divergences()) +
                                             " divergences, every draw below 1.5");
}

void out_of_memory() {
  const auto m = eight_schools_model();
  std::string what = "no error";
  try {
    (void)tyche::nuts(m, {.chains = 1000, .warmup = 0, .draws = 10000000,
                          .executor = tyche::cuda{.draws_per_launch = 10000000}});
  } catch (const std::exception& e) {
    what = e.what();
  }
  std::printf("     %s\n", what.c_str());
  check(what.find("1000 chains need") != std::string::npos && what.find("bytes") != std::string::npos,
        "too many draws per launch: an error naming the chains and the bytes");
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: skipped\n");
    return 77;
  }
  try {
    first_transitions();
    regression_metrics();
    nan_region();
    out_of_memory();
    reference();
    many_chains();
  } catch (const std::exception& e) {
    std::printf("FAIL exception: %s\n", e.what());
    ++failures;
  }
  std::printf("%d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}
