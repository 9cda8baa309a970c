// expect: tyche::normal\(mu, sigma\): sigma must be > 0
#include <tyche/tyche.hpp>
int main() {
  using namespace tyche;
  auto mu = normal<"mu">(0.0, 1.0);
  auto t = target(normal_lpdf(mu, 0.0, mu));  // a real-valued scale: its support is not > 0
  return sizeof(t) > 0 ? 0 : 1;
}
