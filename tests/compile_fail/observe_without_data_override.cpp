// expect: observe\(y\) takes data wrapped in tyche::data
// The same for a family with an observe() of its own (multinomial checks counts and sizes
// first): the one message, not the raw failure of its own checks.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  static const std::vector<double> theta{0.2, 0.3, 0.5};
  static const std::vector<double> counts{1.0, 0.0, 2.0};
  auto t = multinomial(data(theta)).observe(counts);
  (void)t;
  return 0;
}
