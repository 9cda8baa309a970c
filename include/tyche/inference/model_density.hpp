// tyche/inference/model_density.hpp — what the inference methods (optimize, laplace, pathfinder,
// advi) need from a model, with its type erased: its log density with or without the
// log-Jacobian (inference::log_density_function), names, constrain, Stan's random initial point
// with 100 attempts; and the small dense linear algebra of their Gaussians.
#pragma once
#include <tyche/concepts.hpp>
#include <tyche/inference/lbfgs.hpp>
#include <tyche/random/philox.hpp>
#include <tyche/scalar/format.hpp>

#include <cmath>
#include <exception>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace tyche::inference {

/// A model as the inference methods see it: its log density (with the log-Jacobian, or
/// without it), names, constrain and initial points, each behind a function pointer, so that the
/// methods are compiled once per translation unit.
struct model_functions {
  log_density_function with_jacobian, without_jacobian;
  std::vector<std::string> names;
  std::size_t constrained_dim = 0;
  const void* model = nullptr;
  void (*constrain)(const void* model, const double* theta, std::vector<double>& out) = nullptr;
  std::vector<double> (*unconstrain)(const void* model, const std::vector<double>& values) = nullptr;
  std::vector<double> (*initial_point)(const void* model, counter_rng& rng, double radius) = nullptr;
  /// The terms of the log density that are not finite at θ, for messages ("" when none; null
  /// when the model cannot name its terms).
  std::string (*non_finite_terms)(const void* model, const double* theta) = nullptr;

  [[nodiscard]] const log_density_function& density(bool jacobian) const {
    return jacobian ? with_jacobian : without_jacobian;
  }
  /// Appends the constrained values of θ to out.
  void constrain_into(const double* theta, std::vector<double>& out) const { constrain(model, theta, out); }
  /// The coordinate's name for messages: the value's name where θ's coordinates are the
  /// named values (no matrix variable), else theta[k + 1].
  [[nodiscard]] std::string coordinate(std::size_t k) const {
    return names.size() == with_jacobian.dim ? names[k] : "theta[" + std::to_string(k + 1) + "]";
  }
};

namespace detail {

template <class View>
double view_value_and_gradient(const void* self, const double* x, double* grad, double* workspace) {
  return static_cast<const View*>(self)->value_and_gradient(x, grad, workspace);
}

template <class View>
log_density_function density_of(const View& view, std::size_t dim, std::size_t workspace_size, double constant) {
  // A constant that is not finite (a closed term that overflowed) would make every relative
  // test pass at once: none, then.
  return {dim, workspace_size, &view, &view_value_and_gradient<View>, std::isfinite(constant) ? constant : 0.0};
}

}  // namespace detail

/// The model's functions; the model must outlive the result.
template <class Model>
model_functions functions_of(const Model& m) {
  model_functions f;
  const auto& with = m.program().view();
  f.with_jacobian = detail::density_of(with, m.dim(), m.program().workspace_size(), m.program().constant_term());
  if constexpr (requires { m.program_without_jacobian().view(); }) {
    const auto& without = m.program_without_jacobian().view();
    f.without_jacobian = detail::density_of(without, m.dim(), m.program_without_jacobian().workspace_size(),
                                            m.program_without_jacobian().constant_term());
  } else {
    f.without_jacobian = f.with_jacobian;  // a model without transforms
  }
  f.names = m.parameter_names();
  f.constrained_dim = m.constrained_dim();
  f.model = &m;
  f.constrain = [](const void* self, const double* theta, std::vector<double>& out) {
    const Model& model = *static_cast<const Model*>(self);
    const auto x = model.constrain(std::span<const double>(theta, model.dim()));
    out.insert(out.end(), x.begin(), x.end());
  };
  f.unconstrain = [](const void* self, const std::vector<double>& values) -> std::vector<double> {
    const Model& model = *static_cast<const Model*>(self);
    if constexpr (requires { model.unconstrain(values); }) {
      return model.unconstrain(values);
    } else {
      throw std::invalid_argument("this model cannot map constrained values to θ (no unconstrain)");
    }
  };
  f.initial_point = [](const void* self, counter_rng& rng, double radius) {
    return static_cast<const Model*>(self)->initial_point(rng, radius);
  };
  if constexpr (requires { m.non_finite_terms(std::span<const double>()); })
    f.non_finite_terms = [](const void* self, const double* theta) {
      const Model& model = *static_cast<const Model*>(self);
      return model.non_finite_terms(std::span<const double>(theta, model.dim()));
    };
  return f;
}

