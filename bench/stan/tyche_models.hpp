// bench/stan/tyche_models.hpp — the tyche side of the Stan comparison: one function per benchmark
// model, each taking the model's data file (CmdStan JSON, the very file Stan reads) and returning
// a tyche_examples::posterior (the model and the data it views). The coordinates of θ are in the
// order of the Stan twin's parameters block (bench/stan/models/<name>.stan); the harness checks
// the names.
//
//   eight_schools_noncentered, kidiq, arK,  examples/posteriordb.hpp, unchanged
//   low_dim_gauss_mix
//   glmm_poisson, logistic_regression,      defined here (docs/benchmarks.md, "tyche vs Stan")
//   corr_gaussian_100
//   covertype                               logistic_regression with K = 54, data in memory
//   pk_ode                                  ode_rk45, tolerances from the data file
//   pk_stiff                                ode_stiff (absorption 1,200x elimination), likewise
//   steady_state                            solve_powell (Michaelis-Menten steady states at 4 rates)
//
// Each function returns `auto`, so the compiler builds its model — the types, the partial
// evaluation, the gradient — wherever the function is defined, called or not. The compile rows
// (bench/stan/run.sh) build one model per program, as Stan does: with -DBENCH_TYCHE_ONE=1 and
// -DBENCH_TYCHE_ONE_<name>=1 this header defines that model alone (covertype goes with
// logistic_regression).
#pragma once

