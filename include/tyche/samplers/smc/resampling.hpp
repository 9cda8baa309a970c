// tyche/samplers/smc/resampling.hpp — weights and resampling for sequential Monte Carlo.
//
// Weights are kept as log weights. log_sum_exp and effective_sample_size work on them
// directly; normalised_weights turns them into probabilities.
//
// Resampling draws offspring counts O_1..O_L with E[O_l] = L·w_l and Σ O_l = L (or any
// requested total), then lists the ancestors in increasing order: ancestor l appears O_l
// times. Both engines use that sorted order, so particle slot i of the next generation is
// the same copy in the in-process engine and in the fork engine (where a parent keeps the
// first of its slots and forks children into the rest).
//
//   multinomial   O ~ Multinomial(n, w): n independent categorical draws.
//   stratified    one uniform in each of n strata [(k + u_k)/n]: lower variance.
//   systematic    one uniform u for all strata [(k + u)/n] (Carpenter, Clifford & Fearnhead
//                 1999; Kitagawa 1996): the default, as in most SMC libraries.
//   residual      ⌊n w_l⌋ copies deterministically, the rest multinomially on the
//                 residual weights (Liu & Chen 1998).
// Douc & Cappé (2005), "Comparison of resampling schemes for particle filtering", compare
// them: all four are unbiased; residual and stratified provably reduce the conditional
// variance relative to multinomial; systematic usually does best in practice.
#pragma once
#include <tyche/random/philox.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace tyche::smc {

/// How offspring counts are drawn from the weights.
enum class resampling_scheme { systematic, stratified, residual, multinomial };

/// log Σ exp(x_i), exact for −∞ entries; −∞ when every entry is −∞.
inline double log_sum_exp(const std::vector<double>& x) {
  double m = -std::numeric_limits<double>::infinity();
  for (double v : x) m = std::max(m, v);
  if (m == -std::numeric_limits<double>::infinity()) return m;
  double s = 0;
  for (double v : x) s += std::exp(v - m);
  return m + std::log(s);
}

/// Normalised weights exp(log_w − log_sum_exp(log_w)).
inline std::vector<double> normalised_weights(const std::vector<double>& log_w) {
  const double z = log_sum_exp(log_w);
  std::vector<double> w(log_w.size());
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = std::exp(log_w[i] - z);
  return w;
}

/// Effective sample size 1 / Σ w_l² of the normalised weights (Kong, Liu & Wong 1994).
inline double effective_sample_size(const std::vector<double>& log_w) {
  const auto w = normalised_weights(log_w);
  double s = 0;
  for (double v : w) s += v * v;
  return 1.0 / s;
}

/// log Σ exp(log_w) and the ESS of the normalised weights, in one pass.
struct weight_summary {
  double log_sum;
  double ess;
};
inline weight_summary summarise_weights(const std::vector<double>& log_w) {
  double m = -std::numeric_limits<double>::infinity();
  for (double v : log_w) m = std::max(m, v);
  if (m == -std::numeric_limits<double>::infinity()) return {m, 0};
  double s = 0, s2 = 0;
  for (double v : log_w) {
    const double e = std::exp(v - m);
    s += e;
    s2 += e * e;
  }
  return {m + std::log(s), s * s / s2};
}

/// Offspring counts for n draws from normalised weights w, using uniforms from g.
inline std::vector<std::size_t> offspring_counts(const std::vector<double>& w, std::size_t n,
                                                 resampling_scheme scheme, counter_rng& g) {
  const std::size_t L = w.size();
  std::vector<std::size_t> count(L, 0);
  if (n == 0) return count;
  const double dn = static_cast<double>(n);
  // Sorted points in (0, 1) against the cumulative weights: one pass.
  auto by_sorted_points = [&](auto point_k, std::size_t points, const std::vector<double>& p) {
    double cumulative = 0;
    std::size_t l = 0;
    double upper = p.empty() ? 0 : p[0];
    for (std::size_t k = 0; k < points; ++k) {
      const double u = point_k(k);
      while (u > upper && l + 1 < L) {
        ++l;
        cumulative = upper;
        upper = cumulative + p[l];
      }
      // Past the last weight (rounding): the last particle with positive weight.
      std::size_t pick = l;
      while (p[pick] == 0 && pick > 0) --pick;
      ++count[pick];
    }
  };
  switch (scheme) {
    case resampling_scheme::systematic: {
      const double u = g.uniform01();
      by_sorted_points([&](std::size_t k) { return (static_cast<double>(k) + u) / dn; }, n, w);
      break;
    }
    case resampling_scheme::stratified: {
      by_sorted_points([&](std::size_t k) { return (static_cast<double>(k) + g.uniform01()) / dn; },
                       n, w);
      break;
    }
    case resampling_scheme::multinomial: {
      // n sorted uniforms from normalised cumulative exponential spacings.
      std::vector<double> e(n + 1);
      double total = 0;
      for (auto& v : e) total += (v = g.exponential());
      double running = 0;
      std::vector<double> points(n);
      for (std::size_t k = 0; k < n; ++k) points[k] = (running += e[k]) / total;
      by_sorted_points([&](std::size_t k) { return points[k]; }, n, w);
      break;
    }
    case resampling_scheme::residual: {
      std::size_t assigned = 0;
      std::vector<double> residual(L);
      double residual_total = 0;
      for (std::size_t l = 0; l < L; ++l) {
        const double expected = dn * w[l];
        const auto whole = static_cast<std::size_t>(std::floor(expected));
        count[l] = whole;
        assigned += whole;
        residual[l] = expected - static_cast<double>(whole);
        residual_total += residual[l];
      }
      if (assigned > n) {  // rounding in dn · w: take the excess back from the largest counts
        while (assigned > n) {
          auto it = std::max_element(count.begin(), count.end());
          --*it;
          --assigned;
        }
        break;
      }
      const std::size_t rest = n - assigned;
      if (rest == 0) break;
      if (!(residual_total > 0)) {  // all residuals zero by rounding: give the rest to the mode
        count[static_cast<std::size_t>(std::max_element(w.begin(), w.end()) - w.begin())] += rest;
        break;
      }
      for (auto& r : residual) r /= residual_total;
      const std::vector<std::size_t> base = count;
      std::fill(count.begin(), count.end(), 0);
      const double dr = static_cast<double>(rest);
      by_sorted_points([&](std::size_t k) { return (static_cast<double>(k) + g.uniform01()) / dr; },
                       rest, residual);
      for (std::size_t l = 0; l < L; ++l) count[l] += base[l];
      break;
    }
  }
  return count;
}

/// The ancestors in increasing order: l repeated count[l] times.
inline std::vector<std::size_t> ancestors_from_counts(const std::vector<std::size_t>& count) {
  std::vector<std::size_t> a;
  for (std::size_t l = 0; l < count.size(); ++l) a.insert(a.end(), count[l], l);
  return a;
}

/// n ancestor indices, sorted, drawn from the log weights with the given scheme.
inline std::vector<std::size_t> resample(const std::vector<double>& log_w, std::size_t n,
                                         resampling_scheme scheme, counter_rng& g) {
  return ancestors_from_counts(offspring_counts(normalised_weights(log_w), n, scheme, g));
}

}  // namespace tyche::smc
