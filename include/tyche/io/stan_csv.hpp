// tyche/io/stan_csv.hpp — CmdStan's output CSV: writing a NUTS fit, one file per chain, and
// reading such a file back (one written by tyche or by CmdStan).
//
//     const auto fit = tyche::nuts(m, cfg);
//     tyche::write_stan_csv_files("out/eight_schools", fit, cfg);   // out/eight_schools_1.csv, …
//     // R:      rstan::read_stan_csv(c("out/eight_schools_1.csv", …))
//     // Python: arviz.from_cmdstan("out/eight_schools_*.csv")
//     const tyche::stan_csv draws = tyche::read_stan_csv("out/eight_schools_1.csv");
//     const std::vector<double> mu = draws.column("mu");
//
// The format is the one the CmdStan guide describes ("Stan CSV file format"): comment lines
// starting with '#' that echo the configuration as nested `key = value` lines (a value equal to
// CmdStan's default is followed by "(Default)", as CmdStan writes it); the column header
// `lp__,accept_stat__,stepsize__,treedepth__,n_leapfrog__,divergent__,energy__,<parameters>`;
// the adaptation comments (`# Adaptation terminated`, `# Step size = …`, `# Diagonal elements of
// inverse mass matrix:` and one line of values); one row per draw; and the elapsed times.
//
// Column names. tyche names the coordinates of a vector `theta[1]`, `theta[2]`, … (and would
// name a matrix element `x[2,3]`); CmdStan's CSV writes them `theta.1`, `x.2.3`, and the readers
// (rstan, cmdstanr, ArviZ) turn the dots back into indices. So the writer converts: `[i]` becomes
// `.i` and `[i,j]` becomes `.i.j` (stan_csv_name). A name must otherwise be a Stan identifier
// (letters, digits, '_'; not starting with a digit), or the writer throws.
//
// Numbers. Every value is written as the shortest decimal that reads back to the same double
// (std::to_chars), so a file round-trips bit for bit; CmdStan writes 6 significant digits by
// default (sig_figs = -1), which readers treat the same way. Non-finite values are written
// nan, inf, -inf, as CmdStan writes them.
//
// What differs from a CmdStan file, and why:
//   - lp__ is tyche's log density on the unconstrained space with the log-Jacobian and all
//     normalising constants; Stan drops the constants of `~` statements, so lp__ differs from
//     Stan's by a constant (and is the same up to that constant).
//   - The elapsed times: the chain's own (nuts_fit::warmup_seconds, sampling_seconds: from its
//     start to its last warm-up iteration, and from there to its last draw; chains that share a
//     thread take turns, so each one's times include the others' work meanwhile), unless
//     stan_csv_options gives others; 0 where neither does (the device executor).
//   - Warm-up draws are not kept by nuts(), so save_warmup is always 0.
//   - The first comment line is `# tyche_version = …`; CmdStan writes `# stan_version_major`
//     and so on, which tyche does not claim.
//
// Reading. read_stan_csv accepts CmdStan's files too (any columns, saved warm-up draws, a dense
// metric). A malformed file throws std::invalid_argument naming the source, the line and what is
// wrong, e.g. "tyche::read_stan_csv: fit_1.csv, line 52: 9 values, expected 10 (the columns of
// the header at line 38)".
#pragma once
#include <tyche/config.hpp>
#include <tyche/inference/fit.hpp>
#include <tyche/inference/optimize.hpp>
#include <tyche/samplers/nuts/adaptation.hpp>
#include <tyche/samplers/nuts/config.hpp>

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <ostream>
#include <istream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace tyche {

/// What a CmdStan CSV file holds that a nuts_fit and a nuts_config do not.
struct stan_csv_options {
  std::string model = "tyche_model";  // `# model = …`
  std::string data_file{};            // `# data / file = …`; empty when the data are not in a file
  /// The elapsed times written at the end of every file, in seconds (0 and 0 write zeros); NaN
  /// (the default) for either: the chain's own, nuts_fit::warmup_seconds or sampling_seconds,
  /// where the executor measured them (the CPU executor), else 0.
  double warmup_seconds = std::numeric_limits<double>::quiet_NaN();
  double sampling_seconds = std::numeric_limits<double>::quiet_NaN();
};

/// The sampler columns CmdStan writes before the parameters, in its order.
inline constexpr std::string_view stan_csv_sampler_columns[] = {
    "lp__", "accept_stat__", "stepsize__", "treedepth__", "n_leapfrog__", "divergent__", "energy__"};

namespace detail::stan_csv_impl {

inline bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

inline std::string quote_name(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else out += c;
  }
  return out + "'";
}

