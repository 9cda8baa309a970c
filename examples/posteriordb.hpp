// examples/posteriordb.hpp — the posteriordb reference posteriors of ../shared/posteriors written
// with tyche's model API, one function per posterior. Each takes the posterior's data file and
// returns a posterior<Storage, Model>: the data the model views (design matrices, transformed
// responses; tyche::data(v) and tyche::matrix(p, r, c) keep views, not copies) in a heap-allocated
// Storage that moves with it, and the model. Parameter names, constraints and priors are those of
// each posterior's model.md; θ follows the reference draws' column order.
//
//     const tyche::data_file d = tyche::read_json_data(dir / "kidiq-kidscore_interaction/data.json");
//     const auto p = tyche_examples::kidiq_kidscore_interaction(d);
//     p.model.log_prob(theta);
//
#pragma once

#if __has_include(<tyche/io/json_data.hpp>)
#include <tyche/io/json_data.hpp>
#else
#include "../include/tyche/io/json_data.hpp"  // the single-header build: io is not part of it
#endif
#include <tyche/tyche.hpp>

#include <cmath>
#include <cstdio>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tyche_examples {

/// A model together with the data it views. Storage lives on the heap, so moving a posterior
/// keeps the model's views valid; it cannot be copied.
template <class Storage, class Model>
struct posterior {
  std::unique_ptr<const Storage> storage;
  Model model;
};

namespace detail {
template <class Storage, class Build>
auto make_posterior(std::unique_ptr<const Storage> s, Build build) {
  auto m = build(*s);
  return posterior<Storage, decltype(m)>{std::move(s), std::move(m)};
}

inline void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("tyche_examples: " + what);
}

/// Row-major rows × cols matrix filled by f(i, j).
template <class F>
tyche::matrix_data build_matrix(std::size_t rows, std::size_t cols, F f) {
  tyche::matrix_data x;
  x.rows = rows;
  x.cols = cols;
  x.values.resize(rows * cols);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) x.values[i * cols + j] = f(i, j);
  return x;
}

inline tyche::data_matrix view(const tyche::matrix_data& x) {
  return tyche::matrix(x.values.data(), x.rows, x.cols);
}
}  // namespace detail

// ---- eight_schools-eight_schools_noncentered ---------------------------------------------------

struct eight_schools_data {
  std::vector<double> y, sigma;
};

/// θ = (theta_trans[1..8], mu, log tau). The reported theta[j] = mu + tau * theta_trans[j].
inline auto eight_schools_noncentered(const tyche::data_file& d) {
  using namespace tyche;
  detail::require(d.integer("J") == 8, "eight_schools: J must be 8 (a compile-time shape)");
  auto s = std::make_unique<const eight_schools_data>(
      eight_schools_data{d.vector("y", 8), d.vector("sigma", 8)});
  return detail::make_posterior(std::move(s), [](const eight_schools_data& s) {
    auto theta_trans = std_normal<"theta_trans">(shape<8>);
    auto mu = normal<"mu">(0.0, 5.0);
    auto tau = half_cauchy<"tau">(5.0);
    auto theta = mu + tau * theta_trans;
    return model(joint(theta_trans, mu, tau, normal(theta, data(s.sigma)).observe(data(s.y))));
  });
}

// ---- kidiq-kidscore_interaction ----------------------------------------------------------------

struct kidiq_data {
  tyche::matrix_data x;  // N × 4: [1, mom_hs, mom_iq, mom_hs * mom_iq]
  std::vector<double> kid_score;
};

/// θ = (beta[1..4], log sigma).
inline auto kidiq_kidscore_interaction(const tyche::data_file& d) {
  using namespace tyche;
  const auto n = static_cast<std::size_t>(d.integer("N"));
  const auto& hs = d.vector("mom_hs", n);
  const auto& iq = d.vector("mom_iq", n);
  auto s = std::make_unique<kidiq_data>();
  s->kid_score = d.vector("kid_score", n);
  s->x = detail::build_matrix(n, 4, [&](std::size_t i, std::size_t j) {
    switch (j) {
      case 0: return 1.0;
      case 1: return hs[i];
      case 2: return iq[i];
      default: return hs[i] * iq[i];
    }
  });
  return detail::make_posterior(std::unique_ptr<const kidiq_data>(std::move(s)),
                                [](const kidiq_data& s) {
    auto beta = flat<"beta">(shape<4>);
    auto sigma = half_cauchy<"sigma">(2.5);
    return model(joint(beta, sigma,
                       normal(matvec(detail::view(s.x), beta), sigma).observe(data(s.kid_score))));
  });
}

