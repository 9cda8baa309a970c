// Figure 1 of Paige & Wood (2014): mu ~ N(1, 5), y = 9, 8 ~ N(mu, 2). The posterior is
// N(7.25, 5/6) and log p(y) is closed-form (paper_programs.hpp).
//
// Tolerances, in Monte Carlo standard errors (MCSE). The program never moves mu after the
// first observe, so a run's weighted particles hold few distinct values and the ESS of the
// final weights overstates its precision; the MCSE is therefore measured across R
// independent runs (seeds 1..R):
//   posterior mean and variance: |mean over runs − exact| < 4 sd(runs) / √R
//   evidence: Ẑ is unbiased, |mean(Ẑ/Z) − 1| < 3 sd(Ẑ/Z) / √R
#include <tyche/tyche.hpp>

#include "paper_programs.hpp"

#include "support/sanitized.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <cmath>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

namespace smc = tyche::smc;
using namespace smc_programs;

template <class Program>
void check_posterior(const Program& program, int runs, tyche::smc::engine_kind engine) {
  const std::size_t particles = 1000;
  double m1 = 0, m2 = 0, v1 = 0, v2 = 0;
  for (int i = 0; i < runs; ++i) {
    const auto r = smc::run_smc(program, {.particles = particles, .seed = 1 + static_cast<std::uint64_t>(i), .engine = engine});
    REQUIRE(r.sets.size() == 1);
    REQUIRE(r.names == std::vector<std::string>{"mu"});
    const double m = r.mean("mu"), v = r.variance("mu");
    m1 += m / runs;
    m2 += m * m / runs;
    v1 += v / runs;
    v2 += v * v / runs;
  }
  const double se_m = std::sqrt((m2 - m1 * m1) * runs / (runs - 1) / runs);
  const double se_v = std::sqrt((v2 - v1 * v1) * runs / (runs - 1) / runs);
  INFO("mean " << m1 << " (MCSE " << se_m << "), variance " << v1 << " (MCSE " << se_v << ")");
  CHECK(std::fabs(m1 - gaussian_posterior_mean) < 4 * se_m);
  CHECK(std::fabs(v1 - gaussian_posterior_var) < 4 * se_v);
}

}  // namespace

TEST_CASE("figure 1: SMC with 1000 particles recovers the Gaussian posterior (in-process)", "[smc]") {
  check_posterior(gaussian_stepwise(), 40, smc::engine_kind::in_process);
}

/// The fork engine is checked against the in-process engine, draw for draw: the same streams
/// give the same answer, and the in-process engine's statistics are checked at full size here,
/// so the fork engine's follow. (Until 2026-12-01 the g++ tree also ran the statistical checks
/// themselves on the fork engine, 6 runs of 1000 particles and 20 of 100: 52 s, measured alone,
/// of the fork tests, beside which nothing else in the suite may run, for what equality at full size implies;
/// examples/smc_paper still runs the fork engine at the paper's size. Under ASan, where a fork
/// costs 10-20 times more (docs/design/sanitizers.md), a fifth of the particles.)
void check_fork_equals_in_process(std::size_t particles, std::uint64_t seed) {
  smc::config cfg{.particles = particles, .seed = seed, .engine = smc::engine_kind::fork};
  const auto on_fork = smc::run_smc(gaussian_program, cfg);
  cfg.engine = smc::engine_kind::in_process;
  const auto in_process = smc::run_smc(gaussian_stepwise(), cfg);
  CHECK(on_fork.log_evidence == in_process.log_evidence);
  CHECK(on_fork.weights() == in_process.weights());
  CHECK(on_fork.samples("mu") == in_process.samples("mu"));
  REQUIRE(on_fork.sweeps.size() == in_process.sweeps.size());
  CHECK(on_fork.sets[0].record.final_ess == in_process.sets[0].record.final_ess);
}

TEST_CASE("figure 1: SMC with 1000 particles on the fork engine gives the in-process engine's answer", "[smc][fork]") {
  check_fork_equals_in_process(tyche_test::address_sanitized ? 200 : 1000, 1);
}

TEST_CASE("figure 1: the evidence estimate is unbiased (in-process)", "[smc]") {
  const int runs = 400;
  const double z = std::exp(gaussian_log_evidence());
  double sum = 0, sum2 = 0;
  for (int i = 0; i < runs; ++i) {
    const auto r = smc::run_smc(gaussian_stepwise(), {.particles = 100, .seed = 1000 + static_cast<std::uint64_t>(i)});
    const double ratio = std::exp(r.log_evidence) / z;
    sum += ratio;
    sum2 += ratio * ratio;
  }
  const double mean = sum / runs, sd = std::sqrt((sum2 - runs * mean * mean) / (runs - 1));
  INFO("mean Z^/Z = " << mean << ", sd " << sd);
  CHECK(std::fabs(mean - 1) < 3 * sd / std::sqrt(double(runs)));
}

