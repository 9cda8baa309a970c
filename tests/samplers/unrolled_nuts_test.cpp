// The NUTS kernel (tyche/samplers/nuts/kernel.hpp), one chain, against a plain recursive NUTS
// written independently from the published algorithm (tests/support/recursive_nuts.hpp): driven
// by the same random stream, both must produce the same trajectory (tree depth, number of
// leapfrogs, divergence, selected point, statistics) on every transition.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <random>
#include <string>
#include <vector>

#include "support/kernel_chain.hpp"
#include "support/recursive_nuts.hpp"

namespace {

using tyche_test::stream_rng;

// The compressed schedule the kernel's level storage follows (instruction_table.hpp): after leaf
// k, ctz(k) merges and a record in slot popcount(k − 1), at Stan's default depth and beyond.
static_assert(tyche::samplers::schedule_is_compressed<10>() && tyche::samplers::schedule_is_compressed<12>());

/// Independent normal with scales 1..d.
struct scaled_normal {
  std::size_t d;
  double operator()(const std::vector<double>& q, std::vector<double>& g) const {
    double lp = 0;
    for (std::size_t i = 0; i < d; ++i) {
      const double s2 = double(i + 1) * double(i + 1);
      lp -= 0.5 * q[i] * q[i] / s2;
      g[i] = -q[i] / s2;
    }
    return lp;
  }
};

/// Bivariate normal with correlation 0.95: long trajectories, U-turns at many depths.
struct correlated_normal {
  double operator()(const std::vector<double>& q, std::vector<double>& g) const {
    const double r = 0.95, c = 1.0 / (1 - r * r);
    g[0] = -c * (q[0] - r * q[1]);
    g[1] = -c * (q[1] - r * q[0]);
    return -0.5 * c * (q[0] * q[0] - 2 * r * q[0] * q[1] + q[1] * q[1]);
  }
};

/// A tyche model (eight schools, non-centred) as a target: its compiled log density.
auto eight_schools_model() {
  using namespace tyche;
  static const std::vector<double> y{28, 8, -3, 7, -1, 1, 18, 12};
  static const std::vector<double> sigma{15, 10, 16, 11, 9, 11, 10, 18};
  auto mu = normal<"mu">(0.0, 5.0);
  auto tau = half_cauchy<"tau">(5.0);
  auto theta_raw = std_normal<"theta_raw">(shape<8>);
  return model(joint(mu, tau, theta_raw, normal(mu + tau * theta_raw, data(sigma)).observe(data(y))));
}
template <class Model>
struct model_target {
  Model m;
  double operator()(const std::vector<double>& q, std::vector<double>& g) const {
    return m.log_prob_and_gradient(q, g);
  }
};

template <class Target>
void check_same_trajectories(const Target& target, std::vector<double> q0, double step,
                             std::vector<double> inv_metric, int max_depth, int transitions,
                             std::uint64_t seed, const char* what) {
  stream_rng rng_recursive(seed);
  tyche_test::kernel_chain<stream_rng> unrolled(q0.size(), inv_metric, max_depth);
  unrolled.rng() = stream_rng(seed);
  std::vector<double> q = q0, grad(q0.size());
  double log_density = target(q, grad);
  std::vector<double> q_rec = q0;
  int depths_seen[32] = {};
  int divergences = 0;
  for (int t = 0; t < transitions; ++t) {
    INFO(what << ", transition " << t);
    const auto a = unrolled.step(target, q, grad, log_density, step);
    const auto b = tyche_test::recursive_nuts_transition(target, q_rec, step, inv_metric, max_depth,
                                                         rng_recursive);
    REQUIRE(a.tree_depth == b.tree_depth);
    REQUIRE(a.n_leapfrog == b.n_leapfrog);
    REQUIRE(a.divergent == b.divergent);
    REQUIRE(a.accept_stat == Approx(b.accept_stat).epsilon(1e-12));
    REQUIRE(a.log_density == Approx(b.log_density).epsilon(1e-12));
    REQUIRE(a.energy == Approx(b.energy).epsilon(1e-12));
    for (std::size_t i = 0; i < q.size(); ++i) REQUIRE(q[i] == Approx(b.q[i]).epsilon(1e-12).margin(1e-12));
    q_rec = b.q;
    ++depths_seen[a.tree_depth];
    divergences += a.divergent ? 1 : 0;
  }
  // The comparison covered more than one kind of trajectory.
  int kinds = 0;
  for (int c : depths_seen) kinds += c > 0 ? 1 : 0;
  CHECK(kinds >= 2);
  WARN(what << ": " << kinds << " different tree depths, " << divergences << " divergent transitions");
}

}  // namespace

