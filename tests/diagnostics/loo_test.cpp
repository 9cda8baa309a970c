// PSIS-LOO (include/tyche/diagnostics/loo.hpp) against exact leave-one-out cross-validation of a
// conjugate model, and its checks and messages.
//
// The model: y_i ~ normal(mu, 1), mu ~ normal(0, 10), 20 observations. Without y_i the
// posterior of mu is normal with precision 1/100 + 19 and mean Σ_{j≠i} y_j / precision, so
// p(y_i | y_-i) = normal(y_i | that mean, sd √(1 + 1/precision)): the exact elpd_loo, and with
// the full posterior's predictive the exact lpd, hence p_loo = lpd − elpd_loo.
// Tolerance: 4 Monte Carlo standard errors (the result's mcse_elpd_loo; over 12 seeds the
// estimate's error had sd 1.15× the average MCSE, loo.hpp), fixed seed. p_loo = lpd − elpd_loo
// carries the errors of both estimates, each of about one MCSE: 8 MCSE.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

using Catch::Matchers::Contains;

namespace {

const std::vector<double> y20{0.31, -1.12, 0.85, 1.64, -0.27, 0.48, 2.10, -0.66, 0.93, 0.12,
                              -1.48, 0.57, 1.21, -0.09, 0.74, 1.89, -0.41, 0.36, 1.05, -0.83};

double log_normal_density(double x, double mean, double var) {
  return -0.5 * std::log(2 * M_PI * var) - 0.5 * (x - mean) * (x - mean) / var;
}

}  // namespace

TEST_CASE("loo: PSIS-LOO of a conjugate normal model equals exact leave-one-out within its MCSE", "[loo]") {
  using namespace tyche;
  auto mu = normal<"mu">(0.0, 10.0);
  const auto m = model(joint(mu, normal(mu, 1.0).observe(data(y20, "y"))));
  const auto fit = nuts(m, {.chains = 4, .warmup = 500, .draws = 1000, .seed = 1});
  const loo_result r = loo(m, fit);

  const double n = static_cast<double>(y20.size());
  double total = 0;
  for (double v : y20) total += v;
  std::vector<double> exact_i;
  double exact = 0, lpd = 0;
  const double precision_full = 1.0 / 100 + n;
  for (double v : y20) {
    const double precision = 1.0 / 100 + (n - 1);
    exact_i.push_back(log_normal_density(v, (total - v) / precision, 1 + 1 / precision));
    exact += exact_i.back();
    lpd += log_normal_density(v, total / precision_full, 1 + 1 / precision_full);
  }
  INFO(r);
  INFO("exact elpd_loo " << exact << ", exact p_loo " << lpd - exact);
  REQUIRE(r.observations.size() == 20);
  CHECK(r.observations[0] == "y[1]");
  CHECK(r.observations[19] == "y[20]");
  CHECK(r.draws == 4000);
  REQUIRE(r.mcse_elpd_loo > 0);
  CHECK(std::fabs(r.elpd_loo - exact) < 4 * r.mcse_elpd_loo);
  CHECK(std::fabs(r.p_loo - (lpd - exact)) < 8 * r.mcse_elpd_loo);
  CHECK(r.looic == Approx(-2 * r.elpd_loo));
  // Each observation's estimate: the smallest and largest y, the most and least influential.
  for (std::size_t i : {std::size_t{10}, std::size_t{6}}) CHECK(std::fabs(r.elpd[i] - exact_i[i]) < 4 * r.mcse_elpd_loo);
  // A well-specified model with 4000 draws: every k̂ good, no warning.
  CHECK(r.bad_k == 0);
  CHECK(r.warnings.empty());
  CHECK(*std::max_element(r.pareto_k.begin(), r.pareto_k.end()) < 0.5);
  CHECK(r.k_threshold == Approx(0.7));
  // SE of elpd_loo: √n times the sd of the pointwise values.
  double mean_i = r.elpd_loo / n, ss = 0;
  for (double e : r.elpd) ss += (e - mean_i) * (e - mean_i);
  CHECK(r.se_elpd_loo == Approx(std::sqrt(n * ss / (n - 1))));
  std::ostringstream os;
  os << r;
  CHECK_THAT(os.str(), Contains("Computed from 4000 by 20 log-likelihood matrix") && Contains("elpd_loo") &&
                           Contains("All Pareto k estimates are good"));
}

