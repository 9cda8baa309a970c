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
//      posterior means against the emulation's within 4 standard errors;
//   7. cuda_gradient::whole_device (every thread on each chain's gradient): a logistic regression
//      on 3,000 × 8 data (the default picks it), β of static and of run-time size, and eight
//      schools: the first 20 transitions against the emulation (8 parts added on the host) to
//      1e-9; 8 chains with warm-up: posterior means against 32 emulated chains of per_thread's within 4 SE;
//      chains sharing reads (5 tiles, groups of 3 chains; 1 tile with the workers' gradients in
//      local memory instead of shared) against the emulation to 1e-9, and the groups leaving the
//      draws bit for bit as they were; 5 worker blocks and, in a build with
//      TYCHE_CUDA_SEPARATE_CONTROLLERS=1 (not CI's), the controllers in a kernel of their own
//      (separate_controllers), against the emulation; the regression with X
//      stored as floats, per_thread and whole_device, against the emulation.
//   8. a model with a scan, a tabulate and multi_normal of a data matrix (folding moved what their
//      ops owned into the program's storage, so the view is bytes): the first 20 transitions of
//      32 chains against the emulation to 1e-9, and with whole_device in 3 tiles; a scan over a
//      sequence that is an expression of the parameters and a data sequence (stochastic
//      volatility), per_thread, likewise (not yet run on a GPU).
//   9. posteriordb's kidiq-kidscore_interaction (a 434 × 4 data matrix) against its reference,
//      and a 100-d correlated Gaussian (multi_normal<"x">, Σᵢⱼ = 0.9^|i−j|) against its exact
//      marginals: means within 4 combined SE (4 MCSE of 0), variances within 0.1 of 1 (sds within
//      about 5 %). The Gaussian runs one chain per thread (its data are read by a triangular
//      solve, which whole_device's workers would each repeat: model_t::split_values() is 0), 16
//      chains x (200 + 300) with the diagonal metric (~48,000 gradients per chain on the CPU);
//      each gradient is a serial O(d²) solve on one thread. With the dense metric (2026-12-04,
//      H200) it did not finish in 240 s: 200 warm-up iterations estimate a 100-d covariance from
//      25-75 draws, Stan's regularised estimate leaves most directions far too narrow, and trees
//      grow to depth 8-9 (~226,000 gradients per chain on the CPU). Not yet run on a GPU with the
//      diagonal metric. It runs last.
// Exits 77 (ctest: skipped) without a GPU. The reference directory is found upwards from this
// file, or at $TYCHE_SHARED (the shared/ folder).
#include <cuda_runtime.h>

#include <tyche/tyche.hpp>

#include "support/eight_schools.hpp"
#include "support/reference_summary.hpp"
#include "support/small_regression.hpp"
#include "../../examples/posteriordb/kidiq.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
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

// The first `draws` transitions (no warm-up) of a GPU fit and an emulated one: values to 1e-9
// relative, the same tree sizes and divergences.
void compare_first_transitions(const tyche::nuts_fit& gpu, const tyche::nuts_fit& host, int draws,
                               const std::string& what) {
  const int chains = gpu.chains;
  const std::size_t steps = static_cast<std::size_t>(draws);
  double worst = 0;
  int same = 0, total = 0, stats_differ = 0;
  bool sizes = gpu.values.size() == host.values.size() && static_cast<int>(gpu.values.size()) == chains;
  for (int c = 0; sizes && c < chains; ++c)
    sizes = gpu.values[c].size() == steps * gpu.dim() && host.values[c].size() == gpu.values[c].size() &&
            gpu.stats[c].size() == steps && host.stats[c].size() == steps;
  check(sizes, what + ": every chain has its draws on both");
  if (!sizes) return;
  for (int c = 0; c < chains; ++c)
    for (std::size_t t = 0; t < steps; ++t)
      stats_differ += gpu.stats[c][t].n_leapfrog != host.stats[c][t].n_leapfrog ||
                      gpu.stats[c][t].divergent != host.stats[c][t].divergent;
  for (int c = 0; c < chains; ++c)
    for (std::size_t k = 0; k < gpu.values[c].size(); ++k) {
      const double a = gpu.values[c][k], b = host.values[c][k];
      worst = std::fmax(worst, std::fabs(a - b) / std::fmax(1.0, std::fabs(b)));
      same += a == b ? 1 : 0;
      ++total;
    }
  std::printf("     %s, first %d transitions of %d chains: largest relative difference %.3g, %d of %d values equal\n",
              what.c_str(), draws, chains, worst, same, total);
  check(worst < 1e-9 && stats_differ == 0,
        what + ": GPU and emulated executor agree to 1e-9, the same tree sizes and divergences");
}

