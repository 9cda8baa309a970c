// expect: random_variable_named<'t', 'a', 'u'>
#include <tyche/tyche.hpp>
#include <vector>
// The diagnostic of a random variable left out of joint(...) spells its name ("tau") as
// characters, which both compilers print as such (a name's fixed_string prints as numbers).
int main() {
  using namespace tyche;
  static const std::vector<double> y{1.0, 2.0}, sigma{1.0, 2.0};
  auto mu = normal<"mu">(0.0, 5.0);
  auto tau = half_cauchy<"tau">(5.0);
  auto theta = std_normal<"theta">(shape<2>);
  auto m = model(joint(mu, theta, normal(mu + tau * theta, data(sigma)).observe(data(y))));
  return m.dim() > 0 ? 0 : 1;
}
