// expect: tyche::data\(y\) views doubles in place, and y holds integers or floats
// Counts kept in a std::vector<int>: data() views doubles in place, so it says to keep a copy
// as doubles.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  static const std::vector<int> k{1, 0, 3};
  auto log_rate = normal<"log_rate">(0.0, 1.0);
  auto m = model(joint(log_rate, poisson_log(log_rate).observe(data(k))));
  return static_cast<int>(m.dim());
}