#if !defined(BENCH_TYCHE_ONE)
#include "posteriordb.hpp"  // examples/posteriordb.hpp (-I examples)
#else
#include "posteriordb/common.hpp"
#if defined(BENCH_TYCHE_ONE_eight_schools_noncentered)
#include "posteriordb/eight_schools.hpp"
#endif
#if defined(BENCH_TYCHE_ONE_kidiq)
#include "posteriordb/kidiq.hpp"
#endif
#if defined(BENCH_TYCHE_ONE_arK)
#include "posteriordb/ark.hpp"
#endif
#if defined(BENCH_TYCHE_ONE_low_dim_gauss_mix)
#include "posteriordb/low_dim_gauss_mix.hpp"
#endif
#endif

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tyche_bench {

#if !defined(BENCH_TYCHE_ONE) || defined(BENCH_TYCHE_ONE_eight_schools_noncentered)
using tyche_examples::eight_schools_noncentered;
#endif

#if !defined(BENCH_TYCHE_ONE) || defined(BENCH_TYCHE_ONE_kidiq)
inline auto kidiq(const tyche::data_file& d) { return tyche_examples::kidiq_kidscore_interaction(d); }
#endif

#if !defined(BENCH_TYCHE_ONE) || defined(BENCH_TYCHE_ONE_arK)
inline auto arK(const tyche::data_file& d) { return tyche_examples::ark(d); }
#endif

#if !defined(BENCH_TYCHE_ONE) || defined(BENCH_TYCHE_ONE_low_dim_gauss_mix)
using tyche_examples::low_dim_gauss_mix;
#endif

#if !defined(BENCH_TYCHE_ONE) || defined(BENCH_TYCHE_ONE_glmm_poisson)
// ---- glmm_poisson ------------------------------------------------------------------------------
// Poisson GLMM, log link, random intercept per group (non-centred):
//   alpha ~ normal(0, 5), beta ~ normal(0, 1), sigma_u ~ half_normal(1), z[g] ~ normal(0, 1),
//   y[i] ~ poisson_log(alpha + beta x[i] + sigma_u z[group[i]]).
// The random intercepts are gathered by the data index vector, gather(z, group) (0-based), as in
// bench/gradients.cpp's glmm_poisson and as Stan's z[group]. θ = (alpha, beta, log sigma_u, z[1..G]).

struct glmm_poisson_data {
  std::vector<int> group;  // 0-based: group[i] − 1 of the data file
  std::vector<double> x, y;
};

inline auto glmm_poisson(const tyche::data_file& d) {
  using namespace tyche;
  constexpr std::size_t G = 20;
  tyche_examples::detail::require(d.integer("G") == int(G),
                                  "glmm_poisson: G must be 20 (a compile-time shape)");
  const auto n = static_cast<std::size_t>(d.integer("N"));
  const auto& group = d.vector("group", n);
  auto s = std::make_unique<glmm_poisson_data>();
  s->x = d.vector("x", n);
  s->y = d.vector("y", n);
  for (double g : group) {
    tyche_examples::detail::require(g >= 1 && g <= double(G) && g == double(long(g)),
                                    "glmm_poisson: group[i] must be an integer in 1..G");
    s->group.push_back(int(g) - 1);
  }
  return tyche_examples::detail::make_posterior(
      std::unique_ptr<const glmm_poisson_data>(std::move(s)), [](const glmm_poisson_data& s) {
        auto alpha = normal<"alpha">(0.0, 5.0);
        auto beta = normal<"beta">(0.0, 1.0);
        auto sigma_u = half_normal<"sigma_u">(1.0);
        auto z = std_normal<"z">(shape<G>);
        auto eta = alpha + beta * data(s.x) + sigma_u * gather(z, s.group);
        return model(joint(alpha, beta, sigma_u, z, poisson_log(eta).observe(data(s.y))));
      });
}

#endif

#if !defined(BENCH_TYCHE_ONE) || defined(BENCH_TYCHE_ONE_corr_gaussian_100)
// ---- corr_gaussian_100 ---------------------------------------------------------------------------
// x ~ multi_normal(mu, Sigma), x ∈ ℝ¹⁰⁰, mu and Sigma data (bench/stan/write_data.py). multi_normal
// factors Sigma once, when the model is built (Stan's twin: cholesky_decompose in transformed
// data); each evaluation is the O(K²) triangular solve and its back substitution. θ = x.

struct corr_gaussian_data {
  std::vector<double> mu;
  tyche::matrix_data sigma;
};

inline auto corr_gaussian_100(const tyche::data_file& d) {
  using namespace tyche;
  const auto k = static_cast<std::size_t>(d.integer("K"));
  auto s = std::make_unique<corr_gaussian_data>();
  s->mu = d.vector("mu", k);
  s->sigma = d.matrix("Sigma");
  tyche_examples::detail::require(s->sigma.rows == k && s->sigma.cols == k,
                                  "corr_gaussian_100: Sigma must be K × K");
  return tyche_examples::detail::make_posterior(
      std::unique_ptr<const corr_gaussian_data>(std::move(s)), [](const corr_gaussian_data& s) {
        return model(joint(multi_normal<"x">(data(s.mu), tyche_examples::detail::view(s.sigma))));
      });
}

#endif

#if !defined(BENCH_TYCHE_ONE) || defined(BENCH_TYCHE_ONE_logistic_regression)
// ---- logistic_regression ---------------------------------------------------------------------
// alpha ~ normal(0, 1), beta[k] ~ normal(0, 1), y[i] ~ bernoulli_logit(alpha + X[i] · beta), with
// X an N × K data matrix, K = 100 a compile-time shape as in bench/nuts.cpp (the data:
// bench/synthetic.hpp, 10,000 × 100).
// θ = (alpha, beta[1..K]).

struct logistic_regression_data {
  tyche::matrix_data x;
  std::vector<double> y;
};

/// The model on data already in memory; K (the number of columns of X) a compile-time shape.
template <std::size_t K>
inline auto logistic_regression_model(std::unique_ptr<const logistic_regression_data> s) {
  using namespace tyche;
  tyche_examples::detail::require(s->x.cols == K && s->x.rows == s->y.size(),
                                  "logistic_regression: X must be N × K and y of length N");
  return tyche_examples::detail::make_posterior(
      std::move(s), [](const logistic_regression_data& s) {
        auto alpha = normal<"alpha">(0.0, 1.0);
        auto beta = normal<"beta">(0.0, 1.0, shape<K>);
        auto eta = alpha + matvec(tyche_examples::detail::view(s.x), beta);
        return model(joint(alpha, beta, bernoulli_logit(eta).observe(data(s.y))));
      });
}

inline auto logistic_regression(const tyche::data_file& d) {
  constexpr std::size_t k = 100;
  tyche_examples::detail::require(d.integer("K") == int(k),
                                  "logistic_regression: K must be 100 (a compile-time shape)");
  const auto n = static_cast<std::size_t>(d.integer("N"));
  auto s = std::make_unique<logistic_regression_data>();
  s->x = d.matrix("X");
  tyche_examples::detail::require(s->x.rows == n, "logistic_regression: X must be N × K");
  s->y = d.vector("y", n);
  return logistic_regression_model<k>(std::move(s));
}

// ---- covertype ---------------------------------------------------------------------------------
// Edward2's workload: the same model with K = 54 (the covertype shape), on X (N × 54, row-major)
// and y (0/1) handed over in memory (bench/stan/binary_data.hpp reads them from the binary file
// that Stan's side reads too). The Stan twin is logistic_regression.stan (K comes from the data).

inline auto covertype(std::vector<double> x, std::vector<double> y) {
  constexpr std::size_t k = 54;
  auto s = std::make_unique<logistic_regression_data>();
  s->x.rows = y.size();
  s->x.cols = k;
  tyche_examples::detail::require(x.size() == y.size() * k, "covertype: X must be N × 54");
  s->x.values = std::move(x);
  s->y = std::move(y);
  return logistic_regression_model<k>(std::move(s));
}
#endif

#if !defined(BENCH_TYCHE_ONE) || defined(BENCH_TYCHE_ONE_pk_ode) || defined(BENCH_TYCHE_ONE_pk_stiff)
// ---- pk_ode, pk_stiff -------------------------------------------------------------------------------
// One-compartment oral absorption (bench/stan/models/pk_ode.stan, pk_stiff.stan): g' = −ka g,
// c' = ka g − (CL/V) c, (g, c)(0) = (dose, 0), ka = CL/V + kd (absorption faster than elimination:
// no flip-flop mode); conc ~ lognormal(log(c/V), sigma); CL, V, kd, sigma lognormal priors, kd's
// median 1; pk_stiff: ka = CL/V + 200 kd, by ode_stiff_tol (pk_ode: ode_rk45_tol), with the data
// file's rel_tol, abs_tol and max_num_steps. θ = (log CL, log V, log kd, log sigma).
struct pk_ode_data {
  std::vector<double> ts, conc;
  double dose = 0, rel_tol = 0, abs_tol = 0;
  long long max_num_steps = 0;
};
template <bool Stiff>
auto pk_one_compartment(const tyche::data_file& d) {
  using namespace tyche;
  const auto n = static_cast<std::size_t>(d.integer("N"));
  auto s = std::make_unique<pk_ode_data>();
  s->ts = d.vector("ts", n);
  s->conc = d.vector("conc", n);
  s->dose = d.scalar("dose");
  s->rel_tol = d.scalar("rel_tol");
  s->abs_tol = d.scalar("abs_tol");
  s->max_num_steps = d.integer("max_num_steps");
  return tyche_examples::detail::make_posterior(std::unique_ptr<const pk_ode_data>(std::move(s)), [](const pk_ode_data& s) {
    auto CL = lognormal<"CL">(std::log(5.0), 0.5);
    auto V = lognormal<"V">(std::log(30.0), 0.5);
    auto kd = lognormal<"kd">(0.0, 0.5);
    auto sigma = lognormal<"sigma">(std::log(0.2), 0.5);
    auto ka = [&] {
      if constexpr (Stiff) return CL / V + 200.0 * kd;
      else return CL / V + kd;
    }();
    const std::size_t n = s.ts.size();
    auto f = [&](const auto&, const auto& y) { return std::tuple{-ka * y[0], ka * y[0] - CL / V * y[1]}; };
    auto sol = [&] {
      if constexpr (Stiff)
        return ode_stiff_tol(f, std::tuple{s.dose, 0.0}, 0.0, data(s.ts), s.rel_tol, s.abs_tol, s.max_num_steps);
      else
        return ode_rk45_tol(f, std::tuple{s.dose, 0.0}, 0.0, data(s.ts), s.rel_tol, s.abs_tol, s.max_num_steps);
    }();
    auto conc = assume_positive(segment(sol, n + 1, n) / V);
    return model(joint(CL, V, kd, sigma, lognormal(log(conc), sigma).observe(data(s.conc))));
  });
}
#endif
#if !defined(BENCH_TYCHE_ONE) || defined(BENCH_TYCHE_ONE_pk_ode)
inline auto pk_ode(const tyche::data_file& d) { return pk_one_compartment<false>(d); }
#endif
#if !defined(BENCH_TYCHE_ONE) || defined(BENCH_TYCHE_ONE_pk_stiff)
inline auto pk_stiff(const tyche::data_file& d) { return pk_one_compartment<true>(d); }
#endif

#if !defined(BENCH_TYCHE_ONE) || defined(BENCH_TYCHE_ONE_steady_state)
// ---- steady_state ---------------------------------------------------------------------------------
// Michaelis–Menten steady states (bench/stan/models/steady_state.stan, docs/tutorial.md section 12):
// C solves rate = Vmax C / (Km + C) for each rate, Vmax = 60 + excess, by solve_powell_tol with the
// data file's rel_tol, f_tol and max_num_steps (Stan 2.21's stanc has algebra_solver, Powell's, not
// the Newton solver); day1, day2 ~ lognormal(log C, sigma).
// θ = (log excess, log Km, log sigma).
struct steady_state_data {
  std::vector<double> rates, day1, day2;
  double rel_tol = 0, f_tol = 0;
  long long max_num_steps = 0;
};
inline auto steady_state(const tyche::data_file& d) {
  using namespace tyche;
  const auto n = static_cast<std::size_t>(d.integer("N"));
  auto s = std::make_unique<steady_state_data>();
  s->rates = d.vector("rates", n);
  s->day1 = d.vector("day1", n);
  s->day2 = d.vector("day2", n);
  s->rel_tol = d.scalar("rel_tol");
  s->f_tol = d.scalar("f_tol");
  s->max_num_steps = d.integer("max_num_steps");
  if (n != 4) throw std::invalid_argument("steady_state: the bench model has 4 rates (N = 4), the data file " +
                                          std::to_string(n));
  return tyche_examples::detail::make_posterior(std::unique_ptr<const steady_state_data>(std::move(s)),
                                                [](const steady_state_data& s) {
    auto excess = lognormal<"excess">(std::log(30.0), 1.0);
    auto Vmax = 60.0 + excess;
    auto Km = lognormal<"Km">(std::log(4.0), 0.5);
    auto sigma = half_normal<"sigma">(0.3);
    auto css = solve_powell_tol([&](const auto& c) { return data(s.rates) - Vmax * c / (Km + c); },
                                std::tuple{1.0, 1.0, 1.0, 1.0}, s.rel_tol, s.f_tol, s.max_num_steps);
    auto conc = log(assume_positive(css));
    return model(joint(excess, Km, sigma, lognormal(conc, sigma).observe(data(s.day1)),
                       lognormal(conc, sigma).observe(data(s.day2))));
  });
}
#endif

}  // namespace tyche_bench
