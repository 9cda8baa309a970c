// Warm-up's options (samplers/nuts/chain.hpp, sampler.hpp, adaptation.hpp): nuts_config::init and
// init_inv_metric (chains start where they are told, warm-up starts from the metric given, bad
// values are errors before any chain starts; initial values from pathfinder() start in the
// typical set), metric_estimator = draws_and_gradients (nutpie's diagonal: exact on a
// Gaussian), metric = low_rank (nutpie's low-rank + diagonal) and pool_metric (the chains'
// estimates pooled): the shared posteriors still match their references.
#include <tyche/tyche.hpp>

#include "../../examples/posteriordb.hpp"
#include "support/arma.hpp"
#include "support/golden_draws.hpp"
#include "support/reference_summary.hpp"
#include "support/sanitized.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace {

using Catch::Matchers::Contains;

double chain_mean(const tyche::nuts_fit& fit, int chain, std::size_t k) {
  double s = 0;
  for (int d = 0; d < fit.draws; ++d) s += fit.values[static_cast<std::size_t>(chain)][static_cast<std::size_t>(d) * fit.dim() + k];
  return s / fit.draws;
}

}  // namespace

TEST_CASE("nuts: each chain starts at its init, and a chain cannot leave the mode it starts in", "[samplers][init]") {
  using namespace tyche;
  // Two modes at -10 and 10 (sd 1): NUTS does not cross the valley between them, so the chains'
  // means say where they started.
  auto x = flat<"x">();
  const auto m = model(joint(x, target(log_mix(0.5, normal_lpdf(x, -10.0, 1.0), normal_lpdf(x, 10.0, 1.0)))));
  const nuts_fit fit = nuts(m, {.chains = 2, .warmup = 200, .draws = 200, .seed = 3, .init = {{10.0}, {-10.0}}});
  CHECK(chain_mean(fit, 0, 0) == Approx(10.0).margin(0.5));
  CHECK(chain_mean(fit, 1, 0) == Approx(-10.0).margin(0.5));
  // One init for every chain.
  const nuts_fit same = nuts(m, {.chains = 2, .warmup = 200, .draws = 200, .seed = 3, .init = {{-10.0}}});
  CHECK(chain_mean(same, 0, 0) == Approx(-10.0).margin(0.5));
  CHECK(chain_mean(same, 1, 0) == Approx(-10.0).margin(0.5));
  // The emulated device executor initialises the same way.
  nuts_config emulated{.chains = 2, .warmup = 200, .draws = 200, .seed = 3, .init = {{10.0}, {-10.0}}};
  emulated.executor = cuda{.emulate = true};
  const nuts_fit device = nuts(m, emulated);
  CHECK(chain_mean(device, 0, 0) == Approx(10.0).margin(0.5));
  CHECK(chain_mean(device, 1, 0) == Approx(-10.0).margin(0.5));
}

TEST_CASE("nuts: init_inv_metric is the metric warm-up starts from (with no warm-up, every draw's)", "[samplers][init]") {
  using namespace tyche;
  const auto m = model(joint(normal<"a">(0.0, 3.0), normal<"b">(1.0, 0.2)));
  const nuts_fit diag = nuts(m, {.chains = 1, .warmup = 0, .draws = 10, .init_inv_metric = {9.0, 0.04}});
  CHECK(diag.inv_metric[0] == std::vector<double>{9.0, 0.04});
  const nuts_fit dense = nuts(m, {.chains = 1, .warmup = 0, .draws = 10, .metric = samplers::metric_kind::dense,
                                  .init_inv_metric = {9.0, 0.1, 0.1, 0.04}});
  CHECK(dense.inv_metric[0] == std::vector<double>{9.0, 0.1, 0.1, 0.04});
  // With warm-up the windows replace it.
  const nuts_fit adapted = nuts(m, {.chains = 1, .warmup = 300, .draws = 10, .init_inv_metric = {9.0, 0.04}});
  CHECK(adapted.inv_metric[0] != std::vector<double>{9.0, 0.04});
}

