// bench/stan/harness.cpp — one gradient of a model in tyche against the same gradient in Stan,
// in one process, at the same point, on the same data file.
//
// Built once per model by bench/stan/run.sh, with
//   -DBENCH_STAN_MODEL='"<build>/<name>.hpp"'   the C++ that rstan::stanc generates from
//                                               bench/stan/models/<name>.stan (typedef stan_model)
//   -DBENCH_TYCHE_TWIN=<name>                   the tyche twin, tyche_bench::<name>(data_file)
// and the same flags for both sides (one translation unit).
//
//   harness --data FILE --name NAME --n N [--reps R] [--min-time S] [--seed K] [--radius A]
//           [--agree E]
//
// reads FILE with tyche::read_json_data (tyche) and stan_bench::read_json_var_context (Stan),
// draws the point θ ~ uniform(−A, A)^dim (A = 2 unless given) from std::mt19937_64(K) (tyche's
// initial_point), and
// before timing anything checks that both compute the same function:
//   * the unconstrained parameter names agree (tyche "b[1]" = Stan "b.1"), in the same order;
//   * at θ and at a second point θ' the gradients agree component by component to 1e-8
//     relative (|a − b| ≤ 1e-8 max(|a|, |b|)): tyche's log density with its log-Jacobian against
//     Stan's log_prob_grad<false, true> (all constants, with Jacobian), and at θ also against the
//     timed log_prob_grad<true, true>;
//   * the log densities differ by a constant: tyche keeps every normalising constant, Stan's
//     log_prob<false, true> too, except that a half-Cauchy or half-normal prior written as
//     `sigma ~ cauchy(0, s)` on a real<lower=0> omits the log 2 of the truncation, so
//     (tyche − Stan)(θ) must equal (tyche − Stan)(θ') to 1e-8 relative to the log densities;
//     the same for the timed log_prob<true, true>, which drops more constants (this catches a
//     Stan function whose dropped "constant" depends on the parameters, as poisson_log_glm's
//     did in Stan 2.21: stan-dev/math#1498, fixed in 2.22).
// --agree E replaces the 1e-8 of these checks (pk_stiff: two stiff solvers of different methods
// at Stan's default tolerances, 1e-6, agree to ~1e-3; the closed form says which is the closer).
// If any check fails it prints what differs and exits with status 1 without a row. Otherwise it
// prints the agreement figures on stderr and one CSV row on stdout:
//   gradient,NAME,N,1,<tyche ns>,<stan ns>,ns,<stan / tyche>
// Times: R repetitions, tyche and Stan alternating; each repetition runs as many calls as take
// about S seconds (calibrated once per side); the median over repetitions of time per call.
// Timed calls: tyche's model.program().value_and_gradient(θ, grad, workspace) (what tyche::nuts
// calls), Stan's stan::model::log_prob_grad<true, true>(model, θ, params_i, grad) (propto, with
// Jacobian: what Stan's samplers differentiate).
#include BENCH_STAN_MODEL

#include <stan/model/log_prob_grad.hpp>

#include "json_var_context.hpp"
#include "tyche_models.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <iostream>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace {

template <class T>
inline void escape(T* p) {
  asm volatile("" : : "g"(p) : "memory");
}

double agree = 1e-8;  // --agree
bool close(double a, double b, double scale) { return std::fabs(a - b) <= agree * scale; }

double rel_diff(double a, double b) {
  const double s = std::max(std::fabs(a), std::fabs(b));
  return s == 0 ? 0 : std::fabs(a - b) / s;
}

/// ns per call of f() over `iters` calls.
template <class F>
double ns_per_call(F& f, long iters) {
  const auto t0 = std::chrono::steady_clock::now();
  for (long k = 0; k < iters; ++k) f();
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / double(iters);
}

