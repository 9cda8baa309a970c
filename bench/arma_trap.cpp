// bench/arma_trap.cpp — chains trapped in an ARMA(1,1) model's non-invertible region (issue 19; bash bench/run.sh
// arma_trap): examples/arma.cpp's model and 200 simulated values with theta ~ normal(0, 2)
// unconstrained, Stan's defaults (4 chains, 1000 + 1000, init uniform(-2, 2) on theta), seeds
// 1 ... N (default 60; argument 2: init_radius). Prints each chain whose mean |theta| > 1, each
// chain run again because warm-up left it stuck (nuts_config::restart_stuck_chains), and the
// counts. Stan 2.21 on the same model and data: Rscript bench/stan/arma_trap.R (docs/nuts.md).
#include <tyche/tyche.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>
std::vector<double> simulate(std::size_t n) {
  std::uint64_t x = 11;
  auto uniform = [&] { x = x * 6364136223846793005ULL + 1442695040888963407ULL; return (static_cast<double>(x >> 11) + 0.5) / 9007199254740992.0; };
  auto gaussian = [&] { return std::sqrt(-2 * std::log(uniform())) * std::cos(6.283185307179586 * uniform()); };
  std::vector<double> y(n); double before = 0.5 / (1 - 0.6), err_before = 0;
  for (std::size_t t = 0; t < n; ++t) { const double err = gaussian(); y[t] = 0.5 + 0.6 * before + 0.3 * err_before + err; before = y[t]; err_before = err; }
  return y;
}
int main(int argc, char** argv) {
  using namespace tyche;
  static const std::vector<double> y = simulate(200);
  if (argc > 1 && std::string(argv[1]) == "--json") {  // the data, for bench/stan/arma_trap.R
    std::printf("{\"T\": %zu, \"y\": [", y.size());
    for (std::size_t t = 0; t < y.size(); ++t) std::printf("%s%.17g", t ? ", " : "", y[t]);
    std::printf("]}\n");
    return 0;
  }
  static const std::vector<double> y_now(y.begin() + 1, y.end()), y_before(y.begin(), y.end() - 1);
  auto mu = normal<"mu">(0.0, 10.0);
  auto phi = normal<"phi">(0.0, 2.0);
  auto theta = normal<"theta">(0.0, 2.0);
  auto sigma = half_cauchy<"sigma">(5.0);
  auto err1 = y[0] - (mu + phi * mu);
  auto s = scan([&](const auto& state, const auto& yt, const auto& yprev) {
        auto err = yt - (mu + phi * yprev + theta * state[0]);
        return std::tuple{err, state[1] + normal_lpdf(err, 0.0, sigma)}; },
      std::tuple{err1, normal_lpdf(err1, 0.0, sigma)}, data(y_now), data(y_before));
  const auto arma = model(joint(mu, phi, theta, sigma, target(at(s, 1))));
  const int seeds = argc > 1 ? std::atoi(argv[1]) : 60;
  const double radius = argc > 2 ? std::atof(argv[2]) : 2.0;
  int trapped = 0, total = 0, restarted = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    const auto fit = nuts(arma, {.chains = 4, .seed = (std::uint64_t)seed, .init_radius = radius});
    for (int c = 0; c < 4; ++c) {
      if (fit.restarted_from[c] >= 0) {
        ++restarted;
        std::printf("seed %d chain %d: stuck after warm-up, run again from chain %d\n", seed, c + 1, fit.restarted_from[c] + 1);
      }
      double m = 0; for (int d = 0; d < fit.draws; ++d) m += std::fabs(fit.values[c][d * 4 + 2]) / fit.draws;
      ++total; if (m > 1) { ++trapped; std::printf("seed %d chain %d: mean |theta| %.3g step %.3g\n", seed, c + 1, m, fit.step_size[c]); }
    }
  }
  std::printf("trapped %d of %d (%d run again: nuts_config::restart_stuck_chains)\n", trapped, total, restarted);
}
