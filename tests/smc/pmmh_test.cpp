// Particle marginal Metropolis–Hastings (samplers/smc/pmmh.hpp) on a linear-Gaussian state-space
// model, whose likelihood the Kalman filter gives exactly:
//   x₁ ~ N(0, σ²/(1 − φ²)),  xₜ = φ xₜ₋₁ + σ εₜ,  yₜ ~ N(xₜ, 0.5²),  t = 1 … 30,
//   θ = (φ, log σ), φ ~ uniform(−1, 1), log σ ~ N(0, 1); data simulated at φ = 0.7, σ = 0.8.
// The exact posterior of θ (and of x₃₀, the filtered state's mixture over θ) is computed on a
// 160 × 160 grid; PMMH runs a bootstrap particle filter (stepwise program) for the likelihood.
// Tolerances in Monte Carlo standard errors (tyche::mcse_mean over the chains, fixed seed):
// posterior means within 4 MCSE, sds within 5 MCSE of the sd (MCSE of the variance / 2 sd).
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include "support/sanitized.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace smc = tyche::smc;

constexpr std::size_t lg_length = 30;
constexpr double lg_obs_sd = 0.5;

const std::vector<double>& lg_data() {
  static const std::vector<double> y = [] {
    tyche::counter_rng g(2026, 0);
    const double phi = 0.7, sigma = 0.8;
    std::vector<double> out(lg_length);
    double x = g.normal() * sigma / std::sqrt(1 - phi * phi);
    for (std::size_t t = 0; t < lg_length; ++t) {
      if (t > 0) x = phi * x + sigma * g.normal();
      out[t] = x + lg_obs_sd * g.normal();
    }
    return out;
  }();
  return y;
}

double lg_log_prior(std::span<const double> theta) {
  if (!(theta[0] > -1 && theta[0] < 1)) return -std::numeric_limits<double>::infinity();
  return -0.5 * theta[1] * theta[1];
}

// log p(y | θ) by the Kalman filter, and the filtered mean and variance of the last state.
struct kalman_out {
  double log_lik, mean, var;
};
kalman_out kalman(double phi, double sigma) {
  const auto& y = lg_data();
  double m = 0, p = sigma * sigma / (1 - phi * phi), ll = 0;
  const double r = lg_obs_sd * lg_obs_sd;
  for (std::size_t t = 0; t < y.size(); ++t) {
    if (t > 0) {
      m = phi * m;
      p = phi * phi * p + sigma * sigma;
    }
    const double s = p + r, e = y[t] - m;
    ll += -0.5 * (std::log(2 * M_PI * s) + e * e / s);
    const double k = p / s;
    m += k * e;
    p *= 1 - k;
  }
  return {ll, m, p};
}

// The program for θ: a bootstrap particle filter's step (the state is xₜ).
auto lg_program(std::span<const double> theta) {
  const double phi = theta[0], sigma = std::exp(theta[1]);
  return smc::stepwise(
      0.0, lg_length,
      [phi, sigma](double& x, std::size_t n, tyche::counter_rng& g) {
        x = n == 0 ? smc::sample_normal(g, 0, sigma / std::sqrt(1 - phi * phi)) : smc::sample_normal(g, phi * x, sigma);
        return smc::normal_lpdf(lg_data()[n], x, lg_obs_sd);
      },
      [](const double& x, smc::predictions& p) { p("x_last", x); });
}

// The same filter with a step that takes any generator (auto& g): correlated PMMH's
// correlated_rng too.
auto lg_program_any(std::span<const double> theta) {
  const double phi = theta[0], sigma = std::exp(theta[1]);
  return smc::stepwise(
      0.0, lg_length,
      [phi, sigma](double& x, std::size_t n, auto& g) {
        x = n == 0 ? smc::sample_normal(g, 0, sigma / std::sqrt(1 - phi * phi)) : smc::sample_normal(g, phi * x, sigma);
        return smc::normal_lpdf(lg_data()[n], x, lg_obs_sd);
      },
      [](const double& x, smc::predictions& p) { p("x_last", x); });
}

struct exact_moments {
  double mean[3], sd[3];  // φ, log σ, x_last
};
const exact_moments& exact() {
  static const exact_moments e = [] {
    constexpr int n = 160;
    double w_total = 0, s1[3] = {}, s2[3] = {};
    std::vector<double> lw;
    std::vector<kalman_out> k;
    double top = -std::numeric_limits<double>::infinity();
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        const double phi = -1 + (i + 0.5) * 2.0 / n, ls = -3 + (j + 0.5) * 4.0 / n;
        k.push_back(kalman(phi, std::exp(ls)));
        lw.push_back(k.back().log_lik - 0.5 * ls * ls);
        top = std::max(top, lw.back());
      }
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        const std::size_t q = static_cast<std::size_t>(i * n + j);
        const double w = std::exp(lw[q] - top);
        const double phi = -1 + (i + 0.5) * 2.0 / n, ls = -3 + (j + 0.5) * 4.0 / n;
        w_total += w;
        s1[0] += w * phi;
        s2[0] += w * phi * phi;
        s1[1] += w * ls;
        s2[1] += w * ls * ls;
        s1[2] += w * k[q].mean;
        s2[2] += w * (k[q].var + k[q].mean * k[q].mean);
      }
    exact_moments out{};
    for (int a = 0; a < 3; ++a) {
      out.mean[a] = s1[a] / w_total;
      out.sd[a] = std::sqrt(s2[a] / w_total - out.mean[a] * out.mean[a]);
    }
    return out;
  }();
  return e;
}

