// examples/posteriordb/diamonds.hpp — posteriordb's diamonds-diamonds (../shared/posteriors) written with
// tyche's model API (see examples/posteriordb/common.hpp for posterior<Storage, Model>).
#pragma once
#include "common.hpp"

namespace tyche_examples {

// ---- diamonds-diamonds -------------------------------------------------------------------------

struct diamonds_data {
  tyche::matrix_data xc;  // N × 24: columns 2..25 of X, each centred by its mean
  std::vector<double> means;  // m[j], to recover the uncentred intercept
  std::vector<double> y;
};

/// θ = (b[1..24], Intercept, log sigma).
inline auto diamonds(const tyche::data_file& d) {
  using namespace tyche;
  constexpr std::size_t K = 25;
  const auto n = static_cast<std::size_t>(d.integer("N"));
  detail::require(d.integer("K") == int(K), "diamonds: K must be 25 (a compile-time shape)");
  detail::require(d.integer("prior_only") == 0, "diamonds: prior_only = 1 is not supported");
  const auto& x = d.matrix("X");
  detail::require(x.rows == n && x.cols == K, "diamonds: X must be N × K");
  auto s = std::make_unique<diamonds_data>();
  s->means.assign(K - 1, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j + 1 < K; ++j) s->means[j] += x.values[i * K + j + 1];
  for (auto& m : s->means) m /= double(n);
  s->xc = detail::build_matrix(n, K - 1, [&](std::size_t i, std::size_t j) {
    return x.values[i * K + j + 1] - s->means[j];
  });
  s->y = d.vector("Y", n);
  return detail::make_posterior(std::unique_ptr<const diamonds_data>(std::move(s)),
                                [](const diamonds_data& s) {
    auto b = normal<"b">(0.0, 1.0, shape<K - 1>);
    auto intercept = student_t<"Intercept">(3.0, 8.0, 10.0);
    auto sigma = half_student_t<"sigma">(3.0, 10.0);
    return model(joint(b, intercept, sigma,
                       normal(intercept + matvec(detail::view(s.xc), b), sigma)
                           .observe(data(s.y))));
  });
}

}  // namespace tyche_examples
