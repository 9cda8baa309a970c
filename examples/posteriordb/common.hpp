// examples/posteriordb/common.hpp — what every posteriordb model of examples/posteriordb/ shares:
// posterior<Storage, Model> (a model with the data it views), the helpers that build design
// matrices, and the helpers the example programs and tests use (posteriors_dir, reference_means,
// means_by_name, print_summary). Each model has its own header beside this one, so an example
// compiles only its own model; examples/posteriordb.hpp includes them all.
#pragma once

#if __has_include(<tyche/io/json_data.hpp>)
#include <tyche/io/json_data.hpp>
#else
#include "../../include/tyche/io/json_data.hpp"  // the single-header build: io is not part of it
#endif
#include <tyche/tyche.hpp>

#include <cmath>
#include <cstdio>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tyche_examples {

/// A model together with the data it views. Storage lives on the heap, so moving a posterior
/// keeps the model's views valid; it cannot be copied.
template <class Storage, class Model>
struct posterior {
  std::unique_ptr<const Storage> storage;
  Model model;
};

namespace detail {
template <class Storage, class Build>
auto make_posterior(std::unique_ptr<const Storage> s, Build build) {
  auto m = build(*s);
  return posterior<Storage, decltype(m)>{std::move(s), std::move(m)};
}

inline void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("tyche_examples: " + what);
}

/// Row-major rows × cols matrix filled by f(i, j).
template <class F>
tyche::matrix_data build_matrix(std::size_t rows, std::size_t cols, F f) {
  tyche::matrix_data x;
  x.rows = rows;
  x.cols = cols;
  x.values.resize(rows * cols);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) x.values[i * cols + j] = f(i, j);
  return x;
}

inline tyche::data_matrix view(const tyche::matrix_data& x) {
  return tyche::matrix(x.values.data(), x.rows, x.cols);
}
}  // namespace detail

// ---- helpers for the example programs and the tests --------------------------------------------

/// ../shared/posteriors next to the repository root: walks up from `from` (a source file's
/// __FILE__) to the folder holding include/tyche/tyche.hpp.
inline std::filesystem::path posteriors_dir(const std::filesystem::path& from) {
  namespace fs = std::filesystem;
  for (fs::path p = fs::absolute(from).parent_path(); !p.empty(); p = p.parent_path()) {
    if (fs::exists(p / "include" / "tyche" / "tyche.hpp")) return p / ".." / "shared" / "posteriors";
    if (p == p.parent_path()) break;
  }
  throw std::runtime_error("tyche_examples: no repository root above " + from.string());
}

/// The reference posterior means of reference_summary.csv, in file order: (name, mean).
inline std::vector<std::pair<std::string, double>> reference_means(const std::filesystem::path& csv) {
  std::ifstream in(csv);
  if (!in) throw std::runtime_error("tyche_examples: cannot open " + csv.string());
  std::string line;
  std::getline(in, line);  // header: name,mean,sd,q05,q50,q95
  std::vector<std::pair<std::string, double>> out;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream row(line);
    std::string name, mean;
    std::getline(row, name, ',');
    std::getline(row, mean, ',');
    out.emplace_back(name, std::stod(mean));
  }
  return out;
}

/// The reference means ordered as the model's parameter names (each name must be in `means`).
inline std::vector<double> means_by_name(const std::vector<std::pair<std::string, double>>& means,
                                         const std::vector<std::string>& names) {
  std::vector<double> out;
  for (const auto& name : names) {
    bool found = false;
    for (const auto& [n, v] : means) {
      if (n == name) {
        out.push_back(v);
        found = true;
        break;
      }
    }
    if (!found) throw std::runtime_error("tyche_examples: no reference mean for " + name);
  }
  return out;
}

/// What every example prints: the dimension, the parameter names, and log p at the constrained
/// point `values` (mapped to θ by unconstrain), with and without the log-Jacobian, to 6 digits.
template <class Model>
void print_summary(const char* posterior_name, const Model& m, const std::vector<double>& values) {
  std::printf("%s\n", posterior_name);
  std::printf("dimension: %zu\n", m.dim());
  std::printf("parameters:");
  for (const auto& name : m.parameter_names()) std::printf(" %s", name.c_str());
  std::printf("\n");
  const auto theta = m.unconstrain(values);
  std::printf("log_prob at the reference means: %.6g (without the log-Jacobian: %.6g)\n",
              m.log_prob(theta), m.log_prob(theta, false));
}

}  // namespace tyche_examples
