// MCMC diagnostics (tyche/diagnostics/convergence.hpp) against the R package posterior: every
// draw set under data/ (draws_<set>.csv, one line per chain) and every quantity of
// data/reference.csv, written by tools/diagnostics_reference.R, agree to 1e-6 relative; NA there
// is NaN here. Then the per-chain overloads, the argument checks and a few hand-computed cases.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path data_dir = fs::path(__FILE__).parent_path() / "data";

struct draw_set {
  std::vector<std::vector<double>> chains;
  std::vector<double> flat;  // chains × draws, row-major
  std::size_t n = 0;
};

std::vector<std::string> split_line(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, ',')) fields.push_back(field);
  return fields;
}

double parse_value(const std::string& s) {
  if (s == "NA") return std::numeric_limits<double>::quiet_NaN();
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0') throw std::runtime_error("not a number: '" + s + "'");
  return v;
}

draw_set read_draws(const std::string& name) {
  std::ifstream in(data_dir / ("draws_" + name + ".csv"));
  REQUIRE(in.good());
  draw_set set;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<double> chain;
    for (const auto& f : split_line(line)) chain.push_back(parse_value(f));
    set.chains.push_back(chain);
    set.flat.insert(set.flat.end(), chain.begin(), chain.end());
  }
  REQUIRE_FALSE(set.chains.empty());
  set.n = set.chains.front().size();
  return set;
}

/// reference.csv: set → quantity → value.
std::map<std::string, std::map<std::string, double>> read_reference() {
  std::ifstream in(data_dir / "reference.csv");
  REQUIRE(in.good());
  std::map<std::string, std::map<std::string, double>> out;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    const auto f = split_line(line);
    REQUIRE(f.size() == 3);
    out[f[0]][f[1]] = parse_value(f[2]);
  }
  return out;
}

using flat_fn = std::function<double(std::span<const double>, std::size_t, std::size_t)>;
using chains_fn = std::function<double(const std::vector<std::vector<double>>&)>;

struct quantity {
  flat_fn flat;
  chains_fn chains;
};

#define TYCHE_DIAG_QUANTITY(name, call_flat, call_chains)                                          \
  {                                                                                                \
    name, quantity {                                                                               \
      [](std::span<const double> d, std::size_t m, std::size_t n) { return call_flat; },          \
          [](const std::vector<std::vector<double>>& c) { return call_chains; }                    \
    }                                                                                              \
  }

const std::map<std::string, quantity>& quantities() {
  static const std::map<std::string, quantity> q = {
      TYCHE_DIAG_QUANTITY("rhat", tyche::rhat(d, m, n), tyche::rhat(c)),
      TYCHE_DIAG_QUANTITY("rhat_bulk", tyche::rhat_bulk(d, m, n), tyche::rhat_bulk(c)),
      TYCHE_DIAG_QUANTITY("rhat_tail", tyche::rhat_tail(d, m, n), tyche::rhat_tail(c)),
      TYCHE_DIAG_QUANTITY("split_rhat", tyche::split_rhat(d, m, n), tyche::split_rhat(c)),
      TYCHE_DIAG_QUANTITY("ess_bulk", tyche::ess_bulk(d, m, n), tyche::ess_bulk(c)),
      TYCHE_DIAG_QUANTITY("ess_tail", tyche::ess_tail(d, m, n), tyche::ess_tail(c)),
      TYCHE_DIAG_QUANTITY("ess_basic", tyche::ess_basic(d, m, n), tyche::ess_basic(c)),
      TYCHE_DIAG_QUANTITY("ess_mean", tyche::ess_mean(d, m, n), tyche::ess_mean(c)),
      TYCHE_DIAG_QUANTITY("ess_q05", tyche::ess_quantile(d, m, n, 0.05), tyche::ess_quantile(c, 0.05)),
      TYCHE_DIAG_QUANTITY("ess_q50", tyche::ess_quantile(d, m, n, 0.5), tyche::ess_quantile(c, 0.5)),
      TYCHE_DIAG_QUANTITY("ess_q95", tyche::ess_quantile(d, m, n, 0.95), tyche::ess_quantile(c, 0.95)),
      TYCHE_DIAG_QUANTITY("ess_q100", tyche::ess_quantile(d, m, n, 1.0), tyche::ess_quantile(c, 1.0)),
      TYCHE_DIAG_QUANTITY("mcse_mean", tyche::mcse_mean(d, m, n), tyche::mcse_mean(c)),
      TYCHE_DIAG_QUANTITY("mcse_q05", tyche::mcse_quantile(d, m, n, 0.05), tyche::mcse_quantile(c, 0.05)),
      TYCHE_DIAG_QUANTITY("mcse_q50", tyche::mcse_quantile(d, m, n, 0.5), tyche::mcse_quantile(c, 0.5)),
      TYCHE_DIAG_QUANTITY("mcse_q95", tyche::mcse_quantile(d, m, n, 0.95), tyche::mcse_quantile(c, 0.95)),
      TYCHE_DIAG_QUANTITY("q05", (static_cast<void>(m), static_cast<void>(n), tyche::quantile(d, 0.05)),
                          tyche::quantile(c.front(), 0.05)),
      TYCHE_DIAG_QUANTITY("q50", (static_cast<void>(m), static_cast<void>(n), tyche::quantile(d, 0.5)),
                          tyche::quantile(c.front(), 0.5)),
      TYCHE_DIAG_QUANTITY("q95", (static_cast<void>(m), static_cast<void>(n), tyche::quantile(d, 0.95)),
                          tyche::quantile(c.front(), 0.95)),
  };
  return q;
}
#undef TYCHE_DIAG_QUANTITY

