// bench/stan/leapfrog_harness.cpp — Edward2's workload: milliseconds per leapfrog of NUTS on a
// Bayesian logistic regression of the covertype shape (N(0, 1) priors on the intercept and the 54
// coefficients; 581,012 rows, or the first --n of them), tyche against Stan, one process, one
// thread.
//
// Built by bench/stan/run.sh like nuts_harness.cpp, with
//   -DBENCH_STAN_MODEL='"<build>/logistic_regression.hpp"'   (K comes from the data)
//
//   leapfrog_harness --data FILE.bin --n N [--warmup W] [--draws D] [--seed K] [--chains 8,32]
//
// The data (bench/stan/write_covertype_data.cpp) are read once from the binary file
// (bench/stan/binary_data.hpp); Stan gets them as an in-memory array_var_context, tyche as the
// row-major matrix its twin (tyche_bench::covertype) views: the very same doubles. Before timing,
// the gradients of both at two points θ ~ uniform(−0.1, 0.1)^55 must agree to 1e-8 relative.
//
// One chain (both systems): NUTS with Stan's defaults (diagonal metric, adapt_delta 0.8, max tree
// depth 10, initial point uniform(−2, 2)), W warm-up iterations, then D draws. Timed: the D
// draws, from the end of the last warm-up iteration to the end of the last draw, by timestamps
// taken as each iteration ends (tyche: nuts_config::on_progress with refresh = 1; Stan: the
// sample writer, which receives each iteration's row); divided by the sum of n_leapfrog__ over
// the D draws. Times are CPU time of the process (CLOCK_PROCESS_CPUTIME_ID: the process runs one
// thread), as the compile rows, so that other jobs time-slicing the shared cores do not count;
// wall times go to stderr beside them (equal on an idle machine). tyche: tyche::nuts with chains = 1, lanes = 1 (scalar double), threads = 1. Stan:
// stan::services::sample::hmc_nuts_diag_e_adapt.
//
// Chains sharing a pass (tyche only): tyche::nuts with C chains, lanes = C, threads = 1, the same
// W + D iterations per chain (their draws differ from the one-chain run's: the lane path and the
// scalar path differ in the last bits of exp and log). The lockstep driver evaluates a group of lanes one SIMD batch at a
// time (lockstep.hpp, batch_evaluator): with the build's batch of 8 doubles (AVX-512), lanes = 8 is
// one pass over the data per step for 8 chains, and lanes = 32 is four passes of 8, one after the
// other. Timed (CPU time as above): the whole run (warm-up included: the chains are not in step, so there is no
// common "end of warm-up"), divided by the leapfrogs of all chains (fit.gradient_evaluations):
// the per-chain time per leapfrog, wall / (chains × leapfrogs per chain). The same figure for the
// one-chain run goes to stderr, to compare like with like.
//
// Output (stdout), ratio = stan / tyche (> 1 favours tyche):
//   edward2,covertype,N,1,<tyche ms>,<stan ms>,ms_per_leapfrog,<ratio>
//   edward2,covertype,N,C,<tyche ms per chain>,,ms_per_leapfrog,      for each C of --chains
// Details (leapfrogs, tree depths, step sizes, lane utilisation) on stderr.
#include BENCH_STAN_MODEL

#include <stan/callbacks/interrupt.hpp>
#include <stan/callbacks/logger.hpp>
#include <stan/callbacks/writer.hpp>
#include <stan/io/empty_var_context.hpp>
#include <stan/model/log_prob_grad.hpp>
#include <stan/services/sample/hmc_nuts_diag_e_adapt.hpp>

#include "binary_data.hpp"
#include "tyche_models.hpp"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

/// A moment on two clocks: wall (steady) and the process's CPU time.
struct stamp {
  std::chrono::steady_clock::time_point wall;
  double cpu;
  static stamp now() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return {std::chrono::steady_clock::now(), double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec)};
  }
};
/// Seconds from a to b: CPU time (first), wall time (second).
struct span_s {
  double cpu, wall;
};
span_s seconds(const stamp& a, const stamp& b) {
  return {b.cpu - a.cpu, std::chrono::duration<double>(b.wall - a.wall).count()};
}

/// Stan's sample writer: the time each iteration's row arrives, and the rows.
struct timed_writer : stan::callbacks::writer {
  std::vector<std::string> names;
  std::vector<std::vector<double>> rows;
  std::vector<stamp> at;
  double sampling_seconds = 0;
  void operator()(const std::vector<std::string>& n) override { names = n; }
  void operator()(const std::vector<double>& state) override {
    at.push_back(stamp::now());
    rows.push_back(state);
  }
  void operator()(const std::string& message) override {
    const auto pos = message.find("Elapsed Time:");
    const std::string rest = pos == std::string::npos ? message : message.substr(pos + 13);
    if (message.find("seconds (Sampling)") != std::string::npos) sampling_seconds = std::stod(rest);
  }
};