TEST_CASE("nuts: bad init and init_inv_metric are errors naming them, before any chain starts", "[samplers][init]") {
  using namespace tyche;
  const auto m = model(joint(normal<"mu">(0.0, 1.0), lognormal<"sigma">(0.0, 1.0)));
  CHECK_THROWS_WITH(nuts(m, {.chains = 3, .init = {{0.0, 1.0}, {0.0, 1.0}}}),
                    Contains("init holds 2 vectors of initial values: give one for every chain, or 3"));
  CHECK_THROWS_WITH(nuts(m, {.init = {{0.0}}}),
                    Contains("init[0] (every chain's start; the index in brackets is C++'s, from 0) holds 1 values, "
                             "expected 2 (one per name of parameter_names(), in order: mu, sigma)"));
  CHECK_THROWS_WITH(nuts(m, {.init = {{0.0, std::nan("")}}}),
                    Contains("init[0][1] (every chain's value 2; the indices in brackets are C++'s, from 0) = nan is "
                             "not finite"));
  // One vector per chain: the chain's number, first_chain counted (a run of chains 4 and 5).
  CHECK_THROWS_WITH(nuts(m, {.chains = 2, .first_chain = 3, .init = {{0.0, 1.0}, {0.0}}}),
                    Contains("init[1] (chain 5; the index in brackets is C++'s, from 0) holds 1 values"));
  CHECK_THROWS_WITH(nuts(m, {.chains = 2, .first_chain = 3, .init = {{0.0, 1.0}, {std::nan(""), 1.0}}}),
                    Contains("init[1][0] (chain 5, value 1; the indices in brackets are C++'s, from 0) = nan"));
  CHECK_THROWS_WITH(nuts(m, {.chains = 1, .init = {{0.0, -1.0}}}),
                    Contains("chain 1: init") && Contains("sigma = -1 is outside its support"));
  CHECK_THROWS_WITH(nuts(m, {.init_inv_metric = {1.0}}), Contains("init_inv_metric holds 1 values, expected 2"));
  // Inside the supports but where the log density is -inf: the point by name, and the term
  // (a new user's message said only "the log density is -inf", 2026-12-05).
  static const std::vector<double> y{1.0, 4.5};
  auto theta = lognormal<"theta">(0.0, 2.0);
  const auto bounded = model(joint(theta, uniform(0.0, theta).observe(data(y))));
  CHECK_THROWS_AS(nuts(m, {.chains = 1, .init = {{0.0, -1.0}}}), std::invalid_argument);  // as optimize's
  CHECK_THROWS_AS(nuts(bounded, {.chains = 1, .init = {{2.0}}}), std::invalid_argument);
  CHECK_THROWS_WITH(nuts(bounded, {.chains = 1, .init = {{2.0}}}),
                    Contains("chain 1: init: the log density or its gradient is not finite at the given initial "
                             "values: the log density was -inf at theta = 2 (unconstrained θ = (0.693147))") &&
                        Contains("; there, ") && Contains("uniform"));
  CHECK_THROWS_WITH(nuts(m, {.init_inv_metric = {1.0, 0.0}}), Contains("init_inv_metric[1] = 0 is not positive"));
  CHECK_THROWS_WITH(nuts(m, {.metric = samplers::metric_kind::dense, .init_inv_metric = {1.0, 2.0, 2.0, 1.0}}),
                    Contains("init_inv_metric is not symmetric positive definite"));
  CHECK_THROWS_WITH(nuts(m, {.metric = samplers::metric_kind::dense, .init_inv_metric = {1.0, 0.5, 0.2, 1.0}}),
                    Contains("init_inv_metric is not symmetric: element [2,1] = 0.2 but [1,2] = 0.5"));
}

TEST_CASE("nuts from pathfinder: the initial values lie in the typical set and the metric is the approximation's",
          "[samplers][init]") {
  using namespace tyche;
  // A 10-d Gaussian far from Stan's (-2, 2) box: x_i ~ normal(20 + i, 0.1 (i + 1)).
  struct far_data {
    std::vector<double> y, s;
  };
  far_data g;
  for (int i = 0; i < 10; ++i) {
    g.y.push_back(20.0 + i);
    g.s.push_back(0.1 * (i + 1));
  }
  const auto m = model([](const far_data& g) {
    auto x = flat<"x">(shape<10>);
    return joint(x, normal(x, data(g.s)).observe(data(g.y)));
  }, g);
  const approximate_fit pf = pathfinder(m, {.seed = 2});
  const nuts_fit fit = nuts(m, {.chains = 4, .warmup = 200, .draws = 400, .seed = 2, .init = pf.initial_values(4),
                                .init_inv_metric = pf.inverse_metric()});
  // Reached the posterior's bulk: each initial point's log density no lower than 2 below the
  // lowest of the 1,600 draws' lp__ (in 10 dimensions lp = const − χ²₁₀/2: the lowest of 1,600
  // draws is near the 99.9 % quantile of χ²; a point of Stan's (-2, 2) box has lp ≈ -2e4 here).
  // bench/run.sh inference measures the rates on the shared posteriors.
  std::vector<double> lp;
  for (const auto& chain : fit.stats)
    for (const auto& s : chain) lp.push_back(s.log_density);
  std::sort(lp.begin(), lp.end());
  const double lo = lp.front() - 2;
  for (const auto& values : pf.initial_values(4)) CHECK(m.log_prob(m.unconstrain(values)) >= lo);
  // The metric: the approximation's variances, close to s² here.
  const std::vector<double> metric = pf.inverse_metric();
  REQUIRE(metric.size() == 10);
  for (std::size_t i = 0; i < 10; ++i) CHECK(metric[i] == Approx(g.s[i] * g.s[i]).epsilon(0.25));
  for (std::size_t i = 0; i < 10; ++i) CHECK(chain_mean(fit, 0, i) == Approx(g.y[i]).margin(4 * g.s[i] / std::sqrt(100.0)));
  CHECK_THROWS_WITH(pf.initial_values(0), Contains("n = 0 must be >= 1"));
  // The one-call form: pathfinder_init fills init and init_inv_metric from the same Pathfinder
  // run (its seed is nuts_config's), then nuts() samples from there.
  const nuts_config from_pf = pathfinder_init(m, {.chains = 4, .warmup = 200, .draws = 400, .seed = 2});
  CHECK(from_pf.init == pf.initial_values(4));
  CHECK(from_pf.init_inv_metric == pf.inverse_metric());
  nuts_config dense{.chains = 2, .seed = 2};
  dense.metric = samplers::metric_kind::dense;
  CHECK(pathfinder_init(m, dense).init_inv_metric == pf.inverse_metric(true));
  // The low-rank metric gets the covariance as factors, decomposed once (its matrix back to
  // rounding), and nothing in init_inv_metric.
  nuts_config low_rank{.chains = 2, .seed = 2};
  low_rank.metric = samplers::metric_kind::low_rank;
  const nuts_config lr = pathfinder_init(m, low_rank);
  CHECK(lr.init_inv_metric.empty());
  REQUIRE(samplers::low_rank_dimension(lr.init_inv_metric_factors.data(), lr.init_inv_metric_factors.size()) == 10);
  std::vector<double> back(100);
  samplers::low_rank_dense(lr.init_inv_metric_factors.data(), 10, back.data());
  const std::vector<double> covariance = pf.inverse_metric(true);
  for (std::size_t k = 0; k < 100; ++k) CHECK(back[k] == Approx(covariance[k]).margin(1e-10 * covariance[k / 10 * 11]));
  CHECK_THROWS_WITH(pathfinder_init(m, lr), Contains("already holds init"));
  const nuts_fit started = nuts(m, from_pf);
  for (std::size_t i = 0; i < 10; ++i)
    CHECK(chain_mean(started, 1, i) == Approx(g.y[i]).margin(4 * g.s[i] / std::sqrt(100.0)));
  CHECK_THROWS_WITH(pathfinder_init(m, from_pf), Contains("already holds init"));
}

