// Loops over observations taken several at a time (observation batches, scalar/traits.hpp) and
// streamed matvecs (compile/stream.hpp), against plain loops written here: every length from 0 to
// 19 (whole batches and the elements left over, for batches of 2, 4 or 8 lanes), gathers that
// name one element twice within a batch, vector_op operands, and matrices whose column count is
// not a multiple of the batch width.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include "support/property.hpp"

#include <cmath>
#include <random>
#include <span>
#include <vector>

using namespace tyche;

namespace {

std::vector<double> normals(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n01;
  std::vector<double> v(n);
  for (auto& x : v) x = n01(rng);
  return v;
}

double rel(double a, double b) { return std::fabs(a - b) / std::max(1.0, std::fabs(b)); }

// Value and gradient of p at theta against the expected ones, to 1e-12 relative.
template <class P>
void check_against(const P& p, const std::vector<double>& theta, double value,
                   const std::vector<double>& gradient) {
  std::vector<double> g(p.dim()), ws(p.workspace_size());
  const double v = p.value_and_gradient(std::span<const double>(theta), std::span<double>(g),
                                        std::span<double>(ws));
  CHECK(rel(v, value) <= 1e-12);
  CHECK(rel(p.value(std::span<const double>(theta), std::span<double>(ws)), value) <= 1e-12);
  REQUIRE(g.size() == gradient.size());
  for (std::size_t k = 0; k < g.size(); ++k) {
    INFO("coordinate " << k << ": " << g[k] << " against " << gradient[k]);
    CHECK(rel(g[k], gradient[k]) <= 1e-12);
  }
}

}  // namespace

TEST_CASE("observation batches: sums of every length agree with a plain loop",
          "[core][streaming]") {
  param<"a"> a;
  param<"b"> b;
  for (std::size_t n = 0; n < 20; ++n) {
    INFO("n = " << n);
    const std::vector<double> x = normals(n, 11 + unsigned(n));
    // Σ log(1 + exp(a·x + b)) − exp(b)·x²: a scalar pushed from every lane, a transcendental
    // per element, an outer slot (exp(b)) read in the loop.
    const auto f = compile(sum(log1p(exp(a * data(x) + b)) - exp(b) * square(data(x))), a, b);
    const std::vector<double> theta{0.7, -0.3};
    double value = 0, ga = 0, gb = 0;
    for (double xi : x) {
      const double e = std::exp(theta[0] * xi + theta[1]);
      value += std::log1p(e) - std::exp(theta[1]) * xi * xi;
      const double s = e / (1 + e);
      ga += s * xi;
      gb += s - std::exp(theta[1]) * xi * xi;
    }
    check_against(f, theta, value, {ga, gb});
    tyche_test::check_lanes(f, tyche_test::random_points(8, 2, -1, 1, 5), "sum of a scalar model");
  }
}

TEST_CASE("observation batches: a vector parameter, a gather with repeated indices and a "
          "vector_op operand",
          "[core][streaming]") {
  for (std::size_t n = 1; n < 20; ++n) {
    INFO("n = " << n);
    const std::vector<double> x = normals(n, 40 + unsigned(n));
    // Indices repeat within every batch: 0, 0, 1, 0, 2, 0, 1, …
    std::vector<int> idx(n);
    for (std::size_t i = 0; i < n; ++i) idx[i] = int(i % 3 == 1 ? 0 : i % 4);
    vector_param<"v"> v(n);
    vector_param<"z", 4> z;
    param<"s"> s;
    const auto f = compile(sum(square(v - data(x)) * s) + sum(exp(gather(z, idx)) * data(x)) +
                               sum(cumulative_sum(v * data(x))),
                           v, z, s);
    std::vector<double> theta = normals(n + 5, 90 + unsigned(n));
    const double sv = theta[n + 4];
    double value = 0;
    std::vector<double> g(n + 5, 0.0);
    double running = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double d = theta[i] - x[i];
      value += d * d * sv;
      g[i] += 2 * d * sv;
      g[n + 4] += d * d;
      const double e = std::exp(theta[n + std::size_t(idx[i])]);
      value += e * x[i];
      g[n + std::size_t(idx[i])] += e * x[i];
      running += theta[i] * x[i];
      value += running;
      g[i] += double(n - i) * x[i];  // v[i]·x[i] is in the last n − i partial sums
    }
    check_against(f, theta, value, g);
    tyche_test::check_gradient_at(f, theta, "vector parameter, gather, cumulative_sum");
  }
}

