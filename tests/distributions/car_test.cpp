// car(alpha, tau, graph) and icar(graph) (tyche/distributions/car.hpp): log densities against
// multi_normal_prec with the dense precision τ(D − αW) and D − W + 11ᵀ/ε² (the same laws, O(K³)),
// gradients through the property check, the eigenvalue routine against a cycle's known spectrum
// and a random matrix's trace identities, draws against the covariance, NUTS on a CAR prior
// (means within 4 MCSE, variances within 10 %), and the graph's errors.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "support/gaussian_checks.hpp"
#include "support/property.hpp"

using namespace tyche;
using Catch::Matchers::Contains;

namespace {
/// A 5 × 6 grid of areas with three diagonal pairs: K = 30, irregular numbers of neighbours.
struct grid {
  static constexpr std::size_t K = 30;
  std::vector<int> n1, n2;
  std::vector<double> w = std::vector<double>(K * K, 0.0), d = std::vector<double>(K * K, 0.0);
  grid() {
    const auto link = [&](int a, int b) {
      n1.push_back(a);
      n2.push_back(b);
      w[std::size_t(a) * K + std::size_t(b)] = w[std::size_t(b) * K + std::size_t(a)] = 1;
      d[std::size_t(a) * K + std::size_t(a)] += 1;
      d[std::size_t(b) * K + std::size_t(b)] += 1;
    };
    for (int i = 0; i < int(K); ++i) {
      const int r = i / 6, c = i % 6;
      if (c + 1 < 6) link(i, i + 1);
      if (r + 1 < 5) link(i + 6, i);  // either order
    }
    link(0, 7);
    link(14, 21);
    link(22, 29);
  }
};
}  // namespace

TEST_CASE("car: against multi_normal_prec with the dense precision, and gradients", "[distributions][car]") {
  const grid gr;
  constexpr std::size_t K = grid::K;
  const areal_graph g(K, gr.n1, gr.n2);
  CHECK(g.areas() == K);
  CHECK(g.pairs() == gr.n1.size());
  CHECK(g.components() == 1);
  param<"a"> a;
  param<"t"> t;
  vector_param<"phi", K> phi;
  // α = 2·logistic(a) − 1 ∈ (−1, 1): negative values too (inside (1/λ_min, 1) for this graph).
  const auto f = compile(car(lit<2> * logistic(a) - lit<1>, exp(t), g).log_prob(phi), a, t, phi);
  const auto fl = compile(car_lpdf(phi, lit<2> * logistic(a) - lit<1>, exp(t), g), a, t, phi);
  const auto h = compile(
      multi_normal_prec(0.0, exp(t) * (data(gr.d) - (lit<2> * logistic(a) - lit<1>) * data(gr.w))).log_prob(phi), a, t,
      phi);
  for (const auto& p : tyche_test::random_points(8, 2 + K, -1.5, 1.5, 21)) {
    CHECK(f.value(p) == Approx(h.value(p)).epsilon(1e-11));
    CHECK(fl.value(p) == Approx(h.value(p)).epsilon(1e-11));
    tyche_test::check_gradient_at(f, p, "car(alpha, tau, grid)");
  }
  tyche_test::check_lanes(f, tyche_test::random_points(8, 2 + K, -1.5, 1.5, 22), "car (lanes)");
  // The same graph from its adjacency matrix.
  const auto g2 = areal_graph::from_adjacency(matrix(gr.w.data(), K, K));
  CHECK(g2.pairs() == g.pairs());
  const auto f2 = compile(car(lit<2> * logistic(a) - lit<1>, exp(t), g2).log_prob(phi), a, t, phi);
  for (const auto& p : tyche_test::random_points(3, 2 + K, -1.5, 1.5, 23)) CHECK(f2.value(p) == Approx(f.value(p)).epsilon(1e-12));
  // Float evaluation.
  tyche_test::check_float(f, tyche_test::random_points(1, 2 + K, -1, 1, 24)[0], "car (float)");
  // α at 1 or outside (1/λ_min, 1) is refused when the distribution is made, naming λ_min
  // (−0.940729 for this grid with its diagonal pairs); a 3-ring's λ_max is 1 to within rounding,
  // snapped to 1.
  CHECK_THROWS_WITH(car(1.0, 2.0, g), Contains("alpha must be in (-1.06301, 1) for this graph"));
  CHECK_THROWS_WITH(car(-1.5, 2.0, g), Contains("but it is -1.5"));
  const areal_graph ring3(3, std::vector<int>{0, 1, 2}, std::vector<int>{1, 2, 0});
  CHECK(ring3.normalised_eigenvalues().back() == 1.0);
  CHECK(ring3.normalised_eigenvalues().front() == Approx(-0.5).epsilon(1e-14));
  CHECK_THROWS_WITH(car(1.0, 2.0, ring3), Contains("alpha must be in (-2, 1)"));
  // A parameter α whose support reaches below 1/λ_min, or above 1 (bounds given as numbers:
  // known when the model is made): its support named.
  CHECK_THROWS_WITH(car(lit<3> * logistic(a) - lit<2>, 2.0, g), Contains("but its support is (-2, 1)"));
  CHECK_THROWS_WITH(model([&] {
                      auto alpha = uniform<"alpha">(0.0, 2.0);
                      return joint(alpha, car<"phi">(alpha, 1.0, ring3));
                    }),
                    Contains("but its support is (0, 2)"));
}