TEST_CASE("figure 1: the fork engine's evidence estimates are the in-process engine's", "[smc][fork]") {
  for (std::uint64_t seed : {5000u, 5001u}) check_fork_equals_in_process(100, seed);  // see above
}

TEST_CASE("figure 1: PIMH and particle Gibbs chains recover the posterior (in-process)", "[smc]") {
  for (auto run : {&smc::run_pimh<decltype(gaussian_stepwise())>, &smc::run_pg<decltype(gaussian_stepwise())>}) {
    const auto r = run(gaussian_stepwise(), {.particles = 100, .sweeps = 400, .seed = 3});
    REQUIRE(r.sweeps.size() == 400);
    // The chain's sweeps are correlated: an ESS from the batch means of per-sweep means.
    std::vector<double> sweep_mean;
    for (const auto& s : r.sets) {
      double m = 0;
      for (std::size_t p = 0; p < s.size(); ++p) m += s.weights[p] * s.value(p, 0);
      sweep_mean.push_back(m);
    }
    const std::size_t batches = 20, per = sweep_mean.size() / batches;
    double grand = 0;
    std::vector<double> b(batches, 0);
    for (std::size_t i = 0; i < batches * per; ++i) b[i / per] += sweep_mean[i] / double(per);
    for (double v : b) grand += v / double(batches);
    double var_b = 0;
    for (double v : b) var_b += (v - grand) * (v - grand) / double(batches - 1);
    const double mcse = std::sqrt(var_b / double(batches));
    INFO("method " << int(r.method) << ": mean " << r.mean("mu") << " MCSE " << mcse);
    CHECK(std::fabs(r.mean("mu") - gaussian_posterior_mean) < 4 * mcse + 1e-3);
    // r.sweep_means is that series, and the diagnostics' MCSE of it (Geyer's initial sequence on
    // one chain) agrees with the batch means' within their noise (20 batches: about 16 %).
    const std::vector<double> series = r.sweep_means("mu");
    REQUIRE(series.size() == sweep_mean.size());
    for (std::size_t i = 0; i < series.size(); ++i) CHECK(series[i] == Approx(sweep_mean[i]).epsilon(1e-12));
    const double by_ess = tyche::mcse_mean(series, 1, series.size());
    INFO("mcse from the ESS " << by_ess << ", ess " << tyche::ess_mean(series, 1, series.size()));
    CHECK(by_ess / mcse > 0.5);
    CHECK(by_ess / mcse < 2.0);
    CHECK(std::fabs(r.variance("mu") - gaussian_posterior_var) < 0.1 * gaussian_posterior_var);
  }
}

TEST_CASE("results: summary, weights, unweighted samples, histogram", "[smc]") {
  const auto r = smc::run_smc(gaussian_stepwise(), {.particles = 200, .sweeps = 3, .seed = 4});
  CHECK(r.samples("mu").size() == 600);
  double total = 0;
  for (double w : r.weights()) total += w;
  CHECK(total == Approx(1.0));
  CHECK(r.unweighted_samples("mu").size() == 600);
  CHECK(r.quantile("mu", 0.05) < r.quantile("mu", 0.5));
  CHECK(r.quantile("mu", 0.5) < r.quantile("mu", 0.95));
  CHECK_THROWS_WITH(r.samples("nu"), Catch::Contains("'nu'"));
  std::ostringstream os;
  os << summary(r);
  INFO(os.str());
  CHECK(os.str().find("mu") != std::string::npos);
  CHECK(os.str().find("3 sweeps of 200 particles") != std::string::npos);
}

TEST_CASE("w_ess is the weights' ESS after the last observe, before its resampling", "[smc][summary]") {
  // Figure 1 with 1000 particles: the last observe leaves the ESS above L/2, nothing is
  // resampled, and the record's final_ess is the set's 1 / sum w^2. Particle Gibbs resamples at
  // every observe, so its sets' weights are equal (1 / sum w^2 = L); its w_ess is the ESS before
  // that, below L (2026-12-04: it showed L, which said nothing).
  const auto r = smc::run_smc(gaussian_stepwise(), {.particles = 1000, .seed = 1});
  double q = 0;
  for (double w : r.sets[0].weights) q += w * w;
  CHECK(r.sets[0].record.final_ess == Approx(1 / q).epsilon(1e-9));
  const auto pg = smc::run_pg(hmm_stepwise(), {.particles = 64, .sweeps = 20, .seed = 9});
  double mean_final = 0;
  for (const auto& s : pg.sets) {
    double qs = 0;
    for (double w : s.weights) qs += w * w;
    CHECK(1 / qs == Approx(64.0));
    CHECK(s.record.final_ess < 64.0);
    mean_final += s.record.final_ess / static_cast<double>(pg.sets.size());
  }
  CHECK(summary(pg).rows[0].ess == Approx(mean_final).epsilon(1e-12));
}

