// The dense metric (nuts_config::metric = dense): momentum distribution, Cholesky errors,
// adaptation of the covariance, and sampling of a strongly correlated Gaussian.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>
#include <string>

namespace {

// x ~ N(0, Σ), Σᵢⱼ = ρ^|i−j|, through its AR(1) factorisation (unit Jacobian).
template <std::size_t D>
auto correlated_gaussian(double rho) {
  using namespace tyche;
  static std::vector<double> shift(D * D, 0.0), zero(D, 0.0), scale(D, 0.0);
  for (std::size_t i = 1; i < D; ++i) shift[i * D + (i - 1)] = 1.0;
  for (std::size_t i = 0; i < D; ++i) scale[i] = i == 0 ? 1.0 : std::sqrt(1 - rho * rho);
  auto x = flat<"x">(shape<D>);
  return model(joint(x, normal(data(zero), data(scale)).observe(x - rho * matvec(matrix(shift.data(), D, D), x))));
}

// Each coordinate's mean within 4 MCSE of 0 and its variance within 4 MCSE of 1 (the MCSE of the
// mean of xᵢ², the exact mean being 0: NUTS's draws are antithetic for means, not for squares,
// and along the 40-d chain's long direction a variance estimate moves by about 5 % from seed to
// seed).
void check_standard_marginals(const tyche::nuts_fit& fit, std::size_t d) {
  for (std::size_t k = 0; k < d; ++k) {
    const auto chains = fit.parameter(k);
    auto squares = chains;
    double mean = 0, var = 0, n = 0;
    for (auto& c : squares)
      for (double& v : c) {
        mean += v, n += 1;
        var += v * v;
        v *= v;
      }
    mean /= n;
    var /= n;
    const double mcse_var = tyche::mcse_mean(squares);
    INFO("x[" << k + 1 << "]: mean " << mean << ", E[x²] " << var << " (MCSE " << mcse_var << ")");
    CHECK(std::fabs(mean) < 4 * tyche::mcse_mean(chains));
    CHECK(std::fabs(var - 1.0) < 4 * mcse_var);
    CHECK(mcse_var < 0.05);  // enough draws for the check to mean something
  }
}

double mean_leapfrogs(const tyche::nuts_fit& f) {
  double s = 0, n = 0;
  for (const auto& c : f.stats)
    for (const auto& st : c) s += st.n_leapfrog, n += 1;
  return s / n;
}

}  // namespace

TEST_CASE("dense metric: momenta are N(0, M) with M the inverse of the given matrix", "[nuts][dense]") {
  // M⁻¹ = [[4, 1.8], [1.8, 1]] (correlation 0.9), so M = [[1, −1.8], [−1.8, 4]] / 0.76.
  // 40,000 momenta: each covariance estimate within 4 standard errors (se ≈ √2·σ²/√n for a
  // variance, √((σᵢ²σⱼ² + σᵢⱼ²)/n) for a covariance). The kernel's own functions: normals from a
  // chain's stream, then p = L⁻ᵀu with M⁻¹ = LLᵀ.
  using namespace tyche::samplers;
  const double inv_metric[4] = {4.0, 1.8, 1.8, 1.0};
  double chol[4];
  REQUIRE(cholesky_lower(inv_metric, chol, 2) == nuts_status::ok);
  chain_streams<1> rng;
  rng.seed = 42;
  const bool take[1] = {true};
  const int n = 40000;
  double s00 = 0, s01 = 0, s11 = 0;
  double p[2];
  for (int k = 0; k < n; ++k) {
    rng.normals(p, 2, take);
    detail::momentum_from_normals(inv_metric, chol, true, p, 2);
    s00 += p[0] * p[0];
    s01 += p[0] * p[1];
    s11 += p[1] * p[1];
  }
  CHECK(rng.position[0] == 2u * n);
  const double m00 = 1 / 0.76, m01 = -1.8 / 0.76, m11 = 4 / 0.76;
  CHECK(std::fabs(s00 / n - m00) < 4 * std::sqrt(2.0 / n) * m00);
  CHECK(std::fabs(s11 / n - m11) < 4 * std::sqrt(2.0 / n) * m11);
  CHECK(std::fabs(s01 / n - m01) < 4 * std::sqrt((m00 * m11 + m01 * m01) / n));
  // pᵀM⁻¹p of p = (1, 2): 4 + 2·2·1.8 + 4 = 15.2.
  const double q[2] = {1.0, 2.0};
  CHECK(detail::kinetic_energy_twice(inv_metric, true, q, 2) == Approx(15.2).epsilon(1e-14));
}

