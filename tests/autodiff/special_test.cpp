// Property check for the special-function rules of tyche/autodiff/special.hpp, the
// digamma/trigamma implementations against Boost.Math, and log Φ and log I₀ against long double
// references (erfc, std::cyl_bessel_i).
#include <tyche/tyche.hpp>

#include <boost/math/distributions/normal.hpp>
#include <boost/math/special_functions/digamma.hpp>
#include <boost/math/special_functions/polygamma.hpp>
#include <boost/math/special_functions/trigamma.hpp>

#include "support/property.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

using namespace tyche;
using tyche_test::check_unary;

TEST_CASE("special: rules pass the property check", "[autodiff][special]") {
  check_unary("lgamma", [](auto e) { return lgamma(e); }, 0.3, 20);
  check_unary("digamma", [](auto e) { return digamma(e); }, 0.3, 20);
  check_unary("erf", [](auto e) { return erf(e); }, -3, 3);
  check_unary("Phi", [](auto e) { return Phi(e); }, -6, 6);
  // Across the switches of scalar/math.hpp (x = −8 and 0). Further out, finite differences
  // with steps 1e-3·|x| no longer resolve log_sum_exp(log_Phi(v)), whose terms vary on the
  // scale 1/|x|: the deep tail, past Φ's underflow at −38, is checked on log_Phi alone.
  check_unary("log_Phi", [](auto e) { return log_Phi(e); }, -12, 8);
  {
    param<"x"> x;
    const auto tail = compile(log_Phi(x));
    for (double v : {-20.0, -37.5, -38.5, -45.0, -80.0, -300.0, -1e3})
      tyche_test::check_gradient_at(tail, {v}, "log_Phi(x)");
  }
  // Across the switch from the power series to the asymptotic expansion (|x| = 20); even.
  check_unary("log_bessel_i0", [](auto e) { return log_bessel_i0(e); }, -45, 45);
  check_unary("cos", [](auto e) { return cos(e); }, -7, 7);
  check_unary("sin", [](auto e) { return sin(e); }, -7, 7);
  check_unary("atan", [](auto e) { return atan(e); }, -20, 20);
  // Stan's other one-node functions (operations/stan_functions.hpp), each on one program: a sum
  // over a vector of three (the elementwise loop and its reverse pass), gradients against finite
  // differences, SIMD lanes against doubles, floats against doubles (the evaluator's other paths
  // are the same for every rule, and checked in full above).
  auto light = [](const std::string& name, auto f, double lo, double hi) {
    vector_param<"v", 3> v;
    const auto prog = compile(sum(f(v)));
    const auto pts = tyche_test::random_points(25, 3, lo, hi, 2468);
    for (const auto& pt : pts) tyche_test::check_gradient_at(prog, pt, "sum(" + name + "(v))");
    tyche_test::check_lanes(prog, pts, "sum(" + name + "(v))");
    tyche_test::check_float(prog, pts[0], "sum(" + name + "(v))");
  };
  light("tan", [](auto e) { return tan(e); }, -1.4, 1.4);
  light("asin", [](auto e) { return asin(e); }, -0.95, 0.95);
  light("acos", [](auto e) { return acos(e); }, -0.95, 0.95);
  light("sinh", [](auto e) { return sinh(e); }, -5, 5);
  light("cosh", [](auto e) { return cosh(e); }, -5, 5);
  light("asinh", [](auto e) { return asinh(e); }, -20, 20);
  light("acosh", [](auto e) { return acosh(e); }, 1.05, 20);
  light("atanh", [](auto e) { return atanh(e); }, -0.95, 0.95);
  light("erfc", [](auto e) { return erfc(e); }, -3, 5);
  light("cbrt", [](auto e) { return cbrt(e); }, 0.1, 20);
  light("inv_Phi", [](auto e) { return inv_Phi(e); }, 0.001, 0.999);
  light("trigamma", [](auto e) { return trigamma(e); }, 0.2, 15);
  {
    param<"a"> a;
    param<"b"> b;
    const auto angle = compile(atan2(a, b), a, b);
    const auto pts = tyche_test::random_points(20, 2, -3, 3, 1357);
    for (const auto& pt : pts) tyche_test::check_gradient_at(angle, pt, "atan2(a, b)");
    tyche_test::check_lanes(angle, pts, "atan2(a, b)");
  }
  {
    // fmin and fmax: the derivative goes to the operand chosen (vectors against a scalar, and
    // two vectors).
    param<"a"> a;
    vector_param<"u", 3> u;
    vector_param<"w", 3> w;
    const auto chosen = compile(sum(fmin(u, w) + 2.0 * fmax(u, a)), a, u, w);
    const auto pts = tyche_test::random_points(25, 7, -3, 3, 4321);
    for (const auto& pt : pts) tyche_test::check_gradient_at(chosen, pt, "sum(fmin(u, w) + 2 fmax(u, a))");
    tyche_test::check_lanes(chosen, pts, "sum(fmin(u, w) + 2 fmax(u, a))");
  }
}