void check_against_exact(const smc::pmmh_result& r, const char* name, int a) {
  const auto v = r.samples(name);
  double m = 0;
  for (double x : v) m += x / static_cast<double>(v.size());
  std::vector<double> sq(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) sq[i] = (v[i] - m) * (v[i] - m);
  double var = 0;
  for (double x : sq) var += x / static_cast<double>(v.size() - 1);
  const double sd = std::sqrt(var);
  const double se_m = tyche::mcse_mean(v, r.chains, r.iterations);
  const double se_sd = tyche::mcse_mean(sq, r.chains, r.iterations) / (2 * sd);
  INFO(name << ": mean " << m << " (exact " << exact().mean[a] << ", MCSE " << se_m << "), sd " << sd << " (exact "
            << exact().sd[a] << ", MCSE " << se_sd << "), ESS " << tyche::ess_bulk(v, r.chains, r.iterations));
  CHECK(std::fabs(m - exact().mean[a]) < 4 * se_m);
  CHECK(std::fabs(sd - exact().sd[a]) < 5 * se_sd);
}

}  // namespace

TEST_CASE("PMMH recovers the exact posterior of a linear-Gaussian state-space model", "[smc][pmmh]") {
  const auto r = smc::run_pmmh(lg_program, lg_log_prior, {0.0, 0.0},
                               {.particles = 100, .chains = 4, .warmup = 500, .iterations = 1500, .seed = 11,
                                .parameter_names = {"phi", "log_sigma"}});
  REQUIRE(r.draws.size() == 4 * 1500 * 2);
  REQUIRE(r.names == std::vector<std::string>{"x_last"});
  for (double a : r.acceptance) {
    CHECK(a > 0.05);
    CHECK(a < 0.6);
  }
  check_against_exact(r, "phi", 0);
  check_against_exact(r, "log_sigma", 1);
  check_against_exact(r, "x_last", 2);
  // Every kept draw's log-likelihood estimate is that of an accepted sweep, so finite.
  for (double ll : r.log_likelihood) REQUIRE(std::isfinite(ll));
  CHECK(std::isfinite(r.log_likelihood_sd));
  CHECK(r.log_likelihood_sd > 0);
  const auto s = smc::summary(r);
  REQUIRE(s.rows.size() == 3);
  CHECK(s.rows[0].name == "phi");
  CHECK(s.rows[0].rhat < 1.1);  // (PMMH mixes slowly: bulk ESS 120-280 of 6000 draws at seeds 11-13)
  std::ostringstream os;
  os << s;
  CHECK(os.str().find("PMMH: 4 chains of 1500 iterations, 100 particles") != std::string::npos);
}

TEST_CASE("PMMH: the same seed gives the same chains, whatever the threads of a sweep", "[smc][pmmh]") {
  const smc::pmmh_config cfg{.particles = 20, .chains = 2, .warmup = 30, .iterations = 40, .seed = 5, .noise_runs = 0};
  auto two = cfg;
  two.threads = 2;
  const auto a = smc::run_pmmh(lg_program, lg_log_prior, {0.2, -0.1}, cfg);
  const auto b = smc::run_pmmh(lg_program, lg_log_prior, {0.2, -0.1}, two);
  CHECK(a.draws == b.draws);
  CHECK(a.log_likelihood == b.log_likelihood);
  CHECK(a.log_prior == b.log_prior);
  CHECK(a.proposal_covariance == b.proposal_covariance);
  REQUIRE(a.predicted.size() == b.predicted.size());
  for (std::size_t i = 0; i < a.predicted.size(); ++i) REQUIRE(a.predicted[i] == b.predicted[i]);
  // The θ chain does not depend on what the program predicts (the kept particle's uniform is
  // drawn apart from the proposals' stream).
  const auto silent = [](std::span<const double> theta) {
    const auto p = lg_program(theta);
    return smc::stepwise(p.initial, p.observations, p.step, [](const double&, smc::predictions&) {});
  };
  const auto quiet = smc::run_pmmh(silent, lg_log_prior, {0.2, -0.1}, cfg);
  CHECK(quiet.draws == a.draws);
  CHECK(quiet.names.empty());
  auto other = cfg;
  other.seed = 6;
  CHECK(smc::run_pmmh(lg_program, lg_log_prior, {0.2, -0.1}, other).draws != a.draws);
  CHECK(std::isnan(a.log_likelihood_sd));  // noise_runs = 0
}