TEST_CASE("low-rank metric: the kernel's factored form is the matrix, and its momenta are N(0, M)",
          "[nuts][low_rank]") {
  // M⁻¹ = S(I + 8uuᵀ)S with σ = (2, 0.5, 1) and u = (1, 1, 1)/√3 (λ = 9): the kernel applies it
  // in O(dk) (detail::sharp_low_rank, detail::momentum_low_rank); M = S⁻¹(I + (1/9 − 1)uuᵀ)S⁻¹.
  using namespace tyche::samplers;
  constexpr std::size_t d = 3;
  const double sigma[d] = {2.0, 0.5, 1.0}, u[d] = {1 / std::sqrt(3.0), 1 / std::sqrt(3.0), 1 / std::sqrt(3.0)};
  std::vector<double> factors(low_rank_factors_size(d, d), 0.0);
  low_rank_identity(factors.data(), d, d);
  const detail::low_rank_layout at{d, d};
  for (std::size_t i = 0; i < d; ++i) {
    factors[at.sigma() + i] = sigma[i];
    factors[at.directions() + i] = u[i];
  }
  factors[at.lambda_minus_one()] = 8;
  factors[at.rank()] = 1;
  double inv_metric[d * d], metric[d * d];
  for (std::size_t i = 0; i < d; ++i)
    for (std::size_t j = 0; j < d; ++j) {
      inv_metric[i * d + j] = sigma[i] * ((i == j) + 8 * u[i] * u[j]) * sigma[j];
      metric[i * d + j] = ((i == j) + (1.0 / 9 - 1) * u[i] * u[j]) / (sigma[i] * sigma[j]);
    }
  // The kernel's arrays: σ, λ − 1, λ^(−1/2) − 1, U.
  std::vector<double> arrays(3 * d + d * d, 0.0);
  for (std::size_t i = 0; i < d; ++i) {
    arrays[i] = sigma[i];
    arrays[3 * d + i] = u[i];
  }
  arrays[d] = 8;
  arrays[2 * d] = 1 / 3.0 - 1;
  const detail::low_rank_view<double> view{arrays.data(), arrays.data() + d, arrays.data() + 2 * d,
                                           arrays.data() + 3 * d, 1};
  const double p[d] = {0.3, -1.2, 2.5};
  double out[d];
  detail::sharp_low_rank(view, p, out, d);
  for (std::size_t i = 0; i < d; ++i) {
    double want = 0;
    for (std::size_t j = 0; j < d; ++j) want += inv_metric[i * d + j] * p[j];
    CHECK(out[i] == Approx(want).epsilon(1e-14));
  }
  // The heuristic's functions of the factors (low_rank_sharp, low_rank_momentum) do the kernel's
  // arithmetic, bit for bit; low_rank_dense is the matrix.
  {
    double from_factors[d], z1[d] = {0.7, -0.1, 1.9}, z2[d] = {0.7, -0.1, 1.9}, t1[d], t2[d];
    low_rank_sharp(factors.data(), d, p, from_factors);
    for (std::size_t i = 0; i < d; ++i) CHECK(from_factors[i] == out[i]);
    low_rank_momentum(factors.data(), d, z1, t1);
    detail::momentum_low_rank(view, z2, t2, d);
    for (std::size_t i = 0; i < d; ++i) CHECK(z1[i] == z2[i]);
    double dense_form[d * d];
    low_rank_dense(factors.data(), d, dense_form);
    for (std::size_t q = 0; q < d * d; ++q) CHECK(dense_form[q] == Approx(inv_metric[q]).epsilon(1e-14));
    CHECK(low_rank_dimension(factors.data(), factors.size()) == d);
  }
  // Momenta: 60,000, each covariance within 4 standard errors of M's.
  chain_streams<1> rng;
  rng.seed = 43;
  const bool take[1] = {true};
  const int n = 60000;
  double s[d * d] = {}, z[d], tmp[d];
  for (int k = 0; k < n; ++k) {
    rng.normals(z, d, take);
    detail::momentum_low_rank(view, z, tmp, d);
    for (std::size_t i = 0; i < d; ++i)
      for (std::size_t j = 0; j < d; ++j) s[i * d + j] += z[i] * z[j];
  }
  for (std::size_t i = 0; i < d; ++i)
    for (std::size_t j = 0; j < d; ++j) {
      const double se = std::sqrt((metric[i * d + i] * metric[j * d + j] + metric[i * d + j] * metric[i * d + j]) / n);
      INFO("M[" << i << "][" << j << "] = " << metric[i * d + j] << ", estimate " << s[i * d + j] / n);
      CHECK(std::fabs(s[i * d + j] / n - metric[i * d + j]) < 4 * se);
    }
  // The same metric through the kernel's checks, and as a matrix decomposed
  // (low_rank_factors_from_matrix: S = I, every eigenvalue that is not 1).
  using kernel = nuts_kernel<double>;
  std::vector<double> storage(kernel::storage_size(d, 5, metric_kind::low_rank));
  kernel k;
  REQUIRE(k.bind(storage.data(), storage.size(), d, 5, metric_kind::low_rank) == nuts_status::ok);
  CHECK(k.set_metric_low_rank(0, factors.data()) == nuts_status::ok);
  CHECK(k.set_metric(0, inv_metric) == nuts_status::invalid_metric);  // a low-rank kernel takes factors
  std::vector<double> from_matrix(low_rank_factors_size(d, d)), work(low_rank_matrix_workspace(d));
  REQUIRE(low_rank_factors_from_matrix(inv_metric, d, d, from_matrix.data(), work.data()));
  CHECK(from_matrix[at.rank()] == 3);
  CHECK(k.set_metric_low_rank(0, from_matrix.data()) == nuts_status::ok);
  std::vector<double> decomposed(3 * d + d * d, 0.0);
  for (std::size_t i = 0; i < d; ++i) {
    decomposed[i] = from_matrix[at.sigma() + i];
    decomposed[d + i] = from_matrix[at.lambda_minus_one() + i];
  }
  for (std::size_t q = 0; q < d * d; ++q) decomposed[3 * d + q] = from_matrix[at.directions() + q];
  const detail::low_rank_view<double> view2{decomposed.data(), decomposed.data() + d, decomposed.data() + 2 * d,
                                            decomposed.data() + 3 * d, 3};
  detail::sharp_low_rank(view2, p, out, d);
  for (std::size_t i = 0; i < d; ++i) {
    double want = 0;
    for (std::size_t j = 0; j < d; ++j) want += inv_metric[i * d + j] * p[j];
    CHECK(out[i] == Approx(want).epsilon(1e-12));
  }
  const double identity[d * d] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  REQUIRE(low_rank_factors_from_matrix(identity, d, d, from_matrix.data(), work.data()));
  CHECK(from_matrix[at.rank()] == 0);
  const double indefinite[d * d] = {1, 2, 0, 2, 1, 0, 0, 0, 1};
  CHECK_FALSE(low_rank_factors_from_matrix(indefinite, d, d, from_matrix.data(), work.data()));
  // A diagonal matrix needs no decomposition: σ = √diag, k = 0 (work unused).
  const double diagonal[d * d] = {4, 0, 0, 0, 0.25, 0, 0, 0, 9};
  REQUIRE(low_rank_factors_from_matrix(diagonal, d, d, from_matrix.data(), static_cast<double*>(nullptr)));
  CHECK(from_matrix[at.rank()] == 0);
  CHECK(from_matrix[at.sigma()] == 2);
  CHECK(from_matrix[at.sigma() + 1] == 0.5);
  CHECK(from_matrix[at.sigma() + 2] == 3);
  // Room for one or two directions: m = Σ λ vvᵀ with λ = 9, 1/4, 2 along (1, 1, 0)/√2,
  // (1, −1, 0)/√2 and (0, 0, 1) has S = √diag m = (√4.625, √4.625, √2) and the correlation matrix
  // S⁻¹mS⁻¹ eigenvalues 1 ± 8.75/9.25 along the first two and 1 along the third (left out). One
  // direction of room keeps 1 − 8.75/9.25 (|log λ| 2.92 against 0.67), along (1, −1, 0)/√2; two
  // keep both, in λ's order; the scales stay either way.
  {
    const double c = 1 / std::sqrt(2.0);
    const double v[3][3] = {{c, c, 0}, {c, -c, 0}, {0, 0, 1}};  // orthonormal rows
    const double lambda[3] = {9, 0.25, 2};
    double m[d * d] = {};
    for (std::size_t i = 0; i < d; ++i)
      for (std::size_t j = 0; j < d; ++j)
        for (std::size_t r = 0; r < 3; ++r) m[i * d + j] += lambda[r] * v[r][i] * v[r][j];
    std::vector<double> one(low_rank_factors_size(d, 1)), two(low_rank_factors_size(d, 2));
    REQUIRE(low_rank_factors_from_matrix(m, d, 1, one.data(), work.data()));
    const detail::low_rank_layout at1{d, 1}, at2{d, 2};
    const double r = 8.75 / 9.25;
    CHECK(one[at1.rank()] == 1);
    CHECK(one[at1.lambda_minus_one()] == Approx(-r).epsilon(1e-12));
    CHECK(std::fabs(one[at1.directions()] * c - one[at1.directions() + 1] * c) == Approx(1).epsilon(1e-12));
    CHECK(one[at1.sigma()] == Approx(std::sqrt(4.625)).epsilon(1e-14));
    CHECK(one[at1.sigma() + 2] == Approx(std::sqrt(2.0)).epsilon(1e-14));
    REQUIRE(low_rank_factors_from_matrix(m, d, 2, two.data(), work.data()));
    CHECK(two[at2.rank()] == 2);
    CHECK(two[at2.lambda_minus_one()] == Approx(-r).epsilon(1e-12));
    CHECK(two[at2.lambda_minus_one() + 1] == Approx(r).epsilon(1e-12));
    double back[d * d];  // two directions: the matrix itself
    low_rank_dense(two.data(), d, back);
    for (std::size_t q = 0; q < d * d; ++q) CHECK(back[q] == Approx(m[q]).margin(1e-12));
    // low_rank_copy into less room keeps the largest |log λ|, as the decomposition would.
    std::vector<double> copied(low_rank_factors_size(d, 1)), keep(4);
    low_rank_copy(two.data(), d, 1, copied.data(), keep.data());
    CHECK(copied == one);
    // A kernel with room for one direction refuses factors with two.
    std::vector<double> small(kernel::storage_size(d, 5, metric_kind::low_rank, 1));
    kernel k1;
    REQUIRE(k1.bind(small.data(), small.size(), d, 5, metric_kind::low_rank, 1) == nuts_status::ok);
    CHECK(k1.set_metric_low_rank(0, one.data()) == nuts_status::ok);
    CHECK(k1.set_metric_low_rank(0, two.data()) == nuts_status::invalid_metric);
    CHECK(small.size() < storage.size());
  }
  // Refused: σ not positive, λ not positive (λ − 1 ≤ −1), k above d.
  auto bad = factors;
  bad[at.sigma() + 1] = 0;
  CHECK(k.set_metric_low_rank(0, bad.data()) == nuts_status::invalid_metric);
  bad = factors;
  bad[at.lambda_minus_one()] = -1;
  CHECK(k.set_metric_low_rank(0, bad.data()) == nuts_status::metric_not_positive_definite);
  bad = factors;
  bad[at.rank()] = 4;
  CHECK(k.set_metric_low_rank(0, bad.data()) == nuts_status::invalid_metric);
}

