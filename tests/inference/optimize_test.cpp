// optimize() and laplace() (include/tyche/inference/optimize.hpp) against closed forms: the
// mode of a Bayesian linear regression with known noise is the ridge solution, and its
// posterior is Gaussian, so the Laplace covariance is exact; bad starts and non-convergence
// are errors that say what happened.
#include "../../examples/posteriordb/eight_schools.hpp"
#include "../../examples/posteriordb/kidiq.hpp"

#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <sstream>
#include <vector>

namespace {

using Catch::Matchers::Contains;

struct regression_data {
  std::vector<double> x;  // n × 3, row-major
  std::vector<double> y;
  std::size_t n = 40;
};

regression_data make_regression() {
  regression_data d;
  std::mt19937_64 rng(11);
  std::normal_distribution<double> z(0.0, 1.0);
  const double beta[3] = {1.5, -0.7, 0.3};
  for (std::size_t i = 0; i < d.n; ++i) {
    double mu = 0.4;
    for (int j = 0; j < 3; ++j) {
      d.x.push_back(z(rng));
      mu += beta[j] * d.x.back();
    }
    d.y.push_back(mu + 0.8 * z(rng));
  }
  return d;
}

// y ~ normal(alpha + X beta, 0.8), alpha ~ normal(0, 5), beta ~ normal(0, 2); d must outlive it.
auto regression_model(const regression_data& d) {
  using namespace tyche;
  return model([](const regression_data& d) {
    auto alpha = normal<"alpha">(0.0, 5.0);
    auto beta = normal<"beta">(0.0, 2.0, shape<3>);
    return joint(alpha, beta, normal(alpha + matvec(matrix(d.x, d.n, 3), beta), 0.8).observe(data(d.y)));
  }, d);
}

// The posterior of (alpha, beta) with y ~ normal(alpha + X beta, 0.8), alpha ~ normal(0, 5),
// beta ~ normal(0, 2): Gaussian with precision P = Z'Z / 0.64 + diag(1/25, 1/4, 1/4, 1/4) and
// mean P⁻¹ Z'y / 0.64, Z = [1 X].
void closed_form(const regression_data& d, std::vector<double>& mean, std::vector<double>& cov) {
  const std::size_t k = 4;
  std::vector<double> p(k * k, 0.0), b(k, 0.0);
  for (std::size_t i = 0; i < d.n; ++i) {
    const double z[4] = {1.0, d.x[i * 3], d.x[i * 3 + 1], d.x[i * 3 + 2]};
    for (std::size_t r = 0; r < k; ++r) {
      b[r] += z[r] * d.y[i] / 0.64;
      for (std::size_t c = 0; c < k; ++c) p[r * k + c] += z[r] * z[c] / 0.64;
    }
  }
  p[0] += 1.0 / 25;
  for (std::size_t r = 1; r < k; ++r) p[r * k + r] += 1.0 / 4;
  // Invert by Gauss-Jordan.
  std::vector<double> inv(k * k, 0.0);
  for (std::size_t r = 0; r < k; ++r) inv[r * k + r] = 1;
  for (std::size_t c = 0; c < k; ++c) {
    const double piv = p[c * k + c];
    for (std::size_t j = 0; j < k; ++j) {
      p[c * k + j] /= piv;
      inv[c * k + j] /= piv;
    }
    for (std::size_t r = 0; r < k; ++r)
      if (r != c) {
        const double f = p[r * k + c];
        for (std::size_t j = 0; j < k; ++j) {
          p[r * k + j] -= f * p[c * k + j];
          inv[r * k + j] -= f * inv[c * k + j];
        }
      }
  }
  cov = inv;
  mean.assign(k, 0.0);
  for (std::size_t r = 0; r < k; ++r)
    for (std::size_t c = 0; c < k; ++c) mean[r] += inv[r * k + c] * b[c];
}

}  // namespace

