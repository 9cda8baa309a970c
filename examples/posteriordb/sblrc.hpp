// examples/posteriordb/sblrc.hpp — posteriordb's sblrc-blr (../shared/posteriors) written with
// tyche's model API (see examples/posteriordb/common.hpp for posterior<Storage, Model>).
#pragma once
#include "common.hpp"

namespace tyche_examples {

// ---- sblrc-blr ---------------------------------------------------------------------------------

struct sblrc_data {
  tyche::matrix_data x;  // N × 5
  std::vector<double> y;
};

/// θ = (beta[1..5], log sigma).
inline auto sblrc_blr(const tyche::data_file& d) {
  using namespace tyche;
  constexpr std::size_t D = 5;
  const auto n = static_cast<std::size_t>(d.integer("N"));
  detail::require(d.integer("D") == int(D), "sblrc: D must be 5 (a compile-time shape)");
  auto s = std::make_unique<sblrc_data>();
  s->x = d.matrix("X");
  detail::require(s->x.rows == n && s->x.cols == D, "sblrc: X must be N × D");
  s->y = d.vector("y", n);
  return detail::make_posterior(std::unique_ptr<const sblrc_data>(std::move(s)),
                                [](const sblrc_data& s) {
    auto beta = normal<"beta">(0.0, 10.0, shape<D>);
    auto sigma = half_normal<"sigma">(10.0);
    return model(joint(beta, sigma,
                       normal(matvec(detail::view(s.x), beta), sigma).observe(data(s.y))));
  });
}

}  // namespace tyche_examples
