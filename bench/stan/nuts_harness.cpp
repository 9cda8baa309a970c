// bench/stan/nuts_harness.cpp — NUTS efficiency, tyche against Stan, one model, one process,
// one thread each.
//
// Built once per model by bench/stan/run.sh, like harness.cpp:
//   -DBENCH_STAN_MODEL='"<build>/<name>.hpp"'  -DBENCH_TYCHE_TWIN=<name>
//
//   nuts_harness --data FILE --name NAME --n N [--chains 4] [--warmup 1000] [--draws 1000]
//                [--seed 20261121]
//
// Both samplers with Stan's defaults: diagonal metric adapted in warm-up (windows 75/25/50),
// adapt_delta 0.8, max tree depth 10, initial step size 1, initial point uniform(−2, 2) on the
// unconstrained scale; the same seed number for both (different generators).
//   tyche: tyche::nuts(model, {chains, warmup, draws, seed, threads = 1}); the chains share the
//          one thread as SIMD lanes (tyche's default). Timed twice with the same seed: warm-up
//          + draws, and warm-up alone (draws = 0: the same warm-up, draws being a function of
//          the seed); sampling time = the difference.
//   Stan:  stan::services::sample::hmc_nuts_diag_e_adapt (what rstan::sampling and CmdStan
//          call), chains 1..CHAINS one after another on this thread, random_seed = seed,
//          chain = 1..CHAINS; warm-up and sampling times as Stan measures them (its
//          "Elapsed Time" lines), summed over the chains.
// Clock: the process's CPU time on both sides. Stan 2.21 measures its "Elapsed Time" with
// std::clock(), which on Linux (glibc) is clock_gettime(CLOCK_PROCESS_CPUTIME_ID); tyche's calls
// are timed with that same clock. The process runs one thread (tyche::nuts with threads = 1
// samples on the calling thread; Stan's service is single-threaded), so this is the CPU time of
// the sampling thread: on a machine shared with other jobs it does not count the time the thread
// waits for a core, for either system. Wall times go to stderr for reference.
// Short runs are repeated (the same seed, so the same draws) until about 2 s were spent, at most 5
// times, and the median times taken, for both systems.
// ESS: min over parameters (constrained scale) of the rank-normalised bulk ESS, computed by
// tyche::ess_bulk for both (it agrees with R's posterior 1.4.0 to 1e-14).
// Agreement: for every parameter z = |mean_tyche − mean_stan| / sqrt(mcse_tyche² + mcse_stan²)
// (tyche::mcse_mean); if the largest z exceeds 4 the rows are refused (exit status 1).
// Output (stdout); ratio = tyche / stan (a rate: > 1 favours tyche, as stan / tyche does for the
// time rows):
//   nuts,NAME,N,CHAINS,<ESS/s sampling>,<ESS/s sampling>,ess_per_s,<ratio>
//   nuts_total,NAME,N,CHAINS,<ESS/s warm-up + sampling>,<...>,ess_per_s,<ratio>
// and the details (times, ESS, gradients, divergences, z) on stderr.
#include BENCH_STAN_MODEL

#include <stan/callbacks/interrupt.hpp>
#include <stan/callbacks/logger.hpp>
#include <stan/callbacks/writer.hpp>
#include <stan/io/empty_var_context.hpp>
#include <stan/services/sample/hmc_nuts_diag_e_adapt.hpp>

#include "json_var_context.hpp"
#include "tyche_models.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include <time.h>

