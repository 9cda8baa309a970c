// tests/support/arma.hpp — the ARMA(1,1) model whose chains can be trapped in its non-invertible
// region (issue 19): examples/arma.cpp's model with theta ~ normal(0, 2) left unconstrained, and
// the 200 values examples/arma.cpp simulates. Shared by tests/samplers/warmup_options_test.cpp
// and bench/arma_trap.cpp.
#pragma once
#include <tyche/tyche.hpp>

#include <cmath>
#include <cstdint>
#include <tuple>
#include <vector>

namespace tyche_test {

/// n values of an ARMA(1,1) with mu = 0.5, phi = 0.6, theta = 0.3, sigma = 1 (a fixed
/// generator: examples/arma.cpp's series).
inline std::vector<double> arma_series(std::size_t n = 200) {
  std::uint64_t x = 11;
  auto uniform = [&] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return (static_cast<double>(x >> 11) + 0.5) / 9007199254740992.0;
  };
  auto gaussian = [&] { return std::sqrt(-2 * std::log(uniform())) * std::cos(6.283185307179586 * uniform()); };
  std::vector<double> y(n);
  double before = 0.5 / (1 - 0.6), err_before = 0;
  for (double& v : y) {
    const double err = gaussian();
    v = 0.5 + 0.6 * before + 0.3 * err_before + err;
    before = v;
    err_before = err;
  }
  return y;
}

/// The series y_t (t ≥ 2) and y_{t−1} the model's scan reads; y must outlive both.
struct arma_data {
  std::vector<double> y, now, before;
  explicit arma_data(std::vector<double> series)
      : y(std::move(series)), now(y.begin() + 1, y.end()), before(y.begin(), y.end() - 1) {}
};

/// ARMA(1,1) with mu ~ normal(0, 10), phi, theta ~ normal(0, 2) (unconstrained: |theta| > 1
/// makes the error recursion explode), sigma ~ half_cauchy(5); the errors by a scan over
/// (y_t, y_{t−1}) whose state is the last error and the log-likelihood so far. d must outlive
/// the model.
inline auto arma_trap_model(const arma_data& d) {
  using namespace tyche;
  auto mu = normal<"mu">(0.0, 10.0);
  auto phi = normal<"phi">(0.0, 2.0);
  auto theta = normal<"theta">(0.0, 2.0);
  auto sigma = half_cauchy<"sigma">(5.0);
  auto err1 = d.y[0] - (mu + phi * mu);
  auto s = scan(
      [&](const auto& state, const auto& yt, const auto& yprev) {
        auto err = yt - (mu + phi * yprev + theta * state[0]);
        return std::tuple{err, state[1] + normal_lpdf(err, 0.0, sigma)};
      },
      std::tuple{err1, normal_lpdf(err1, 0.0, sigma)}, data(d.now), data(d.before));
  return model(joint(mu, phi, theta, sigma, target(at(s, 1))));
}

}  // namespace tyche_test
