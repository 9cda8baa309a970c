// examples/posteriordb_eight_schools.cpp — posteriordb's eight_schools-eight_schools_noncentered
// (../shared/posteriors) written with tyche's model API (examples/posteriordb/eight_schools.hpp): its dimension,
// parameter names, and log density at the reference posterior means. The reference draws report
// the derived theta[j] = mu + tau * theta_trans[j]; the sampled theta_trans is recovered as
// (theta[j] - mu) / tau from the means.
#include "posteriordb/eight_schools.hpp"

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

int main() {
  namespace te = tyche_examples;
  try {
    const auto dir = te::posteriors_dir(__FILE__) / "eight_schools-eight_schools_noncentered";
    const tyche::data_file d = tyche::read_json_data((dir / "data.json").string());
    const auto p = te::eight_schools_noncentered(d);
    const auto means = te::reference_means(dir / "reference_summary.csv");
    std::vector<std::string> reported{"mu", "tau"};
    for (int j = 1; j <= 8; ++j) reported.push_back("theta[" + std::to_string(j) + "]");
    const auto m = te::means_by_name(means, reported);
    const double mu = m[0], tau = m[1];
    std::vector<double> values;  // θ order: theta_trans[1..8], mu, tau
    for (int j = 0; j < 8; ++j) values.push_back((m[2 + j] - mu) / tau);
    values.push_back(mu);
    values.push_back(tau);
    te::print_summary("eight_schools-eight_schools_noncentered", p.model, values);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "posteriordb_eight_schools: %s\n", e.what());
    return 1;
  }
}
