// expect: ordered_logistic\(eta, c\) / ordered_probit\(eta, c\): c must be a vector of the K - 1 cutpoints
// ordered_logistic(eta, c) with a scalar c: the cutpoints are a vector (of K − 1 values).
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> y{1.0, 2.0};
  const auto eta = normal<"eta">(0.0, 1.0);
  const auto c = normal<"c">(0.0, 1.0);
  const auto m = model(joint(eta, c, ordered_logistic(eta, c).observe(data(y))));
  return static_cast<int>(m.dim());
}
