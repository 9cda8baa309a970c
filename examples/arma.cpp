// examples/arma.cpp — ARMA(1,1): y_t = mu + phi·y_{t-1} + theta·err_{t-1} + err_t, the errors
// computed by a recursion written as a scan over two sequences (y_t and y_{t-1}); the state is
// the last error and the log-likelihood so far. Stan's arma11 (posteriordb), with theta's
// prior uniform on (-1, 1) where arma11 truncates normal(0, 2) to it. Prints the log density at a point (stdout, compared by the test), then the
// NUTS summary (stderr).
//
// Stan: err[1] = y[1] - (mu + phi * mu);
//       for (t in 2:T) err[t] = y[t] - (mu + phi * y[t-1] + theta * err[t-1]);
//       err ~ normal(0, sigma);
#include <tyche/tyche.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <tuple>
#include <vector>

namespace {
// 200 values of an ARMA(1,1) with mu = 0.5, phi = 0.6, theta = 0.3, sigma = 1 (fixed generator).
std::vector<double> simulate(std::size_t n) {
  std::uint64_t x = 11;
  auto uniform = [&] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return (static_cast<double>(x >> 11) + 0.5) / 9007199254740992.0;
  };
  auto gaussian = [&] { return std::sqrt(-2 * std::log(uniform())) * std::cos(6.283185307179586 * uniform()); };
  std::vector<double> y(n);
  double before = 0.5 / (1 - 0.6), err_before = 0;
  for (std::size_t t = 0; t < n; ++t) {
    const double err = gaussian();
    y[t] = 0.5 + 0.6 * before + 0.3 * err_before + err;
    before = y[t];
    err_before = err;
  }
  return y;
}
}  // namespace

int main() {
  using namespace tyche;
  static const std::vector<double> y = simulate(200);
  static const std::vector<double> y_now(y.begin() + 1, y.end()), y_before(y.begin(), y.end() - 1);

  auto mu = normal<"mu">(0.0, 10.0);
  auto phi = normal<"phi">(0.0, 2.0);
  auto theta = uniform<"theta">(-1.0, 1.0);  // invertible moving average
  auto sigma = half_cauchy<"sigma">(5.0);

  auto err1 = y[0] - (mu + phi * mu);
  auto s = scan(
      [&](const auto& state, const auto& yt, const auto& yprev) {
        auto err = yt - (mu + phi * yprev + theta * state[0]);
        return std::tuple{err, state[1] + normal_lpdf(err, 0.0, sigma)};
      },
      std::tuple{err1, normal_lpdf(err1, 0.0, sigma)}, data(y_now), data(y_before));
  const auto arma = model(joint(mu, phi, theta, sigma, target(at(s, 1))));

  std::printf("dimension: %zu\n", arma.dim());
  const std::vector<double> truth{0.5, 0.6, 0.3, 1.0};
  std::printf("log density at mu = 0.5, phi = 0.6, theta = 0.3, sigma = 1: %.6f\n",
              arma.log_prob(arma.unconstrain(truth)));
  const auto fit = nuts(arma, {.chains = 4, .warmup = 1000, .draws = 1000, .seed = 5});
  std::cerr << summary(fit);
}
