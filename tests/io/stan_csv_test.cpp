// CmdStan CSV output (tyche/io/stan_csv.hpp): column names, a fit written and read back bit for
// bit (streams and files), special values, the CmdStan layout (configuration comments, adaptation,
// elapsed times), reading what CmdStan writes beyond tyche (saved warm-up, dense metric), and one
// test per error message of the writer and the reader.
//
// The hidden test "[.rstan]" writes the files that tests/io/rstan_read_csv.R reads with
// rstan::read_stan_csv (ctest io_rstan_read_csv; skipped, exit code 77, without R or rstan).
#include <tyche/tyche.hpp>
#if __has_include(<tyche/io/stan_csv.hpp>)
#include <tyche/io/stan_csv.hpp>  // the single-header build has it in tyche.hpp
#endif

#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

using Catch::Matchers::Contains;
using Catch::Matchers::Equals;
using Catch::Matchers::StartsWith;
namespace fs = std::filesystem;

namespace {

const std::vector<double> school_y{28, 8, -3, 7, -1, 1, 18, 12};
const std::vector<double> school_sigma{15, 10, 16, 11, 9, 11, 10, 18};

auto eight_schools() {
  using namespace tyche;
  auto mu = normal<"mu">(0.0, 5.0);
  auto tau = half_cauchy<"tau">(5.0);
  auto theta_raw = std_normal<"theta_raw">(shape<8>);
  return model(joint(mu, tau, theta_raw,
                     normal(mu + tau * theta_raw, data(school_sigma)).observe(data(school_y))));
}

bool same_bits(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }

/// Every value of chain c of the fit equals the file's, bit for bit, column by column.
void check_chain(const tyche::stan_csv& csv, const tyche::nuts_fit& fit, int chain) {
  const auto c = static_cast<std::size_t>(chain);
  REQUIRE(csv.cols() == 7 + fit.dim());
  REQUIRE(csv.rows == static_cast<std::size_t>(fit.draws));
  for (std::size_t k = 0; k < 7; ++k) CHECK(csv.names[k] == tyche::stan_csv_sampler_columns[k]);
  for (std::size_t k = 0; k < fit.dim(); ++k) CHECK(csv.names[7 + k] == tyche::stan_csv_name(fit.names[k]));
  std::size_t mismatches = 0;
  for (std::size_t d = 0; d < csv.rows; ++d) {
    const auto& s = fit.stats[c][d];
    mismatches += !same_bits(csv.at(d, 0), s.log_density);
    mismatches += !same_bits(csv.at(d, 1), s.accept_stat);
    mismatches += !same_bits(csv.at(d, 2), s.step_size);
    mismatches += csv.at(d, 3) != s.tree_depth;
    mismatches += csv.at(d, 4) != s.n_leapfrog;
    mismatches += csv.at(d, 5) != (s.divergent ? 1.0 : 0.0);
    mismatches += !same_bits(csv.at(d, 6), s.energy);
    for (std::size_t k = 0; k < fit.dim(); ++k)
      mismatches += !same_bits(csv.at(d, 7 + k), fit.values[c][d * fit.dim() + k]);
  }
  CHECK(mismatches == 0);
  CHECK(same_bits(csv.step_size, fit.step_size[c]));
  REQUIRE(csv.inv_metric.size() == fit.inv_metric[c].size());
  for (std::size_t k = 0; k < csv.inv_metric.size(); ++k) CHECK(same_bits(csv.inv_metric[k], fit.inv_metric[c][k]));
  // A dense metric is d × d (row-major), a diagonal one d values.
  CHECK(csv.dense_metric == (fit.dim() > 1 && fit.inv_metric[c].size() == fit.dim() * fit.dim()));
  CHECK(csv.warmup_rows == 0);
}

/// A fresh folder under the system's temporary folder, removed at the end of the scope.
struct temp_folder {
  fs::path path;
  temp_folder() {
    std::random_device rd;
    path = fs::temp_directory_path() / ("tyche_stan_csv_test_" + std::to_string(rd()) + std::to_string(rd()));
    fs::create_directories(path);
  }
  ~temp_folder() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  temp_folder(const temp_folder&) = delete;
  temp_folder& operator=(const temp_folder&) = delete;
};

std::string error_of(const std::string& text, const std::string& source = "<stream>") {
  std::istringstream in(text);
  try {
    (void)tyche::read_stan_csv(in, source);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

/// A small hand-made fit: 2 draws of x[1,1], x[1,2], y with special values.
tyche::nuts_fit special_fit() {
  tyche::nuts_fit fit;
  fit.names = {"x[1,1]", "x[1,2]", "y"};
  fit.chains = 1;
  fit.draws = 2;
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  fit.values = {{0.1, -0.0, 4.9406564584124654e-324, 1.7976931348623157e308, -inf, inf}};
  fit.stats = {{{-1.0 / 3, 1, 0.25, 3, 7, true, 12.5}, {nan, 0.9999999999999999, 0.25, 10, 1023, false, -2e-17}}};
  fit.step_size = {0.25};
  fit.inv_metric = {{1.0 / 7, 2, 1e300}};
  return fit;
}

}  // namespace

TEST_CASE("stan_csv_name: tyche's indices become CmdStan's dots", "[io][stan_csv]") {
  CHECK(tyche::stan_csv_name("mu") == "mu");
  CHECK(tyche::stan_csv_name("theta_raw[1]") == "theta_raw.1");
  CHECK(tyche::stan_csv_name("theta[12]") == "theta.12");
  CHECK(tyche::stan_csv_name("x[2,3]") == "x.2.3");
  CHECK(tyche::stan_csv_name("x[2, 3]") == "x.2.3");
  CHECK(tyche::stan_csv_name("a1_b[1,2,3]") == "a1_b.1.2.3");
  const std::vector<std::pair<std::string, std::string>> bad{
      {"", "the name before the indices is empty"},
      {"[1]", "the name before the indices is empty"},
      {"2x", "it does not start with a letter"},
      {"_x", "it does not start with a letter"},
      {"a b", "it holds a character other than letters, digits and '_'"},
      {"a.1", "it holds a character other than letters, digits and '_'"},
      {"x[1", "it does not end with ']'"},
      {"x[1]y", "it does not end with ']'"},
      {"x[]", "an index is empty"},
      {"x[1,]", "an index is empty"},
      {"x[a]", "an index is not a non-negative integer"},
      {"x[-1]", "an index is not a non-negative integer"},
  };
  for (const auto& [name, why] : bad) {
    INFO(name);
    CHECK_THROWS_WITH(tyche::stan_csv_name(name),
                      Equals("tyche::stan_csv_name: parameter name '" + name + "' cannot be a CmdStan column name: " +
                             why + " (expected a Stan identifier, then optionally [i] or [i,j,...])"));
  }
}

TEST_CASE("stan_csv: a NUTS fit written and read back, bit for bit", "[io][stan_csv]") {
  const auto m = eight_schools();
  const tyche::nuts_config cfg{.chains = 2, .warmup = 200, .draws = 150, .seed = 3};
  const auto fit = tyche::nuts(m, cfg);
  for (int c = 0; c < 2; ++c) {
    std::ostringstream os;
    tyche::write_stan_csv(os, fit, c, cfg, {.model = "eight_schools", .warmup_seconds = 0.25, .sampling_seconds = 1.5});
    std::istringstream in(os.str());
    const auto csv = tyche::read_stan_csv(in);
    INFO("chain " << c);
    check_chain(csv, fit, c);
    CHECK(csv.config_value("model") == "eight_schools");
    CHECK(csv.config_value("method") == "sample");
    CHECK(csv.config_value("num_samples") == "150");
    CHECK(csv.config_value("num_warmup") == "200");
    CHECK(csv.config_value("save_warmup") == "0");
    CHECK(csv.config_value("thin") == "1");
    CHECK(csv.config_value("delta") == "0.8");
    CHECK(csv.config_value("max_depth") == "10");
    CHECK(csv.config_value("metric") == "diag_e");
    CHECK(csv.config_value("num_chains") == "2");
    CHECK(csv.config_value("id") == std::to_string(c + 1));
    CHECK(csv.config_value("seed") == "3");
    CHECK_FALSE(csv.config_value("no_such_key"));
    CHECK(csv.warmup_seconds == 0.25);
    CHECK(csv.sampling_seconds == 1.5);
    // Lookup by either name.
    CHECK(csv.column_index("theta_raw[3]") == 7 + 4);
    CHECK(csv.column_index("theta_raw.3") == 7 + 4);
    const auto tau = csv.column("tau");
    REQUIRE(tau.size() == 150);
    CHECK(same_bits(tau[17], fit.values[static_cast<std::size_t>(c)][17 * fit.dim() + 1]));
    CHECK_THROWS_WITH(csv.column("sigma"),
                      StartsWith("tyche::stan_csv::column_index: no column 'sigma' (columns: lp__, accept_stat__,"));
  }
}

TEST_CASE("stan_csv: a fit with a dense or low-rank metric writes CmdStan's dense block", "[io][stan_csv]") {
  const auto m = eight_schools();
  tyche::nuts_config cfg{.chains = 1, .warmup = 150, .draws = 20, .seed = 8};
  cfg.metric = tyche::samplers::metric_kind::dense;
  const auto fit = tyche::nuts(m, cfg);
  std::ostringstream os;
  tyche::write_stan_csv(os, fit, 0, cfg);
  CHECK(os.str().find("# Elements of inverse mass matrix:\n") != std::string::npos);
  std::istringstream in(os.str());
  const auto csv = tyche::read_stan_csv(in);
  CHECK(csv.config_value("metric") == "dense_e");
  CHECK(csv.dense_metric);
  REQUIRE(csv.inv_metric.size() == fit.dim() * fit.dim());
  for (std::size_t k = 0; k < csv.inv_metric.size(); ++k) CHECK(same_bits(csv.inv_metric[k], fit.inv_metric[0][k]));
  // The low-rank metric writes the same block, from the fit's matrix, or — where the fit keeps
  // the factors alone (d > 1,000) — from its factors.
  cfg.metric = tyche::samplers::metric_kind::low_rank;
  auto low_rank = tyche::nuts(m, cfg);
  std::ostringstream with_matrix;
  tyche::write_stan_csv(with_matrix, low_rank, 0, cfg);
  REQUIRE(low_rank.inv_metric_factors.size() == 1);
  low_rank.inv_metric[0].clear();
  std::ostringstream from_factors;
  tyche::write_stan_csv(from_factors, low_rank, 0, cfg);
  CHECK(from_factors.str() == with_matrix.str());
  std::istringstream again(from_factors.str());
  const auto read = tyche::read_stan_csv(again);
  CHECK(read.dense_metric);
  CHECK(read.inv_metric.size() == fit.dim() * fit.dim());
  check_chain(csv, fit, 0);
}

TEST_CASE("stan_csv: the layout CmdStan writes", "[io][stan_csv]") {
  const auto m = eight_schools();
  const tyche::nuts_config cfg{.chains = 1, .warmup = 1000, .draws = 1000, .seed = 11};
  const auto fit = tyche::nuts(m, cfg);
  std::ostringstream os;
  tyche::write_stan_csv(os, fit, 0, cfg);
  std::vector<std::string> lines;
  {
    std::istringstream in(os.str());
    for (std::string l; std::getline(in, l);) lines.push_back(l);
  }
  auto index_of = [&](const std::string& l) {
    for (std::size_t i = 0; i < lines.size(); ++i)
      if (lines[i] == l) return static_cast<long>(i);
    return -1L;
  };
  // Configuration lines, with CmdStan's "(Default)" where the value is CmdStan's default.
  for (const char* l : {"# method = sample (Default)", "#   sample", "#     num_samples = 1000 (Default)",
                        "#     num_warmup = 1000 (Default)", "#     save_warmup = 0 (Default)",
                        "#     thin = 1 (Default)", "#       engaged = 1 (Default)", "#       delta = 0.8 (Default)",
                        "#     algorithm = hmc (Default)", "#         engine = nuts (Default)",
                        "#             max_depth = 10 (Default)", "#         metric = diag_e (Default)",
                        "# id = 1 (Default)", "# init = 2 (Default)", "#   seed = 11", "# model = tyche_model"}) {
    INFO(l);
    CHECK(index_of(l) >= 0);
  }
  const long header = index_of(
      "lp__,accept_stat__,stepsize__,treedepth__,n_leapfrog__,divergent__,energy__,mu,tau,theta_raw.1,"
      "theta_raw.2,theta_raw.3,theta_raw.4,theta_raw.5,theta_raw.6,theta_raw.7,theta_raw.8");
  REQUIRE(header > 0);
  for (long i = 0; i < header; ++i) CHECK(lines[static_cast<std::size_t>(i)].front() == '#');
  const auto h = static_cast<std::size_t>(header);
  CHECK(lines[h + 1] == "# Adaptation terminated");
  CHECK_THAT(lines[h + 2], StartsWith("# Step size = "));
  CHECK(lines[h + 3] == "# Diagonal elements of inverse mass matrix:");
  CHECK(std::count(lines[h + 4].begin(), lines[h + 4].end(), ',') == 9);
  REQUIRE(lines.size() == h + 5 + 1000 + 5);
  CHECK(lines[h + 5 + 1000] == "# ");
  // The chain's own elapsed times (the CPU executor measures them): its warm-up and its draws,
  // each positive, together within the run's.
  REQUIRE(fit.warmup_seconds.size() == 1);
  REQUIRE(fit.sampling_seconds.size() == 1);
  const double warm = fit.warmup_seconds[0], sampling = fit.sampling_seconds[0];
  CHECK(warm > 0);
  CHECK(sampling > 0);
  CHECK(warm + sampling <= fit.seconds);
  char expected[3][64];
  std::snprintf(expected[0], sizeof expected[0], "#  Elapsed Time: %.3f seconds (Warm-up)", warm);
  std::snprintf(expected[1], sizeof expected[1], "#                %.3f seconds (Sampling)", sampling);
  std::snprintf(expected[2], sizeof expected[2], "#                %.3f seconds (Total)", warm + sampling);
  CHECK(lines[h + 5 + 1001] == expected[0]);
  CHECK(lines[h + 5 + 1002] == expected[1]);
  CHECK(lines[h + 5 + 1003] == expected[2]);
  CHECK(lines[h + 5 + 1004] == "# ");
  // The caller's times, where given, replace them; an executor that does not measure them (the
  // device's) leaves NaN, and the file then says 0.
  std::ostringstream given;
  tyche::write_stan_csv(given, fit, 0, cfg, {.warmup_seconds = 2.5, .sampling_seconds = 1.25});
  CHECK_THAT(given.str(), Contains("#  Elapsed Time: 2.500 seconds (Warm-up)\n#                1.250 seconds (Sampling)\n#"
                                   "                3.750 seconds (Total)\n"));
  auto unmeasured = fit;
  unmeasured.warmup_seconds[0] = unmeasured.sampling_seconds[0] = std::numeric_limits<double>::quiet_NaN();
  std::ostringstream zero;
  tyche::write_stan_csv(zero, unmeasured, 0, cfg);
  CHECK_THAT(zero.str(), Contains("#  Elapsed Time: 0.000 seconds (Warm-up)\n#                0.000 seconds (Sampling)\n"));
  // Zeros given are written (they were taken for "not given" before 2026-12-06), and one time given
  // keeps the chain's own other one.
  std::ostringstream forced;
  tyche::write_stan_csv(forced, fit, 0, cfg, {.warmup_seconds = 0, .sampling_seconds = 0});
  CHECK_THAT(forced.str(), Contains("#  Elapsed Time: 0.000 seconds (Warm-up)\n#                0.000 seconds (Sampling)\n"));
  std::ostringstream half;
  tyche::write_stan_csv(half, fit, 0, cfg, {.warmup_seconds = 7});
  CHECK_THAT(half.str(), Contains("#  Elapsed Time: 7.000 seconds (Warm-up)\n" + std::string(expected[1]) + "\n"));
  // Non-default settings lose "(Default)"; without warm-up there is no adaptation block.
  const tyche::nuts_config other{.chains = 2, .warmup = 0, .draws = 5, .seed = 1, .max_depth = 6, .adapt_delta = 0.95};
  const auto fit2 = tyche::nuts(m, other);
  REQUIRE(fit2.warmup_seconds.size() == 2);
  CHECK(fit2.warmup_seconds[1] == 0);  // no warm-up
  CHECK(fit2.sampling_seconds[1] >= 0);
  CHECK(std::isfinite(fit2.sampling_seconds[1]));
  std::ostringstream os2;
  tyche::write_stan_csv(os2, fit2, 1, other);
  const std::string text = os2.str();
  CHECK_THAT(text, Contains("\n#     num_samples = 5\n") && Contains("\n#     num_warmup = 0\n") &&
                       Contains("\n#       engaged = 0\n") && Contains("\n#       delta = 0.95\n") &&
                       Contains("\n#             max_depth = 6\n") && Contains("\n# id = 2\n") &&
                       Contains("\n#     num_chains = 2\n"));
  CHECK_THAT(text, !Contains("Adaptation terminated") && !Contains("Step size"));
  std::istringstream in(text);
  const auto csv = tyche::read_stan_csv(in);
  CHECK(csv.rows == 5);
  CHECK(std::isnan(csv.step_size));
  CHECK(csv.inv_metric.empty());
}

TEST_CASE("stan_csv: one file per chain", "[io][stan_csv]") {
  const auto m = eight_schools();
  const tyche::nuts_config cfg{.chains = 3, .warmup = 100, .draws = 40, .seed = 5};
  const auto fit = tyche::nuts(m, cfg);
  temp_folder dir;
  const auto paths = tyche::write_stan_csv_files(dir.path / "fit", fit, cfg);
  REQUIRE(paths.size() == 3);
  for (int c = 0; c < 3; ++c) {
    const auto& p = paths[static_cast<std::size_t>(c)];
    CHECK(p == dir.path / ("fit_" + std::to_string(c + 1) + ".csv"));
    check_chain(tyche::read_stan_csv(p), fit, c);
  }
  CHECK_THROWS_WITH(tyche::write_stan_csv_files(dir.path / "no_such_folder" / "fit", fit, cfg),
                    StartsWith("tyche::write_stan_csv_files: cannot open ") && Contains("no_such_folder") &&
                        Contains("no_such_folder does not exist (create it first)"));
  // A config that is not the fit's: the error, and no file made (none left half written).
  tyche::nuts_config other = cfg;
  other.draws = 41;
  CHECK_THROWS_WITH(tyche::write_stan_csv_files(dir.path / "wrong", fit, other),
                    Contains("pass the nuts_config the fit was made with"));
  CHECK_FALSE(std::filesystem::exists(dir.path / "wrong_1.csv"));
  CHECK(std::filesystem::exists(dir.path / "fit_1.csv"));
  CHECK_THROWS_WITH(tyche::read_stan_csv(dir.path / "missing.csv"),
                    StartsWith("tyche::read_stan_csv: cannot open ") && Contains("missing.csv"));
  // Errors name the file.
  {
    std::ofstream(dir.path / "bad.csv") << "# comment\na,b\n1,2\n3\n";
  }
  CHECK_THROWS_WITH(tyche::read_stan_csv(dir.path / "bad.csv"),
                    Equals("tyche::read_stan_csv: " + (dir.path / "bad.csv").string() +
                           ", line 4: 1 value, expected 2 (the columns of the header at line 2)"));
}

TEST_CASE("stan_csv: special values and matrix names round-trip", "[io][stan_csv]") {
  const auto fit = special_fit();
  const tyche::nuts_config cfg{.chains = 1, .warmup = 10, .draws = 2};
  std::ostringstream os;
  tyche::write_stan_csv(os, fit, 0, cfg);
  CHECK_THAT(os.str(), Contains("\nlp__,accept_stat__,stepsize__,treedepth__,n_leapfrog__,divergent__,energy__,"
                                "x.1.1,x.1.2,y\n"));
  CHECK_THAT(os.str(), Contains("\n-0.3333333333333333,1,0.25,3,7,1,12.5,0.1,-0,5e-324\n"));
  CHECK_THAT(os.str(), Contains("\nnan,0.9999999999999999,0.25,10,1023,0,-2e-17,1.7976931348623157e+308,-inf,inf\n"));
  std::istringstream in(os.str());
  const auto csv = tyche::read_stan_csv(in);
  REQUIRE(csv.rows == 2);
  CHECK(std::isnan(csv.at(1, 0)));
  CHECK(same_bits(csv.at(0, 8), -0.0));
  CHECK(same_bits(csv.at(0, 9), 4.9406564584124654e-324));
  CHECK(csv.at(1, 7) == std::numeric_limits<double>::max());
  CHECK(csv.at(1, 8) == -std::numeric_limits<double>::infinity());
  CHECK(csv.at(1, 9) == std::numeric_limits<double>::infinity());
  CHECK(csv.inv_metric == std::vector<double>{1.0 / 7, 2, 1e300});
  CHECK(csv.column("x[1,2]").size() == 2);
}

TEST_CASE("stan_csv: what CmdStan writes beyond tyche (saved warm-up, dense metric, messages)", "[io][stan_csv]") {
  // Laid out as in the CmdStan guide's example output (bernoulli model, save_warmup = 1,
  // metric = dense_e); the numbers are made up.
  const std::string text =
      "# stan_version_major = 2\n"
      "# model = bernoulli_model\n"
      "# method = sample (Default)\n"
      "#   sample\n"
      "#     num_samples = 3\n"
      "#     num_warmup = 2\n"
      "#     save_warmup = 1\n"
      "#         metric = dense_e\n"
      "#         metric_file =  (Default)\n"
      "# data\n"
      "#   file = bernoulli.data.json\n"
      "lp__,accept_stat__,stepsize__,treedepth__,n_leapfrog__,divergent__,energy__,theta,z:1,y_rep.1\r\n"
      "-7.1,0.9,1.2,1,3,0,7.4,0.21,1,0\n"
      "-6.9,0.95,1.1,2,3,0,7.0,0.25,2,1\n"
      "# Adaptation terminated\n"
      "# Step size = 0.893542\n"
      "# Elements of inverse mass matrix:\n"
      "# 0.5, 0.1\n"
      "# 0.1, 0.4\n"
      "# Informational message: something CmdStan says\n"
      "-6.8,1,0.893542,1,1,0,6.9,0.248,3,0\n"
      "-6.75,0.97,0.893542,2,3,0,6.8,0.27,4,1\n"
      "-7.3,0.8,0.893542,1,3,0,7.5,0.18,5,0\n"
      "\n"
      "# \n"
      "#  Elapsed Time: 0.004 seconds (Warm-up)\n"
      "#                0.011 seconds (Sampling)\n"
      "#                0.015 seconds (Total)\n"
      "# \n";
  std::istringstream in(text);
  const auto csv = tyche::read_stan_csv(in);
  CHECK(csv.cols() == 10);
  CHECK(csv.names[8] == "z:1");
  CHECK(csv.rows == 5);
  CHECK(csv.warmup_rows == 2);
  CHECK(csv.dense_metric);
  CHECK(csv.inv_metric == std::vector<double>{0.5, 0.1, 0.1, 0.4});
  CHECK(csv.step_size == 0.893542);
  CHECK(csv.warmup_seconds == 0.004);
  CHECK(csv.sampling_seconds == 0.011);
  CHECK(csv.config_value("metric_file") == "");
  CHECK(csv.config_value("file") == "bernoulli.data.json");
  CHECK(csv.column("theta") == std::vector<double>{0.21, 0.25, 0.248, 0.27, 0.18});
  CHECK(csv.column("y_rep[1]") == std::vector<double>{0, 1, 0, 1, 0});
}

TEST_CASE("stan_csv: the writer's errors", "[io][stan_csv]") {
  const auto fit = special_fit();
  const tyche::nuts_config cfg{.chains = 1, .warmup = 10, .draws = 2};
  std::ostringstream os;
  CHECK_THROWS_WITH(tyche::write_stan_csv(os, fit, 1, cfg),
                    Equals("tyche::write_stan_csv: chain = 1 is out of range: the fit has 1 chains, numbered 0 to 0"));
  CHECK_THROWS_WITH(tyche::write_stan_csv(os, fit, -1, cfg), StartsWith("tyche::write_stan_csv: chain = -1 is out of range"));
  CHECK_THROWS_WITH(tyche::write_stan_csv(os, fit, 0, tyche::nuts_config{.chains = 4, .draws = 2}),
                    Equals("tyche::write_stan_csv: config has chains = 4, draws = 2 but the fit has chains = 1, "
                           "draws = 2: pass the nuts_config the fit was made with"));
  auto short_fit = fit;
  short_fit.values[0].pop_back();
  CHECK_THROWS_WITH(tyche::write_stan_csv(os, short_fit, 0, cfg),
                    Equals("tyche::write_stan_csv: chain 0 of the fit holds 5 values and 2 sampler statistics, "
                           "expected 6 and 2"));
  auto bad_name = fit;
  bad_name.names[2] = "y z";
  CHECK_THROWS_WITH(tyche::write_stan_csv(os, bad_name, 0, cfg),
                    StartsWith("tyche::stan_csv_name: parameter name 'y z' cannot be a CmdStan column name"));
  CHECK_THROWS_WITH(tyche::write_stan_csv(os, fit, 0, cfg, {.warmup_seconds = -1}),
                    Equals("tyche::write_stan_csv: options.warmup_seconds and options.sampling_seconds must be "
                           "finite and >= 0, or NaN for the chain's own (got -1 and nan)"));
  CHECK_THROWS_WITH(tyche::write_stan_csv(os, fit, 0, cfg, {.model = "two\nlines"}),
                    Equals("tyche::write_stan_csv: options.model and options.data_file must be one line each "
                           "(got 'two\\nlines')"));
  CHECK(os.str().empty());  // nothing written before an error
}

TEST_CASE("stan_csv: the reader's errors name the source and the line", "[io][stan_csv]") {
  const std::string p = "tyche::read_stan_csv: <stream>, line ";
  CHECK(error_of("") == p + "1: no column header: the input has no line that is not a comment (is it a CmdStan CSV file?)");
  CHECK(error_of("# a = 1\n# b\n") == p + "3: no column header: the input has no line that is not a comment "
                                          "(is it a CmdStan CSV file?)");
  CHECK(error_of("a,b,c\n1,2,3\n4,5\n") == p + "3: 2 values, expected 3 (the columns of the header at line 1)");
  CHECK(error_of("# c\na,b\n1,2,3\n") == p + "3: 3 values, expected 2 (the columns of the header at line 2)");
  CHECK(error_of("a,b\n1,abc\n") == p + "2: column 2 (b) 'abc' is not a number");
  CHECK(error_of("a,b\n1,2x\n") == p + "2: column 2 (b) '2x' is not a number");
  CHECK(error_of("a,b\n1, 2\n") == p + "2: column 2 (b) ' 2' is not a number");
  CHECK(error_of("a,b\n,2\n") == p + "2: column 1 (a) is empty");
  CHECK(error_of("a,b\n1,1e999\n") == p + "2: column 2 (b) '1e999' is out of the range of a double");
  CHECK(error_of("1,2\n3,4\n") == p + "1: expected the column header (names), found the number '1' in column 1: "
                                      "is the header missing?");
  CHECK(error_of("a,,b\n") == p + "1: column 2 of the header has an empty name");
  CHECK(error_of("a,b,\n") == p + "1: column 3 of the header has an empty name");
  CHECK(error_of("a,b,a\n") == p + "1: column 3 of the header, 'a', has the name of column 1");
  CHECK(error_of("a,b c\n") == p + "1: column 2 of the header, 'b c', is not a CmdStan column name (a letter, then "
                                   "letters, digits, '_', '.', ':')");
  CHECK(error_of("a\n# Step size = big\n") == p + "2: expected 'Step size = <number>', found 'Step size = big'");
  CHECK(error_of("a\n# Diagonal elements of inverse mass matrix:\n1\n") ==
        p + "3: expected a comment line with the diagonal of the inverse metric after 'Diagonal elements of "
            "inverse mass matrix:'");
  CHECK(error_of("a\n# Diagonal elements of inverse mass matrix:\n# 1, x\n") ==
        p + "3: expected the diagonal of the inverse metric (numbers separated by commas) after 'Diagonal elements "
            "of inverse mass matrix:', found '1, x'");
  CHECK(error_of("a\n# Diagonal elements of inverse mass matrix:\n") ==
        p + "3: the input ends after 'Diagonal elements of inverse mass matrix:' without the values");
  CHECK(error_of("a\n1\n#  Elapsed Time: soon (Warm-up)\n") ==
        p + "3: expected 'Elapsed Time: <number> seconds (Warm-up)', found 'Elapsed Time: soon (Warm-up)'");
  CHECK(error_of("a\n1\n#  Elapsed Time: 1 seconds (Warm-up)\n# 2 minutes\n") ==
        p + "4: expected the sampling time ('<number> seconds (Sampling)') after the warm-up time, found '2 minutes'");
  CHECK(error_of("a\n1\n#  Elapsed Time: 1 seconds (Warm-up)\n") ==
        p + "4: the input ends after the warm-up time without the sampling time");
  CHECK(error_of("a,b\n1,2\n3\n", "fit_1.csv") ==
        "tyche::read_stan_csv: fit_1.csv, line 3: 1 value, expected 2 (the columns of the header at line 1)");
  // What is accepted: CRLF line ends, blank lines, a leading '+', nan/inf in any letter case.
  std::istringstream ok("a,b\r\n\r\n+1,-2\nNaN,-Inf\n");
  const auto csv = tyche::read_stan_csv(ok);
  CHECK(csv.rows == 2);
  CHECK(csv.at(0, 0) == 1);
  CHECK(std::isnan(csv.at(1, 0)));
  CHECK(csv.at(1, 1) == -std::numeric_limits<double>::infinity());
}

// Run by tests/io/rstan_read_csv.R (ctest io_rstan_read_csv), which sets TYCHE_STAN_CSV_DIR: writes
// eight schools (4 chains of 1000 draws) as eight_schools_<chain>.csv and tyche's own summary of
// the same fit as tyche_summary.csv (name,mean,sd,rhat,ess_bulk,ess_tail; 17 significant digits)
// and tyche_chains.csv (chain,step_size,n_leapfrog,divergent: per chain, sums over the draws).
TEST_CASE("stan_csv: files for rstan::read_stan_csv", "[.rstan]") {
  const char* dir = std::getenv("TYCHE_STAN_CSV_DIR");
  if (dir == nullptr) FAIL("set TYCHE_STAN_CSV_DIR to the folder to write to (see tests/io/rstan_read_csv.R)");
  const auto m = eight_schools();
  const tyche::nuts_config cfg{.chains = 4, .warmup = 1000, .draws = 1000, .seed = 2024};
  const auto fit = tyche::nuts(m, cfg);
  tyche::write_stan_csv_files(fs::path(dir) / "eight_schools", fit, cfg, {.model = "eight_schools"});
  const auto s = tyche::summary(fit);
  std::ofstream summary(fs::path(dir) / "tyche_summary.csv");
  summary.precision(17);
  summary << "name,mean,sd,rhat,ess_bulk,ess_tail\n";
  for (const auto& r : s.rows)
    summary << r.name << ',' << r.mean << ',' << r.sd << ',' << r.rhat << ',' << r.ess_bulk << ',' << r.ess_tail << '\n';
  std::ofstream chains(fs::path(dir) / "tyche_chains.csv");
  chains.precision(17);
  chains << "chain,step_size,n_leapfrog,divergent\n";
  for (int c = 0; c < fit.chains; ++c) {
    long leapfrogs = 0, divergent = 0;
    for (const auto& st : fit.stats[static_cast<std::size_t>(c)]) {
      leapfrogs += st.n_leapfrog;
      divergent += st.divergent ? 1 : 0;
    }
    chains << c + 1 << ',' << fit.step_size[static_cast<std::size_t>(c)] << ',' << leapfrogs << ',' << divergent << '\n';
  }
  summary.close();
  chains.close();
  REQUIRE(summary.good());
  REQUIRE(chains.good());
}

TEST_CASE("stan_csv: a matrix variable writes its K² entries and the metric of θ", "[io][stan_csv]") {
  // lkj_corr_cholesky<"L">(2, 3): θ has 3 coordinates, the fit 9 columns L.1.1 … L.3.3; the
  // dense metric is 3 × 3 (CmdStan's, of the unconstrained parameters).
  auto m = tyche::model([] { return tyche::joint(tyche::lkj_corr_cholesky<"L">(2.0, 3)); });
  tyche::nuts_config cfg{.chains = 1, .warmup = 150, .draws = 20, .seed = 8};
  cfg.metric = tyche::samplers::metric_kind::dense;
  const auto fit = tyche::nuts(m, cfg);
  REQUIRE(fit.dim() == 9);
  REQUIRE(fit.inv_metric[0].size() == 9);
  std::ostringstream os;
  tyche::write_stan_csv(os, fit, 0, cfg);
  CHECK_THAT(os.str(), Contains(",L.1.1,L.1.2,L.1.3,L.2.1,L.2.2,L.2.3,L.3.1,L.3.2,L.3.3\n"));
  CHECK_THAT(os.str(), Contains("# Elements of inverse mass matrix:\n"));
  std::istringstream in(os.str());
  const auto csv = tyche::read_stan_csv(in);
  CHECK(csv.dense_metric);
  REQUIRE(csv.inv_metric.size() == 9);
  for (std::size_t k = 0; k < 9; ++k) CHECK(same_bits(csv.inv_metric[k], fit.inv_metric[0][k]));
  const auto l21 = csv.column("L[2,1]");
  REQUIRE(l21.size() == 20);
  for (std::size_t d = 0; d < 20; ++d) CHECK(same_bits(l21[d], fit.values[0][d * 9 + 3]));
}
