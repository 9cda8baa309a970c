// Simulation-based calibration of nuts() (Talts, Betancourt, Simpson, Vehtari & Gelman 2018,
// "Validating Bayesian inference algorithms with simulation-based calibration", arXiv:1804.06788).
//
// One replication: θ̃ from the prior (model.sample_prior), data ỹ from p(y | θ̃)
// (model.sample_observations), L posterior draws θ₁ … θ_L given ỹ, and for every parameter the rank
// #{l : θ_l < θ̃} ∈ {0, …, L}. When the draws come from the posterior, the rank is uniform on
// {0, …, L} (Talts et al., Theorem 1). L = 99, so the 100 possible ranks fall evenly into B bins,
// and Pearson's χ² test with B − 1 degrees of freedom tests the histogram of N replications for
// uniformity. A parameter passes when p > 0.001.
//
// NUTS draws are autocorrelated, which alone makes rank histograms non-uniform (Talts et al.,
// §4.1); one chain of 990 draws after warm-up, thinned by 10, gives the 99 draws (their bulk-ESS
// is reported; it is close to 99 for these models).
//
// Models: eight schools with J = 4, non-centred (mu ~ N(0, 5), tau ~ half-Cauchy(5),
// theta_raw ~ N(0, 1)⁴, y ~ N(mu + tau theta_raw, sigma), sigma = 15, 10, 16, 11); a linear
// regression with N = 10 (x evenly spaced on [−1, 1], beta ~ N(0, 1)², sigma ~ half-normal(1),
// y ~ N(beta₁ + beta₂ x, sigma)); a local-level model (N = 20) whose level is integrated out by a
// Kalman filter written with scan.
//
// Runs (fixed seeds; a replication's draws do not depend on the number of threads; nuts() with one
// chain, lanes = 1):
//   [sbc]   default suite: 200 replications per model, B = 10 bins (20 expected per bin), warm-up
//           500; p > 0.001. About 1 s per model on 2 cores.
//   [.sbc]  the full run (ctest samplers_sbc_full, label long): 1000 replications per model,
//           B = 20 bins (50 expected per bin), warm-up 1000; p > 0.001. About 10 s in all.
// With 11 parameters tested at p > 0.001, a calibrated sampler fails a run with probability about
// 1 %; the seeds are fixed, so a run that passes keeps passing.
// And tests that SBC can fail: exact conjugate posterior draws pass, the same draws with their
// spread around the posterior mean halved are rejected, and NUTS fitting a model whose
// likelihood scale is wrong (sigma / 2) is rejected (reduced settings).
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <boost/math/distributions/chi_squared.hpp>

#include "support/sanitized.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kept_draws = 99;  // L: ranks 0 … 99, 100 values

struct sbc_settings {
  int replications = 40;
  int bins = 5;  // divides L + 1 = 100
  int warmup = 300;
  int thin = 10;
  std::uint64_t seed = 1;
};

/// One replication's output: the true (constrained) values and L posterior draws of each.
struct replication {
  std::vector<double> truth;
  std::vector<std::vector<double>> draws;  // [parameter][draw], L draws each
  int divergences = 0;
};

struct sbc_result {
  std::vector<std::string> names;
  std::vector<std::vector<int>> ranks;  // [parameter][replication]
  std::vector<double> p_values;         // [parameter]
  std::vector<std::vector<int>> histograms;  // [parameter][bin]
  std::vector<double> median_ess;       // [parameter]: median over replications of the bulk-ESS of the L draws
  long divergences = 0;
};

/// Pearson's χ² test that ranks in {0, …, max_rank} are uniform, with `bins` equal-width bins.
double uniformity_p_value(const std::vector<int>& ranks, int max_rank, int bins, std::vector<int>* histogram = nullptr) {
  const int values = max_rank + 1;
  REQUIRE(values % bins == 0);
  std::vector<int> h(static_cast<std::size_t>(bins), 0);
  for (int r : ranks) {
    REQUIRE((r >= 0 && r <= max_rank));
    ++h[static_cast<std::size_t>(r / (values / bins))];
  }
  const double expected = static_cast<double>(ranks.size()) / bins;
  double chi2 = 0;
  for (int o : h) chi2 += (o - expected) * (o - expected) / expected;
  if (histogram) *histogram = h;
  const boost::math::chi_squared_distribution<double> dist(bins - 1);
  return boost::math::cdf(boost::math::complement(dist, chi2));
}

