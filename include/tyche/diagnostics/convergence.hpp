// tyche/diagnostics/convergence.hpp — MCMC convergence diagnostics: split-R̂, rank-normalised
// split-R̂ (bulk and folded, "tail"), bulk-ESS, tail-ESS, ESS of a quantile, MCSE of the mean and
// of a quantile, and type-7 quantiles.
//
//     std::vector<double> draws = ...;                // 4 chains × 1000 draws, one chain after another
//     double r   = tyche::rhat(draws, 4, 1000);       // max(bulk R̂, folded R̂), as Stan reports it
//     double eb  = tyche::ess_bulk(draws, 4, 1000);
//     double et  = tyche::ess_tail(draws, 4, 1000);
//     double se  = tyche::mcse_mean(draws, 4, 1000);
//     double q95 = tyche::quantile(draws, 0.95);
//
//     std::vector<std::vector<double>> chains = ...;  // or one range per chain (equal lengths)
//     double r2 = tyche::rhat(chains);
//
// Reference. A. Vehtari, A. Gelman, D. Simpson, B. Carpenter, P.-C. Bürkner (2021),
// "Rank-normalization, folding, and localization: an improved R̂ for assessing convergence of
// MCMC", Bayesian Analysis 16(2), 667–718, doi:10.1214/20-BA1221. Every function follows the
// definition of the R package `posterior` (checked against posterior 1.4.0 on R 4.2.2 by
// tests/diagnostics; tools/diagnostics_reference.R writes the reference values):
//   * split chains: each chain is cut into halves of floor(n/2) draws; when n is odd the middle
//     draw is dropped (posterior's .split_chains);
//   * rank normalisation: ranks over all (split) draws together, ties get their average rank,
//     z = Φ⁻¹((r − 3/8) / (S + 1/4)) with S the number of draws (posterior's z_scale);
//   * folding: |x − median(x)|, the median over all draws (posterior's fold_draws);
//   * ESS: Geyer's initial positive sequence of the chain-averaged autocorrelations, then his
//     initial monotone sequence, the "improved" end term ρ̂ of the last even lag, and τ̂ capped
//     below at 1/log10(S) (posterior's .ess, equations (10)–(11) of the paper). posterior computes
//     autocovariances by FFT; here each lag is computed directly and only as far as Geyer's
//     truncation reaches: O(S · lags), about 1 s for 4 × 100 000 draws of an AR(1) with
//     ρ = 0.999, O(S · n) at worst for chains that do not mix. The two agree to rounding.
//
// Input. Draws are given either as one contiguous array, chains × draws row-major (chain c's
// draws at [c·n, (c+1)·n)), with its shape, or as a range of chains, each a range convertible to
// std::span<const double> (std::vector<std::vector<double>>, std::vector<std::span<const double>>,
// ...), all of one length. Every function accepts any number of chains ≥ 1 and throws
// std::invalid_argument for none, or when the array's size is not chains × n, or the chains
// differ in length.
//
// NaN results. Where posterior returns NA, these functions return a quiet NaN and never throw:
// with fewer than 4 draws per chain (a split chain needs 2 draws for R̂), and
// when the draws (or the split, rank-normalised or indicator draws a function looks at) contain
// NaN or ±∞ or are constant (max − min < DBL_EPSILON, posterior's absolute tolerance). ESS needs
// at least 3 draws per split chain, so every ESS and MCSE is NaN for n = 4 and n = 5. Like
// posterior, ranks are finite for ±∞ draws, so rhat, rhat_bulk and ess_bulk still give numbers
// there, while split_rhat, ess_basic and ess_tail are NaN. When every chain is constant but the
// chains differ, the within-chain variance is 0 and every R̂ is +∞ (posterior reports +∞ for
// rhat_basic and, from rounding noise in its sums, about 1e16 for the rank-normalised ones); the
// ESS there is finite, as in posterior.
#pragma once

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <limits>
#include <numeric>
#include <iterator>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace tyche {