TEST_CASE("optimize: the mode of a linear regression is the closed form's, and laplace's covariance is the exact posterior's",
          "[inference]") {
  using namespace tyche;
  const regression_data d = make_regression();
  const auto m = regression_model(d);
  std::vector<double> mean, cov;
  closed_form(d, mean, cov);

  // CmdStan's defaults stop where the relative gradient g'H g / |log p| is below 1e7 ε: the
  // mode to about 1e-5 here, as CmdStan's optimize gives it (newton_steps = 0).
  const optimize_result stan = optimize(m, {.newton_steps = 0});
  INFO(stan.message << " after " << stan.iterations << " iterations");
  for (std::size_t k = 0; k < 4; ++k) CHECK(std::fabs(stan.values[k] - mean[k]) < 1e-4);
  CHECK(stan.newton_steps == 0);
  // By default Newton steps follow (the Hessian by differences of the gradient): on this
  // quadratic log density the first lands on the mode, to the Hessian's rounding.
  const optimize_result mode = optimize(m);
  CHECK(mode.names == std::vector<std::string>{"alpha", "beta[1]", "beta[2]", "beta[3]"});
  for (std::size_t k = 0; k < 4; ++k) CHECK(std::fabs(mode.values[k] - mean[k]) < 1e-8);
  CHECK(mode.newton_steps >= 1);
  CHECK(mode.newton_gain > 0);
  CHECK(mode.log_density - stan.log_density == Approx(mode.newton_gain).margin(1e-12));
  CHECK(mode.warnings.empty());
  CHECK(mode.value("beta[2]") == mode.values[2]);
  CHECK(inference::converged(mode.termination));
  CHECK(mode.gradient_evaluations > mode.iterations + 8);  // (the Hessian: 2d gradients)
  // Tolerances that leave only the gradient's norm, below 1e-7 (about the least that rounding
  // of a log density of ~55 lets a line search see): the closed form to 1e-8.
  const optimize_config tight{.tol_obj = 1e-30, .tol_rel_obj = 1e-10, .tol_grad = 1e-7, .tol_rel_grad = 1e-10, .tol_param = 1e-30};
  const optimize_result exact = optimize(m, tight);
  INFO(exact.message << " after " << exact.iterations << " iterations");
  CHECK(exact.termination == inference::lbfgs_termination::absolute_gradient);
  for (std::size_t k = 0; k < 4; ++k) CHECK(std::fabs(exact.values[k] - mean[k]) < 1e-8);

  // No constraint: the Jacobian changes nothing here; laplace at that mode is exact.
  optimize_config tight_jacobian = tight;
  tight_jacobian.jacobian = true;
  const optimize_result unconstrained_mode = optimize(m, tight_jacobian);
  const approximate_fit approx = laplace(m, unconstrained_mode, {.draws = 4000, .seed = 3});
  REQUIRE(approx.covariance.size() == 16);
  for (std::size_t i = 0; i < 16; ++i) CHECK(std::fabs(approx.covariance[i] - cov[i]) < 1e-6 * std::fabs(cov[i / 4 * 5]));
  // The draws: means within 4 standard errors of the exact posterior's, log_q the Gaussian's.
  REQUIRE(approx.draws == 4000);
  for (std::size_t k = 0; k < 4; ++k) {
    double s = 0;
    for (int n = 0; n < approx.draws; ++n) s += approx.values[0][static_cast<std::size_t>(n) * 4 + k];
    const double se = std::sqrt(cov[k * 5] / approx.draws);
    CHECK(std::fabs(s / approx.draws - mean[k]) < 4 * se);
  }
  // log p − log q is constant for a Gaussian posterior and its exact Laplace approximation.
  const double offset = approx.log_p[0][0] - approx.log_q[0][0];
  for (int n = 1; n < approx.draws; ++n) CHECK(approx.log_p[0][n] - approx.log_q[0][n] == Approx(offset).epsilon(1e-9));
  const fit_summary s = summary(approx);
  CHECK(s.rows.size() == 4);
  CHECK(s.method == "laplace");
}