/// Runs `replicate(r)` for r = 0 … N − 1 on up to 4 threads (results do not depend on how many),
/// then ranks and tests every parameter.
sbc_result run_sbc(const std::vector<std::string>& names, const sbc_settings& s,
                   const std::function<replication(int)>& replicate) {
  std::vector<replication> reps(static_cast<std::size_t>(s.replications));
  std::vector<std::exception_ptr> errors(reps.size());
  const int threads = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 4u));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int r = t; r < s.replications; r += threads) {
        try {
          reps[static_cast<std::size_t>(r)] = replicate(r);
        } catch (...) {
          errors[static_cast<std::size_t>(r)] = std::current_exception();
        }
      }
    });
  for (auto& th : pool) th.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);

  sbc_result out;
  out.names = names;
  const std::size_t dim = names.size();
  out.ranks.assign(dim, {});
  out.histograms.assign(dim, {});
  for (const auto& rep : reps) {
    REQUIRE(rep.truth.size() == dim);
    REQUIRE(rep.draws.size() == dim);
    out.divergences += rep.divergences;
    for (std::size_t k = 0; k < dim; ++k) {
      REQUIRE(rep.draws[k].size() == static_cast<std::size_t>(kept_draws));
      out.ranks[k].push_back(static_cast<int>(
          std::count_if(rep.draws[k].begin(), rep.draws[k].end(), [&](double x) { return x < rep.truth[k]; })));
    }
  }
  for (std::size_t k = 0; k < dim; ++k) {
    out.p_values.push_back(uniformity_p_value(out.ranks[k], kept_draws, s.bins, &out.histograms[k]));
    std::vector<double> ess;
    for (const auto& rep : reps) ess.push_back(tyche::ess_bulk(std::vector<std::vector<double>>{rep.draws[k]}));
    std::nth_element(ess.begin(), ess.begin() + static_cast<long>(ess.size() / 2), ess.end());
    out.median_ess.push_back(ess[ess.size() / 2]);
  }
  return out;
}

std::string report(const char* what, const sbc_settings& s, const sbc_result& r) {
  std::ostringstream os;
  os << what << ": " << s.replications << " replications, " << s.bins << " bins, L = " << kept_draws
     << ", warm-up " << s.warmup << ", thin " << s.thin << "; " << r.divergences << " divergent transitions in all\n";
  for (std::size_t k = 0; k < r.names.size(); ++k) {
    os << "  " << r.names[k] << ": p = " << r.p_values[k] << ", median bulk-ESS of the L draws "
       << r.median_ess[k] << ", histogram";
    for (int h : r.histograms[k]) os << ' ' << h;
    os << '\n';
  }
  return os.str();
}

/// NUTS on `fit_model(y)`, one chain of L × thin draws after warm-up, every thin-th kept.
template <class Model>
replication nuts_draws(const Model& m, std::vector<double> truth, const sbc_settings& s, std::uint64_t seed) {
  const tyche::nuts_config cfg{
      .chains = 1, .warmup = s.warmup, .draws = kept_draws * s.thin, .seed = seed, .executor = tyche::cpu{.threads = 1, .lanes = 1}};
  const auto fit = tyche::nuts(m, cfg);
  replication rep;
  rep.truth = std::move(truth);
  rep.divergences = fit.divergences();
  rep.draws.assign(fit.dim(), {});
  for (std::size_t k = 0; k < fit.dim(); ++k)
    for (int d = s.thin - 1; d < cfg.draws; d += s.thin)
      rep.draws[k].push_back(fit.values[0][static_cast<std::size_t>(d) * fit.dim() + k]);
  return rep;
}

// ---- eight schools, J = 4, non-centred -----------------------------------------------------------

const std::vector<double> school_sigma{15, 10, 16, 11};

auto schools_model(const std::vector<double>& y) {
  using namespace tyche;
  auto mu = normal<"mu">(0.0, 5.0);
  auto tau = half_cauchy<"tau">(5.0);
  auto theta_raw = std_normal<"theta_raw">(shape<4>);
  return model(joint(mu, tau, theta_raw, normal(mu + tau * theta_raw, data(school_sigma)).observe(data(y))));
}

sbc_result schools_sbc(const sbc_settings& s) {
  const std::vector<double> placeholder(4, 0.0);
  const auto prior_model = schools_model(placeholder);
  return run_sbc(prior_model.parameter_names(), s, [&](int r) {
    tyche::counter_rng rng(s.seed, static_cast<std::uint64_t>(r));
    const auto truth = prior_model.sample_prior(rng);
    const std::vector<double> y = prior_model.sample_observations(prior_model.unconstrain(truth), rng)[0];
    return nuts_draws(schools_model(y), truth, s, s.seed * 1000003u + static_cast<std::uint64_t>(r));
  });
}

