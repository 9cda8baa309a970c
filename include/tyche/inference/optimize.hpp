// tyche/inference/optimize.hpp — optimize(model, config): the posterior mode (MAP) or, with
// jacobian = true, the mode of the density on the unconstrained scale, by L-BFGS with CmdStan's
// defaults and convergence tests (lbfgs.hpp); laplace(model, mode, config): draws from the
// Gaussian at that mode with the covariance −H⁻¹, H the Hessian of log p there by central
// differences of the exact gradient (docs/inference.md).
//
//     const auto mode = tyche::optimize(m);                    // MAP, as CmdStan's optimize
//     double mu = mode.value("mu");
//     const auto approx = tyche::laplace(m, tyche::optimize(m, {.jacobian = true}));
//     std::cout << tyche::summary(approx);
#pragma once
#include <tyche/concepts.hpp>
#include <tyche/inference/fit.hpp>
#include <tyche/inference/lbfgs.hpp>
#include <tyche/inference/model_density.hpp>
#include <tyche/inference/psis.hpp>
#include <tyche/model/quantities.hpp>
#include <tyche/random/philox.hpp>
#include <tyche/samplers/nuts/low_rank.hpp>
#include <tyche/scalar/format.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tyche {

/// CmdStan's optimize algorithms (`algorithm=`): L-BFGS (the default), BFGS with the dense
/// inverse Hessian approximation (O(d²) per iteration; the same line search and convergence
/// tests), and Newton's method with the Hessian by central differences of the gradient (2d
/// gradients and O(d³) per iteration; CmdStan's stopping rule, a change of log p of at most 1e-8).
enum class optimize_algorithm { lbfgs, bfgs, newton };

/// Settings of optimize(): CmdStan's optimize method, with its defaults.
struct optimize_config {
  optimize_algorithm algorithm = optimize_algorithm::lbfgs;
  /// false (CmdStan's default): the mode of p(θ) without the log-Jacobian of the constraining
  /// transforms: the MAP estimate on the constrained scale (the MLE with flat priors). true: the
  /// mode on the unconstrained scale, the centre of laplace()'s Gaussian.
  bool jacobian = false;
  int iterations = 2000;       // iter
  double init_alpha = 0.001;   // the first step along the gradient
  double tol_obj = 1e-12;
  double tol_rel_obj = 1e4;
  double tol_grad = 1e-8;
  double tol_rel_grad = 1e7;
  double tol_param = 1e-8;
  int history_size = 5;        // lbfgs only
  std::uint64_t seed = 1;      // the random initial point's stream
  double init_radius = 2.0;    // θ uniform on (−r, r), as Stan's init
  /// Initial values on the constrained scale, one per name of parameter_names(); empty: random.
  std::vector<double> init = {};
  /// tyche's addition: after L-BFGS (or BFGS) has converged, up to this many Newton steps with the Hessian
  /// by central differences of the gradient, until the gain they predict is below rounding (0:
  /// none, Stan's result). L-BFGS's relative-gradient test can stop on a plateau short of the
  /// mode where the posterior is ill-conditioned (kidiq: 2.3 below the mode's log density from
  /// 12 of 40 seeds); the steps take it there. Each costs 2d gradients and O(d³). The steps are
  /// also the checks behind optimize_result::warnings (a saddle point, a maximum at the edge of
  /// the support or at infinity): with 0 none is made, as in Stan.
  int newton_steps = 20;
  /// Up to this many unconstrained dimensions the Newton steps above use the d × d Hessian; above
  /// it (since 2026-12-06) conjugate gradients on Hessian-vector products (2 gradients each, O(d)
  /// memory), which check only the curvature along the directions they explore.
  std::size_t newton_max_dim = 200;
};

/// The mode optimize() found.
struct optimize_result {
  std::vector<std::string> names;   // parameter_names(), then quantity_names()
  std::vector<double> values;       // constrained values at the mode (then the quantities')
  /// The last `quantities` names and values are the model's quantities (quantity<"name">(e)) at
  /// the mode, not parameters.
  int quantities = 0;
  std::vector<double> unconstrained;  // θ at the mode
  std::vector<double> gradient;     // ∇log p at the mode (unconstrained scale)
  double log_density = 0;           // log p at the mode (with the log-Jacobian when jacobian)
  /// The parameter-free part C of the folded log density (program::constant_term()): log_density
  /// − constant is log p without the constants CmdStan's `~` statements drop, the lp__ its
  /// optimize reports (equal on kidiq to its printed digits; where folding completes a square, C
  /// holds more than Stan drops: docs/inference.md). write_stan_csv writes it as lp__.
  double constant = 0;
  bool jacobian = false;
  optimize_algorithm algorithm = optimize_algorithm::lbfgs;
  int iterations = 0;
  long long gradient_evaluations = 0;
  inference::lbfgs_termination termination = inference::lbfgs_termination::max_iterations;
  std::string message;              // CmdStan's line for the termination
  int newton_steps = 0;             // Newton steps after L-BFGS (optimize_config::newton_steps)
  double newton_gain = 0;           // the log density they gained
  /// Why the point may not be a strict mode: the Hessian there is not negative definite or not
  /// finite, or Newton's steps stopped converging (a maximum at the edge of the support).
  std::vector<std::string> warnings;
  double seconds = 0;

