// examples/posteriordb_garch.cpp — posteriordb's garch-garch11 (../shared/posteriors) written with
// tyche's model API (examples/posteriordb/garch.hpp): its dimension, parameter names, and log density at
// the reference posterior means.
#include "posteriordb/garch.hpp"

#include <cstdio>
#include <exception>

int main() {
  namespace te = tyche_examples;
  try {
    const auto dir = te::posteriors_dir(__FILE__) / "garch-garch11";
    const tyche::data_file d = tyche::read_json_data((dir / "data.json").string());
    const auto p = te::garch11(d);
    const auto means = te::reference_means(dir / "reference_summary.csv");
    te::print_summary("garch-garch11", p.model, te::means_by_name(means, p.model.parameter_names()));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "posteriordb_garch: %s\n", e.what());
    return 1;
  }
}
