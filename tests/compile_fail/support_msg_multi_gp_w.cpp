// expect: multi_gp\(Sigma, w\): w must be > 0, but its support
// multi_gp(Sigma, w) with w parameters on the whole line: the message names the family, the
// argument and the domain.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> sigma{1.0, 0.5, 0.5, 2.0};
  const auto w = normal<"w">(0.0, 1.0, shape<3>);
  const auto m = model(joint(w, multi_gp<"y">(matrix(sigma.data(), 2, 2), w)));
  return static_cast<int>(m.dim());
}
