// bench/json_rows.cpp — reading a large CmdStan JSON data file whole against reading one block of
// its rows (tyche::json_rows, as one of P processes of a data-sharded fit does): seconds and the
// process's peak memory. One reading per process (the peak is the process's), so bench/run.sh
// json_rows runs it once per row of its table:
//
//   json_rows --write FILE [--rows N] [--cols K]     a logistic regression's data: N, K, X (N × K), y
//   json_rows --read FILE [--part p --parts P]       prints mode,part,parts,seconds,max_rss_mb,rows
#include <tyche/io/json_data.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include <sys/resource.h>

namespace {

[[noreturn]] void usage() {
  std::fprintf(stderr,
               "usage: json_rows --write FILE [--rows N] [--cols K]\n"
               "       json_rows --read FILE [--part p --parts P]\n");
  std::exit(2);
}

void write(const std::string& path, std::size_t rows, std::size_t cols) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) usage();
  std::mt19937_64 rng(20261204);
  std::normal_distribution<double> normal;
  std::fprintf(f, "{\"N\": %zu, \"K\": %zu, \"X\": [", rows, cols);
  for (std::size_t i = 0; i < rows; ++i) {
    std::fputs(i ? ",\n[" : "\n[", f);
    for (std::size_t j = 0; j < cols; ++j) std::fprintf(f, j ? ", %.6g" : "%.6g", normal(rng));
    std::fputc(']', f);
  }
  std::fputs("],\n\"y\": [", f);
  for (std::size_t i = 0; i < rows; ++i) std::fprintf(f, i ? ", %d" : "%d", static_cast<int>(rng() & 1));
  std::fputs("]}\n", f);
  std::fclose(f);
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode, path;
  std::size_t rows = 100000, cols = 54;
  int part = 0, parts = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : (usage(), ""); };
    if (a == "--write" || a == "--read") mode = a.substr(2), path = next();
    else if (a == "--rows") rows = std::stoul(next());
    else if (a == "--cols") cols = std::stoul(next());
    else if (a == "--part") part = std::stoi(next());
    else if (a == "--parts") parts = std::stoi(next());
    else usage();
  }
  if (mode == "write") {
    write(path, rows, cols);
    return 0;
  }
  if (mode != "read") usage();
  const auto t0 = std::chrono::steady_clock::now();
  const tyche::data_file d = parts > 0 ? tyche::read_json_data(path, {.variables = {"X", "y"}, .part = part, .parts = parts})
                                       : tyche::read_json_data(path);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const tyche::matrix_data& X = d.matrix("X");
  if (d.vector("y").size() != X.rows) return 1;
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  std::printf("%s,%d,%d,%.3f,%.1f,%zu\n", parts > 0 ? "block" : "whole", part, parts > 0 ? parts : 1, seconds,
              static_cast<double>(u.ru_maxrss) / 1024.0, X.rows);
  return 0;
}
