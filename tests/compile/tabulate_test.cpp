// tabulate(n, f, sequences...) (tyche/compile/tabulate.hpp): vectors built element by element
// from a lambda, against direct loops — a regression mean per index, the change point's double
// loop (log p(y, s) for every s, each a sum over all observations) against the same loop in
// plain C++ and against the closed form by cumulative sums, gradients, float, errors — and
// step(x), the indicator that double loop uses.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "support/property.hpp"
#include "support/reference_math.hpp"

using namespace tyche;

namespace {

using tyche_test::normal_log;

// Counts of 12 periods; the change point model's data.
const std::vector<double> counts{4, 3, 5, 2, 4, 6, 1, 0, 2, 1, 0, 1};

// log Σ_s (1/T) Π_t poisson(y_t | t < s ? e : l) by the double loop.
double change_point_by_loops(double e, double l) {
  const std::size_t n = counts.size();
  std::vector<double> lp(n);
  double top = -INFINITY;
  for (std::size_t s = 0; s < n; ++s) {
    lp[s] = -std::log(double(n));
    for (std::size_t t = 0; t < n; ++t) {
      const double rate = t < s ? e : l;
      lp[s] += counts[t] * std::log(rate) - rate - std::lgamma(counts[t] + 1);
    }
    top = std::max(top, lp[s]);
  }
  double acc = 0;
  for (double v : lp) acc += std::exp(v - top);
  return top + std::log(acc);
}

}  // namespace

TEST_CASE("step(x): 0 below 0, 1 from 0 on, derivative 0, support", "[compile][tabulate][step]") {
  auto x = normal<"x">(0.0, 1.0);
  const auto m = model(joint(x, target(step(x) * x)));
  // log density = log N(x | 0, 1) + step(x) x: the extra term is x for x ≥ 0, 0 below.
  for (double v : {-1.5, -0.25, 0.0, 0.3, 2.0}) {
    const std::vector<double> th{v};
    const double want = normal_log(v, 0, 1) + (v < 0 ? 0.0 : v);
    CHECK(m.log_prob(th) == Approx(want).epsilon(1e-14));
    std::vector<double> g(1);
    m.log_prob_and_gradient(th, g);
    CHECK(g[0] == Approx(-v + (v < 0 ? 0.0 : 1.0)).epsilon(1e-14));
  }
  static_assert(step(interval::closed(0.0, 3.0)) == interval::closed(1.0, 1.0));
  static_assert(step(interval::closed(-2.0, -1.0)) == interval::closed(0.0, 0.0));
  static_assert(step(interval::closed(-2.0, 1.0)) == interval::closed(0.0, 1.0));
}

TEST_CASE("log_step(x): 0 from 0 on, -inf below (and for NaN), derivative 0, support", "[compile][tabulate][step]") {
  auto x = normal<"x">(0.0, 1.0);
  const auto m = model(joint(x, target(log_step(x - 0.5))));
  for (double v : {-1.5, 0.25, 0.5, 0.7, 2.0}) {
    const std::vector<double> th{v};
    std::vector<double> g(1);
    const double lp = m.log_prob_and_gradient(th, g);
    if (v < 0.5) {
      CHECK(lp == -std::numeric_limits<double>::infinity());
    } else {
      CHECK(lp == Approx(normal_log(v, 0, 1)).epsilon(1e-14));
    }
    CHECK(g[0] == Approx(-v).epsilon(1e-14));  // the guard's derivative is 0
  }
  CHECK(math::log_step(std::nan("")) == -std::numeric_limits<double>::infinity());
  CHECK(math::log_step(-0.0f) == 0.0f);
#if TYCHE_HAS_XSIMD
  // The batch overload, lane by lane against the scalar one.
  using B = xsimd::batch<double>;
  alignas(64) double xs[B::size];
  for (std::size_t l = 0; l < B::size; ++l) xs[l] = l % 2 == 0 ? -0.5 * static_cast<double>(l + 1) : static_cast<double>(l);
  const B r = math::log_step(B::load_aligned(xs));
  for (std::size_t l = 0; l < B::size; ++l) CHECK(r.get(l) == math::log_step(xs[l]));
#endif
  static_assert(log_step(interval::closed(0.0, 3.0)) == interval::closed(0.0, 0.0));
  static_assert(log_step(interval::closed(-2.0, 1.0)).hi == 0.0 && log_step(interval::closed(-2.0, 1.0)).hi_closed);
  static_assert(log_step(interval::closed(-2.0, -1.0)).lo == -interval::inf);
}

