// bench/reference_summary.hpp — a shared posterior's reference_summary.csv (../shared/posteriors/
// <name>/: name,mean,sd,q05,q50,q95) as name → (mean, sd), for the benchmarks that check their
// draws against it (bench/adapt.cpp, bench/inference.cpp).
#pragma once

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>

namespace tyche_bench {

/// The rows of csv by name: (mean, sd); empty when the file cannot be opened.
inline std::map<std::string, std::pair<double, double>> read_reference_summary(const std::filesystem::path& csv) {
  std::map<std::string, std::pair<double, double>> out;
  std::ifstream in(csv);
  if (!in) return out;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream row(line);
    std::string name, mean, sd;
    std::getline(row, name, ',');
    std::getline(row, mean, ',');
    std::getline(row, sd, ',');
    if (!name.empty()) out[name] = {std::stod(mean), std::stod(sd)};
  }
  return out;
}

}  // namespace tyche_bench
