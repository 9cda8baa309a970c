// scan(step, init, sequences...) (tyche/compile/scan.hpp): loops over a latent state written as
// lambdas, against direct loops and exact references — the forward algorithm of hidden Markov
// models against enumeration of every state path (value and gradient), a scalar recursion
// against its loop, the three forms a step may return, errors, float and SIMD lanes. (NUTS on
// HMMs written with scan: tests/samplers/hmm_nuts_test.cpp.)
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <stdexcept>
#include <vector>

#include "support/property.hpp"
#include "support/reference_math.hpp"

using namespace tyche;

namespace {

using tyche_test::normal_log;

// log p(y) of an HMM with K states by summing over all K^N state paths: initial distribution
// rho, transitions gamma[i][j] = p(z_{t+1} = j | z_t = i), emissions normal(mu[k], sigma).
double hmm_by_enumeration(const std::vector<double>& y, const std::vector<double>& rho,
                          const std::vector<std::vector<double>>& gamma, const std::vector<double>& mu,
                          double sigma) {
  const std::size_t n = y.size(), k = rho.size();
  std::vector<std::size_t> z(n, 0);
  double total = 0;
  while (true) {
    double p = rho[z[0]] * std::exp(normal_log(y[0], mu[z[0]], sigma));
    for (std::size_t t = 1; t < n; ++t) p *= gamma[z[t - 1]][z[t]] * std::exp(normal_log(y[t], mu[z[t]], sigma));
    total += p;
    std::size_t i = 0;
    while (i < n && ++z[i] == k) z[i++] = 0;
    if (i == n) break;
  }
  return std::log(total);
}

}  // namespace

TEST_CASE("scan: a scalar recursion against its loop", "[compile][scan]") {
  static const std::vector<double> x{0.5, -0.2, 1.1, 0.3, -0.7, 0.05};
  auto phi = normal<"phi">(0.0, 1.0);
  auto sigma = half_normal<"sigma">(1.0);
  // s_{t+1} = phi s_t + sigma x_t, s_0 = 0.25; the log density adds −s_N².
  auto s = scan([&](const auto& state, const auto& xt) { return phi * state + sigma * xt; }, 0.25, data(x));
  const auto m = model(joint(phi, sigma, target(-square(at(s, 0)))));
  for (const auto& th : tyche_test::random_points(10, 2, -1.2, 1.2, 41)) {
    const double p = th[0], sg = std::exp(th[1]);
    double st = 0.25;
    for (double v : x) st = p * st + sg * v;
    const double want = normal_log(p, 0, 1) + normal_log(sg, 0, 1) + std::log(2.0) + th[1] - st * st;
    CHECK(m.log_prob(th) == Approx(want).epsilon(1e-12));
    tyche_test::check_gradient_at(m.program(), th, "scalar scan");
  }
}

namespace {
// The HMM model with K = 2 states and known transitions, means mu (a vector parameter) and a
// scale sigma; the forward algorithm through scan, the state returned as a std::tuple.
template <class Y>
auto hmm2_model(const Y& y_first, const Y& y_rest, const std::vector<double>& log_gamma) {
  auto mu = normal<"mu">(0.0, 3.0, shape<2>);
  auto sigma = half_normal<"sigma">(2.0);
  const double l00 = log_gamma[0], l01 = log_gamma[1], l10 = log_gamma[2], l11 = log_gamma[3];
  auto init = std::tuple{std::log(0.5) + normal_lpdf(data(y_first), mu[0], sigma),
                         std::log(0.5) + normal_lpdf(data(y_first), mu[1], sigma)};
  auto alpha = scan(
      [=](const auto& a, const auto& y) {
        return std::tuple{log_sum_exp(a[0] + l00, a[1] + l10) + normal_lpdf(y, mu[0], sigma),
                          log_sum_exp(a[0] + l01, a[1] + l11) + normal_lpdf(y, mu[1], sigma)};
      },
      init, data(y_rest));
  return model(joint(mu, sigma, target(log_sum_exp(alpha))));
}
}  // namespace

