// examples/posteriordb_mesquite.cpp — posteriordb's mesquite-logmesquite (../shared/posteriors) written with
// tyche's model API (examples/posteriordb/mesquite.hpp): its dimension, parameter names, and log density at
// the reference posterior means.
#include "posteriordb/mesquite.hpp"

#include <cstdio>
#include <exception>

int main() {
  namespace te = tyche_examples;
  try {
    const auto dir = te::posteriors_dir(__FILE__) / "mesquite-logmesquite";
    const tyche::data_file d = tyche::read_json_data((dir / "data.json").string());
    const auto p = te::mesquite_logmesquite(d);
    const auto means = te::reference_means(dir / "reference_summary.csv");
    te::print_summary("mesquite-logmesquite", p.model, te::means_by_name(means, p.model.parameter_names()));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "posteriordb_mesquite: %s\n", e.what());
    return 1;
  }
}
