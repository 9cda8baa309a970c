// A build without the SIMD backend (tyche::tyche, no TYCHE_USE_XSIMD): every other test binary
// links tyche::simd, so this one is where one chain's loops over observations run one element
// at a time (observation_batch_t<double> is double) and where nuts() has one lane. It is also
// the test binary built header-only (no separate driver), where tyche::cuda{.emulate = true} is
// not compiled unless TYCHE_DEVICE_EMULATION is defined, nor the CPU executor's comparison modes
// without TYCHE_CPU_COMPARISON_MODES (config.hpp).
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

using namespace tyche;

static_assert(!TYCHE_HAS_XSIMD, "tests/headers/without_simd_test.cpp must be built without xsimd");
static_assert(std::is_same_v<detail::observation_batch_t<double>, double>);
static_assert(!TYCHE_DEVICE_EMULATION, "tests/headers/without_simd_test.cpp is built header-only, without the macro");
static_assert(!TYCHE_CPU_COMPARISON_MODES, "tests/headers/without_simd_test.cpp is built header-only, without the macro");

TEST_CASE("without SIMD: loops over observations and a streamed matvec agree with plain loops",
          "[headers][without_simd]") {
  std::mt19937_64 rng(4);
  std::normal_distribution<double> n01;
  constexpr std::size_t rows = 13, cols = 5;
  std::vector<double> x(rows * cols), y(rows);
  for (auto& v : x) v = n01(rng);
  for (std::size_t r = 0; r < rows; ++r) y[r] = double(r % 2);
  vector_param<"b", cols> b;
  param<"a"> a;
  const auto f = compile(sum(log1p(exp(a + matvec(matrix(x.data(), rows, cols), b))) - data(y) * a), a, b);
  CHECK(f.workspace_size() == 0);  // the matvec is streamed
  const std::vector<double> theta{0.3, 0.1, -0.2, 0.4, 0.05, -0.3};
  double value = 0;
  std::vector<double> g(cols + 1, 0.0);
  for (std::size_t r = 0; r < rows; ++r) {
    double eta = theta[0];
    for (std::size_t c = 0; c < cols; ++c) eta += x[r * cols + c] * theta[1 + c];
    value += std::log1p(std::exp(eta)) - y[r] * theta[0];
    const double s = 1 / (1 + std::exp(-eta));
    g[0] += s - y[r];
    for (std::size_t c = 0; c < cols; ++c) g[1 + c] += s * x[r * cols + c];
  }
  std::vector<double> gt(cols + 1), ws(f.workspace_size());
  const double v = f.value_and_gradient(std::span<const double>(theta), std::span<double>(gt),
                                        std::span<double>(ws));
  CHECK(v == Approx(value).epsilon(1e-13));
  for (std::size_t k = 0; k <= cols; ++k) CHECK(gt[k] == Approx(g[k]).epsilon(1e-12).margin(1e-14));
}

TEST_CASE("without SIMD: nuts() refuses lanes > 1 and samples every chain with lanes 0 and 1",
          "[headers][without_simd]") {
  const auto mu = normal<"mu">(0.0, 1.0);
  const auto m = model(joint(mu));
  nuts_config cfg{.chains = 2, .warmup = 50, .draws = 20, .seed = 1, .executor = cpu{.threads = 1}};
  std::get<cpu>(cfg.executor).lanes = 2;
  CHECK_THROWS_WITH(nuts(m, cfg), Catch::Contains("lanes = 2") && Catch::Contains("SIMD backend"));
  for (int lanes : {0, 1}) {
    std::get<cpu>(cfg.executor).lanes = lanes;
    const auto fit = nuts(m, cfg);
    CHECK(fit.lanes == 1);
    REQUIRE(fit.values.size() == 2);
    for (const auto& chain : fit.values) CHECK(chain.size() == 20);
    for (double s : fit.step_size) CHECK(s > 0);
  }
}

TEST_CASE("header-only without TYCHE_DEVICE_EMULATION: cuda{.emulate = true} says how to have it, cuda{} needs nvcc",
          "[headers][without_simd]") {
  const auto mu = normal<"mu">(0.0, 1.0);
  const auto m = model(joint(mu));
  const nuts_config cfg{.chains = 2, .warmup = 50, .draws = 20, .seed = 1, .executor = cuda{.emulate = true}};
  CHECK_THROWS_AS(nuts(m, cfg), std::invalid_argument);
  CHECK_THROWS_WITH(nuts(m, cfg), Catch::Contains("emulate = true") && Catch::Contains("TYCHE_DEVICE_EMULATION") &&
                                      Catch::Contains("tyche::separate_driver"));
  // The GPU itself, from a host compiler's translation unit (the same model-independent error
  // function: run_nuts_cuda<Model> is not instantiated here).
  const nuts_config gpu{.chains = 2, .warmup = 50, .draws = 20, .seed = 1, .executor = cuda{}};
  CHECK_THROWS_WITH(nuts(m, gpu), Catch::Contains("compiled by nvcc") && Catch::Contains("host compiler") &&
                                      Catch::Contains("emulate = true"));
}

TEST_CASE("header-only without TYCHE_CPU_COMPARISON_MODES: trajectory_sync and lane_kernel = batch say how to have them",
          "[headers][without_simd]") {
  const auto mu = normal<"mu">(0.0, 1.0);
  const auto m = model(joint(mu));
  nuts_config cfg{.chains = 2, .warmup = 50, .draws = 20, .seed = 1};
  cfg.executor = cpu{.threads = 1, .schedule = samplers::lane_schedule::trajectory_sync};
  CHECK_THROWS_AS(nuts(m, cfg), std::invalid_argument);
  CHECK_THROWS_WITH(nuts(m, cfg), Catch::Contains("cpu::schedule = trajectory_sync") &&
                                      Catch::Contains("TYCHE_CPU_COMPARISON_MODES") &&
                                      Catch::Contains("tyche::separate_driver"));
  cfg.executor = cpu{.threads = 1, .lane_kernel = cpu_lane_kernel::batch};
  CHECK_THROWS_WITH(nuts(m, cfg), Catch::Contains("cpu::lane_kernel = batch") &&
                                      Catch::Contains("TYCHE_CPU_COMPARISON_MODES"));
  cfg.executor = cpu{.threads = 1};  // the defaults run
  const auto fit = nuts(m, cfg);
  CHECK(fit.values.size() == 2);
}
