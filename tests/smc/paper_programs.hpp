// The three programs of Paige & Wood (2014) — Figure 1 (Gaussian with unknown mean), the
// Section 4 HMM (Figure 2's program with K = 10 states and 50 observations) and Figure 3
// (CRP mixture of Gaussians) — each written twice, as a plain callable for the fork engine
// and as a stepwise program for both engines, with their exact posteriors. Used by the tests
// in this folder and by bench/smc.cpp.
#pragma once
#include <tyche/tyche.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <map>
#include <vector>

namespace smc_programs {

using tyche::counter_rng;
namespace smc = tyche::smc;

// --- Figure 1: mu ~ N(1, 5); y1 = 9, y2 = 8 ~ N(mu, 2) (variances) ------------------------------

inline constexpr double gaussian_prior_mean = 1, gaussian_prior_var = 5, gaussian_noise_var = 2;
inline constexpr std::array<double, 2> gaussian_data{9, 8};

/// The paper's Figure 1, for the fork engine.
inline void gaussian_program() {
  using namespace tyche::smc;
  const double mu = sample_normal(1, std::sqrt(5.0));
  observe(normal_lpdf(9, mu, std::sqrt(2.0)));
  observe(normal_lpdf(8, mu, std::sqrt(2.0)));
  predict("mu", mu);
}

/// The same as a stepwise program (state: mu).
inline auto gaussian_stepwise() {
  return smc::stepwise(
      0.0, 2,
      [](double& mu, std::size_t n, counter_rng& g) {
        if (n == 0) mu = smc::sample_normal(g, 1, std::sqrt(5.0));
        return smc::normal_lpdf(gaussian_data[n], mu, std::sqrt(2.0));
      },
      [](const double& mu, smc::predictions& p) { p("mu", mu); });
}

/// Exact posterior: precision 1/5 + 2/2, mean (1/5 + 17/2) / precision.
inline constexpr double gaussian_posterior_var = 1.0 / (1.0 / 5 + 2.0 / 2);
inline constexpr double gaussian_posterior_mean = gaussian_posterior_var * (1.0 / 5 + (9.0 + 8.0) / 2);
/// log p(y1, y2): (y1, y2) ~ N((1, 1), [[7, 5], [5, 7]]).
inline double gaussian_log_evidence() {
  const double a = 7, b = 5, det = a * a - b * b;
  const double d1 = 9 - 1, d2 = 8 - 1;
  const double quad = (a * d1 * d1 - 2 * b * d1 * d2 + a * d2 * d2) / det;
  return -std::log(2 * M_PI) - 0.5 * std::log(det) - 0.5 * quad;
}

// --- HMM: K = 10 states, 50 observations, y_t ~ N(z_t, 2²) (state k has mean k, 0-based) --------
//
// Transition matrix T = 0.8 R + 0.2 U: R a random walk that stays with probability 1/2 and
// moves to each neighbour with probability 1/4 (reflected at the ends: the end states stay
// with probability 3/4), U uniform over the 10 states. Initial distribution uniform. The data
// are simulated from the model with counter_rng(2014, 0).

inline constexpr int hmm_states = 10;
inline constexpr std::size_t hmm_length = 50;
inline constexpr double hmm_sd = 2;

struct hmm_model {
  std::array<std::array<double, hmm_states>, hmm_states> transition{};
  std::array<double, hmm_states> initial{};
  std::array<double, hmm_length> data{};
};

inline const hmm_model& hmm() {
  static const hmm_model m = [] {
    hmm_model h;
    for (int i = 0; i < hmm_states; ++i) {
      std::array<double, hmm_states> r{};
      r[static_cast<std::size_t>(i)] += 0.5;
      r[static_cast<std::size_t>(i > 0 ? i - 1 : i)] += 0.25;
      r[static_cast<std::size_t>(i < hmm_states - 1 ? i + 1 : i)] += 0.25;
      for (int j = 0; j < hmm_states; ++j)
        h.transition[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] =
            0.8 * r[static_cast<std::size_t>(j)] + 0.2 / hmm_states;
      h.initial[static_cast<std::size_t>(i)] = 1.0 / hmm_states;
    }
    counter_rng g(2014, 0);
    std::size_t z = smc::sample_discrete(g, h.initial);
    for (std::size_t t = 0; t < hmm_length; ++t) {
      if (t > 0) z = smc::sample_discrete(g, h.transition[z]);
      h.data[t] = smc::sample_normal(g, static_cast<double>(z), hmm_sd);
    }
    return h;
  }();
  return m;
}

/// The HMM as in the paper's Figure 2, for the fork engine: predicts z[t] for every t.
inline void hmm_program() {
  using namespace tyche::smc;
  const hmm_model& h = hmm();
  std::size_t z = 0;
  for (std::size_t t = 0; t < hmm_length; ++t) {
    z = t == 0 ? sample_discrete(rng(), h.initial) : sample_discrete(rng(), h.transition[z]);
    observe(normal_lpdf(h.data[t], static_cast<double>(z), hmm_sd));
    predict("z", t, static_cast<double>(z));
  }
}

/// The HMM as a stepwise program: the state is the path so far.
struct hmm_state {
  std::array<unsigned char, hmm_length> z{};
};
inline auto hmm_stepwise() {
  return smc::stepwise(
      hmm_state{}, hmm_length,
      [](hmm_state& s, std::size_t t, counter_rng& g) {
        const hmm_model& h = hmm();
        const std::size_t z = t == 0 ? smc::sample_discrete(g, h.initial) : smc::sample_discrete(g, h.transition[s.z[t - 1]]);
        s.z[t] = static_cast<unsigned char>(z);
        return smc::normal_lpdf(h.data[t], static_cast<double>(z), hmm_sd);
      },
      [](const hmm_state& s, smc::predictions& p) {
        for (std::size_t t = 0; t < hmm_length; ++t) p("z", t, static_cast<double>(s.z[t]));
      });
}

/// Exact marginals p(z_t = k | y_1..y_T) by the forward–backward recursions (scaled), for
/// the first T observations.
inline std::vector<std::array<double, hmm_states>> hmm_marginals(std::size_t T = hmm_length) {
  const hmm_model& h = hmm();
  const auto K = static_cast<std::size_t>(hmm_states);
  auto emission = [&](std::size_t t, std::size_t k) {
    return std::exp(smc::normal_lpdf(h.data[t], static_cast<double>(k), hmm_sd));
  };
  std::vector<std::array<double, hmm_states>> alpha(T), beta(T), out(T);
  for (std::size_t t = 0; t < T; ++t) {
    double total = 0;
    for (std::size_t k = 0; k < K; ++k) {
      double prior = 0;
      if (t == 0) prior = h.initial[k];
      else
        for (std::size_t j = 0; j < K; ++j) prior += alpha[t - 1][j] * h.transition[j][k];
      total += alpha[t][k] = prior * emission(t, k);
    }
    for (auto& a : alpha[t]) a /= total;
  }
  beta[T - 1].fill(1.0);
  for (std::size_t t = T - 1; t-- > 0;) {
    double total = 0;
    for (std::size_t j = 0; j < K; ++j) {
      double b = 0;
      for (std::size_t k = 0; k < K; ++k) b += h.transition[j][k] * emission(t + 1, k) * beta[t + 1][k];
      total += beta[t][j] = b;
    }
    for (auto& b : beta[t]) b /= total;
  }
  for (std::size_t t = 0; t < T; ++t) {
    double total = 0;
    for (std::size_t k = 0; k < K; ++k) total += out[t][k] = alpha[t][k] * beta[t][k];
    for (auto& o : out[t]) o /= total;
  }
  return out;
}

/// KL(p̂ ‖ p) summed over time: p̂_t is the weighted histogram of z[t] in `estimate`
/// (estimate[t][k]), p the exact marginals.
inline double hmm_kl(const std::vector<std::array<double, hmm_states>>& estimate,
                     const std::vector<std::array<double, hmm_states>>& exact) {
  double kl = 0;
  for (std::size_t t = 0; t < exact.size(); ++t)
    for (std::size_t k = 0; k < static_cast<std::size_t>(hmm_states); ++k)
      if (estimate[t][k] > 0) kl += estimate[t][k] * std::log(estimate[t][k] / exact[t][k]);
  return kl;
}

/// The marginals a result estimates (all sweeps, weighted).
inline std::vector<std::array<double, hmm_states>> hmm_estimate(const smc::result& r) {
  std::vector<std::array<double, hmm_states>> est(hmm_length);
  for (std::size_t t = 0; t < hmm_length; ++t) {
    est[t].fill(0);
    for (const auto& [v, p] : r.histogram(smc::predictions::indexed_name("z", t)))
      est[t][static_cast<std::size_t>(v)] += p;
  }
  return est;
}

// --- Figure 3: CRP mixture; per class 1/var ~ Gamma(1, 1), mu ~ N(0, var); y ~ N(mu, var) -------

inline constexpr std::array<double, 10> crp_data{1.0, 1.1, 1.2, -1.0, -1.5, -2.0, 0.001, 0.01, 0.005, 0.0};
inline constexpr double crp_alpha = 1.0;

struct theta {
  double mu, var;
};
inline theta draw_theta(counter_rng& g) {
  const double var = 1.0 / smc::sample_gamma(g, 1, 1);
  return {smc::sample_normal(g, 0, std::sqrt(var)), var};
}

/// The paper's Figure 3, for the fork engine (with mem and the Pólya urn).
inline void crp_program() {
  using namespace tyche::smc;
  polya_urn urn(crp_alpha);
  auto class_of = mem([&urn](std::size_t) { return urn.draw(rng()); });
  std::vector<theta> params;
  for (std::size_t n = 0; n < crp_data.size(); ++n) {
    const auto k = static_cast<std::size_t>(class_of(n));
    if (k == params.size()) params.push_back(draw_theta(rng()));
    observe(normal_lpdf(crp_data[n], params[k].mu, std::sqrt(params[k].var)));
  }
  predict("num_classes", static_cast<double>(urn.classes()));
}

/// The same as a stepwise program: the state is the urn and the class parameters.
struct crp_state {
  smc::polya_urn urn{crp_alpha};
  std::vector<theta> params;
};
inline auto crp_stepwise() {
  return smc::stepwise(
      crp_state{}, crp_data.size(),
      [](crp_state& s, std::size_t n, counter_rng& g) {
        const auto k = static_cast<std::size_t>(s.urn.draw(g));
        if (k == s.params.size()) s.params.push_back(draw_theta(g));
        return smc::normal_lpdf(crp_data[n], s.params[k].mu, std::sqrt(s.params[k].var));
      },
      [](const crp_state& s, smc::predictions& p) { p("num_classes", static_cast<double>(s.urn.classes())); });
}

/// log of the normal–gamma marginal likelihood of the points ys (prior mu | tau ~ N(0, 1/tau),
/// tau ~ Gamma(1, rate 1): mu0 = 0, kappa0 = 1, a0 = 1, b0 = 1).
inline double crp_cluster_log_marginal(const std::vector<double>& ys) {
  const double n = static_cast<double>(ys.size());
  double mean = 0;
  for (double y : ys) mean += y / n;
  double ss = 0;
  for (double y : ys) ss += (y - mean) * (y - mean);
  const double kappa0 = 1, a0 = 1, b0 = 1, mu0 = 0;
  const double kappa = kappa0 + n, a = a0 + n / 2;
  const double b = b0 + 0.5 * ss + kappa0 * n * (mean - mu0) * (mean - mu0) / (2 * kappa);
  return std::lgamma(a) - std::lgamma(a0) + a0 * std::log(b0) - a * std::log(b) +
         0.5 * (std::log(kappa0) - std::log(kappa)) - n / 2 * std::log(2 * M_PI);
}

/// Exact posterior of the number of classes, by enumerating the Bell(10) = 115,975 set
/// partitions (restricted growth strings) with the CRP prior
///   p(partition) = α^K Γ(α) / Γ(α + N) Π_k Γ(n_k)
/// and the class marginal likelihoods. Also returns the number of partitions visited.
inline std::map<int, double> crp_posterior_classes(std::size_t* partitions = nullptr) {
  const std::size_t N = crp_data.size();
  std::vector<std::size_t> a(N, 0);  // restricted growth string
  std::map<int, double> log_mass;
  std::map<int, std::vector<double>> terms;
  std::size_t visited = 0;
  std::vector<std::size_t> max_before(N, 0);
  for (;;) {
    ++visited;
    std::size_t K = 0;
    for (auto v : a) K = std::max(K, v + 1);
    std::vector<std::vector<double>> cluster(K);
    for (std::size_t i = 0; i < N; ++i) cluster[a[i]].push_back(crp_data[i]);
    double lp = static_cast<double>(K) * std::log(crp_alpha) + std::lgamma(crp_alpha) -
                std::lgamma(crp_alpha + static_cast<double>(N));
    for (const auto& c : cluster) lp += std::lgamma(static_cast<double>(c.size())) + crp_cluster_log_marginal(c);
    terms[static_cast<int>(K)].push_back(lp);
    // Next restricted growth string: a[0] = 0, a[i] <= 1 + max(a[0..i-1]).
    std::size_t i = N - 1;
    for (;; --i) {
      std::size_t m = 0;
      for (std::size_t j = 0; j < i; ++j) m = std::max(m, a[j]);
      if (i > 0 && a[i] <= m) {
        ++a[i];
        for (std::size_t j = i + 1; j < N; ++j) a[j] = 0;
        break;
      }
      if (i == 0) {
        if (partitions) *partitions = visited;
        std::vector<double> all;
        for (auto& [k, v] : terms) all.push_back(log_mass[k] = smc::log_sum_exp(v));
        const double z = smc::log_sum_exp(all);
        std::map<int, double> out;
        for (auto& [k, v] : log_mass) out[k] = std::exp(v - z);
        return out;
      }
    }
  }
}

/// KL(p̂ ‖ p) of the number of classes.
inline double crp_kl(const std::map<double, double>& estimate, const std::map<int, double>& exact) {
  double kl = 0;
  for (const auto& [k, p] : estimate)
    if (p > 0) kl += p * std::log(p / exact.at(static_cast<int>(k)));
  return kl;
}

}  // namespace smc_programs