TEST_CASE("streamed matvec: a matvec used once reads X in the loop, with no buffer",
          "[core][streaming]") {
  for (std::size_t cols : {1u, 7u, 8u, 11u}) {
    for (std::size_t rows : {0u, 1u, 5u, 8u, 13u, 19u}) {
      INFO(rows << " x " << cols);
      const std::vector<double> x = normals(rows * cols, 7 + unsigned(rows * cols));
      std::vector<double> y(rows);
      for (std::size_t r = 0; r < rows; ++r) y[r] = double(r % 3 == 0);
      // bernoulli_logit's fused term reads the linear predictor once: the matvec is streamed.
      auto a = normal<"alpha">(0.0, 1.0);
      auto b = normal<"beta">(0.0, 1.0, shape_of(cols));
      const auto m = model(joint(
          a, b, bernoulli_logit(a + matvec(matrix(x.data(), rows, cols), b)).observe(data(y))));
      const auto& p = m.program();
      CHECK(p.workspace_size() == 0);
      std::vector<double> theta = normals(cols + 1, 3 + unsigned(cols));
      double value = 0;
      std::vector<double> g(cols + 1, 0.0);
      // θ = (alpha, beta): priors N(0, 1) up to their constants, which the check removes by
      // comparing against the plain-loop gradient and the value's difference at two points.
      for (std::size_t r = 0; r < rows; ++r) {
        double eta = theta[0];
        for (std::size_t c = 0; c < cols; ++c) eta += x[r * cols + c] * theta[1 + c];
        value += y[r] * eta - std::log1p(std::exp(eta));
        const double resid = y[r] - 1 / (1 + std::exp(-eta));
        g[0] += resid;
        for (std::size_t c = 0; c < cols; ++c) g[1 + c] += resid * x[r * cols + c];
      }
      for (std::size_t k = 0; k < cols + 1; ++k) {
        value -= 0.5 * theta[k] * theta[k];
        g[k] -= theta[k];
      }
      std::vector<double> gt(cols + 1), ws(p.workspace_size());
      const double vt = p.value_and_gradient(std::span<const double>(theta), std::span<double>(gt),
                                             std::span<double>(ws));
      std::vector<double> zero(cols + 1, 0.0), gz(cols + 1);
      const double v0 = p.value_and_gradient(std::span<const double>(zero), std::span<double>(gz),
                                             std::span<double>(ws));
      const double value0 = -double(rows) * std::log(2.0);
      CHECK(rel(vt - v0, value - value0) <= 1e-12);
      for (std::size_t k = 0; k < cols + 1; ++k) {
        INFO("coordinate " << k);
        CHECK(rel(gt[k], g[k]) <= 1e-12);
      }
      tyche_test::check_lanes(p, tyche_test::random_points(8, cols + 1, -1, 1, 9), "streamed matvec");
    }
  }
}

