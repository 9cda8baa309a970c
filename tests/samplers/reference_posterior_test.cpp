// nuts() against independent reference posteriors (shared/posteriors, posteriordb): each
// reported quantity's mean within 4 combined standard errors of the reference,
// |mean − ref| / (sd_ref √(1/ESS + 1/10000)) < 4 (shared/posteriors/README.md), and its sd within
// 10 %. Settings: 4 chains, 1000 warm-up, 5000 draws each, adapt_delta 0.9 (the reference used
// 0.95), seed 20261121.
#include <tyche/tyche.hpp>

#include "support/reference_summary.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using tyche_test::reference_row;

std::map<std::string, reference_row> read_reference(const std::string& posterior) {
  const auto shared = tyche_test::shared_dir(__FILE__);
  REQUIRE(!shared.empty());
  return tyche_test::read_reference_summary(shared / "posteriors" / posterior);
}

void check_against(const std::string& name, const std::vector<std::vector<double>>& chains,
                   const reference_row& ref) {
  const auto r = tyche_test::compare_to_reference(chains, ref);
  INFO(name << ": mean " << r.mean << " (reference " << ref.mean << "), sd " << r.sd << " (reference " << ref.sd
            << "), ESS " << r.ess << ", z = " << r.z);
  CHECK(r.z < 4.0);
  CHECK(std::fabs(r.sd / ref.sd - 1.0) < 0.10);
}

}  // namespace

TEST_CASE("nuts: eight schools (non-centred) matches the posteriordb reference", "[nuts][reference]") {
  using namespace tyche;
  const std::vector<double> y{28, 8, -3, 7, -1, 1, 18, 12}, sigma{15, 10, 16, 11, 9, 11, 10, 18};
  auto mu = normal<"mu">(0.0, 5.0);
  auto tau = half_cauchy<"tau">(5.0);
  auto theta_trans = std_normal<"theta_trans">(shape<8>);
  const auto m = model(joint(mu, tau, theta_trans,
                             normal(mu + tau * theta_trans, data(sigma)).observe(data(y))));
  const auto fit = nuts(m, {.chains = 4, .warmup = 1000, .draws = 5000, .seed = 20261121,
                            .adapt_delta = 0.9});
  const auto ref = read_reference("eight_schools-eight_schools_noncentered");
  const auto mu_d = fit.parameter(0), tau_d = fit.parameter(1);
  check_against("mu", mu_d, ref.at("mu"));
  check_against("tau", tau_d, ref.at("tau"));
  for (int j = 0; j < 8; ++j) {  // reported theta[j] = mu + tau * theta_trans[j]
    auto theta = fit.parameter(2 + static_cast<std::size_t>(j));
    for (std::size_t c = 0; c < theta.size(); ++c)
      for (std::size_t i = 0; i < theta[c].size(); ++i) theta[c][i] = mu_d[c][i] + tau_d[c][i] * theta[c][i];
    const std::string name = "theta[" + std::to_string(j + 1) + "]";
    check_against(name, theta, ref.at(name));
  }
  const auto s = summary(fit);
  for (const auto& row : s.rows) CHECK(row.rhat < 1.01);
  CHECK(fit.divergences() < 0.01 * 4 * 5000);  // a few at most, as Stan on this model
}

TEST_CASE("nuts: a chain's draws do not depend on the number of chains or threads", "[nuts]") {
  using namespace tyche;
  auto x = normal<"x">(0.0, 1.0, shape<3>);
  const auto m = model(joint(x));
  const auto one = nuts(m, {.chains = 1, .warmup = 200, .draws = 100, .seed = 5, .executor = cpu{.threads = 1}});
  const auto three = nuts(m, {.chains = 3, .warmup = 200, .draws = 100, .seed = 5, .executor = cpu{.threads = 3}});
  const auto serial = nuts(m, {.chains = 3, .warmup = 200, .draws = 100, .seed = 5, .executor = cpu{.threads = 1}});
  CHECK(one.values[0] == three.values[0]);  // bit-identical
  CHECK(three.values == serial.values);
  CHECK(three.values[1] != three.values[0]);
}

TEST_CASE("nuts: bad settings are refused with the value named", "[nuts]") {
  using namespace tyche;
  const auto m = model(joint(normal<"x">(0.0, 1.0)));
  CHECK_THROWS_WITH(nuts(m, {.chains = 0}), Catch::Matchers::Contains("chains = 0"));
  CHECK_THROWS_WITH(nuts(m, {.adapt_delta = 1.5}), Catch::Matchers::Contains("adapt_delta = 1.5"));
  CHECK_THROWS_WITH(nuts(m, {.max_depth = 40}), Catch::Matchers::Contains("max_depth = 40"));
}