TEST_CASE("laplace at a mode given as values: the exact covariance, with the log-Jacobian by default, and errors that name the value",
          "[inference]") {
  using namespace tyche;
  // The regression (no constrained parameter): at the closed-form mode, the exact posterior.
  const regression_data d = make_regression();
  std::vector<double> mean, cov;
  closed_form(d, mean, cov);
  const approximate_fit at_values = laplace(regression_model(d), mean, {.draws = 10, .seed = 3});
  REQUIRE(at_values.covariance.size() == 16);
  for (std::size_t i = 0; i < 16; ++i)
    CHECK(std::fabs(at_values.covariance[i] - cov[i]) < 1e-6 * std::fabs(cov[i / 4 * 5]));
  for (std::size_t k = 0; k < 4; ++k) CHECK(at_values.mean[k] == mean[k]);
  CHECK(at_values.method == "laplace");
  CHECK(at_values.values[0].size() == 40);
  // By name, as a nuts_fit's.
  REQUIRE(at_values.parameter("beta[2]").size() == 1);
  CHECK(at_values.parameter("beta[2]")[0][3] == at_values.values[0][3 * 4 + 2]);
  double beta2 = 0;
  for (int n = 0; n < 10; ++n) beta2 += at_values.values[0][static_cast<std::size_t>(n) * 4 + 2] / 10;
  CHECK(at_values.mean_of("beta[2]") == Approx(beta2).epsilon(1e-14));
  CHECK_THROWS_WITH(at_values.index("gamma"),
                    Contains("tyche::approximate_fit: no value named 'gamma'; the fit has alpha, beta[1], beta[2], beta[3]"));
  CHECK_THROWS_WITH(optimize(regression_model(d)).value("sigma"), Contains("no value named 'sigma'; the fit has alpha"));

  // sigma ~ gamma(3, 2), u = log sigma. With the log-Jacobian, log p(u) = 3u − 2eᵘ + c: mode
  // sigma = 1.5, variance of u 1 / (2 · 1.5) = 1/3. Without it, 2u − 2eᵘ: mode 1, variance 1/2.
  const auto g = model(joint(gamma<"sigma">(3.0, 2.0)));
  const approximate_fit with = laplace(g, {1.5}, {.draws = 10});
  CHECK(with.warnings.empty());
  // MAP's values (without the Jacobian) given where laplace uses the density with it: a warning.
  const approximate_fit off = laplace(g, {1.0}, {.draws = 10});
  REQUIRE(off.warnings.size() == 1);
  CHECK_THAT(off.warnings[0], Contains("not a mode of the log density with the log-Jacobian") &&
                                  Contains("0.707") && Contains(".jacobian = false"));
  CHECK(with.mean[0] == Approx(std::log(1.5)).epsilon(1e-15));
  CHECK(with.covariance[0] == Approx(1.0 / 3.0).epsilon(1e-7));
  const approximate_fit without = laplace(g, {1.0}, {.draws = 10, .jacobian = false});
  CHECK(without.covariance[0] == Approx(0.5).epsilon(1e-7));
  // The same as laplace at optimize()'s mode of the same density.
  const approximate_fit from_optimize = laplace(g, optimize(g, {.jacobian = true}), {.draws = 10});
  CHECK(from_optimize.covariance[0] == Approx(with.covariance[0]).epsilon(1e-4));

  // Errors.
  CHECK_THROWS_WITH(laplace(g, {1.0, 2.0}), Contains("tyche::laplace: the mode holds 2 values, the model has 1"));
  CHECK_THROWS_WITH(laplace(g, {std::nan("")}), Contains("the mode's sigma is nan"));
  CHECK_THROWS_WITH(laplace(g, {-1.0}), Contains("tyche::laplace: the mode:") && Contains("sigma"));
  CHECK_THROWS_WITH(laplace(g, optimize(g), {.jacobian = true}),
                    Contains("jacobian = true, but the mode was found with jacobian = false"));
  // Not a mode: −(x² − 1)² has a minimum at 0, where the Hessian is +4.
  auto x = flat<"x">();
  const auto double_well = model(joint(x, target(-(x * x - 1.0) * (x * x - 1.0))));
  CHECK_THROWS_WITH(laplace(double_well, {0.0}), Contains("not negative definite") && Contains("the values given are not a strict mode"));
  CHECK(laplace(double_well, {1.0}, {.draws = 10}).covariance[0] == Approx(1.0 / 8.0).epsilon(1e-6));
}

TEST_CASE("optimize: jacobian = false is the MAP of the constrained value, jacobian = true the unconstrained mode",
          "[inference]") {
  using namespace tyche;
  // sigma ~ gamma(3, 2), no data: the mode of the density of sigma is (3 − 1) / 2 = 1; of
  // log sigma (with the Jacobian sigma) it is 3 / 2.
  const auto m = model(joint(gamma<"sigma">(3.0, 2.0)));
  // (CmdStan's tolerances: to about 1e-5; the Newton steps after them: to rounding.)
  CHECK(optimize(m, {.newton_steps = 0}).value("sigma") == Approx(1.0).epsilon(1e-4));
  const optimize_result map = optimize(m), unconstrained = optimize(m, {.jacobian = true});
  CHECK(map.value("sigma") == Approx(1.0).epsilon(1e-9));
  CHECK(unconstrained.value("sigma") == Approx(1.5).epsilon(1e-9));
  CHECK(map.warnings.empty());  // strict modes, not quadratic in log sigma: no false warning
  CHECK(unconstrained.warnings.empty());
  // From a given initial value (constrained scale).
  const optimize_result from = optimize(m, {.init = {4.0}});
  CHECK(from.value("sigma") == Approx(1.0).epsilon(1e-9));
  // Printed: how it ended, the log density, each value by name.
  std::ostringstream printed;
  printed << unconstrained;
  const std::string text = printed.str();
  CHECK_THAT(text, Catch::Matchers::StartsWith("optimize (L-BFGS, jacobian on): " +
                                               std::to_string(unconstrained.iterations) + " iterations, "));
  CHECK_THAT(text, Catch::Matchers::Contains(unconstrained.message));
  CHECK_THAT(text, Catch::Matchers::Contains("log density at the mode: " +
                                             detail::format_number(unconstrained.log_density)));
  CHECK_THAT(text, Catch::Matchers::Contains("\nsigma " + detail::format_number(unconstrained.value("sigma")) + "\n"));
}

