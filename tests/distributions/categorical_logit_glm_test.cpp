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
    // value() takes the op's forward_value (no gradient sums), value_and_gradient its forward:
    // the same value, bit for bit.
    std::vector<double> g(p.size());
    CHECK(f.value(p) == f.value_and_gradient(p, g));
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

TEST_CASE("categorical_logit_glm: X of floats gives what the same values as doubles give",
          "[distributions][categorical_logit_glm]") {
  // X rounded to float once; the float matrix and a double copy of the same values must give the
  // same value and gradient (each float converted exactly, the sums in double), in one chain
  // and in lanes; the float matrix's data checks name the index and the value.
  const std::vector<double> x0 = random_matrix(N, P, 21);
  const std::vector<float> xf(x0.begin(), x0.end());
  const std::vector<double> xd(xf.begin(), xf.end());
  const std::vector<double> y{4, 2, 3, 1, 4, 3, 2, 1, 2, 2, 3, 1, 4};
  vector_param<"alpha", K> alpha;
  vector_param<"beta", P * K> beta;
  const auto ff = compile(categorical_logit_glm(matrix(xf.data(), N, P, "X"), alpha, beta).log_prob(data(y)), alpha, beta);
  const auto fd = compile(categorical_logit_glm(matrix(xd, N, P, "X"), alpha, beta).log_prob(data(y)), alpha, beta);
  const auto pts = tyche_test::random_points(6, K + P * K, -2, 2, 22);
  for (const auto& p : pts) {
    std::vector<double> gf(p.size()), gd(p.size());
    const double vf = ff.value_and_gradient(p, gf), vd = fd.value_and_gradient(p, gd);
    CHECK(vf == Approx(vd).epsilon(1e-13));
    CHECK(ff.value(p) == Approx(vd).epsilon(1e-13));
    for (std::size_t k = 0; k < p.size(); ++k) CHECK(gf[k] == Approx(gd[k]).epsilon(1e-13).margin(1e-14));
  }
  tyche_test::check_lanes(ff, pts, "categorical_logit_glm, X of floats (lanes)");
  // A model with it samples (draw_all reads the floats too).
  auto a = normal<"alpha">(0.0, 1.0, shape<K>);
  auto b = normal<"beta">(0.0, 1.0, shape<P * K>);
  const auto m = model(joint(a, b, categorical_logit_glm(matrix(xf.data(), N, P, "X"), a, b).observe(data(y))));
  CHECK(m.dim() == K + P * K);
  std::vector<float> bad = xf;
  bad[P + 2] = NAN;
  CHECK_THROWS_WITH(categorical_logit_glm(matrix(bad.data(), N, P, "X"), alpha, beta), Contains("X[2, 3] = nan"));
}

TEST_CASE("categorical_logit_glm: K = 5 (four categories at a time, then one), K = 2, P = 1",
          "[distributions][categorical_logit_glm]") {
  const std::vector<double> x5 = random_matrix(N, 2, 12), x1 = random_matrix(N, 1, 13);
  const std::vector<double> y5{5, 1, 2, 3, 4, 5, 5, 2, 1, 3, 4, 2, 1}, y2{1, 2, 2, 1, 2, 1, 1, 2, 2, 2, 1, 1, 2};
  vector_param<"a5", 5> a5;
  vector_param<"b5", 10> b5;
  vector_param<"a2", 2> a2;
  vector_param<"b2", 2> b2;
  const auto f5 = compile(categorical_logit_glm(matrix(x5, N, 2, "X"), a5, b5).log_prob(data(y5)), a5, b5);
  const auto f2 = compile(categorical_logit_glm(matrix(x1, N, 1, "X"), a2, b2).log_prob(data(y2)), a2, b2);
  const auto p5 = tyche_test::random_points(8, 15, -2, 2, 14), p2 = tyche_test::random_points(8, 4, -2, 2, 15);
  for (std::size_t r = 0; r < 8; ++r) {
    tyche_test::discrete::check_log_pmf(f5.value(p5[r]), glm_reference(x5, y5, p5[r].data(), p5[r].data() + 5, N, 2, 5),
                                        "K = 5");
    tyche_test::discrete::check_log_pmf(f2.value(p2[r]), glm_reference(x1, y2, p2[r].data(), p2[r].data() + 2, N, 1, 2),
                                        "K = 2, P = 1");
    if (r < 3) {
      tyche_test::check_gradient_at(f5, p5[r], "K = 5");
      tyche_test::check_gradient_at(f2, p2[r], "K = 2, P = 1");
    }
  }
  tyche_test::check_lanes(f5, p5, "K = 5 (lanes)");
  tyche_test::check_lanes(f2, p2, "K = 2, P = 1 (lanes)");
}

