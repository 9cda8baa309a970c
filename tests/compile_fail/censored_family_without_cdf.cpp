// expect: tyche::right_censored\(d\) / left_censored\(d\): d's family has no log CDF
// A Cauchy has no log CDF in tyche yet.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  auto d = right_censored(cauchy(0.0, 1.0));
  (void)d;
}
