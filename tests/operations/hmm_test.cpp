// hmm_marginal(log_omega, Gamma, rho) (tyche/operations/hmm.hpp) and pointwise_log_density:
// the log marginal likelihood of hidden Markov models against enumeration of every state path
// (K = 2 and 3, value to 1e-10 and gradient against finite differences), its arguments whole
// or by rows, SIMD lanes and float, a model with simplex transition rows and positive-ordered
// means against the same model written with scan (values and gradients; NUTS on N = 200:
// tests/samplers/hmm_nuts_test.cpp), and the errors that name the argument.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "support/property.hpp"

using namespace tyche;

namespace {

// log Σ over the K^N state paths z of rho[z0] e^{omega[z0][0]} Π_t gamma[z_{t-1}][z_t] e^{omega[z_t][t]}
// (omega row major, K × N; gamma row major, K × K). Any non-negative gamma and rho.
double by_enumeration(const std::vector<double>& omega, const std::vector<double>& gamma,
                      const std::vector<double>& rho, std::size_t n) {
  const std::size_t k = rho.size();
  std::vector<std::size_t> z(n, 0);
  double total = 0;
  while (true) {
    double p = rho[z[0]] * std::exp(omega[z[0] * n]);
    for (std::size_t t = 1; t < n; ++t) p *= gamma[z[t - 1] * k + z[t]] * std::exp(omega[z[t] * n + t]);
    total += p;
    std::size_t i = 0;
    while (i < n && ++z[i] == k) z[i++] = 0;
    if (i == n) break;
  }
  return std::log(total);
}

// softmax of v[0 .. K), as the model computes it.
std::vector<double> softmax_of(const double* v, std::size_t k) {
  double m = v[0], total = 0;
  for (std::size_t i = 1; i < k; ++i) m = std::max(m, v[i]);
  std::vector<double> out(k);
  for (std::size_t i = 0; i < k; ++i) total += out[i] = std::exp(v[i] - m);
  for (double& o : out) o /= total;
  return out;
}

// θ = (omega: K·N, the K rows of Γ's logits: K² values, rho's logits: K); each row of Γ and
// rho enter as softmax(·), so that every point is a valid HMM (hmm_marginal requires
// stochastic rows). Γ given whole (K = 2: append_row of the rows) and by rows.
template <std::size_t K, std::size_t N>
void check_against_enumeration(unsigned seed) {
  vector_param<"omega", K * N> omega;
  vector_param<"g0", K> g0;
  vector_param<"g1", K> g1;
  vector_param<"g2", K> g2;
  vector_param<"lr", K> lr;
  const auto check = [&](const auto& prog, const char* what) {
    const auto pts = tyche_test::random_points(12, K * N + K * K + K, -2.0, 1.0, seed);
    for (const auto& x : pts) {
      const std::vector<double> om(x.begin(), x.begin() + K * N);
      std::vector<double> g;
      for (std::size_t i = 0; i < K; ++i)
        for (double v : softmax_of(x.data() + K * N + i * K, K)) g.push_back(v);
      const std::vector<double> r = softmax_of(x.data() + K * N + K * K, K);
      std::vector<double> ws(prog.workspace_size());
      const double v = prog.value(std::span<const double>(x), std::span<double>(ws));
      INFO(what << ": K = " << K << ", N = " << N);
      CHECK(v == Approx(by_enumeration(om, g, r, N)).epsilon(1e-10));
      tyche_test::check_gradient_at(prog, x, what);
    }
    tyche_test::check_lanes(prog, pts, what);
    tyche_test::check_float(prog, pts[0], what);
  };
  if constexpr (K == 2) {
    check(compile(hmm_marginal(omega, std::tuple{softmax(g0), softmax(g1)}, softmax(lr)), omega, g0, g1, lr),
          "hmm_marginal, Gamma by rows");
    check(compile(hmm_marginal(omega, append_row(softmax(g0), softmax(g1)), softmax(lr)), omega, g0, g1, lr),
          "hmm_marginal, Gamma whole");
  } else {
    check(compile(hmm_marginal(omega, std::tuple{softmax(g0), softmax(g1), softmax(g2)}, softmax(lr)), omega, g0,
                  g1, g2, lr),
          "hmm_marginal, Gamma by rows");
  }
}

constexpr double log_two_pi = 1.8378770664093454836;

}  // namespace

