// CmdStan-format JSON data (tyche/io/json_data.hpp): every data set of ../shared/posteriors, the
// values and shapes, the interplay with the core's data views, and one test per error message.
//
// test_io is also built against single_include/ (test_io_single_header), which holds only the
// umbrella header; json_data.hpp is not part of it (an optional component) and includes no other
// tyche header, so it is taken from include/ there.
#if __has_include(<tyche/io/json_data.hpp>)
#include <tyche/io/json_data.hpp>
#else
#include "../../include/tyche/io/json_data.hpp"
#endif
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

using Catch::Matchers::Contains;
using Catch::Matchers::Equals;
using Catch::Matchers::StartsWith;
namespace fs = std::filesystem;

namespace {

const fs::path fixtures = fs::path(__FILE__).parent_path() / "data";

/// shared/posteriors, found by walking up from this file: beside the checkout
/// (<root>/../shared) or inside it (<root>/shared).
fs::path posteriors_dir() {
  for (fs::path p = fs::path(__FILE__).parent_path(); !p.empty(); p = p.parent_path()) {
    if (fs::is_directory(p / "shared" / "posteriors")) return p / "shared" / "posteriors";
    if (p == p.parent_path()) break;
  }
  return {};
}

tyche::data_file posterior(const std::string& name) {
  const fs::path dir = posteriors_dir();
  REQUIRE_FALSE(dir.empty());
  return tyche::read_json_data((dir / name / "data.json").string());
}

tyche::data_file parse(const std::string& text) { return tyche::parse_json_data(text, "data.json"); }

}  // namespace

// ---- the reference data sets -------------------------------------------------------------------

TEST_CASE("json_data: every shared/posteriors/*/data.json reads, and every variable converts",
          "[io][json_data]") {
  const fs::path dir = posteriors_dir();
  INFO("looked for shared/posteriors above " << fs::path(__FILE__).parent_path());
  REQUIRE_FALSE(dir.empty());
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const fs::path file = entry.path() / "data.json";
    if (!fs::is_regular_file(file)) continue;
    ++files;
    INFO(file);
    const auto d = tyche::read_json_data(file.string());
    CHECK(d.source() == file.string());
    CHECK_FALSE(d.names().empty());
    for (const auto& name : d.names()) {
      INFO(name);
      const auto& dims = d.dims(name);
      if (dims.empty()) {
        CHECK(std::isfinite(d.scalar(name)));
      } else if (dims.size() == 1) {
        CHECK(d.vector(name).size() == dims[0]);
      } else {
        REQUIRE(dims.size() == 2);
        const auto& m = d.matrix(name);
        CHECK(m.rows == dims[0]);
        CHECK(m.cols == dims[1]);
        CHECK(m.values.size() == m.rows * m.cols);
      }
    }
  }
  CHECK(files == 9);
}

TEST_CASE("json_data: Stan's 1-based indices as 0-based ones, each checked against its count", "[io][json_data]") {
  using Catch::Matchers::Contains;
  const auto d = parse(R"({"g": [1, 3, 2, 3], "h": [0, 1, 2], "k": [1, 2.5]})");
  CHECK(d.indices("g", 4, 3) == std::vector<int>{0, 2, 1, 2});
  // A 0-based file: refused at its first 0, by the file's own position and value.
  CHECK_THROWS_WITH(d.indices("h", 3, 3), Contains("data.json: h[1] = 0 is outside 1 … 3"));
  CHECK_THROWS_WITH(d.indices("g", 4, 2), Contains("g[2] = 3 is outside 1 … 2"));
  CHECK_THROWS_WITH(d.indices("g", 5, 3), Contains("'g' has 4 elements, expected 5"));
  CHECK_THROWS_WITH(d.indices("k", 2, 3), Contains("k[2] = 2.5 is not an integer"));
  CHECK_THROWS_WITH(d.indices("g", 4, 0), Contains("count must be >= 1"));
}

TEST_CASE("json_data: eight_schools", "[io][json_data]") {
  const auto d = posterior("eight_schools-eight_schools_noncentered");
  CHECK(d.names() == std::vector<std::string>{"J", "y", "sigma"});  // file order
  CHECK(d.contains("J"));
  CHECK_FALSE(d.contains("theta"));
  CHECK(d.scalar("J") == 8.0);
  const int J = d.integer("J");
  CHECK(J == 8);
  const std::vector<double>& y = d.vector("y");
  CHECK(y == std::vector<double>{28, 8, -3, 7, -1, 1, 18, 12});
  CHECK(&d.vector("y") == &y);  // stored inside d
  const std::vector<double> sigma = d.vector("sigma", static_cast<std::size_t>(J));
  CHECK(sigma == std::vector<double>{15, 10, 16, 11, 9, 11, 10, 18});
  CHECK(d.integers("y") == std::vector<int>{28, 8, -3, 7, -1, 1, 18, 12});
  CHECK(d.dims("y") == std::vector<std::size_t>{8});
  CHECK(d.dims("J").empty());
}

