// examples/posteriordb/ark.hpp — posteriordb's arK-arK (../shared/posteriors) written with
// tyche's model API (see examples/posteriordb/common.hpp for posterior<Storage, Model>).
#pragma once
#include "common.hpp"

namespace tyche_examples {

// ---- arK-arK -----------------------------------------------------------------------------------

struct ark_data {
  tyche::matrix_data lags;    // (T − K) × K: row for t = K+1..T, column k−1 holds y[t − k]
  std::vector<double> y_next;  // y[K+1..T]
};

/// θ = (alpha, beta[1..5], log sigma).
inline auto ark(const tyche::data_file& d) {
  using namespace tyche;
  constexpr std::size_t K = 5;
  detail::require(d.integer("K") == int(K), "arK: K must be 5 (a compile-time shape)");
  const auto t_len = static_cast<std::size_t>(d.integer("T"));
  detail::require(t_len > K, "arK: T must exceed K");
  const auto& y = d.vector("y", t_len);
  auto s = std::make_unique<ark_data>();
  // 0-based: row r is time t = r + K; column k (0-based) is lag k + 1, y[t − k − 1].
  s->lags = detail::build_matrix(t_len - K, K,
                                 [&](std::size_t r, std::size_t k) { return y[r + K - k - 1]; });
  s->y_next.assign(y.begin() + K, y.end());
  return detail::make_posterior(std::unique_ptr<const ark_data>(std::move(s)),
                                [](const ark_data& s) {
    auto alpha = normal<"alpha">(0.0, 10.0);
    auto beta = normal<"beta">(0.0, 10.0, shape<K>);
    auto sigma = half_cauchy<"sigma">(2.5);
    return model(joint(alpha, beta, sigma,
                       normal(alpha + matvec(detail::view(s.lags), beta), sigma)
                           .observe(data(s.y_next))));
  });
}

}  // namespace tyche_examples
