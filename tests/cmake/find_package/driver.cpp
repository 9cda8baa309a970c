// tyche::separate_driver from an installed tyche (tests/cmake/find_package): this file is
// compiled with TYCHE_SEPARATE_DRIVER, so it does not compile the NUTS driver; the target's extra
// source (share/tyche/tyche_nuts_driver.cpp) does. Without that source the program would not link.
#include <tyche/tyche.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

#if !defined(TYCHE_SEPARATE_DRIVER)
#error "tyche::separate_driver must define TYCHE_SEPARATE_DRIVER for the files of the target that links it"
#endif

int main() {
  using namespace tyche;
  const std::vector<double> y{1.0, 2.0, 4.0};
  auto mu = normal<"mu">(0.0, 10.0);
  const auto m = model(joint(mu, normal(mu, 1.0).observe(data(y))));
  const nuts_fit fit = nuts(m, {.chains = 2, .warmup = 200, .draws = 400, .seed = 3});
  // The posterior of mu: normal with mean 7/3 / (1 + 1/300) ~ 2.3256 and sd 1/sqrt(3.01) ~ 0.576;
  // 800 draws: the mean within 0.25 (about 6 Monte Carlo standard errors at ESS >= 200).
  double mean = 0;
  for (const auto& chain : fit.values)
    for (const double v : chain) mean += v / 800.0;
  if (fit.values.size() != 2 || fit.values[0].size() != 400 || !(std::fabs(mean - 2.3256) < 0.25)) {
    std::fprintf(stderr, "tyche consumer (separate driver): %zu chains, mean %.6g\n", fit.values.size(), mean);
    return 1;
  }
  return 0;
}