TEST_CASE("scan: 2-state HMM forward algorithm against enumeration of all paths", "[compile][scan][hmm]") {
  static const std::vector<double> y{0.3, 1.9, 2.4, -0.5, 0.1, 2.2, 1.7, -0.9, 0.4, 2.8};
  static const std::vector<double> y_first{y[0]}, y_rest(y.begin() + 1, y.end());
  const std::vector<std::vector<double>> gamma{{0.85, 0.15}, {0.3, 0.7}};
  const std::vector<double> lg{std::log(0.85), std::log(0.15), std::log(0.3), std::log(0.7)};
  const auto m = hmm2_model(y_first, y_rest, lg);
  REQUIRE(m.dim() == 3);
  for (const auto& th : tyche_test::random_points(8, 3, -1.0, 2.0, 43)) {
    const std::vector<double> mu{th[0], th[1]};
    const double sigma = std::exp(th[2]);
    auto exact = [&](const std::vector<double>& t) {
      return hmm_by_enumeration(y, {0.5, 0.5}, gamma, {t[0], t[1]}, std::exp(t[2])) + normal_log(t[0], 0, 3) +
             normal_log(t[1], 0, 3) + normal_log(std::exp(t[2]), 0, 2) + std::log(2.0) + t[2];
    };
    CHECK(m.log_prob(th) == Approx(exact(th)).epsilon(1e-10));
    // The gradient against central differences of the enumeration.
    std::vector<double> g(3);
    m.log_prob_and_gradient(th, g);
    for (std::size_t i = 0; i < 3; ++i) {
      auto hi = th, lo = th;
      hi[i] += 1e-5;
      lo[i] -= 1e-5;
      CHECK(g[i] == Approx((exact(hi) - exact(lo)) / 2e-5).epsilon(1e-6).margin(1e-7));
    }
    tyche_test::check_gradient_at(m.program(), th, "HMM(2) by scan");
    (void)mu;
    (void)sigma;
  }
}

TEST_CASE("scan: 3-state HMM, the state as a vector expression, against enumeration",
          "[compile][scan][hmm]") {
  static const std::vector<double> y{-1.1, 0.2, 2.1, 1.8, -0.4, 0.9, 2.6, 0.0};
  static const std::vector<double> y_first{y[0]}, y_rest(y.begin() + 1, y.end());
  const std::vector<std::vector<double>> gamma{{0.7, 0.2, 0.1}, {0.1, 0.8, 0.1}, {0.25, 0.25, 0.5}};
  static std::vector<double> lg_col[3];  // column j of log Γ: log p(j | i), i = 0, 1, 2
  for (std::size_t j = 0; j < 3; ++j) {
    lg_col[j].clear();
    for (std::size_t i = 0; i < 3; ++i) lg_col[j].push_back(std::log(gamma[i][j]));
  }
  auto mu = normal<"mu">(0.0, 3.0, shape<3>);
  const double sigma = 0.8;
  auto init = std::tuple{std::log(1.0 / 3) + normal_lpdf(data(y_first), mu[0], sigma),
                         std::log(1.0 / 3) + normal_lpdf(data(y_first), mu[1], sigma),
                         std::log(1.0 / 3) + normal_lpdf(data(y_first), mu[2], sigma)};
  // a is an expression of 3 values: log_sum_exp(a + log Γ[·, j]) is an elementwise sum reduced.
  auto alpha = scan(
      [&](const auto& a, const auto& yt) {
        return std::tuple{log_sum_exp(a + data(lg_col[0])) + normal_lpdf(yt, mu[0], sigma),
                          log_sum_exp(a + data(lg_col[1])) + normal_lpdf(yt, mu[1], sigma),
                          log_sum_exp(a + data(lg_col[2])) + normal_lpdf(yt, mu[2], sigma)};
      },
      init, data(y_rest));
  const auto m = model(joint(mu, target(log_sum_exp(alpha))));
  for (const auto& th : tyche_test::random_points(6, 3, -1.5, 2.5, 47)) {
    const double want = hmm_by_enumeration(y, {1.0 / 3, 1.0 / 3, 1.0 / 3}, gamma, th, sigma) +
                        normal_log(th[0], 0, 3) + normal_log(th[1], 0, 3) + normal_log(th[2], 0, 3);
    CHECK(m.log_prob(th) == Approx(want).epsilon(1e-10));
    tyche_test::check_gradient_at(m.program(), th, "HMM(3) by scan");
  }
}

