// expect: a random variable is used in the model but not listed in joint\(\.\.\.\): add it to joint
#include <tyche/tyche.hpp>
#include <vector>
int main() {
  using namespace tyche;
  static const std::vector<double> y{1.0, 2.0};
  auto mu = normal<"mu">(0.0, 1.0);
  auto sigma = half_normal<"sigma">(1.0);
  auto m = model(joint(mu, normal(mu, sigma).observe(data(y))));  // sigma is not listed
  return m.dim() > 0 ? 0 : 1;
}
