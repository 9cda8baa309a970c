// expect: tyche::car\(alpha, tau, graph\): alpha must be < 1 .*but its support
// car(alpha, tau, graph) with alpha = exp(u): tau (D - alpha W) is not positive definite at alpha >= 1.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<int> n1{0, 1, 2}, n2{1, 2, 0};
  const areal_graph g(3, n1, n2);
  const auto u = normal<"u">(0.0, 1.0);
  const auto m = model(joint(u, car<"phi">(exp(u), 1.0, g)));
  return static_cast<int>(m.dim());
}