/// The shortest decimal that reads back to x; nan, inf, -inf as CmdStan writes them.
inline void append_number(std::string& out, double x) {
  if (std::isnan(x)) {
    out += "nan";
    return;
  }
  if (std::isinf(x)) {
    out += x > 0 ? "inf" : "-inf";
    return;
  }
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  out.append(buf, r.ptr);
}
inline std::string number(double x) {
  std::string s;
  append_number(s, x);
  return s;
}

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// A decimal number, the whole field (a leading '+' allowed); nullopt if it is not one.
inline std::optional<double> parse_number(std::string_view s) {
  if (s.size() > 1 && s.front() == '+' && s[1] != '-') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  double x = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), x);
  if (r.ec != std::errc{} || r.ptr != s.data() + s.size()) return std::nullopt;
  return x;
}

}  // namespace detail::stan_csv_impl

/// The CmdStan CSV column name of a tyche parameter name: `theta[2]` → `theta.2`,
/// `x[2,3]` (or `x[2, 3]`) → `x.2.3`, `mu` → `mu`. Throws std::invalid_argument, naming the
/// name, when it is not a Stan identifier followed by an optional list of positive indices.
inline std::string stan_csv_name(std::string_view name) {
  using namespace detail::stan_csv_impl;
  auto fail = [&](const char* why) {
    throw std::invalid_argument("tyche::stan_csv_name: parameter name " + quote_name(name) +
                                " cannot be a CmdStan column name: " + why +
                                " (expected a Stan identifier, then optionally [i] or [i,j,...])");
  };
  const std::size_t open = name.find('[');
  const std::string_view base = name.substr(0, open);
  if (base.empty()) fail("the name before the indices is empty");
  if (!is_letter(base.front())) fail("it does not start with a letter");
  for (char c : base)
    if (!(is_letter(c) || is_digit(c) || c == '_')) fail("it holds a character other than letters, digits and '_'");
  std::string out(base);
  if (open == std::string_view::npos) return out;
  if (name.back() != ']') fail("it does not end with ']'");
  std::string_view inside = name.substr(open + 1, name.size() - open - 2);
  for (;;) {
    const std::size_t comma = inside.find(',');
    const std::string_view index = trim(inside.substr(0, comma));
    if (index.empty()) fail("an index is empty");
    for (char c : index)
      if (!is_digit(c)) fail("an index is not a non-negative integer");
    out += '.';
    out += index;
    if (comma == std::string_view::npos) break;
    inside.remove_prefix(comma + 1);
  }
  return out;
}

namespace detail::stan_csv_impl {
/// write_stan_csv's checks of its arguments (std::invalid_argument naming what is wrong), run
/// by write_stan_csv_files for every chain before it creates any file.
/// options.model and options.data_file go into comment lines: a line break would end the comment
/// and start a line the reader takes as data or as the header.
inline void check_one_line_options(const stan_csv_options& options, const std::string& fn) {
  for (const auto* s : {&options.model, &options.data_file})
    if (s->find_first_of("\r\n") != std::string::npos)
      throw std::invalid_argument(fn + "options.model and options.data_file must be one line each (got " +
                                  quote_name(*s) + ")");
}

inline void check_nuts_csv_arguments(const nuts_fit& fit, int chain, const nuts_config& config,
                                     const stan_csv_options& options) {
  const std::string fn = "tyche::write_stan_csv: ";
  if (chain < 0 || chain >= fit.chains)
    throw std::invalid_argument(fn + "chain = " + std::to_string(chain) + " is out of range: the fit has " +
                                std::to_string(fit.chains) + " chains, numbered 0 to " +
                                std::to_string(fit.chains - 1));
  if (config.draws != fit.draws || config.chains != fit.chains)
    throw std::invalid_argument(fn + "config has chains = " + std::to_string(config.chains) + ", draws = " +
                                std::to_string(config.draws) + " but the fit has chains = " +
                                std::to_string(fit.chains) + ", draws = " + std::to_string(fit.draws) +
                                ": pass the nuts_config the fit was made with");
  const auto c = static_cast<std::size_t>(chain);
  const std::size_t dim = fit.dim(), draws = static_cast<std::size_t>(fit.draws);
  if (fit.values.size() <= c || fit.stats.size() <= c || fit.values[c].size() != draws * dim ||
      fit.stats[c].size() != draws)
    throw std::invalid_argument(fn + "chain " + std::to_string(chain) + " of the fit holds " +
                                std::to_string(c < fit.values.size() ? fit.values[c].size() : 0) +
                                " values and " + std::to_string(c < fit.stats.size() ? fit.stats[c].size() : 0) +
                                " sampler statistics, expected " + std::to_string(draws * dim) + " and " +
                                std::to_string(draws));
  for (double t : {options.warmup_seconds, options.sampling_seconds})
    if (!std::isnan(t) && (!(t >= 0) || !std::isfinite(t)))
      throw std::invalid_argument(fn + "options.warmup_seconds and options.sampling_seconds must be finite "
                                       "and >= 0, or NaN for the chain's own (got " + number(options.warmup_seconds) +
                                  " and " + number(options.sampling_seconds) + ")");
  check_one_line_options(options, fn);
}
}  // namespace detail::stan_csv_impl

