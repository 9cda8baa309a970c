// Stan's GLM likelihoods (tyche/distributions/glm.hpp): normal_id_glm, bernoulli_logit_glm,
// binomial_logit_glm, poisson_log_glm and neg_binomial_2_log_glm. Each log density against a computation written
// here in long double (relative error ≤ 1e-12; 1e-10 for normal_id_glm, whose scalar-σ form sums
// Xᵀy and XᵀX), with scalar and per-row intercepts and scales; gradients against
// Richardson-extrapolated finite differences; SIMD lanes against one chain; the log density's
// type the same as that of the family written out with alpha + matvec(X, beta) (so the same
// simplifications and code); the Stan-named functions; a model's pointwise log-likelihood,
// predictive draws and do_; the checks of sizes, data and arguments, whose messages name the GLM.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "support/discrete_checks.hpp"
#include "support/property.hpp"

using namespace tyche;
using Catch::Matchers::Contains;
namespace dc = tyche_test::discrete;

namespace {

constexpr std::size_t N = 17, P = 3;

std::vector<double> random_matrix(std::size_t n, std::size_t p, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z;
  std::vector<double> x(n * p);
  for (auto& v : x) v = 0.7 * z(rng);
  return x;
}

/// η_r = a_r + Σ_j X_rj b_j in long double (a: one value, or one per row).
long double eta_of(const std::vector<double>& x, const std::vector<double>& a, const double* b, std::size_t r) {
  long double e = a.size() == 1 ? a[0] : a[r];
  for (std::size_t j = 0; j < P; ++j) e += static_cast<long double>(x[r * P + j]) * b[j];
  return e;
}
long double at_row(const std::vector<double>& v, std::size_t r) { return v.size() == 1 ? v[0] : v[r]; }

enum class glm_link { normal, bernoulli, binomial, poisson, neg_binomial };

/// Σ_r log p(y_r | η_r[, s_r]) in long double.
long double reference(glm_link l, const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& a,
                      const double* b, const std::vector<double>& s) {
  long double total = 0;
  for (std::size_t r = 0; r < y.size(); ++r) {
    const long double e = eta_of(x, a, b, r), yr = y[r];
    switch (l) {
      case glm_link::normal: {
        const long double sd = at_row(s, r), z = (yr - e) / sd;
        total += -0.5L * std::log(2 * 3.14159265358979323846264338327950288L) - std::log(sd) - z * z / 2;
        break;
      }
      case glm_link::bernoulli: total += yr * e - std::log1p(std::exp(e)); break;
      case glm_link::binomial: {  // s: the trials
        const long double n = at_row(s, r);
        total += std::lgamma(n + 1) - std::lgamma(yr + 1) - std::lgamma(n - yr + 1) + yr * e - n * std::log1p(std::exp(e));
        break;
      }
      case glm_link::poisson: total += yr * e - std::exp(e) - std::lgamma(yr + 1); break;
      case glm_link::neg_binomial: {
        const long double phi = at_row(s, r), mu = std::exp(e);
        total += std::lgamma(yr + phi) - std::lgamma(yr + 1) - std::lgamma(phi) + yr * (e - std::log(mu + phi)) +
                 phi * (std::log(phi) - std::log(mu + phi));
        break;
      }
    }
  }
  return total;
}

std::vector<double> counts(std::size_t n, std::uint64_t seed, double top) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> u(0, static_cast<int>(top));
  std::vector<double> y(n);
  for (auto& v : y) v = u(rng);
  return y;
}

}  // namespace