TEST_CASE("special: digamma, trigamma and tetragamma agree with Boost.Math", "[autodiff][special][math]") {
  for (double x : {1e-3, 0.1, 0.5, 1.0, 1.5, 2.0, 3.7, 9.99, 10.0, 25.0, 1e3, 1e6, -0.5, -1.3,
                   -7.25, -100000.5, -1e8 - 0.25}) {
    INFO("x = " << x);
    CHECK(math::digamma(x) == Approx(boost::math::digamma(x)).epsilon(1e-13).margin(1e-14));
    CHECK(math::trigamma(x) == Approx(boost::math::trigamma(x)).epsilon(1e-13));
    CHECK(math::tetragamma(x) == Approx(boost::math::polygamma(2, x)).epsilon(1e-13));
  }
  CHECK(std::isnan(math::tetragamma(-1.0)));
  // trigamma(x) is positive everywhere, decreasing from +∞ to 0 on (0, ∞).
  param<"x"> x;
  static_assert(support_of<decltype(trigamma(exp(x)))> == interval::open(0.0, interval::inf));
  static_assert(support_of<decltype(trigamma(x))> == interval::open(0.0, interval::inf));
  const std::vector<double> d{0.5, 4.0};
  const interval s = support(trigamma(data(d)));
  CHECK(s.lo == Approx(boost::math::trigamma(4.0)).epsilon(1e-14));
  CHECK(s.hi == Approx(boost::math::trigamma(0.5)).epsilon(1e-14));
  CHECK(std::isnan(math::digamma(0.0)));
  CHECK(std::isnan(math::digamma(-2.0)));
  CHECK(std::isnan(math::trigamma(-3.0)));
}

TEST_CASE("special: Phi is accurate in the lower tail", "[autodiff][special]") {
  param<"x"> x;
  // Φ(−10) = 7.6198530241605e-24; 1 − Φ(10) by subtraction would be 0.
  CHECK(compile(Phi(x)).value(std::vector<double>{-10.0}) ==
        Approx(7.6198530241605e-24).epsilon(1e-10));
}

TEST_CASE("special: log_Phi and its derivative against long double erfc", "[autodiff][special][math]") {
  // Φ(x) = erfc(−x/√2)/2 in long double (which holds Φ(−140) ≈ 1e-4259); log(1 − erfc(x/√2)/2)
  // for x > 0 (up to 6: beyond, erfc(x/√2) amplifies the rounding of x/√2 by x², the
  // reference's and ours alike, though the absolute error stays below 1e-25).
  double worst_value = 0.0, worst_derivative = 0.0;
  for (double x = -140.0; x < 6.0; x += 0.0371) {
    const long double z = -static_cast<long double>(x) / std::sqrt(2.0L);
    const long double phi_cdf = std::erfc(z) / 2;
    const long double value = x > 0 ? std::log1p(-std::erfc(-z) / 2) : std::log(phi_cdf);
    const long double density = std::exp(-z * z) / std::sqrt(2 * std::numbers::pi_v<long double>);
    const double v = math::log_Phi(x), d = math::phi_over_Phi(x);
    INFO("x = " << x);
    const double ev = static_cast<double>(std::fabs((v - value) / value));
    const double ed = static_cast<double>(std::fabs((d - density / phi_cdf) / (density / phi_cdf)));
    CHECK(ev <= 1e-14);
    CHECK(ed <= 1e-13);
    worst_value = std::max(worst_value, ev);
    worst_derivative = std::max(worst_derivative, ed);
  }
  INFO("largest relative errors: log_Phi " << worst_value << ", phi_over_Phi " << worst_derivative);
  CHECK(worst_value <= 1e-14);
  // log(Phi(x)) is −∞ from x ≈ −38.5; log_Phi is finite, and its derivative tends to −x.
  param<"x"> x;
  CHECK(std::isinf(std::log(compile(Phi(x)).value(std::vector<double>{-40.0}))));
  CHECK(compile(log_Phi(x)).value(std::vector<double>{-40.0}) ==
        Approx(-804.60844201375380).epsilon(1e-14));
  CHECK(math::phi_over_Phi(-1e10) == Approx(1e10).epsilon(1e-14));
  CHECK(math::log_Phi(std::numeric_limits<double>::infinity()) == 0.0);
  CHECK(compile(std_normal_lcdf(x)).value(std::vector<double>{-3.0}) ==
        compile(log_Phi(x)).value(std::vector<double>{-3.0}));
}

