// expect: append_col\(A, B\): tyche's matrix expressions are vectors of their entries
// append_col of two vector expressions without R: their sizes do not tell their rows, so the
// call says to give R instead of failing with "no matching function".
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  auto a = std_normal<"a">(shape<6>);
  auto b = std_normal<"b">(shape<3>);
  const auto m = model(joint(a, b, target(sum(append_col(a, b)))));
  return static_cast<int>(m.dim());
}
