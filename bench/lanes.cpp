// bench/lanes.cpp — what the CPU executor's default lane choice (cpu::lanes = 0) costs against
// each explicit choice, on models from small (eight schools) to data-heavy (a logistic
// regression 10,000 × 100), with 1, 2, 4 and 8 chains on one thread (bash bench/run.sh lanes).
//
// Models: eight schools and kidiq (posteriordb; kidiq's regression folds into sufficient
// statistics, so it reads 27 values), logistic regressions from 40 × 5 to 10,000 × 100, and the
// 100-d AR(1) Gaussian (a 100 × 100 data matrix), a Poisson regression on one covariate
// written elementwise over 20,000 observations (data-heavy without a matrix), and the 100-d
// correlated Gaussian with a data covariance (its Cholesky factor read by a triangular solve).
//
// For each model and number of chains, one nuts() call per lanes setting (0 = the default, 1 =
// scalar, the half and the full SIMD width where the build has them and the chains fill them),
// 150 warm-up + 150 draws (--quick: 50 + 50), one thread, fixed seed (--only=MODEL: one model's
// rows). Prints CSV:
//
//   model,data_values,chains,lanes,lanes_used,cpu_s,gradients,ns_per_gradient,vs_best
//
//   data_values      the values of data the model reads per evaluation (model_t::data_values())
//   lanes            the setting (0: default); lanes_used: what the executor chose (nuts_fit::lanes)
//   ns_per_gradient  CPU nanoseconds per useful gradient (leapfrogs of all chains, warm-up included)
//   vs_best          ns_per_gradient / the smallest ns_per_gradient of the explicit settings for
//                    this model and number of chains (1.00: the default is as fast as the best)
//
// Each row's chains differ between lane widths (the widths round exp/log differently, and the
// gradients per transition differ with them), so ns per gradient is the figure, not seconds.
#include "../examples/posteriordb.hpp"
#include "synthetic.hpp"

#include <tyche/tyche.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

namespace {

struct settings {
  int warmup = 150, draws = 150;
  std::string only;  // --only=NAME: that model's rows alone
};

struct row {
  int lanes, lanes_used;
  double cpu_s;
  long long grads;
  [[nodiscard]] double ns_per_gradient() const { return 1e9 * cpu_s / static_cast<double>(grads); }
};

template <class Model>
row run_once(const Model& m, int chains, int lanes, const settings& s, std::uint64_t seed) {
  const tyche::nuts_config cfg{.chains = chains,
                               .warmup = s.warmup,
                               .draws = s.draws,
                               .seed = seed,
                               .refresh = 0,
                               .executor = tyche::cpu{.threads = 1, .lanes = lanes}};
  const std::clock_t start = std::clock();
  const auto fit = tyche::nuts(m, cfg);
  const double cpu_s = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
  return {lanes, fit.lanes, cpu_s, fit.gradient_evaluations};
}

template <class Model>
void run(const char* name, const Model& m, const settings& s, std::uint64_t seed) {
  if (!s.only.empty() && s.only != name) return;
  constexpr int full = static_cast<int>(tyche::simd_lane_width);
  constexpr int half = static_cast<int>(tyche::half_lane_width);
  const std::size_t values = m.data_values();
  for (int chains : {1, 2, 4, 8}) {
    std::vector<int> settings_list{0, 1};
    if (half > 1 && chains >= half) settings_list.push_back(half);
    if (full > 1 && full != half && chains >= full) settings_list.push_back(full);
    std::vector<row> rows;
    for (int lanes : settings_list) rows.push_back(run_once(m, chains, lanes, s, seed));
    double best = INFINITY;
    for (const auto& r : rows)
      if (r.lanes != 0) best = std::min(best, r.ns_per_gradient());
    for (const auto& r : rows)
      std::printf("%s,%zu,%d,%d,%d,%.3f,%lld,%.0f,%.2f\n", name, values, chains, r.lanes, r.lanes_used, r.cpu_s,
                  r.grads, r.ns_per_gradient(), r.ns_per_gradient() / best);
    std::fflush(stdout);
  }
}

/// y ~ bernoulli_logit(alpha + X beta), X n × P (bench/synthetic.hpp), N(0, 1) priors.
template <std::size_t P>
void logistic(const char* name, std::size_t n, const settings& s) {
  using namespace tyche;
  const tyche_bench::logistic_data lr(n, P);
  auto alpha = normal<"alpha">(0.0, 1.0);
  auto beta = normal<"beta">(0.0, 1.0, shape<P>);
  run(name,
      model(joint(alpha, beta, bernoulli_logit(alpha + matvec(matrix(lr.X.data(), lr.n, lr.p), beta)).observe(data(lr.y)))),
      s, 3);
}

/// y ~ poisson_log(a + b·x) elementwise over n observations (no matrix: the scalar path takes
/// the observations 8 at a time, chains in lanes take them one at a time for 8 chains).
void poisson(const char* name, std::size_t n, const settings& s) {
  using namespace tyche;
  std::mt19937_64 rng(20261127);
  std::normal_distribution<double> z(0.0, 1.0);
  std::vector<double> x(n), y(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = z(rng);
    y[i] = static_cast<double>(std::poisson_distribution<int>(std::exp(0.3 + 0.5 * x[i]))(rng));
  }
  auto a = normal<"a">(0.0, 1.0);
  auto b = normal<"b">(0.0, 1.0);
  run(name, model(joint(a, b, poisson_log(a + b * data(x)).observe(data(y)))), s, 5);
}

}  // namespace

