// tests/cmake/find_package: a consumer of the installed component io (tyche::io, which needs
// nothing more). Parses a CmdStan-format JSON text and checks what it read; returns 0 on success.
#include <tyche/io/json_data.hpp>

#include <cstdio>
#include <exception>

int main() {
  try {
    const tyche::data_file d = tyche::parse_json_data(R"({"N": 3, "y": [1.5, 2, -4]})", "consumer");
    const auto& y = d.vector("y");
    if (d.scalar("N") != 3 || y.size() != 3 || y[0] != 1.5 || y[2] != -4) {
      std::fprintf(stderr, "tyche consumer (io): N %g, %zu values of y\n", d.scalar("N"), y.size());
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tyche consumer (io): %s\n", e.what());
    return 1;
  }
  return 0;
}
