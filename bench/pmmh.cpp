// bench/pmmh.cpp — particle marginal Metropolis–Hastings (samplers/smc/pmmh.hpp): wall-clock
// seconds of one run_pmmh with its chains on one thread, on threads of their own (chain_threads,
// the default), and on one thread with each sweep's particles on threads instead (threads).
//
//   pmmh [--quick] [--reps N] [--particles N]
//   pmmh --correlated [--quick]
//
// The model: a linear-Gaussian state-space model of 100 observations (x₁ ~ N(0, σ²/(1 − φ²)),
// xₜ = φ xₜ₋₁ + σ εₜ, yₜ ~ N(xₜ, 0.5²)), θ = (φ, log σ), a bootstrap particle filter of 200
// particles (--quick: 100), 4 chains × (200 + 400) iterations (--quick: 100 + 100), on the
// in-process engine (--particles N: N particles and the iterations divided by N / 200, to see the
// threads within a sweep where each observation has more work). Prints
//
//   rows,chain_threads,threads,seconds,speedup,same_draws
//
// seconds: the best of --reps runs (default 3, --quick 1); speedup: the first row's seconds over
// the row's; same_draws: whether the row's draws equal the first row's, bit for bit (they must:
// the results depend on neither setting).
//
// --correlated: correlated PMMH (pmmh_config::correlation) against plain PMMH on the same model
// with T = 100 and 400 observations (--quick: 100 only), 4 chains × (500 + 1000) iterations on
// the default chain_threads, seed 3; plain PMMH with particles near its sd(log Ẑ) ≈ 1.5 and
// target_acceptance 0.15, correlated PMMH with few particles and 0.3. Prints
//
//   T,correlation,particles,seconds,sd_log_z,sd_log_ratio,acceptance,min_ess,min_ess_per_second
//
// min_ess: the smaller bulk ESS of φ and log σ over the chains.
#include <tyche/diagnostics/convergence.hpp>
#include <tyche/samplers/smc.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace {
namespace smc = tyche::smc;

constexpr std::size_t length = 100;
constexpr double obs_sd = 0.5;

std::vector<double> simulate(std::size_t length = ::length) {
  tyche::counter_rng g(7, 0);
  const double phi = 0.8, sigma = 0.6;
  std::vector<double> y(length);
  double x = g.normal() * sigma / std::sqrt(1 - phi * phi);
  for (std::size_t t = 0; t < length; ++t) {
    if (t > 0) x = phi * x + sigma * g.normal();
    y[t] = x + obs_sd * g.normal();
  }
  return y;
}

double log_prior(std::span<const double> t) {
  if (!(t[0] > -1 && t[0] < 1)) return -std::numeric_limits<double>::infinity();
  return -0.5 * t[1] * t[1];
}

