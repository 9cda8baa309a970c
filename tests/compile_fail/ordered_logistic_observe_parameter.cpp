// expect: tyche::ordered_logistic / ordered_probit: only data can be observed \(y must be data\)
// ordered_probit(eta, c).observe(x) with x a parameter: the categories are data.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  const auto eta = normal<"eta">(0.0, 1.0);
  const auto c = ordered<"c">(normal(0.0, 5.0), shape<2>);
  const auto x = normal<"x">(2.0, 1.0);
  const auto m = model(joint(eta, c, x, ordered_probit(eta, c).observe(x)));
  return static_cast<int>(m.dim());
}
