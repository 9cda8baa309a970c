// The recursive NUTS reference (tests/support/recursive_nuts.hpp) on its own: it samples normal
// targets correctly (means within 4 Monte Carlo standard errors, variances within 10%), consumes its
// random numbers in the documented order (scripted streams, max_depth 1), reaches max_depth with a
// tiny step, diverges with a huge one, and its diagnostics are consistent with its tree depth.
//
// MCSE is estimated with batch means: the chain is cut into 50 consecutive batches of equal length,
// and MCSE = sd(batch means) / sqrt(50).
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include "support/recursive_nuts.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using vec = std::vector<double>;

/// The Rng the reference expects, backed by std::mt19937_64.
struct mt_rng {
  explicit mt_rng(std::uint64_t seed) : eng(seed) {}
  double uniform() { return static_cast<double>(eng() >> 11) * 0x1.0p-53; }  // [0, 1)
  double normal() { return gauss(eng); }
  std::mt19937_64 eng;
  std::normal_distribution<double> gauss;
};

/// Independent normals N(0, sigma_i²).
struct normal_target {
  vec sigma;
  double operator()(const vec& q, vec& grad) const {
    double lp = 0;
    for (std::size_t i = 0; i < q.size(); ++i) {
      const double s2 = sigma[i] * sigma[i];
      grad[i] = -q[i] / s2;
      lp -= 0.5 * q[i] * q[i] / s2;
    }
    return lp;
  }
};

/// Plays back fixed streams of normals and uniforms, and counts what was consumed.
struct scripted_rng {
  vec normals, uniforms;
  std::size_t n_normal = 0, n_uniform = 0;
  double normal() { return normals.at(n_normal++); }
  double uniform() { return uniforms.at(n_uniform++); }
};

struct moments {
  double mean, var, mcse;
};

/// Mean, variance and the batch-means MCSE of the mean (50 batches) of x.
moments summarise(const vec& x) {
  const std::size_t n = x.size(), batches = 50, len = n / batches;
  double mean = 0;
  for (double v : x) mean += v;
  mean /= static_cast<double>(n);
  double var = 0;
  for (double v : x) var += (v - mean) * (v - mean);
  var /= static_cast<double>(n - 1);
  vec bm(batches, 0.0);
  for (std::size_t b = 0; b < batches; ++b) {
    for (std::size_t i = 0; i < len; ++i) bm[b] += x[b * len + i];
    bm[b] /= static_cast<double>(len);
  }
  double bmean = 0;
  for (double v : bm) bmean += v;
  bmean /= static_cast<double>(batches);
  double bvar = 0;
  for (double v : bm) bvar += (v - bmean) * (v - bmean);
  bvar /= static_cast<double>(batches - 1);
  return {mean, var, std::sqrt(bvar / static_cast<double>(batches))};
}

/// n_leapfrog against the depth: the completed doublings took 2^depth − 1 leapfrogs, and a
/// doubling abandoned because its subtree diverged or U-turned took between 1 and 2^depth more.
void check_consistent(const tyche_test::nuts_draw& d, int max_depth) {
  REQUIRE(d.tree_depth >= 0);
  REQUIRE(d.tree_depth <= max_depth);
  const int done = (1 << d.tree_depth) - 1;
  REQUIRE(d.n_leapfrog >= done);
  REQUIRE(d.n_leapfrog <= 2 * done + 1);
  if (d.tree_depth == max_depth) REQUIRE(d.n_leapfrog == done);
  if (d.divergent) REQUIRE(d.n_leapfrog > done);
  REQUIRE(d.accept_stat >= 0.0);
  REQUIRE(d.accept_stat <= 1.0);
  REQUIRE(std::isfinite(d.energy));
  REQUIRE(d.energy >= -d.log_density);  // H = kinetic − log p, kinetic ≥ 0
}

