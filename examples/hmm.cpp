// examples/hmm.cpp — a 2-state hidden Markov model with Gaussian emissions, its states summed
// out by the forward algorithm written as a scan: the step lambda says how the log forward
// variables α move from one observation to the next, and tyche runs it over the data (its
// gradient too) without unrolling the loop. Prints the model's log density at the values the
// data were drawn from (stdout, compared by the test), then fits it with NUTS and writes the
// posterior summary to stderr (its digits depend on the machine's floating point, so the test
// does not compare them).
//
// Stan: for (t in 2:N) for (k in 1:2)
//         alpha[t, k] = log_sum_exp(alpha[t-1] + log(Gamma[:, k])) + normal_lpdf(y[t] | mu[k], sigma);
//       target += log_sum_exp(alpha[N]);
#include <tyche/tyche.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <tuple>
#include <vector>

namespace {
// 200 observations from states with means −1 and 2, scale 0.8, stay probabilities 0.9 and 0.8
// (a fixed generator, so that the data are the same everywhere).
std::vector<double> simulate(std::size_t n) {
  std::uint64_t x = 20261125;
  auto uniform = [&] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return (static_cast<double>(x >> 11) + 0.5) / 9007199254740992.0;
  };
  std::vector<double> y(n);
  int z = 0;
  for (std::size_t t = 0; t < n; ++t) {
    if (uniform() > (z == 0 ? 0.9 : 0.8)) z = 1 - z;
    const double u1 = uniform(), u2 = uniform();
    y[t] = (z == 0 ? -1.0 : 2.0) + 0.8 * std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  return y;
}
}  // namespace

// The number of observations; bench/compile_times.sh builds this file with N = 100 and 10,000 to
// show that compile time does not depend on it.
#ifndef TYCHE_EXAMPLE_HMM_N
#define TYCHE_EXAMPLE_HMM_N 200
#endif

int main() {
  using namespace tyche;
  static const std::vector<double> y = simulate(TYCHE_EXAMPLE_HMM_N);
  static const std::vector<double> y_first(y.begin(), y.begin() + 1), y_rest(y.begin() + 1, y.end());

  auto mu = ordered<"mu">(normal(0.0, 3.0), shape<2>);  // the state means, increasing
  auto stay = beta<"stay">(2.0, 2.0, shape<2>);          // p(z_t = k | z_t-1 = k)
  auto sigma = half_normal<"sigma">(2.0);

  // log Γ[i][j] = log p(z_t = j | z_t-1 = i), from the stay probabilities.
  auto l00 = log(stay[0]), l11 = log(stay[1]);
  auto l01 = log1m(stay[0]), l10 = log1m(stay[1]);
  // α at the first observation (equal initial probabilities), then one step per observation.
  auto init = std::tuple{std::log(0.5) + normal_lpdf(data(y_first), mu[0], sigma),
                         std::log(0.5) + normal_lpdf(data(y_first), mu[1], sigma)};
  auto alpha = scan(
      [&](const auto& a, const auto& yt) {
        return std::tuple{log_sum_exp(a[0] + l00, a[1] + l10) + normal_lpdf(yt, mu[0], sigma),
                          log_sum_exp(a[0] + l01, a[1] + l11) + normal_lpdf(yt, mu[1], sigma)};
      },
      init, data(y_rest));
  const auto hmm = model(joint(mu, stay, sigma, target(log_sum_exp(alpha))));

  std::printf("dimension: %zu\n", hmm.dim());
  const std::vector<double> truth{-1.0, 2.0, 0.9, 0.8, 0.8};  // mu, stay, sigma
  std::printf("log density at the generating values: %.6f\n", hmm.log_prob(hmm.unconstrain(truth)));
  const auto fit = nuts(hmm, {.chains = 4, .warmup = 1000, .draws = 1000, .seed = 7});
  std::cerr << summary(fit);
}