TEST_CASE("in-process results do not depend on the number of threads", "[smc]") {
  const auto one = smc::run_pg(hmm_stepwise(), {.particles = 64, .sweeps = 3, .seed = 9, .threads = 1});
  const auto three = smc::run_pg(hmm_stepwise(), {.particles = 64, .sweeps = 3, .seed = 9, .threads = 3});
  CHECK(one.samples("z[17]") == three.samples("z[17]"));
  CHECK(one.weights() == three.weights());
  CHECK(one.log_evidence == three.log_evidence);
}

TEST_CASE("the worker pool runs every index once per run, whether its threads spin or block", "[smc]") {
  // The pool's threads watch for the next run for worker_pool::spin_seconds, then block: runs
  // back to back meet spinning threads, runs after a pause blocked ones, and a pool with more
  // threads than the machine has CPUs never spins. Each run writes its own round number into
  // the indices it covers; a chunk run twice or not at all leaves another number.
  for (const std::size_t threads : {2u, 3u, 2 * std::max(1u, std::thread::hardware_concurrency())}) {
    INFO("threads " << threads);
    smc::detail::worker_pool pool(threads);
    std::vector<std::size_t> last(64, 0), hits(64, 0);
    bool all_once = true;
    for (std::size_t round = 1; round <= 3000; ++round) {
      if (round % 500 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));  // they block
      const std::size_t n = 1 + round % 64;
      pool.run(n, [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) {
          ++hits[i];
          last[i] = round;
        }
      });
      for (std::size_t i = 0; i < n; ++i) all_once = all_once && last[i] == round;
    }
    CHECK(all_once);
    CHECK(hits[0] == 3000);  // index 0 is in every run, index 63 in every 64th
    CHECK(hits[63] == 3000 / 64);
    // An exception in a worker's chunk is rethrown by run(), and the pool works after it.
    CHECK_THROWS_WITH(pool.run(threads * 4,
                               [](std::size_t begin, std::size_t) {
                                 if (begin > 0) throw std::runtime_error("chunk failed");
                               }),
                      "chunk failed");
    std::vector<int> after(100, 0);
    pool.run(after.size(), [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) after[i] += 1;
    });
    CHECK(std::count(after.begin(), after.end(), 1) == 100);
    // Chunks differ in size by at most one, and the caller's (the one that starts at 0) is never
    // empty: with fewer indices than threads, each of the first n threads gets one.
    for (const std::size_t n : {std::size_t{2}, threads - 1, threads + 1, 3 * threads + 2}) {
      std::mutex m;
      std::vector<std::size_t> sizes;
      bool caller_has_work = false;
      pool.run(n, [&](std::size_t begin, std::size_t end) {
        std::lock_guard<std::mutex> lock(m);
        if (begin == 0) caller_has_work = end > 0;
        if (end > begin) sizes.push_back(end - begin);
      });
      INFO("n " << n);
      CHECK(caller_has_work);
      CHECK(sizes.size() == std::min(n, threads));
      CHECK(*std::max_element(sizes.begin(), sizes.end()) - *std::min_element(sizes.begin(), sizes.end()) <= 1);
    }
  }
  smc::detail::worker_pool all(0);  // threads = 0: one per CPU this process may run on
  CHECK(all.size() == tyche::samplers::detail::available_cpus());
}

TEST_CASE("summary warns when every particle predicted the same values (a generator of the program's own)", "[smc]") {
  // The mistake docs/smc.md warns about: the program draws mu from a generator in its own state,
  // which every particle copies, so every particle draws the same mu. Its estimates look
  // precise and are wrong; summary(r) must say so. The correct program is not flagged.
  struct state {
    std::mt19937_64 own{7};
    double mu = 0;
  };
  const auto own_generator = smc::stepwise(
      state{}, 2,
      [](state& s, std::size_t n, tyche::counter_rng&) {
        if (n == 0) s.mu = 1 + std::sqrt(5.0) * std::normal_distribution<double>(0, 1)(s.own);
        return smc::normal_lpdf(gaussian_data[n], s.mu, std::sqrt(2.0));
      },
      [](const state& s, smc::predictions& p) { p("mu", s.mu); });
  const auto bad = smc::run_smc(own_generator, {.particles = 200, .sweeps = 2, .seed = 3});
  CHECK(bad.particles_identical());
  std::ostringstream os;
  os << summary(bad);
  INFO(os.str());
  CHECK(os.str().find("warning: in every sweep all 200 particles predicted the same values") != std::string::npos);
  const auto good = smc::run_smc(gaussian_stepwise(), {.particles = 200, .sweeps = 2, .seed = 3});
  CHECK_FALSE(good.particles_identical());
  std::ostringstream ok;
  ok << summary(good);
  CHECK(ok.str().find("warning") == std::string::npos);
  // PIMH's summary says what its w_ess column is.
  std::ostringstream pimh;
  pimh << summary(smc::run_pimh(gaussian_stepwise(), {.particles = 50, .sweeps = 3, .seed = 3}));
  CHECK(pimh.str().find("w_ess: the effective sample size of each sweep's weights") != std::string::npos);
}

