// expect: tyche::zero_inflated\(d, theta\) / hurdle\(d, theta\): theta \(the probability of a structural zero\) must be in \[0, 1\]
// zero_inflated(d, theta) with theta a parameter on the whole real line (logistic(theta) is meant).
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> y{0.0, 2.0, 1.0};
  const auto z = normal<"z">(0.0, 1.0);
  const auto m = model(joint(z, zero_inflated(poisson(2.0), z).observe(data(y))));
  return static_cast<int>(m.dim());
}
