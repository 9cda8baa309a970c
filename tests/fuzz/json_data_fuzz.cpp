// libFuzzer harness: tyche::parse_json_data on any bytes, then every accessor on every variable,
// including the declared-shape forms with the variable's own shape and a wrong one. Anything
// but a value or std::invalid_argument (another exception, a crash, a sanitizer report) is a
// finding; so is a value that breaks what the accessor promises (checked with fuzz_require). Then
// both halves of the rows of each variable (tyche::json_rows), against the whole file's: a variable
// that reads whole as an array of numbers must read in parts, with the same values.
//
// The reader's JSON parser is its own (since 2026-12-06); nlohmann-json, the parser it replaced,
// is the reference here: the reader refuses a text exactly where nlohmann-json refuses it (or its
// top level is no object), and each variable is what make_variable makes of nlohmann-json's tree
// of it — the same kind, shape and values, or the same message.
#include <tyche/io/json_data.hpp>

#include "fuzz_support.hpp"

#include <nlohmann/json.hpp>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

// nlohmann-json's value as the reader's (detail::json_io::value), arrays kept to the depth the
// reader keeps them (its max_rank + 2 levels below a variable), without recursion past that.
void to_reader_value(const nlohmann::ordered_json& j, tyche::detail::json_io::value& out, int levels) {
  using kind = tyche::detail::json_io::value::kind;
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null: out.type = kind::null; return;
    case nlohmann::ordered_json::value_t::boolean:
      out.type = kind::boolean;
      out.flag = j.get<bool>();
      return;
    case nlohmann::ordered_json::value_t::string:
      out.type = kind::string;
      out.text = j.get<std::string>();
      return;
    case nlohmann::ordered_json::value_t::object: out.type = kind::object; return;
    case nlohmann::ordered_json::value_t::array:
      out.type = kind::array;
      if (levels <= 0) return;
      for (const auto& e : j) {
        out.items.emplace_back();
        to_reader_value(e, out.items.back(), levels - 1);
      }
      return;
    default:
      out.type = kind::number;
      out.number = j.get<double>();
      return;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(bytes), size);
  tyche::data_file d;
  try {
    d = tyche::parse_json_data(text, "fuzz.json");
  } catch (const std::invalid_argument& e) {
    fuzz_require(std::string_view(e.what()).rfind("fuzz.json: ", 0) == 0);
    // Refused only where nlohmann refuses the text, or its top level is no object.
    const auto tree = nlohmann::ordered_json::parse(text, nullptr, false);
    fuzz_require(tree.is_discarded() || !tree.is_object());
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
  // The reader converts a top-level array's rows as they are parsed (detail::json_io::reading):
  // each variable must be what make_variable makes of nlohmann's whole tree of it: the same kind,
  // shape, values, or the same message.
  const auto tree = nlohmann::ordered_json::parse(text, nullptr, false);
  fuzz_require(!tree.is_discarded() && tree.is_object());
  std::size_t at = 0;
  for (const auto& [name, value] : tree.items()) {
    fuzz_require(at < d.names().size() && d.names()[at++] == name);
    tyche::detail::json_io::value converted;
    to_reader_value(value, converted, static_cast<int>(tyche::detail::json_io::max_rank) + 2);
    const auto v = tyche::detail::json_io::make_variable(name, converted);
    const std::vector<std::size_t>* dims = nullptr;
    std::string message;
    try {
      dims = &d.dims(name);
    } catch (const std::invalid_argument& e) {
      message = e.what();
    }
    fuzz_require((dims != nullptr) == v.numeric);
    if (!v.numeric) {
      fuzz_require(message == tyche::detail::json_io::printable("fuzz.json: " + v.problem));
      continue;
    }
    fuzz_require(*dims == v.dims);
    // The same doubles, bit for bit (−0 and +0 told apart; NaNs are NaN).
    auto same = [](double x, double y) {
      return std::bit_cast<std::uint64_t>(x) == std::bit_cast<std::uint64_t>(y) || (std::isnan(x) && std::isnan(y));
    };
    if (v.dims.empty()) fuzz_require(same(d.scalar(name, tyche::allow_non_finite), v.data.values[0]));
    if (v.dims.size() == 1 || v.dims.size() == 2) {
      const std::vector<double>& mine = v.dims.size() == 1 ? d.vector(name, tyche::allow_non_finite)
                                                           : d.matrix(name, tyche::allow_non_finite).values;
      fuzz_require(mine.size() == v.data.values.size());
      for (std::size_t i = 0; i < mine.size(); ++i) fuzz_require(same(mine[i], v.data.values[i]));
    }
  }
  fuzz_require(at == d.names().size());
  for (const std::string& name : d.names()) {
    const std::vector<std::size_t>* whole = nullptr;
    fuzz_expected([&] { whole = &d.dims(name); });
    for (int part = 0; part < 2; ++part) {
      tyche::data_file b;
      try {
        b = tyche::parse_json_data(text, "fuzz.json", {.variables = {name}, .part = part, .parts = 2});
      } catch (const std::invalid_argument& e) {
        fuzz_require(std::string_view(e.what()).rfind("fuzz.json: ", 0) == 0);
        // A variable that reads whole as an array of numbers reads in parts too.
        fuzz_require(whole == nullptr || whole->empty());
        continue;
      }
      if (whole == nullptr || whole->empty()) continue;  // rows outside the block are not checked
      const tyche::data_rows r = b.rows();
      const std::size_t n = (*whole)[0], first = part == 0 ? 0 : n - n / 2;
      fuzz_require(r.total == n && r.begin == first && r.end == (part == 0 ? n - n / 2 : n));
      const std::vector<std::size_t>& dims = b.dims(name);  // numeric: no throw
      fuzz_require(dims.size() == whole->size() && dims[0] == r.size());
      for (std::size_t k = 1; k < dims.size(); ++k) fuzz_require(dims[k] == (*whole)[k]);
      if (dims.size() > 2) continue;
      const std::vector<double>& all = dims.size() == 1 ? d.vector(name, tyche::allow_non_finite)
                                                        : d.matrix(name, tyche::allow_non_finite).values;
      const std::vector<double>& mine = dims.size() == 1 ? b.vector(name, tyche::allow_non_finite)
                                                         : b.matrix(name, tyche::allow_non_finite).values;
      const std::size_t row = dims.size() == 1 ? 1 : dims[1];
      fuzz_require(mine.size() == r.size() * row);
      for (std::size_t i = 0; i < mine.size(); ++i) {
        const double x = mine[i], y = all[r.begin * row + i];
        fuzz_require(x == y || (std::isnan(x) && std::isnan(y)));
      }
    }
  }
  return 0;
}
