// tests/support/golden_draws.hpp — draws of nuts() fixed by a file: a fit's every number (draws,
// sampler statistics, adapted step sizes and metrics, gradient count) written as hexadecimal
// floats, so that a later build can check that the same seed still gives the same draws, bit
// for bit. Used by tests/samplers/posteriordb_nuts_test.cpp ("golden draws").
//
// The files are kept per SIMD architecture of the build (xsimd's default_arch name, "scalar"
// without tyche::simd), since batch widths and instruction sets change the last bits (see
// docs/nuts.md, "Chains and random numbers"); tests/samplers/data/golden_draws/README.md says
// which commit wrote them and how.
#pragma once
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tyche_test {

/// The build's SIMD architecture, as the golden files' folder is named.
inline std::string golden_arch() {
#if TYCHE_HAS_XSIMD
  return xsimd::default_arch::name();
#else
  return "scalar";
#endif
}

inline std::filesystem::path golden_dir(const std::filesystem::path& from) {
  return std::filesystem::absolute(from).parent_path() / "data" / "golden_draws" / golden_arch();
}

inline std::string hex(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", x);
  return buf;
}

/// The whole fit as text, one record per line (see the top of this file).
inline std::string golden_text(const std::string& config, const tyche::nuts_fit& fit) {
  std::ostringstream out;
  out << "tyche-golden-draws 1\n";
  out << "config " << config << "\n";
  out << "gradient_evaluations " << fit.gradient_evaluations << "\n";
  for (int c = 0; c < fit.chains; ++c) {
    out << "chain " << c << " step_size " << hex(fit.step_size[c]) << " inv_metric";
    for (double v : fit.inv_metric[c]) out << ' ' << hex(v);
    out << "\n";
    const std::size_t dim = fit.dim();
    for (int t = 0; t < fit.draws; ++t) {
      const auto& s = fit.stats[c][t];
      out << "draw " << c << ' ' << t << ' ' << hex(s.log_density) << ' ' << hex(s.accept_stat) << ' '
          << hex(s.step_size) << ' ' << s.tree_depth << ' ' << s.n_leapfrog << ' ' << (s.divergent ? 1 : 0)
          << ' ' << hex(s.energy);
      for (std::size_t k = 0; k < dim; ++k) out << ' ' << hex(fit.values[c][t * dim + k]);
      out << "\n";
    }
  }
  return out.str();
}

/// Writes the fit to <golden_dir>/<name>.txt.
inline void write_golden(const std::filesystem::path& from, const std::string& name, const std::string& config,
                         const tyche::nuts_fit& fit) {
  const auto dir = golden_dir(from);
  std::filesystem::create_directories(dir);
  std::ofstream f(dir / (name + ".txt"));
  f << golden_text(config, fit);
  REQUIRE(f.good());
}

/// Compares the fit with <golden_dir>/<name>.txt, number by number (hexadecimal floats read
/// back exactly). Returns "" when they are equal, else the first difference (line, field, both
/// values in decimal); "no file" when this build's architecture has no golden files.
inline std::string compare_golden(const std::filesystem::path& from, const std::string& name,
                                  const std::string& config, const tyche::nuts_fit& fit) {
  const auto path = golden_dir(from) / (name + ".txt");
  std::ifstream f(path);
  if (!f) return "no file";
  std::stringstream want_text;
  want_text << f.rdbuf();
  std::istringstream want(want_text.str()), got(golden_text(config, fit));
  std::string want_line, got_line;
  for (int line = 1;; ++line) {
    const bool w = static_cast<bool>(std::getline(want, want_line));
    const bool g = static_cast<bool>(std::getline(got, got_line));
    if (!w && !g) return "";
    std::ostringstream where;
    where << path.string() << ", line " << line << ": ";
    if (w != g) return where.str() + (w ? "this build's fit is shorter" : "this build's fit is longer");
    if (want_line == got_line) continue;
    std::istringstream a(want_line), b(got_line);
    std::string x, y;
    for (int field = 1; a >> x && b >> y; ++field)
      if (x != y) {
        std::ostringstream msg;
        msg.precision(17);
        msg << where.str() << "field " << field << " (" << want_line.substr(0, want_line.find(' ', 10))
            << "...): file " << x << " = " << std::strtod(x.c_str(), nullptr) << ", this build " << y << " = "
            << std::strtod(y.c_str(), nullptr);
        return msg.str();
      }
    return where.str() + "the lines differ in their number of fields";
  }
}

}  // namespace tyche_test