/// Writes chain `chain` (0-based, as in fit.values; CmdStan's `id` is chain + 1) of a NUTS fit
/// in CmdStan's CSV format. config must be the nuts_config the fit was made with (the file
/// echoes it). Throws std::invalid_argument when chain is out of range, when config does not
/// match the fit, or when a parameter name cannot be a CmdStan column name.
inline void write_stan_csv(std::ostream& os, const nuts_fit& fit, int chain, const nuts_config& config,
                           const stan_csv_options& options = {}) {
  using namespace detail::stan_csv_impl;
  const std::string fn = "tyche::write_stan_csv: ";
  check_nuts_csv_arguments(fit, chain, config, options);
  const auto c = static_cast<std::size_t>(chain);
  const std::size_t dim = fit.dim(), draws = static_cast<std::size_t>(fit.draws);
  std::vector<std::string> columns;
  for (const auto& name : fit.names) columns.push_back(stan_csv_name(name));

  const samplers::adaptation_config adapt;  // the warm-up settings nuts() uses
  const bool adapted = config.warmup > 0;
  std::string out;
  // Configuration, as CmdStan's `sample` method echoes it. `(Default)`: CmdStan's default value.
  auto line = [&](int indent, std::string_view key, const std::string& value, bool is_default) {
    out += '#';
    out.append(static_cast<std::size_t>(1 + 2 * indent), ' ');
    out += key;
    out += " = ";
    out += value;
    if (is_default) out += " (Default)";
    out += '\n';
  };
  auto section = [&](int indent, std::string_view key) {
    out += '#';
    out.append(static_cast<std::size_t>(1 + 2 * indent), ' ');
    out += key;
    out += '\n';
  };
  line(0, "tyche_version",
       std::to_string(TYCHE_VERSION_MAJOR) + "." + std::to_string(TYCHE_VERSION_MINOR) + "." +
           std::to_string(TYCHE_VERSION_PATCH),
       false);
  line(0, "model", options.model, false);
  line(0, "method", "sample", true);
  section(1, "sample");
  line(2, "num_samples", std::to_string(config.draws), config.draws == 1000);
  line(2, "num_warmup", std::to_string(config.warmup), config.warmup == 1000);
  line(2, "save_warmup", "0", true);
  line(2, "thin", "1", true);
  section(2, "adapt");
  line(3, "engaged", adapted ? "1" : "0", adapted);
  line(3, "gamma", number(adapt.gamma), adapt.gamma == 0.05);
  line(3, "delta", number(config.adapt_delta), config.adapt_delta == 0.8);
  line(3, "kappa", number(adapt.kappa), adapt.kappa == 0.75);
  line(3, "t0", number(adapt.t0), adapt.t0 == 10);
  line(3, "init_buffer", std::to_string(adapt.init_buffer), adapt.init_buffer == 75);
  line(3, "term_buffer", std::to_string(adapt.term_buffer), adapt.term_buffer == 50);
  line(3, "window", std::to_string(adapt.base_window), adapt.base_window == 25);
  line(2, "algorithm", "hmc", true);
  section(3, "hmc");
  line(4, "engine", "nuts", true);
  section(5, "nuts");
  line(6, "max_depth", std::to_string(config.max_depth), config.max_depth == 10);
  const bool dense = samplers::stored_dense(config.metric);
  line(4, "metric", dense ? "dense_e" : "diag_e", !dense);
  line(4, "metric_file", "", true);
  line(4, "stepsize", number(config.init_step_size), config.init_step_size == 1);
  line(4, "stepsize_jitter", "0", true);
  line(2, "num_chains", std::to_string(config.chains), config.chains == 1);
  line(0, "id", std::to_string(chain + 1), chain == 0);
  section(0, "data");
  line(1, "file", options.data_file, options.data_file.empty());
  line(0, "init", number(config.init_radius), config.init_radius == 2);
  section(0, "random");
  line(1, "seed", std::to_string(config.seed), false);
  section(0, "output");
  line(1, "sig_figs", "-1", true);

  // Column header.
  for (std::string_view s : stan_csv_sampler_columns) {
    out += s;
    out += ',';
  }
  for (std::size_t k = 0; k < columns.size(); ++k) {
    out += columns[k];
    out += k + 1 < columns.size() ? "," : "";
  }
  if (columns.empty()) out.pop_back();
  out += '\n';

  // Adaptation.
  if (adapted) {
    out += "# Adaptation terminated\n# Step size = ";
    append_number(out, c < fit.step_size.size() ? fit.step_size[c] : std::nan(""));
    const std::vector<double> none;
    std::vector<double> from_factors;  // a low-rank metric the fit keeps as factors alone (d > 1,000)
    if ((c >= fit.inv_metric.size() || fit.inv_metric[c].empty()) && c < fit.inv_metric_factors.size() &&
        !fit.inv_metric_factors[c].empty()) {
      const auto& f = fit.inv_metric_factors[c];
      const std::size_t d = samplers::low_rank_dimension(f.data(), f.size());
      from_factors.assign(d * d, 0.0);
      if (d > 0) samplers::low_rank_dense(f.data(), d, from_factors.data());
    }
    const auto& inv_metric = !from_factors.empty() ? from_factors : c < fit.inv_metric.size() ? fit.inv_metric[c] : none;
    // The metric is d × d for θ's dimension d, which is fewer than the columns when a matrix
    // variable writes its K² entries (fit.dim() counts those).
    const auto dim = static_cast<std::size_t>(std::llround(std::sqrt(static_cast<double>(inv_metric.size()))));
    if (dense && dim > 0 && inv_metric.size() == dim * dim) {  // CmdStan: one row per line
      out += "\n# Elements of inverse mass matrix:\n";
      for (std::size_t i = 0; i < dim; ++i) {
        out += "# ";
        for (std::size_t j = 0; j < dim; ++j) {
          if (j > 0) out += ", ";
          append_number(out, inv_metric[i * dim + j]);
        }
        out += '\n';
      }
    } else {
      out += "\n# Diagonal elements of inverse mass matrix:\n# ";
      for (std::size_t k = 0; k < inv_metric.size(); ++k) {
        if (k > 0) out += ", ";
        append_number(out, inv_metric[k]);
      }
      out += '\n';
    }
  }
  os << out;
  out.clear();

  // Draws.
  for (std::size_t d = 0; d < draws; ++d) {
    const samplers::transition_stats& s = fit.stats[c][d];
    append_number(out, s.log_density);
    out += ',';
    append_number(out, s.accept_stat);
    out += ',';
    append_number(out, s.step_size);
    out += ',';
    out += std::to_string(s.tree_depth);
    out += ',';
    out += std::to_string(s.n_leapfrog);
    out += s.divergent ? ",1," : ",0,";
    append_number(out, s.energy);
    for (std::size_t k = 0; k < dim; ++k) {
      out += ',';
      append_number(out, fit.values[c][d * dim + k]);
    }
    out += '\n';
    if (out.size() > (1u << 16)) {
      os << out;
      out.clear();
    }
  }

  // Elapsed times, as CmdStan writes them: the caller's, or (NaN) the chain's own where the
  // executor measured them (nuts_fit::warmup_seconds, sampling_seconds), else 0.
  auto own = [&](double given, const std::vector<double>& measured) {
    if (!std::isnan(given)) return given;
    return c < measured.size() && std::isfinite(measured[c]) ? measured[c] : 0.0;
  };
  const double warmup_seconds = own(options.warmup_seconds, fit.warmup_seconds);
  const double sampling_seconds = own(options.sampling_seconds, fit.sampling_seconds);
  char times[256];
  std::snprintf(times, sizeof times,
                "# \n#  Elapsed Time: %.3f seconds (Warm-up)\n#                %.3f seconds (Sampling)\n"
                "#                %.3f seconds (Total)\n# \n",
                warmup_seconds, sampling_seconds, warmup_seconds + sampling_seconds);
  out += times;
  os << out;
  if (!os) throw std::runtime_error(fn + "the stream failed while writing chain " + std::to_string(chain));
}

