// expect: tyche::wiener\(alpha, tau, beta, delta\): alpha \(the boundary separation\) must be > 0, but its support
// wiener(alpha, ...) with alpha a parameter on the whole real line.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> rt{0.6, 0.9};
  const auto a = normal<"a">(1.0, 1.0);
  const auto m = model(joint(a, wiener(a, 0.2, 0.5, 1.0).observe(data(rt))));
  return static_cast<int>(m.dim());
}