namespace detail::diagnostics {

inline constexpr double nan_value = std::numeric_limits<double>::quiet_NaN();

/// Chains stored one after another: chain c is data[c·n, (c+1)·n).
struct draw_matrix {
  std::vector<double> data;
  std::size_t chains = 0;
  std::size_t n = 0;
  const double* chain(std::size_t c) const { return data.data() + c * n; }
  double* chain(std::size_t c) { return data.data() + c * n; }
};

/// A range of chains (begin and end, as a range-for takes them), each convertible to
/// std::span<const double>. (Written without <ranges>, whose parse cost every translation unit
/// that includes tyche would pay: about 0.15 s of g++'s time for the header.)
template <class R>
concept chain_range = requires(const R& r) {
  std::begin(r) != std::end(r);
  { *std::begin(r) } -> std::convertible_to<std::span<const double>>;
};

[[noreturn]] inline void fail(const char* function, const std::string& what) {
  throw std::invalid_argument(std::string("tyche::") + function + ": " + what);
}

inline void check_shape(const char* function, std::size_t size, std::size_t chains, std::size_t n) {
  if (chains < 1) fail(function, "needs at least one chain");
  if (size != chains * n)
    fail(function, "draws has " + std::to_string(size) + " values, expected chains × n = " +
                       std::to_string(chains) + " × " + std::to_string(n));
}

inline draw_matrix gather(const char* function, std::span<const double> draws, std::size_t chains,
                          std::size_t n) {
  check_shape(function, draws.size(), chains, n);
  return draw_matrix{std::vector<double>(draws.begin(), draws.end()), chains, n};
}

template <chain_range R>
draw_matrix gather(const char* function, const R& chains) {
  draw_matrix m;
  bool first = true;
  for (auto&& c : chains) {
    const std::span<const double> s = c;
    if (first) {
      m.n = s.size();
      first = false;
    } else if (s.size() != m.n) {
      fail(function, "chain " + std::to_string(m.chains + 1) + " has " + std::to_string(s.size()) +
                         " draws, chain 1 has " + std::to_string(m.n));
    }
    m.data.insert(m.data.end(), s.begin(), s.end());
    ++m.chains;
  }
  check_shape(function, m.data.size(), m.chains, m.n);
  return m;
}

/// posterior's should_return_NA: any NaN or ±∞, or max − min < DBL_EPSILON.
inline bool should_return_na(std::span<const double> x) {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  for (double v : x) {
    if (!std::isfinite(v)) return true;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  return std::abs(hi - lo) < std::numeric_limits<double>::epsilon();
}

/// Fewer draws per chain than any R̂ or ESS needs: 4 (two per split chain). NaN, as posterior.
inline constexpr std::size_t min_draws = 4;
inline bool too_few(const draw_matrix& x) { return x.n < min_draws; }

inline bool any_nan(std::span<const double> x) {
  return std::any_of(x.begin(), x.end(), [](double v) { return std::isnan(v); });
}

/// R's mean(): long double sum, then one correction pass.
inline double r_mean(const double* x, std::size_t n) {
  long double s = 0.0L;
  for (std::size_t i = 0; i < n; ++i) s += x[i];
  s /= static_cast<long double>(n);
  if (std::isfinite(static_cast<double>(s))) {
    long double t = 0.0L;
    for (std::size_t i = 0; i < n; ++i) t += (x[i] - s);
    s += t / static_cast<long double>(n);
  }
  return static_cast<double>(s);
}

/// Sample variance (denominator n − 1), two passes.
inline double r_var(const double* x, std::size_t n) {
  const double m = r_mean(x, n);
  long double s = 0.0L;
  for (std::size_t i = 0; i < n; ++i) {
    const double d = x[i] - m;
    s += static_cast<long double>(d) * d;
  }
  return static_cast<double>(s / static_cast<long double>(n - 1));
}

/// posterior's .split_chains: halves of floor(n/2) draws, the middle draw dropped for odd n; the
/// first halves of all chains come first, then the second halves.
inline draw_matrix split_chains(const draw_matrix& x) {
  const std::size_t half = x.n / 2;
  draw_matrix s{std::vector<double>(2 * x.chains * half), 2 * x.chains, half};
  for (std::size_t c = 0; c < x.chains; ++c) {
    const double* src = x.chain(c);
    std::copy(src, src + half, s.chain(c));
    std::copy(src + (x.n - half), src + x.n, s.chain(x.chains + c));
  }
  return s;
}

/// Φ⁻¹(p), Wichura's algorithm AS 241 (PPND16), as R's qnorm (R ≤ 4.2).
inline double inv_normal_cdf(double p) {
  if (std::isnan(p) || p < 0.0 || p > 1.0) return nan_value;
  if (p == 0.0) return -std::numeric_limits<double>::infinity();
  if (p == 1.0) return std::numeric_limits<double>::infinity();
  const double q = p - 0.5;
  if (std::abs(q) <= 0.425) {
    const double r = 0.180625 - q * q;
    return q *
           (((((((r * 2509.0809287301226727 + 33430.575583588128105) * r + 67265.770927008700853) * r +
                45921.953931549871457) * r + 13731.693765509461125) * r + 1971.5909503065514427) * r +
             133.14166789178437745) * r + 3.387132872796366608) /
           (((((((r * 5226.495278852854561 + 28729.085735721942674) * r + 39307.89580009271061) * r +
                21213.794301586595867) * r + 5394.1960214247511077) * r + 687.1870074920579083) * r +
             42.313330701600911252) * r + 1.0);
  }
  double r = std::sqrt(-std::log(q < 0.0 ? p : 1.0 - p));
  double val;
  if (r <= 5.0) {
    r -= 1.6;
    val = (((((((r * 7.7454501427834140764e-4 + 0.0227238449892691845833) * r + 0.24178072517745061177) * r +
               1.27045825245236838258) * r + 3.64784832476320460504) * r + 5.7694972214606914055) * r +
            4.6303378461565452959) * r + 1.42343711074968357734) /
          (((((((r * 1.05075007164441684324e-9 + 5.475938084995344946e-4) * r + 0.0151986665636164571966) * r +
               0.14810397642748007459) * r + 0.68976733498510000455) * r + 1.6763848301838038494) * r +
            2.05319162663775882187) * r + 1.0);
  } else {
    r -= 5.0;
    val = (((((((r * 2.01033439929228813265e-7 + 2.71155556874348757815e-5) * r + 0.0012426609473880784386) * r +
               0.026532189526576123093) * r + 0.29656057182850489123) * r + 1.7848265399172913358) * r +
            5.4637849111641143699) * r + 6.6579046435011037772) /
          (((((((r * 2.04426310338993978564e-15 + 1.4215117583164458887e-7) * r + 1.8463183175100546818e-5) * r +
               7.868691311456132591e-4) * r + 0.0148753612908506148525) * r + 0.13692988092273580531) * r +
            0.59983220655588793769) * r + 1.0);
  }
  return q < 0.0 ? -val : val;
}

/// posterior's z_scale: average ranks over all values, then Φ⁻¹((r − 3/8) / (S + 1/4)).
inline void z_scale(std::vector<double>& values) {
  const std::size_t S = values.size();
  std::vector<std::size_t> order(S);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  std::vector<double> rank(S);
  for (std::size_t i = 0; i < S;) {
    std::size_t j = i;
    while (j + 1 < S && values[order[j + 1]] == values[order[i]]) ++j;
    const double r = static_cast<double>(i + j + 2) / 2.0;  // 1-based average rank of i..j
    for (std::size_t k = i; k <= j; ++k) rank[order[k]] = r;
    i = j + 1;
  }
  const double denominator = static_cast<double>(S) - 2.0 * 0.375 + 1.0;
  for (std::size_t i = 0; i < S; ++i) values[i] = inv_normal_cdf((rank[i] - 0.375) / denominator);
}

/// R's quantile(type = 7) of values already sorted ascending.
inline double quantile_sorted(std::span<const double> sorted, double p) {
  const std::size_t n = sorted.size();
  if (n == 0 || std::isnan(p)) return nan_value;
  p = std::max(0.0, std::min(1.0, p));
  const double index = 1.0 + static_cast<double>(n - 1) * p;  // 1-based, as in R
  const double lo = std::floor(index);
  const double hi = std::ceil(index);
  const double qs = sorted[static_cast<std::size_t>(lo) - 1];
  const double xh = sorted[static_cast<std::size_t>(hi) - 1];
  if (index > lo && xh != qs) {
    const double h = index - lo;
    return (1.0 - h) * qs + h * xh;
  }
  return qs;
}

/// R's median(): the middle value, or R's mean() of the two middle values.
inline double r_median(std::vector<double> x) {
  const std::size_t n = x.size();
  const std::size_t half = (n + 1) / 2;  // 1-based index of the (lower) middle value
  std::nth_element(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(half - 1), x.end());
  const double a = x[half - 1];
  if (n % 2 == 1) return a;
  const double b = *std::min_element(x.begin() + static_cast<std::ptrdiff_t>(half), x.end());
  const double pair[2] = {a, b};
  return r_mean(pair, 2);
}

/// posterior's .rhat on already split (and possibly rank-normalised) chains.
inline double rhat_core(const draw_matrix& x) {
  if (x.n < 2 || should_return_na(x.data)) return nan_value;
  const std::size_t m = x.chains, n = x.n;
  std::vector<double> mean(m), var(m);
  for (std::size_t c = 0; c < m; ++c) {
    mean[c] = r_mean(x.chain(c), n);
    var[c] = r_var(x.chain(c), n);
  }
  const double dn = static_cast<double>(n);
  const double var_between = dn * r_var(mean.data(), m);
  const double var_within = r_mean(var.data(), m);
  return std::sqrt((var_between / var_within + dn - 1.0) / dn);
}

/// posterior's .ess on already split chains: Geyer's initial positive and initial monotone
/// sequences on the chain-averaged autocovariances (biased estimator, denominator n).
inline double ess_core(const draw_matrix& x) {
  const std::size_t m = x.chains, n = x.n;
  if (n < 3 || should_return_na(x.data)) return nan_value;
  // Centred chains; a chain of zero variance has zero autocovariances (as in posterior).
  std::vector<double> centred(m * n);
  std::vector<double> mean(m);
  for (std::size_t c = 0; c < m; ++c) {
    const double* xc = x.chain(c);
    mean[c] = r_mean(xc, n);
    const bool constant = r_var(xc, n) == 0.0;
    for (std::size_t i = 0; i < n; ++i) centred[c * n + i] = constant ? 0.0 : xc[i] - mean[c];
  }
  std::vector<double> acov_means;  // computed lag by lag, as far as the sequences need
  auto acov_mean = [&](std::size_t lag) {
    while (acov_means.size() <= lag) {
      const std::size_t t = acov_means.size();
      double total = 0.0;
      for (std::size_t c = 0; c < m; ++c) {
        const double* y = centred.data() + c * n;
        const std::size_t len = n - t;
        double s[4] = {0.0, 0.0, 0.0, 0.0};  // four running sums: pipelined, and pairwise-ish
        std::size_t i = 0;
        for (; i + 4 <= len; i += 4)
          for (std::size_t k = 0; k < 4; ++k) s[k] += y[i + k] * y[i + k + t];
        for (; i < len; ++i) s[0] += y[i] * y[i + t];
        total += ((s[0] + s[1]) + (s[2] + s[3])) / static_cast<double>(n);
      }
      acov_means.push_back(total / static_cast<double>(m));
    }
    return acov_means[lag];
  };
  const double dn = static_cast<double>(n);
  const double mean_var = acov_mean(0) * dn / (dn - 1.0);
  double var_plus = mean_var * (dn - 1.0) / dn;
  if (m > 1) var_plus += r_var(mean.data(), m);

  std::vector<double> rho(n, 0.0);
  const long long last = static_cast<long long>(n) - 5;
  long long t = 0;
  double rho_even = 1.0;
  rho[0] = rho_even;
  double rho_odd = 1.0 - (mean_var - acov_mean(1)) / var_plus;
  rho[1] = rho_odd;
  while (t < last && !std::isnan(rho_even + rho_odd) && rho_even + rho_odd > 0.0) {
    t += 2;
    const auto ut = static_cast<std::size_t>(t);
    rho_even = 1.0 - (mean_var - acov_mean(ut)) / var_plus;
    rho_odd = 1.0 - (mean_var - acov_mean(ut + 1)) / var_plus;
    if (rho_even + rho_odd >= 0.0) {
      rho[ut] = rho_even;
      rho[ut + 1] = rho_odd;
    }
  }
  const long long max_t = t;
  if (rho_even > 0.0) rho[static_cast<std::size_t>(max_t)] = rho_even;
  // Geyer's initial monotone sequence.
  t = 0;
  while (t <= max_t - 4) {
    t += 2;
    const auto ut = static_cast<std::size_t>(t);
    if (rho[ut] + rho[ut + 1] > rho[ut - 2] + rho[ut - 1]) {
      rho[ut] = (rho[ut - 2] + rho[ut - 1]) / 2.0;
      rho[ut + 1] = rho[ut];
    }
  }
  const double ess = static_cast<double>(m) * dn;
  // sum(rho_hat_t[1:max_t]) in R; for max_t = 0, 1:0 selects rho_hat_t[1] alone.
  double sum = 0.0;
  if (max_t == 0) {
    sum = rho[0];
  } else {
    for (long long i = 0; i < max_t; ++i) sum += rho[static_cast<std::size_t>(i)];
  }
  double tau = -1.0 + 2.0 * sum + rho[static_cast<std::size_t>(max_t)];
  const double tau_bound = 1.0 / std::log10(ess);
  if (tau < tau_bound) tau = tau_bound;
  return ess / tau;
}

/// Rank-normalised split-R̂ of the given (unsplit) draws.
inline double rhat_bulk_core(const draw_matrix& x) {
  if (too_few(x)) return nan_value;
  draw_matrix s = split_chains(x);
  if (any_nan(s.data)) return nan_value;
  z_scale(s.data);
  return rhat_core(s);
}

/// Rank-normalised split-R̂ of |x − median(x)|.
inline double rhat_tail_core(const draw_matrix& x) {
  if (too_few(x) || any_nan(x.data)) return nan_value;
  const double med = r_median(x.data);
  draw_matrix f = x;
  for (double& v : f.data) v = std::abs(v - med);
  return rhat_bulk_core(f);
}

/// posterior's .ess_quantile: ESS of the split indicator draws x ≤ quantile(x, p).
inline double ess_quantile_core(const draw_matrix& x, double p) {
  if (too_few(x) || should_return_na(x.data)) return nan_value;
  const std::size_t S = x.data.size();
  if (p == 1.0) p = (static_cast<double>(S) - 0.5) / static_cast<double>(S);
  std::vector<double> sorted = x.data;
  std::sort(sorted.begin(), sorted.end());
  const double q = quantile_sorted(sorted, p);
  draw_matrix indicator{std::vector<double>(S), x.chains, x.n};
  for (std::size_t i = 0; i < S; ++i) indicator.data[i] = x.data[i] <= q ? 1.0 : 0.0;
  return ess_core(split_chains(indicator));
}

/// Regularised incomplete beta function I_x(a, b) (continued fraction, modified Lentz).
inline double incomplete_beta(double a, double b, double x) {
  if (x <= 0.0) return 0.0;
  if (x >= 1.0) return 1.0;
  const auto continued_fraction = [](double a_, double b_, double x_) {
    constexpr double tiny = 1e-300;
    constexpr double eps = 1e-16;
    const double qab = a_ + b_, qap = a_ + 1.0, qam = a_ - 1.0;
    double c = 1.0;
    double d = 1.0 - qab * x_ / qap;
    if (std::abs(d) < tiny) d = tiny;
    d = 1.0 / d;
    double h = d;
    for (int k = 1; k <= 100000; ++k) {
      const double kk = k, k2 = 2.0 * kk;
      double aa = kk * (b_ - kk) * x_ / ((qam + k2) * (a_ + k2));
      d = 1.0 + aa * d;
      if (std::abs(d) < tiny) d = tiny;
      c = 1.0 + aa / c;
      if (std::abs(c) < tiny) c = tiny;
      d = 1.0 / d;
      h *= d * c;
      aa = -(a_ + kk) * (qab + kk) * x_ / ((a_ + k2) * (qap + k2));
      d = 1.0 + aa * d;
      if (std::abs(d) < tiny) d = tiny;
      c = 1.0 + aa / c;
      if (std::abs(c) < tiny) c = tiny;
      d = 1.0 / d;
      const double delta = d * c;
      h *= delta;
      if (std::abs(delta - 1.0) < eps) break;
    }
    return h;
  };
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  if (x < (a + 1.0) / (a + b + 2.0)) return std::exp(log_front) * continued_fraction(a, b, x) / a;
  return 1.0 - std::exp(log_front) * continued_fraction(b, a, 1.0 - x) / b;
}

/// Quantile of the Beta(a, b) distribution (R's qbeta), by bisection to full precision.
inline double beta_quantile(double p, double a, double b) {
  if (std::isnan(p) || std::isnan(a) || std::isnan(b) || !(a > 0.0) || !(b > 0.0)) return nan_value;
  double lo = 0.0, hi = 1.0;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    if (incomplete_beta(a, b, mid) < p) lo = mid;
    else hi = mid;
  }
  return 0.5 * (lo + hi);
}

/// mcse_sd(x) (below): the Kenney–Keeping variance of the variance estimate with the ESS of the
/// squared centred draws, through the square root.
inline double mcse_sd_core(const draw_matrix& x) {
  if (too_few(x) || any_nan(x.data)) return nan_value;
  const std::size_t size = x.data.size();
  const double m = r_mean(x.data.data(), size);
  draw_matrix squares = x;
  double e2 = 0, e4 = 0;
  for (double& v : squares.data) {
    v = (v - m) * (v - m);
    e2 += v;
    e4 += v * v;
  }
  e2 /= static_cast<double>(size);
  e4 /= static_cast<double>(size);
  if (!(e2 > 0)) return nan_value;  // constant draws
  const double ess = ess_core(split_chains(squares));
  return std::sqrt((e4 - e2 * e2) / ess / (4 * e2));
}

/// posterior's .mcse_quantile.
inline double mcse_quantile_core(const draw_matrix& x, double p) {
  const double ess = ess_quantile_core(x, p);
  if (std::isnan(ess)) return nan_value;
  const double a1 = beta_quantile(0.1586553, ess * p + 1.0, ess * (1.0 - p) + 1.0);
  const double a2 = beta_quantile(0.8413447, ess * p + 1.0, ess * (1.0 - p) + 1.0);
  std::vector<double> sorted = x.data;
  std::sort(sorted.begin(), sorted.end());
  const double S = static_cast<double>(sorted.size());
  const double i1 = std::max(std::floor(a1 * S), 1.0);
  const double i2 = std::min(std::ceil(a2 * S), S);
  return (sorted[static_cast<std::size_t>(i2) - 1] - sorted[static_cast<std::size_t>(i1) - 1]) / 2.0;
}

inline void check_probability(const char* function, double p) {
  if (!(p >= 0.0 && p <= 1.0)) fail(function, "probability must be in [0, 1], got " + std::to_string(p));
}

}  // namespace detail::diagnostics

