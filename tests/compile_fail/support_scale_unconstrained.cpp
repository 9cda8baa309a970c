// expect: (normal\(mu, sigma\): sigma must be > 0, but its support.*support_is<'\(', '-', 'i', 'n', 'f', ',', ' ', 'i', 'n', 'f', '\)'>|support_is<'\(', '-', 'i', 'n', 'f', ',', ' ', 'i', 'n', 'f', '\)'>.*normal\(mu, sigma\): sigma must be > 0, but its support)
// A scale given by a parameter on the whole real line: normal<"sigma">(0, 1) is a bug (use
// half_normal), and the types prove it. The diagnostic names the distribution, the argument, the
// domain, and spells the support out as support_is<'(', '-', 'i', 'n', 'f', ...>.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> y{1.0, 2.0};
  const auto mu = normal<"mu">(0.0, 1.0);
  const auto sigma = normal<"sigma">(0.0, 1.0);
  const auto m = model(joint(mu, sigma, normal(mu, sigma).observe(data(y))));
  return static_cast<int>(m.dim());
}