TEST_CASE("icar: against multi_normal_prec with precision D - W + 11'/eps^2, and gradients", "[distributions][car]") {
  const grid gr;
  constexpr std::size_t K = grid::K;
  const areal_graph g(K, gr.n1, gr.n2);
  vector_param<"phi", K> phi;
  const auto f = compile(icar(g).log_prob(phi), phi);
  const auto fl = compile(icar_lpdf(phi, g), phi);
  const double eps = 0.001 * double(K);
  std::vector<double> p_mat(K * K);
  for (std::size_t i = 0; i < K * K; ++i) p_mat[i] = gr.d[i] - gr.w[i] + 1 / (eps * eps);
  const auto h = compile(multi_normal_prec(0.0, matrix(p_mat.data(), K, K)).log_prob(phi), phi);
  for (const auto& p : tyche_test::random_points(8, K, -1, 1, 31)) {
    CHECK(f.value(p) == Approx(h.value(p)).epsilon(1e-10));
    CHECK(fl.value(p) == Approx(h.value(p)).epsilon(1e-10));
    tyche_test::check_gradient_at(f, p, "icar(grid)");
  }
  tyche_test::check_lanes(f, tyche_test::random_points(8, K, -1, 1, 32), "icar (lanes)");
}

TEST_CASE("areal_graph: the BYM2 scaling factor", "[distributions][car]") {
  // The Laplacian of a cycle of n areas has a generalised inverse with diagonal (n² − 1)/(12n);
  // two areas joined: Q = [[1, −1], [−1, 1]], Q⁺ = Q/4, diagonal 1/4.
  for (int n : {3, 7, 20}) {
    std::vector<int> a, b;
    for (int i = 0; i < n; ++i) a.push_back(i), b.push_back((i + 1) % n);
    const areal_graph ring(std::size_t(n), a, b);
    CHECK(ring.icar_scaling_factor() == Approx((double(n) * n - 1) / (12.0 * n)).epsilon(1e-12));
  }
  CHECK(areal_graph(2, std::vector<int>{0}, std::vector<int>{1}).icar_scaling_factor() == Approx(0.25).epsilon(1e-14));
  const areal_graph two(4, std::vector<int>{0, 2}, std::vector<int>{1, 3});
  CHECK_THROWS_WITH(two.icar_scaling_factor(), Contains("2 connected components"));
}