TEST_CASE("nuts: unrolled and recursive NUTS produce identical trajectories", "[nuts]") {
  check_same_trajectories(scaled_normal{10}, std::vector<double>(10, 1.0), 0.35,
                          std::vector<double>(10, 1.0), 10, 1000, 11, "scaled normal, unit metric");
  std::vector<double> metric(10);
  for (int i = 0; i < 10; ++i) metric[i] = (i + 1.0) * (i + 1.0);
  check_same_trajectories(scaled_normal{10}, std::vector<double>(10, 1.0), 0.8, metric, 10, 1000, 12,
                          "scaled normal, matched metric");
  check_same_trajectories(correlated_normal{}, {0.5, -0.5}, 0.25, {1.0, 1.0}, 10, 1000, 13,
                          "correlated normal");
  const model_target<decltype(eight_schools_model())> es{eight_schools_model()};
  check_same_trajectories(es, std::vector<double>(10, 0.2), 0.4, std::vector<double>(10, 1.0), 10,
                          1000, 14, "eight schools");
  // Large steps: divergences and early terminations are part of the contract too.
  check_same_trajectories(es, std::vector<double>(10, 0.2), 2.5, std::vector<double>(10, 1.0), 6,
                          300, 15, "eight schools, divergent steps");
  // Far from the mode (H0 ≈ 10⁴) with a step near the stability limit: the energy error
  // reaches hundreds below H0, where the unrolled transition rescales its weights (past e^300).
  check_same_trajectories(scaled_normal{10}, std::vector<double>(10, 100.0), 1.9, std::vector<double>(10, 1.0), 10,
                          30, 16, "far start, large energy drops");
}

TEST_CASE("nuts: the kernel samples the target", "[nuts]") {
  // 5-d normal with scales 1..5 and the matching metric: means within 4 MCSE, sds within 10%.
  const scaled_normal target{5};
  std::vector<double> metric(5);
  for (int i = 0; i < 5; ++i) metric[i] = (i + 1.0) * (i + 1.0);
  tyche_test::kernel_chain<stream_rng> chain(5, metric, 10);
  chain.rng() = stream_rng(2024);
  std::vector<double> q(5, 0.5), grad(5);
  double log_density = target(q, grad);
  const int n = 20000, batches = 40;
  std::vector<std::vector<double>> draws(5, std::vector<double>(n));
  for (int t = 0; t < n; ++t) {
    const auto s = chain.step(target, q, grad, log_density, 0.6);
    REQUIRE(s.accept_stat >= 0.0);
    REQUIRE(s.accept_stat <= 1.0);
    for (int i = 0; i < 5; ++i) draws[i][t] = q[i];
  }
  for (int i = 0; i < 5; ++i) {
    // MCSE of the mean by batch means (40 batches of 500).
    double mean = 0, var = 0;
    for (double v : draws[i]) mean += v / n;
    for (double v : draws[i]) var += (v - mean) * (v - mean) / (n - 1);
    double bvar = 0;
    const int b = n / batches;
    for (int k = 0; k < batches; ++k) {
      double bm = 0;
      for (int j = 0; j < b; ++j) bm += draws[i][k * b + j] / b;
      bvar += (bm - mean) * (bm - mean) / (batches - 1);
    }
    const double mcse = std::sqrt(bvar / batches);
    INFO("coordinate " << i << ": mean " << mean << " (MCSE " << mcse << "), sd " << std::sqrt(var));
    CHECK(std::fabs(mean) < 4 * mcse);
    CHECK(std::fabs(std::sqrt(var) / (i + 1.0) - 1.0) < 0.10);
  }
}

