// expect: skew_double_exponential\(mu, sigma, tau\): sigma must be > 0, but its support
// skew_double_exponential(mu, sigma, tau) with a scale on the whole line: the types prove sigma is not > 0; the message names the
// family, the argument and the domain (one compile-fail test per support message).
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> k{1.0, 2.0};
  const auto a = normal<"a">(0.0, 1.0);
  const auto m = model(joint(a, skew_double_exponential(lit<0>, a, lit<1, 2>).observe(data(k))));
  return static_cast<int>(m.dim() + k.size());
}