TEST_CASE("PMMH: chains on threads of their own give the chains of one thread, bit for bit", "[smc][pmmh]") {
  // A name that only some draws predict ("high": where φ > 0.35), so that chains see the names in
  // different orders and at different iterations: the merged columns must still say, row by row,
  // what the sweep at that row's θ predicted.
  const auto make = [](std::span<const double> theta) {
    const auto p = lg_program(theta);
    const bool high = theta[0] > 0.35;
    return smc::stepwise(p.initial, p.observations, p.step, [high](const double& x, smc::predictions& out) {
      if (high) out("high", 2 * x);  // first where it is predicted: the chains' column orders differ
      out("x_last", x);
    });
  };
  const smc::pmmh_config cfg{.particles = 20, .chains = 5, .chain_threads = 1, .warmup = 30, .iterations = 60,
                             .seed = 21, .proposal_sd = {0.25, 0.1}, .init_sd = 0.3, .noise_runs = 6};
  const auto a = smc::run_pmmh(make, lg_log_prior, {0.2, -0.1}, cfg);
  CHECK(a.chain_threads == 1);
  for (std::size_t threads : {2u, 3u, 0u}) {
    INFO("chain_threads = " << threads);
    auto c = cfg;
    c.chain_threads = threads;
    const auto b = smc::run_pmmh(make, lg_log_prior, {0.2, -0.1}, c);
    // 0: one per chain, up to the CPUs this process may use.
    CHECK(b.chain_threads ==
          (threads > 0 ? threads : std::min<std::size_t>(5, tyche::samplers::detail::available_cpus())));
    CHECK(a.draws == b.draws);
    CHECK(a.log_likelihood == b.log_likelihood);
    CHECK(a.log_prior == b.log_prior);
    CHECK(a.acceptance == b.acceptance);
    CHECK(a.proposal_covariance == b.proposal_covariance);
    CHECK(a.names == b.names);
    REQUIRE(a.predicted.size() == b.predicted.size());
    for (std::size_t i = 0; i < a.predicted.size(); ++i)
      REQUIRE((a.predicted[i] == b.predicted[i] || (std::isnan(a.predicted[i]) && std::isnan(b.predicted[i]))));
    CHECK(a.log_likelihood_sd == b.log_likelihood_sd);
  }
  // Row by row: "high" is there exactly where the row's φ is above 0.35, "x_last" always, and
  // "high" = 2·x_last (one particle's predictions, not two particles').
  REQUIRE(a.names.size() == 2);
  const std::size_t xi = a.names[0] == "x_last" ? 0 : 1, hi = 1 - xi;
  REQUIRE(a.names[xi] == "x_last");
  REQUIRE(a.names[hi] == "high");
  std::size_t highs = 0, high_starts = 0;
  for (std::size_t c = 0; c < a.chains; ++c) high_starts += a.draws[c * a.iterations * 2] > 0.35;
  CHECK(high_starts > 0);  // the chains start on both sides of 0.35
  CHECK(high_starts < a.chains);
  for (std::size_t i = 0; i < a.chains * a.iterations; ++i) {
    INFO("draw " << i);
    const double x = a.predicted[i * 2 + xi], h = a.predicted[i * 2 + hi];
    REQUIRE(std::isfinite(x));
    if (a.draws[i * 2] > 0.35) {
      REQUIRE(h == 2 * x);
      ++highs;
    } else {
      REQUIRE(std::isnan(h));
    }
  }
  CHECK(highs > 0);
  CHECK(highs < a.chains * a.iterations);
}

TEST_CASE("PMMH: chains on threads report the first chain's error, and not with the fork engine", "[smc][pmmh]") {
  using Catch::Matchers::Contains;
  const auto throwing = [](std::span<const double> t) {
    if (t[0] > 0.3) throw std::runtime_error("phi too large for this program");
    return lg_program(t);
  };
  // Every chain fails, the later ones maybe sooner: the error is chain 0's, as with one thread.
  const smc::pmmh_config cfg{.particles = 10, .chains = 3, .chain_threads = 3, .warmup = 50, .iterations = 5,
                             .proposal_sd = {1, 0.1}, .noise_runs = 0};
  CHECK_THROWS_WITH(smc::run_pmmh(throwing, lg_log_prior, {0.1, 0.0}, cfg),
                    Contains("chain 0, iteration ") && Contains("failed: phi too large for this program"));
  auto fork = cfg;
  fork.engine = smc::engine_kind::fork;
  fork.chain_threads = 2;
  CHECK_THROWS_WITH(smc::run_pmmh(lg_program, lg_log_prior, {0.1, 0.0}, fork),
                    Contains("chain_threads = 2, but the fork engine runs chains one after another"));
}