TEST_CASE("nuts: a tree depth outside [1, 30] is refused", "[nuts]") {
  using kernel = tyche::samplers::nuts_kernel<double>;
  std::vector<double> storage(kernel::storage_size(1, 30, tyche::samplers::metric_kind::diagonal));
  kernel k;
  using tyche::samplers::nuts_status;
  CHECK(k.bind(storage.data(), storage.size(), 1, 0, tyche::samplers::metric_kind::diagonal) ==
        nuts_status::invalid_max_depth);
  CHECK(k.bind(storage.data(), storage.size(), 1, 31, tyche::samplers::metric_kind::diagonal) ==
        nuts_status::invalid_max_depth);
  CHECK(k.bind(storage.data(), storage.size(), 1, 20, tyche::samplers::metric_kind::diagonal) ==
        nuts_status::ok);  // diamonds' reference run needed depth 20
  CHECK_THROWS_WITH(tyche::nuts(eight_schools_model(), {.max_depth = 0}), Catch::Matchers::Contains("max_depth = 0"));
  CHECK_THROWS_WITH(tyche::nuts(eight_schools_model(), {.max_depth = 31}),
                    Catch::Matchers::Contains("max_depth = 31 is outside [1, 30]"));
}

TEST_CASE("nuts: every option is checked before a chain starts, naming the option and value", "[nuts]") {
  using Catch::Matchers::Contains;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const auto m = eight_schools_model();
  int progress_calls = 0;
  // A long run if any chain started: warm-up 10⁶, progress at every iteration.
  auto config = [&](auto edit) {
    tyche::nuts_config c{.chains = 2, .warmup = 1000000, .draws = 10, .refresh = 1};
    c.on_progress = [&](const tyche::nuts_progress&) { ++progress_calls; };
    edit(c);
    return c;
  };
  struct bad_case {
    std::function<void(tyche::nuts_config&)> edit;
    const char* message;
  };
  const std::vector<bad_case> cases = {
      {[](auto& c) { c.init_step_size = 0; }, "init_step_size = 0 is not a positive finite number"},
      {[](auto& c) { c.init_step_size = -0.5; }, "init_step_size = -0.5 is not"},
      {[&](auto& c) { c.init_step_size = nan; }, "init_step_size = nan"},
      {[&](auto& c) { c.init_step_size = inf; }, "init_step_size = inf"},
      {[&](auto& c) { c.init_radius = nan; }, "init_radius = nan is not a finite number ≥ 0"},
      {[&](auto& c) { c.init_radius = inf; }, "init_radius = inf"},
      {[](auto& c) { c.init_radius = -1; }, "init_radius = -1 is not"},
      {[](auto& c) { c.adapt_delta = 1; }, "adapt_delta = 1 is outside (0, 1)"},
      {[](auto& c) { c.adapt_delta = 0; }, "adapt_delta = 0 is outside"},
      {[&](auto& c) { c.adapt_delta = nan; }, "adapt_delta = nan"},
      {[](auto& c) { c.max_depth = 0; }, "max_depth = 0 is outside [1, 30]"},
      {[](auto& c) { c.max_depth = -3; }, "max_depth = -3"},
      {[](auto& c) { c.chains = 0; }, "chains = 0"},
      {[](auto& c) { c.draws = -1; }, "draws = -1"},
      {[](auto& c) { c.warmup = -2; }, "warmup = -2"},
      {[](auto& c) { c.executor = tyche::cpu{.lanes = 3}; }, "lanes = 3 must be 0 (automatic), 1 (scalar) or a multiple"},
      {[](auto& c) { c.executor = tyche::cpu{.threads = -1}; }, "threads = -1 must be ≥ 0"},
  };
  for (const auto& bad : cases) {
    INFO(bad.message);
    CHECK_THROWS_AS(tyche::nuts(m, config(bad.edit)), std::invalid_argument);
    CHECK_THROWS_WITH(tyche::nuts(m, config(bad.edit)), Contains("tyche::nuts: ") && Contains(bad.message));
  }
  CHECK(progress_calls == 0);
}

