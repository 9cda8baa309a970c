// bench/stan/binary_data.hpp — the covertype-shaped data file (bench/stan/write_covertype_data.cpp)
// read once, and handed to both systems: to tyche as the row-major matrix its twin views, to
// Stan as an in-memory stan::io::array_var_context with N, K, X (column-major, as var_context
// stores matrices) and y (int). Both get the very numbers of the file; nothing is parsed as text.
#pragma once

#include <stan/io/array_var_context.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace stan_bench {

struct logistic_table {
  std::size_t n = 0, k = 0;
  std::vector<double> x;  // n × k, row-major
  std::vector<double> y;  // 0 or 1
};

/// The first `rows` rows of the file (all of them when rows = 0).
inline logistic_table read_logistic_binary(const std::string& path, std::size_t rows = 0) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw std::runtime_error("cannot open " + path);
  char magic[8];
  std::uint64_t header[2];
  if (std::fread(magic, 1, 8, f.get()) != 8 || std::memcmp(magic, "tychelr1", 8) != 0 ||
      std::fread(header, sizeof header, 1, f.get()) != 1)
    throw std::runtime_error(path + ": not a tychelr1 file");
  const std::size_t file_n = header[0], k = header[1];
  if (rows == 0) rows = file_n;
  if (rows > file_n)
    throw std::invalid_argument(path + ": has " + std::to_string(file_n) + " rows, asked for " +
                                std::to_string(rows));
  logistic_table t;
  t.n = rows;
  t.k = k;
  t.x.resize(rows * k);
  t.y.resize(rows);
  const long y_at = long(8 + sizeof header + file_n * k * sizeof(double));
  if (std::fread(t.x.data(), sizeof(double), t.x.size(), f.get()) != t.x.size() ||
      std::fseek(f.get(), y_at, SEEK_SET) != 0 ||
      std::fread(t.y.data(), sizeof(double), rows, f.get()) != rows)
    throw std::runtime_error(path + ": truncated");
  for (double v : t.y)
    if (v != 0.0 && v != 1.0) throw std::runtime_error(path + ": y must be 0 or 1");
  return t;
}

/// Stan's view of the table: N, K, X (N × K), y (int) — the data block of
/// bench/stan/models/logistic_regression.stan.
inline std::unique_ptr<stan::io::array_var_context> var_context_of(const logistic_table& t) {
  std::vector<double> x_col(t.n * t.k);  // column-major: the row index varies fastest
  for (std::size_t i = 0; i < t.n; ++i)
    for (std::size_t j = 0; j < t.k; ++j) x_col[j * t.n + i] = t.x[i * t.k + j];
  std::vector<int> ints = {int(t.n), int(t.k)};
  for (double v : t.y) ints.push_back(int(v));
  return std::make_unique<stan::io::array_var_context>(
      std::vector<std::string>{"X"}, x_col, std::vector<std::vector<std::size_t>>{{t.n, t.k}},
      std::vector<std::string>{"N", "K", "y"}, ints,
      std::vector<std::vector<std::size_t>>{{}, {}, {t.n}});
}

}  // namespace stan_bench