/// Writes every chain of a fit to its own file, `<prefix>_1.csv` … `<prefix>_<chains>.csv` (the
/// names CmdStan gives its output files), and returns their paths. The folder of prefix must
/// exist. Throws std::runtime_error when a file cannot be written.
inline std::vector<std::filesystem::path> write_stan_csv_files(const std::filesystem::path& prefix,
                                                               const nuts_fit& fit, const nuts_config& config,
                                                               const stan_csv_options& options = {}) {
  // Every chain's arguments checked first: a wrong config or fit creates no file.
  for (int c = 0; c < fit.chains; ++c) detail::stan_csv_impl::check_nuts_csv_arguments(fit, c, config, options);
  std::vector<std::filesystem::path> paths;
  for (int c = 0; c < fit.chains; ++c) {
    std::filesystem::path path = prefix;
    path += "_" + std::to_string(c + 1) + ".csv";
    std::ofstream file(path, std::ios::binary);
    if (!file) {
      const std::filesystem::path folder = path.parent_path();
      std::error_code ec;
      if (!folder.empty() && !std::filesystem::is_directory(folder, ec))
        throw std::runtime_error("tyche::write_stan_csv_files: cannot open " + path.string() + " for writing: the folder " +
                                 folder.string() + " does not exist (create it first)");
      throw std::runtime_error("tyche::write_stan_csv_files: cannot open " + path.string() + " for writing");
    }
    write_stan_csv(file, fit, c, config, options);
    file.close();
    if (!file) throw std::runtime_error("tyche::write_stan_csv_files: error while writing " + path.string());
    paths.push_back(path);
  }
  return paths;
}

