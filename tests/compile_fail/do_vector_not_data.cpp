// expect: tyche::do_<name>\(model, value\): the value is a number, or data\(v\) for a vector or matrix variable's values
#include <tyche/tyche.hpp>

#include <vector>
int main() {
  using namespace tyche;
  auto tau = half_normal<"tau">(1.0, shape<3>);
  auto m = model(joint(tau));
  const std::vector<double> fixed_values{0.5, 0.5, 0.5};
  auto fixed = do_<"tau">(m, fixed_values);  // data(fixed_values) is what is meant
  return static_cast<int>(fixed.dim());
}