namespace {

/// Keeps the draws of one Stan chain and its timing lines.
struct draw_collector : stan::callbacks::writer {
  std::vector<std::string> names;
  std::vector<std::vector<double>> rows;
  double warmup_seconds = 0, sampling_seconds = 0;
  void operator()(const std::vector<std::string>& n) override { names = n; }
  void operator()(const std::vector<double>& state) override { rows.push_back(state); }
  void operator()(const std::string& message) override {
    const auto at = message.find("Elapsed Time:");
    const std::string rest = at == std::string::npos ? message : message.substr(at + 13);
    if (message.find("seconds (Warm-up)") != std::string::npos) warmup_seconds = std::stod(rest);
    if (message.find("seconds (Sampling)") != std::string::npos) sampling_seconds = std::stod(rest);
  }
};

struct side {
  double warmup_seconds = 0, sampling_seconds = 0;
  long long gradients = 0;
  int divergences = 0;
  std::vector<std::vector<std::vector<double>>> draws;  // [parameter][chain][draw]
  std::vector<double> mean, mcse, ess;
  double min_ess = 0;
  std::size_t min_ess_at = 0;
  void summarise() {
    for (const auto& chains : draws) {
      double sum = 0;
      std::size_t count = 0;
      for (const auto& c : chains)
        for (double v : c) {
          sum += v;
          ++count;
        }
      mean.push_back(sum / double(count));
      mcse.push_back(tyche::mcse_mean(chains));
      ess.push_back(tyche::ess_bulk(chains));
    }
    min_ess_at = std::size_t(std::min_element(ess.begin(), ess.end()) - ess.begin());
    min_ess = ess[min_ess_at];
  }
};

struct options {
  std::string data, name;
  long n = 0;
  int chains = 4, warmup = 1000, draws = 1000;
  unsigned long long seed = 20261121;
};

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--data") o.data = v;
    else if (k == "--name") o.name = v;
    else if (k == "--n") o.n = std::stol(v);
    else if (k == "--chains") o.chains = std::stoi(v);
    else if (k == "--warmup") o.warmup = std::stoi(v);
    else if (k == "--draws") o.draws = std::stoi(v);
    else if (k == "--seed") o.seed = std::stoull(v);
    else throw std::invalid_argument("unknown option " + k);
  }
  if (argc % 2 == 0 || o.data.empty() || o.name.empty() || o.chains < 1 || o.draws < 4)
    throw std::invalid_argument(
        "usage: nuts_harness --data FILE --name NAME --n N [--chains C] [--warmup W] "
        "[--draws D] [--seed K]");
  return o;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// The process's CPU time in seconds (the clock behind std::clock(), which Stan's "Elapsed Time"
/// uses, at full resolution).
double cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