TEST_CASE("nuts: the gradient-based metrics recover the exact diagonal of a Gaussian; Stan's estimates it",
          "[samplers][warmup]") {
  using namespace tyche;
  // x_i ~ normal(0, s_i), s from 0.01 to 100: var θ_i / var ∂_i log p = s_i⁴ in every window, so
  // √ of it is s_i² to rounding, whatever the draws.
  struct scales {
    std::vector<double> zero, s;
  };
  scales g;
  for (const double s : {0.01, 0.1, 1.0, 10.0, 100.0}) {
    g.zero.push_back(0.0);
    g.s.push_back(s);
  }
  const auto m = model([](const scales& g) {
    auto x = flat<"x">(shape<5>);
    return joint(x, normal(x, data(g.s)).observe(data(g.zero)));
  }, g);
  nuts_config cfg{.chains = 2, .warmup = 500, .draws = 200, .seed = 4};
  cfg.metric_estimator = samplers::metric_estimator::draws_and_gradients;
  const nuts_fit fit = nuts(m, cfg);
  for (std::size_t c = 0; c < 2; ++c)
    for (std::size_t i = 0; i < 5; ++i) CHECK(fit.inv_metric[c][i] == Approx(g.s[i] * g.s[i]).epsilon(0.05));
  // On nutpie's schedule too, on the CPU and the emulated device, and the chains sample it.
  nuts_config schedule{.chains = 2, .warmup = 500, .draws = 1000, .seed = 4};
  schedule.metric_estimator = samplers::metric_estimator::nutpie;
  for (nuts_executor executor : {nuts_executor{cpu{}}, nuts_executor{cuda{.emulate = true}}}) {
    schedule.executor = executor;
    const nuts_fit f = nuts(m, schedule);
    for (std::size_t c = 0; c < 2; ++c)
      for (std::size_t i = 0; i < 5; ++i) {
        CHECK(f.inv_metric[c][i] == Approx(g.s[i] * g.s[i]).epsilon(0.05));
        CHECK(std::fabs(chain_mean(f, static_cast<int>(c), i)) < 4 * g.s[i] / std::sqrt(200.0));
      }
  }
  nuts_config dense_schedule = schedule;
  dense_schedule.metric = samplers::metric_kind::dense;
  CHECK_THROWS_WITH(nuts(m, dense_schedule),
                    Contains("metric_estimator = nutpie (nutpie's schedule) estimates a diagonal metric"));
  // Stan's estimate from the same number of draws is off by sampling noise (and regularised).
  const nuts_fit stan = nuts(m, {.chains = 2, .warmup = 500, .draws = 200, .seed = 4});
  double worst = 0;
  for (std::size_t i = 0; i < 5; ++i) worst = std::max(worst, std::fabs(stan.inv_metric[0][i] / (g.s[i] * g.s[i]) - 1));
  CHECK(worst > 0.01);
  // The dense metric has no gradient-based estimator.
  nuts_config dense = cfg;
  dense.metric = samplers::metric_kind::dense;
  CHECK_THROWS_WITH(nuts(m, dense), Contains("metric_estimator = draws_and_gradients estimates a diagonal metric"));
}