TEST_CASE("PMMH: bad input is refused with a message that names it", "[smc][pmmh]") {
  const smc::pmmh_config small{.particles = 10, .chains = 1, .warmup = 5, .iterations = 5, .noise_runs = 0};
  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH(smc::run_pmmh(lg_program, lg_log_prior, {}, small), Contains("theta0 is empty"));
  CHECK_THROWS_WITH(smc::run_pmmh(lg_program, lg_log_prior, {0.1, std::nan("")}, small),
                    Contains("theta0[1] = nan is not finite"));
  CHECK_THROWS_WITH(smc::run_pmmh(lg_program, lg_log_prior, {1.5, 0.0}, small),
                    Contains("chain 0 starts at (1.5, 0), where log_prior is -inf"));
  auto sd = small;
  sd.proposal_sd = {0.1};
  CHECK_THROWS_WITH(smc::run_pmmh(lg_program, lg_log_prior, {0.1, 0.0}, sd),
                    Contains("proposal_sd has 1 values for 2 parameters"));
  sd.proposal_sd = {0.1, -1};
  CHECK_THROWS_WITH(smc::run_pmmh(lg_program, lg_log_prior, {0.1, 0.0}, sd), Contains("proposal_sd[1] = -1"));
  auto none = small;
  none.particles = 0;
  CHECK_THROWS_WITH(smc::run_pmmh(lg_program, lg_log_prior, {0.1, 0.0}, none), Contains("particles must be at least 1"));
  const auto nan_prior = [](std::span<const double> t) { return std::fabs(t[0]) < 0.5 ? 0.0 : std::nan(""); };
  auto wide = small;
  wide.proposal_sd = {5, 0.1};
  CHECK_THROWS_WITH(smc::run_pmmh(lg_program, nan_prior, {0.1, 0.0}, wide),
                    Contains("chain 0, iteration ") && Contains(": log_prior(") &&
                        Contains("it must be a number or -inf"));
  // theta0 shorter than what make and log_prior read: beyond θ's values they read NaN (not memory
  // past a vector), and the error says how many values θ has.
  const auto first_only_prior = [](std::span<const double> t) { return std::fabs(t[0]) < 1 ? 0.0 : -INFINITY; };
  CHECK_THROWS_WITH(smc::run_pmmh(lg_program, first_only_prior, {0.1}, small),
                    Contains("chain 0: at the starting point (0.10000000000000001) every particle's weight went to 0") &&
                        Contains("domain errors: ") && Contains("nan") &&
                        Contains("(theta has 1 values, theta[0] ... theta[0], as theta0 does"));
  CHECK_THROWS_WITH(smc::run_pmmh(lg_program, lg_log_prior, {0.1}, small),
                    Contains("log_prior(0.10000000000000001) = nan") && Contains("theta has 1 values"));
  // A likelihood the filter cannot estimate at the start (every particle's weight 0).
  const auto impossible = [](std::span<const double>) {
    return smc::stepwise(
        0.0, 1, [](double&, std::size_t, tyche::counter_rng&) { return -std::numeric_limits<double>::infinity(); },
        [](const double&, smc::predictions&) {});
  };
  CHECK_THROWS_WITH(smc::run_pmmh(impossible, lg_log_prior, {0.1, 0.0}, small),
                    Contains("chain 0: at the starting point (0.10000000000000001, 0) every particle's weight went to 0"));
  auto one = small;
  one.noise_runs = 1;
  CHECK_THROWS_WITH(smc::run_pmmh(lg_program, lg_log_prior, {0.1, 0.0}, one), Contains("noise_runs must be 0"));
  auto names = small;
  names.parameter_names = {"phi", "phi"};
  CHECK_THROWS_WITH(smc::run_pmmh(lg_program, lg_log_prior, {0.1, 0.0}, names),
                    Contains("parameter_names[0] and [1] are both 'phi'"));
  names.parameter_names = {"x_last", "log_sigma"};
  CHECK_THROWS_WITH(smc::run_pmmh(lg_program, lg_log_prior, {0.1, 0.0}, names),
                    Contains("the program predicts 'x_last', which is also a parameter's name"));
  // An error of the program's own is passed on with the chain, iteration and point.
  const auto throwing = [](std::span<const double> t) {
    if (t[0] > 0.3) throw std::runtime_error("phi too large for this program");
    return lg_program(t);
  };
  auto far = small;
  far.proposal_sd = {1, 0.1};
  far.warmup = 50;
  CHECK_THROWS_WITH(smc::run_pmmh(throwing, lg_log_prior, {0.1, 0.0}, far),
                    Contains("chain 0, iteration ") && Contains("failed: phi too large for this program"));
}

TEST_CASE("PMMH: a proposal whose every particle dies is rejected, not an error", "[smc][pmmh]") {
  // The likelihood is 0 for φ > 0.3 (every particle's weight -inf at the first observe): the chain
  // must stay at φ ≤ 0.3 and run to the end.
  const auto cut = [](std::span<const double> theta) {
    const auto p = lg_program(theta);
    const bool zero = theta[0] > 0.3;
    auto step = [zero, s = p.step](double& x, std::size_t n, tyche::counter_rng& g) {
      const double lp = s(x, n, g);
      return zero ? -std::numeric_limits<double>::infinity() : lp;
    };
    return smc::stepwise(p.initial, p.observations, step, p.predict);
  };
  const auto r = smc::run_pmmh(cut, lg_log_prior, {0.0, 0.0},
                               {.particles = 20, .chains = 2, .warmup = 100, .iterations = 200, .seed = 3,
                                .proposal_sd = {0.3, 0.1}});
  double top = -1;
  for (std::size_t i = 0; i < r.chains * r.iterations; ++i) top = std::max(top, r.draws[i * 2]);
  CHECK(top <= 0.3);
  CHECK(top > 0.0);  // it moved, and up to the edge
  for (double ll : r.log_likelihood) REQUIRE(std::isfinite(ll));
}

TEST_CASE("PMMH: a particle whose step throws std::domain_error gets weight 0, counted and reported", "[smc][pmmh]") {
  // Per particle, as if its step had returned −inf (Stan's reject, per path). Where the error
  // depends on θ alone (sd = 0 for φ > 0.3) every particle dies and the proposal is rejected.
  const auto bounded = [](std::span<const double> theta) {
    const double phi = theta[0], sigma = std::exp(theta[1]);
    const double obs = phi > 0.3 ? 0.0 : lg_obs_sd;
    return smc::stepwise(
        0.0, lg_length,
        [phi, sigma, obs](double& x, std::size_t n, tyche::counter_rng& g) {
          x = n == 0 ? smc::sample_normal(g, 0, sigma / std::sqrt(1 - phi * phi)) : smc::sample_normal(g, phi * x, sigma);
          return smc::normal_lpdf(lg_data()[n], x, obs);
        },
        [](const double& x, smc::predictions& p) { p("x_last", x); });
  };
  const smc::pmmh_config cfg{.particles = 20, .chains = 2, .warmup = 100, .iterations = 200, .seed = 3,
                             .proposal_sd = {0.3, 0.1}, .noise_runs = 0};
  const auto r = smc::run_pmmh(bounded, lg_log_prior, {0.0, 0.0}, cfg);
  double top = -1;
  for (std::size_t i = 0; i < r.chains * r.iterations; ++i) top = std::max(top, r.draws[i * 2]);
  CHECK(top <= 0.3);
  CHECK(top > 0.0);
  CHECK(r.domain_errors > 0);
  CHECK(r.domain_errors % 20 == 0);  // every particle of each such sweep, at its first observe
  CHECK_THAT(r.first_domain_error,
             Catch::Matchers::StartsWith("chain 0, iteration ") &&
                 Catch::Matchers::Contains(", sweep 0, particle 0, observe 0: tyche::smc::normal_lpdf(x, mean, sd): sd "
                                           "must be > 0 and finite, but it is 0"));
  std::ostringstream os;
  os << smc::summary(r);
  CHECK_THAT(os.str(), Catch::Matchers::Contains(std::to_string(r.domain_errors) +
                                                 " particle steps threw std::domain_error"));
  // The same without the domain error: no count, no warning.
  const auto plain = smc::run_pmmh(lg_program, lg_log_prior, {0.0, 0.0}, cfg);
  CHECK(plain.domain_errors == 0);
  CHECK(plain.first_domain_error.empty());
  // At the start no particle lives: an error, there is no state to stay in.
  CHECK_THROWS_WITH(smc::run_pmmh(bounded, lg_log_prior, {0.5, 0.0}, cfg),
                    Catch::Matchers::Contains("chain 0: at the starting point (0.5, 0) every particle's weight went to 0"));
}

