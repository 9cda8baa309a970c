// tests/support/reference_summary.hpp — a reference posterior's summary (shared/posteriors/<name>/
// reference_summary.csv: name,mean,sd,q05,q50,q95) as name → (mean, sd), and where shared/ is.
// Plain C++ (no Catch2): the CUDA tests use it too.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

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

}  // namespace tyche_test
