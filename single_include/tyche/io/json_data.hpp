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
// Optional part of tyche (CMake: tyche::io): it is NOT included by <tyche/tyche.hpp> nor part of
// the single header, so a program that reads no data file does not compile it. It includes no
// other tyche header, so it can be used next to the single header too. It needs nothing but the
// standard library (std::from_chars for doubles: libstdc++ 12 or later, libc++ 20 or later): its
// JSON parser is its own (below; until 2026-12-06 it was nlohmann-json's, with which a file that
// read a data file compiled in 3.2 s and 110 KB of code against 1.5 s and 65 KB now, g++ -O2).
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
//     data.json: not valid JSON: parse error at line 3, column 9: ... (byte 40)
// Rows of large variables (tyche::json_rows): read_json_data(path, {.variables = {"X", "y"},
// .part = r, .parts = P}) keeps only block r of P of the rows of X and y (one process of P, each
// holding its own block: docs/mpi.md), or .begin/.end an explicit range; the rows outside it are
// skipped as they are parsed, never stored and not checked (but the file's first row, which every
// part checks). Every array's rows are converted to doubles as they are parsed, so neither the
// text nor a tree of it is held whole (a row at a time is).
//
// Element indices in messages are 1-based, as in Stan: y[1] is the first element of y, X[2, 3]
// the third element of the second row of X, "row 4" the fourth row. (Indexing the returned
// std::vector / matrix_data in C++ is 0-based as usual.)
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <istream>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

// The parser reads numbers with std::from_chars for double: libstdc++ 11's version (strtod's)
// reads subnormal numbers as out of range, and libc++ has none before LLVM 20.
#if defined(_GLIBCXX_RELEASE) && _GLIBCXX_RELEASE < 12
#error "tyche/io/json_data.hpp needs libstdc++ 12 or later (std::from_chars for double)"
#elif defined(_LIBCPP_VERSION) && _LIBCPP_VERSION < 200000
#error "tyche/io/json_data.hpp needs libc++ 20 or later (std::from_chars for double)"
#endif

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
/// A JSON value as the reader keeps it: a number, a string's text, a boolean, null, an array's
/// elements — to a depth past max_rank; deeper ones are parsed and checked, not kept — or that
/// it is an object (its members are checked, not kept: no Stan data is an object).
struct value {
  enum class kind : unsigned char { null, boolean, number, string, array, object };
  kind type = kind::null;
  bool flag = false;         // a boolean's value
  double number = 0;         // a number's value
  std::string text;          // a string's value (UTF-8)
  std::vector<value> items;  // an array's elements, where kept

  [[nodiscard]] bool is_array() const noexcept { return type == kind::array; }
  [[nodiscard]] std::size_t size() const noexcept { return items.size(); }
  [[nodiscard]] bool empty() const noexcept { return items.empty(); }
  [[nodiscard]] const value& front() const { return items.front(); }
  [[nodiscard]] auto begin() const noexcept { return items.begin(); }
  [[nodiscard]] auto end() const noexcept { return items.end(); }
};

