// Transforms (tyche/transforms/bounds.hpp): constrain ∘ unconstrain round trips, values land in
// the support, and the log-Jacobian expression equals log|dx/du| from finite differences.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "support/property.hpp"

using namespace tyche;

namespace {
template <class Tr>
void check_transform(const Tr& tr, double lo, double hi, const char* what) {
  param<"u"> u;
  const auto x_of_u = compile(tr.constrain(u));
  const auto log_j = compile(tr.log_jacobian(u) + u * lit<0>);  // keeps u in the layout
  for (const auto& p : tyche_test::random_points(50, 1, -6, 6, 21)) {
    INFO(what << " at u = " << p[0]);
    const double x = x_of_u.value(p);
    CHECK(x > lo);
    CHECK(x < hi);
    // log |dx/du| by Richardson-extrapolated finite differences of the constrained value.
    std::vector<double> ws;
    const double dxdu = tyche_test::richardson_derivative(x_of_u, p, 0, ws);
    CHECK(log_j.value(p) == Approx(std::log(std::fabs(dxdu))).epsilon(1e-8).margin(1e-8));
    tyche_test::check_gradient_at(log_j, p, what);
  }
}
}  // namespace

TEST_CASE("transforms: each maps the line into its support with the right log-Jacobian",
          "[transforms]") {
  check_transform(transforms::identity{}, -1e300, 1e300, "identity");
  check_transform(transforms::lower_bound<literal<0>>{}, 0, 1e300, "positive");
  check_transform(transforms::lower_bound<constant>{constant{-3.0}}, -3, 1e300, "lower -3");
  check_transform(transforms::upper_bound<constant>{constant{2.0}}, -1e300, 2, "upper 2");
  check_transform(transforms::interval<literal<0>, literal<1>>{}, 0, 1, "unit interval");
  check_transform(transforms::interval<constant, constant>{constant{-1.0}, constant{4.0}}, -1, 4,
                  "interval (-1, 4)");
}

TEST_CASE("transforms: unconstrain inverts constrain", "[transforms]") {
  using I = transforms::interval<constant, constant>;
  for (double x : {-0.999, -0.5, 0.0, 1.3, 3.999}) {
    const double u = I::unconstrain(x, -1.0, 4.0);
    CHECK(-1.0 + 5.0 / (1 + std::exp(-u)) == Approx(x).epsilon(1e-12));
  }
  for (double x : {1e-8, 0.3, 7.0, 1e8}) {
    CHECK(std::exp(transforms::lower_bound<literal<0>>::unconstrain(x, 0.0)) == Approx(x).epsilon(1e-14));
  }
  CHECK(transforms::upper_bound<constant>::unconstrain(1.0, 2.0) == Approx(0.0).margin(1e-15));
  CHECK_FALSE(I::contains(4.0, -1.0, 4.0));
  CHECK_FALSE(transforms::lower_bound<literal<0>>::contains(0.0, 0.0));
}