/// The start of an optimisation or of a path: `init` (constrained values, in the order of
/// parameter_names()) when given, else Stan's: θ uniform on (−radius, radius), up to 100
/// attempts at a finite log density and gradient. Throws invalid_argument naming `fn` and what
/// was wrong.
template <class = void>
std::vector<double> initial_point(const model_functions& model, const log_density_function& density,
                                         const std::vector<double>& init, double radius, counter_rng& rng,
                                         const std::string& fn) {
  const std::size_t d = density.dim;
  std::vector<double> workspace(density.workspace_size), grad(d);
  auto describe = [&](const std::vector<double>& x, double lp) {
    std::string text = "the log density was " + tyche::detail::format_number(lp) + " at ";
    const std::size_t shown = d < 8 ? d : 8;
    for (std::size_t k = 0; k < shown; ++k)
      text += (k > 0 ? ", " : "") + model.coordinate(k) + " = " + tyche::detail::format_number(x[k]);
    if (shown < d) text += ", …";
    text += " (unconstrained θ)";
    for (std::size_t k = 0; k < d; ++k)
      if (!std::isfinite(grad[k])) {
        text += "; the gradient of " + model.coordinate(k) + " was " + tyche::detail::format_number(grad[k]);
        break;
      }
    if (model.non_finite_terms != nullptr) {
      const std::string terms = model.non_finite_terms(model.model, x.data());
      if (!terms.empty()) text += "; there, " + terms;
    }
    return text;
  };
  auto finite = [&](double lp) {
    bool ok = std::isfinite(lp);
    for (double g : grad) ok = ok && std::isfinite(g);
    return ok;
  };
  if (!init.empty()) {
    if (init.size() != model.constrained_dim)
      throw std::invalid_argument(fn + "init holds " + std::to_string(init.size()) + " values, expected " +
                                  std::to_string(model.constrained_dim) + " (one per name of parameter_names(), in order: " +
                                  tyche::detail::first_names(model.names) + ")");
    for (std::size_t k = 0; k < init.size(); ++k)
      if (!std::isfinite(init[k]))
        throw std::invalid_argument(fn + "init of " + model.names[k] + " is " + tyche::detail::format_number(init[k]));
    std::vector<double> x;
    try {
      x = model.unconstrain(model.model, init);
    } catch (const std::exception& e) {
      throw std::invalid_argument(fn + "init: " + e.what());
    }
    const double lp = density(x.data(), grad.data(), workspace.data());
    if (!finite(lp))
      throw std::invalid_argument(fn + "the log density or its gradient is not finite at init: " + describe(x, lp));
    return x;
  }
  if (!(radius >= 0) || !std::isfinite(radius))
    throw std::invalid_argument(fn + "init_radius = " + tyche::detail::format_number(radius) +
                                " is not a finite number >= 0");
  std::vector<double> x;
  double lp = 0;
  for (int attempt = 0; attempt < 100; ++attempt) {
    x = model.initial_point(model.model, rng, radius);
    lp = density(x.data(), grad.data(), workspace.data());
    if (finite(lp)) return x;
  }
  throw std::runtime_error(fn + "no initial point with a finite log density and gradient in 100 attempts (θ uniform on (-" +
                           tyche::detail::format_number(radius) + ", " + tyche::detail::format_number(radius) +
                           ") per unconstrained coordinate, init_radius); at the last, " + describe(x, lp));
}

namespace detail {

/// In-place Cholesky factor (lower, row-major n × n) of a symmetric matrix; false when it is
/// not positive definite. The upper triangle is zeroed.
template <class = void>
bool cholesky(std::vector<double>& a, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) {
    double diag = a[j * n + j];
    for (std::size_t k = 0; k < j; ++k) diag -= a[j * n + k] * a[j * n + k];
    if (!(diag > 0) || !std::isfinite(diag)) return false;
    const double l = std::sqrt(diag);
    a[j * n + j] = l;
    for (std::size_t i = j + 1; i < n; ++i) {
      double v = a[i * n + j];
      for (std::size_t k = 0; k < j; ++k) v -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = v / l;
    }
    for (std::size_t k = j + 1; k < n; ++k) a[j * n + k] = 0;
  }
  return true;
}

/// Solves L' x = b in place (L lower, row-major).
template <class = void>
void solve_upper_transposed(const std::vector<double>& l, std::size_t n, double* b) {
  for (std::size_t i = n; i-- > 0;) {
    double v = b[i];
    for (std::size_t k = i + 1; k < n; ++k) v -= l[k * n + i] * b[k];
    b[i] = v / l[i * n + i];
  }
}

/// Solves L x = b in place (L lower, row-major).
template <class = void>
void solve_lower(const std::vector<double>& l, std::size_t n, double* b) {
  for (std::size_t i = 0; i < n; ++i) {
    double v = b[i];
    for (std::size_t k = 0; k < i; ++k) v -= l[i * n + k] * b[k];
    b[i] = v / l[i * n + i];
  }
}

inline constexpr double log_two_pi = 1.8378770664093454836;

/// The diagonal of a d × d row-major matrix.
template <class = void>
std::vector<double> diagonal(const std::vector<double>& m, std::size_t d) {
  std::vector<double> out(d);
  for (std::size_t i = 0; i < d; ++i) out[i] = m[i * d + i];
  return out;
}

}  // namespace detail

}  // namespace tyche::inference
