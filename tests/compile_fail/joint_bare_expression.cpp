// expect: a free log-density term \(target\(e\)\)
#include <tyche/tyche.hpp>
int main() {
  using namespace tyche;
  auto mu = normal<"mu">(0.0, 1.0);
  auto j = joint(mu, -0.5 * square(mu));  // an expression, not a term: forgot target(...)
  return sizeof(j) > 0 ? 0 : 1;
}