TEST_CASE("nuts: nutpie's schedule updates the metric from every draw, switching estimates as nutpie does",
          "[samplers][warmup]") {
  // metric_adaptation on nutpie's schedule (warm-up 1000: early phase to 300 switching every 10
  // draws, then windows of 80, 120, … while another fits before 850, the last 150 for the step
  // size): draws q_t = t and gradients alternating ±1, so the metric is √(Σ(q − q̄)² / Σ(g − ḡ)²)
  // over the foreground estimate's draws: for n consecutive integers Σ(q − q̄)² = n(n² − 1)/12.
  // At a switch the foreground becomes the background, which holds the draws since the switch
  // before, and it then grows until the next.
  using namespace tyche::samplers;
  adaptation_config c;
  c.gradients = true;
  c.nutpie_schedule = true;
  metric_adaptation<double> m(1, 1000, c);
  std::vector<double> buffer(m.buffer_size());
  m.bind(buffer.data());
  auto expected = [](double n) { return std::sqrt(n * (n * n - 1) / 12 / n); };  // Σ(g − ḡ)² = n for even n
  int updates = 0, restarts = 0;
  double metric = 1;
  for (int t = 0; t < 1000; ++t) {
    const double q = t, g = t % 2 == 0 ? 1.0 : -1.0;
    const bool changed = m.learn(&metric, &q, &g);
    updates += changed ? 1 : 0;
    restarts += changed && m.restarts_step_size() ? 1 : 0;
    INFO("t = " << t << ": metric " << metric);
    if (t == 19) CHECK(metric == Approx(expected(10)));    // draws 10 … 19
    if (t == 299) CHECK(metric == Approx(expected(10)));   // draws 290 … 299
    if (t == 379) CHECK(metric == Approx(expected(80)));   // draws 300 … 379
    if (t == 499) CHECK(metric == Approx(expected(120)));  // draws 380 … 499
    if (t == 849) CHECK(metric == Approx(expected(470)));  // no room for a window of 180: draws 380 … 849
    if (t >= 850) CHECK_FALSE(changed);
  }
  CHECK(updates == 848);  // every draw from the third (t = 2) to t = 849
  CHECK(restarts == 1);   // Stan's step-size heuristic after the first metric only
  // nutpie's first metric: 1/|∂ log p| at the initial point, 1 where it is not finite.
  const double grad[3] = {-4.0, 0.0, std::nan("")};
  double first[3];
  metric_adaptation<double>::metric_from_gradient(first, grad, 3);
  CHECK(first[0] == 0.25);
  CHECK(first[1] == 1e20);
  CHECK(first[2] == 1.0);
}

TEST_CASE("the gradient-based diagonal of a correlated Gaussian is the geometric mean of its marginal and "
          "conditional variances; Stan's is the marginal",
          "[samplers][warmup]") {
  // Why nutpie's metric is 10-20x smaller than Stan's on gp_pois_regr's log rho and log alpha
  // (docs/nuts.md): for x ~ N(0, Σ), ∇log p = −Σ⁻¹x, so var ∂ᵢ = (Σ⁻¹)ᵢᵢ = 1 / (the conditional
  // variance of xᵢ) and √(var xᵢ / var ∂ᵢ) = √(Σᵢᵢ · Σᵢᵢ|rest), not Σᵢᵢ. Exact draws (Σ = [[1, ρ],
  // [ρ, 1]] with ρ = 0.95: marginal 1, conditional 1 − ρ² = 0.0975, geometric mean 0.312) fed to
  // metric_adaptation in Stan's windows (warm-up 1000: the last window holds draws 450 … 949).
  // Sampling error of either estimate over 500 draws is about 6 %, the tolerance 15 %.
  using namespace tyche::samplers;
  const double rho = 0.95, conditional = 1 - rho * rho;
  for (const bool gradients : {true, false}) {
    adaptation_config c;
    c.gradients = gradients;
    metric_adaptation<double> m(2, 1000, c);
    std::vector<double> buffer(m.buffer_size());
    m.bind(buffer.data());
    tyche::counter_rng rng(11);
    double metric[2] = {1, 1};
    int windows = 0;
    for (int t = 0; t < 1000; ++t) {
      const double z0 = rng.normal(), z1 = rng.normal();
      const double q[2] = {z0, rho * z0 + std::sqrt(conditional) * z1};
      const double g[2] = {-(q[0] - rho * q[1]) / conditional, -(q[1] - rho * q[0]) / conditional};
      windows += m.learn(metric, q, g) ? 1 : 0;
    }
    CHECK(windows == 5);
    const double expected = gradients ? std::sqrt(conditional) : 1.0;  // √(1 · (1 − ρ²)), or Σᵢᵢ
    for (const double v : metric) CHECK(v == Approx(expected).epsilon(0.15));
  }
}

