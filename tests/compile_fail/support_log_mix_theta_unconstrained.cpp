// expect: log_mix\(theta, lp1, lp2\): theta must be in \[0, 1\], but its support .*is not inside \[0, 1\]; if it is inside by construction
#include <tyche/tyche.hpp>
#include <vector>
// A mixing weight declared as a variable without constraint (a new user's normal<"theta">(0.5,
// 1)): it compiled, sampled, and gave NaN wherever theta left [0, 1]. Now an error, as a
// distribution's argument outside its domain is; beta<"theta">(...) or inv_logit(u) is inside.
int main() {
  using namespace tyche;
  static const std::vector<double> y{-1.2, 0.3, 2.1};
  auto theta = normal<"theta">(0.5, 1.0);
  auto m = model(joint(theta, log_mix(theta, normal(-1.0, 1.0), normal(2.0, 1.0)).observe(data(y))));
  return static_cast<int>(m.dim());
}
