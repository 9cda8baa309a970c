// ================================================================================================
// tyche 0.1.0 — tyche/io/json_data.hpp, a companion of the single header (tyche/tyche.hpp beside it).
//
// GENERATED FILE — DO NOT EDIT. Copied by tools/amalgamate.py from include/tyche/io/json_data.hpp;
// edit that header and run `python3 tools/amalgamate.py` instead.
// ================================================================================================
// tyche/io/json_data.hpp — reading data in the JSON format CmdStan uses: one object of named
// variables, each a number (int or real) or an array of numbers; a matrix is a list of rows.
//
//     tyche::data_file d = tyche::read_json_data("eight_schools/data.json");
//     int J = d.integer("J");
//     const std::vector<double>& y = d.vector("y", J);      // length checked
//     const tyche::matrix_data& X = d.matrix("X");           // row-major, rows × cols
//     auto m = tyche::matvec(tyche::matrix(X.values.data(), X.rows, X.cols), ...);
//
// Optional part of tyche: it needs nlohmann-json (Debian: nlohmann-json3-dev; CMake:
// find_package(nlohmann_json 3), target nlohmann_json::nlohmann_json, or tyche::io in-tree), and
// it is NOT included by <tyche/tyche.hpp> nor part of the single header. It includes no other tyche
// header, so it can be used next to the single header too.
//
// Values. Every number is stored as a double. JSON integers and reals are not told apart: an
// integer is asked for with integer()/integers(), which accept any number with an integral value
// that fits in an int (so 3 and 3.0, not 3.5). Like CmdStan, the strings "NaN", "Inf", "+Inf",
// "-Inf", "Infinity", "+Infinity", "-Infinity" (any letter case) are read as NaN and ±infinity;
// scalar(), vector() and matrix() reject such values unless given tyche::allow_non_finite.
//
// Errors. Every problem throws std::invalid_argument whose message starts with the file name (or
// the name given to parse_json_data) and names the variable, the element and its value:
//     data.json: no variable 'y' (variables: J, sigma)
//     data.json: 'y' is a number, expected an array
//     data.json: y[3] is a string ("abc"), expected a number
//     data.json: X row 4 has 23 elements, expected 24
//     data.json: y[2] = nan is not finite
//     data.json: N = 3.5 is not an integer
//     data.json: not valid JSON: parse error at line 3, column 9: ...
// Rows of large variables (tyche::json_rows): read_json_data(path, {.variables = {"X", "y"},
// .part = r, .parts = P}) keeps only block r of P of the rows of X and y (one process of P, each
// holding its own block: docs/mpi.md), or .begin/.end an explicit range; the rows outside it are
// skipped as they are parsed, never stored and not checked (but the file's first row, which every
// part checks). Every array's rows are converted to doubles as they are parsed, so neither the
// text nor nlohmann's tree of it is held whole.
//
// Element indices in messages are 1-based, as in Stan: y[1] is the first element of y, X[2, 3]
// the third element of the second row of X, "row 4" the fourth row. (Indexing the returned
// std::vector / matrix_data in C++ is 0-based as usual.)
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace tyche {

/// A rows × cols matrix of data, row-major: element (i, j) (0-based) is values[i * cols + j].
/// View it in a model with tyche::matrix(m.values.data(), m.rows, m.cols).
struct matrix_data {
  std::vector<double> values;
  std::size_t rows = 0;
  std::size_t cols = 0;
};

/// Tag: accept NaN and infinite values (written "NaN", "Inf", "-Inf" in the file).
struct allow_non_finite_t {
  explicit allow_non_finite_t() = default;
};
inline constexpr allow_non_finite_t allow_non_finite{};

namespace detail::json_io {

using json = nlohmann::ordered_json;  // ordered: names() and messages list variables in file order

/// Deeper nesting than this is refused (it is no Stan data, and it bounds the recursion).
inline constexpr std::size_t max_rank = 32;

/// "1.5", "3", "nan", "inf", "-inf": the shortest text that reads back as x. (This header stands
/// alone, beside the single header too, so it does not use tyche/scalar/format.hpp.)
inline std::string format_number(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  if (r.ec != std::errc{}) return "?";
  return std::string(buf, r.ptr);
}

/// "a string (\"abc\")", "a boolean (true)", "null", "an object", "an array", "a number".
inline std::string describe(const json& j) {
  switch (j.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return std::string("a boolean (") + (j.get<bool>() ? "true" : "false") + ")";
    case json::value_t::string: {
      std::string s = j.get<std::string>();
      if (s.size() > 40) s = s.substr(0, 37) + "...";
      return "a string (\"" + s + "\")";
    }
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::binary: return "binary data";
    case json::value_t::discarded: return "nothing";
    default: return "a number";
  }
}

inline bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

/// The value of a JSON number, or of one of CmdStan's strings for NaN and ±infinity.
inline bool to_double(const json& j, double& out) {
  if (j.is_number()) {
    out = j.get<double>();
    return true;
  }
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    std::string_view v = s;
    double sign = 1.0;
    if (!v.empty() && (v.front() == '+' || v.front() == '-')) {
      sign = v.front() == '-' ? -1.0 : 1.0;
      v.remove_prefix(1);
    }
    if (iequals(v, "inf") || iequals(v, "infinity")) {
      out = sign * std::numeric_limits<double>::infinity();
      return true;
    }
    if (iequals(s, "nan")) {
      out = std::numeric_limits<double>::quiet_NaN();
      return true;
    }
  }
  return false;
}

/// nlohmann's message without its "[json.exception.parse_error.101] " prefix: "parse error at
/// line L, column C: ...".
inline std::string strip_prefix(std::string what) {
  if (const auto pos = what.find("] "); what.rfind("[json.exception.", 0) == 0 && pos != what.npos)
    what.erase(0, pos + 2);
  return what;
}

/// The message as it can be printed: control characters (a variable name may hold U+0000,
/// which would end what() early) written back as JSON escapes: backslash, u, four hex digits.
inline std::string printable(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      static constexpr char hex[] = "0123456789abcdef";
      out += "\\u00";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

/// "y[3]", "X[2, 5]" (1-based; index holds 0-based positions).
inline std::string element_name(const std::string& var, const std::vector<std::size_t>& index) {
  std::string s = var + "[";
  for (std::size_t k = 0; k < index.size(); ++k) {
    if (k) s += ", ";
    s += std::to_string(index[k] + 1);
  }
  return s + "]";
}

/// One variable of the file, flattened: dims is empty for a scalar; values is row-major.
struct variable {
  std::string name;
  std::string kind;               // describe() of the top-level JSON value
  bool is_array = false;          // the top-level JSON value is an array
  bool numeric = false;           // a number, or a rectangular array of numbers
  std::string problem;            // why not numeric (the message, without the file prefix)
  std::vector<std::size_t> dims;  // when numeric: {} for a number, else the array's shape
  matrix_data data;               // when numeric: the values, row-major; rows/cols set for 2-d
  std::size_t first_row = 0;      // json_rows: the file's index of the first row kept (messages)
};

/// Flattens j (an array of shape dims, checked) into out; index is the position being filled.
/// Returns an empty string, or the problem found.
/// first_row: the file's index of j's first element (json_rows; messages name the file's rows).
inline std::string flatten(const json& j, const std::string& var,
                           const std::vector<std::size_t>& dims, std::vector<std::size_t>& index,
                           std::vector<double>& out, std::size_t first_row = 0) {
  const std::size_t depth = index.size();
  if (depth == dims.size()) {
    double x = 0;
    if (!to_double(j, x))
      return element_name(var, index) + " is " + describe(j) + ", expected a number";
    out.push_back(x);
    return {};
  }
  // depth > 0 here unless j is the whole array, whose size defines dims[0].
  const std::string what = depth == 0 ? "'" + var + "'"
                           : dims.size() == 2 ? var + " row " + std::to_string(index[0] + 1)
                                              : element_name(var, index);
  if (!j.is_array())
    return what + " is " + describe(j) + ", expected an array of " + std::to_string(dims[depth]) +
           " elements";
  if (j.size() != dims[depth])
    return what + " has " + std::to_string(j.size()) + " elements, expected " +
           std::to_string(dims[depth]);
  index.push_back(depth == 0 ? first_row : 0);
  for (const auto& e : j) {
    if (auto p = flatten(e, var, dims, index, out); !p.empty()) return p;
    ++index.back();
  }
  index.pop_back();
  return {};
}

inline variable make_variable(const std::string& name, const json& j, std::size_t first_row = 0) {
  variable v;
  v.name = name;
  v.first_row = first_row;
  v.kind = describe(j);
  v.is_array = j.is_array();
  if (!v.is_array) {
    double x = 0;
    if (to_double(j, x)) {
      v.numeric = true;
      v.data.values.push_back(x);
    } else {
      v.problem = "'" + name + "' is " + v.kind + ", expected a number or an array of numbers";
    }
    return v;
  }
  // The shape, from the first element at each depth (iteratively: no recursion on bad input).
  const json* p = &j;
  while (p->is_array()) {
    if (v.dims.size() == max_rank) {
      v.problem = "'" + name + "' is nested more than " + std::to_string(max_rank) + " deep";
      v.dims.clear();
      return v;
    }
    v.dims.push_back(p->size());
    if (p->empty()) break;
    p = &p->front();
  }
  // No reserve(product of dims): a ragged array could claim a huge product in a small file.
  std::vector<std::size_t> index;
  v.problem = flatten(j, name, v.dims, index, v.data.values, first_row);
  v.numeric = v.problem.empty();
  if (!v.numeric) {
    v.data.values.clear();
    v.data.values.shrink_to_fit();
  } else if (v.dims.size() == 2) {
    v.data.rows = v.dims[0];
    v.data.cols = v.dims[1];
  }
  // (a 1-d array keeps rows = cols = 0: only an empty one is also a 0 × 0 matrix)
  return v;
}

inline std::string shape_text(const std::vector<std::size_t>& dims) {
  std::string s;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    if (k) s += " × ";
    s += std::to_string(dims[k]);
  }
  return s;
}

/// The data file at `path`, open for reading, or std::invalid_argument saying why not.
inline std::ifstream open_data_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw std::invalid_argument(path + ": is a directory, not a data file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::invalid_argument(path + ": cannot open the data file (" +
                                (std::filesystem::exists(path, ec) ? "not readable" : "no such file") + ")");
  return in;
}

/// json_rows' first pass where the block is a part of the rows (nlohmann's callback parser):
/// each cut variable's number of rows, with none of the file stored. A variable's name is a key at
/// depth 1, its array starts at depth 1, and its rows are values or arrays at depth 2; a row
/// refused at its start is skipped with everything in it.
struct row_cutter {
  const std::vector<std::string>* names = nullptr;
  std::vector<std::string> keys;  // the file's variables, in file order (the tree keeps only the cut ones)
  std::vector<std::size_t> rows;  // per name: rows seen
  std::vector<int> seen;          // per name: 0 not in the file, 1 an array, 2 something else
  int current = -1;               // the cut variable whose value is being parsed, or -1

  explicit row_cutter(const std::vector<std::string>& n) : names(&n), rows(n.size(), 0), seen(n.size(), 0) {}

  bool operator()(int depth, json::parse_event_t event, json& parsed) {
    using ev = json::parse_event_t;
    if (depth == 1 && event == ev::key) {
      current = -1;
      const auto& key = parsed.get_ref<const std::string&>();
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
      for (std::size_t k = 0; k < names->size(); ++k)
        if ((*names)[k] == key) current = static_cast<int>(k);
      return true;
    }
    if (depth == 1 && (event == ev::array_start || event == ev::object_start || event == ev::value)) {
      if (current < 0) return false;  // another variable: dropped
      const auto k = static_cast<std::size_t>(current);
      seen[k] = event == ev::array_start ? 1 : 2;
      rows[k] = 0;
      return true;  // (not an array: kept, for the message)
    }
    if (depth == 2 && current >= 0 && seen[static_cast<std::size_t>(current)] == 1 &&
        (event == ev::array_start || event == ev::object_start || event == ev::value)) {
      ++rows[static_cast<std::size_t>(current)];
      return false;
    }
    if (depth == 1 && (event == ev::array_end || event == ev::object_end)) current = -1;
    return true;
  }
};

/// The file's reading with nlohmann's callback parser: each row of a top-level array (an element
/// at depth 2) is flattened into its variable's values as soon as it ends, then dropped from the
/// tree, so the file's numbers are held once, as doubles, not also as nlohmann's values. The shape
/// and the messages are make_variable's: the dimensions below the first from the first row's
/// first elements, each row checked against them (flatten, from the row's index in the file).
/// With json_rows (`cut`: the variables, [begin, end): the block) a cut variable's rows outside
/// the block are refused at their start, except the file's first row, which is checked and gives
/// the shape but is not kept.
struct row_stream {
  const std::vector<std::string>* cut = nullptr;
  std::size_t begin = 0, end = 0;
  std::vector<std::size_t> rows;  // per cut name: rows in the file (as row_cutter's)
  std::vector<int> seen;          // per cut name: 0 not in the file, 1 an array, 2 something else
  std::vector<variable> arrays;   // the top-level arrays, as converted (a name's last occurrence)

  row_stream() = default;
  row_stream(const std::vector<std::string>& names, std::size_t b, std::size_t e)
      : cut(&names), begin(b), end(e), rows(names.size(), 0), seen(names.size(), 0) {}

  bool operator()(int depth, json::parse_event_t event, json& parsed) {
    using ev = json::parse_event_t;
    if (depth == 1) {
      if (event == ev::key) {
        key_ = parsed.get_ref<const std::string&>();
        cut_index_ = -1;
        if (cut != nullptr)
          for (std::size_t k = 0; k < cut->size(); ++k)
            if ((*cut)[k] == key_) cut_index_ = static_cast<int>(k);
      } else if (event == ev::array_start) {
        start();
      } else if (event == ev::array_end && current_ >= 0) {
        finish();
      } else if (event != ev::array_end) {  // another kind of value: stays in the tree
        current_ = -1;
        if (cut_index_ >= 0 && (event == ev::value || event == ev::object_start))
          seen[static_cast<std::size_t>(cut_index_)] = 2;
      }
      return true;
    }
    if (depth != 2 || current_ < 0) return true;
    if (event == ev::array_start || event == ev::object_start || event == ev::value) {
      row_ = rows_++;
      if (cutting_ && !(row_ == 0 || in_block(row_))) return false;  // skipped, with what is in it
      if (event != ev::value) return true;                            // converted at its end
    } else if (event != ev::array_end && event != ev::object_end) {
      return true;
    }
    convert(parsed);
    return false;
  }

 private:
  std::string key_;
  int cut_index_ = -1;  // the key's index in *cut, or -1
  int current_ = -1;    // the index in arrays of the array being read, or -1
  bool cutting_ = false;
  std::vector<std::size_t> dims_;  // the current array's shape: {0, the first row's shape...}
  std::size_t rows_ = 0, row_ = 0, kept_ = 0;

  bool in_block(std::size_t r) const { return r >= begin && r < end; }

  void start() {
    std::size_t at = arrays.size();
    for (std::size_t k = 0; k < arrays.size(); ++k)
      if (arrays[k].name == key_) at = k;
    if (at == arrays.size()) arrays.emplace_back();
    variable& v = arrays[at] = variable{};
    v.name = key_;
    v.kind = "an array";
    v.is_array = true;
    v.numeric = true;
    cutting_ = cut_index_ >= 0;
    if (cutting_) {
      seen[static_cast<std::size_t>(cut_index_)] = 1;
      v.first_row = begin;
    }
    current_ = static_cast<int>(at);
    rows_ = kept_ = 0;
    dims_.assign(1, 0);
  }
  void convert(const json& row) {
    variable& v = arrays[static_cast<std::size_t>(current_)];
    if (!v.numeric) return;  // a problem found already: the rest is not read
    if (row_ == 0)           // the shape, from the first element at each depth
      for (const json* p = &row; p->is_array(); p = &p->front()) {
        if (dims_.size() == max_rank) {
          v.problem = "'" + v.name + "' is nested more than " + std::to_string(max_rank) + " deep";
          v.numeric = false;
          return;
        }
        dims_.push_back(p->size());
        if (p->empty()) break;
      }
    std::vector<std::size_t> index{row_};
    if (cutting_ && !in_block(row_)) {  // the file's first row, outside the block: checked only
      std::vector<double> ignored;
      v.problem = flatten(row, v.name, dims_, index, ignored);
    } else {
      v.problem = flatten(row, v.name, dims_, index, v.data.values);
      ++kept_;
    }
    v.numeric = v.problem.empty();
  }
  void finish() {
    variable& v = arrays[static_cast<std::size_t>(current_)];
    current_ = -1;
    if (cutting_) rows[static_cast<std::size_t>(cut_index_)] = rows_;
    if (!v.numeric) {
      v.data.values.clear();
      v.data.values.shrink_to_fit();
      return;
    }
    dims_[0] = kept_;
    if (rows_ == 0) dims_.resize(1);  // [] (make_variable: the shape stops at an empty array)
    v.dims = dims_;
    if (v.dims.size() == 2) {
      v.data.rows = v.dims[0];
      v.data.cols = v.dims[1];
    }
  }
};

/// "a number", "an array of 8 numbers", "a 5000 × 25 matrix", "a 2 × 3 × 4 array".
inline std::string describe(const variable& v) {
  if (!v.numeric) return v.kind;
  if (v.dims.empty()) return "a number";
  if (v.dims.size() == 1)
    return "an array of " + std::to_string(v.dims[0]) + (v.dims[0] == 1 ? " number" : " numbers");
  if (v.dims.size() == 2) return "a " + shape_text(v.dims) + " matrix";
  return "a " + shape_text(v.dims) + " array";
}

}  // namespace detail::json_io

