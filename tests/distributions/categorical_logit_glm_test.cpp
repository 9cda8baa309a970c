// categorical_logit_glm (tyche/distributions/categorical_logit_glm.hpp): multinomial logistic
// regression. The log pmf against a computation written here in long double (relative error
// ≤ 1e-12), gradients against Richardson-extrapolated finite differences (tests/support/
// property.hpp), SIMD lanes and float against double, large linear predictors, a reference
// category, the same model written with one matvec per category and log_sum_exp (the form
// categorical.hpp used to point to), Stan-named lpmf, draws' frequencies, NUTS on simulated data,
// and the data checks, whose messages name the index and the value.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/discrete_checks.hpp"
#include "support/property.hpp"

using namespace tyche;
using Catch::Matchers::Contains;

namespace {

constexpr std::size_t N = 13, P = 3, K = 4;

/// Σₙ log softmax(α + βᵀxₙ)_{yₙ} in long double; beta category by category (β[k·P + j]).
long double glm_reference(const std::vector<double>& x, const std::vector<double>& y, const double* alpha,
                          const double* beta, std::size_t n, std::size_t p, std::size_t k) {
  long double total = 0;
  for (std::size_t r = 0; r < n; ++r) {
    std::vector<long double> eta(k);
    long double top = -INFINITY;
    for (std::size_t c = 0; c < k; ++c) {
      long double e = alpha[c];
      for (std::size_t j = 0; j < p; ++j) e += static_cast<long double>(x[r * p + j]) * beta[c * p + j];
      eta[c] = e;
      top = std::max(top, e);
    }
    long double s = 0;
    for (long double e : eta) s += std::exp(e - top);
    total += eta[static_cast<std::size_t>(y[r]) - 1] - top - std::log(s);
  }
  return total;
}

std::vector<double> random_matrix(std::size_t n, std::size_t p, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z;
  std::vector<double> x(n * p);
  for (auto& v : x) v = z(rng);
  return x;
}

}  // namespace

TEST_CASE("categorical_logit_glm: log pmf against long double, gradients, lanes, float",
          "[distributions][categorical_logit_glm]") {
  const std::vector<double> x = random_matrix(N, P, 7);
  const std::vector<double> y{1, 2, 3, 4, 4, 3, 2, 1, 2, 2, 3, 1, 4};
  vector_param<"alpha", K> alpha;
  vector_param<"beta", P * K> beta;
  const auto f = compile(categorical_logit_glm(matrix(x, N, P, "X"), alpha, beta).log_prob(data(y)), alpha, beta);
  const auto pts = tyche_test::random_points(16, K + P * K, -2, 2, 11);
  for (std::size_t r = 0; r < pts.size(); ++r) {
    const auto& p = pts[r];
    const long double ref = glm_reference(x, y, p.data(), p.data() + K, N, P, K);
    tyche_test::discrete::check_log_pmf(f.value(p), ref, "categorical_logit_glm");
    if (r < 4) tyche_test::check_gradient_at(f, p, "categorical_logit_glm");
  }
  tyche_test::check_lanes(f, pts, "categorical_logit_glm (lanes)");
  tyche_test::check_float(f, pts[0], "categorical_logit_glm (float)");

  // Linear predictors of hundreds: the log-sum-exp is shifted by the largest, nothing overflows.
  std::vector<double> big = pts[0];
  for (auto& v : big) v *= 300;
  const long double ref_big = glm_reference(x, y, big.data(), big.data() + K, N, P, K);
  REQUIRE(std::isfinite(static_cast<double>(ref_big)));
  tyche_test::discrete::check_log_pmf(f.value(big), ref_big, "categorical_logit_glm, |eta| ~ 1e3");
}

