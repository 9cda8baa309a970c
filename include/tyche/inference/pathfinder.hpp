// tyche/inference/pathfinder.hpp — pathfinder(model, config): variational inference along the
// path of an L-BFGS optimisation (Zhang, Carpenter, Gelman & Vehtari 2022, "Pathfinder: parallel
// quasi-Newton variational inference", JMLR 23(306)). Each iterate of L-BFGS on log p (with the
// log-Jacobian, on the unconstrained scale) defines a Gaussian: its covariance is the L-BFGS
// estimate of the inverse Hessian there (a diagonal updated as the paper's Algorithm 3, plus
// the rank-2J correction of the last J pairs, Byrd, Nocedal & Schnabel 1994), its mean one
// Newton step from the iterate. The Gaussian with the highest ELBO estimate (num_elbo_draws
// draws) is the path's approximation. Several paths (num_paths, each from its own random
// initial point, on threads) are pooled by Pareto-smoothed importance resampling (psis.hpp).
// CmdStan's pathfinder defaults throughout (docs/inference.md).
//
//     const auto approx = tyche::pathfinder(m);          // 4 paths, 1000 draws resampled
//     std::cout << tyche::summary(approx);               // and approx.pareto_k
#pragma once
#include <tyche/concepts.hpp>
#include <tyche/inference/fit.hpp>
#include <tyche/inference/lbfgs.hpp>
#include <tyche/inference/model_density.hpp>
#include <tyche/inference/psis.hpp>
#include <tyche/model/quantities.hpp>
#include <tyche/random/philox.hpp>
#include <tyche/samplers/nuts/config.hpp>
#include <tyche/samplers/nuts/cpus.hpp>
#include <tyche/scalar/format.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace tyche {

/// Settings of pathfinder(): CmdStan's pathfinder method, with its defaults.
struct pathfinder_config {
  int num_paths = 4;
  int num_draws = 1000;       // draws from each path's approximation
  int num_psis_draws = 1000;  // draws returned after resampling (num_paths > 1)
  int num_elbo_draws = 25;    // draws per ELBO estimate along a path
  bool psis_resample = true;  // false: return every path's draws, unweighted
  int history_size = 5;
  int max_lbfgs_iters = 1000;
  double init_alpha = 0.001;
  double tol_obj = 1e-12;
  double tol_rel_obj = 1e4;
  double tol_grad = 1e-8;
  double tol_rel_grad = 1e7;
  double tol_param = 1e-8;
  std::uint64_t seed = 1;
  double init_radius = 2.0;
  /// Initial values on the constrained scale for every path; empty: random, a point per path.
  std::vector<double> init = {};
  /// Threads running the paths; 0: one per path, up to the CPUs this process may run on.
  int threads = 0;
};

