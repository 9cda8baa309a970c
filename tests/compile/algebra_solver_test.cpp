// solve_newton(f, guess) and solve_powell(f, guess) (tyche/compile/algebra_solver.hpp): roots and
// their gradients (the implicit function theorem) against closed forms — one unknown, two
// coupled unknowns, Rosenbrock's equations (Powell's dogleg path), three unknowns from a
// vector-valued f —, a guess from which Newton's method without its line search diverges (atan),
// residuals too large to square, the root polished past the tolerance, SIMD lanes and float, the
// sensitivity columns, bad input named, and every failure (no root, a local minimum of ‖f‖ that
// is not a root, the iterations run out) giving NaN, never a wrong value.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <vector>

#include "support/closed_form_check.hpp"
#include "support/property.hpp"
#include "support/reference_math.hpp"

using namespace tyche;
using tyche_test::normal_log;

namespace {
using tyche_test::check_against;

const std::vector<double> obs{1.3, 0.8, 1.1};

// x² = c, c ~ lognormal(0, 1): x = √c from a positive guess (GuessIsC: c itself, a parameter);
// x observed with sd 0.5.
template <bool Powell, bool GuessIsC>
auto square_root_model(double guess) {
  auto c = lognormal<"c">(0.0, 1.0);
  auto f = [&](const auto& x) { return x * x - c; };
  auto root = [&] {
    if constexpr (Powell && GuessIsC) return solve_powell(f, c);
    else if constexpr (Powell) return solve_powell(f, guess);
    else if constexpr (GuessIsC) return solve_newton(f, c);
    else return solve_newton(f, guess);
  }();
  return model(joint(c, normal(root, 0.5).observe(data(obs))));
}
double square_root_reference(const std::vector<double>& th) {
  double lp = normal_log(th[0], 0.0, 1.0);
  for (double y : obs) lp += normal_log(y, std::exp(0.5 * th[0]), 0.5);
  return lp;
}
}  // namespace

TEST_CASE("solve_newton, solve_powell: one unknown against its closed form, the guess a number or a parameter",
          "[compile][algebra_solver]") {
  // With the default tolerances (function_tolerance 1e-6), the value to 1e-10: the Newton step
  // after the tolerance is met (solve_newton), the relative step tolerance 1e-10 (solve_powell).
  const auto newton = square_root_model<false, false>(1.0);
  const auto newton_c = square_root_model<false, true>(0.0);  // the guess is c itself: no derivative through it
  const auto powell = square_root_model<true, false>(3.0);
  const auto powell_c = square_root_model<true, true>(0.0);
  for (const auto& th : tyche_test::random_points(5, 1, -2.0, 2.0, 81)) {
    check_against(newton, square_root_reference, th, 1e-8, "solve_newton, guess 1");
    check_against(newton_c, square_root_reference, th, 1e-8, "solve_newton, guess c");
    check_against(powell, square_root_reference, th, 1e-8, "solve_powell, guess 3");
    check_against(powell_c, square_root_reference, th, 1e-8, "solve_powell, guess c");
    CHECK(newton.log_prob(th) == Approx(square_root_reference(th)).epsilon(1e-12));
  }
}

namespace {
// Two coupled unknowns: x₀² + x₁² = r², x₁ = m x₀ (a circle and a line through 0), r ~
// lognormal(0, 0.5), m ~ normal(0.5, 0.5): x₀ = r/√(1 + m²), x₁ = m x₀ (the root with x₀ > 0,
// nearer the guess (1, 1)).
const std::vector<double> obs2{0.7, 0.5};
template <bool Powell>
auto circle_model() {
  auto r = lognormal<"r">(0.0, 0.5);
  auto m = normal<"m">(0.5, 0.5);
  auto f = [&](const auto& x) { return std::tuple{x[0] * x[0] + x[1] * x[1] - r * r, x[1] - m * x[0]}; };
  auto root = [&] {
    if constexpr (Powell) return solve_powell(f, std::tuple{1.0, 1.0});
    else return solve_newton(f, std::tuple{1.0, 1.0});
  }();
  return model(joint(r, m, normal(root, 0.2).observe(data(obs2))));
}
double circle_reference(const std::vector<double>& th) {
  const double r = std::exp(th[0]), m = th[1], x0 = r / std::sqrt(1 + m * m);
  return normal_log(th[0], 0.0, 0.5) + normal_log(m, 0.5, 0.5) + normal_log(obs2[0], x0, 0.2) +
         normal_log(obs2[1], m * x0, 0.2);
}
}  // namespace