// ---- R̂ --------------------------------------------------------------------------------------------

/// Classic split-R̂ (Gelman et al., BDA3, eq. 11.4, on split chains): posterior's rhat_basic(x) with
/// split = TRUE. Vehtari et al. (2021), eq. (4). NaN for non-finite or constant draws.
inline double split_rhat(std::span<const double> draws, std::size_t chains, std::size_t n) {
  using namespace detail::diagnostics;
  return rhat_core(split_chains(gather("split_rhat", draws, chains, n)));
}
template <detail::diagnostics::chain_range R>
double split_rhat(const R& chains) {
  using namespace detail::diagnostics;
  return rhat_core(split_chains(gather("split_rhat", chains)));
}

/// Rank-normalised split-R̂ (bulk-R̂): split-R̂ of the normal scores of the pooled ranks.
/// Vehtari et al. (2021), section 4.1, eq. (14); posterior's .rhat(z_scale(.split_chains(x))).
inline double rhat_bulk(std::span<const double> draws, std::size_t chains, std::size_t n) {
  return detail::diagnostics::rhat_bulk_core(detail::diagnostics::gather("rhat_bulk", draws, chains, n));
}
template <detail::diagnostics::chain_range R>
double rhat_bulk(const R& chains) {
  return detail::diagnostics::rhat_bulk_core(detail::diagnostics::gather("rhat_bulk", chains));
}

