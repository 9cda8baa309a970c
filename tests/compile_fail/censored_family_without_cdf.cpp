// expect: tyche::right_censored\(d\) / left_censored\(d\): d's family has no log CDF
// A beta's CDF needs the incomplete beta function, which tyche does not have yet.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  auto d = right_censored(beta(2.0, 3.0));
  (void)d;
}
