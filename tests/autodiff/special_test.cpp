// Property check for the special-function rules of tyche/autodiff/special.hpp, and the
// digamma/trigamma implementations against Boost.Math.
#include <tyche/tyche.hpp>

#include <boost/math/special_functions/digamma.hpp>
#include <boost/math/special_functions/trigamma.hpp>

#include "support/property.hpp"

using namespace tyche;
using tyche_test::check_unary;

TEST_CASE("special: rules pass the property check", "[autodiff][special]") {
  check_unary("lgamma", [](auto e) { return lgamma(e); }, 0.3, 20);
  check_unary("digamma", [](auto e) { return digamma(e); }, 0.3, 20);
  check_unary("erf", [](auto e) { return erf(e); }, -3, 3);
  check_unary("Phi", [](auto e) { return Phi(e); }, -6, 6);
}

TEST_CASE("special: digamma and trigamma agree with Boost.Math", "[autodiff][special][math]") {
  for (double x : {1e-3, 0.1, 0.5, 1.0, 1.5, 2.0, 3.7, 9.99, 10.0, 25.0, 1e3, 1e6, -0.5, -1.3,
                   -7.25}) {
    INFO("x = " << x);
    CHECK(math::digamma(x) == Approx(boost::math::digamma(x)).epsilon(1e-13).margin(1e-14));
    CHECK(math::trigamma(x) == Approx(boost::math::trigamma(x)).epsilon(1e-13));
  }
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