TEST_CASE("hmm_marginal: against enumeration of every state path, K = 2 and 3", "[operations][hmm]") {
  check_against_enumeration<2, 10>(901);
  check_against_enumeration<3, 6>(902);
  check_against_enumeration<2, 1>(903);
}

TEST_CASE("hmm_marginal: log_omega and Gamma by rows give what they give whole", "[operations][hmm]") {
  vector_param<"o0", 5> o0;
  vector_param<"o1", 5> o1;
  vector_param<"g0", 2> g0;
  vector_param<"g1", 2> g1;
  vector_param<"r", 2> r;
  const auto by_rows =
      compile(hmm_marginal(std::tuple{o0, o1}, std::tuple{softmax(g0), softmax(g1)}, softmax(r)), o0, o1, g0, g1, r);
  for (const auto& x : tyche_test::random_points(8, 16, -1.5, 1.5, 904)) {
    std::vector<double> om(x.begin(), x.begin() + 10), g;
    for (std::size_t i = 0; i < 2; ++i)
      for (double v : softmax_of(x.data() + 10 + 2 * i, 2)) g.push_back(v);
    const std::vector<double> rr = softmax_of(x.data() + 14, 2);
    std::vector<double> ws(by_rows.workspace_size());
    CHECK(by_rows.value(std::span<const double>(x), std::span<double>(ws)) ==
          Approx(by_enumeration(om, g, rr, 5)).epsilon(1e-10));
    tyche_test::check_gradient_at(by_rows, x, "hmm_marginal by rows");
  }
}

TEST_CASE("hmm_marginal: a Gaussian HMM with simplex rows equals the same model by scan",
          "[operations][hmm]") {
  static const std::vector<double> y{-1.1, -0.7, 2.3, 1.8, 2.2, -0.9, -1.4, 1.9, 2.5, 2.1, -0.6, -1.2};
  static const std::vector<double> y_first(y.begin(), y.begin() + 1), y_rest(y.begin() + 1, y.end());
  auto mu = positive_ordered<"mu">(normal(1.0, 3.0), shape<2>);
  auto g0 = dirichlet<"g0">(2.0, shape<2>);  // row 0 of Γ
  auto g1 = dirichlet<"g1">(2.0, shape<2>);
  auto rho = dirichlet<"rho">(1.0, shape<2>);
  auto sigma = half_normal<"sigma">(2.0);
  const auto by_hmm = model(joint(
      mu, g0, g1, rho, sigma,
      target(hmm_marginal(std::tuple{pointwise_log_density(normal(mu[0], sigma), data(y)),
                                     pointwise_log_density(normal(mu[1], sigma), data(y))},
                          std::tuple{g0, g1}, rho))));
  auto alpha = scan(
      [&](const auto& a, const auto& yt) {
        return std::tuple{log_sum_exp(a[0] + log(g0[0]), a[1] + log(g1[0])) + normal_lpdf(yt, mu[0], sigma),
                          log_sum_exp(a[0] + log(g0[1]), a[1] + log(g1[1])) + normal_lpdf(yt, mu[1], sigma)};
      },
      std::tuple{log(rho[0]) + normal_lpdf(data(y_first), mu[0], sigma),
                 log(rho[1]) + normal_lpdf(data(y_first), mu[1], sigma)},
      data(y_rest));
  const auto by_scan = model(joint(mu, g0, g1, rho, sigma, target(log_sum_exp(alpha))));
  REQUIRE(by_hmm.dim() == by_scan.dim());
  for (const auto& th : tyche_test::random_points(10, by_hmm.dim(), -1.5, 1.5, 905)) {
    CHECK(by_hmm.log_prob(th) == Approx(by_scan.log_prob(th)).epsilon(1e-10));
    tyche_test::check_gradient_at(by_hmm.program(), th, "Gaussian HMM by hmm_marginal");
  }
}