// ---- arK-arK -----------------------------------------------------------------------------------

struct ark_data {
  tyche::matrix_data lags;    // (T − K) × K: row for t = K+1..T, column k−1 holds y[t − k]
  std::vector<double> y_next;  // y[K+1..T]
};

/// θ = (alpha, beta[1..5], log sigma).
inline auto ark(const tyche::data_file& d) {
  using namespace tyche;
  constexpr std::size_t K = 5;
  detail::require(d.integer("K") == int(K), "arK: K must be 5 (a compile-time shape)");
  const auto t_len = static_cast<std::size_t>(d.integer("T"));
  detail::require(t_len > K, "arK: T must exceed K");
  const auto& y = d.vector("y", t_len);
  auto s = std::make_unique<ark_data>();
  // 0-based: row r is time t = r + K; column k (0-based) is lag k + 1, y[t − k − 1].
  s->lags = detail::build_matrix(t_len - K, K,
                                 [&](std::size_t r, std::size_t k) { return y[r + K - k - 1]; });
  s->y_next.assign(y.begin() + K, y.end());
  return detail::make_posterior(std::unique_ptr<const ark_data>(std::move(s)),
                                [](const ark_data& s) {
    auto alpha = normal<"alpha">(0.0, 10.0);
    auto beta = normal<"beta">(0.0, 10.0, shape<K>);
    auto sigma = half_cauchy<"sigma">(2.5);
    return model(joint(alpha, beta, sigma,
                       normal(alpha + matvec(detail::view(s.lags), beta), sigma)
                           .observe(data(s.y_next))));
  });
}

// ---- mesquite-logmesquite ----------------------------------------------------------------------

struct mesquite_data {
  tyche::matrix_data x;  // N × 7: [1, log diam1, log diam2, log canopy_height, log total_height,
                         //         log density, group]
  std::vector<double> log_weight;
};

/// θ = (beta[1..7], log sigma).
inline auto mesquite_logmesquite(const tyche::data_file& d) {
  using namespace tyche;
  const auto n = static_cast<std::size_t>(d.integer("N"));
  const std::vector<const std::vector<double>*> cols{
      &d.vector("diam1", n), &d.vector("diam2", n), &d.vector("canopy_height", n),
      &d.vector("total_height", n), &d.vector("density", n)};
  const auto& group = d.vector("group", n);
  const auto& weight = d.vector("weight", n);
  auto s = std::make_unique<mesquite_data>();
  s->x = detail::build_matrix(n, 7, [&](std::size_t i, std::size_t j) {
    if (j == 0) return 1.0;
    if (j == 6) return group[i];
    return std::log((*cols[j - 1])[i]);
  });
  for (double w : weight) s->log_weight.push_back(std::log(w));
  return detail::make_posterior(std::unique_ptr<const mesquite_data>(std::move(s)),
                                [](const mesquite_data& s) {
    auto beta = flat<"beta">(shape<7>);
    auto sigma = flat<"sigma">(positive());
    return model(joint(beta, sigma,
                       normal(matvec(detail::view(s.x), beta), sigma).observe(data(s.log_weight))));
  });
}

// ---- sblrc-blr ---------------------------------------------------------------------------------

struct sblrc_data {
  tyche::matrix_data x;  // N × 5
  std::vector<double> y;
};