TEST_CASE("optimize: a start where the log density is not finite, non-convergence and bad settings are errors that say so",
          "[inference]") {
  using namespace tyche;
  const auto m = model(joint(gamma<"sigma">(3.0, 2.0)));
  CHECK_THROWS_WITH(optimize(m, {.init = {-1.0}}), Contains("tyche::optimize:") && Contains("init"));
  CHECK_THROWS_WITH(optimize(m, {.init = {1.0, 2.0}}), Contains("init holds 2 values, expected 1 (one per name of parameter_names(), in order: sigma)"));
  CHECK_THROWS_WITH(optimize(m, {.init_alpha = -1}), Contains("init_alpha = -1"));
  CHECK_THROWS_WITH(optimize(m, {.iterations = 0}), Contains("iterations = 0"));
  CHECK_THROWS_WITH(optimize(m, {.newton_steps = -1}), Contains("newton_steps = -1 must be >= 0"));
  // A log density that is −∞ everywhere Stan's initialisation looks: 100 attempts, then an error.
  auto z = flat<"z">();
  const auto never = model(joint(z, target(log(z - 10.0))));
  CHECK_THROWS_WITH(optimize(never), Contains("no initial point with a finite log density") && Contains("100 attempts") &&
                                         Contains("there, term 2 of joint(...), target(...), is nan"));
  // Non-convergence: two iterations on a 4-d regression, with the count and gradient norm.
  const regression_data d = make_regression();
  const auto reg = regression_model(d);
  try {
    (void)optimize(reg, {.iterations = 2});
    FAIL("optimize did not throw");
  } catch (const optimize_error& e) {
    CHECK_THAT(e.what(), Contains("not converged") && Contains("after 2 iterations") && Contains("gradient's norm"));
    CHECK(e.result().iterations == 2);
    CHECK(e.result().values.size() == 4);
  }
  // A log density without a mode: the line search runs away or the iterations run out.
  auto x = flat<"x">();
  const auto unbounded = model(joint(x, target(x)));
  CHECK_THROWS_AS(optimize(unbounded, {.iterations = 50}), optimize_error);
}

TEST_CASE("optimize: the relative tests measure log p without its constants (program::constant_term), as Stan's",
          "[inference]") {
  using namespace tyche;
  // A constant of 10⁹ added to the regression's log density (a free term of a number): with
  // |log p| in the relative tests it would stop them after a few iterations, far from the
  // mode; without its constants the run is the regression's own.
  const regression_data d = make_regression();
  std::vector<double> mean, cov;
  closed_form(d, mean, cov);
  const auto shifted = model([](const regression_data& d) {
    auto alpha = normal<"alpha">(0.0, 5.0);
    auto beta = normal<"beta">(0.0, 2.0, shape<3>);
    return joint(alpha, beta, normal(alpha + matvec(matrix(d.x, d.n, 3), beta), 0.8).observe(data(d.y)),
                 target(1e9));
  }, d);
  CHECK(shifted.program().constant_term() - regression_model(d).program().constant_term() == Approx(1e9));
  const optimize_result mode = optimize(shifted);
  INFO(mode.message << " after " << mode.iterations << " iterations");
  for (std::size_t k = 0; k < 4; ++k) CHECK(std::fabs(mode.values[k] - mean[k]) < 1e-4);
}

TEST_CASE("optimize: L-BFGS takes Stan's steps (kidiq from one initial point, against rstan 2.21's trace)",
          "[inference]") {
  using namespace tyche;
  // rstan 2.21 optimizing(kidiq.stan, init = this point, algorithm = "LBFGS", verbose = TRUE)
  // (bench/stan/models/kidiq.stan; 2026-11-28): the log density Stan optimises (without the
  // constants of its ~ statements) and ‖Δθ‖ of its first 20 iterations, as printed (6
  // significant digits). The first line search meets σ = ∞ three times and halves the step
  // each time, then zooms; later ones grow it tenfold and interpolate. The same steps give the
  // same iterates; after about 25 iterations the two runs part in the last digits (the
  // gradients' rounding differs), so only the first 20 are compared.
  const double stan[20][2] = {{-37272, 132.033},     {-4525.13, 75.2107},   {-4357.13, 0.869629},
                              {-4354.77, 0.0427582}, {-4354.29, 0.0182552}, {-4354.11, 0.0196151},
                              {-4353.94, 0.0549297}, {-4353.55, 0.117313},  {-4349.96, 1.26336},
                              {-4342.74, 2.85827},   {-4321.43, 9.04652},   {-4266.94, 24.7731},
                              {-4153.47, 65.0102},   {-4085.92, 38.7701},   {-3722.93, 55.0614},
                              {-3650.83, 6.75823},   {-3111.84, 21.827},    {-3092.24, 1.63938},
                              {-2719.1, 5.11996},    {-2600.6, 0.869939}};
  namespace te = tyche_examples;
  const auto dir = te::posteriors_dir(__FILE__) / "kidiq-kidscore_interaction";
  const data_file file = read_json_data((dir / "data.json").string());
  const auto p = te::kidiq_kidscore_interaction(file);
  const inference::model_functions f = inference::functions_of(p.model);
  const inference::log_density_function& density = f.density(false);
  // θ = (beta[1..4], log sigma): Stan's random initial point of seed 3 here.
  const std::vector<double> x0 = {-1.5326977234178643, 0.20613270743584655, 1.1413987276780562,
                                  -1.3777806375747743, 0.072703704164124527};
  inference::lbfgs_settings settings;
  settings.iterations = 20;
  const inference::lbfgs_result r = inference::lbfgs(density, x0, settings, true);
  REQUIRE(r.path.size() == 21);
  // Stan's initial log density, -2.04706e+06, is tyche's less the constants.
  CHECK(r.path_log_density[0] - density.constant == Approx(-2.04706e6).epsilon(5e-6));
  for (std::size_t i = 1; i <= 20; ++i) {
    double step = 0;
    for (std::size_t k = 0; k < 5; ++k) step += (r.path[i][k] - r.path[i - 1][k]) * (r.path[i][k] - r.path[i - 1][k]);
    INFO("iteration " << i);
    CHECK(r.path_log_density[i] - density.constant == Approx(stan[i - 1][0]).epsilon(5e-6));
    CHECK(std::sqrt(step) == Approx(stan[i - 1][1]).epsilon(5e-6));
  }
}

