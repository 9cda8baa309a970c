// nuts() on the posteriordb models that tyche expresses today (examples/posteriordb.hpp),
// against their reference posteriors: each reported parameter's mean within 4 combined
// standard errors of the reference, |mean − ref| / (sd_ref √(1/ESS + 1/10000)) < 4
// (shared/posteriors/README.md), and its sd within 10 %. Settings: 4 chains, 1000 warm-up and
// 2500 draws each, Stan's defaults otherwise (adapt_delta 0.8, max depth 10), fixed seeds.
// diamonds runs with max tree depth 20, as its reference did (4 × 1000 draws: its likelihood is
// reduced to sufficient statistics, so ~8 million gradients take seconds). low_dim_gauss_mix
// uses the ordered transform, garch11 a linear recurrence, gp_pois_regr a Cholesky factor of
// parameters (autodiff/vector_ops.hpp).
#include <tyche/tyche.hpp>

#include "../../examples/posteriordb.hpp"
#include "support/golden_draws.hpp"
#include "support/reference_summary.hpp"
#include "support/sanitized.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using tyche_test::reference_row;

std::map<std::string, reference_row> reference(const std::string& name) {
  return tyche_test::read_reference_summary(tyche_examples::posteriors_dir(__FILE__) / name);
}

template <class Model>
void check_posterior(const Model& m, const std::string& name, std::uint64_t seed, int draws = 2500,
                     int max_depth = 10) {
  const auto ref = reference(name);
  const auto fit = tyche::nuts(
      m, {.chains = 4, .warmup = 1000, .draws = draws, .seed = seed, .max_depth = max_depth});
  CHECK(fit.max_depth == max_depth);
  for (std::size_t k = 0; k < fit.dim(); ++k) {
    const auto it = ref.find(fit.names[k]);
    REQUIRE(it != ref.end());
    const auto chains = fit.parameter(k);
    const auto r = tyche_test::compare_to_reference(chains, it->second);
    INFO(name << " " << fit.names[k] << ": mean " << r.mean << " (reference " << it->second.mean << "), sd " << r.sd
              << " (reference " << it->second.sd << "), ESS " << r.ess << ", z = " << r.z << ", R-hat "
              << tyche::rhat(chains));
    CHECK(r.z < 4.0);
    CHECK(std::fabs(r.sd / it->second.sd - 1.0) < 0.10);
    CHECK(tyche::rhat(chains) < 1.01);
  }
}

tyche::data_file load(const std::string& name) {
  return tyche::read_json_data(
      (tyche_examples::posteriors_dir(__FILE__) / name / "data.json").string());
}

}  // namespace

// reference_runs_unsanitized: the four comparisons with the reference posteriors run 4 chains of
// 3,500 iterations each (a minute under ASan, the clang tree of tools/test.sh); they are a
// statistical check, which the g++ tree runs in full. Under ASan the golden-draw test below still
// runs every one of the nine models through nuts() (warm-up, draws, both executors' layouts).
TEST_CASE("nuts: posteriordb references: kidiq, arK, mesquite, sblrc", "[nuts][reference]") {
  if constexpr (tyche_test::address_sanitized) return;  // see reference_runs_unsanitized
  {
    const auto p = tyche_examples::kidiq_kidscore_interaction(load("kidiq-kidscore_interaction"));
    check_posterior(p.model, "kidiq-kidscore_interaction", 101);
  }
  {
    const auto p = tyche_examples::ark(load("arK-arK"));
    check_posterior(p.model, "arK-arK", 102);
  }
  {
    const auto p = tyche_examples::mesquite_logmesquite(load("mesquite-logmesquite"));
    check_posterior(p.model, "mesquite-logmesquite", 103);
  }
  {
    const auto p = tyche_examples::sblrc_blr(load("sblrc-blr"));
    check_posterior(p.model, "sblrc-blr", 104);
  }
}

TEST_CASE("nuts: posteriordb references: low_dim_gauss_mix (ordered), garch11 (recurrence)",
          "[nuts][reference]") {
  if constexpr (tyche_test::address_sanitized) return;  // see reference_runs_unsanitized
  {
    const auto p = tyche_examples::low_dim_gauss_mix(load("low_dim_gauss_mix-low_dim_gauss_mix"));
    check_posterior(p.model, "low_dim_gauss_mix-low_dim_gauss_mix", 105);
  }
  {
    const auto p = tyche_examples::garch11(load("garch-garch11"));
    check_posterior(p.model, "garch-garch11", 106);
  }
}

