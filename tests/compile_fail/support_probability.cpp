// expect: (bernoulli\(p\): p must be in \[0, 1\], but its support.*support_is<'\(', '0', ',', ' ', 'i', 'n', 'f', '\)'>|support_is<'\(', '0', ',', ' ', 'i', 'n', 'f', '\)'>.*bernoulli\(p\): p must be in \[0, 1\], but its support)
// A probability given by exp(a), which has support (0, inf): logistic(a) was meant.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> y{0.0, 1.0};
  const auto a = normal<"a">(0.0, 1.0);
  const auto m = model(joint(a, bernoulli(exp(a)).observe(data(y))));
  return static_cast<int>(m.dim());
}