TEST_CASE("nuts: no initial point names the chain once, the last point and the log density", "[nuts]") {
  using namespace tyche;
  using Catch::Matchers::Contains;
  // (1e200 − mu)² overflows: the log density is −∞ at every point, its gradient finite.
  const std::vector<double> y{1e200};
  auto mu = normal<"mu">(0.0, 1.0);
  auto s = normal<"s">(0.0, 1.0);
  const auto m = model(joint(mu, s, normal(mu, 1.0).observe(data(y))));
  try {
    (void)nuts(m, {.chains = 2, .warmup = 10, .draws = 10, .executor = cpu{.threads = 1}});
    FAIL("nuts() should have thrown");
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK_THAT(what, Contains("tyche::nuts: chain 1: no initial point with a finite log density and gradient in 100 attempts"));
    CHECK_THAT(what, Contains("the log density was -inf at mu = "));
    CHECK_THAT(what, Contains(", s = "));
    CHECK_THAT(what, Contains(" (unconstrained θ = ("));
    CHECK_THAT(what, Contains("init_radius"));
    CHECK_THAT(what, !Contains("(chain 1)"));
    CHECK_THAT(what, !Contains("gradient was not finite"));
    // The term that was not finite, by its place in joint(...) and what it is; no other term.
    CHECK_THAT(what, Contains("there, term 3 of joint(...), normal(...).observe(y) (y has 1 values") &&
                         Contains("(uses mu)") && Contains("), is -inf"));
    CHECK_THAT(what, !Contains("term 1 of") && !Contains("term 2 of"));
  }
  // A scale is shown as its value (sigma > 0), not as the log sigma that θ holds.
  auto sigma = half_normal<"sigma">(1.0);
  const auto scaled = model(joint(mu, sigma, normal(mu, sigma).observe(data(y))));
  try {
    (void)nuts(scaled, {.chains = 1, .warmup = 10, .draws = 10, .seed = 3});
    FAIL("nuts() should have thrown");
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    INFO(what);
    const std::size_t at = what.find("sigma = ");
    REQUIRE(at != std::string::npos);
    CHECK(std::stod(what.substr(at + 8)) > 0);
    CHECK_THAT(what, Contains(" (unconstrained θ = ("));
  }
}

