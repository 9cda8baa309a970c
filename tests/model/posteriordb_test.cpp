// The posteriordb reference models of examples/posteriordb.hpp against log densities written
// independently from each ../shared/posteriors/<name>/model.md ("Log density (up to an additive
// constant)" plus the log-Jacobian of sigma = exp(u)), in plain loops over the raw data: at random
// unconstrained points the difference must be one constant (the normalising constants the
// written densities leave out). Gradients against finite differences at 3 points each.
#include "../../examples/posteriordb.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/property.hpp"

namespace {

namespace fs = std::filesystem;

fs::path posterior_dir(const std::string& name) {
  return tyche_examples::posteriors_dir(__FILE__) / name;
}

tyche::data_file load(const std::string& name) {
  return tyche::read_json_data((posterior_dir(name) / "data.json").string());
}

/// Constrained points near the posterior: reference mean + u · sd for each parameter (by name),
/// u uniform on [−1.5, 1.5], mapped to θ with m.unconstrain.
template <class Model>
std::vector<std::vector<double>> near_posterior(const Model& m, const std::string& name,
                                                std::size_t count, unsigned seed) {
  std::ifstream in(posterior_dir(name) / "reference_summary.csv");
  REQUIRE(in);
  std::string line;
  std::getline(in, line);  // name,mean,sd,q05,q50,q95
  std::vector<std::string> names;
  std::vector<double> mean, sd;
  while (std::getline(in, line)) {
    std::istringstream row(line);
    std::string n, a, b;
    std::getline(row, n, ',');
    std::getline(row, a, ',');
    std::getline(row, b, ',');
    names.push_back(n);
    mean.push_back(std::stod(a));
    sd.push_back(std::stod(b));
  }
  const auto order = m.parameter_names();
  std::vector<std::vector<double>> out;
  for (const auto& u : tyche_test::random_points(count, order.size(), -1.5, 1.5, seed)) {
    std::vector<double> values;
    for (std::size_t k = 0; k < order.size(); ++k) {
      const auto it = std::find(names.begin(), names.end(), order[k]);
      REQUIRE(it != names.end());
      const auto i = std::size_t(it - names.begin());
      values.push_back(mean[i] + u[k] * sd[i]);
    }
    out.push_back(m.unconstrain(values));
  }
  return out;
}

/// m.log_prob(θ) − reference(θ) is one constant over the points: max − min of the differences
/// below 1e-8 (1 + max |reference|). Returns the spread.
template <class Model, class Reference>
double check_constant_difference(const Model& m, Reference reference,
                                 const std::vector<std::vector<double>>& pts,
                                 const std::string& what) {
  INFO(what);
  double lo = HUGE_VAL, hi = -HUGE_VAL, typical = 0;
  for (const auto& th : pts) {
    const double lp = m.log_prob(th);
    const double ref = reference(th);
    REQUIRE(std::isfinite(lp));
    REQUIRE(std::isfinite(ref));
    lo = std::min(lo, lp - ref);
    hi = std::max(hi, lp - ref);
    typical = std::max(typical, std::fabs(ref));
  }
  const double spread = hi - lo;
  INFO("difference spread " << spread << " (constant about " << lo << "), typical |log p| "
                            << typical);
  CHECK(spread < 1e-8 * (1 + typical));
#ifdef TYCHE_POSTERIORDB_PRINT_SPREADS  // -DTYCHE_POSTERIORDB_PRINT_SPREADS: list the spreads
  std::printf("%s: spread %.3g over %zu points, max |log p| %.3g, relative %.3g\n", what.c_str(),
              spread, pts.size(), typical, spread / (1 + typical));
#endif
  return spread;
}

/// The whole check: 20 random points in [−1.5, 1.5]^dim (far from the posterior: |log p| is
/// large), 10 points near the reference posterior (|log p| small, so the tolerance is tight),
/// and gradients at 3 of the random points.
template <class Model, class Reference>
void check_posterior(const Model& m, Reference reference, const std::string& name, unsigned seed,
                     bool near_means = true) {
  const auto pts = tyche_test::random_points(20, m.dim(), -1.5, 1.5, seed);
  check_constant_difference(m, reference, pts, name + " (random points)");
  if (near_means)
    check_constant_difference(m, reference, near_posterior(m, name, 10, seed + 1000),
                              name + " (near the reference means)");
  for (std::size_t k = 0; k < 3; ++k) tyche_test::check_gradient_at(m.program(), pts[k], name);
}

double sq(double x) { return x * x; }

}  // namespace

