// expect: neg_binomial_2_log_glm\(X, alpha, beta, phi\): phi must be > 0, but its support
// neg_binomial_2_log_glm(X, alpha, beta, phi) with a precision on the whole line: the types prove phi is not > 0; the message names the
// family, the argument and the domain (one compile-fail test per support message).
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> k{1.0, 2.0};
  const std::vector<double> x{0.5, -1.0};
  const auto b = normal<"b">(0.0, 1.0, shape<1>);
  const auto a = normal<"a">(0.0, 1.0);
  const auto m = model(joint(a, b, neg_binomial_2_log_glm(matrix(x, 2, 1), a, b, a).observe(data(k))));
  return static_cast<int>(m.dim() + k.size());
}
