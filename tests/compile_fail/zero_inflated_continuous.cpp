// expect: tyche::zero_inflated\(d, theta\): d must be a discrete family .*use hurdle\(d, theta\)
// zero_inflated of a continuous family: a point mass at zero beside a density is a hurdle model.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> y{0.0, 1.2};
  const auto hu = beta<"hu">(1.0, 1.0);
  const auto m = model(joint(hu, zero_inflated(gamma(2.0, 1.0), hu).observe(data(y))));
  return static_cast<int>(m.dim());
}