TEST_CASE("json_data: diamonds, a 5000 × 25 design matrix", "[io][json_data]") {
  // model.md: N = 5000, K = 25, X is N × K (the model drops the intercept column, leaving 24).
  const auto d = posterior("diamonds-diamonds");
  const int N = d.integer("N");
  const int K = d.integer("K");
  CHECK(N == 5000);
  CHECK(K == 25);
  CHECK(d.integer("prior_only") == 0);
  CHECK(d.vector("Y", 5000).front() == 7.99260665240021);
  CHECK(d.vector("Y").back() == 8.94585385712759);
  const tyche::matrix_data& X = d.matrix("X", 5000, 25);
  CHECK(X.rows == 5000);
  CHECK(X.cols == 25);
  REQUIRE(X.values.size() == 5000u * 25u);
  for (std::size_t i = 0; i < X.rows; ++i) REQUIRE(X.values[i * X.cols] == 1.0);  // intercept
  CHECK(X.values[1] == 0.82);
  CHECK(X.values[2] == 1.79175946922805);
  CHECK(X.values[3] == 1.79674701073909);
  CHECK(X.values[4999 * 25 + 24] == 1.92537182996336);  // X[5000, 25]
  CHECK(X.values[4999 * 25 + 22] == 2.59103819755953);
  CHECK(&d.matrix("X") == &X);
}

TEST_CASE("json_data: kidiq", "[io][json_data]") {
  const auto d = posterior("kidiq-kidscore_interaction");
  CHECK(d.integer("N") == 434);
  CHECK(d.vector("kid_score", 434).front() == 65);
  CHECK(d.vector("kid_score").back() == 70);
  CHECK(d.vector("mom_iq", 434).front() == 121.117528602603);
  const std::vector<int> hs = d.integers("mom_hs", 434);
  int ones = 0;
  for (int h : hs) {
    REQUIRE((h == 0 || h == 1));
    ones += h;
  }
  CHECK(ones == 341);
  CHECK(d.scalar("mom_hs_new") == 1);
  CHECK(d.scalar("mom_iq_new") == 100);
}

TEST_CASE("json_data: the other reference data sets", "[io][json_data]") {
  SECTION("arK") {
    const auto d = posterior("arK-arK");
    CHECK(d.integer("K") == 5);
    CHECK(d.integer("T") == 200);
    CHECK(d.vector("y", 200).front() == 0.729385275296256);
  }
  SECTION("garch") {
    const auto d = posterior("garch-garch11");
    CHECK(d.integer("T") == 200);
    CHECK(d.vector("y", 200).front() == 4.93766971429527);
    CHECK(d.scalar("sigma1") == 0.5);
    CHECK_THROWS_WITH(d.integer("sigma1"), Contains("sigma1 = 0.5 is not an integer"));
  }
  SECTION("gp_pois_regr") {
    const auto d = posterior("gp_pois_regr-gp_pois_regr");
    CHECK(d.integer("N") == 11);
    CHECK(d.vector("x", 11) == std::vector<double>{-10, -8, -6, -4, -2, 0, 2, 4, 6, 8, 10});
    CHECK(d.integers("k", 11) == std::vector<int>{40, 37, 29, 12, 4, 3, 9, 19, 77, 82, 33});
    CHECK(d.vector("y", 11).size() == 11);
    CHECK_THROWS_WITH(d.integers("y"), Contains("y[1] = 4.75906 is not an integer"));
  }
  SECTION("low_dim_gauss_mix") {
    const auto d = posterior("low_dim_gauss_mix-low_dim_gauss_mix");
    CHECK(d.integer("N") == 1000);
    CHECK(d.vector("y", 1000).front() == -3.58542974746427);
  }
  SECTION("mesquite") {
    const auto d = posterior("mesquite-logmesquite");
    CHECK(d.integer("N") == 46);
    for (const char* name :
         {"weight", "diam1", "diam2", "canopy_height", "total_height", "density", "group"})
      CHECK(d.vector(name, 46).size() == 46);
    const auto group = d.integers("group", 46);
    CHECK(std::count(group.begin(), group.end(), 0) == 26);
    CHECK(std::count(group.begin(), group.end(), 1) == 20);
    CHECK(d.vector("weight")[2] == 1179.2);
  }
  SECTION("sblrc") {
    const auto d = posterior("sblrc-blr");
    CHECK(d.integer("N") == 100);
    CHECK(d.integer("D") == 5);
    CHECK(d.vector("y", 100).front() == 35.5808955942513);
    const auto& X = d.matrix("X", 100, 5);
    CHECK(X.values[0] == 55.4044203094843);
    CHECK(X.values[4] == 186.783949750615);
    CHECK(X.values.back() == 266.736994758548);
  }
}

// ---- with the core ------------------------------------------------------------------------------

TEST_CASE("json_data: matrix_data and vectors feed tyche::matrix and tyche::data",
          "[io][json_data]") {
  const auto d = parse(R"({"N": 3, "y": [1, 2, 4], "X": [[1, 2], [3, 4], [5, 6]]})");
  const tyche::matrix_data& X = d.matrix("X");
  CHECK(X.values == std::vector<double>{1, 2, 3, 4, 5, 6});  // row-major
  const tyche::data_matrix view = tyche::matrix(X.values.data(), X.rows, X.cols);
  CHECK(view.ptr == X.values.data());
  CHECK(view.rows == 3);
  CHECK(view.cols == 2);
  tyche::vector_param<"b", 2> b;
  const auto f = tyche::compile(tyche::sum(tyche::matvec(view, b)));
  CHECK(f.value(std::vector<double>{2, 1}) == Approx(4 + 10 + 16));
  // vector() returns a reference into d, so tyche::data may keep a view of it.
  tyche::param<"mu"> mu;
  const auto g = tyche::compile(tyche::sum(tyche::data(d.vector("y", 3)) * mu));
  CHECK(g.value(std::vector<double>{2.0}) == Approx(14.0));
}

// ---- values -------------------------------------------------------------------------------------