TEST_CASE("scan: a step returning a vector expression, two sequences", "[compile][scan]") {
  static const std::vector<double> u{0.1, 0.4, -0.3, 0.8}, v{1.0, -1.0, 0.5, 0.25};
  auto b = normal<"b">(0.0, 1.0);
  // s_{t+1} = b · s_t + u_t v_t (both elements): the state as a vector expression.
  auto s = scan([&](const auto& st, const auto& ut, const auto& vt) { return b * st + ut * vt; },
                std::tuple{0.2, -0.1}, data(u), data(v));
  const auto m = model(joint(b, target(sum(square(s)))));
  for (const auto& th : tyche_test::random_points(8, 1, -1.5, 1.5, 53)) {
    double s0 = 0.2, s1 = -0.1;
    for (std::size_t t = 0; t < u.size(); ++t) {
      s0 = th[0] * s0 + u[t] * v[t];
      s1 = th[0] * s1 + u[t] * v[t];
    }
    CHECK(m.log_prob(th) == Approx(normal_log(th[0], 0, 1) + s0 * s0 + s1 * s1).epsilon(1e-12));
    tyche_test::check_gradient_at(m.program(), th, "vector scan, two sequences");
  }
}

namespace {
/// Whether a scan's forward pass evaluates the next state by value only (its own program, with
/// F's θ), not from ∂F/∂a of the step's gradient.
template <class S>
constexpr bool forward_by_value(const S& s) {
  return detail::node_t<S>::op_type::value_forward && sizeof(s) > 0;
}
}  // namespace

TEST_CASE("scan: the forward pass reads the next state from a value-only program in every form a step returns, "
          "and from the step's gradient where it cannot, with the same log density and gradient",
          "[compile][scan]") {
  static const std::vector<double> x{0.5, -0.2, 1.1, 0.3, -0.4};
  auto phi = normal<"phi">(0.0, 1.0);
  auto sigma = half_normal<"sigma">(1.0);
  // A tuple with a loop invariant hoisted (square(sigma)) and a log; a scalar state; every state
  // (scan_states); a vector expression.
  auto kalman = [&](const auto& st, const auto& xt) {
    auto f = assume_positive(st[1] + square(sigma));
    return std::tuple{st[0] + st[1] / f * (xt - st[0]), st[1] * square(sigma) / f + 0.1,
                      st[2] - 0.5 * log(f) - 0.5 * square(xt - st[0]) / f};
  };
  auto ar = [&](const auto& st, const auto& xt) { return phi * st + sigma * xt; };
  auto kalman_v = scan(kalman, std::tuple{0.0, 1.0, 0.0}, data(x));
  auto scalar_v = scan(ar, 0.25, data(x));
  auto states_v = scan_states(ar, 0.25, data(x));
  auto vector_v = scan(ar, std::tuple{0.2, -0.1}, data(x));
  CHECK(forward_by_value(kalman_v));
  CHECK(forward_by_value(scalar_v));
  CHECK(forward_by_value(states_v));
  CHECK(forward_by_value(vector_v));
  // detail::scan_impl<All, false> keeps the forward pass that reads the next state from ∂F/∂a:
  // what a step gets whose hoisted subexpressions differ between F and its value-only program.
  auto kalman_g = detail::scan_impl<false, false>(kalman, std::tuple{0.0, 1.0, 0.0}, data(x));
  auto scalar_g = detail::scan_impl<false, false>(ar, 0.25, data(x));
  auto states_g = detail::scan_impl<true, false>(ar, 0.25, data(x));
  auto vector_g = detail::scan_impl<false, false>(ar, std::tuple{0.2, -0.1}, data(x));
  CHECK_FALSE(forward_by_value(kalman_g));
  CHECK_FALSE(forward_by_value(scalar_g));
  CHECK_FALSE(forward_by_value(states_g));
  CHECK_FALSE(forward_by_value(vector_g));
  auto log_density = [&](const auto& k, const auto& s, const auto& all, const auto& v) {
    return model(joint(phi, sigma, target(at(k, 2) + at(k, 0) - square(at(s, 0)) - sum(square(all)) + sum(v))));
  };
  const auto by_value = log_density(kalman_v, scalar_v, states_v, vector_v);
  const auto by_gradient = log_density(kalman_g, scalar_g, states_g, vector_g);
  for (const auto& th : tyche_test::random_points(6, 2, -1.0, 1.0, 61)) {
    // The values the forward pass carries are the step's: against the loops.
    const double p = th[0], sg = std::exp(th[1]);
    double m0 = 0, p0 = 1, ll = 0, st = 0.25, sq = 0, v0 = 0.2, v1 = -0.1;
    for (double xt : x) {
      const double f = p0 + sg * sg, r = xt - m0;
      ll += -0.5 * std::log(f) - 0.5 * r * r / f;
      m0 += p0 / f * r;
      p0 = p0 * sg * sg / f + 0.1;
      st = p * st + sg * xt;
      sq += st * st;
      v0 = p * v0 + sg * xt;
      v1 = p * v1 + sg * xt;
    }
    const double want = normal_log(p, 0, 1) + normal_log(sg, 0, 1) + std::log(2.0) + th[1] + ll + m0 - st * st - sq +
                        v0 + v1;
    CHECK(by_value.log_prob(th) == Approx(want).epsilon(1e-12));
    tyche_test::check_gradient_at(by_value.program(), th, "value-only forward pass");
    CHECK(by_gradient.log_prob(th) == Approx(by_value.log_prob(th)).epsilon(1e-13));
    std::vector<double> g1(2), g2(2);
    by_value.log_prob_and_gradient(th, g1);
    by_gradient.log_prob_and_gradient(th, g2);
    for (std::size_t i = 0; i < 2; ++i) CHECK(g2[i] == Approx(g1[i]).epsilon(1e-12));
  }
}