  /// The constrained value named `name` ("mu", "theta[2]"); throws when there is none.
  [[nodiscard]] double value(std::string_view name) const {
    return values[tyche::detail::index_of_name(names, name, "tyche::optimize_result::value")];
  }
};

/// What optimize() found, as a table: how it ended (the algorithm, the Jacobian, iterations,
/// gradients, CmdStan's termination line), the log density at the mode, then each parameter's
/// constrained value, then any warnings. `std::cout << optimize(model)`.
inline std::ostream& operator<<(std::ostream& os, const optimize_result& r) {
  static constexpr const char* algorithms[] = {"L-BFGS", "BFGS", "Newton"};
  char line[256];
  std::snprintf(line, sizeof line, "optimize (%s, jacobian %s): %d iterations, %lld gradients, %.3g s\n",
                algorithms[static_cast<int>(r.algorithm)], r.jacobian ? "on" : "off", r.iterations,
                r.gradient_evaluations, r.seconds);
  os << line;
  if (!r.message.empty()) os << r.message << "\n";
  if (r.newton_steps > 0) {
    std::snprintf(line, sizeof line, "then %d Newton step%s, which gained %.3g in log density\n", r.newton_steps,
                  r.newton_steps == 1 ? "" : "s", r.newton_gain);
    os << line;
  }
  os << "log density at the mode: " << detail::format_number(r.log_density) << " (lp__ "
     << detail::format_number(r.log_density - r.constant) << ")\n";
  std::size_t width = 5;
  for (const auto& n : r.names) width = std::max(width, n.size());
  std::snprintf(line, sizeof line, "%-*s %s\n", static_cast<int>(width), "name", "value");
  os << line;
  for (std::size_t i = 0; i < r.names.size() && i < r.values.size(); ++i) {
    std::snprintf(line, sizeof line, "%-*s %s\n", static_cast<int>(width), r.names[i].c_str(),
                  detail::format_number(r.values[i]).c_str());
    os << line;
  }
  for (const auto& w : r.warnings) os << "warning: " << w << "\n";
  return os;
}

/// What optimize() throws when L-BFGS stopped without converging (the iteration limit, or a line
/// search that could make no more progress): the message names the iterations, the gradient's
/// norm and the log density; result() is the last point, for a caller who wants it anyway.
class optimize_error : public std::runtime_error {
 public:
  optimize_error(const std::string& what, optimize_result last) : std::runtime_error(what), last_(std::move(last)) {}
  [[nodiscard]] const optimize_result& result() const { return last_; }

 private:
  optimize_result last_;
};

/// Settings of laplace(): CmdStan's laplace method.
struct laplace_config {
  int draws = 1000;
  std::uint64_t seed = 1;
  /// The density whose Hessian gives the covariance: with the log-Jacobian of the constraining
  /// transforms (true) or without. Unset: a mode from optimize() brings its own
  /// (optimize_result::jacobian; setting the other one here is an error), and a mode given as
  /// values takes true, as CmdStan's laplace (jacobian = 1).
  std::optional<bool> jacobian = std::nullopt;
};