/// Folded rank-normalised split-R̂ (tail-R̂): rhat_bulk of |x − median(x)|. Vehtari et al. (2021),
/// section 4.2, eq. (15); posterior's .rhat(z_scale(.split_chains(fold_draws(x)))).
inline double rhat_tail(std::span<const double> draws, std::size_t chains, std::size_t n) {
  return detail::diagnostics::rhat_tail_core(detail::diagnostics::gather("rhat_tail", draws, chains, n));
}
template <detail::diagnostics::chain_range R>
double rhat_tail(const R& chains) {
  return detail::diagnostics::rhat_tail_core(detail::diagnostics::gather("rhat_tail", chains));
}

/// R̂ as Stan and posterior report it: max(rhat_bulk, rhat_tail). Vehtari et al. (2021),
/// section 4.3; posterior's rhat(). NaN when either is NaN (posterior: NA).
inline double rhat(std::span<const double> draws, std::size_t chains, std::size_t n) {
  using namespace detail::diagnostics;
  const draw_matrix x = gather("rhat", draws, chains, n);
  const double bulk = rhat_bulk_core(x), tail = rhat_tail_core(x);
  return std::isnan(bulk) || std::isnan(tail) ? nan_value : std::max(bulk, tail);
}
template <detail::diagnostics::chain_range R>
double rhat(const R& chains) {
  using namespace detail::diagnostics;
  const draw_matrix x = gather("rhat", chains);
  const double bulk = rhat_bulk_core(x), tail = rhat_tail_core(x);
  return std::isnan(bulk) || std::isnan(tail) ? nan_value : std::max(bulk, tail);
}