// Posterior means of two fits of independent chains: within 4 standard errors of their
// difference (the error of each mean from its chains' means); `text` lists them.
bool means_agree(const tyche::nuts_fit& a, const tyche::nuts_fit& b, std::string& text) {
  bool ok = true;
  for (std::size_t k = 0; k < a.dim(); ++k) {
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
    double ma, sa, mb, sb;
    moments(a, ma, sa);
    moments(b, mb, sb);
    const double z = std::fabs(ma - mb) / std::sqrt(sa * sa + sb * sb);
    ok = ok && z < 4;
    char line[160];
    std::snprintf(line, sizeof line, " %s %.4f vs %.4f (z %.2f)", a.names[k].c_str(), ma, mb, z);
    text += line;
  }
  return ok;
}

void first_transitions() {
  const auto m = eight_schools_model();
  tyche::nuts_config cfg{.chains = 64, .warmup = 0, .draws = 20, .seed = 9};
  cfg.executor = tyche::cuda{};
  const auto gpu = tyche::nuts(m, cfg);
  cfg.executor = tyche::cuda{.emulate = true};
  compare_first_transitions(gpu, tyche::nuts(m, cfg), 20, "eight schools");
  // The chains' initial points and step sizes found on the host's threads instead of the
  // device's (cuda::init_on_device = false): the same start, to the device's rounding.
  cfg.executor = tyche::cuda{.init_on_device = false};
  compare_first_transitions(gpu, tyche::nuts(m, cfg), 20, "eight schools, chains started on the host");
}

// A logistic regression on 3,000 × 8 synthetic data (27,000 values per evaluation: the default
// computes each chain's gradient with the whole device), β of a static or a run-time size (the
// workers' gradients in local memory, or in a device buffer).
struct logistic_data {
  std::size_t n = 3000, k = 8;
  std::vector<double> x, y;
  logistic_data() {
    std::mt19937_64 gen(20261127);
    std::normal_distribution<double> z;
    x.resize(n * k);
    for (auto& v : x) v = z(gen);
    y.resize(n);
    std::uniform_real_distribution<double> u;
    for (std::size_t i = 0; i < n; ++i) {
      double eta = 0.3;
      for (std::size_t j = 0; j < k; ++j) eta += x[i * k + j] * (0.5 - 0.1 * static_cast<double>(j));
      y[i] = u(gen) < 1 / (1 + std::exp(-eta)) ? 1.0 : 0.0;
    }
  }
};
const logistic_data& logistic() {
  static const logistic_data d;
  return d;
}
template <bool RunTimeSize>
auto logistic_model() {
  using namespace tyche;
  const logistic_data& d = logistic();
  auto alpha = normal<"alpha">(0.0, 5.0);
  auto beta = [] {
    if constexpr (RunTimeSize) return normal<"beta">(0.0, 1.0, shape_of(8));
    else return normal<"beta">(0.0, 1.0, shape<8>);
  }();
  return model(joint(alpha, beta, bernoulli_logit(alpha + matvec(matrix(d.x, d.n, d.k), beta)).observe(data(d.y))));
}