TEST_CASE("GLM likelihoods: the log density against long double, gradients, lanes", "[distributions][glm]") {
  const std::vector<double> x = random_matrix(N, P, 5);
  const auto X = matrix(x, N, P, "X");
  std::vector<double> yn(N);
  {
    std::mt19937_64 rng(6);
    std::normal_distribution<double> z;
    for (auto& v : yn) v = 1.5 * z(rng);
  }
  const std::vector<double> yb = counts(N, 7, 1), yc = counts(N, 8, 6);
  std::vector<double> a_rows(N), s_rows(N);
  for (std::size_t r = 0; r < N; ++r) {
    a_rows[r] = 0.1 * double(r % 4) - 0.2;
    s_rows[r] = 0.5 + 0.125 * double(r % 3);
  }
  param<"alpha"> alpha;
  vector_param<"beta", P> beta;
  param<"log_s"> log_s;
  const auto pts = tyche_test::random_points(6, P + 2, -1, 1, 9);
  // θ = (alpha, beta..., log_s): the scale exp(log_s).
  // scale_rows: one scale (or the trials) per row; empty: the scalar exp(log_s).
  auto check = [&](const auto& f, glm_link l, const std::vector<double>& y, bool per_row_alpha,
                   const std::vector<double>& scale_rows, const std::string& what, double tol) {
    for (std::size_t k = 0; k < pts.size(); ++k) {
      const auto& p = pts[k];
      const std::vector<double> a = per_row_alpha ? a_rows : std::vector<double>{p[0]};
      const std::vector<double> s = !scale_rows.empty() ? scale_rows : std::vector<double>{std::exp(p[P + 1])};
      tyche_test::discrete::check_log_pmf(f.value(p), reference(l, x, y, a, p.data() + 1, s), what, tol);
      if (k < 2) tyche_test::check_gradient_at(f, p, what);
    }
    tyche_test::check_lanes(f, pts, what + " (lanes)");
  };
  // Every program takes all P + 2 coordinates (alpha and log_s unused where data stand for them).
  check(compile(normal_id_glm(X, alpha, beta, exp(log_s)).log_prob(data(yn)), alpha, beta, log_s), glm_link::normal, yn,
        false, {}, "normal_id_glm", 1e-10);
  check(compile(normal_id_glm(X, data(a_rows), beta, data(s_rows)).log_prob(data(yn)) + 0 * (alpha + log_s), alpha,
                beta, log_s),
        glm_link::normal, yn, true, s_rows, "normal_id_glm, alpha and sigma per row", 1e-10);
  check(compile(bernoulli_logit_glm(X, alpha, beta).log_prob(data(yb)) + 0 * log_s, alpha, beta, log_s), glm_link::bernoulli,
        yb, false, {}, "bernoulli_logit_glm", 1e-12);
  check(compile(bernoulli_logit_glm(X, data(a_rows), beta).log_prob(data(yb)) + 0 * (alpha + log_s), alpha, beta, log_s),
        glm_link::bernoulli, yb, true, {}, "bernoulli_logit_glm, alpha per row", 1e-12);
  std::vector<double> trials(N), yt(N);
  for (std::size_t r = 0; r < N; ++r) {
    trials[r] = double(2 + r % 5);
    yt[r] = double(r % 3);
  }
  check(compile(binomial_logit_glm(data(trials), X, alpha, beta).log_prob(data(yt)) + 0 * log_s, alpha, beta, log_s),
        glm_link::binomial, yt, false, trials, "binomial_logit_glm", 1e-12);
  check(compile(poisson_log_glm(X, alpha, beta).log_prob(data(yc)) + 0 * log_s, alpha, beta, log_s), glm_link::poisson, yc,
        false, {}, "poisson_log_glm", 1e-12);
  check(compile(neg_binomial_2_log_glm(X, alpha, beta, exp(log_s)).log_prob(data(yc)), alpha, beta, log_s),
        glm_link::neg_binomial, yc, false, {}, "neg_binomial_2_log_glm", 1e-12);
  check(compile(neg_binomial_2_log_glm(X, alpha, beta, data(s_rows)).log_prob(data(yc)) + 0 * log_s, alpha, beta, log_s),
        glm_link::neg_binomial, yc, false, s_rows, "neg_binomial_2_log_glm, phi per row", 1e-12);
}