TEST_CASE("PMMH: a domain error that depends on the particle's path is that path's weight 0, bit for bit",
          "[smc][pmmh]") {
  // The state leaves (−1.2, 1.2) on some paths only: throwing std::domain_error there must give
  // exactly the chains of a step that returns −inf there (the same random numbers), not a
  // rejected sweep (which would bias the chain: an estimate that is 0 whenever any particle
  // strays).
  const auto with = [](bool throws) {
    return [throws](std::span<const double> theta) {
      const double phi = theta[0], sigma = std::exp(theta[1]);
      return smc::stepwise(
          0.0, lg_length,
          [phi, sigma, throws](double& x, std::size_t n, tyche::counter_rng& g) {
            x = n == 0 ? smc::sample_normal(g, 0, sigma / std::sqrt(1 - phi * phi)) : smc::sample_normal(g, phi * x, sigma);
            if (std::fabs(x) > 1.2) {
              if (throws) throw std::domain_error("x outside (-1.2, 1.2)");
              return -std::numeric_limits<double>::infinity();
            }
            return smc::normal_lpdf(lg_data()[n], x, lg_obs_sd);
          },
          [](const double& x, smc::predictions& p) { p("x_last", x); });
    };
  };
  const smc::pmmh_config cfg{.particles = 30, .chains = 2, .warmup = 40, .iterations = 60, .seed = 12,
                             .proposal_sd = {0.1, 0.1}, .noise_runs = 4};
  const auto thrown = smc::run_pmmh(with(true), lg_log_prior, {0.3, -0.3}, cfg);
  const auto minus_inf = smc::run_pmmh(with(false), lg_log_prior, {0.3, -0.3}, cfg);
  CHECK(thrown.draws == minus_inf.draws);
  CHECK(thrown.log_likelihood == minus_inf.log_likelihood);
  CHECK(thrown.predicted == minus_inf.predicted);
  CHECK(thrown.log_likelihood_sd == minus_inf.log_likelihood_sd);
  CHECK(thrown.domain_errors > 0);
  CHECK_THAT(thrown.first_domain_error, Catch::Matchers::Contains(": x outside (-1.2, 1.2)"));
  CHECK(minus_inf.domain_errors == 0);
  // Accepted sweeps had some particles killed: the chain moved.
  CHECK(thrown.acceptance[0] + thrown.acceptance[1] > 0);
}

TEST_CASE("PMMH: a starting proposal far too small does not inflate the adapted one", "[smc][pmmh]") {
  // With proposal_sd 10 times too small most early proposals are accepted and the scale λ grows
  // (Robbins–Monro); the chain's covariance, which then replaces the starting proposal, is scaled
  // already (2.38²/d), so λ must start again from 1 there. Carried over, λ made the proposal's
  // variance for φ 1.2 and 3.8 after warm-up here (sd 1.1 and 1.9 on (−1, 1)), against 0.11 and
  // 0.04 with the reset; in a 3-parameter stochastic-volatility model it proposed log σ = 6.
  const smc::pmmh_config cfg{.particles = 100, .chains = 2, .warmup = 40, .iterations = 10, .seed = 8,
                             .proposal_sd = {0.02, 0.02}, .noise_runs = 0};
  const auto r = smc::run_pmmh(lg_program, lg_log_prior, {0.3, -0.2}, cfg);
  for (std::size_t c = 0; c < r.chains; ++c) {
    INFO("chain " << c);
    const double var_phi = r.proposal_covariance[c * 4], var_log_sigma = r.proposal_covariance[c * 4 + 3];
    CHECK(var_phi < 0.5);  // the posterior sd of φ is about 0.2: 2.38²/2 · 0.04 ≈ 0.11
    CHECK(var_log_sigma < 0.5);
    CHECK(var_phi > 4e-4);  // and it did adapt: more than the starting 0.02²
  }
}

TEST_CASE("PMMH: one parameter, no warm-up, no adaptation, chains from scattered starts", "[smc][pmmh]") {
  // φ alone (log σ fixed at log 0.8); warmup = 0 and adapt = false keep proposal_sd throughout.
  const auto one = [](std::span<const double> theta) {
    const double both[2] = {theta[0], std::log(0.8)};
    return lg_program(std::span<const double>(both, 2));
  };
  const auto prior = [](std::span<const double> t) {
    return std::fabs(t[0]) < 1 ? 0.0 : -std::numeric_limits<double>::infinity();
  };
  const auto r = smc::run_pmmh(one, prior, {0.0},
                               {.particles = 20, .chains = 3, .warmup = 0, .iterations = 100, .seed = 9,
                                .proposal_sd = {0.2}, .adapt = false, .init_sd = 0.8, .noise_runs = 0});
  REQUIRE(r.draws.size() == 300);
  REQUIRE(r.proposal_covariance.size() == 3);
  for (double v : r.proposal_covariance) CHECK(v == Approx(0.04).epsilon(1e-12));
  CHECK(r.draws[0] != r.draws[100]);  // the chains started apart (init_sd)
  for (double v : r.draws) CHECK(std::fabs(v) < 1);
}