namespace inference {

template <class = void>
lbfgs_settings settings_of(const optimize_config& c) {
  return {c.iterations, c.init_alpha, c.tol_obj, c.tol_rel_obj, c.tol_grad, c.tol_rel_grad, c.tol_param,
          c.history_size, c.algorithm == optimize_algorithm::bfgs};
}

template <class = void>
double norm(const std::vector<double>& v) { return std::sqrt(detail::dot(v.data(), v.data(), v.size())); }

/// The Hessian of log p at x by central differences of the exact gradient, symmetrised
/// (step ε^(1/3)·max(1, |x_i|) per coordinate: exact for a quadratic log p up to rounding).
template <class = void>
std::vector<double> hessian(const log_density_function& density, const std::vector<double>& x,
                                   long long& evaluations) {
  const std::size_t d = density.dim;
  std::vector<double> h(d * d), workspace(density.workspace_size), gp(d), gm(d), xs = x;
  const double scale = std::cbrt(std::numeric_limits<double>::epsilon());
  for (std::size_t j = 0; j < d; ++j) {
    const double step = scale * std::max(1.0, std::fabs(x[j]));
    const double up = x[j] + step, down = x[j] - step;  // the realised step is up − down
    xs[j] = up;
    density(xs.data(), gp.data(), workspace.data());
    xs[j] = down;
    density(xs.data(), gm.data(), workspace.data());
    xs[j] = x[j];
    evaluations += 2;
    for (std::size_t i = 0; i < d; ++i) h[i * d + j] = (gp[i] - gm[i]) / (up - down);
  }
  for (std::size_t i = 0; i < d; ++i)
    for (std::size_t j = 0; j < i; ++j) h[i * d + j] = h[j * d + i] = 0.5 * (h[i * d + j] + h[j * d + i]);
  return h;
}

/// What newton_cg_direction() found: CG's iterations (products with H), whether a product was
/// not finite, and whether CG met a direction of non-negative curvature of log p.
struct cg_outcome {
  int iterations = 0;
  bool finite = true;
  bool negative_curvature = false;
  bool unresolved = false;  // a direction's curvature within the differences' rounding: CG stopped there
  bool converged = false;   // the residual reached the forcing tolerance
};

/// s ≈ (−H)⁻¹g at x by conjugate gradients (Hestenes–Stiefel; a truncated Newton step, Nocedal &
/// Wright, Numerical Optimization, 2nd ed., algorithm 7.1), without H: each product (−H)v is
/// −(∇log p(x + εv) − ∇log p(x − εv))/(2ε), ε = ∛eps·max(1, ‖x‖∞)/‖v‖∞ (2 gradients). CG stops
/// when the residual is below min(½, ‖g‖)·‖g‖ (a forcing sequence for quadratic convergence of
/// the outer steps, Nocedal & Wright theorem 7.2) or 10⁻¹²·‖g‖, after min(d, 250) products, where vᵀ(−H)v is below minus the
/// differences' rounding (negative curvature: the caller takes no step), or where it is within
/// it (a direction too flat to resolve: s as it was).
template <class = void>
cg_outcome newton_cg_direction(const log_density_function& density, const std::vector<double>& x,
                               const std::vector<double>& g, std::vector<double>& s, long long& evaluations,
                               std::vector<double>& workspace) {
  const std::size_t d = density.dim;
  cg_outcome out;
  std::vector<double> r = g, p = g, ap(d), xs(d), gp(d), gm(d);
  std::fill(s.begin(), s.end(), 0.0);
  const double g_norm = std::sqrt(detail::dot(g.data(), g.data(), d));
  const double stop = std::max(1e-12, std::min(0.5, g_norm)) * g_norm;
  double x_scale = 1;
  for (double v : x) x_scale = std::max(x_scale, std::fabs(v));
  double rr = g_norm * g_norm;
  const int max_iterations = static_cast<int>(std::min<std::size_t>(d, 250));
  for (int k = 0; k < max_iterations; ++k) {
    if (std::sqrt(rr) <= stop) {
      out.converged = true;
      break;
    }
    double p_scale = 0;
    for (double v : p) p_scale = std::max(p_scale, std::fabs(v));
    if (!(p_scale > 0)) break;
    const double eps = std::cbrt(std::numeric_limits<double>::epsilon()) * x_scale / p_scale;
    for (std::size_t i = 0; i < d; ++i) xs[i] = x[i] + eps * p[i];
    density(xs.data(), gp.data(), workspace.data());
    for (std::size_t i = 0; i < d; ++i) xs[i] = x[i] - eps * p[i];
    density(xs.data(), gm.data(), workspace.data());
    evaluations += 2;
    for (std::size_t i = 0; i < d; ++i) ap[i] = -(gp[i] - gm[i]) / (2 * eps);  // (−H)p
    if (!std::all_of(ap.begin(), ap.end(), [](double v) { return std::isfinite(v); })) {
      out.finite = false;
      return out;
    }
    const double curvature = detail::dot(p.data(), ap.data(), d);
    // The product's rounding, ~eps·|∇log p|/ε per coordinate: a curvature within it is not
    // resolved (a direction too flat for the differences), a curvature below −it is negative.
    const double noise = 64 * std::numeric_limits<double>::epsilon() *
                         (std::sqrt(detail::dot(gp.data(), gp.data(), d)) + std::sqrt(detail::dot(gm.data(), gm.data(), d))) *
                         std::sqrt(detail::dot(p.data(), p.data(), d)) / (2 * eps);
    if (curvature < -noise) {
      out.negative_curvature = true;
      return out;
    }
    if (!(curvature > noise)) {
      out.unresolved = true;
      break;
    }
    const double alpha = rr / curvature;
    for (std::size_t i = 0; i < d; ++i) {
      s[i] += alpha * p[i];
      r[i] -= alpha * ap[i];
    }
    const double rr_next = detail::dot(r.data(), r.data(), d);
    const double beta = rr_next / rr;
    rr = rr_next;
    for (std::size_t i = 0; i < d; ++i) p[i] = r[i] + beta * p[i];
    out.iterations = k + 1;
  }
  if (std::sqrt(rr) <= stop) out.converged = true;
  return out;
}

/// What newton_refine() did: the steps it took and the log density they gained, and whether
/// the Hessian at the last point was negative definite.
struct newton_outcome {
  int steps = 0;
  double gain = 0;
  bool negative_definite = true;
  bool finite_hessian = true;
  double slow = 0;  // set: the steps stopped converging quadratically (this ratio of successive gains)
};

/// Newton's method from a point where L-BFGS stopped (x, its gradient g and log density f, all
/// updated in place): each step solves (−H)s = g with H the Hessian by central differences of
/// the exact gradient (hessian()), stops when the predicted gain ½gᵀs is below `tolerance`,
/// and takes the longest step t·s, t = 1, ½, ¼, …, that raises log p by at least 10⁻⁴·t·gᵀs
/// (Armijo); it stops where no such step is found, where H is not negative definite or not
/// finite, and where the predicted gain after two full steps (t = 1) in a row is each time more
/// than a tenth of the one before: near a strict mode Newton's gains fall quadratically, so a
/// steady ratio says the maximum is degenerate or at infinity (a scale going to 0), where more
/// steps gain ever less (one such ratio can also come from a step that started outside the
/// quadratic region). Each step costs 2d gradients and O(d³).
///
/// hessian_free (above optimize_config::newton_max_dim): the same steps with s from conjugate
/// gradients on (−H)s = g instead, each product (−H)v by central differences of the gradient
/// along v (2 gradients, O(d) memory: newton_cg_direction), so a step costs 2 gradients per CG
/// iteration and no d × d matrix. Negative curvature met by CG counts as "not negative definite"
/// (no step); CG explores only the directions the gradient reaches, so a saddle it does not meet
/// goes unseen there.
template <class = void>
newton_outcome newton_refine(const log_density_function& density, std::vector<double>& x, std::vector<double>& g,
                             double& f, long long& evaluations, int max_steps, double tolerance,
                             bool hessian_free = false) {
  const std::size_t d = density.dim;
  newton_outcome out;
  std::vector<double> workspace(density.workspace_size), s(d), xt(d), gt(d);
  double last_slope = 0;  // after a full step: its predicted gain's twice; else 0
  int slow_in_a_row = 0;
  for (int step = 0; step < max_steps; ++step) {
    bool exact = true;  // the step solves (−H)s = g (not a truncated CG solve)
    if (hessian_free) {
      const cg_outcome cg = newton_cg_direction(density, x, g, s, evaluations, workspace);
      exact = cg.converged;
      if (!cg.finite) {
        out.finite_hessian = false;
        break;
      }
      if (cg.negative_curvature) {  // as a dense H that is not negative definite: no step
        out.negative_definite = false;
        break;
      }
      if (cg.iterations == 0) break;  // not even g's own curvature resolved: no step, nothing known
    } else {
      std::vector<double> l = hessian(density, x, evaluations);
      // A gradient that is not finite a step away (the edge of the support): no Newton step.
      if (!std::all_of(l.begin(), l.end(), [](double v) { return std::isfinite(v); })) {
        out.finite_hessian = false;
        break;
      }
      for (double& v : l) v = -v;
      if (!detail::cholesky(l, d)) {
        out.negative_definite = false;
        break;
      }
      s = g;
      detail::solve_lower(l, d, s.data());
      detail::solve_upper_transposed(l, d, s.data());
    }
    const double slope = detail::dot(g.data(), s.data(), d);  // gᵀ(−H)⁻¹g: twice the predicted gain
    if (!(0.5 * slope > tolerance)) break;
    if (last_slope > 0 && exact && slope > 0.1 * last_slope) {
      if (++slow_in_a_row == 2) {
        out.slow = slope / last_slope;
        break;
      }
    } else {
      slow_in_a_row = 0;
    }
    bool accepted = false;
    double ft = f;
    double t = 1;
    for (; t > 5e-7; t *= 0.5) {
      for (std::size_t i = 0; i < d; ++i) xt[i] = x[i] + t * s[i];
      ft = density(xt.data(), gt.data(), workspace.data());
      ++evaluations;
      if (std::isfinite(ft) && ft >= f + 1e-4 * t * slope) {
        accepted = true;
        break;
      }
    }
    if (!accepted) break;
    // The gains' ratio says something only between full, exact steps: a truncated CG step gains
    // less than Newton's, whatever the maximum.
    last_slope = t == 1 && exact ? slope : 0;
    out.gain += ft - f;
    ++out.steps;
    x.swap(xt);
    g.swap(gt);
    f = ft;
  }
  return out;
}

/// CmdStan's algorithm = newton (Stan's newton_step and its optimize service): from x (where log
/// p and its gradient are finite), up to `iterations` steps, each: H by central differences of
/// the gradient (hessian()), its eigen-decomposition H = VΛVᵀ, the direction
/// d = V·diag(1 / max(|λᵢ|, δ))·Vᵀ∇log p (H made negative definite by flipping the sign of its
/// positive eigenvalues; δ = √ε·max(maxᵢ|λᵢ|, 1), so that a flat direction gets a bounded step),
/// and the step x + t·d for the first t = 1, ½, ¼, … (down to 10⁻⁵⁰) where log p does not fall
/// and x changes (no such t: x stays). Stops when an iteration changes log p by at most 1e-8, as
/// CmdStan does: termination absolute_objective; or when no step is found although the quadratic
/// model predicts a gain above log p's rounding, or the Hessian is not finite or cannot be
/// decomposed (line_search_failed); or at the iteration limit. `last` says whether the last
/// Hessian was finite, decomposed and negative definite, and the last step's predicted gain.
template <class = void>
lbfgs_result newton_method(const log_density_function& density, std::vector<double> x0, int iterations,
                           newton_outcome& last, double& last_predicted, bool& eigen_failed) {
  const std::size_t d = density.dim;
  lbfgs_result r;
  std::vector<double> workspace(density.workspace_size), g(d), xt(d), gt(d), dir(d), w(d), e(d), proj(d);
  r.x = std::move(x0);
  r.evaluations = 1;
  double lp = density(r.x.data(), g.data(), workspace.data());
  const double sqrt_eps = std::sqrt(std::numeric_limits<double>::epsilon());
  r.termination = lbfgs_termination::max_iterations;
  for (int it = 1; it <= iterations; ++it) {
    r.iterations = it;
    std::vector<double> h = hessian(density, r.x, r.evaluations);
    last.finite_hessian = std::all_of(h.begin(), h.end(), [](double v) { return std::isfinite(v); });
    if (!last.finite_hessian) {
      r.termination = lbfgs_termination::line_search_failed;
      break;
    }
    if (!samplers::detail::symmetric_eigen(h.data(), w.data(), e.data(), d)) {
      eigen_failed = true;
      r.termination = lbfgs_termination::line_search_failed;
      break;
    }
    double largest = 0;
    for (const double l : w) largest = std::max(largest, std::fabs(l));
    const double delta = sqrt_eps * std::max(largest, 1.0);
    last.negative_definite = std::all_of(w.begin(), w.end(), [&](double l) { return l < 0; });
    // proj = Vᵀg scaled, dir = V·proj (the eigenvectors are h's columns).
    for (std::size_t k = 0; k < d; ++k) {
      double v = 0;
      for (std::size_t i = 0; i < d; ++i) v += h[i * d + k] * g[i];
      proj[k] = v / std::max(std::fabs(w[k]), delta);
    }
    for (std::size_t i = 0; i < d; ++i) dir[i] = detail::dot(&h[i * d], proj.data(), d);
    const double predicted = 0.5 * detail::dot(g.data(), dir.data(), d);
    last_predicted = predicted;
    double t = 1, lt = lp;
    bool moved = false;
    for (; t >= 1e-50; t *= 0.5) {
      bool changed = false;
      for (std::size_t i = 0; i < d; ++i) {
        xt[i] = r.x[i] + t * dir[i];
        changed = changed || xt[i] != r.x[i];
      }
      if (!changed) break;  // t·d below x's rounding: no smaller step moves
      lt = density(xt.data(), gt.data(), workspace.data());
      ++r.evaluations;
      if (std::isfinite(lt) && lt >= lp) {
        moved = true;
        break;
      }
    }
    const double before = lp;
    if (moved) {
      r.x.swap(xt);
      g.swap(gt);
      lp = lt;
    } else if (predicted > 8 * std::numeric_limits<double>::epsilon() * std::max(1.0, std::fabs(lp))) {
      r.termination = lbfgs_termination::line_search_failed;
      break;
    }
    if (std::fabs(lp - before) <= 1e-8) {
      r.termination = lbfgs_termination::absolute_objective;
      break;
    }
  }
  r.gradient = g;
  r.log_density = lp;
  return r;
}

/// optimize() on a model's functions (compiled once per translation unit).
template <class = void>
optimize_result optimize(const model_functions& model, const optimize_config& cfg) {
  const std::string fn = "tyche::optimize: ";
  if (cfg.algorithm != optimize_algorithm::newton) check_lbfgs_settings(settings_of(cfg), fn);
  else if (cfg.iterations < 1)
    throw std::invalid_argument(fn + "iterations = " + std::to_string(cfg.iterations) + " must be >= 1");
  const auto start = std::chrono::steady_clock::now();
  const log_density_function& density = model.density(cfg.jacobian);
  counter_rng rng(cfg.seed, 0);
  if (cfg.algorithm != optimize_algorithm::newton && cfg.newton_steps < 0)
    throw std::invalid_argument(fn + "newton_steps = " + std::to_string(cfg.newton_steps) + " must be >= 0");
  std::vector<double> x0 = initial_point(model, density, cfg.init, cfg.init_radius, rng, fn);
  newton_outcome newton;
  const bool newton_algorithm = cfg.algorithm == optimize_algorithm::newton;
  double last_predicted = 0;
  bool eigen_failed = false;
  lbfgs_result r = newton_algorithm
                       ? newton_method(density, std::move(x0), cfg.iterations, newton, last_predicted, eigen_failed)
                       : lbfgs(density, std::move(x0), settings_of(cfg));
  // Newton stopped by CmdStan's rule (|Δ log p| ≤ 1e-8) where its quadratic model predicted a
  // gain 100 times that: log p is not smooth or not concave there (a kink, a step across a
  // symmetric valley), so the point may not be a mode.
  const bool not_smooth =
      newton_algorithm && r.termination == lbfgs_termination::absolute_objective && last_predicted > 1e-6;
  if (!newton_algorithm && converged(r.termination) && cfg.newton_steps > 0) {
    // Until the predicted gain is at the rounding of log p; above newton_max_dim without the
    // d × d Hessian (conjugate gradients on Hessian-vector products).
    const double tolerance = 8 * std::numeric_limits<double>::epsilon() * std::max(1.0, std::fabs(r.log_density));
    newton = newton_refine(density, r.x, r.gradient, r.log_density, r.evaluations, cfg.newton_steps, tolerance,
                           density.dim > cfg.newton_max_dim);
  }
  optimize_result out;
  out.newton_steps = newton.steps;
  out.newton_gain = newton.gain;
  if (!newton.negative_definite)
    out.warnings.push_back("the Hessian of the log density at the point returned is not negative definite: not a "
                           "strict mode (a saddle point, a flat direction, or a mode at the edge of the support)");
  if (!newton.finite_hessian)
    out.warnings.push_back("the gradient is not finite a small step from the point returned (the edge of the "
                           "support?), so its Hessian, and whether it is a strict mode, could not be checked");
  if (not_smooth)
    out.warnings.push_back("the last Newton step changed the log density by at most 1e-8 where the Hessian predicted a "
                           "gain of " + tyche::detail::format_number(last_predicted) +
                           ": the log density is not smooth or not concave there, so the point may not be a mode");
  if (newton.slow > 0)
    out.warnings.push_back("Newton steps from where L-BFGS stopped gain ever less without converging (each " +
                           tyche::detail::format_number(std::round(newton.slow * 100) / 100) +
                           " of the one before): the maximum is degenerate, at the edge of the support (a "
                           "parameter going to its bound, e.g. a scale to 0) or at infinity (a coefficient growing "
                           "without bound: an improper posterior, such as a flat prior on a regression whose data "
                           "are separable), so the point is not a strict mode");
  out.names = model.names;
  out.unconstrained = r.x;
  model.constrain_into(r.x.data(), out.values);
  out.gradient = r.gradient;
  out.log_density = r.log_density;
  out.constant = density.constant;
  out.jacobian = cfg.jacobian;
  out.algorithm = cfg.algorithm;
  out.iterations = r.iterations;
  out.gradient_evaluations = r.evaluations;
  out.termination = r.termination;
  out.message = lbfgs_message(r.termination);
  if (newton_algorithm && r.termination == lbfgs_termination::absolute_objective)
    out.message = "Convergence detected: a Newton step changed the log density by at most 1e-8";
  if (newton_algorithm && r.termination == lbfgs_termination::line_search_failed)
    out.message = !newton.finite_hessian ? "The Hessian by differences of the gradient is not finite (the edge of "
                                           "the support?)"
                  : eigen_failed ? "The Hessian's eigen-decomposition did not converge"
                                 : "No Newton step raised the log density, though the Hessian predicts a gain: no more "
                                   "progress can be made";
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!converged(r.termination)) {
    std::string what = fn + "not converged: " + out.message + " (after " + std::to_string(r.iterations) +
                       (r.iterations == 1 ? " iteration" : " iterations") + "; at the last point the log density is " +
                       tyche::detail::format_number(r.log_density) + " and the gradient's norm " +
                       tyche::detail::format_number(norm(r.gradient)) + ")";
    what += r.termination == lbfgs_termination::max_iterations
                ? "; raise iterations, or start elsewhere (init) — unless the log density has no maximum: one "
                  "that keeps rising (a coefficient growing without bound under a flat prior, a hierarchical scale "
                  "going to 0) has no mode to find"
                : "; the log density may be unbounded, flat or not smooth there";
    throw optimize_error(what, std::move(out));
  }
  return out;
}