TEST_CASE("GLM likelihoods: the same expression as the family written out, and the Stan-named functions",
          "[distributions][glm]") {
  const std::vector<double> x = random_matrix(N, P, 11);
  const std::vector<float> xf(x.begin(), x.end());
  const std::vector<double> yn = random_matrix(N, 1, 12), yb = counts(N, 13, 1), yc = counts(N, 14, 9);
  param<"alpha"> alpha;
  vector_param<"beta", P> beta;
  param<"phi"> log_phi;
  const auto X = matrix(x, N, P, "X");
  const auto Xf = matrix(xf.data(), N, P, "X");
  const auto phi = exp(log_phi);
  const auto eta = alpha + matvec(X, beta);
  // The GLM's log density is the family's at η = alpha + Xβ, type for type: the same
  // simplifications (sufficient statistics, the fused Bernoulli and Poisson terms) and code.
  STATIC_REQUIRE(std::is_same_v<decltype(normal_id_glm(X, alpha, beta, phi).log_prob(data(yn))),
                              decltype(normal(eta, phi).log_prob(data(yn)))>);
  STATIC_REQUIRE(std::is_same_v<decltype(bernoulli_logit_glm(X, alpha, beta).log_prob(data(yb))),
                              decltype(bernoulli_logit(eta).log_prob(data(yb)))>);
  const std::vector<double> nt(N, 9.0);
  STATIC_REQUIRE(std::is_same_v<decltype(binomial_logit_glm(data(nt), X, alpha, beta).log_prob(data(yc))),
                                decltype(binomial_logit(data(nt), eta).log_prob(data(yc)))>);
  STATIC_REQUIRE(std::is_same_v<decltype(poisson_log_glm(X, alpha, beta).log_prob(data(yc))),
                              decltype(poisson_log(eta).log_prob(data(yc)))>);
  STATIC_REQUIRE(std::is_same_v<decltype(neg_binomial_2_log_glm(Xf, alpha, beta, phi).log_prob(data(yc))),
                              decltype(neg_binomial_2_log(alpha + matvec(Xf, beta), phi).log_prob(data(yc)))>);
  // The functions under Stan's names, against the families observed.
  const auto pts = tyche_test::random_points(4, P + 2, -1, 1, 15);
  const auto f1 = compile(normal_id_glm_lpdf(data(yn), X, alpha, beta, phi), alpha, beta, log_phi);
  const auto g1 = compile(normal(eta, phi).log_prob(data(yn)), alpha, beta, log_phi);
  const auto f2 = compile(bernoulli_logit_glm_lpmf(data(yb), X, alpha, beta) + 0 * log_phi, alpha, beta, log_phi);
  const auto g2 = compile(bernoulli_logit(eta).log_prob(data(yb)) + 0 * log_phi, alpha, beta, log_phi);
  const auto f3 = compile(poisson_log_glm_lpmf(data(yc), X, alpha, beta) + 0 * log_phi, alpha, beta, log_phi);
  const auto g3 = compile(poisson_log(eta).log_prob(data(yc)) + 0 * log_phi, alpha, beta, log_phi);
  const auto f4 = compile(neg_binomial_2_log_glm_lpmf(data(yc), Xf, alpha, beta, phi), alpha, beta, log_phi);
  const auto g4 = compile(neg_binomial_2_log(alpha + matvec(Xf, beta), phi).log_prob(data(yc)), alpha, beta, log_phi);
  const auto f5 = compile(binomial_logit_glm_lpmf(data(yc), data(nt), X, alpha, beta) + 0 * log_phi, alpha, beta, log_phi);
  const auto g5 = compile(binomial_logit(data(nt), eta).log_prob(data(yc)) + 0 * log_phi, alpha, beta, log_phi);
  for (const auto& p : pts) {
    CHECK(f5.value(p) == g5.value(p));
    CHECK(f1.value(p) == g1.value(p));
    CHECK(f2.value(p) == g2.value(p));
    CHECK(f3.value(p) == g3.value(p));
    CHECK(f4.value(p) == g4.value(p));
  }
}

