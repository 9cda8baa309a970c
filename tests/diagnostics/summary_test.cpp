// summary(fit) on fits it cannot fully estimate: too few draws, constant parameters. Every
// quantity that needs more than there is is NaN, a warning line says so once, nothing throws
// (posterior prints NA; Stan prints nan).
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

namespace {

// A fit of `chains` chains and `draws` draws of two parameters: "a" varies, "b" is constant.
tyche::nuts_fit hand_made_fit(int chains, int draws) {
  tyche::nuts_fit fit;
  fit.names = {"a", "b"};
  fit.chains = chains;
  fit.draws = draws;
  for (int c = 0; c < chains; ++c) {
    std::vector<double> values;
    std::vector<tyche::samplers::transition_stats> stats(static_cast<std::size_t>(draws));
    for (int d = 0; d < draws; ++d) {
      values.push_back(std::sin(1.0 + c * 31.0 + d));
      values.push_back(2.5);
      stats[static_cast<std::size_t>(d)].energy = std::cos(d * 1.7 + c);
    }
    fit.values.push_back(values);
    fit.stats.push_back(stats);
  }
  return fit;
}

bool has_warning(const tyche::fit_summary& s, const std::string& text) {
  for (const auto& w : s.warnings)
    if (w.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("summary: fewer than 4 draws per chain give NaN and one warning", "[diagnostics][summary]") {
  for (int draws : {0, 1, 2, 3}) {
    INFO(draws << " draws");
    const auto fit = hand_made_fit(4, draws);
    tyche::fit_summary s;
    REQUIRE_NOTHROW(s = tyche::summary(fit));
    REQUIRE(s.rows.size() == 2);
    const auto& a = s.rows[0];
    CHECK(std::isnan(a.mcse));
    CHECK(std::isnan(a.ess_bulk));
    CHECK(std::isnan(a.ess_tail));
    CHECK(std::isnan(a.rhat));
    if (draws == 0) CHECK(std::isnan(a.mean));
    else CHECK(std::isfinite(a.mean));
    if (draws * 4 < 2) CHECK(std::isnan(a.sd));
    else CHECK(std::isfinite(a.sd));
    CHECK(has_warning(s, std::to_string(draws) + " draws per chain: MCSE, ESS and R-hat need at least 4"));
    std::ostringstream out;
    CHECK_NOTHROW(out << s);
    CHECK(out.str().find("nan") != std::string::npos);
  }
}

TEST_CASE("summary: a constant parameter is NaN without a warning; NaN draws are warned of", "[diagnostics][summary]") {
  auto fit = hand_made_fit(4, 100);
  const auto s = tyche::summary(fit);
  REQUIRE(s.rows.size() == 2);
  CHECK(std::isfinite(s.rows[0].rhat));
  CHECK(std::isnan(s.rows[1].rhat));  // as L[1,1] of a Cholesky factor: NaN in the table
  CHECK(std::isnan(s.rows[1].ess_bulk));
  CHECK(s.rows[1].mean == 2.5);
  CHECK(s.rows[1].sd == 0);
  CHECK(s.warnings.empty());
  fit.values[2][2 * 17] = std::nan("");  // draw 17 of a, chain 3
  const auto t = tyche::summary(fit);
  CHECK(std::isnan(t.rows[0].rhat));
  CHECK(std::isnan(t.rows[0].mcse));
  CHECK(has_warning(t, "NaN draws of a: their MCSE, ESS and R-hat are NaN"));
  CHECK(t.warnings.size() == 1);
}

TEST_CASE("summary: from 4 draws on, an estimate that is still NaN for a varying parameter is warned of",
          "[diagnostics][summary]") {
  for (int draws : {4, 5, 6, 8, 100}) {
    INFO(draws << " draws");
    const auto s = tyche::summary(hand_made_fit(4, draws));
    const auto& a = s.rows.at(0);
    const bool unestimated = std::isnan(a.mcse) || std::isnan(a.ess_bulk) || std::isnan(a.ess_tail) || std::isnan(a.rhat);
    CHECK(has_warning(s, "the MCSE, ESS or R-hat of a could not be estimated from " + std::to_string(draws) +
                             " draws per chain") == unestimated);
    CHECK_FALSE(has_warning(s, "of a, b"));  // b is constant: NaN without a warning, as above
    if (draws <= 5) CHECK(unestimated);  // every ESS needs 3 draws per split chain
    if (draws <= 5) CHECK(has_warning(s, "ESS needs 3 draws per split chain; run more draws"));
    if (draws == 100) CHECK_FALSE(unestimated);
  }
  // 100 draws, a tenth of them tied at the maximum: the tail ESS is NaN, and the advice is not
  // to run more draws.
  auto tied = hand_made_fit(4, 100);
  for (auto& chain : tied.values)
    for (std::size_t d = 0; d < 10; ++d) chain[d * 2] = 5.0;
  const auto t = tyche::summary(tied);
  CHECK(std::isnan(t.rows.at(0).ess_tail));
  CHECK(has_warning(t, "the MCSE, ESS or R-hat of a could not be estimated from 100 draws per chain (NaN in the "
                       "table): too many draws tie at a tail or repeat"));
  // A real fit of 5 draws per chain: no ESS can be estimated.
  using namespace tyche;
  const auto m = model(joint(normal<"mu">(0.0, 1.0), half_normal<"sigma">(1.0)));
  const auto s = summary(nuts(m, {.chains = 4, .warmup = 50, .draws = 5, .seed = 3}));
  CHECK(std::isnan(s.rows.at(0).ess_bulk));
  CHECK(std::isnan(s.rows.at(0).ess_tail));
  CHECK(has_warning(s, "the MCSE, ESS or R-hat of mu, sigma could not be estimated from 5 draws per chain"));
}

TEST_CASE("summary: a real fit with 2 draws per chain", "[diagnostics][summary]") {
  using namespace tyche;
  const auto m = model(joint(normal<"x">(0.0, 1.0)));
  const auto fit = nuts(m, {.chains = 2, .warmup = 20, .draws = 2, .seed = 5});
  fit_summary s;
  REQUIRE_NOTHROW(s = summary(fit));
  CHECK(std::isnan(s.rows.at(0).rhat));
  CHECK(std::isfinite(s.rows.at(0).mean));
  CHECK(has_warning(s, "2 draws per chain"));
}

TEST_CASE("summary: the divergences and the transitions at the maximum tree depth are counted and printed, 0 too",
          "[diagnostics][summary]") {
  tyche::nuts_fit fit = hand_made_fit(2, 10);
  fit.max_depth = 10;
  fit.stats[0][3].tree_depth = 10;
  fit.stats[1][7].tree_depth = 10;
  fit.stats[1][8].tree_depth = 9;
  auto printed = [](const tyche::fit_summary& s) {
    std::ostringstream out;
    out << s;
    return out.str();
  };
  const tyche::fit_summary s = tyche::summary(fit);
  CHECK(s.divergent == 0);
  CHECK(s.at_max_depth == 2);
  CHECK_THAT(printed(s), Catch::Matchers::Contains("2 chains of 10 draws after warm-up; 0 divergent, 2 at the maximum tree depth (10)"));
  // One chain: "1 chain of" (2026-12-04: a new user's summary said "1 chains of").
  tyche::nuts_fit one = hand_made_fit(1, 10);
  one.max_depth = 10;
  CHECK_THAT(printed(tyche::summary(one)), Catch::Matchers::Contains("\n1 chain of 10 draws after warm-up"));
  fit.stats[0][1].divergent = true;
  const tyche::fit_summary t = tyche::summary(fit, 11);
  CHECK(t.divergent == 1);
  CHECK(t.at_max_depth == 0);
  CHECK_THAT(printed(t), Catch::Matchers::Contains("; 1 divergent, 0 at the maximum tree depth (11)"));
  // A warm-up too short to adapt the metric says so (CmdStan warns too); 0 (none asked) does not.
  CHECK_THAT(printed(t), !Catch::Matchers::Contains("warm-up of"));
  fit.warmup = 10;
  CHECK_THAT(printed(tyche::summary(fit)),
             Catch::Matchers::Contains("warning: warm-up of 10 iterations is under 20: only the step size was adapted"));
  fit.warmup = 0;
  // A fit that did not report its run (gradient_evaluations 0, as hand made) prints no run line;
  // one that did says how it was laid out and what it cost.
  CHECK_THAT(printed(t), !Catch::Matchers::Contains("ran "));
  fit.gradient_evaluations = 71234;
  fit.seconds = 0.0812;
  fit.threads = 2;
  fit.lanes = 1;
  CHECK_THAT(printed(tyche::summary(fit)),
             Catch::Matchers::Contains("\nran 0.0812 s, 71234 gradient evaluations: 2 chains on 2 threads, one at a time\n"));
  fit.threads = 1;
  fit.helper_threads = 3;
  fit.lanes = 4;
  fit.split = 8;
  CHECK_THAT(printed(tyche::summary(fit)),
             Catch::Matchers::Contains("2 chains on 1 thread in SIMD batches of 4 lanes; each evaluation split in 8 "
                                       "parts with 3 helper threads\n"));
  fit.device_seconds = 0.05;
  CHECK_THAT(printed(tyche::summary(fit)),
             Catch::Matchers::Contains("ran 0.0812 s (0.05 s in the device's kernels), 71234 gradient evaluations: 2 "
                                       "chains on the device executor (tyche::cuda)\n"));
  fit.emulated_device = true;  // cuda{.emulate = true}: no GPU ran it
  CHECK_THAT(printed(tyche::summary(fit)),
             Catch::Matchers::Contains("ran 0.0812 s (0.05 s in the emulated device's kernels), 71234 gradient "
                                       "evaluations: 2 chains on the device executor emulated on the host "
                                       "(tyche::cuda{.emulate = true})\n"));
  // The helpers' share of the split's parts, where counted.
  fit.device_seconds = 0;
  fit.emulated_device = false;
  fit.split_parts = 800;
  fit.split_parts_by_helpers = 301;
  CHECK_THAT(printed(tyche::summary(fit)),
             Catch::Matchers::Contains("each evaluation split in 8 parts with 3 helper threads, which ran 38 % of them\n"));
}

TEST_CASE("nuts_fit: draws and means by name, and unknown names that say which names there are",
          "[diagnostics][summary]") {
  const tyche::nuts_fit fit = hand_made_fit(3, 5);
  CHECK(fit.index("a") == 0);
  CHECK(fit.index("b") == 1);
  const auto a = fit.parameter("a");
  REQUIRE(a.size() == 3);
  double sum = 0;
  for (int c = 0; c < 3; ++c) {
    REQUIRE(a[c].size() == 5);
    for (int d = 0; d < 5; ++d) {
      CHECK(a[c][d] == std::sin(1.0 + c * 31.0 + d));
      sum += a[c][d];
    }
  }
  CHECK(fit.parameter("b") == fit.parameter(std::size_t{1}));
  CHECK(fit.mean_of("a") == Approx(sum / 15).epsilon(1e-15));
  CHECK(fit.mean_of("b") == 2.5);
  CHECK(fit.mean_of("a") == Approx(tyche::summary(fit).rows[0].mean).epsilon(1e-14));
  CHECK_THROWS_WITH(fit.index("c"), Catch::Matchers::Contains("no value named 'c'; the fit has a, b"));
  CHECK_THROWS_WITH(fit.mean_of("theta[1]"), Catch::Matchers::Contains("no value named 'theta[1]'"));
  // A vector's element by a 0-based or past-the-end index, or the vector by its name alone: its
  // elements' names.
  tyche::nuts_fit vec = fit;
  vec.names = {"a", "z[1]", "z[2]", "z[3]", "zz"};
  for (const char* wrong : {"z[0]", "z[4]", "z"})
    CHECK_THROWS_WITH(vec.index(wrong), Catch::Matchers::Contains(std::string("no value named '") + wrong +
                                                                  "'; 'z' has 3 values, z[1] … z[3] (indices count from 1"));
  CHECK_THROWS_WITH(fit.parameter(std::size_t{2}), Catch::Matchers::Contains("index 2, but the fit has 2 values"));
}

TEST_CASE("summary: R-hat warnings, one per value up to 3, then one line naming the worst 3", "[diagnostics][summary]") {
  // Chains that sit at different levels: value k's chains are k apart, so its R-hat grows with k.
  auto unmixed_fit = [](int values) {
    tyche::nuts_fit fit;
    for (int k = 0; k < values; ++k) fit.names.push_back("z[" + std::to_string(k + 1) + "]");
    fit.chains = 2;
    fit.draws = 50;
    for (int c = 0; c < 2; ++c) {
      std::vector<double> v;
      for (int d = 0; d < 50; ++d)
        for (int k = 0; k < values; ++k) v.push_back(std::sin(1.0 + 7.0 * d + 3.0 * k + c) + 0.6 * (k + 1) * c);
      fit.values.push_back(v);
      fit.stats.emplace_back(50);
    }
    return fit;
  };
  const tyche::fit_summary three = tyche::summary(unmixed_fit(3));
  REQUIRE(three.max_rhat() > 1.01);
  int separate = 0;
  for (const auto& w : three.warnings) separate += w.find(": R-hat = ") != std::string::npos ? 1 : 0;
  CHECK(separate == 3);
  const tyche::fit_summary many = tyche::summary(unmixed_fit(6));
  int unmixed = 0;
  for (const auto& r : many.rows) unmixed += r.rhat > 1.01 ? 1 : 0;
  REQUIRE(unmixed > 3);
  CHECK(has_warning(many, std::to_string(unmixed) + " values have R-hat > 1.01 ("));
  // The worst first.
  CHECK(has_warning(many, "R-hat > 1.01 (" + many.worst_row(&tyche::summary_row::rhat)->name + " "));
  CHECK(!has_warning(many, ": R-hat = "));
}