TEST_CASE("dense metric: a matrix that is not positive definite is refused", "[nuts][dense]") {
  using namespace tyche::samplers;
  using kernel = nuts_kernel<double>;
  std::vector<double> storage(kernel::storage_size(2, 5, metric_kind::dense));
  kernel k;
  REQUIRE(k.bind(storage.data(), storage.size(), 2, 5, metric_kind::dense) == nuts_status::ok);
  const double indefinite[4] = {1.0, 2.0, 2.0, 1.0};
  CHECK(k.set_metric(0, indefinite) == nuts_status::metric_not_positive_definite);
  double chol[4];
  std::size_t pivot = 9;
  CHECK(cholesky_lower(indefinite, chol, 2, &pivot) == nuts_status::metric_not_positive_definite);
  CHECK(pivot == 1);
  CHECK(std::string(describe(nuts_status::metric_not_positive_definite)).find("not positive definite") !=
        std::string::npos);
  std::vector<double> diag_storage(kernel::storage_size(2, 5, metric_kind::diagonal));
  REQUIRE(k.bind(diag_storage.data(), diag_storage.size(), 2, 5, metric_kind::diagonal) == nuts_status::ok);
  const double negative[2] = {1.0, -1.0};
  std::size_t where = 9;
  CHECK(k.set_metric(0, negative) == nuts_status::invalid_metric);
  CHECK(check_diagonal_metric(negative, 2, &where) == nuts_status::invalid_metric);
  CHECK(where == 1);
}

TEST_CASE("dense metric: adapts to and samples a strongly correlated Gaussian", "[nuts][dense]") {
  // 10-d, Σᵢⱼ = 0.95^|i−j|. Means within 4 MCSE of 0, variances within 10 % of 1, the adapted
  // M⁻¹ within 0.25 of Σ elementwise (the last warm-up window has ~500 draws), and shorter
  // trajectories than with the diagonal metric, which cannot undo the correlation.
  constexpr std::size_t d = 10;
  const double rho = 0.95;
  const auto m = correlated_gaussian<d>(rho);
  tyche::nuts_config cfg{.chains = 4, .warmup = 1000, .draws = 1000, .seed = 99};
  cfg.metric = tyche::samplers::metric_kind::dense;
  const auto dense = tyche::nuts(m, cfg);
  cfg.metric = tyche::samplers::metric_kind::diagonal;
  const auto diag = tyche::nuts(m, cfg);
  check_standard_marginals(dense, d);
  for (const auto& inv : dense.inv_metric) {
    REQUIRE(inv.size() == d * d);
    for (std::size_t i = 0; i < d; ++i)
      for (std::size_t j = 0; j < d; ++j) {
        INFO("M^-1[" << i << "," << j << "] = " << inv[i * d + j]);
        CHECK(std::fabs(inv[i * d + j] - std::pow(rho, std::fabs(double(i) - double(j)))) < 0.25);
      }
  }
  INFO("mean leapfrogs: dense " << mean_leapfrogs(dense) << ", diagonal " << mean_leapfrogs(diag));
  CHECK(mean_leapfrogs(dense) < 0.5 * mean_leapfrogs(diag));
  CHECK(diag.inv_metric[0].size() == d);
}