/// θ = (beta[1..5], log sigma).
inline auto sblrc_blr(const tyche::data_file& d) {
  using namespace tyche;
  constexpr std::size_t D = 5;
  const auto n = static_cast<std::size_t>(d.integer("N"));
  detail::require(d.integer("D") == int(D), "sblrc: D must be 5 (a compile-time shape)");
  auto s = std::make_unique<sblrc_data>();
  s->x = d.matrix("X");
  detail::require(s->x.rows == n && s->x.cols == D, "sblrc: X must be N × D");
  s->y = d.vector("y", n);
  return detail::make_posterior(std::unique_ptr<const sblrc_data>(std::move(s)),
                                [](const sblrc_data& s) {
    auto beta = normal<"beta">(0.0, 10.0, shape<D>);
    auto sigma = half_normal<"sigma">(10.0);
    return model(joint(beta, sigma,
                       normal(matvec(detail::view(s.x), beta), sigma).observe(data(s.y))));
  });
}

// ---- diamonds-diamonds -------------------------------------------------------------------------

struct diamonds_data {
  tyche::matrix_data xc;  // N × 24: columns 2..25 of X, each centred by its mean
  std::vector<double> means;  // m[j], to recover the uncentred intercept
  std::vector<double> y;
};

/// θ = (b[1..24], Intercept, log sigma).
inline auto diamonds(const tyche::data_file& d) {
  using namespace tyche;
  constexpr std::size_t K = 25;
  const auto n = static_cast<std::size_t>(d.integer("N"));
  detail::require(d.integer("K") == int(K), "diamonds: K must be 25 (a compile-time shape)");
  detail::require(d.integer("prior_only") == 0, "diamonds: prior_only = 1 is not supported");
  const auto& x = d.matrix("X");
  detail::require(x.rows == n && x.cols == K, "diamonds: X must be N × K");
  auto s = std::make_unique<diamonds_data>();
  s->means.assign(K - 1, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j + 1 < K; ++j) s->means[j] += x.values[i * K + j + 1];
  for (auto& m : s->means) m /= double(n);
  s->xc = detail::build_matrix(n, K - 1, [&](std::size_t i, std::size_t j) {
    return x.values[i * K + j + 1] - s->means[j];
  });
  s->y = d.vector("Y", n);
  return detail::make_posterior(std::unique_ptr<const diamonds_data>(std::move(s)),
                                [](const diamonds_data& s) {
    auto b = normal<"b">(0.0, 1.0, shape<K - 1>);
    auto intercept = student_t<"Intercept">(3.0, 8.0, 10.0);
    auto sigma = half_student_t<"sigma">(3.0, 10.0);
    return model(joint(b, intercept, sigma,
                       normal(intercept + matvec(detail::view(s.xc), b), sigma)
                           .observe(data(s.y))));
  });
}

// ---- low_dim_gauss_mix-low_dim_gauss_mix -------------------------------------------------------

struct gauss_mix_data {
  std::vector<double> y;
};

/// θ = (mu[1], log(mu[2] − mu[1]), log sigma[1], log sigma[2], logit theta): mu is ordered.
inline auto low_dim_gauss_mix(const tyche::data_file& d) {
  using namespace tyche;
  const auto n = static_cast<std::size_t>(d.integer("N"));
  auto s = std::make_unique<const gauss_mix_data>(gauss_mix_data{d.vector("y", n)});
  return detail::make_posterior(std::move(s), [](const gauss_mix_data& s) {
    auto mu = ordered<"mu">(normal(0.0, 2.0), shape<2>);
    auto sigma = half_normal<"sigma">(2.0, shape<2>);
    auto theta = beta<"theta">(5.0, 5.0);
    return model(joint(mu, sigma, theta,
                       log_mix(theta, normal(mu[0], sigma[0]), normal(mu[1], sigma[1]))
                           .observe(data(s.y))));
  });
}

// ---- garch-garch11 -------------------------------------------------------------------------------

struct garch_data {
  std::vector<double> first;     // y[1]
  std::vector<double> rest;      // y[2..T]
  std::vector<double> previous;  // y[1..T−1]
  double sigma1 = 0;
};