/// Runs n transitions from q0 and returns the draws of every coordinate (column-major by coordinate).
std::vector<vec> run_chain(const normal_target& target, vec q, double step, const vec& inv_metric,
                           int max_depth, int n, std::uint64_t seed) {
  mt_rng rng(seed);
  std::vector<vec> draws(q.size(), vec(static_cast<std::size_t>(n)));
  for (int t = 0; t < n; ++t) {
    const auto d = tyche_test::recursive_nuts_transition(target, q, step, inv_metric, max_depth, rng);
    check_consistent(d, max_depth);
    q = d.q;
    for (std::size_t i = 0; i < q.size(); ++i) draws[i][static_cast<std::size_t>(t)] = q[i];
  }
  return draws;
}

}  // namespace

TEST_CASE("recursive NUTS: 1-d standard normal", "[nuts]") {
  const normal_target target{{1.0}};
  const auto draws = run_chain(target, {0.0}, 0.2, {1.0}, 10, 20000, 20240601);
  const auto m = summarise(draws[0]);
  INFO("mean " << m.mean << ", MCSE " << m.mcse << ", variance " << m.var);
  REQUIRE(m.mcse > 0);
  REQUIRE(std::fabs(m.mean) < 4 * m.mcse);
  REQUIRE(std::fabs(m.var - 1.0) < 0.1);
}

TEST_CASE("recursive NUTS: 10-d normal, scales 1..10, matching diagonal metric", "[nuts]") {
  normal_target target;
  vec inv_metric, q0;
  for (int i = 1; i <= 10; ++i) {
    target.sigma.push_back(i);
    inv_metric.push_back(double(i) * i);
    q0.push_back(0.5 * i);
  }
  const auto draws = run_chain(target, q0, 0.4, inv_metric, 10, 10000, 77);
  for (std::size_t i = 0; i < 10; ++i) {
    const auto m = summarise(draws[i]);
    const double s2 = target.sigma[i] * target.sigma[i];
    INFO("coordinate " << i << ": mean " << m.mean << ", MCSE " << m.mcse << ", variance " << m.var
                       << " (target " << s2 << ")");
    REQUIRE(m.mcse > 0);
    CHECK(std::fabs(m.mean) < 4 * m.mcse);
    CHECK(std::fabs(m.var / s2 - 1.0) < 0.1);
  }
}

TEST_CASE("recursive NUTS: max_depth 1 is one leapfrog with a Metropolis choice", "[nuts]") {
  const normal_target target{{1.0}};
  const double q0 = 0.5, p0 = 0.8, eps = 0.3;
  const double H0 = 0.5 * p0 * p0 + 0.5 * q0 * q0;
  for (const double dir_u : {0.7, 0.5, 0.2}) {
    const double e = dir_u > 0.5 ? eps : -eps;  // u = 0.5 goes backward
    double p = p0 + 0.5 * e * (-q0);
    const double q1 = q0 + e * p;
    p += 0.5 * e * (-q1);
    const double h1 = 0.5 * p * p + 0.5 * q1 * q1;
    const double a = std::min(1.0, std::exp(H0 - h1));
    for (const double accept_u : {0.0, 0.999999}) {
      scripted_rng rng{{p0}, {dir_u, accept_u}};
      const auto d = tyche_test::recursive_nuts_transition(target, vec{q0}, eps, vec{1.0}, 1, rng);
      INFO("direction u " << dir_u << ", accept u " << accept_u << ", H0 − h1 " << H0 - h1);
      REQUIRE(rng.n_normal == 1);
      // The top-level choice draws a uniform only when the new subtree is not heavier.
      REQUIRE(rng.n_uniform == (H0 - h1 > 0 ? 1u : 2u));
      REQUIRE(d.tree_depth == 1);
      REQUIRE(d.n_leapfrog == 1);
      REQUIRE_FALSE(d.divergent);
      REQUIRE(d.accept_stat == Approx(a).epsilon(1e-14));
      const bool moved = H0 - h1 > 0 || accept_u < a;
      REQUIRE(d.q[0] == Approx(moved ? q1 : q0).epsilon(1e-14));
      REQUIRE(d.log_density == Approx(-0.5 * d.q[0] * d.q[0]).epsilon(1e-14));
      REQUIRE(d.energy == Approx(moved ? h1 : H0).epsilon(1e-14));
    }
  }
}