TEST_CASE("scan: float and SIMD lanes evaluate what double does", "[compile][scan]") {
  static const std::vector<double> y{0.3, 1.9, 2.4, -0.5, 0.1, 2.2};
  static const std::vector<double> y_first{y[0]}, y_rest(y.begin() + 1, y.end());
  const std::vector<double> lg{std::log(0.85), std::log(0.15), std::log(0.3), std::log(0.7)};
  const auto m = hmm2_model(y_first, y_rest, lg);
  const auto& prog = m.program();
  const std::vector<double> th{0.2, 1.8, -0.3};
  std::vector<double> g(3), ws(prog.workspace_size());
  const double v = prog.value_and_gradient(th, g, ws);
  const std::vector<float> thf{0.2f, 1.8f, -0.3f};
  std::vector<float> gf(3), wsf(prog.workspace_size());
  const float vf = prog.value_and_gradient(thf, gf, wsf);
  CHECK(vf == Approx(v).epsilon(1e-4));
  for (std::size_t i = 0; i < 3; ++i) CHECK(gf[i] == Approx(g[i]).epsilon(1e-3).margin(1e-4));
}

TEST_CASE("scan: bad sequences are named", "[compile][scan]") {
  static const std::vector<double> a{1, 2, 3}, b{1, 2}, bad{0.5, NAN, 1.0};
  auto phi = normal<"phi">(0.0, 1.0);
  auto step2 = [&](const auto& s, const auto& x, const auto& w) { return phi * s + x * w; };
  CHECK_THROWS_WITH(scan(step2, 0.0, data(a), data(b)),
                    Catch::Matchers::Contains("sequence 2 (data) has 2 values, sequence 1 (data) has 3"));
  CHECK_THROWS_WITH(scan(step2, 0.0, data(a, "y"), data(b, "w")),
                    Catch::Matchers::Contains("sequence 2 ('w') has 2 values, sequence 1 ('y') has 3"));
  auto step1 = [&](const auto& s, const auto& x) { return phi * s + x; };
  CHECK_THROWS_WITH(scan(step1, 0.0, data(bad, "y")),
                    Catch::Matchers::Contains("sequence 1 ('y') has value nan at index 2 (1-based)") &&
                        Catch::Matchers::Contains("Missing observations"));
}