TEST_CASE("json_data: integers and reals, empty arrays, copies", "[io][json_data]") {
  const auto d = parse(R"({"a": 3.0, "b": -7, "c": [], "d": [[], []], "e": [1e2, 2.5e-1],
                           "big": 2147483647, "z": [[1, 2, 3]]})");
  CHECK(d.integer("a") == 3);  // an integral real counts as an integer
  CHECK(d.integer("b") == -7);
  CHECK(d.integer("big") == 2147483647);
  CHECK(d.vector("c").empty());
  CHECK(d.vector("c", 0).empty());
  CHECK(d.integers("c").empty());
  const auto& empty = d.matrix("c");  // an empty list is a 0 × 0 matrix
  CHECK(empty.rows == 0);
  CHECK(empty.cols == 0);
  const auto& two_empty_rows = d.matrix("d");
  CHECK(two_empty_rows.rows == 2);
  CHECK(two_empty_rows.cols == 0);
  CHECK(d.vector("e") == std::vector<double>{100, 0.25});
  CHECK(d.matrix("z").rows == 1);
  CHECK(d.dims("z") == std::vector<std::size_t>{1, 3});
  const tyche::data_file copy = d;
  CHECK(copy.vector("e") == d.vector("e"));
  CHECK(&copy.vector("e") != &d.vector("e"));
  const tyche::data_file empty_file = parse("{}");
  CHECK(empty_file.names().empty());
  CHECK_THROWS_WITH(empty_file.scalar("x"), Contains("no variable 'x' (variables: none)"));
}

TEST_CASE("json_data: NaN and infinities, written as strings, need allow_non_finite",
          "[io][json_data]") {
  const auto d = tyche::read_json_data((fixtures / "non_finite.json").string());
  const auto& y = d.vector("y", tyche::allow_non_finite);
  REQUIRE(y.size() == 4);
  CHECK(y[0] == 1.5);
  CHECK(std::isnan(y[1]));
  CHECK(y[2] == INFINITY);
  CHECK(y[3] == -INFINITY);
  const auto& z = d.vector("z", 4, tyche::allow_non_finite);  // "+inf", "-Infinity", "nan"
  CHECK(z[0] == INFINITY);
  CHECK(z[1] == -INFINITY);
  CHECK(std::isnan(z[2]));
  CHECK(z[3] == 2);
  CHECK(std::isnan(d.matrix("X", tyche::allow_non_finite).values[2]));
  CHECK(d.scalar("s", tyche::allow_non_finite) == -INFINITY);

  CHECK_THROWS_AS(d.vector("y"), std::invalid_argument);
  CHECK_THROWS_WITH(d.vector("y"), StartsWith((fixtures / "non_finite.json").string() + ": ") &&
                                       Contains("y[2] = nan is not finite"));
  CHECK_THROWS_WITH(d.vector("y", 4), Contains("y[2] = nan is not finite"));
  CHECK_THROWS_WITH(d.vector("z"), Contains("z[1] = inf is not finite"));
  CHECK_THROWS_WITH(d.matrix("X"), Contains("X[2, 1] = nan is not finite"));
  CHECK_THROWS_WITH(d.scalar("s"), Contains("s = -inf is not finite"));
  CHECK_THROWS_WITH(d.integers("z"), Contains("z[1] = inf is not an integer"));
  CHECK_THROWS_WITH(parse(R"({"k": [1, "NaN"]})").integers("k"),
                    Contains("k[2] = nan is not an integer"));
  CHECK_THROWS_WITH(parse(R"({"N": "Inf"})").integer("N"), Contains("N = inf is not an integer"));
}

// ---- errors: one per message ----------------------------------------------------------------------

TEST_CASE("json_data: a missing variable lists the variables there are", "[io][json_data]") {
  const auto d = parse(R"({"J": 8, "sigma": [15, 10]})");
  CHECK_THROWS_AS(d.vector("y"), std::invalid_argument);
  CHECK_THROWS_WITH(d.vector("y"), Equals("data.json: no variable 'y' (variables: J, sigma)"));
  CHECK_THROWS_WITH(d.scalar("N"), Contains("no variable 'N'"));
  CHECK_THROWS_WITH(d.matrix("X"), Contains("no variable 'X'"));
  CHECK_THROWS_WITH(d.integers("k"), Contains("no variable 'k'"));
  CHECK_THROWS_WITH(d.dims("k"), Contains("no variable 'k'"));
}

TEST_CASE("json_data: control characters in a name are escaped in messages", "[io][json_data]") {
  // JSON allows any character in a name, NUL included: what() would end at it.
  const auto d = parse(R"({"a\u0000b": "x", "c\u0001\td": [1, "z"]})");
  const std::string nul_name("a\0b", 3);
  REQUIRE(d.contains(nul_name));
  CHECK_THROWS_WITH(d.scalar(nul_name), Equals(R"(data.json: 'a\u0000b' is a string ("x"), expected a number)"));
  CHECK_THROWS_WITH(d.vector("c\x01\td"), Contains(R"(c\u0001\u0009d[2] is a string)"));
  CHECK_THROWS_WITH(d.scalar(std::string("q\0r", 3)), Contains(R"(no variable 'q\u0000r' (variables: a\u0000b, c\u0001\u0009d))"));
}

