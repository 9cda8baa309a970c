// expect: tyche::do_<name>\(model, value\) requires 'name' to be a random variable of the model
#include <tyche/tyche.hpp>
int main() {
  using namespace tyche;
  auto mu = normal<"mu">(0.0, 1.0);
  auto m = model(joint(mu));
  auto fixed = do_<"sigma">(m, 1.0);
  return static_cast<int>(fixed.dim());
}