double wall_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) try {
  const options opt = parse(argc, argv);
  const char* who = opt.name.c_str();

  // ---- tyche ----
  const tyche::data_file d = tyche::read_json_data(opt.data);
  const auto posterior = tyche_bench::BENCH_TYCHE_TWIN(d);
  tyche::nuts_config cfg;
  cfg.chains = opt.chains;
  cfg.warmup = opt.warmup;
  cfg.draws = opt.draws;
  cfg.seed = opt.seed;
  cfg.executor = tyche::cpu{.threads = 1};
  side ty;
  int reps = 1;
  double ty_wall = 0;  // wall seconds of the first warm-up + draws call (stderr only)
  {
    tyche::nuts_config warm = cfg;
    warm.draws = 0;
    std::vector<double> totals, warmups;
    double c0 = cpu_now(), w0 = wall_now();
    const auto fit = tyche::nuts(posterior.model, cfg);
    totals.push_back(cpu_now() - c0);
    ty_wall = wall_now() - w0;
    reps = std::clamp(int(std::ceil(2.0 / std::max(totals[0], 1e-3))), 1, 5);
    for (int r = 0; r < reps; ++r) {
      if (r > 0) {
        c0 = cpu_now();
        (void)tyche::nuts(posterior.model, cfg);
        totals.push_back(cpu_now() - c0);
      }
      c0 = cpu_now();
      (void)tyche::nuts(posterior.model, warm);
      warmups.push_back(cpu_now() - c0);
    }
    ty.warmup_seconds = median(warmups);
    ty.sampling_seconds = median(totals) - ty.warmup_seconds;
    ty.gradients = fit.gradient_evaluations;
    ty.divergences = fit.divergences();
    for (std::size_t k = 0; k < fit.dim(); ++k) ty.draws.push_back(fit.parameter(k));
    ty.summarise();
  }

  // ---- Stan ----
  const auto context = stan_bench::read_json_var_context(opt.data);
  stan_model sm(*context, 0, &std::cerr);
  side st;
  std::vector<std::string> stan_names;
  double st_wall = 0, st_cpu = 0;  // the last repetition's chains, whole calls (stderr only)
  {
    stan::io::empty_var_context init;
    stan::callbacks::interrupt interrupt;
    stan::callbacks::logger logger;  // silent
    stan::callbacks::writer init_writer, diagnostic_writer;
    const std::size_t dim = ty.draws.size();
    st.draws.assign(dim, std::vector<std::vector<double>>(std::size_t(opt.chains)));
    std::vector<double> warmups(std::size_t(reps), 0.0), samplings(std::size_t(reps), 0.0);
    for (int r = 1; r < reps; ++r) {  // timing only: the same seeds give the same draws
      for (int c = 0; c < opt.chains; ++c) {
        draw_collector out;
        stan::services::sample::hmc_nuts_diag_e_adapt(
            sm, init, static_cast<unsigned int>(opt.seed), static_cast<unsigned int>(c + 1), 2.0,
            opt.warmup, opt.draws, 1, true, 0, 1.0, 0.0, 10, 0.8, 0.05, 0.75, 10.0, 75, 50, 25,
            interrupt, logger, init_writer, out, diagnostic_writer);
        warmups[std::size_t(r)] += out.warmup_seconds;
        samplings[std::size_t(r)] += out.sampling_seconds;
      }
    }
    const double c0 = cpu_now(), w0 = wall_now();
    for (int c = 0; c < opt.chains; ++c) {
      draw_collector out;
      const int rc = stan::services::sample::hmc_nuts_diag_e_adapt(
          sm, init, static_cast<unsigned int>(opt.seed), static_cast<unsigned int>(c + 1), 2.0,
          opt.warmup, opt.draws, 1, /*save_warmup=*/true, /*refresh=*/0, 1.0, 0.0, 10, 0.8,
          0.05, 0.75, 10.0, 75, 50, 25, interrupt, logger, init_writer, out, diagnostic_writer);
      if (rc != 0) throw std::runtime_error("Stan's sampler returned " + std::to_string(rc));
      warmups[0] += out.warmup_seconds;
      samplings[0] += out.sampling_seconds;
      // Columns: lp__, accept_stat__, stepsize__, treedepth__, n_leapfrog__, divergent__,
      // energy__, then the parameters.
      const std::size_t first = 7;
      if (out.names.size() != first + dim || out.names[4] != "n_leapfrog__" ||
          out.rows.size() != std::size_t(opt.warmup + opt.draws))
        throw std::runtime_error("unexpected Stan output: " + std::to_string(out.names.size()) +
                                 " columns, " + std::to_string(out.rows.size()) + " rows");
      stan_names.assign(out.names.begin() + first, out.names.end());
      for (std::size_t r = 0; r < out.rows.size(); ++r) {
        const auto& row = out.rows[r];
        st.gradients += static_cast<long long>(row[4]);
        if (r < std::size_t(opt.warmup)) continue;
        st.divergences += row[5] != 0;
        for (std::size_t k = 0; k < dim; ++k) st.draws[k][std::size_t(c)].push_back(row[first + k]);
      }
    }
    st_cpu = cpu_now() - c0;
    st_wall = wall_now() - w0;
    st.warmup_seconds = median(warmups);
    st.sampling_seconds = median(samplings);
    st.summarise();
  }

  // ---- agreement of the posterior means ----
  double max_z = 0;
  std::size_t max_z_at = 0;
  for (std::size_t k = 0; k < ty.mean.size(); ++k) {
    const double z = std::fabs(ty.mean[k] - st.mean[k]) /
                     std::sqrt(ty.mcse[k] * ty.mcse[k] + st.mcse[k] * st.mcse[k]);
    if (z > max_z) {
      max_z = z;
      max_z_at = k;
    }
  }
  for (const side* s : {&ty, &st}) {
    std::fprintf(stderr,
                 "nuts,%s,%s: warm-up %.3f s, sampling %.3f s (CPU, median of %d), gradients %lld "
                 "(warm-up included), divergences %d, min bulk ESS %.0f (%s)\n",
                 who, s == &ty ? "tyche" : "stan", s->warmup_seconds, s->sampling_seconds, reps,
                 s->gradients, s->divergences, s->min_ess, stan_names[s->min_ess_at].c_str());
  }
  std::fprintf(stderr,
               "nuts,%s: one warm-up + draws run, all chains: tyche %.3f s CPU (median) / %.3f s "
               "wall (first run); stan %.3f s CPU / %.3f s wall (whole service calls, "
               "initialisation included)\n",
               who, ty.warmup_seconds + ty.sampling_seconds, ty_wall, st_cpu, st_wall);
  std::fprintf(stderr, "nuts,%s: posterior means agree: largest z = %.2f (%s: tyche %.6g, stan %.6g)\n",
               who, max_z, stan_names[max_z_at].c_str(), ty.mean[max_z_at], st.mean[max_z_at]);
  if (!(max_z <= 4)) {
    std::fprintf(stderr, "nuts,%s: the posterior means differ by more than 4 MCSE; no rows\n", who);
    return 1;
  }

  const double t_s = ty.min_ess / ty.sampling_seconds, s_s = st.min_ess / st.sampling_seconds;
  const double t_t = ty.min_ess / (ty.warmup_seconds + ty.sampling_seconds);
  const double s_t = st.min_ess / (st.warmup_seconds + st.sampling_seconds);
  std::printf("nuts,%s,%ld,%d,%.1f,%.1f,ess_per_s,%.2f\n", who, opt.n, opt.chains, t_s, s_s,
              t_s / s_s);
  std::printf("nuts_total,%s,%ld,%d,%.1f,%.1f,ess_per_s,%.2f\n", who, opt.n, opt.chains, t_t, s_t,
              t_t / s_t);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "nuts_harness: %s\n", e.what());
  return 1;
}