namespace inference {

/// One path's best Gaussian: N(mean, D + W M W'), D = diag(alpha), W = [S, D·Y] (d × 2m),
/// sampled through a thin QR factorisation of D^(−1/2)·W, or densely when d ≤ 2m.
template <class = void>
class basic_lbfgs_gaussian {
 public:
  /// From the iterate x with gradient g (of log p), the diagonal and the pairs (oldest first;
  /// y = ∇log p(x_k) − ∇log p(x_k+1), so s'y > 0). False when the covariance is not positive
  /// definite (rounding): the iterate has no approximation.
  bool build(const std::vector<double>& x, const std::vector<double>& g, const std::vector<double>& alpha,
             const std::vector<std::vector<double>>& s, const std::vector<std::vector<double>>& y) {
    d_ = x.size();
    m_ = s.size();
    alpha_ = alpha;
    const std::size_t k = 2 * m_;
    // W = [S, D·Y] (column-major: column c holds d values), and M (k × k, row-major).
    w_.assign(d_ * k, 0.0);
    for (std::size_t j = 0; j < m_; ++j)
      for (std::size_t i = 0; i < d_; ++i) {
        w_[j * d_ + i] = s[j][i];
        w_[(m_ + j) * d_ + i] = alpha[i] * y[j][i];
      }
    std::vector<double> r(m_ * m_, 0.0), rinv(m_ * m_, 0.0), ydy(m_ * m_, 0.0);
    for (std::size_t i = 0; i < m_; ++i)
      for (std::size_t j = i; j < m_; ++j) r[i * m_ + j] = detail::dot(s[i].data(), y[j].data(), d_);
    for (std::size_t i = 0; i < m_; ++i)
      for (std::size_t j = 0; j < m_; ++j) {
        double v = 0;
        for (std::size_t t = 0; t < d_; ++t) v += y[i][t] * alpha[t] * y[j][t];
        ydy[i * m_ + j] = v;
      }
    // R⁻¹ (upper triangular) column by column.
    for (std::size_t c = 0; c < m_; ++c)
      for (std::size_t i = c + 1; i-- > 0;) {
        double v = i == c ? 1.0 : 0.0;
        for (std::size_t t = i + 1; t <= c; ++t) v -= r[i * m_ + t] * rinv[t * m_ + c];
        rinv[i * m_ + c] = v / r[i * m_ + i];
      }
    // M = [[R⁻ᵀ (E + Y'DY) R⁻¹, −R⁻ᵀ], [−R⁻¹, 0]].
    std::vector<double> inner = ydy;
    for (std::size_t i = 0; i < m_; ++i) inner[i * m_ + i] += r[i * m_ + i];
    m_mat_.assign(k * k, 0.0);
    for (std::size_t i = 0; i < m_; ++i)
      for (std::size_t j = 0; j < m_; ++j) {
        double v = 0;
        for (std::size_t a = 0; a < m_; ++a)
          for (std::size_t b = 0; b < m_; ++b) v += rinv[a * m_ + i] * inner[a * m_ + b] * rinv[b * m_ + j];
        m_mat_[i * k + j] = v;
        m_mat_[i * k + m_ + j] = -rinv[j * m_ + i];  // −R⁻ᵀ
        m_mat_[(m_ + i) * k + j] = -rinv[i * m_ + j];  // −R⁻¹
      }
    // mean = x + Σ g.
    mean_ = x;
    const std::vector<double> sg = covariance_times(g);
    for (std::size_t i = 0; i < d_; ++i) mean_[i] += sg[i];
    for (double v : mean_)
      if (!std::isfinite(v)) return false;
    log_det_ = 0;
    for (double a : alpha) log_det_ += std::log(a);
    if (d_ <= k) {  // dense: Σ = L L'
      dense_ = true;
      chol_ = covariance();
      if (!detail::cholesky(chol_, d_)) return false;
      log_det_ = 0;
      for (std::size_t i = 0; i < d_; ++i) log_det_ += 2 * std::log(chol_[i * d_ + i]);
      return std::isfinite(log_det_);
    }
    dense_ = false;
    // Householder QR of D^(−1/2) W: q_ (d × k, column-major, orthonormal columns), rq (k × k).
    std::vector<double> a(d_ * k);
    for (std::size_t c = 0; c < k; ++c)
      for (std::size_t i = 0; i < d_; ++i) a[c * d_ + i] = w_[c * d_ + i] / std::sqrt(alpha[i]);
    std::vector<double> rq(k * k, 0.0);
    std::vector<std::vector<double>> reflectors;
    for (std::size_t c = 0; c < k; ++c) {
      std::vector<double> v(d_, 0.0);
      double norm = 0;
      for (std::size_t i = c; i < d_; ++i) norm += a[c * d_ + i] * a[c * d_ + i];
      norm = std::sqrt(norm);
      const double alpha_c = a[c * d_ + c] > 0 ? -norm : norm;
      for (std::size_t i = c; i < d_; ++i) v[i] = a[c * d_ + i];
      v[c] -= alpha_c;
      const double vv = detail::dot(v.data(), v.data(), d_);
      if (vv > 0)
        for (std::size_t cc = c; cc < k; ++cc) {
          const double f = 2 * detail::dot(v.data(), &a[cc * d_], d_) / vv;
          for (std::size_t i = c; i < d_; ++i) a[cc * d_ + i] -= f * v[i];
        }
      for (std::size_t j = c; j < k; ++j) rq[c * k + j] = a[j * d_ + c];
      reflectors.push_back(vv > 0 ? v : std::vector<double>());
    }
    q_.assign(d_ * k, 0.0);
    for (std::size_t c = 0; c < k; ++c) {  // Q e_c = H_0 … H_{k−1} e_c
      std::vector<double> e(d_, 0.0);
      e[c] = 1;
      for (std::size_t h = k; h-- > 0;) {
        const auto& v = reflectors[h];
        if (v.empty()) continue;
        const double f = 2 * detail::dot(v.data(), e.data(), d_) / detail::dot(v.data(), v.data(), d_);
        for (std::size_t i = 0; i < d_; ++i) e[i] -= f * v[i];
      }
      std::copy(e.begin(), e.end(), q_.begin() + static_cast<std::ptrdiff_t>(c * d_));
    }
    // I + Rq M Rq' = L̃ L̃'.
    std::vector<double> rm(k * k, 0.0);
    chol_.assign(k * k, 0.0);
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) {
        double v = 0;
        for (std::size_t t = 0; t < k; ++t) v += rq[i * k + t] * m_mat_[t * k + j];
        rm[i * k + j] = v;
      }
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) {
        double v = i == j ? 1.0 : 0.0;
        for (std::size_t t = 0; t < k; ++t) v += rm[i * k + t] * rq[j * k + t];
        chol_[i * k + j] = v;
      }
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < i; ++j) chol_[i * k + j] = chol_[j * k + i] = 0.5 * (chol_[i * k + j] + chol_[j * k + i]);
    if (!detail::cholesky(chol_, k)) return false;
    for (std::size_t i = 0; i < k; ++i) log_det_ += 2 * std::log(chol_[i * k + i]);
    return std::isfinite(log_det_);
  }

  /// A draw x and its log density under the Gaussian.
  double draw(counter_rng& rng, std::vector<double>& x) const {
    std::vector<double> u(d_);
    double uu = 0;
    for (double& v : u) {
      v = rng.normal();
      uu += v * v;
    }
    x.assign(d_, 0.0);
    if (dense_) {
      for (std::size_t i = 0; i < d_; ++i) {
        double v = 0;
        for (std::size_t j = 0; j <= i; ++j) v += chol_[i * d_ + j] * u[j];
        x[i] = mean_[i] + v;
      }
    } else {  // x = mean + D^(1/2) (u + Q (L̃ − I) Q'u)
      const std::size_t k = 2 * m_;
      std::vector<double> qu(k), lw(k);
      for (std::size_t c = 0; c < k; ++c) qu[c] = detail::dot(&q_[c * d_], u.data(), d_);
      for (std::size_t i = 0; i < k; ++i) {
        double v = -qu[i];
        for (std::size_t j = 0; j <= i; ++j) v += chol_[i * k + j] * qu[j];
        lw[i] = v;
      }
      for (std::size_t i = 0; i < d_; ++i) {
        double v = u[i];
        for (std::size_t c = 0; c < k; ++c) v += q_[c * d_ + i] * lw[c];
        x[i] = mean_[i] + std::sqrt(alpha_[i]) * v;
      }
    }
    return -0.5 * (static_cast<double>(d_) * detail::log_two_pi + log_det_ + uu);
  }

  /// Σ v = D v + W (M (W' v)).
  [[nodiscard]] std::vector<double> covariance_times(const std::vector<double>& v) const {
    const std::size_t k = 2 * m_;
    std::vector<double> wv(k), mwv(k, 0.0), out(d_);
    for (std::size_t c = 0; c < k; ++c) wv[c] = detail::dot(&w_[c * d_], v.data(), d_);
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) mwv[i] += m_mat_[i * k + j] * wv[j];
    for (std::size_t i = 0; i < d_; ++i) {
      double s = alpha_[i] * v[i];
      for (std::size_t c = 0; c < k; ++c) s += w_[c * d_ + i] * mwv[c];
      out[i] = s;
    }
    return out;
  }
  /// The diagonal of Σ: α_i + Σ_{b,c} W_ib M_bc W_ic, O(d·J²).
  [[nodiscard]] std::vector<double> variance() const {
    const std::size_t k = 2 * m_;
    std::vector<double> out(d_);
    for (std::size_t i = 0; i < d_; ++i) {
      double v = alpha_[i];
      for (std::size_t b = 0; b < k; ++b)
        for (std::size_t c = 0; c < k; ++c) v += w_[b * d_ + i] * m_mat_[b * k + c] * w_[c * d_ + i];
      out[i] = v;
    }
    return out;
  }
  /// Σ, d × d row-major.
  [[nodiscard]] std::vector<double> covariance() const {
    std::vector<double> out(d_ * d_), e(d_, 0.0);
    for (std::size_t j = 0; j < d_; ++j) {
      e[j] = 1;
      const std::vector<double> col = covariance_times(e);
      e[j] = 0;
      for (std::size_t i = 0; i < d_; ++i) out[i * d_ + j] = col[i];
    }
    return out;
  }
  [[nodiscard]] const std::vector<double>& mean() const { return mean_; }

 private:
  std::size_t d_ = 0, m_ = 0;
  bool dense_ = true;
  std::vector<double> alpha_, w_, m_mat_, mean_, q_, chol_;
  double log_det_ = 0;
};
using lbfgs_gaussian = basic_lbfgs_gaussian<>;

