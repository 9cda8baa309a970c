// expect: requires the state's size to be known at compile time
#include <tyche/tyche.hpp>
#include <vector>
int main() {
  using namespace tyche;
  static const std::vector<double> y{1.0, 2.0}, start{0.0, 1.0};
  auto mu = normal<"mu">(0.0, 1.0);
  auto s = scan([&](const auto& a, const auto& x) { return a * mu + x; }, data(start), data(y));
  return sizeof(s) > 0 ? 0 : 1;
}