TEST_CASE("GLM likelihoods: X of floats with coefficients that are not a bare parameter", "[distributions][glm]") {
  // Non-centred coefficients beta = tau * z: matvec reads X in place (a vector_op), for floats too;
  // X rounded to float once, then the float matrix and a double copy of its values must agree.
  const std::vector<double> x0 = random_matrix(N, P, 41);
  const std::vector<float> xf(x0.begin(), x0.end());
  const std::vector<double> xd(xf.begin(), xf.end()), yb = counts(N, 42, 1);
  param<"alpha"> alpha;
  param<"log_tau"> log_tau;
  vector_param<"z", P> z;
  const auto ff = compile(bernoulli_logit_glm(matrix(xf.data(), N, P, "X"), alpha, exp(log_tau) * z).log_prob(data(yb)),
                          alpha, log_tau, z);
  const auto fd = compile(bernoulli_logit_glm(matrix(xd, N, P, "X"), alpha, exp(log_tau) * z).log_prob(data(yb)),
                          alpha, log_tau, z);
  const auto pts = tyche_test::random_points(5, P + 2, -1, 1, 43);
  for (const auto& p : pts) {
    std::vector<double> gf(p.size()), gd(p.size());
    CHECK(ff.value_and_gradient(p, gf) == Approx(fd.value_and_gradient(p, gd)).epsilon(1e-14));
    for (std::size_t k = 0; k < p.size(); ++k) CHECK(gf[k] == Approx(gd[k]).epsilon(1e-13).margin(1e-14));
  }
  tyche_test::check_lanes(ff, pts, "bernoulli_logit_glm, X of floats, tau * z (lanes)");
  std::vector<float> bad = xf;
  bad[P + 1] = NAN;
  CHECK_THROWS_WITH(bernoulli_logit_glm(matrix(bad.data(), N, P, "X"), alpha, exp(log_tau) * z), Contains("X[2, 2] = nan"));
}

TEST_CASE("GLM likelihoods in a model: one value per row, predictive draws, do_", "[distributions][glm]") {
  const std::vector<double> x = random_matrix(N, P, 21);
  const std::vector<double> yc = counts(N, 22, 5);
  auto alpha = normal<"alpha">(0.0, 1.0);
  auto beta = normal<"beta">(0.0, 1.0, shape<P>);
  auto phi = lognormal<"phi">(1.0, 0.5);
  const auto X = matrix(x, N, P, "X");
  const auto m = model(joint(alpha, beta, phi, neg_binomial_2_log_glm(X, alpha, beta, phi).observe(data(yc, "y"))));
  const std::vector<double> theta{0.3, -0.2, 0.4, 0.1, 0.5};  // phi = exp(0.5)
  const std::vector<double> ll = m.pointwise_log_likelihood(theta);
  REQUIRE(ll.size() == N);
  CHECK(m.observation_names()[4] == "y[5]");
  const double phi_v = std::exp(0.5);
  for (std::size_t r = 0; r < N; ++r) {
    const std::vector<double> xr(x.begin() + static_cast<std::ptrdiff_t>(r * P), x.begin() + static_cast<std::ptrdiff_t>((r + 1) * P));
    tyche_test::discrete::check_log_pmf(ll[r], reference(glm_link::neg_binomial, xr, {yc[r]}, {0.3}, theta.data() + 1, {phi_v}),
                                        "row " + std::to_string(r + 1));
  }
  // Row 1's predictive draws: mean μ = e^η, variance μ + μ²/φ (z-tests at 4.5, the variance's
  // standard error from the sample's fourth moment).
  {
    const double mu = std::exp(static_cast<double>(eta_of(x, {0.3}, theta.data() + 1, 0)));
    std::mt19937_64 rng(23);
    const int n = 20000;
    std::vector<double> row1;
    for (int i = 0; i < n; ++i) {
      const auto rep = m.sample_observations(std::span<const double>(theta), rng);
      REQUIRE(rep.size() == 1);
      REQUIRE(rep[0].size() == N);
      row1.push_back(rep[0][0]);
    }
    dc::check_moments(row1, mu, mu + mu * mu / phi_v, "neg_binomial_2_log_glm's row 1");
  }
  // do_ fixes beta inside the linear predictor.
  const std::vector<double> b{0.25, -0.5, 0.75};
  const auto fixed = do_<"beta">(m, data(b));
  REQUIRE(fixed.dim() == 2);
  const std::vector<double> th2{0.3, 0.5};
  CHECK(fixed.log_prob(th2) - m.log_prob(std::vector<double>{0.3, 0.25, -0.5, 0.75, 0.5}) ==
        Approx(-(-0.5 * (0.25 * 0.25 + 0.25 + 0.5625) - 1.5 * std::log(2 * 3.14159265358979323846)))
            .epsilon(1e-12));
}