TEST_CASE("streamed matvec: used twice, or read by at(), it stays buffered and agrees",
          "[core][streaming]") {
  constexpr std::size_t rows = 11, cols = 9;
  const std::vector<double> x = normals(rows * cols, 5), y = normals(rows, 6);
  vector_param<"b", cols> b;
  auto eta = matvec(matrix(x.data(), rows, cols), b);
  const auto once = compile(sum(square(data(y) - eta) * 0.5), b);  // reduced, no matvec left
  const auto logistic = compile(sum(log1p(exp(eta))), b);
  const auto with_at = compile(sum(log1p(exp(eta))) + square(at(eta, 3)), b);
  CHECK(logistic.workspace_size() == 0);
  CHECK(with_at.workspace_size() == 2 * rows);
  const auto plain = compile_without_rewrites(sum(log1p(exp(eta))) + square(at(eta, 3)), b);
  for (const auto& p : tyche_test::random_points(6, cols, -1, 1, 21)) {
    tyche_test::check_gradient_at(logistic, p, "sum(log1p(exp(Xb)))");
    tyche_test::check_gradient_at(with_at, p, "sum(log1p(exp(Xb))) + (Xb)[3]^2");
    std::vector<double> g1(cols), g2(cols), ws1(with_at.workspace_size()), ws2(plain.workspace_size());
    const double v1 = with_at.value_and_gradient(std::span<const double>(p), std::span<double>(g1),
                                                 std::span<double>(ws1));
    const double v2 = plain.value_and_gradient(std::span<const double>(p), std::span<double>(g2),
                                               std::span<double>(ws2));
    CHECK(rel(v1, v2) <= 1e-12);
    for (std::size_t k = 0; k < cols; ++k) CHECK(rel(g1[k], g2[k]) <= 1e-12);
    tyche_test::check_gradient_at(once, p, "least squares");
  }
}

// Σᵢ dᵢ·(s + xᵢᵀv) = s·Σd + (Xᵀd)·v (compile/reduce_sum.hpp): the sum leaves the loop as
// statistics of X, so the matvec's other occurrence in the loop is streamed. Against the same
// expression compiled without rewrites (the loop as written, the matvec buffered) and, for
// binomial_logit and neg_binomial_2_log, against their log densities written here as loops
// (Boost-free: lgamma from <cmath>): values and gradients to 1e-12 relative, every row count
// from 0 to 19 around the batches.
TEST_CASE("streamed matvec: a term linear in the predictor leaves the loop (binomial_logit, neg_binomial_2_log)",
          "[core][streaming]") {
  constexpr std::size_t cols = 5;
  vector_param<"b", cols> b;
  param<"a"> a;
  for (std::size_t rows = 0; rows < 20; ++rows) {
    INFO(rows << " rows");
    const std::vector<double> x = normals(rows * cols, 80 + unsigned(rows)), w = normals(rows, 81);
    const auto X = matrix(x.data(), rows, cols);
    // d·(a + Xb), (Xb − a)·d, −d·Xb and Xb alone, beside a term that reads Xb again.
    const auto e = sum(data(w) * (a + matvec(X, b)) + log1p(exp(matvec(X, b))) - (matvec(X, b) - a) * data(w) * 0.5 -
                       matvec(X, b));
    const auto p = compile(e, a, b);
    const auto plain = compile_without_rewrites(e, a, b);
    CHECK(p.workspace_size() == 0);  // streamed
    for (const auto& th : tyche_test::random_points(4, cols + 1, -1, 1, 82 + unsigned(rows))) {
      std::vector<double> g(cols + 1), ws(plain.workspace_size());
      const double v = plain.value_and_gradient(std::span<const double>(th), std::span<double>(g), std::span<double>(ws));
      check_against(p, th, v, g);
    }
    // The two families against their log densities as loops.
    std::vector<double> trials(rows), counts(rows);
    for (std::size_t r = 0; r < rows; ++r) {
      trials[r] = double(1 + r % 6);
      counts[r] = double(r % 4 < trials[r] ? r % 4 : 0);
    }
    auto alpha = normal<"alpha">(0.0, 1.0);
    auto beta = normal<"beta">(0.0, 1.0, shape<cols>);
    auto phi = lognormal<"phi">(0.0, 1.0);
    const auto binom = model(joint(alpha, beta, binomial_logit(data(trials), alpha + matvec(X, beta)).observe(data(counts))));
    const auto negbin =
        model(joint(alpha, beta, phi, neg_binomial_2_log(matvec(X, beta) - alpha, phi).observe(data(counts))));
    CHECK(binom.program().workspace_size() == 0);
    CHECK(negbin.program().workspace_size() == 0);
    for (const auto& th : tyche_test::random_points(4, cols + 2, -1, 1, 83 + unsigned(rows))) {
      const std::vector<double> th_b(th.begin(), th.begin() + cols + 1);
      double want_b = 0, want_n = 0;
      const double ph = std::exp(th[cols + 1]);
      for (std::size_t r = 0; r < rows; ++r) {
        double xb = 0;
        for (std::size_t c = 0; c < cols; ++c) xb += x[r * cols + c] * th[1 + c];
        const double n = trials[r], y = counts[r];
        const double eta_b = th[0] + xb, pr = 1 / (1 + std::exp(-eta_b));
        want_b += std::lgamma(n + 1) - std::lgamma(y + 1) - std::lgamma(n - y + 1) + y * std::log(pr) +
                  (n - y) * std::log1p(-pr);
        const double mu = std::exp(xb - th[0]);
        want_n += std::lgamma(y + ph) - std::lgamma(ph) - std::lgamma(y + 1) + y * std::log(mu / (mu + ph)) +
                  ph * std::log(ph / (mu + ph));
      }
      // The priors and the Jacobian: the same in both, taken from the model at the point with no
      // data (the likelihood's value is its difference from the model without observations).
      const auto prior_b = model(joint(alpha, beta));
      const auto prior_n = model(joint(alpha, beta, phi));
      CHECK(rel(binom.log_prob(th_b) - prior_b.log_prob(th_b), want_b) <= 1e-12);
      CHECK(rel(negbin.log_prob(th) - prior_n.log_prob(th), want_n) <= 1e-11);
      tyche_test::check_gradient_at(binom.program(), th_b, "binomial_logit(n, alpha + X beta)");
      tyche_test::check_gradient_at(negbin.program(), th, "neg_binomial_2_log(X beta - alpha, phi)");
    }
  }
}