/// Number of calls that take at least min_time seconds.
template <class F>
long calibrate(F& f, double min_time) {
  long iters = 1;
  for (;;) {
    const double ns = ns_per_call(f, iters);
    if (ns * double(iters) >= 0.2 * min_time * 1e9 || iters >= (1L << 40)) {
      return std::max(1L, long(min_time * 1e9 / std::max(ns, 0.1)));
    }
    iters *= 4;
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct options {
  std::string data, name;
  long n = 0;
  int reps = 15;
  double min_time = 0.2;
  unsigned long long seed = 20261121;
  double radius = 2.0;
};

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--data") o.data = v;
    else if (k == "--name") o.name = v;
    else if (k == "--n") o.n = std::stol(v);
    else if (k == "--reps") o.reps = std::stoi(v);
    else if (k == "--min-time") o.min_time = std::stod(v);
    else if (k == "--seed") o.seed = std::stoull(v);
    else if (k == "--radius") o.radius = std::stod(v);
    else if (k == "--agree") agree = std::stod(v);
    else throw std::invalid_argument("unknown option " + k);
  }
  if (argc % 2 == 0 || o.data.empty() || o.name.empty() || o.reps < 1)
    throw std::invalid_argument(
        "usage: harness --data FILE --name NAME --n N [--reps R] [--min-time S] [--seed K] "
        "[--radius A] [--agree E]");
  return o;
}

}  // namespace