namespace {

// A symmetric matrix times V minus V·diag(w), largest absolute element; and VᵀV − I's.
double eigen_residual(const std::vector<double>& a, const std::vector<double>& v, const std::vector<double>& w,
                      std::size_t m) {
  double worst = 0;
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t k = 0; k < m; ++k) {
      double av = 0;
      for (std::size_t j = 0; j < m; ++j) av += a[i * m + j] * v[j * m + k];
      worst = std::max(worst, std::fabs(av - v[i * m + k] * w[k]));
    }
  return worst;
}
double orthogonality_error(const std::vector<double>& v, std::size_t m) {
  double worst = 0;
  for (std::size_t k = 0; k < m; ++k)
    for (std::size_t l = 0; l < m; ++l) {
      double dot = 0;
      for (std::size_t j = 0; j < m; ++j) dot += v[j * m + k] * v[j * m + l];
      worst = std::max(worst, std::fabs(dot - (k == l ? 1.0 : 0.0)));
    }
  return worst;
}

std::uint64_t lcg_state = 7;
double lcg_uniform() {
  lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (static_cast<double>(lcg_state >> 11) + 0.5) / 9007199254740992.0;
}
double lcg_normal() { return std::sqrt(-2 * std::log(lcg_uniform())) * std::cos(6.283185307179586 * lcg_uniform()); }

}  // namespace

TEST_CASE("low-rank metric: the symmetric eigen-decomposition it uses", "[nuts][low_rank]") {
  using tyche::samplers::detail::symmetric_eigen;
  for (const std::size_t m : {1u, 2u, 7u, 40u}) {
    std::vector<double> a(m * m);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j <= i; ++j) a[i * m + j] = a[j * m + i] = lcg_normal();
    std::vector<double> v = a, w(m), e(m);
    REQUIRE(symmetric_eigen(v.data(), w.data(), e.data(), m));
    INFO("m = " << m);
    CHECK(eigen_residual(a, v, w, m) < 1e-12 * m);
    CHECK(orthogonality_error(v, m) < 1e-13 * m);
    for (std::size_t k = 1; k < m; ++k) CHECK(w[k - 1] <= w[k]);
  }
  // Repeated eigenvalues (the identity, and a diagonal with a double value) and a zero matrix.
  for (const auto& diag : {std::vector<double>{1, 1, 1, 1}, std::vector<double>{3, -1, 3, 0.5}, std::vector<double>{0, 0, 0}}) {
    const std::size_t m = diag.size();
    std::vector<double> a(m * m, 0.0);
    for (std::size_t i = 0; i < m; ++i) a[i * m + i] = diag[i];
    std::vector<double> v = a, w(m), e(m);
    REQUIRE(symmetric_eigen(v.data(), w.data(), e.data(), m));
    CHECK(eigen_residual(a, v, w, m) < 1e-14);
    CHECK(orthogonality_error(v, m) < 1e-14);
  }
  std::vector<double> bad = {1, std::nan(""), std::nan(""), 1}, w(2), e(2);
  CHECK_FALSE(symmetric_eigen(bad.data(), w.data(), e.data(), 2));
}