TEST_CASE("scan_states: every state of a scalar recursion, against its loop", "[compile][scan][scan_states]") {
  static const std::vector<double> x{0.5, -0.2, 1.1, 0.3, -0.7, 0.05};
  auto phi = normal<"phi">(0.0, 1.0);
  auto sigma = half_normal<"sigma">(1.0);
  // s_{t+1} = phi s_t + sigma x_t from s_0 = 0.25; the log density adds −Σ_t s_t² (t = 1 … N) and
  // 2 s_3, so that every state's adjoint, and one state's twice, flows back.
  auto s = scan_states([&](const auto& state, const auto& xt) { return phi * state + sigma * xt; }, 0.25, data(x));
  REQUIRE(detail::as_node(s).size() == x.size());
  const auto m = model(joint(phi, sigma, target(-sum(square(s)) + 2.0 * at(s, 2))));
  for (const auto& th : tyche_test::random_points(10, 2, -1.2, 1.2, 43)) {
    const double p = th[0], sg = std::exp(th[1]);
    double st = 0.25, extra = 0;
    std::vector<double> path;
    for (double v : x) {
      st = p * st + sg * v;
      path.push_back(st);
      extra -= st * st;
    }
    extra += 2.0 * path[2];
    const double want = normal_log(p, 0, 1) + normal_log(sg, 0, 1) + std::log(2.0) + th[1] + extra;
    CHECK(m.log_prob(th) == Approx(want).epsilon(1e-12));
    tyche_test::check_gradient_at(m.program(), th, "scan_states scalar");
  }
}

TEST_CASE("scan_states: GARCH(1,1) variances observed, against the direct loop", "[compile][scan][scan_states]") {
  static const std::vector<double> y{0.3, -1.2, 0.8, 2.1, -0.4, 0.0, 1.5, -2.2, 0.6, 0.1};
  static const std::vector<double> y_before(y.begin(), y.end() - 1), y_after(y.begin() + 1, y.end()), y_first{y[0]};
  auto mu = normal<"mu">(0.0, 1.0);
  auto omega = half_normal<"omega">(1.0);
  auto alpha = uniform<"alpha">(0.0, 1.0);
  auto beta = uniform<"beta">(0.0, 1.0);
  const double sigma1 = 1.1;
  // The state is (the variance, the running count of steps): K = 2, so the result is
  // component-major: the variances are its first N − 1 values.
  auto states = scan_states(
      [&](const auto& st, const auto& prev) {
        return std::tuple{omega + alpha * square(prev - mu) + beta * st[0], st[1] + 1.0};
      },
      std::tuple{lit<1> * sigma1 * sigma1, lit<0>}, data(y_before));
  const std::size_t n1 = y_before.size();
  REQUIRE(detail::as_node(states).size() == 2 * n1);
  auto var = segment(states, 1, n1);
  auto count = segment(states, n1 + 1, n1);
  const auto m = model(joint(mu, omega, alpha, beta, normal(mu, sigma1).observe(data(y_first)),
                             normal(mu, sqrt(assume_positive(var))).observe(data(y_after)),
                             target(0.01 * at(count, n1 - 1))));
  for (const auto& th : tyche_test::random_points(8, 4, -1.0, 1.0, 47)) {
    const double mv = th[0], om = std::exp(th[1]);
    const double al = 1 / (1 + std::exp(-th[2])), be = 1 / (1 + std::exp(-th[3]));
    double want = normal_log(mv, 0, 1) + normal_log(om, 0, 1) + std::log(2.0) + th[1];
    want += std::log(al * (1 - al)) + std::log(be * (1 - be));  // uniform(0, 1) on the logit scale
    want += normal_log(y[0], mv, sigma1);
    double v = sigma1 * sigma1;
    for (std::size_t t = 1; t < y.size(); ++t) {
      v = om + al * (y[t - 1] - mv) * (y[t - 1] - mv) + be * v;
      want += normal_log(y[t], mv, std::sqrt(v));
    }
    want += 0.01 * double(n1);
    CHECK(m.log_prob(th) == Approx(want).epsilon(1e-11));
    tyche_test::check_gradient_at(m.program(), th, "scan_states garch");
  }
}