TEST_CASE("car: the eigenvalues of a cycle and of a random symmetric matrix", "[distributions][car]") {
  // D^(−½) W D^(−½) of a cycle of n areas is W/2: eigenvalues cos(2πj/n).
  for (std::size_t n : {3u, 8u, 13u}) {
    std::vector<double> w(n * n, 0.0);
    for (std::size_t i = 0; i < n; ++i) w[i * n + (i + 1) % n] = w[((i + 1) % n) * n + i] = 0.5;
    auto got = detail::symmetric_eigenvalues(w, n);
    std::vector<double> want(n);
    for (std::size_t j = 0; j < n; ++j) want[j] = std::cos(2 * 3.14159265358979323846 * double(j) / double(n));
    std::sort(want.begin(), want.end());
    for (std::size_t j = 0; j < n; ++j) CHECK(got[j] == Approx(want[j]).margin(1e-13));
  }
  // A random symmetric 40 × 40 matrix: Σλ = trace, Σλ² = ‖A‖²_F.
  const std::size_t n = 40;
  std::mt19937_64 rng(4);
  std::normal_distribution<double> z;
  std::vector<double> a(n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j) a[i * n + j] = a[j * n + i] = z(rng);
  double trace = 0, frob = 0;
  for (std::size_t i = 0; i < n; ++i) trace += a[i * n + i];
  for (double v : a) frob += v * v;
  const auto lam = detail::symmetric_eigenvalues(a, n);
  double s1 = 0, s2 = 0;
  for (double l : lam) s1 += l, s2 += l * l;
  CHECK(s1 == Approx(trace).margin(1e-11));
  CHECK(s2 == Approx(frob).epsilon(1e-12));
  CHECK(std::is_sorted(lam.begin(), lam.end()));
  // A column whose part below the subdiagonal is tiny (1e-9) but not zero is still reduced:
  // the product of the eigenvalues is det = 2e-9.
  const auto tiny = detail::symmetric_eigenvalues({0, 1, 1e-9, 1, 0, 1, 1e-9, 1, 0}, 3);
  CHECK(tiny[0] * tiny[1] * tiny[2] == Approx(2e-9).epsilon(1e-6));
}

TEST_CASE("car and icar: draws have the covariance, NUTS on a CAR prior", "[distributions][car]") {
  // A ring of 5 areas: car(0.9, 2) has covariance (2(D − 0.9W))⁻¹; icar's draws sum to ≈ 0.
  const std::size_t K = 5;
  std::vector<int> n1, n2;
  for (int i = 0; i < int(K); ++i) n1.push_back(i), n2.push_back((i + 1) % int(K));
  const areal_graph g(K, n1, n2);
  std::vector<double> prec(K * K, 0.0);
  for (std::size_t i = 0; i < K; ++i) {
    prec[i * K + i] = 2 * 2.0;
    prec[i * K + (i + 1) % K] = prec[((i + 1) % K) * K + i] = -2 * 0.9;
  }
  // Σ = P⁻¹ by Gauss–Jordan.
  std::vector<double> m = prec, sigma(K * K, 0.0);
  for (std::size_t i = 0; i < K; ++i) sigma[i * K + i] = 1;
  for (std::size_t c = 0; c < K; ++c) {
    const double pv = m[c * K + c];
    for (std::size_t j = 0; j < K; ++j) m[c * K + j] /= pv, sigma[c * K + j] /= pv;
    for (std::size_t r = 0; r < K; ++r)
      if (r != c) {
        const double f = m[r * K + c];
        for (std::size_t j = 0; j < K; ++j) m[r * K + j] -= f * m[c * K + j], sigma[r * K + j] -= f * sigma[c * K + j];
      }
  }
  const auto d = car(0.9, 2.0, g);
  std::mt19937_64 rng(5);
  std::vector<std::vector<double>> xs;
  for (std::size_t r = 0; r < 40000; ++r) xs.push_back(d.draw_all(rng, K, {0.9}, {2.0}));
  tyche_test::check_gaussian_draws(xs, std::vector<double>(K, 0.0), sigma);
  const auto di = icar(g);
  for (int r = 0; r < 20; ++r) {
    const auto x = di.draw_all(rng, K);
    double s = 0;
    for (double v : x) s += v;
    CHECK(std::fabs(s) < 5 * 0.001 * double(K));  // Σφ ~ normal(0, 0.001K)
  }
  auto mdl = model([&] { return joint(car<"phi">(0.9, 2.0, g)); });
  REQUIRE(mdl.dim() == K);
  const auto fit = nuts(mdl, {.chains = 4, .warmup = 500, .draws = 1000, .seed = 79});
  tyche_test::check_gaussian_marginals(fit, std::vector<double>(K, 0.0), sigma);
}