TEST_CASE("low-rank metric: recovers the top eigenvectors of a correlated Gaussian and preconditions it",
          "[nuts][low_rank]") {
  // Σ = S·R·S, S = diag of scales from 0.1 to 10, R = I + 19uuᵀ + 9vvᵀ − 0.9wwᵀ (u, v, w
  // orthonormal), mean 3: exact draws and gradients (−Σ⁻¹(x − 3)).
  // - With 2n ≥ d (the whole space) and no eigenvalue cut off, the estimate is Σ itself (the SPD
  //   mean of the draws' and the gradients' covariances is exact for a Gaussian).
  // - With nutpie's defaults, in the whole space and (2n < d) in the span of the draws and
  //   gradients: the two top eigenvectors of M⁻¹ are those of Σ, both in the coordinates the
  //   diagonal part scales (σᵢ² = √(var θᵢ / var ∂ᵢ), computed here from the same draws): cosine
  //   ≥ 0.99 in the whole space, ≥ 0.95 from 60 draws in 150 dimensions (measured 0.973 and
  //   0.977; there the estimate's top eigenvalues are also about half the exact ones, as an
  //   independent NumPy implementation of the same algorithm gives); and M^½ preconditions Σ:
  //   condition number ≤ 4 (the cutoff's 2 × 2) in the whole space, a thousandth of Σ's or less
  //   in the subspace (measured 3.2·10⁶ → 209).
  using namespace tyche::samplers;
  struct setting {
    std::size_t d, n;
    double cutoff, a, b, c;  // R's eigenvalues other than 1
  };
  for (const setting& st : {setting{30, 200, 1.0, 20, 10, 0.1}, setting{30, 200, 2.0, 20, 10, 0.1},
                            setting{150, 60, 2.0, 400, 100, 0.01}}) {
    const std::size_t d = st.d, n = st.n;
    const double ra = st.a, rb = st.b, rc = st.c;
    std::vector<double> s(d), u(d), v(d), w(d);
    for (std::size_t i = 0; i < d; ++i) {
      s[i] = std::pow(10.0, -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(d - 1));
      u[i] = lcg_normal();
      v[i] = lcg_normal();
      w[i] = lcg_normal();
    }
    auto orthonormalise = [&](std::vector<double>& x, std::initializer_list<const std::vector<double>*> against) {
      for (const auto* y : against) {
        double dot = 0;
        for (std::size_t i = 0; i < d; ++i) dot += x[i] * (*y)[i];
        for (std::size_t i = 0; i < d; ++i) x[i] -= dot * (*y)[i];
      }
      double nrm = 0;
      for (double xi : x) nrm += xi * xi;
      for (double& xi : x) xi /= std::sqrt(nrm);
    };
    orthonormalise(u, {});
    orthonormalise(v, {&u});
    orthonormalise(w, {&u, &v});
    // (I + (a−1)uuᵀ + (b−1)vvᵀ + (c−1)wwᵀ)·z: R^½ with √20, √10, √0.1; R⁻¹ with their inverses squared.
    auto apply = [&](const std::vector<double>& z, double a, double b, double c) {
      double du = 0, dv = 0, dw = 0;
      for (std::size_t i = 0; i < d; ++i) du += u[i] * z[i], dv += v[i] * z[i], dw += w[i] * z[i];
      std::vector<double> out(z);
      for (std::size_t i = 0; i < d; ++i) out[i] += (a - 1) * du * u[i] + (b - 1) * dv * v[i] + (c - 1) * dw * w[i];
      return out;
    };
    std::vector<double> x(n * d), g(n * d), z(d), t(d);
    for (std::size_t r = 0; r < n; ++r) {
      for (auto& zi : z) zi = lcg_normal();
      const auto y = apply(z, std::sqrt(ra), std::sqrt(rb), std::sqrt(rc));
      for (std::size_t i = 0; i < d; ++i) x[r * d + i] = 3.0 + s[i] * y[i];
      for (std::size_t i = 0; i < d; ++i) t[i] = (x[r * d + i] - 3.0) / s[i];
      const auto ri = apply(t, 1 / ra, 1 / rb, 1 / rc);
      for (std::size_t i = 0; i < d; ++i) g[r * d + i] = -ri[i] / s[i];
    }
    // The diagonal part, as the estimator computes it (population moments).
    std::vector<double> scale(d);
    for (std::size_t i = 0; i < d; ++i) {
      double mx = 0, mg = 0, vx = 0, vg = 0;
      for (std::size_t r = 0; r < n; ++r) mx += x[r * d + i] / n, mg += g[r * d + i] / n;
      for (std::size_t r = 0; r < n; ++r)
        vx += (x[r * d + i] - mx) * (x[r * d + i] - mx), vg += (g[r * d + i] - mg) * (g[r * d + i] - mg);
      scale[i] = std::sqrt(std::sqrt(vx / vg));
    }
    std::vector<double> out(d * d), work(low_rank_workspace(d, n));
    low_rank_settings options;
    options.cutoff = st.cutoff;
    if (st.cutoff == 1.0) options.gamma = 1e-12;
    const std::size_t kmax = low_rank_max_rank(d, n);
    std::vector<double> factors(low_rank_factors_size(d, kmax));
    low_rank_identity(factors.data(), d, kmax);
    const std::vector<double> x0 = x, g0 = g;  // (the estimate overwrites them)
    const int kept = low_rank_inverse_metric(x.data(), g.data(), n, d, factors.data(), work.data(), options);
    INFO("d = " << d << ", n = " << n << ", cutoff " << st.cutoff << ": " << kept << " directions kept");
    REQUIRE(kept >= 3);
    low_rank_dense(factors.data(), d, out.data());
    // A cap of 2 directions (low_rank_settings::max_rank) keeps the two of these with the largest
    // |log λ|, the same vectors bit for bit, in their order; the factors are then 2 + d + 2 + 2d
    // values.
    {
      const detail::low_rank_layout all{d, kmax}, two{d, 2};
      std::vector<std::pair<double, std::size_t>> by_size;
      for (std::size_t r = 0; r < static_cast<std::size_t>(kept); ++r)
        by_size.emplace_back(std::fabs(std::log1p(factors[all.lambda_minus_one() + r])), r);
      std::sort(by_size.begin(), by_size.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
      std::size_t first = std::min(by_size[0].second, by_size[1].second), second = std::max(by_size[0].second, by_size[1].second);
      low_rank_settings capped = options;
      capped.max_rank = 2;
      std::vector<double> x1 = x0, g1 = g0, small(low_rank_factors_size(d, 2));
      CHECK(small.size() == 2 + 3 * d + 2);
      low_rank_identity(small.data(), d, 2);
      REQUIRE(low_rank_inverse_metric(x1.data(), g1.data(), n, d, small.data(), work.data(), capped) == 2);
      CHECK(small[two.rank()] == 2);
      for (std::size_t j = 0; j < d; ++j) {
        CHECK(small[two.sigma() + j] == factors[all.sigma() + j]);
        CHECK(small[two.directions() + j] == factors[all.directions() + first * d + j]);
        CHECK(small[two.directions() + d + j] == factors[all.directions() + second * d + j]);
      }
      CHECK(small[two.lambda_minus_one()] == factors[all.lambda_minus_one() + first]);
      CHECK(small[two.lambda_minus_one() + 1] == factors[all.lambda_minus_one() + second]);
    }
    std::vector<double> sigma(d * d);
    for (std::size_t i = 0; i < d; ++i)
      for (std::size_t j = 0; j < d; ++j)
        sigma[i * d + j] = s[i] * s[j] * ((i == j ? 1.0 : 0.0) + (ra - 1) * u[i] * u[j] + (rb - 1) * v[i] * v[j] + (rc - 1) * w[i] * w[j]);
    if (st.cutoff == 1.0) {
      double worst = 0, largest = 0;
      for (std::size_t k = 0; k < d * d; ++k) {
        worst = std::max(worst, std::fabs(out[k] - sigma[k]));
        largest = std::max(largest, std::fabs(sigma[k]));
      }
      CHECK(worst < 1e-8 * largest);
      continue;
    }
    // Top eigenvectors in the scaled coordinates.
    std::vector<double> ve(d * d), vs(d * d), we(d), ws(d), e(d);
    for (std::size_t i = 0; i < d; ++i)
      for (std::size_t j = 0; j < d; ++j) {
        ve[i * d + j] = out[i * d + j] / (scale[i] * scale[j]);
        vs[i * d + j] = sigma[i * d + j] / (scale[i] * scale[j]);
      }
    REQUIRE(detail::symmetric_eigen(ve.data(), we.data(), e.data(), d));
    REQUIRE(detail::symmetric_eigen(vs.data(), ws.data(), e.data(), d));
    for (std::size_t top = d - 2; top < d; ++top) {
      double dot = 0;
      for (std::size_t i = 0; i < d; ++i) dot += ve[i * d + top] * vs[i * d + top];
      INFO("eigenvector " << d - top << ": eigenvalues " << we[top] << " (estimate), " << ws[top] << " (exact)");
      CHECK(std::fabs(dot) >= (2 * n >= d ? 0.99 : 0.95));
    }
    // Preconditioned: L⁻¹ Σ L⁻ᵀ with M⁻¹ = LLᵀ.
    std::vector<double> chol(d * d), tl(d * d), p(d * d), wp(d), sigma_copy = sigma, w_exact(d);
    REQUIRE(cholesky_lower(out.data(), chol.data(), d) == nuts_status::ok);
    for (std::size_t c = 0; c < d; ++c)  // tl = L⁻¹Σ
      for (std::size_t i = 0; i < d; ++i) {
        double acc = sigma[i * d + c];
        for (std::size_t k = 0; k < i; ++k) acc -= chol[i * d + k] * tl[k * d + c];
        tl[i * d + c] = acc / chol[i * d + i];
      }
    for (std::size_t r = 0; r < d; ++r)  // p = tl·L⁻ᵀ
      for (std::size_t i = 0; i < d; ++i) {
        double acc = tl[r * d + i];
        for (std::size_t k = 0; k < i; ++k) acc -= chol[i * d + k] * p[r * d + k];
        p[r * d + i] = acc / chol[i * d + i];
      }
    for (std::size_t i = 0; i < d; ++i)
      for (std::size_t j = 0; j < i; ++j) p[i * d + j] = p[j * d + i] = 0.5 * (p[i * d + j] + p[j * d + i]);
    REQUIRE(detail::symmetric_eigen(p.data(), wp.data(), e.data(), d));
    REQUIRE(detail::symmetric_eigen(sigma_copy.data(), w_exact.data(), e.data(), d));
    const double before = w_exact[d - 1] / w_exact[0], after = wp[d - 1] / wp[0];
    INFO("condition number: " << before << " -> " << after);
    CHECK(before > 1e4);
    CHECK(after < (2 * n >= d ? 4.0 + 1e-6 : before / 1000));
  }
}

TEST_CASE("low-rank metric: the estimate in hundreds of dimensions finds the long direction", "[nuts][low_rank]") {
  // x ~ N(0, S(I + 99uuᵀ)S), S log-spaced from 0.1 to 10, u = (±1)/√d: exact draws and
  // gradients. With d = 400 and n = 100 (2n < d) and with n = 200 (2n = d, the whole space), the
  // estimate keeps the direction u (cosine ≥ 0.98) with λ ≥ 10. Until 2026-12-04 it failed here
  // (returned −1, the diagonal part alone): the eigenvalues of LᵀCxL span ~10¹⁶ and the smallest
  // came out negative, so Σ had eigenvalues ≤ 0 (its exact bounds, B² ≥ I, now hold them).
  using namespace tyche::samplers;
  constexpr std::size_t d = 400;
  for (const std::size_t n : {std::size_t(100), std::size_t(200)}) {
    std::vector<double> s(d), u(d), x(n * d), g(n * d), z(d), y(d);
    for (std::size_t i = 0; i < d; ++i) {
      s[i] = std::pow(10.0, -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(d - 1));
      u[i] = (i % 2 == 0 ? 1.0 : -1.0) / std::sqrt(static_cast<double>(d));
    }
    for (std::size_t r = 0; r < n; ++r) {
      double zu = 0, yu = 0;
      for (std::size_t i = 0; i < d; ++i) zu += (z[i] = lcg_normal()) * u[i];
      for (std::size_t i = 0; i < d; ++i) yu += (y[i] = z[i] + 9 * zu * u[i]) * u[i];  // y ~ N(0, I + 99uuᵀ)
      for (std::size_t i = 0; i < d; ++i) {
        x[r * d + i] = s[i] * y[i];
        g[r * d + i] = -(y[i] - 0.99 * yu * u[i]) / s[i];  // −Σ⁻¹x
      }
    }
    const std::size_t kmax = low_rank_max_rank(d, n);
    std::vector<double> factors(low_rank_factors_size(d, kmax)), work(low_rank_workspace(d, n));
    low_rank_identity(factors.data(), d, kmax);
    const int kept = low_rank_inverse_metric(x.data(), g.data(), n, d, factors.data(), work.data());
    INFO("n = " << n << ": " << kept << " directions kept");
    REQUIRE(kept >= 1);
    const detail::low_rank_layout at{d, kmax};
    std::size_t top = 0;
    for (std::size_t r = 1; r < static_cast<std::size_t>(kept); ++r)
      if (factors[at.lambda_minus_one() + r] > factors[at.lambda_minus_one() + top]) top = r;
    double cosine = 0;
    for (std::size_t i = 0; i < d; ++i) cosine += factors[at.directions() + top * d + i] * u[i];
    INFO("largest λ " << 1 + factors[at.lambda_minus_one() + top] << ", cosine with u " << cosine);
    CHECK(1 + factors[at.lambda_minus_one() + top] >= 10);
    CHECK(std::fabs(cosine) >= 0.98);  // (measured 0.994 and 0.997; λ 30 and 47)
    // u, and at most one more: with n < d draws the gradients reach one direction the draws do not
    // (u's part outside their span), where Cx is the regularisation's I alone and Σ comes out
    // narrow. Until 2026-12-05 (no n² in the sums) rounding added more: 23 beside u from 200 draws
    // (and 28 from 300) in a run of this estimate on other draws of the same Gaussian.
    CHECK(kept <= 2);
    CHECK(low_rank_check(factors.data(), d) == 0);
  }
}

TEST_CASE("low-rank metric: no spurious direction from a Gaussian with a diagonal covariance",
          "[nuts][low_rank]") {
  // x ~ N(0, S²), S log-spaced from 0.1 to 10: a diagonal covariance, so the exact estimate is
  // σ = S with no direction (in the scaled coordinates a Gaussian's gradients are minus its
  // draws: Cx = Cg, Σ = I). Until 2026-12-05 the sums of squares lacked nuts-rs's 1/n², and with
  // n < d draws Cx and Cg were the regularising I in the directions no draw reaches beside ~n/γ
  // in the others; rounding in B² (eigenvalues up to ~10¹⁵) made spurious directions: 21–27 at
  // d = 400, n = 250, 1 at n = 399 (depending on the draws; 160–172 at d = 1,000, n = 500, and a
  // chain of 1,000 warm-up iterations on a 1,000-d diagonal Gaussian kept 106 and sampled at 0.68×
  // the ESS per gradient of the diagonal metric). n = 100 projects (2n < d), the others do not.
  using namespace tyche::samplers;
  constexpr std::size_t d = 400;
  for (const std::size_t n : {std::size_t(100), std::size_t(250), std::size_t(399), std::size_t(450)}) {
    std::vector<double> s(d), x(n * d), g(n * d);
    for (std::size_t i = 0; i < d; ++i)
      s[i] = std::pow(10.0, -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(d - 1));
    for (std::size_t r = 0; r < n; ++r)
      for (std::size_t i = 0; i < d; ++i) {
        x[r * d + i] = s[i] * lcg_normal();
        g[r * d + i] = -x[r * d + i] / (s[i] * s[i]);
      }
    const std::size_t kmax = low_rank_max_rank(d, n);
    std::vector<double> factors(low_rank_factors_size(d, kmax)), work(low_rank_workspace(d, n));
    low_rank_identity(factors.data(), d, kmax);
    const int kept = low_rank_inverse_metric(x.data(), g.data(), n, d, factors.data(), work.data());
    INFO("n = " << n << ": " << kept << " directions kept");
    CHECK(kept == 0);
    const detail::low_rank_layout at{d, kmax};
    double worst = 0;  // σ = (var x / var g)^¼ against S
    for (std::size_t i = 0; i < d; ++i) worst = std::max(worst, std::fabs(std::log(factors[at.sigma() + i] / s[i])));
    INFO("largest |log(σ / S)|: " << worst);
    CHECK(worst < 1e-8);  // (a Gaussian's: var x / var g = S⁴ exactly)
  }
}

TEST_CASE("low-rank metric: the workspace holds every window shorter than the longest", "[nuts][low_rank]") {
  // A window of n′ draws with 2n′ < d projects onto a subspace and needs its basis (m·d values)
  // where a longer one with 2n ≥ d does not: the workspace for up to n draws must cover both.
  // Until 2026-12-05 it was the need of n draws alone, and a chain's buffer, sized for its longest
  // window, was written past its end: at d = 420 and 1,000 warm-up iterations the 200-draw window
  // needed 810,060 values and had 707,700.
  using namespace tyche::samplers;
  for (const std::size_t d : {std::size_t(2), std::size_t(10), std::size_t(55), std::size_t(300), std::size_t(420),
                              std::size_t(1000)})
    for (const std::size_t n : {std::size_t(2), std::size_t(25), std::size_t(200), std::size_t(500), std::size_t(2000)})
      for (const std::size_t fewer : {std::size_t(2), n / 2, n - 1, std::min(n, d - 1), (d - 1) / 2}) {
        if (fewer < 2 || fewer > n) continue;
        INFO("d = " << d << ", n = " << n << ", a window of " << fewer);
        CHECK(low_rank_workspace(d, fewer) <= low_rank_workspace(d, n));
      }
  // What the estimate writes: 200 draws at d = 420 in the workspace of the longest window (500),
  // followed by sentinels that must come out untouched (enough of them to take all that the old
  // workspace let it write past its end, 102,360 values).
  constexpr std::size_t d = 420, n = 200, longest = 500, guard = std::size_t(1) << 18;
  std::vector<double> x(n * d), g(n * d);
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t i = 0; i < d; ++i) {
      x[r * d + i] = lcg_normal();
      g[r * d + i] = -x[r * d + i] + 0.1 * lcg_normal();  // not a Gaussian's: the gradients add directions
    }
  const std::size_t kmax = low_rank_max_rank(d, longest);
  std::vector<double> factors(low_rank_factors_size(d, kmax));
  std::vector<double> work(low_rank_workspace(d, longest) + guard, 12345.0);
  low_rank_identity(factors.data(), d, kmax);
  const int kept = low_rank_inverse_metric(x.data(), g.data(), n, d, factors.data(), work.data());
  INFO(kept << " directions kept");
  CHECK(kept >= 0);
  std::size_t touched = 0;
  for (std::size_t i = work.size() - guard; i < work.size(); ++i) touched += work[i] != 12345.0 ? 1 : 0;
  CHECK(touched == 0);
}