TEST_CASE("optimize: Newton steps take L-BFGS from a plateau short of kidiq's mode to the mode, and a saddle is a warning",
          "[inference]") {
  using namespace tyche;
  namespace te = tyche_examples;
  const auto dir = te::posteriors_dir(__FILE__) / "kidiq-kidscore_interaction";
  const data_file file = read_json_data((dir / "data.json").string());
  const auto p = te::kidiq_kidscore_interaction(file);
  // The mode, to rounding: L-BFGS with every test but the gradient's norm switched off.
  const optimize_result best = optimize(p.model, {.iterations = 100000, .tol_obj = 1e-30, .tol_rel_obj = 1e-10,
                                                  .tol_grad = 1e-6, .tol_rel_grad = 1e-10, .tol_param = 1e-30,
                                                  .newton_steps = 0});
  // From seed 3's initial point CmdStan's tests stop on a plateau 2.25 below it (the relative
  // gradient, ∇'H∇ with L-BFGS's H, is below tolerance there; ‖∇‖ ≈ 0.19); as Stan's L-BFGS
  // does from 12 of 40 seeds (docs/inference.md).
  const optimize_result stan = optimize(p.model, {.seed = 3, .newton_steps = 0});
  INFO(stan.message);
  CHECK(best.log_density - stan.log_density > 1);
  // Three Newton steps from there reach the mode.
  const optimize_result mode = optimize(p.model, {.seed = 3});
  CHECK(mode.newton_steps >= 1);
  CHECK(mode.log_density - stan.log_density == Approx(mode.newton_gain).margin(1e-9));
  CHECK(mode.log_density == Approx(best.log_density).margin(1e-8));
  for (std::size_t k = 0; k < mode.values.size(); ++k) CHECK(mode.values[k] == Approx(best.values[k]).epsilon(1e-5));
  CHECK(mode.warnings.empty());
  // newton_max_dim below the dimension (5): the steps by conjugate gradients (no 5 × 5 Hessian)
  // reach the mode too.
  const optimize_result cg = optimize(p.model, {.seed = 3, .newton_max_dim = 4});
  CHECK(cg.newton_steps >= 1);
  CHECK(cg.log_density == Approx(best.log_density).margin(1e-8));
  CHECK(cg.warnings.empty());

  // A saddle point: log p = −(x² − 1)² − y² has a minimum in x at x = 0; started at (0, 0.5),
  // L-BFGS moves along y only (∂/∂x is 0 on the line x = 0) to (0, 0), where the Hessian is not
  // negative definite.
  auto x = flat<"x">();
  auto y = flat<"y">();
  const auto saddle = model(joint(x, y, target(-(x * x - 1.0) * (x * x - 1.0) - y * y)));
  const optimize_result at = optimize(saddle, {.init = {0.0, 0.5}});
  INFO(at.message);
  CHECK(at.value("x") == 0.0);
  CHECK(at.newton_steps == 0);
  REQUIRE(at.warnings.size() == 1);
  CHECK_THAT(at.warnings[0], Contains("not negative definite"));

  // A maximum at the edge of the support: without the Jacobian, eight schools' MAP has τ → 0
  // (log τ → −∞), where each Newton step gains a fixed fraction of the one before; two steps,
  // then the warning, not twenty steps of 2d gradients each.
  const auto es_dir = te::posteriors_dir(__FILE__) / "eight_schools-eight_schools_noncentered";
  const data_file es_file = read_json_data((es_dir / "data.json").string());
  const auto es = te::eight_schools_noncentered(es_file);
  const optimize_result edge = optimize(es.model, {.seed = 1});
  CHECK(edge.value("tau") < 0.01);
  CHECK(edge.newton_steps <= 3);
  CHECK(edge.gradient_evaluations < optimize(es.model, {.seed = 1, .newton_steps = 0}).gradient_evaluations + 100);
  REQUIRE(edge.warnings.size() == 1);
  CHECK_THAT(edge.warnings[0], Contains("degenerate, at the edge of the support") && Contains("or at infinity (a coefficient growing without bound"));
}