// ---- ESS ------------------------------------------------------------------------------------------

/// ESS of the split chains as they are (no rank normalisation): posterior's ess_basic(x) with
/// split = TRUE, equal to ess_mean(x). Vehtari et al. (2021), section 3.2, eqs. (10)–(11).
inline double ess_basic(std::span<const double> draws, std::size_t chains, std::size_t n) {
  using namespace detail::diagnostics;
  return ess_core(split_chains(gather("ess_basic", draws, chains, n)));
}
template <detail::diagnostics::chain_range R>
double ess_basic(const R& chains) {
  using namespace detail::diagnostics;
  return ess_core(split_chains(gather("ess_basic", chains)));
}

/// ESS for the mean: the same as ess_basic (posterior's ess_mean).
inline double ess_mean(std::span<const double> draws, std::size_t chains, std::size_t n) {
  using namespace detail::diagnostics;
  return ess_core(split_chains(gather("ess_mean", draws, chains, n)));
}
template <detail::diagnostics::chain_range R>
double ess_mean(const R& chains) {
  using namespace detail::diagnostics;
  return ess_core(split_chains(gather("ess_mean", chains)));
}

/// Bulk-ESS: ESS of the rank-normalised split chains. Vehtari et al. (2021), section 4.1;
/// posterior's ess_bulk(), .ess(z_scale(.split_chains(x))).
inline double ess_bulk(std::span<const double> draws, std::size_t chains, std::size_t n) {
  using namespace detail::diagnostics;
  draw_matrix s = split_chains(gather("ess_bulk", draws, chains, n));
  if (s.n < 2 || any_nan(s.data)) return nan_value;
  z_scale(s.data);
  return ess_core(s);
}
template <detail::diagnostics::chain_range R>
double ess_bulk(const R& chains) {
  using namespace detail::diagnostics;
  draw_matrix s = split_chains(gather("ess_bulk", chains));
  if (s.n < 2 || any_nan(s.data)) return nan_value;
  z_scale(s.data);
  return ess_core(s);
}

