// expect: tyche::hypergeometric\(N, a, b\): N, a and b must be counts given as numbers or data
// hypergeometric(N, a, b) with a an expression of a parameter: its arguments are integers (as in
// Stan), so the message says what they must be.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  static const std::vector<double> y{2, 3};
  const auto a = lognormal<"a">(0.0, 1.0);
  const auto m = model(joint(a, hypergeometric(5.0, a, 10.0).observe(data(y))));
  return static_cast<int>(m.dim());
}
