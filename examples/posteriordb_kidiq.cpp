// examples/posteriordb_kidiq.cpp — posteriordb's kidiq-kidscore_interaction (../shared/posteriors) written with
// tyche's model API (examples/posteriordb/kidiq.hpp): its dimension, parameter names, and log density at
// the reference posterior means.
#include "posteriordb/kidiq.hpp"

#include <cstdio>
#include <exception>

int main() {
  namespace te = tyche_examples;
  try {
    const auto dir = te::posteriors_dir(__FILE__) / "kidiq-kidscore_interaction";
    const tyche::data_file d = tyche::read_json_data((dir / "data.json").string());
    const auto p = te::kidiq_kidscore_interaction(d);
    const auto means = te::reference_means(dir / "reference_summary.csv");
    te::print_summary("kidiq-kidscore_interaction", p.model, te::means_by_name(means, p.model.parameter_names()));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "posteriordb_kidiq: %s\n", e.what());
    return 1;
  }
}
