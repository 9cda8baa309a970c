// expect: tyche::right_censored\(d\) / left_censored\(d\): d's family has no log CDF
// A von Mises distribution has no log CDF in tyche yet.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  auto d = right_censored(von_mises(0.0, 2.0));
  (void)d;
}