/// One path: its best Gaussian, and num_draws draws from it with log p and log q.
struct pathfinder_path {
  bool ok = false;
  std::string failure;  // why not ok
  lbfgs_gaussian best;
  double elbo = -std::numeric_limits<double>::infinity();
  int iterations = 0;
  bool hit_limit = false;  // L-BFGS stopped at max_lbfgs_iters, not on a convergence test
  long long evaluations = 0;
  std::vector<std::vector<double>> draws;  // unconstrained
  std::vector<double> log_p, log_q;
};

/// The diagonal update of the paper's Algorithm 3 (the diagonal of a BFGS update of
/// diag(1/α) scaled by y'αy / y's, inverted).
template <class = void>
void update_diagonal(std::vector<double>& alpha, const std::vector<double>& s, const std::vector<double>& y) {
  const std::size_t d = alpha.size();
  double y_alpha_y = 0, s_inv_alpha_s = 0;
  for (std::size_t i = 0; i < d; ++i) {
    y_alpha_y += y[i] * alpha[i] * y[i];
    s_inv_alpha_s += s[i] * s[i] / alpha[i];
  }
  const double ys = detail::dot(y.data(), s.data(), d);
  std::vector<double> next(d);
  for (std::size_t i = 0; i < d; ++i) {
    const double ratio = s[i] / alpha[i];
    next[i] = ys / (y_alpha_y / alpha[i] + y[i] * y[i] - y_alpha_y / s_inv_alpha_s * ratio * ratio);
    if (!(next[i] > 0) || !std::isfinite(next[i])) return;  // keep the old diagonal
  }
  alpha = next;
}

