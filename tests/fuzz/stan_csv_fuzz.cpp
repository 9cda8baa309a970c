// libFuzzer harness: tyche::read_stan_csv on any bytes. A result must be consistent (values
// rows × columns, the warm-up rows within the rows, every column found by its name, every
// configuration key found); a rejection must be std::invalid_argument naming the source.
#include <tyche/io/stan_csv.hpp>

#include "fuzz_support.hpp"

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(bytes), size));
  tyche::stan_csv f;
  try {
    f = tyche::read_stan_csv(in, "fuzz.csv");
  } catch (const std::invalid_argument& e) {
    fuzz_require(std::string_view(e.what()).find("fuzz.csv") != std::string_view::npos);
    return 0;
  }
  fuzz_require(f.values.size() == f.rows * f.cols());
  fuzz_require(f.warmup_rows <= f.rows);
  for (std::size_t k = 0; k < f.cols(); ++k) {
    std::size_t found = f.cols();
    fuzz_expected([&] { found = f.column_index(f.names[k]); });
    if (found < f.cols()) {
      fuzz_require(f.names[found] == f.names[k]);
      fuzz_require(found <= k);
      fuzz_require(f.column(f.names[k]).size() == f.rows);
    }
  }
  fuzz_expected([&] { (void)f.column_index("no such column"); fuzz_require(false); });
  for (const auto& [key, value] : f.config) fuzz_require(f.config_value(key).has_value());
  return 0;
}
