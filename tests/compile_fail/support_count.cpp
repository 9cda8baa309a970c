// expect: (binomial\(n, p\): n must be >= 0, but its support.*support_is<'\(', '-', 'i', 'n', 'f', ',', ' ', '1', '0', '\)'>|support_is<'\(', '-', 'i', 'n', 'f', ',', ' ', '1', '0', '\)'>.*binomial\(n, p\): n must be >= 0, but its support)
// A number of trials that can be negative: 10 - exp(a) has support (-inf, 10).
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> y{0.0, 1.0};
  const auto a = normal<"a">(0.0, 1.0);
  const auto m = model(joint(a, binomial(lit<10> - exp(a), logistic(a)).observe(data(y))));
  return static_cast<int>(m.dim());
}