/// Which rows of a data file's large variables to read (read_json_data(path, rows),
/// parse_json_data(text, source, rows)): the first dimension of each variable named in
/// `variables` — the same number n of rows in each, a vector's elements or a matrix's rows — is
/// cut to the block of part `part` of `parts` (0 ≤ part < parts; the first n mod parts parts hold
/// one row more, as tyche::mpi::block_of's blocks), or, where `end` is given, to rows
/// [begin, end). The other variables are read whole. Rows outside the block are skipped as they
/// are parsed: they are never stored, and not checked — except the file's first row, which every
/// part reads (the block's rows must have its shape, an empty block takes it, and a bad value in
/// it is every part's error). Messages name the file's rows (X row 4 is the file's fourth
/// row, whatever the block). A part takes two passes over the file (the first counts the rows).
struct json_rows {
  static constexpr std::size_t no_end = static_cast<std::size_t>(-1);
  std::vector<std::string> variables;
  int part = 0, parts = 1;
  std::size_t begin = 0, end = no_end;
};

/// The rows a data_file holds of the variables json_rows cut: [begin, end) of `total` (all zero
/// when nothing was cut).
struct data_rows {
  std::size_t begin = 0, end = 0, total = 0;
  [[nodiscard]] std::size_t size() const { return end - begin; }
};