TEST_CASE("low-rank metric: adapts to and samples a strongly correlated Gaussian", "[nuts][low_rank]") {
  // 40-d, Σᵢⱼ = 0.95^|i−j|. Means within 4 MCSE of 0, variances within 10 % of 1, and far
  // shorter trajectories than with the diagonal metric (measured: about a tenth).
  constexpr std::size_t d = 40;
  const auto m = correlated_gaussian<d>(0.95);
  // (Seed 17 until the kernel applied the metric factored: that changed the trajectories, and
  // its worst coordinate's E[x²] came out 4.2 MCSE low. Over seeds 17–28 the worst of the 40
  // was 1.1–3.0 MCSE for the other eleven; the mean of E[x²] over coordinates and seeds ≈ 1.)
  tyche::nuts_config cfg{.chains = 4, .warmup = 1000, .draws = 1000, .seed = 20};
  cfg.metric = tyche::samplers::metric_kind::low_rank;
  const auto low_rank = tyche::nuts(m, cfg);
  cfg.metric = tyche::samplers::metric_kind::diagonal;
  const auto diag = tyche::nuts(m, cfg);
  check_standard_marginals(low_rank, d);
  REQUIRE(low_rank.inv_metric[0].size() == d * d);
  INFO("mean leapfrogs: low rank " << mean_leapfrogs(low_rank) << ", diagonal " << mean_leapfrogs(diag));
  CHECK(mean_leapfrogs(low_rank) < 0.25 * mean_leapfrogs(diag));
  // The fit keeps each chain's factors (room for d directions: 2 × 500 window draws ≥ d), and
  // its matrix is theirs.
  using namespace tyche::samplers;
  for (int c = 0; c < cfg.chains; ++c) {
    const auto& f = low_rank.inv_metric_factors[static_cast<std::size_t>(c)];
    REQUIRE(f.size() == low_rank_factors_size(d, d));
    CHECK(f[1] == d);
    CHECK(f[0] > 0);
    std::vector<double> dense(d * d);
    low_rank_dense(f.data(), d, dense.data());
    CHECK(dense == low_rank.inv_metric[static_cast<std::size_t>(c)]);
  }
  CHECK(diag.inv_metric_factors.empty());
}

