// expect: random_variable_named<'s', 'i', 'g', 'm', 'a', '_', 'G'>.*model_variables<[a-z:]*random_variable_named<'m', 'u'>, [a-z:]*random_variable_named<'s', 'i', 'g', 'm', 'a', '_', 'g'>
#include <tyche/tyche.hpp>
#include <vector>
// do_<name> with a misspelt name: the diagnostic spells the name given and the model's random
// variables as characters (a fixed_string prints as packed numbers).
int main() {
  using namespace tyche;
  static const std::vector<double> y{1.0, 2.0};
  auto mu = normal<"mu">(0.0, 1.0);
  auto sigma_g = half_normal<"sigma_g">(1.0);
  auto m = model(joint(mu, sigma_g, normal(mu, sigma_g).observe(data(y))));
  auto fixed = do_<"sigma_G">(m, 0.5);
  return static_cast<int>(fixed.dim());
}