// ---- linear regression, N = 10 -------------------------------------------------------------------

constexpr std::size_t n_obs = 10;

const std::vector<double>& design() {  // row-major 10 × 2: [1, x_i], x evenly spaced on [−1, 1]
  static const std::vector<double> x = [] {
    std::vector<double> v;
    for (std::size_t i = 0; i < n_obs; ++i) {
      v.push_back(1.0);
      v.push_back(-1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(n_obs - 1));
    }
    return v;
  }();
  return x;
}

/// The regression; `likelihood_scale` multiplies sigma in the likelihood (1: the right model).
auto regression_model(const std::vector<double>& y, double likelihood_scale = 1.0) {
  using namespace tyche;
  auto beta = normal<"beta">(0.0, 1.0, shape<2>);
  auto sigma = half_normal<"sigma">(1.0);
  return model(joint(beta, sigma,
                     normal(matvec(matrix(design().data(), n_obs, 2), beta), likelihood_scale * sigma)
                         .observe(data(y))));
}

sbc_result regression_sbc(const sbc_settings& s, double fitted_likelihood_scale = 1.0) {
  const std::vector<double> placeholder(n_obs, 0.0);
  const auto prior_model = regression_model(placeholder);
  return run_sbc(prior_model.parameter_names(), s, [&](int r) {
    tyche::counter_rng rng(s.seed, static_cast<std::uint64_t>(r));
    const auto truth = prior_model.sample_prior(rng);
    const std::vector<double> y = prior_model.sample_observations(prior_model.unconstrain(truth), rng)[0];
    return nuts_draws(regression_model(y, fitted_likelihood_scale), truth, s,
                      s.seed * 1000003u + static_cast<std::uint64_t>(r));
  });
}

void require_calibrated(const char* what, const sbc_settings& s, const sbc_result& r) {
  WARN(report(what, s, r));
  for (std::size_t k = 0; k < r.names.size(); ++k) {
    INFO(what << " " << r.names[k] << ": chi-square p = " << r.p_values[k]);
    CHECK(r.p_values[k] > 0.001);
  }
}

// ---- conjugate regression (sigma = 1 known): exact posterior draws, no sampler --------------------
// beta ~ N(0, I₂), y ~ N(X beta, I): the posterior is N(Λ⁻¹ Xᵀy, Λ⁻¹), Λ = XᵀX + I.

sbc_result conjugate_sbc(const sbc_settings& s, double spread) {
  const auto& x = design();
  double a = 1, b = 0, c = 1;  // Λ = [[a, b], [b, c]]
  for (std::size_t i = 0; i < n_obs; ++i) {
    a += x[2 * i] * x[2 * i];
    b += x[2 * i] * x[2 * i + 1];
    c += x[2 * i + 1] * x[2 * i + 1];
  }
  const double det = a * c - b * b;
  const double s00 = c / det, s01 = -b / det, s11 = a / det;  // Λ⁻¹
  const double l00 = std::sqrt(s00), l10 = s01 / l00, l11 = std::sqrt(s11 - l10 * l10);  // its Cholesky factor
  return run_sbc({"beta[1]", "beta[2]"}, s, [&](int r) {
    std::mt19937_64 rng(s.seed * 7919u + static_cast<std::uint64_t>(r));
    std::normal_distribution<double> z;
    replication rep;
    rep.truth = {z(rng), z(rng)};
    double xty0 = 0, xty1 = 0;
    for (std::size_t i = 0; i < n_obs; ++i) {
      const double y = x[2 * i] * rep.truth[0] + x[2 * i + 1] * rep.truth[1] + z(rng);
      xty0 += x[2 * i] * y;
      xty1 += x[2 * i + 1] * y;
    }
    const double m0 = s00 * xty0 + s01 * xty1, m1 = s01 * xty0 + s11 * xty1;
    rep.draws.assign(2, {});
    for (int l = 0; l < kept_draws; ++l) {
      const double z0 = z(rng), z1 = z(rng);
      rep.draws[0].push_back(m0 + spread * l00 * z0);
      rep.draws[1].push_back(m1 + spread * (l10 * z0 + l11 * z1));
    }
    return rep;
  });
}

// ---- a local level by a Kalman filter written with scan, N = 20 -----------------------------------
// q, r ~ half-normal(1); x₀ ~ N(0, 1), xₜ₊₁ ~ N(xₜ, q²), yₜ ~ N(xₜ, r²); fitted with the level
// integrated out by the filter (tyche/compile/scan.hpp): the scan's forward and reverse passes
// under the sampler.

constexpr std::size_t n_level = 20;