TEST_CASE("solve_newton, solve_powell: two coupled unknowns against the closed form; SIMD lanes and float",
          "[compile][algebra_solver]") {
  const auto newton = circle_model<false>();
  const auto powell = circle_model<true>();
  REQUIRE(newton.dim() == 2);
  for (const auto& th : tyche_test::random_points(5, 2, -1.0, 1.0, 82)) {
    check_against(newton, circle_reference, th, 1e-8, "circle, solve_newton");
    check_against(powell, circle_reference, th, 1e-8, "circle, solve_powell");
  }
  // Each lane is solved in double on its own: lanes equal the double evaluation.
  tyche_test::check_lanes(newton.program(), tyche_test::random_points(8, 2, -0.8, 0.8, 83), "circle lanes");
  tyche_test::check_float(powell.program(), {0.2, 0.4}, "circle float, solve_powell");
  tyche_test::check_float(newton.program(), {-0.3, 0.7}, "circle float, solve_newton");
}

TEST_CASE("solve_powell, solve_newton: Rosenbrock's equations from (-1.2, 1), the dogleg path", "[compile][algebra_solver]") {
  // 10 (x₁ − x₀²) = 0, c − x₀ = 0: the root (c, c²). From (−1.2, 1) the Newton step leaves
  // Powell's first trust regions, so its steps follow the dogleg path (through the Cauchy point)
  // and some are rejected; Newton's line search gets there too.
  auto c = normal<"c">(1.0, 0.2);
  auto f = [&](const auto& x) { return std::tuple{10.0 * (x[1] - x[0] * x[0]), c - x[0]}; };
  auto fit = [&](const auto& root) {
    return model(joint(c, target(-0.5 * square(root[0] - 0.9) - 0.5 * square(root[1] - 0.8))));
  };
  const auto powell = fit(solve_powell(f, std::tuple{-1.2, 1.0}));
  const auto newton = fit(solve_newton(f, std::tuple{-1.2, 1.0}));
  auto reference = [](const std::vector<double>& th) {
    const double x = th[0];
    return normal_log(x, 1.0, 0.2) - 0.5 * (x - 0.9) * (x - 0.9) - 0.5 * (x * x - 0.8) * (x * x - 0.8);
  };
  for (double th : {0.7, 1.0, 1.4}) {
    check_against(powell, reference, {th}, 1e-8, "Rosenbrock, solve_powell");
    check_against(newton, reference, {th}, 1e-8, "Rosenbrock, solve_newton");
  }
}

TEST_CASE("solve_newton, solve_powell: residuals too large to square are not taken for infinite",
          "[compile][algebra_solver]") {
  // ‖f‖ near 1e160 at the guess (‖f‖² would overflow): the iterations start and find the root.
  std::vector<double> g(1);
  auto c = flat<"c">();
  auto huge = [&](const auto& x) { return 1e160 * (x - c); };
  CHECK(model(joint(c, target(solve_newton(huge, 0.0)))).log_prob_and_gradient(std::vector<double>{2.5}, g) ==
        Approx(2.5).epsilon(1e-12));
  CHECK(g[0] == Approx(1.0).epsilon(1e-10));
  CHECK(model(joint(c, target(solve_powell(huge, 0.0)))).log_prob_and_gradient(std::vector<double>{2.5}, g) ==
        Approx(2.5).epsilon(1e-12));
  // exp(x) = c from x = 400 (f about 5e173): Newton's steps of about −1 reach log c.
  auto grow = [&](const auto& x) { return exp(x) - c; };
  CHECK(model(joint(c, target(solve_newton_tol(grow, 400.0, 1e-3, 1e-6, 1000))))
            .log_prob_and_gradient(std::vector<double>{2.0}, g) == Approx(std::log(2.0)).epsilon(1e-12));
  CHECK(g[0] == Approx(0.5).epsilon(1e-10));
}

