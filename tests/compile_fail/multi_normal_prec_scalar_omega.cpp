// expect: tyche::multi_normal_prec\(mu, Omega\): Omega must be a data matrix \(tyche::matrix\(ptr, K, K\)\) or a vector expression of the K\*K entries
// multi_normal_prec<"x">(mu, tau) with tau one number-valued parameter: Omega is a K x K matrix.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  const auto tau = gamma<"tau">(2.0, 1.0);
  const auto m = model(joint(tau, multi_normal_prec<"x">(0.0, tau)));
  return static_cast<int>(m.dim());
}