TEST_CASE("pointwise_log_density: the elementwise terms of a family's log density", "[operations][hmm]") {
  static const std::vector<double> y{0.5, -1.0, 2.0};
  param<"m"> m;
  param<"s"> s;
  // The sum of the elements against normal_lpdf, and one element against the formula.
  const auto total = compile(sum(pointwise_log_density(normal(m, exp(s)), data(y))), m, s);
  const auto summed = compile(normal_lpdf(data(y), m, exp(s)), m, s);
  for (const auto& x : tyche_test::random_points(5, 2, -1.0, 1.0, 906)) {
    std::vector<double> ws(total.workspace_size()), ws2(summed.workspace_size());
    CHECK(total.value(std::span<const double>(x), std::span<double>(ws)) ==
          Approx(summed.value(std::span<const double>(x), std::span<double>(ws2))).epsilon(1e-13));
  }
  const auto first = compile(at(pointwise_log_density(normal(m, exp(s)), data(y)), 1), m, s);
  const std::vector<double> x{0.3, 0.2};
  std::vector<double> ws(first.workspace_size());
  const double sg = std::exp(0.2), z = (-1.0 - 0.3) / sg;
  CHECK(first.value(std::span<const double>(x), std::span<double>(ws)) ==
        Approx(-0.5 * z * z - std::log(sg) - 0.5 * log_two_pi).epsilon(1e-13));
  // Data outside the family's support is named as observe() names it.
  static const std::vector<double> counts{1, -2};
  CHECK_THROWS_WITH(pointwise_log_density(poisson(exp(m)), data(counts)), Catch::Contains("y[2]"));
}

TEST_CASE("hmm_marginal: sizes and data values are checked, naming the argument", "[operations][hmm]") {
  vector_param<"o", 6> o;
  const auto g = assume_probability(vector_param<"g", 4>{});
  const auto r = assume_probability(vector_param<"r", 2>{});
  const auto r3 = assume_probability(vector_param<"r3", 3>{});
  const auto g9 = assume_probability(vector_param<"g9", 9>{});
  CHECK_THROWS_WITH(hmm_marginal(o, g9, r), Catch::Contains("'Gamma' has 9 values, not 2*2"));
  vector_param<"o7", 7> o7;
  CHECK_THROWS_WITH(hmm_marginal(o7, g, r), Catch::Contains("'log_omega' has 7 values, not a multiple of the 2"));
  CHECK_THROWS_WITH(hmm_marginal(std::tuple{o, o}, g, r3), Catch::Contains("'log_omega' has 2 rows but 'rho' has 3"));
  vector_param<"o5", 5> o5;
  CHECK_THROWS_WITH(hmm_marginal(std::tuple{o, o5}, g, r), Catch::Contains("'log_omega' row 2 has 5 values, row 1 has 6"));
  static const std::vector<double> bad_rho{0.5, 1.5};
  CHECK_THROWS_WITH(hmm_marginal(o, g, data(bad_rho)), Catch::Contains("'rho' has value 1.5") &&
                                                             Catch::Contains("index 2"));
  static const std::vector<double> row{0.2, std::nan("")};
  CHECK_THROWS_WITH(hmm_marginal(o, std::tuple{data(row), data(row)}, r), Catch::Contains("'Gamma' row 1 has value nan"));
  CHECK_NOTHROW(hmm_marginal(o, g, r));
}