TEST_CASE("json_data: the wrong kind of value", "[io][json_data]") {
  const auto d = parse(R"({"y": 3, "v": [1, 2], "X": [[1, 2]], "s": "abc", "b": true,
                           "n": null, "o": {"a": 1}, "A": [[[1]]]})");
  CHECK_THROWS_WITH(d.vector("y"), Equals("data.json: 'y' is a number, expected an array"));
  CHECK_THROWS_WITH(d.scalar("v"), Contains("'v' is an array of 2 numbers, expected a number"));
  CHECK_THROWS_WITH(d.integer("v"), Contains("'v' is an array of 2 numbers, expected an integer"));
  CHECK_THROWS_WITH(d.vector("X"), Contains("'X' is a 1 × 2 matrix, expected a 1-d array"));
  CHECK_THROWS_WITH(d.matrix("v"),
                    Contains("'v' is an array of 2 numbers, expected a matrix (a list of rows)"));
  CHECK_THROWS_WITH(d.matrix("y"), Contains("'y' is a number, expected a matrix"));
  CHECK_THROWS_WITH(d.matrix("A"), Contains("'A' is a 1 × 1 × 1 array, expected a matrix"));
  CHECK_THROWS_WITH(d.integers("y"), Contains("'y' is a number, expected an array of integers"));
  CHECK_THROWS_WITH(d.scalar("s"), Contains("'s' is a string (\"abc\"), expected a number"));
  CHECK_THROWS_WITH(d.vector("s"), Contains("'s' is a string (\"abc\"), expected an array"));
  CHECK_THROWS_WITH(d.scalar("b"), Contains("'b' is a boolean (true), expected a number"));
  CHECK_THROWS_WITH(d.scalar("n"), Contains("'n' is null, expected a number"));
  CHECK_THROWS_WITH(d.vector("o"), Contains("'o' is an object, expected an array"));
  CHECK(d.contains("s"));  // present, just not numeric
}

TEST_CASE("json_data: a non-numeric element is named with its 1-based index", "[io][json_data]") {
  const auto d = parse(R"({"y": [1, 2, "abc", 4], "b": [1, false], "n": [null],
                           "X": [[1, 2], [3, {}]], "v": [1, [2]]})");
  CHECK_THROWS_WITH(d.vector("y"),
                    Equals("data.json: y[3] is a string (\"abc\"), expected a number"));
  CHECK_THROWS_WITH(d.integers("y"), Contains("y[3] is a string"));
  CHECK_THROWS_WITH(d.vector("b"), Contains("b[2] is a boolean (false), expected a number"));
  CHECK_THROWS_WITH(d.vector("n"), Contains("n[1] is null"));
  CHECK_THROWS_WITH(d.matrix("X"), Contains("X[2, 2] is an object, expected a number"));
  CHECK_THROWS_WITH(d.vector("v"), Contains("v[2] is an array, expected a number"));
  CHECK_THROWS_WITH(d.scalar("y"), Contains("'y' is an array, expected a number"));
  // Strings other than CmdStan's NaN / Inf spellings are not numbers.
  CHECK_THROWS_WITH(parse(R"({"y": ["1.5"]})").vector("y"), Contains("y[1] is a string (\"1.5\")"));
  CHECK_THROWS_WITH(parse(R"({"y": ["Infinit"]})").vector("y"), Contains("y[1] is a string"));
}

TEST_CASE("json_data: ragged matrix rows", "[io][json_data]") {
  std::string rows;
  for (int i = 0; i < 6; ++i) rows += std::string(i ? ", " : "") + (i == 3 ? "[" : "[0, ") +
                                      "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, "
                                      "17, 18, 19, 20, 21, 22, 23]";
  const auto d = parse(R"({"X": [)" + rows + "]}");
  CHECK_THROWS_AS(d.matrix("X"), std::invalid_argument);
  CHECK_THROWS_WITH(d.matrix("X"), Equals("data.json: X row 4 has 23 elements, expected 24"));
  CHECK_THROWS_WITH(parse(R"({"X": [[1, 2], 3]})").matrix("X"),
                    Contains("X row 2 is a number, expected an array of 2 elements"));
  CHECK_THROWS_WITH(parse(R"({"A": [[[1, 2], [3, 4]], [[5, 6], [7]]]})").dims("A"),
                    Contains("A[2, 2] has 1 elements, expected 2"));
  const auto f = tyche::read_json_data((fixtures / "ragged.json").string());
  CHECK(f.integer("N") == 3);  // the other variables are still there
  CHECK_THROWS_WITH(f.matrix("X"), StartsWith((fixtures / "ragged.json").string()) &&
                                       Contains("X row 3 has 2 elements, expected 3"));
}

TEST_CASE("json_data: a non-integer where an integer is required", "[io][json_data]") {
  const auto d = parse(R"({"N": 3.5, "k": [1, 2, 2.25], "big": 3e9, "neg": -2147483649})");
  CHECK_THROWS_WITH(d.integer("N"), Equals("data.json: N = 3.5 is not an integer"));
  CHECK(d.scalar("N") == 3.5);
  CHECK_THROWS_WITH(d.integers("k"), Contains("k[3] = 2.25 is not an integer"));
  CHECK_THROWS_WITH(d.integer("big"), Contains("big = 3e+09 is out of the range of int"));
  CHECK_THROWS_WITH(d.integer("neg"), Contains("neg = -2147483649 is out of the range of int"));
}

TEST_CASE("json_data: lengths checked against the expected ones", "[io][json_data]") {
  const auto d = parse(R"({"y": [1, 2, 3], "X": [[1, 2], [3, 4]]})");
  CHECK(d.vector("y", 3).size() == 3);
  CHECK_THROWS_WITH(d.vector("y", 8), Equals("data.json: 'y' has 3 elements, expected 8"));
  CHECK_THROWS_WITH(d.integers("y", 2), Contains("'y' has 3 elements, expected 2"));
  CHECK_THROWS_WITH(d.matrix("X", 2, 3), Contains("'X' is 2 × 2, expected 2 × 3"));
}

