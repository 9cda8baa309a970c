// tyche/samplers/smc/correlated.hpp — the particle filter of correlated PMMH: a sweep that is a
// function of stored standard normals U (Deligiannidis, Doucet & Pitt 2018, JRSS B 80(5),
// "The correlated pseudo-marginal method"; docs/design/pmmh-correlated.md).
//
// run_pmmh with pmmh_config::correlation = ρ > 0 keeps, per chain, the normals U its current
// likelihood estimate used, and proposes U' = ρU + √(1 − ρ²)ε with θ' (ε standard normal), so
// that the estimates at θ and θ' share most of their randomness and their errors largely cancel
// in the acceptance ratio. For that the sweep must be a smooth function of U:
//
//   every particle l at observe n steps with a correlated_rng that hands out U's m normals of
//   (n, l) (m = pmmh_config::randoms_per_step) — uniform01() as Φ(z), exponential() as
//   −log Φ(z) — and then fresh numbers from the sweep's own stream (counted: a step that draws
//   more than m weakens the correlation, never the exactness);
//   after every observe but the last the particles are sorted by key(state) (the state itself
//   when it is a number; stepwise(..., key) otherwise) and resampled systematically with the
//   single uniform Φ(U_n), so the ancestors, and the slots of the next generation, move
//   continuously with U.
//
// Sorted systematic resampling is still unbiased (each particle's expected offspring is L times
// its weight), so Ẑ(θ, U) is an unbiased estimate of p(y | θ) over U ~ N(0, I), and with U as
// part of the chain's state the chain targets p(θ | y) exactly (ibid., §2); the Crank–Nicolson
// step leaves N(0, I) invariant. ESS-triggered resampling and the other schemes are not used
// here: their decisions jump with U.
#pragma once
#include <tyche/random/philox.hpp>
#include <tyche/samplers/smc/config.hpp>
#include <tyche/samplers/smc/detail/collector.hpp>
#include <tyche/samplers/smc/detail/worker_pool.hpp>
#include <tyche/samplers/smc/program.hpp>
#include <tyche/samplers/smc/resampling.hpp>
#include <tyche/samplers/smc/result.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace tyche::smc {

namespace detail {
/// Φ(z), kept inside (0, 1) as uniform01's values are.
inline double normal_cdf_open(double z) {
  const double u = 0.5 * std::erfc(-z * 0.70710678118654752440);
  constexpr double lowest = 1e-300, highest = 1.0 - 1.0 / 9007199254740992.0;  // 1 − 2⁻⁵³
  return u < lowest ? lowest : (u > highest ? highest : u);
}
}  // namespace detail

/// The generator a step sees in a correlated sweep: the first `count` normals come from the
/// chain's stored U (uniform01() as Φ of one of them), the rest from `fallback`, a stream of
/// the sweep's own, counted in beyond(). A step written with `auto& g` takes it and a
/// counter_rng alike; the smc::sample_* draws accept both.
class correlated_rng {
 public:
  using result_type = std::uint64_t;

  correlated_rng(const double* normals, std::size_t count, counter_rng fallback)
      : normals_(normals), count_(count), fallback_(fallback) {}

  static constexpr result_type min() { return counter_rng::min(); }
  static constexpr result_type max() { return counter_rng::max(); }

  /// Standard normal.
  double normal() {
    if (next_ < count_) return normals_[next_++];
    ++beyond_;
    return fallback_.normal();
  }
  /// Uniform on (0, 1).
  double uniform01() {
    if (next_ < count_) return detail::normal_cdf_open(normals_[next_++]);
    ++beyond_;
    return fallback_.uniform01();
  }
  /// Standard exponential.
  double exponential() { return -std::log(uniform01()); }
  /// Random bits (for <random>'s distributions, or a step's own use): always from the fallback
  /// stream, so not correlated; counted in beyond().
  result_type operator()() {
    ++beyond_;
    return fallback_();
  }
  std::uint64_t next_u64() {
    ++beyond_;
    return fallback_.next_u64();
  }
  std::uint32_t next_u32() {
    ++beyond_;
    return fallback_.next_u32();
  }
  /// Draws that did not come from U.
  [[nodiscard]] std::size_t beyond() const { return beyond_; }

 private:
  const double* normals_;
  std::size_t count_;
  std::size_t next_ = 0;
  std::size_t beyond_ = 0;
  counter_rng fallback_;
};

