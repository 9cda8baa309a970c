// examples/local_level.cpp — a local-level (random walk plus noise) model with its latent level
// integrated out by a Kalman filter written as a scan: the state carries the level's predicted
// mean and variance and the log-likelihood so far, and one step observes y_t, updates and
// predicts. Prints the model's log density at the values the data were drawn from (stdout,
// compared by the test), then fits q and r with NUTS and writes the summary to stderr.
//
// Stan (the same filter): for (t in 1:N) { F = P + r^2; v = y[t] - m; ll += normal_lpdf(v | 0, sqrt(F));
//                                           m += P / F * v; P = P * r^2 / F + q^2; }
//                         target += ll;
#include <tyche/tyche.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <tuple>
#include <vector>

namespace {
// 150 observations of a level that moves by normal(0, 0.3) per step, seen with normal(0, 0.8)
// noise (a fixed generator, so that the data are the same everywhere).
std::vector<double> simulate(std::size_t n) {
  std::uint64_t x = 20261126;
  auto uniform = [&] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return (static_cast<double>(x >> 11) + 0.5) / 9007199254740992.0;
  };
  auto gaussian = [&] { return std::sqrt(-2 * std::log(uniform())) * std::cos(6.283185307179586 * uniform()); };
  std::vector<double> y(n);
  double level = 2.0;
  for (std::size_t t = 0; t < n; ++t) {
    y[t] = level + 0.8 * gaussian();
    level += 0.3 * gaussian();
  }
  return y;
}
}  // namespace

int main() {
  using namespace tyche;
  static const std::vector<double> y = simulate(150);
  constexpr double half_log_two_pi = 0.91893853320467274178;

  auto q = half_normal<"q">(1.0);  // the level's step scale
  auto r = half_normal<"r">(1.0);  // the observation noise
  // State: the level's mean and variance given y_1 … y_{t-1}, and the log-likelihood so far.
  auto filtered = scan(
      [&](const auto& s, const auto& yt) {
        auto F = assume_positive(s[1] + square(r));  // the innovation's variance
        auto v = yt - s[0];                           // the innovation
        return std::tuple{s[0] + s[1] / F * v,        // the next level's mean
                          s[1] * square(r) / F + square(q),
                          s[2] - 0.5 * log(F) - 0.5 * square(v) / F - half_log_two_pi};
      },
      std::tuple{0.0, 10.0, 0.0}, data(y));  // a diffuse start: level ~ normal(0, sqrt(10))
  const auto local_level = model(joint(q, r, target(at(filtered, 2))));

  std::printf("dimension: %zu\n", local_level.dim());
  const std::vector<double> truth{0.3, 0.8};
  std::printf("log density at q = 0.3, r = 0.8: %.6f\n", local_level.log_prob(local_level.unconstrain(truth)));
  const auto fit = nuts(local_level, {.chains = 4, .warmup = 1000, .draws = 1000, .seed = 11});
  std::cerr << summary(fit);
}
