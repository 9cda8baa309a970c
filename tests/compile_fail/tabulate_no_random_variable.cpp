// expect: the element uses no random variable; compute the vector in C.. and use it as data
#include <tyche/tyche.hpp>
#include <vector>
int main() {
  using namespace tyche;
  static const std::vector<double> y{1.0, 2.0, 3.0};
  // Every element is data: there is nothing to differentiate, so the vector belongs in C++.
  auto v = tabulate(3, [&](const auto& i, const auto& x) { return i * x; }, data(y));
  return sizeof(v) > 0 ? 0 : 1;
}