TEST_CASE("posteriordb: eight_schools_noncentered matches model.md", "[posteriordb]") {
  const auto d = load("eight_schools-eight_schools_noncentered");
  const auto p = tyche_examples::eight_schools_noncentered(d);
  const auto& m = p.model;
  REQUIRE(m.dim() == 10);
  const auto names = m.parameter_names();
  CHECK(names[0] == "theta_trans[1]");
  CHECK(names[7] == "theta_trans[8]");
  CHECK(names[8] == "mu");
  CHECK(names[9] == "tau");
  const std::vector<double> y = d.vector("y"), sigma = d.vector("sigma");
  auto reference = [&](const std::vector<double>& th) {
    const double mu = th[8], u = th[9], tau = std::exp(u);
    double lp = 0;
    for (std::size_t j = 0; j < 8; ++j) {
      lp += -sq(th[j]) / 2;
      lp += -sq(y[j] - mu - tau * th[j]) / (2 * sq(sigma[j]));
    }
    return lp - sq(mu) / 50 - std::log(1 + sq(tau / 5)) + u;
  };
  // The reference reports theta, not theta_trans: no points near the means here.
  check_posterior(m, reference, "eight_schools-eight_schools_noncentered", 101, false);
}

TEST_CASE("posteriordb: kidiq kidscore_interaction matches model.md", "[posteriordb]") {
  const auto d = load("kidiq-kidscore_interaction");
  const auto p = tyche_examples::kidiq_kidscore_interaction(d);
  const auto& m = p.model;
  REQUIRE(m.dim() == 5);
  CHECK(m.parameter_names().back() == "sigma");
  const auto& score = d.vector("kid_score");
  const auto& hs = d.vector("mom_hs");
  const auto& iq = d.vector("mom_iq");
  const double n = double(score.size());
  auto reference = [&](const std::vector<double>& th) {
    const double u = th[4], sigma = std::exp(u);
    double ss = 0;
    for (std::size_t i = 0; i < score.size(); ++i) {
      const double mean = th[0] + th[1] * hs[i] + th[2] * iq[i] + th[3] * hs[i] * iq[i];
      ss += sq(score[i] - mean);
    }
    return -n * std::log(sigma) - ss / (2 * sq(sigma)) - std::log(1 + sq(sigma / 2.5)) + u;
  };
  check_posterior(m, reference, "kidiq-kidscore_interaction", 102);
}

TEST_CASE("posteriordb: arK matches model.md", "[posteriordb]") {
  const auto d = load("arK-arK");
  const auto p = tyche_examples::ark(d);
  const auto& m = p.model;
  REQUIRE(m.dim() == 7);
  const auto names = m.parameter_names();
  CHECK(names[0] == "alpha");
  CHECK(names[1] == "beta[1]");
  CHECK(names[6] == "sigma");
  const auto& y = d.vector("y");
  const std::size_t K = 5, T = y.size();
  auto reference = [&](const std::vector<double>& th) {
    const double alpha = th[0], u = th[6], sigma = std::exp(u);
    double lp = 0;
    for (std::size_t t = K; t < T; ++t) {  // 0-based t: Stan's t + 1 = K+1..T
      double mt = alpha;
      for (std::size_t k = 1; k <= K; ++k) mt += th[k] * y[t - k];  // beta[k] * y[t-k]
      lp += -std::log(sigma) - sq(y[t] - mt) / (2 * sq(sigma));
    }
    lp -= sq(alpha) / 200;
    for (std::size_t k = 1; k <= K; ++k) lp -= sq(th[k]) / 200;
    return lp - std::log(1 + sq(sigma / 2.5)) + u;
  };
  check_posterior(m, reference, "arK-arK", 103);
}

TEST_CASE("posteriordb: mesquite logmesquite matches model.md", "[posteriordb]") {
  const auto d = load("mesquite-logmesquite");
  const auto p = tyche_examples::mesquite_logmesquite(d);
  const auto& m = p.model;
  REQUIRE(m.dim() == 8);
  CHECK(m.parameter_names()[7] == "sigma");
  const auto& w = d.vector("weight");
  const auto& d1 = d.vector("diam1");
  const auto& d2 = d.vector("diam2");
  const auto& ch = d.vector("canopy_height");
  const auto& th_ = d.vector("total_height");
  const auto& den = d.vector("density");
  const auto& g = d.vector("group");
  const double n = double(w.size());
  auto reference = [&](const std::vector<double>& b) {
    const double u = b[7], sigma = std::exp(u);
    double ss = 0;
    for (std::size_t i = 0; i < w.size(); ++i) {
      const double mean = b[0] + b[1] * std::log(d1[i]) + b[2] * std::log(d2[i]) +
                          b[3] * std::log(ch[i]) + b[4] * std::log(th_[i]) +
                          b[5] * std::log(den[i]) + b[6] * g[i];
      ss += sq(std::log(w[i]) - mean);
    }
    return -n * std::log(sigma) - ss / (2 * sq(sigma)) + u;
  };
  check_posterior(m, reference, "mesquite-logmesquite", 104);
}

