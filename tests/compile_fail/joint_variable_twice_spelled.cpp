// expect: random_variable_named<'a', 'l', 'p', 'h', 'a'>
#include <tyche/tyche.hpp>
#include <vector>
// Two random variables of one family and shape named "alpha": the diagnostic spells the name.
int main() {
  using namespace tyche;
  static const std::vector<double> y{1.0, 2.0};
  auto alpha = normal<"alpha">(0.0, 1.0);
  auto beta = normal<"alpha">(0.0, 2.0);  // meant "beta"
  auto m = model(joint(alpha, beta, normal(alpha + beta, 1.0).observe(data(y))));
  return m.dim() > 0 ? 0 : 1;
}