TEST_CASE("optimize above newton_max_dim: Newton steps by conjugate gradients on Hessian-vector products reach "
          "the mode where L-BFGS stops short",
          "[inference]") {
  using namespace tyche;
  // A 300-d Gaussian with an AR(1) covariance, Σᵢⱼ = ρ^|i−j| (ρ = 0.99; condition number
  // ~4·10⁴): its mode is μ. Written as the AR(1) recursion it is — z = x − μ, z₀ ~ N(0, 1),
  // zᵢ − ρ zᵢ₋₁ ~ N(0, 1 − ρ²) — so that a gradient costs O(d), not multi_normal's O(d²) (the same
  // density: 38 s → about 1 s for this case under the sanitized -O0 build).
  constexpr std::size_t d = 300;
  constexpr double rho = 0.99;
  static std::vector<double> mu(d), mu_step(d - 1);
  for (std::size_t i = 0; i < d; ++i) mu[i] = 3 * std::sin(0.1 * static_cast<double>(i));
  for (std::size_t i = 0; i + 1 < d; ++i) mu_step[i] = mu[i + 1] - rho * mu[i];
  const auto m = model([&] {
    auto x = flat<"x">(shape<d>);
    return joint(x, target(normal_lpdf(x[0], mu[0], 1.0)),
                 target(normal_lpdf(tail<d - 1>(x) - rho * head<d - 1>(x), data(mu_step), std::sqrt(1 - rho * rho))));
  });
  auto error = [&](const optimize_result& r) {
    double e = 0;
    for (std::size_t i = 0; i < d; ++i) e = std::max(e, std::fabs(r.values[i] - mu[i]));
    return e;
  };
  const optimize_result stan = optimize(m, {.seed = 2, .newton_steps = 0});
  const optimize_result cg = optimize(m, {.seed = 2});  // d = 300 > newton_max_dim = 200
  INFO("L-BFGS alone " << error(stan) << ", with the CG Newton steps " << error(cg) << " after " << cg.newton_steps
                       << " steps, " << cg.gradient_evaluations << " gradients");
  CHECK(error(stan) > 1e-4);  // (3.4e-4 on 2026-12-06)
  CHECK(error(cg) < 1e-5);
  CHECK(cg.newton_steps >= 1);
  CHECK(cg.warnings.empty());
  CHECK(cg.log_density >= stan.log_density);
  // The same steps where the dense ones would run (newton_max_dim below d): the linear
  // regression's closed form to 1e-8, as the dense Newton steps reach it.
  const regression_data rd = make_regression();
  const auto reg = regression_model(rd);
  std::vector<double> mean, cov;
  closed_form(rd, mean, cov);
  const optimize_result small = optimize(reg, {.newton_max_dim = 2});
  CHECK(small.newton_steps >= 1);
  for (std::size_t k = 0; k < mean.size(); ++k) CHECK(std::fabs(small.values[k] - mean[k]) < 1e-8);
  CHECK(small.warnings.empty());
  // A maximum at the edge of the support (eight schools' MAP without the Jacobian, τ → 0) still
  // gets the warning through CG's steps.
  namespace te = tyche_examples;
  const auto es_dir = te::posteriors_dir(__FILE__) / "eight_schools-eight_schools_noncentered";
  const data_file es_file = read_json_data((es_dir / "data.json").string());
  const auto es = te::eight_schools_noncentered(es_file);
  const optimize_result edge = optimize(es.model, {.seed = 1, .newton_max_dim = 2});
  CHECK(edge.value("tau") < 0.01);
  REQUIRE(edge.warnings.size() == 1);
  CHECK_THAT(edge.warnings[0], Contains("degenerate, at the edge of the support"));
}