TEST_CASE("posteriordb: sblrc blr matches model.md", "[posteriordb]") {
  const auto d = load("sblrc-blr");
  const auto p = tyche_examples::sblrc_blr(d);
  const auto& m = p.model;
  REQUIRE(m.dim() == 6);
  CHECK(m.parameter_names()[5] == "sigma");
  const auto& X = d.matrix("X");
  const auto& y = d.vector("y");
  auto reference = [&](const std::vector<double>& th) {
    const double u = th[5], sigma = std::exp(u);
    double lp = 0;
    for (std::size_t i = 0; i < X.rows; ++i) {
      double xb = 0;
      for (std::size_t j = 0; j < 5; ++j) xb += X.values[i * X.cols + j] * th[j];
      lp += -std::log(sigma) - sq(y[i] - xb) / (2 * sq(sigma));
    }
    for (std::size_t j = 0; j < 5; ++j) lp -= sq(th[j]) / 200;
    return lp - sq(sigma) / 200 + u;
  };
  check_posterior(m, reference, "sblrc-blr", 105);
}

TEST_CASE("posteriordb: diamonds matches model.md", "[posteriordb]") {
  const auto d = load("diamonds-diamonds");
  const auto p = tyche_examples::diamonds(d);
  const auto& m = p.model;
  REQUIRE(m.dim() == 26);
  const auto names = m.parameter_names();
  CHECK(names[0] == "b[1]");
  CHECK(names[23] == "b[24]");
  CHECK(names[24] == "Intercept");
  CHECK(names[25] == "sigma");
  const auto& X = d.matrix("X");
  const auto& Y = d.vector("Y");
  const std::size_t N = X.rows, K = X.cols;
  REQUIRE(K == 25);
  // Preprocessing as model.md says: drop column 1, centre the other 24.
  std::vector<double> mean(K - 1, 0.0);
  for (std::size_t i = 0; i < N; ++i)
    for (std::size_t j = 1; j < K; ++j) mean[j - 1] += X.values[i * K + j] / double(N);
  auto reference = [&](const std::vector<double>& th) {
    const double intercept = th[24], u = th[25], sigma = std::exp(u);
    double ss = 0;
    for (std::size_t i = 0; i < N; ++i) {
      double mu = intercept;
      for (std::size_t j = 1; j < K; ++j) mu += (X.values[i * K + j] - mean[j - 1]) * th[j - 1];
      ss += sq(Y[i] - mu);
    }
    double lp = -double(N) * std::log(sigma) - ss / (2 * sq(sigma));
    for (std::size_t j = 0; j < 24; ++j) lp -= sq(th[j]) / 2;
    lp -= 2 * std::log(1 + sq((intercept - 8) / 10) / 3);
    lp -= 2 * std::log(1 + sq(sigma / 10) / 3);
    return lp + u;
  };
  check_posterior(m, reference, "diamonds-diamonds", 106);
}

TEST_CASE("posteriordb: low_dim_gauss_mix matches model.md", "[posteriordb]") {
  const auto d = load("low_dim_gauss_mix-low_dim_gauss_mix");
  const auto p = tyche_examples::low_dim_gauss_mix(d);
  const auto& m = p.model;
  REQUIRE(m.dim() == 5);
  CHECK(m.parameter_names() ==
        std::vector<std::string>{"mu[1]", "mu[2]", "sigma[1]", "sigma[2]", "theta"});
  const auto& y = d.vector("y");
  // model.md's unconstrained parameterisation: mu[1] = a, mu[2] = a + e^b, sigma[k] = e^(s_k),
  // theta = logistic(c); the mixture terms by log-sum-exp.
  auto reference = [&](const std::vector<double>& th) {
    const double mu1 = th[0], mu2 = th[0] + std::exp(th[1]);
    const double s1 = std::exp(th[2]), s2 = std::exp(th[3]);
    const double theta = 1 / (1 + std::exp(-th[4]));
    double lp = 0;
    for (double v : y) {
      const double l1 = std::log(theta) - std::log(s1) - sq(v - mu1) / (2 * sq(s1));
      const double l2 = std::log(1 - theta) - std::log(s2) - sq(v - mu2) / (2 * sq(s2));
      const double top = std::max(l1, l2);
      lp += top + std::log(std::exp(l1 - top) + std::exp(l2 - top));
    }
    lp += -(sq(mu1) + sq(mu2)) / 8 - (sq(s1) + sq(s2)) / 8 + 4 * std::log(theta) +
          4 * std::log(1 - theta);
    return lp + th[1] + th[2] + th[3] + std::log(theta) + std::log(1 - theta);
  };
  check_posterior(m, reference, "low_dim_gauss_mix-low_dim_gauss_mix", 107);
}

