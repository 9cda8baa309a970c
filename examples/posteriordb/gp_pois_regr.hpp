// examples/posteriordb/gp_pois_regr.hpp — posteriordb's gp_pois_regr-gp_pois_regr (../shared/posteriors) written with
// tyche's model API (see examples/posteriordb/common.hpp for posterior<Storage, Model>).
#pragma once
#include "common.hpp"

namespace tyche_examples {

// ---- gp_pois_regr-gp_pois_regr -------------------------------------------------------------------

struct gp_pois_regr_data {
  std::vector<double> neg_half_d2;  // N × N, −½ (x[i] − x[j])²
  std::vector<double> jitter;       // N × N, 1e-10 on the diagonal
  std::vector<double> k;            // counts
};

/// θ = (log rho, log alpha, f_tilde[1..N]). The latent f = L f_tilde with L the Cholesky factor
/// of C = alpha² exp(−(x[i] − x[j])² / (2 rho²)) + 1e-10 I (cholesky_multiply, whose gradient
/// flows through the factorisation to rho and alpha). The reference reports f, derived: see
/// gp_pois_regr_f.
inline auto gp_pois_regr(const tyche::data_file& d) {
  using namespace tyche;
  const auto n = static_cast<std::size_t>(d.integer("N"));
  const auto& x = d.vector("x", n);
  auto s = std::make_unique<gp_pois_regr_data>();
  s->k = d.vector("k", n);
  s->neg_half_d2.resize(n * n);
  s->jitter.assign(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) s->neg_half_d2[i * n + j] = -0.5 * (x[i] - x[j]) * (x[i] - x[j]);
    s->jitter[i * n + i] = 1e-10;
  }
  return detail::make_posterior(std::unique_ptr<const gp_pois_regr_data>(std::move(s)),
                                [n](const gp_pois_regr_data& s) {
    auto rho = gamma<"rho">(25.0, 4.0);
    auto alpha = half_normal<"alpha">(2.0);
    auto f_tilde = std_normal<"f_tilde">(shape_of(n));
    auto cov = square(alpha) * exp(data(s.neg_half_d2) / square(rho)) + data(s.jitter);
    auto f = cholesky_multiply(cov, f_tilde);
    return model(joint(rho, alpha, f_tilde, poisson_log(f).observe(data(s.k))));
  });
}

/// The derived f = L(rho, alpha) f_tilde of gp_pois_regr at constrained values (rho, alpha,
/// f_tilde...), as the reference draws report it.
inline std::vector<double> gp_pois_regr_f(const tyche::data_file& d, const std::vector<double>& v) {
  const auto n = static_cast<std::size_t>(d.integer("N"));
  const auto& x = d.vector("x", n);
  std::vector<double> c(n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      c[i * n + j] = v[1] * v[1] * std::exp(-(x[i] - x[j]) * (x[i] - x[j]) / (2 * v[0] * v[0])) +
                     (i == j ? 1e-10 : 0.0);
  const auto l = tyche::detail::cholesky_lower(c.data(), n, "gp_pois_regr_f");
  std::vector<double> f(n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j) f[i] += l[i * n + j] * v[2 + j];
  return f;
}

}  // namespace tyche_examples
