// expect: tyche::multinomial\(theta\) / multinomial_logit\(gamma\): the argument must be a vector of K values
// multinomial_logit(gamma) with a scalar gamma: the log-odds are a vector of K values.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> y{1.0, 2.0, 0.0};
  const auto g = normal<"g">(0.0, 1.0);
  const auto m = model(joint(g, multinomial_logit(g).observe(data(y))));
  return static_cast<int>(m.dim());
}
