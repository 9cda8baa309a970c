// libFuzzer harness: tyche::parse_json_data on any bytes, then every accessor on every variable,
// including the declared-shape forms with the variable's own shape and a wrong one. Anything
// but a value or std::invalid_argument (another exception, a crash, a sanitizer report) is a
// finding; so is a value that breaks what the accessor promises (checked with fuzz_require). Then
// the second half of the rows of each variable (tyche::json_rows), against the whole file's.
#include <tyche/io/json_data.hpp>

#include "fuzz_support.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(bytes), size);
  tyche::data_file d;
  try {
    d = tyche::parse_json_data(text, "fuzz.json");
  } catch (const std::invalid_argument& e) {
    fuzz_require(std::string_view(e.what()).rfind("fuzz.json: ", 0) == 0);
    return 0;
  }
  for (const std::string& name : d.names()) {
    fuzz_require(d.contains(name));
    std::size_t count = 1;
    const std::vector<std::size_t>* dims = nullptr;
    fuzz_expected([&] { dims = &d.dims(name); });
    if (dims != nullptr)
      for (std::size_t n : *dims) count *= n;
    fuzz_expected([&] { fuzz_require(std::isfinite(d.scalar(name))); });
    fuzz_expected([&] { (void)d.scalar(name, tyche::allow_non_finite); });
    fuzz_expected([&] { (void)d.integer(name); });
    fuzz_expected([&] {
      const auto& v = d.vector(name);
      fuzz_require(v.size() == count);
      for (double x : v) fuzz_require(std::isfinite(x));
    });
    fuzz_expected([&] { fuzz_require(d.vector(name, tyche::allow_non_finite).size() == count); });
    fuzz_expected([&] { fuzz_require(d.vector(name, count).size() == count); });
    fuzz_expected([&] { (void)d.vector(name, count + 1); fuzz_require(false); });
    fuzz_expected([&] {
      const auto& m = d.matrix(name);
      fuzz_require(m.values.size() == m.rows * m.cols);
      fuzz_require(m.values.size() == count);
    });
    fuzz_expected([&] { (void)d.matrix(name, tyche::allow_non_finite); });
    if (dims != nullptr && dims->size() == 2) {
      fuzz_expected([&] { fuzz_require(d.matrix(name, (*dims)[0], (*dims)[1]).values.size() == count); });
      fuzz_expected([&] { (void)d.matrix(name, (*dims)[1] + 1, (*dims)[0]); fuzz_require(false); });
    }
    fuzz_expected([&] {
      const auto v = d.integers(name);
      fuzz_require(v.size() == count);
    });
    fuzz_expected([&] { (void)d.integers(name, count); });
  }
  fuzz_expected([&] { (void)d.vector("no such variable"); fuzz_require(false); });
  for (const std::string& name : d.names()) {
    tyche::data_file b;
    try {
      b = tyche::parse_json_data(text, "fuzz.json", {.variables = {name}, .part = 1, .parts = 2});
    } catch (const std::invalid_argument& e) {
      fuzz_require(std::string_view(e.what()).rfind("fuzz.json: ", 0) == 0);
      continue;
    }
    const std::vector<std::size_t>* whole = nullptr;
    fuzz_expected([&] { whole = &d.dims(name); });
    if (whole == nullptr || whole->empty()) continue;  // rows outside the block are not checked
    const tyche::data_rows r = b.rows();
    fuzz_require(r.total == (*whole)[0] && r.end == r.total && r.begin == r.total - r.total / 2);
    fuzz_expected([&] {
      const auto& dims = b.dims(name);
      fuzz_require(dims.size() == whole->size() && dims[0] == r.size());
      for (std::size_t k = 1; k < dims.size(); ++k) fuzz_require(dims[k] == (*whole)[k]);
      if (dims.size() > 2) return;
      const std::vector<double>& all = dims.size() == 1 ? d.vector(name, tyche::allow_non_finite)
                                                        : d.matrix(name, tyche::allow_non_finite).values;
      const std::vector<double>& part = dims.size() == 1 ? b.vector(name, tyche::allow_non_finite)
                                                         : b.matrix(name, tyche::allow_non_finite).values;
      const std::size_t row = dims.size() == 1 ? 1 : dims[1];
      fuzz_require(part.size() == r.size() * row);
      for (std::size_t i = 0; i < part.size(); ++i) {
        const double x = part[i], y = all[r.begin * row + i];
        fuzz_require(x == y || (std::isnan(x) && std::isnan(y)));
      }
    });
  }
  return 0;
}
