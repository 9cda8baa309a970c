// expect: tyche::multinomial / multinomial_logit: y must be data, a vector of K counts
// multinomial(theta).observe(x) with x a parameter: the counts are data.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> alpha{1.0, 1.0, 1.0};
  const auto theta = dirichlet<"theta">(data(alpha));
  const auto x = normal<"x">(0.0, 1.0, shape<3>);
  const auto m = model(joint(theta, x, multinomial(theta).observe(x)));
  return static_cast<int>(m.dim());
}
