// expect: tyche::discrete_range\(lower, upper\): lower and upper must be integers given as numbers or data
// discrete_range(lower, upper) with an upper bound that is a parameter: the bounds are integers
// (as in Stan), so the message says what they must be.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  static const std::vector<double> y{2, 3};
  const auto u = lognormal<"u">(1.0, 1.0);
  const auto m = model(joint(u, discrete_range(1.0, u).observe(data(y))));
  return static_cast<int>(m.dim());
}
