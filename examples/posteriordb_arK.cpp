// examples/posteriordb_arK.cpp — posteriordb's arK-arK (../shared/posteriors) written with
// tyche's model API (examples/posteriordb/ark.hpp): its dimension, parameter names, and log density at
// the reference posterior means.
#include "posteriordb/ark.hpp"

#include <cstdio>
#include <exception>

int main() {
  namespace te = tyche_examples;
  try {
    const auto dir = te::posteriors_dir(__FILE__) / "arK-arK";
    const tyche::data_file d = tyche::read_json_data((dir / "data.json").string());
    const auto p = te::ark(d);
    const auto means = te::reference_means(dir / "reference_summary.csv");
    te::print_summary("arK-arK", p.model, te::means_by_name(means, p.model.parameter_names()));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "posteriordb_arK: %s\n", e.what());
    return 1;
  }
}