TEST_CASE("low-rank metric: a cap on its directions bounds a chain's metric to O(d·kmax) and still samples",
          "[nuts][low_rank]") {
  // The 40-d Gaussian above with nuts_config::low_rank_max_rank = 6: every chain's factors have
  // room for 6 directions (2 + d + 6 + 6d values, against d² = 1,600 for the matrix), keep at
  // most 6, and the draws still have the right marginals.
  using namespace tyche::samplers;
  constexpr std::size_t d = 40, cap = 6;
  const auto m = correlated_gaussian<d>(0.95);
  tyche::nuts_config cfg{.chains = 4, .warmup = 1000, .draws = 1000, .seed = 20};
  cfg.metric = metric_kind::low_rank;
  cfg.low_rank_max_rank = cap;
  const auto fit = tyche::nuts(m, cfg);
  check_standard_marginals(fit, d);
  for (const auto& f : fit.inv_metric_factors) {
    REQUIRE(f.size() == 2 + d + cap + cap * d);
    CHECK(f[1] == cap);
    CHECK(f[0] >= 1);
    CHECK(f[0] <= cap);
  }
  CHECK(detail::low_rank_kmax(cfg, d) == cap);
  cfg.low_rank_max_rank = 0;
  CHECK(detail::low_rank_kmax(cfg, d) == d);
  CHECK(detail::low_rank_kmax(cfg, 5000) == 2 * 500);  // the longest window's 500 draws, twice
  cfg.pool_metric = true;
  CHECK(detail::low_rank_kmax(cfg, 5000) == 4000);  // four chains' windows pooled: 2 × 2,000
  cfg.pool_metric = false;
  // A d × d init_inv_metric: room for every direction only where no window replaces it.
  cfg.init_inv_metric.assign(400 * 400, 0.0);
  cfg.warmup = 100;  // windows of 75 draws (15 + 75 + 10)
  CHECK(detail::low_rank_kmax(cfg, 400) == 150);
  cfg.warmup = 10;
  CHECK(detail::low_rank_kmax(cfg, 400) == 400);
  cfg.init_inv_metric.clear();
  CHECK(detail::low_rank_kmax(cfg, 400) == 0);  // no window, the identity: no direction
  cfg.metric = metric_kind::diagonal;
  CHECK(detail::low_rank_kmax(cfg, d) == 0);
}