TEST_CASE("GLM likelihoods: checks of sizes, data and arguments name the GLM", "[distributions][glm]") {
  const std::vector<double> x = random_matrix(N, P, 31);
  const auto X = matrix(x, N, P, "X");
  param<"alpha"> alpha;
  vector_param<"beta", P> beta;
  vector_param<"b2", 2> b2;
  const std::vector<double> short_y(5, 1.0), a3(3, 0.0);
  std::vector<double> yb = counts(N, 32, 1), yc = counts(N, 33, 4);
  const std::vector<double> yc2 = counts(N, 34, 3), yn = random_matrix(N, 1, 35);
  CHECK_THROWS_WITH(bernoulli_logit_glm(X, alpha, beta).observe(data(short_y)),
                    Contains("bernoulli_logit_glm(X, alpha, beta).observe(y): y has 5 values but X has 17 rows"));
  CHECK_THROWS_WITH(normal_id_glm(X, alpha, beta, 1.0).observe(2.0),
                    Contains("normal_id_glm(X, alpha, beta, sigma).observe(y): y has 1 value but X has 17 rows"));
  CHECK_THROWS_WITH(poisson_log_glm(X, alpha, b2), Contains("poisson_log_glm(X, alpha, beta): X has 3 columns but beta has 2 values"));
  CHECK_THROWS_WITH(bernoulli_logit_glm(X, data(a3), beta),
                    Contains("bernoulli_logit_glm(X, alpha, beta): alpha has 3 values but X has 17 rows"));
  yb[3] = 2;
  CHECK_THROWS_WITH(bernoulli_logit_glm(X, alpha, beta).observe(data(yb)),
                    Contains("bernoulli_logit_glm(...).observe(y): y[4] = 2 is not 0 or 1"));
  // The family's own checks of y come after the GLM's: a count above its trials.
  const std::vector<double> few(N, 1.0);
  CHECK_THROWS_WITH(binomial_logit_glm(data(few), X, alpha, beta).observe(data(yc)),
                    Contains("binomial_logit_glm(...).observe(y): y[") && Contains("exceeds the number of trials n["));
  CHECK_THROWS_WITH(binomial_logit_glm(data(few), X, alpha, beta).observe(data(short_y)),
                    Contains("binomial_logit_glm(trials, X, alpha, beta).observe(y): y has 5 values but X has 17 rows"));
  yc[6] = 1.5;
  CHECK_THROWS_WITH(poisson_log_glm(X, alpha, beta).observe(data(yc)), Contains("poisson_log_glm(...).observe(y): y[7] = 1.5"));
  CHECK_THROWS_WITH(neg_binomial_2_log_glm_lpmf(data(yc2), X, alpha, beta, -2.0),
                    Contains("neg_binomial_2_log_glm(X, alpha, beta, phi): phi must be > 0, but it is -2"));
  CHECK_THROWS_WITH(normal_id_glm_lpdf(data(yn), X, alpha, beta, 0.0),
                    Contains("normal_id_glm(X, alpha, beta, sigma): sigma must be > 0, but it is 0"));
  // The scale, precision and trials beside η: one value or one per row.
  const std::vector<double> three(3, 1.0);
  CHECK_THROWS_WITH(normal_id_glm(X, alpha, beta, data(three)),
                    Contains("normal_id_glm(X, alpha, beta, sigma): sigma has 3 values but X has 17 rows"));
  CHECK_THROWS_WITH(neg_binomial_2_log_glm(X, alpha, beta, data(three)),
                    Contains("neg_binomial_2_log_glm(X, alpha, beta, phi): phi has 3 values but X has 17 rows"));
  CHECK_THROWS_WITH(binomial_logit_glm(data(three), X, alpha, beta),
                    Contains("binomial_logit_glm(trials, X, alpha, beta): trials has 3 values but X has 17 rows"));
  std::vector<double> bad = x;
  bad[2 * P + 1] = NAN;
  auto a = normal<"alpha">(0.0, 1.0);
  auto b = normal<"beta">(0.0, 1.0, shape<P>);
  CHECK_THROWS_WITH(model(joint(a, b, poisson_log_glm(matrix(bad, N, P, "X"), a, b).observe(data(yc2)))),
                    Contains("poisson_log_glm(...).observe(y)") && Contains("X[3, 2] = nan"));
}