// Chains in SIMD lanes take a streamed matvec's rows in tiles (compile/evaluate.hpp, "rows in
// tiles"): every likelihood family that reads a linear predictor, row counts around the tile of
// 8 (the rows after the last whole tile go one at a time), a column count that is not a multiple
// of 4, value-only evaluations, and a loop body with two streamed matvecs (no tiles): each lane
// against the same point evaluated alone, to 1e-12 relative (check_lanes), and the gradients
// against differences (check_gradient_at).
TEST_CASE("streamed matvec: chains in lanes take the rows in tiles and agree with one chain",
          "[core][streaming]") {
  constexpr std::size_t cols = 6;
  for (std::size_t rows : {7u, 8u, 9u, 16u, 35u}) {
    INFO(rows << " rows");
    const std::vector<double> x = normals(rows * cols, 40 + unsigned(rows)), z = normals(rows * 2, 41);
    std::vector<double> y01(rows), counts(rows), trials(rows, 5.0);
    const std::vector<double> yn = normals(rows, 42);
    for (std::size_t r = 0; r < rows; ++r) {
      y01[r] = double(r % 3 == 0);
      counts[r] = double(r % 4);
    }
    const auto pts = tyche_test::random_points(16, cols + 2, -0.5, 0.5, 43 + unsigned(rows));
    auto a = normal<"alpha">(0.0, 1.0);
    auto b = normal<"beta">(0.0, 1.0, shape<cols>);
    auto s = lognormal<"sigma">(0.0, 1.0);
    auto g = normal<"gamma">(0.0, 1.0, shape<2>);
    const auto X = matrix(x.data(), rows, cols);
    const auto m_logit = model(joint(a, b, s, bernoulli_logit(a + matvec(X, b)).observe(data(y01))));
    const auto m_poisson = model(joint(a, b, s, poisson_log(a + 0.5 * matvec(X, b)).observe(data(counts))));
    const auto m_binomial =
        model(joint(a, b, s, binomial_logit(data(trials), matvec(X, b) - a).observe(data(counts))));
    const auto m_normal = model(joint(a, b, s, normal(a + matvec(X, b), s).observe(data(yn))));
    const auto m_negbin = model(joint(a, b, s, neg_binomial_2_log(a + matvec(X, b), s).observe(data(counts))));
    // Two streamed matvecs in one loop body: the rows go one at a time.
    const auto m_two = model(joint(
        a, b, s, g, bernoulli_logit(matvec(X, b) + matvec(matrix(z.data(), rows, 2), g) - a).observe(data(y01))));
    // Z gamma in the scale and, through log σ = Z gamma, alone: the lone term leaves the loop as
    // (Zᵀ1)·gamma, so both matvecs are streamed (two in one loop body: no tiles).
    const auto m_mixed = model(joint(
        a, b, s, g,
        normal(a + matvec(X, b), exp(matvec(matrix(z.data(), rows, 2), g))).observe(data(yn))));
    // A streamed matvec and a buffered one (Z gamma read twice, in the scale and in its log).
    const auto m_buffered = model(joint(
        a, b, s, g,
        normal(a + matvec(X, b), 1.0 + exp(matvec(matrix(z.data(), rows, 2), g))).observe(data(yn))));
    const auto pts_two = tyche_test::random_points(16, cols + 4, -0.5, 0.5, 44 + unsigned(rows));
    // buffered: how many values of rows' buffers the program keeps (0: every matvec streamed).
    auto check = [&](const auto& m, const auto& points, const char* what, std::size_t buffered = 0) {
      const auto& p = m.program();
      INFO(what);
      CHECK(p.workspace_size() == buffered);
      for (std::size_t k = 0; k < 3; ++k) tyche_test::check_gradient_at(p, points[k], what);
      tyche_test::check_lanes(p, points, what);
#if TYCHE_HAS_XSIMD
      // Value only: each lane against the same point alone.
      using B = xsimd::batch<double>;
      const std::size_t d = p.dim();
      std::vector<B> th(d), ws(p.workspace_size());
      for (std::size_t k = 0; k < d; ++k) {
        alignas(64) double lanes[B::size];
        for (std::size_t l = 0; l < B::size; ++l) lanes[l] = points[l][k];
        th[k] = B::load_aligned(lanes);
      }
      const B v = p.value(std::span<const B>(th), std::span<B>(ws));
      for (std::size_t l = 0; l < B::size; ++l) {
        std::vector<double> wss(p.workspace_size());
        const double vs = p.value(std::span<const double>(points[l]), std::span<double>(wss));
        INFO(what << ", value only, lane " << l);
        CHECK(rel(v.get(l), vs) <= 1e-12);
      }
#endif
    };
    check(m_logit, pts, "bernoulli_logit(alpha + X beta)");
    check(m_poisson, pts, "poisson_log(alpha + X beta / 2)");
    // binomial_logit reads the predictor in y·η, which leaves the loop as (Xᵀy)·β − α·Σy, and in
    // n·log1m_logistic(η): streamed, in tiles.
    check(m_binomial, pts, "binomial_logit(5, X beta - alpha)");
    check(m_negbin, pts, "neg_binomial_2_log(alpha + X beta, sigma)");
    check(m_normal, pts, "normal(alpha + X beta, sigma)");
    check(m_two, pts_two, "bernoulli_logit(X beta + Z gamma - alpha)");
    check(m_mixed, pts_two, "normal(alpha + X beta, exp(Z gamma))");
    check(m_buffered, pts_two, "normal(alpha + X beta, 1 + exp(Z gamma))", 2 * rows);
  }
}