TEST_CASE("nuts: posteriordb reference: gp_pois_regr (Cholesky of parameters)", "[nuts][reference]") {
  if constexpr (tyche_test::address_sanitized) return;  // see reference_runs_unsanitized
  // As the reference run: adapt_delta 0.99, max tree depth 15. The reference reports rho, alpha
  // and the derived f = L f_tilde, computed here from each draw.
  const auto d = load("gp_pois_regr-gp_pois_regr");
  const auto p = tyche_examples::gp_pois_regr(d);
  const auto ref = reference("gp_pois_regr-gp_pois_regr");
  const auto fit = tyche::nuts(p.model, {.chains = 4, .warmup = 1000, .draws = 2500, .seed = 107,
                                         .max_depth = 15, .adapt_delta = 0.99});
  const std::size_t n = 11, dim = fit.dim();
  // quantities[q][chain][draw]: rho, alpha, f[1..n]
  std::vector<std::vector<std::vector<double>>> q(2 + n, std::vector<std::vector<double>>(fit.chains));
  for (int c = 0; c < fit.chains; ++c) {
    for (int t = 0; t < fit.draws; ++t) {
      const std::vector<double> v(fit.values[c].begin() + std::ptrdiff_t(t * dim),
                                  fit.values[c].begin() + std::ptrdiff_t((t + 1) * dim));
      const auto f = tyche_examples::gp_pois_regr_f(d, v);
      q[0][c].push_back(v[0]);
      q[1][c].push_back(v[1]);
      for (std::size_t i = 0; i < n; ++i) q[2 + i][c].push_back(f[i]);
    }
  }
  for (std::size_t k = 0; k < q.size(); ++k) {
    const std::string name = k == 0 ? "rho" : k == 1 ? "alpha" : "f[" + std::to_string(k - 1) + "]";
    const auto it = ref.find(name);
    REQUIRE(it != ref.end());
    std::vector<double> all;
    for (const auto& c : q[k]) all.insert(all.end(), c.begin(), c.end());
    double mean = 0, var = 0;
    for (double v : all) mean += v / static_cast<double>(all.size());
    for (double v : all) var += (v - mean) * (v - mean) / static_cast<double>(all.size() - 1);
    const double ess = tyche::ess_bulk(q[k]);
    const double z = std::fabs(mean - it->second.mean) / (it->second.sd * std::sqrt(1.0 / ess + 1.0 / 10000.0));
    INFO(name << ": mean " << mean << " (reference " << it->second.mean << "), sd " << std::sqrt(var)
              << " (reference " << it->second.sd << "), ESS " << ess << ", z = " << z);
    CHECK(z < 4.0);
    CHECK(std::fabs(std::sqrt(var) / it->second.sd - 1.0) < 0.10);
    CHECK(tyche::rhat(q[k]) < 1.01);
  }
}

TEST_CASE("nuts: posteriordb reference: diamonds (max tree depth 20)", "[nuts][reference]") {
  if constexpr (tyche_test::address_sanitized) return;  // see reference_runs_unsanitized
  const auto p = tyche_examples::diamonds(load("diamonds-diamonds"));
  check_posterior(p.model, "diamonds-diamonds", 110, 1000, 20);
}