TEST_CASE("nuts: with the gradient-based metrics the shared posteriors still match their references",
          "[samplers][warmup][reference]") {
  // Means within 4 combined standard errors, sds within 10 %: nutpie's diagonal on four of the
  // nine posteriors, nutpie's low-rank metric on all nine (it needs far fewer gradients; diamonds
  // and arK with their reference's tree depth, as posteriordb_nuts_test runs them).
  if constexpr (tyche_test::address_sanitized) return;  // a statistical check, as posteriordb_nuts_test's
  using namespace tyche;
  // pooled: the diagonal with nuts_config::pool_metric and the given estimator (pool_metric_test).
  auto check = [](const auto& m, const std::string& name, std::uint64_t seed, samplers::metric_kind metric,
                  int max_depth = 10, bool pooled = false,
                  samplers::metric_estimator estimator = samplers::metric_estimator::draws_and_gradients) {
    const auto ref = tyche_test::read_reference_summary(tyche_examples::posteriors_dir(__FILE__) / name);
    nuts_config cfg{.chains = 4, .warmup = 1000, .draws = 2500, .seed = seed, .max_depth = max_depth};
    cfg.metric = metric;
    if (metric == samplers::metric_kind::diagonal) cfg.metric_estimator = estimator;
    cfg.pool_metric = pooled;
    const nuts_fit fit = nuts(m, cfg);
    if (pooled && estimator == samplers::metric_estimator::draws)  // Stan's windows: one metric for all
      for (int c = 1; c < 4; ++c) CHECK(fit.inv_metric[c] == fit.inv_metric[0]);
    int compared = 0;
    for (std::size_t k = 0; k < fit.dim(); ++k) {
      const auto it = ref.find(fit.names[k]);
      if (it == ref.end()) continue;  // eight schools' theta_trans, gp_pois_regr's f_tilde: not in the reference
      ++compared;
      const auto r = tyche_test::compare_to_reference(fit.parameter(k), it->second);
      INFO(name << (metric == samplers::metric_kind::low_rank ? " (low rank) " : " (diagonal) ")
                << (pooled ? "pooled, estimator " + std::to_string(static_cast<int>(estimator)) + " " : "") << fit.names[k]
                << ": mean " << r.mean << " (reference " << it->second.mean << "), sd " << r.sd << " (reference "
                << it->second.sd << "), z = " << r.z);
      CHECK(r.z < 4.0);
      CHECK(std::fabs(r.sd / it->second.sd - 1.0) < 0.10);
    }
    INFO(name);
    CHECK(compared >= 2);
  };
  auto load = [](const char* name) {
    return tyche::read_json_data((tyche_examples::posteriors_dir(__FILE__) / name / "data.json").string());
  };
  namespace te = tyche_examples;
  using samplers::metric_kind;
  const auto kidiq = load("kidiq-kidscore_interaction");
  const auto sblrc = load("sblrc-blr");
  const auto garch = load("garch-garch11");
  const auto gauss_mix = load("low_dim_gauss_mix-low_dim_gauss_mix");
  for (const metric_kind metric : {metric_kind::diagonal, metric_kind::low_rank}) {
    check(te::kidiq_kidscore_interaction(kidiq).model, "kidiq-kidscore_interaction", 201, metric);
    check(te::sblrc_blr(sblrc).model, "sblrc-blr", 202, metric);
    check(te::garch11(garch).model, "garch-garch11", 203, metric);
    check(te::low_dim_gauss_mix(gauss_mix).model, "low_dim_gauss_mix-low_dim_gauss_mix", 204, metric);
  }
  check(te::ark(load("arK-arK")).model, "arK-arK", 205, metric_kind::low_rank);
  check(te::mesquite_logmesquite(load("mesquite-logmesquite")).model, "mesquite-logmesquite", 206, metric_kind::low_rank);
  check(te::eight_schools_noncentered(load("eight_schools-eight_schools_noncentered")).model,
        "eight_schools-eight_schools_noncentered", 207, metric_kind::low_rank);
  check(te::diamonds(load("diamonds-diamonds")).model, "diamonds-diamonds", 208, metric_kind::low_rank, 20);
  check(te::gp_pois_regr(load("gp_pois_regr-gp_pois_regr")).model, "gp_pois_regr-gp_pois_regr", 209,
        metric_kind::low_rank);
  // Warm-up's metric pooled across the chains (nuts_config::pool_metric), Stan's and nutpie's.
  for (const auto estimator : {samplers::metric_estimator::draws, samplers::metric_estimator::nutpie}) {
    check(te::kidiq_kidscore_interaction(kidiq).model, "kidiq-kidscore_interaction", 301, metric_kind::diagonal, 10,
          true, estimator);
    check(te::sblrc_blr(sblrc).model, "sblrc-blr", 302, metric_kind::diagonal, 10, true, estimator);
  }
}

