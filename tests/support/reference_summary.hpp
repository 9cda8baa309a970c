// tests/support/reference_summary.hpp — a reference posterior's summary (shared/posteriors/<name>/
// reference_summary.csv: name,mean,sd,q05,q50,q95) as name → (mean, sd), and where shared/ is.
// Plain C++ (no Catch2): the CUDA tests use it too. And the comparison every reference test makes.
#pragma once
#include <tyche/diagnostics/convergence.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tyche_test {

struct reference_row {
  double mean, sd;
};

/// The rows of <dir>/reference_summary.csv; throws std::runtime_error naming the file when it
/// cannot be read or has no rows.
inline std::map<std::string, reference_row> read_reference_summary(const std::filesystem::path& dir) {
  const auto file = dir / "reference_summary.csv";
  std::ifstream in(file);
  if (!in.good()) throw std::runtime_error("cannot read " + file.string());
  std::map<std::string, reference_row> out;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string name, mean, sd;
    std::getline(ss, name, ',');
    std::getline(ss, mean, ',');
    std::getline(ss, sd, ',');
    out[name] = {std::stod(mean), std::stod(sd)};
  }
  if (out.empty()) throw std::runtime_error(file.string() + " has no rows");
  return out;
}

/// The shared/ folder beside the checkout: $TYCHE_SHARED when set, else found upwards from
/// `from` (pass __FILE__); empty when there is none.
inline std::filesystem::path shared_dir(const std::filesystem::path& from) {
  if (const char* env = std::getenv("TYCHE_SHARED")) return env;
  auto dir = std::filesystem::absolute(from).parent_path();
  while (!dir.empty() && dir != dir.root_path()) {
    if (std::filesystem::exists(dir.parent_path() / "shared" / "posteriors")) return dir.parent_path() / "shared";
    dir = dir.parent_path();
  }
  return {};
}

/// Draws of one quantity (by chain) against its reference: the pooled mean and sd, the bulk ESS,
/// and z = |mean − ref.mean| / (ref.sd · √(1/ESS + 1/10000)) — the reference's own Monte Carlo
/// error counted as 10,000 effective draws (shared/posteriors/README.md). The tests require
/// z < 4 and |sd / ref.sd − 1| < 0.10.
struct reference_comparison {
  double mean = 0, sd = 0, ess = 0, z = 0;
  [[nodiscard]] bool within(const reference_row& ref) const {
    return z < 4.0 && std::fabs(sd / ref.sd - 1.0) < 0.10;
  }
};
inline reference_comparison compare_to_reference(const std::vector<std::vector<double>>& chains,
                                                 const reference_row& ref) {
  std::vector<double> all;
  for (const auto& c : chains) all.insert(all.end(), c.begin(), c.end());
  reference_comparison r;
  double var = 0;
  for (double v : all) r.mean += v / static_cast<double>(all.size());
  for (double v : all) var += (v - r.mean) * (v - r.mean) / static_cast<double>(all.size() - 1);
  r.sd = std::sqrt(var);
  r.ess = tyche::ess_bulk(chains);
  r.z = std::fabs(r.mean - ref.mean) / (ref.sd * std::sqrt(1.0 / r.ess + 1.0 / 10000.0));
  return r;
}

}  // namespace tyche_test