TEST_CASE("categorical_logit_glm: a reference category, the lpmf, and the model written by hand",
          "[distributions][categorical_logit_glm]") {
  const std::vector<double> x = random_matrix(N, P, 8);
  const std::vector<double> y{3, 1, 2, 3, 3, 1, 2, 2, 1, 3, 2, 1, 1};
  // Category 1 as the reference: its intercept and coefficients are zeros.
  vector_param<"a", 2> a;
  vector_param<"b", P * 2> b;
  const auto alpha = append_row(rep_vector(0.0, 1), a);
  const auto beta = append_row(rep_vector(0.0, P), b);
  const auto f = compile(categorical_logit_glm(matrix(x, N, P, "X"), alpha, beta).log_prob(data(y)), a, b);
  const auto g = compile(categorical_logit_glm_lpmf(data(y), matrix(x, N, P, "X"), alpha, beta), a, b);
  // By hand, as categorical.hpp's comment said to write it: 0/1 indicators of categories 2 and 3.
  std::vector<double> is2(N), is3(N);
  for (std::size_t i = 0; i < N; ++i) {
    is2[i] = y[i] == 2 ? 1 : 0;
    is3[i] = y[i] == 3 ? 1 : 0;
  }
  const auto eta2 = at(a, 0) + matvec(matrix(x, N, P, "X"), head(b, P));
  const auto eta3 = at(a, 1) + matvec(matrix(x, N, P, "X"), tail(b, P));
  const auto h = compile(sum(data(is2) * eta2 + data(is3) * eta3 - log_sum_exp(0.0, eta2, eta3)), a, b);
  for (const auto& p : tyche_test::random_points(8, 2 + 2 * P, -1.5, 1.5, 21)) {
    std::vector<double> full_alpha{0.0, p[0], p[1]}, full_beta(3 * P, 0.0);
    for (std::size_t j = 0; j < 2 * P; ++j) full_beta[P + j] = p[2 + j];
    const long double ref = glm_reference(x, y, full_alpha.data(), full_beta.data(), N, P, 3);
    tyche_test::discrete::check_log_pmf(f.value(p), ref, "reference category");
    tyche_test::discrete::check_log_pmf(g.value(p), ref, "categorical_logit_glm_lpmf");
    tyche_test::discrete::check_log_pmf(h.value(p), ref, "by hand");
    std::vector<double> gf(p.size()), gh(p.size());
    std::vector<double> wf(f.workspace_size()), wh(h.workspace_size());
    f.value_and_gradient(std::span<const double>(p), std::span<double>(gf), std::span<double>(wf));
    h.value_and_gradient(std::span<const double>(p), std::span<double>(gh), std::span<double>(wh));
    for (std::size_t j = 0; j < p.size(); ++j) CHECK(gf[j] == Approx(gh[j]).epsilon(1e-12).margin(1e-13));
  }
}

TEST_CASE("categorical_logit_glm: draws have the softmax's frequencies", "[distributions][categorical_logit_glm]") {
  // One row of X repeated: every draw is from the same softmax.
  const std::size_t n = tyche_test::discrete::sample_size;
  const std::vector<double> row{0.4, -1.2, 0.7};
  std::vector<double> x;
  for (std::size_t r = 0; r < 8; ++r) x.insert(x.end(), row.begin(), row.end());
  const std::vector<double> a{0.2, -0.5, 0.0, 1.0};
  const std::vector<double> b{0.3, 0.1, -0.2, -0.4, 0.5, 0.9, 0.0, 0.0, 0.0, 0.6, -0.3, 0.2};  // category by category
  vector_param<"alpha", K> alpha;
  vector_param<"beta", P * K> beta;
  const auto d = categorical_logit_glm(matrix(x, 8, P, "X"), alpha, beta);
  std::mt19937_64 rng(31);
  const std::vector<double> draws = d.draw_all(rng, n, a, b);
  std::vector<double> prob(K);
  double total = 0;
  for (std::size_t c = 0; c < K; ++c) {
    double e = a[c];
    for (std::size_t j = 0; j < P; ++j) e += row[j] * b[c * P + j];
    total += prob[c] = std::exp(e);
  }
  std::vector<double> zero_based(draws.size());
  for (std::size_t i = 0; i < draws.size(); ++i) zero_based[i] = draws[i] - 1;
  tyche_test::discrete::check_chi_square(
      zero_based, [&](long long k) { return k >= 0 && k < static_cast<long long>(K) ? prob[k] / total : 0.0; },
      "categorical_logit_glm draws");
}

