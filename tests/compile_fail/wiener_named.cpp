// expect: tyche: wiener<.*>\(\.\.\.\): wiener is the density of observed response times
// wiener<"rt">(...) as if it made a random variable: it is for observations only.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  const auto a = gamma<"a">(4.0, 2.0);
  const auto m = model(joint(a, wiener<"rt">(a, 0.2, 0.5, 1.0)));
  return static_cast<int>(m.dim());
}