/// The variables of one data file. Copyable and movable; the references returned by vector()
/// and matrix() stay valid as long as the data_file lives (and is not assigned to).
class data_file {
 public:
  data_file() = default;

  /// The name used in messages: the path given to read_json_data, or the name given to
  /// parse_json_data.
  const std::string& source() const noexcept { return source_; }

  bool contains(std::string_view name) const { return find(name) != nullptr; }

  /// The rows kept of the variables json_rows cut (read_json_data(path, rows)): [begin, end) of
  /// the file's `total`; all zero for a file read whole.
  const data_rows& rows() const noexcept { return rows_; }

  /// The variable names, in file order.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    out.reserve(vars_.size());
    for (const auto& v : vars_) out.push_back(v.name);
    return out;
  }

  /// The shape of a numeric variable: {} for a number, {n} for an array, {rows, cols} for a
  /// matrix (a 2-d array), and so on.
  const std::vector<std::size_t>& dims(std::string_view name) const {
    return numeric(name).dims;
  }

  /// A number (finite unless allow_non_finite is given).
  double scalar(std::string_view name) const { return scalar_(name, false); }
  double scalar(std::string_view name, allow_non_finite_t) const { return scalar_(name, true); }

  /// A number with an integral value in int's range (3 or 3.0; not 3.5, nor NaN).
  int integer(std::string_view name) const {
    return to_int(number(name, "an integer"), std::string(name));
  }

  /// A one-dimensional array of numbers (finite unless allow_non_finite is given). The
  /// reference is to storage inside *this.
  const std::vector<double>& vector(std::string_view name) const {
    return vector_(name, false);
  }
  const std::vector<double>& vector(std::string_view name, allow_non_finite_t) const {
    return vector_(name, true);
  }
  /// The same, and its length must be `size`.
  const std::vector<double>& vector(std::string_view name, std::size_t size) const {
    return check_size(vector_(name, false), name, size);
  }
  const std::vector<double>& vector(std::string_view name, std::size_t size,
                                    allow_non_finite_t) const {
    return check_size(vector_(name, true), name, size);
  }

  /// A matrix: a list of rows, each with the same number of numbers (finite unless
  /// allow_non_finite is given). An empty list is a 0 × 0 matrix.
  const matrix_data& matrix(std::string_view name) const { return matrix_(name, false); }
  const matrix_data& matrix(std::string_view name, allow_non_finite_t) const {
    return matrix_(name, true);
  }
  /// The same, and it must be rows × cols.
  const matrix_data& matrix(std::string_view name, std::size_t rows, std::size_t cols) const {
    const auto& m = matrix_(name, false);
    if (m.rows != rows || m.cols != cols)
      fail("'" + std::string(name) + "' is " + std::to_string(m.rows) + " × " +
           std::to_string(m.cols) + ", expected " + std::to_string(rows) + " × " +
           std::to_string(cols));
    return m;
  }

  /// A one-dimensional array of integers (each an integral value in int's range).
  std::vector<int> integers(std::string_view name) const {
    const auto& v = get(name);
    if (!v.is_array) fail("'" + v.name + "' is " + v.kind + ", expected an array of integers");
    if (!v.numeric) fail(v.problem);
    if (v.dims.size() != 1)
      fail("'" + v.name + "' is " + describe(v) + ", expected a 1-d array of integers");
    std::vector<int> out;
    out.reserve(v.data.values.size());
    for (std::size_t i = 0; i < v.data.values.size(); ++i)
      out.push_back(to_int(v.data.values[i], detail::json_io::element_name(v.name, {v.first_row + i})));
    return out;
  }
  /// The same, and its length must be `size`.
  std::vector<int> integers(std::string_view name, std::size_t size) const {
    auto out = integers(name);
    if (out.size() != size)
      fail("'" + std::string(name) + "' has " + std::to_string(out.size()) +
           " elements, expected " + std::to_string(size));
    return out;
  }
  /// Stan's 1-based indices (a group, a category: each in 1 … count), `size` of them, as the
  /// 0-based ints gather(v, idx, "name") takes: each minus 1. An element outside 1 … count is
  /// refused with the file, its position in the file and its value — a file of 0-based indices
  /// too, which would otherwise shift every group by one where the top index does not occur.
  std::vector<int> indices(std::string_view name, std::size_t size, int count) const {
    if (count < 1) fail("indices('" + std::string(name) + "', ..., count = " + std::to_string(count) + "): count must be >= 1");
    auto out = integers(name, size);
    const auto& v = get(name);
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (out[i] < 1 || out[i] > count)
        fail(detail::json_io::element_name(v.name, {v.first_row + i}) + " = " + std::to_string(out[i]) +
             " is outside 1 … " + std::to_string(count) + " (indices() reads Stan's 1-based indices)");
      --out[i];
    }
    return out;
  }

 private:
  friend data_file parse_json_data(std::string_view, std::string_view);
  friend data_file parse_json_data(std::string_view, std::string_view, const json_rows&);
  friend data_file read_json_data(const std::string&);
  friend data_file read_json_data(const std::string&, const json_rows&);

  std::string source_;
  std::vector<detail::json_io::variable> vars_;
  data_rows rows_;

  // parse() under the reader's messages: the file is not valid JSON, or not an object of variables.
  template <class Parse>
  static detail::json_io::json parsed_object(const data_file& d, Parse&& parse) {
    using detail::json_io::json;
    json j;
    try {
      j = parse();
    } catch (const json::parse_error& e) {
      d.fail("not valid JSON: " + detail::json_io::strip_prefix(e.what()) + " (byte " + std::to_string(e.byte) + ")");
    } catch (const json::exception& e) {  // e.g. out_of_range: a number too large for a double
      d.fail("not valid JSON: " + detail::json_io::strip_prefix(e.what()));
    }
    if (!j.is_object())
      d.fail("the top level is " + detail::json_io::describe(j) + ", expected an object of named variables");
    return j;
  }

  // The file's variables in file order: the arrays as the stream converted them, the others from
  // nlohmann's tree.
  static void take_variables(data_file& d, detail::json_io::json& j, detail::json_io::row_stream& stream) {
    d.vars_.reserve(j.size());
    for (auto& [name, value] : j.items()) {
      detail::json_io::variable* streamed = nullptr;
      if (value.is_array())
        for (auto& a : stream.arrays)
          if (a.name == name) streamed = &a;
      d.vars_.push_back(streamed ? std::move(*streamed) : detail::json_io::make_variable(name, value));
    }
  }

  // The whole file: parse(stream) parses it with a row_stream as nlohmann's callback.
  template <class Parse>
  static data_file from_parse(std::string source, Parse&& parse) {
    data_file d;
    d.source_ = std::move(source);
    detail::json_io::row_stream stream;
    detail::json_io::json j = parsed_object(d, [&] { return parse(stream); });
    take_variables(d, j, stream);
    return d;
  }

  // The json_rows reading: parse(callback) parses the file with a row_cutter (the first pass of a
  // part) or a row_stream (the block) as nlohmann's callback.
  template <class Parse>
  static data_file from_rows(std::string source, const json_rows& rows, Parse&& parse) {
    using detail::json_io::json;
    data_file d;
    d.source_ = std::move(source);
    const auto& names = rows.variables;
    if (names.empty()) d.fail("json_rows names no variable whose rows to cut");
    for (std::size_t k = 0; k < names.size(); ++k)
      for (std::size_t l = k + 1; l < names.size(); ++l)
        if (names[k] == names[l]) d.fail("json_rows names '" + names[k] + "' twice");
    const bool by_part = rows.end == json_rows::no_end;
    if (by_part && rows.begin != 0)
      d.fail("json_rows rows begin = " + std::to_string(rows.begin) + " without an end: give both, or a part");
    if (!by_part && (rows.part != 0 || rows.parts != 1))
      d.fail("json_rows part " + std::to_string(rows.part) + " of " + std::to_string(rows.parts) + " and rows [" +
             std::to_string(rows.begin) + ", " + std::to_string(rows.end) + "): give one of the two");
    if (by_part && (rows.parts < 1 || rows.part < 0 || rows.part >= rows.parts))
      d.fail("json_rows part " + std::to_string(rows.part) + " of " + std::to_string(rows.parts) +
             ": expected parts ≥ 1 and 0 ≤ part < parts");
    if (!by_part && rows.begin > rows.end)
      d.fail("json_rows rows [" + std::to_string(rows.begin) + ", " + std::to_string(rows.end) +
             "): begin is past end");
    auto parsed = [&](auto& callback) {  // the file, and the cut variables checked
      json j = parsed_object(d, [&] { return parse(callback); });
      for (std::size_t k = 0; k < names.size(); ++k) {
        if (callback.seen[k] == 0) {
          std::string list;
          if constexpr (requires { callback.keys; })  // the counting pass: its tree lacks the others
            for (const auto& name : callback.keys) list += (list.empty() ? "" : ", ") + name;
          else
            for (const auto& [name, value] : j.items()) list += (list.empty() ? "" : ", ") + name;
          d.fail("json_rows cuts the rows of '" + names[k] + "', which is not in the file (variables: " +
                 (list.empty() ? std::string("none") : list) + ")");
        }
        if (callback.seen[k] == 2)
          d.fail("'" + names[k] + "' is " + detail::json_io::describe(j[names[k]]) +
                 ": json_rows cuts the rows of arrays only");
        if (callback.rows[k] != callback.rows[0])
          d.fail("'" + names[k] + "' has " + std::to_string(callback.rows[k]) + " rows and '" + names[0] + "' " +
                 std::to_string(callback.rows[0]) + ": json_rows cuts variables with the same number of rows");
      }
      return j;
    };
    std::size_t begin = rows.begin, end = rows.end;
    if (by_part) {  // the first pass: the number of rows, none stored
      detail::json_io::row_cutter count(names);
      parsed(count);
      const std::size_t n = count.rows[0], p = static_cast<std::size_t>(rows.parts),
                        k = static_cast<std::size_t>(rows.part), base = n / p, extra = n % p;
      begin = k * base + std::min(k, extra);
      end = begin + base + (k < extra ? 1 : 0);
    }
    detail::json_io::row_stream stream(names, begin, end);
    json j = parsed(stream);
    const std::size_t n = stream.rows[0];
    if (end > n)
      d.fail("json_rows rows [" + std::to_string(begin) + ", " + std::to_string(end) + ") of '" + names[0] +
             "', which has " + std::to_string(n));
    d.rows_ = {begin, end, n};
    take_variables(d, j, stream);
    return d;
  }

  static std::string describe(const detail::json_io::variable& v) {
    return detail::json_io::describe(v);
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw std::invalid_argument(detail::json_io::printable(source_ + ": " + what));
  }

  const detail::json_io::variable* find(std::string_view name) const {
    for (const auto& v : vars_)
      if (v.name == name) return &v;
    return nullptr;
  }

  const detail::json_io::variable& get(std::string_view name) const {
    if (const auto* v = find(name)) return *v;
    std::string list;
    for (const auto& v : vars_) list += (list.empty() ? "" : ", ") + v.name;
    fail("no variable '" + std::string(name) + "' (variables: " +
         (list.empty() ? std::string("none") : list) + ")");
  }

  const detail::json_io::variable& numeric(std::string_view name) const {
    const auto& v = get(name);
    if (!v.numeric) fail(v.problem);
    return v;
  }

  void check_finite(const std::vector<double>& xs, const detail::json_io::variable& v) const {
    for (std::size_t i = 0; i < xs.size(); ++i) {
      if (std::isfinite(xs[i])) continue;
      std::vector<std::size_t> index;
      if (v.dims.size() == 2 && v.dims[1] > 0) index = {v.first_row + i / v.dims[1], i % v.dims[1]};
      else if (!v.dims.empty()) index = {v.first_row + i};
      const std::string what =
          index.empty() ? v.name : detail::json_io::element_name(v.name, index);
      fail(what + " = " + detail::json_io::format_number(xs[i]) +
           " is not finite (pass tyche::allow_non_finite to accept it)");
    }
  }

  int to_int(double x, const std::string& what) const {
    if (!(x == std::floor(x)) || std::isinf(x))
      fail(what + " = " + detail::json_io::format_number(x) + " is not an integer");
    if (x < static_cast<double>(std::numeric_limits<int>::min()) ||
        x > static_cast<double>(std::numeric_limits<int>::max()))
      fail(what + " = " + detail::json_io::format_number(x) + " is out of the range of int");
    return static_cast<int>(x);
  }

  /// The value of a variable that must be a number (`expected` says what was asked for).
  double number(std::string_view name, const char* expected) const {
    const auto& v = get(name);
    if (!v.numeric || !v.dims.empty())
      fail("'" + v.name + "' is " + describe(v) + ", expected " + expected);
    return v.data.values[0];
  }

  double scalar_(std::string_view name, bool non_finite_ok) const {
    const double x = number(name, "a number");
    if (!non_finite_ok && !std::isfinite(x))
      fail(std::string(name) + " = " + detail::json_io::format_number(x) +
           " is not finite (pass tyche::allow_non_finite to accept it)");
    return x;
  }

  const std::vector<double>& vector_(std::string_view name, bool non_finite_ok) const {
    const auto& v = get(name);
    if (!v.is_array) fail("'" + v.name + "' is " + v.kind + ", expected an array");
    if (!v.numeric) fail(v.problem);
    if (v.dims.size() != 1)
      fail("'" + v.name + "' is " + describe(v) + ", expected a 1-d array" +
           (v.dims.size() == 2 ? " (use matrix())" : ""));
    if (!non_finite_ok) check_finite(v.data.values, v);
    return v.data.values;
  }

  const std::vector<double>& check_size(const std::vector<double>& xs, std::string_view name,
                                        std::size_t size) const {
    if (xs.size() != size)
      fail("'" + std::string(name) + "' has " + std::to_string(xs.size()) +
           " elements, expected " + std::to_string(size));
    return xs;
  }

  const matrix_data& matrix_(std::string_view name, bool non_finite_ok) const {
    const auto& v = get(name);
    if (!v.is_array)
      fail("'" + v.name + "' is " + v.kind + ", expected a matrix (a list of rows)");
    if (!v.numeric) fail(v.problem);
    const bool empty_list = v.dims.size() == 1 && v.dims[0] == 0;
    if (v.dims.size() != 2 && !empty_list)
      fail("'" + v.name + "' is " + describe(v) + ", expected a matrix (a list of rows)");
    if (!non_finite_ok) check_finite(v.data.values, v);
    return v.data;
  }
};