TEST_CASE("hmm_marginal: Gamma's rows and rho must be distributions, as Stan checks", "[operations][hmm]") {
  // A new user's mistakes (2026-12-04): data rows that do not sum to 1 were accepted, and so was
  // a transition matrix made of unconstrained parameters (a compile-time error now:
  // tests/compile_fail/hmm_gamma_unconstrained.cpp), with a wrong likelihood and no warning.
  vector_param<"o", 6> o;
  vector_param<"lr", 2> lr;
  const auto r = softmax(lr);
  static const std::vector<double> ok{0.9, 0.1, 0.2, 0.8}, row_sums_1_2{0.9, 0.3, 0.2, 0.8}, rho_bad{0.7, 0.7};
  static const std::vector<double> row_a{0.9, 0.1}, row_b{0.25, 0.7};
  CHECK_NOTHROW(hmm_marginal(o, data(ok), r));
  // A simplex variable's value and a softmax written by hand, exp(v - log_sum_exp(v)), are in
  // (0, 1]: v - log_sum_exp(v) <= 0 elementwise, which interval arithmetic alone cannot see
  // (interval/support.hpp, is_log_softmax). Before, their support was (0, inf), and a dirichlet
  // row could not be passed as Gamma.
  vector_param<"v", 3> v;
  constexpr interval by_hand = support_of<detail::node_t<decltype(exp(v - log_sum_exp(v)))>>;
  CHECK(by_hand.lo == 0.0);
  CHECK(!by_hand.lo_closed);
  CHECK(by_hand.hi == 1.0);
  CHECK(by_hand.hi_closed);
  constexpr interval shifted = support_of<detail::node_t<decltype(exp(v - log_sum_exp(lr)))>>;  // not a softmax
  CHECK(shifted.hi == interval::inf);
  // Two operands of one type that can hold different values (constants, data, indices) are not
  // one x: exp(2 v - log_sum_exp(0.5 v)) exceeds 1 at v = (10, 0, 0).
  const auto scaled = exp(2.0 * v - log_sum_exp(0.5 * v));
  CHECK(support_of<detail::node_t<decltype(scaled)>>.hi == interval::inf);
  static const std::vector<double> a{1.0, 2.0, 3.0}, b{0.0, 0.0, 0.0};
  CHECK(support(detail::as_node(data(a) - log_sum_exp(data(b)))).hi > 0);
  CHECK_THROWS_WITH(hmm_marginal(o, data(row_sums_1_2), r),
                    Catch::Contains("'Gamma' row 1 sums to 1.2 (rows count from 1)") &&
                        Catch::Contains("summing to 1 (within 1e-8"));
  CHECK_THROWS_WITH(hmm_marginal(o, std::tuple{data(row_a), data(row_b)}, r),
                    Catch::Contains("'Gamma' row 2 sums to 0.95"));
  CHECK_THROWS_WITH(hmm_marginal(o, data(ok), data(rho_bad)), Catch::Contains("'rho' sums to 1.4;"));
  // Inside [0, 1] by its support but not stochastic: the value is NaN (the sampler's "not
  // finite"), not a likelihood.
  vector_param<"lg", 4> lg;
  const auto not_stochastic = compile(hmm_marginal(o, assume_probability(exp(lg)), r), o, lg, lr);
  std::vector<double> ws(not_stochastic.workspace_size());
  std::vector<double> x(12, -1.0);
  CHECK(std::isnan(not_stochastic.value(std::span<const double>(x), std::span<double>(ws))));
  // Rows that sum to 1 within 1e-8 pass: log(0.5) makes exp(lg) rows of 0.5 and 0.5.
  for (std::size_t i = 6; i < 10; ++i) x[i] = std::log(0.5);
  CHECK(std::isfinite(not_stochastic.value(std::span<const double>(x), std::span<double>(ws))));
}

TEST_CASE("hmm_marginal: -inf in data log_omega (an impossible observation) builds; no possible path gives -inf",
          "[operations][hmm]") {
  // State 1 cannot emit observation 2: that path is dropped, the others sum as usual.
  static const std::vector<double> omega{-1.0, -INFINITY, -0.5, -2.0, -0.3, -1.1};  // K = 2, N = 3
  static const std::vector<double> gamma{0.7, 0.3, 0.4, 0.6}, rho{0.5, 0.5};
  const auto m = model(joint(normal<"u">(0.0, 1.0), target(hmm_marginal(data(omega), data(gamma), data(rho)))));
  const std::vector<double> th{0.2};
  CHECK(m.log_prob(th) == Approx(by_enumeration(omega, gamma, rho, 3) - 0.5 * 0.04 - 0.5 * log_two_pi).epsilon(1e-12));
  // Every state impossible at one step: log p(y) = -inf, not NaN.
  static const std::vector<double> none{-1.0, -INFINITY, -0.5, -2.0, -INFINITY, -1.1};
  vector_param<"r", 2> r;
  const auto prog = compile(hmm_marginal(data(none), data(gamma), softmax(r)), r);
  std::vector<double> ws(prog.workspace_size());
  const std::vector<double> at0{0.0, 0.0};
  const double v = prog.value(std::span<const double>(at0), std::span<double>(ws));
  CHECK(std::isinf(v));
  CHECK(v < 0);
}
