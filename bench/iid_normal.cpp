// bench/iid_normal.cpp — the gradient of an iid normal likelihood without covariates,
// normal(mu, sigma).observe(data(y)), against n: partial evaluation reduces Σ(y − μ)² to
// S + n·(ȳ − μ)² (compile/reduce_sum.hpp), so the time should not grow with n; compile_without_
// rewrites() gives the loop over the observations for comparison (bash bench/run.sh iid_normal).
// Prints CSV: n,data_values,reduced_ns,loop_ns (median of 5 timings of 2,000 gradients each).
#include <tyche/tyche.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace {

template <class Program>
double ns_per_gradient(const Program& p, std::vector<double> theta) {
  std::vector<double> grad(theta.size());
  std::vector<double> timings;
  double sink = 0;
  for (int rep = 0; rep < 5; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 2000; ++i) {
      theta[0] += 1e-12;
      sink += p.value_and_gradient(theta, grad);
    }
    timings.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() / 2000);
  }
  if (sink == 0.123) std::puts("");  // keep the work
  std::sort(timings.begin(), timings.end());
  return timings[2];
}

}  // namespace

int main() {
  using namespace tyche;
  std::printf("n,data_values,reduced_ns,loop_ns\n");
  for (std::size_t n : {100, 1000, 10000, 100000}) {
    std::vector<double> y(n);
    for (std::size_t i = 0; i < n; ++i) y[i] = 50.0 + static_cast<double>(i % 17) * 0.25;
    auto mu = normal<"mu">(0.0, 10.0);
    auto sigma = half_normal<"sigma">(5.0);
    const auto m = model(joint(mu, sigma, normal(mu, sigma).observe(data(y))));
    param<"mu"> p_mu;
    param<"sigma"> p_sigma;
    const auto lp = -sum(lit<1, 2> * square((data(y) - p_mu) / p_sigma)) - static_cast<double>(n) * log(p_sigma);
    const auto loop = compile_without_rewrites(lp, p_mu, p_sigma);
    const auto reduced = compile(lp, p_mu, p_sigma);
    const std::vector<double> theta{50.5, 1.3};
    std::printf("%zu,%zu,%.1f,%.1f\n", n, m.data_values(), ns_per_gradient(reduced, theta), ns_per_gradient(loop, theta));
  }
}
