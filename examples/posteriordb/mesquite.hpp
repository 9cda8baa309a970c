// examples/posteriordb/mesquite.hpp — posteriordb's mesquite-logmesquite (../shared/posteriors) written with
// tyche's model API (see examples/posteriordb/common.hpp for posterior<Storage, Model>).
#pragma once
#include "common.hpp"

namespace tyche_examples {

// ---- mesquite-logmesquite ----------------------------------------------------------------------

struct mesquite_data {
  tyche::matrix_data x;  // N × 7: [1, log diam1, log diam2, log canopy_height, log total_height,
                         //         log density, group]
  std::vector<double> log_weight;
};

/// θ = (beta[1..7], log sigma).
inline auto mesquite_logmesquite(const tyche::data_file& d) {
  using namespace tyche;
  const auto n = static_cast<std::size_t>(d.integer("N"));
  const std::vector<const std::vector<double>*> cols{
      &d.vector("diam1", n), &d.vector("diam2", n), &d.vector("canopy_height", n),
      &d.vector("total_height", n), &d.vector("density", n)};
  const auto& group = d.vector("group", n);
  const auto& weight = d.vector("weight", n);
  auto s = std::make_unique<mesquite_data>();
  s->x = detail::build_matrix(n, 7, [&](std::size_t i, std::size_t j) {
    if (j == 0) return 1.0;
    if (j == 6) return group[i];
    return std::log((*cols[j - 1])[i]);
  });
  for (double w : weight) s->log_weight.push_back(std::log(w));
  return detail::make_posterior(std::unique_ptr<const mesquite_data>(std::move(s)),
                                [](const mesquite_data& s) {
    auto beta = flat<"beta">(shape<7>);
    auto sigma = flat<"sigma">(positive());
    return model(joint(beta, sigma,
                       normal(matvec(detail::view(s.x), beta), sigma).observe(data(s.log_weight))));
  });
}

}  // namespace tyche_examples
