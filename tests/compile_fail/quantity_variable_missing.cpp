// expect: random_variable_named<'b', 'e', 'e'>.*a random variable is used in the model but not listed in joint|a random variable is used in the model but not listed in joint.*random_variable_named<'b', 'e', 'e'>
// A quantity that reads a random variable the joint does not list is refused at joint(...), as a
// density term that reads one is, with the variable's name spelled out.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  auto a = normal<"a">(0.0, 1.0);
  auto bee = normal<"bee">(0.0, 1.0);
  const auto m = model(joint(a, quantity<"q">(a + bee)));
  return static_cast<int>(m.dim());
}
