// examples/posteriordb_gp_pois_regr.cpp — posteriordb's gp_pois_regr-gp_pois_regr (../shared/posteriors)
// written with tyche's model API (examples/posteriordb/gp_pois_regr.hpp): its dimension, parameter names, and
// log density at the reference posterior means. The reference reports the derived f, not the
// sampled f_tilde: f_tilde is recovered by solving L f_tilde = f at the mean rho and alpha.
#include "posteriordb/gp_pois_regr.hpp"

#include <cmath>
#include <cstdio>
#include <exception>

int main() {
  namespace te = tyche_examples;
  try {
    const auto dir = te::posteriors_dir(__FILE__) / "gp_pois_regr-gp_pois_regr";
    const tyche::data_file d = tyche::read_json_data((dir / "data.json").string());
    const auto p = te::gp_pois_regr(d);
    const auto means = te::reference_means(dir / "reference_summary.csv");
    const auto n = static_cast<std::size_t>(d.integer("N"));
    std::vector<std::string> wanted{"rho", "alpha"};
    for (std::size_t i = 1; i <= n; ++i) wanted.push_back("f[" + std::to_string(i) + "]");
    const auto ref = te::means_by_name(means, wanted);
    // f_tilde = L⁻¹ f: forward substitution with the factor at the mean (rho, alpha).
    const auto& x = d.vector("x", n);
    std::vector<double> c(n * n);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        c[i * n + j] = ref[1] * ref[1] * std::exp(-(x[i] - x[j]) * (x[i] - x[j]) / (2 * ref[0] * ref[0])) +
                       (i == j ? 1e-10 : 0.0);
    const auto l = tyche::detail::cholesky_lower(c.data(), n, "gp_pois_regr");
    std::vector<double> values{ref[0], ref[1]};
    for (std::size_t i = 0; i < n; ++i) {
      double acc = ref[2 + i];
      for (std::size_t j = 0; j < i; ++j) acc -= l[i * n + j] * values[2 + j];
      values.push_back(acc / l[i * n + i]);
    }
    te::print_summary("gp_pois_regr-gp_pois_regr", p.model, values);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "posteriordb_gp_pois_regr: %s\n", e.what());
    return 1;
  }
}