TEST_CASE("loo: an observation too influential for importance sampling gets a high Pareto k and a warning that names it", "[loo]") {
  using namespace tyche;
  // Nine values near 0 and one at 9: leaving y[10] out moves mu's posterior far from where the
  // draws are, and its importance ratios have a heavy tail.
  static const std::vector<double> y{0.31, -1.12, 0.85, 1.64, -0.27, 0.48, 2.10, -0.66, 0.93, 9.0};
  auto mu = normal<"mu">(0.0, 10.0);
  const auto m = model(joint(mu, normal(mu, 1.0).observe(data(y, "y"))));
  const loo_result r = loo(m, nuts(m, {.chains = 4, .warmup = 500, .draws = 1000, .seed = 11}));
  INFO(r);
  const auto worst = std::max_element(r.pareto_k.begin(), r.pareto_k.end()) - r.pareto_k.begin();
  CHECK(worst == 9);
  CHECK(r.pareto_k[9] > r.k_threshold);
  CHECK(r.bad_k == 1);
  REQUIRE(r.warnings.size() == 1);
  CHECK_THAT(r.warnings[0], Contains("1 of 10 Pareto k estimates are above 0.70: y[10] (k = "));
}

TEST_CASE("loo: the log-likelihood matrix form, its checks, and which terms count as observations", "[loo]") {
  using namespace tyche;
  // Draws that do not vary: each observation's elpd is its log-likelihood, p_loo is 0.
  const std::size_t chains = 2, draws = 50, obs = 3;
  std::vector<double> ll;
  for (std::size_t k = 0; k < chains * draws; ++k)
    for (double v : {-1.0, -2.5, -0.25}) ll.push_back(v);
  const loo_result flat = loo(ll, chains, draws, obs);
  CHECK(flat.elpd_loo == Approx(-3.75));
  CHECK(flat.p_loo == Approx(0).margin(1e-12));
  CHECK(flat.elpd[1] == Approx(-2.5));
  CHECK(flat.observations[2] == "y[3]");
  CHECK(flat.bad_k == 0);

  // Bad input: sizes, NaN (naming the observation, chain and draw), -inf at every draw.
  CHECK_THROWS_WITH(loo(std::span<const double>(ll).first(10), chains, draws, obs),
                    Contains("the log-likelihood matrix has 10 values, expected 2 chains x 50 draws x 3 observations"));
  auto bad = ll;
  bad[(1 * draws + 6) * obs + 2] = std::nan("");
  CHECK_THROWS_WITH(loo(bad, chains, draws, obs), Contains("log p(y[3] | theta) is nan at chain 2, draw 7"));
  bad = ll;
  for (std::size_t k = 0; k < chains * draws; ++k) bad[k * obs + 1] = -std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH(loo(bad, chains, draws, obs), Contains("log p(y[2] | theta) is -inf at every draw"));
  CHECK_THROWS_WITH(loo(ll, chains, draws, obs, {"a", "b"}), Contains("2 names for 3 observations"));

  // The model's observations: a named vector element by element, an unnamed one as its term's,
  // a scalar observation whole; target(e) terms are not observations.
  static const std::vector<double> a{1.0, 2.0}, b{0.5, 0.25, 0.75};
  auto mu = normal<"mu">(0.0, 1.0);
  auto sigma = half_normal<"sigma">(1.0);
  const auto m = model(joint(mu, sigma, normal(mu, sigma).observe(data(a, "a")), exponential(sigma).observe(data(b)),
                             target(-0.5 * square(mu)), normal(mu, 1.0).observe(0.3)));
  CHECK(m.observation_names() ==
        std::vector<std::string>{"a[1]", "a[2]", "term 4[1]", "term 4[2]", "term 4[3]", "term 6"});
  const std::vector<double> theta{0.2, -0.1};
  const std::vector<double> pointwise = m.pointwise_log_likelihood(theta);
  REQUIRE(pointwise.size() == 6);
  const std::vector<double> terms = m.log_prob_terms(theta);  // mu, sigma, a, b, target, 0.3
  CHECK(pointwise[0] + pointwise[1] == Approx(terms[2]));
  CHECK(pointwise[2] + pointwise[3] + pointwise[4] == Approx(terms[3]));
  CHECK(pointwise[5] == Approx(terms[5]));
  const double s = std::exp(-0.1);
  CHECK(pointwise[1] == Approx(-0.5 * std::log(2 * M_PI) - std::log(s) - 0.5 * (2.0 - 0.2) * (2.0 - 0.2) / (s * s)));

  CHECK(m.observations_counted_whole().empty());
  // categorical_logit's n observations share one normaliser: the term is one observation, and
  // loo says so.
  static const std::vector<double> cats{1, 2, 2, 3, 1, 3, 2, 1};
  auto g = normal<"g">(0.0, 1.0, shape<3>);
  const auto cm = model(joint(g, categorical_logit(g).observe(data(cats, "cats"))));
  CHECK(cm.observation_names() == std::vector<std::string>{"cats"});
  const loo_result whole = loo(cm, nuts(cm, {.chains = 2, .warmup = 100, .draws = 100, .seed = 2}));
  REQUIRE(whole.warnings.size() == 1);
  CHECK_THAT(whole.warnings[0], Contains("term 2, categorical_logit(...).observe(y)") &&
                                    Contains("counts as one observation"));

  // A model that observes nothing, and a fit of another model.
  const auto prior_only = model(joint(mu, target(-0.5 * square(mu))));
  const auto prior_fit = nuts(prior_only, {.chains = 1, .warmup = 20, .draws = 20, .seed = 1});
  CHECK_THROWS_WITH(loo(prior_only, prior_fit), Contains("the model observes nothing"));
  CHECK_THROWS_WITH(loo(m, prior_fit), Contains("the fit's values are not this model's"));
}