/// ESS of the quantile of probability p: ESS of the split indicator draws I(x ≤ q̂_p), q̂_p the
/// type-7 quantile over all draws (p = 1 is taken as (S − ½)/S). Vehtari et al. (2021), section
/// 4.3; posterior's ess_quantile(x, p).
inline double ess_quantile(std::span<const double> draws, std::size_t chains, std::size_t n, double p) {
  using namespace detail::diagnostics;
  check_probability("ess_quantile", p);
  return ess_quantile_core(gather("ess_quantile", draws, chains, n), p);
}
template <detail::diagnostics::chain_range R>
double ess_quantile(const R& chains, double p) {
  using namespace detail::diagnostics;
  check_probability("ess_quantile", p);
  return ess_quantile_core(gather("ess_quantile", chains), p);
}

/// Tail-ESS: min(ess_quantile(x, 0.05), ess_quantile(x, 0.95)). Vehtari et al. (2021), section
/// 4.3; posterior's ess_tail(). NaN when either is NaN.
inline double ess_tail(std::span<const double> draws, std::size_t chains, std::size_t n) {
  using namespace detail::diagnostics;
  const draw_matrix x = gather("ess_tail", draws, chains, n);
  const double lo = ess_quantile_core(x, 0.05), hi = ess_quantile_core(x, 0.95);
  return std::isnan(lo) || std::isnan(hi) ? nan_value : std::min(lo, hi);
}
template <detail::diagnostics::chain_range R>
double ess_tail(const R& chains) {
  using namespace detail::diagnostics;
  const draw_matrix x = gather("ess_tail", chains);
  const double lo = ess_quantile_core(x, 0.05), hi = ess_quantile_core(x, 0.95);
  return std::isnan(lo) || std::isnan(hi) ? nan_value : std::min(lo, hi);
}

