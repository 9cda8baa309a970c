// expect: has the name of a random variable or of another quantity.*random_variable_named<'t', 'a', 'u'>|random_variable_named<'t', 'a', 'u'>.*has the name of a random variable or of another quantity
// A quantity named like one of the model's random variables would be two columns of one name in
// the fit: refused, with the name spelled out (random_variable_named<'t', 'a', 'u'>).
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  auto tau = half_normal<"tau">(1.0);
  const auto m = model(joint(tau, quantity<"tau">(square(tau))));
  return static_cast<int>(m.dim());
}