TEST_CASE("categorical_logit_glm: one value per row, for loo and for rows weighted one by one",
          "[distributions][categorical_logit_glm]") {
  const std::vector<double> x = random_matrix(N, P, 16);
  const std::vector<double> y{4, 1, 2, 3, 3, 1, 2, 2, 1, 3, 2, 4, 1};
  // The rows' values, weighted: the adjoints differ by row, so the reverse pass reads X again.
  vector_param<"alpha", K> alpha;
  vector_param<"beta", P * K> beta;
  const auto rows = categorical_logit_glm(matrix(x, N, P, "X"), alpha, beta).log_prob(data(y)).a;
  std::vector<double> w(N);
  for (std::size_t i = 0; i < N; ++i) w[i] = 0.5 + 0.25 * double(i % 5);
  const auto f = compile(sum(data(w) * rows), alpha, beta);
  for (const auto& p : tyche_test::random_points(6, K + P * K, -1.5, 1.5, 17)) {
    long double ref = 0;
    for (std::size_t i = 0; i < N; ++i) {
      const std::vector<double> xi(x.begin() + static_cast<std::ptrdiff_t>(i * P), x.begin() + static_cast<std::ptrdiff_t>((i + 1) * P));
      ref += w[i] * glm_reference(xi, {y[i]}, p.data(), p.data() + K, 1, P, K);
    }
    tyche_test::discrete::check_log_pmf(f.value(p), ref, "weighted rows");
    tyche_test::check_gradient_at(f, p, "weighted rows");
  }
  tyche_test::check_lanes(f, tyche_test::random_points(8, K + P * K, -1.5, 1.5, 18), "weighted rows (lanes)");
  // A model's pointwise log-likelihood: one value per row (loo leaves out one row at a time).
  auto a = normal<"alpha">(0.0, 2.0, shape<K>);
  auto b = normal<"beta">(0.0, 2.0, shape<P * K>);
  const auto m = model(joint(a, b, categorical_logit_glm(matrix(x, N, P, "X"), a, b).observe(data(y, "y"))));
  const auto theta = tyche_test::random_points(1, K + P * K, -1, 1, 19)[0];
  const std::vector<double> ll = m.pointwise_log_likelihood(theta);
  REQUIRE(ll.size() == N);
  CHECK(m.observations_counted_whole().empty());
  for (std::size_t i = 0; i < N; ++i) {
    const std::vector<double> xi(x.begin() + static_cast<std::ptrdiff_t>(i * P), x.begin() + static_cast<std::ptrdiff_t>((i + 1) * P));
    tyche_test::discrete::check_log_pmf(ll[i], glm_reference(xi, {y[i]}, theta.data(), theta.data() + K, 1, P, K),
                                        "pointwise row " + std::to_string(i + 1));
  }
  CHECK(m.observation_names()[2] == "y[3]");
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
  // log_prob called directly (not through observe) checks the categories and the size too.
  const std::vector<double> y_big(N, 7.0), y_short(N - 2, 1.0);
  CHECK_THROWS_WITH(d.log_prob(data(y_big)), Contains("y[1] = 7 is not a category 1 … 4"));
  CHECK_THROWS_WITH(d.log_prob(data(y_short)), Contains("y has 11 values but X has 13 rows"));
  vector_param<"b", P * K - 1> wrong;
  CHECK_THROWS_WITH(categorical_logit_glm(matrix(x, N, P, "X"), alpha, wrong),
                    Contains("beta has 11 values, not 3*4") && Contains("X's 3 columns"));
  std::vector<double> bad = x;
  bad[2 * P + 1] = INFINITY;
  CHECK_THROWS_WITH(categorical_logit_glm(matrix(bad, N, P, "X"), alpha, beta), Contains("X[3, 2] = inf"));
}