// ---- MCSE -----------------------------------------------------------------------------------------

/// Monte Carlo standard error of the mean: sd(x) / √ess_mean(x), sd over all draws (denominator
/// S − 1). Vehtari et al. (2021), section 3.2; posterior's mcse_mean().
inline double mcse_mean(std::span<const double> draws, std::size_t chains, std::size_t n) {
  using namespace detail::diagnostics;
  const draw_matrix x = gather("mcse_mean", draws, chains, n);
  if (too_few(x)) return nan_value;
  return std::sqrt(r_var(x.data.data(), x.data.size())) / std::sqrt(ess_core(split_chains(x)));
}
template <detail::diagnostics::chain_range R>
double mcse_mean(const R& chains) {
  using namespace detail::diagnostics;
  const draw_matrix x = gather("mcse_mean", chains);
  if (too_few(x)) return nan_value;
  return std::sqrt(r_var(x.data.data(), x.data.size())) / std::sqrt(ess_core(split_chains(x)));
}

/// Monte Carlo standard error of the standard deviation sd(x): with c the draws minus their mean,
/// E₂ = mean(c²), E₄ = mean(c⁴) and ess = ess_mean(c²) (the ESS of the quantity the variance
/// averages), var(var̂) ≈ (E₄ − E₂²) / ess (Kenney & Keeping 1951, p. 141, which does not assume
/// normal draws) and, by the first-order Taylor expansion of the square root, var(sd̂) ≈
/// var(var̂) / (4 E₂). posterior's mcse_sd() (Vehtari et al.'s package, version 1.5 on).
inline double mcse_sd(std::span<const double> draws, std::size_t chains, std::size_t n) {
  using namespace detail::diagnostics;
  return mcse_sd_core(gather("mcse_sd", draws, chains, n));
}
template <detail::diagnostics::chain_range R>
double mcse_sd(const R& chains) {
  using namespace detail::diagnostics;
  return mcse_sd_core(gather("mcse_sd", chains));
}