TEST_CASE("categorical_logit_glm: NUTS recovers simulated coefficients", "[distributions][categorical_logit_glm]") {
  // 600 rows, 2 predictors, 3 categories, category 1 the reference; the true values lie within
  // 4 posterior standard deviations of the posterior means (a fixed seed).
  constexpr std::size_t n = 600, p = 2;
  const std::vector<double> x = random_matrix(n, p, 41);
  const std::vector<double> a_true{0.5, -0.3}, b_true{1.0, -0.8, -0.6, 1.2};
  std::mt19937_64 rng(43);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> y(n);
  for (std::size_t r = 0; r < n; ++r) {
    double w[3] = {1.0, 0, 0};
    for (std::size_t c = 0; c < 2; ++c) w[c + 1] = std::exp(a_true[c] + x[r * p] * b_true[c * p] + x[r * p + 1] * b_true[c * p + 1]);
    const double s = u(rng) * (w[0] + w[1] + w[2]);
    y[r] = s < w[0] ? 1 : s < w[0] + w[1] ? 2 : 3;
  }
  auto a = normal<"a">(0.0, 5.0, shape<2>);
  auto b = normal<"b">(0.0, 5.0, shape<4>);
  auto m = model(joint(a, b,
                       categorical_logit_glm(matrix(x, n, p, "X"), append_row(rep_vector(0.0, 1), a),
                                             append_row(rep_vector(0.0, p), b))
                           .observe(data(y))));
  const nuts_fit fit = nuts(m, {.chains = 2, .warmup = 300, .draws = 300, .seed = 3});
  const std::vector<double> truth{0.5, -0.3, 1.0, -0.8, -0.6, 1.2};
  for (std::size_t k = 0; k < 6; ++k) {
    double mean = 0, m2 = 0, count = 0;
    for (const auto& chain : fit.parameter(k))
      for (double v : chain) {
        count += 1;
        const double delta = v - mean;
        mean += delta / count;
        m2 += delta * (v - mean);
      }
    const double sd = std::sqrt(m2 / (count - 1));
    INFO(fit.names[k] << ": mean " << mean << ", sd " << sd << ", true " << truth[k]);
    CHECK(std::fabs(mean - truth[k]) < 4 * sd);
  }
  CHECK(fit.divergences() == 0);
}

TEST_CASE("categorical_logit_glm: data checks name the index and the value", "[distributions][categorical_logit_glm]") {
  const std::vector<double> x = random_matrix(N, P, 9);
  vector_param<"alpha", K> alpha;
  vector_param<"beta", P * K> beta;
  const auto d = categorical_logit_glm(matrix(x, N, P, "X"), alpha, beta);
  std::vector<double> y(N, 1.0);
  y[4] = 5;
  CHECK_THROWS_WITH(d.observe(data(y)), Contains("y[5] = 5 is not a category 1 … 4"));
  y[4] = 0;
  CHECK_THROWS_WITH(d.observe(data(y)), Contains("y[5] = 0 is not a category"));
  y[4] = 2.5;
  CHECK_THROWS_WITH(d.observe(data(y)), Contains("y[5] = 2.5 is not a category"));
  y[4] = NAN;
  CHECK_THROWS_WITH(d.observe(data(y)), Contains("y[5] = nan is not finite"));
  const std::vector<double> short_y(N - 1, 1.0);
  CHECK_THROWS_WITH(d.observe(data(short_y)), Contains("y has 12 values but X has 13 rows"));
  vector_param<"b", P * K - 1> wrong;
  CHECK_THROWS_WITH(categorical_logit_glm(matrix(x, N, P, "X"), alpha, wrong),
                    Contains("beta has 11 values, not 3*4") && Contains("X's 3 columns"));
  std::vector<double> bad = x;
  bad[2 * P + 1] = INFINITY;
  CHECK_THROWS_WITH(categorical_logit_glm(matrix(bad, N, P, "X"), alpha, beta), Contains("X[3, 2] = inf"));
}
