// tests/support/closed_form_check.hpp — a model's log density and gradient at a point against a
// closed form of the same function and its Richardson-extrapolated finite differences (the ODE
// and algebraic-solver tests: tests/compile/ode_test.cpp, algebra_solver_test.cpp).
#pragma once
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <vector>

namespace tyche_test {

/// Richardson-extrapolated central difference of g at x in coordinate k.
inline double derivative(const std::function<double(const std::vector<double>&)>& g, std::vector<double> x,
                         std::size_t k) {
  const double x0 = x[k], h = 1e-3 * std::max(1.0, std::fabs(x0));
  auto central = [&](double s) {
    x[k] = x0 + s;
    const double up = g(x);
    x[k] = x0 - s;
    const double down = g(x);
    return (up - down) / (2 * s);
  };
  const double d1 = central(h), d2 = central(h / 2), d4 = central(h / 4);
  const double r1 = (4 * d2 - d1) / 3, r2 = (4 * d4 - d2) / 3;
  return (16 * r2 - r1) / 15;
}

/// The model's gradient at th against `reference`'s value and its finite differences (a closed
/// form, smooth in th): relative tolerance tol.
template <class M>
void check_against(const M& m, const std::function<double(const std::vector<double>&)>& reference,
                   const std::vector<double>& th, double tol, const char* what) {
  INFO(what);
  std::vector<double> g(th.size());
  const double v = m.log_prob_and_gradient(th, g);
  CHECK(v == Approx(reference(th)).epsilon(tol));
  for (std::size_t k = 0; k < th.size(); ++k) {
    const double want = derivative(reference, th, k);
    INFO("coordinate " << k << ": gradient " << g[k] << ", reference " << want);
    CHECK(std::fabs(g[k] - want) <= tol * std::max(1.0, std::fabs(want)));
  }
}

}  // namespace tyche_test