/// A mode given as constrained values (one per name of parameter_names()), as laplace() takes
/// it: θ = unconstrain(values), log p and its gradient there, with the log-Jacobian or not.
/// Nothing here checks that the point is a mode; laplace() warns when it is not, and checks that
/// the Hessian there is negative definite.
template <class = void>
optimize_result mode_at(const model_functions& model, const std::vector<double>& values, bool jacobian) {
  const std::string fn = "tyche::laplace: ";
  if (values.size() != model.constrained_dim)
    throw std::invalid_argument(fn + "the mode holds " + std::to_string(values.size()) + " values, the model has " +
                                std::to_string(model.constrained_dim) + " (one per name of parameter_names(), in order: " +
                                tyche::detail::first_names(model.names) + ")");
  for (std::size_t k = 0; k < values.size(); ++k)
    if (!std::isfinite(values[k]))
      throw std::invalid_argument(fn + "the mode's " + model.names[k] + " is " +
                                  tyche::detail::format_number(values[k]));
  optimize_result out;
  out.names = model.names;
  out.values = values;
  try {
    out.unconstrained = model.unconstrain(model.model, values);
  } catch (const std::exception& e) {
    throw std::invalid_argument(fn + "the mode: " + e.what());
  }
  const log_density_function& density = model.density(jacobian);
  std::vector<double> workspace(density.workspace_size);
  out.gradient.resize(density.dim);
  out.log_density = density(out.unconstrained.data(), out.gradient.data(), workspace.data());
  out.gradient_evaluations = 1;
  out.constant = density.constant;
  out.jacobian = jacobian;
  if (!std::isfinite(out.log_density)) {
    std::string what = fn + "the log density at the mode is " + tyche::detail::format_number(out.log_density);
    if (model.non_finite_terms != nullptr) {
      const std::string terms = model.non_finite_terms(model.model, out.unconstrained.data());
      if (!terms.empty()) what += "; there, " + terms;
    }
    throw std::invalid_argument(what);
  }
  return out;
}