/// Writes the draws of an approximation (laplace, pathfinder, advi) in the CSV layout CmdStan's
/// method of that name writes: laplace `log_p__,log_g__,<parameters>`; pathfinder
/// `lp_approx__,lp__,<parameters>`; variational `lp__,log_p__,log_g__,<parameters>` with the
/// Gaussian's mean (constrained) as the first row, its lp__, log_p__ and log_g__ 0, as CmdStan
/// writes it. The comments give the method and the seed. Throws std::invalid_argument for a
/// method it does not know, a fit whose sizes disagree, or a name that cannot be a column.
inline void write_stan_csv(std::ostream& os, const approximate_fit& fit, const stan_csv_options& options = {}) {
  using namespace detail::stan_csv_impl;
  const std::string fn = "tyche::write_stan_csv: ";
  std::vector<std::string_view> lead;
  if (fit.method == "laplace") lead = {"log_p__", "log_g__"};
  else if (fit.method == "pathfinder") lead = {"lp_approx__", "lp__"};
  else if (fit.method == "variational") lead = {"lp__", "log_p__", "log_g__"};
  else throw std::invalid_argument(fn + "an approximate_fit of method " + quote_name(fit.method) +
                                   ": expected laplace, pathfinder or variational");
  check_one_line_options(options, fn);
  const std::size_t dim = fit.dim(), draws = static_cast<std::size_t>(fit.draws);
  if (fit.values.size() != 1 || fit.values[0].size() != draws * dim || fit.log_p.size() != 1 ||
      fit.log_q.size() != 1 || fit.log_p[0].size() != draws || fit.log_q[0].size() != draws)
    throw std::invalid_argument(fn + "the fit's draws disagree with its sizes (" + std::to_string(draws) +
                                " draws of " + std::to_string(dim) + " values, one chain, log_p and log_q per draw)");
  const std::vector<double>& constrained_mean = fit.mean_values;
  if (!constrained_mean.empty() && constrained_mean.size() != dim)
    throw std::invalid_argument(fn + "the fit's mean_values hold " + std::to_string(constrained_mean.size()) +
                                " values, expected " + std::to_string(dim));
  std::string out;
  out += "# tyche_version = " + std::to_string(TYCHE_VERSION_MAJOR) + "." + std::to_string(TYCHE_VERSION_MINOR) + "." +
         std::to_string(TYCHE_VERSION_PATCH) + "\n";
  out += "# model = " + options.model + "\n";
  out += "# method = " + fit.method + "\n";
  if (!fit.settings.empty()) {  // as CmdStan nests them under the method
    out += "#   " + fit.method + "\n";
    for (const auto& [key, value] : fit.settings) out += "#     " + key + " = " + value + "\n";
  }
  out += "# data\n#   file = " + options.data_file + "\n";
  out += "# random\n#   seed = " + std::to_string(fit.seed) + "\n";
  if (!std::isnan(fit.pareto_k)) out += "# pareto_k = " + number(fit.pareto_k) + "\n";
  for (std::size_t k = 0; k < lead.size(); ++k) {
    out += lead[k];
    out += ',';
  }
  for (std::size_t k = 0; k < dim; ++k) {
    out += stan_csv_name(fit.names[k]);
    out += k + 1 < dim ? "," : "";
  }
  if (dim == 0) out.pop_back();
  out += '\n';
  const bool variational = fit.method == "variational";
  if (variational && !constrained_mean.empty()) {  // the mean row
    out += "0,0,0";
    for (double v : constrained_mean) {
      out += ',';
      append_number(out, v);
    }
    out += '\n';
  }
  for (std::size_t d = 0; d < draws; ++d) {
    const double lp = fit.log_p[0][d], lq = fit.log_q[0][d];
    if (fit.method == "laplace") {
      append_number(out, lp);
      out += ',';
      append_number(out, lq);
    } else if (fit.method == "pathfinder") {
      append_number(out, lq);
      out += ',';
      append_number(out, lp);
    } else {
      out += "0,";
      append_number(out, lp);
      out += ',';
      append_number(out, lq);
    }
    for (std::size_t k = 0; k < dim; ++k) {
      out += ',';
      append_number(out, fit.values[0][d * dim + k]);
    }
    out += '\n';
    if (out.size() > (1u << 16)) {
      os << out;
      out.clear();
    }
  }
  os << out;
  if (!os) throw std::runtime_error(fn + "the stream failed while writing the " + fit.method + " draws");
}