int main(int argc, char** argv) {
  namespace te = tyche_examples;
  settings s;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      s.warmup = 50;
      s.draws = 50;
    } else if (std::strncmp(argv[i], "--only=", 7) == 0) {
      s.only = argv[i] + 7;
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--only=MODEL]\n", argv[0]);
      return 2;
    }
  }
  std::fprintf(stderr, "lanes: SIMD width %zu, half width %zu (doubles)\n", tyche::simd_lane_width,
               tyche::half_lane_width);
  std::printf("model,data_values,chains,lanes,lanes_used,cpu_s,gradients,ns_per_gradient,vs_best\n");
  const auto posteriors = te::posteriors_dir(__FILE__);
  {
    const auto d = tyche::read_json_data((posteriors / "eight_schools-eight_schools_noncentered" / "data.json").string());
    run("eight_schools_noncentered", te::eight_schools_noncentered(d).model, s, 1);
  }
  {
    const auto d = tyche::read_json_data((posteriors / "kidiq-kidscore_interaction" / "data.json").string());
    run("kidiq-kidscore_interaction", te::kidiq_kidscore_interaction(d).model, s, 2);
  }
  using namespace tyche;
  logistic<5>("logistic_regression_40x5", 40, s);
  logistic<10>("logistic_regression_100x10", 100, s);
  logistic<25>("logistic_regression_1000x25", 1000, s);
  logistic<100>("logistic_regression_10000x100", 10000, s);
  poisson("poisson_log_elementwise_20000", 20000, s);
  {
    constexpr std::size_t d = 100;
    std::vector<double> shift(d * d, 0.0), zero(d, 0.0), scale(d, std::sqrt(1 - 0.81));
    for (std::size_t i = 1; i < d; ++i) shift[i * d + (i - 1)] = 1.0;
    scale[0] = 1.0;
    auto x = flat<"x">(shape<d>);
    run("ar1_gaussian_100",
        model(joint(x, normal(data(zero), data(scale)).observe(x - 0.9 * matvec(matrix(shift.data(), d, d), x)))),
        s, 4);
  }
  {
    // x ~ multi_normal(0, Σ), Σᵢⱼ = 0.9^|i−j| (data): the triangular solve with Σ's Cholesky
    // factor reads 100² values per evaluation, a matrix (model_t::matrix_values).
    constexpr std::size_t d = 100;
    std::vector<double> mu(d, 0.0), sigma(d * d);
    for (std::size_t i = 0; i < d; ++i)
      for (std::size_t j = 0; j < d; ++j) sigma[i * d + j] = std::pow(0.9, std::abs(double(i) - double(j)));
    run("corr_gaussian_100", model(joint(multi_normal<"x">(data(mu), matrix(sigma.data(), d, d)))), s, 6);
  }
}