TEST_CASE("recursive NUTS: a tiny step reaches max_depth", "[nuts]") {
  const normal_target target{{1.0}};
  // From q = 0 the momentum keeps its sign for |t| < π/2; 1023 steps of 1e-3 stay inside that, so
  // no U-turn criterion (whole trajectory or any subtree) can fail before max_depth.
  mt_rng rng(5);
  for (int t = 0; t < 5; ++t) {
    const auto d = tyche_test::recursive_nuts_transition(target, vec{0.0}, 1e-3, vec{1.0}, 10, rng);
    REQUIRE(d.tree_depth == 10);
    REQUIRE(d.n_leapfrog == 1023);
    REQUIRE_FALSE(d.divergent);
    REQUIRE(d.accept_stat > 0.99);
    REQUIRE(d.accept_stat <= 1.0);
    check_consistent(d, 10);
  }
  // max_depth 3 stops at 3 as well.
  const auto d = tyche_test::recursive_nuts_transition(target, vec{0.0}, 1e-3, vec{1.0}, 3, rng);
  REQUIRE(d.tree_depth == 3);
  REQUIRE(d.n_leapfrog == 7);
}

TEST_CASE("recursive NUTS: a huge step diverges at once", "[nuts]") {
  const normal_target target{{1.0}};
  mt_rng rng(11);
  for (int t = 0; t < 20; ++t) {
    const auto d = tyche_test::recursive_nuts_transition(target, vec{3.0}, 50.0, vec{1.0}, 10, rng);
    REQUIRE(d.divergent);
    REQUIRE(d.tree_depth == 0);
    REQUIRE(d.n_leapfrog == 1);
    REQUIRE(d.q[0] == 3.0);  // the initial point is the only one with weight
    REQUIRE(d.log_density == -4.5);
    REQUIRE(d.accept_stat >= 0.0);
    REQUIRE(d.accept_stat < 1e-100);
    check_consistent(d, 10);
  }
}

TEST_CASE("recursive NUTS: diagnostics are consistent over many step sizes", "[nuts]") {
  normal_target target{{1.0, 3.0, 0.2}};
  const vec inv_metric{1.0, 1.0, 1.0};  // a poor metric on purpose: U-turns and divergences mix
  mt_rng rng(99);
  vec q{0.1, -0.5, 0.05};
  int divergent = 0, shallow = 0, deep = 0;
  for (const double step : {0.01, 0.1, 0.3, 0.39, 0.45, 1.0}) {
    for (int t = 0; t < 300; ++t) {
      const auto d = tyche_test::recursive_nuts_transition(target, q, step, inv_metric, 8, rng);
      check_consistent(d, 8);
      divergent += d.divergent;
      shallow += d.tree_depth <= 2;
      deep += d.tree_depth >= 5;
      if (!d.divergent) q = d.q;
    }
  }
  // The step sizes above 2·0.2 are unstable for the narrow coordinate; the small ones need long trees.
  REQUIRE(divergent > 0);
  REQUIRE(shallow > 0);
  REQUIRE(deep > 0);
}

TEST_CASE("recursive NUTS: the same stream gives the same draw", "[nuts]") {
  const normal_target target{{1.0, 2.0}};
  mt_rng a(3), b(3);
  vec qa{0.2, 0.4}, qb = qa;
  for (int t = 0; t < 100; ++t) {
    const auto da = tyche_test::recursive_nuts_transition(target, qa, 0.5, vec{1.0, 4.0}, 10, a);
    const auto db = tyche_test::recursive_nuts_transition(target, qb, 0.5, vec{1.0, 4.0}, 10, b);
    REQUIRE(da.q == db.q);
    REQUIRE(da.n_leapfrog == db.n_leapfrog);
    REQUIRE(da.energy == db.energy);
    qa = da.q;
    qb = db.q;
  }
}