TEST_CASE("loo_compare: elpd differences against the best model, with the SE of the pointwise differences", "[loo]") {
  using namespace tyche;
  // Draws that do not vary, so each model's elpd_loo,i is its log-likelihood: the differences
  // are known exactly.
  const auto flat = [](const std::vector<double>& per_observation) {
    std::vector<double> ll;
    for (int k = 0; k < 40; ++k) ll.insert(ll.end(), per_observation.begin(), per_observation.end());
    return loo(ll, 2, 20, per_observation.size());
  };
  const loo_result a = flat({-1.0, -2.0, -1.5, -0.5}), b = flat({-1.2, -1.0, -1.5, -0.3}),
                   c = flat({-3.0, -3.0, -3.0, -3.0});
  const loo_comparison cmp = loo_compare({{"a", a}, {"b", b}, {"c", c}});
  REQUIRE(cmp.rows.size() == 3);
  CHECK(cmp.rows[0].name == "b");  // elpd -4.0, then a (-5.0), then c (-12.0)
  CHECK(cmp.rows[0].elpd_diff == 0);
  CHECK(cmp.rows[0].se_diff == 0);
  CHECK(cmp.rows[1].name == "a");
  CHECK(cmp.rows[1].elpd_diff == Approx(-1.0));
  // a − b pointwise: 0.2, −1.0, 0, −0.2 (mean −0.25): √(4 · var) with var = 0.2633… (n − 1).
  const std::vector<double> d{0.2, -1.0, 0.0, -0.2};
  double ss = 0;
  for (double v : d) ss += (v + 0.25) * (v + 0.25);
  CHECK(cmp.rows[1].se_diff == Approx(std::sqrt(4 * ss / 3)));
  CHECK(cmp.rows[2].name == "c");
  CHECK(cmp.rows[2].elpd_diff == Approx(-8.0));
  std::ostringstream os;
  os << cmp;
  CHECK_THAT(os.str(), Contains("elpd_diff") && Contains("se_diff"));
  // Results of other observations, and a single model.
  const loo_result short_one = flat({-1.0, -2.0, -1.5});
  CHECK_THROWS_WITH(loo_compare({{"a", a}, {"s", short_one}}), Contains("'s' has 3 observations, 'a' 4"));
  CHECK_THROWS_WITH(loo_compare({{"a", a}}), Contains("needs at least two models"));
}