TEST_CASE("json_data: malformed JSON gives the line and column", "[io][json_data]") {
  CHECK_THROWS_AS(parse(R"({"y": [1, 2,)"), std::invalid_argument);
  CHECK_THROWS_WITH(parse(R"({"y": [1, 2,)"),
                    StartsWith("data.json: not valid JSON: parse error at line 1, column 13"));
  CHECK_THROWS_WITH(parse(""), Contains("not valid JSON"));
  CHECK_THROWS_WITH(parse(R"({"y": NaN})"), Contains("not valid JSON") && Contains("column 7"));
  CHECK_THROWS_WITH(parse("[1, 2]"),
                    Contains("the top level is an array, expected an object of named variables"));
  CHECK_THROWS_WITH(parse("3"), Contains("the top level is a number"));
  const std::string file = (fixtures / "malformed.json").string();
  CHECK_THROWS_WITH(tyche::read_json_data(file), StartsWith(file + ": not valid JSON") &&
                                                    Contains("line 3, column 14"));
}

TEST_CASE("json_data: the JSON parser: strings, escapes, UTF-8, numbers, and what it refuses", "[io][json_data]") {
  // Escapes, and \u escapes (a surrogate pair too) as UTF-8; UTF-8 as it is.
  const auto d = parse("{\"a\\\"b\\\\c\\/\\n\": 1, \"\\u00e9\\ud83d\\ude00\": 2, \"\xC3\xA9\": 3, \"s\": \"\\t\\r\\b\\f\"}");
  CHECK(d.names() == std::vector<std::string>{"a\"b\\c/\n", "\xC3\xA9\xF0\x9F\x98\x80", "\xC3\xA9", "s"});
  CHECK_THROWS_WITH(d.scalar("s"), Contains("'s' is a string"));
  // Numbers: JSON's grammar, the nearest double, a double's range (too small: 0).
  const auto n = parse(R"({"a": -0, "b": 1E+2, "c": 2.5e-320, "d": 1e-400, "e": 0.1, "f": 1.7976931348623157e308,
                           "g": -12345678901234567890123, "h": 0e5})");
  CHECK(n.scalar("a") == 0);
  CHECK_FALSE(std::signbit(n.scalar("a")));  // -0 is the integer 0, as nlohmann-json read it
  CHECK(std::signbit(parse(R"({"a": -0.0})").scalar("a")));
  CHECK(n.scalar("b") == 100);
  CHECK(n.scalar("c") == 2.5e-320);
  CHECK(n.scalar("d") == 0);
  CHECK(n.scalar("e") == 0.1);
  CHECK(n.scalar("f") == std::numeric_limits<double>::max());
  CHECK(n.scalar("g") == -12345678901234567890123.0);
  CHECK(n.scalar("h") == 0);
  for (const char* bad : {R"({"x": 01})", R"({"x": 1.})", R"({"x": .5})", R"({"x": +1})", R"({"x": -})", R"({"x": 1e})",
                          R"({"x": 0x10})", R"({"x": [1, 2,]})", R"({"x": 1,})", R"({"x": 1} 2)", R"({x: 1})",
                          R"({"x": tru})", R"({"x": "\q"})", R"({"x": "\u12g4"})", "{\"x\": \"\\ud800\"}",
                          "{\"x\": \"\\udc00\"}", "{\"x\": \"\\ud800\\u0041\"}", "{\"x\": \"a\tb\"}",
                          "{\"x\": \"\xC0\x80\"}", "{\"x\": \"\xED\xA0\x80\"}", "{\"x\": \"\xF4\x90\x80\x80\"}",
                          "{\"x\": \"\x80\"}", "{\"x\": \"\xE2\x82\"}", "\xEF\xBB{}", R"({"x": "abc)"}) {
    INFO(bad);
    CHECK_THROWS_WITH(parse(bad), StartsWith("data.json: not valid JSON: parse error at line 1, column "));
  }
  CHECK_THROWS_WITH(parse(R"({"x": 1e999})"), Contains("the number 1e999 is out of the range of a double"));
  CHECK_THROWS_WITH(parse("{\"x\": \"a\nb\"}"), Contains("a control character (U+000A) in a string must be escaped"));
  CHECK_THROWS_WITH(parse(R"({"x": 1} 2)"), Contains("unexpected '2'; expected the end of the input"));
  CHECK_THROWS_WITH(parse("{\n\n  \"x\": [1,\n 2,, 3]}"), Contains("parse error at line 4, column 4: unexpected ','") && Contains("(byte 18)"));
  // A byte order mark at the start; whitespace of every kind; a NUL byte outside a string ends the
  // input, as it did in nlohmann-json (one inside a string is a control character).
  CHECK(parse("\xEF\xBB\xBF {\"x\":\t[1,\r\n2]}").vector("x") == std::vector<double>{1, 2});
  CHECK(parse(std::string("{\"x\": 1}\0 garbage", 17)).scalar("x") == 1);
  CHECK_THROWS_WITH(parse(std::string("{\"x\": 1\0}", 9)), Contains("unexpected NUL byte (taken as the end of the input)"));
  CHECK_THROWS_WITH(parse(std::string("{\"x\": \"a\\")), Contains("unexpected end of input in a string; expected an escape"));
  CHECK_THROWS_WITH(parse("{\"x\": 1e" + std::string(100, '9') + "}"), Contains("the number 1e" + std::string(35, '9') + "... is out"));
  CHECK_THROWS_WITH(parse(std::string("{\"x\": \"a\0\"}", 11)), Contains("control character (U+0000)"));
  // Nesting of any depth is read without recursion beyond what is kept: an object or an array
  // nested 200,000 deep.
  const std::string objects = "{\"o\": " + std::string(200000, '[') + std::string(200000, ']') + ", \"p\": " +
                              [] {
                                std::string t;
                                for (int i = 0; i < 200000; ++i) t += "{\"a\": ";
                                return t + "1" + std::string(200000, '}');
                              }() + "}";
  const auto deep = parse(objects);
  CHECK_THROWS_WITH(deep.vector("o"), Contains("'o' is nested more than 32 deep"));
  CHECK_THROWS_WITH(deep.vector("p"), Contains("'p' is an object, expected an array"));
  // From a file, across the reader's 64 KB blocks: the same as from memory, with the block's end
  // in every place of a number, a name with an escape and a UTF-8 character, and a literal.
  const fs::path file = fs::temp_directory_path() / ("tyche_json_blocks_" + std::to_string(::getpid()) + ".json");
  const std::string tail = "\", \"y\": [1.2345678e-3, -25], \"\\u00e9\\n\xC3\xA9\xF0\x9F\x98\x80\": 7, \"t\": [true]}";
  for (std::size_t shift = 0; shift < tail.size(); ++shift) {
    const std::string text = "{\"pad\": \"" + std::string(65536 - 9 - tail.size() + shift, 'x') + tail;
    INFO("the 64 KB boundary " << shift << " bytes into the tail");
    std::ofstream(file, std::ios::binary) << text;
    const auto from_file = tyche::read_json_data(file.string());
    CHECK(from_file.vector("y") == std::vector<double>{1.2345678e-3, -25});
    CHECK(from_file.scalar("\xC3\xA9\n\xC3\xA9\xF0\x9F\x98\x80") == 7);
    CHECK(from_file.names() == parse(text).names());
  }
  fs::remove(file);
}