TEST_CASE("scan_states: empty sequences are refused", "[compile][scan][scan_states]") {
  static const std::vector<double> none;
  auto phi = normal<"phi">(0.0, 1.0);
  CHECK_THROWS_WITH(scan_states([&](const auto& s, const auto& x) { return phi * s + x; }, 0.0, data(none)),
                    Catch::Matchers::Contains("the sequences are empty"));
}

TEST_CASE("scan: loop-invariant subexpressions of the step become operands, evaluated once",
          "[compile][scan][hoist]") {
  static const std::vector<double> x{0.5, -0.2, 1.1, 0.3};
  auto q = half_normal<"q">(1.0);
  // The step uses square(q) (q = exp(θ_q)): hoisted, so the scan's operands are the initial state
  // and square(q) — one unary node — and not the parameter leaf.
  auto s = scan([&](const auto& st, const auto& xt) { return st * square(q) + xt; }, 0.0, data(x));
  using N = std::remove_cvref_t<decltype(detail::as_node(s))>;
  static_assert(children_t<N>::size == 2, "the scan's operands: init and the hoisted square(q)");
  static_assert(kind_of<meta::at<1, children_t<N>>> == node_kind::unary,
                "the hoisted operand is the subexpression square(q), not the leaf");
  const auto m = model(joint(q, target(-square(at(s, 0)))));
  for (const auto& th : tyche_test::random_points(6, 1, -1.0, 1.0, 53)) {
    const double qv = std::exp(th[0]);
    double st = 0.0;
    for (double v : x) st = st * qv * qv + v;
    const double want = normal_log(qv, 0, 1) + std::log(2.0) + th[0] - st * st;
    CHECK(m.log_prob(th) == Approx(want).epsilon(1e-12));
    tyche_test::check_gradient_at(m.program(), th, "hoisted square(q)");
  }
}

TEST_CASE("scan: a sequence of parameters (latent innovations) against linear_recurrence and a loop",
          "[compile][scan][parameter_sequence]") {
  // Non-centred stochastic volatility: h₁ = μ + σ/√(1 − φ²) z₁, hₜ = μ + φ (hₜ₋₁ − μ) + σ zₜ,
  // yₜ ~ normal(0, exp(hₜ / 2)). Written with scan_states over tail(z) (an expression of the
  // parameter z read step by step) and with linear_recurrence: the same log density and
  // gradient at random points, and both against a direct loop.
  static const std::vector<double> y{0.8, -1.4, 0.3, 2.1, -0.2, 0.9, -0.6, 1.7};
  constexpr std::size_t T = 8;
  auto mu = normal<"mu">(0.0, 2.0);
  auto phi = uniform<"phi">(-1.0, 1.0);
  auto sigma = half_normal<"sigma">(1.0);
  auto z = std_normal<"z">(shape<T>);
  auto x1 = sigma / sqrt(1.0 - square(phi)) * z[0];
  auto by_scan = scan_states([&](const auto& x, const auto& zt) { return phi * x + sigma * zt; }, x1, tail(z, T - 1));
  auto by_rec = linear_recurrence(sigma * tail(z, T - 1), phi, x1);
  const auto m_scan = model(joint(mu, phi, sigma, z, normal(0.0, exp(0.5 * (mu + append_row(x1, by_scan)))).observe(data(y))));
  const auto m_rec = model(joint(mu, phi, sigma, z, normal(0.0, exp(0.5 * (mu + append_row(x1, by_rec)))).observe(data(y))));
  REQUIRE(m_scan.dim() == 3 + T);
  for (const auto& th : tyche_test::random_points(8, 3 + T, -1.0, 1.0, 7)) {
    const double mu_v = th[0], phi_v = std::tanh(th[1] / 2), sigma_v = std::exp(th[2]);  // uniform(-1, 1): -1 + 2 inv_logit
    double x = sigma_v / std::sqrt(1 - phi_v * phi_v) * th[3], lp_y = 0;
    for (std::size_t t = 0; t < T; ++t) {
      if (t > 0) x = phi_v * x + sigma_v * th[3 + t];
      lp_y += normal_log(y[t], 0, std::exp(0.5 * (mu_v + x)));
    }
    CHECK(m_scan.log_prob(th) == Approx(m_rec.log_prob(th)).epsilon(1e-12));
    CHECK(m_scan.log_prob(th) - m_rec.log_prob(th) == Approx(0).margin(1e-10));
    std::vector<double> g_scan(th.size()), g_rec(th.size());
    m_scan.log_prob_and_gradient(th, g_scan);
    m_rec.log_prob_and_gradient(th, g_rec);
    for (std::size_t i = 0; i < th.size(); ++i) CHECK(g_scan[i] == Approx(g_rec[i]).epsilon(1e-10).margin(1e-12));
    tyche_test::check_gradient_at(m_scan.program(), th, "scan over a parameter sequence");
    // The likelihood part against the loop: the log density without the priors' terms.
    const std::vector<double> terms = m_scan.log_prob_terms(th);
    CHECK(terms.back() == Approx(lp_y).epsilon(1e-12));
  }
}

