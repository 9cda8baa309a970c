// expect: tyche::car\(alpha, tau, graph\): tau \(the precision\) must be > 0, but its support
// car(alpha, tau, graph) with tau a parameter on the whole real line.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<int> n1{0, 1, 2}, n2{1, 2, 0};
  const areal_graph g(3, n1, n2);
  const auto tau = normal<"tau">(1.0, 1.0);
  const auto m = model(joint(tau, car<"phi">(0.5, tau, g)));
  return static_cast<int>(m.dim());
}