TEST_CASE("tabulate: one element per index and sequence value, against a loop", "[compile][tabulate]") {
  static const std::vector<double> y{0.4, 1.1, 0.9, 2.3, 2.0, 3.1, 3.3};
  auto alpha = normal<"alpha">(0.0, 2.0);
  auto beta = normal<"beta">(0.0, 2.0);
  auto sigma = half_normal<"sigma">(1.0);
  // element i: log N(y_i | alpha + beta i, sigma)
  auto lp = tabulate(y.size(), [&](const auto& i, const auto& yi) { return normal_lpdf(yi, alpha + beta * i, sigma); },
                     data(y));
  const auto m = model(joint(alpha, beta, sigma, target(sum(lp) + at(lp, 3))));
  for (const auto& th : tyche_test::random_points(8, 3, -1.0, 1.0, 7)) {
    const double a = th[0], b = th[1], s = std::exp(th[2]);
    double want = normal_log(a, 0, 2) + normal_log(b, 0, 2) + normal_log(s, 0, 1) + std::log(2.0) + th[2];
    for (std::size_t i = 0; i < y.size(); ++i) want += normal_log(y[i], a + b * double(i), s);
    want += normal_log(y[3], a + b * 3.0, s);  // element 3 used twice
    CHECK(m.log_prob(th) == Approx(want).epsilon(1e-12));
    tyche_test::check_gradient_at(m.program(), th, "tabulate regression");
  }
}

// A gradient evaluation keeps each element's gradient from its forward pass for the reverse pass
// up to ops::kept_derivatives_limit kept values (n × the parameters' count), and above that
// evaluates each element again backwards: both paths against the formula.
TEST_CASE("tabulate: gradients kept from the forward pass or evaluated again agree with the formula",
          "[compile][tabulate]") {
  for (const std::size_t p : {std::size_t{5}, std::size_t{100}}) {
    // 35 kept values; just over the limit: evaluated again
    const std::size_t n = p == 5 ? 7 : ops::kept_derivatives_limit / p + 1;
    std::vector<double> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = 0.5 + 0.001 * double(i % 17);
    auto v = normal<"v">(0.0, 1.0, shape_of(p));
    // element i: x_i Σ_k v_k + i v_0
    auto tab = tabulate(n, [&](const auto& i, const auto& xi) { return xi * sum(v) + i * at(v, 0); }, data(x));
    REQUIRE(detail::as_node(tab).op.keeps_gradients(n) == (p == 5));
    const auto m = model(joint(v, target(sum(tab))));
    std::vector<double> th(p), g(p);
    for (std::size_t k = 0; k < p; ++k) th[k] = 0.3 * std::sin(double(k));
    double sx = 0, si = 0, sv = 0, prior = 0;
    for (std::size_t i = 0; i < n; ++i) sx += x[i], si += double(i);
    for (std::size_t k = 0; k < p; ++k) sv += th[k], prior += normal_log(th[k], 0, 1);
    const double want = prior + sx * sv + si * th[0];
    CHECK(m.log_prob(th) == Approx(want).epsilon(1e-12));
    CHECK(m.log_prob_and_gradient(th, g) == Approx(want).epsilon(1e-12));
    for (std::size_t k = 0; k < p; ++k) {
      INFO("p = " << p << ", k = " << k);
      CHECK(g[k] == Approx(-th[k] + sx + (k == 0 ? si : 0.0)).epsilon(1e-12));
    }
  }
}