/// Runs one path from x0 (stream `stream` of the seed for its ELBO and final draws).
template <class = void>
pathfinder_path run_path(const log_density_function& density, std::vector<double> x0,
                                const pathfinder_config& cfg, std::uint64_t stream) {
  pathfinder_path path;
  const lbfgs_settings settings{cfg.max_lbfgs_iters, cfg.init_alpha, cfg.tol_obj, cfg.tol_rel_obj, cfg.tol_grad,
                                cfg.tol_rel_grad, cfg.tol_param, cfg.history_size, /*dense=*/false};
  const lbfgs_result r = lbfgs(density, std::move(x0), settings, true);
  path.iterations = r.iterations;
  path.hit_limit = r.termination == lbfgs_termination::max_iterations;
  path.evaluations = r.evaluations;
  const std::size_t d = density.dim, steps = r.path.size();
  if (steps < 2) {
    path.failure = "L-BFGS made no step (" + std::string(lbfgs_message(r.termination)) + ")";
    return path;
  }
  counter_rng rng(cfg.seed, 2 * stream + 1);
  std::vector<double> alpha(d, 1.0), workspace(density.workspace_size), grad(d), x(d);
  std::vector<std::vector<double>> s, y;
  for (std::size_t l = 1; l < steps; ++l) {
    std::vector<double> sk(d), yk(d);
    for (std::size_t i = 0; i < d; ++i) {
      sk[i] = r.path[l][i] - r.path[l - 1][i];
      yk[i] = r.path_gradients[l - 1][i] - r.path_gradients[l][i];
    }
    // Stan's curvature test (check_curve): ‖y‖² / s'y ≤ 1e12; a pair with less curvature would
    // give the Gaussian an enormous variance along s.
    if (detail::dot(sk.data(), yk.data(), d) >= 1e-12 * detail::dot(yk.data(), yk.data(), d)) {
      update_diagonal(alpha, sk, yk);
      if (static_cast<int>(s.size()) == cfg.history_size) {
        s.erase(s.begin());
        y.erase(y.begin());
      }
      s.push_back(sk);
      y.push_back(yk);
    }
    if (s.empty()) continue;
    lbfgs_gaussian q;
    if (!q.build(r.path[l], r.path_gradients[l], alpha, s, y)) continue;
    double elbo = 0;
    for (int n = 0; n < cfg.num_elbo_draws; ++n) {
      const double lq = q.draw(rng, x);
      const double lp = density(x.data(), grad.data(), workspace.data());
      ++path.evaluations;
      elbo += (std::isnan(lp) ? -std::numeric_limits<double>::infinity() : lp - lq) / cfg.num_elbo_draws;
    }
    if (elbo > path.elbo) {
      path.elbo = elbo;
      path.best = std::move(q);
      path.ok = true;
    }
  }
  if (!path.ok) {
    path.failure = "no iterate had a finite ELBO estimate";
    return path;
  }
  path.draws.resize(static_cast<std::size_t>(cfg.num_draws));
  for (auto& draw : path.draws) {
    path.log_q.push_back(path.best.draw(rng, draw));
    const double lp = density(draw.data(), grad.data(), workspace.data());
    ++path.evaluations;
    path.log_p.push_back(std::isnan(lp) ? -std::numeric_limits<double>::infinity() : lp);
  }
  return path;
}

