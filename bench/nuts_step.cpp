// bench/nuts_step.cpp — the CPU time of one NUTS leapfrog step against the gradient alone, on the
// small models of the Stan comparison (eight_schools_noncentered, arK, kidiq), one thread, as
// bench/stan/nuts_harness.cpp runs tyche: 4 chains, 1000 warm-up + 1000 draws, threads = 1.
//
//   nuts_step [--lanes=N,...] [--reps=R] [--chains=C] [model ...]
//
// For each model and each lanes value (default 0,1): R runs (default 3) with the same seed; the
// smallest CPU time (clock_gettime(CLOCK_PROCESS_CPUTIME_ID)) over the runs, divided by
// nuts_fit::gradient_evaluations, is the CPU per step. Then the scalar gradient alone (the
// program's value_and_gradient in double, 2 s of repetitions, the median of 15 blocks). Prints
//
//   model,lanes,lanes_used,cpu_s,grad_evals,ns_per_step,ns_per_gradient,step_over_gradient,utilisation,min_bulk_ess
#include "../examples/posteriordb.hpp"

#include <tyche/tyche.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <time.h>

namespace {

double cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct settings {
  std::vector<int> lanes{0, 1};
  int reps = 3, chains = 4, warmup = 1000, draws = 1000;
};

template <class Model>
double gradient_ns(const Model& m) {
  const auto& prog = m.program();
  std::vector<double> q(m.dim(), 0.1), g(m.dim()), ws(prog.workspace_size());
  std::vector<double> blocks;
  volatile double sink = 0;
  for (int b = 0; b < 15; ++b) {
    constexpr int n = 20000;
    const double c0 = cpu_now();
    for (int i = 0; i < n; ++i) {
      q[0] = 0.1 + 1e-9 * i;
      sink = sink + prog.value_and_gradient(q, g, ws);
    }
    blocks.push_back((cpu_now() - c0) / n * 1e9);
  }
  std::sort(blocks.begin(), blocks.end());
  return blocks[blocks.size() / 2];
}

template <class Model>
void run(const char* name, const Model& m, const settings& s) {
  const double grad = gradient_ns(m);
  for (int lanes : s.lanes) {
    tyche::nuts_config cfg;
    cfg.chains = s.chains;
    cfg.warmup = s.warmup;
    cfg.draws = s.draws;
    cfg.seed = 20261121;
    cfg.executor = tyche::cpu{.threads = 1, .lanes = lanes};
    double best = INFINITY;
    tyche::nuts_fit fit;
    for (int r = 0; r < s.reps; ++r) {
      const double c0 = cpu_now();
      fit = tyche::nuts(m, cfg);
      best = std::min(best, cpu_now() - c0);
    }
    double min_bulk = INFINITY;
    for (std::size_t k = 0; k < fit.dim(); ++k) min_bulk = std::min(min_bulk, tyche::ess_bulk(fit.parameter(k)));
    const double per_step = best / static_cast<double>(fit.gradient_evaluations) * 1e9;
    std::printf("%s,%d,%d,%.4f,%lld,%.1f,%.1f,%.2f,%.3f,%.0f\n", name, lanes, fit.lanes, best,
                fit.gradient_evaluations, per_step, grad, per_step / grad, fit.utilization, min_bulk);
    std::fflush(stdout);
  }
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
    if (std::strncmp(argv[i], "--lanes=", 8) == 0) {
      s.lanes.clear();
      for (const char* p = argv[i] + 8; *p;) {
        char* end = nullptr;
        s.lanes.push_back(static_cast<int>(std::strtol(p, &end, 10)));
        p = *end == ',' ? end + 1 : end;
      }
    } else if (std::strncmp(argv[i], "--reps=", 7) == 0) {
      s.reps = std::atoi(argv[i] + 7);
    } else if (std::strncmp(argv[i], "--chains=", 9) == 0) {
      s.chains = std::atoi(argv[i] + 9);
    } else if (argv[i][0] == '-') {
      std::fprintf(stderr, "usage: %s [--lanes=N,...] [--reps=R] [--chains=C] [model ...]\n", argv[0]);
      return 2;
    } else {
      only.emplace_back(argv[i]);
    }
  }
  try {
    std::printf("model,lanes,lanes_used,cpu_s,grad_evals,ns_per_step,ns_per_gradient,step_over_gradient,"
                "utilisation,min_bulk_ess\n");
    const auto posteriors = te::posteriors_dir(__FILE__);
    if (wanted(only, "eight_schools_noncentered")) {
      const auto d = tyche::read_json_data((posteriors / "eight_schools-eight_schools_noncentered" / "data.json").string());
      const auto p = te::eight_schools_noncentered(d);
      run("eight_schools_noncentered", p.model, s);
    }
    if (wanted(only, "arK")) {
      const auto d = tyche::read_json_data((posteriors / "arK-arK" / "data.json").string());
      const auto p = te::ark(d);
      run("arK", p.model, s);
    }
    if (wanted(only, "kidiq")) {
      const auto d = tyche::read_json_data((posteriors / "kidiq-kidscore_interaction" / "data.json").string());
      const auto p = te::kidiq_kidscore_interaction(d);
      run("kidiq", p.model, s);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nuts_step: %s\n", e.what());
    return 1;
  }
  return 0;
}