TEST_CASE("json_data: a file that does not exist", "[io][json_data]") {
  const std::string missing = (fixtures / "no_such_file.json").string();
  CHECK_THROWS_AS(tyche::read_json_data(missing), std::invalid_argument);
  CHECK_THROWS_WITH(tyche::read_json_data(missing),
                    Equals(missing + ": cannot open the data file (no such file)"));
  CHECK_THROWS_WITH(tyche::read_json_data(fixtures.string()), Contains("is a directory"));
}

TEST_CASE("json_data: hostile input does not crash", "[io][json_data]") {
  // Nesting far beyond any data set: refused with a message, no deep recursion.
  const std::string deep = R"({"a": )" + std::string(5000, '[') + "1" + std::string(5000, ']') + "}";
  const auto d = parse(deep);
  CHECK_THROWS_WITH(d.vector("a"), Contains("'a' is nested more than 32 deep"));
  CHECK_THROWS_WITH(d.matrix("a"), Contains("nested more than"));
  CHECK_THROWS_WITH(d.scalar("a"), Contains("'a' is an array, expected a number"));
  // Numbers too large for a double are a parse error (as in nlohmann-json, the parser of before).
  CHECK_THROWS_WITH(parse(R"({"x": 1e999})"), Contains("not valid JSON"));
  // Duplicate names: the last one wins, at the first one's place (nlohmann-json's ordered object's
  // rule, the parser of before).
  CHECK(parse(R"({"x": 1, "x": 2})").scalar("x") == 2);
}

TEST_CASE("json_data: a ragged array whose first elements claim a huge shape", "[io][json_data]") {
  // The shape is read from the first element at each depth: 4000 × 4000 × 4000 here, though the
  // file holds a few thousand numbers. It must be refused, not allocated.
  std::string many;
  for (int i = 0; i < 4000; ++i) many += (i ? ",1" : "1");
  std::string text = R"({"a": [[[)" + many + "]";
  for (int i = 1; i < 4000; ++i) text += ",1";
  text += "]";
  for (int i = 1; i < 4000; ++i) text += ",1";
  text += "]}";
  const auto d = parse(text);
  CHECK_THROWS_WITH(d.dims("a"), Contains("a[1, 2] is a number, expected an array of 4000 elements"));
}

// ---- json_rows: a block of the rows of the large variables --------------------------------------

TEST_CASE("json_data: json_rows parts put together are the whole file (diamonds, 1, 2 and 7 parts)",
          "[io][json_data][json_rows]") {
  const fs::path file = posteriors_dir() / "diamonds-diamonds" / "data.json";
  REQUIRE(fs::is_regular_file(file));
  const auto whole = tyche::read_json_data(file.string());
  const auto& X = whole.matrix("X");
  const auto& Y = whole.vector("Y");
  CHECK(whole.rows().total == 0);  // nothing cut
  for (const int parts : {1, 2, 7}) {  // 5000 rows: blocks of one size, and two sizes (5000 mod 7 = 2)
    std::vector<double> x, y;
    std::size_t next = 0;
    for (int part = 0; part < parts; ++part) {
      INFO("part " << part << " of " << parts);
      const auto d = tyche::read_json_data(file.string(), {.variables = {"X", "Y"}, .part = part, .parts = parts});
      const tyche::data_rows r = d.rows();
      CHECK(r.total == 5000);
      CHECK(r.begin == next);  // contiguous, in order, the first 5000 mod parts one row longer
      CHECK(r.size() == 5000 / static_cast<std::size_t>(parts) +
                            (static_cast<std::size_t>(part) < 5000 % static_cast<std::size_t>(parts) ? 1 : 0));
      next = r.end;
      const auto& Xp = d.matrix("X");
      CHECK(Xp.rows == r.size());
      CHECK(Xp.cols == 25);
      CHECK(d.vector("Y").size() == r.size());
      x.insert(x.end(), Xp.values.begin(), Xp.values.end());
      y.insert(y.end(), d.vector("Y").begin(), d.vector("Y").end());
      CHECK(d.integer("N") == 5000);  // the other variables whole
      CHECK(d.integer("K") == 25);
      CHECK(d.names() == whole.names());
    }
    CHECK(next == 5000);
    CHECK(x == X.values);  // bit for bit
    CHECK(y == Y);
  }
  // an explicit range
  const auto d = tyche::read_json_data(file.string(), {.variables = {"Y", "X"}, .begin = 4990, .end = 5000});
  CHECK(d.rows().begin == 4990);
  CHECK(d.rows().end == 5000);
  CHECK(d.vector("Y") == std::vector<double>(Y.end() - 10, Y.end()));
  CHECK(std::equal(d.matrix("X").values.begin(), d.matrix("X").values.end(), X.values.end() - 250));
}