bool agrees(double actual, double expected, double rel = 1e-6) {
  if (std::isnan(expected)) return std::isnan(actual);
  // Chains constant within but not across (set constant_chains): the within-chain variance is 0
  // and R̂ is +∞; posterior's matrixStats sums leave rounding noise there and report ~1e16.
  if (std::abs(expected) > 1e12) return std::isinf(actual) || std::abs(actual) > 1e12;
  if (std::isnan(actual)) return false;
  return std::abs(actual - expected) <= rel * std::abs(expected);
}

}  // namespace

TEST_CASE("diagnostics: every draw set and quantity agrees with posterior to 1e-6 relative",
          "[diagnostics][posterior]") {
  const auto reference = read_reference();
  REQUIRE(reference.size() >= 10);
  std::size_t compared = 0;
  for (const auto& [set_name, values] : reference) {
    const draw_set set = read_draws(set_name);
    for (const auto& [q_name, expected] : values) {
      const auto it = quantities().find(q_name);
      INFO("set " << set_name << " (" << set.chains.size() << " × " << set.n << "), " << q_name);
      REQUIRE(it != quantities().end());
      const double actual = it->second.flat(set.flat, set.chains.size(), set.n);
      INFO("tyche " << actual << ", posterior " << expected);
      CHECK(agrees(actual, expected));
      // The per-chain overload gives the very same number (quantiles: only over all draws, so
      // compared where there is one chain).
      if (q_name[0] != 'q') {
        const double per_chain = it->second.chains(set.chains);
        CHECK((per_chain == actual || (std::isnan(per_chain) && std::isnan(actual))));
      } else if (set.chains.size() == 1) {
        CHECK(it->second.chains(set.chains) == actual);
      }
      ++compared;
    }
  }
  CHECK(compared >= 200);
}

TEST_CASE("diagnostics: the reference sets cover what they are meant to", "[diagnostics][posterior]") {
  const auto reference = read_reference();
  // Large R̂ for the shifted chain, R̂ ≈ 1 for iid draws, the folded R̂ catching unequal scales.
  CHECK(reference.at("shifted").at("rhat") > 1.1);
  CHECK(reference.at("iid_normal").at("rhat") < 1.01);
  CHECK(reference.at("scaled").at("rhat_tail") > reference.at("scaled").at("rhat_bulk"));
  // The τ̂ cap: ESS = S·log10(S) for the antithetic chains (S = 2000).
  CHECK(reference.at("antithetic").at("ess_basic") == Approx(2000 * std::log10(2000.0)).epsilon(1e-12));
  // Constant draws: NA everywhere posterior says so.
  CHECK(std::isnan(reference.at("constant").at("rhat")));
}

TEST_CASE("diagnostics: per-chain spans, vectors and the flat array agree", "[diagnostics]") {
  const draw_set set = read_draws("ar1");
  std::vector<std::span<const double>> spans(set.chains.begin(), set.chains.end());
  const double r = tyche::rhat(set.flat, set.chains.size(), set.n);
  CHECK(tyche::rhat(spans) == r);
  CHECK(tyche::rhat(std::span<const std::span<const double>>(spans)) == r);
  CHECK(tyche::ess_bulk(spans) == tyche::ess_bulk(set.chains));
}

TEST_CASE("diagnostics: shapes are checked", "[diagnostics]") {
  const std::vector<double> x(12, 0.5);
  CHECK_THROWS_AS(tyche::rhat(x, 0, 12), std::invalid_argument);
  CHECK_THROWS_AS(tyche::ess_bulk(x, 2, 5), std::invalid_argument);  // 10 ≠ 12
  CHECK_THROWS_AS(tyche::ess_quantile(x, 2, 6, 1.5), std::invalid_argument);
  CHECK_THROWS_AS(tyche::quantile(x, -0.1), std::invalid_argument);
  const std::vector<std::vector<double>> ragged = {{1, 2, 3, 4}, {1, 2, 3, 4, 5}};
  CHECK_THROWS_WITH(tyche::rhat(ragged), Catch::Matchers::Contains("chain 2 has 5 draws"));
  const std::vector<std::vector<double>> none;
  CHECK_THROWS_AS(tyche::ess_tail(none), std::invalid_argument);
}