// ---- golden draws: the same seed gives the same draws, bit for bit, as the files in
// tests/samplers/data/golden_draws/<arch>/ (tests/support/golden_draws.hpp; the README there
// says which commit wrote them). Short runs of the nine posteriordb models, with the settings
// that take the sampler through its paths: SIMD lanes (lanes = 0) and scalar (lanes = 1), chains
// rotating through fewer lanes, two threads, the dense metric, the trajectory-synchronised
// schedule. `test_samplers "[.golden-write]"` writes the files anew.
namespace {

struct golden_case {
  std::string name;
  tyche::nuts_config cfg;
};

std::string describe(const tyche::nuts_config& c) {
  const auto& e = std::get<tyche::cpu>(c.executor);
  std::ostringstream s;
  s << "chains=" << c.chains << " warmup=" << c.warmup << " draws=" << c.draws << " seed=" << c.seed
    << " max_depth=" << c.max_depth << " lanes=" << e.lanes << " threads=" << e.threads
    << " metric=" << (c.metric == tyche::samplers::metric_kind::dense ? "dense" : "diag")
    << " schedule=" << (e.schedule == tyche::samplers::lane_schedule::trajectory_sync ? "sync" : "pc");
  return s.str();
}

template <class Model>
void golden(const Model& m, const std::string& model_name, const std::vector<golden_case>& cases, bool write) {
  for (const auto& gc : cases) {
    const auto fit = tyche::nuts(m, gc.cfg);
    const std::string name = model_name + "_" + gc.name;
    const std::string config = model_name + " " + describe(gc.cfg);
    if (write) {
      tyche_test::write_golden(__FILE__, name, config, fit);
      continue;
    }
    const std::string difference = tyche_test::compare_golden(__FILE__, name, config, fit);
    if (difference == "no file") {
      WARN("no golden draws for this build's SIMD architecture (" << tyche_test::golden_arch() << "): " << name
                                                                     << " not compared");
      continue;
    }
    INFO(name);
    CHECK(difference == "");
  }
}

// The "lanes0" files were written with lanes = 0, which then put 2 chains of one thread in the
// lanes of the build's SIMD batch; lanes = 0 now chooses by the model's data as well (one chain
// at a time for these 2 chains on SSE2: cpu_executor.hpp, resolve_lanes), so the setting that
// wrote them is spelled out: the build's full SIMD width.
tyche::nuts_config golden_config(std::uint64_t seed, int chains = 2, int lanes = tyche::simd_lane_width,
                                 int threads = 1) {
  tyche::nuts_config c;
  c.chains = chains;
  c.warmup = 200;
  c.draws = 10;
  c.seed = seed;
  c.executor = tyche::cpu{.threads = threads, .lanes = lanes};
  return c;
}

void golden_all(bool write) {
  {
    auto dense = golden_config(3001);
    dense.metric = tyche::samplers::metric_kind::dense;
    golden(tyche_examples::eight_schools_noncentered(load("eight_schools-eight_schools_noncentered")).model,
           "eight_schools",
           {{"lanes0", golden_config(3000)}, {"lanes1_threads2", golden_config(3000, 3, 1, 2)}, {"dense", dense}},
           write);
  }
  {
    auto sync = golden_config(3011, 3);
    std::get<tyche::cpu>(sync.executor).schedule = tyche::samplers::lane_schedule::trajectory_sync;
    golden(tyche_examples::kidiq_kidscore_interaction(load("kidiq-kidscore_interaction")).model, "kidiq",
           {{"lanes0", golden_config(3010)}, {"sync3", sync}}, write);
  }
  golden(tyche_examples::ark(load("arK-arK")).model, "arK",
         {{"lanes0", golden_config(3020)}, {"lanes1", golden_config(3021, 2, 1)}}, write);
  golden(tyche_examples::mesquite_logmesquite(load("mesquite-logmesquite")).model, "mesquite",
         {{"lanes0", golden_config(3030)}, {"rotate5", golden_config(3031, 5)}}, write);
  golden(tyche_examples::sblrc_blr(load("sblrc-blr")).model, "sblrc", {{"lanes0", golden_config(3040)}}, write);
  golden(tyche_examples::low_dim_gauss_mix(load("low_dim_gauss_mix-low_dim_gauss_mix")).model, "low_dim_gauss_mix",
         {{"lanes0", golden_config(3050)}}, write);
  golden(tyche_examples::garch11(load("garch-garch11")).model, "garch11", {{"lanes0", golden_config(3060)}}, write);
  golden(tyche_examples::gp_pois_regr(load("gp_pois_regr-gp_pois_regr")).model, "gp_pois_regr",
         {{"lanes0", golden_config(3070)}}, write);
  golden(tyche_examples::diamonds(load("diamonds-diamonds")).model, "diamonds", {{"lanes0", golden_config(3080)}},
         write);
}

}  // namespace

TEST_CASE("nuts: golden draws, bit for bit, on the nine posteriordb models", "[nuts][golden]") { golden_all(false); }

TEST_CASE("nuts: golden draws: write the files anew", "[.golden-write]") { golden_all(true); }
