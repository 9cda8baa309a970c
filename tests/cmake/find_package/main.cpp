// Minimal tyche consumer (tests/cmake/find_package). Compiles and evaluates a tiny model and
// checks its value and gradient; returns 0 on success.
#include <tyche/tyche.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

static_assert(TYCHE_VERSION_MAJOR == 0, "unexpected tyche major version");

int main() {
  using namespace tyche;
  param<"mu"> mu;
  const std::vector<double> y{1.0, 2.0, 4.0};
  auto prog = compile(sum(-0.5 * square(data(y) - mu)));

  const std::vector<double> theta{1.5};
  std::vector<double> grad(1);
  const double lp = prog.value_and_gradient(theta, grad);
  const double v = prog.value(theta);
  // lp = -0.5 * (0.25 + 0.25 + 6.25) = -3.375; d lp / d mu = sum(y - mu) = 2.5
  const bool ok = prog.dim() == 1 && std::fabs(lp + 3.375) < 1e-12 &&
                  std::fabs(v + 3.375) < 1e-12 && std::fabs(grad[0] - 2.5) < 1e-12;
  if (!ok) {
    std::fprintf(stderr,
                 "tyche consumer (find_package): dim %zu, lp %.17g, value %.17g, grad %.17g\n",
                 prog.dim(), lp, v, grad[0]);
    return 1;
  }
  return 0;
}