TEST_CASE("nuts: no chain stays in an ARMA model's non-invertible region (an initial point whose step is below 1e-8 "
          "is drawn again)",
          "[samplers][warmup]") {
  using namespace tyche;
  // theta unconstrained: |theta| > 1 makes the error recursion explode (log p ~ -1e100 at
  // Stan's initial points there). With Stan's rule 28 of 240 chains (60 seeds) stayed there,
  // step sizes 1e-5 ... 1e-48, among them chain 1 of seed 2 and chain 4 of seed 13 (docs/nuts.md).
  static const tyche_test::arma_data d(tyche_test::arma_series());
  const auto arma = tyche_test::arma_trap_model(d);
  for (const std::uint64_t seed : {2, 13}) {
    const nuts_fit fit = nuts(arma, {.chains = 4, .warmup = 500, .draws = 300, .seed = seed});
    for (int c = 0; c < 4; ++c) {
      double mean_abs = 0;
      for (int d = 0; d < fit.draws; ++d) mean_abs += std::fabs(fit.values[c][static_cast<std::size_t>(d) * 4 + 2]) / fit.draws;
      INFO("seed " << seed << " chain " << c + 1 << ": step size " << fit.step_size[c]);
      CHECK(mean_abs < 1.0);
      CHECK(fit.step_size[c] > 1e-3);
    }
  }

  // A chain started in the non-invertible region at theta = -1.5 stays there (step size ~1e-18,
  // mean |theta| ~1.18, log density far below the others') — unless it is run again, from chain
  // 1's last draw, as nuts() does by default (nuts_config::restart_stuck_chains). (From theta =
  // 1.2, 1.5 or 2.5 chains escape; from 4 or -3 they stay too.) max_depth = 6: a stuck chain's
  // every tree reaches the maximum depth, 1,023 leapfrogs of the 200-step scan per iteration at
  // Stan's 10 (this case took 250 s under AddressSanitizer, 7 s per run without); at 6 the chain is
  // caught the same way (step size ~6e-14, mean |theta| 1.18) in a tenth of the time.
  nuts_config cfg{.chains = 4, .warmup = 500, .draws = 300, .seed = 5, .max_depth = 6};
  cfg.init = {{0.5, 0.6, 0.3, 1.0}, {0.5, 0.6, 0.3, 1.0}, {0.5, 0.6, 0.3, 1.0}, {0.5, 0.6, -1.5, 1.0}};
  auto mean_abs_theta = [](const nuts_fit& f, int c) {
    double m = 0;
    for (int d = 0; d < f.draws; ++d) m += std::fabs(f.values[c][static_cast<std::size_t>(d) * 4 + 2]) / f.draws;
    return m;
  };
  nuts_config kept = cfg;
  kept.restart_stuck_chains = false;
  const nuts_fit stuck = nuts(arma, kept);
  INFO("chain 4 kept: step size " << stuck.step_size[3] << ", mean |theta| " << mean_abs_theta(stuck, 3));
  CHECK(mean_abs_theta(stuck, 3) > 1.0);
  const auto found = samplers::detail::find_stuck_chains(stuck);
  REQUIRE(found.size() == 1);
  CHECK(found[0].chain == 3);
  CHECK(found[0].from == 0);
  CHECK(stuck.restarted_from == std::vector<int>{-1, -1, -1, -1});
  // With the CPU executor's default schedule (program_counter) the same rule runs at each metric
  // window's end, on the chains' state there, and finds chain 4 stuck at iteration 100: it goes on
  // from chain 1's state then, and nothing is left for after the run. The trajectory_sync schedule and the
  // device executor do not hold the chains there: chain 4 is run again after the run. Under
  // AddressSanitizer (tools/test.sh's clang tree, where the run again after the run made this
  // case take 26 s) the default only: the g++ tree runs all three (and device_executor_test runs
  // the emulated device executor under ASan).
  std::vector<nuts_executor> executors{nuts_executor{cpu{}}};
  if (!tyche_test::address_sanitized) {
    executors.push_back(nuts_executor{cpu{.schedule = samplers::lane_schedule::trajectory_sync}});
    executors.push_back(nuts_executor{cuda{.emulate = true}});
  }
  for (std::size_t e = 0; e < executors.size(); ++e) {
    INFO("executor " << e);
    cfg.executor = executors[e];
    const nuts_fit fit = nuts(arma, cfg);
    const bool met = e == 0;
    CHECK(fit.restarted_from == (met ? std::vector<int>{-1, -1, -1, -1} : std::vector<int>{-1, -1, -1, 0}));
    CHECK(fit.warmup_restarted_from == (met ? std::vector<int>{-1, -1, -1, 0} : std::vector<int>{-1, -1, -1, -1}));
    if (met) CHECK(fit.warmup_restarted_at == std::vector<int>{-1, -1, -1, 99});
    for (int c = 0; c < 4; ++c) {
      INFO("chain " << c + 1 << ": step size " << fit.step_size[c]);
      CHECK(mean_abs_theta(fit, c) < 1.0);
      CHECK(fit.step_size[c] > 1e-3);
      CHECK(fit.values[c].size() == 300u * 4u);
    }
    const auto warnings = summary(fit).warnings;
    if (met) {
      // No second run: fewer gradients than the run that kept the stuck chain (whose every tree
      // reached the maximum depth), and chain 4 takes no other chain's stream.
      CHECK(fit.gradient_evaluations < stuck.gradient_evaluations);
      CHECK(fit.values[3] != fit.values[0]);
      CHECK(std::count_if(warnings.begin(), warnings.end(), [](const std::string& w) {
              return w.find("chain 4: stuck at the end of a metric window of warm-up (iteration 100") != std::string::npos &&
                     w.find("went on from chain 1's state") != std::string::npos;
            }) == 1);
      // The chains that were not stuck drew what they drew without the meeting, bit for bit.
      for (int c = 0; c < 3; ++c) CHECK(fit.values[c] == stuck.values[c]);
    } else {
      CHECK(fit.gradient_evaluations > stuck.gradient_evaluations / 2);
      CHECK(std::count_if(warnings.begin(), warnings.end(), [](const std::string& w) {
              return w.find("chain 4: warm-up left it stuck") != std::string::npos &&
                     w.find("second run from chain 1's last draw") != std::string::npos;
            }) == 1);
    }
  }
  // No chain waits at a window's end for that rule: chain 4 runs on until the others have reached
  // iteration 100 too, and then goes back to its state there (its stream's position, its
  // iteration, its metric estimate) and takes chain 1's. So its draws do not depend on how far it
  // ran meanwhile — one thread taking the chains in turn, or two threads — and they are what they
  // were when every chain waited there (the values below were the same before the change, bit for
  // bit, in every layout tried: docs/nuts.md).
  {
    // ... and written to tests/samplers/data/golden_draws/sse2/arma_restart.txt by the code that
    // held every chain there (commit a78a5af), with the scalar kernel (lanes = 1), so the file
    // does not depend on the machine's threads; written again on 2026-12-06 by the same restart
    // code when the scan's forward pass changed the model's log density in its last bits (the
    // golden draws' README). The gradient count is not compared: chain 4's
    // transitions between iteration 100 and its restart are counted now, and their draws dropped.
    nuts_config golden = cfg;
    golden.executor = cpu{.threads = 2, .lanes = 1};
    nuts_fit fit = nuts(arma, golden);
    fit.gradient_evaluations = 0;
    const std::string difference = tyche_test::compare_golden(
        __FILE__, "arma_restart",
        "seed=5 chains=4 warmup=500 draws=300 max_depth=6 threads=2 lanes=1 init: chain 4 at theta=-1.5 "
        "(gradient_evaluations not compared)",
        fit);
    if (difference == "no file") WARN("no golden draws of the restarted ARMA chain for " << tyche_test::golden_arch());
    else CHECK(difference == "");
  }
  if (!tyche_test::address_sanitized) {
    nuts_config one = cfg, two = cfg;
    one.executor = cpu{.threads = 1, .lanes = 1};
    two.executor = cpu{.threads = 2, .lanes = 1};
    const nuts_fit a = nuts(arma, one), b = nuts(arma, two);
    CHECK(a.warmup_restarted_from == std::vector<int>{-1, -1, -1, 0});
    CHECK(b.warmup_restarted_from == std::vector<int>{-1, -1, -1, 0});
    CHECK(b.warmup_restarted_at == std::vector<int>{-1, -1, -1, 99});
    for (int c = 0; c < 4; ++c) CHECK(a.values[c] == b.values[c]);
  }
  // The dense and low-rank metrics: the restarted chain's Cholesky factor (dense) and factors
  // (low rank) come from the metric it takes, not from its own stuck window. (Its own window's
  // low-rank estimate, from where it is stuck, may fail the check — with g++ -O2 -march=native a
  // direction's eigenvalue was not finite —: the chain is then held until the rule has run, and
  // restarted; a first version of the watch failed the chain there.)
  if (!tyche_test::address_sanitized) {
    for (const auto kind : {samplers::metric_kind::dense, samplers::metric_kind::low_rank}) {
      nuts_config other = cfg;
      other.executor = cpu{};
      other.metric = kind;
      const nuts_fit fit = nuts(arma, other);
      INFO("metric " << (kind == samplers::metric_kind::dense ? "dense" : "low_rank"));
      CHECK(fit.warmup_restarted_from == std::vector<int>{-1, -1, -1, 0});
      CHECK(fit.restarted_from == std::vector<int>{-1, -1, -1, -1});
      for (int c = 0; c < 4; ++c) {
        INFO("chain " << c + 1 << ": step size " << fit.step_size[c]);
        CHECK(mean_abs_theta(fit, c) < 1.0);
        CHECK(fit.step_size[c] > 1e-3);
      }
    }
  }
}

