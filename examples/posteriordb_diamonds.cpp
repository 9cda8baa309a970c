// examples/posteriordb_diamonds.cpp — posteriordb's diamonds-diamonds (../shared/posteriors) written with
// tyche's model API (examples/posteriordb/diamonds.hpp): its dimension, parameter names, and log density at
// the reference posterior means.
#include "posteriordb/diamonds.hpp"

#include <cstdio>
#include <exception>

int main() {
  namespace te = tyche_examples;
  try {
    const auto dir = te::posteriors_dir(__FILE__) / "diamonds-diamonds";
    const tyche::data_file d = tyche::read_json_data((dir / "data.json").string());
    const auto p = te::diamonds(d);
    const auto means = te::reference_means(dir / "reference_summary.csv");
    te::print_summary("diamonds-diamonds", p.model, te::means_by_name(means, p.model.parameter_names()));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "posteriordb_diamonds: %s\n", e.what());
    return 1;
  }
}