TEST_CASE("json_data: json_rows blocks of text; empty blocks keep the rows' shape", "[io][json_data][json_rows]") {
  const std::string text = R"({"N": 5, "x": [[1, 2], [3, 4], [5, 6], [7, 8], [9, 10]], "y": [1, 0, 1, 0, 1], "z": [7]})";
  const auto a = tyche::parse_json_data(text, "t.json", {.variables = {"x", "y"}, .part = 1, .parts = 2});
  CHECK(a.rows().begin == 3);
  CHECK(a.rows().end == 5);
  CHECK(a.matrix("x").values == std::vector<double>{7, 8, 9, 10});
  CHECK(a.dims("x") == std::vector<std::size_t>{2, 2});
  CHECK(a.vector("y") == std::vector<double>{0, 1});
  CHECK(a.vector("z") == std::vector<double>{7});
  CHECK(a.scalar("N") == 5);
  // more parts than rows: the last parts are empty, a matrix keeps its columns
  const auto e = tyche::parse_json_data(text, "t.json", {.variables = {"x", "y"}, .part = 6, .parts = 7});
  CHECK(e.rows().size() == 0);
  CHECK(e.rows().begin == 5);
  CHECK(e.matrix("x").rows == 0);
  CHECK(e.matrix("x").cols == 2);
  CHECK(e.dims("x") == std::vector<std::size_t>{0, 2});
  CHECK(e.vector("y").empty());
  const auto first = tyche::parse_json_data(text, "t.json", {.variables = {"x"}, .begin = 0, .end = 0});
  CHECK(first.dims("x") == std::vector<std::size_t>{0, 2});
  const auto one = tyche::parse_json_data(text, "t.json", {.variables = {"x"}, .begin = 0, .end = 1});
  CHECK(one.matrix("x").values == std::vector<double>{1, 2});
}

