// expect: tyche::advi\(model, config\) requires a model built with tyche::model
#include <tyche/tyche.hpp>
int main() {
  using namespace tyche;
  static const std::vector<double> y{1.0, 2.0};
  auto mu = normal<"mu">(0.0, 1.0);
  auto j = joint(mu, normal(mu, 1.0).observe(data(y)));
  return static_cast<int>(tyche::advi(j).names.size());  // a joint, not tyche::model(joint(...))
}
