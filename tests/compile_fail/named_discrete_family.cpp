// expect: tyche::named<.*name.*>\(d\) requires d to be a distribution of a continuous family
#include <tyche/tyche.hpp>
int main() {
  using namespace tyche;
  auto k = named<"k">(poisson(3.0));  // a count cannot be a parameter of NUTS
  return sizeof(k) > 0 ? 0 : 1;
}
