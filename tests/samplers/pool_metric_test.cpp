// Cross-chain pooling of warm-up's metric (nuts_config::pool_metric; samplers/nuts/adaptation.hpp,
// metric_adaptation::pool; chain.hpp; cpu_executor.hpp, run_program_counter): the merged estimate
// is the one-sample estimate of all the chains' window draws, one chain pooled is the chain
// unpooled bit for bit, every chain ends warm-up with the same metric, the draws do not depend
// on the thread count, a chain that fails does not leave the others waiting, and the settings
// that cannot pool are errors. (The shared posteriors with a pooled metric: warmup_options_test.)
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

namespace {

using Catch::Matchers::Contains;

// The moments of values[k][i] (k: draw) as one sample: mean and Σ(x − x̄)(y − ȳ) of coordinates i, j.
double sum_of_products(const std::vector<std::vector<double>>& values, std::size_t i, std::size_t j) {
  double mi = 0, mj = 0;
  for (const auto& v : values) {
    mi += v[i];
    mj += v[j];
  }
  mi /= static_cast<double>(values.size());
  mj /= static_cast<double>(values.size());
  double s = 0;
  for (const auto& v : values) s += (v[i] - mi) * (v[j] - mj);
  return s;
}

struct three_d {
  std::vector<double> y{0.5, -0.3, 1.2, 0.8, -1.1, 0.1, 0.4};
};
const three_d observations{};

auto small_model() {
  using namespace tyche;
  return model([](const three_d& d) {
    auto mu = normal<"mu">(0.0, 10.0);
    auto sigma = half_normal<"sigma">(1.0);
    auto z = normal<"z">(1.0, 3.0);
    return joint(mu, sigma, z, normal(mu, sigma).observe(data(d.y)));
  }, observations);
}

}  // namespace

