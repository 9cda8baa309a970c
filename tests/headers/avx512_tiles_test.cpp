// Chains in 4-lane batches of an AVX-512 build take a streamed matvec's tile of rows two columns
// per 512-bit operation, and its loop body two rows per 512-bit batch (detail::column_pair_tiles,
// backends/simd/batch.hpp). Compiled with
// -march=x86-64-v4 whatever the machine (tests/CMakeLists.txt, target test_avx512_tiles), run by
// avx512_tiles_main.cpp only where the CPU has AVX-512F. Checks:
// - the kernels' row products and gradient sums equal the exact sums of their terms to rounding
//   (1e-13 of the terms' magnitudes), for column counts around the groups of four;
// - the GLM families' values and gradients for 4 chains in one such batch equal each chain
//   evaluated alone to 1e-12 relative, with the loop body on two rows at once (row pairs,
//   TYCHE_TILE_ROW_PAIRS), row counts around the tile of 8, and X as floats (whose products take
//   the 4-lane operations); value-only evaluations too; and categorical_logit_glm's (whose
//   operands' loops g++ once warned about at -O2 for AVX-512, see families()).
// Built at -O2, where GCC fuses products into sums. No Catch2: prints what failed and returns 1.
#include <tyche/tyche.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#if TYCHE_HAS_XSIMD && defined(__AVX512F__)
namespace {

using B = tyche::half_lane_batch;
using tiles = tyche::detail::column_pair_tiles<B>;
using batches = std::vector<B, xsimd::aligned_allocator<B>>;
constexpr std::size_t rows = 8;

// Each lane of got against the exact sums (long double) of its terms: within 1e-13 of the sum of
// the terms' magnitudes. A sum of at most 101 products rounds to about 1e-14 of it whichever way
// the compiler fuses the products (the 4-lane tile's own operations may be fused differently:
// GCC 12 avoids chains of 256-bit FMAs in some loops and not of 512-bit ones); a lane, column or
// row taken from the wrong place is far outside.
int check_lanes(const char* what, std::size_t cols, std::size_t at, const B& got, const long double* exact,
                const long double* scale) {
  for (std::size_t l = 0; l < 4; ++l) {
    const long double err = std::fabs(static_cast<long double>(got.get(l)) - exact[l]);
    if (!(err <= 1e-13L * scale[l])) {
      std::printf("%s, %zu columns: element %zu, lane %zu is %.17g, the exact sum %.17Lg\n", what, cols, at, l,
                  got.get(l), exact[l]);
      return 1;
    }
  }
  return 0;
}

int kernels(std::mt19937_64& rng) {
  std::normal_distribution<double> z;
  auto batch = [&] {
    alignas(32) double l[4];
    for (double& e : l) e = z(rng);
    return B::load_aligned(l);
  };
  int failures = 0;
  for (std::size_t cols : {1u, 2u, 3u, 4u, 5u, 7u, 8u, 54u, 100u, 101u}) {
    std::vector<double> x(rows * cols);
    for (double& e : x) e = z(rng);
    batches v(cols), a(rows), got(rows), g(cols), g0(cols);
    for (auto& e : v) e = batch();
    for (auto& e : a) e = batch();
    for (auto& e : g0) e = batch();
    tiles::row_dots<rows>(x.data(), v.data(), cols, got.data());
    for (std::size_t r = 0; r < rows; ++r) {
      long double exact[4] = {}, scale[4] = {};
      for (std::size_t c = 0; c < cols; ++c)
        for (std::size_t l = 0; l < 4; ++l) {
          const long double t = static_cast<long double>(x[r * cols + c]) * v[c].get(l);
          exact[l] += t;
          scale[l] += std::fabs(t);
        }
      failures += check_lanes("row_dots", cols, r, got[r], exact, scale);
    }
    g = g0;
    tiles::add_rows<rows>(g.data(), x.data(), cols, a.data());
    for (std::size_t c = 0; c < cols; ++c) {
      long double exact[4], scale[4];
      for (std::size_t l = 0; l < 4; ++l) {
        exact[l] = g0[c].get(l);
        scale[l] = std::fabs(exact[l]);
        for (std::size_t r = 0; r < rows; ++r) {
          const long double t = static_cast<long double>(x[r * cols + c]) * a[r].get(l);
          exact[l] += t;
          scale[l] += std::fabs(t);
        }
      }
      failures += check_lanes("add_rows", cols, c, g[c], exact, scale);
    }
  }
  return failures;
}

// A model's value and gradient (and its value alone) for 4 chains in one half-width batch
// against each chain alone.
template <class M>
int batch_against_one_chain(const char* what, std::size_t n, const M& m, std::mt19937_64& rng) {
  std::normal_distribution<double> z;
  const auto view = m.program().view();
  const std::size_t dim = m.dim(), ws = m.program().workspace_size() + 1;
  batches theta(dim), grad(dim), wsb(ws);
  std::vector<double> q(dim * 4);
  for (double& e : q) e = 0.5 * z(rng);
  for (std::size_t k = 0; k < dim; ++k) {
    alignas(32) double l[4];
    for (std::size_t c = 0; c < 4; ++c) l[c] = q[c * dim + k];
    theta[k] = B::load_aligned(l);
  }
  const B value = view.value_and_gradient(theta.data(), grad.data(), wsb.data());
  const B value_only = view.value(theta.data(), wsb.data());
  std::vector<double> g1(dim), w1(ws);
  double worst = 0;
  for (std::size_t c = 0; c < 4; ++c) {
    const double v1 = view.value_and_gradient(q.data() + c * dim, g1.data(), w1.data());
    worst = std::max(worst, std::fabs(value.get(c) - v1) / std::max(1.0, std::fabs(v1)));
    worst = std::max(worst, std::fabs(value_only.get(c) - v1) / std::max(1.0, std::fabs(v1)));
    for (std::size_t k = 0; k < dim; ++k)
      worst = std::max(worst, std::fabs(grad[k].get(c) - g1[k]) / std::max(1.0, std::fabs(g1[k])));
  }
  if (!(worst <= 1e-12)) {
    std::printf("%s, %zu rows: 4 chains in a batch differ from one chain at a time by %.3g (relative)\n", what, n,
                worst);
    return 1;
  }
  return 0;
}

// The GLM families whose loop body takes a tile two rows at a time (row pairs, config.hpp's
// TYCHE_TILE_ROW_PAIRS): scalars read once and twice (neg_binomial_2_log's φ; alpha in and out of
// the predictor), a gather with repeated indices in neighbouring rows, a buffered vector, and X as
// floats; row counts around the tile of 8.
int families(std::size_t n, std::mt19937_64& rng) {
  constexpr std::size_t K = 6;
  std::normal_distribution<double> z;
  std::vector<double> x(n * K), zx(n * 2), yn(n), y01(n), counts(n), zd(n);
  for (double& e : x) e = 0.5 * z(rng);
  for (double& e : zx) e = 0.5 * z(rng);
  for (double& e : yn) e = z(rng);
  for (double& e : zd) e = z(rng);
  const std::vector<float> xf(x.begin(), x.end());
  const std::vector<double> trials(n, 5.0);
  std::vector<int> group(n);
  for (std::size_t r = 0; r < n; ++r) {
    y01[r] = double(r % 3 == 0);
    counts[r] = double(r % 4);
    group[r] = int((r / 2) % 3);
  }
  using namespace tyche;
  auto a = normal<"alpha">(0.0, 1.0);
  auto b = normal<"beta">(0.0, 1.0, shape<K>);
  auto s = lognormal<"sigma">(0.0, 1.0);
  auto g = normal<"gamma">(0.0, 1.0, shape<2>);
  auto u = normal<"u">(0.0, 1.0, shape<3>);
  const auto X = matrix(x.data(), n, K);
  int failures = 0;
  failures += batch_against_one_chain("bernoulli_logit", n, model(joint(a, b, bernoulli_logit(a + matvec(X, b)).observe(data(y01)))), rng);
  failures += batch_against_one_chain("poisson_log", n, model(joint(a, b, poisson_log(a + 0.5 * matvec(X, b)).observe(data(counts)))), rng);
  failures += batch_against_one_chain("binomial_logit", n, model(joint(a, b, binomial_logit(data(trials), matvec(X, b) - a).observe(data(counts)))), rng);
  failures += batch_against_one_chain("neg_binomial_2_log", n, model(joint(a, b, s, neg_binomial_2_log(a + matvec(X, b), s).observe(data(counts)))), rng);
  failures += batch_against_one_chain("normal, scalar scale", n, model(joint(a, b, s, normal(a + matvec(X, b), s).observe(data(yn)))), rng);
  failures += batch_against_one_chain("normal, buffered scale", n, model(joint(a, b, g, normal(a + matvec(X, b), 1.0 + exp(matvec(matrix(zx.data(), n, 2), g))).observe(data(yn)))), rng);
  failures += batch_against_one_chain("gather", n, model(joint(b, u, bernoulli_logit(gather(u, group) + matvec(X, b)).observe(data(y01)))), rng);
  failures += batch_against_one_chain("alpha twice", n, model(joint(a, b, bernoulli_logit(a + matvec(X, b) + a * data(zd)).observe(data(y01)))), rng);
  // categorical_logit_glm, 4 categories: with the loop over alpha's 4 elements (fewer than an
  // AVX-512 batch's 8; 3 categories did not show it), g++ 12 at -O2 once warned falsely that the
  // loop invokes undefined behaviour (-Waggressive-loop-optimizations; compile/evaluate.hpp,
  // for_elements), which -Werror makes this file's compile fail.
  std::vector<double> ycat(n);
  for (std::size_t r = 0; r < n; ++r) ycat[r] = double(1 + (r * 7) % 4);
  auto ac = normal<"alpha">(0.0, 1.0, shape<4>);
  auto bc = normal<"beta">(0.0, 1.0, shape<4 * K>);
  failures += batch_against_one_chain("categorical_logit_glm", n, model(joint(ac, bc, categorical_logit_glm(X, ac, bc).observe(data(ycat)))), rng);
  failures += batch_against_one_chain("float X", n, model(joint(a, b, bernoulli_logit(a + matvec(matrix(xf.data(), n, K), b)).observe(data(y01)))), rng);
  return failures;
}

}  // namespace

int avx512_tiles_test() {
  static_assert(tiles::available, "an AVX-512 build's 4-lane batch takes column pairs");
  std::mt19937_64 rng(20261202);
  int failures = kernels(rng);
  for (std::size_t n : {7u, 9u, 16u, 35u, 203u}) failures += families(n, rng);
  if (failures == 0) std::puts("avx512_tiles: all checks passed");
  return failures == 0 ? 0 : 1;
}
#else
int avx512_tiles_test() {
  std::puts("avx512_tiles: built without the SIMD backend or AVX-512: nothing to check");
  return 77;
}
#endif