// The reader's two entry points are where nlohmann-json's parser is instantiated: about 3.8 s of
// g++ -O2 and 100 KB of code in every translation unit that reads a data file (2026-11-29). With
// TYCHE_SEPARATE_DRIVER they are declared here and defined once, in the driver's source file
// (src/tyche_nuts_driver.cpp includes this header where nlohmann-json is found); header-only, they
// are inline functions as before. The same switch as config.hpp's TYCHE_DRIVER_INLINE and
// TYCHE_DRIVER_BODIES, under names of its own: this header includes no other tyche header (a
// single-header program takes it from include/, beside single_include/).
#if defined(TYCHE_SEPARATE_DRIVER)
#define TYCHE_DETAIL_JSON_INLINE
#if defined(TYCHE_NUTS_DRIVER_SOURCE)
#define TYCHE_DETAIL_JSON_BODIES 1
#else
#define TYCHE_DETAIL_JSON_BODIES 0
#endif
#else
#define TYCHE_DETAIL_JSON_INLINE inline
#define TYCHE_DETAIL_JSON_BODIES 1
#endif

/// Parses JSON text in CmdStan's data format. `source` names the text in error messages.
TYCHE_DETAIL_JSON_INLINE data_file parse_json_data(std::string_view text, std::string_view source = "<json>")
#if TYCHE_DETAIL_JSON_BODIES
{
  using detail::json_io::json;
  return data_file::from_parse(std::string(source), [&](detail::json_io::row_stream& stream) {
    return json::parse(text.begin(), text.end(), std::ref(stream));
  });
}
#else
;  // defined in the driver's source file (TYCHE_SEPARATE_DRIVER)
#endif