/// laplace() on a model's functions.
template <class = void>
approximate_fit laplace(const model_functions& model, const optimize_result& mode, const laplace_config& cfg) {
  const std::string fn = "tyche::laplace: ";
  const auto start = std::chrono::steady_clock::now();
  if (cfg.jacobian.has_value() && *cfg.jacobian != mode.jacobian) {
    const std::string want = *cfg.jacobian ? "true" : "false";
    throw std::invalid_argument(fn + "jacobian = " + want + ", but the mode was found with jacobian = " +
                                (mode.jacobian ? "true" : "false") +
                                ": the Hessian must be of the density optimize() maximised; pass optimize(model, "
                                "{.jacobian = " + want + "})");
  }
  const log_density_function& density = model.density(mode.jacobian);
  const std::size_t d = density.dim;
  if (cfg.draws < 0) throw std::invalid_argument(fn + "draws = " + std::to_string(cfg.draws) + " must be >= 0");
  if (mode.unconstrained.size() != d)
    throw std::invalid_argument(fn + "the mode holds " + std::to_string(mode.unconstrained.size()) +
                                " unconstrained values, the model has " + std::to_string(d) +
                                ": pass the result of optimize() on this model");
  for (std::size_t k = 0; k < d; ++k)
    if (!std::isfinite(mode.unconstrained[k]))
      throw std::invalid_argument(fn + "the mode's " + model.coordinate(k) + " is " +
                                  tyche::detail::format_number(mode.unconstrained[k]));
  approximate_fit fit;
  fit.method = "laplace";
  fit.settings = {{"jacobian", mode.jacobian ? "1" : "0"}, {"draws", std::to_string(cfg.draws)}};
  fit.names = model.names;
  fit.draws = cfg.draws;
  fit.seed = cfg.seed;
  // −H = L L'; the covariance is (L L')⁻¹ and a draw is mode + L'⁻¹ z.
  std::vector<double> l = hessian(density, mode.unconstrained, fit.gradient_evaluations);
  for (double& v : l) v = -v;
  if (!detail::cholesky(l, d)) {
    const std::string why = mode.message.empty() ? std::string("the values given are not a strict mode")
                                                 : "the point is not a strict mode (optimize() stopped with \"" +
                                                       mode.message + "\")";
    throw std::runtime_error(fn + "the Hessian of the log density at the mode is not negative definite, so there "
                                  "is no Gaussian to draw from: " + why + ", or the posterior is flat in some direction");
  }
  fit.mean = mode.unconstrained;
  if (mode.message.empty() && mode.gradient.size() == d) {
    // A mode given as values: how far the Newton step from there goes, in posterior standard
    // deviations, sqrt(g' (−H)⁻¹ g) = |L⁻¹ g|. Far from 0: the Gaussian is centred off the mode.
    std::vector<double> y = mode.gradient;
    detail::solve_lower(l, d, y.data());
    const double distance = std::sqrt(detail::dot(y.data(), y.data(), d));
    if (distance > 0.1)
      fit.warnings.push_back("the values given are not a mode of the log density" +
                             std::string(mode.jacobian ? " with the log-Jacobian" : " without the log-Jacobian") +
                             ": the mode is about " + tyche::detail::format_number(distance) +
                             " posterior standard deviations away (a mode from optimize() with jacobian = " +
                             (mode.jacobian ? "false" : "true") + " needs laplace's .jacobian = " +
                             (mode.jacobian ? "false" : "true") + ")");
  }
  fit.covariance.assign(d * d, 0.0);
  for (std::size_t j = 0; j < d; ++j) {  // column j of (L L')⁻¹ = L'⁻¹ L⁻¹ e_j
    std::vector<double> e(d, 0.0);
    e[j] = 1;
    detail::solve_lower(l, d, e.data());
    detail::solve_upper_transposed(l, d, e.data());
    for (std::size_t i = 0; i < d; ++i) fit.covariance[i * d + j] = e[i];
  }
  fit.variance = detail::diagonal(fit.covariance, d);
  double log_det_l = 0;
  for (std::size_t i = 0; i < d; ++i) log_det_l += std::log(l[i * d + i]);
  fit.values.assign(1, {});
  fit.log_p.assign(1, {});
  fit.log_q.assign(1, {});
  fit.values[0].reserve(static_cast<std::size_t>(cfg.draws) * model.constrained_dim);
  counter_rng rng(cfg.seed, 1);  // (stream 0 is optimize()'s initial point of the same seed)
  std::vector<double> z(d), x(d), grad(d), workspace(density.workspace_size);
  // Without the log-Jacobian, log p at the draws is not the posterior's density on the
  // unconstrained scale: k̂ then takes the density with it at each draw (one more evaluation).
  const log_density_function* posterior = mode.jacobian ? nullptr : &model.density(true);
  std::vector<double> log_posterior, posterior_workspace(posterior ? posterior->workspace_size : 0);
  for (int n = 0; n < cfg.draws; ++n) {
    double zz = 0;
    for (double& v : z) {
      v = rng.normal();
      zz += v * v;
    }
    x = z;
    detail::solve_upper_transposed(l, d, x.data());
    for (std::size_t i = 0; i < d; ++i) x[i] += mode.unconstrained[i];
    fit.log_q[0].push_back(-0.5 * static_cast<double>(d) * detail::log_two_pi + log_det_l - 0.5 * zz);
    fit.log_p[0].push_back(density(x.data(), grad.data(), workspace.data()));
    ++fit.gradient_evaluations;
    if (posterior) {
      log_posterior.push_back((*posterior)(x.data(), grad.data(), posterior_workspace.data()));
      ++fit.gradient_evaluations;
    }
    model.constrain_into(x.data(), fit.values[0]);
  }
  if (std::string w = undefined_draws_warning(fit.log_p[0], true); !w.empty()) fit.warnings.push_back(std::move(w));
  // How far the Gaussian is from the posterior: k̂ of the draws' p / q, where log p is the
  // posterior's on the unconstrained scale, with the log-Jacobian whichever density the mode
  // maximised (the draws stand for the posterior either way).
  fit.pareto_k = importance_pareto_k(posterior ? log_posterior : fit.log_p[0], fit.log_q[0]);
  if (fit.pareto_k > 0.7)
    fit.warnings.push_back("Pareto k = " + tyche::detail::format_number(std::round(fit.pareto_k * 100) / 100) +
                           " > 0.7 for the draws' importance ratios p / q" +
                           (posterior ? " (p with the log-Jacobian)" : "") +
                           ": the Gaussian at the mode is far from the posterior (skewed, heavy-tailed or a funnel" +
                           (posterior ? "; a mode found without the Jacobian is not the unconstrained posterior's: "
                                        "optimize with .jacobian = true centres it there"
                                      : "") +
                           "), so its means and sds may be off (use nuts())");
  fit.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return fit;
}

}  // namespace inference

