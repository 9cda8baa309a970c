// examples/posteriordb_sblrc.cpp — posteriordb's sblrc-blr (../shared/posteriors) written with
// tyche's model API (examples/posteriordb/sblrc.hpp): its dimension, parameter names, and log density at
// the reference posterior means.
#include "posteriordb/sblrc.hpp"

#include <cstdio>
#include <exception>

int main() {
  namespace te = tyche_examples;
  try {
    const auto dir = te::posteriors_dir(__FILE__) / "sblrc-blr";
    const tyche::data_file d = tyche::read_json_data((dir / "data.json").string());
    const auto p = te::sblrc_blr(d);
    const auto means = te::reference_means(dir / "reference_summary.csv");
    te::print_summary("sblrc-blr", p.model, te::means_by_name(means, p.model.parameter_names()));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "posteriordb_sblrc: %s\n", e.what());
    return 1;
  }
}