/// Writes a mode from optimize() in the CSV layout CmdStan's optimize method writes: the
/// configuration comments (`method = optimize`, its `algorithm` and `jacobian`), then `lp__`
/// and the constrained values, one row. lp__ is log p without its parameter-free part
/// (optimize_result::constant), as CmdStan reports it; the log density with every constant is
/// in the comment `log_density`. read_stan_csv reads it. Throws std::invalid_argument for a result whose sizes disagree or a name that cannot be
/// a column.
inline void write_stan_csv(std::ostream& os, const optimize_result& mode, const stan_csv_options& options = {}) {
  using namespace detail::stan_csv_impl;
  const std::string fn = "tyche::write_stan_csv: ";
  if (mode.values.size() != mode.names.size())
    throw std::invalid_argument(fn + "the optimize_result holds " + std::to_string(mode.values.size()) +
                                " values for " + std::to_string(mode.names.size()) + " names");
  check_one_line_options(options, fn);
  const char* algorithm = mode.algorithm == optimize_algorithm::bfgs     ? "bfgs"
                          : mode.algorithm == optimize_algorithm::newton ? "newton"
                                                                         : "lbfgs";
  std::string out;
  out += "# tyche_version = " + std::to_string(TYCHE_VERSION_MAJOR) + "." + std::to_string(TYCHE_VERSION_MINOR) + "." +
         std::to_string(TYCHE_VERSION_PATCH) + "\n";
  out += "# model = " + options.model + "\n";
  out += "# method = optimize\n#   optimize\n#     algorithm = " + std::string(algorithm) + "\n";
  out += std::string("#     jacobian = ") + (mode.jacobian ? "1" : "0") + "\n";
  out += "# data\n#   file = " + options.data_file + "\n";
  out += "# log_density = " + number(mode.log_density) + "\n";
  // Not configuration (no "key = value"): what the run did.
  out += "# " + (mode.message.empty() ? std::string("a mode given as values") : mode.message) + " (" +
         std::to_string(mode.iterations) + (mode.iterations == 1 ? " iteration, " : " iterations, ") +
         std::to_string(mode.gradient_evaluations) + " gradient evaluations)\n";
  out += "lp__";
  for (const std::string& name : mode.names) out += "," + stan_csv_name(name);
  out += '\n';
  append_number(out, mode.log_density - mode.constant);
  for (const double v : mode.values) {
    out += ',';
    append_number(out, v);
  }
  out += '\n';
  os << out;
  if (!os) throw std::runtime_error(fn + "the stream failed while writing the optimize result");
}

/// The contents of a CmdStan CSV file: column names as written (`theta.1`), the draws as a
/// row-major matrix, and what the comments say.
struct stan_csv {
  std::vector<std::string> names;  // every column, as in the file: lp__, …, energy__, mu, theta.1, …
  std::size_t rows = 0;            // number of draws (rows of values)
  std::vector<double> values;      // row-major: draw r, column k is values[r * names.size() + k]
  /// Rows before the `# Adaptation terminated` line: warm-up draws, when the file was written
  /// with save_warmup = 1; 0 otherwise.
  std::size_t warmup_rows = 0;
  /// The `key = value` lines of the configuration comments, in order, without "(Default)"
  /// (nested keys are not qualified: the data file and the output file are both `file`).
  std::vector<std::pair<std::string, std::string>> config;
  double step_size = std::numeric_limits<double>::quiet_NaN();  // `# Step size = …`; NaN if absent
  std::vector<double> inv_metric;  // the diagonal, or the dense matrix row by row; empty if absent
  bool dense_metric = false;
  double warmup_seconds = std::numeric_limits<double>::quiet_NaN();  // elapsed times; NaN if absent
  double sampling_seconds = std::numeric_limits<double>::quiet_NaN();

  [[nodiscard]] std::size_t cols() const { return names.size(); }
  [[nodiscard]] double at(std::size_t row, std::size_t col) const { return values[row * names.size() + col]; }