TEST_CASE("solve_newton, solve_powell: three unknowns from a vector-valued f", "[compile][algebra_solver]") {
  // x ∘ x = c for c ~ lognormal(0, 0.5) of 3 values: x = √c, f returning a vector expression.
  static const std::vector<double> obs3{1.1, 0.9, 1.4};
  auto c = lognormal<"c">(0.0, 0.5, shape<3>);
  auto f = [&](const auto& x) { return x * x - c; };
  const auto m = model(joint(c, normal(solve_powell(f, std::tuple{2.0, 2.0, 2.0}), 0.3).observe(data(obs3))));
  const auto mn = model(joint(c, normal(solve_newton(f, std::tuple{2.0, 2.0, 2.0}), 0.3).observe(data(obs3))));
  // The guess as a std::array of numbers and as rep_vector<K>(value).
  const auto ma = model(joint(c, normal(solve_newton(f, std::array<double, 3>{2.0, 2.0, 2.0}), 0.3).observe(data(obs3))));
  const auto mr = model(joint(c, normal(solve_powell(f, rep_vector<3>(2.0)), 0.3).observe(data(obs3))));
  auto reference = [](const std::vector<double>& th) {
    double lp = 0;
    for (std::size_t i = 0; i < 3; ++i)
      lp += normal_log(th[i], 0.0, 0.5) + normal_log(obs3[i], std::exp(0.5 * th[i]), 0.3);
    return lp;
  };
  check_against(m, reference, {0.3, -0.4, 0.1}, 1e-8, "vector f, solve_powell");
  check_against(mn, reference, {0.3, -0.4, 0.1}, 1e-8, "vector f, solve_newton");
  check_against(ma, reference, {0.3, -0.4, 0.1}, 1e-8, "vector f, a std::array guess");
  check_against(mr, reference, {0.3, -0.4, 0.1}, 1e-8, "vector f, a rep_vector guess");
}

TEST_CASE("solve_newton, solve_powell: a guess from which Newton's method without a line search diverges",
          "[compile][algebra_solver]") {
  // atan(x) = θ from x = 10: the full Newton step goes to −88 and on outwards; the line search
  // (solve_newton) and the trust region (solve_powell) reach tan θ.
  auto theta = normal<"theta">(0.5, 0.1);
  auto f = [&](const auto& x) { return atan(x) - theta; };
  const auto newton = model(joint(theta, target(-square(solve_newton(f, 10.0) - 0.4))));
  const auto powell = model(joint(theta, target(-square(solve_powell(f, 10.0) - 0.4))));
  auto reference = [](const std::vector<double>& th) {
    return normal_log(th[0], 0.5, 0.1) - (std::tan(th[0]) - 0.4) * (std::tan(th[0]) - 0.4);
  };
  for (double th : {0.3, 0.5, 0.9}) {
    check_against(newton, reference, {th}, 1e-8, "atan, solve_newton");
    check_against(powell, reference, {th}, 1e-8, "atan, solve_powell");
  }
}

