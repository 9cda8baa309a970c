// expect: multi_gp_cholesky\(L, w\): w must be > 0, but its support
// multi_gp_cholesky(L, w) with one w on the whole line (and L a parameter): the message names
// the family, the argument and the domain.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  const auto w = normal<"w">(0.0, 1.0);
  const auto l = lkj_corr_cholesky<"L">(2.0, 3);
  const auto m = model(joint(w, l, multi_gp_cholesky<"y">(l, w)));
  return static_cast<int>(m.dim());
}