TEST_CASE("car: a BYM2-style model with do_", "[distributions][car]") {
  // convolved = sigma (sqrt(1 − rho) theta + sqrt(rho) phi), phi ~ icar, theta ~ std normal:
  // the model builds, and do_ on rho gives the model written with the number.
  const grid gr;
  constexpr std::size_t K = grid::K;
  const areal_graph g(K, gr.n1, gr.n2);
  std::vector<double> y(K), e(K);
  for (std::size_t i = 0; i < K; ++i) y[i] = double(i % 5), e[i] = 1.0 + double(i % 3);
  auto full = model([&] {
    auto b0 = normal<"b0">(0.0, 1.0);
    auto sigma = half_normal<"sigma">(1.0);
    auto rho = beta<"rho">(0.5, 0.5);
    auto theta = normal<"theta">(0.0, 1.0, shape_of(K));
    auto phi = icar<"phi">(g);
    return joint(b0, sigma, rho, theta, phi,
                 poisson_log(log(data(e)) + b0 + sigma * (sqrt(lit<1> - rho) * theta + sqrt(rho) * phi))
                     .observe(data(y)));
  });
  REQUIRE(full.dim() == 3 + 2 * K);
  auto fixed = do_<"rho">(full, 0.25);
  auto written = model([&] {
    auto b0 = normal<"b0">(0.0, 1.0);
    auto sigma = half_normal<"sigma">(1.0);
    auto theta = normal<"theta">(0.0, 1.0, shape_of(K));
    auto phi = icar<"phi">(g);
    return joint(b0, sigma, theta, phi,
                 poisson_log(log(data(e)) + b0 + sigma * (std::sqrt(0.75) * theta + 0.5 * phi)).observe(data(y)));
  });
  for (const auto& p : tyche_test::random_points(3, 2 + 2 * K, -1, 1, 41))
    CHECK(fixed.log_prob(p) == Approx(written.log_prob(p)).epsilon(1e-12));
}

TEST_CASE("areal_graph, car and icar: errors name the pair or the area", "[distributions][car]") {
  const std::vector<int> a{0, 1, 2}, b{1, 2, 5}, self{1, 1, 0};
  CHECK_THROWS_WITH(areal_graph(4, a, b), Contains("node2[2] = 5 is outside 0 … 3"));
  CHECK_THROWS_WITH(areal_graph(3, a, self), Contains("pair 1 joins area 1 with itself"));
  CHECK_THROWS_WITH(areal_graph(3, std::vector<int>{0, 1, 1}, std::vector<int>{1, 2, 0}), Contains("pair 2 (1, 0) is given twice"));
  const std::vector<int> short_b{1};
  CHECK_THROWS_WITH(areal_graph(3, a, short_b), Contains("node1 has 3 values but node2 has 1"));
  // Area 3 alone; two components.
  const areal_graph lonely(4, std::vector<int>{0, 1}, std::vector<int>{1, 2});
  CHECK_THROWS_WITH(car(0.5, 1.0, lonely), Contains("area 3 has no neighbours"));
  const areal_graph two(4, std::vector<int>{0, 2}, std::vector<int>{1, 3});
  CHECK(two.components() == 2);
  CHECK_THROWS_WITH(icar(two), Contains("the graph has 2 connected components"));
  vector_param<"phi", 3> phi;
  const areal_graph ring(4, std::vector<int>{0, 1, 2, 3}, std::vector<int>{1, 2, 3, 0});
  CHECK_THROWS_WITH(car(0.5, 1.0, ring).log_prob(phi), Contains("phi has 3 values but the graph has K = 4 areas"));
  const std::vector<double> zeros(4, 0.0);
  CHECK_THROWS_WITH(car_lpdf(data(zeros), 0.5, -1.0, ring), Contains("tau"));
  const std::vector<double> not_sym{0, 1, 0, 0}, diag{1, 0, 0, 0};
  CHECK_THROWS_WITH(areal_graph::from_adjacency(matrix(not_sym.data(), 2, 2)), Contains("W is not symmetric"));
  CHECK_THROWS_WITH(areal_graph::from_adjacency(matrix(diag.data(), 2, 2)), Contains("W[1, 1] = 1"));
  const std::vector<double> two_valued{0, 2, 2, 0}, with_nan{0, std::nan(""), std::nan(""), 0};
  CHECK_THROWS_WITH(areal_graph::from_adjacency(matrix(two_valued.data(), 2, 2)), Contains("W[2, 1] = 2"));
  CHECK_THROWS_WITH(areal_graph::from_adjacency(matrix(with_nan.data(), 2, 2)), Contains("W[2, 1] = nan"));
}