TEST_CASE("optimize: CmdStan's bfgs and newton algorithms reach the closed-form mode, kidiq's mode, and warn at a saddle",
          "[inference]") {
  using namespace tyche;
  const regression_data d = make_regression();
  const auto m = regression_model(d);
  std::vector<double> mean, cov;
  closed_form(d, mean, cov);
  // BFGS (the dense inverse Hessian): CmdStan's tests as L-BFGS's, the closed form to 1e-8 with
  // tight tolerances (it stops at log p's rounding: a last step that changes nothing).
  const optimize_config tight{.algorithm = optimize_algorithm::bfgs, .tol_obj = 1e-30, .tol_rel_obj = 1e-10,
                              .tol_grad = 1e-7, .tol_rel_grad = 1e-10, .tol_param = 1e-30, .newton_steps = 0};
  const optimize_result bfgs = optimize(m, tight);
  INFO(bfgs.message << " after " << bfgs.iterations << " iterations");
  CHECK(inference::converged(bfgs.termination));
  for (std::size_t k = 0; k < 4; ++k) CHECK(std::fabs(bfgs.values[k] - mean[k]) < 1e-8);
  // Newton: on this quadratic log density the first step lands on the mode (to the Hessian's
  // rounding); the second changes log p by less than 1e-8, CmdStan's stopping rule.
  const optimize_result newton = optimize(m, {.algorithm = optimize_algorithm::newton});
  INFO(newton.message);
  CHECK(newton.termination == inference::lbfgs_termination::absolute_objective);
  CHECK(newton.iterations == 2);
  CHECK_THAT(newton.message, Contains("Newton step changed the log density by at most 1e-8"));
  for (std::size_t k = 0; k < 4; ++k) CHECK(std::fabs(newton.values[k] - mean[k]) < 1e-8);
  CHECK(newton.gradient_evaluations >= 1 + 2 * (2 * 4 + 1));  // two Hessians of 2d gradients, two steps
  CHECK(newton.warnings.empty());
  // The iteration limit is an error, as for L-BFGS, with the last point.
  CHECK_THROWS_WITH(optimize(m, {.algorithm = optimize_algorithm::newton, .iterations = 1}),
                    Contains("not converged: Maximum number of iterations hit") && Contains("after 1 iteration;"));

  // kidiq from seed 3, where CmdStan's L-BFGS stops on a plateau (above): BFGS and Newton reach
  // the mode (with tyche's Newton steps after BFGS, as after L-BFGS).
  namespace te = tyche_examples;
  const data_file file = read_json_data((te::posteriors_dir(__FILE__) / "kidiq-kidscore_interaction" / "data.json").string());
  const auto p = te::kidiq_kidscore_interaction(file);
  const optimize_result best = optimize(p.model, {.iterations = 100000, .tol_obj = 1e-30, .tol_rel_obj = 1e-10,
                                                  .tol_grad = 1e-6, .tol_rel_grad = 1e-10, .tol_param = 1e-30,
                                                  .newton_steps = 0});
  for (const optimize_algorithm a : {optimize_algorithm::bfgs, optimize_algorithm::newton}) {
    const optimize_result r = optimize(p.model, {.algorithm = a, .seed = 3});
    INFO((a == optimize_algorithm::bfgs ? "bfgs: " : "newton: ") << r.message << " after " << r.iterations);
    CHECK(r.log_density == Approx(best.log_density).margin(1e-8));
    for (std::size_t k = 0; k < r.values.size(); ++k) CHECK(r.values[k] == Approx(best.values[k]).epsilon(1e-5));
    CHECK(r.warnings.empty());
  }

  // The saddle of the test above, from (0, 0.5): Newton's step with the positive eigenvalue's
  // sign flipped moves along y only (∂/∂x = 0 on x = 0) to (0, 0), where it stops with the
  // warning that the Hessian is not negative definite.
  auto x = flat<"x">();
  auto y = flat<"y">();
  const auto saddle = model(joint(x, y, target(-(x * x - 1.0) * (x * x - 1.0) - y * y)));
  const optimize_result at = optimize(saddle, {.algorithm = optimize_algorithm::newton, .init = {0.0, 0.5}});
  CHECK(at.value("x") == 0.0);
  CHECK(std::fabs(at.value("y")) < 1e-8);
  REQUIRE(at.warnings.size() == 1);
  CHECK_THAT(at.warnings[0], Contains("not negative definite"));

  // log p = −√|x|, convex on each side of its kink at 0: from 0.5 the step with the curvature's
  // sign flipped lands on −0.5, where log p is the same, so CmdStan's rule stops there; the
  // Hessian had predicted a gain of 0.35, and the warning says the point may not be a mode.
  auto z = flat<"z">();
  const auto kink = model(joint(z, target(-sqrt(abs(z)))));
  const optimize_result k = optimize(kink, {.algorithm = optimize_algorithm::newton, .init = {0.5}});
  CHECK(k.value("z") == Approx(-0.5).epsilon(1e-6));
  CHECK(k.termination == inference::lbfgs_termination::absolute_objective);
  // (and, since its curvature is positive, that the Hessian is not negative definite)
  REQUIRE(k.warnings.size() == 2);
  CHECK_THAT(k.warnings[0], Contains("not negative definite"));
  CHECK_THAT(k.warnings[1], Contains("not smooth or not concave there") && Contains("gain of 0.35"));
  // Newton ignores L-BFGS's settings: a history_size that L-BFGS would refuse is no error here.
  CHECK_NOTHROW(optimize(m, {.algorithm = optimize_algorithm::newton, .history_size = 0}));
  CHECK_THROWS_WITH(optimize(m, {.history_size = 0}), Contains("history_size = 0 must be >= 1"));
  CHECK_THROWS_WITH(optimize(m, {.algorithm = optimize_algorithm::newton, .iterations = 0}),
                    Contains("iterations = 0 must be >= 1"));
}