TEST_CASE("solve_newton, solve_powell: failures give NaN, not an error or a wrong value", "[compile][algebra_solver]") {
  // c flat: the log density is the root itself.
  std::vector<double> g(1);
  auto c = flat<"c">();
  const auto root_at = [&](const auto& root, double cv) {
    return model(joint(c, target(root))).log_prob_and_gradient(std::vector<double>{cv}, g);
  };
  // x² + c = 0 has no real root for c > 0.
  auto none = [&](const auto& x) { return x * x + c; };
  CHECK(std::isnan(root_at(solve_newton(none, 1.0), 1.1)));
  CHECK(std::isnan(root_at(solve_powell(none, 1.0), 1.1)));
  // x³ − 2x + c at c = 2, from 0: ‖f‖ has a local minimum near x = 0.82 that is not a root
  // (the root is near −1.77); from −2 both methods find the root.
  auto local = [&](const auto& x) { return x * x * x - 2.0 * x + c; };
  CHECK(std::isnan(root_at(solve_newton(local, 0.0), 2.0)));
  CHECK(std::isnan(root_at(solve_powell(local, 0.0), 2.0)));
  const double root = root_at(solve_powell(local, -2.0), 2.0);
  CHECK(std::fabs(root * root * root - 2.0 * root + 2.0) < 1e-12);
  CHECK(g[0] == Approx(-1.0 / (3 * root * root - 2.0)).epsilon(1e-10));  // −(∂f/∂x)⁻¹ ∂f/∂c
  CHECK(root_at(solve_newton(local, -2.0), 2.0) == Approx(root).epsilon(1e-12));
  // x³ = c from 1000: 3 iterations are not enough, the default 200 are.
  auto cube = [&](const auto& x) { return x * x * x - c; };
  CHECK(std::isnan(root_at(solve_newton_tol(cube, 1000.0, 1e-3, 1e-6, 3), 8.0)));
  CHECK(std::isnan(root_at(solve_powell_tol(cube, 1000.0, 1e-10, 1e-6, 3), 8.0)));
  CHECK(root_at(solve_newton(cube, 1000.0), 8.0) == Approx(2.0).epsilon(1e-12));
  CHECK(g[0] == Approx(1.0 / 12).epsilon(1e-10));  // d c^(1/3) / dc = c^(−2/3) / 3
  CHECK(root_at(solve_powell(cube, 1000.0), 8.0) == Approx(2.0).epsilon(1e-12));
}

TEST_CASE("solve_newton, solve_powell: bad input is named", "[compile][algebra_solver]") {
  auto c = lognormal<"c">(0.0, 1.0);
  auto f = [&](const auto& x) { return x * x - c; };
  auto f2 = [&](const auto& x) { return std::tuple{x[0] - c, x[1] - x[0]}; };
  CHECK_THROWS_WITH(solve_newton(f, NAN),
                    Catch::Matchers::Contains("tyche::solve_newton(f, guess): the guess has value nan at index 1"));
  CHECK_THROWS_WITH(solve_powell(f2, std::tuple{1.0, INFINITY}),
                    Catch::Matchers::Contains("tyche::solve_powell(f, guess): the guess has value inf at index 2"));
  CHECK_THROWS_WITH(solve_newton(f2, std::array<double, 2>{1.0, NAN}),
                    Catch::Matchers::Contains("the guess has value nan at index 2"));
  CHECK_THROWS_WITH(solve_newton_tol(f, 1.0, -1.0, 1e-6, 10),
                    Catch::Matchers::Contains("scaling_step_size is -1; it must be non-negative"));
  CHECK_THROWS_WITH(solve_powell_tol(f, 1.0, NAN, 1e-6, 10), Catch::Matchers::Contains("relative_tolerance is nan"));
  CHECK_THROWS_WITH(solve_powell_tol(f, 1.0, 1e-10, 0.0, 10),
                    Catch::Matchers::Contains("function_tolerance is 0; it must be positive"));
  CHECK_THROWS_WITH(solve_newton_tol(f, 1.0, 1e-3, 1e-6, 0), Catch::Matchers::Contains("max_num_steps is 0"));
  auto v = normal<"v">(0.0, 1.0, shape_of(3));  // a size known at run time only
  CHECK_THROWS_WITH(solve_powell([&](const auto&) { return v; }, std::tuple{1.0, 1.0}),
                    Catch::Matchers::Contains("f returns a vector of size 3, there are 2 unknowns"));
}