template <class = void>
void check_pathfinder_config(const pathfinder_config& c) {
  const std::string fn = "tyche::pathfinder: ";
  check_lbfgs_settings({c.max_lbfgs_iters, c.init_alpha, c.tol_obj, c.tol_rel_obj, c.tol_grad, c.tol_rel_grad,
                        c.tol_param, c.history_size},
                       fn);
  const std::pair<const char*, int> at_least_one[] = {{"num_paths", c.num_paths}, {"num_draws", c.num_draws},
                                                      {"num_psis_draws", c.num_psis_draws},
                                                      {"num_elbo_draws", c.num_elbo_draws}};
  for (const auto& [name, v] : at_least_one)
    if (v < 1) throw std::invalid_argument(fn + name + " = " + std::to_string(v) + " must be >= 1");
  if (c.threads < 0) throw std::invalid_argument(fn + "threads = " + std::to_string(c.threads) + " must be >= 0");
}

/// pathfinder() on a model's functions.
template <class = void>
approximate_fit pathfinder(const model_functions& model, const pathfinder_config& cfg) {
  const std::string fn = "tyche::pathfinder: ";
  check_pathfinder_config(cfg);
  const auto start = std::chrono::steady_clock::now();
  const log_density_function& density = model.with_jacobian;
  const std::size_t d = density.dim, paths = static_cast<std::size_t>(cfg.num_paths);
  // Initial points first, in path order (stream 2i of the seed), so that the result does not
  // depend on the threads.
  std::vector<std::vector<double>> starts;
  for (std::size_t i = 0; i < paths; ++i) {
    counter_rng rng(cfg.seed, 2 * i);
    starts.push_back(initial_point(model, density, cfg.init, cfg.init_radius, rng, fn));
  }
  std::vector<pathfinder_path> results(paths);
  std::vector<std::exception_ptr> errors(paths);
  const unsigned hw = samplers::detail::available_cpus();
  const std::size_t threads = std::min<std::size_t>(paths, cfg.threads > 0 ? static_cast<std::size_t>(cfg.threads) : hw);
  auto work = [&](std::size_t t) {
    for (std::size_t i = t; i < paths; i += threads) {
      try {
        results[i] = run_path(density, starts[i], cfg, i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  if (threads <= 1) {
    work(0);
  } else {
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(work, t);
    for (auto& th : pool) th.join();
  }
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);

  approximate_fit fit;
  fit.method = "pathfinder";
  {
    using tyche::detail::format_number;
    fit.settings = {{"init_alpha", format_number(cfg.init_alpha)},
                    {"tol_obj", format_number(cfg.tol_obj)},
                    {"tol_rel_obj", format_number(cfg.tol_rel_obj)},
                    {"tol_grad", format_number(cfg.tol_grad)},
                    {"tol_rel_grad", format_number(cfg.tol_rel_grad)},
                    {"tol_param", format_number(cfg.tol_param)},
                    {"history_size", std::to_string(cfg.history_size)},
                    {"num_psis_draws", std::to_string(cfg.num_psis_draws)},
                    {"num_paths", std::to_string(cfg.num_paths)},
                    {"psis_resample", cfg.psis_resample ? "1" : "0"},
                    {"max_lbfgs_iters", std::to_string(cfg.max_lbfgs_iters)},
                    {"num_draws", std::to_string(cfg.num_draws)},
                    {"num_elbo_draws", std::to_string(cfg.num_elbo_draws)}};
  }
  fit.names = model.names;
  fit.seed = cfg.seed;
  std::vector<std::size_t> good;
  for (std::size_t i = 0; i < paths; ++i) {
    fit.gradient_evaluations += results[i].evaluations;
    if (results[i].ok) good.push_back(i);
    else fit.warnings.push_back("path " + std::to_string(i + 1) + " failed: " + results[i].failure);
  }
  if (good.empty())
    throw std::runtime_error(fn + "every path failed (path 1: " + results[0].failure +
                             "); the log density may be unbounded or have no usable curvature");
  {  // paths whose L-BFGS stopped at its iteration limit (a new user's max_lbfgs_iters = 2 gave
     // mu 1.99 against NUTS's 4.3 with only k̂ to say so, 2026-12-05)
    std::size_t limited = 0;
    for (std::size_t i : good) limited += results[i].hit_limit ? 1 : 0;
    if (limited > 0)
      fit.warnings.push_back(std::to_string(limited) + " of the " + std::to_string(good.size()) +
                             " paths stopped at max_lbfgs_iters = " + std::to_string(cfg.max_lbfgs_iters) +
                             " before L-BFGS converged: their approximations come from the points reached, which "
                             "may be short of the posterior; raise max_lbfgs_iters");
  }
  {  // draws where the log density is NaN (stored as -inf) or -inf, over the paths that ran
    std::vector<double> all_p;
    for (std::size_t i : good) all_p.insert(all_p.end(), results[i].log_p.begin(), results[i].log_p.end());
    const bool resampled = paths > 1 && cfg.psis_resample;
    if (std::string w = undefined_draws_warning(all_p, !resampled); !w.empty()) fit.warnings.push_back(std::move(w));
  }
  // The draws: one path's as they are; several paths' pooled and resampled by PSIS weights.
  // Either way fit.pareto_k is the k̂ of the draws' importance weights log p − log q (Yao et al.
  // 2018's diagnostic, as laplace and advi report it), with a warning above 0.7.
  const auto diagnose = [&](const std::vector<double>& log_w) {
    psis_result smoothed = psis(log_w);
    fit.pareto_k = smoothed.pareto_k;
    if (std::isnan(smoothed.pareto_k)) {
      if (paths > 1)  // (one path: few draws are for initial points, and need no k̂)
        fit.warnings.push_back("too few draws (" + std::to_string(log_w.size()) +
                               ") to estimate the Pareto k of the importance weights; raise num_draws");
    } else if (!(smoothed.pareto_k <= 0.7)) {
      fit.warnings.push_back("Pareto k = " + tyche::detail::format_number(std::round(smoothed.pareto_k * 100) / 100) +
                             " > 0.7: the importance weights are unreliable; the approximation may be far from "
                             "the posterior (use nuts())");
    }
    return smoothed;
  };
  std::vector<const std::vector<double>*> chosen;
  std::vector<double> log_p, log_q;
  if (paths == 1) {
    const pathfinder_path& p = results[good[0]];
    for (std::size_t n = 0; n < p.draws.size(); ++n) chosen.push_back(&p.draws[n]);
    log_p = p.log_p;
    log_q = p.log_q;
    std::vector<double> log_w(log_p.size());
    for (std::size_t n = 0; n < log_w.size(); ++n) log_w[n] = log_p[n] - log_q[n];
    diagnose(log_w);
    fit.mean = p.best.mean();
    if (d <= 1000) {
      fit.covariance = p.best.covariance();
      fit.variance = detail::diagonal(fit.covariance, d);
    } else {
      fit.variance = p.best.variance();
    }
  } else {
    std::vector<const std::vector<double>*> pooled;
    std::vector<double> pooled_p, pooled_q, log_w;
    for (std::size_t i : good)
      for (std::size_t n = 0; n < results[i].draws.size(); ++n) {
        pooled.push_back(&results[i].draws[n]);
        pooled_p.push_back(results[i].log_p[n]);
        pooled_q.push_back(results[i].log_q[n]);
        log_w.push_back(results[i].log_p[n] - results[i].log_q[n]);
      }
    const psis_result smoothed = diagnose(log_w);
    if (!cfg.psis_resample) {
      chosen = pooled;
      log_p = pooled_p;
      log_q = pooled_q;
    } else {
      counter_rng rng(cfg.seed, 2 * paths + 1);
      const std::vector<std::size_t> picks =
          resample(smoothed.log_weights, static_cast<std::size_t>(cfg.num_psis_draws), rng);
      fit.resampled = true;
      for (std::size_t j : picks) {
        chosen.push_back(pooled[j]);
        log_p.push_back(pooled_p[j]);
        log_q.push_back(pooled_q[j]);
      }
    }
  }
  if (paths > 1 && !chosen.empty()) {  // the mean and covariance of the draws returned
    const double n = static_cast<double>(chosen.size());
    fit.mean.assign(d, 0.0);
    for (const auto* x : chosen)
      for (std::size_t i = 0; i < d; ++i) fit.mean[i] += (*x)[i] / n;
    fit.variance.assign(d, 0.0);
    if (d <= 1000) fit.covariance.assign(d * d, 0.0);
    for (const auto* x : chosen)
      for (std::size_t i = 0; i < d; ++i) {
        const double a = (*x)[i] - fit.mean[i];
        fit.variance[i] += a * a / (n > 1 ? n - 1 : 1);
        if (d <= 1000)
          for (std::size_t j = 0; j < d; ++j) fit.covariance[i * d + j] += a * ((*x)[j] - fit.mean[j]) / (n > 1 ? n - 1 : 1);
      }
    // Regularised towards 10⁻³·I as Stan's metric windows are (n/(n+5)·Σ + 10⁻³·5/(n+5)·I):
    // resampled draws repeat, and fewer distinct draws than d + 1 would leave Σ singular.
    for (std::size_t i = 0; i < d; ++i) {
      fit.variance[i] = n / (n + 5) * fit.variance[i] + 1e-3 * 5 / (n + 5);
      if (d <= 1000)
        for (std::size_t j = 0; j < d; ++j)
          fit.covariance[i * d + j] = n / (n + 5) * fit.covariance[i * d + j] + (i == j ? 1e-3 * 5 / (n + 5) : 0.0);
    }
  }
  fit.draws = static_cast<int>(chosen.size());
  fit.values.assign(1, {});
  fit.values[0].reserve(chosen.size() * model.constrained_dim);
  for (const auto* x : chosen) model.constrain_into(x->data(), fit.values[0]);
  fit.log_p.assign(1, log_p);
  fit.log_q.assign(1, log_q);
  fit.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return fit;
}

}  // namespace inference

/// Pathfinder variational inference (CmdStan's pathfinder method and defaults): num_paths
/// L-BFGS paths from random initial points, each giving the Gaussian with the best ELBO along
/// it; with one path, num_draws draws from it (fit.mean and fit.covariance are that Gaussian);
/// with several, their draws pooled and resampled by Pareto-smoothed importance weights to
/// num_psis_draws (fit.pareto_k; above 0.7 a warning). The draws approximate the posterior;
/// they are also good initial points for nuts().
template <class Model>
approximate_fit pathfinder(const Model& m, const pathfinder_config& cfg = {}) {
  if constexpr (!sampleable_model<Model>) {
    static_assert(sampleable_model<Model>,
                  "tyche::pathfinder(model, config) requires a model built with tyche::model(...); the first "
                  "argument is not one");
    return {};
  } else {
    approximate_fit fit = inference::pathfinder(inference::functions_of(m), cfg);
    tyche::detail::append_quantities(m, fit);
    return fit;
  }
}

/// nuts()'s settings with each chain's initial values and the initial inverse metric taken from
/// multi-path Pathfinder (Stan's init = pathfinder; cmdstanpy issue 787): cfg.init gets
/// cfg.chains distinct draws of pathfinder(m, pf) (approximate_fit::initial_values), and
/// cfg.init_inv_metric its variances (metric = diagonal) or covariance (dense) — for low_rank
/// cfg.init_inv_metric_factors, the covariance's factors (decomposed once here; the variances
/// alone where the fit holds no covariance, d > 1,000) — which warm-up replaces at the end of
/// its first window. pf's seed and init_radius are cfg's
/// unless given. Throws std::invalid_argument when cfg already holds init or init_inv_metric, and
/// Pathfinder's error (std::runtime_error, prefixed) when no path gives an approximation. The
/// Pathfinder fit's warnings (a Pareto k̂ above 0.7) are lost here: call pathfinder() and
/// initial_values() yourself to see them.
///
///   const auto fit = tyche::nuts(m, tyche::pathfinder_init(m, {.chains = 4}));
template <class Model>
nuts_config pathfinder_init(const Model& m, nuts_config cfg, std::optional<pathfinder_config> pf = std::nullopt) {
  if constexpr (!sampleable_model<Model>) {
    static_assert(sampleable_model<Model>,
                  "tyche::pathfinder_init(model, nuts_config) requires a model built with tyche::model(...); the "
                  "first argument is not one");
    return cfg;
  } else {
    if (!cfg.init.empty() || !cfg.init_inv_metric.empty() || !cfg.init_inv_metric_factors.empty())
      throw std::invalid_argument(
          "tyche::pathfinder_init: the nuts_config already holds init or init_inv_metric (or init_inv_metric_factors)");
    if (cfg.chains < 1)
      throw std::invalid_argument("tyche::pathfinder_init: chains = " + std::to_string(cfg.chains) + " must be >= 1");
    pathfinder_config settings = pf ? *pf : pathfinder_config{.seed = cfg.seed, .init_radius = cfg.init_radius};
    approximate_fit fit;
    try {
      fit = inference::pathfinder(inference::functions_of(m), settings);
    } catch (const std::invalid_argument&) {
      throw;
    } catch (const std::exception& e) {
      throw std::runtime_error(std::string("tyche::pathfinder_init: ") + e.what());
    }
    cfg.init = fit.initial_values(cfg.chains);
    if (cfg.metric != samplers::metric_kind::low_rank) {
      cfg.init_inv_metric = fit.inverse_metric(samplers::stored_dense(cfg.metric));
      return cfg;
    }
    const std::size_t d = fit.variance.size();
    std::vector<double>& f = cfg.init_inv_metric_factors;
    f.assign(samplers::low_rank_factors_size(d, fit.covariance.empty() ? 0 : d), 0.0);
    bool ok = false;
    if (fit.covariance.empty()) {
      ok = samplers::low_rank_factors_from_diagonal(fit.variance.data(), d, 0, f.data());
    } else {
      const std::vector<double> covariance = fit.inverse_metric(true);
      std::vector<double> work(samplers::low_rank_matrix_workspace(d));
      ok = samplers::low_rank_factors_from_matrix(covariance.data(), d, d, f.data(), work.data());
      if (ok) {  // only the k directions it has: the rest of the room goes
        std::vector<double> keep(2 * static_cast<std::size_t>(f[0])), small(f.size());
        const std::size_t k = static_cast<std::size_t>(f[0]);
        small.resize(samplers::low_rank_factors_size(d, k));
        samplers::low_rank_copy(f.data(), d, k, small.data(), keep.data());
        f = std::move(small);
      }
    }
    if (!ok)
      throw std::runtime_error("tyche::pathfinder_init: the approximation's covariance is not positive definite");
    return cfg;
  }
}

}  // namespace tyche
