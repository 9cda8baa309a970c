// bench/glm.cpp — one chain's value and gradient of GLM log densities on the logistic regression's
// X (10,000 × 100, bench/synthetic.hpp), with the SIMD backend (tyche::simd, what users get):
// a logistic regression written elementwise, sum(y·η − log1p_exp(η)); binomial_logit with 1-4
// trials per row; neg_binomial_2_log; and bernoulli_logit, whose fused term reads η once (the
// reference: its hand-written twin is bench/gradients.cpp's logistic_hand). Prints µs per
// gradient (median of 41 runs of 10) and the program's workspace (2·n when the matvec is
// buffered, 0 when it is streamed).
//
// What it measures is the rewrite Σ y·(s + Xv) → s·Σy + (Xᵀy)·v (compile/reduce_sum.hpp), before
// and after: build it against two checkouts, e.g.
//   git worktree add /tmp/before <commit>
//   g++ -std=c++20 -O3 -march=native -DNDEBUG -DTYCHE_USE_XSIMD=1 -I/tmp/before/include bench/glm.cpp -o /tmp/glm_before
//   g++ -std=c++20 -O3 -march=native -DNDEBUG -DTYCHE_USE_XSIMD=1 -Iinclude bench/glm.cpp -o /tmp/glm_after
// (or cmake --build build/bench-release --target bench_glm for this checkout). docs/benchmarks.md.
#include <tyche/tyche.hpp>

#include "synthetic.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <span>
#include <vector>

namespace {

/// Median µs of one value_and_gradient at th (41 runs of 10 calls).
template <class P>
double time_gradient(const P& p, const std::vector<double>& th) {
  std::vector<double> g(th.size()), ws(p.workspace_size()), t;
  double sink = 0;
  for (int r = 0; r < 41; ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (int k = 0; k < 10; ++k)
      sink += p.value_and_gradient(std::span<const double>(th), std::span<double>(g), std::span<double>(ws));
    t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / 10);
  }
  std::sort(t.begin(), t.end());
  if (sink == 0.125) std::puts("");  // keeps the calls
  return t[t.size() / 2];
}

}  // namespace

int main() {
  using namespace tyche;
  // Data: bench/synthetic.hpp; trials 1 + i mod 4, counts = trials · y (y ∈ {0, 1}).
  static const tyche_bench::logistic_data lr;
  std::vector<double> trials(lr.n), counts(lr.n);
  for (std::size_t i = 0; i < lr.n; ++i) {
    trials[i] = double(1 + i % 4);
    counts[i] = trials[i] * lr.y[i];
  }
  param<"alpha"> alpha;
  param<"phi"> phi;
  vector_param<"beta"> beta(lr.p);
  const auto X = matrix(lr.X.data(), lr.n, lr.p);
  const auto eta = alpha + matvec(X, beta);
  const auto prior = -0.5 * square(alpha) + sum(-0.5 * square(beta));
  const auto elementwise = compile(prior + sum(data(lr.y) * eta - log1p_exp(eta)), alpha, beta);
  const auto binomial =
      compile(prior + binomial_logit(data(trials), eta).observe(data(counts)).log_density(), alpha, beta);
  const auto negbin =
      compile(prior + phi + neg_binomial_2_log(eta, exp(phi)).observe(data(counts)).log_density(), alpha, beta, phi);
  const auto bernoulli = compile(prior + bernoulli_logit(eta).observe(data(lr.y)).log_density(), alpha, beta);
  std::vector<double> th(lr.p + 1), th_phi(lr.p + 2);
  for (std::size_t k = 0; k < th.size(); ++k) th[k] = 0.1 * std::sin(double(k));
  for (std::size_t k = 0; k < th_phi.size(); ++k) th_phi[k] = 0.1 * std::sin(double(k));
  std::printf("model,us_per_gradient,workspace\n");
  std::printf("logistic_elementwise,%.1f,%zu\n", time_gradient(elementwise, th), elementwise.workspace_size());
  std::printf("binomial_logit,%.1f,%zu\n", time_gradient(binomial, th), binomial.workspace_size());
  std::printf("neg_binomial_2_log,%.1f,%zu\n", time_gradient(negbin, th_phi), negbin.workspace_size());
  std::printf("bernoulli_logit,%.1f,%zu\n", time_gradient(bernoulli, th), bernoulli.workspace_size());
}