/// Reads a file in CmdStan's JSON data format; messages name it by `path` as given.
TYCHE_DETAIL_JSON_INLINE data_file read_json_data(const std::string& path)
#if TYCHE_DETAIL_JSON_BODIES
{
  std::ifstream in = detail::json_io::open_data_file(path);
  // Parsed from the stream, not read into a string first, and each array's rows converted as they
  // end (row_stream): neither the text nor nlohmann's tree of it is held whole (a 320 MB file:
  // 1,525 MB of peak memory before, 872 MB parsing from the stream, 260 MB with row_stream;
  // bench/json_rows.cpp, docs/benchmarks.md, 2026-12-04).
  // (A read error part way through looks like the end of the text to nlohmann's stream reader:
  // "not valid JSON: ... unexpected end of input".)
  return data_file::from_parse(path, [&](detail::json_io::row_stream& stream) {
    return detail::json_io::json::parse(in, std::ref(stream));
  });
}
#else
;  // defined in the driver's source file (TYCHE_SEPARATE_DRIVER)
#endif

/// Parses JSON text in CmdStan's data format, keeping only a block of the rows of the variables
/// `rows` names (json_rows).
TYCHE_DETAIL_JSON_INLINE data_file parse_json_data(std::string_view text, std::string_view source, const json_rows& rows)
#if TYCHE_DETAIL_JSON_BODIES
{
  using detail::json_io::json;
  return data_file::from_rows(std::string(source), rows, [&](auto& callback) {
    return json::parse(text.begin(), text.end(), std::ref(callback));
  });
}
#else
;  // defined in the driver's source file (TYCHE_SEPARATE_DRIVER)
#endif

