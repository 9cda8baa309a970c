// examples/posteriordb_low_dim_gauss_mix.cpp — posteriordb's low_dim_gauss_mix-low_dim_gauss_mix (../shared/posteriors) written with
// tyche's model API (examples/posteriordb/low_dim_gauss_mix.hpp): its dimension, parameter names, and log density at
// the reference posterior means.
#include "posteriordb/low_dim_gauss_mix.hpp"

#include <cstdio>
#include <exception>

int main() {
  namespace te = tyche_examples;
  try {
    const auto dir = te::posteriors_dir(__FILE__) / "low_dim_gauss_mix-low_dim_gauss_mix";
    const tyche::data_file d = tyche::read_json_data((dir / "data.json").string());
    const auto p = te::low_dim_gauss_mix(d);
    const auto means = te::reference_means(dir / "reference_summary.csv");
    te::print_summary("low_dim_gauss_mix-low_dim_gauss_mix", p.model, te::means_by_name(means, p.model.parameter_names()));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "posteriordb_low_dim_gauss_mix: %s\n", e.what());
    return 1;
  }
}