auto level_model(const std::vector<double>& y) {
  using namespace tyche;
  auto q = half_normal<"q">(1.0);
  auto r = half_normal<"r">(1.0);
  auto filtered = scan(
      [&](const auto& st, const auto& yt) {
        auto f = assume_positive(st[1] + square(r));
        auto v = yt - st[0];
        return std::tuple{st[0] + st[1] / f * v, st[1] * square(r) / f + square(q),
                          st[2] - 0.5 * log(f) - 0.5 * square(v) / f};
      },
      std::tuple{0.0, 1.0, 0.0}, data(y));
  return model(joint(q, r, target(at(filtered, 2))));
}

sbc_result level_sbc(const sbc_settings& s) {
  using namespace tyche;
  const auto prior_model = model(joint(half_normal<"q">(1.0), half_normal<"r">(1.0)));
  return run_sbc(prior_model.parameter_names(), s, [&](int rep) {
    counter_rng rng(s.seed, static_cast<std::uint64_t>(rep));
    const auto truth = prior_model.sample_prior(rng);  // (q, r)
    std::mt19937_64 gen(s.seed * 104729u + static_cast<std::uint64_t>(rep));
    std::normal_distribution<double> z;
    std::vector<double> y(n_level);
    double x = z(gen);
    for (auto& v : y) {
      v = x + truth[1] * z(gen);
      x += truth[0] * z(gen);
    }
    return nuts_draws(level_model(y), truth, s, s.seed * 1000003u + static_cast<std::uint64_t>(rep));
  });
}

const sbc_settings reduced{.replications = 200, .bins = 10, .warmup = 500, .thin = 10, .seed = 20180401};
// The Kalman filter's reduced run under AddressSanitizer (tools/test.sh's clang tree, where the
// 200 replications took 21 s): 40 replications in 5 bins (8 expected per bin), the same test at
// lower power; the g++ tree runs `reduced`.
const sbc_settings reduced_sanitized{.replications = 40, .bins = 5, .warmup = 500, .thin = 10, .seed = 20180401};
const sbc_settings full{.replications = 1000, .bins = 20, .warmup = 1000, .thin = 10, .seed = 20180402};

}  // namespace

TEST_CASE("sbc: eight schools (J = 4, non-centred), reduced", "[nuts][sbc]") {
  require_calibrated("eight schools J=4 (reduced)", reduced, schools_sbc(reduced));
}

TEST_CASE("sbc: linear regression (N = 10), reduced", "[nuts][sbc]") {
  require_calibrated("linear regression N=10 (reduced)", reduced, regression_sbc(reduced));
}

TEST_CASE("sbc: a local level by a Kalman filter written with scan (N = 20), reduced", "[nuts][sbc][scan]") {
  const sbc_settings& s = tyche_test::address_sanitized ? reduced_sanitized : reduced;
  require_calibrated("local level by scan N=20 (reduced)", s, level_sbc(s));
}

TEST_CASE("sbc: the test can fail", "[nuts][sbc]") {
  // The machinery, without a sampler: exact posterior draws pass; the same draws with their
  // spread halved (an overconfident posterior) pile the ranks at both ends and are rejected.
  const sbc_settings exact{.replications = 200, .bins = 10, .seed = 99};
  const auto right = conjugate_sbc(exact, 1.0);
  const auto narrow = conjugate_sbc(exact, 0.5);
  WARN(report("conjugate regression, exact draws", exact, right) +
       report("conjugate regression, draws with spread x 0.5", exact, narrow));
  for (std::size_t k = 0; k < 2; ++k) {
    CHECK(right.p_values[k] > 0.001);
    CHECK(narrow.p_values[k] < 0.001);
  }
  // NUTS on a model whose likelihood scale is sigma / 2 (the data come from sigma): the reduced
  // run rejects sigma (its posterior sits near twice the true value).
  const auto wrong = regression_sbc(reduced, 0.5);
  WARN(report("linear regression fitted with likelihood scale sigma / 2 (reduced)", reduced, wrong));
  CHECK(wrong.names[2] == "sigma");
  CHECK(wrong.p_values[2] < 0.001);
}

TEST_CASE("sbc: eight schools (J = 4, non-centred), full", "[.sbc]") {
  require_calibrated("eight schools J=4 (full)", full, schools_sbc(full));
}

TEST_CASE("sbc: linear regression (N = 10), full", "[.sbc]") {
  require_calibrated("linear regression N=10 (full)", full, regression_sbc(full));
}

TEST_CASE("sbc: a local level by a Kalman filter written with scan (N = 20), full", "[.sbc]") {
  require_calibrated("local level by scan N=20 (full)", full, level_sbc(full));
}