TEST_CASE("metric_adaptation::pool: the merged windows give the metric of all the chains' draws as one sample",
          "[samplers][warmup][pool]") {
  using namespace tyche::samplers;
  constexpr std::size_t d = 2, chains = 3;
  std::mt19937_64 gen(11);
  std::normal_distribution<double> normal;
  // Each chain's draws and gradients over warm-up (1000 iterations): the chains differ in location
  // and scale, so between-chain differences count in the merged variance.
  auto draw = [&](std::size_t c, std::size_t i) { return (1.0 + static_cast<double>(c)) * normal(gen) + 2.0 * c + i; };
  struct setting {
    const char* name;
    bool gradients, nutpie, dense, low_rank;
    int window_end;  // the iteration whose learn() closes the first window (pool_pending)
    int first;       // the first draw of that window
  };
  for (const setting s : {setting{"draws", false, false, false, false, 99, 75},
                          setting{"gradients", true, false, false, false, 99, 75},
                          setting{"dense", false, false, true, false, 99, 75},
                          setting{"nutpie", true, true, false, false, 9, 0},
                          setting{"low_rank", false, false, true, true, 99, 75}}) {
    INFO(s.name);
    adaptation_config c;
    c.gradients = s.gradients;
    c.nutpie_schedule = s.nutpie;
    c.low_rank = s.low_rank;
    c.pooled = true;
    std::vector<metric_adaptation<double>> estimates;
    std::vector<std::vector<double>> buffers(chains);
    for (std::size_t k = 0; k < chains; ++k) estimates.emplace_back(d, 1000, c, s.dense);
    for (std::size_t k = 0; k < chains; ++k) {
      buffers[k].resize(estimates[k].buffer_size());
      estimates[k].bind(buffers[k].data());
    }
    const std::size_t size = estimates[0].metric_size();  // low rank: the factors
    std::vector<std::vector<double>> metrics(chains, std::vector<double>(size, 1.0));
    if (s.low_rank)
      for (auto& m : metrics) low_rank_identity(m.data(), d, estimates[0].max_rank());
    std::vector<std::vector<double>> window_draws, window_grads;
    std::vector<std::vector<double>> chain_draws(chains), chain_grads(chains);  // low rank: chain by chain
    for (int t = 0; t <= s.window_end; ++t)
      for (std::size_t k = 0; k < chains; ++k) {
        std::vector<double> q(d), g(d);
        for (std::size_t i = 0; i < d; ++i) {
          q[i] = draw(k, i);
          g[i] = -q[i] / (1.0 + static_cast<double>(i)) + 0.1 * normal(gen);
        }
        const bool changed = estimates[k].learn(metrics[k].data(), q.data(), g.data());
        if (!s.nutpie || t == s.window_end) CHECK_FALSE(changed);  // nutpie: its foreground's metric before
        CHECK(estimates[k].pool_pending() == (t == s.window_end));
        if (t >= s.first) {
          window_draws.push_back(q);
          window_grads.push_back(g);
          chain_draws[k].insert(chain_draws[k].end(), q.begin(), q.end());
          chain_grads[k].insert(chain_grads[k].end(), g.begin(), g.end());
        }
      }
    std::vector<metric_adaptation<double>*> all;
    std::vector<double*> outs;
    for (std::size_t k = 0; k < chains; ++k) {
      all.push_back(&estimates[k]);
      outs.push_back(metrics[k].data());
    }
    std::vector<double> scratch(metric_adaptation<double>::pool_scratch_size(all.data(), all.size()));
    metric_adaptation<double>::pool(all.data(), all.size(), outs.data(), scratch.data());
    const double n = static_cast<double>(window_draws.size());
    REQUIRE(n == chains * static_cast<double>(s.window_end - s.first + 1));
    if (s.low_rank) {
      // The estimate of every chain's window, chain after chain, as one sample of n draws: the
      // metric and its factors, bit for bit, in every chain.
      std::vector<double> x, g;
      for (std::size_t k = 0; k < chains; ++k) {
        x.insert(x.end(), chain_draws[k].begin(), chain_draws[k].end());
        g.insert(g.end(), chain_grads[k].begin(), chain_grads[k].end());
      }
      const std::size_t rows = window_draws.size();
      // (kmax: every chain's windows pooled, min(d, 2 × chains × the window draws) = d)
      CHECK(estimates[0].max_rank() == d);
      std::vector<double> work(low_rank_workspace(d, rows)), expected(low_rank_factors_size(d, d));
      low_rank_identity(expected.data(), d, d);
      low_rank_inverse_metric(x.data(), g.data(), rows, d, expected.data(), work.data(), low_rank_settings{});
      for (std::size_t k = 0; k < chains; ++k) {
        INFO("chain " << k);
        CHECK(metrics[k] == expected);
        CHECK_FALSE(estimates[k].pool_pending());
      }
      // The metric differs from each chain's own window's.
      std::vector<double> own(low_rank_factors_size(d, d)), x0 = chain_draws[0], g0 = chain_grads[0];
      low_rank_identity(own.data(), d, d);
      std::vector<double> work0(low_rank_workspace(d, rows / chains));
      low_rank_inverse_metric(x0.data(), g0.data(), rows / chains, d, own.data(), work0.data());
      CHECK(own != expected);
      continue;
    }
    for (std::size_t i = 0; i < d; ++i)
      for (std::size_t j = 0; j < d; ++j) {
        if (!s.dense && i != j) continue;
        double expected = 0;
        const double var = sum_of_products(window_draws, i, j) / (n - 1);
        if (s.gradients) expected = std::sqrt(var / (sum_of_products(window_grads, i, i) / (n - 1)));
        else expected = n / (n + 5) * var + (i == j ? 1e-3 * 5 / (n + 5) : 0.0);  // Stan's regularisation
        for (std::size_t k = 0; k < chains; ++k) {
          INFO("chain " << k << ", element " << i << ", " << j);
          CHECK(metrics[k][s.dense ? i * d + j : i] == Approx(expected).epsilon(1e-12));
          CHECK_FALSE(estimates[k].pool_pending());
        }
      }
  }
}