TEST_CASE("BFGS's inverse Hessian: the update is (I − ρsyᵀ)H(I − ρysᵀ) + ρssᵀ from (s'y / y'y)·I, and L-BFGS "
          "keeps only its last pairs",
          "[inference]") {
  using tyche::inference::detail::quasi_newton;
  // Pairs from a quadratic f = ½xᵀAx (y = As) along four steps.
  const std::size_t n = 4;
  const double a[16] = {4, 1, 0.5, 0, 1, 3, 0.2, 0.1, 0.5, 0.2, 2, 0.3, 0, 0.1, 0.3, 1};
  const std::vector<std::vector<double>> steps = {{1, 0, 0.5, 0}, {0.2, 1, 0, -0.3}, {0, 0.4, 1, 0.1}, {0.3, 0, -0.2, 1}};
  quasi_newton<> dense(n, 5, true), limited(n, 1, false);
  CHECK(dense.empty());
  // Stan's form, by explicit matrix products.
  std::vector<double> h(n * n, 0.0);
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const std::vector<double>& s = steps[k];
    std::vector<double> y(n, 0.0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) y[i] += a[i * n + j] * s[j];
    double sy = 0, yy = 0;
    for (std::size_t i = 0; i < n; ++i) sy += s[i] * y[i], yy += y[i] * y[i];
    const double rho = 1 / sy;
    if (k == 0)
      for (std::size_t i = 0; i < n; ++i) h[i * n + i] = sy / yy;
    std::vector<double> v(n * n), vh(n * n, 0.0), next(n * n, 0.0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) v[i * n + j] = (i == j ? 1.0 : 0.0) - rho * s[i] * y[j];
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        for (std::size_t l = 0; l < n; ++l) vh[i * n + j] += v[i * n + l] * h[l * n + j];
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        for (std::size_t l = 0; l < n; ++l) next[i * n + j] += vh[i * n + l] * v[j * n + l];
        next[i * n + j] += rho * s[i] * s[j];
      }
    h = next;
    dense.add(s, y);
    limited.add(s, y);
    // The direction −H·g against H's: the same to rounding; the secant equation H y = s.
    const std::vector<double> g = {0.3, -1.2, 0.7, 0.05};
    std::vector<double> p, hy;
    dense.direction(g, p);
    dense.direction(y, hy);
    for (std::size_t i = 0; i < n; ++i) {
      double expected = 0;
      for (std::size_t j = 0; j < n; ++j) expected -= h[i * n + j] * g[j];
      CHECK(p[i] == Approx(expected).epsilon(1e-12).margin(1e-14));
      CHECK(-hy[i] == Approx(s[i]).epsilon(1e-12).margin(1e-14));
    }
  }
  CHECK_FALSE(dense.empty());
  // L-BFGS with one pair: the secant equation for the last pair only; the dense H holds all four
  // (after four pairs of a 4-d quadratic along independent steps, BFGS's H is A⁻¹ only with
  // exact line searches, so no more is claimed here).
  std::vector<double> p_dense, p_limited;
  const std::vector<double> g = {0.3, -1.2, 0.7, 0.05};
  dense.direction(g, p_dense);
  limited.direction(g, p_limited);
  double differ = 0;
  for (std::size_t i = 0; i < n; ++i) differ = std::max(differ, std::fabs(p_dense[i] - p_limited[i]));
  CHECK(differ > 1e-3);
  dense.clear();
  CHECK(dense.empty());
  std::vector<double> p_empty;
  dense.direction(g, p_empty);
  for (std::size_t i = 0; i < n; ++i) CHECK(p_empty[i] == -g[i]);
}

TEST_CASE("optimize: write_stan_csv writes CmdStan's optimize layout (lp__ without the constants), read back", "[inference]") {
  using namespace tyche;
  namespace te = tyche_examples;
  const data_file file = read_json_data((te::posteriors_dir(__FILE__) / "kidiq-kidscore_interaction" / "data.json").string());
  const auto p = te::kidiq_kidscore_interaction(file);
  const optimize_result mode = optimize(p.model, {.algorithm = optimize_algorithm::newton, .seed = 3});
  std::ostringstream os;
  write_stan_csv(os, mode, {.model = "kidiq"});
  std::istringstream in(os.str());
  const stan_csv csv = read_stan_csv(in, "optimize");
  REQUIRE(csv.rows == 1);
  REQUIRE(csv.cols() == 1 + mode.values.size());
  CHECK(csv.names[0] == "lp__");
  CHECK(csv.names[2] == "beta.2");
  CHECK(csv.config_value("method") == "optimize");
  CHECK(csv.config_value("algorithm") == "newton");
  CHECK(csv.config_value("jacobian") == "0");
  CHECK(csv.config_value("model") == "kidiq");
  for (std::size_t k = 0; k < mode.values.size(); ++k) CHECK(csv.at(0, k + 1) == mode.values[k]);  // round trip
  // lp__ as CmdStan's optimize prints it for kidiq (rstan 2.21: log p − C = −1472.676 at the
  // mode, docs/inference.md), not the log density with every constant.
  CHECK(csv.at(0, 0) == Approx(-1472.676).margin(1e-3));
  CHECK(mode.log_density - mode.constant == csv.at(0, 0));
  CHECK(std::stod(*csv.config_value("log_density")) == mode.log_density);
  // Sizes that disagree are refused.
  optimize_result broken = mode;
  broken.values.pop_back();
  std::ostringstream sink;
  CHECK_THROWS_WITH(write_stan_csv(sink, broken), Contains("holds 4 values for 5 names"));
  // A line break in a comment would start a line the reader takes as the header.
  CHECK_THROWS_WITH(write_stan_csv(sink, mode, {.model = "kidiq\nlp__,a"}), Contains("must be one line each"));
}