int main(int argc, char** argv) try {
  const options opt = parse(argc, argv);
  const char* who = opt.name.c_str();

  // ---- both models from the same file ----
  const tyche::data_file d = tyche::read_json_data(opt.data);
  const auto posterior = tyche_bench::BENCH_TYCHE_TWIN(d);
  const auto& tm = posterior.model;
  const auto context = stan_bench::read_json_var_context(opt.data);
  const stan_model sm(*context, 0, &std::cerr);

  // ---- same parameters, same order ----
  std::vector<std::string> stan_names;
  sm.unconstrained_param_names(stan_names, false, false);
  std::vector<std::string> tyche_names = tm.parameter_names();
  for (auto& s : tyche_names) {  // "b[1]" -> "b.1"
    if (const auto open = s.find('['); open != std::string::npos)
      s = s.substr(0, open) + "." + s.substr(open + 1, s.size() - open - 2);
  }
  if (tyche_names != stan_names || sm.num_params_r() != tm.dim()) {
    std::fprintf(stderr, "%s: parameters differ:\n  tyche:", who);
    for (const auto& s : tyche_names) std::fprintf(stderr, " %s", s.c_str());
    std::fprintf(stderr, "\n  stan: ");
    for (const auto& s : stan_names) std::fprintf(stderr, " %s", s.c_str());
    std::fprintf(stderr, "\n");
    return 1;
  }
  const std::size_t dim = tm.dim();

  // ---- the points ----
  std::mt19937_64 rng(opt.seed);
  std::vector<double> theta = tm.initial_point(rng, opt.radius);
  std::vector<double> theta2 = tm.initial_point(rng, opt.radius);

  const auto& program = tm.program();
  std::vector<double> workspace(program.workspace_size());
  std::vector<double> g_tyche(dim), g_stan(dim);
  std::vector<int> params_i;
  auto tyche_call = [&] {
    escape(theta.data());
    const double v = program.value_and_gradient(std::span<const double>(theta),
                                                std::span<double>(g_tyche),
                                                std::span<double>(workspace));
    escape(&v);
    return v;
  };
  auto stan_call = [&] {
    escape(theta.data());
    const double v = stan::model::log_prob_grad<true, true>(sm, theta, params_i, g_stan);
    escape(&v);
    return v;
  };

  // ---- agreement ----
  bool ok = true;
  double max_rel = 0;
  auto compare_gradients = [&](const char* what, const std::vector<double>& a,
                               const std::vector<double>& b) {
    for (std::size_t i = 0; i < dim; ++i) {
      max_rel = std::max(max_rel, rel_diff(a[i], b[i]));
      if (!close(a[i], b[i], std::max(std::fabs(a[i]), std::fabs(b[i])))) {
        std::fprintf(stderr, "%s: %s: gradient[%s] differs: tyche %.17g, stan %.17g\n", who, what,
                     stan_names[i].c_str(), a[i], b[i]);
        ok = false;
      }
    }
  };
  double lp_t[2], lp_s[2], lp_p[2];
  for (int k = 0; k < 2; ++k) {
    std::vector<double>& th = k == 0 ? theta : theta2;
    std::vector<double> gt(dim), gs(dim), gp(dim);
    lp_t[k] = tm.log_prob_and_gradient(th, gt);
    lp_s[k] = stan::model::log_prob_grad<false, true>(sm, th, params_i, gs, &std::cerr);
    lp_p[k] = stan::model::log_prob_grad<true, true>(sm, th, params_i, gp, &std::cerr);
    compare_gradients(k == 0 ? "point 1, log_prob<false, true>" : "point 2, log_prob<false, true>",
                      gt, gs);
    compare_gradients(k == 0 ? "point 1, log_prob<true, true>" : "point 2, log_prob<true, true>",
                      gt, gp);
  }
  const double v_tyche = tyche_call();
  const double v_stan = stan_call();
  compare_gradients("point 1, timed calls (log_prob<true, true>)", g_tyche, g_stan);
  if (v_tyche != lp_t[0]) {
    std::fprintf(stderr, "%s: tyche's timed call gives %.17g, log_prob_and_gradient %.17g\n", who,
                 v_tyche, lp_t[0]);
    ok = false;
  }
  const double offset = lp_t[0] - lp_s[0];
  const double drift = (lp_t[1] - lp_s[1]) - offset;
  const double lp_scale = std::max({std::fabs(lp_t[0]), std::fabs(lp_t[1]), std::fabs(lp_s[0]),
                                    std::fabs(lp_s[1])});
  if (!close(drift, 0.0, lp_scale)) {
    std::fprintf(stderr,
                 "%s: log densities do not differ by a constant: tyche - stan = %.17g at point 1, "
                 "%.17g at point 2\n",
                 who, offset, offset + drift);
    ok = false;
  }
  const double offset_propto = lp_t[0] - lp_p[0];
  const double drift_propto = (lp_t[1] - lp_p[1]) - offset_propto;
  if (!close(drift_propto, 0.0, std::max({lp_scale, std::fabs(lp_p[0]), std::fabs(lp_p[1])}))) {
    std::fprintf(stderr,
                 "%s: the timed log_prob<true, true> is not tyche's log density minus a constant: "
                 "tyche - stan = %.17g at point 1, %.17g at point 2\n",
                 who, offset_propto, offset_propto + drift_propto);
    ok = false;
  }
  if (v_stan != lp_p[0]) {
    std::fprintf(stderr, "%s: Stan's timed call gives %.17g, then %.17g\n", who, v_stan, lp_p[0]);
    ok = false;
  }
  if (!ok) {
    std::fprintf(stderr, "%s: tyche and Stan disagree; no row\n", who);
    return 1;
  }
  std::fprintf(stderr,
               "check,%s,%ld,dim=%zu,max_rel_grad_diff=%.3g,lp_tyche=%.10g,lp_stan=%.10g,"
               "offset=%.12g,offset_drift=%.3g,lp_stan_propto=%.10g,offset_propto_drift=%.3g\n",
               who, opt.n, dim, max_rel, lp_t[0], lp_s[0], offset, drift, v_stan, drift_propto);

  // ---- timing: alternating repetitions, median ----
  const long it_t = calibrate(tyche_call, opt.min_time);
  const long it_s = calibrate(stan_call, opt.min_time);
  std::vector<double> t_ns, s_ns;
  for (int r = 0; r < opt.reps; ++r) {
    t_ns.push_back(ns_per_call(tyche_call, it_t));
    s_ns.push_back(ns_per_call(stan_call, it_s));
  }
  const double t = median(t_ns), s = median(s_ns);
  std::fprintf(stderr, "time,%s,%ld,tyche_min=%.1f,tyche_max=%.1f,stan_min=%.1f,stan_max=%.1f\n",
               who, opt.n, *std::min_element(t_ns.begin(), t_ns.end()),
               *std::max_element(t_ns.begin(), t_ns.end()),
               *std::min_element(s_ns.begin(), s_ns.end()),
               *std::max_element(s_ns.begin(), s_ns.end()));
  std::printf("gradient,%s,%ld,1,%.1f,%.1f,ns,%.2f\n", who, opt.n, t, s, s / t);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "harness: %s\n", e.what());
  return 1;
}