TEST_CASE("nuts: divergences where the log density is NaN are told apart from those of the geometry", "[nuts]") {
  using namespace tyche;
  using Catch::Matchers::Contains;
  auto has_warning = [](const fit_summary& s, const char* text) {
    for (const auto& w : s.warnings)
      if (w.find(text) != std::string::npos) return true;
    return false;
  };
  // An AR coefficient meant to satisfy |phi| < 1 but given an unbounded prior: where |phi| > 1
  // the stationary variance's log(1 − phi²) is NaN (assume_positive vouches for what is false).
  auto phi = normal<"phi">(0.9, 0.3);
  const auto ar = model(joint(phi, target(0.5 * log(assume_positive(1.0 - square(phi))))));
  const nuts_fit bad = nuts(ar, {.chains = 2, .warmup = 300, .draws = 300, .seed = 5});
  int divergent = 0, non_finite = 0;
  for (const auto& chain : bad.stats)
    for (const auto& st : chain) {
      divergent += st.divergent ? 1 : 0;
      non_finite += st.non_finite ? 1 : 0;
      CHECK((!st.non_finite || st.divergent));  // a non-finite point always diverges
    }
  REQUIRE(divergent > 0);
  // Most at the NaN; a few at |phi| just below 1, where log(1 − phi²) falls steeply (77 of 79).
  CHECK(non_finite * 2 > divergent);
  const fit_summary s = summary(bad);
  CHECK(has_warning(s, "divergent transitions met a log density that was NaN or -inf"));
  CHECK(has_warning(s, (std::to_string(non_finite) + " of the " + std::to_string(divergent) + " divergent").c_str()));
  // The centred eight schools: divergences of the funnel's curvature, at finite log densities.
  static const std::vector<double> y{28, 8, -3, 7, -1, 1, 18, 12}, sigma{15, 10, 16, 11, 9, 11, 10, 18};
  auto mu = normal<"mu">(0.0, 5.0);
  auto tau = half_cauchy<"tau">(5.0);
  auto theta = normal<"theta">(mu, tau, shape<8>);
  const auto centred = model(joint(mu, tau, theta, normal(theta, data(sigma)).observe(data(y))));
  const nuts_fit funnel = nuts(centred, {.chains = 2, .warmup = 300, .draws = 300, .seed = 5});
  REQUIRE(funnel.divergences() > 0);
  int funnel_non_finite = 0;
  for (const auto& chain : funnel.stats)
    for (const auto& st : chain) funnel_non_finite += st.non_finite ? 1 : 0;
  CHECK(funnel_non_finite == 0);
  CHECK(!has_warning(summary(funnel), "met a log density that was NaN"));
}

TEST_CASE("model: log_prob_terms are the terms of joint(...) at a point, adding up to log_prob", "[nuts]") {
  using namespace tyche;
  const std::vector<double> y{0.5, -1.0, 2.0};
  auto mu = normal<"mu">(0.0, 2.0);
  auto sigma = lognormal<"sigma">(0.0, 1.0);
  const auto m = model(joint(mu, sigma, normal(mu, sigma).observe(data(y)), target(-square(mu))));
  const std::vector<double> theta{0.3, -0.2};  // mu, log sigma
  const std::vector<double> terms = m.log_prob_terms(theta);
  REQUIRE(terms.size() == 4);
  const double s = std::exp(theta[1]);
  const double log_2pi = std::log(2 * 3.14159265358979323846);
  // mu ~ normal(0, 2); sigma ~ lognormal(0, 1) at s with the log-Jacobian log s (log s cancels
  // lognormal's −log s); the likelihood; the free term.
  CHECK(terms[0] == Approx(-0.5 * log_2pi - std::log(2.0) - 0.5 * (0.3 / 2) * (0.3 / 2)).epsilon(1e-12));
  CHECK(terms[1] == Approx(-0.5 * log_2pi - 0.5 * theta[1] * theta[1]).epsilon(1e-12));
  double lik = 0;
  for (double v : y) lik += -0.5 * log_2pi - theta[1] - 0.5 * ((v - 0.3) / s) * ((v - 0.3) / s);
  CHECK(terms[2] == Approx(lik).epsilon(1e-12));
  CHECK(terms[3] == Approx(-0.09).epsilon(1e-12));
  CHECK(terms[0] + terms[1] + terms[2] + terms[3] == Approx(m.log_prob(theta)).epsilon(1e-12));
  CHECK(m.term_descriptions() == std::vector<std::string>{"the random variable 'mu' (normal)",
                                                          "the random variable 'sigma' (lognormal)",
                                                          "normal(...).observe(y) (y has 3 values, argument 1 is a "
                                                          "scalar (uses mu), argument 2 is a scalar (uses sigma))",
                                                          "target(...)"});
  CHECK(m.non_finite_terms(theta).empty());
  CHECK_THROWS_WITH(m.log_prob_terms(std::vector<double>{1.0}), Catch::Matchers::Contains("log_prob_terms: got 1 values, expected 2"));
}
