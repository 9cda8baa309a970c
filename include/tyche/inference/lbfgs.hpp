// tyche/inference/lbfgs.hpp — L-BFGS on a log density with its gradient (Nocedal & Wright,
// "Numerical Optimization", 2nd ed., Algorithms 7.4 and 7.5, with the strong-Wolfe line search of
// Algorithms 3.5 and 3.6), with CmdStan's optimize defaults and convergence tests: what
// optimize(), laplace() and pathfinder() stand on (docs/inference.md).
//
// The algorithms of this folder are plain functions of a log_density_function (a log density on
// R^d and its gradient, with the model's type erased): they are compiled once per translation
// unit, not once per model, and only where a program calls them.
#pragma once
#include <tyche/config.hpp>
#include <tyche/scalar/format.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace tyche {

namespace inference {

/// A log density on R^d with its gradient: log p(x), and ∇log p(x) written to grad. The
/// model's own type is erased (one indirect call per evaluation). `workspace` is scratch of the
/// model's workspace_size(), owned by the caller, so that several threads can evaluate at once.
struct log_density_function {
  std::size_t dim = 0;
  std::size_t workspace_size = 0;
  const void* self = nullptr;
  double (*value_and_gradient)(const void* self, const double* x, double* grad, double* workspace) = nullptr;
  /// The parameter-free constant inside the log density (program::constant_term; 0 when not
  /// known): L-BFGS's relative tests measure log p − constant, as Stan's optimiser measures
  /// log_prob_propto, so that constants do not loosen them.
  double constant = 0;
  double operator()(const double* x, double* grad, double* workspace) const {
    return value_and_gradient(self, x, grad, workspace);
  }
};

/// Why an L-BFGS run stopped. The first five are convergence (CmdStan's messages, lbfgs_message).
enum class lbfgs_termination {
  absolute_objective,   // |Δ log p| < tol_obj
  relative_objective,   // |Δ log p| / max(|log p − C|, |log p' − C|, 1) < tol_rel_obj · ε (C: constant)
  absolute_gradient,    // ‖∇log p‖ < tol_grad
  relative_gradient,    // ∇'H∇ / max(|log p − C|, 1) < tol_rel_grad · ε (H: the L-BFGS inverse Hessian)
  absolute_parameter,   // ‖Δx‖ < tol_param
  max_iterations,       // not converged
  line_search_failed,   // no step satisfied the Wolfe conditions, from the quasi-Newton direction
                        // and again from the gradient: no more progress can be made
};

[[nodiscard]] inline bool converged(lbfgs_termination t) { return t <= lbfgs_termination::absolute_parameter; }

[[nodiscard]] inline const char* lbfgs_message(lbfgs_termination t) {
  switch (t) {
    case lbfgs_termination::absolute_objective:
      return "Convergence detected: absolute change in objective function was below tolerance";
    case lbfgs_termination::relative_objective:
      return "Convergence detected: relative change in objective function was below tolerance";
    case lbfgs_termination::absolute_gradient: return "Convergence detected: gradient norm is below tolerance";
    case lbfgs_termination::relative_gradient:
      return "Convergence detected: relative gradient magnitude is below tolerance";
    case lbfgs_termination::absolute_parameter:
      return "Convergence detected: absolute parameter change was below tolerance";
    case lbfgs_termination::max_iterations: return "Maximum number of iterations hit, may not be at an optimum";
    case lbfgs_termination::line_search_failed:
      return "Line search failed to achieve a sufficient decrease, no more progress can be made";
  }
  return "";
}

/// CmdStan's optimize (lbfgs) settings, with its defaults.
struct lbfgs_settings {
  int iterations = 2000;       // iter
  double init_alpha = 0.001;   // the first line search's first step, along the gradient
  double tol_obj = 1e-12;
  double tol_rel_obj = 1e4;    // in units of machine ε
  double tol_grad = 1e-8;
  double tol_rel_grad = 1e7;   // in units of machine ε
  double tol_param = 1e-8;
  int history_size = 5;
  /// false: L-BFGS (the last history_size pairs); true: BFGS, the whole n × n inverse Hessian
  /// approximation (CmdStan's algorithm = bfgs; O(n²) memory and work per iteration).
  bool dense = false;
};

/// Checks settings (any inference method's lbfgs part); `fn` prefixes the message.
template <class = void>
void check_lbfgs_settings(const lbfgs_settings& s, const std::string& fn) {
  auto fail = [&](const std::string& what) { throw std::invalid_argument(fn + what); };
  if (s.iterations < 1) fail("iterations = " + std::to_string(s.iterations) + " must be >= 1");
  if (s.history_size < 1) fail("history_size = " + std::to_string(s.history_size) + " must be >= 1");
  const std::pair<const char*, double> positive[] = {{"init_alpha", s.init_alpha}, {"tol_obj", s.tol_obj},
                                                     {"tol_rel_obj", s.tol_rel_obj}, {"tol_grad", s.tol_grad},
                                                     {"tol_rel_grad", s.tol_rel_grad}, {"tol_param", s.tol_param}};
  for (const auto& [name, v] : positive)
    if (!(v > 0) || !std::isfinite(v))
      fail(std::string(name) + " = " + tyche::detail::format_number(v) + " is not a positive finite number");
}

/// One L-BFGS run: the point, log density and gradient where it stopped, why, and optionally
/// every iterate (pathfinder's path: x_0 … x_L and their gradients).
struct lbfgs_result {
  std::vector<double> x, gradient;  // ∇log p at x
  double log_density = 0;
  int iterations = 0;
  long long evaluations = 0;  // log density and gradient evaluations, line searches included
  lbfgs_termination termination = lbfgs_termination::max_iterations;
  std::vector<std::vector<double>> path, path_gradients;  // record = true: x_0, x_1, … (accepted iterates)
  std::vector<double> path_log_density;
};

namespace detail {

template <class = void>
double dot(const double* a, const double* b, std::size_t n) {
  double s = 0;
  for (std::size_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

/// The minimiser of the cubic through (a, fa, da) and (b, fb, db), or NaN where it has none.
template <class = void>
double cubic_minimiser(double a, double fa, double da, double b, double fb, double db) {
  const double d1 = da + db - 3 * (fa - fb) / (a - b);
  const double disc = d1 * d1 - da * db;
  if (!(disc >= 0)) return std::nan("");
  const double d2 = std::copysign(std::sqrt(disc), b - a);
  return b - (b - a) * (db + d2 - d1) / (db - da + 2 * d2);
}

/// The first trial step of an iteration after the first, as Stan's BFGS minimiser chooses it:
/// the minimiser over [lo, hi] of the cubic h with h(0) = 0, h'(0) = df0, h(x1) = f1,
/// h'(x1) = df1 (the previous step's change of f along its direction, at its step x1).
template <class = void>
double cubic_step(double df0, double x1, double f1, double df1, double lo, double hi) {
  const double a_ = f1 - df0 * x1, b_ = df1 - df0;
  const double b = (b_ - 2 * a_ / x1) / (x1 * x1), a = (a_ - b * x1 * x1 * x1) / (x1 * x1);
  auto h = [&](double t) { return t * (df0 + t * (a + t * b)); };
  double best = lo, best_h = h(lo);
  auto consider = [&](double t) {
    if (t >= lo && t <= hi && std::isfinite(t) && h(t) < best_h) {
      best = t;
      best_h = h(t);
    }
  };
  consider(hi);
  // h'(t) = df0 + 2a t + 3b t²
  if (b != 0) {
    const double disc = 4 * a * a - 12 * b * df0;
    if (disc >= 0) {
      consider((-2 * a + std::sqrt(disc)) / (6 * b));
      consider((-2 * a - std::sqrt(disc)) / (6 * b));
    }
  } else if (a != 0) {
    consider(-df0 / (2 * a));
  }
  return best;
}

/// Minimises f = −log p along x + α·p by a strong-Wolfe line search (c1 = 1e-4, c2 = 0.9, as
/// Stan). Returns the step, or 0 when none was found; x_new, g_new, f_new hold the point found.
/// A non-finite f is treated as +∞ (the step shrinks).
template <class = void>
struct basic_line_search {
  const log_density_function& density;
  double* workspace;
  long long& evaluations;
  static constexpr double c1 = 1e-4, c2 = 0.9;  // Stan's
  static constexpr double first_alpha = 1e-12;   // the bracket's lower end before any trial (Stan's minAlpha)
  static constexpr double min_range = 1e-16;     // the narrowest bracket zoom works on
  static constexpr int max_growths = 20, max_halvings = 10;  // Stan's maxLSIts, maxLSRestarts
  static constexpr int max_evaluations = 100;

  struct point {
    double alpha, f, df;  // f = −log p, df = directional derivative of f along p
  };

  point evaluate(const std::vector<double>& x, const std::vector<double>& p, double alpha, std::vector<double>& x_new,
                 std::vector<double>& g_new) const {
    for (std::size_t i = 0; i < x.size(); ++i) x_new[i] = x[i] + alpha * p[i];
    ++evaluations;
    const double lp = density(x_new.data(), g_new.data(), workspace);  // g_new = ∇log p
    bool finite = std::isfinite(lp);
    for (double g : g_new) finite = finite && std::isfinite(g);
    if (!finite) return {alpha, std::numeric_limits<double>::infinity(), std::nan("")};
    return {alpha, -lp, -dot(g_new.data(), p.data(), p.size())};
  }

  /// Hager & Zhang's approximate Wolfe conditions (2005), for steps whose change of f is
  /// below its rounding: f within 1e-12·max(|f0|, 1) of f0, and the slope along p within
  /// [0.9·df0, −0.8·df0]. Near a mode the exact sufficient-decrease test compares f values that
  /// differ in their last bits only, and fails or passes by chance; away from one (any change
  /// of f above its rounding) the steps are Stan's.
  static bool approximately_wolfe(const point& cur, double f0, double df0) {
    return std::isfinite(cur.f) && std::fabs(cur.f - f0) <= 1e-12 * std::max(std::fabs(f0), 1.0) &&
           cur.df >= c2 * df0 && cur.df <= -0.8 * df0;
  }

  /// f0, df0 at α = 0 (df0 < 0); alpha0 the first trial step. Stan's WolfeLineSearch, step for
  /// step: the step grows ×10 while f decreases with a slope still steep; a non-finite f halves
  /// the distance to the last finite trial (Stan gives up after 10 halvings in a row; here each
  /// further trial goes a tenth of the way, until the distance is below min_range); the
  /// sufficient-decrease test of this phase compares with alpha0·c1·df0, as Stan's does. At
  /// most max_evaluations evaluations in all, zoom's included (Stan's zoom has no limit).
  double operator()(const std::vector<double>& x, const std::vector<double>& p, double f0, double df0, double alpha0,
                    std::vector<double>& x_new, std::vector<double>& g_new, double& f_new) const {
    point prev{first_alpha, f0, df0};
    double trial = alpha0;
    int used = 0, grown = 0, halved = 0;
    for (;;) {
      if (grown >= max_growths || used >= max_evaluations) return 0;
      const point cur = evaluate(x, p, trial, x_new, g_new);
      ++used;
      if (!std::isfinite(cur.f)) {
        // Stan gives up after max_halvings; a density that overflows far out along a steep
        // first gradient (sblrc from Stan's initial points) needs steps 10⁶ smaller: past
        // that many halvings, each trial is a tenth of the distance.
        if (trial - prev.alpha < min_range) return 0;
        trial = halved < max_halvings ? 0.5 * (prev.alpha + trial) : prev.alpha + 0.1 * (trial - prev.alpha);
        ++halved;
        continue;
      }
      halved = 0;
      if (approximately_wolfe(cur, f0, df0) && cur.f > f0 + alpha0 * c1 * df0) {
        f_new = cur.f;
        return trial;
      }
      if (cur.f > f0 + alpha0 * c1 * df0 || (grown > 0 && cur.f >= prev.f))
        return zoom(x, p, f0, df0, prev, cur, x_new, g_new, f_new, used);
      if (std::fabs(cur.df) <= -c2 * df0) {
        f_new = cur.f;
        return trial;
      }
      if (cur.df >= 0) return zoom(x, p, f0, df0, cur, prev, x_new, g_new, f_new, used);
      prev = cur;
      trial *= 10;
      ++grown;
    }
  }

  /// Nocedal & Wright Algorithm 3.6 with Stan's safeguards: lo satisfies sufficient decrease
  /// with the lower f; the minimiser lies between lo and hi. The trial is the cubic's minimiser,
  /// or the midpoint every fifth round and when the cubic falls outside the bracket less 1 % at
  /// each end; a non-finite f halves the trial's distance to the bracket's lower end.
  double zoom(const std::vector<double>& x, const std::vector<double>& p, double f0, double df0, point lo, point hi,
              std::vector<double>& x_new, std::vector<double>& g_new, double& f_new, int used) const {
    for (int round = 1; used < max_evaluations; ++round) {
      if (std::fabs(lo.alpha - hi.alpha) < min_range) return 0;
      const double a = std::min(lo.alpha, hi.alpha), b = std::max(lo.alpha, hi.alpha);
      double alpha = 0.5 * (lo.alpha + hi.alpha);
      if (round % 5 != 0) {
        const double c = cubic_minimiser(lo.alpha, lo.f, lo.df, hi.alpha, hi.f, hi.df);
        if (std::isfinite(c) && c >= a + 0.01 * (b - a) && c <= b - 0.01 * (b - a)) alpha = c;
      }
      point cur = evaluate(x, p, alpha, x_new, g_new);
      ++used;
      while (!std::isfinite(cur.f)) {
        alpha = 0.5 * (alpha + a);
        if (std::fabs(a - alpha) < min_range || used >= max_evaluations) return 0;
        cur = evaluate(x, p, alpha, x_new, g_new);
        ++used;
      }
      if (approximately_wolfe(cur, f0, df0) && (cur.f > f0 + c1 * alpha * df0 || cur.f >= lo.f)) {
        f_new = cur.f;
        return alpha;
      }
      if (cur.f > f0 + c1 * alpha * df0 || cur.f >= lo.f) {
        hi = cur;
      } else {
        if (std::fabs(cur.df) <= -c2 * df0) {
          f_new = cur.f;
          return alpha;
        }
        if (cur.df * (hi.alpha - lo.alpha) >= 0) hi = lo;
        lo = cur;
      }
    }
    return 0;
  }
};
using line_search = basic_line_search<>;

/// The L-BFGS direction −H·g by the two-loop recursion (Nocedal & Wright Algorithm 7.4), over the
/// pairs kept (oldest first), H0 = (s'y / y'y)·I from the newest pair.
template <class = void>
void lbfgs_direction(const std::vector<std::vector<double>>& s, const std::vector<std::vector<double>>& y,
                            const std::vector<double>& grad_f, std::vector<double>& out) {
  const std::size_t m = s.size(), n = grad_f.size();
  out = grad_f;
  std::vector<double> alpha(m), rho(m);
  for (std::size_t k = m; k-- > 0;) {
    rho[k] = 1 / dot(s[k].data(), y[k].data(), n);
    alpha[k] = rho[k] * dot(s[k].data(), out.data(), n);
    for (std::size_t i = 0; i < n; ++i) out[i] -= alpha[k] * y[k][i];
  }
  if (m > 0) {
    const double gamma = dot(s[m - 1].data(), y[m - 1].data(), n) / dot(y[m - 1].data(), y[m - 1].data(), n);
    for (double& v : out) v *= gamma;
  }
  for (std::size_t k = 0; k < m; ++k) {
    const double beta = rho[k] * dot(y[k].data(), out.data(), n);
    for (std::size_t i = 0; i < n; ++i) out[i] += (alpha[k] - beta) * s[k][i];
  }
  for (double& v : out) v = -v;
}

/// The quasi-Newton approximation H of the inverse Hessian of f = −log p, and the direction −H·∇f:
/// L-BFGS's last `history` pairs (lbfgs_direction; with none, −∇f), or BFGS's dense n × n H
/// (Nocedal & Wright eq. 6.17, as Stan's BFGSUpdate_HInv applies it: at the first pair after a
/// reset H = (s'y / y'y)·I, then every pair H ← (I − ρsyᵀ)H(I − ρysᵀ) + ρssᵀ, ρ = 1 / s'y;
/// computed as H − ρ(s(Hy)ᵀ + (Hy)sᵀ) + (ρ²·yᵀHy + ρ)ssᵀ, O(n²)).
template <class = void>
class quasi_newton {
 public:
  quasi_newton(std::size_t n, int history, bool dense) : n_(n), history_(history), dense_(dense) {}
  [[nodiscard]] bool empty() const { return dense_ ? h_.empty() : s_.empty(); }
  void clear() {
    s_.clear();
    y_.clear();
    h_.clear();
  }
  void direction(const std::vector<double>& grad_f, std::vector<double>& out) const {
    if (!dense_) return lbfgs_direction(s_, y_, grad_f, out);
    out.assign(n_, 0.0);
    if (h_.empty()) {
      for (std::size_t i = 0; i < n_; ++i) out[i] = -grad_f[i];
      return;
    }
    for (std::size_t i = 0; i < n_; ++i) out[i] = -dot(&h_[i * n_], grad_f.data(), n_);
  }
  /// A pair (step s, change of ∇f y) with positive curvature s'y.
  void add(const std::vector<double>& step, const std::vector<double>& dg) {
    if (!dense_) {
      if (static_cast<int>(s_.size()) == history_) {
        s_.erase(s_.begin());
        y_.erase(y_.begin());
      }
      s_.push_back(step);
      y_.push_back(dg);
      return;
    }
    const double sy = dot(step.data(), dg.data(), n_), rho = 1 / sy;
    if (h_.empty()) {
      h_.assign(n_ * n_, 0.0);
      const double scale = sy / dot(dg.data(), dg.data(), n_);
      for (std::size_t i = 0; i < n_; ++i) h_[i * n_ + i] = scale;
    }
    std::vector<double> hy(n_);
    for (std::size_t i = 0; i < n_; ++i) hy[i] = dot(&h_[i * n_], dg.data(), n_);
    const double c = rho * rho * dot(dg.data(), hy.data(), n_) + rho;
    for (std::size_t i = 0; i < n_; ++i)  // one triangle, mirrored: H stays exactly symmetric
      for (std::size_t j = 0; j <= i; ++j)
        h_[i * n_ + j] = h_[j * n_ + i] =
            h_[i * n_ + j] + c * (step[i] * step[j]) - rho * (step[i] * hy[j] + hy[i] * step[j]);
  }

 private:
  std::size_t n_;
  int history_;
  bool dense_;
  std::vector<std::vector<double>> s_, y_;  // L-BFGS: the last pairs, oldest first
  std::vector<double> h_;                   // BFGS: H, row-major (empty until the first pair)
};

}  // namespace detail

/// Maximises log p from x0 (where log p and its gradient must be finite) by L-BFGS with the
/// given settings. Stops at the first convergence test that holds (CmdStan's), at the iteration
/// limit, or when the line search fails twice in a row (from the quasi-Newton direction, then,
/// with the history cleared, from the gradient). record: keep every iterate (pathfinder).
template <class = void>
lbfgs_result lbfgs(const log_density_function& density, std::vector<double> x0, const lbfgs_settings& s,
                          bool record = false) {
  const std::size_t n = density.dim;
  lbfgs_result r;
  std::vector<double> workspace(density.workspace_size);
  std::vector<double> g(n), x_new(n), g_new(n), p(n), grad_f(n);
  r.x = std::move(x0);
  r.evaluations = 1;
  double lp = density(r.x.data(), g.data(), workspace.data());
  double f = -lp;
  auto keep = [&](const std::vector<double>& x, const std::vector<double>& grad, double logp) {
    if (!record) return;
    r.path.push_back(x);
    r.path_gradients.push_back(grad);
    r.path_log_density.push_back(logp);
  };
  keep(r.x, g, lp);
  detail::quasi_newton<> qn(n, s.history_size, s.dense);
  const double eps = std::numeric_limits<double>::epsilon();
  detail::line_search search{density, workspace.data(), r.evaluations};
  struct {
    bool valid = false;
    double x1 = 0, f1 = 0, df0 = 0, df1 = 0;
  } previous;
  double df_used = 0;
  r.termination = lbfgs_termination::max_iterations;
  for (int it = 1; it <= s.iterations; ++it) {
    r.iterations = it;
    for (std::size_t i = 0; i < n; ++i) grad_f[i] = -g[i];
    double alpha = 0, f_new = f;
    for (int attempt = 0; attempt < 2 && alpha == 0; ++attempt) {
      if (attempt == 1) {
        if (qn.empty()) break;  // already along the gradient
        qn.clear();
      }
      qn.direction(grad_f, p);
      double df0 = detail::dot(grad_f.data(), p.data(), n);
      if (!(df0 < 0)) {  // not a descent direction (rounding): fall back to the gradient
        qn.clear();
        for (std::size_t i = 0; i < n; ++i) p[i] = g[i];
        df0 = detail::dot(grad_f.data(), p.data(), n);
      }
      // The first trial step: init_alpha along the gradient (first iteration, or history
      // cleared), else Stan's: 1.01 × the minimiser in [1e-12, 1] of the cubic through the
      // previous step, at most 1.
      double alpha0 = s.init_alpha;
      if (!qn.empty() && previous.valid)
        alpha0 = std::min(1.0, 1.01 * detail::cubic_step(previous.df0, previous.x1, previous.f1, previous.df1,
                                                       1e-12, 1.0));
      df_used = df0;
      alpha = search(r.x, p, f, df0, alpha0, x_new, g_new, f_new);
    }
    if (alpha == 0) {
      r.termination = lbfgs_termination::line_search_failed;
      break;
    }
    std::vector<double> step(n), dg(n);
    for (std::size_t i = 0; i < n; ++i) {
      step[i] = x_new[i] - r.x[i];
      dg[i] = g[i] - g_new[i];  // y = ∇f(x_new) − ∇f(x)
    }
    const double f_old = f;
    r.x = x_new;
    g = g_new;
    f = f_new;
    keep(r.x, g, -f);
    // The previous step for the next first trial step: along p, from f_old with slope df_used
    // to f_new with slope ∇f_new·p, at α. A step taken with the history empty (along the
    // gradient) is rescaled, as Stan rescales it, to the direction the scaled identity
    // H0 = (s'y / y'y)·I would give.
    const bool was_empty = qn.empty();
    previous = {true, alpha, f_new - f_old, df_used, -detail::dot(g_new.data(), p.data(), n)};
    // The pair enters the history when it has positive curvature.
    const double sy = detail::dot(step.data(), dg.data(), n);
    if (was_empty && sy > 0) {
      const double b0 = detail::dot(dg.data(), dg.data(), n) / sy;
      previous.x1 *= b0;
      previous.df0 /= b0;
      previous.df1 /= b0;
    }
    if (sy > eps * detail::dot(dg.data(), dg.data(), n)) qn.add(step, dg);
    // Convergence, in CmdStan's order (BFGSMinimizer::step).
    const double df = std::fabs(f_old - f);
    const double gnorm = std::sqrt(detail::dot(g.data(), g.data(), n));
    for (std::size_t i = 0; i < n; ++i) grad_f[i] = -g[i];
    qn.direction(grad_f, p);
    // The relative tests on log p without its constant (f + C = −(log p − C)), as Stan's.
    const double f_rel = f + density.constant, f_old_rel = f_old + density.constant;
    const double relative_gradient = -detail::dot(grad_f.data(), p.data(), n) / std::max(std::fabs(f_rel), 1.0);
    const double step_norm = std::sqrt(detail::dot(step.data(), step.data(), n));
    // (CmdStan checks the iteration limit before the relative tests: a last iteration that
    // meets only those is reported as the limit, as there.)
    if (df < s.tol_obj) r.termination = lbfgs_termination::absolute_objective;
    else if (gnorm < s.tol_grad) r.termination = lbfgs_termination::absolute_gradient;
    else if (step_norm < s.tol_param) r.termination = lbfgs_termination::absolute_parameter;
    else if (it == s.iterations) r.termination = lbfgs_termination::max_iterations;
    else if (df / std::max({std::fabs(f_old_rel), std::fabs(f_rel), 1.0}) < s.tol_rel_obj * eps)
      r.termination = lbfgs_termination::relative_objective;
    else if (relative_gradient < s.tol_rel_grad * eps) r.termination = lbfgs_termination::relative_gradient;
    else continue;
    break;
  }
  r.gradient = g;
  r.log_density = -f;
  return r;
}

}  // namespace inference

}  // namespace tyche
