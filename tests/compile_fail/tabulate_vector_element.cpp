// expect: f must return a scalar expression .one element.; reduce a vector with sum
#include <tyche/tyche.hpp>
#include <vector>
int main() {
  using namespace tyche;
  static const std::vector<double> y{1.0, 2.0, 3.0};
  auto mu = normal<"mu">(0.0, 1.0);
  // The element is a vector (mu - y for every y), not one value.
  auto v = tabulate(3, [&](const auto& i) { return mu * i - data(y); });
  return sizeof(v) > 0 ? 0 : 1;
}