TEST_CASE("solve_newton: sensitivity columns — loop invariants hoisted as one column", "[compile][algebra_solver]") {
  // A steady state of two compartments: ka·D = ke·x₀ + kq·x₀², x₁ = x₀·ke: the root's
  // derivatives by ka and by ke = CL / V (hoisted: one column for CL and V) and kq.
  auto CL = lognormal<"CL">(0.0, 1.0);
  auto V = lognormal<"V">(0.0, 1.0);
  auto ka = lognormal<"ka">(0.0, 1.0);
  auto kq = lognormal<"kq">(-2.0, 0.5);
  auto root = solve_newton(
      [&](const auto& x) { return std::tuple{ka * 10.0 - CL / V * x[0] - kq * x[0] * x[0], x[1] - x[0] * (CL / V)}; },
      std::tuple{1.0, 1.0});
  CHECK(detail::as_node(root).op.columns() == 3);
  const auto m = model(joint(CL, V, ka, kq, normal(root, 0.5).observe(data(obs2))));
  auto reference = [](const std::vector<double>& th) {
    const double cl = std::exp(th[0]), v = std::exp(th[1]), ka_ = std::exp(th[2]), kq_ = std::exp(th[3]);
    const double ke = cl / v, x0 = (-ke + std::sqrt(ke * ke + 4 * kq_ * ka_ * 10.0)) / (2 * kq_);
    return normal_log(th[0], 0.0, 1.0) + normal_log(th[1], 0.0, 1.0) + normal_log(th[2], 0.0, 1.0) +
           normal_log(th[3], -2.0, 0.5) + normal_log(obs2[0], x0, 0.5) + normal_log(obs2[1], x0 * ke, 0.5);
  };
  check_against(m, reference, {0.2, -0.1, 0.3, -1.8}, 1e-8, "steady state");
}

TEST_CASE("solve_newton, solve_powell: one solve per element of tabulate (a steady state per group)",
          "[compile][algebra_solver]") {
  // x_j² = c z_j for each group j: x_j = √(c z_j), each its own solve of one unknown inside
  // tabulate's lambda (the element's placeholder z_j an operand of the solve): the cost is n small
  // solves, not one system of n unknowns.
  static const std::vector<double> z{1.0, 2.0, 3.5, 0.5};
  auto c = lognormal<"c">(0.0, 1.0);
  auto per_group = [&](auto solve) {
    auto roots = tabulate(z.size(), [&](const auto&, const auto& zj) {
      return solve([&](const auto& x) { return x * x - c * zj; }, 1.0);
    }, data(z));
    return model(joint(c, target(-0.5 * sum(square(roots - 1.0)))));
  };
  const auto newton = per_group([](auto&& f, double g) { return solve_newton(f, g); });
  const auto powell = per_group([](auto&& f, double g) { return solve_powell(f, g); });
  auto reference = [](const std::vector<double>& th) {
    double lp = normal_log(th[0], 0.0, 1.0);
    for (double zj : z) {
      const double x = std::sqrt(std::exp(th[0]) * zj);
      lp += -0.5 * (x - 1.0) * (x - 1.0);
    }
    return lp;
  };
  for (double th : {-0.5, 0.3, 1.2}) {
    check_against(newton, reference, {th}, 1e-8, "tabulate, solve_newton");
    check_against(powell, reference, {th}, 1e-8, "tabulate, solve_powell");
  }
  tyche_test::check_lanes(newton.program(), tyche_test::random_points(8, 1, -1.0, 1.0, 84), "tabulate lanes");
}