TEST_CASE("tabulate: the change point's double loop against loops and the closed form",
          "[compile][tabulate]") {
  const std::size_t n = counts.size();
  static std::vector<double> t_index, early_sum, early_n, late_sum, late_n;
  double total = 0, c = -std::log(double(n));
  for (double v : counts) {
    total += v;
    c -= std::lgamma(v + 1);
  }
  double before = 0;
  for (std::size_t s = 0; s < n; ++s) {
    t_index.push_back(double(s));
    early_sum.push_back(before);
    early_n.push_back(double(s));
    late_sum.push_back(total - before);
    late_n.push_back(double(n - s));
    before += counts[s];
  }
  auto e = exponential<"e">(1.0);
  auto l = exponential<"l">(1.0);
  // Element s: Σ_t log poisson(y_t | t < s ? e : l), a sum over every observation.
  auto lp = tabulate(n, [&](const auto& s) {
    auto early = step(s - data(t_index) - 0.5);  // 1 where t < s
    return poisson_log_lpmf(data(counts), log(l) + (log(e) - log(l)) * early);
  });
  const auto m = model(joint(e, l, target(log_sum_exp(lp) - std::log(double(n)))));
  // The same density by per-s sums of the data (examples/change_point.cpp).
  auto closed = data(early_sum) * log(e) - data(early_n) * e + data(late_sum) * log(l) - data(late_n) * l;
  const auto m_closed = model(joint(e, l, target(log_sum_exp(closed) + c)));
  for (const auto& th : tyche_test::random_points(10, 2, -1.5, 1.5, 11)) {
    const double ev = std::exp(th[0]), lv = std::exp(th[1]);
    const double want = -ev + th[0] - lv + th[1] + change_point_by_loops(ev, lv);
    CHECK(m.log_prob(th) == Approx(want).epsilon(1e-10));
    CHECK(m.log_prob(th) == Approx(m_closed.log_prob(th)).epsilon(1e-10));
    std::vector<double> g(2), g_closed(2);
    m.log_prob_and_gradient(th, g);
    m_closed.log_prob_and_gradient(th, g_closed);
    CHECK(g[0] == Approx(g_closed[0]).epsilon(1e-10).margin(1e-12));
    CHECK(g[1] == Approx(g_closed[1]).epsilon(1e-10).margin(1e-12));
  }
  // float evaluates what double does
  const auto& prog = m.program();
  const std::vector<double> th{0.9, 0.1};
  std::vector<double> g(2), ws(prog.workspace_size());
  const double v = prog.value_and_gradient(th, g, ws);
  const std::vector<float> thf{0.9f, 0.1f};
  std::vector<float> gf(2), wsf(prog.workspace_size());
  const float vf = prog.value_and_gradient(thf, gf, wsf);
  CHECK(vf == Approx(v).epsilon(1e-4));
  for (std::size_t i = 0; i < 2; ++i) CHECK(gf[i] == Approx(g[i]).epsilon(1e-3).margin(1e-4));
  // NUTS (chains in SIMD lanes) on the tabulated form: the posterior mean of e agrees with the
  // closed form's run within 4 combined Monte Carlo standard errors.
  const nuts_config cfg{.chains = 4, .warmup = 500, .draws = 1000, .seed = 5};
  const auto fit = nuts(m, cfg), fit_closed = nuts(m_closed, cfg);
  const auto sa = summary(fit), sb = summary(fit_closed);
  for (std::size_t k = 0; k < 2; ++k) {
    const double diff = std::fabs(sa.rows[k].mean - sb.rows[k].mean);
    const double se = std::sqrt(sa.rows[k].mcse * sa.rows[k].mcse + sb.rows[k].mcse * sb.rows[k].mcse);
    INFO(sa.rows[k].name << ": " << sa.rows[k].mean << " against " << sb.rows[k].mean << " (combined se " << se << ")");
    CHECK(diff < 4 * se);
  }
}

TEST_CASE("tabulate: bad sizes and values are named", "[compile][tabulate]") {
  static const std::vector<double> a{1, 2, 3}, bad{0.5, NAN, 1.0};
  auto phi = normal<"phi">(0.0, 1.0);
  auto f = [&](const auto& i, const auto& x) { return phi * x + i; };
  CHECK_THROWS_WITH(tabulate(4, f, data(a)), Catch::Matchers::Contains("sequence 1 has 3 values, n is 4"));
  CHECK_THROWS_WITH(tabulate(3, f, data(bad)), Catch::Matchers::Contains("at index 2"));
  // Data given a name are named (a new user's data(y, "y"), 2026-12-04).
  CHECK_THROWS_WITH(tabulate(4, f, data(a, "y")), Catch::Matchers::Contains("sequence 1 ('y') has 3 values, n is 4"));
  CHECK_THROWS_WITH(tabulate(3, f, data(bad, "y")),
                    Catch::Matchers::Contains("sequence 1 ('y') has value nan at index 2"));
  CHECK_THROWS_WITH(tabulate(0, [&](const auto& i) { return phi * i; }), Catch::Matchers::Contains("n is 0"));
}