TEST_CASE("diagnostics: fewer than 4 draws per chain give NaN, never throw", "[diagnostics]") {
  // posterior returns NA there: a split chain of 1 draw has no variance.
  for (std::size_t chains : {1u, 2u, 4u}) {
    for (std::size_t n : {0u, 1u, 2u, 3u}) {
      std::vector<double> x(chains * n);
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(1.0 + static_cast<double>(i));
      std::vector<std::vector<double>> by_chain(chains);
      for (std::size_t c = 0; c < chains; ++c) by_chain[c].assign(x.begin() + c * n, x.begin() + (c + 1) * n);
      INFO(chains << " × " << n);
      CHECK(std::isnan(tyche::rhat(x, chains, n)));
      CHECK(std::isnan(tyche::rhat(by_chain)));
      CHECK(std::isnan(tyche::rhat_bulk(x, chains, n)));
      CHECK(std::isnan(tyche::rhat_tail(x, chains, n)));
      CHECK(std::isnan(tyche::split_rhat(x, chains, n)));
      CHECK(std::isnan(tyche::ess_bulk(x, chains, n)));
      CHECK(std::isnan(tyche::ess_bulk(by_chain)));
      CHECK(std::isnan(tyche::ess_tail(x, chains, n)));
      CHECK(std::isnan(tyche::ess_basic(x, chains, n)));
      CHECK(std::isnan(tyche::ess_mean(by_chain)));
      CHECK(std::isnan(tyche::ess_quantile(x, chains, n, 0.3)));
      CHECK(std::isnan(tyche::mcse_mean(x, chains, n)));
      CHECK(std::isnan(tyche::mcse_mean(by_chain)));
      CHECK(std::isnan(tyche::mcse_quantile(x, chains, n, 0.5)));
    }
  }
  // From 4 draws on, R̂ is a number (the hand-computed case below checks its value).
  const std::vector<double> four = {1, 2, 3, 4, 5, 6, 7, 9};
  CHECK(std::isfinite(tyche::rhat(four, 2, 4)));
}

TEST_CASE("diagnostics: constant and non-finite draws give NaN, never throw", "[diagnostics]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (std::size_t chains : {1u, 2u, 4u}) {
    for (std::size_t n : {4u, 5u, 9u, 100u}) {
      const std::vector<double> constant(chains * n, 3.0);
      INFO(chains << " × " << n);
      CHECK(std::isnan(tyche::rhat(constant, chains, n)));
      CHECK(std::isnan(tyche::split_rhat(constant, chains, n)));
      CHECK(std::isnan(tyche::ess_bulk(constant, chains, n)));
      CHECK(std::isnan(tyche::ess_tail(constant, chains, n)));
      CHECK(std::isnan(tyche::ess_basic(constant, chains, n)));
      CHECK(std::isnan(tyche::mcse_mean(constant, chains, n)));
      CHECK(std::isnan(tyche::mcse_quantile(constant, chains, n, 0.5)));
      CHECK(tyche::quantile(constant, 0.3) == 3.0);
      std::vector<double> with_nan(chains * n);
      for (std::size_t i = 0; i < with_nan.size(); ++i) with_nan[i] = std::sin(static_cast<double>(i));
      with_nan[1] = nan;
      CHECK(std::isnan(tyche::rhat(with_nan, chains, n)));
      CHECK(std::isnan(tyche::ess_bulk(with_nan, chains, n)));
      CHECK(std::isnan(tyche::ess_tail(with_nan, chains, n)));
      CHECK(std::isnan(tyche::quantile(with_nan, 0.5)));
      std::vector<double> with_inf = with_nan;
      with_inf[1] = inf;
      CHECK(std::isnan(tyche::split_rhat(with_inf, chains, n)));  // posterior: NA for ±∞
      CHECK(std::isnan(tyche::ess_basic(with_inf, chains, n)));
      CHECK_NOTHROW(tyche::rhat(with_inf, chains, n));             // ranks are finite
    }
  }
}

