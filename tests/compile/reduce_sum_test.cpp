// Partial evaluation of sums (compile/reduce_sum.hpp): every rewritten expression must give
// the value and gradient of the same expression compiled without the rewrites, to 1e-12 relative
// (|a − b| ≤ 1e-12 · max(|a|, |b|, 1)), at 20 random points each; explain() must show the
// canonical form (a residual_squares node instead of a loop, scalars pulled out of sums) or
// the fallback loop where no rewrite applies.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace {

struct regression_data {
  std::size_t n = 60, k = 3;
  std::vector<double> X, y, w;
  regression_data() {
    std::mt19937_64 rng(7);
    std::normal_distribution<double> z(0.0, 1.0);
    X.resize(n * k);
    for (auto& v : X) v = z(rng);
    y.resize(n);
    w.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      y[i] = 50 + 2 * X[i * k] - X[i * k + 1] + 3 * z(rng);  // a large mean: centring matters
      w[i] = 0.5 + std::fabs(z(rng));
    }
  }
};
const regression_data& data_set() {
  static const regression_data d;
  return d;
}

bool close(double a, double b) {
  return std::fabs(a - b) <= 1e-12 * std::max({std::fabs(a), std::fabs(b), 1.0});
}

// Compiles lp both ways with the layout (alpha, beta, sigma) and compares them at 20 points;
// returns explain() of the rewritten program.
template <class E, class... Ps>
std::string check_rewrite_with(const E& lp, const Ps&... params) {
  using namespace tyche;
  const auto rewritten = compile(lp, params...);
  const auto plain = compile_without_rewrites(lp, params...);
  const std::size_t d = rewritten.dim();
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  for (int point = 0; point < 20; ++point) {
    std::vector<double> theta(d), g1(d), g2(d);
    for (auto& t : theta) t = u(rng);
    theta[d - 1] = std::fabs(theta[d - 1]) + 0.5;  // sigma > 0
    const double v1 = rewritten.value_and_gradient(theta, g1);
    const double v2 = plain.value_and_gradient(theta, g2);
    INFO(explain(rewritten) << "\npoint " << point << ": value " << v1 << " vs " << v2);
    CHECK(close(v1, v2));
    for (std::size_t i = 0; i < d; ++i) {
      INFO("gradient " << i << ": " << g1[i] << " vs " << g2[i]);
      CHECK(close(g1[i], g2[i]));
    }
    CHECK(rewritten.value(theta) == Approx(v1).epsilon(1e-14));
  }
  return explain(rewritten);
}
template <class E>
std::string check_rewrite(const E& lp) {
  using namespace tyche;
  param<"alpha"> alpha;
  vector_param<"beta"> beta(data_set().k);
  param<"sigma"> sigma;
  return check_rewrite_with(lp, alpha, beta, sigma);
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("partial evaluation: normal likelihoods of a linear predictor become O(k^2)", "[partial_eval]") {
  using namespace tyche;
  const auto& ds = data_set();
  param<"alpha"> alpha;
  vector_param<"beta"> beta(ds.k);
  param<"sigma"> sigma;
  auto X = matrix(ds.X.data(), ds.n, ds.k);
  auto y = data(ds.y);
  const double c = 0.918938533204672742;
  // Forms a user or a distribution writes; each must reduce to sufficient statistics.
  const std::vector<std::string> explained = {
      check_rewrite(sum(lit<-1, 2> * square((y - (alpha + matvec(X, beta))) / sigma) - log(sigma) - c) +
                    0 * alpha + 0 * sigma),
      check_rewrite(sum(square(y - (matvec(X, beta) + alpha))) + alpha + sigma),
      check_rewrite(sum(square((alpha + matvec(X, beta)) - y)) + alpha + sigma),
      check_rewrite(sum(square(y - matvec(X, beta))) + alpha + sigma),
      check_rewrite(sum(square(matvec(X, beta) - y)) * sigma + alpha),
      check_rewrite(-sum(square((y - (alpha + matvec(X, beta))) * sigma))),
      check_rewrite(sum(square(sigma * (y - (alpha + matvec(X, beta)))))),
      check_rewrite(sum(-(square(y - (alpha + matvec(X, beta))) / square(sigma)))),
      check_rewrite(sum(lit<3> * square(y - (alpha + matvec(X, beta))) + sigma) + alpha),
      check_rewrite(sum(sigma + square(y - (alpha + matvec(X, beta))) * alpha)),
      check_rewrite(sum(square(y - (exp(alpha) + matvec(X, beta)))) / sigma),
      check_rewrite(sum(square(y - (alpha * sigma + matvec(X, beta))))),
      // Any arrangement of the same Line (operations/linear.hpp): y − Xv − s, −Xv + y + c, …
      check_rewrite(sum(square(y - matvec(X, beta) - alpha)) + sigma),
      check_rewrite(sum(square(-matvec(X, beta) + y + 2.5)) + alpha + sigma),
      check_rewrite(sum(square((y - alpha) - (matvec(X, beta) + sigma)))),
      check_rewrite(sum(square(matvec(X, beta) - (y - alpha) - lit<1>)) + sigma),
  };
  for (const auto& e : explained) {
    INFO(e);
    CHECK(contains(e, "residual_squares("));
    CHECK(!contains(e, "sum["));  // no loop over the data is left
  }
  CHECK(contains(explained[0], "residual_squares(alpha, beta[3]; n=60)"));
  CHECK(contains(explained[3], "residual_squares(0, beta[3]; n=60)"));
  CHECK(contains(explained[12], "residual_squares(alpha, beta[3]; n=60)"));
  CHECK(contains(explained[13], "residual_squares(-2.5, beta[3]; n=60)"));
  CHECK(contains(explained[14], "residual_squares((alpha + sigma), beta[3]; n=60)"));
  CHECK(contains(explained[15], "residual_squares((alpha - 1), beta[3]; n=60)"));
}

TEST_CASE("partial evaluation: an iid likelihood without covariates becomes O(1)", "[partial_eval]") {
  // Σ(y − s)² for data y and a scalar s of parameters: S + n·(ȳ − s)², the centred S and the mean
  // computed when the program is compiled. What normal(mu, sigma).observe(data(y)) writes (it
  // read every observation at each evaluation before).
  using namespace tyche;
  const auto& ds = data_set();
  param<"alpha"> alpha;
  vector_param<"beta"> beta(ds.k);
  param<"sigma"> sigma;
  auto y = data(ds.y);  // mean about 50: the centred form keeps the digits
  auto w = data(ds.w);
  const std::vector<std::string> explained = {
      check_rewrite(sum(lit<-1, 2> * square((y - alpha) / sigma) - log(sigma)) + sum(beta)),
      check_rewrite(sum(square(alpha - y)) + sigma + sum(beta)),
      check_rewrite(sum(square(y + alpha * sigma)) + sum(beta)),
      check_rewrite(sum(square(exp(alpha) + y)) * sigma + sum(beta)),
      check_rewrite(-sum(square((y * w - alpha) * sigma)) + sum(beta)),  // data-only y·w is data
      check_rewrite(sum(square(sqrt(y) - at(beta, 1)) / square(sigma)) + alpha),
  };
  for (const auto& e : explained) {
    INFO(e);
    CHECK(!contains(e, "sum[60]"));  // no loop over the 60 observations
  }
  // (The rest of each expression: sum(beta) is a loop over beta's 3 values.)
  CHECK(contains(explained[0], "(60 * square("));
  // Not this rule: squares weighted per observation (the loop stays).
  const auto kept = check_rewrite(sum(square(y - alpha) * w) + sigma + sum(beta));
  CHECK(contains(kept, "sum[60]"));
}

TEST_CASE("partial evaluation: a predictor written elementwise is reduced too", "[partial_eval]") {
  using namespace tyche;
  const auto& ds = data_set();
  param<"alpha"> alpha;
  param<"b1"> b1;
  param<"b2"> b2;
  vector_param<"beta"> beta(ds.k);
  param<"sigma"> sigma;
  // The columns of X as data vectors, and their product (an interaction).
  std::vector<double> x1(ds.n), x2(ds.n);
  for (std::size_t i = 0; i < ds.n; ++i) {
    x1[i] = ds.X[i * ds.k];
    x2[i] = ds.X[i * ds.k + 1];
  }
  auto X = matrix(ds.X.data(), ds.n, ds.k);
  auto y = data(ds.y);
  const auto d1 = data(x1), d2 = data(x2);
  // Every parameter occurs in every case (0·(…) and Σ0·beta add nothing), in one layout.
  const auto all = lit<0> * (alpha + b1 + b2 + sigma) + sum(lit<0> * beta);
  auto check = [&](const auto& lp) { return check_rewrite_with(lp + all, alpha, b1, b2, beta, sigma); };
  const std::vector<std::string> explained = {
      // kidiq as Rainier writes it: b0 + b1·x1 + b2·x2 + b3·x1·x2
      check(sum(lit<-1, 2> * square((y - (alpha + b1 * d1 + b2 * d2 + sigma * d1 * d2)) / sigma))),
      check(sum(square(y - b1 * d1))),
      check(sum(square(lit<2> * y - d1 * b1 - alpha * (b2 * d2)))),
      check(sum(square(y - (alpha + matvec(X, beta)) - b1 * d1 + y))),
      check(sum(square(b1 * d1))),  // Σ(s·d)² = s²·Σd²
  };
  for (const auto& e : explained) {
    INFO(e);
    CHECK(!contains(e, "sum[60]"));  // no loop over the data is left
  }
  CHECK(contains(explained[0], "residual_squares(alpha, stack[3](b1, b2, sigma); n=60)"));
  CHECK(contains(explained[1], "residual_squares(0, stack[1](b1); n=60)"));
  CHECK(contains(explained[2], "stack[2](b1, (alpha * b2))"));
  CHECK(contains(explained[3], "stack[4](b1, beta[3])"));
  CHECK(contains(explained[4], "square(b1)"));
}

TEST_CASE("partial evaluation: scalars leave the loop, the rest stays one loop", "[partial_eval]") {
  using namespace tyche;
  const auto& ds = data_set();
  param<"alpha"> alpha;
  vector_param<"beta"> beta(ds.k);
  param<"sigma"> sigma;
  auto X = matrix(ds.X.data(), ds.n, ds.k);
  auto y = data(ds.y);
  auto w = data(ds.w);
  // Not reducible to statistics: per-observation scales, a non-linear predictor, other
  // likelihoods. Scalar factors and offsets still leave the loop.
  const std::vector<std::string> explained = {
      check_rewrite(sum(lit<-1, 2> * square((y - (alpha + matvec(X, beta))) / w) - log(sigma)) + sigma),
      check_rewrite(sum(square(y - exp(alpha + matvec(X, beta))) / sigma)),
      check_rewrite(sum(y * (alpha + matvec(X, beta)) - log1p_exp(alpha + matvec(X, beta))) * sigma),
      check_rewrite(sum(sigma * abs(y - (alpha + matvec(X, beta))))),
      check_rewrite(sum(square(y - alpha * w) + square(at(beta, 0) * w)) + sigma),
      check_rewrite(sum(alpha - square(w * sigma)) + sum(beta)),
      check_rewrite(log_sum_exp(alpha + matvec(X, beta) - sigma)),
      check_rewrite(sum(square(y - (alpha + matvec(X, beta))) * w) + sigma),
  };
  for (const auto& e : explained) {
    INFO(e);
    CHECK(contains(e, "sum[") != contains(e, "log_sum_exp["));
    CHECK(!contains(e, "residual_squares("));
  }
  // Offsets leave the loop: − log σ as 60 · log(sigma), a broadcast alpha as 60 · alpha. Factors
  // stay in a loop that is not reduced otherwise: outside, the loop would lose its fused
  // single-pass gradient (see pull_out).
  CHECK(contains(explained[0], "(60 * log(sigma))"));
  CHECK(contains(explained[5], "(60 * alpha)"));
  // A vector divided by a scalar parameter becomes a product with its inverse, computed once.
  CHECK(contains(explained[1], "sum[60]((square((data[60] - exp((alpha + matvec(matrix[60 x 3], beta[3]))))) * inv(sigma)))"));
  CHECK(contains(explained[3], "sum[60]((sigma * abs("));
}

TEST_CASE("partial evaluation: a model's normal likelihood is reduced; NUTS still matches", "[partial_eval]") {
  using namespace tyche;
  const auto& ds = data_set();
  auto sigma = half_normal<"sigma">(5.0);
  auto alpha = normal<"alpha">(0.0, 100.0);
  auto beta = normal<"beta">(0.0, 10.0, shape_of(ds.k));
  const auto m = model(joint(sigma, alpha, beta,
                             normal(alpha + matvec(matrix(ds.X.data(), ds.n, ds.k), beta), sigma).observe(data(ds.y))));
  const std::string e = explain(m);
  INFO(e);
  CHECK(contains(e, "residual_squares(alpha, beta[3]; n=60)"));
  // The posterior means of least squares with these weak priors: close to the OLS fit.
  const auto fit = nuts(m, {.chains = 2, .warmup = 300, .draws = 300, .seed = 4});
  const auto a = fit.parameter(1);
  double mean = 0;
  for (const auto& ch : a)
    for (double v : ch) mean += v / 600.0;
  CHECK(std::fabs(mean - 50.0) < 2.0);
}
