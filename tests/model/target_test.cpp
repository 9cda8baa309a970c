// target(e) (tyche/model/joint.hpp): a free term of the log density, Stan's `target += e`.
// The terms are checked against the same density written with observe(), against a double loop
// (a change-point model with the change point summed out), through do_(), and by NUTS against
// the exact posterior means (conjugate given the change point).
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "support/property.hpp"
#include "support/reference_math.hpp"

using namespace tyche;

namespace {

// Counts of 60 periods: rate 3 for the first 25, then rate 1 (drawn once, seed 11).
const std::vector<double> counts{5, 3, 1, 3, 5, 1, 1, 0, 5, 6, 2, 2, 4, 4, 1, 2, 3, 1, 1, 2,
                                 2, 2, 3, 3, 4, 0, 1, 0, 0, 0, 1, 1, 2, 2, 0, 2, 0, 2, 3, 0,
                                 0, 1, 1, 2, 0, 1, 0, 2, 0, 1, 0, 0, 1, 0, 1, 0, 0, 4, 0, 0};

// Per change point s = 1 … T (periods 1 … s − 1 early, s … T late): the sums of the counts and
// the numbers of periods on each side, and the constant −log T − Σ log y!.
struct change_point_data {
  std::vector<double> early_sum, early_n, late_sum, late_n;
  double constant = 0;
  explicit change_point_data(const std::vector<double>& y) {
    const std::size_t n = y.size();
    double total = 0;
    for (double v : y) {
      total += v;
      constant -= std::lgamma(v + 1);
    }
    constant -= std::log(static_cast<double>(n));
    double before = 0;
    for (std::size_t s = 0; s < n; ++s) {
      early_sum.push_back(before);
      early_n.push_back(static_cast<double>(s));
      late_sum.push_back(total - before);
      late_n.push_back(static_cast<double>(n - s));
      before += y[s];
    }
  }
};

// log p(y | e, l) with the change point summed out, as a double loop over (s, t).
double change_point_loglik(const std::vector<double>& y, double e, double l) {
  const std::size_t n = y.size();
  std::vector<double> lp(n);
  for (std::size_t s = 0; s < n; ++s) {
    double v = -std::log(static_cast<double>(n));
    for (std::size_t t = 0; t < n; ++t) {
      const double rate = t < s ? e : l;
      v += y[t] * std::log(rate) - rate - std::lgamma(y[t] + 1);
    }
    lp[s] = v;
  }
  double top = lp[0];
  for (double v : lp) top = std::max(top, v);
  double acc = 0;
  for (double v : lp) acc += std::exp(v - top);
  return top + std::log(acc);
}

}  // namespace

TEST_CASE("target: a free term equals the observe() it spells out", "[model][target]") {
  const std::vector<double> y{1.2, -0.3, 2.5, 0.7, 1.9};
  auto mu = normal<"mu">(0.0, 3.0);
  auto sigma = half_normal<"sigma">(2.0);
  const auto observed_model = model(joint(mu, sigma, normal(mu, sigma).observe(data(y))));
  const auto free_model = model(joint(mu, sigma, target(normal(mu, sigma).log_prob(data(y)))));
  // A vector term is summed: the same density again, elementwise.
  const auto vector_model = model(joint(
      mu, sigma, target(lit<-1, 2> * square((data(y) - mu) / sigma) - log(sigma) - 0.5 * std::log(2 * M_PI))));
  REQUIRE(free_model.dim() == 2);
  for (const auto& th : tyche_test::random_points(10, 2, -1.5, 1.5, 23)) {
    const double lp = observed_model.log_prob(th);
    CHECK(free_model.log_prob(th) == Approx(lp).epsilon(1e-13));
    CHECK(vector_model.log_prob(th) == Approx(lp).epsilon(1e-13));
    CHECK(free_model.log_prob(th, false) == Approx(observed_model.log_prob(th, false)).epsilon(1e-13));
    tyche_test::check_gradient_at(free_model.program(), th, "target(normal(mu, sigma).log_prob(y))");
    tyche_test::check_gradient_at(vector_model.program(), th, "target(elementwise normal log density)");
  }
}

