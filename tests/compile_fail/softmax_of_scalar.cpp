// expect: tyche::softmax\(v\) requires 'v' to be a vector expression
// softmax is a function of a whole vector; of one scalar it is always 1.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  param<"x"> x;
  auto f = softmax(x);
  (void)f;
}