TEST_CASE("PMMH on the fork engine: a plain callable program, chains one after another", "[smc][pmmh][fork]") {
  // The state-space model's first 5 observations as a program that calls observe and predict
  // (the fork engine's form); a short run (each sweep forks its particles at every observe): it
  // must run, keep finite estimates and the predictions, stay on one thread however many chains,
  // and give the same chains again from the same seed (not under ASan, where forks cost 10-20
  // times more: tests/support/sanitized.hpp).
  constexpr std::size_t observations = 5;
  const auto make = [](std::span<const double> theta) {
    const double phi = theta[0], sigma = std::exp(theta[1]);
    return [phi, sigma] {
      double x = 0;
      for (std::size_t n = 0; n < observations; ++n) {
        x = n == 0 ? smc::sample_normal(0, sigma / std::sqrt(1 - phi * phi)) : smc::sample_normal(phi * x, sigma);
        smc::observe(smc::normal_lpdf(lg_data()[n], x, lg_obs_sd));
      }
      smc::predict("x_last", x);
    };
  };
  const bool small = tyche_test::address_sanitized;  // 4 sweeps instead of 24
  const smc::pmmh_config cfg{.particles = 8, .chains = small ? 1u : 2u, .warmup = small ? 0u : 4u,
                             .iterations = small ? 3u : 6u, .seed = 4, .proposal_sd = {0.1, 0.1},
                             .noise_runs = small ? 0u : 2u};
  const auto r = smc::run_pmmh(make, lg_log_prior, {0.5, -0.2}, cfg);
  CHECK(r.chain_threads == 1);
  const std::size_t kept = cfg.chains * cfg.iterations;
  REQUIRE(r.draws.size() == kept * 2);
  REQUIRE(r.names == std::vector<std::string>{"x_last"});
  REQUIRE(r.predicted.size() == kept);
  for (double ll : r.log_likelihood) REQUIRE(std::isfinite(ll));
  for (double x : r.predicted) REQUIRE(std::isfinite(x));
  for (std::size_t i = 0; i < kept; ++i) REQUIRE(std::fabs(r.draws[i * 2]) < 1);
  if (!small) {
    CHECK(std::isfinite(r.log_likelihood_sd));
    CHECK(smc::run_pmmh(make, lg_log_prior, {0.5, -0.2}, cfg).draws == r.draws);
  }
}

TEST_CASE("correlated PMMH: the exact posterior with 20 particles, mixing far better than 20 without correlation",
          "[smc][pmmh]") {
  // ρ = 0.95 with 20 particles (sd(log Ẑ) ≈ 2–3 here: plain PMMH needs ~100 for 1.5) and the
  // random walk steered to 30 % acceptance (the ratio's noise is small, so the chain can take
  // the acceptance of an exact likelihood's random walk).
  smc::pmmh_config cfg{.particles = 20, .chains = 4, .warmup = 500, .iterations = 1500, .seed = 11,
                       .target_acceptance = 0.3, .parameter_names = {"phi", "log_sigma"}, .correlation = 0.95};
  const auto r = smc::run_pmmh(lg_program_any, lg_log_prior, {0.0, 0.0}, cfg);
  CHECK(r.correlation == 0.95);
  check_against_exact(r, "phi", 0);
  check_against_exact(r, "log_sigma", 1);
  check_against_exact(r, "x_last", 2);
  CHECK(r.randoms_beyond == 0);  // one normal per step, one stored
  // The ratio at a fixed θ is far less noisy than two independent estimates' (√2 sd(log Ẑ)).
  INFO("sd(log Z) " << r.log_likelihood_sd << ", sd of the ratio " << r.log_likelihood_ratio_sd);
  CHECK(r.log_likelihood_ratio_sd < 0.75 * std::sqrt(2.0) * r.log_likelihood_sd);
  std::ostringstream os;
  os << smc::summary(r);
  CHECK(os.str().find("correlated: rho 0.95; sd(log Z(theta, U') - log Z(theta, U))") != std::string::npos);
  // The same particles with fresh numbers at every sweep (correlation 0, the same settings): the
  // chains stick (min bulk ESS of φ and log σ 4.6 against 346 correlated at this seed).
  cfg.correlation = 0;
  const auto plain = smc::run_pmmh(lg_program_any, lg_log_prior, {0.0, 0.0}, cfg);
  const auto min_ess = [](const smc::pmmh_result& x) {
    return std::min(tyche::ess_bulk(x.samples("phi"), x.chains, x.iterations),
                    tyche::ess_bulk(x.samples("log_sigma"), x.chains, x.iterations));
  };
  INFO("min bulk ESS: correlated " << min_ess(r) << ", not " << min_ess(plain));
  CHECK(min_ess(r) > 2.5 * min_ess(plain));
  CHECK(std::isnan(plain.log_likelihood_ratio_sd));
}