/// Reads a file in CmdStan's JSON data format, keeping only a block of the rows of the variables
/// `rows` names (json_rows): one process's share of a data set too large to hold whole in each
/// (tyche::mpi::nuts_sharded, docs/mpi.md). The file is parsed from the disk, not read into
/// memory first; a part (json_rows::part, parts) reads it twice.
TYCHE_DETAIL_JSON_INLINE data_file read_json_data(const std::string& path, const json_rows& rows)
#if TYCHE_DETAIL_JSON_BODIES
{
  using detail::json_io::json;
  std::ifstream in = detail::json_io::open_data_file(path);
  int pass = 0;
  return data_file::from_rows(path, rows, [&](auto& callback) {
    if (pass++ > 0) {  // the second pass of a part: from the start again
      in.clear();
      in.seekg(0);
      if (!in)
        throw std::invalid_argument(path + ": json_rows part " + std::to_string(rows.part) + " of " +
                                    std::to_string(rows.parts) +
                                    " reads the file twice, and it cannot go back to its start (a pipe?): read a "
                                    "regular file, or give the rows as .begin and .end");
    }
    return json::parse(in, std::ref(callback));
  });
}
#else
;  // defined in the driver's source file (TYCHE_SEPARATE_DRIVER)
#endif

}  // namespace tyche
