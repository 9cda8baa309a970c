// expect: multinomial\(theta\): theta must be >= 0, but its support
// multinomial(theta) with theta a parameter on the whole line: the types prove theta can be
// negative; the message names the family, the argument and the domain.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> y{1.0, 2.0, 0.0};
  const auto theta = normal<"theta">(0.0, 1.0, shape<3>);
  const auto m = model(joint(theta, multinomial(theta).observe(data(y))));
  return static_cast<int>(m.dim());
}