TEST_CASE("special: log_bessel_i0 and I1/I0 against std::cyl_bessel_i", "[autodiff][special][math]") {
  // std::cyl_bessel_i in long double (no overflow up to x ≈ 11000): log I₀ relative to 1e-14
  // where log I₀ ≥ 0.25 (x ≥ 1), I₀ itself below (where log I₀ ≈ x²/4 would be compared with
  // the rounding of log(1 + tiny)).
  for (double x = 1e-4; x < 1e4; x *= 1.0137) {
    const long double i0 = std::cyl_bessel_i(0.0L, static_cast<long double>(x));
    const long double i1 = std::cyl_bessel_i(1.0L, static_cast<long double>(x));
    const double v = math::log_bessel_i0(x), r = math::bessel_i1_over_i0(x);
    INFO("x = " << x);
    if (x >= 1) CHECK(static_cast<double>(std::fabs((v - std::log(i0)) / std::log(i0))) <= 1e-14);
    else CHECK(static_cast<double>(std::fabs((std::expm1(static_cast<long double>(v)) - (i0 - 1)) / i0)) <= 1e-14);
    CHECK(static_cast<double>(std::fabs((r - i1 / i0) / (i1 / i0))) <= 1e-14);
    CHECK(math::log_bessel_i0(-x) == v);
    CHECK(math::bessel_i1_over_i0(-x) == -r);
  }
  CHECK(math::log_bessel_i0(0.0) == 0.0);
  CHECK(math::log_bessel_i0(-std::numeric_limits<double>::infinity()) == std::numeric_limits<double>::infinity());
  CHECK(math::bessel_i1_over_i0(std::numeric_limits<double>::infinity()) == 1.0);
  CHECK(math::log_Phi(-std::numeric_limits<double>::infinity()) == -std::numeric_limits<double>::infinity());
  CHECK(math::bessel_i1_over_i0(0.0) == 0.0);
  // log I₀(x) = x − ½ log(2πx) + log(1 + 1/(8x) + …): finite where I₀ overflows.
  CHECK(math::log_bessel_i0(1e6) ==
        Approx(1e6 - 0.5 * std::log(2 * std::numbers::pi * 1e6) + 1.25e-7).epsilon(1e-15));
  CHECK(math::log_bessel_i0(1e-5) == Approx(2.5e-11).epsilon(1e-9));
  // float: through the double code.
  CHECK(math::log_bessel_i0(30.0f) == Approx(math::log_bessel_i0(30.0)).epsilon(1e-6));
  CHECK(math::log_Phi(-50.0f) == Approx(math::log_Phi(-50.0)).epsilon(1e-6));
}

TEST_CASE("special: supports of log_Phi, log_bessel_i0 and cos", "[autodiff][special][support]") {
  param<"x"> x;
  static_assert(support_of<decltype(log_Phi(x))> == interval::open(-interval::inf, 0.0));
  static_assert(support_of<decltype(log_bessel_i0(x))> == interval::closed_open(0.0, interval::inf));
  static_assert(support_of<decltype(cos(x))> == interval::closed(-1.0, 1.0));
  // Run time, from data: log I₀ on [1, 2] is [log I₀(1), log I₀(2)], widened by a few ulps.
  const std::vector<double> d{1.0, 2.0}, e{1.0, -1.5};
  const interval s = support(log_bessel_i0(data(d)));
  CHECK(s.lo == Approx(std::log(std::cyl_bessel_i(0.0, 1.0))).epsilon(1e-14));
  CHECK(s.hi == Approx(std::log(std::cyl_bessel_i(0.0, 2.0))).epsilon(1e-14));
  // An even function: [−1.5, 1] has the image [0, log I₀(1.5)].
  CHECK(support(log_bessel_i0(data(e))).lo == 0.0);
  CHECK(support(log_bessel_i0(data(e))).hi == Approx(std::log(std::cyl_bessel_i(0.0, 1.5))).epsilon(1e-14));
  CHECK(support(log_Phi(data(d))).hi < 0.0);
}

TEST_CASE("special: inv_Phi against Boost.Math's normal quantile, to the double's precision, in both tails",
          "[autodiff][special][math]") {
  const boost::math::normal_distribution<double> std_normal;
  // Relative precision in the tails and at the centre (z → 0 near p = 1/2: erf, not log Φ).
  for (const double p : {1e-300, 1e-100, 1e-20, 1e-8, 0.001, 0.02425, 0.1, 0.2499, 0.25, 0.3, 0.5 - 1e-7, 0.5 + 1e-10,
                         0.7, 0.75, 0.7501, 0.97575, 0.999, 1 - 1e-9, 1 - 1e-15}) {
    INFO("p = " << p);
    CHECK(math::inv_Phi(p) == Approx(boost::math::quantile(std_normal, p)).epsilon(4e-15));
  }
  CHECK(math::inv_Phi(0.5) == 0.0);
  CHECK(math::inv_Phi(0.0) == -std::numeric_limits<double>::infinity());
  CHECK(math::inv_Phi(1.0) == std::numeric_limits<double>::infinity());
  CHECK(std::isnan(math::inv_Phi(-0.1)));
  CHECK(std::isnan(math::inv_Phi(1.5)));
  CHECK(std::isnan(math::inv_Phi(std::numeric_limits<double>::quiet_NaN())));
  // Φ(Φ⁻¹(p)) = p across the range.
  for (double p = 0.0005; p < 1; p += 0.0137) CHECK(0.5 * std::erfc(-math::inv_Phi(p) / std::sqrt(2.0)) == Approx(p).epsilon(1e-14));
}
