// Models with scan (tyche/compile/scan.hpp) against exact references: a local-level model by its
// Kalman filter (the latent level integrated out) against the Gaussian likelihood computed from
// the dense covariance by Cholesky, and an ARMA(1,1) error recursion against a direct loop.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <tuple>
#include <vector>

#include "support/property.hpp"

using namespace tyche;

namespace {

constexpr double log_two_pi = 1.8378770664093454836;

// log N(y | m·1, Σ) with Σᵢⱼ = P0 + min(i, j)·q² + δᵢⱼ r² (0-based i, j): the local-level model
// x₀ ~ N(m, P0), xₜ₊₁ = xₜ + N(0, q²), yₜ = xₜ + N(0, r²), by a dense Cholesky factorisation.
double local_level_exact(const std::vector<double>& y, double m, double p0, double q2, double r2) {
  const std::size_t n = y.size();
  std::vector<double> s(n * n), l(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      s[i * n + j] = p0 + static_cast<double>(std::min(i, j)) * q2 + (i == j ? r2 : 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      double v = s[i * n + j];
      for (std::size_t k = 0; k < j; ++k) v -= l[i * n + k] * l[j * n + k];
      l[i * n + j] = i == j ? std::sqrt(v) : v / l[j * n + j];
    }
  // z = L⁻¹(y − m); log N = −½ zᵀz − Σ log Lᵢᵢ − (n/2) log 2π.
  std::vector<double> z(n);
  double quad = 0, logdet = 0;
  for (std::size_t i = 0; i < n; ++i) {
    double v = y[i] - m;
    for (std::size_t k = 0; k < i; ++k) v -= l[i * n + k] * z[k];
    z[i] = v / l[i * n + i];
    quad += z[i] * z[i];
    logdet += std::log(l[i * n + i]);
  }
  return -0.5 * quad - logdet - 0.5 * static_cast<double>(n) * log_two_pi;
}

double normal_log(double y, double mu, double sigma) {
  const double z = (y - mu) / sigma;
  return -0.5 * z * z - std::log(sigma) - 0.5 * log_two_pi;
}

}  // namespace

TEST_CASE("scan: a local-level Kalman filter against the exact Gaussian likelihood",
          "[compile][scan][kalman]") {
  static const std::vector<double> y{1.2, 0.8, 1.9, 2.4, 2.1, 3.0, 2.7, 3.6, 3.1, 4.2, 3.8, 4.4};
  const double m0 = 1.0, p0 = 2.0;
  auto q = half_normal<"q">(1.0);  // the level's step scale
  auto r = half_normal<"r">(1.0);  // the observation noise
  // The state (m, P, ll): the level's mean and variance given y₀ … y_{t−1}, and the
  // log-likelihood so far. One step: observe yₜ (innovation v, its variance F), update, predict.
  auto filtered = scan(
      [&](const auto& s, const auto& yt) {
        auto F = assume_positive(s[1] + square(r));
        auto v = yt - s[0];
        auto gain = s[1] / F;
        return std::tuple{s[0] + gain * v, s[1] * square(r) / F + square(q),
                          s[2] - 0.5 * log(F) - 0.5 * square(v) / F - 0.5 * log_two_pi};
      },
      std::tuple{m0, p0, 0.0}, data(y));
  const auto m = model(joint(q, r, target(at(filtered, 2))));
  for (const auto& th : tyche_test::random_points(10, 2, -1.5, 1.0, 61)) {
    const double qv = std::exp(th[0]), rv = std::exp(th[1]);
    const double prior = normal_log(qv, 0, 1) + normal_log(rv, 0, 1) + 2 * std::log(2.0) + th[0] + th[1];
    CHECK(m.log_prob(th) == Approx(local_level_exact(y, m0, p0, qv * qv, rv * rv) + prior).epsilon(1e-10));
    tyche_test::check_gradient_at(m.program(), th, "local level by a Kalman filter");
  }
}

TEST_CASE("scan: ARMA(1,1) errors against a direct loop", "[compile][scan][arma]") {
  static const std::vector<double> y{0.3, 0.9, -0.2, 0.5, 1.4, 0.8, -0.6, 0.1, 0.7, 1.1};
  static const std::vector<double> y_now(y.begin() + 1, y.end()), y_before(y.begin(), y.end() - 1);
  auto mu = normal<"mu">(0.0, 2.0);
  auto phi = uniform<"phi">(-1.0, 1.0);
  auto theta = uniform<"theta">(-1.0, 1.0);
  auto sigma = half_normal<"sigma">(1.0);
  // Stan's arma11: err[1] = y[1] − (mu + phi·mu), then err[t] = y[t] − (mu + phi·y[t−1] +
  // theta·err[t−1]); err ~ normal(0, sigma). The state: (err, Σ log density so far).
  auto err1 = y[0] - (mu + phi * mu);
  auto s = scan(
      [&](const auto& st, const auto& yt, const auto& yprev) {
        auto err = yt - (mu + phi * yprev + theta * st[0]);
        return std::tuple{err, st[1] + normal_lpdf(err, 0.0, sigma)};
      },
      std::tuple{err1, normal_lpdf(err1, 0.0, sigma)}, data(y_now), data(y_before));
  const auto m = model(joint(mu, phi, theta, sigma, target(at(s, 1))));
  for (const auto& th : tyche_test::random_points(10, 4, -1.0, 1.0, 67)) {
    const double mv = th[0], ph = std::tanh(th[1] / 2), tt = std::tanh(th[2] / 2), sg = std::exp(th[3]);
    double err = y[0] - (mv + ph * mv);
    double ll = normal_log(err, 0, sg);
    for (std::size_t t = 1; t < y.size(); ++t) {
      err = y[t] - (mv + ph * y[t - 1] + tt * err);
      ll += normal_log(err, 0, sg);
    }
    // Priors with the transforms' log-Jacobians: uniform(−1, 1) through 2·logistic(u) − 1.
    auto uniform_term = [](double u) {
      const double p = 1 / (1 + std::exp(-u));
      return -std::log(2.0) + std::log(2.0) + std::log(p) + std::log(1 - p);
    };
    const double prior = normal_log(mv, 0, 2) + uniform_term(th[1]) + uniform_term(th[2]) + normal_log(sg, 0, 1) +
                         std::log(2.0) + th[3];
    CHECK(m.log_prob(th) == Approx(ll + prior).epsilon(1e-10));
    tyche_test::check_gradient_at(m.program(), th, "ARMA(1,1) by scan");
  }
}