/// The mode of a model's log density by L-BFGS (CmdStan's optimize, its defaults): MAP on the
/// constrained scale by default, the unconstrained mode with jacobian = true. Throws
/// optimize_error when it does not converge (never returns such a point as a mode), and
/// std::runtime_error when no initial point has a finite log density (after Stan's 100
/// attempts).
template <class Model>
optimize_result optimize(const Model& m, const optimize_config& cfg = {}) {
  if constexpr (!sampleable_model<Model>) {
    static_assert(sampleable_model<Model>,
                  "tyche::optimize(model, config) requires a model built with tyche::model(...); the first "
                  "argument is not one");
    return {};
  } else {
    optimize_result mode = inference::optimize(inference::functions_of(m), cfg);
    tyche::detail::append_mode_quantities(m, mode);
    return mode;
  }
}

/// Draws from the Laplace approximation at a mode found by optimize() on the same model: the
/// Gaussian on the unconstrained scale with the mode as its mean and the inverse of the negated
/// Hessian of log p there (the density optimize() used: with the log-Jacobian when
/// mode.jacobian) as its covariance, as CmdStan's laplace method. log_p and log_q of each draw
/// are CmdStan's log_p__ and log_g__.
template <class Model>
approximate_fit laplace(const Model& m, const optimize_result& mode, const laplace_config& cfg = {}) {
  if constexpr (!sampleable_model<Model>) {
    static_assert(sampleable_model<Model>,
                  "tyche::laplace(model, mode, config) requires a model built with tyche::model(...); the first "
                  "argument is not one");
    return {};
  } else {
    approximate_fit fit = inference::laplace(inference::functions_of(m), mode, cfg);
    tyche::detail::append_quantities(m, fit);
    return fit;
  }
}

/// The same at a mode given as constrained values, one per name of parameter_names() (a mode
/// found elsewhere, or read from a file: CmdStan's laplace with mode=…), with the log-Jacobian
/// unless cfg.jacobian = false. The point is taken as given; the fit warns when the Newton step
/// from it is more than 0.1 posterior standard deviations (not that density's mode), and the
/// Hessian there must be negative definite.
template <class Model>
approximate_fit laplace(const Model& m, const std::vector<double>& mode, const laplace_config& cfg = {}) {
  if constexpr (!sampleable_model<Model>) {
    return laplace(m, optimize_result{}, cfg);  // whose static_assert says what is wrong
  } else {
    const inference::model_functions f = inference::functions_of(m);
    // A mode's values may hold the model's quantities after the parameters' (optimize_result::
    // values, a fit's draw): the parameters' are the mode.
    std::vector<double> parameters = mode;
    if (m.quantity_count() > 0 && parameters.size() == m.constrained_dim() + m.quantity_count())
      parameters.resize(m.constrained_dim());
    approximate_fit fit = inference::laplace(f, inference::mode_at(f, parameters, cfg.jacobian.value_or(true)), cfg);
    tyche::detail::append_quantities(m, fit);
    return fit;
  }
}

}  // namespace tyche
