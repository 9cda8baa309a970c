// expect: observe\(x\) needs a distribution family
#include <tyche/tyche.hpp>
// A family of one's own that forgot its name and arguments.
struct my_family : tyche::distribution<my_family> {
  template <class X>
  auto log_prob(const X& x) const { return -x; }
};
int main() {
  static const double y = 1.0;
  auto term = my_family{}.observe(tyche::data(y));
  return sizeof(term) > 0 ? 0 : 1;
}
