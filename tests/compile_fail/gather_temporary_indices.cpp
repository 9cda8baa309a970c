// expect: tyche::gather\(v, idx, name\): idx is a temporary std::vector<int>
#include <tyche/tyche.hpp>
#include <vector>
// A new user's gather(z, f.integers("g"), "g") (2026-12-05): the indices a function returned,
// which the model would keep a view of after they are gone. Was "use of deleted function";
// now one message that says to keep them in a variable.
std::vector<int> groups() { return std::vector<int>(40, 0); }
int main() {
  using namespace tyche;
  static const std::vector<double> y(40, 1.0);
  auto mu = normal<"mu">(0.0, 5.0);
  auto z = std_normal<"z">(shape_of(8));
  auto m = model(joint(mu, z, normal(mu + gather(z, groups(), "g"), 1.0).observe(data(y))));
  return static_cast<int>(m.dim());
}