TEST_CASE("nuts: one chain pooled is the chain unpooled, bit for bit", "[samplers][warmup][pool]") {
  using namespace tyche;
  const auto m = small_model();
  for (const auto estimator : {samplers::metric_estimator::draws, samplers::metric_estimator::draws_and_gradients,
                               samplers::metric_estimator::nutpie}) {
    for (const auto metric :
         {samplers::metric_kind::diagonal, samplers::metric_kind::dense, samplers::metric_kind::low_rank}) {
      if (metric != samplers::metric_kind::diagonal && estimator != samplers::metric_estimator::draws) continue;
      nuts_config cfg{.chains = 1, .warmup = 300, .draws = 100, .seed = 17};
      cfg.metric = metric;
      cfg.metric_estimator = estimator;
      const nuts_fit alone = nuts(m, cfg);
      cfg.pool_metric = true;
      const nuts_fit pooled = nuts(m, cfg);
      INFO("estimator " << static_cast<int>(estimator) << ", metric " << static_cast<int>(metric));
      CHECK(pooled.values == alone.values);
      CHECK(pooled.step_size == alone.step_size);
      CHECK(pooled.inv_metric == alone.inv_metric);
      CHECK(pooled.gradient_evaluations == alone.gradient_evaluations);
    }
  }
}

TEST_CASE("nuts: pooled chains share one metric, and their draws do not depend on the threads",
          "[samplers][warmup][pool]") {
  using namespace tyche;
  const auto m = small_model();
  for (const auto estimator : {samplers::metric_estimator::draws, samplers::metric_estimator::nutpie}) {
    INFO("estimator " << static_cast<int>(estimator));
    nuts_config cfg{.chains = 4, .warmup = 300, .draws = 200, .seed = 23};
    cfg.metric_estimator = estimator;
    cfg.executor = cpu{.threads = 1, .lanes = 1};
    const nuts_fit own = nuts(m, cfg);
    CHECK(own.inv_metric[0] != own.inv_metric[1]);  // unpooled: each chain its own estimate
    cfg.pool_metric = true;
    const nuts_fit one = nuts(m, cfg);
    // Stan's windows: the last window's merged estimate is every chain's metric. nutpie's
    // schedule: each chain's foreground is the merged one at a switch, then adds its own draws.
    const bool shared = estimator == samplers::metric_estimator::draws;
    for (int c = 1; c < 4; ++c) CHECK((one.inv_metric[c] == one.inv_metric[0]) == shared);
    CHECK(one.values != own.values);
    cfg.executor = cpu{.threads = 2, .lanes = 1};
    const nuts_fit two = nuts(m, cfg);
    CHECK(two.values == one.values);
    CHECK(two.inv_metric == one.inv_metric);
    CHECK(two.gradient_evaluations == one.gradient_evaluations);
    // Chains in SIMD lanes: w + 3 chains in blocks of the full width w on one and on two threads
    // (two blocks, so two threads hold chains; more lanes than chains, so lanes idle while the
    // others catch up, and a chain may come back to a lane that held it a window before), bit for
    // bit.
    if constexpr (simd_lane_width > 1) {
      cfg.chains = simd_lane_width + 3;
      cfg.executor = cpu{.threads = 1, .lanes = simd_lane_width};
      const nuts_fit lanes_one = nuts(m, cfg);
      for (int c = 1; c < cfg.chains; ++c) CHECK((lanes_one.inv_metric[c] == lanes_one.inv_metric[0]) == shared);
      CHECK(lanes_one.values[static_cast<std::size_t>(cfg.chains) - 1].size() == 200 * lanes_one.dim());
      cfg.executor = cpu{.threads = 2, .lanes = simd_lane_width};
      const nuts_fit lanes_two = nuts(m, cfg);
      CHECK(lanes_two.threads == 2);
      CHECK(lanes_two.values == lanes_one.values);
      CHECK(lanes_two.inv_metric == lanes_one.inv_metric);
    }
  }
}