TEST_CASE("nuts: a chain that fails during warm-up does not hold up the others' check for stuck chains",
          "[samplers][warmup]") {
  // restart_stuck_chains' rule runs at each window's end when every unfinished chain has reached
  // it (the watch, cpu_executor.hpp): a chain that fails before a window (iteration 100: its
  // window closed at 99, the progress report of iteration 100 throws before its snapshot is
  // counted) or after one (iteration 120: its snapshot of the first window is counted, that of
  // the second is not) leaves the count; the others finish (and a held chain that has drawn its
  // last draw is released), and the run reports the failed chain's error — no hang.
  using namespace tyche;
  const auto m = model(joint(normal<"x">(0.0, 1.0, shape<2>)));
  for (const int when : {100, 120, 520}) {
    nuts_config cfg{.chains = 4, .warmup = 500, .draws = 50, .seed = 7};
    cfg.refresh = 20;
    cfg.on_progress = [when](const nuts_progress& p) {
      if (p.chain == 2 && p.iteration == when) throw std::runtime_error("chain 2 stops here");
    };
    for (const int threads : {1, 2}) {
      INFO("iteration " << when << ", threads " << threads);
      cfg.executor = cpu{.threads = threads, .lanes = 1};
      CHECK_THROWS_WITH(nuts(m, cfg), Catch::Matchers::Contains("chain 2 stops here"));
    }
  }
}