/// Monte Carlo standard error of the quantile of probability p: half the distance between the
/// draws at the 15.9% and 84.1% points of Beta(ess·p + 1, ess·(1 − p) + 1), ess = ess_quantile(x,
/// p). Vehtari et al. (2021), section 4.4; posterior's mcse_quantile(x, p). The Beta quantiles are
/// computed here by bisection on the regularised incomplete beta function.
inline double mcse_quantile(std::span<const double> draws, std::size_t chains, std::size_t n, double p) {
  using namespace detail::diagnostics;
  check_probability("mcse_quantile", p);
  return mcse_quantile_core(gather("mcse_quantile", draws, chains, n), p);
}
template <detail::diagnostics::chain_range R>
double mcse_quantile(const R& chains, double p) {
  using namespace detail::diagnostics;
  check_probability("mcse_quantile", p);
  return mcse_quantile_core(gather("mcse_quantile", chains), p);
}

// ---- quantiles --------------------------------------------------------------------------------------

/// Sample quantile of probability p ∈ [0, 1], R's type 7 (Hyndman & Fan 1996; R's and posterior's
/// default, quantile2()): with h = (N − 1)·p, x₍⌊h⌋₎ + (h − ⌊h⌋)(x₍⌊h⌋+1₎ − x₍⌊h⌋₎) over the sorted
/// values. NaN when values is empty or holds a NaN (posterior: NA). Throws std::invalid_argument
/// for p outside [0, 1].
inline double quantile(std::span<const double> values, double p) {
  using namespace detail::diagnostics;
  check_probability("quantile", p);
  if (values.empty() || any_nan(values)) return nan_value;
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  return quantile_sorted(sorted, p);
}

}  // namespace tyche