  /// The index of a column, by its name in the file (`theta.1`) or tyche's (`theta[1]`).
  /// Throws std::invalid_argument naming the column when there is none.
  [[nodiscard]] std::size_t column_index(std::string_view name) const {
    const std::string key = name.find('[') == std::string_view::npos ? std::string(name) : stan_csv_name(name);
    for (std::size_t k = 0; k < names.size(); ++k)
      if (names[k] == key) return k;
    std::string list;
    for (std::size_t k = 0; k < names.size() && k < 20; ++k) list += (k ? ", " : "") + names[k];
    if (names.size() > 20) list += ", ...";
    throw std::invalid_argument("tyche::stan_csv::column_index: no column " +
                                detail::stan_csv_impl::quote_name(key) + " (columns: " + list + ")");
  }
  /// Every draw of one column, in file order.
  [[nodiscard]] std::vector<double> column(std::string_view name) const {
    const std::size_t k = column_index(name);
    std::vector<double> out(rows);
    for (std::size_t r = 0; r < rows; ++r) out[r] = at(r, k);
    return out;
  }
  /// The value of a configuration key (the first one of that name), if the file has it.
  [[nodiscard]] std::optional<std::string> config_value(std::string_view key) const {
    for (const auto& [k, v] : config)
      if (k == key) return v;
    return std::nullopt;
  }
};