TEST_CASE("scan: parameter and data sequences together, a nonlinear step, every scalar type",
          "[compile][scan][parameter_sequence]") {
  // sₜ₊₁ = tanh(a sₜ + wₜ) + b xₜ with w a parameter vector and x data: gradient against finite
  // differences (w's adjoints are the ones the data path never had), float and SIMD lanes
  // against double, and a sequence of the wrong length named.
  static const std::vector<double> x{0.4, -0.9, 1.3, 0.2, -0.5};
  auto a = normal<"a">(0.0, 1.0);
  auto b = normal<"b">(0.0, 1.0);
  auto w = normal<"w">(0.0, 1.0, shape<5>);
  auto step = [&](const auto& s, const auto& wt, const auto& xt) { return tanh(a * s + wt) + b * xt; };
  auto last = scan(step, 0.1, w, data(x));
  const auto m = model(joint(a, b, w, target(-square(at(last, 0) - 0.3))));
  for (const auto& th : tyche_test::random_points(10, 7, -1.5, 1.5, 11)) {
    double s = 0.1;
    for (std::size_t t = 0; t < 5; ++t) s = std::tanh(th[0] * s + th[2 + t]) + th[1] * x[t];
    double want = normal_log(th[0], 0, 1) + normal_log(th[1], 0, 1) - (s - 0.3) * (s - 0.3);
    for (std::size_t t = 0; t < 5; ++t) want += normal_log(th[2 + t], 0, 1);
    CHECK(m.log_prob(th) == Approx(want).epsilon(1e-12));
    tyche_test::check_gradient_at(m.program(), th, "nonlinear scan with a parameter sequence");
  }
  const auto& prog = m.program();
  const std::vector<double> th{0.3, -0.4, 0.2, -0.1, 0.5, 0.7, -0.3};
  std::vector<double> g(7), ws(prog.workspace_size());
  const double v = prog.value_and_gradient(th, g, ws);
  const std::vector<float> thf(th.begin(), th.end());
  std::vector<float> gf(7), wsf(prog.workspace_size());
  CHECK(prog.value_and_gradient(thf, gf, wsf) == Approx(v).epsilon(1e-4));
  for (std::size_t i = 0; i < 7; ++i) CHECK(gf[i] == Approx(g[i]).epsilon(1e-3).margin(1e-4));
  auto w4 = normal<"w">(0.0, 1.0, shape<4>);
  CHECK_THROWS_WITH(scan(step, 0.1, w4, data(x)), Catch::Matchers::Contains("sequence 2 (data) has 5 values, sequence 1 (uses w) has 4"));
  CHECK_THROWS_WITH(scan_states(step, 0.1, w4, data(x)),
                    Catch::Matchers::StartsWith("tyche::scan_states(step, init, sequences...): sequence 2 (data) has 5"));
}