TEST_CASE("smc summary: a parameter drawn once degenerates to a few values per sweep, and the summary says so",
          "[smc][summary]") {
  // A local level with its noise scale drawn at the start: after 60 observes the 500 particles
  // share a handful of scale values (every resampling copies some, none moves them), while the
  // level, redrawn at every step, keeps hundreds. The warning names the scale only.
  struct state {
    double sigma = 0, x = 0;
  };
  static std::vector<double> y(60);
  for (std::size_t t = 0; t < y.size(); ++t) y[t] = std::sin(0.2 * static_cast<double>(t));
  const auto program = smc::stepwise(
      state{}, y.size(),
      [](state& s, std::size_t t, tyche::counter_rng& g) {
        if (t == 0) s.sigma = std::exp(smc::sample_normal(g, -1.0, 0.5));
        s.x = smc::sample_normal(g, s.x, 0.3);
        return smc::normal_lpdf(y[t], s.x, s.sigma);
      },
      [](const state& s, smc::predictions& p) {
        p("sigma", s.sigma);
        p("x_T", s.x);
      });
  const auto r = smc::run_smc(program, {.particles = 500, .sweeps = 2, .seed = 4});
  const auto sm = summary(r);
  INFO(sm.rows[0].distinct << " distinct sigma values, " << sm.rows[1].distinct << " x_T values, w_ess " << sm.rows[0].ess);
  CHECK(sm.rows[0].distinct < sm.rows[0].ess / 10);
  CHECK(sm.rows[1].distinct > sm.rows[1].ess / 10);
  REQUIRE(sm.warnings.size() == 1);
  CHECK(sm.warnings[0].find("sigma: ") == 0);
  CHECK(sm.warnings[0].find("distinct values per sweep among 500 particles") != std::string::npos);
  std::ostringstream os;
  os << sm;
  CHECK(os.str().find("warning: sigma: ") != std::string::npos);
  CHECK(os.str().find("Static parameters") != std::string::npos);
  // PIMH moves the parameter between sweeps: its summary counts, and does not warn.
  const auto pimh = summary(smc::run_pimh(program, {.particles = 500, .sweeps = 3, .seed = 4}));
  CHECK(pimh.rows[0].distinct < pimh.rows[0].ess / 10);
  CHECK(pimh.warnings.empty());
  // The whole path predicted, x[1] … x[60]: its early states share a few ancestors too, and
  // they get one warning between them, not one each (a new user's summary had dozens).
  struct path_state {
    double sigma = 0;
    std::vector<double> x;
  };
  const auto with_path = smc::stepwise(
      path_state{}, y.size(),
      [](path_state& s, std::size_t t, tyche::counter_rng& g) {
        if (t == 0) s.sigma = std::exp(smc::sample_normal(g, -1.0, 0.5));
        s.x.push_back(smc::sample_normal(g, s.x.empty() ? 0.0 : s.x.back(), 0.3));
        return smc::normal_lpdf(y[t], s.x.back(), s.sigma);
      },
      [](const path_state& s, smc::predictions& p) {
        p("sigma", s.sigma);
        // Two paths, their entries interleaved in the result's names (x[1], v[1], x[2], …).
        for (std::size_t t = 0; t < s.x.size(); ++t) {
          p("x", t + 1, s.x[t]);
          p("v", t + 1, s.sigma * s.x[t]);
        }
      });
  const auto paths = summary(smc::run_smc(with_path, {.particles = 500, .sweeps = 2, .seed = 4}));
  REQUIRE(paths.warnings.size() == 3);
  CHECK(paths.warnings[2].find("v: ") == 0);
  CHECK(paths.warnings[2].find(" of its 60 entries") != std::string::npos);
  CHECK(paths.warnings[0].find("sigma: ") == 0);
  INFO(paths.warnings[1]);
  CHECK(paths.warnings[1].find("x: ") == 0);
  CHECK(paths.warnings[1].find(" of its 60 entries have fewer than w_ess / 10 distinct values") != std::string::npos);
  CHECK(paths.warnings[1].find("(x[1] … x[") != std::string::npos);
  CHECK(paths.warnings[1].find("early state of a path") != std::string::npos);
}
