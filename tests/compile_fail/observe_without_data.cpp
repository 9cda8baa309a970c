// expect: observe\(y\) takes data wrapped in tyche::data
// A std::vector observed without data(...): one line that says to wrap it, not a page about
// std::vector having no member `kind`.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  static const std::vector<double> y{1.0, 2.0, 3.0};
  auto mu = normal<"mu">(0.0, 1.0);
  auto m = model(joint(mu, normal(mu, 1.0).observe(y)));
  return static_cast<int>(m.dim());
}
