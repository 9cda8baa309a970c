// expect: tyche::right_censored\(d\) / left_censored\(d\): d's family has no log CDF
// A skew normal has no log CDF in tyche yet (it needs Owen's T function).
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  auto d = right_censored(skew_normal(0.0, 1.0, 2.0));
  (void)d;
}