/// Reads a CmdStan CSV file from a stream; `source` names it in error messages. Throws
/// std::invalid_argument, naming the source and the line, when the input is malformed.
inline stan_csv read_stan_csv(std::istream& in, std::string_view source = "<stream>") {
  using namespace detail::stan_csv_impl;
  stan_csv out;
  std::size_t line_no = 0, header_line = 0;
  auto fail = [&](const std::string& what) {
    throw std::invalid_argument("tyche::read_stan_csv: " + std::string(source) + ", line " +
                                std::to_string(line_no) + ": " + what);
  };
  // After `Diagonal elements of inverse mass matrix:`: one line of values; after `Elements of
  // inverse mass matrix:` (dense): lines of values up to the next comment that is not numbers.
  enum class expect { nothing, diagonal, dense_rows, sampling_time } next = expect::nothing;
  auto parse_list = [&](std::string_view text, std::vector<double>& values) {
    for (;;) {
      const std::size_t comma = text.find(',');
      const std::string_view field = trim(text.substr(0, comma));
      const auto x = parse_number(field);
      if (!x) return false;
      values.push_back(*x);
      if (comma == std::string_view::npos) return true;
      text.remove_prefix(comma + 1);
    }
  };
  auto leading_seconds = [](std::string_view text) -> std::optional<double> {
    text = trim(text);
    const std::size_t end = text.find(" seconds");
    if (end == std::string_view::npos) return std::nullopt;
    return parse_number(trim(text.substr(0, end)));
  };

  std::string raw;
  while (std::getline(in, raw)) {
    ++line_no;
    std::string_view line(raw);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (trim(line).empty()) continue;  // CmdStan writes none; tolerated (a trailing blank line)
    if (line.front() == '#') {
      std::string_view text = line.substr(line.find_first_not_of('#') == std::string_view::npos
                                              ? line.size()
                                              : line.find_first_not_of('#'));
      text = trim(text);
      if (next == expect::diagonal) {
        if (!parse_list(text, out.inv_metric))
          fail("expected the diagonal of the inverse metric (numbers separated by commas) after "
               "'Diagonal elements of inverse mass matrix:', found " + quote_name(text));
        next = expect::nothing;
        continue;
      }
      if (next == expect::dense_rows) {
        std::vector<double> row;
        if (parse_list(text, row)) {
          out.inv_metric.insert(out.inv_metric.end(), row.begin(), row.end());
          continue;
        }
        next = expect::nothing;
      }
      if (next == expect::sampling_time) {
        const auto t = leading_seconds(text);
        if (!t || text.find("(Sampling)") == std::string_view::npos)
          fail("expected the sampling time ('<number> seconds (Sampling)') after the warm-up time, found " +
               quote_name(text));
        out.sampling_seconds = *t;
        next = expect::nothing;
        continue;
      }
      if (header_line == 0) {
        const std::size_t eq = text.find('=');
        if (eq != std::string_view::npos) {
          std::string_view value = trim(text.substr(eq + 1));
          constexpr std::string_view dflt = "(Default)";
          if (value.size() >= dflt.size() && value.substr(value.size() - dflt.size()) == dflt)
            value = trim(value.substr(0, value.size() - dflt.size()));
          out.config.emplace_back(std::string(trim(text.substr(0, eq))), std::string(value));
        }
        continue;
      }
      if (text == "Adaptation terminated") {
        out.warmup_rows = out.rows;
      } else if (text.starts_with("Step size")) {
        const std::size_t eq = text.find('=');
        const auto x = eq == std::string_view::npos ? std::nullopt : parse_number(trim(text.substr(eq + 1)));
        if (!x) fail("expected 'Step size = <number>', found " + quote_name(text));
        out.step_size = *x;
      } else if (text.starts_with("Diagonal elements of inverse mass matrix")) {
        next = expect::diagonal;
      } else if (text.starts_with("Elements of inverse mass matrix")) {
        out.dense_metric = true;
        next = expect::dense_rows;
      } else if (text.starts_with("Elapsed Time:")) {
        const auto t = leading_seconds(text.substr(std::string_view("Elapsed Time:").size()));
        if (!t) fail("expected 'Elapsed Time: <number> seconds (Warm-up)', found " + quote_name(text));
        out.warmup_seconds = *t;
        next = expect::sampling_time;
      }
      continue;  // other comments (CmdStan's messages) are ignored
    }
    if (next == expect::diagonal)
      fail("expected a comment line with the diagonal of the inverse metric after "
           "'Diagonal elements of inverse mass matrix:'");
    if (next == expect::sampling_time)
      fail("expected a comment line with the sampling time after the warm-up time");
    next = expect::nothing;

    if (header_line == 0) {  // the column header: the first line that is not a comment
      header_line = line_no;
      std::string_view rest = line;
      for (std::size_t k = 1;; ++k) {
        const std::size_t comma = rest.find(',');
        const std::string_view name = rest.substr(0, comma);
        if (name.empty()) fail("column " + std::to_string(k) + " of the header has an empty name");
        if (parse_number(name))
          fail("expected the column header (names), found the number " + quote_name(name) +
               " in column " + std::to_string(k) + ": is the header missing?");
        const bool ok_start = is_letter(name.front()) || name.front() == '_';
        bool ok = ok_start;
        for (char ch : name) ok = ok && (is_letter(ch) || is_digit(ch) || ch == '_' || ch == '.' || ch == ':');
        if (!ok)
          fail("column " + std::to_string(k) + " of the header, " + quote_name(name) +
               ", is not a CmdStan column name (a letter, then letters, digits, '_', '.', ':')");
        for (std::size_t j = 0; j < out.names.size(); ++j)
          if (out.names[j] == name)
            fail("column " + std::to_string(k) + " of the header, " + quote_name(name) +
                 ", has the name of column " + std::to_string(j + 1));
        out.names.emplace_back(name);
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
      }
      continue;
    }

    // A row of draws.
    const std::size_t n = out.names.size();
    std::size_t count = 1;
    for (char ch : line) count += ch == ',' ? 1 : 0;
    if (count != n)
      fail(std::to_string(count) + (count == 1 ? " value" : " values") + ", expected " + std::to_string(n) +
           " (the columns of the header at line " + std::to_string(header_line) + ")");
    std::string_view rest = line;
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t comma = rest.find(',');
      const std::string_view field = rest.substr(0, comma);
      const auto x = parse_number(field);
      if (!x) {
        std::string why = field.empty() ? "is empty" : quote_name(field) + " is not a number";
        const auto r = [&] {
          double v = 0;
          std::string_view f = field;
          if (f.size() > 1 && f.front() == '+') f.remove_prefix(1);
          return std::from_chars(f.data(), f.data() + f.size(), v);
        }();
        if (r.ec == std::errc::result_out_of_range) why = quote_name(field) + " is out of the range of a double";
        fail("column " + std::to_string(k + 1) + " (" + out.names[k] + ") " + why);
      }
      out.values.push_back(*x);
      if (comma != std::string_view::npos) rest.remove_prefix(comma + 1);
    }
    ++out.rows;
  }
  if (in.bad()) throw std::runtime_error("tyche::read_stan_csv: " + std::string(source) + ": read error");
  ++line_no;  // errors at the end of the input name the line after the last
  if (next == expect::diagonal)
    fail("the input ends after 'Diagonal elements of inverse mass matrix:' without the values");
  if (next == expect::sampling_time) fail("the input ends after the warm-up time without the sampling time");
  if (header_line == 0)
    fail("no column header: the input has no line that is not a comment (is it a CmdStan CSV file?)");
  return out;
}

/// Reads a CmdStan CSV file; errors name the file.
inline stan_csv read_stan_csv(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("tyche::read_stan_csv: cannot open " + file.string());
  return read_stan_csv(in, file.string());
}

}  // namespace tyche