TEST_CASE("diagnostics: hand-computed cases", "[diagnostics]") {
  // Type-7 quantiles of 1..5 (R: quantile(1:5, c(0, .1, .5, .9, 1))).
  const std::vector<double> v = {5, 3, 1, 4, 2};
  CHECK(tyche::quantile(v, 0.0) == 1.0);
  CHECK(tyche::quantile(v, 0.1) == Approx(1.4).epsilon(1e-15));
  CHECK(tyche::quantile(v, 0.5) == 3.0);
  CHECK(tyche::quantile(v, 0.9) == Approx(4.6).epsilon(1e-15));
  CHECK(tyche::quantile(v, 1.0) == 5.0);

  // Split-R̂ of two chains {1,2,3,4} and {5,6,7,8}: split chains {1,2}, {5,6}, {3,4}, {7,8} of
  // n = 2 draws; W = ½, chain means 1.5, 5.5, 3.5, 7.5 with variance 20/3, B = n·20/3 = 40/3;
  // R̂ = √((B/W + n − 1)/n) = √((80/3 + 1)/2) = √(83/6).
  const std::vector<double> two = {1, 2, 3, 4, 5, 6, 7, 8};
  CHECK(tyche::split_rhat(two, 2, 4) == Approx(std::sqrt(83.0 / 6.0)).epsilon(1e-14));
  // With 4 draws per chain the split chains have 2 draws: ESS needs 3 (posterior: NA).
  CHECK(std::isnan(tyche::ess_basic(two, 2, 4)));

  // The rank-normalised version of a strictly increasing set equals that of any other strictly
  // increasing transform of it.
  std::vector<double> transformed(two.size());
  for (std::size_t i = 0; i < two.size(); ++i) transformed[i] = std::exp(two[i]);
  CHECK(tyche::rhat_bulk(transformed, 2, 4) == tyche::rhat_bulk(two, 2, 4));
  CHECK(tyche::rhat(transformed, 2, 4) == Approx(tyche::rhat(two, 2, 4)).epsilon(1e-14));
}

TEST_CASE("diagnostics: mcse_sd matches the spread of the sd over replicated chains", "[diagnostics]") {
  // 400 replicates of 4 AR(1) chains (rho = 0.6, stationary sd 1, started from the stationary
  // law) of 500 draws, and of iid normal draws: the sd of the replicates' sd estimates against
  // the mean of their mcse_sd. With 400 replicates the first is known to about 1/sqrt(800) =
  // 3.5 %: the 15 % tolerance is 4 of its standard errors. Fixed seed.
  for (const double rho : {0.0, 0.6}) {
    std::mt19937_64 rng(20261204);
    std::normal_distribution<double> z(0.0, 1.0);
    const std::size_t chains = 4, n = 500, replicates = 400;
    const double innovation = std::sqrt(1 - rho * rho);
    std::vector<double> sds, mcses;
    std::vector<double> draws(chains * n);
    for (std::size_t r = 0; r < replicates; ++r) {
      for (std::size_t c = 0; c < chains; ++c) {
        double x = z(rng);
        for (std::size_t i = 0; i < n; ++i) draws[c * n + i] = x = rho * x + innovation * z(rng);
      }
      double m = 0, v = 0;
      for (double d : draws) m += d / static_cast<double>(draws.size());
      for (double d : draws) v += (d - m) * (d - m) / static_cast<double>(draws.size() - 1);
      sds.push_back(std::sqrt(v));
      mcses.push_back(tyche::mcse_sd(draws, chains, n));
    }
    double m = 0, v = 0, mean_mcse = 0;
    for (double s : sds) m += s / replicates;
    for (double s : sds) v += (s - m) * (s - m) / (replicates - 1);
    for (double s : mcses) mean_mcse += s / replicates;
    INFO("rho " << rho << ": sd of the sd " << std::sqrt(v) << ", mean mcse_sd " << mean_mcse);
    CHECK(mean_mcse / std::sqrt(v) > 0.85);
    CHECK(mean_mcse / std::sqrt(v) < 1.15);
    // The iid case against its closed form: sd(s) ~ 1 / sqrt(2 S) for normal draws.
    if (rho == 0.0) CHECK(mean_mcse == Approx(1 / std::sqrt(2.0 * chains * n)).epsilon(0.05));
  }
  // Both forms agree; constant draws give NaN, as the other MCSEs do.
  std::vector<std::vector<double>> by_chain(2);
  for (std::size_t i = 0; i < 40; ++i) by_chain[i % 2].push_back(std::sin(1.7 * static_cast<double>(i * i)));
  std::vector<double> flat;
  for (const auto& c : by_chain) flat.insert(flat.end(), c.begin(), c.end());
  CHECK(std::isfinite(tyche::mcse_sd(flat, 2, 20)));
  CHECK(tyche::mcse_sd(flat, 2, 20) == tyche::mcse_sd(by_chain));
  CHECK(std::isnan(tyche::mcse_sd(std::vector<double>(40, 2.0), 2, 20)));
}
