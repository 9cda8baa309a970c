// expect: tyche::gather\(v, idx, name\): idx must hold int indices \(0-based\)
#include <tyche/tyche.hpp>
#include <cstddef>
#include <vector>
// A new user's group indices as std::size_t (2026-12-04): "no matching function for call to
// gather" with three candidates before; now one line that says what to pass.
int main() {
  using namespace tyche;
  static const std::vector<double> y(40, 1.0);
  static const std::vector<std::size_t> group(40, 0);
  auto mu = normal<"mu">(0.0, 5.0);
  auto z = std_normal<"z">(shape_of(8));
  auto m = model(joint(mu, z, normal(mu + gather(z, group, "group"), 1.0).observe(data(y))));
  return static_cast<int>(m.dim());
}