// cuda_gradient::whole_device: every thread of the GPU on each chain's gradient.
void whole_device() {
  const auto m = logistic_model<false>();
  {
    tyche::nuts_config cfg{.chains = 4, .warmup = 0, .draws = 20, .seed = 5};
    cfg.executor = tyche::cuda{};
    const auto gpu = tyche::nuts(m, cfg);
    check(gpu.lanes == 4, "logistic regression 3,000 x 8: the default computes the gradient with the whole device "
                          "(lanes = chains = " + std::to_string(gpu.lanes) + ")");
    cfg.executor = tyche::cuda{.emulate = true};
    const auto host = tyche::nuts(m, cfg);
    compare_first_transitions(gpu, host, 20, "whole_device, logistic regression");
    // The controllers in a kernel of their own beside the workers' (cuda::separate_controllers;
    // the default is one cooperative launch), and fewer worker blocks.
    // Each adds the parts in another order than the default (other workers), so its draws differ
    // from the default's in the last bits: a setting that were ignored would give them bit for bit.
#if TYCHE_CUDA_SEPARATE_CONTROLLERS
    cfg.executor = tyche::cuda{.gradient = tyche::cuda_gradient::whole_device, .separate_controllers = true};
    const auto separate = tyche::nuts(m, cfg);
    compare_first_transitions(separate, host, 20, "whole_device, separate controllers, logistic regression");
    check(separate.values != gpu.values, "whole_device: separate controllers run other workers (other sums)");
#endif
    cfg.executor = tyche::cuda{.gradient = tyche::cuda_gradient::whole_device, .worker_blocks = 5};
    const auto five = tyche::nuts(m, cfg);
    compare_first_transitions(five, host, 20, "whole_device, 5 worker blocks, logistic regression");
    check(five.values != gpu.values, "whole_device: 5 worker blocks add the parts in another order");
  }
  {
    // X stored as floats (matrix(const float*, ...)): copied to the device as floats, converted as
    // read; one chain per thread and whole_device against the emulation (written after the last
    // GPU run: not yet run on a GPU).
    using namespace tyche;
    static const std::vector<float> xf(logistic().x.begin(), logistic().x.end());
    const logistic_data& d = logistic();
    auto alpha = normal<"alpha">(0.0, 5.0);
    auto beta = normal<"beta">(0.0, 1.0, shape<8>);
    const auto mf = model(joint(alpha, beta, bernoulli_logit(alpha + matvec(matrix(xf, d.n, d.k), beta)).observe(data(d.y))));
    for (const auto gradient : {cuda_gradient::per_thread, cuda_gradient::whole_device}) {
      const std::string name = gradient == cuda_gradient::per_thread ? "per_thread" : "whole_device";
      nuts_config cfg{.chains = 4, .warmup = 0, .draws = 20, .seed = 10};
      cfg.executor = cuda{.gradient = gradient};
      const auto gpu = nuts(mf, cfg);
      cfg.executor = cuda{.emulate = true, .gradient = gradient};
      compare_first_transitions(gpu, nuts(mf, cfg), 20, name + ", logistic regression with X as floats");
    }
  }
  {
    const auto dynamic = logistic_model<true>();
    tyche::nuts_config cfg{.chains = 3, .warmup = 0, .draws = 20, .seed = 6};
    cfg.executor = tyche::cuda{.gradient = tyche::cuda_gradient::whole_device};
    const auto gpu = tyche::nuts(dynamic, cfg);
    cfg.executor = tyche::cuda{.emulate = true, .gradient = tyche::cuda_gradient::whole_device};
    compare_first_transitions(gpu, tyche::nuts(dynamic, cfg), 20, "whole_device, beta of run-time size");
  }
  {
    // Chains sharing each read: each worker's share in 5 tiles, 8 chains in groups of 3, 3, 2.
    tyche::nuts_config cfg{.chains = 8, .warmup = 0, .draws = 20, .seed = 7};
    cfg.executor = tyche::cuda{.gradient = tyche::cuda_gradient::whole_device, .tiles = 5, .chain_group = 3};
    const auto gpu = tyche::nuts(m, cfg);
    cfg.executor = tyche::cuda{.emulate = true, .gradient = tyche::cuda_gradient::whole_device};
    const auto host = tyche::nuts(m, cfg);
    compare_first_transitions(gpu, host, 20, "whole_device, 5 tiles, groups of 3 chains");
    // The same chains with other tiles and groups: the tiles change the order of the additions,
    // the groups do not.
    cfg.executor = tyche::cuda{.gradient = tyche::cuda_gradient::whole_device, .tiles = 5, .chain_group = 8};
    const auto regrouped = tyche::nuts(m, cfg);
    check(regrouped.values == gpu.values, "whole_device: the chains' groups do not change their draws");
    cfg.executor = tyche::cuda{.gradient = tyche::cuda_gradient::whole_device, .tiles = 1, .shared_gradient = false};
    compare_first_transitions(tyche::nuts(m, cfg), host, 20, "whole_device, 1 tile, gradients in local memory");
  }
  {
    const auto es = eight_schools_model();
    tyche::nuts_config cfg{.chains = 16, .warmup = 0, .draws = 20, .seed = 8};
    cfg.executor = tyche::cuda{.gradient = tyche::cuda_gradient::whole_device};
    const auto gpu = tyche::nuts(es, cfg);
    cfg.executor = tyche::cuda{.emulate = true, .gradient = tyche::cuda_gradient::whole_device};
    const auto host = tyche::nuts(es, cfg);
    compare_first_transitions(gpu, host, 20, "whole_device, eight schools");
#if TYCHE_CUDA_SEPARATE_CONTROLLERS
    cfg.executor = tyche::cuda{.gradient = tyche::cuda_gradient::whole_device, .separate_controllers = true};
    compare_first_transitions(tyche::nuts(es, cfg), host, 20, "whole_device, separate controllers, eight schools");
#endif
  }
  // Warm-up on the device: posterior means against one chain per thread's (other seeds), within 4
  // standard errors of their difference.
  tyche::nuts_config cfg{.chains = 8, .warmup = 300, .draws = 300, .seed = 21};
  cfg.executor = tyche::cuda{};
  const auto t0 = std::chrono::steady_clock::now();
  const auto gpu = tyche::nuts(m, cfg);
  std::printf("     whole_device, 8 chains x 600 iterations: %.2f s, %lld gradients, utilisation %.3f\n",
              seconds_since(t0), gpu.gradient_evaluations, gpu.utilization);
  cfg.seed = 22;
  cfg.executor = tyche::cuda{.emulate = true, .gradient = tyche::cuda_gradient::per_thread};
  cfg.chains = 32;
  const auto other = tyche::nuts(m, cfg);
  std::string worst_text;
  check(means_agree(gpu, other, worst_text), "whole_device, logistic regression: posterior means agree with "
                                             "per_thread's:" + worst_text);
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
    std::string worst;
    const bool ok = means_agree(gpu, host, worst);
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
  // Initial points drawn beyond 1.5 are drawn again, on the device as on the host (seed 10:
  // 5 of the first 16 chains' first draws; device_executor_test).
  nuts_config cfg{.chains = 64, .warmup = 0, .draws = 20, .seed = 10, .executor = cuda{}};
  const auto gpu = nuts(m, cfg);
  cfg.executor = cuda{.emulate = true};
  compare_first_transitions(gpu, nuts(m, cfg), 20, "NaN region, initial points drawn again");
  // A model no initial point can start: the host's message.
  auto y = normal<"y">(0.0, 1.0);
  const auto never = model(joint(y, target(lit<0> * sqrt(y * y - lit<5>))));
  std::string what;
  try {
    (void)nuts(never, {.chains = 64, .warmup = 10, .draws = 10, .seed = 1, .executor = cuda{}});
  } catch (const std::exception& e) {
    what = e.what();
  }
  check(what.find("chain 1") != std::string::npos && what.find("100 attempts") != std::string::npos,
        "no initial point: the host's message (" + what + ")");
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

// 9. Larger posteriors on the GPU, each with the executor's defaults.
void posteriors() {
  const auto dir = tyche_test::shared_dir(__FILE__) / "posteriors" / "kidiq-kidscore_interaction";
  try {
    const auto ref = tyche_test::read_reference_summary(dir);
    const auto p = tyche_examples::kidiq_kidscore_interaction(tyche::read_json_data((dir / "data.json").string()));
    const auto t0 = std::chrono::steady_clock::now();
    const auto fit = tyche::nuts(p.model, {.chains = 32, .warmup = 500, .draws = 500, .seed = 20261127,
                                           .executor = tyche::cuda{}});
    std::printf("     kidiq, 32 chains x 1000 iterations: %.2f s, %lld gradients, lanes %d, %d divergences\n",
                seconds_since(t0), fit.gradient_evaluations, fit.lanes, fit.divergences());
    for (std::size_t k = 0; k < fit.dim(); ++k) {
      const auto& row = ref.at(fit.names[k]);
      const auto r = tyche_test::compare_to_reference(fit.parameter(k), row);
      char text[256];
      std::snprintf(text, sizeof text, "kidiq %s: mean %.4f (reference %.4f, z = %.2f), sd %.4f (reference %.4f), ESS %.0f",
                    fit.names[k].c_str(), r.mean, row.mean, r.z, r.sd, row.sd, r.ess);
      check(r.within(row), text);
    }
  } catch (const std::exception& e) {
    check(false, std::string("kidiq: ") + e.what() + " (set TYCHE_SHARED to the shared/ folder)");
  }

  using namespace tyche;
  constexpr std::size_t d = 100;
  static std::vector<double> mu(d, 0.0), sigma(d * d);
  for (std::size_t i = 0; i < d; ++i)
    for (std::size_t j = 0; j < d; ++j)
      sigma[i * d + j] = std::pow(0.9, std::fabs(static_cast<double>(i) - static_cast<double>(j)));
  const auto m = model(joint(multi_normal<"x">(data(mu), matrix(sigma.data(), d, d))));
  const auto t0 = std::chrono::steady_clock::now();
  const auto fit = nuts(m, {.chains = 16, .warmup = 200, .draws = 300, .seed = 20261128, .executor = cuda{}});
  std::printf("     correlated Gaussian (d = 100), 16 chains x 500 iterations: %.2f s, %lld gradients, %d divergences\n",
              seconds_since(t0), fit.gradient_evaluations, fit.divergences());
  double worst_z = 0, worst_var = 0;
  for (std::size_t k = 0; k < fit.dim(); ++k) {
    const auto chains = fit.parameter(k);
    double mean = 0, var = 0, n = 0;
    for (const auto& c : chains)
      for (double v : c) { mean += v; n += 1; }
    mean /= n;
    for (const auto& c : chains)
      for (double v : c) var += (v - mean) * (v - mean) / (n - 1);
    worst_z = std::fmax(worst_z, std::fabs(mean) / tyche::mcse_mean(chains));
    worst_var = std::fmax(worst_var, std::fabs(var - 1.0));
  }
  char text[200];
  std::snprintf(text, sizeof text, "correlated Gaussian: largest |mean| / MCSE %.2f (< 4), largest |variance - 1| %.3f (< 0.1)",
                worst_z, worst_var);
  check(worst_z < 4 && worst_var < 0.1, text);
}

}  // namespace

