// expect: f takes its data by value, so the model would keep views of a copy
// model(f, data) with f taking its data by value: data(d.y) would view a copy that dies when f returns.
#include <tyche/tyche.hpp>

#include <vector>

struct obs {
  std::vector<double> y;
};

int main() {
  using namespace tyche;
  const obs d{{1.0, 2.0}};
  const auto m = model(
      [](obs copy) {
        auto mu = normal<"mu">(0.0, 1.0);
        return joint(mu, normal(mu, 1.0).observe(data(copy.y)));
      },
      d);
  return static_cast<int>(m.dim());
}
