// expect: tyche::multi_student_t\(nu, mu, Sigma\) / multi_student_t_cholesky\(nu, mu, L\): x must be a vector
// multi_student_t(nu, mu, Sigma).observe(x) with x one number: the variable is a vector of K.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const std::vector<double> sigma{1.0, 0.0, 0.0, 1.0};
  const auto mu = normal<"mu">(0.0, 1.0);
  const auto m = model(joint(mu, multi_student_t(4.0, mu, matrix(sigma.data(), 2, 2)).observe(1.5)));
  return static_cast<int>(m.dim());
}