TEST_CASE("correlated PMMH: the sweep is a smooth function of U when the particles are sorted before resampling",
          "[smc][pmmh]") {
  // log Ẑ at θ = (0.7, log 0.8) from U and from U' = ρU + √(1 − ρ²)ε, 200 pairs: correlated above
  // 0.9 at ρ = 0.99 (measured 0.97); with the particles in a scrambled order (a key that sorts
  // them at random) 0.74. Along one coordinate of U (a particle's normal at the first observe)
  // log Ẑ moves by at most 0.25 per step of 0.01 (offspring counts change at isolated points);
  // scrambled, by 4.3.
  const auto program = lg_program_any(std::vector<double>{0.7, std::log(0.8)});
  const auto scrambled = smc::stepwise(program.initial, program.observations, program.step, program.predict,
                                       [](const double& x) { return std::sin(1e6 * x); });
  const std::size_t L = 20, N = lg_length, size = smc::detail::correlated_randoms(N, L, 1);
  smc::config cfg;
  cfg.particles = L;
  const auto correlation_of = [&](const auto& prog) {
    std::vector<double> a, b;
    for (std::size_t i = 0; i < 200; ++i) {
      tyche::counter_rng g(7, i);
      std::vector<double> u(size), v(size);
      for (std::size_t k = 0; k < size; ++k) {
        u[k] = g.normal();
        v[k] = 0.99 * u[k] + std::sqrt(1 - 0.99 * 0.99) * g.normal();
      }
      cfg.seed = i;
      a.push_back(smc::detail::run_correlated_sweep(prog, cfg, u.data(), 1, nullptr).log_evidence);
      b.push_back(smc::detail::run_correlated_sweep(prog, cfg, v.data(), 1, nullptr).log_evidence);
    }
    double ma = 0, mb = 0, saa = 0, sbb = 0, sab = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      ma += a[i] / static_cast<double>(a.size());
      mb += b[i] / static_cast<double>(b.size());
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
      saa += (a[i] - ma) * (a[i] - ma);
      sbb += (b[i] - mb) * (b[i] - mb);
      sab += (a[i] - ma) * (b[i] - mb);
    }
    return sab / std::sqrt(saa * sbb);
  };
  const double sorted_corr = correlation_of(program), scrambled_corr = correlation_of(scrambled);
  INFO("correlation of log Z: sorted " << sorted_corr << ", scrambled " << scrambled_corr);
  CHECK(sorted_corr > 0.9);
  CHECK(scrambled_corr < 0.85);
  const auto largest_jump = [&](const auto& prog) {
    tyche::counter_rng g(9, 0);
    std::vector<double> u(size);
    for (double& v : u) v = g.normal();
    cfg.seed = 1;
    double previous = 0, jump = 0;
    for (int k = 0; k <= 400; ++k) {
      u[5] = -2 + 4.0 * k / 400;
      const double z = smc::detail::run_correlated_sweep(prog, cfg, u.data(), 1, nullptr).log_evidence;
      if (k > 0) jump = std::max(jump, std::fabs(z - previous));
      previous = z;
    }
    return jump;
  };
  const double sorted_jump = largest_jump(program), scrambled_jump = largest_jump(scrambled);
  INFO("largest jump: sorted " << sorted_jump << ", scrambled " << scrambled_jump);
  CHECK(sorted_jump < 1);
  CHECK(scrambled_jump > 2);
}

TEST_CASE("correlated PMMH: draws beyond the stored normals come fresh and are counted; threads change nothing",
          "[smc][pmmh]") {
  // A step that draws two normals (the second one unused in the state, so the model is the same):
  // with randoms_per_step = 1 each step draws one beyond U.
  const auto two_draws = [](std::span<const double> theta) {
    const auto p = lg_program_any(theta);
    return smc::stepwise(
        p.initial, p.observations,
        [step = p.step](double& x, std::size_t n, auto& g) {
          (void)g.normal();
          return step(x, n, g);
        },
        p.predict);
  };
  const std::size_t L = 10, N = lg_length;
  smc::config one;
  one.particles = L;
  std::vector<double> u(smc::detail::correlated_randoms(N, L, 2), 0.5);
  std::size_t beyond = 0;
  (void)smc::detail::run_correlated_sweep(two_draws(std::vector<double>{0.5, 0.0}), one, u.data(), 1, &beyond);
  CHECK(beyond == N * L);
  beyond = 0;
  (void)smc::detail::run_correlated_sweep(two_draws(std::vector<double>{0.5, 0.0}), one, u.data(), 2, &beyond);
  CHECK(beyond == 0);

  smc::pmmh_config cfg{.particles = 10, .chains = 3, .chain_threads = 1, .warmup = 20, .iterations = 30, .seed = 4,
                       .noise_runs = 4, .correlation = 0.9};
  const auto a = smc::run_pmmh(two_draws, lg_log_prior, {0.3, 0.0}, cfg);
  CHECK(a.randoms_beyond > 0);
  CHECK(a.randoms_beyond % (N * L) == 0);  // every sweep: each particle at each observe
  std::ostringstream os;
  os << smc::summary(a);
  CHECK(os.str().find("draws of the steps came after the randoms_per_step stored normals") != std::string::npos);
  cfg.randoms_per_step = 2;
  CHECK(smc::run_pmmh(two_draws, lg_log_prior, {0.3, 0.0}, cfg).randoms_beyond == 0);
  // Chains on threads, and threads within a sweep: the same chains, bit for bit.
  cfg.randoms_per_step = 1;
  auto threaded = cfg;
  threaded.chain_threads = 3;
  threaded.threads = 2;
  const auto b = smc::run_pmmh(two_draws, lg_log_prior, {0.3, 0.0}, threaded);
  CHECK(a.draws == b.draws);
  CHECK(a.log_likelihood == b.log_likelihood);
  CHECK(a.randoms_beyond == b.randoms_beyond);
  CHECK(a.log_likelihood_ratio_sd == b.log_likelihood_ratio_sd);
}

