// expect: tyche::laplace\(model, mode, config\) requires a model built with tyche::model
// laplace() at a mode given as values, on a joint(...) that was not made a model.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  auto mu = normal<"mu">(0.0, 1.0);
  const auto fit = laplace(joint(mu), std::vector<double>{0.0});
  return fit.draws;
}
