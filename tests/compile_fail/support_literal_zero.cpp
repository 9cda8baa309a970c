// expect: (poisson\(lambda\): lambda must be > 0, but its support.*support_is<'\[', '0', ',', ' ', '0', '\]'>|support_is<'\[', '0', ',', ' ', '0', '\]'>.*poisson\(lambda\): lambda must be > 0, but its support)
// A literal argument is known exactly: poisson(lit<0>) is outside (0, inf).
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> y{0.0, 1.0};
  const auto a = normal<"a">(0.0, 1.0);
  const auto m = model(joint(a, poisson(lit<0> * a).observe(data(y))));
  return static_cast<int>(m.dim());
}