TEST_CASE("posteriordb: garch11 matches model.md", "[posteriordb]") {
  const auto d = load("garch-garch11");
  const auto p = tyche_examples::garch11(d);
  const auto& m = p.model;
  REQUIRE(m.dim() == 4);
  CHECK(m.parameter_names() == std::vector<std::string>{"mu", "alpha0", "alpha1", "beta1"});
  const auto& y = d.vector("y");
  const double sigma1 = d.scalar("sigma1");
  // The volatility recursion of model.md in a plain loop over s[t] (not s[t]²).
  auto reference = [&](const std::vector<double>& th) {
    const double mu = th[0], alpha0 = std::exp(th[1]);
    const double alpha1 = 1 / (1 + std::exp(-th[2]));
    const double v = 1 / (1 + std::exp(-th[3]));
    const double beta1 = (1 - alpha1) * v;
    double s = sigma1, lp = 0;
    for (std::size_t t = 0; t < y.size(); ++t) {
      if (t > 0) s = std::sqrt(alpha0 + alpha1 * sq(y[t - 1] - mu) + beta1 * sq(s));
      lp += -std::log(s) - sq(y[t] - mu) / (2 * sq(s));
    }
    return lp + th[1] + std::log(alpha1) + 2 * std::log(1 - alpha1) + std::log(v) + std::log(1 - v);
  };
  // Not near the means: mean + u·sd per coordinate often leaves the triangle alpha1 + beta1 < 1.
  check_posterior(m, reference, "garch-garch11", 108, false);
}

TEST_CASE("posteriordb: gp_pois_regr matches model.md", "[posteriordb]") {
  const auto d = load("gp_pois_regr-gp_pois_regr");
  const auto p = tyche_examples::gp_pois_regr(d);
  const auto& m = p.model;
  REQUIRE(m.dim() == 13);
  const auto names = m.parameter_names();
  CHECK(names[0] == "rho");
  CHECK(names[1] == "alpha");
  CHECK(names[2] == "f_tilde[1]");
  const auto& x = d.vector("x");
  const auto& k = d.vector("k");
  const std::size_t n = x.size();
  // model.md: C by its formula, L by a Cholesky written here (column by column, unlike the
  // row-by-row op), f = L f_tilde, then the log density and r + a.
  auto reference = [&](const std::vector<double>& th) {
    const double rho = std::exp(th[0]), alpha = std::exp(th[1]);
    std::vector<double> c(n * n), l(n * n, 0.0), f(n, 0.0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        c[i * n + j] = sq(alpha) * std::exp(-sq(x[i] - x[j]) / (2 * sq(rho))) + (i == j ? 1e-10 : 0.0);
    for (std::size_t j = 0; j < n; ++j) {
      double s = c[j * n + j];
      for (std::size_t q = 0; q < j; ++q) s -= sq(l[j * n + q]);
      l[j * n + j] = std::sqrt(s);
      for (std::size_t i = j + 1; i < n; ++i) {
        double t = c[i * n + j];
        for (std::size_t q = 0; q < j; ++q) t -= l[i * n + q] * l[j * n + q];
        l[i * n + j] = t / l[j * n + j];
      }
    }
    double lp = 0;
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j <= i; ++j) f[i] += l[i * n + j] * th[2 + j];
      lp += k[i] * f[i] - std::exp(f[i]) - sq(th[2 + i]) / 2;
    }
    lp += 24 * std::log(rho) - 4 * rho - sq(alpha) / 8;
    return lp + th[0] + th[1];
  };
  // Not near the means: the reference reports f, not the sampled f_tilde.
  check_posterior(m, reference, "gp_pois_regr-gp_pois_regr", 109, false);
}