TEST_CASE("nuts: pooled low-rank chains share one metric and its factors, whatever the threads",
          "[samplers][warmup][pool][low_rank]") {
  using namespace tyche;
  const auto m = small_model();
  nuts_config cfg{.chains = 4, .warmup = 300, .draws = 200, .seed = 29};
  cfg.metric = samplers::metric_kind::low_rank;
  cfg.executor = cpu{.threads = 1, .lanes = 1};
  const nuts_fit own = nuts(m, cfg);
  CHECK(own.inv_metric[0] != own.inv_metric[1]);
  cfg.pool_metric = true;
  const nuts_fit one = nuts(m, cfg);
  for (int c = 1; c < 4; ++c) CHECK(one.inv_metric[c] == one.inv_metric[0]);
  CHECK(one.values != own.values);
  cfg.executor = cpu{.threads = 2, .lanes = 1};
  const nuts_fit two = nuts(m, cfg);
  CHECK(two.values == one.values);
  CHECK(two.inv_metric == one.inv_metric);
  // The posterior of mu, sigma and z (z's prior is N(1, 3²), apart from the data): z within 4
  // MCSE of its mean, its sd within 10 %.
  const auto z = one.parameter(2);
  double mean = 0, n = 0, var = 0;
  for (const auto& ch : z)
    for (double v : ch) mean += v, n += 1;
  mean /= n;
  for (const auto& ch : z)
    for (double v : ch) var += (v - mean) * (v - mean) / (n - 1);
  CHECK(std::fabs(mean - 1.0) < 4 * mcse_mean(z));
  CHECK(std::fabs(std::sqrt(var) / 3.0 - 1.0) < 0.1);
}

TEST_CASE("nuts: a chain that fails does not leave the pooled chains waiting", "[samplers][warmup][pool]") {
  using namespace tyche;
  const auto m = small_model();
  nuts_config cfg{.chains = 3, .warmup = 200, .draws = 50, .seed = 5};
  cfg.pool_metric = true;
  // Chain 2 starts where sigma is negative: it fails before its first window; the others pool
  // among themselves and finish, then the run reports chain 2's error.
  cfg.init = {{0.0, 1.0, 0.0}, {0.0, -1.0, 0.0}, {0.0, 1.0, 0.0}};
  for (const int threads : {1, 2}) {
    cfg.executor = cpu{.threads = threads, .lanes = 1};
    CHECK_THROWS_WITH(nuts(m, cfg), Contains("chain 2"));
  }
  // Chain 2 fails right after its first window (iteration 100: the window closed at 99), when
  // the others may already wait for it at that pool.
  cfg.init.clear();
  cfg.refresh = 100;
  cfg.on_progress = [](const nuts_progress& p) {
    if (p.chain == 2 && p.iteration == 100) throw std::runtime_error("chain 2 stops here");
  };
  for (const int threads : {1, 2}) {
    cfg.executor = cpu{.threads = threads, .lanes = 1};
    CHECK_THROWS_WITH(nuts(m, cfg), Contains("chain 2 stops here"));
  }
}

TEST_CASE("nuts: the settings that cannot pool are errors naming pool_metric", "[samplers][warmup][pool]") {
  using namespace tyche;
  const auto m = small_model();
  nuts_config cfg{.chains = 2, .warmup = 100, .draws = 10};
  cfg.pool_metric = true;
  cfg.executor = cpu{.schedule = samplers::lane_schedule::trajectory_sync};
  CHECK_THROWS_WITH(nuts(m, cfg), Contains("pool_metric = true needs the CPU executor's program_counter schedule"));
  cfg.executor = cuda{.emulate = true};
  CHECK_THROWS_WITH(nuts(m, cfg), Contains("pool_metric = true needs the CPU executor (tyche::cpu)"));
}