/// θ = (mu, log alpha0, logit alpha1, logit(beta1 / (1 − alpha1))). The variances
/// s[t]² = alpha0 + alpha1 (y[t−1] − mu)² + beta1 s[t−1]², s[1] = sigma1, are a linear
/// recurrence in s²: linear_recurrence(a, beta1, sigma1²) gives s[2..T]².
inline auto garch11(const tyche::data_file& d) {
  using namespace tyche;
  const auto t_len = static_cast<std::size_t>(d.integer("T"));
  detail::require(t_len >= 2, "garch11: T must be at least 2");
  const auto& y = d.vector("y", t_len);
  auto s = std::make_unique<garch_data>();
  s->first.assign(y.begin(), y.begin() + 1);
  s->rest.assign(y.begin() + 1, y.end());
  s->previous.assign(y.begin(), y.end() - 1);
  s->sigma1 = d.scalar("sigma1");
  detail::require(s->sigma1 > 0, "garch11: sigma1 must be > 0");
  return detail::make_posterior(std::unique_ptr<const garch_data>(std::move(s)),
                                [](const garch_data& s) {
    auto mu = flat<"mu">();
    auto alpha0 = flat<"alpha0">(positive());
    auto alpha1 = flat<"alpha1">(between(0.0, 1.0));
    auto beta1 = flat<"beta1">(between(0.0, 1.0 - alpha1));
    auto variance = linear_recurrence(alpha0 + alpha1 * square(data(s.previous) - mu), beta1,
                                      s.sigma1 * s.sigma1);
    return model(joint(mu, alpha0, alpha1, beta1, normal(mu, s.sigma1).observe(data(s.first)),
                       normal(mu, sqrt(variance)).observe(data(s.rest))));
  });
}

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

// ---- helpers for the example programs and the tests --------------------------------------------

/// ../shared/posteriors next to the repository root: walks up from `from` (a source file's
/// __FILE__) to the folder holding include/tyche/tyche.hpp.
inline std::filesystem::path posteriors_dir(const std::filesystem::path& from) {
  namespace fs = std::filesystem;
  for (fs::path p = fs::absolute(from).parent_path(); !p.empty(); p = p.parent_path()) {
    if (fs::exists(p / "include" / "tyche" / "tyche.hpp")) return p / ".." / "shared" / "posteriors";
    if (p == p.parent_path()) break;
  }
  throw std::runtime_error("tyche_examples: no repository root above " + from.string());
}

/// The reference posterior means of reference_summary.csv, in file order: (name, mean).
inline std::vector<std::pair<std::string, double>> reference_means(const std::filesystem::path& csv) {
  std::ifstream in(csv);
  if (!in) throw std::runtime_error("tyche_examples: cannot open " + csv.string());
  std::string line;
  std::getline(in, line);  // header: name,mean,sd,q05,q50,q95
  std::vector<std::pair<std::string, double>> out;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream row(line);
    std::string name, mean;
    std::getline(row, name, ',');
    std::getline(row, mean, ',');
    out.emplace_back(name, std::stod(mean));
  }
  return out;
}

/// The reference means ordered as the model's parameter names (each name must be in `means`).
inline std::vector<double> means_by_name(const std::vector<std::pair<std::string, double>>& means,
                                         const std::vector<std::string>& names) {
  std::vector<double> out;
  for (const auto& name : names) {
    bool found = false;
    for (const auto& [n, v] : means) {
      if (n == name) {
        out.push_back(v);
        found = true;
        break;
      }
    }
    if (!found) throw std::runtime_error("tyche_examples: no reference mean for " + name);
  }
  return out;
}

/// What every example prints: the dimension, the parameter names, and log p at the constrained
/// point `values` (mapped to θ by unconstrain), with and without the log-Jacobian, to 6 digits.
template <class Model>
void print_summary(const char* posterior_name, const Model& m, const std::vector<double>& values) {
  std::printf("%s\n", posterior_name);
  std::printf("dimension: %zu\n", m.dim());
  std::printf("parameters:");
  for (const auto& name : m.parameter_names()) std::printf(" %s", name.c_str());
  std::printf("\n");
  const auto theta = m.unconstrain(values);
  std::printf("log_prob at the reference means: %.6g (without the log-Jacobian: %.6g)\n",
              m.log_prob(theta), m.log_prob(theta, false));
}

}  // namespace tyche_examples
