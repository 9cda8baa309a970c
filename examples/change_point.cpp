// examples/change_point.cpp — a change point with the discrete change summed out: counts y_t,
// rate e before the change and l from it on, the change s uniform over the T periods. The
// marginal likelihood log Σ_s p(y, s | e, l) is a free term of the log density (target), built
// from per-s sums of the data as one elementwise vector and log_sum_exp. Prints the log density
// at a point (stdout, compared by the test), then the NUTS summary of e and l (stderr).
//
// Stan: vector[T] lp = rep_vector(-log(T), T);
//       for (s in 1:T) for (t in 1:T) lp[s] += poisson_lpmf(y[t] | t < s ? e : l);
//       target += log_sum_exp(lp);
#include <tyche/tyche.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <vector>

int main() {
  using namespace tyche;
  // Counts of 60 periods (rate 3 for the first 25, then rate 1).
  static const std::vector<double> y{5, 3, 1, 3, 5, 1, 1, 0, 5, 6, 2, 2, 4, 4, 1, 2, 3, 1, 1, 2,
                                     2, 2, 3, 3, 4, 0, 1, 0, 0, 0, 1, 1, 2, 2, 0, 2, 0, 2, 3, 0,
                                     0, 1, 1, 2, 0, 1, 0, 2, 0, 1, 0, 0, 1, 0, 1, 0, 0, 4, 0, 0};
  // For each change point s (0-based: periods before s are early), the sums of the counts and
  // the numbers of periods on each side; c = −log T − Σ log y!.
  static std::vector<double> early_sum, early_n, late_sum, late_n;
  double total = 0, c = -std::log(static_cast<double>(y.size()));
  for (double v : y) {
    total += v;
    c -= std::lgamma(v + 1);
  }
  double before = 0;
  for (std::size_t s = 0; s < y.size(); ++s) {
    early_sum.push_back(before);
    early_n.push_back(static_cast<double>(s));
    late_sum.push_back(total - before);
    late_n.push_back(static_cast<double>(y.size() - s));
    before += y[s];
  }

  auto e = exponential<"e">(1.0);
  auto l = exponential<"l">(1.0);
  // lp[s] = log p(y, s | e, l), elementwise over s.
  auto lp = data(early_sum) * log(e) - data(early_n) * e + data(late_sum) * log(l) - data(late_n) * l;
  const auto m = model(joint(e, l, target(log_sum_exp(lp) + c)));

  std::printf("dimension: %zu\n", m.dim());
  const std::vector<double> at{3.0, 1.0};
  std::printf("log density at e = 3, l = 1: %.6f\n", m.log_prob(m.unconstrain(at)));
  const auto fit = nuts(m, {.chains = 4, .warmup = 1000, .draws = 1000, .seed = 3});
  std::cerr << summary(fit);
}
