// bench/stan/json_var_context.hpp — a CmdStan-format JSON data file as a Stan var_context.
//
// StanHeaders 2.21 has no JSON reader (stan::json arrived with CmdStan 2.22), so the harness
// parses the file with nlohmann-json (tyche::read_json_data's parser until 2026-12-06), and hands the values
// to stan::io::array_var_context. The rules are CmdStan's: a variable whose numbers are all JSON
// integers (no decimal point or exponent) is an int variable, otherwise a real one; a scalar has no
// dimensions; nested arrays are row lists, stored column-major as Stan's var_context requires.
// "NaN", "Inf" and "-Inf" strings are not handled (no benchmark data has them).
#pragma once

#include <stan/io/array_var_context.hpp>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace stan_bench {

namespace detail {

/// Dimensions of a (possibly nested) rectangular array; throws if it is ragged or not numeric.
inline void dims_of(const nlohmann::json& v, std::vector<std::size_t>& dims, std::size_t depth,
                    const std::string& name) {
  if (v.is_number()) {
    if (depth != dims.size()) throw std::invalid_argument(name + ": ragged array");
    return;
  }
  if (!v.is_array()) throw std::invalid_argument(name + ": not a number or an array of numbers");
  if (depth == dims.size()) dims.push_back(v.size());
  if (dims[depth] != v.size()) throw std::invalid_argument(name + ": ragged array");
  for (const auto& e : v) dims_of(e, dims, depth + 1, name);
}

/// The element at the row-major multi-index `index`.
inline const nlohmann::json& at(const nlohmann::json& v, const std::vector<std::size_t>& index) {
  const nlohmann::json* p = &v;
  for (std::size_t i : index) p = &(*p)[i];
  return *p;
}

}  // namespace detail

/// Reads a CmdStan JSON data file into an array_var_context.
inline std::unique_ptr<stan::io::array_var_context> read_json_var_context(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  const nlohmann::json j = nlohmann::json::parse(in);
  if (!j.is_object()) throw std::invalid_argument(path + ": expected a JSON object");

  std::vector<std::string> names_r, names_i;
  std::vector<double> values_r;
  std::vector<int> values_i;
  std::vector<std::vector<std::size_t>> dims_r, dims_i;
  for (const auto& [name, v] : j.items()) {
    std::vector<std::size_t> dims;
    detail::dims_of(v, dims, 0, path + ": " + name);
    std::size_t count = 1;
    for (std::size_t d : dims) count *= d;
    // Column-major order: the first index varies fastest.
    std::vector<const nlohmann::json*> elements;
    elements.reserve(count);
    std::vector<std::size_t> index(dims.size(), 0);
    for (std::size_t k = 0; k < count; ++k) {
      elements.push_back(&detail::at(v, index));
      for (std::size_t d = 0; d < dims.size(); ++d) {
        if (++index[d] < dims[d]) break;
        index[d] = 0;
      }
    }
    bool all_int = true;
    for (const auto* e : elements) all_int = all_int && e->is_number_integer();
    if (all_int) {
      names_i.push_back(name);
      dims_i.push_back(dims);
      for (const auto* e : elements) values_i.push_back(e->get<int>());
    } else {
      names_r.push_back(name);
      dims_r.push_back(dims);
      for (const auto* e : elements) values_r.push_back(e->get<double>());
    }
  }
  return std::make_unique<stan::io::array_var_context>(names_r, values_r, dims_r, names_i,
                                                       values_i, dims_i);
}

}  // namespace stan_bench