/// "a string (\"abc\")", "a boolean (true)", "null", "an object", "an array", "a number".
inline std::string describe(const value& j) {
  switch (j.type) {
    case value::kind::null: return "null";
    case value::kind::boolean: return std::string("a boolean (") + (j.flag ? "true" : "false") + ")";
    case value::kind::string: {
      std::string s = j.text;
      if (s.size() > 40) s = s.substr(0, 37) + "...";
      return "a string (\"" + s + "\")";
    }
    case value::kind::object: return "an object";
    case value::kind::array: return "an array";
    case value::kind::number: break;
  }
  return "a number";
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
inline bool to_double(const value& j, double& out) {
  if (j.type == value::kind::number) {
    out = j.number;
    return true;
  }
  if (j.type == value::kind::string) {
    std::string_view v = j.text;
    double sign = 1.0;
    if (!v.empty() && (v.front() == '+' || v.front() == '-')) {
      sign = v.front() == '-' ? -1.0 : 1.0;
      v.remove_prefix(1);
    }
    if (iequals(v, "inf") || iequals(v, "infinity")) {
      out = sign * std::numeric_limits<double>::infinity();
      return true;
    }
    if (iequals(j.text, "nan")) {
      out = std::numeric_limits<double>::quiet_NaN();
      return true;
    }
  }
  return false;
}

/// Where the text is not valid JSON: the message ("parse error at line L, column C: ...", L and C
/// counted from 1, C the column of the character that is wrong) and the byte (from 1) it is at.
struct parse_failure {
  std::string message;
  std::size_t byte = 0;
};

/// A JSON parser (RFC 8259) of text in memory or of a stream read a block at a time, which keeps
/// what the reader asks of it (value, above). It accepts what nlohmann-json 3.11, the parser it
/// replaced, accepts and refuses what that refuses — strings of well-formed UTF-8 only, escaped
/// control characters, paired surrogates, numbers in JSON's grammar and a double's range (a
/// number too small for one is 0), a UTF-8 byte order mark at the start, and, as that one, a NUL
/// byte outside a string taken as the end of the input (tests/fuzz/json_data_fuzz.cpp checks the
/// two against each other) — and it never recurses deeper than the values it keeps, so nesting
/// of any depth is read with a bounded stack.
class parser {
 public:
  explicit parser(std::string_view text) : at_(text.data()), end_(text.data() + text.size()) {}
  explicit parser(std::istream& in) : in_(&in), buffer_(std::size_t{1} << 16) {}
  parser(const parser&) = delete;
  parser& operator=(const parser&) = delete;

  /// The next byte (0–255), or −1 at the end of the input or at a NUL byte.
  int peek() {
    const int c = peek_raw();
    return c == 0 ? -1 : c;
  }
  /// Consumes the next byte.
  void advance() {
    const char c = *at_++;
    ++byte_;
    if (c == '\n') {
      ++line_;
      column_ = 0;
    } else {
      ++column_;
    }
  }
  /// At the start: a UTF-8 byte order mark is skipped (and a text that starts with a part of one
  /// is refused there).
  void skip_byte_order_mark() {
    if (peek_raw() != 0xEF) return;
    advance();
    if (peek_raw() != 0xBB) fail("an incomplete UTF-8 byte order mark");
    advance();
    if (peek_raw() != 0xBF) fail("an incomplete UTF-8 byte order mark");
    advance();
    line_ = 1;
    column_ = 0;
  }
  void skip_whitespace() {
    for (int c = peek(); c == ' ' || c == '\t' || c == '\n' || c == '\r'; c = peek()) advance();
  }
  /// Consumes c (after whitespace), or fails naming what was expected.
  void expect(char c, const char* expected) {
    skip_whitespace();
    if (peek() != c) fail_unexpected(expected);
    advance();
  }
  /// After an element of an array (close ']') or an object (close '}'): true and the comma
  /// consumed where another element follows, false and the closing bracket consumed where the
  /// container ends, else a failure.
  bool more(char close) {
    skip_whitespace();
    const int c = peek();
    if (c != ',' && c != close) fail_unexpected(close == ']' ? "',' or ']'" : "',' or '}'");
    advance();
    return c == ',';
  }
  /// The end of the input (after whitespace), or a failure.
  void expect_end() {
    skip_whitespace();
    if (peek() != -1) fail_unexpected("the end of the input");
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw parse_failure{"parse error at line " + std::to_string(line_) + ", column " + std::to_string(column_ + 1) +
                            ": " + what,
                        byte_ + 1};
  }
  /// "unexpected 'x'; expected …" at the next byte (or "unexpected end of input; expected …").
  [[noreturn]] void fail_unexpected(const char* expected) {
    const int c = peek();
    std::string what = "unexpected ";
    if (c == -1 && peek_raw() == 0) {
      what += "NUL byte (taken as the end of the input)";
    } else if (c == -1) {
      what += "end of input";
    } else if (c >= 0x20 && c < 0x7f) {
      what += "'";
      what += static_cast<char>(c);
      what += "'";
    } else {
      static constexpr char hex[] = "0123456789ABCDEF";
      what += "byte 0x";
      what += hex[c >> 4];
      what += hex[c & 15];
    }
    fail(what + "; expected " + expected);
  }

  /// One value, after whitespace, into *out (nullptr: checked only), its arrays' elements kept to
  /// `levels` levels below it (0: the value's own kind only).
  void parse_value(value* out, int levels) {
    skip_whitespace();
    const int c = peek();
    if (c == '[' && out != nullptr && levels > 0) {
      out->type = value::kind::array;
      advance();
      skip_whitespace();
      if (peek() == ']') {
        advance();
        return;
      }
      do {
        out->items.emplace_back();
        parse_value(&out->items.back(), levels - 1);
      } while (more(']'));
      return;
    }
    if (c == '[' || c == '{') {
      if (out != nullptr) out->type = c == '[' ? value::kind::array : value::kind::object;
      skip_container();
      return;
    }
    parse_scalar(out);
  }

  /// A string, after its opening quote is peeked: its text, UTF-8.
  std::string parse_string() {
    advance();  // "
    std::string s;
    for (;;) {
      const int c = peek_raw();
      if (c == -1) fail("unexpected end of input in a string; expected '\"'");
      if (c == '"') {
        advance();
        return s;
      }
      if (c < 0x20)
        fail("a control character (U+00" + hex2(c) + ") in a string must be escaped");
      if (c == '\\') {
        advance();
        escape(s);
        continue;
      }
      if (c < 0x80) {
        s += static_cast<char>(c);
        advance();
        continue;
      }
      utf8(s, c);
    }
  }

 private:
  const char* at_ = nullptr;
  const char* end_ = nullptr;
  std::istream* in_ = nullptr;
  std::vector<char> buffer_;
  std::size_t line_ = 1, column_ = 0, byte_ = 0;

  static std::string shortened(const std::string& s) { return s.size() > 40 ? s.substr(0, 37) + "..." : s; }
  static std::string hex2(int c) {
    static constexpr char hex[] = "0123456789ABCDEF";
    return {hex[(c >> 4) & 15], hex[c & 15]};
  }

  /// The next byte, NUL included, or −1 at the end (a stream's read failing part way through
  /// looks like the end of the input).
  int peek_raw() {
    if (at_ == end_ && !refill()) return -1;
    return static_cast<unsigned char>(*at_);
  }
  bool refill() {
    if (in_ == nullptr || !*in_) return false;
    in_->read(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    const auto got = static_cast<std::size_t>(in_->gcount());
    at_ = buffer_.data();
    end_ = at_ + got;
    return got > 0;
  }
  // A number, a string, true, false or null (the next byte starts it).
  void parse_scalar(value* out) {
    const int c = peek();
    if (c == '"') {
      std::string s = parse_string();
      if (out != nullptr) {
        out->type = value::kind::string;
        out->text = std::move(s);
      }
      return;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      const double x = parse_number();
      if (out != nullptr) {
        out->type = value::kind::number;
        out->number = x;
      }
      return;
    }
    for (const char* word : {"true", "false", "null"}) {
      if (c != word[0]) continue;
      for (const char* w = word; *w != '\0'; ++w) {
        if (peek() != static_cast<unsigned char>(*w)) fail_unexpected(("'" + std::string(word) + "'").c_str());
        advance();
      }
      if (out != nullptr) {
        out->type = word[0] == 'n' ? value::kind::null : value::kind::boolean;
        out->flag = word[0] == 't';
      }
      return;
    }
    fail_unexpected("a value: a number, a string, an array, an object, true, false or null");
  }

  // An array or an object with everything in it, checked and not kept, without recursion: the
  // closing brackets still to come on a stack.
  void skip_container() {
    std::vector<char> closers;
    closers.push_back(peek() == '[' ? ']' : '}');
    advance();
    bool opened = true;  // just after the opening bracket: the closing one may come
    for (;;) {
      skip_whitespace();
      if (opened && peek() == closers.back()) {
        advance();
        closers.pop_back();
      } else {
        if (closers.back() == '}') {  // a member: its name first
          if (peek() != '"') fail_unexpected("a name in double quotes");
          (void)parse_string();
          expect(':', "':'");
          skip_whitespace();
        }
        const int c = peek();
        if (c == '[' || c == '{') {
          closers.push_back(c == '[' ? ']' : '}');
          advance();
          opened = true;
          continue;
        }
        parse_scalar(nullptr);
      }
      // after a value: a comma, or the container's end (and then the same in the one around it)
      for (;;) {
        if (closers.empty()) return;
        skip_whitespace();
        const int c = peek();
        if (c == ',') {
          advance();
          opened = false;
          break;
        }
        if (c != closers.back()) fail_unexpected(closers.back() == ']' ? "',' or ']'" : "',' or '}'");
        advance();
        closers.pop_back();
      }
    }
  }

  // A number in JSON's grammar, -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, as the double
  // nearest to it (std::from_chars: correctly rounded, whatever the locale); one too large for a
  // double is refused, one too small is ±0.
  double parse_number() {
    std::string token;
    auto take = [&] {
      token += static_cast<char>(peek());
      advance();
    };
    auto digit = [&] {
      const int c = peek();
      return c >= '0' && c <= '9';
    };
    if (peek() == '-') take();
    if (!digit()) fail_unexpected("a digit");
    const bool leading_zero = peek() == '0';
    take();
    if (!leading_zero)
      while (digit()) take();
    if (peek() == '.') {
      take();
      if (!digit()) fail_unexpected("a digit after '.'");
      while (digit()) take();
    }
    long long exponent = 0;
    if (peek() == 'e' || peek() == 'E') {
      take();
      bool negative = false;
      if (peek() == '+' || peek() == '-') {
        negative = peek() == '-';
        take();
      }
      if (!digit()) fail_unexpected("a digit in the exponent");
      while (digit()) {
        if (exponent < 1000000000) exponent = exponent * 10 + (peek() - '0');
        take();
      }
      if (negative) exponent = -exponent;
    }
    double x = 0;
    const auto r = std::from_chars(token.data(), token.data() + token.size(), x);
    const bool integer = token.find_first_of(".eE") == std::string::npos;
    if (r.ec == std::errc::result_out_of_range) {
      // Too large or too small: by the decimal exponent of the first significant digit.
      long long lead = 0;  // digits before the point (leading zeros dropped), or −(zeros after it)
      bool before_point = true, significant = false;
      for (const char ch : token) {
        if (ch == '-') continue;
        if (ch == '.') {
          before_point = false;
          continue;
        }
        if (ch == 'e' || ch == 'E') break;
        if (ch != '0') significant = true;
        if (before_point && significant) ++lead;
        if (!before_point && !significant) --lead;
      }
      if (significant && exponent + lead > 0) fail("the number " + shortened(token) + " is out of the range of a double");
      x = token[0] == '-' ? -0.0 : 0.0;
    } else if (r.ec != std::errc{} || r.ptr != token.data() + token.size()) {
      fail("the number " + shortened(token) + " could not be read");
    }
    // An integer is an integer's value: -0 is 0, as nlohmann-json (which read integers as
    // integers) gave it; -0.0 and -0e1 stay -0.
    if (integer && x == 0) x = 0.0;
    return x;
  }

  // The escape after a backslash, appended to s as UTF-8.
  void escape(std::string& s) {
    const int c = peek_raw();
    if (c == -1) fail("unexpected end of input in a string; expected an escape after '\\'");
    switch (c) {
      case '"': s += '"'; break;
      case '\\': s += '\\'; break;
      case '/': s += '/'; break;
      case 'b': s += '\b'; break;
      case 'f': s += '\f'; break;
      case 'n': s += '\n'; break;
      case 'r': s += '\r'; break;
      case 't': s += '\t'; break;
      case 'u': {
        advance();
        unsigned code = hex4();
        if (code >= 0xDC00 && code <= 0xDFFF) fail("a low surrogate (\\u" + hex2(int(code >> 8)) + hex2(int(code & 255)) + ") without a high one before it");
        if (code >= 0xD800 && code <= 0xDBFF) {
          if (peek_raw() != '\\') fail("a high surrogate must be followed by a low one (\\uDC00 to \\uDFFF)");
          advance();
          if (peek_raw() != 'u') fail("a high surrogate must be followed by a low one (\\uDC00 to \\uDFFF)");
          advance();
          const unsigned low = hex4();
          if (low < 0xDC00 || low > 0xDFFF) fail("a high surrogate must be followed by a low one (\\uDC00 to \\uDFFF)");
          code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
        }
        append_utf8(s, code);
        return;
      }
      default: fail("an escape that is not one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX");
    }
    advance();
  }
  unsigned hex4() {
    unsigned code = 0;
    for (int k = 0; k < 4; ++k) {
      const int c = peek_raw();
      int h = -1;
      if (c >= '0' && c <= '9') h = c - '0';
      else if (c >= 'a' && c <= 'f') h = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') h = c - 'A' + 10;
      if (h < 0) fail("\\u must be followed by four hexadecimal digits");
      code = code * 16 + static_cast<unsigned>(h);
      advance();
    }
    return code;
  }
  static void append_utf8(std::string& s, unsigned code) {
    if (code < 0x80) {
      s += static_cast<char>(code);
    } else if (code < 0x800) {
      s += static_cast<char>(0xC0 | (code >> 6));
      s += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      s += static_cast<char>(0xE0 | (code >> 12));
      s += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      s += static_cast<char>(0xF0 | (code >> 18));
      s += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      s += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (code & 0x3F));
    }
  }
  // A multi-byte UTF-8 character whose first byte is c (≥ 0x80), checked as RFC 3629's table
  // (no overlong forms, no surrogates, nothing past U+10FFFF), appended to s.
  void utf8(std::string& s, int c) {
    int more = 0, low = 0x80, high = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) more = 1;
    else if (c == 0xE0) more = 2, low = 0xA0;
    else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) more = 2;
    else if (c == 0xED) more = 2, high = 0x9F;
    else if (c == 0xF0) more = 3, low = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) more = 3;
    else if (c == 0xF4) more = 3, high = 0x8F;
    else fail("a string holds a byte (0x" + hex2(c) + ") that is not UTF-8");
    s += static_cast<char>(c);
    advance();
    for (int k = 0; k < more; ++k) {
      const int b = peek_raw();
      if (b < low || b > high) fail("a string holds a byte sequence that is not UTF-8");
      s += static_cast<char>(b);
      advance();
      low = 0x80;
      high = 0xBF;
    }
  }
};

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
inline std::string flatten(const value& j, const std::string& var,
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

inline variable make_variable(const std::string& name, const value& j, std::size_t first_row = 0) {
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
  const value* p = &j;
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
/// "a number", "an array of 8 numbers", "a 5000 × 25 matrix", "a 2 × 3 × 4 array".
inline std::string describe(const variable& v) {
  if (!v.numeric) return v.kind;
  if (v.dims.empty()) return "a number";
  if (v.dims.size() == 1)
    return "an array of " + std::to_string(v.dims[0]) + (v.dims[0] == 1 ? " number" : " numbers");
  if (v.dims.size() == 2) return "a " + shape_text(v.dims) + " matrix";
  return "a " + shape_text(v.dims) + " array";
}

/// The reading of a data file (the whole of it, or json_rows' block, or json_rows' first pass,
/// which counts rows): the variables in file order — a name given twice keeps its first place and
/// its last value, as nlohmann-json's ordered object did — each top-level array converted a row
/// (an element) at a time as it is parsed, so neither the text nor a tree of it is held whole, only
/// the numbers, as doubles. A row's shape and messages are make_variable's: the dimensions below
/// the first from the first row's first elements, each row checked against them (flatten, from
/// the row's index in the file). With json_rows (`cut`: the variables; [begin, end): the block)
/// a cut variable's rows outside the block are parsed and checked as JSON but not converted,
/// except the file's first row, which is checked and gives the shape but is not kept; and once
/// a variable's row has a problem, its later rows are not converted either.
struct reading {
  const std::vector<std::string>* cut = nullptr;  // json_rows' variables, or null: the whole file
  bool counting = false;  // json_rows' first pass: the cut variables' rows counted, nothing kept
  std::size_t begin = 0, end = 0;
  std::vector<std::string> keys;    // every variable's name, in file order
  std::vector<variable> variables;  // (not counting) the variables, in file order
  std::vector<std::size_t> rows;    // per cut name: its rows in the file
  std::vector<int> seen;            // per cut name: 0 not in the file, 1 an array, 2 something else
  std::vector<std::string> kinds;   // per cut name seen as something else: describe() of it

  /// Reads the document; "" or, where its top level is not an object, describe() of that.
  std::string read(parser& p) {
    if (cut != nullptr) {
      rows.assign(cut->size(), 0);
      seen.assign(cut->size(), 0);
      kinds.assign(cut->size(), std::string());
    }
    p.skip_byte_order_mark();
    p.skip_whitespace();
    if (p.peek() != '{') {  // checked whole first: a syntax error is reported before the kind
      value top;
      p.parse_value(&top, 0);
      p.expect_end();
      return describe(top);
    }
    p.advance();
    p.skip_whitespace();
    if (p.peek() == '}') {
      p.advance();
    } else {
      do {
        p.skip_whitespace();
        if (p.peek() != '"') p.fail_unexpected("a variable's name in double quotes");
        const std::string name = p.parse_string();
        p.expect(':', "':'");
        p.skip_whitespace();
        read_variable(p, name);
      } while (p.more('}'));
    }
    p.expect_end();
    return {};
  }

 private:
  void read_variable(parser& p, const std::string& name) {
    if (std::find(keys.begin(), keys.end(), name) == keys.end()) keys.push_back(name);
    int k = -1;  // the name's index in *cut
    if (cut != nullptr)
      for (std::size_t i = 0; i < cut->size(); ++i)
        if ((*cut)[i] == name) k = static_cast<int>(i);
    if (counting && k < 0) {  // another variable: not needed to count the rows
      p.parse_value(nullptr, 0);
      return;
    }
    if (p.peek() == '[') {
      read_rows(p, name, k);
      return;
    }
    value v;
    p.parse_value(&v, static_cast<int>(max_rank) + 2);
    if (k >= 0) {
      seen[static_cast<std::size_t>(k)] = 2;
      kinds[static_cast<std::size_t>(k)] = describe(v);
    }
    if (!counting) keep(make_variable(name, v));
  }

  // A top-level array, a row at a time.
  void read_rows(parser& p, const std::string& name, int k) {
    const bool cutting = k >= 0;
    variable v;
    v.name = name;
    v.kind = "an array";
    v.is_array = true;
    v.numeric = true;
    if (cutting) {
      seen[static_cast<std::size_t>(k)] = 1;
      v.first_row = begin;
    }
    std::vector<std::size_t> dims{0};  // {0, the first row's shape...}
    std::size_t count = 0, kept = 0;
    p.advance();  // [
    p.skip_whitespace();
    if (p.peek() == ']') {
      p.advance();
    } else {
      do {
        const std::size_t row = count++;
        const bool outside = cutting && !(row >= begin && row < end);
        if (counting || !v.numeric || (outside && row != 0)) {
          p.parse_value(nullptr, 0);
        } else {
          value x;
          p.parse_value(&x, static_cast<int>(max_rank) + 2);
          convert(v, x, row, dims, outside ? nullptr : &kept);
        }
      } while (p.more(']'));
    }
    if (cutting) rows[static_cast<std::size_t>(k)] = count;
    if (counting) return;
    if (!v.numeric) {
      v.data.values.clear();
      v.data.values.shrink_to_fit();
    } else {
      dims[0] = kept;
      if (count == 0) dims.resize(1);  // [] (make_variable: the shape stops at an empty array)
      v.dims = dims;
      if (v.dims.size() == 2) {
        v.data.rows = v.dims[0];
        v.data.cols = v.dims[1];
      }
    }
    keep(std::move(v));
  }

  // Row `row` of variable v into its values (kept: counts the rows kept; null: the file's first
  // row outside json_rows' block, checked only). The shape from the first row.
  static void convert(variable& v, const value& x, std::size_t row, std::vector<std::size_t>& dims,
                      std::size_t* kept) {
    if (row == 0)
      for (const value* p = &x; p->is_array(); p = &p->front()) {
        if (dims.size() == max_rank) {
          v.problem = "'" + v.name + "' is nested more than " + std::to_string(max_rank) + " deep";
          v.numeric = false;
          return;
        }
        dims.push_back(p->size());
        if (p->empty()) break;
      }
    std::vector<std::size_t> index{row};
    if (kept == nullptr) {
      std::vector<double> ignored;
      v.problem = flatten(x, v.name, dims, index, ignored);
    } else {
      v.problem = flatten(x, v.name, dims, index, v.data.values);
      ++*kept;
    }
    v.numeric = v.problem.empty();
  }

  // A name given again keeps its first place, with the new value.
  void keep(variable v) {
    for (auto& w : variables)
      if (w.name == v.name) {
        w = std::move(v);
        return;
      }
    variables.push_back(std::move(v));
  }
};

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

  // The document read with r from p under the reader's messages: not valid JSON, or not an
  // object of variables.
  static void read_document(const data_file& d, detail::json_io::reading& r, detail::json_io::parser& p) {
    std::string top;
    try {
      top = r.read(p);
    } catch (const detail::json_io::parse_failure& e) {
      d.fail("not valid JSON: " + e.message + " (byte " + std::to_string(e.byte) + ")");
    }
    if (!top.empty()) d.fail("the top level is " + top + ", expected an object of named variables");
  }

  // The whole file, from parser p.
  static data_file from_parse(std::string source, detail::json_io::parser& p) {
    data_file d;
    d.source_ = std::move(source);
    detail::json_io::reading r;
    read_document(d, r, p);
    d.vars_ = std::move(r.variables);
    return d;
  }

  // The json_rows reading: pass(d, r) reads the file with r (once for a range; twice for a part,
  // the first pass counting the rows).
  template <class Pass>
  static data_file from_rows(std::string source, const json_rows& rows, Pass&& pass) {
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
    auto checked = [&](detail::json_io::reading& r) {  // the file read, and the cut variables checked
      r.cut = &names;
      pass(d, r);
      for (std::size_t k = 0; k < names.size(); ++k) {
        if (r.seen[k] == 0) {
          std::string list;
          for (const auto& name : r.keys) list += (list.empty() ? "" : ", ") + name;
          d.fail("json_rows cuts the rows of '" + names[k] + "', which is not in the file (variables: " +
                 (list.empty() ? std::string("none") : list) + ")");
        }
        if (r.seen[k] == 2) d.fail("'" + names[k] + "' is " + r.kinds[k] + ": json_rows cuts the rows of arrays only");
        if (r.rows[k] != r.rows[0])
          d.fail("'" + names[k] + "' has " + std::to_string(r.rows[k]) + " rows and '" + names[0] + "' " +
                 std::to_string(r.rows[0]) + ": json_rows cuts variables with the same number of rows");
      }
    };
    std::size_t begin = rows.begin, end = rows.end;
    if (by_part) {  // the first pass: the number of rows, none stored
      detail::json_io::reading count;
      count.counting = true;
      checked(count);
      const std::size_t n = count.rows[0], p = static_cast<std::size_t>(rows.parts),
                        k = static_cast<std::size_t>(rows.part), base = n / p, extra = n % p;
      begin = k * base + std::min(k, extra);
      end = begin + base + (k < extra ? 1 : 0);
    }
    detail::json_io::reading r;
    r.begin = begin;
    r.end = end;
    checked(r);
    const std::size_t n = r.rows[0];
    if (end > n)
      d.fail("json_rows rows [" + std::to_string(begin) + ", " + std::to_string(end) + ") of '" + names[0] +
             "', which has " + std::to_string(n));
    d.rows_ = {begin, end, n};
    d.vars_ = std::move(r.variables);
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

// The reader's four entry points: with TYCHE_SEPARATE_DRIVER they are declared here and defined
// once, in the driver's source file (src/tyche_nuts_driver.cpp includes this header); header-only,
// they are inline functions. (With nlohmann-json's parser, until 2026-12-06, that saved about 1.7 s
// of g++ -O2 and 45 KB of code in every file that read a data file; with the reader's own parser
// the difference is small.) The same switch as config.hpp's TYCHE_DRIVER_INLINE and
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
  detail::json_io::parser p(text);
  return data_file::from_parse(std::string(source), p);
}
#else
;  // defined in the driver's source file (TYCHE_SEPARATE_DRIVER)
#endif

/// Reads a file in CmdStan's JSON data format; messages name it by `path` as given.
TYCHE_DETAIL_JSON_INLINE data_file read_json_data(const std::string& path)
#if TYCHE_DETAIL_JSON_BODIES
{
  std::ifstream in = detail::json_io::open_data_file(path);
  // Parsed from the stream, 64 KB at a time, each array's rows converted as they end
  // (detail::json_io::reading): neither the text nor a tree of it is held whole (a 320 MB file:
  // 1,525 MB of peak memory with a tree of the whole file, 260 MB a row at a time;
  // bench/json_rows.cpp, docs/benchmarks.md, 2026-12-04). A read error part way through looks
  // like the end of the text: "not valid JSON: ... unexpected end of input".
  detail::json_io::parser p(in);
  return data_file::from_parse(path, p);
}
#else
;  // defined in the driver's source file (TYCHE_SEPARATE_DRIVER)
#endif

/// Parses JSON text in CmdStan's data format, keeping only a block of the rows of the variables
/// `rows` names (json_rows).
TYCHE_DETAIL_JSON_INLINE data_file parse_json_data(std::string_view text, std::string_view source, const json_rows& rows)
#if TYCHE_DETAIL_JSON_BODIES
{
  return data_file::from_rows(std::string(source), rows, [&](const data_file& d, detail::json_io::reading& r) {
    detail::json_io::parser p(text);
    data_file::read_document(d, r, p);
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
  std::ifstream in = detail::json_io::open_data_file(path);
  int pass = 0;
  return data_file::from_rows(path, rows, [&](const data_file& d, detail::json_io::reading& r) {
    if (pass++ > 0) {  // the second pass of a part: from the start again
      in.clear();
      in.seekg(0);
      if (!in)
        throw std::invalid_argument(path + ": json_rows part " + std::to_string(rows.part) + " of " +
                                    std::to_string(rows.parts) +
                                    " reads the file twice, and it cannot go back to its start (a pipe?): read a "
                                    "regular file, or give the rows as .begin and .end");
    }
    detail::json_io::parser p(in);
    data_file::read_document(d, r, p);
  });
}
#else
;  // defined in the driver's source file (TYCHE_SEPARATE_DRIVER)
#endif

}  // namespace tyche