TEST_CASE("json_data: json_rows errors name the variable, the file's row and the block", "[io][json_data][json_rows]") {
  const std::string text = R"({"x": [[1, 2], [3, 4], [5, 6]], "y": [1, 2, 3], "s": 4, "short": [1, 2]})";
  auto rows_of = [&](const std::string& t, const tyche::json_rows& r) { return tyche::parse_json_data(t, "t.json", r); };
  CHECK_THROWS_WITH(rows_of(text, {.variables = {}}), Equals("t.json: json_rows names no variable whose rows to cut"));
  CHECK_THROWS_WITH(rows_of(text, {.variables = {"w"}}),
                    Equals("t.json: json_rows cuts the rows of 'w', which is not in the file (variables: x, y, s, short)"));
  CHECK_THROWS_WITH(rows_of(R"({"a": 1, "b": {"c": 2}, "d": [1, 2]})", {.variables = {"x"}, .part = 0, .parts = 2}),
                    Equals("t.json: json_rows cuts the rows of 'x', which is not in the file (variables: a, b, d)"));
  CHECK_THROWS_WITH(rows_of(text, {.variables = {"x", "s"}}),
                    Equals("t.json: 's' is a number: json_rows cuts the rows of arrays only"));
  CHECK_THROWS_WITH(rows_of(text, {.variables = {"x", "short"}}),
                    Equals("t.json: 'short' has 2 rows and 'x' 3: json_rows cuts variables with the same number of rows"));
  CHECK_THROWS_WITH(rows_of(text, {.variables = {"x"}, .part = 2, .parts = 2}),
                    Equals("t.json: json_rows part 2 of 2: expected parts ≥ 1 and 0 ≤ part < parts"));
  CHECK_THROWS_WITH(rows_of(text, {.variables = {"x"}, .part = 0, .parts = 0}),
                    Equals("t.json: json_rows part 0 of 0: expected parts ≥ 1 and 0 ≤ part < parts"));
  CHECK_THROWS_WITH(rows_of(text, {.variables = {"x"}, .begin = 2, .end = 1}),
                    Equals("t.json: json_rows rows [2, 1): begin is past end"));
  CHECK_THROWS_WITH(rows_of(text, {.variables = {"x", "y"}, .begin = 1, .end = 4}),
                    Equals("t.json: json_rows rows [1, 4) of 'x', which has 3"));
  CHECK_THROWS_WITH(rows_of("[1, 2]", {.variables = {"x"}}),
                    Equals("t.json: the top level is an array, expected an object of named variables"));
  CHECK_THROWS_WITH(rows_of(R"({"x": [[1, 2], [3, 4])", {.variables = {"x"}}), StartsWith("t.json: not valid JSON: parse error"));
  // A bad value inside the block is named by the file's row; outside it, it is not read.
  const std::string bad = R"({"x": [[1, 2], [3, "a"], [5, 6]], "y": [1, "nan", 3]})";
  CHECK_THROWS_WITH(rows_of(bad, {.variables = {"x"}, .begin = 1, .end = 3}).matrix("x"),
                    Equals("t.json: x[2, 2] is a string (\"a\"), expected a number"));
  CHECK(rows_of(bad, {.variables = {"x"}, .begin = 2, .end = 3}).matrix("x").values == std::vector<double>{5, 6});
  CHECK_THROWS_WITH(rows_of(bad, {.variables = {"x", "y"}, .begin = 1, .end = 2}).vector("y"),
                    Equals("t.json: y[2] = nan is not finite (pass tyche::allow_non_finite to accept it)"));
  CHECK(std::isnan(rows_of(bad, {.variables = {"y"}, .begin = 1, .end = 2}).vector("y", tyche::allow_non_finite)[0]));
  // A block's rows must have the shape of the file's first row (the rest of the file is not read),
  // and a bad first row is every part's error: the messages of the whole file's reading.
  for (const auto& [ragged, message] : std::vector<std::pair<std::string, std::string>>{
           {R"({"x": [[1, 2], [3], [4]]})", "x row 2 has 1 elements, expected 2"},
           {R"({"x": [[1, 2], 3, 4]})", "x row 2 is a number, expected an array of 2 elements"},
           {R"({"x": [1, [1, 2], [3, 4]]})", "x[2] is an array, expected a number"}}) {
    INFO(ragged);
    CHECK_THROWS_WITH(rows_of(ragged, {.variables = {"x"}, .begin = 1, .end = 3}).dims("x"), Equals("t.json: " + message));
    CHECK_THROWS_WITH(rows_of(ragged, {.variables = {"x"}}).dims("x"), Equals("t.json: " + message));
    CHECK_THROWS_WITH(parse(ragged).dims("x"), Equals("data.json: " + message));
  }
  for (const tyche::json_rows& r : {tyche::json_rows{.variables = {"x"}, .begin = 1, .end = 2},
                                   tyche::json_rows{.variables = {"x"}, .begin = 2, .end = 2}}) {
    const auto first_bad = rows_of(R"({"x": [[1, "a"], [3, 4]]})", r);
    CHECK_THROWS_WITH(first_bad.matrix("x"), Equals("t.json: x[1, 2] is a string (\"a\"), expected a number"));
  }
  CHECK_THROWS_WITH(parse(R"({"x": [[1, "a"], [3, 4]]})").matrix("x"),
                    Equals("data.json: x[1, 2] is a string (\"a\"), expected a number"));  // the same, whole
  // Messages of the accessors name the file's rows.
  const std::string values = R"({"m": [[1, 2], [3, 4], [5, "nan"]], "k": [1, 2, 3, 4.5]})";
  CHECK_THROWS_WITH(rows_of(values, {.variables = {"m"}, .begin = 2, .end = 3}).matrix("m"),
                    Equals("t.json: m[3, 2] = nan is not finite (pass tyche::allow_non_finite to accept it)"));
  CHECK_THROWS_WITH(rows_of(R"({"k": [1, 2, 3, 4.5]})", {.variables = {"k"}, .begin = 2, .end = 4}).integers("k"),
                    Equals("t.json: k[4] = 4.5 is not an integer"));
  // The two ways of naming a block are not mixed; a name is listed once.
  CHECK_THROWS_WITH(rows_of(text, {.variables = {"x"}, .begin = 1}),
                    Equals("t.json: json_rows rows begin = 1 without an end: give both, or a part"));
  CHECK_THROWS_WITH(rows_of(text, {.variables = {"x"}, .part = 1, .parts = 2, .begin = 0, .end = 2}),
                    Equals("t.json: json_rows part 1 of 2 and rows [0, 2): give one of the two"));
  CHECK_THROWS_WITH(rows_of(text, {.variables = {"x", "y", "x"}}), Equals("t.json: json_rows names 'x' twice"));
  CHECK_THROWS_WITH(rows_of(R"({"x": [[1, 2], [3, 4], [4]]})", {.variables = {"x"}, .begin = 1, .end = 3}).matrix("x"),
                    Equals("t.json: x row 3 has 1 elements, expected 2"));
  // a file
  CHECK_THROWS_WITH(tyche::read_json_data("/nonexistent/data.json", {.variables = {"x"}}),
                    Equals("/nonexistent/data.json: cannot open the data file (no such file)"));
}

TEST_CASE("json_data: json_rows from a pipe: a range reads, a part (two passes) says why it cannot",
          "[io][json_data][json_rows]") {
  const fs::path fifo = fs::temp_directory_path() / ("tyche_json_rows_fifo_" + std::to_string(::getpid()));
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string text = R"({"x": [[1, 2], [3, 4], [5, 6]]})";
  auto through_pipe = [&](const tyche::json_rows& r) {
    std::thread writer([&] { std::ofstream(fifo) << text; });  // blocks until the reader opens it
    std::string outcome;
    try {
      outcome = std::to_string(tyche::read_json_data(fifo.string(), r).matrix("x").rows) + " rows";
    } catch (const std::invalid_argument& e) {
      outcome = e.what();
    }
    writer.join();
    return outcome;
  };
  CHECK(through_pipe({.variables = {"x"}, .begin = 1, .end = 3}) == "2 rows");
  CHECK(through_pipe({.variables = {"x"}, .part = 1, .parts = 2}) ==
        fifo.string() + ": json_rows part 1 of 2 reads the file twice, and it cannot go back to its start (a pipe?): "
                        "read a regular file, or give the rows as .begin and .end");
  fs::remove(fifo);
}
