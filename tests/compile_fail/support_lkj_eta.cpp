// expect: lkj_corr_cholesky\(eta, K\): eta must be > 0, but its support
// The shape eta of an LKJ prior given by a parameter on the whole real line: the types prove
// that it can be <= 0, and the diagnostic names the distribution and the argument.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  const auto eta = normal<"eta">(0.0, 1.0);
  const auto m = model(joint(eta, lkj_corr_cholesky<"L">(eta, 3)));
  return static_cast<int>(m.dim());
}
