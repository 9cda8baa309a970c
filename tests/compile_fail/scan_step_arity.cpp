// expect: Sequences = 2\].*to take the state and one scalar per sequence|to take the state and one scalar per sequence.*scan_step_arity_mismatch<2UL>
#include <tyche/tyche.hpp>
#include <vector>
// A step that takes one sequence value where scan is given two: one error (it was followed by
// some 60 lines of failed calls).
int main() {
  using namespace tyche;
  static const std::vector<double> y{0.3, 1.2, 0.8}, w{1.0, 1.0, 0.0};
  auto phi = normal<"phi">(0.0, 1.0);
  auto s = scan([&](const auto& st, const auto& yt) { return phi * st + yt; }, 0.0, data(y), data(w));
  auto m = model(joint(phi, target(-square(at(s, 0)))));
  return static_cast<int>(m.dim());
}
