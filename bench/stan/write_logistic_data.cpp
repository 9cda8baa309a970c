// bench/stan/write_logistic_data.cpp — writes logistic_regression.json (CmdStan JSON: N, K, X as
// a list of rows, y) from bench/synthetic.hpp's generator, so that the Stan comparison uses the
// very numbers of the gradient, batching and nuts suites (10,000 × 100, seed 20261121). Doubles
// are written with 17 significant digits: both systems read back exactly these values.
//   usage: write_logistic_data OUT.json
#include "../synthetic.hpp"

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_logistic_data OUT.json\n");
    return 2;
  }
  const tyche_bench::logistic_data d;
  std::FILE* f = std::fopen(argv[1], "w");
  if (!f) {
    std::perror(argv[1]);
    return 1;
  }
  std::fprintf(f, "{\"N\": %zu, \"K\": %zu, \"X\": [", d.n, d.p);
  for (std::size_t i = 0; i < d.n; ++i) {
    std::fprintf(f, "%s\n[", i ? "," : "");
    for (std::size_t j = 0; j < d.p; ++j) std::fprintf(f, "%s%.17g", j ? ", " : "", d.X[i * d.p + j]);
    std::fprintf(f, "]");
  }
  std::fprintf(f, "],\n\"y\": [");
  for (std::size_t i = 0; i < d.n; ++i) std::fprintf(f, "%s%d", i ? ", " : "", int(d.y[i]));
  std::fprintf(f, "]}\n");
  return std::fclose(f) == 0 ? 0 : 1;
}