// A model written as a program: an exponentially smoothed level by scan_states, a tabulated
// free term, and a multi_normal observation with a covariance matrix of data.
void programs() {
  using namespace tyche;
  static const std::vector<double> y{0.3, 0.9, 0.4, 1.6, 1.1, 0.7, 1.9, 1.4, 1.0, 2.2, 1.7, 1.3};
  static const std::vector<double> next(y.begin() + 1, y.end());
  static const std::vector<double> cov{1.0, 0.3, 0.1, 0.3, 2.0, 0.4, 0.1, 0.4, 1.5}, x3{0.2, -0.5, 1.1};
  auto phi = uniform<"phi">(0.0, 1.0);
  auto sigma = half_normal<"sigma">(1.0);
  auto mu = normal<"mu">(0.0, 2.0, shape<3>);
  auto level = scan_states([&](const auto& s, const auto& yt) { return phi * s + (1.0 - phi) * yt; }, 0.0, data(y));
  auto q = tabulate(y.size(), [&](const auto& i, const auto& yt) { return -square(yt - sigma * i * 0.1); }, data(y));
  const auto m = model(joint(phi, sigma, mu, normal(head(level, y.size() - 1), sigma).observe(data(next)),
                             target(0.01 * sum(q)), multi_normal(mu, matrix(cov, 3, 3)).observe(data(x3))));
  nuts_config cfg{.chains = 32, .warmup = 0, .draws = 20, .seed = 13};
  cfg.executor = cuda{};
  const auto gpu = nuts(m, cfg);
  cfg.executor = cuda{.emulate = true};
  compare_first_transitions(gpu, nuts(m, cfg), 20, "scan + tabulate + multi_normal");
  // The same model with every thread on each chain's gradient, in 3 tiles (a model with a
  // workspace and loops that are not sums: every part repeats them with a zero adjoint).
  cfg.executor = cuda{.gradient = cuda_gradient::whole_device, .tiles = 3};
  const auto tiled = nuts(m, cfg);
  cfg.executor = cuda{.emulate = true, .gradient = cuda_gradient::whole_device};
  compare_first_transitions(tiled, nuts(m, cfg), 20, "scan + tabulate + multi_normal, whole_device, 3 tiles");

  // A scan over a sequence that is an expression of the parameters (a latent innovation per
  // step, read from an operand) beside a data sequence: the non-centred stochastic volatility
  // model. The path whose host-only helpers broke check 8 on the device (2026-12-04).
  static const std::vector<double> r{0.8, -1.4, 0.3, 2.1, -0.2, 0.9, -0.6, 1.7}, shock{0.0, 0.1, -0.2, 0.0, 0.3, 0.0, -0.1};
  constexpr std::size_t T = 8;
  auto level_mu = normal<"level_mu">(0.0, 2.0);
  auto rho = uniform<"rho">(-1.0, 1.0);
  auto tau = half_normal<"tau">(1.0);
  auto z = std_normal<"z">(shape<T>);
  auto x1 = tau / sqrt(1.0 - square(rho)) * z[0];
  auto h = scan_states([&](const auto& x, const auto& zt, const auto& st) { return rho * x + tau * zt + st; }, x1,
                       tail(z, T - 1), data(shock));
  const auto sv =
      model(joint(level_mu, rho, tau, z, normal(0.0, exp(0.5 * (level_mu + append_row(x1, h)))).observe(data(r))));
  cfg.executor = cuda{};
  const auto sv_gpu = nuts(sv, cfg);
  cfg.executor = cuda{.emulate = true};
  compare_first_transitions(sv_gpu, nuts(sv, cfg), 20, "scan over a parameter expression and data");
}

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: skipped\n");
    return 77;
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each line as it is printed, also into a file
  try {
    first_transitions();
    programs();
    whole_device();
    regression_metrics();
    nan_region();
    out_of_memory();
    reference();
    many_chains();
    posteriors();
  } catch (const std::exception& e) {
    std::printf("FAIL exception: %s\n", e.what());
    ++failures;
  }
  std::printf("%d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}