namespace {
auto change_point_model(const change_point_data& d) {
  auto e = exponential<"e">(1.0);
  auto l = exponential<"l">(1.0);
  return model(joint(e, l,
                     target(log_sum_exp(data(d.early_sum) * log(e) - data(d.early_n) * e +
                                        data(d.late_sum) * log(l) - data(d.late_n) * l) +
                            d.constant)));
}
}  // namespace

TEST_CASE("target: a change point summed out with log_sum_exp, against a double loop",
          "[model][target]") {
  const change_point_data d(counts);
  const auto m = change_point_model(d);
  REQUIRE(m.dim() == 2);
  for (const auto& th : tyche_test::random_points(10, 2, -2, 2, 5)) {
    const double e = std::exp(th[0]), l = std::exp(th[1]);
    // Priors exponential(1) on e and l, and the log-Jacobians of their log transforms.
    const double lp = change_point_loglik(counts, e, l) - e - l + th[0] + th[1];
    CHECK(m.log_prob(th) == Approx(lp).epsilon(1e-12));
    tyche_test::check_gradient_at(m.program(), th, "change point");
  }
}

TEST_CASE("target: do_() substitutes the value into a free term", "[model][target][do]") {
  const change_point_data d(counts);
  const auto m = change_point_model(d);
  const auto fixed = do_<"l">(m, 1.5);
  REQUIRE(fixed.dim() == 1);
  for (double t : {-1.0, 0.0, 0.8, 1.4}) {
    const double e = std::exp(t);
    CHECK(fixed.log_prob(std::vector<double>{t}) ==
          Approx(change_point_loglik(counts, e, 1.5) - e + t).epsilon(1e-12));
  }
}

TEST_CASE("target: NUTS on the change point against the exact posterior means",
          "[model][target][nuts]") {
  const change_point_data d(counts);
  const auto m = change_point_model(d);
  // Exact: given s, the exponential(1) = gamma(1, 1) priors are conjugate, e | s, y ~
  // gamma(1 + S_early, 1 + n_early) (and l likewise), and p(s | y) ∝ Γ(S_e + 1)/(n_e + 1)^(S_e + 1)
  // · Γ(S_l + 1)/(n_l + 1)^(S_l + 1), the rates integrated out.
  const std::size_t n = counts.size();
  std::vector<double> log_w(n);
  double top = -INFINITY;
  for (std::size_t s = 0; s < n; ++s) {
    log_w[s] = std::lgamma(d.early_sum[s] + 1) - (d.early_sum[s] + 1) * std::log(d.early_n[s] + 1) +
               std::lgamma(d.late_sum[s] + 1) - (d.late_sum[s] + 1) * std::log(d.late_n[s] + 1);
    top = std::max(top, log_w[s]);
  }
  double mass = 0, mean_e = 0, mean_l = 0;
  for (std::size_t s = 0; s < n; ++s) {
    const double w = std::exp(log_w[s] - top);
    mass += w;
    mean_e += w * (1 + d.early_sum[s]) / (1 + d.early_n[s]);
    mean_l += w * (1 + d.late_sum[s]) / (1 + d.late_n[s]);
  }
  mean_e /= mass;
  mean_l /= mass;

  const auto fit = nuts(m, {.chains = 4, .warmup = 1000, .draws = 1000, .seed = 20261125});
  const double want[] = {mean_e, mean_l};
  for (std::size_t k = 0; k < 2; ++k) {
    const auto chains = fit.parameter(k);
    const double mean = tyche_test::pooled_mean(chains);
    const double mcse = mcse_mean(chains);
    INFO(fit.names[k] << ": NUTS mean " << mean << ", exact " << want[k] << ", MCSE " << mcse);
    CHECK(std::fabs(mean - want[k]) < 4 * mcse);  // 4 Monte Carlo standard errors
  }
}