TEST_CASE("correlated PMMH: a state with a key runs; what cannot be correlated is refused with a message",
          "[smc][pmmh]") {
  using Catch::Matchers::Contains;
  struct point {
    double x = 0;
  };
  const auto with_key = [](std::span<const double> theta) {
    const double phi = theta[0], sigma = std::exp(theta[1]);
    return smc::stepwise(
        point{}, lg_length,
        [phi, sigma](point& s, std::size_t n, auto& g) {
          s.x = n == 0 ? smc::sample_normal(g, 0, sigma / std::sqrt(1 - phi * phi)) : smc::sample_normal(g, phi * s.x, sigma);
          return smc::normal_lpdf(lg_data()[n], s.x, lg_obs_sd);
        },
        [](const point& s, smc::predictions& p) { p("x_last", s.x); }, [](const point& s) { return s.x; });
  };
  const smc::pmmh_config small{.particles = 10, .chains = 1, .warmup = 5, .iterations = 5, .noise_runs = 0,
                               .correlation = 0.9};
  // A struct state sorted by its key gives the chain of the same state as a number.
  CHECK(smc::run_pmmh(with_key, lg_log_prior, {0.1, 0.0}, small).draws ==
        smc::run_pmmh(lg_program_any, lg_log_prior, {0.1, 0.0}, small).draws);
  const auto no_key = [](std::span<const double> theta) {
    const auto p = lg_program_any(theta);
    return smc::stepwise(
        point{}, p.observations, [step = p.step](point& s, std::size_t n, auto& g) { return step(s.x, n, g); },
        [](const point&, smc::predictions&) {});
  };
  CHECK_THROWS_WITH(smc::run_pmmh(no_key, lg_log_prior, {0.1, 0.0}, small),
                    Contains("correlation > 0, but the particles' state is not a number") &&
                        Contains("stepwise(initial, n, step, predict, key)"));
  CHECK_THROWS_WITH(smc::run_pmmh(lg_program, lg_log_prior, {0.1, 0.0}, small),
                    Contains("the program's step takes a tyche::counter_rng&") && Contains("auto& g"));
  auto bad = small;
  bad.correlation = 1;
  CHECK_THROWS_WITH(smc::run_pmmh(lg_program_any, lg_log_prior, {0.1, 0.0}, bad),
                    Contains("correlation must lie in [0, 1) (got 1)"));
  bad.correlation = 0.9;
  bad.randoms_per_step = 0;
  CHECK_THROWS_WITH(smc::run_pmmh(lg_program_any, lg_log_prior, {0.1, 0.0}, bad),
                    Contains("randoms_per_step must be at least 1"));
#if TYCHE_SMC_FORK_ENGINE
  auto fork = small;
  fork.engine = smc::engine_kind::fork;
  CHECK_THROWS_WITH(smc::run_pmmh(lg_program_any, lg_log_prior, {0.1, 0.0}, fork),
                    Contains("correlation > 0 needs a tyche::smc::stepwise(...) program on the in-process engine"));
#endif
  // A generic step (auto& g) is compiled for a correlated_rng too, even at correlation 0: one that
  // uses g's raw bits still compiles, and runs on plain PMMH.
  const auto raw_bits = [](std::span<const double> theta) {
    const auto p = lg_program_any(theta);
    return smc::stepwise(
        p.initial, p.observations,
        [step = p.step](double& x, std::size_t n, auto& g) { return step(x, n, g) + 0.0 * static_cast<double>(g.next_u64() % 2); },
        p.predict);
  };
  auto plain = small;
  plain.correlation = 0;
  CHECK(smc::run_pmmh(raw_bits, lg_log_prior, {0.1, 0.0}, plain).draws.size() == 10);
  // A program whose observes change with θ.
  const auto varying = [](std::span<const double> theta) {
    const auto p = lg_program_any(theta);
    return smc::stepwise(p.initial, theta[0] > 0.2 ? lg_length - 1 : lg_length, p.step, p.predict);
  };
  auto far = small;
  far.proposal_sd = {0.5, 0.1};
  far.warmup = 40;
  CHECK_THROWS_WITH(smc::run_pmmh(varying, lg_log_prior, {0.1, 0.0}, far),
                    Contains("observes, make(theta0)'s had 30"));
}

TEST_CASE("correlated PMMH: the correlated sweep's likelihood estimate is unbiased", "[smc][pmmh]") {
  // Ẑ(θ, U) over U ~ N(0, I) at θ = (0.7, log 0.8): the mean of Ẑ / Z (Z by the Kalman filter)
  // over 2,000 independent U is 1 within 4 standard errors (the ratios are independent draws;
  // measured 0.982, standard error 0.024). A "resampling" that keeps every particle once (its
  // weight dropped) gave 0.17 here.
  const double phi = 0.7, sigma = 0.8;
  const auto program = lg_program_any(std::vector<double>{phi, std::log(sigma)});
  const double log_z = kalman(phi, sigma).log_lik;
  const std::size_t L = 100, N = lg_length, runs = 2000, size = smc::detail::correlated_randoms(N, L, 1);
  smc::config cfg;
  cfg.particles = L;
  std::vector<double> ratio;
  for (std::size_t i = 0; i < runs; ++i) {
    tyche::counter_rng g(31, i);
    std::vector<double> u(size);
    for (double& v : u) v = g.normal();
    cfg.seed = i;
    ratio.push_back(std::exp(smc::detail::run_correlated_sweep(program, cfg, u.data(), 1, nullptr).log_evidence - log_z));
  }
  double mean = 0, var = 0;
  for (double v : ratio) mean += v / static_cast<double>(runs);
  for (double v : ratio) var += (v - mean) * (v - mean) / static_cast<double>(runs - 1);
  const double se = std::sqrt(var / static_cast<double>(runs));
  INFO("mean of Z-hat / Z " << mean << ", standard error " << se);
  CHECK(std::fabs(mean - 1) < 4 * se);
}
