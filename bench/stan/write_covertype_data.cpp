// bench/stan/write_covertype_data.cpp — writes the data of Edward2's workload (the covertype
// shape: 581,012 rows × 54 features, binary outcome) from bench/synthetic.hpp's logistic-regression
// generator (seed 20261121), as a binary file both systems read (bench/stan/binary_data.hpp): as
// JSON it would be about 300 MB of text that takes longer to parse than the benchmark runs.
//
// Format (little-endian, as the machine writes it): 8 bytes "tychelr1", uint64 N, uint64 K, then
// X row-major (N·K doubles), then y (N doubles, 0 or 1). The --quick rows read the first rows of
// this same file.
//   usage: write_covertype_data OUT.bin
#include "../synthetic.hpp"

#include <cstdint>
#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_covertype_data OUT.bin\n");
    return 2;
  }
  const tyche_bench::logistic_data d(581012, 54, 20261121);
  std::FILE* f = std::fopen(argv[1], "wb");
  if (!f) {
    std::perror(argv[1]);
    return 1;
  }
  const std::uint64_t header[2] = {d.n, d.p};
  bool ok = std::fwrite("tychelr1", 1, 8, f) == 8 && std::fwrite(header, sizeof header, 1, f) == 1 &&
            std::fwrite(d.X.data(), sizeof(double), d.X.size(), f) == d.X.size() &&
            std::fwrite(d.y.data(), sizeof(double), d.y.size(), f) == d.y.size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok) std::fprintf(stderr, "write_covertype_data: cannot write %s\n", argv[1]);
  return ok ? 0 : 1;
}
