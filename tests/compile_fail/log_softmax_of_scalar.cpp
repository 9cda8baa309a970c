// expect: tyche::log_softmax\(v\) requires 'v' to be a vector expression
// log_softmax is a function of a whole vector; of one scalar it is always 0.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  param<"x"> x;
  auto f = log_softmax(x);
  (void)f;
}
