// expect: tyche::hurdle\(d, theta\): a continuous d must live on the positive numbers
// hurdle(normal(mu, 1), theta): the zeros and normal's values would overlap.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> y{0.0, 1.2, -0.4};
  const auto mu = normal<"mu">(0.0, 1.0);
  const auto m = model(joint(mu, hurdle(normal(mu, 1.0), 0.3).observe(data(y))));
  return static_cast<int>(m.dim());
}
