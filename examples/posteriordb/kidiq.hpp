// examples/posteriordb/kidiq.hpp — posteriordb's kidiq-kidscore_interaction (../shared/posteriors) written with
// tyche's model API (see examples/posteriordb/common.hpp for posterior<Storage, Model>).
#pragma once
#include "common.hpp"

namespace tyche_examples {

// ---- kidiq-kidscore_interaction ----------------------------------------------------------------

struct kidiq_data {
  tyche::matrix_data x;  // N × 4: [1, mom_hs, mom_iq, mom_hs * mom_iq]
  std::vector<double> kid_score;
};

/// θ = (beta[1..4], log sigma).
inline auto kidiq_kidscore_interaction(const tyche::data_file& d) {
  using namespace tyche;
  const auto n = static_cast<std::size_t>(d.integer("N"));
  const auto& hs = d.vector("mom_hs", n);
  const auto& iq = d.vector("mom_iq", n);
  auto s = std::make_unique<kidiq_data>();
  s->kid_score = d.vector("kid_score", n);
  s->x = detail::build_matrix(n, 4, [&](std::size_t i, std::size_t j) {
    switch (j) {
      case 0: return 1.0;
      case 1: return hs[i];
      case 2: return iq[i];
      default: return hs[i] * iq[i];
    }
  });
  return detail::make_posterior(std::unique_ptr<const kidiq_data>(std::move(s)),
                                [](const kidiq_data& s) {
    auto beta = flat<"beta">(shape<4>);
    auto sigma = half_cauchy<"sigma">(2.5);
    return model(joint(beta, sigma,
                       normal(matvec(detail::view(s.x), beta), sigma).observe(data(s.kid_score))));
  });
}

}  // namespace tyche_examples
