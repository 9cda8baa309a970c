// expect: model\(f, data\) keeps views of 'data', not a copy: pass a named object
// model(f, data) with a temporary: the model would view storage destroyed at the end of the line.
#include <tyche/tyche.hpp>

#include <vector>

struct obs {
  std::vector<double> y;
};

int main() {
  using namespace tyche;
  const auto m = model(
      [](const obs& d) {
        auto mu = normal<"mu">(0.0, 1.0);
        return joint(mu, normal(mu, 1.0).observe(data(d.y)));
      },
      obs{{1.0, 2.0}});
  return static_cast<int>(m.dim());
}