TEST_CASE("nuts: with pool_metric a chain stuck at a window's end takes another chain's state there",
          "[samplers][warmup][pool]") {
  using namespace tyche;
  // The case above with the chains pooled: they meet at the end of the first metric window
  // (iteration 100), where chain 4, started at theta = -1.5, is stuck; it is left out of the pool
  // and goes on from chain 1's state — no second run after the end, and no window of it in the
  // pooled metric.
  static const tyche_test::arma_data d(tyche_test::arma_series());
  const auto arma = tyche_test::arma_trap_model(d);
  nuts_config cfg{.chains = 4, .warmup = 500, .draws = 300, .seed = 5, .max_depth = 6};
  cfg.init = {{0.5, 0.6, 0.3, 1.0}, {0.5, 0.6, 0.3, 1.0}, {0.5, 0.6, 0.3, 1.0}, {0.5, 0.6, -1.5, 1.0}};
  cfg.pool_metric = true;
  const nuts_fit fit = nuts(arma, cfg);
  CHECK(fit.warmup_restarted_from == std::vector<int>{-1, -1, -1, 0});
  CHECK(fit.warmup_restarted_at == std::vector<int>{-1, -1, -1, 99});
  CHECK(fit.restarted_from == std::vector<int>{-1, -1, -1, -1});  // nothing left for the end
  for (int c = 0; c < 4; ++c) {
    double mean_abs = 0;
    for (int k = 0; k < fit.draws; ++k) mean_abs += std::fabs(fit.values[c][static_cast<std::size_t>(k) * 4 + 2]) / fit.draws;
    INFO("chain " << c + 1 << ": step size " << fit.step_size[c] << ", mean |theta| " << mean_abs);
    CHECK(mean_abs < 1.0);
    CHECK(fit.step_size[c] > 1e-3);
    CHECK(fit.inv_metric[c] == fit.inv_metric[0]);  // the pooled metric of Stan's windows
  }
  CHECK(fit.values[3] != fit.values[0]);  // its own stream from there
  const auto warnings = summary(fit).warnings;
  CHECK(std::count_if(warnings.begin(), warnings.end(), [](const std::string& w) {
          return w.find("chain 4: stuck at the end of a metric window of warm-up (iteration 100") != std::string::npos &&
                 w.find("went on from chain 1's state") != std::string::npos;
        }) == 1);
  // Without restart_stuck_chains the chain stays stuck, pooled with the others.
  cfg.restart_stuck_chains = false;
  const nuts_fit kept = nuts(arma, cfg);
  CHECK(kept.warmup_restarted_from == std::vector<int>{-1, -1, -1, -1});
  CHECK(kept.step_size[3] < 1e-3 * kept.step_size[0]);
}

TEST_CASE("nuts: which chains count as stuck", "[samplers][warmup]") {
  // find_stuck_chains on fits made up here: a step size under 1e-3 of the largest AND a median
  // log density under every log density of the other chains.
  using tyche::samplers::detail::find_stuck_chains;
  auto fit_of = [](std::vector<double> steps, std::vector<std::vector<double>> lps) {
    tyche::nuts_fit f;
    f.chains = static_cast<int>(steps.size());
    f.draws = static_cast<int>(lps[0].size());
    f.step_size = steps;
    for (const auto& chain : lps) {
      f.stats.emplace_back();
      for (double lp : chain) f.stats.back().push_back({.log_density = lp});
    }
    return f;
  };
  const std::vector<double> healthy = {-10, -11, -12};
  // Chain 3 tiny and low: stuck, paired with chain 4.
  auto s = find_stuck_chains(fit_of({0.3, 0.25, 1e-9, 0.3}, {healthy, healthy, {-1e6, -1e6, -1e6}, healthy}));
  REQUIRE(s.size() == 1);
  CHECK(s[0].chain == 2);
  CHECK(s[0].from == 3);
  // Chain 4 tiny and low: paired with chain 1 (cyclically).
  s = find_stuck_chains(fit_of({0.3, 0.25, 0.3, 1e-9}, {healthy, healthy, healthy, {-50, -50, -50}}));
  REQUIRE(s.size() == 1);
  CHECK(s[0].from == 0);
  // A tiny step in a narrow mode of high density: not stuck.
  CHECK(find_stuck_chains(fit_of({0.3, 0.25, 1e-9, 0.3}, {healthy, healthy, {5, 6, 7}, healthy})).empty());
  // Low density with a healthy step (another mode, or a slow chain): not stuck.
  CHECK(find_stuck_chains(fit_of({0.3, 0.25, 0.2, 0.3}, {healthy, healthy, {-1e6, -1e6, -1e6}, healthy})).empty());
  // A median that some healthy draw goes below: not stuck.
  CHECK(find_stuck_chains(fit_of({0.3, 0.25, 1e-9, 0.3}, {healthy, {-10, -11, -40}, {-30, -30, -30}, healthy})).empty());
  // Every chain tiny, or one chain: nothing to compare with.
  CHECK(find_stuck_chains(fit_of({1e-9, 1e-9}, {{-50, -50}, {-60, -60}})).empty());
  CHECK(find_stuck_chains(fit_of({1e-9}, {{-50, -50}})).empty());
  // Two stuck chains, both paired with the one healthy chain after them.
  s = find_stuck_chains(fit_of({1e-9, 0.3, 1e-9}, {{-1e6, -1e6}, {-1, -2}, {-1e5, -1e5}}));
  REQUIRE(s.size() == 2);
  CHECK(s[0].chain == 0);
  CHECK(s[0].from == 1);
  CHECK(s[1].chain == 2);
  CHECK(s[1].from == 1);
}

TEST_CASE("nuts: when every random initial point needs a tiny step, the chain starts from the best of them",
          "[samplers][warmup]") {
  using namespace tyche;
  // A posterior whose scale is 1e-10 on θ: every initial point needs a step near 1e-10; none is
  // rejected for good, and the chain samples it.
  const auto m = model(joint(normal<"x">(0.0, 1e-10)));
  const nuts_fit fit = nuts(m, {.chains = 1, .warmup = 300, .draws = 300, .seed = 3});
  double sum = 0, sq = 0;
  for (int d = 0; d < fit.draws; ++d) {
    sum += fit.values[0][static_cast<std::size_t>(d)];
    sq += fit.values[0][static_cast<std::size_t>(d)] * fit.values[0][static_cast<std::size_t>(d)];
  }
  const double sd = std::sqrt(sq / fit.draws - (sum / fit.draws) * (sum / fit.draws));
  CHECK(sd == Approx(1e-10).epsilon(0.25));
}
