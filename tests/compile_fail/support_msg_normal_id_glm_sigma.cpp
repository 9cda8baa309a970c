// expect: normal_id_glm\(X, alpha, beta, sigma\): sigma must be > 0, but its support
// normal_id_glm(X, alpha, beta, sigma) with a scale on the whole line: the types prove sigma is not > 0; the message names the
// family, the argument and the domain (one compile-fail test per support message).
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> k{1.0, 2.0};
  const std::vector<double> x{0.5, -1.0};
  const auto b = normal<"b">(0.0, 1.0, shape<1>);
  const auto a = normal<"a">(0.0, 1.0);
  const auto m = model(joint(a, b, normal_id_glm(matrix(x, 2, 1), a, b, a).observe(data(k))));
  return static_cast<int>(m.dim() + k.size());
}