namespace detail {

/// Whether a stepwise program can run in a correlated sweep: its step takes a correlated_rng,
/// and its particles have an order (a key, or a state that is a number).
template <class Program>
inline constexpr bool correlated_step =
    std::is_invocable_r_v<double, const decltype(std::declval<const Program&>().step)&,
                          typename Program::state_type&, std::size_t, correlated_rng&>;
template <class Program>
inline constexpr bool has_sort_key = !std::is_same_v<typename Program::key_type, no_key> ||
                                     std::is_arithmetic_v<typename Program::state_type>;

/// A particle's place in the order of resampling: key(state), or the state itself.
template <class Program>
double sort_key(const Program& p, const typename Program::state_type& s) {
  if constexpr (!std::is_same_v<typename Program::key_type, no_key>) return static_cast<double>(p.key(s));
  else return static_cast<double>(s);
}

/// Values of U for N observes, L particles and m normals per particle and observe: the
/// particles' normals (observe by observe, particle by particle), then one per observe for its
/// resampling.
inline std::size_t correlated_randoms(std::size_t N, std::size_t L, std::size_t m) { return N * (L * m + 1); }

/// One sweep of the particle filter as a function of U (correlated_randoms values) and, for the
/// draws beyond U, the streams of cfg.seed; the rest of cfg as run_smc takes it (particles,
/// threads, domain_error_zero_weight). The draws that did not come from U are added to *beyond.
template <class Program>
result run_correlated_sweep(const Program& program, const config& cfg, const double* u, std::size_t per_step,
                            std::size_t* beyond, worker_pool* shared = nullptr) {
  using state = typename Program::state_type;
  const auto start = std::chrono::steady_clock::now();
  const std::size_t L = cfg.particles, N = program.observations, m = per_step;
  result r;
  collector out(r, cfg, algorithm::smc);
  std::optional<worker_pool> own;  // shared: as run_in_process takes it
  worker_pool& pool = shared != nullptr ? *shared : own.emplace(cfg.threads);

  std::vector<state> states(L, program.initial), next(L, program.initial);
  std::vector<double> log_w(L, 0.0), increment(L), keys(L), w(L);
  std::vector<std::size_t> extra(L, 0), order(L);
  std::vector<predictions> predicted(L);
  const bool zero_on_domain_error = cfg.domain_error_zero_weight;
  particle_domain_errors domain(L, zero_on_domain_error);
  const double minus_inf = -std::numeric_limits<double>::infinity();
  double log_evidence = 0, log_total = std::log(static_cast<double>(L));
  double final_ess = static_cast<double>(L);  // sweep_record::final_ess

  for (std::size_t n = 0; n < N; ++n) {
    pool.run(L, [&](std::size_t begin, std::size_t end) {
      std::size_t l = begin;
      while (l < end) {
        try {
          for (; l < end; ++l) {  // (no particle is dead here: the sweep resamples after every observe)
            correlated_rng g(u + (n * L + l) * m, m, particle_rng(cfg.seed, 0, l, n));
            increment[l] = program.step(states[l], n, g);
            extra[l] += g.beyond();
          }
        } catch (const std::domain_error& e) {
          if (!zero_on_domain_error) rethrow_from_step("", l, n);
          increment[l] = minus_inf;
          domain.record(l, e.what());
          ++l;
        } catch (...) {
          rethrow_from_step("", l, n);
        }
      }
    });
    if (zero_on_domain_error) domain.gather(r, "", n);
    check_increments(increment, n);
    for (std::size_t l = 0; l < L; ++l) log_w[l] += increment[l];
    const weight_summary after = summarise_weights(log_w);
    if (after.log_sum == minus_inf) {
      all_zero_error e = all_zero(n);
      e.domain_errors = r.domain_errors;
      e.first_domain_error = r.first_domain_error;
      throw e;
    }
    log_evidence += after.log_sum - log_total;
    log_total = after.log_sum;
    final_ess = after.ess;
    if (n + 1 == N) break;

    // Sorted systematic resampling with the uniform Φ(U_n): slot k of the next generation is
    // the particle whose interval of the cumulative weights, in key order, holds (k + u)/L.
    for (std::size_t l = 0; l < L; ++l) {
      keys[l] = log_w[l] == minus_inf ? 0.0 : sort_key(program, states[l]);
      if (std::isnan(keys[l]))
        throw std::runtime_error("tyche::smc::run_pmmh: the particles' key is NaN at particle " + std::to_string(l) +
                                 ", observe " + std::to_string(n) +
                                 " (correlated PMMH sorts the particles by it before resampling)");
      w[l] = std::exp(log_w[l] - after.log_sum);
    }
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
    const double u0 = normal_cdf_open(u[N * L * m + n]);
    std::size_t j = 0;
    double upper = w[order[0]];
    std::size_t last_live = L;  // the last particle in key order with a positive weight
    for (std::size_t k = L; k-- > 0;)
      if (w[order[k]] > 0) {
        last_live = k;
        break;
      }
    for (std::size_t k = 0; k < L; ++k) {
      const double point = (static_cast<double>(k) + u0) / static_cast<double>(L);
      while (j + 1 < L && point >= upper) upper += w[order[++j]];
      const std::size_t pick = w[order[j]] > 0 && j <= last_live ? j : last_live;  // (rounding at the end)
      next[k] = states[order[pick]];
    }
    std::swap(states, next);
    std::fill(log_w.begin(), log_w.end(), 0.0);
    log_total = std::log(static_cast<double>(L));
  }

  for (std::size_t l = 0; l < L; ++l) {
    predicted[l].clear();
    // (As in_process.hpp: a particle zeroed by a domain error predicts nothing.)
    if (zero_on_domain_error && log_w[l] == minus_inf) continue;
    try {
      program.predict(states[l], predicted[l]);
    } catch (...) {
      rethrow_from_predict("", l);
    }
  }
  const sweep_record record{0, log_evidence, true, seconds_since(start), final_ess};
  particle_set set = out.make_set(record, normalised_weights(log_w), L,
                                  [&](std::size_t p) -> const auto& { return predicted[p].entries(); });
  out.emit(set, log_evidence);
  out.finish(seconds_since(start));
  if (beyond != nullptr)
    for (std::size_t e : extra) *beyond += e;
  return r;
}

}  // namespace detail
}  // namespace tyche::smc