int correlated(bool quick) {
  std::printf("T,correlation,particles,seconds,sd_log_z,sd_log_ratio,acceptance,min_ess,min_ess_per_second\n");
  struct setting {
    std::size_t T;
    double rho;
    std::size_t particles;
  };
  const setting settings[] = {{100, 0, 200},   {100, 0, 400},   {100, 0.95, 25}, {100, 0.95, 50}, {100, 0.99, 25},
                              {100, 0.99, 50}, {400, 0, 800},   {400, 0.95, 50}, {400, 0.99, 50}, {400, 0.99, 100}};
  for (const setting& s : settings) {
    if (quick && s.T > 100) continue;
    const std::vector<double> y = simulate(s.T);
    const auto make = [&y](std::span<const double> theta) {
      const double phi = theta[0], sigma = std::exp(theta[1]);
      return smc::stepwise(
          0.0, y.size(),
          [phi, sigma, &y](double& x, std::size_t n, auto& g) {
            x = n == 0 ? smc::sample_normal(g, 0, sigma / std::sqrt(1 - phi * phi)) : smc::sample_normal(g, phi * x, sigma);
            return smc::normal_lpdf(y[n], x, obs_sd);
          },
          [](const double&, smc::predictions&) {});
    };
    smc::pmmh_config cfg{.particles = s.particles, .chains = 4, .warmup = 500, .iterations = 1000, .seed = 3,
                         .target_acceptance = s.rho > 0 ? 0.3 : 0.15, .correlation = s.rho};
    const auto t0 = std::chrono::steady_clock::now();
    const smc::pmmh_result r = smc::run_pmmh(make, log_prior, {0.5, 0.0}, cfg);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double ess = std::min(tyche::ess_bulk(r.samples(0), r.chains, r.iterations),
                                tyche::ess_bulk(r.samples(1), r.chains, r.iterations));
    double acceptance = 0;
    for (double a : r.acceptance) acceptance += a / static_cast<double>(r.acceptance.size());
    std::printf("%zu,%.2f,%zu,%.2f,%.2f,%.2f,%.3f,%.0f,%.1f\n", s.T, s.rho, s.particles, seconds, r.log_likelihood_sd,
                r.log_likelihood_ratio_sd, acceptance, ess, ess / seconds);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, correlated_rows = false;
  int reps = 3;
  std::size_t particles = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") quick = true;
    else if (a == "--correlated") correlated_rows = true;
    else if (a == "--reps" && i + 1 < argc) reps = std::stoi(argv[++i]);
    else if (a == "--particles" && i + 1 < argc) particles = std::stoul(argv[++i]);
    else {
      std::fprintf(stderr, "usage: pmmh [--quick] [--reps N] [--particles N] | pmmh --correlated [--quick]\n");
      return 2;
    }
  }
  if (correlated_rows) return correlated(quick);
  if (quick) reps = 1;
  const std::vector<double> y = simulate();
  const auto make = [&y](std::span<const double> theta) {
    const double phi = theta[0], sigma = std::exp(theta[1]);
    return smc::stepwise(
        0.0, length,
        [phi, sigma, &y](double& x, std::size_t n, tyche::counter_rng& g) {
          x = n == 0 ? smc::sample_normal(g, 0, sigma / std::sqrt(1 - phi * phi)) : smc::sample_normal(g, phi * x, sigma);
          return smc::normal_lpdf(y[n], x, obs_sd);
        },
        [](const double& x, smc::predictions& p) { p("x_last", x); });
  };
  smc::pmmh_config base{.particles = quick ? 100u : 200u, .chains = 4, .warmup = quick ? 100u : 200u,
                        .iterations = quick ? 100u : 400u, .seed = 3, .noise_runs = 0};
  if (particles > 0) {  // as many particle steps as 200 particles × the iterations above, or more
    const std::size_t scale = std::max<std::size_t>(1, particles / 200);
    base.particles = particles;
    base.warmup = std::max<std::size_t>(10, base.warmup / scale);
    base.iterations = std::max<std::size_t>(10, base.iterations / scale);
  }
  struct setting {
    std::size_t chain_threads, threads;
  };
  const setting settings[] = {{1, 1}, {0, 1}, {1, 2}};
  std::printf("rows,chain_threads,threads,seconds,speedup,same_draws\n");
  double first = 0;
  std::vector<double> first_draws;
  for (const setting& s : settings) {
    smc::pmmh_config cfg = base;
    cfg.chain_threads = s.chain_threads;
    cfg.threads = s.threads;
    double best = std::numeric_limits<double>::infinity();
    smc::pmmh_result r;
    for (int k = 0; k < reps; ++k) {
      const auto t0 = std::chrono::steady_clock::now();
      r = smc::run_pmmh(make, log_prior, {0.5, 0.0}, cfg);
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    if (first_draws.empty()) {
      first = best;
      first_draws = r.draws;
    }
    std::printf("%zu,%zu,%zu,%.3f,%.2f,%s\n", cfg.particles, r.chain_threads, s.threads, best, first / best,
                r.draws == first_draws ? "yes" : "no");
  }
  return 0;
}