// A matrix of floats (tyche::matrix(const float*, …)): the same model with X in float and with X
// in double holding the same (float-rounded) values. Each value converts exactly to double as it
// is read, so the two agree to the rounding of the sums (the compiler may contract the
// multiply-adds differently in the two instantiations): 1e-14 relative, one chain and chains in
// lanes, streamed (bernoulli_logit) and reduced to sufficient statistics (normal); the data
// counts are the same; a non-finite float is refused with its name and position.
TEST_CASE("streamed matvec: a matrix of floats agrees with the same values in double",
          "[core][streaming]") {
  for (std::size_t cols : {1u, 6u, 11u}) {
    for (std::size_t rows : {0u, 1u, 7u, 8u, 9u, 16u, 35u}) {
      INFO(rows << " x " << cols);
      const std::vector<double> x0 = normals(rows * cols, 60 + unsigned(rows * cols));
      const std::vector<float> xf(x0.begin(), x0.end());
      const std::vector<double> xd(xf.begin(), xf.end());
      std::vector<double> y01(rows);
      for (std::size_t r = 0; r < rows; ++r) y01[r] = double(r % 3 == 0);
      const std::vector<double> yn = normals(rows, 61);
      auto a = normal<"alpha">(0.0, 1.0);
      auto b = normal<"beta">(0.0, 1.0, shape_of(cols));
      auto s = lognormal<"sigma">(0.0, 1.0);
      const auto logit_f = model(joint(a, b, bernoulli_logit(a + matvec(matrix(xf, rows, cols), b)).observe(data(y01))));
      const auto logit_d = model(joint(a, b, bernoulli_logit(a + matvec(matrix(xd, rows, cols), b)).observe(data(y01))));
      const auto normal_f = model(joint(a, b, s, normal(a + matvec(matrix(xf, rows, cols, "Xf"), b), s).observe(data(yn))));
      const auto normal_d = model(joint(a, b, s, normal(a + matvec(matrix(xd, rows, cols), b), s).observe(data(yn))));
      CHECK(logit_f.data_values() == logit_d.data_values());
      CHECK(logit_f.matrix_values() == rows * cols);
      auto agree = [&](const auto& mf, const auto& md, const char* what) {
        INFO(what);
        const auto pts = tyche_test::random_points(8, mf.dim(), -0.5, 0.5, 62 + unsigned(rows));
        for (const auto& p : pts) {
          std::vector<double> gf(mf.dim()), gd(md.dim()), wf(mf.program().workspace_size()), wd(md.program().workspace_size());
          const double vf = mf.program().value_and_gradient(std::span<const double>(p), std::span<double>(gf), std::span<double>(wf));
          const double vd = md.program().value_and_gradient(std::span<const double>(p), std::span<double>(gd), std::span<double>(wd));
          CHECK(rel(vf, vd) <= 1e-14);
          for (std::size_t k = 0; k < gf.size(); ++k) {
            INFO("coordinate " << k);
            CHECK(rel(gf[k], gd[k]) <= 1e-14);
          }
        }
        if (rows > 0) tyche_test::check_lanes(mf.program(), pts, what);
      };
      // binomial_logit: streamed (its y·η leaves the loop as statistics of X, in double).
      const std::vector<double> trials(rows, 3.0);
      std::vector<double> counts(rows);
      for (std::size_t r = 0; r < rows; ++r) counts[r] = double(r % 4 == 0 ? 3 : r % 2);
      const auto binom_f =
          model(joint(a, b, binomial_logit(data(trials), a + matvec(matrix(xf, rows, cols), b)).observe(data(counts))));
      const auto binom_d =
          model(joint(a, b, binomial_logit(data(trials), a + matvec(matrix(xd, rows, cols), b)).observe(data(counts))));
      CHECK(binom_f.program().workspace_size() == 0);
      agree(logit_f, logit_d, "bernoulli_logit(alpha + X beta), X float");
      agree(normal_f, normal_d, "normal(alpha + X beta, sigma), X float");
      agree(binom_f, binom_d, "binomial_logit(3, alpha + X beta), X float");
      // A float matvec inside an argument whose support is checked from the data (the rate of a
      // poisson: exp(...) of the matvec), value only, and explain().
      const auto pois_f = model(joint(a, b, poisson(exp(a + matvec(matrix(xf, rows, cols), b))).observe(data(counts))));
      const auto pois_d = model(joint(a, b, poisson(exp(a + matvec(matrix(xd, rows, cols), b))).observe(data(counts))));
      agree(pois_f, pois_d, "poisson(exp(alpha + X beta)), X float");
      const std::vector<double> p0(pois_f.dim(), 0.1);
      CHECK(rel(pois_f.log_prob(p0), pois_d.log_prob(p0)) <= 1e-14);
      CHECK_THAT(explain(logit_f), Catch::Matchers::Contains("matrix[" + std::to_string(rows) + " x " +
                                                             std::to_string(cols) + "]"));
    }
  }
  // Data checks name the matrix and the entry.
  std::vector<float> bad(12, 1.0f);
  bad[7] = std::nanf("");
  const std::vector<double> y(4, 1.0);
  auto a = normal<"alpha">(0.0, 1.0);
  auto b = normal<"beta">(0.0, 1.0, shape<3>);
  CHECK_THROWS_WITH(model(joint(a, b, bernoulli_logit(a + matvec(matrix(bad, 4, 3, "X"), b)).observe(data(y)))),
                    Catch::Matchers::Contains("X[3, 2]"));
  // A float matrix of the wrong size is refused as a double one is.
  CHECK_THROWS_WITH(matrix(bad, 5, 3), Catch::Matchers::Contains("values has 12 elements, not 15"));
  CHECK_THROWS_WITH(matrix(bad, 5, 3, "X"), Catch::Matchers::Contains("matrix(values, 5, 3, \"X\"): X has 12 elements, not 15"));
}