struct options {
  std::string data;
  std::size_t n = 0;
  int warmup = 30, draws = 10;
  unsigned long long seed = 20261121;
  std::vector<int> chains = {8, 32};
};

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--data") o.data = v;
    else if (k == "--n") o.n = std::stoul(v);
    else if (k == "--warmup") o.warmup = std::stoi(v);
    else if (k == "--draws") o.draws = std::stoi(v);
    else if (k == "--seed") o.seed = std::stoull(v);
    else if (k == "--chains") {
      o.chains.clear();
      std::stringstream ss(v);
      for (std::string c; std::getline(ss, c, ',');)
        if (!c.empty()) o.chains.push_back(std::stoi(c));
    } else throw std::invalid_argument("unknown option " + k);
  }
  if (argc % 2 == 0 || o.data.empty() || o.draws < 5 || o.warmup < 0)
    throw std::invalid_argument(
        "usage: leapfrog_harness --data FILE.bin [--n N] [--warmup W] [--draws D >= 5] "
        "[--seed K] [--chains 8,32]");
  return o;
}

}  // namespace

int main(int argc, char** argv) try {
  const options opt = parse(argc, argv);

  // ---- the data, once; Stan's copy first, then tyche takes the table ----
  auto t0 = stamp::now();
  stan_bench::logistic_table table = stan_bench::read_logistic_binary(opt.data, opt.n);
  const std::size_t n = table.n;
  std::unique_ptr<stan_model> sm;
  {
    const auto context = stan_bench::var_context_of(table);
    sm = std::make_unique<stan_model>(*context, 0, &std::cerr);
  }
  const auto posterior = tyche_bench::covertype(std::move(table.x), std::move(table.y));
  const auto& tm = posterior.model;
  std::fprintf(stderr, "edward2,covertype,%zu: data read and both models built in %.1f s\n", n,
               seconds(t0, stamp::now()).wall);

  // ---- the same function on both sides ----
  const std::size_t dim = tm.dim();
  if (sm->num_params_r() != dim) {
    std::fprintf(stderr, "edward2: tyche has %zu parameters, Stan %zu\n", dim, sm->num_params_r());
    return 1;
  }
  {
    std::mt19937_64 rng(opt.seed);
    double max_rel = 0;
    for (int k = 0; k < 2; ++k) {
      std::vector<double> theta = tm.initial_point(rng, 0.1), gt(dim), gs(dim);
      std::vector<int> params_i;
      (void)tm.log_prob_and_gradient(theta, gt);
      (void)stan::model::log_prob_grad<true, true>(*sm, theta, params_i, gs, &std::cerr);
      for (std::size_t i = 0; i < dim; ++i) {
        const double s = std::max(std::fabs(gt[i]), std::fabs(gs[i]));
        const double rel = s == 0 ? 0 : std::fabs(gt[i] - gs[i]) / s;
        max_rel = std::max(max_rel, rel);
      }
    }
    std::fprintf(stderr, "check,covertype,%zu,dim=%zu,max_rel_grad_diff=%.3g\n", n, dim, max_rel);
    if (!(max_rel <= 1e-8)) {
      std::fprintf(stderr, "edward2: the gradients of tyche and Stan differ; no rows\n");
      return 1;
    }
  }

  // ---- tyche, one chain, lanes = 1 ----
  double tyche_ms = 0, tyche_whole_ms = 0;
  {
    tyche::nuts_config cfg;
    cfg.chains = 1;
    cfg.executor = tyche::cpu{.threads = 1, .lanes = 1};
    cfg.warmup = opt.warmup;
    cfg.draws = opt.draws;
    cfg.seed = opt.seed;
    cfg.refresh = 1;
    std::vector<stamp> at;
    cfg.on_progress = [&](const tyche::nuts_progress&) { at.push_back(stamp::now()); };
    t0 = stamp::now();
    const auto fit = tyche::nuts(tm, cfg);
    const span_s whole = seconds(t0, stamp::now());
    const auto& stats = fit.stats[0];
    long long leapfrogs = 0;
    std::string depths;
    for (const auto& s : stats) {
      leapfrogs += s.n_leapfrog;
      depths += (depths.empty() ? "" : " ") + std::to_string(s.tree_depth);
    }
    const auto start = opt.warmup > 0 ? at[std::size_t(opt.warmup) - 1] : t0;
    const span_s sampling = seconds(start, at.back());
    tyche_ms = 1e3 * sampling.cpu / double(leapfrogs);
    tyche_whole_ms = 1e3 * whole.cpu / double(fit.gradient_evaluations);
    std::fprintf(stderr,
                 "edward2,covertype,%zu,tyche,1 chain: warm-up %d it %.1f s, %d draws %.2f s CPU "
                 "(%.2f s wall), %lld leapfrogs (tree depths %s), step size %.3g, %.3f ms per "
                 "leapfrog (%.3f wall); whole run %.1f s CPU / %lld leapfrogs = %.3f ms\n",
                 n, opt.warmup, seconds(t0, start).cpu, opt.draws, sampling.cpu, sampling.wall,
                 leapfrogs, depths.c_str(), fit.step_size[0], tyche_ms,
                 1e3 * sampling.wall / double(leapfrogs), whole.cpu, fit.gradient_evaluations,
                 tyche_whole_ms);
  }

  // ---- Stan, one chain ----
  double stan_ms = 0;
  {
    stan::io::empty_var_context init;
    stan::callbacks::interrupt interrupt;
    stan::callbacks::logger logger;
    stan::callbacks::writer init_writer, diagnostic_writer;
    timed_writer out;
    t0 = stamp::now();
    const int rc = stan::services::sample::hmc_nuts_diag_e_adapt(
        *sm, init, static_cast<unsigned int>(opt.seed), 1u, 2.0, opt.warmup, opt.draws, 1,
        /*save_warmup=*/true, /*refresh=*/0, 1.0, 0.0, 10, 0.8, 0.05, 0.75, 10.0, 75, 50, 25,
        interrupt, logger, init_writer, out, diagnostic_writer);
    const span_s whole = seconds(t0, stamp::now());
    if (rc != 0) throw std::runtime_error("Stan's sampler returned " + std::to_string(rc));
    if (out.names.size() < 7 || out.names[4] != "n_leapfrog__" || out.names[3] != "treedepth__" ||
        out.rows.size() != std::size_t(opt.warmup + opt.draws))
      throw std::runtime_error("unexpected Stan output");
    long long leapfrogs = 0, all = 0;
    std::string depths;
    for (std::size_t r = 0; r < out.rows.size(); ++r) {
      all += static_cast<long long>(out.rows[r][4]);
      if (r < std::size_t(opt.warmup)) continue;
      leapfrogs += static_cast<long long>(out.rows[r][4]);
      depths += (depths.empty() ? "" : " ") + std::to_string(int(out.rows[r][3]));
    }
    const auto start = opt.warmup > 0 ? out.at[std::size_t(opt.warmup) - 1] : t0;
    const span_s sampling = seconds(start, out.at.back());
    stan_ms = 1e3 * sampling.cpu / double(leapfrogs);
    std::fprintf(stderr,
                 "edward2,covertype,%zu,stan,1 chain: warm-up %d it %.1f s, %d draws %.2f s CPU "
                 "(%.2f s wall; Stan's own Elapsed Time: %.2f s), %lld leapfrogs (tree depths %s), "
                 "step size %.3g, %.3f ms per leapfrog (%.3f wall); whole run %.1f s CPU / %lld "
                 "leapfrogs = %.3f ms\n",
                 n, opt.warmup, seconds(t0, start).cpu, opt.draws, sampling.cpu, sampling.wall,
                 out.sampling_seconds, leapfrogs, depths.c_str(), out.rows.back()[2], stan_ms,
                 1e3 * sampling.wall / double(leapfrogs), whole.cpu, all,
                 1e3 * whole.cpu / double(all));
  }
  std::printf("edward2,covertype,%zu,1,%.3f,%.3f,ms_per_leapfrog,%.2f\n", n, tyche_ms, stan_ms,
              stan_ms / tyche_ms);
  std::fflush(stdout);

  // ---- tyche, C chains as lanes of one thread ----
  for (const int c : opt.chains) {
    tyche::nuts_config cfg;
    cfg.chains = c;
    cfg.executor = tyche::cpu{.threads = 1, .lanes = c};
    cfg.warmup = opt.warmup;
    cfg.draws = opt.draws;
    cfg.seed = opt.seed;
    t0 = stamp::now();
    const auto fit = tyche::nuts(tm, cfg);
    const span_s whole = seconds(t0, stamp::now());
    const double per_chain_ms = 1e3 * whole.cpu / double(fit.gradient_evaluations);
    const double passes = double(fit.gradient_evaluations) / fit.utilization /
                          double(tyche::simd_lane_width);
    std::fprintf(stderr,
                 "edward2,covertype,%zu,tyche,%d chains (lanes %d, %zu per SIMD batch, threads 1): "
                 "%.1f s CPU (%.1f s wall), %lld leapfrogs (%.0f per chain), lane utilisation "
                 "%.3f, %.0f batched evaluations of %.1f ms each; %.3f ms per chain per leapfrog "
                 "(%.3f wall; one chain, whole run: %.3f ms)\n",
                 n, c, fit.lanes, tyche::simd_lane_width, whole.cpu, whole.wall,
                 fit.gradient_evaluations, double(fit.gradient_evaluations) / c, fit.utilization,
                 passes, 1e3 * whole.cpu / passes, per_chain_ms,
                 1e3 * whole.wall / double(fit.gradient_evaluations), tyche_whole_ms);
    std::printf("edward2,covertype,%zu,%d,%.3f,,ms_per_leapfrog,\n", n, c, per_chain_ms);
    std::fflush(stdout);
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "leapfrog_harness: %s\n", e.what());
  return 1;
}