TEST_CASE("low-rank metric: init_inv_metric as a diagonal or a matrix, and the fit's record beyond d = 1,000",
          "[nuts][low_rank]") {
  using namespace tyche::samplers;
  constexpr std::size_t d = 3;
  const auto m = correlated_gaussian<d>(0.5);
  tyche::nuts_config cfg{.chains = 1, .warmup = 0, .draws = 20, .seed = 3};
  cfg.metric = metric_kind::low_rank;
  // The diagonal: σ = √m, no direction; no warm-up, so it is the metric of every draw.
  cfg.init_inv_metric = {4.0, 0.25, 9.0};
  auto fit = tyche::nuts(m, cfg);
  const auto& f = fit.inv_metric_factors[0];
  REQUIRE(f.size() >= 2 + d);
  CHECK(f[0] == 0);
  CHECK(f[2] == 2.0);
  CHECK(f[3] == 0.5);
  CHECK(f[4] == 3.0);
  CHECK(fit.inv_metric[0] == std::vector<double>{4, 0, 0, 0, 0.25, 0, 0, 0, 9});
  // A matrix: its directions (room for d of them with a d × d init_inv_metric), the same matrix
  // back in the fit to rounding.
  cfg.init_inv_metric = {2.0, 0.5, 0.0, 0.5, 1.0, 0.2, 0.0, 0.2, 3.0};
  fit = tyche::nuts(m, cfg);
  CHECK(fit.inv_metric_factors[0][1] == d);
  for (std::size_t k = 0; k < d * d; ++k) CHECK(fit.inv_metric[0][k] == Approx(cfg.init_inv_metric[k]).margin(1e-12));
  // Factors (nuts_config::init_inv_metric_factors): a fit's, taken as they are.
  const auto factors_start = fit.inv_metric_factors[0];
  cfg.init_inv_metric.clear();
  cfg.init_inv_metric_factors = factors_start;
  const auto from_factors = tyche::nuts(m, cfg);
  // (room for its k = 2 directions where it had 3: no window will need more)
  REQUIRE(factors_start[0] == 2);
  CHECK(from_factors.inv_metric_factors[0].size() == tyche::samplers::low_rank_factors_size(d, 2));
  CHECK(from_factors.inv_metric == fit.inv_metric);
  CHECK(from_factors.values == fit.values);  // the same metric, the same draws
  // The device executor (emulated) starts from them too (its chains start on the device only
  // without init, init_inv_metric and init_inv_metric_factors), with the CPU's draws.
  cfg.executor = tyche::cuda{.emulate = true};
  CHECK(tyche::nuts(m, cfg).values == from_factors.values);
  cfg.executor = tyche::cpu{};
  // Their errors: another metric, both starts, the wrong size, a σ or λ that is not positive.
  cfg.metric = metric_kind::dense;
  CHECK_THROWS_WITH(tyche::nuts(m, cfg), Catch::Matchers::Contains("init_inv_metric_factors is the low-rank metric's start"));
  cfg.metric = metric_kind::low_rank;
  cfg.init_inv_metric = {1.0, 1.0, 1.0};
  CHECK_THROWS_WITH(tyche::nuts(m, cfg), Catch::Matchers::Contains("init_inv_metric and init_inv_metric_factors are both given"));
  cfg.init_inv_metric.clear();
  cfg.init_inv_metric_factors.pop_back();
  CHECK_THROWS_WITH(tyche::nuts(m, cfg), Catch::Matchers::Contains("which are not the factors of a metric of d = 3"));
  cfg.init_inv_metric_factors = factors_start;
  cfg.init_inv_metric_factors[1] = -1.5;  // a kmax that is no count: the same message, no crash
  CHECK_THROWS_WITH(tyche::nuts(m, cfg), Catch::Matchers::Contains("which are not the factors of a metric of d = 3"));
  cfg.init_inv_metric_factors = factors_start;
  cfg.init_inv_metric_factors[3] = -1;
  CHECK_THROWS_WITH(tyche::nuts(m, cfg), Catch::Matchers::Contains("its scale σ[1] = -1 is not positive"));
  cfg.init_inv_metric_factors = factors_start;
  REQUIRE(factors_start[0] >= 1);
  cfg.init_inv_metric_factors[2 + d] = -2;
  CHECK_THROWS_WITH(tyche::nuts(m, cfg), Catch::Matchers::Contains("its direction 1 has λ − 1 = -2, so λ is not positive"));
  cfg.init_inv_metric_factors[0] = 0.5;
  CHECK_THROWS_WITH(tyche::nuts(m, cfg), Catch::Matchers::Contains("count of directions k = 0.5 is not an integer"));
  cfg.init_inv_metric_factors.clear();
  // Neither d nor d² values: the message names both.
  cfg.init_inv_metric = {1.0, 1.0};
  CHECK_THROWS_WITH(tyche::nuts(m, cfg), Catch::Matchers::Contains("init_inv_metric holds 2 values, expected 9 (d × d, "
                                                                   "row-major, or the diagonal's d, for the low-rank"));
  // Beyond d = 1,000 the fit keeps the factors alone.
  tyche::nuts_fit big;
  big.inv_metric.resize(1);
  big.inv_metric_factors.resize(1);
  const std::size_t n = 1001;
  std::vector<double> factors(low_rank_factors_size(n, 1));
  low_rank_identity(factors.data(), n, 1);
  factors[2] = 2.0;
  detail::record_metric(big, 0, metric_kind::low_rank, factors.data(), factors.size(), n);
  CHECK(big.inv_metric[0].empty());
  CHECK(big.inv_metric_factors[0] == factors);
  CHECK(low_rank_dimension(factors.data(), factors.size()) == n);
}