// Issue 17's test of the blocked multi-chain evaluation: chain counts that are not multiples of
// the batch width (1, 3, 9, 33) on every GLM-shaped family. (a) Each chain's value and gradient
// in a batch whose other lanes hold other chains or a repeat of one (as the executor fills an
// idle lane), against that chain alone, to 1e-12 relative. (b) nuts() with the chains in lanes
// and one chain at a time (lanes = 1: observation batches, another order of the sums) from the
// same initial points, no warm-up: every chain's first draws agree to 1e-9 (the evaluations differ
// in their last bits, and so the trajectories; a U-turn or a proposal decided the other way
// would move a draw by far more).
TEST_CASE("streamed matvec: 1, 3, 9 and 33 chains in lanes agree with each chain alone (gradients, first draws)",
          "[core][streaming][nuts]") {
  constexpr std::size_t rows = 37, cols = 6, categories = 3;
  const std::vector<double> x = normals(rows * cols, 71), yn = normals(rows, 72);
  std::vector<double> y01(rows), counts(rows), trials(rows, 4.0), classes(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    y01[r] = double(r % 3 == 0);
    counts[r] = double(r % 4);
    classes[r] = double(1 + r % categories);
  }
  auto a = normal<"alpha">(0.0, 1.0);
  auto b = normal<"beta">(0.0, 1.0, shape<cols>);
  auto s = lognormal<"sigma">(0.0, 1.0);
  auto ak = normal<"alpha">(0.0, 1.0, shape<categories>);
  auto bk = normal<"beta">(0.0, 1.0, shape<cols * categories>);
  const auto X = matrix(x.data(), rows, cols);
  const auto m_logit = model(joint(a, b, bernoulli_logit(a + matvec(X, b)).observe(data(y01))));
  const auto m_poisson = model(joint(a, b, poisson_log(a + 0.5 * matvec(X, b)).observe(data(counts))));
  const auto m_binomial = model(joint(a, b, binomial_logit(data(trials), matvec(X, b) - a).observe(data(counts))));
  const auto m_normal = model(joint(a, b, s, normal(a + matvec(X, b), s).observe(data(yn))));
  const auto m_negbin = model(joint(a, b, s, neg_binomial_2_log(a + matvec(X, b), s).observe(data(counts))));
  const auto m_categorical = model(joint(ak, bk, categorical_logit_glm(X, ak, bk).observe(data(classes))));

  auto check = [&](const auto& m, const char* what) {
    INFO(what);
    const auto& p = m.program();
    const std::size_t d = p.dim();
    for (const int chains : {1, 3, 9, 33}) {
      INFO(chains << " chains");
      const auto pts = tyche_test::random_points(static_cast<std::size_t>(chains), d, -0.5, 0.5, 73 + unsigned(chains));
#if TYCHE_HAS_XSIMD
      using B = xsimd::batch<double>;
      constexpr std::size_t L = B::size;
      for (std::size_t start = 0; start < pts.size(); start += L) {
        std::vector<B> th(d), g(d), ws(p.workspace_size());
        for (std::size_t k = 0; k < d; ++k) {
          alignas(64) double lanes[L];
          for (std::size_t l = 0; l < L; ++l) lanes[l] = pts[std::min(start + l, pts.size() - 1)][k];
          th[k] = B::load_aligned(lanes);
        }
        const B v = p.value_and_gradient(std::span<const B>(th), std::span<B>(g), std::span<B>(ws));
        for (std::size_t l = 0; l < L && start + l < pts.size(); ++l) {
          std::vector<double> gs(d), wss(p.workspace_size());
          const double vs = p.value_and_gradient(std::span<const double>(pts[start + l]), std::span<double>(gs),
                                                 std::span<double>(wss));
          INFO("chain " << start + l + 1 << " in lane " << l + 1 << " of " << L);
          CHECK(rel(v.get(l), vs) <= 1e-12);
          for (std::size_t k = 0; k < d; ++k) CHECK(rel(g[k].get(l), gs[k]) <= 1e-12);
        }
      }
#endif
      if (simd_lane_width == 1) continue;  // built without SIMD: no lanes to compare
      nuts_config cfg{.chains = chains, .warmup = 0, .draws = 5, .seed = 5};
      cfg.init = pts;  // unconstrained points: constrain them first
      for (auto& point : cfg.init) point = m.constrain(point);
      cfg.executor = cpu{.threads = 1, .lanes = static_cast<int>(simd_lane_width)};
      const nuts_fit in_lanes = nuts(m, cfg);
      cfg.executor = cpu{.threads = 1, .lanes = 1};
      const nuts_fit alone = nuts(m, cfg);
      REQUIRE(in_lanes.lanes == static_cast<int>(simd_lane_width));
      REQUIRE(alone.lanes == 1);
      for (int c = 0; c < chains; ++c) {
        const auto& u = in_lanes.values[static_cast<std::size_t>(c)];
        const auto& w = alone.values[static_cast<std::size_t>(c)];
        REQUIRE(u.size() == w.size());
        double worst = 0;
        for (std::size_t k = 0; k < u.size(); ++k) worst = std::max(worst, rel(u[k], w[k]));
        INFO("chain " << c + 1 << ": largest relative difference of its draws " << worst);
        CHECK(worst <= 1e-9);
      }
    }
  };
  check(m_logit, "bernoulli_logit(alpha + X beta)");
  check(m_poisson, "poisson_log(alpha + X beta / 2)");
  check(m_binomial, "binomial_logit(4, X beta - alpha)");
  check(m_normal, "normal(alpha + X beta, sigma)");
  check(m_negbin, "neg_binomial_2_log(alpha + X beta, sigma)");
  check(m_categorical, "categorical_logit_glm(X, alpha, beta)");
}
